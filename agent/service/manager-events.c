/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel events topotuned reacts to (DESIGN §3): exec/exit of
 * processes that match a profile's [workload] rule switch the profile
 * (proc connector), CPU hotplug re-reads the topology and re-plans
 * (kobject uevents, debounced), and a driver bound to a device runs the
 * IRQ pass again while the plan keeps IRQs off the isolated CPUs: the IRQs
 * its probe allocated move too (kobject uevents, debounced; issue 30).
 * An IRQ requested without a bind (a NIC's queues at link up) is found by
 * listing proc/irq every poll interval, and by verification before it
 * compares. Both listeners exist only on the live
 * system. Where one cannot be had (refused, or failed for good) the daemon
 * says so once, reports State degraded with the reason, and polls instead:
 * a rescan of proc/, a read of cpu/online and a listing of proc/irq every
 * poll interval. A sysroot
 * has no kernel behind it and is polled the same way, without the
 * degradation. A receive-queue overrun (ENOBUFS) is not a failure: it
 * costs a rescan. Depends on netlink.
 */
#include <sys/epoll.h>

#include "fileio.h"
#include "irq-sources.h"
#include "log.h"
#include "manager.h"
#include "procevents.h"
#include "strutil.h"
#include "uevents.h"
#include "workload.h"

#define HOTPLUG_QUIET_USEC (500 * 1000ULL)
#define HOTPLUG_MAX_USEC (5 * 1000 * 1000ULL)
/* A device's binds come within a few ms of each other: its probe is over at the last. */
#define IRQS_NEW_QUIET_USEC (250 * 1000ULL)
#define IRQS_NEW_MAX_USEC (2 * 1000 * 1000ULL)

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
	m->irq_timer = sd_event_source_disable_unref(m->irq_timer);
	m->workload_poll = sd_event_source_disable_unref(m->workload_poll);
	m->hotplug_poll = sd_event_source_disable_unref(m->hotplug_poll);
	m->irq_poll = sd_event_source_disable_unref(m->irq_poll);
	m->procevents = procevents_free(m->procevents);
	m->uevents = uevents_free(m->uevents);
	m->workload = workload_tracker_free(m->workload);
	cpuset_done(&m->online_polled);
	(void)choice_set_workload(&m->choice, NULL, NULL);
	free(m->proc_note);
	free(m->uevent_note);
}

static bool is_live(const Manager *m)
{
	return streq(m->root, "/");
}

/* Socket errors worth another try; anything else means the source is gone. */
static bool event_error_is_transient(int r)
{
	return r == -EAGAIN || r == -EINTR || r == -ENOMEM || r == -EMSGSIZE || r == -EBADMSG;
}

/* A timer every poll interval: @src is created once; the callback re-arms it with poll_rearm(). */
static int poll_start(Manager *m, sd_event_source **src, sd_event_time_handler_t cb)
{
	int r;

	if (!*src) {
		r = sd_event_add_time_relative(m->event, src, CLOCK_MONOTONIC, m->poll_usec, 0, cb, m);
		if (r < 0)
			return log_error_errno(r, "Failed to add a polling timer: %m");
		return 0;
	}
	r = sd_event_source_set_time_relative(*src, m->poll_usec);
	if (r >= 0)
		r = sd_event_source_set_enabled(*src, SD_EVENT_ONESHOT);
	return r;
}

static void poll_rearm(Manager *m, sd_event_source *s)
{
	if (sd_event_source_set_time_relative(s, m->poll_usec) < 0 ||
	    sd_event_source_set_enabled(s, SD_EVENT_ONESHOT) < 0)
		log_warning("Failed to re-arm a polling timer: polling stops.");
}

static unsigned poll_sec(const Manager *m)
{
	return (unsigned)(m->poll_usec / 1000000ULL);
}

