/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pure planner (agent/planner): a topology, identity, kernel
 * capabilities and effective settings are all derived from the input bytes
 * in memory (no files), then plan_compute() and plan_format() must never
 * crash, whatever the combination. Topologies come from the planner tests'
 * builder (tests/unit/topo-build.c), so they are shapes the sysfs reader
 * can produce; the distances, offline and isolated CPUs, capabilities and
 * settings are free.
 *
 * Input: a stream of bytes read in order (0 after the end):
 *   shape (packages, threads, nodes per package, cores per node, cores per
 *   LLC), identity, capability flags and values, settings, then a distance
 *   matrix, then bitmaps of offline, to-isolate and already-isolated CPUs.
 */
#include "fuzz.h"
#include "planner.h"
#include "topo-build.h"

typedef struct Bytes {
	const uint8_t *data;
	size_t size, pos;
} Bytes;

static uint8_t next(Bytes *b)
{
	return b->pos < b->size ? b->data[b->pos++] : 0;
}

static const CpuIdentity identities[] = {
	{ .vendor = CPU_VENDOR_HYGON, .arch = "x86", .have_family = true, .family = 0x18, .model = 7 },
	{ .vendor = CPU_VENDOR_HYGON, .arch = "x86", .have_family = true, .family = 0x18, .model = 4 },
	{ .vendor = CPU_VENDOR_INTEL, .arch = "x86", .have_family = true, .family = 6, .model = 0xad },
	{ .vendor = CPU_VENDOR_INTEL, .arch = "x86", .have_family = true, .family = 6, .model = 0xdd },
	{ .vendor = CPU_VENDOR_AMD, .arch = "x86", .have_family = true, .family = 0x1a, .model = 0x11 },
	{ .vendor = CPU_VENDOR_AMD, .arch = "x86", .have_family = true, .family = 0x19, .model = 0xa0 },
	{ .vendor = CPU_VENDOR_ARM, .arch = "arm64" },
	{ .vendor = CPU_VENDOR_UNKNOWN },
};

static void bitmap(Bytes *b, unsigned n, CpuSet *ret)
{
	for (unsigned i = 0; i < n; i += 8) {
		uint8_t v = next(b);

		for (unsigned j = 0; j < 8 && i + j < n; j++)
			if (v & (1u << j))
				fuzz_assert(cpuset_add(ret, i + j) >= 0);
	}
}

static void make_caps(Bytes *b, unsigned n, KernelCaps *k)
{
	uint8_t f = next(b), g = next(b), v = next(b);

	if (f & 1)
		kernel_caps_patched(k);
	else
		kernel_caps_stock(k);
	kernel_caps_set(k, CONTROL_SMT_BUDDY_SYSCTL, f & 2, (int)(v & 3) - 1);           /* -1..2 */
	kernel_caps_set(k, CONTROL_SMT_BUDDY_DEBUGFS, f & 4, (int)(v & 3) - 1);
	kernel_caps_set(k, CONTROL_RELAX_SYSCTL, f & 8, (int)((v >> 2) & 7) - 1);          /* -1..6 */
	kernel_caps_set(k, CONTROL_RELAX_CGROUP_V1, f & 16, (int)((v >> 2) & 7) - 1);
	kernel_caps_set(k, CONTROL_RELAX_CMDLINE, g & 64, (int)(v >> 5) - 1);             /* -1..6 */
	k->cgroup_v2 = f & 32;
	k->cgroup_v2_cpuset = f & 64;
	k->cpuset_partitions = f & 128;
	k->isolated_known = g & 1;
	k->debugfs_sched = g & 2;
	k->lockdown = g & 4;
	snprintf(k->lockdown_mode, sizeof(k->lockdown_mode), "%s", g & 4 ? "integrity" : "none");
	k->numa_averaging_intel = g & 8;
	k->numa_averaging_hygon = g & 16;
	k->schedstat_version = g & 32 ? 17 : 0;
	cpuset_done(&k->isolated);
	if (g & 128)
		bitmap(b, n, &k->isolated);
}

