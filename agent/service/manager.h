/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "applier.h"
#include "choice.h"
#include "counters.h"
#include "diagnose.h"
#include "domains-live.h"
#include "planner.h"
#include "procevents.h"
#include "session.h"
#include "uevents.h"
#include "workload.h"

/*
 * The daemon's state, all of it: what was discovered, what is wanted, what
 * was done, and the loop and bus that serve it. One Manager per process.
 */

/* Journal message ids (see units/topotune.catalog). */
#define TOPOTUNE_MESSAGE_CHANGE "01961099a93344438c354e25c11845f3"
#define TOPOTUNE_MESSAGE_DRIFT "1b51a365a36b4d519b519f62b9905350"
#define TOPOTUNE_MESSAGE_RECOVERED "5ddf9cf514b44b72976487d0455d8593"

#define TOPOTUNE_BUS_NAME "org.topotune1"
#define TOPOTUNE_BUS_PATH "/org/topotune1"
#define TOPOTUNE_BUS_INTERFACE "org.topotune1.Manager"

#define BUS_ERROR_NO_SUCH_PROFILE "org.topotune1.Error.NoSuchProfile"
#define BUS_ERROR_INVALID_PROFILE "org.topotune1.Error.InvalidProfile"
#define BUS_ERROR_UNSUPPORTED "org.topotune1.Error.Unsupported"
#define BUS_ERROR_BUSY "org.topotune1.Error.Busy"
/* topotune.conf, a drop-in or a hardware rule does not load (FILE:LINE in the message). */
#define BUS_ERROR_INVALID_CONFIGURATION "org.topotune1.Error.InvalidConfiguration"

/*
 * The drop-in of SetProfilePersistent() (topotunectl set-profile
 * --persistent), below the configuration root; AutoProfile() removes it.
 * "99-" so that it is read last and wins over the other drop-ins.
 */
#define MANAGER_PROFILE_DROPIN_DIR "etc/topotune/topotune.conf.d"
#define MANAGER_PROFILE_DROPIN MANAGER_PROFILE_DROPIN_DIR "/99-set-profile.conf"

#define MANAGER_POLL_USEC_DEFAULT (5 * 1000000ULL)

typedef enum ManagerState {
	MANAGER_APPLIED,
	MANAGER_DEGRADED,
	MANAGER_PENDING_REBOOT,
	MANAGER_FAILED,
	MANAGER_OFF,
	_MANAGER_STATE_MAX,
	_MANAGER_STATE_INVALID = -EINVAL,
} ManagerState;

typedef struct AuthQuery AuthQuery;

/* The properties manager_emit_changed() announces (manager-bus.c). */
#define MANAGER_CHANGED_PROPERTIES_MAX 13

