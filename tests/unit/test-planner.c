/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Planner specification: for each seed machine and setting, the plan and
 * the predicted scheduler domains of cpu0, as readable text (the expected
 * text of each case is tests/unit/planner/NAME.txt). Pure: the topologies
 * are built in memory, the kernel capabilities are values.
 */
#include <assert.h>

#include "planner.h"
#include "strutil.h"
#include "test.h"
#include "topo-build.h"

/* The GNR SNC-3 SLIT from the comment above slit_cluster_distance(). */
static const unsigned slit_snc3[36] = {
	10, 15, 17, 21, 28, 26,
	15, 10, 15, 23, 26, 23,
	17, 15, 10, 26, 23, 21,
	21, 28, 26, 10, 15, 17,
	23, 26, 23, 15, 10, 15,
	26, 23, 21, 17, 15, 10,
};

/* AMD Turin NPS=10 x 2: local 10, same socket 12, other socket 32. */
static unsigned slit_turin[400];
/* Siena NPS2 + LLC-as-node: local 10, same half 11, other half 12. */
static unsigned slit_siena[64];

static void init_slits(void)
{
	for (unsigned a = 0; a < 20; a++)
		for (unsigned b = 0; b < 20; b++)
			slit_turin[a * 20 + b] = a == b ? 10 : a / 10 == b / 10 ? 12 : 32;
	for (unsigned a = 0; a < 8; a++)
		for (unsigned b = 0; b < 8; b++)
			slit_siena[a * 8 + b] = a == b ? 10 : a / 4 == b / 4 ? 11 : 12;
}

static const TopoSpec hygon_nps3 = { 2, 96, 2, 3, 8, slit_snc3, NULL };
static const TopoSpec hygon_nps1 = { 2, 96, 2, 1, 8, (const unsigned[]) { 10, 24, 24, 10 }, NULL };
static const TopoSpec turin_nps10 = { 2, 160, 2, 10, 16, slit_turin, NULL };
static const TopoSpec siena_nps2llc = { 1, 64, 2, 8, 8, slit_siena, NULL };
static const TopoSpec gnr_snc3 = { 2, 96, 2, 3, 0, slit_snc3, NULL };
static const TopoSpec vm_2cpu = { 1, 2, 1, 1, 0, NULL, NULL };
static const TopoSpec vm_offline = { 1, 4, 2, 1, 0, NULL, "3" };
/* Two packages, two nodes each, and no node distance files. */
static const TopoSpec no_slit = { 2, 4, 2, 2, 2, NULL, NULL, true };

/* big.LITTLE: four little (capacity 397) and four big (1024) cores under one L3. */
static const TopoSpec arm_biglittle = { 1, 8, 1, 1, 0, NULL, NULL, false,
					(const TopoKindSpec[]) { { "0-3", 397, NULL }, { "4-7", 1024, NULL } }, 2 };
/* Three capacities, two L3s: the L3 of 0-3 holds two of them, that of 4-7 the third. */
static const TopoSpec arm_three_caps = { 1, 8, 1, 1, 4, NULL, NULL, false,
					 (const TopoKindSpec[]) { { "0-1", 300, NULL }, { "2-3", 700, NULL },
								  { "4-7", 1024, NULL } }, 3 };
/* Intel hybrid with SMT off: 4 P-cores, 8 E-cores, core types known, capacities not. */
static const TopoSpec intel_hybrid = { 1, 12, 1, 1, 0, NULL, NULL, false,
				       (const TopoKindSpec[]) { { "4-11", 0, "atom" }, { "0-3", 0, "core" } }, 2 };

static const CpuIdentity arm_cortex = { .vendor = CPU_VENDOR_ARM, .arch = "arm64" };
static const CpuIdentity intel_rpl = { .vendor = CPU_VENDOR_INTEL, .arch = "x86", .have_family = true,
				       .family = 6, .model = 0xb7 };
static const CpuIdentity hygon_7447v = { .vendor = CPU_VENDOR_HYGON, .arch = "x86", .have_family = true,
					 .family = 0x18, .model = 7 };
