/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "counters.h"
#include "cpuset.h"
#include "domains-live.h"
#include "fixes.h"
#include "planner.h"

/*
 * topotunectl diagnose: the scheduler-topology pathologies topotune exists
 * for, named with their evidence and the remedy in topotune's terms.
 *
 * The detectors are pure (samples in, findings out: diagnose-detect.c),
 * the text parsers are pure (diagnose-parse.c, fuzzed), and the sampling
 * (diagnose-sample.c) is the only I/O, through the root fd. Nothing here
 * writes or logs. The module sits above the planner (it reuses the
 * domain model and the relax-level derivation) and below service and cli.
 */

typedef enum DiagnoseKind {
	DIAGNOSE_SMT_STACKING,
	DIAGNOSE_NUMA_LEVELS,
	DIAGNOSE_NEWIDLE_CROSS_NODE,
	DIAGNOSE_ISOLATION_NOISY,
	DIAGNOSE_SCHED_EXT,
	DIAGNOSE_KERNEL,
	_DIAGNOSE_KIND_MAX,
	_DIAGNOSE_KIND_INVALID = -EINVAL,
} DiagnoseKind;

typedef enum DiagnoseSeverity {
	DIAGNOSE_INFO,
	DIAGNOSE_WARNING,
	_DIAGNOSE_SEVERITY_MAX,
	_DIAGNOSE_SEVERITY_INVALID = -EINVAL,
} DiagnoseSeverity;

const char *diagnose_kind_to_string(DiagnoseKind k) _const_;
DiagnoseKind diagnose_kind_from_string(const char *s) _pure_;
const char *diagnose_severity_to_string(DiagnoseSeverity s) _const_;
DiagnoseSeverity diagnose_severity_from_string(const char *s) _pure_;
/* Does @k need samples over time from a live machine (not a recorded tree)? */
bool diagnose_kind_needs_live(DiagnoseKind k) _const_;

typedef struct Finding {
	DiagnoseKind kind;
	DiagnoseSeverity severity;
	char *summary;       /* one line, with the numbers */
	CpuSet cpus;         /* the CPUs concerned */
	double seconds;      /* time the pathology lasted in the sample; 0 untimed */
	char **tasks;        /* "PID comm" */
	char **evidence;     /* lines: numbers, CPUs, files */
	char *remedy;        /* in topotune's terms; never done by diagnose */
} Finding;

typedef struct Diagnosis {
	Finding *findings;
	size_t n_findings;
	bool checked[_DIAGNOSE_KIND_MAX];
	char *not_checked[_DIAGNOSE_KIND_MAX];  /* why a kind was not checked; NULL: checked or not asked */
	char **unreadable;   /* "/PATH: error" */
	double duration;     /* seconds sampled; 0: no sampling */
} Diagnosis;

void diagnosis_done(Diagnosis *d);
/* Add a finding; takes @f's allocations (also on failure). */
int diagnosis_add(Diagnosis *d, Finding *f);
void finding_done(Finding *f);
/* Number of findings, or of those of @kind. */
size_t diagnosis_count(const Diagnosis *d, DiagnoseKind kind) _pure_;
/* Readable text of every finding and what was not checked, for the CLI and the tests. */
int diagnosis_format(const Diagnosis *d, char **ret);

/* ---- samples (what diagnose-sample.c reads; tests build them by hand) ---- */

/* /proc/stat cpuN lines: busy and total jiffies, by CPU number. */
typedef struct CpuTimes {
	uint64_t busy, total;
	bool present;
} CpuTimes;

typedef struct StatSample {
	CpuTimes *cpu;
	unsigned n;          /* slots in @cpu */
} StatSample;

/* One task (thread) as /proc/PID/task/TID/stat and status show it. */
typedef struct TaskSample {
	int tid, tgid;
	char comm[32];
	char state;          /* 'R', 'S', ... */
	int cpu;             /* field 39: the CPU it last ran on */
	uint64_t cputime;    /* utime + stime, jiffies */
	bool kthread;        /* PF_KTHREAD in field 9 */
	unsigned threads;    /* field 20 (in /proc/PID/stat: the process's) */
	CpuSet allowed;      /* Cpus_allowed_list; empty: unknown */
} TaskSample;

/* What one tick saw: cumulative CPU times, and the runnable tasks. */
typedef struct DiagnoseTick {
	uint64_t usec;       /* since the first tick */
	StatSample stat;
	TaskSample *tasks;
	size_t n_tasks;
} DiagnoseTick;

/* /proc/interrupts: one line per source, per-CPU counts by CPU number. */
typedef struct IrqLine {
	char name[32];       /* "24", "LOC", ... */
	char desc[64];       /* "PCI-MSI 524288-edge eth0" */
	uint64_t *count;     /* [n_cpus] by CPU number */
} IrqLine;

typedef struct IrqTable {
	IrqLine *lines;
	size_t n;
	unsigned n_cpus;     /* slots in each count array */
} IrqTable;

void stat_sample_done(StatSample *s);
void task_sample_done(TaskSample *t);
void diagnose_tick_done(DiagnoseTick *t);
void irq_table_done(IrqTable *t);

