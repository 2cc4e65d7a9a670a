/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "fuzz.h"

/*
 * The input format of fuzz-topology, shared with the seed converter
 * (mkseed.py keeps the same table):
 *
 *   byte 0          options: bit 0 patched kernel caps, bit 1 SMT_BUDDY_ASSIST,
 *                   bits 2-4 relax_domain_level + 1 (-1..6), bits 5-6 identity
 *   then records    [path index, 2 bytes little endian, % FUZZ_TOPO_N_PATHS]
 *                   [length] [length bytes]
 *                   (the last record's content is cut at the end of the input)
 *
 * Each record writes that file (later records for the same path replace it).
 * The paths cover up to 8 CPUs and 4 NUMA nodes; the contents are anything.
 */

#define FUZZ_TOPO_CPUS 8
#define FUZZ_TOPO_NODES 4
#define FUZZ_TOPO_CACHES 4

static const char *const fuzz_topo_global[] = {
	"sys/devices/system/cpu/present",
	"sys/devices/system/cpu/possible",
	"sys/devices/system/cpu/online",
	"sys/devices/system/node/online",
	"sys/devices/system/node/possible",
};

static const char *const fuzz_topo_per_cpu[] = {
	"online",
	"topology/physical_package_id",
	"topology/die_id",
	"topology/cluster_id",
	"topology/core_id",
	"topology/thread_siblings_list",
	"topology/thread_siblings",
	"topology/core_cpus_list",
	"topology/core_cpus",
	"topology/package_cpus_list",
	"topology/package_cpus",
	"topology/core_siblings_list",
	"topology/core_siblings",
};

/* Files the reader learned later: appended after the nodes, so older inputs keep their paths. */
static const char *const fuzz_topo_per_cpu_late[] = {
	"topology/die_cpus_list",
	"topology/die_cpus",
};

/* Core kinds (after the late per-CPU files, for the same reason). */
static const char *const fuzz_topo_per_cpu_kind[] = {
	"cpu_capacity",
	"regs/identification/midr_el1",
};

static const char *const fuzz_topo_kind_global[] = {
	"sys/devices/cpu_core/cpus",
	"sys/devices/cpu_atom/cpus",
	"proc/cpuinfo",
};

static const char *const fuzz_topo_per_cache[] = {
	"level", "type", "shared_cpu_list", "shared_cpu_map", "id",
};

static const char *const fuzz_topo_per_node[] = {
	"cpulist", "cpumap", "distance",
};

#define FUZZ_TOPO_PER_CPU (FUZZ_ELEMENTS(fuzz_topo_per_cpu) + FUZZ_TOPO_CACHES * FUZZ_ELEMENTS(fuzz_topo_per_cache))
#define FUZZ_TOPO_N_PATHS                                                                       \
	(FUZZ_ELEMENTS(fuzz_topo_global) + FUZZ_TOPO_CPUS * FUZZ_TOPO_PER_CPU +                    \
	 FUZZ_TOPO_NODES * FUZZ_ELEMENTS(fuzz_topo_per_node) +                                  \
	 FUZZ_TOPO_CPUS * FUZZ_ELEMENTS(fuzz_topo_per_cpu_late) +                               \
	 FUZZ_TOPO_CPUS * FUZZ_ELEMENTS(fuzz_topo_per_cpu_kind) + FUZZ_ELEMENTS(fuzz_topo_kind_global))