static const CpuIdentity amd_turin = { .vendor = CPU_VENDOR_AMD, .arch = "x86", .have_family = true,
				       .family = 0x1a, .model = 0x11 };
static const CpuIdentity amd_siena = { .vendor = CPU_VENDOR_AMD, .arch = "x86", .have_family = true,
				       .family = 0x19, .model = 0xa0 };
static const CpuIdentity intel_gnr = { .vendor = CPU_VENDOR_INTEL, .arch = "x86", .have_family = true,
				       .family = 6, .model = 0xad };
static const CpuIdentity intel_vm = { .vendor = CPU_VENDOR_INTEL, .arch = "x86", .have_family = true,
				      .family = 6, .model = 6 };

enum { K_STOCK, K_PATCHED, K_LOCKDOWN_DEBUGFS, K_CGROUP_V1 };

typedef struct Case {
	const char *name;
	const TopoSpec *topo;
	const CpuIdentity *id;
	int kernel;
	SmtBuddyMode smt;
	RelaxMode relax;
	int relax_level;
	IsolationMode iso;
	const char *iso_list;
	unsigned per_group;
} Case;

#include "test-planner-cases.h"

static void make_caps(int kind, KernelCaps *k)
{
	switch (kind) {
	case K_STOCK:
		kernel_caps_stock(k);
		break;
	case K_PATCHED:
		kernel_caps_patched(k);
		break;
	case K_LOCKDOWN_DEBUGFS:
		/* A kernel with only the debugfs feature flag, booted with Secure Boot. */
		kernel_caps_stock(k);
		kernel_caps_set(k, CONTROL_SMT_BUDDY_DEBUGFS, true, 0);
		k->lockdown = true;
		snprintf(k->lockdown_mode, sizeof(k->lockdown_mode), "integrity");
		break;
	case K_CGROUP_V1:
		kernel_caps_stock(k);
		k->cgroup_v2 = k->cgroup_v2_cpuset = k->cpuset_partitions = false;
		/* As kernel_probe() finds it: no root cpuset.cpus.isolated to read. */
		k->isolated_known = false;
		kernel_caps_set(k, CONTROL_RELAX_CGROUP_V1, true, -1);
		break;
	}
}

/* The expected plans: tests/unit/planner/NAME.txt. */
static const char *expected_dir;

static void run_case(const Case *c)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_(plan_freep) Plan *p = NULL;
	_cleanup_free_ char *text = NULL;
	ProfileSettings s = {
		.value[SETTING_SMT_BUDDY_ASSIST].mode = c->smt,
		.origin[SETTING_SMT_BUDDY_ASSIST] = { .file = (char *)"/etc/topotune/profiles/test.ini", .line = 4 },
		.value[SETTING_RELAX_DOMAIN_LEVEL].mode = c->relax,
		.value[SETTING_RELAX_DOMAIN_LEVEL].level = c->relax_level,
		.origin[SETTING_RELAX_DOMAIN_LEVEL] = { .file = (char *)"/etc/topotune/profiles/test.ini", .line = 5 },
		.value[SETTING_ISOLATED_CPUS].mode = c->iso,
		.value[SETTING_ISOLATED_CPUS].per_group = c->per_group,
		.origin[SETTING_ISOLATED_CPUS] = { .file = (char *)"/etc/topotune/profiles/test.ini", .line = 7 },
		.value[SETTING_HOUSEKEEPING_SMT].mode = HOUSEKEEPING_WHOLE_CORES,
	};
	KernelCaps k;
	PlanInput in;
	int r;

	check_ctx(c->name, topo_build(c->topo, &t) == 0);
	if (c->iso_list)
		check_ctx(c->name, cpuset_parse_list(c->iso_list, &s.value[SETTING_ISOLATED_CPUS].cpus, NULL) == 0);
	make_caps(c->kernel, &k);
	in = (PlanInput) { c->id, t, &k, &s, c->name };
	r = plan_compute(&in, &p);
	check_ctx(c->name, r == 0);
	if (r == 0) {
		check_ctx(c->name, plan_format(p, 0, &text) == 0);
		_cleanup_free_ char *file = strprintf("%s.txt", c->name);

		check_expected_file(expected_dir, file, text);
	}
	cpuset_done(&s.value[SETTING_ISOLATED_CPUS].cpus);
	kernel_caps_done(&k);
}