/* Record why a kernel event source is not followed, once, and show it on the bus. */
static void note_degraded(Manager *m, char **note, char *text)
{
	if (!text)
		return (void)log_oom();
	if (streq_ptr(*note, text)) {
		free(text);
		return;
	}
	free(*note);
	*note = text;
	log_warning("%s", text);
	manager_update_state(m);
	manager_emit_changed(m);
}

static void note_clear(Manager *m, char **note)
{
	if (!*note)
		return;
	free(*note);
	*note = NULL;
	manager_update_state(m);
	manager_emit_changed(m);
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
	changed = r > 0 || !streq_ptr(d.profile, m->choice.workload);
	if (!changed)
		return false;
	if (choice_set_workload(&m->choice, d.profile, d.rule_text) < 0)
		(void)choice_set_workload(&m->choice, NULL, NULL);
	if (d.profile)
		log_info("Workload rule %s has running processes: profile %s wanted.", strna(d.rule_text), d.profile);
	else
		log_info("No workload rule has running processes: the configured profile is wanted again.");
	return true;
}

/* Apply what the workload decision wants, unless a hold or SetProfile() chose explicitly. */
static void workload_switch(Manager *m)
{
	_cleanup_free_ char *source = NULL, *err = NULL;
	int r;

	if (choice_is_explicit(&m->choice) || m->state == MANAGER_OFF) {
		manager_emit_changed(m);   /* StateReasons names the rule all the same */
		return;
	}
	source = m->choice.workload_rule ? strprintf("workload rule %s", m->choice.workload_rule)
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

static void workload_listen(Manager *m);

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
	r = profile_list(m->session.config_fd, &list, &n, &err);
	if (r < 0)
		return log_warning_errno(r, "Workload rules not loaded: %s", err ?: strerror(-r));
	for (size_t i = 0; i < n; i++) {
		_cleanup_(profile_freep) Profile *p = NULL;
		_cleanup_free_ char *perr = NULL;

		/* A broken profile is reported when it is selected; here it has no rules. */
		if (profile_load(m->session.config_fd, list[i].name, &p, &perr) < 0)
			continue;
		r = workload_matcher_add_profile(matcher, p);
		if (r < 0)
			log_warning_errno(r, "%s: bad [workload] rule, ignoring: %m", strna(p->path));
	}
	profile_info_array_free(list, n);

	m->workload = workload_tracker_free(m->workload);
	if (matcher->n_rules == 0) {
		/* Nothing to follow: whatever a rule wanted is over, the listener too. */
		(void)workload_decide(m);
		(void)choice_set_workload(&m->choice, NULL, NULL);
		workload_listen(m);
		return 0;
	}
	r = workload_tracker_new(TAKE_PTR(matcher), m->workload_hold_usec, &m->workload);
	if (r < 0)
		return r;
	r = workload_tracker_rescan(m->workload, m->session.root_fd, now_usec(m));
	if (r < 0)
		log_warning_errno(r, "Scanning /proc for workloads failed, ignoring: %m");
	(void)workload_decide(m);
	workload_listen(m);
	return (int)workload_tracker_matcher(m->workload)->n_rules;
}

static int on_procevent(ProcEvents *pe, const ProcEvent *ev, void *userdata)
{
	Manager *m = userdata;
	int r;

	if (!m->workload)
		return 0;
	r = workload_tracker_handle_event(m->workload, m->session.root_fd, ev, now_usec(m));
	if (r < 0)
		log_debug_errno(r, "Process %d: %m", (int)ev->pid);
	return 0;
}

static void workload_rescan(Manager *m)
{
	int r;

	if (!m->workload)
		return;
	r = workload_tracker_rescan(m->workload, m->session.root_fd, now_usec(m));
	if (r < 0)
		log_debug_errno(r, "Rescanning /proc for workloads failed: %m");
	if (workload_decide(m))
		workload_switch(m);
}

static int on_workload_poll(sd_event_source *s, uint64_t usec, void *userdata)
{
	Manager *m = userdata;

	workload_rescan(m);
	poll_rearm(m, s);
	return 0;
}

