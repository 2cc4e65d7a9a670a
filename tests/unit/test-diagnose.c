/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * agent/diagnose: each detector on recorded samples, with the readable text
 * of what it finds (diagnosis_format()), and the parsers on the files'
 * text. The samples are written out here as the kernel prints them.
 *
 * To see a case's actual text after a change: run build/tests/unit/test-diagnose
 * and copy the "--- got:" block over the case's expected text, then review the diff.
 */
#include "diagnose.h"
#include "strutil.h"
#include "test.h"
#include "topo-build.h"

static char *format(const Diagnosis *d)
{
	char *s = NULL;

	check(diagnosis_format(d, &s) == 0);
	return s;
}

/* ---- parsers ---- */

static void test_parse_stat(void)
{
	StatSample s = {};

	check(diagnose_parse_stat("cpu  10 0 10 100 0 0 0 0 0 0\n"
				  "cpu0 1 2 3 40 5 6 7 8 0 0\n"
				  "cpu3 10 0 0 90 0 0 0 0\nintr 1 2\nctxt 5\n",
				  &s) == 0);
	check_int(s.n, 4);
	check(s.cpu[0].present && !s.cpu[1].present && s.cpu[3].present);
	check_int(s.cpu[0].busy, 1 + 2 + 3 + 6 + 7 + 8);
	check_int(s.cpu[0].total, 1 + 2 + 3 + 6 + 7 + 8 + 40 + 5);
	check_int(s.cpu[3].total, 100);
	stat_sample_done(&s);
	check(diagnose_parse_stat("cpu0 1 2 x\n", &s) == -EBADMSG);
	check(diagnose_parse_stat("cpu99999 1 2 3 4\n", &s) == -EBADMSG);
}

static void test_parse_task(void)
{
	/* A comm with ") (" and spaces; tty_nr -1; PF_KTHREAD not set; processor 4. */
	static const char line[] = "4242 (stress-ng ) (cpu) R 1 4242 4242 0 -1 4194560 100 0 0 0 "
				   "480 20 0 0 20 0 1 0 100 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 "
				   "17 4 0 0 0 0 0";
	static const char kthread[] = "15 (ksoftirqd/1) S 2 0 0 0 -1 69238848 0 0 0 0 0 3 0 0 20 0 1 0 10 0 0 "
				      "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0";
	TaskSample t = {};

	check(diagnose_parse_task_stat(line, &t) == 0);
	check_int(t.tid, 4242);
	check_str(t.comm, "stress-ng ) (cpu");
	check_int(t.state, 'R');
	check_int(t.cpu, 4);
	check_int(t.cputime, 500);
	check(!t.kthread);
	check(diagnose_parse_task_stat(kthread, &t) == 0);
	check(t.kthread);
	check_int(t.cpu, 1);
	check(diagnose_parse_task_stat("12 (x) R 1 2 3", &t) == -EBADMSG);
	check(diagnose_parse_task_stat("12 x R", &t) == -EBADMSG);
}

static void test_parse_status(void)
{
	_cleanup_(cpuset_done) CpuSet s = {};
	_cleanup_free_ char *l = NULL;

	check(diagnose_parse_status_allowed("Name:\tx\nCpus_allowed:\t1f\nCpus_allowed_list:\t0-4\n", &s) == 0);
	check(cpuset_format_list(&s, &l) == 0);
	check_str(l, "0-4");
	check(diagnose_parse_status_allowed("Name:\tx\n", &s) == -ENOENT);
	check(diagnose_parse_status_allowed("Cpus_allowed_list:\t4-1\n", &s) == -EBADMSG);
}

static const char interrupts_before[] =
	"           CPU0       CPU1       CPU2       CPU3\n"
	"  0:         44          0          0          0   IO-APIC   2-edge      timer\n"
	" 24:       1000          0         10          0   PCI-MSI 524288-edge      eth0\n"
	"LOC:        500        500        500        500   Local timer interrupts\n"
	"ERR:          0\n";
static const char interrupts_after[] =
	"           CPU0       CPU1       CPU2       CPU3\n"
	"  0:         44          0          0          0   IO-APIC   2-edge      timer\n"
	" 24:       1100          0        260          0   PCI-MSI 524288-edge      eth0\n"
	"LOC:        900        900        900        505   Local timer interrupts\n"
	"ERR:          0\n";

static void test_parse_interrupts(void)
{
	_cleanup_(irq_table_done) IrqTable t = {};

	check(diagnose_parse_interrupts(interrupts_before, &t) == 0);
	check_int(t.n, 4);
	check_int(t.n_cpus, 4);
	check_str(t.lines[1].name, "24");
	check_int(t.lines[1].count[2], 10);
	check_str(t.lines[1].desc, "PCI-MSI 524288-edge      eth0");
	check_str(t.lines[3].name, "ERR");
	irq_table_done(&t);
	/* An offline CPU has no column: CPU numbers come from the header. */
	check(diagnose_parse_interrupts("  CPU0 CPU2\n 1: 5 7 edge\n", &t) == 0);
	check_int(t.n_cpus, 3);
	check_int(t.lines[0].count[2], 7);
	irq_table_done(&t);
	check(diagnose_parse_interrupts("no header\n", &t) == -EBADMSG);
	check(diagnose_parse_interrupts("  CPU0\n 1 5 7\n", &t) == -EBADMSG);
}

