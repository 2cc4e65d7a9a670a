/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel capability probe (agent/kernel) and the sysroot CPU identity
 * (agent/cpuid: proc/cpuinfo, then the cpu modalias) on a fake tree built
 * from the input: records [path index % N][length][length bytes] over the
 * files below (mkseed.py kernel makes seeds). Never crash; the probe's
 * result is a value the planner's predictions accept.
 */
#include "fuzz-tree.h"
#include "fuzz.h"
#include "planner.h"

/* Keep in the order of mkseed.py's KERNEL_PATHS. */
static const char *const paths[] = {
	"proc/sys/kernel/osrelease",
	"sys/kernel/security/lockdown",
	"proc/sys/kernel/sched_smt_buddy_assist",
	"sys/kernel/debug/sched/features",
	"proc/sys/kernel/sched_relax_domain_level",
	"sys/fs/cgroup/cpuset/cpuset.sched_relax_domain_level",
	"proc/cmdline",
	"sys/fs/cgroup/cgroup.controllers",
	"sys/fs/cgroup/cpuset.cpus.isolated",
	"proc/schedstat",
	"proc/cpuinfo",
	"sys/devices/system/cpu/modalias",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int root = fuzz_tree_root();
	KernelCaps caps;
	CpuIdentity id;

	for (size_t i = 0; i + 1 < size;) {
		size_t len = data[i + 1];
		unsigned idx = data[i] % FUZZ_ELEMENTS(paths);

		i += 2;
		if (len > size - i)
			len = size - i;
		fuzz_tree_write(root, paths[idx], data + i, len);
		i += len;
	}

	if (kernel_probe(root, &caps) >= 0) {
		fuzz_assert(memchr(caps.release, 0, sizeof(caps.release)));
		fuzz_assert(memchr(caps.lockdown_mode, 0, sizeof(caps.lockdown_mode)));
		fuzz_assert(kernel_caps_current(&caps, SETTING_SMT_BUDDY_ASSIST, -1) >= -1 &&
			    kernel_caps_current(&caps, SETTING_SMT_BUDDY_ASSIST, -1) <= 1);
		kernel_caps_done(&caps);
	}
	memset(&id, 0, sizeof(id));
	(void)cpuid_identify_sysroot(root, &id);

	fuzz_tree_clear(root);
	return 0;
}