/* Each span is kept once: equal spans are one pointer, and the pool is the layout's. */
static void check_spans_interned(const DomainLayout *l)
{
	for (size_t i = 0; i < l->n_spans; i++) {
		check_int(l->spans[i]->id, i);
		check_int(l->spans[i]->weight, cpuset_count(&l->spans[i]->cpus));
		for (size_t j = 0; j < i; j++)
			check(!cpuset_equal(&l->spans[i]->cpus, &l->spans[j]->cpus));
	}
	for (unsigned cpu = 0; cpu < l->n_slots; cpu++)
		for (size_t j = 0; j < l->cpus[cpu].n; j++) {
			const DomainSpan *s = l->cpus[cpu].sd[j].span;

			check(s->id < l->n_spans && l->spans[s->id] == s);
		}
}

/* A layout relaxed after the fact is the layout predicted with that relax level. */
static void check_relax_rederived(const DomainInput *in)
{
	for (int relax = -1; relax <= 6; relax++) {
		_cleanup_(domain_layout_freep) DomainLayout *want = NULL, *got = NULL;
		DomainInput di = *in;

		di.relax_level = relax;
		check(domains_predict(&di, &want) == 0);
		di.relax_level = relax == 2 ? -1 : 2;
		check(domains_predict(&di, &got) == 0);
		domain_layout_relax(got, relax);
		check_int(got->n_slots, want->n_slots);
		for (unsigned cpu = 0; cpu < want->n_slots; cpu++) {
			check_int(got->cpus[cpu].n, want->cpus[cpu].n);
			for (size_t j = 0; j < want->cpus[cpu].n && j < got->cpus[cpu].n; j++) {
				const SchedDomain *a = &want->cpus[cpu].sd[j], *b = &got->cpus[cpu].sd[j];

				check_int(b->level, a->level);
				check_int(b->flags, a->flags);
				check(b->newidle == a->newidle);
				check(cpuset_equal(&b->span->cpus, &a->span->cpus));
			}
		}
	}
}

/* Properties that hold for every seed, independent of the text. */
static void test_invariants(void)
{
	const TopoSpec *specs[] = { &hygon_nps3, &hygon_nps1, &turin_nps10, &siena_nps2llc, &gnr_snc3, &vm_2cpu };

	for (size_t i = 0; i < ELEMENTSOF(specs); i++) {
		_cleanup_(topology_freep) Topology *t = NULL;
		_cleanup_(domain_layout_freep) DomainLayout *l = NULL;
		KernelCaps k;
		DomainInput di;

		check(topo_build(specs[i], &t) == 0);
		kernel_caps_patched(&k);
		di = (DomainInput) { t, &hygon_7447v, &k, &t->online, 2 };
		check(domains_predict(&di, &l) == 0);
		CPUSET_FOREACH(cpu, &t->online) {
			const CpuDomains *d = &l->cpus[cpu];

			/* Each level strictly grows, contains the CPU, the top spans the map. */
			for (size_t j = 0; j < d->n; j++) {
				check(cpuset_contains(&d->sd[j].span->cpus, (unsigned)cpu));
				if (j > 0) {
					check(d->sd[j].level > d->sd[j - 1].level);
					check(cpuset_is_subset(&d->sd[j - 1].span->cpus, &d->sd[j].span->cpus));
					check(d->sd[j - 1].span != d->sd[j].span);
				}
				/* relax level 2: no NEWIDLE at levels >= 2, kept below. */
				check(!!(d->sd[j].flags & SD_BALANCE_NEWIDLE) == (d->sd[j].level < 2));
			}
			if (d->n > 0)
				check(cpuset_equal(&d->sd[d->n - 1].span->cpus, &t->online));
		}
		check_spans_interned(l);
		check_relax_rederived(&di);
		kernel_caps_done(&k);
	}
}