/* ---- smt-stacking ---- */

typedef struct StackCase {
	const char *name;
	unsigned n_cpus;
	const char *cores[8];      /* cpulists */
	const char *busy;          /* per-CPU busy percent in every interval */
	/* per task "TID COMM CPU ALLOWED SHARE%" (runnable at every tick), ";" between tasks */
	const char *tasks;
	const char *release;
	const char *want;          /* diagnosis_format() */
} StackCase;

#define HZ 100
#define INTERVALS 10           /* 5 s in ticks of 0.5 s */

static void build_ticks(const StackCase *c, DiagnoseTick *ticks)
{
	_cleanup_strv_free_ char **busy = NULL, **tasks = NULL;

	check(strv_split(c->busy, " ", &busy) == 0);
	check(strv_split(c->tasks, ";", &tasks) == 0);
	check_int(strv_length(busy), c->n_cpus);
	for (unsigned k = 0; k <= INTERVALS; k++) {
		DiagnoseTick *t = &ticks[k];

		t->usec = k * 500000ULL;
		t->stat.n = c->n_cpus;
		t->stat.cpu = calloc(c->n_cpus, sizeof(CpuTimes));
		for (unsigned cpu = 0; cpu < c->n_cpus; cpu++) {
			unsigned pct = (unsigned)atoi(busy[cpu]);

			/* 50 jiffies a CPU per interval */
			t->stat.cpu[cpu] = (CpuTimes) { .busy = k * pct / 2, .total = k * 50, .present = true };
		}
		t->n_tasks = strv_length(tasks);
		t->tasks = calloc(t->n_tasks ?: 1, sizeof(TaskSample));
		for (size_t i = 0; i < t->n_tasks; i++) {
			TaskSample *ts = &t->tasks[i];
			char comm[32], allowed[64];
			unsigned share;

			check(sscanf(tasks[i], " %d %31s %d %63s %u", &ts->tid, comm, &ts->cpu, allowed, &share) == 5);
			snprintf(ts->comm, sizeof(ts->comm), "%s", comm);
			ts->tgid = ts->tid;
			ts->state = 'R';
			ts->cputime = k * share / 2;
			check(cpuset_parse_list(allowed, &ts->allowed, NULL) == 0);
		}
	}
}

