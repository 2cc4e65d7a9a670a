/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topotuned: discovers the machine, applies the selected profile through
 * the applier, and serves org.topotune1 on the system bus. run() is the
 * whole life of the daemon as a straight line; everything it acquires is
 * owned by the Manager.
 */
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "log.h"
#include "manager.h"
#include "strutil.h"

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	Manager *m = userdata;
	_cleanup_free_ char *err = NULL;
	int r;

	(void)sd_notify(false, "RELOADING=1");
	log_info("SIGHUP: reloading the configuration.");
	r = manager_reload(m, "SIGHUP reload", &err);
	if (r >= 0)
		manager_emit_applied(m, (unsigned)r);
	manager_emit_changed(m);
	(void)sd_notify(false, "READY=1");
	return 0;
}

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	Manager *m = userdata;

	if (m->session.config && m->session.config->rollback == ROLLBACK_NOT_ON_EXIT)
		log_info("Stopping; rollback = not-on-exit: leaving %zu change%s in place.", m->applier->n_changes,
			 m->applier->n_changes == 1 ? "" : "s");
	else if (m->state != MANAGER_OFF || m->applier->n_changes > 0) {
		log_info("Stopping: reverting %zu change%s.", m->applier->n_changes, m->applier->n_changes == 1 ? "" : "s");
		(void)manager_revert(m, "stop");
	}
	(void)sd_notify(false, "STOPPING=1");
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

static void help(void)
{
	printf("topotuned [OPTIONS]\n\n"
	       "Scheduler-topology tuning daemon (org.topotune1).\n\n"
	       "  -h --help               Show this help\n"
	       "     --version            Show the version\n"
	       "     --root DIR           Operate on the system below DIR (default: /)\n"
	       "     --config-root DIR    Read etc/ and usr/lib/ configuration (profiles,\n"
	       "                          hardware.d, topotune.conf) below DIR (default: --root)\n"
	       "     --bus-address ADDR   Connect to this bus instead of the system bus\n"
	       "     --no-systemd         Write the isolation cgroup directly, not through systemd\n"
	       "     --workload-hold SEC  Keep a workload's profile SEC seconds after its last\n"
	       "                          process exits (default 30)\n"
	       "     --poll-interval SEC  Rescan /proc and cpu/online every SEC seconds when the\n"
	       "                          kernel's events are unavailable, and list /proc/irq\n"
	       "                          while IRQs are kept off isolated CPUs (default 5)\n"
	       "  -v --verbose            Debug logging\n");
}

static int parse_argv(int argc, char *argv[], Manager *m)
{
	enum {
		ARG_VERSION = 0x100,
		ARG_ROOT,
		ARG_CONFIG_ROOT,
		ARG_BUS_ADDRESS,
		ARG_NO_SYSTEMD,
		ARG_WORKLOAD_HOLD,
		ARG_POLL_INTERVAL,
	};
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "root", required_argument, NULL, ARG_ROOT },
		{ "config-root", required_argument, NULL, ARG_CONFIG_ROOT },
		{ "bus-address", required_argument, NULL, ARG_BUS_ADDRESS },
		{ "no-systemd", no_argument, NULL, ARG_NO_SYSTEMD },
		{ "workload-hold", required_argument, NULL, ARG_WORKLOAD_HOLD },
		{ "poll-interval", required_argument, NULL, ARG_POLL_INTERVAL },
		{ "verbose", no_argument, NULL, 'v' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "hv", options, NULL)) >= 0)
		switch (c) {
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("topotuned %s\n", TOPOTUNE_VERSION);
			return 0;
		case ARG_ROOT:
			if (strdup_to(&m->root, optarg) < 0)
				return log_oom();
			break;
		case ARG_CONFIG_ROOT:
			if (strdup_to(&m->config_root, optarg) < 0)
				return log_oom();
			break;
		case ARG_BUS_ADDRESS:
			if (strdup_to(&m->bus_address, optarg) < 0)
				return log_oom();
			break;
		case ARG_NO_SYSTEMD:
			m->use_systemd = false;
			break;
		case ARG_WORKLOAD_HOLD: {
			unsigned sec;

			if (safe_atou_base(optarg, 10, &sec) < 0)
				return log_error_errno(-EINVAL, "--workload-hold: expected seconds, got '%s'", optarg);
			m->workload_hold_usec = (uint64_t)sec * 1000000ULL;
			break;
		}
		case ARG_POLL_INTERVAL: {
			unsigned sec;

			if (safe_atou_base(optarg, 10, &sec) < 0 || sec == 0 || sec > 3600)
				return log_error_errno(-EINVAL, "--poll-interval: expected 1..3600 seconds, got '%s'",
						       optarg);
			m->poll_usec = (uint64_t)sec * 1000000ULL;
			break;
		}
		case 'v':
			log_set_max_level(LOG_DEBUG);
			break;
		default:
			return -EINVAL;
		}
	if (optind < argc)
		return log_error_errno(-EINVAL, "Unexpected argument '%s'.", argv[optind]);
	if (!m->root && strdup_to(&m->root, "/") < 0)
		return log_oom();
	return 1;
}