static void make_settings(Bytes *b, unsigned n, ProfileSettings *s)
{
	uint8_t f = next(b), v = next(b);

	profile_settings_init(s);
	s->value[SETTING_SMT_BUDDY_ASSIST].mode = (SmtBuddyMode)(f % _SMT_BUDDY_MAX);
	s->value[SETTING_RELAX_DOMAIN_LEVEL].mode = (RelaxMode)((f >> 2) % _RELAX_MAX);
	s->value[SETTING_RELAX_DOMAIN_LEVEL].level = (int)(v & 15) - 2;                     /* -2..13: out of range too */
	s->value[SETTING_ISOLATED_CPUS].mode = (IsolationMode)((f >> 4) % _ISOLATION_MAX);
	s->value[SETTING_ISOLATED_CPUS].per_group = v >> 4;
	s->value[SETTING_HOUSEKEEPING_SMT].mode = (HousekeepingSmt)((f >> 7) % _HOUSEKEEPING_MAX);
	if (s->value[SETTING_ISOLATED_CPUS].mode == ISOLATION_LIST)
		/* A little beyond the machine: profiles may name CPUs it lacks. */
		bitmap(b, n + 8, &s->value[SETTING_ISOLATED_CPUS].cpus);
	if (f & 0x40) {
		s->origin[SETTING_SMT_BUDDY_ASSIST].file = strdup("/etc/topotune/profiles/fuzz.ini");
		s->origin[SETTING_SMT_BUDDY_ASSIST].line = v;
		fuzz_assert(s->origin[SETTING_SMT_BUDDY_ASSIST].file);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Bytes b = { data, size, 0 };
	uint8_t shape = next(&b), llc = next(&b), who = next(&b);
	unsigned packages = (shape & 3) + 1, threads = ((shape >> 2) & 3) + 1;
	unsigned nodes_pp = ((shape >> 4) & 3) + 1, cores_pn = ((shape >> 6) & 3) + 1;
	unsigned cores_pp = nodes_pp * cores_pn, n = packages * cores_pp * threads, nn = packages * nodes_pp;
	unsigned divisors[16], n_div = 0, *dist = NULL;
	CpuSet offline = {};
	char *offline_list = NULL, *text = NULL;
	Topology *t = NULL;
	KernelCaps caps;
	ProfileSettings s;
	Plan *p = NULL;

	/* Cores per LLC: 0 (the whole package) or a divisor of the package's cores. */
	divisors[n_div++] = 0;
	for (unsigned d = 1; d <= cores_pp; d++)
		if (cores_pp % d == 0)
			divisors[n_div++] = d;

	if (who & 0x80) {
		dist = calloc((size_t)nn * nn, sizeof(unsigned));
		if (!dist)
			abort();
		for (unsigned i = 0; i < nn * nn; i++)
			dist[i] = next(&b);
	}
	bitmap(&b, n, &offline);
	cpuset_remove(&offline, (unsigned)(who & 0x7f) % n);   /* one CPU stays online */
	fuzz_assert(cpuset_format_list(&offline, &offline_list) >= 0);

	TopoSpec spec = {
		.packages = packages, .cores_per_package = cores_pp, .threads = threads,
		.nodes_per_package = nodes_pp, .cores_per_llc = divisors[llc % n_div],
		.distance = dist, .offline = offline_list,
	};
	fuzz_assert(topo_build(&spec, &t) >= 0);

	make_caps(&b, n, &caps);
	make_settings(&b, n, &s);

	PlanInput in = {
		.identity = &identities[who % FUZZ_ELEMENTS(identities)], .topology = t,
		.caps = &caps, .settings = &s, .profile = "fuzz",
	};
	(void)plan_auto_relax_level(&in);
	if (plan_compute(&in, &p) >= 0) {
		fuzz_assert(plan_format(p, (unsigned)cpuset_first(&t->online), &text) >= 0);
		free(text);
		text = NULL;
		/* An isolated or offline CPU has no domains, but printing it must work. */
		if (plan_format(p, n - 1, &text) >= 0)
			free(text);
		plan_free(p);
	}

	profile_settings_done(&s);
	kernel_caps_done(&caps);
	topology_free(t);
	cpuset_done(&offline);
	free(offline_list);
	free(dist);
	return 0;
}