static const StackCase stack_cases[] = {
	{
		/* seed 001 in the 12-vCPU guest: 5 hogs on 0-4, two share CPU 4, CPU 1 idle */
		"seed001-two-on-cpu4",
		12, { "0-1", "2-3", "4-5", "6-7", "8-9", "10-11" },
		"100 0 100 100 100 0 0 0 0 0 0 0",
		"101 hog 0 0-4 100; 102 hog 2 0-4 100; 103 hog 3 0-4 100; 104 hog 4 0-4 50; 105 hog 4 0-4 50",
		"6.18.38",
		"smt-stacking [warning] 5.0 s of stacked time in 5.0 s: runnable tasks shared CPU(s) 4 while CPU(s) 1 "
		"(allowed to them) were idle\n"
		"  cpus: 1,4\n"
		"  seconds: 5.0\n"
		"  task: 104 hog\n"
		"  task: 105 hog\n"
		"  evidence: 0.0-0.5 s: tasks 104 (hog) and 105 (hog) shared CPU 4 while CPU 1 (allowed) was 0% busy\n"
		"  evidence: 0.5-1.0 s: tasks 104 (hog) and 105 (hog) shared CPU 4 while CPU 1 (allowed) was 0% busy\n"
		"  evidence: 1.0-1.5 s: tasks 104 (hog) and 105 (hog) shared CPU 4 while CPU 1 (allowed) was 0% busy\n"
		"  evidence: 1.5-2.0 s: tasks 104 (hog) and 105 (hog) shared CPU 4 while CPU 1 (allowed) was 0% busy\n"
		"  evidence: 2.0-2.5 s: tasks 104 (hog) and 105 (hog) shared CPU 4 while CPU 1 (allowed) was 0% busy\n"
		"  evidence: 2.5-3.0 s: tasks 104 (hog) and 105 (hog) shared CPU 4 while CPU 1 (allowed) was 0% busy\n"
		"  evidence: kernel 6.18.38 lacks, by its version, 82d6e01a0699 (\"sched/fair: Only update stats for "
		"allowed CPUs when looking for dst group\"; 82d6e01a0699 is in 6.19, 6.12.97, 6.1.178)\n"
		"  evidence: topotune's series (SMT_BUDDY_ASSIST): absent\n"
		"  remedy: a kernel with 82d6e01a0699 (6.19, 6.12.97, 6.1.178); topotune's kernel series "
		"(kernel-patches/) adds SMT_BUDDY_ASSIST, which profile throughput (smt_buddy_assist = on) turns on; "
		"confirm with 'topotunectl trial --profile balanced --profile throughput'\n",
	},
	{
		/* the same hogs spread one a CPU: CPU 5 is idle but not theirs */
		"seed001-spread",
		12, { "0-1", "2-3", "4-5", "6-7", "8-9", "10-11" },
		"100 100 100 100 100 0 0 0 0 0 0 0",
		"101 hog 0 0-4 100; 102 hog 1 0-4 100; 103 hog 2 0-4 100; 104 hog 3 0-4 100; 105 hog 4 0-4 100",
		"6.18.38",
		"",
	},
	{
		/* two hogs on the siblings of core 0-1 while core 2-3, allowed, idles */
		"smt-siblings",
		4, { "0-1", "2-3" },
		"100 100 0 0",
		"7 a 0 0-3 100; 8 b 1 0-3 100",
		"7.3.4",
		"smt-stacking [warning] 5.0 s of stacked time in 5.0 s: runnable tasks shared CPU(s) 0-1 while CPU(s) 2 "
		"(allowed to them) were idle\n"
		"  cpus: 0-2\n"
		"  seconds: 5.0\n"
		"  task: 7 a\n"
		"  task: 8 b\n"
		"  evidence: 0.0-0.5 s: tasks 7 (a) and 8 (b) on the siblings of core 0-1 while core 2-3 (allowed) was idle\n"
		"  evidence: 0.5-1.0 s: tasks 7 (a) and 8 (b) on the siblings of core 0-1 while core 2-3 (allowed) was idle\n"
		"  evidence: 1.0-1.5 s: tasks 7 (a) and 8 (b) on the siblings of core 0-1 while core 2-3 (allowed) was idle\n"
		"  evidence: 1.5-2.0 s: tasks 7 (a) and 8 (b) on the siblings of core 0-1 while core 2-3 (allowed) was idle\n"
		"  evidence: 2.0-2.5 s: tasks 7 (a) and 8 (b) on the siblings of core 0-1 while core 2-3 (allowed) was idle\n"
		"  evidence: 2.5-3.0 s: tasks 7 (a) and 8 (b) on the siblings of core 0-1 while core 2-3 (allowed) was idle\n"
		"  evidence: kernel 7.3.4 carries 82d6e01a0699 (\"sched/fair: Only update stats for allowed CPUs when "
		"looking for dst group\"; 82d6e01a0699 is in 6.19, 6.12.97, 6.1.178)\n"
		"  evidence: topotune's series (SMT_BUDDY_ASSIST): absent\n"
		"  remedy: topotune's kernel series (kernel-patches/) adds SMT_BUDDY_ASSIST, which profile throughput "
		"(smt_buddy_assist = on) turns on; confirm with 'topotunectl trial --profile balanced --profile "
		"throughput'\n",
	},
	{
		/* pinned to core 0-1: the idle core is not theirs */
		"smt-siblings-pinned",
		4, { "0-1", "2-3" },
		"100 100 0 0",
		"7 a 0 0-1 100; 8 b 1 0-1 100",
		"7.3.4",
		"",
	},
	{
		/* an idle machine: nothing runnable */
		"idle",
		4, { "0-1", "2-3" },
		"1 0 2 0",
		"",
		"6.18.38",
		"",
	},
	{
		/* two tasks on one CPU that barely run (a wakeup, not hogs) */
		"light-tasks",
		4, { "0-1", "2-3" },
		"20 0 0 0",
		"7 a 0 0-3 10; 8 b 0 0-3 10",
		"6.18.38",
		"",
	},
};

static void test_stacking(void)
{
	for (size_t i = 0; i < ELEMENTSOF(stack_cases); i++) {
		const StackCase *c = &stack_cases[i];
		DiagnoseTick ticks[INTERVALS + 1] = {};
		CpuSet cores[8] = {};
		size_t n_cores = 0;
		KernelCaps caps = {};
		Diagnosis d = {};
		_cleanup_free_ char *got = NULL;

		build_ticks(c, ticks);
		for (; n_cores < ELEMENTSOF(cores) && c->cores[n_cores]; n_cores++)
			check(cpuset_parse_list(c->cores[n_cores], &cores[n_cores], NULL) == 0);
		snprintf(caps.release, sizeof(caps.release), "%s", c->release);
		check_ctx(c->name, diagnose_smt_stacking(&(StackingInput) { ticks, INTERVALS + 1, cores, n_cores, HZ,
									 &caps },
							  &d) == 0);
		check_ctx(c->name, d.checked[DIAGNOSE_SMT_STACKING]);
		got = format(&d);
		if (!got || strcmp(got, c->want) != 0)
			fprintf(stderr, "case %s:\n", c->name);
		check_str(got, c->want);
		diagnosis_done(&d);
		for (size_t k = 0; k <= INTERVALS; k++)
			diagnose_tick_done(&ticks[k]);
		for (size_t k = 0; k < n_cores; k++)
			cpuset_done(&cores[k]);
	}
}

/* ---- numa-levels ---- */

