/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The write-ahead record reader (agent/applier: applier_load_state() and
 * applier_recover()) on arbitrary bytes as run/topotune/state, in a
 * scratch tree with the files a record may name. Never crash; every file
 * recovery writes holds a value of its kind (a number, a CPU list, a
 * partition type, a boot loader request), never the record's garbage;
 * nothing appears outside run/topotune but the files of the tree;
 * StateReasons stays bounded.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "applier.h"
#include "fileio.h"
#include "fuzz-tree.h"
#include "fuzz.h"
#include "strutil.h"

static const char *const files[][2] = {
	{ "proc/sys/kernel/sched_smt_buddy_assist", "0\n" },
	{ "proc/sys/kernel/sched_relax_domain_level", "-1\n" },
	{ "proc/sys/kernel/numa_balancing", "1\n" },
	{ "sys/kernel/debug/sched/features", "PLACE_LAG NO_SMT_BUDDY_ASSIST\n" },
	{ "sys/fs/cgroup/cpuset/cpuset.sched_relax_domain_level", "-1\n" },
	{ "sys/fs/cgroup/cgroup.subtree_control", "cpu memory\n" },
	{ "sys/fs/cgroup/topotune.slice/cpuset.cpus", "\n" },
	{ "sys/fs/cgroup/topotune.slice/cpuset.cpus.partition", "member\n" },
	{ "etc/default/grub", "GRUB_DEFAULT=0\n" },
	{ "proc/irq/default_smp_affinity", "ff\n" },
	{ "proc/irq/5/smp_affinity_list", "0-7\n" },
	{ "sys/devices/virtual/workqueue/cpumask", "000000ff\n" },
};

/* Does @s, as the file now holds it, look like a value recovery may write there? */
static bool sane(const char *path, const char *s)
{
	if (strstr(path, "features"))
		return !strpbrk(s, "$;`|&<>()\"'");
	if (strstr(path, "partition"))
		return streq(s, "member\n") || startswith(s, "member") || startswith(s, "root") ||
		       startswith(s, "isolated");
	if (strstr(path, "subtree_control"))
		return !strpbrk(s, "$;`|&<>()\"'");
	/* hex CPU masks: hex digits, ',' and blanks */
	if (strstr(path, "default_smp_affinity") || strstr(path, "workqueue/cpumask"))
		return strspn(s, "0123456789abcdefABCDEF, \t\n") == strlen(s);
	/* numbers and CPU lists: digits, '-', ',' and blanks */
	return strspn(s, "0123456789-, \t\n") == strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int root = fuzz_tree_root();
	Applier *a = NULL;
	Recovery rec = {};
	char *s = NULL;
	int r;

	for (size_t i = 0; i < FUZZ_ELEMENTS(files); i++)
		fuzz_tree_write(root, files[i][0], files[i][1], strlen(files[i][1]));
	fuzz_tree_write(root, STATE_FILE, data, size);

	/* The strict reader: a count of changes, or an error with FILE:LINE. */
	fuzz_assert(applier_new(root, NULL, NULL, &a) >= 0);
	r = applier_load_state(a);
	fuzz_assert(r >= 0 || r == -ENOMEM || (a->error && startswith(a->error, "/" STATE_FILE)));
	fuzz_assert(r < 0 || (size_t)r == a->n_changes);
	a = applier_free(a);

	/* Recovery: whatever it restores has a value of its kind. */
	fuzz_assert(applier_new(root, NULL, NULL, &a) >= 0);
	a->unit_wait_ms = 0;
	r = applier_recover(a, &rec);
	fuzz_assert(r >= 0 || r == -ENOMEM);
	fuzz_assert(strv_length(rec.problems) <= RECOVERY_PROBLEMS_MAX + 1);
	fuzz_assert(rec.restored <= rec.found);
	fuzz_assert(a->n_changes == 0);
	for (size_t i = 0; i < FUZZ_ELEMENTS(files); i++) {
		if (read_file_at(root, files[i][0], 0, &s, NULL) < 0)
			continue;   /* a directory recovery removed, a file it took back */
		if (!streq(s, files[i][1]) && !sane(files[i][0], s)) {
			fprintf(stderr, "%s: \"%s\"\n", files[i][0], s);
			fuzz_assert(!"recovery wrote a value of the wrong kind");
		}
		free(s);
		s = NULL;
	}
	if (read_file_at(root, "run/topotune/bootloader.request", 0, &s, NULL) >= 0) {
		fuzz_assert(strspn(s, "0123456789") >= 1 && strspn(s, "0123456789") <= 2 &&
			    streq(s + strspn(s, "0123456789"), "\n"));
		free(s);
	}
	recovery_done(&rec);
	applier_free(a);
	fuzz_tree_clear(root);
	return 0;
}
