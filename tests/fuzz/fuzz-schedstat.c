/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The readers of the live scheduler-domain layout (agent/kernel/domains-live.c)
 * and the comparison that consumes them (agent/planner/compare.c).
 *
 * Input: the text of /proc/schedstat, up to the first NUL byte; it goes to
 * schedstat_parse() (pure). When a NUL follows, the same text becomes
 * proc/schedstat of a scratch tree and the bytes after the NUL are debugfs
 * records [cpu % 4][domain % 4][file % 3][length][bytes] for
 * sys/kernel/debug/sched/domains/cpuC/domainD/{name,flags,level}; then
 * live_layout_load() reads the tree. Either way, what is accepted is
 * compared with a predicted 8-CPU layout by domains_compare().
 *
 * Properties: a parsed layout has a version, domains numbered 0..n-1 per
 * CPU, every CPU with domains listed, terminated names, no debugfs fields;
 * live_layout_load() accepts exactly what schedstat_parse() accepts, with
 * the same spans, and only takes names, levels and flags from debugfs.
 */
#include <errno.h>
#include <stdio.h>

#include "compare.h"
#include "fuzz-tree.h"
#include "fuzz.h"
#include "planner.h"
#include "strutil.h"
#include "topo-build.h"

static const char *const debugfs_files[] = { "name", "flags", "level" };

static DomainLayout *predicted;

/* 2 packages x 2 cores x SMT2, one node per package: SMT, MC, NUMA. */
static void predict_once(void)
{
	static const TopoSpec spec = { 2, 2, 2, 1, 0, NULL, NULL };
	static const CpuIdentity id = { .vendor = CPU_VENDOR_INTEL, .arch = "x86", .have_family = true,
					.family = 6, .model = 0xad };
	Topology *t = NULL;
	KernelCaps caps;
	DomainInput in;

	if (predicted)
		return;
	fuzz_assert(topo_build(&spec, &t) >= 0);
	kernel_caps_patched(&caps);
	in = (DomainInput) { .topology = t, .identity = &id, .caps = &caps, .cpu_map = &t->online,
			     .relax_level = -1 };
	fuzz_assert(domains_predict(&in, &predicted) >= 0);
	kernel_caps_done(&caps);
	topology_free(t);
}

static void check_layout(const LiveLayout *l, bool from_tree)
{
	fuzz_assert(l->schedstat_version != 0);
	fuzz_assert(l->n_slots <= CPUSET_MAX_CPUS);
	fuzz_assert(from_tree || !l->debugfs);
	for (unsigned c = 0; c < l->n_slots; c++) {
		const LiveCpuDomains *d = &l->cpus[c];

		if (d->n > 0)
			fuzz_assert(cpuset_contains(&l->listed, c));
		for (size_t i = 0; i < d->n; i++) {
			_cleanup_free_ char *span = NULL;

			fuzz_assert(d->sd[i].index == (int)i);
			fuzz_assert(memchr(d->sd[i].name, 0, sizeof(d->sd[i].name)));
			if (!from_tree) {
				fuzz_assert(d->sd[i].level == -1);
				fuzz_assert(!d->sd[i].flags);
			}
			fuzz_assert(cpuset_format_list(&d->sd[i].span, &span) >= 0);
		}
	}
	CPUSET_FOREACH(cpu, &l->listed)
		fuzz_assert((unsigned)cpu < l->n_slots);
}

static void compare(const LiveLayout *l)
{
	char **diffs = NULL;
	int n;

	predict_once();
	n = domains_compare(predicted, l, 8, &diffs);
	fuzz_assert(n >= 0);
	fuzz_assert(strv_length(diffs) == (size_t)MIN(n, 8));
	strv_free(diffs);
}

/* The tree's layout is the parsed one, plus what debugfs says. */
static void check_same_spans(const LiveLayout *a, const LiveLayout *b)
{
	fuzz_assert(a->n_slots == b->n_slots);
	fuzz_assert(a->schedstat_version == b->schedstat_version);
	fuzz_assert(cpuset_equal(&a->listed, &b->listed));
	for (unsigned c = 0; c < a->n_slots; c++) {
		fuzz_assert(a->cpus[c].n == b->cpus[c].n);
		for (size_t i = 0; i < a->cpus[c].n; i++)
			fuzz_assert(cpuset_equal(&a->cpus[c].sd[i].span, &b->cpus[c].sd[i].span));
	}
}

static void load_tree(const char *text, const uint8_t *data, size_t size, const LiveLayout *parsed, int parse_r)
{
	int root = fuzz_tree_root();
	LiveLayout *l = NULL;
	int r;

	fuzz_tree_write(root, "proc/schedstat", text, strlen(text));
	for (size_t i = 0; i + 3 < size;) {
		char path[128];
		size_t len = data[i + 3];

		snprintf(path, sizeof(path), "sys/kernel/debug/sched/domains/cpu%u/domain%u/%s", data[i] % 4U,
			 data[i + 1] % 4U, debugfs_files[data[i + 2] % FUZZ_ELEMENTS(debugfs_files)]);
		i += 4;
		if (len > size - i)
			len = size - i;
		fuzz_tree_write(root, path, data + i, len);
		i += len;
	}

	r = live_layout_load(root, &l);
	fuzz_assert((r >= 0) == (parse_r >= 0));
	if (r >= 0) {
		check_layout(l, true);
		check_same_spans(parsed, l);
		/* Without debugfs the note says how to get it. */
		fuzz_assert(l->debugfs || strv_length(l->notes) > 0);
		compare(l);
		live_layout_free(l);
	}
	fuzz_tree_clear(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size);
	size_t len = strlen(text);
	LiveLayout *l = NULL;
	int r;

	r = schedstat_parse(text, &l);
	if (r >= 0) {
		check_layout(l, false);
		compare(l);
	} else {
		fuzz_assert(!l);
		fuzz_assert(r == -EBADMSG || r == -ERANGE || r == -ENOMEM);
	}
	if (len < size)
		load_tree(text, data + len + 1, size - len - 1, l, r);
	live_layout_free(l);
	free(text);
	return 0;
}