/* The GNR SNC-3 SLIT (the kernel's comment above slit_cluster_distance()): seed 000's shape. */
static const unsigned slit_snc3[36] = {
	10, 15, 17, 21, 28, 26,
	15, 10, 15, 23, 26, 23,
	17, 15, 10, 26, 23, 21,
	21, 28, 26, 10, 15, 17,
	23, 26, 23, 15, 10, 15,
	26, 23, 21, 17, 15, 10,
};
static const TopoSpec hygon_nps3 = { 2, 6, 2, 3, 1, slit_snc3, NULL };
/* the same with one L3 a node: what "LLC as NUMA node" looks like in sysfs */
static const TopoSpec hygon_llc_node = { 2, 6, 2, 3, 2, slit_snc3, NULL };
static const TopoSpec amd_2s = { 2, 4, 2, 1, 0, (const unsigned[]) { 10, 32, 32, 10 }, NULL };
static const CpuIdentity hygon_7447v = { .vendor = CPU_VENDOR_HYGON, .arch = "x86", .have_family = true,
					 .family = 0x18, .model = 7 };
static const CpuIdentity amd_turin = { .vendor = CPU_VENDOR_AMD, .arch = "x86", .have_family = true,
				       .family = 0x1a, .model = 0x11 };

typedef struct LevelsCase {
	const char *name;
	const TopoSpec *spec;
	const CpuIdentity *id;
	bool patched;
	const char *want;
} LevelsCase;

static const LevelsCase levels_cases[] = {
	{ "hygon-nps3-stock", &hygon_nps3, &hygon_7447v, false,
	  "numa-levels [warning] the kernel built 5 scheduler levels above the node where averaged remote distances "
	  "give 3: the SLIT's remote distances are asymmetric\n"
	  "  cpus: 0-23\n"
	  "  evidence: levels built: predicted for this kernel (it reports no layout)\n"
	  "  evidence: remote distances: node 0-3: 21, node 0-4: 28, node 0-5: 26, node 1-3: 23 "
	  "(4 distinct off-package distances, 21..28)\n"
	  "  evidence: 2 packages, 3 nodes per package; the averaging applies to this CPU (Hygon family 0x18 "
	  "model 7, Intel GNR/CWF SNC-3)\n"
	  "  remedy: topotune's kernel series averages the remote-package distances (kernel-patches/7.3/0002, "
	  "6.12/0005; stock since 6.17 on Intel SNC-3); until then relax_domain_level = auto (profile database or "
	  "hpc) keeps newidle balancing inside the node; confirm with 'topotunectl trial'\n" },
	{ "hygon-nps3-patched", &hygon_nps3, &hygon_7447v, true, "" },
	{ "amd-2s-symmetric", &amd_2s, &amd_turin, false, "" },
};

static void test_levels(void)
{
	for (size_t i = 0; i < ELEMENTSOF(levels_cases); i++) {
		const LevelsCase *c = &levels_cases[i];
		_cleanup_(topology_freep) Topology *t = NULL;
		_cleanup_free_ char *got = NULL;
		KernelCaps caps;
		Diagnosis d = {};

		check(topo_build(c->spec, &t) == 0);
		if (c->patched)
			kernel_caps_patched(&caps);
		else
			kernel_caps_stock(&caps);
		check_ctx(c->name, diagnose_numa_levels(&(LevelsInput) { t, c->id, &caps, NULL }, &d) == 0);
		got = format(&d);
		if (!got || strcmp(got, c->want) != 0)
			fprintf(stderr, "case %s:\n", c->name);
		check_str(got, c->want);
		diagnosis_done(&d);
		kernel_caps_done(&caps);
	}
}

/* ---- newidle-cross-node ---- */

/* A version 17 schedstat of 2 CPUs x 2 domains (MC, NUMA) with newidle lb_count/balanced/gained per domain. */
static char *schedstat(unsigned mc_count, unsigned numa_count, unsigned numa_balanced, unsigned numa_gained)
{
	StrBuf b = {};
	char *ret = NULL;

	strbuf_append(&b, "version 17\ntimestamp 1\n");
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		strbuf_appendf(&b, "cpu%u 0 0 0 0 0 0 1 2 3\n", cpu);
		for (unsigned dom = 0; dom < 2; dom++) {
			strbuf_appendf(&b, "domain%u %s %s", dom, dom ? "NUMA" : "MC", dom ? "3" : cpu ? "2" : "1");
			for (unsigned f = 0; f < SCHEDSTAT_DOMAIN_FIELDS; f++) {
				unsigned v = 0;

				if (f == 2 * SCHEDSTAT_LB_FIELDS + SCHEDSTAT_LB_COUNT)
					v = dom ? numa_count : mc_count;
				else if (f == 2 * SCHEDSTAT_LB_FIELDS + 1)
					v = dom ? numa_balanced : 0;
				else if (f == 2 * SCHEDSTAT_LB_FIELDS + SCHEDSTAT_LB_GAINED)
					v = dom ? numa_gained : 0;
				strbuf_appendf(&b, " %u", v);
			}
			strbuf_append(&b, "\n");
		}
	}
	check(strbuf_steal(&b, &ret) == 0);
	return ret;
}