/* ---- pure parsers (fuzzed: tests/fuzz/fuzz-diagnose.c); -EBADMSG on malformed text ---- */
int diagnose_parse_stat(const char *text, StatSample *ret);
int diagnose_parse_task_stat(const char *text, TaskSample *ret);
int diagnose_parse_status_allowed(const char *text, CpuSet *ret);
int diagnose_parse_interrupts(const char *text, IrqTable *ret);

/* ---- pure detectors ---- */

typedef struct StackingInput {
	const DiagnoseTick *ticks;  /* ticks[0] is the baseline */
	size_t n_ticks;
	const CpuSet *cores;        /* each core's SMT siblings (thread_siblings_list) */
	size_t n_cores;
	unsigned user_hz;           /* jiffies per second of cputime */
	const KernelCaps *caps;     /* release, series: whether the fix is there */
} StackingInput;
int diagnose_smt_stacking(const StackingInput *in, Diagnosis *d);

typedef struct LevelsInput {
	const Topology *topology;
	const CpuIdentity *identity;
	const KernelCaps *caps;
	const LiveLayout *live;     /* NULL: the kernel reports no layout */
} LevelsInput;
int diagnose_numa_levels(const LevelsInput *in, Diagnosis *d);

typedef struct NewidleInput {
	const KernelCounters *before, *after;
	const bool *cross_node;     /* by domain index: its span crosses a NUMA node */
	size_t n_cross_node;
	double seconds;
	int relax_level;            /* the agent's auto relax_domain_level, -1 none */
	const KernelCaps *caps;
} NewidleInput;
int diagnose_newidle(const NewidleInput *in, Diagnosis *d);

typedef struct IsolationInput {
	const CpuSet *isolated;     /* the isolated partitions' CPUs */
	const char *isolated_source;/* the file that said so */
	const IrqTable *before, *after;
	const DiagnoseTick *ticks;  /* tasks seen on isolated CPUs */
	size_t n_ticks;
	double seconds;
} IsolationInput;
int diagnose_isolation(const IsolationInput *in, Diagnosis *d);

int diagnose_sched_ext(const KernelCaps *caps, Diagnosis *d);

/* The firmware modes sysfs shows: "SNC-3", "NPS4", "LLC as NUMA", or NULL. */
typedef struct FirmwareFacts {
	unsigned packages, nodes_per_package;
	bool llc_as_node;            /* every node's CPUs are exactly one LLC */
	char mode[48];               /* "" none */
} FirmwareFacts;
void diagnose_firmware_facts(const Topology *t, const CpuIdentity *id, FirmwareFacts *ret);
/* Does the series' or the stock averaging of remote distances apply to this CPU? */
bool diagnose_averaging_applies(const Topology *t, const CpuIdentity *id) _pure_;
/* topotune's series in the running kernel (its sysctls or counters are there). */
bool diagnose_series_present(const KernelCaps *caps) _pure_;
/* Is the fix relevant on this machine? */
bool diagnose_fix_relevant(const KernelFix *f, const Topology *t, const CpuIdentity *id) _pure_;
int diagnose_kernel(const KernelCaps *caps, const Topology *t, const CpuIdentity *id, Diagnosis *d);

/* The domain indexes whose span crosses a NUMA node, from @live (first listed CPU with domains). */
int diagnose_cross_node_levels(const LiveLayout *live, const Topology *t, bool **ret, size_t *ret_n);

/* ---- sampling (I/O through the root fd) ---- */

typedef struct DiagnoseSampler DiagnoseSampler;

typedef struct DiagnoseRequest {
	bool want[_DIAGNOSE_KIND_MAX];
	bool live;                  /* sample over time (else: the recorded-tree kinds only) */
	uint64_t tick_usec;         /* between ticks; DIAGNOSE_TICK_USEC */
} DiagnoseRequest;

#define DIAGNOSE_TICK_USEC 1000000ULL
#define DIAGNOSE_DURATION_DEFAULT_USEC 5000000ULL
/* The daemon's bound on Diagnose(duration_ms): a longer request is an error. */
#define DIAGNOSE_DURATION_MAX_USEC 60000000ULL

/* Take the first tick (and the counters' and interrupts' baselines) at @now_usec. */
int diagnose_sampler_new(int root_fd, const DiagnoseRequest *req, uint64_t now_usec, DiagnoseSampler **ret);
/* One more tick at @now_usec. */
int diagnose_sampler_tick(DiagnoseSampler *s, uint64_t now_usec);
DiagnoseSampler *diagnose_sampler_free(DiagnoseSampler *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(DiagnoseSampler *, diagnose_sampler_free);

/*
 * Run the detectors of @req on what was sampled (@s may be NULL when not
 * live) and on the machine's facts (@topology, @identity, @caps, the
 * layout below @root_fd). Fills @d.
 */
int diagnose_run(int root_fd, const DiagnoseRequest *req, DiagnoseSampler *s, const Topology *topology,
		 const CpuIdentity *identity, const KernelCaps *caps, Diagnosis *d);