static void proc_give_up(Manager *m, const char *why)
{
	m->proc_io = sd_event_source_disable_unref(m->proc_io);
	m->procevents = procevents_free(m->procevents);
	if (poll_start(m, &m->workload_poll, on_workload_poll) < 0)
		note_degraded(m, &m->proc_note, strprintf("proc connector unavailable: %s; workload rules are only "
							  "checked at start and reload", why));
	else
		note_degraded(m, &m->proc_note, strprintf("proc connector unavailable: %s; rescanning /proc every %u s",
							  why, poll_sec(m)));
}

static int on_proc_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Manager *m = userdata;
	int r;

	r = procevents_process(m->procevents);
	if (r == -ENOBUFS) {
		/* The kernel dropped events: a rescan tells what runs now. Not a fault of the source. */
		if (m->proc_overruns++ == 0)
			log_notice("Process events were lost (receive queue overrun); rescanning /proc. "
				   "Further overruns are handled the same way without a message.");
		workload_rescan(m);
		return 0;
	}
	if (r < 0 && !event_error_is_transient(r)) {
		_cleanup_free_ char *why = strprintf("%s (%s)", strna(procevents_error(m->procevents)), strerror(-r));

		proc_give_up(m, why ?: strerror(-r));
		workload_rescan(m);
		return 0;
	}
	if (r < 0)
		log_debug_errno(r, "Process events: %s, ignoring.", strna(procevents_error(m->procevents)));
	if (workload_decide(m))
		workload_switch(m);
	return 0;
}

/*
 * Follow exec/exit while there are workload rules: the proc connector on
 * the live system (or polling when it cannot be had), polling on a sysroot.
 * Called at start (manager_listen()) and on every reload, whose rules may
 * have appeared or gone; a connector that failed is tried again then.
 */
static void workload_listen(Manager *m)
{
	_cleanup_free_ char *err = NULL;
	int r;

	if (!m->listening)
		return;
	if (!m->workload) {
		m->proc_io = sd_event_source_disable_unref(m->proc_io);
		m->procevents = procevents_free(m->procevents);
		if (m->workload_poll)
			(void)sd_event_source_set_enabled(m->workload_poll, SD_EVENT_OFF);
		note_clear(m, &m->proc_note);
		return;
	}
	if (m->procevents)
		return;
	if (!is_live(m)) {
		if (!m->workload_poll && poll_start(m, &m->workload_poll, on_workload_poll) >= 0)
			log_info("Sysroot %s: workload rules are checked by rescanning proc/ every %u s.", m->root,
				 poll_sec(m));
		return;
	}

	/*
	 * No rate limit: every wakeup drains the socket (procevents_process())
	 * and decides once, so a burst costs one decision and at most one
	 * switch, and the CPU spent follows the events, not a timer. A fixed
	 * window (one read per 10 ms) held back the exec a rule waits for
	 * behind any unrelated one: 12 ms at the p99 under ordinary churn.
	 */
	r = procevents_new(on_procevent, m, &m->procevents, &err);
	if (r >= 0)
		r = sd_event_add_io(m->event, &m->proc_io, procevents_get_fd(m->procevents), EPOLLIN, on_proc_io, m);
	if (r < 0) {
		_cleanup_free_ char *why = err ? strdup(err) : strprintf("%s", strerror(-r));

		proc_give_up(m, why ?: strerror(-r));
		return;
	}
	if (m->workload_poll)
		(void)sd_event_source_set_enabled(m->workload_poll, SD_EVENT_OFF);
	note_clear(m, &m->proc_note);
	log_debug("Following process events through the proc connector.");
	/* Events before the connector's ack were missed: look once more. */
	workload_rescan(m);
}

/* --- CPU hotplug ------------------------------------------------------------------- */

