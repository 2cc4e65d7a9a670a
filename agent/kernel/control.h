/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The control table: one row per kernel control topotune reads or writes,
 * with its path, the kind of write it takes and how its values are encoded.
 * The probe, the applier's writes and its read-back all go through it, and
 * KernelCapabilities lists its rows. Rows are indexed by ControlId (ids.h);
 * the controls of one setting are listed in the order they are preferred.
 */

#include <stdbool.h>

#include "ids.h"
#include "macro.h"

typedef enum ControlKind {
	CONTROL_VALUE,      /* a file holding a number: sysctl, cgroup attribute */
	CONTROL_FEATURE,    /* a token of debugfs sched/features: NAME or NO_NAME */
	CONTROL_CMDLINE,    /* a boot parameter: read from proc/cmdline, changed by a reboot */
	CONTROL_PARTITION,  /* the isolated partition of the isolation slice: the applier's own steps */
	CONTROL_IRQS,       /* proc/irq: default_smp_affinity (hex mask) and each N/smp_affinity_list */
	CONTROL_CPUMASK,    /* a file holding a hex CPU mask the housekeeping CPUs go to */
	CONTROL_IRQBALANCE, /* irqbalance's socket: "settings cpus LIST" bans CPUs */
	_CONTROL_KIND_MAX,
	_CONTROL_KIND_INVALID = -EINVAL,
} ControlKind;

typedef struct KernelControl {
	const char *key;            /* "smt_buddy_sysctl": KernelCapabilities key (ABI) */
	SettingId setting;          /* the setting it serves */
	const char *name;           /* plans say "via NAME" */
	ControlKind kind;
	const char *path;           /* below the root */
	const char *token;          /* CONTROL_FEATURE: the feature; CONTROL_CMDLINE: the parameter */
	const char *const *values;  /* names of 0, 1, ... (NULL-terminated); NULL: numbers */
	bool boolean;               /* any number but 0 reads as 1 */
	bool probed_elsewhere;      /* CONTROL_PARTITION: kernel_probe() checks cgroup v2 itself */
	/* The highest value a kernel of this release ("6.1.0-13-amd64") accepts; NULL: any. */
	int (*max_value)(const char *release);
	/*
	 * For the plan of a setting of this one control (SETTING_OF_CONTROL()):
	 * what a kernel without it lacks ("NUMA balancing"; its value 0 is what
	 * such a kernel does), the option that builds it, and why a kernel
	 * takes fewer values than @values names (when @max_value says so).
	 */
	const char *feature;
	const char *kconfig;
	const char *max_why;
	/* Offline planning: there in a stock kernel, in one with topotune's series, with this value. */
	bool stock, patched;
	int assumed;
} KernelControl;

typedef struct ControlState {
	bool present;
	int value;       /* decoded, when present */
	int max;         /* the highest value the kernel accepts, when present */
} ControlState;

/* The row of @id; NULL for _CONTROL_ID_INVALID (no control). */
const KernelControl *kernel_control_get(ControlId id) _const_;
ControlId kernel_control_id(const KernelControl *c) _pure_;

#define CONTROL_FOREACH(i) for (ControlId i = 0; i < _CONTROL_ID_MAX; i++)

/* The highest value a kernel of @release accepts (INT_MAX: any). */
int kernel_control_max(const KernelControl *c, const char *release);
/* What the file holds -> the value; -ENOENT when the control is not in @content. */
int kernel_control_decode(const KernelControl *c, const char *content, int *ret);
/* How many values have names (c->values); 0: the values are numbers. */
size_t kernel_control_n_values(const KernelControl *c) _pure_;
/* The value -> what to write. */
int kernel_control_encode(const KernelControl *c, int value, char **ret);
/* The value as plans and Settings spell it ("on", "3") and back. */
int kernel_control_format(const KernelControl *c, int value, char **ret);
int kernel_control_parse(const KernelControl *c, const char *text, int *ret);
/*
 * What the file holds, as plans spell it: "absent" for a feature without
 * its token, the text itself when it is no number.
 */
int kernel_control_read_text(const KernelControl *c, const char *content, char **ret);
