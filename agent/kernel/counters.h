/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"
#include "strutil.h"

/*
 * The scheduler's own counters that show whether a setting works, as
 * Prometheus metrics: /proc/schedstat's load-balance counters (version 17,
 * Documentation/scheduler/sched-stats.rst; version 16, 6.12's, is read into
 * version 17's positions without the lb_imbalance_* split) summed over CPUs
 * per domain, and
 * the series' SMT_BUDDY_ASSIST counters in /proc/sched_smt_buddy_stat
 * (version 2: "cpuN pushed push_failed"), summed,
 * and the SCHED softirqs of /proc/softirqs (the load balancer's), summed.
 */

/* The 45 fields of a version 17 domain line. */
#define SCHEDSTAT_DOMAIN_FIELDS 45
/*
 * The fields of /proc/sched_smt_buddy_stat version 2 (series v5). Version 1
 * (series v4, never released) also had refused and newidle_stopped, for the
 * hold and the newidle restriction that v5 dropped; other versions are
 * reported, not read, and a version 2 line with another number of fields
 * is refused as malformed.
 */
#define SMT_BUDDY_STAT_VERSION 2
#define SMT_BUDDY_STAT_FIELDS 2

/*
 * Indices into DomainCounters.v: per idle type t (0 busy, 1 idle, 2 newly
 * idle) the 11 sched_balance_rq() fields start at t * SCHEDSTAT_LB_FIELDS;
 * the others are sched-stats.rst's field number - 1.
 */
#define SCHEDSTAT_IDLE_TYPES 3
#define SCHEDSTAT_LB_FIELDS 11
#define SCHEDSTAT_LB_COUNT 0
#define SCHEDSTAT_LB_FAILED 2
#define SCHEDSTAT_LB_GAINED 7
#define SCHEDSTAT_ALB_PUSHED 35
#define SCHEDSTAT_TTWU_MOVE_AFFINE 43

/* The name of /proc/sched_smt_buddy_stat's field @i ("pushed", ...), as the metrics name it. */
const char *kernel_counters_smt_buddy_field(size_t i) _const_;

typedef struct DomainCounters {
	unsigned index;          /* N of "domainN": its position in each CPU's list */
	char name[16];           /* "MC", "NUMA", ... */
	unsigned cpus;           /* CPUs that reported it */
	uint64_t v[SCHEDSTAT_DOMAIN_FIELDS];
} DomainCounters;

/* One CPU's line of one domain, as /proc/schedstat has it now. */
typedef struct CpuDomainCounters {
	unsigned cpu, index;
	char name[16];
	uint64_t v[SCHEDSTAT_DOMAIN_FIELDS];
} CpuDomainCounters;

/* One CPU's line (or column) of a per-CPU counter file, as the file has it now. */
typedef struct CpuCounters {
	unsigned cpu;
	uint64_t v[SMT_BUDDY_STAT_FIELDS];
} CpuCounters;

typedef struct KernelCounters {
	int schedstat_version;   /* 0: no /proc/schedstat */
	DomainCounters *domains; /* versions 16 (unnamed) and 17, in order of first appearance */
	size_t n_domains;
	CpuDomainCounters *cpu_domains;  /* the lines summed into @domains */
	size_t n_cpu_domains;
	int schedstats_enabled;  /* kernel.sched_schedstats: 1, 0, -1 unknown */
	int smt_buddy_version;   /* 0: no /proc/sched_smt_buddy_stat */
	unsigned smt_buddy_cpus;
	uint64_t smt_buddy[SMT_BUDDY_STAT_FIELDS];
	CpuCounters *smt_buddy_per_cpu;  /* the lines summed into @smt_buddy */
	size_t n_smt_buddy_per_cpu;
	bool smt_buddy_malformed;  /* the file did not parse: its counters left out */
	bool have_sched_softirqs;  /* /proc/softirqs has a SCHED line */
	uint64_t sched_softirqs;
	CpuCounters *softirqs_per_cpu;   /* its columns (v[0]), summed into @sched_softirqs */
	size_t n_softirqs_per_cpu;
} KernelCounters;

/* Free what @c holds and zero it (a KernelCounters on the stack). */
void kernel_counters_done(KernelCounters *c);
KernelCounters *kernel_counters_free(KernelCounters *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(KernelCounters *, kernel_counters_free);

/* Pure parsers over the files' text, for tests and fuzzing; -EBADMSG on a malformed line. */
int kernel_counters_parse_schedstat(KernelCounters *c, const char *text);
int kernel_counters_parse_smt_buddy(KernelCounters *c, const char *text);
int kernel_counters_parse_softirqs(KernelCounters *c, const char *text);

/*
 * The kernel keeps schedstat's domain counters in its sched_domain structs:
 * a domain rebuild (relax_domain_level, an isolated partition, hotplug)
 * starts them at 0, and a CPU that loses its domains stops reporting them.
 * A CounterHistory keeps, per CPU and domain, what was counted before, for
 * the life of the process, so that the _total metrics never go down.
 */
typedef struct CounterSlot {
	unsigned cpu, index;
	char name[16];
	bool seen;                               /* in the last accumulated sample */
	uint64_t last[SCHEDSTAT_DOMAIN_FIELDS];  /* the kernel's value then */
	uint64_t base[SCHEDSTAT_DOMAIN_FIELDS];  /* counted by structs since freed */
} CounterSlot;

/*
 * The per-CPU counters of /proc/sched_smt_buddy_stat and /proc/softirqs
 * live in per-CPU structs that a CPU keeps while offline: its line leaves
 * the file (sched_smt_buddy_stat lists online CPUs) and comes back with the
 * counts it had. So a CPU gone keeps its last counts in the sums and a CPU
 * back carries on from them. The counters are 32 bits wide: a value lower
 * than the last went round, and @base gets 2^32 (a value that never fitted
 * in 32 bits started again: @base gets the last).
 */
typedef struct CpuTally {
	unsigned cpu;
	uint64_t last[SMT_BUDDY_STAT_FIELDS];
	uint64_t base[SMT_BUDDY_STAT_FIELDS];
} CpuTally;

typedef struct CounterHistory {
	CounterSlot *slots;
	size_t n_slots;
	CpuTally *smt_buddy, *softirqs;
	size_t n_smt_buddy, n_softirqs;
} CounterHistory;

void counter_history_done(CounterHistory *h);

/*
 * Fold @c's per-CPU lines into @h: a line lower than the one seen before
 * (in any field) is a new struct, a line gone took its counts with it; what
 * they counted stays in @h. Then @c's per-domain sums become @h's: per
 * domain, over every CPU that ever reported it, so each sum is at least what
 * it was at the call before. A domain no CPU reports now stays, with cpus 0.
 * The SMT buddy and SCHED softirq sums likewise, per CPU (see CpuTally).
 */
int kernel_counters_accumulate(KernelCounters *c, CounterHistory *h);

/* Read what of the four files is there below @root_fd; a missing file is not an error. */
int kernel_counters_load(int root_fd, KernelCounters **ret);

/* The metric families (HELP, TYPE, samples) of @c. */
void kernel_counters_metrics(const KernelCounters *c, StrBuf *b);