typedef struct NewidleCase {
	const char *name;
	unsigned count, balanced, gained;   /* per CPU at the NUMA level, over 5 s */
	int relax;
	const char *want;
} NewidleCase;

static const NewidleCase newidle_cases[] = {
	{ "pulls", 3000, 2000, 40, 2,
	  "newidle-cross-node [warning] 16.0 tasks/s pulled across NUMA nodes by newly idle CPUs (80 in 5.0 s; 6000 "
	  "newidle balances at cross-node levels, 67% found nothing to pull)\n"
	  "  seconds: 5.0\n"
	  "  evidence: domain1 NUMA (crosses a node): 6000 newidle balances, 4000 found nothing to pull, 80 tasks "
	  "pulled across nodes\n"
	  "  remedy: relax_domain_level = 2 (auto: the lowest level that crosses a node; profile database or hpc) "
	  "stops newidle pulls across nodes (at run time with topotune's series: kernel.sched_relax_domain_level; "
	  "else the boot parameter); confirm with 'topotunectl trial --profile balanced --profile database'\n" },
	{ "few-pulls", 3000, 2990, 2, 2, "" },
};

static void test_newidle(void)
{
	for (size_t i = 0; i < ELEMENTSOF(newidle_cases); i++) {
		const NewidleCase *c = &newidle_cases[i];
		_cleanup_free_ char *t0 = schedstat(100, 0, 0, 0), *t1 = schedstat(5000, c->count, c->balanced, c->gained);
		_cleanup_free_ char *got = NULL;
		KernelCounters before = {}, after = {};
		static const bool cross[] = { false, true };
		KernelCaps caps = {};
		Diagnosis d = {};

		check(kernel_counters_parse_schedstat(&before, t0) == 0);
		check(kernel_counters_parse_schedstat(&after, t1) == 0);
		check_ctx(c->name, diagnose_newidle(&(NewidleInput) { &before, &after, cross, 2, 5.0, c->relax, &caps },
						    &d) == 0);
		got = format(&d);
		if (!got || strcmp(got, c->want) != 0)
			fprintf(stderr, "case %s:\n", c->name);
		check_str(got, c->want);
		diagnosis_done(&d);
		free(before.domains);
		free(before.cpu_domains);
		free(after.domains);
		free(after.cpu_domains);
	}
}

/*
 * Version 16 (6.12): recorded in the tier's hygon3 guest on 6.12.118 (base,
 * five NUMA levels), /proc/schedstat before and after 5 s of ten tasks
 * waking every 2 ms and two hogs on CPUs 0-5, kernel.sched_schedstats = 1;
 * CPUs 0 and 1 (node 0) of the twelve. Domain 0 (003) is node 0's SMT
 * pair; domains 1-5 cross nodes.
 */
static const char schedstat_v16_before[] =
	"version 16\n"
	"timestamp 4294679839\n"
	"cpu0 0 0 0 0 0 0 620332864 574774276 724\n"
	"domain0 003 0 0 0 0 0 0 0 0 2 2 0 0 0 0 0 2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain1 00f 0 0 0 0 0 0 0 0 1 1 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain2 03f 0 0 0 0 0 0 0 0 1 1 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain3 0ff 0 0 0 0 0 0 0 0 1 1 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain4 cff 0 0 0 0 0 0 0 0 1 1 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain5 fff 0 0 0 0 0 0 0 0 1 1 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"cpu1 0 0 0 0 0 0 468201395 353698442 564\n"
	"domain0 003 0 0 0 0 0 0 0 0 2 2 0 0 0 0 0 2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain1 00f 0 0 0 0 0 0 0 0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain2 03f 0 0 0 0 0 0 0 0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain3 0ff 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain4 cff 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain5 fff 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

