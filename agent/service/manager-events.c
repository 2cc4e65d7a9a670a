/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel events topotuned reacts to (DESIGN §3): exec/exit of
 * processes that match a profile's [workload] rule switch the profile
 * (proc connector), and CPU hotplug re-reads the topology and re-plans
 * (kobject uevents, debounced). Both listeners exist only on the live
 * system; the workload tracker also rescans the root's proc/ at start and
 * on reload, which is what a sysroot test sees. Depends on netlink.
 */
#include <sys/epoll.h>

#include "log.h"
#include "manager.h"
#include "procevents.h"
#include "strutil.h"
#include "uevents.h"
#include "workload.h"

#define HOTPLUG_QUIET_USEC (500 * 1000ULL)
#define HOTPLUG_MAX_USEC (5 * 1000 * 1000ULL)

static uint64_t now_usec(Manager *m)
{
	uint64_t t = 0;

	(void)sd_event_now(m->event, CLOCK_MONOTONIC, &t);
	return t;
}

void manager_events_done(Manager *m)
{
	m->proc_io = sd_event_source_disable_unref(m->proc_io);
	m->uevent_io = sd_event_source_disable_unref(m->uevent_io);
	m->workload_timer = sd_event_source_disable_unref(m->workload_timer);
	m->hotplug_timer = sd_event_source_disable_unref(m->hotplug_timer);
	m->procevents = procevents_free(m->procevents);
	m->uevents = uevents_free(m->uevents);
	m->workload = workload_tracker_free(m->workload);
	free(m->workload_profile);
	free(m->workload_rule);
	free(m->workload_note);
}

/* --- workload rules ------------------------------------------------------------ */

static int on_workload_timer(sd_event_source *s, uint64_t usec, void *userdata);

static void arm_workload_timer(Manager *m, uint64_t next)
{
	if (next == WORKLOAD_NEVER) {
		if (m->workload_timer)
			(void)sd_event_source_set_enabled(m->workload_timer, SD_EVENT_OFF);
		return;
	}
	if (!m->workload_timer) {
		if (sd_event_add_time(m->event, &m->workload_timer, CLOCK_MONOTONIC, next, 0, on_workload_timer, m) < 0)
			log_warning("Failed to arm the workload hold-down timer, ignoring.");
		return;
	}
	(void)sd_event_source_set_time(m->workload_timer, next);
	(void)sd_event_source_set_enabled(m->workload_timer, SD_EVENT_ONESHOT);
}

/* Take the tracker's decision; returns true when the wanted profile changed. */
static bool workload_decide(Manager *m)
{
	WorkloadDecision d;
	bool changed;
	int r;

	if (!m->workload)
		return false;
	r = workload_tracker_evaluate(m->workload, now_usec(m), &d);
	arm_workload_timer(m, d.next_usec);
	changed = r > 0 || !streq_ptr(d.profile, m->workload_profile);
	if (!changed)
		return false;
	free(m->workload_profile);
	free(m->workload_rule);
	m->workload_profile = d.profile ? strdup(d.profile) : NULL;
	m->workload_rule = d.rule_text ? strdup(d.rule_text) : NULL;
	if (d.profile)
		log_info("Workload rule %s has running processes: profile %s wanted.", strna(d.rule_text), d.profile);
	else
		log_info("No workload rule has running processes: the configured profile is wanted again.");
	return true;
}

/* Apply what the workload decision wants, unless SetProfile() chose explicitly. */
static void workload_switch(Manager *m)
{
	_cleanup_free_ char *source = NULL, *err = NULL;
	int r;

	if (m->profile_override || m->state == MANAGER_OFF)
		return;
	source = m->workload_rule ? strprintf("workload rule %s", m->workload_rule)
				  : strdup("workload ended: configured profile");
	r = manager_switch(m, NULL, source ?: "workload", &err);
	if (r < 0)
		log_error_errno(r, "Switching for a workload failed: %s", err ?: strerror(-r));
	else
		manager_emit_applied(m, (unsigned)r);
	manager_emit_changed(m);
}

static int on_workload_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	Manager *m = userdata;

	if (workload_decide(m))
		workload_switch(m);
	return 0;
}

int manager_workload_setup(Manager *m)
{
	_cleanup_(workload_matcher_freep) WorkloadMatcher *matcher = NULL;
	_cleanup_free_ char *err = NULL;
	ProfileInfo *list = NULL;
	size_t n = 0;
	int r;

	r = workload_matcher_new(&matcher);
	if (r < 0)
		return r;
	r = profile_list(m->root_fd, &list, &n, &err);
	if (r < 0)
		return log_warning_errno(r, "Workload rules not loaded: %s", err ?: strerror(-r));
	for (size_t i = 0; i < n; i++) {
		_cleanup_(profile_freep) Profile *p = NULL;
		_cleanup_free_ char *perr = NULL;

		/* A broken profile is reported when it is selected; here it has no rules. */
		if (profile_load(m->root_fd, list[i].name, &p, &perr) < 0)
			continue;
		r = workload_matcher_add_profile(matcher, p);
		if (r < 0)
			log_warning_errno(r, "%s: bad [workload] rule, ignoring: %m", strna(p->path));
	}
	profile_info_array_free(list, n);

	m->workload = workload_tracker_free(m->workload);
	if (matcher->n_rules == 0)
		return 0;
	r = workload_tracker_new(TAKE_PTR(matcher), m->workload_hold_usec, &m->workload);
	if (r < 0)
		return r;
	r = workload_tracker_rescan(m->workload, m->root_fd, now_usec(m));
	if (r < 0)
		log_warning_errno(r, "Scanning /proc for workloads failed, ignoring: %m");
	(void)workload_decide(m);
	return (int)workload_tracker_matcher(m->workload)->n_rules;
}

