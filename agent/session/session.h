/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "planner.h"

/*
 * The step topotunectl's offline verbs and topotuned share: discover the
 * machine below a root (CPU identity, topology, kernel controls), load its
 * configuration (topotune.conf, hardware rules), and compute a profile's
 * plan. Does I/O through the root fds only, and does not log: errors come
 * back as -errno with a message for the caller to log or reply with.
 */

typedef enum SessionKernel {
	SESSION_KERNEL_PROBE,     /* the kernel below the root */
	SESSION_KERNEL_STOCK,     /* kernel_caps_stock() */
	SESSION_KERNEL_PATCHED,   /* kernel_caps_patched() */
} SessionKernel;

typedef struct Session {
	int root_fd;
	int config_fd;               /* profiles, hardware.d, topotune.conf: root_fd unless a config root */
	CpuIdentity identity;
	Topology *topology;
	KernelCaps caps;
	MatchFacts facts;
	Config *config;
	HardwareRule **rules;
	size_t n_rules;
} Session;

#define SESSION_INIT { .root_fd = -EBADF, .config_fd = -EBADF }

void session_done(Session *s);

/*
 * Open @root and @config_root (NULL: the same), identify the CPU (CPUID
 * when @live, else the root's proc/cpuinfo, or @cpuid_dump), read the
 * topology and probe (or assume) the kernel.
 */
int session_discover(Session *s, const char *root, const char *config_root, bool live, const char *cpuid_dump,
		     SessionKernel kernel, char **ret_error);

/* topotune.conf and the hardware rules; what @s held is replaced only on success. */
int session_configure(Session *s, char **ret_error);

/*
 * What topotuned chooses above its configuration, strongest first: a
 * HoldProfile(), a SetProfile(), a workload rule with running processes;
 * NULL: none. At start there is no hold and no SetProfile(), and a workload
 * rule names only a profile that loads (its rules come from loading it).
 */
typedef struct SessionChoice {
	const char *hold, *hold_source;          /* "HoldProfile(P) by :1.9: REASON" */
	const char *manual, *manual_source;      /* "SetProfile(P) by :1.42" */
	const char *workload, *workload_rule;    /* "comm:mysqld" */
} SessionChoice;

typedef struct SessionSelection {
	char *name;
	char *reason;     /* ActiveProfileReason: hold, manual, workload:RULE, configured */
	char *source;     /* ActiveProfileSource: who chose, or FILE:LINE of the configuration */
	Origin origin;    /* configured: the file and line (none: the built-in default) */
	bool configured;
} SessionSelection;

void session_selection_done(SessionSelection *sel);

/*
 * The profile topotuned applies: @choice (NULL: none) if it has one, else
 * the configuration's (topotune.conf and its drop-ins, the persistent
 * choice of set-profile --persistent among them), else the last hardware
 * rule matching @facts (NULL: the machine is unknown, no rule matches),
 * else balanced. The one place that order is written: topotuned and
 * topotunectl check both ask here.
 */
int session_select_profile(const Config *config, HardwareRule *const *rules, size_t n_rules,
			   const MatchFacts *facts, const SessionChoice *choice, SessionSelection *ret);
int session_select(const Session *s, const SessionChoice *choice, SessionSelection *ret);

/*
 * Profile @name (NULL: the one session_select() picks without choices), its settings over all layers, and its plan for the machine.
 * -ENOENT for a name that is no valid profile name.
 */
int session_compute(Session *s, const char *name, Profile **ret_profile, ProfileSettings *ret_settings,
		    Plan **ret_plan, char **ret_error);