/*
 * The starting point of PropertiesChanged (manager_note_properties()), after
 * READY=1: rendering every property, DomainLayout's text included, is no
 * first client's business. As the loop's first event, before any bus
 * message is read, it still sees exactly what a first client would.
 */
static int on_first_iteration(sd_event_source *s, void *userdata)
{
	manager_note_properties(userdata);
	/*
	 * Start-up's scratch (discovery's buffers, the first plan's inputs)
	 * is free by now but lies between what stays: glibc returns only the
	 * heap's top by itself. About a third of the heap.
	 */
	malloc_trim(0);
	return 0;
}

static int defer_note_properties(Manager *m)
{
	_cleanup_(sd_event_source_unrefp) sd_event_source *s = NULL;
	int r;

	r = sd_event_add_defer(m->event, &s, on_first_iteration, m);
	if (r < 0)
		return r;
	r = sd_event_source_set_priority(s, SD_EVENT_PRIORITY_IMPORTANT);
	if (r < 0)
		return r;
	r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	if (r < 0)
		return r;
	return sd_event_source_set_floating(s, true);
}

/*
 * Where start-up goes, at debug level ("start-up: PHASE N.NN ms", wall time
 * since the previous phase): bench/daemon-start.sh collects it.
 */
static void phase_done(const char *name)
{
	static struct timespec last;
	struct timespec now;

	if (log_get_max_level() < LOG_DEBUG)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (last.tv_sec || last.tv_nsec)
		log_debug("start-up: %s %.2f ms", name,
			  (double)(now.tv_sec - last.tv_sec) * 1e3 + (double)(now.tv_nsec - last.tv_nsec) / 1e6);
	last = now;
}

/* The event loop, with SIGTERM, SIGINT and SIGHUP as its events, and the watchdog. */
static int setup_event_loop(Manager *m)
{
	static const struct {
		int sig;
		sd_event_signal_handler_t handler;
	} handlers[] = {
		{ SIGTERM, on_sigterm },
		{ SIGINT, on_sigterm },
		{ SIGHUP, on_sighup },
	};
	sigset_t mask;
	int r;

	r = sd_event_default(&m->event);
	if (r < 0)
		return log_error_errno(r, "Failed to allocate the event loop: %m");
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return log_error_errno(negative_errno(), "Failed to block signals: %m");
	for (size_t i = 0; i < ELEMENTSOF(handlers); i++) {
		r = sd_event_add_signal(m->event, NULL, handlers[i].sig, handlers[i].handler, m);
		if (r < 0)
			return log_error_errno(r, "Failed to add a handler for %s: %m", strsignal(handlers[i].sig));
	}
	r = sd_event_set_watchdog(m->event, true);
	if (r < 0)
		log_warning_errno(r, "Failed to enable the watchdog, ignoring: %m");
	return 0;
}

/*
 * The bus first: the systemd hook of the applier needs it. The name is
 * also the lock against a second instance, so take it before touching
 * anything; calls that arrive now wait in the queue until the loop runs,
 * after the first apply.
 */
