/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "cpuid.h"
#include "domains.h"
#include "kernel.h"
#include "profile.h"
#include "topology.h"

/*
 * The planner: (identity, topology, kernel capabilities, effective profile
 * settings) -> Plan. Pure: no I/O, no logging, no clock. Every step says
 * what it would change, through which control, and why.
 */

typedef enum StepAction {
	STEP_SET,              /* change through @control */
	STEP_NONE,             /* already as desired */
	STEP_KEEP,             /* the profile says keep: not touched */
	STEP_NOT_APPLICABLE,   /* e.g. SMT feature on a machine without SMT */
	STEP_UNSUPPORTED,      /* the kernel lacks the control */
	STEP_PENDING_REBOOT,   /* only a boot parameter can do it */
	STEP_REFUSED,          /* the desired value is unsafe or invalid here */
	_STEP_ACTION_MAX,
	_STEP_ACTION_INVALID = -EINVAL,
} StepAction;

typedef struct PlanStep {
	SettingId setting;
	StepAction action;
	const KernelControl *control;   /* the row of the control table it goes through; NULL: none */
	char *from;       /* current value as text ("unknown" when not readable) */
	char *to;         /* desired value as text */
	char *why;        /* one line: the rule or derivation */
	Origin origin;    /* where the desired value came from */
} PlanStep;

typedef struct PlanInput {
	const CpuIdentity *identity;
	const Topology *topology;
	const KernelCaps *caps;
	const ProfileSettings *settings;
	const char *profile;           /* name, for the text */
} PlanInput;

typedef struct Plan {
	char *profile;
	PlanStep steps[_SETTING_MAX];
	CpuSet isolated, housekeeping;
	int relax_level;               /* effective after the plan, -1 default */
	bool smt_buddy_assist;         /* effective after the plan */
	char *kernel_cmdline;          /* arguments to add for pending-reboot steps */
	int housekeeping_parts;        /* HousekeepingPart bits the housekeeping step acts on */
	DomainLayout *layout;          /* predicted after the plan */
} Plan;

const char *step_action_to_string(StepAction a) _const_;
StepAction step_action_from_string(const char *s) _pure_;

/*
 * A setting the planner makes no step of (housekeeping_smt: the
 * isolated_cpus step reads it) leaves steps[id] with setting
 * _SETTING_INVALID and action STEP_NOT_APPLICABLE: nothing writes or
 * verifies it, and lists of steps leave it out.
 */
static inline bool plan_has_step(const Plan *p, SettingId id)
{
	return p->steps[id].setting >= 0;
}

/* The setting whose step reads @id when @id has none of its own, else @id. */
SettingId plan_step_of(SettingId id) _const_;

Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

int plan_compute(const PlanInput *in, Plan **ret);

/*
 * The scheduler domains of @in's online CPUs with relax_domain_level
 * @relax (-1: none) and the CPUs of @isolated (an isolated partition) left
 * without domains: the plan's prediction, and the daemon's for what the
 * kernel holds when the kernel reports no layout.
 */
int plan_predict_layout(const PlanInput *in, const CpuSet *isolated, int relax, DomainLayout **ret);

/* auto relax level: the lowest level crossing a NUMA node, -1 if none. */
int plan_auto_relax_level(const PlanInput *in);

/*
 * Isolated CPUs for auto:<n>-per-llc / auto:<n>-per-node: the last @n whole
 * cores of each group, taken from one LLC where a node has several.
 */
int plan_auto_isolation(const Topology *t, IsolationMode mode, unsigned n, CpuSet *ret);

/* The facts hardware rules match on, from the identity and the topology. */
MatchFacts plan_match_facts(const CpuIdentity *id, const Topology *t);

/* Readable plan: steps, then the predicted layout of cpu @cpu. */
int plan_format(const Plan *p, unsigned cpu, char **ret);