static int on_hotplug_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* Arm (or re-arm) the one-shot timer @src for debouncer @d's next deadline. */
static void arm_debounce_timer(Manager *m, const Debouncer *d, sd_event_source **src,
			       sd_event_time_handler_t cb, const char *what)
{
	uint64_t next = debouncer_next(d);

	if (next == DEBOUNCE_NEVER)
		return;
	if (!*src) {
		if (sd_event_add_time(m->event, src, CLOCK_MONOTONIC, next, 0, cb, m) < 0)
			log_warning("Failed to arm the %s timer, ignoring.", what);
		return;
	}
	(void)sd_event_source_set_time(*src, next);
	(void)sd_event_source_set_enabled(*src, SD_EVENT_ONESHOT);
}

static void arm_hotplug_timer(Manager *m)
{
	arm_debounce_timer(m, &m->hotplug, &m->hotplug_timer, on_hotplug_timer, "hotplug");
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
	/* What the poll compares against from now on. */
	if (cpuset_copy(&m->online_polled, &m->session.topology->online) < 0)
		log_oom();
	manager_emit_topology(m);
	if (m->state == MANAGER_OFF) {
		manager_emit_changed(m);
		return 0;
	}
	/*
	 * The plan is computed afresh on the new topology: an isolated set that
	 * lost a CPU is chosen again, or the step is refused (State degraded,
	 * with the reason), or the apply fails (State failed, with the reason).
	 */
	r = manager_switch(m, NULL, "CPU hotplug", &err);
	if (r < 0)
		log_error_errno(r, "Re-planning after CPU hotplug failed: %s", err ?: strerror(-r));
	else
		manager_emit_applied(m, (unsigned)r);
	manager_emit_changed(m);
	return 0;
}

static void hotplug_feed(Manager *m)
{
	debouncer_feed(&m->hotplug, now_usec(m));
	arm_hotplug_timer(m);
}

/* --- new IRQs ---------------------------------------------------------------------- */

static int on_irq_timer(sd_event_source *s, uint64_t usec, void *userdata);

static void arm_irq_timer(Manager *m)
{
	arm_debounce_timer(m, &m->irqs_new, &m->irq_timer, on_irq_timer, "new-IRQ");
}

/* Whether the plan in force keeps IRQs off the isolated CPUs: only then is a new IRQ ours to move. */
static bool irqs_kept_quiet(const Manager *m)
{
	const PlanStep *st;

	if (!m->plan || m->state == MANAGER_OFF || (m->backed_off & (1U << SETTING_HOUSEKEEPING)))
		return false;
	st = &m->plan->steps[SETTING_HOUSEKEEPING];
	return (st->action == STEP_SET || st->action == STEP_NONE) &&
	       (m->plan->housekeeping_parts & (1 << HOUSEKEEPING_IRQS)) && !cpuset_is_empty(&m->plan->isolated);
}

static void irqs_feed(Manager *m, unsigned sources)
{
	if (!irqs_kept_quiet(m))
		return;
	m->irq_fed |= sources;
	debouncer_feed(&m->irqs_new, now_usec(m));
	arm_irq_timer(m);
}

/* A poll's listing of proc/irq: IRQs the last pass did not see start the IRQ pass. */
static void irqs_poll(Manager *m)
{
	if (irqs_kept_quiet(m) && applier_irqs_appeared(m->applier) > 0)
		irqs_feed(m, 1U << IRQ_SOURCE_POLL);
}

/*
 * The IRQ pass alone: the IRQs that appeared since the last one keep off
 * the isolated CPUs, through the record (revert puts them back as they
 * came); nothing else of the plan is written. A CPU hotplug re-plans
 * instead, and a change of anything else is verification's.
 */
