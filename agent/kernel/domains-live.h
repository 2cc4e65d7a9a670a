/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "cpuset.h"
#include "macro.h"

/*
 * The scheduler-domain layout the running kernel reports: /proc/schedstat
 * (version 15/16: "domainN MASK ...", version 17: "domainN NAME MASK ...")
 * and, where mounted and populated (sched_verbose), debugfs
 * sched/domains/cpuN/domainM/{name,flags,level}.
 */
typedef struct LiveDomain {
	int index;          /* M in domainM: position among attached domains */
	int level;          /* sd->level from debugfs, -1 unknown */
	char name[16];      /* "" unknown (schedstat < 17 without debugfs) */
	char *flags;        /* debugfs flags text, NULL unknown */
	CpuSet span;
} LiveDomain;

typedef struct LiveCpuDomains {
	LiveDomain *sd;
	size_t n;
} LiveCpuDomains;

typedef struct LiveLayout {
	unsigned n_slots;
	LiveCpuDomains *cpus;
	CpuSet listed;             /* CPUs the report covers (a "cpuN" line) */
	int schedstat_version;     /* 0: no /proc/schedstat */
	bool debugfs;              /* names/levels/flags came from debugfs */
	char **notes;              /* what was missing, naming the path */
} LiveLayout;

LiveLayout *live_layout_free(LiveLayout *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(LiveLayout *, live_layout_free);

/* Parse the text of /proc/schedstat (pure; for tests and fuzzing). */
int schedstat_parse(const char *text, LiveLayout **ret);

/* Read schedstat and enrich from debugfs below @root_fd. */
int live_layout_load(int root_fd, LiveLayout **ret);