typedef struct Manager {
	/*
	 * Bumped whenever the plan or the live layout is replaced: DomainLayout
	 * (costly to render on large machines) is announced only when it moved.
	 */
	unsigned layout_generation, layout_emitted;
	/* Each announced property as last sent: PropertiesChanged carries only what differs. */
	char *emitted[MANAGER_CHANGED_PROPERTIES_MAX];

	/* options */
	char *root;
	char *config_root;           /* --config-root: etc/ and usr/lib/ from here; NULL: root */
	char *bus_address;
	bool use_systemd;
	uint64_t poll_usec;          /* fallback polling when kernel events are unavailable */

	sd_event *event;
	sd_bus *bus;
	sd_event_source *verify_timer;
	sd_event_source *metrics_timer;
	char *metrics_written;       /* the textfile written last, removed at stop or when unset */
	bool metrics_failed;         /* the last write failed: logged once, not at every interval */
	CounterHistory counters;     /* schedstat counts of domains rebuilt since: _total never goes down */

	Session session;             /* root fds, identity, topology, kernel, configuration */

	/*
	 * Which profile, and why. HoldProfile(): at most one hold, above every
	 * other choice until ReleaseProfile(), Revert(), or its holder leaving
	 * the bus (@hold_track). Never persisted: a restart forgets it, and the
	 * configured profile is applied. SetProfile() lasts until reload or
	 * restart.
	 */
	ProfileChoice choice;
	sd_bus_track *hold_track;

	Profile *profile;
	ProfileSettings settings;
	Plan *plan;
	Applier *applier;
	/*
	 * The layout the kernel holds now: @live as it reports it, else
	 * @predicted from the relax level and the isolated CPUs it holds now,
	 * never the plan's (a restore, a revert, a recovery, a repair, another
	 * writer or a hotplug changes them since). manager_refresh_layout()
	 * reads both again when @layout_fingerprint (those values, the online
	 * CPUs, /proc/schedstat's domain lines) moved, at most once per turn
	 * of the event loop unless something we did invalidated it, and only
	 * when a reader asks: nothing before READY=1 or in a switch renders it.
	 * When the kernel holds what the plan asked for, on the topology the
	 * plan saw (@topology_generation), the plan's own prediction is taken.
	 */
	LiveLayout *live;
	DomainLayout *predicted;     /* NULL: no plan (nothing to predict from), or it failed */
	CpuSet kernel_isolated;      /* the isolated CPUs the kernel holds, as Settings reads them */
	bool kernel_isolated_known;
	char *layout_fingerprint;
	uint64_t layout_iteration;
	unsigned topology_generation, plan_topology_generation;
	/* The discovery's kernel probe still holds: nothing wrote the kernel since (the first plan's "from"). */
	bool caps_fresh;

	ManagerState state;
	char *apply_error;           /* last failed apply, "PATH: message" */
	char *plan_error;            /* the profile selected at start does not load */
	char *reload_error;          /* the last reload failed: the previous configuration stays */
	char *drift_seen[_SETTING_MAX];  /* value last reported as drift: Drift once per change */
	char *recovered;             /* what was restored from a crash record */
	char **recovery_problems;    /* what of it was not: StateReasons, State degraded */
	unsigned reapplied;          /* bit per SettingId: re-applied after the last drift */
	unsigned backed_off;         /* bit per SettingId: another writer owns it */
	char *backoff_reason[_SETTING_MAX];
	uint64_t drift_count[_SETTING_MAX];   /* Drift signals sent, for metrics */
	uint64_t repair_count[_SETTING_MAX];  /* values re-applied after a drift */

	const char *change_source;   /* why the current apply/revert runs (journal SOURCE=) */
	const Plan *applying_plan;   /* the plan applier_apply() is executing, for the journal */

	/* Mutating calls waiting for polkit (polkit.c). */
	AuthQuery *auth_queries;
	unsigned n_auth_queries;
	bool applying;
	bool reload_pending;          /* the next switch_and_reply() completes a reload */

	/* manager-events.c: workload rules and CPU hotplug */
	WorkloadTracker *workload;
	uint64_t workload_hold_usec;
	bool listening;              /* manager_listen() ran: kernel event sources wanted */
	char *proc_note;             /* process events not followed, why: State degraded */
	char *uevent_note;           /* CPU hotplug uevents not followed, why: State degraded */
	unsigned proc_overruns, uevent_overruns;   /* -ENOBUFS seen; logged the first time only */
	ProcEvents *procevents;
	UEvents *uevents;
	Debouncer hotplug;
	CpuSet online_polled;        /* cpu/online as the polling fallback last read it */
	/*
	 * New IRQs while isolated CPUs are kept quiet: a driver bound (uevent),
	 * or the poll found IRQs the last pass did not see. One IRQ pass per
	 * burst (@irq_fed: each IrqSource since the last pass, bit 1 << source,
	 * all named in the journal).
	 */
	Debouncer irqs_new;
	unsigned irq_fed;
	sd_event_source *irq_timer;
	sd_event_source *proc_io, *uevent_io, *workload_timer, *hotplug_timer;
	sd_event_source *workload_poll, *hotplug_poll;
	sd_event_source *irq_poll;   /* live: new IRQs without a uevent (link up) */

	/* manager-diagnose.c: the Diagnose() call sampling now, and what the last one found */
	sd_bus_message *diagnose_call;
	DiagnoseSampler *diagnose_sampler;
	DiagnoseRequest diagnose_req;
	sd_event_source *diagnose_timer;
	uint64_t diagnose_end;
	bool diagnosis_done;
	bool diagnosis_checked[_DIAGNOSE_KIND_MAX];
	unsigned diagnosis_findings[_DIAGNOSE_KIND_MAX];
} Manager;

const char *manager_state_to_string(ManagerState s) _const_;
ManagerState manager_state_from_string(const char *s) _pure_;

Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);
int manager_new(Manager **ret);

int manager_discover(Manager *m);
int manager_load_config(Manager *m, char **ret_error);
/*
 * Compute the plan of profile @name (NULL: the selected one) on freshly
 * probed kernel state. -ENOENT: no such profile; -EBADMSG/-EINVAL: the
 * profile does not load (@ret_error says FILE:LINE).
 */
int manager_compute(Manager *m, const char *name, Profile **ret_profile, ProfileSettings *ret_settings,
		    Plan **ret_plan, char **ret_error);
/* What in @plan that @profile explicitly asks for cannot be done; NULL if all can. */
char *manager_unsupported(const Manager *m, const Plan *plan);
/* Apply the plan of @name (NULL: selected); takes effect only on success. */
int manager_switch(Manager *m, const char *name, const char *source, char **ret_error);
/*
 * manager_switch() with what manager_compute() gave for @name (consumed,
 * whatever the outcome): a caller that validated by computing applies that
 * plan rather than computing it again.
 */
int manager_switch_computed(Manager *m, const char *name, const char *source, Profile *profile,
			    ProfileSettings *computed, Plan *computed_plan, char **ret_error);