static const char schedstat_v16_after[] =
	"version 16\n"
	"timestamp 4294687711\n"
	"cpu0 0 0 189 27 81 63 6480634688 3187573771 868\n"
	"domain0 003 76 69 6 3045 1 0 0 69 45 44 1 1 0 0 0 44 16 13 1 3 2 0 0 13 0 0 0 0 0 0 0 0 0 2 0 0\n"
	"domain1 00f 37 33 4 2296 0 0 0 31 34 25 4 5280 5 0 0 25 17 10 5 1398 2 0 0 10 0 0 0 0 0 0 0 0 0 2 0 0\n"
	"domain2 03f 27 24 2 2913 1 0 0 23 28 24 4 1778 0 0 0 24 13 10 2 2184 1 0 0 10 0 0 0 0 0 0 0 0 0 4 1 0\n"
	"domain3 0ff 22 20 1 2927 1 0 0 10 28 17 9 7122 3 0 0 15 12 7 4 6662 1 0 1 6 1 0 1 0 0 0 0 0 0 3 0 0\n"
	"domain4 cff 20 18 1 2223 1 0 0 17 21 12 7 4877 4 0 0 12 15 9 5 3872 1 0 0 9 1 0 1 0 0 0 0 0 0 3 0 0\n"
	"domain5 fff 14 14 0 0 0 0 0 14 18 18 0 0 0 0 0 18 13 13 0 0 0 0 0 13 0 0 0 0 0 0 0 0 0 4 0 0\n"
	"cpu1 0 0 121 17 39 32 6454389936 2494737550 657\n"
	"domain0 003 83 68 11 7486 4 0 0 68 49 48 0 1 1 0 0 48 12 11 0 1 1 0 0 11 0 0 0 0 0 0 0 0 0 1 0 0\n"
	"domain1 00f 42 42 0 0 0 0 0 0 38 32 5 3443 1 0 0 13 11 7 2 1393 2 0 0 7 0 0 0 0 0 0 0 0 0 1 0 0\n"
	"domain2 03f 26 26 0 0 0 0 0 0 22 19 1 3853 2 0 0 15 8 3 4 4619 1 0 0 3 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain3 0ff 17 17 0 0 0 0 0 0 15 13 1 2 1 0 0 13 9 5 3 3150 1 0 0 4 0 0 0 0 0 0 0 0 0 2 0 0\n"
	"domain4 cff 11 11 0 0 0 0 0 0 15 10 5 5 0 0 0 10 5 4 1 1 0 0 1 2 0 0 0 0 0 0 0 0 0 2 0 0\n"
	"domain5 fff 6 6 0 0 0 0 0 0 11 11 0 0 0 0 0 11 4 4 0 0 0 0 0 4 0 0 0 0 0 0 0 0 0 1 0 0\n";

static void test_newidle_v16(void)
{
	static const bool cross[] = { false, true, true, true, true, true };
	KernelCounters before = {}, after = {}, bad = {};
	const DomainCounters *d1 = NULL;
	_cleanup_free_ char *got = NULL;
	KernelCaps caps = {};
	Diagnosis d = {};

	check(kernel_counters_parse_schedstat(&before, schedstat_v16_before) == 0);
	check(kernel_counters_parse_schedstat(&after, schedstat_v16_after) == 0);
	check(after.schedstat_version == 16 && after.n_domains == 6);
	for (size_t i = 0; i < after.n_domains; i++)
		if (after.domains[i].index == 1)
			d1 = &after.domains[i];
	/* version 16's newidle fields land in version 17's positions; lb_imbalance (1398, 1393) nowhere */
	check(d1 && d1->cpus == 2 && streq(d1->name, ""));
	check(d1 && d1->v[2 * SCHEDSTAT_LB_FIELDS + SCHEDSTAT_LB_COUNT] == 28 && d1->v[2 * SCHEDSTAT_LB_FIELDS + 1] == 17 &&
	      d1->v[2 * SCHEDSTAT_LB_FIELDS + SCHEDSTAT_LB_FAILED] == 7 &&
	      d1->v[2 * SCHEDSTAT_LB_FIELDS + SCHEDSTAT_LB_GAINED] == 4);
	for (unsigned f = 3; d1 && f <= 6; f++)
		check(d1->v[2 * SCHEDSTAT_LB_FIELDS + f] == 0 && d1->v[f] == 0);
	check(d1 && d1->v[SCHEDSTAT_LB_GAINED] == 0 && d1->v[SCHEDSTAT_LB_FIELDS + SCHEDSTAT_LB_GAINED] == 6 &&
	      d1->v[SCHEDSTAT_TTWU_MOVE_AFFINE - 1] == 3);

	check(diagnose_newidle(&(NewidleInput) { &before, &after, cross, ELEMENTSOF(cross), 5.0, 1, &caps }, &d) == 0);
	got = format(&d);
	check_str(got,
		  "newidle-cross-node [info] 1.8 tasks/s pulled across NUMA nodes by newly idle CPUs (9 in 5.0 s; 107 "
		  "newidle balances at cross-node levels, 67% found nothing to pull)\n"
		  "  seconds: 5.0\n"
		  "  evidence: domain1 (unnamed) (crosses a node): 28 newidle balances, 17 found nothing to pull, 4 tasks "
		  "pulled across nodes\n"
		  "  evidence: domain2 (unnamed) (crosses a node): 21 newidle balances, 13 found nothing to pull, 2 tasks "
		  "pulled across nodes\n"
		  "  evidence: domain3 (unnamed) (crosses a node): 21 newidle balances, 12 found nothing to pull, 2 tasks "
		  "pulled across nodes\n"
		  "  evidence: domain4 (unnamed) (crosses a node): 20 newidle balances, 13 found nothing to pull, 1 tasks "
		  "pulled across nodes\n"
		  "  evidence: domain5 (unnamed) (crosses a node): 17 newidle balances, 17 found nothing to pull, 0 tasks "
		  "pulled across nodes\n"
		  "  remedy: relax_domain_level = 1 (auto: the lowest level that crosses a node; profile database or hpc) "
		  "stops newidle pulls across nodes (at run time with topotune's series: kernel.sched_relax_domain_level; "
		  "else the boot parameter); confirm with 'topotunectl trial --profile balanced --profile database'\n");
	diagnosis_done(&d);

	/* a version 16 domain line has 36 fields after its mask, not 35 or 45 */
	check(kernel_counters_parse_schedstat(&bad, "version 16\ncpu0 0 0 0 0 0 0 0 0 0\ndomain0 003 "
						    "1 2 3 4 5 6 7 8 1 2 3 4 5 6 7 8 1 2 3 4 5 6 7 8 1 2 3 4 5 6 7 8 9 10 11\n") ==
	      -EBADMSG);
	check(kernel_counters_parse_schedstat(&bad, "version 16\ncpu0 0 0 0 0 0 0 0 0 0\ndomain0 MC 003 "
						    "1 2 3 4 5 6 7 8 1 2 3 4 5 6 7 8 1 2 3 4 5 6 7 8 1 2 3 4 5 6 7 8 9 10 11 "
						    "12 13 14 15 16 17 18 19 20 21\n") == -EBADMSG);
	free(before.domains);
	free(before.cpu_domains);
	free(after.domains);
	free(after.cpu_domains);
	free(bad.domains);
	free(bad.cpu_domains);
}