/*
 * A level that does not cover the one below (here every thread its own L2,
 * so CLS lies inside SMT): the kernel warns and widens it to the child,
 * which makes it the child's span and degenerate.
 */
static void test_topology_borken(void)
{
	static const TopoSpec smt4 = { 1, 4, 2, 1, 0, NULL, NULL };
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_(domain_layout_freep) DomainLayout *l = NULL;
	_cleanup_free_ char *text = NULL;
	KernelCaps k;
	DomainInput di;

	check(topo_build(&smt4, &t) == 0);
	t->l2s.items = calloc(t->n_slots, sizeof(TopoGroup));
	check(t->l2s.items);
	for (unsigned cpu = 0; cpu < t->n_slots; cpu++) {
		t->l2s.items[cpu].id = (int)cpu;
		t->l2s.items[cpu].package = -1;
		check(cpuset_add(&t->l2s.items[cpu].cpus, cpu) == 0);
		t->cpus[cpu].l2 = (int)cpu;
	}
	t->l2s.n = t->n_slots;
	kernel_caps_stock(&k);
	di = (DomainInput) { t, &intel_vm, &k, &t->online, -1 };
	check(domains_predict(&di, &l) == 0);
	check(domain_layout_format(l, 1, &text) == 0);
	check_str(text, "cpu1:\n"
			"  0 SMT     2 cpus  1,5                          newidle=yes\n"
			"  2 MC      8 cpus  0-7                          newidle=yes\n"
			"levels: 0:SMT(2 cpus) 2:MC(8 cpus)\n"
			"sched distances: 10\n"
			"kernel would log: BUG: arch topology borken\n");
	check_spans_interned(l);
	kernel_caps_done(&k);
}

static void test_auto_isolation(void)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_free_ char *a = NULL, *b = NULL;
	CpuSet s = {};

	check(topo_build(&siena_nps2llc, &t) == 0);
	check(plan_auto_isolation(t, ISOLATION_PER_LLC, 1, &s) == 0);
	check(cpuset_format_list(&s, &a) == 0);
	/* The last core of each 8-core LLC with its SMT sibling. */
	check_str(a, "7,15,23,31,39,47,55,63,71,79,87,95,103,111,119,127");
	check(plan_auto_isolation(t, ISOLATION_PER_NODE, 2, &s) == 0);
	check(cpuset_format_list(&s, &b) == 0);
	check_str(b, "6-7,14-15,22-23,30-31,38-39,46-47,54-55,62-63,70-71,78-79,86-87,94-95,102-103,110-111,118-119,126-127");
	/* Never take a whole LLC: at most cores - 1. */
	check(plan_auto_isolation(t, ISOLATION_PER_LLC, 100, &s) == 0);
	check_int(cpuset_count(&s), 7 * 2 * 8);
	cpuset_done(&s);
}

static void test_distance_averaging(void)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	KernelCaps stock, patched;
	bool avg;

	check(topo_build(&hygon_nps3, &t) == 0);
	kernel_caps_stock(&stock);
	kernel_caps_patched(&patched);
	/* Stock 7.3 averages GNR only; the series adds Hygon F18 M7. */
	check_int(domains_sched_distance(t, &hygon_7447v, &stock, 0, 4, &avg), 28);
	check(!avg);
	check_int(domains_sched_distance(t, &hygon_7447v, &patched, 0, 4, &avg), 24);
	check(avg);
	check_int(domains_sched_distance(t, &hygon_7447v, &patched, 0, 2, &avg), 17);
	check(!avg);
	check_int(domains_sched_distance(t, &intel_gnr, &stock, 1, 3, &avg), 24);
	check_int(domains_sched_distance(t, &amd_turin, &patched, 1, 3, &avg), 23);
	kernel_caps_done(&stock);
	kernel_caps_done(&patched);
}

