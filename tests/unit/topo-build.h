/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "topology.h"

/*
 * Build a Topology value in memory, for planner tests: the planner is pure
 * and its tests must not need files. CPU numbering is the usual server
 * order: first threads of all cores of all packages, then the second
 * threads (cpu N and N + cores are siblings).
 */
/* One core kind: its CPUs and what the kernel says of them. */
typedef struct TopoKindSpec {
	const char *cpus;              /* cpulist */
	unsigned capacity;             /* 0: unknown */
	const char *core_type;         /* "core", "atom" or NULL */
} TopoKindSpec;

typedef struct TopoSpec {
	unsigned packages;
	unsigned cores_per_package;
	unsigned threads;
	unsigned nodes_per_package;
	unsigned cores_per_llc;        /* 0: the whole package */
	const unsigned *distance;      /* nodes x nodes, NULL: 10/20 rule */
	const char *offline;           /* cpulist or NULL */
	bool no_distance;              /* the node distance files are missing: Topology.distance NULL */
	const TopoKindSpec *kinds;     /* lowest first, as topology_load() orders them; NULL: none known */
	size_t n_kinds;
} TopoSpec;

int topo_build(const TopoSpec *spec, Topology **ret);