/* ---- isolation-noisy ---- */

static void test_isolation(void)
{
	_cleanup_(irq_table_done) IrqTable a = {}, b = {};
	_cleanup_(cpuset_done) CpuSet iso = {};
	_cleanup_free_ char *got = NULL, *quiet = NULL;
	TaskSample tasks[2] = {
		{ .tid = 900, .comm = "cron", .state = 'R', .cpu = 3 },
		{ .tid = 2, .comm = "kworker/3:1", .state = 'R', .cpu = 3, .kthread = true },
	};
	DiagnoseTick tick = { .tasks = tasks, .n_tasks = 2 };
	Diagnosis d = {};

	check(diagnose_parse_interrupts(interrupts_before, &a) == 0);
	check(diagnose_parse_interrupts(interrupts_after, &b) == 0);
	check(cpuset_parse_list("2-3", &iso, NULL) == 0);
	check(cpuset_parse_list("0-3", &tasks[0].allowed, NULL) == 0);
	check(cpuset_parse_list("3", &tasks[1].allowed, NULL) == 0);
	check(diagnose_isolation(&(IsolationInput) { &iso, "cpuset.cpus.isolated", &a, &b, &tick, 1, 5.0 }, &d) == 0);
	got = format(&d);
	check_str(got, "isolation-noisy [warning] isolated CPU(s) 2-3 are not quiet: 250 device interrupts and 1 "
		       "unrelated task(s) in 5.0 s (isolated: 2-3, from cpuset.cpus.isolated)\n"
		       "  cpus: 2-3\n"
		       "  seconds: 5.0\n"
		       "  task: 900 cron\n"
		       "  evidence: IRQ 24 (PCI-MSI 524288-edge      eth0): 250 on isolated CPU 2 (/proc/interrupts)\n"
		       "  evidence: task 900 cron ran on isolated CPU 3, allowed 0-3\n"
		       "  remedy: route the IRQs to the housekeeping CPUs (/proc/irq/N/smp_affinity_list, or "
		       "irqaffinity= on the kernel command line); run only the workload in topotune-isolated.slice "
		       "(Slice=), as profile hpc's isolated_cpus sets it up; 'topotunectl status' shows "
		       "HousekeepingCpus\n");
	diagnosis_done(&d);
	/* the same interrupts with nothing isolated on CPU 2: quiet (LOC is not a device IRQ) */
	cpuset_remove(&iso, 2);
	tick.n_tasks = 1;
	cpuset_add(&tasks[0].allowed, 0);
	check(cpuset_parse_list("3", &tasks[0].allowed, NULL) == 0);
	check(diagnose_isolation(&(IsolationInput) { &iso, NULL, &a, &b, &tick, 1, 5.0 }, &d) == 0);
	quiet = format(&d);
	check_str(quiet, "");
	diagnosis_done(&d);
	for (size_t i = 0; i < ELEMENTSOF(tasks); i++)
		task_sample_done(&tasks[i]);
}

/* ---- sched-ext ---- */

static void test_sched_ext(void)
{
	KernelCaps caps = { .sched_ext_state = "enabled", .sched_ext_ops = "scx_rusty" };
	_cleanup_free_ char *got = NULL;
	Diagnosis d = {};

	check(diagnose_sched_ext(&caps, &d) == 0);
	got = format(&d);
	check_str(got, "sched-ext [warning] a sched_ext scheduler ('scx_rusty') is enabled: the fair-class settings "
		       "topotune drives do not govern the tasks it schedules\n"
		       "  evidence: /sys/kernel/sched_ext/state: enabled\n"
		       "  evidence: /sys/kernel/sched_ext/root/ops: scx_rusty\n"
		       "  remedy: smt_buddy_assist, relax_domain_level and the numa_balancing interplay act on "
		       "CFS/EEVDF only: tune 'scx_rusty' itself, or stop it to let the active profile apply "
		       "('topotunectl status' says so in its state reasons)\n");
	diagnosis_done(&d);
	snprintf(caps.sched_ext_state, sizeof(caps.sched_ext_state), "disabled");
	check(diagnose_sched_ext(&caps, &d) == 0);
	check_int(d.n_findings, 0);
	diagnosis_done(&d);
}