/* numa_balancing: one step through sysctl kernel.numa_balancing, as each kernel allows. */
static void test_numa_balancing(void)
{
	static const struct {
		const char *release;      /* NULL: no numa_balancing sysctl */
		int current;
		NumaBalancingMode want;
		const char *step;
	} numa_cases[] = {
		{ "6.1.0", 1, NUMA_BALANCING_KEEP,
		  "keep on -> on | numa_balancing = keep: left as the kernel has it" },
		{ "6.1.0", 1, NUMA_BALANCING_OFF, "set on -> off via sysctl kernel.numa_balancing | wanted off" },
		{ "6.1.0", 0, NUMA_BALANCING_OFF, "in-sync off -> off via sysctl kernel.numa_balancing | already off" },
		{ "6.1.0", 1, NUMA_BALANCING_TIERING,
		  "set on -> memory-tiering via sysctl kernel.numa_balancing | wanted memory-tiering" },
		{ "6.1.0", 0, NUMA_BALANCING_ON_TIERING,
		  "set off -> on+memory-tiering via sysctl kernel.numa_balancing | wanted on+memory-tiering" },
		{ "5.15.0", 1, NUMA_BALANCING_TIERING,
		  "unsupported on -> memory-tiering | kernel 5.15.0 takes only off and on: memory tiering needs 5.18 or later" },
		{ "5.15.0", 0, NUMA_BALANCING_ON, "set off -> on via sysctl kernel.numa_balancing | wanted on" },
		{ NULL, 0, NUMA_BALANCING_ON,
		  "unsupported absent -> on | kernel lacks NUMA balancing (no /proc/sys/kernel/numa_balancing: CONFIG_NUMA_BALANCING)" },
		{ NULL, 0, NUMA_BALANCING_OFF, "in-sync absent -> off | kernel lacks NUMA balancing, which is as good as off" },
	};
	_cleanup_(topology_freep) Topology *t = NULL;

	check(topo_build(&vm_2cpu, &t) == 0);
	for (size_t i = 0; i < ELEMENTSOF(numa_cases); i++) {
		_cleanup_(plan_freep) Plan *p = NULL;
		_cleanup_free_ char *got = NULL;
		ProfileSettings s = {
			.value[SETTING_NUMA_BALANCING].mode = numa_cases[i].want,
			.origin[SETTING_NUMA_BALANCING] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 3 },
		};
		const PlanStep *st;
		KernelCaps k;
		PlanInput in;

		kernel_caps_stock(&k);
		snprintf(k.release, sizeof(k.release), "%s", numa_cases[i].release ?: "6.1.0");
		kernel_caps_set(&k, CONTROL_NUMA_BALANCING_SYSCTL, numa_cases[i].release, numa_cases[i].current);
		in = (PlanInput) { &intel_vm, t, &k, &s, "t" };
		check(plan_compute(&in, &p) == 0);
		if (p) {
			st = &p->steps[SETTING_NUMA_BALANCING];
			got = strprintf("%s %s -> %s%s%s | %s", step_action_to_string(st->action), st->from, st->to,
					st->control ? " via " : "", st->control ? st->control->name : "", st->why);
			check_str(got, numa_cases[i].step);
			check_str(st->origin.file, "/etc/topotune/profiles/t.ini");
		}
		kernel_caps_done(&k);
	}
}

/*
 * housekeeping: one step for the IRQs, the unbound workqueues and
 * irqbalance, on an 8-CPU machine with CPUs 6-7 isolated (or none).
 */
static const TopoSpec flat8 = { 1, 8, 1, 1, 0, NULL, NULL };

static void irqs_from_text(KernelCaps *k, const char *text)
{
	_cleanup_strv_free_ char **w = NULL;

	check(strv_split(text, " ", &w) >= 0);
	STRV_FOREACH(i, w) {
		unsigned irq;
		int n = 0;

		check(sscanf(*i, "%u:%n", &irq, &n) == 1 && n > 0);
		k->irqs = realloc(k->irqs, (k->n_irqs + 1) * sizeof(KernelIrq));
		assert(k->irqs);
		k->irqs[k->n_irqs] = (KernelIrq) { .irq = irq };
		check(cpuset_parse_list(*i + n, &k->irqs[k->n_irqs++].affinity, NULL) == 0);
	}
}