int manager_revert(Manager *m, const char *source);
/* Forget the hold (no journal, no apply): its fields freed, its tracking ended. */
void manager_hold_clear(Manager *m);
/*
 * End the hold (@why for the journal and ProfileReleased) and, unless
 * everything was reverted, apply what would be chosen without it.
 */
int manager_release_hold(Manager *m, const char *why);
int manager_recover(Manager *m);
void manager_verify_now(Manager *m);
int manager_arm_verify_timer(Manager *m);

/* manager-metrics.c: the Prometheus text of Metrics() and the textfile. */
int manager_metrics(Manager *m, char **ret);
/* Write [daemon] metrics_textfile now (removing one no longer configured); logs failures. */
void manager_metrics_write(Manager *m);
/*
 * (Re-)arm the textfile timer from the configuration: in metrics_interval,
 * or with @now at the next turn of the event loop (after a reload's apply);
 * off, and a textfile written earlier removed, when none is set.
 */
int manager_arm_metrics_timer(Manager *m, bool now);
/* At stop: remove the textfile, so that no stale file describes a daemon that is gone. */
void manager_metrics_stop(Manager *m);
bool manager_reboot_required(const Manager *m);
/*
 * Re-read the configuration and apply the selected profile; a runtime
 * SetProfile() choice ends here. On failure nothing changes, and
 * StateReasons and the journal say why (FILE:LINE).
 */
int manager_reload(Manager *m, const char *source, char **ret_error);
/* Its first half: the configuration re-read, the runtime choice dropped. */
int manager_reload_config(Manager *m, const char *source, char **ret_error);
/* Record a failed reload: State degraded, StateReasons and the journal (FILE:LINE). */
void manager_reload_failed(Manager *m, int error, const char *source, const char *message);
/*
 * Write (@name) or remove (NULL) the persistent choice, MANAGER_PROFILE_DROPIN,
 * atomically; the configuration with it must load first. Does not reload.
 * -EBADMSG: the configuration would not load (FILE:LINE in @ret_error),
 * nothing written; else the file system's errno.
 */
int manager_persist_profile(Manager *m, const char *name, char **ret_error);
int manager_reload_topology(Manager *m);

/* manager-diagnose.c: Diagnose(u duration_ms) -> (a(ssssdasass) findings, as notes) */
int manager_method_diagnose(sd_bus_message *msg, void *userdata, sd_bus_error *error);
/* At stop: a sampling call is dropped (its caller gets no reply: the daemon leaves the bus). */
void manager_diagnose_done(Manager *m);
/* topotune_diagnosis_findings{kind} for Metrics() and the textfile. */
void manager_diagnose_metrics(Manager *m, StrBuf *b);

/* manager-events.c */
int manager_workload_setup(Manager *m);
int manager_listen(Manager *m);
void manager_irqs_catch_up(Manager *m);
void manager_irq_poll_sync(Manager *m);
void manager_events_done(Manager *m);

/* Settings, state and reasons as the bus shows them. */
void manager_update_state(Manager *m);
int manager_state_reasons(Manager *m, char ***ret);
char *manager_setting_actual(Manager *m, SettingId id);
bool manager_setting_in_sync(Manager *m, SettingId id, const char *actual);
int manager_status_text(Manager *m, char **ret);
bool manager_layout_is_live(const Manager *m);
/* Re-read the live layout and predict again if what they depend on moved (see Manager.live). */
void manager_refresh_layout(Manager *m);
/* What we did changed the kernel: the next manager_refresh_layout() reads it all again. */
void manager_invalidate_layout(Manager *m);

/* manager-bus.c */
/*
 * Serve org.topotune1 on @m->bus when the caller made the connection (tests:
 * one end of a socketpair), else on the bus at --bus-address or the system
 * bus; attach it to @m->event.
 */
int manager_connect_bus(Manager *m);
/* PropertiesChanged with the properties whose value differs from the one last sent (or noted). */
void manager_emit_changed(Manager *m);
/* The values as they are now count as sent: at start, where clients read them with Get. */
void manager_note_properties(Manager *m);
void manager_emit_drift(Manager *m, const char *setting, const char *want, const char *got);
void manager_emit_applied(Manager *m, unsigned changes);
void manager_emit_profile_released(Manager *m, uint32_t cookie, const char *why);
void manager_emit_topology(Manager *m);
int manager_set_allowed_cpus(void *userdata, const char *unit, const char *cpulist);
int manager_set_unit_active(void *userdata, const char *unit, bool active);
int manager_get_unit_state(void *userdata, const char *unit, char **ret);

/* Run a mutating method again once polkit has answered; replies on failure. */
int manager_redispatch(Manager *m, sd_bus_message *msg);

/* polkit.c: > 0 allowed, 0 pending (the method is dispatched again), < 0 denied (@error set). */
int bus_verify_polkit_async(Manager *m, sd_bus_message *msg, bool interactive, sd_bus_error *error);
void manager_auth_cancel(Manager *m);