static void irq_pass(Manager *m)
{
	unsigned refused = (unsigned)m->applier->n_irqs_refused;
	char source[160];
	int r;

	irq_sources_format(m->irq_fed, source, sizeof(source));
	m->irq_fed = 0;
	m->change_source = source;
	m->applying_plan = m->plan;
	r = applier_apply_irqs(m->applier, m->plan);
	m->applying_plan = NULL;
	m->change_source = NULL;
	if (r < 0)
		log_warning_errno(r, "Moving new IRQs off the isolated CPUs failed (%s): %s", source,
				  strna(m->applier->error));
	else if (r > 0 || m->applier->n_irqs_refused != refused)
		log_info("%s: %d IRQ%s moved off the isolated CPUs; %zu keep%s their affinity (managed or per-CPU).",
			 source, r, r == 1 ? "" : "s", m->applier->n_irqs_refused,
			 m->applier->n_irqs_refused == 1 ? "s" : "");
	else
		log_debug("%s: no IRQ to move.", source);
	manager_update_state(m);
	manager_emit_changed(m);
}

static int on_irq_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	Manager *m = userdata;

	if (!debouncer_fire(&m->irqs_new, now_usec(m))) {
		arm_irq_timer(m);
		return 0;
	}
	if (!irqs_kept_quiet(m)) {
		m->irq_fed = 0;   /* no pass: what asked for it is moot */
		return 0;
	}
	if (m->applying) {
		/* An apply runs its own IRQ pass; look again once it is over. */
		irqs_feed(m, m->irq_fed);
		return 0;
	}
	irq_pass(m);
	return 0;
}

/*
 * Verification first moves the IRQs that appeared since the last pass, as
 * new IRQs: one requested without a driver's bind (a NIC's queues at link
 * up) is no drift of ours, and two of them in consecutive intervals are no
 * other writer to back off from.
 */
void manager_irqs_catch_up(Manager *m)
{
	if (!irqs_kept_quiet(m) || m->applying || applier_irqs_appeared(m->applier) <= 0)
		return;
	/* A burst under way is served here: its timer then finds nothing pending. */
	(void)debouncer_fire(&m->irqs_new, UINT64_MAX);
	m->irq_fed |= 1U << IRQ_SOURCE_VERIFY;
	irq_pass(m);
}

/*
 * Live, a driver's bind says when IRQs appear, but an IRQ requested later
 * (a NIC's queues at link up) comes without a uevent: /proc/irq is listed
 * every poll interval while IRQs are kept off the isolated CPUs, and the
 * timer is off otherwise (manager_irq_poll_sync()). Without uevents the
 * hotplug poll lists it instead.
 */
static int on_irq_poll(sd_event_source *s, uint64_t usec, void *userdata)
{
	Manager *m = userdata;

	if (!irqs_kept_quiet(m))
		return 0;   /* a oneshot timer: off until the plan keeps IRQs quiet again */
	poll_rearm(m, s);
	irqs_poll(m);
	return 0;
}

void manager_irq_poll_sync(Manager *m)
{
	int enabled = SD_EVENT_OFF;

	if (!m->listening || !is_live(m) || !m->uevents || !irqs_kept_quiet(m)) {
		if (m->irq_poll)
			(void)sd_event_source_set_enabled(m->irq_poll, SD_EVENT_OFF);
		return;
	}
	if (m->irq_poll && sd_event_source_get_enabled(m->irq_poll, &enabled) >= 0 && enabled != SD_EVENT_OFF)
		return;   /* armed: re-arming would postpone it */
	(void)poll_start(m, &m->irq_poll, on_irq_poll);
}

static int on_hotplug_poll(sd_event_source *s, uint64_t usec, void *userdata)
{
	Manager *m = userdata;
	_cleanup_free_ char *text = NULL;
	CpuSet online = {};
	int r;

	poll_rearm(m, s);
	/* No uevent tells of a driver's binds here: the IRQs the last pass did not see do. */
	irqs_poll(m);
	r = read_file_at(m->session.root_fd, "sys/devices/system/cpu/online", 4096, &text, NULL);
	if (r >= 0)
		r = cpuset_parse_list(strip_trailing(text), &online, NULL);
	if (r < 0) {
		log_debug_errno(r, "Polling /sys/devices/system/cpu/online failed: %m");
		return 0;
	}
	if (!cpuset_equal(&online, &m->online_polled)) {
		_cleanup_free_ char *l = NULL;

		(void)cpuset_format_list(&online, &l);
		log_info("CPU hotplug: online CPUs are now %s.", strna(l));
		cpuset_done(&m->online_polled);
		m->online_polled = online;
		hotplug_feed(m);
		return 0;
	}
	cpuset_done(&online);
	return 0;
}