static int on_procevent(ProcEvents *pe, const ProcEvent *ev, void *userdata)
{
	Manager *m = userdata;
	int r;

	if (!m->workload)
		return 0;
	r = workload_tracker_handle_event(m->workload, m->root_fd, ev, now_usec(m));
	if (r < 0)
		log_debug_errno(r, "Process %d: %m", (int)ev->pid);
	return 0;
}

static int on_proc_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Manager *m = userdata;
	int r;

	r = procevents_process(m->procevents);
	if (r == -ENOBUFS && m->workload) {
		log_notice("Process events were lost; rescanning /proc.");
		(void)workload_tracker_rescan(m->workload, m->root_fd, now_usec(m));
	} else if (r < 0 && r != -EAGAIN)
		log_warning_errno(r, "Process events: %s, ignoring.", strna(procevents_error(m->procevents)));
	if (workload_decide(m))
		workload_switch(m);
	return 0;
}

/* --- CPU hotplug ------------------------------------------------------------------- */

static int on_hotplug_timer(sd_event_source *s, uint64_t usec, void *userdata);

static void arm_hotplug_timer(Manager *m)
{
	uint64_t next = debouncer_next(&m->hotplug);

	if (next == DEBOUNCE_NEVER)
		return;
	if (!m->hotplug_timer) {
		if (sd_event_add_time(m->event, &m->hotplug_timer, CLOCK_MONOTONIC, next, 0, on_hotplug_timer, m) < 0)
			log_warning("Failed to arm the hotplug timer, ignoring.");
		return;
	}
	(void)sd_event_source_set_time(m->hotplug_timer, next);
	(void)sd_event_source_set_enabled(m->hotplug_timer, SD_EVENT_ONESHOT);
}

static int on_hotplug_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	Manager *m = userdata;
	_cleanup_free_ char *err = NULL;
	int r;

	if (!debouncer_fire(&m->hotplug, now_usec(m))) {
		arm_hotplug_timer(m);
		return 0;
	}
	log_info("CPU hotplug: re-reading the topology and re-planning.");
	r = manager_reload_topology(m);
	if (r < 0) {
		log_error_errno(r, "Re-reading the topology failed, keeping the old one: %m");
		return 0;
	}
	if (m->state == MANAGER_OFF)
		return 0;
	r = manager_switch(m, NULL, "CPU hotplug", &err);
	if (r < 0)
		log_error_errno(r, "Re-planning after CPU hotplug failed: %s", err ?: strerror(-r));
	else
		manager_emit_applied(m, (unsigned)r);
	manager_emit_changed(m);
	return 0;
}

static int on_uevent(UEvents *ue, const UEvent *ev, void *userdata)
{
	Manager *m = userdata;

	log_debug("uevent %s %s", uevent_action_to_string(ev->action), strna(ev->devpath));
	debouncer_feed(&m->hotplug, now_usec(m));
	return 0;
}

static int on_uevent_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Manager *m = userdata;
	int r;

	r = uevents_process(m->uevents);
	if (r == -ENOBUFS)
		debouncer_feed(&m->hotplug, now_usec(m));   /* lost some: re-plan anyway */
	else if (r < 0 && r != -EAGAIN)
		log_warning_errno(r, "uevents: %s, ignoring.", strna(uevents_error(m->uevents)));
	arm_hotplug_timer(m);
	return 0;
}

int manager_listen(Manager *m)
{
	_cleanup_free_ char *err = NULL;
	int r;

	debouncer_init(&m->hotplug, HOTPLUG_QUIET_USEC, HOTPLUG_MAX_USEC);
	if (!streq(m->root, "/"))
		return 0;   /* a sysroot has no kernel behind it */

	r = uevents_new(on_uevent, m, &m->uevents, &err);
	if (r >= 0)
		r = sd_event_add_io(m->event, &m->uevent_io, uevents_get_fd(m->uevents), EPOLLIN, on_uevent_io, m);
	if (r < 0)
		log_warning_errno(r, "CPU hotplug is not followed: %s", err ?: strerror(-r));

	if (!m->workload)
		return 0;
	free(err);
	err = NULL;
	r = procevents_new(on_procevent, m, &m->procevents, &err);
	if (r >= 0)
		r = sd_event_add_io(m->event, &m->proc_io, procevents_get_fd(m->procevents), EPOLLIN, on_proc_io, m);
	if (r < 0) {
		free(m->workload_note);
		m->workload_note = strprintf("workload rules: only checked at start and reload (%s)",
					     err ?: strerror(-r));
		log_warning("Process events unavailable: %s", err ?: strerror(-r));
		return 0;
	}
	/* Events before the connector's ack were missed: look once more. */
	(void)workload_tracker_rescan(m->workload, m->root_fd, now_usec(m));
	if (workload_decide(m))
		workload_switch(m);
	return 0;
}
