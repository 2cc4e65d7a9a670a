/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "cpuid.h"
#include "cpuset.h"
#include "kernel.h"
#include "topology.h"

/*
 * A model of the kernel's scheduler-domain construction (kernel/sched/
 * topology.c build_sched_domains() with the x86 topology table), used to
 * predict the layout a setting will produce. Pure: values in, values out.
 */

/* include/linux/sched/sd_flags.h order (6.x/7.x). */
enum {
	SD_BALANCE_NEWIDLE = 1 << 0,
	SD_BALANCE_EXEC = 1 << 1,
	SD_BALANCE_FORK = 1 << 2,
	SD_BALANCE_WAKE = 1 << 3,
	SD_WAKE_AFFINE = 1 << 4,
	SD_ASYM_CPUCAPACITY = 1 << 5,
	SD_ASYM_CPUCAPACITY_FULL = 1 << 6,
	SD_SHARE_CPUCAPACITY = 1 << 7,
	SD_CLUSTER = 1 << 8,
	SD_SHARE_LLC = 1 << 9,
	SD_SERIALIZE = 1 << 10,
	SD_ASYM_PACKING = 1 << 11,
	SD_PREFER_SIBLING = 1 << 12,
	SD_NUMA = 1 << 13,
};

/* Flags that need at least two groups to mean anything (SDF_NEEDS_GROUPS). */
#define SD_DEGENERATE_GROUPS_MASK                                                              \
	(SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_BALANCE_WAKE |             \
	 SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL | SD_SHARE_CPUCAPACITY | SD_CLUSTER |  \
	 SD_SHARE_LLC | SD_SERIALIZE | SD_ASYM_PACKING | SD_PREFER_SIBLING | SD_NUMA)

/* include/linux/topology.h LOCAL_DISTANCE, REMOTE_DISTANCE: node_distance() without a SLIT. */
#define DOMAINS_LOCAL_DISTANCE 10U
#define DOMAINS_REMOTE_DISTANCE 20U

/* How a layout with unknown node distances says what it assumed. */
#define DOMAINS_ASSUMED_DISTANCES_TEXT                                                         \
	"NUMA distances unknown (no node distance files): assumed the kernel's default without a " \
	"SLIT, 10 within a node and 20 between nodes"

/* How a layout of a machine with core kinds but no capacities says what it left out. */
#define DOMAINS_CAPACITIES_UNKNOWN_TEXT                                                          \
	"core kinds differ but the kernel exposes no CPU capacities (x86 has no cpu_capacity): "   \
	"no SD_ASYM_CPUCAPACITY predicted; the kernel sets it only where intel_pstate enables "    \
	"hybrid capacity scaling (hybrid parts without SMT), else ITMT's SD_ASYM_PACKING, which "  \
	"this model does not predict"

/*
 * A span, kept once per layout however many CPUs and levels have it: two
 * domains of one layout span the same CPUs exactly when their span
 * pointers are equal. (A CPU's span per level as a bitmap of all CPUs, as
 * the kernel keeps it, made the prediction CPUs^2/64 words.)
 */
typedef struct DomainSpan {
	CpuSet cpus;
	unsigned weight;    /* cpuset_count(&cpus) */
	unsigned id;        /* index in DomainLayout.spans */
} DomainSpan;

typedef struct SchedDomain {
	const char *name;   /* SMT CLS MC PKG NODE NUMA */
	const DomainSpan *span;   /* owned by the layout */
	int level;          /* sd->level: counts degenerate levels too */
	unsigned flags;
	unsigned distance;  /* NUMA/NODE levels: the distance the mask stands for */
	bool newidle;       /* SD_BALANCE_NEWIDLE after relax_domain_level */
} SchedDomain;

typedef struct CpuDomains {
	SchedDomain *sd;    /* attached domains, bottom-up */
	size_t n;
} CpuDomains;

typedef struct DomainInput {
	const Topology *topology;
	const CpuIdentity *identity;
	const KernelCaps *caps;
	const CpuSet *cpu_map;    /* CPUs that get domains (online minus isolated) */
	int relax_level;          /* -1: none requested */
} DomainInput;

typedef struct DomainLayout {
	unsigned n_slots;
	CpuDomains *cpus;         /* [n_slots]; empty for CPUs outside cpu_map */
	SchedDomain *domains;     /* what cpus[].sd point into */
	DomainSpan **spans;       /* every distinct span, each once */
	size_t n_spans;
	unsigned *numa_distances; /* sorted unique sched distances */
	size_t n_numa_distances;
	bool averaged;            /* off-package distances averaged (SNC-3 style) */
	/*
	 * The node distances are unknown (no nodeN/distance): the sched
	 * distances are the kernel's default without a SLIT, DOMAINS_LOCAL_DISTANCE
	 * within a node and DOMAINS_REMOTE_DISTANCE between nodes, not facts.
	 */
	bool distances_assumed;
	/*
	 * The CPUs are of several kinds but no capacity is known: the
	 * asymmetric-capacity flags cannot be predicted (DOMAINS_CAPACITIES_UNKNOWN_TEXT).
	 */
	bool capacities_unknown;
	char **warnings;          /* what the kernel would print (ERROR: ...) */
} DomainLayout;

DomainLayout *domain_layout_free(DomainLayout *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(DomainLayout *, domain_layout_free);

int domains_predict(const DomainInput *in, DomainLayout **ret);

/*
 * The layout @l would be with relax_level @relax instead of the one it was
 * predicted with. relax_domain_level clears SD_BALANCE_NEWIDLE (and WAKE,
 * which sd_init() never sets) at the levels it reaches, and no more: every
 * level keeps other SD_DEGENERATE_GROUPS_MASK flags, so which levels are
 * degenerate, and every span, stay as they are.
 */
void domain_layout_relax(DomainLayout *l, int relax);

/* The distance the scheduler uses between two node indexes (after averaging). */
unsigned domains_sched_distance(const Topology *t, const CpuIdentity *id, const KernelCaps *caps, size_t a,
				size_t b, bool *ret_averaged);

/* "NEWIDLE|EXEC|..." without the SD_ prefix. */
int domain_flags_to_string(unsigned flags, char **ret);

/*
 * Readable text: the domains of @cpu, then one line per level with how many
 * distinct spans of which sizes it has over all CPUs.
 */
int domain_layout_format(const DomainLayout *l, unsigned cpu, char **ret);

/* Lowest level whose span crosses a NUMA node, -1 if none. */
int domain_layout_first_cross_node_level(const DomainLayout *l, const Topology *t);
