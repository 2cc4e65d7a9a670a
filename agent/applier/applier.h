/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "planner.h"

/*
 * The applier executes a Plan through the root fd. Every write goes to an
 * allow-listed path, is preceded by a write-ahead record in run/topotune/state
 * (setting, path, original value, new value, why) and is read back. A failed
 * step rolls back the steps of the same apply. revert restores the original
 * bytes of everything recorded; after a crash the record survives and
 * applier_recover() restores it.
 */

typedef enum WriteKind {
	WRITE_PLAIN,        /* a value file: sysctl, cgroup attribute */
	WRITE_FEATURE,      /* debugfs sched/features token */
	WRITE_SUBTREE,      /* cgroup.subtree_control "+cpuset" / "-cpuset" */
	WRITE_PARTITION,    /* cpuset.cpus.partition */
	WRITE_MKDIR,        /* a cgroup directory we created */
	WRITE_FILE,         /* a file we created (the boot loader request) */
	WRITE_SYSTEMD,      /* AllowedCPUs= of the slice through systemd */
	WRITE_UNIT,         /* the slice unit started ("active") or stopped ("inactive") through systemd */
	WRITE_MASK,         /* a hex CPU mask file: proc/irq/default_smp_affinity, the workqueue cpumask */
	WRITE_IRQ,          /* proc/irq/N/smp_affinity_list: best effort, an IRQ may refuse or go */
	WRITE_IRQBALANCE,   /* "settings cpus LIST" to irqbalance's socket run/irqbalance/irqbalance<PID>.sock */
	_WRITE_KIND_MAX,
	_WRITE_KIND_INVALID = -EINVAL,
} WriteKind;

typedef struct ChangeRecord {
	SettingId setting;
	WriteKind kind;
	char *path;       /* relative to the root: "proc/sys/kernel/sched_smt_buddy_assist" */
	char *old;        /* original content (what revert writes back); NULL: did not exist */
	char *new;        /* what we wrote */
	char *why;        /* "FILE:LINE" or derivation of the latest write */
	const char *prev; /* for the changed hook only: the value this change replaced */
	bool done;        /* written and read back */
	bool restored;    /* the original written back by the apply running now: out of the record file,
			   * dropped when that apply succeeds, ours again if it fails */
} ChangeRecord;

/* I/O the applier uses; tests replace it to inject faults. */
typedef struct ApplierIo {
	int (*read)(void *userdata, int root_fd, const char *path, char **ret);
	int (*write)(void *userdata, int root_fd, const char *path, const char *value);
	int (*mkdir)(void *userdata, int root_fd, const char *path);
	int (*remove)(void *userdata, int root_fd, const char *path, bool dir);
	void *userdata;
	/* Create a file of our own (bootloader drop-in); NULL: the default. */
	int (*create)(void *userdata, int root_fd, const char *path, const char *value);
	/*
	 * Tell irqbalance at socket @path which CPUs to ban ("" none: "settings
	 * cpus NULL"); NULL: the default, applier_irqbalance_send().
	 */
	int (*irqbalance)(void *userdata, int root_fd, const char *path, const char *cpus);
} ApplierIo;

typedef struct ApplierHooks {
	/*
	 * Set AllowedCPUs= of the isolation slice through systemd (runtime
	 * property). NULL: the applier creates the cgroup and writes
	 * cpuset.cpus itself (no systemd, tests).
	 */
	int (*set_allowed_cpus)(void *userdata, const char *unit, const char *cpulist);
	/*
	 * Start (@active) or stop the slice unit through systemd. systemd makes
	 * a slice's cgroup only while the slice is active; the applier then
	 * waits for the cgroup to appear (or go) itself. Set together with
	 * set_allowed_cpus.
	 */
	int (*set_unit_active)(void *userdata, const char *unit, bool active);
	/*
	 * The unit's ActiveState as systemd reports it. Not the cgroup's
	 * existence: systemd realises a slice's cgroup when one of its
	 * properties is set, active or not (bus_slice_commit_properties()).
	 */
	int (*get_unit_state)(void *userdata, const char *unit, char **ret);
	/* One call per change made or undone, for the journal. */
	void (*changed)(void *userdata, const ChangeRecord *c, bool revert);
	void *userdata;
} ApplierHooks;

typedef struct Applier {
	int root_fd;
	ApplierIo io;
	ApplierHooks hooks;
	bool manage_bootloader;
	unsigned unit_wait_ms;  /* how long systemd may take to realise or remove the slice's cgroup */
	ChangeRecord *changes;
	size_t n_changes;
	char *error;           /* last failure, "PATH: message" */
	/*
	 * The IRQ pass of the last apply (housekeeping = irqs): the IRQs whose
	 * affinity the kernel refused to change (managed and per-CPU IRQs say
	 * EIO), in order, with the error; how many moved, and how many went
	 * away meanwhile.
	 */
	unsigned *irqs_refused;
	int *irqs_refused_error;
	size_t n_irqs_refused;
	unsigned irqs_moved, irqs_gone;
	/*
	 * The IRQs proc/irq had at the last IRQ pass, sorted; NULL before the
	 * first pass of this process. An IRQ not among them appeared since:
	 * applier_irqs_appeared() finds them, revert names them.
	 */
	unsigned *irqs_seen;
	size_t n_irqs_seen;
	char *irqbalance_path;  /* the socket the last apply told, "run/irqbalance/irqbalance<PID>.sock" */
	/*
	 * Where writes to proc/irq go: a bind mount of procfs's /proc/irq
	 * (the unit's BindPaths=/proc/irq:/run/topotune/irq, as its sandbox
	 * keeps /proc/irq itself read-only); NULL: proc/irq. Records, reads
	 * and messages keep the proc/irq paths.
	 */
	char *irq_dir;
} Applier;

