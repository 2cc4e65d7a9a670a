/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "control.h"
#include "cpuset.h"
#include "macro.h"

/*
 * What the running kernel offers for each setting topotune drives, probed
 * below a root fd without writing anything. Each missing control carries
 * the reason in @notes. The planner sees only this struct.
 */
typedef struct KernelIrq {
	unsigned irq;
	CpuSet affinity;
} KernelIrq;

typedef struct KernelCaps {
	char release[64];            /* proc/sys/kernel/osrelease, "" unknown */

	/* Each row of the control table (control.h), by ControlId. */
	ControlState controls[_CONTROL_ID_MAX];

	/* isolation */
	bool cgroup_v2;              /* sys/fs/cgroup/cgroup.controllers */
	bool cgroup_v2_cpuset;       /* ... lists cpuset */
	bool cpuset_partitions;      /* isolated partitions (5.11+) */
	bool isolated_known;         /* sys/fs/cgroup/cpuset.cpus.isolated read */
	CpuSet isolated;             /* CPUs in isolated partitions now */

	/*
	 * housekeeping (the controls irq_affinity, workqueue_cpumask,
	 * irqbalance_socket): what each holds now, when it is there.
	 */
	CpuSet irq_default;          /* proc/irq/default_smp_affinity */
	KernelIrq *irqs;             /* proc/irq/N/smp_affinity_list, by N */
	size_t n_irqs;
	/*
	 * IRQs whose affinity the kernel refused to change at the last apply
	 * (managed IRQs, per-CPU IRQs: EIO), with the error (-errno; 0 unknown):
	 * the daemon's from its applier, the probe's from the file the daemon
	 * keeps of them (KERNEL_IRQS_REFUSED_FILE), for IRQs still there.
	 */
	unsigned *irqs_refused;
	int *irqs_refused_error;
	size_t n_irqs_refused;
	CpuSet workqueue_mask;       /* sys/devices/virtual/workqueue/cpumask */
	int irqbalance_pid;          /* run/irqbalance/irqbalance<PID>.sock; 0 none */

	/* debugfs and lockdown */
	bool debugfs_sched;          /* sys/kernel/debug/sched exists */
	bool lockdown;               /* integrity or confidentiality */
	char lockdown_mode[16];

	/* scheduler-domain construction */
	bool numa_averaging_intel;   /* GNR/CWF SNC-3 SLIT fix-up (stock since 6.17) */
	bool numa_averaging_hygon;   /* Hygon F18 M7: topotune's series */
	int schedstat_version;       /* 0 unknown */

	/*
	 * sched_ext (sys/kernel/sched_ext/state, root/ops): while a BPF
	 * scheduler runs, the fair-class settings do not govern its tasks.
	 */
	char sched_ext_state[16];    /* "enabled", "disabled", ...; "" no sched_ext */
	char sched_ext_ops[64];      /* the running scheduler's name; "" none */

	char **notes;
} KernelCaps;

void kernel_caps_done(KernelCaps *c);
void kernel_irqs_free(KernelIrq *irqs, size_t n);

/* Is control @id (a row of the control table) there? */
bool kernel_caps_has(const KernelCaps *c, ControlId id) _pure_;
/* The value control @id reads, or @unknown when it is not there. */
int kernel_caps_value(const KernelCaps *c, ControlId id, int unknown) _pure_;
/* The highest value control @id accepts (INT_MAX: any), -1 when it is not there. */
int kernel_caps_max(const KernelCaps *c, ControlId id) _pure_;
/*
 * The setting's current value: what its first control that is there reads
 * (in the table's order of preference), or @unknown.
 */
int kernel_caps_current(const KernelCaps *c, SettingId setting, int unknown) _pure_;
/* The first control of @setting that is there, runtime controls only; NULL: none. */
const KernelControl *kernel_caps_control(const KernelCaps *c, SettingId setting) _pure_;
/* For the offline assumptions and tests: say control @id is there (or not) with @value. */
void kernel_caps_set(KernelCaps *c, ControlId id, bool present, int value);

/*
 * KernelCapabilities: one entry per row of the control table, then the
 * other facts. Returns the name of entry @i and its value in *ret, NULL past
 * the end.
 */
const char *kernel_caps_entry(const KernelCaps *c, size_t i, bool *ret);
int kernel_probe(int root_fd, KernelCaps *ret);

/* Read sched_ext's state and ops below @root_fd into @c (both "" when absent). */
void kernel_probe_sched_ext(int root_fd, KernelCaps *c);
/* A BPF scheduler is running (or being enabled). */
bool kernel_caps_sched_ext_running(const KernelCaps *c) _pure_;

/* The housekeeping controls' state below @root_fd into @c (for the probe and the daemon's re-reads). */
void kernel_probe_housekeeping(int root_fd, KernelCaps *c);

/*
 * The IRQs the kernel refused at topotuned's last apply, kept by the daemon
 * for the planners that run without it (topotunectl plan): one line per
 * IRQ, "IRQ ERRNAME" ("25 EIO"), '#' comments. /run is cleared at boot, so
 * the IRQ numbers are this boot's.
 */
#define KERNEL_IRQS_REFUSED_FILE "run/topotune/irqs-refused"

/* The file's text for @n IRQs and their errors (-errno). */
int kernel_irqs_refused_format(const unsigned *irqs, const int *errors, size_t n, char **ret);
/*
 * Parse the file's text: -EBADMSG for a line that is not "IRQ ERRNAME",
 * its number in *ret_line (untouched otherwise).
 */
int kernel_irqs_refused_parse(const char *text, unsigned **ret_irqs, int **ret_errors, size_t *ret_n,
			      unsigned *ret_line);
/*
 * Read the file below @root_fd into @c's refused IRQs, keeping those still
 * under proc/irq; a file that is missing gives none, one that cannot be
 * read or parsed none and a note naming it (and the line).
 */
void kernel_probe_irqs_refused(int root_fd, KernelCaps *c);
/* Why the kernel refuses an IRQ's affinity with @error (-errno): "managed or per-CPU" for EIO. */
const char *kernel_irq_refused_reason(int error);
/* "EIO" for -EIO; "unknown" for 0. */
const char *kernel_errno_name(int error);

/* Offline planning: what an unpatched or a patched 7.3 kernel offers. */
void kernel_caps_stock(KernelCaps *ret);
void kernel_caps_patched(KernelCaps *ret);
