/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "cpuset.h"
#include "macro.h"

/*
 * The machine's CPU topology as sysfs shows it: CPUs, SMT siblings, cores,
 * dies, packages, L2 and last-level cache groups, NUMA nodes and
 * their distances. Everything is read below a root fd. What is missing is
 * recorded in @notes (naming the path) and left unknown; nothing is guessed
 * and presented as fact.
 */

typedef struct TopoCpu {
	bool online;
	/* Kernel ids as sysfs reports them; -1 unknown. */
	int package_id, die_id, core_id, node_id;
	/* Indexes into the Topology group arrays; -1 unknown. */
	int package, die, core, l2, llc, node;
	int kind;      /* index into Topology.kinds; -1 unknown */
} TopoCpu;

typedef struct TopoGroup {
	int id;        /* kernel id of the package/die/node/cache; -1 none */
	int package;   /* dies: index of their package (ids repeat per package); else -1 */
	CpuSet cpus;   /* online CPUs of the group */
} TopoGroup;

typedef struct TopoGroupList {
	TopoGroup *items;
	size_t n;
} TopoGroupList;

/*
 * One kind of core on a machine that mixes them (Intel hybrid P/E cores,
 * Arm big.LITTLE and DynamIQ clusters): the CPUs that share an identity,
 * or, where the kernel names none, a capacity within a tolerance. The identity is the Intel core type (the kernel's
 * cpu_core/cpu_atom PMUs, which it fills from CPUID leaf 0x1A) or the Arm
 * MIDR implementer and part (cpuN/regs/identification/midr_el1, else the
 * "CPU implementer"/"CPU part" lines of /proc/cpuinfo); the capacity is
 * cpuN/cpu_capacity (arm, arm64, riscv: drivers/base/arch_topology.c; x86
 * has no such file).
 */
typedef struct TopoKind {
	char key[24];          /* what hardware rules match: "core", "atom", "0x41:0xd46", "capacity-280" */
	char name[48];         /* "Intel Core (P-core)", "Arm Cortex-A510", "unidentified" */
	char core_type[8];     /* Intel hybrid: "core" or "atom"; else empty */
	bool have_midr;
	unsigned implementer, part;
	unsigned capacity;     /* cpu_capacity (1024 = the biggest), the highest of its CPUs; 0 unknown */
	unsigned capacity_min; /* the lowest of its CPUs: CPUs of one kind differ a little */
	CpuSet cpus;           /* online CPUs of this kind */
} TopoKind;

typedef struct TopoKindList {
	TopoKind *items;       /* lowest capacity first (atom before core), then by first CPU */
	size_t n;
	char source[64];       /* where the kinds came from: "cpu_capacity, midr_el1" */
} TopoKindList;

typedef struct Topology {
	unsigned n_slots;          /* highest possible CPU number + 1 */
	TopoCpu *cpus;             /* [n_slots] */
	CpuSet possible, present, online, offline;
	/*
	 * CPUs cpu/online (or present) names that have no cpuN directory and
	 * that no other file names: not counted, not in online or present.
	 */
	CpuSet missing;

	TopoGroupList packages, dies, cores, l2s, llcs, nodes;
	unsigned llc_level;        /* cache level of the LLC groups, 0 unknown */

	/* nodes.n x nodes.n, by node index; NULL when any row is missing. */
	unsigned *distance;

	/*
	 * Core kinds; empty when the kernel offers no per-CPU kind or
	 * capacity file (every x86 server): then nothing says they differ.
	 */
	TopoKindList kinds;

	unsigned threads_per_core; /* max SMT width seen */
	unsigned nodes_per_package;/* max number of CPU nodes in one package */
	bool nodes_synthetic;      /* no node/ directory: one node assumed */

	char **notes;              /* "PATH: what is missing or odd" */
} Topology;

Topology *topology_free(Topology *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Topology *, topology_free);

int topology_load(int root_fd, Topology **ret);

static inline unsigned topology_distance(const Topology *t, size_t a, size_t b)
{
	return t->distance ? t->distance[a * t->nodes.n + b] : 0;
}

/* More than one core kind, or capacities that differ. */
bool topology_heterogeneous(const Topology *t) _pure_;

/* Number of nodes that have at least one online CPU. */
unsigned topology_cpu_nodes(const Topology *t);
/* Node index of a node id, or -1. */
int topology_node_index(const Topology *t, int node_id);
