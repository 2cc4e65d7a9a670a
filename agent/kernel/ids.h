/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The ids of the settings and of the kernel controls that serve them, at
 * the lowest layer that names both: the control table (control.c) says
 * which setting each control serves, the settings table (profile), the
 * planner and the applier index their tables by them. An id is an enum, so
 * a misspelt one does not compile. The order of each is its table's order.
 */

#include <errno.h>

typedef enum SettingId {
	SETTING_SMT_BUDDY_ASSIST,
	SETTING_RELAX_DOMAIN_LEVEL,
	SETTING_ISOLATED_CPUS,
	SETTING_HOUSEKEEPING_SMT,
	SETTING_NUMA_BALANCING,
	SETTING_HOUSEKEEPING,
	SETTING_AUTOGROUP,
	_SETTING_MAX,
	_SETTING_INVALID = -EINVAL,
} SettingId;

/* The controls of one setting are listed in the order they are preferred. */
typedef enum ControlId {
	CONTROL_SMT_BUDDY_SYSCTL,
	CONTROL_SMT_BUDDY_DEBUGFS,
	CONTROL_RELAX_SYSCTL,
	CONTROL_RELAX_CGROUP_V1,
	CONTROL_RELAX_CMDLINE,
	CONTROL_CPUSET_PARTITION,
	CONTROL_NUMA_BALANCING_SYSCTL,
	CONTROL_IRQ_AFFINITY,
	CONTROL_WORKQUEUE_CPUMASK,
	CONTROL_IRQBALANCE_SOCKET,
	CONTROL_AUTOGROUP_SYSCTL,
	_CONTROL_ID_MAX,
	_CONTROL_ID_INVALID = -EINVAL,
} ControlId;