/* ---- kernel: the table of fixes ---- */

static void test_fix_versions(void)
{
	static const struct {
		const char *release;
		int want;
	} cases[] = {
		{ "6.18.38", 0 },           /* seed 001's kernel */
		{ "6.12.95", 0 },
		{ "6.12.97", 1 },
		{ "6.12.118-1-amd64", 1 },
		{ "6.1.177", 0 },
		{ "6.1.178", 1 },
		{ "6.19", 1 },
		{ "6.19.2", 1 },
		{ "7.3.4+topotune", 1 },
		{ "5.15.170", 0 },
		{ "garbage", -EINVAL },
	};
	const KernelFix *f = kernel_fix_get(KERNEL_FIX_DST_GROUP_ALLOWED);

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		if (kernel_fix_carried(f, cases[i].release) != cases[i].want)
			fprintf(stderr, "release %s:\n", cases[i].release);
		check_int(kernel_fix_carried(f, cases[i].release), cases[i].want);
	}
	/* every row is complete: adding a fix is one row, and a half row is caught here */
	KERNEL_FIX_FOREACH(i) {
		const KernelFix *x = kernel_fix_get(i);

		check_int(x->id, i);
		check_int(strlen(x->commit), 12);
		check(x->subject && x->fixes && x->releases[0]);
	}
}

static void test_kernel(void)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_free_ char *got = NULL;
	KernelCaps caps = { .release = "6.18.38" };
	FirmwareFacts ff;
	Diagnosis d = {};

	check(topo_build(&hygon_nps3, &t) == 0);
	check(diagnose_kernel(&caps, t, &hygon_7447v, &d) == 0);
	got = format(&d);
	check_str(got, "kernel [warning] kernel 6.18.38 lacks 82d6e01a0699 (\"sched/fair: Only update stats for "
		       "allowed CPUs when looking for dst group\") by its version: tasks with a restricted affinity "
		       "stack on SMT siblings while an allowed core is idle\n"
		       "  evidence: 82d6e01a0699 is in 6.19, 6.12.97, 6.1.178\n"
		       "  evidence: a distribution kernel may carry a backport its version does not show\n"
		       "  evidence: topotune's series: absent\n"
		       "  remedy: a kernel release that carries 82d6e01a0699\n");
	diagnosis_done(&d);
	diagnose_firmware_facts(t, &hygon_7447v, &ff);
	check_str(ff.mode, "NPS3");
	check_int(ff.nodes_per_package, 3);
	topology_free(t);
	t = NULL;
	check(topo_build(&hygon_llc_node, &t) == 0);
	diagnose_firmware_facts(t, &hygon_7447v, &ff);
	check_str(ff.mode, "LLC as NUMA node (each node one L3)");
	check(ff.llc_as_node);
}

/*
 * A recorded sample built from a real dump: test-diagnose --interrupts FILE
 * parses a machine's /proc/interrupts (tests/realdata/check-realdata.py
 * passes S18's, never copied into the repository), makes the second
 * sample by adding 250 interrupts of the first device IRQ on CPU 3, and
 * prints the table's size and what the isolation detector finds for
 * isolated CPUs 2-3. The script checks it against its own reading of the file.
 */
static int recorded_interrupts(const char *path)
{
	_cleanup_(irq_table_done) IrqTable a = {}, b = {};
	_cleanup_(cpuset_done) CpuSet iso = {};
	_cleanup_free_ char *text = NULL, *got = NULL;
	Diagnosis d = {};
	FILE *f = fopen(path, "re");
	size_t n = 0;

	if (!f || getdelim(&text, &n, 0, f) < 0) {
		fprintf(stderr, "%s: %m\n", path);
		return 2;
	}
	fclose(f);
	if (diagnose_parse_interrupts(text, &a) < 0 || diagnose_parse_interrupts(text, &b) < 0) {
		fprintf(stderr, "%s: not parsed\n", path);
		return 1;
	}
	for (size_t i = 0; i < b.n; i++)
		if (strspn(b.lines[i].name, "0123456789") == strlen(b.lines[i].name) && b.n_cpus > 3) {
			b.lines[i].count[3] += 250;
			break;
		}
	check(cpuset_add_range(&iso, 2, 3) == 0);
	check(diagnose_isolation(&(IsolationInput) { &iso, "cpuset.cpus.isolated", &a, &b, NULL, 0, 5.0 }, &d) == 0);
	got = format(&d);
	printf("cpus %u\nlines %zu\n%s", a.n_cpus, a.n, strempty(got));
	diagnosis_done(&d);
	return test_failures ? 1 : 0;
}

int main(int argc, char *argv[])
{
	if (argc == 3 && streq(argv[1], "--interrupts"))
		return recorded_interrupts(argv[2]);

	test_parse_stat();
	test_parse_task();
	test_parse_status();
	test_parse_interrupts();
	test_stacking();
	test_levels();
	test_newidle();
	test_newidle_v16();
	test_isolation();
	test_sched_ext();
	test_fix_versions();
	test_kernel();
	return test_end("diagnose");
}
