/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "cpuset.h"
#include "macro.h"

/*
 * What the running kernel offers for each setting topotune drives, probed
 * below a root fd without writing anything. Each missing control carries
 * the reason in @notes. The planner sees only this struct.
 */
typedef struct KernelCaps {
	char release[64];            /* proc/sys/kernel/osrelease, "" unknown */

	/* SMT_BUDDY_ASSIST */
	bool smt_buddy_sysctl;       /* proc/sys/kernel/sched_smt_buddy_assist */
	bool smt_buddy_debugfs;      /* token in sys/kernel/debug/sched/features */
	int smt_buddy_current;       /* 0/1, -1 unknown */

	/* relax_domain_level */
	bool relax_sysctl;           /* proc/sys/kernel/sched_relax_domain_level */
	bool relax_cgroup_v1;        /* cpuset v1 root cpuset.sched_relax_domain_level */
	int relax_current;           /* -1 default, also when unknown */
	int relax_boot;              /* relax_domain_level= on the cmdline, -1 none */

	/* isolation */
	bool cgroup_v2;              /* sys/fs/cgroup/cgroup.controllers */
	bool cgroup_v2_cpuset;       /* ... lists cpuset */
	bool cpuset_partitions;      /* isolated partitions (5.11+) */
	bool isolated_known;         /* sys/fs/cgroup/cpuset.cpus.isolated read */
	CpuSet isolated;             /* CPUs in isolated partitions now */

	/* debugfs and lockdown */
	bool debugfs_sched;          /* sys/kernel/debug/sched exists */
	bool lockdown;               /* integrity or confidentiality */
	char lockdown_mode[16];

	/* scheduler-domain construction */
	bool numa_averaging_intel;   /* GNR/CWF SNC-3 SLIT fix-up (stock since 6.17) */
	bool numa_averaging_hygon;   /* Hygon F18 M7: topotune's series */
	int schedstat_version;       /* 0 unknown */

	char **notes;
} KernelCaps;

void kernel_caps_done(KernelCaps *c);
int kernel_probe(int root_fd, KernelCaps *ret);

/* Offline planning: what an unpatched or a patched 7.3 kernel offers. */
void kernel_caps_stock(KernelCaps *ret);
void kernel_caps_patched(KernelCaps *ret);