static int setup_bus(Manager *m)
{
	int r;

	r = manager_connect_bus(m);
	if (r < 0)
		return r;
	r = sd_bus_request_name(m->bus, TOPOTUNE_BUS_NAME, 0);
	if (r == -EEXIST)
		return log_error_errno(r, "%s is already owned: is topotuned running already?", TOPOTUNE_BUS_NAME);
	if (r < 0)
		return log_error_errno(r, "Failed to acquire the bus name %s: %m", TOPOTUNE_BUS_NAME);
	return 0;
}

/* A profile that does not load or apply changes nothing: serve State=failed and say why. */
static int first_apply(Manager *m)
{
	_cleanup_free_ char *err = NULL;
	int r;

	r = manager_switch(m, NULL, "start", &err);
	if (r >= 0)
		return 0;
	if (m->apply_error) {
		/* manager_update_state() leaves the initial "off" alone; a failed first apply is "failed". */
		m->state = MANAGER_FAILED;
		log_error("Starting without tuning: %s", m->apply_error);
		return 0;
	}
	if (r == -EOPNOTSUPP)
		m->plan_error = strdup(strna(err));
	else
		m->plan_error = strprintf("the selected profile does not load: %s", err ?: strerror(-r));
	if (!m->plan_error)
		return log_oom();
	m->state = MANAGER_FAILED;
	log_error("Starting without tuning: %s", m->plan_error);
	return 0;
}

/* Verification, the metrics textfile and the kernel's events. */
static int setup_timers_and_listeners(Manager *m)
{
	int r;

	r = manager_arm_verify_timer(m);
	if (r < 0)
		return r;
	manager_metrics_write(m);
	r = manager_arm_metrics_timer(m, false);
	if (r < 0)
		return r;
	return manager_listen(m);
}

/* What a client reads first is its starting point: later PropertiesChanged carry differences. */
static int notify_ready(Manager *m)
{
	_cleanup_free_ char *status = NULL, *notify = NULL;
	int r;

	r = defer_note_properties(m);
	if (r < 0)
		return log_error_errno(r, "Failed to schedule the first property snapshot: %m");
	r = manager_status_text(m, &status);
	if (r < 0)
		return log_oom();
	notify = strprintf("READY=1\nSTATUS=%s", status);
	if (!notify)
		return log_oom();
	phase_done("status");
	(void)sd_notify(false, notify);
	log_info("Ready: %s", status);
	return 0;
}

static int run(int argc, char *argv[])
{
	_cleanup_(manager_freep) Manager *m = NULL;
	_cleanup_free_ char *err = NULL;
	int r;

	r = manager_new(&m);
	if (r < 0)
		return log_oom();
	r = parse_argv(argc, argv, m);
	if (r <= 0)
		return r;
	phase_done("main");

	r = setup_event_loop(m);
	if (r < 0)
		return r;
	r = setup_bus(m);
	if (r < 0)
		return r;
	phase_done("event loop, bus, name");
	r = manager_discover(m);
	if (r < 0)
		return r;
	phase_done("discovery (topology, kernel probe)");
	r = manager_load_config(m, &err);
	if (r < 0)
		return log_error_errno(r, "%s", err ?: "Failed to load the configuration");
	phase_done("configuration");

	/* A record left by a run that did not stop cleanly: restore first, then plan on true originals. */
	r = manager_recover(m);
	if (r < 0)
		return r;

	/* Which profile running workloads ask for, before the first plan. */
	r = manager_workload_setup(m);
	if (r > 0)
		log_info("%d workload rule%s loaded.", r, r == 1 ? "" : "s");
	phase_done("recovery, workload rules");

	r = first_apply(m);
	if (r < 0)
		return r;
	phase_done("plan and apply");
	r = setup_timers_and_listeners(m);
	if (r < 0)
		return r;
	phase_done("metrics, listeners");
	r = notify_ready(m);
	if (r < 0)
		return r;

	r = sd_event_loop(m->event);
	manager_metrics_stop(m);
	if (r < 0)
		return log_error_errno(r, "Event loop failed: %m");
	return 0;
}

int main(int argc, char *argv[])
{
	int r;

	log_open();
	r = run(argc, argv);

	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
