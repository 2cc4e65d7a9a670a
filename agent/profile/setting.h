/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The settings table: one row per setting a profile, a hardware rule or
 * topotune.conf can carry. A row says where the setting lives in the ini
 * files, its built-in default, how its text is parsed and formatted, and
 * which man page documents it. Everything that lists, parses, prints,
 * layers or explains settings walks this table.
 */

#include <stdbool.h>

#include "control.h"
#include "cpuset.h"
#include "ids.h"
#include "macro.h"

typedef enum SmtBuddyMode {
	SMT_BUDDY_KEEP,
	SMT_BUDDY_OFF,
	SMT_BUDDY_ON,
	_SMT_BUDDY_MAX,
	_SMT_BUDDY_INVALID = -EINVAL,
} SmtBuddyMode;

typedef enum RelaxMode {
	RELAX_KEEP,
	RELAX_AUTO,     /* derived from topology by the planner */
	RELAX_LEVEL,    /* explicit level in .level, -1 = kernel default */
	_RELAX_MAX,
	_RELAX_INVALID = -EINVAL,
} RelaxMode;

typedef enum IsolationMode {
	ISOLATION_KEEP,
	ISOLATION_NONE,
	ISOLATION_LIST,       /* isolated_cpus = <cpulist> */
	ISOLATION_PER_LLC,    /* isolated_cpus = auto:<n>-per-llc */
	ISOLATION_PER_NODE,   /* isolated_cpus = auto:<n>-per-node */
	_ISOLATION_MAX,
	_ISOLATION_INVALID = -EINVAL,
} IsolationMode;

typedef enum HousekeepingSmt {
	HOUSEKEEPING_WHOLE_CORES,   /* never split SMT siblings between sets */
	HOUSEKEEPING_ANY,
	_HOUSEKEEPING_MAX,
	_HOUSEKEEPING_INVALID = -EINVAL,
} HousekeepingSmt;

/*
 * A setting that is one kernel control's value (SETTING_OF_CONTROL()): its
 * mode is SETTING_KEEP, or the control's value plus SETTING_VALUE_BASE.
 */
#define SETTING_KEEP 0
#define SETTING_VALUE_BASE 1

/* kernel.numa_balancing, a setting of one control: the modes by name, for the tests. */
typedef enum NumaBalancingMode {
	NUMA_BALANCING_KEEP,
	NUMA_BALANCING_OFF,
	NUMA_BALANCING_ON,                  /* NUMA_BALANCING_NORMAL */
	NUMA_BALANCING_TIERING,             /* NUMA_BALANCING_MEMORY_TIERING (5.18) */
	NUMA_BALANCING_ON_TIERING,          /* both */
	_NUMA_BALANCING_MAX,
	_NUMA_BALANCING_INVALID = -EINVAL,
} NumaBalancingMode;

/*
 * [isolation] housekeeping: what else follows the isolated partition onto
 * the housekeeping CPUs. The value's mode is a set of these bits; 0 is
 * "none", all of them "all".
 */
typedef enum HousekeepingPart {
	HOUSEKEEPING_IRQS,          /* proc/irq/default_smp_affinity and every IRQ that accepts it */
	HOUSEKEEPING_WORKQUEUES,    /* sys/devices/virtual/workqueue/cpumask (unbound workqueues) */
	HOUSEKEEPING_IRQBALANCE,    /* irqbalance's banned CPUs, through its socket */
	_HOUSEKEEPING_PART_MAX,
	_HOUSEKEEPING_PART_INVALID = -EINVAL,
} HousekeepingPart;

#define HOUSEKEEPING_ALL ((1 << _HOUSEKEEPING_PART_MAX) - 1)

/*
 * One setting's value. @mode is the setting's own enum (SmtBuddyMode,
 * RelaxMode, ...); the other fields carry what some modes need.
 */
typedef struct SettingValue {
	int mode;
	int level;            /* RELAX_LEVEL: -1..15 */
	unsigned per_group;   /* ISOLATION_PER_LLC / _PER_NODE */
	CpuSet cpus;          /* ISOLATION_LIST */
} SettingValue;

typedef struct Setting {
	const char *section;        /* ini section: "scheduler", "isolation" */
	const char *key;            /* ini key, and the setting's name everywhere */
	const char *man;            /* the man page that documents it */
	SettingValue default_value; /* no allocated parts */
	/*
	 * Parse @text into *ret (released by the caller). -EINVAL comes with
	 * *ret_error set to "invalid value 'TEXT' for KEY: expected ...";
	 * -ENOMEM without a message.
	 */
	int (*parse)(const struct Setting *s, const char *text, SettingValue *ret, char **ret_error);
	/* As it would be written in a profile: "on", "auto", "0-3,8", "auto:2-per-llc". */
	int (*format)(const struct Setting *s, const SettingValue *v, char **ret);
	/* A setting that is one of some names (setting_parse_name()): the name of each mode. */
	const char *const *names;
	size_t n_names;
	const char *expected;       /* "on, off or keep" */
	/*
	 * A setting that is the value of one kernel control, or keep: its
	 * names are "keep" and the control's, and the planner's generic step
	 * plans it (plan.c). Set by SETTING_OF_CONTROL().
	 */
	bool of_control;
	ControlId control;
} Setting;

/* parse and format of a setting that is one of @names. */
int setting_parse_name(const Setting *s, const char *text, SettingValue *ret, char **ret_error);
int setting_format_name(const Setting *s, const SettingValue *v, char **ret);
/* parse and format of a setting of one control: keep or a value name of the control. */
int setting_parse_control(const Setting *s, const char *text, SettingValue *ret, char **ret_error);
int setting_format_control(const Setting *s, const SettingValue *v, char **ret);

/* The fields of a settings-table row for a setting that is control @c's value, or keep. */
#define SETTING_OF_CONTROL(c)                   \
	.of_control = true,                     \
	.control = (c),                         \
	.default_value = { .mode = SETTING_KEEP }, \
	.parse = setting_parse_control,         \
	.format = setting_format_control

const Setting *setting_get(SettingId id) _const_;
const char *setting_id_to_string(SettingId id) _const_;
SettingId setting_id_from_string(const char *s) _pure_;
/* The names of all settings, "a, b or c", for error messages; NULL: no memory. */
char *setting_names_text(void);

void setting_value_done(SettingValue *v);
/* Deep copy; @ret is overwritten (not released) and only on success. */
int setting_value_copy(const SettingValue *v, SettingValue *ret);
int setting_format(SettingId id, const SettingValue *v, char **ret);

#define SETTING_FOREACH(i) for (SettingId i = 0; i < _SETTING_MAX; i++)

const char *smt_buddy_mode_to_string(SmtBuddyMode m) _const_;
SmtBuddyMode smt_buddy_mode_from_string(const char *s) _pure_;
const char *relax_mode_to_string(RelaxMode m) _const_;
RelaxMode relax_mode_from_string(const char *s) _pure_;
const char *isolation_mode_to_string(IsolationMode m) _const_;
IsolationMode isolation_mode_from_string(const char *s) _pure_;
const char *housekeeping_smt_to_string(HousekeepingSmt h) _const_;
HousekeepingSmt housekeeping_smt_from_string(const char *s) _pure_;
const char *housekeeping_part_to_string(HousekeepingPart p) _const_;
HousekeepingPart housekeeping_part_from_string(const char *s) _pure_;