static void test_housekeeping(void)
{
	static const struct {
		const char *name;
		int mode;
		const char *isolated;     /* NULL: none */
		const char *irq_default;  /* hex mask; NULL: no /proc/irq */
		const char *irqs;         /* "IRQ:cpulist ..." */
		const char *refused;      /* refused at the last apply: "IRQ ERRNO" lines */
		const char *wq;           /* hex mask; NULL: no workqueue cpumask */
		bool irqbalance;
		const char *step;
	} hk_cases[] = {
		{ "none leaves everything", 0, "6-7", "ff", "1:0-7", NULL, "ff", true,
		  "keep irqs 0-7; workqueues 0-7; irqbalance running -> irqs 0-7; workqueues 0-7; irqbalance running"
		  " | housekeeping = none: IRQs, workqueues and irqbalance left as they are" },
		{ "all without isolated CPUs", HOUSEKEEPING_ALL, NULL, "ff", "1:0-7", NULL, "ff", false,
		  "not-applicable irqs 0-7; workqueues 0-7; irqbalance not running -> irqs 0-7; workqueues 0-7; "
		  "irqbalance not running | no isolated CPUs: nothing to keep IRQs and workqueues off" },
		{ "all, every part there", HOUSEKEEPING_ALL, "6-7", "ff", "0:0 1:0-7 9:6 24:7", NULL, "ff", true,
		  "set irqs 0-7; workqueues 0-7; irqbalance running -> irqs 0-5; workqueues 0-5; irqbalance bans 6-7"
		  " via /proc/irq (default_smp_affinity, N/smp_affinity_list) | keep off the isolated CPUs 6-7; 3 of 4"
		  " IRQs have isolated CPUs in their affinity and move; not moved: per-CPU kernel threads (kworker/N,"
		  " ksoftirqd/N) and managed IRQs; the tick and RCU callbacks need nohz_full= and rcu_nocbs= on the"
		  " kernel command line (a reboot)" },
		{ "managed IRQs refused at the last apply are named", 1 << HOUSEKEEPING_IRQS, "6-7", "3f",
		  "0:0 1:0-5 30:7 31:6", "30 EIO\n31 EINVAL\n", NULL, false,
		  "in-sync irqs 0-5 -> irqs 0-5 via /proc/irq (default_smp_affinity, N/smp_affinity_list) | keep off the"
		  " isolated CPUs 6-7; 0 of 4 IRQs have isolated CPUs in their affinity and move; cannot be moved: IRQ"
		  " 30: the kernel refused (EIO: managed or per-CPU), IRQ 31: the kernel refused (EINVAL: Invalid"
		  " argument); not moved: per-CPU kernel threads"
		  " (kworker/N, ksoftirqd/N) and managed IRQs; the tick and RCU callbacks need nohz_full= and rcu_nocbs="
		  " on the kernel command line (a reboot)" },
		{ "default in place but one IRQ still on an isolated CPU", 1 << HOUSEKEEPING_IRQS, "6-7", "3f",
		  "0:0 1:0-7", NULL, NULL, false,
		  "set irqs 0-5 -> irqs 0-5 via /proc/irq (default_smp_affinity, N/smp_affinity_list) | keep off the"
		  " isolated CPUs 6-7; 1 of 2 IRQs have isolated CPUs in their affinity and move; not moved: per-CPU"
		  " kernel threads (kworker/N, ksoftirqd/N) and managed IRQs; the tick and RCU callbacks need nohz_full="
		  " and rcu_nocbs= on the kernel command line (a reboot)" },
		{ "workqueues only, no workqueue cpumask", 1 << HOUSEKEEPING_WORKQUEUES, "6-7", "ff", "1:0-7", NULL,
		  NULL, false,
		  "unsupported workqueues absent -> workqueues absent | keep off the isolated CPUs 6-7; no"
		  " /sys/devices/virtual/workqueue/cpumask: unbound workqueues not moved; not moved: per-CPU kernel"
		  " threads (kworker/N, ksoftirqd/N) and managed IRQs; the tick and RCU callbacks need nohz_full= and"
		  " rcu_nocbs= on the kernel command line (a reboot)" },
		{ "workqueues and irqbalance, irqbalance not running",
		  (1 << HOUSEKEEPING_WORKQUEUES) | (1 << HOUSEKEEPING_IRQBALANCE), "6-7", NULL, "", NULL, "ff", false,
		  "set workqueues 0-7; irqbalance not running -> workqueues 0-5; irqbalance not running via"
		  " /sys/devices/virtual/workqueue/cpumask | keep off the isolated CPUs 6-7; irqbalance not running"
		  " (no socket in /run/irqbalance): nothing to tell; not moved: per-CPU kernel threads (kworker/N,"
		  " ksoftirqd/N) and managed IRQs; the tick and RCU callbacks need nohz_full= and rcu_nocbs= on the"
		  " kernel command line (a reboot)" },
	};
	_cleanup_(topology_freep) Topology *t = NULL;

	check(topo_build(&flat8, &t) == 0);
	for (size_t i = 0; i < ELEMENTSOF(hk_cases); i++) {
		_cleanup_(plan_freep) Plan *p = NULL;
		_cleanup_free_ char *got = NULL;
		ProfileSettings s = {
			.value[SETTING_ISOLATED_CPUS].mode = hk_cases[i].isolated ? ISOLATION_LIST : ISOLATION_NONE,
			.value[SETTING_HOUSEKEEPING].mode = hk_cases[i].mode,
			.origin[SETTING_HOUSEKEEPING] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 9 },
		};
		const PlanStep *st;
		KernelCaps k;
		PlanInput in;

		if (hk_cases[i].isolated)
			check(cpuset_parse_list(hk_cases[i].isolated, &s.value[SETTING_ISOLATED_CPUS].cpus, NULL) == 0);
		kernel_caps_stock(&k);
		kernel_caps_set(&k, CONTROL_IRQ_AFFINITY, hk_cases[i].irq_default, 0);
		if (hk_cases[i].irq_default)
			check(cpuset_parse_mask(hk_cases[i].irq_default, &k.irq_default) == 0);
		irqs_from_text(&k, hk_cases[i].irqs);
		if (hk_cases[i].refused)
			check(kernel_irqs_refused_parse(hk_cases[i].refused, &k.irqs_refused, &k.irqs_refused_error,
							&k.n_irqs_refused, NULL) == 0);
		kernel_caps_set(&k, CONTROL_WORKQUEUE_CPUMASK, hk_cases[i].wq, 0);
		if (hk_cases[i].wq)
			check(cpuset_parse_mask(hk_cases[i].wq, &k.workqueue_mask) == 0);
		kernel_caps_set(&k, CONTROL_IRQBALANCE_SOCKET, hk_cases[i].irqbalance, 0);
		in = (PlanInput) { &intel_vm, t, &k, &s, "t" };
		check_ctx(hk_cases[i].name, plan_compute(&in, &p) == 0);
		if (p) {
			st = &p->steps[SETTING_HOUSEKEEPING];
			got = strprintf("%s %s -> %s%s%s | %s", step_action_to_string(st->action), st->from, st->to,
					st->control ? " via " : "", st->control ? st->control->name : "", st->why);
			check_str(got, hk_cases[i].step);
			check_str(st->origin.file, "/etc/topotune/profiles/t.ini");
		}
		cpuset_done(&s.value[SETTING_ISOLATED_CPUS].cpus);
		kernel_caps_done(&k);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s EXPECTED-DIR\n", argv[0]);
		return 2;
	}
	expected_dir = argv[1];
	init_slits();
	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		run_case(&cases[i]);
	test_invariants();
	test_topology_borken();
	test_auto_isolation();
	test_distance_averaging();
	test_numa_balancing();
	test_housekeeping();
	return test_end("test-planner");
}