/* One drifted value; a setting of several files (housekeeping) has one per file, the path in both texts. */
typedef struct Mismatch {
	SettingId setting;
	char *want, *got;
	bool new_irq;   /* an IRQ that appeared since the last IRQ pass: not moved yet, no drift */
} Mismatch;

const char *write_kind_to_string(WriteKind k) _const_;
WriteKind write_kind_from_string(const char *s) _pure_;

#define ISOLATION_SLICE "topotune.slice"
#define STATE_DIR "run/topotune"
#define STATE_FILE "run/topotune/state"
/* The unit binds /proc/irq here (units/topotuned.service). */
#define IRQ_BIND_DIR STATE_DIR "/irq"
/*
 * A record topotune writes is a line per file it changed, a few KiB; one
 * larger than this is set aside whole, unread.
 */
#define STATE_FILE_MAX (1024U * 1024U)
/* What StateReasons carries of a recovery's problems (the file aside has them all). */
#define RECOVERY_PROBLEMS_MAX 16U
/* The highest relax level a boot loader request may carry (as the settings table allows). */
#define BOOT_RELAX_LEVEL_MAX 15

int applier_new(int root_fd, const ApplierIo *io, const ApplierHooks *hooks, Applier **ret);
/*
 * Write proc/irq through @dir (below the root) when it is a procfs
 * directory with default_smp_affinity in it: 1 when it is used, 0 when it
 * is absent or is something else (the writes go to proc/irq), < 0 on errors.
 */
int applier_set_irq_dir(Applier *a, const char *dir);
Applier *applier_free(Applier *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(Applier *, applier_free);

/* Default I/O: the fileio helpers. */
extern const ApplierIo applier_io_default;

/*
 * Bring the system to @plan: set what it sets, restore what we changed
 * earlier and the plan no longer wants. All or nothing: on failure every
 * write of this call is undone and a->error says why. Returns the number of
 * writes made (>= 0) or -errno.
 */
int applier_apply(Applier *a, const Plan *plan);

/*
 * The same, leaving the settings in @skip_mask (bits 1 << SettingId) alone:
 * neither written nor restored. For a daemon that backs off one setting
 * another writer keeps changing while it keeps the others in shape.
 */
int applier_apply_masked(Applier *a, const Plan *plan, unsigned skip_mask);

/*
 * The IRQ pass alone, for IRQs that appeared since the last apply (a
 * driver bound to a device allocated them): every IRQ in proc/irq keeps
 * off @plan's isolated CPUs where the kernel lets it, each write through
 * the record as in an apply; nothing else is written, and IRQs that refuse
 * are reported, not a failure. 0 when @plan keeps no IRQs off the isolated
 * CPUs. Returns the number of IRQs written, or -errno (a->error says why;
 * what was written stays recorded for revert).
 */
int applier_apply_irqs(Applier *a, const Plan *plan);

/*
 * 1 when proc/irq has an IRQ the last IRQ pass did not see, 0 when not or
 * when no pass ran yet, -errno when proc/irq cannot be read.
 */
int applier_irqs_appeared(Applier *a);

/*
 * Restore every recorded change in reverse order; drop the record. IRQs
 * that appeared after the last IRQ pass were never written: they are left
 * as they are, and the log says which.
 */
int applier_revert(Applier *a);

/*
 * Load a record a previous run left behind (crash): returns its number of
 * changes; -EBADMSG (and a->error with FILE:LINE) for a line that is
 * malformed or names a write the planner never makes.
 */
int applier_load_state(Applier *a);

typedef struct Recovery {
	unsigned found;     /* change lines in the record */
	unsigned restored;  /* of those, put back */
	char **problems;    /* one line each: a line refused, a restore that failed; at most
			     * RECOVERY_PROBLEMS_MAX, then one "... and N more" */
	unsigned n_problems; /* all of them, counted */
	char *aside;        /* where the rest went: "/run/topotune/state.failed-<time>", or NULL */
} Recovery;

/*
 * Crash recovery: restore every change of the record that passes the
 * planner's allow-list (paths and values topotune writes), and keep the
 * rest -- lines refused, untouched, and changes that could not be put back
 * -- in run/topotune/state.failed-<time>. The record is gone afterwards
 * either way, so the next start does not trip over it again. Fails only
 * for lack of memory: what went wrong with the record is in @ret.
 */
int applier_recover(Applier *a, Recovery *ret);
void recovery_done(Recovery *rec);

/* Compare the kernel's state with @plan's desired values. */
int applier_verify(Applier *a, const Plan *plan, Mismatch **ret, size_t *ret_n);
void mismatches_free(Mismatch *m, size_t n);

/* Current value of a setting as text, through its control (for Settings). */
int applier_read_actual(Applier *a, const PlanStep *step, char **ret);

/*
 * Send "settings cpus LIST" (or "settings cpus NULL" for "") to the
 * irqbalance socket @path below @root_fd, as irqbalance 1.9's socket
 * (Debian 12) reads it. -ENOENT/-ECONNREFUSED: irqbalance is not there.
 */
int applier_irqbalance_send(int root_fd, const char *path, const char *cpus);

/* Escape/unescape one value for the record file (exported for tests). */
char *state_escape(const char *s);
int state_unescape(const char *s, char **ret);