static void uevent_give_up(Manager *m, const char *why)
{
	m->uevent_io = sd_event_source_disable_unref(m->uevent_io);
	m->uevents = uevents_free(m->uevents);
	if (poll_start(m, &m->hotplug_poll, on_hotplug_poll) < 0)
		note_degraded(m, &m->uevent_note, strprintf("uevent socket unavailable: %s; CPU hotplug is not followed",
							   why));
	else
		note_degraded(m, &m->uevent_note,
			      strprintf("uevent socket unavailable: %s; polling /sys/devices/system/cpu/online every %u s",
					why, poll_sec(m)));
}

static int on_uevent(UEvents *ue, const UEvent *ev, void *userdata)
{
	Manager *m = userdata;

	log_debug("uevent %s %s", uevent_action_to_string(ev->action), strna(ev->devpath));
	if (uevent_is_driver_bind(ev))
		irqs_feed(m, 1U << IRQ_SOURCE_BIND);
	else
		debouncer_feed(&m->hotplug, now_usec(m));
	return 0;
}

static int on_uevent_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Manager *m = userdata;
	int r;

	r = uevents_process(m->uevents);
	if (r == -ENOBUFS) {
		if (m->uevent_overruns++ == 0)
			log_notice("uevents were lost (receive queue overrun); re-planning to be sure. "
				   "Further overruns are handled the same way without a message.");
		debouncer_feed(&m->hotplug, now_usec(m));
		irqs_feed(m, 1U << IRQ_SOURCE_LOST);
	} else if (r < 0 && !event_error_is_transient(r)) {
		_cleanup_free_ char *why = strprintf("%s (%s)", strna(uevents_error(m->uevents)), strerror(-r));

		uevent_give_up(m, why ?: strerror(-r));
		debouncer_feed(&m->hotplug, now_usec(m));   /* what changed meanwhile is unknown */
	} else if (r < 0)
		log_debug_errno(r, "uevents: %s, ignoring.", strna(uevents_error(m->uevents)));
	arm_hotplug_timer(m);
	return 0;
}

int manager_listen(Manager *m)
{
	_cleanup_free_ char *err = NULL;
	int r;

	debouncer_init(&m->hotplug, HOTPLUG_QUIET_USEC, HOTPLUG_MAX_USEC);
	debouncer_init(&m->irqs_new, IRQS_NEW_QUIET_USEC, IRQS_NEW_MAX_USEC);
	r = cpuset_copy(&m->online_polled, &m->session.topology->online);
	if (r < 0)
		return log_oom();
	m->listening = true;

	if (!is_live(m)) {
		/* A sysroot has no kernel behind it: polling is all there is, and that is no fault. */
		r = poll_start(m, &m->hotplug_poll, on_hotplug_poll);
		if (r < 0)
			return r;
		log_info("Sysroot %s: CPU hotplug is followed by reading cpu/online every %u s.", m->root, poll_sec(m));
	} else {
		r = uevents_new(on_uevent, m, &m->uevents, &err);
		if (r >= 0)
			r = sd_event_add_io(m->event, &m->uevent_io, uevents_get_fd(m->uevents), EPOLLIN, on_uevent_io,
					    m);
		if (r < 0) {
			_cleanup_free_ char *why = err ? strdup(err) : strprintf("%s", strerror(-r));

			uevent_give_up(m, why ?: strerror(-r));
		}
		manager_irq_poll_sync(m);
	}

	workload_listen(m);
	return 0;
}
