/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * On the host, as root: the real proc connector sees an exec of /bin/true
 * with the right pid; datagrams from a user-space port (forgeries) are
 * dropped by both listeners; and the listener's CPU cost over a burst of
 * 10,000 short-lived processes, raw and with the workload tracker
 * resolving every exec, is printed for reading. When the kernel refuses
 * the listener (no CAP_NET_ADMIN before Linux 6.6, not in the initial
 * namespaces, no CONFIG_PROC_EVENTS) it exits 77: skipped.
 */
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "fileio.h"
#include "procevents.h"
#include "test.h"
#include "uevents.h"
#include "workload.h"

extern char **environ;

#define BURST 10000U
#define IN_FLIGHT 32

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

static double rusage_sec(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static pid_t spawn_true(void)
{
	char *argv[] = { (char *)"true", NULL };
	pid_t pid;

	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0)
		return -1;
	return pid;
}

typedef struct Seen {
	pid_t want;
	bool exec, exit;
	uint64_t n_exec, n_exit;
	WorkloadTracker *tracker;
	int root_fd;
	unsigned resolve_errors;
	unsigned switches;
} Seen;

static int on_event(ProcEvents *pe, const ProcEvent *ev, void *userdata)
{
	Seen *s = userdata;

	if (ev->type == PROCEV_EXEC) {
		s->n_exec++;
		if (ev->tgid == s->want)
			s->exec = true;
	} else if (ev->type == PROCEV_EXIT) {
		s->n_exit++;
		if (ev->pid == s->want)
			s->exit = true;
	}
	if (s->tracker && workload_tracker_handle_event(s->tracker, s->root_fd, ev, now_usec()) < 0)
		s->resolve_errors++;
	return 0;
}

static int wait_readable(int fd, int msec)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, msec);
}

static void test_exec_seen(ProcEvents *pe, Seen *s)
{
	uint64_t deadline;
	pid_t pid;

	pid = spawn_true();
	check(pid > 0);
	s->want = pid;
	deadline = now_usec() + 5000000;
	while (!(s->exec && s->exit) && now_usec() < deadline) {
		int r;

		if (wait_readable(procevents_get_fd(pe), 100) <= 0)
			continue;
		r = procevents_process(pe);
		check(r >= 0 || r == -ENOBUFS);
	}
	check(s->exec);
	check(s->exit);
	check(waitpid(pid, NULL, 0) == pid);
	printf("exec+exit of /bin/true pid %d seen\n", (int)pid);
	s->want = 0;
}

/*
 * A datagram from a user-space port to the listener's own port. Sending to
 * a port needs CAP_NET_ADMIN on these protocols: without it the forgery is
 * impossible anyway and false is returned.
 */
static bool send_forged(int protocol, int target_fd, const void *buf, size_t len)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK }, me;
	socklen_t sl = sizeof(me);
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);

	check(fd >= 0);
	check(getsockname(target_fd, (struct sockaddr *)&me, &sl) == 0);
	to.nl_pid = me.nl_pid;
	if (sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0 && errno == EPERM)
		return false;
	check(true);
	return true;
}

static void test_forgeries(ProcEvents *pe, Seen *s)
{
	_cleanup_(uevents_freep) UEvents *ue = NULL;
	_cleanup_free_ char *err = NULL;
	static const char uev[] = "offline@/devices/system/cpu/cpu1\0ACTION=offline\0"
				  "DEVPATH=/devices/system/cpu/cpu1\0SUBSYSTEM=cpu\0";
	uint8_t buf[NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(struct proc_event)] = {};
	struct nlmsghdr nh = { .nlmsg_len = sizeof(buf), .nlmsg_type = NLMSG_DONE };
	struct cn_msg cn = { .id = { CN_IDX_PROC, CN_VAL_PROC }, .len = sizeof(struct proc_event) };
	struct proc_event ev = { .what = PROC_EVENT_EXEC };
	ProcEventsStats st;

	check(uevents_new(NULL, NULL, &ue, &err) == 0);
	if (!ue) {
		fprintf(stderr, "uevents: %s\n", strna(err));
		return;
	}
	if (!send_forged(NETLINK_KOBJECT_UEVENT, uevents_get_fd(ue), uev, sizeof(uev) - 1)) {
		printf("forgery checks skipped: sending to a netlink port needs CAP_NET_ADMIN\n");
		return;
	}
	check(wait_readable(uevents_get_fd(ue), 1000) == 1);
	check_int(uevents_process(ue), 0);

	ev.event_data.exec.process_pid = ev.event_data.exec.process_tgid = 1;
	memcpy(buf, &nh, sizeof(nh));
	memcpy(buf + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(buf + NLMSG_HDRLEN + sizeof(cn), &ev, sizeof(ev));
	procevents_get_stats(pe, &st);
	check(send_forged(NETLINK_CONNECTOR, procevents_get_fd(pe), buf, sizeof(buf)));
	check(wait_readable(procevents_get_fd(pe), 1000) == 1);
	check(procevents_process(pe) >= 0);
	{
		uint64_t forged = st.forged;

		procevents_get_stats(pe, &st);
		check_int(st.forged, forged + 1);
	}
	printf("forged uevent and proc event from user space dropped\n");
}

/* A listener that is not read while 1,000 processes come and go overruns:
 * -ENOBUFS once (after handling what was still queued), then normal. */
static void test_overrun(void)
{
	_cleanup_(procevents_freep) ProcEvents *pe = NULL;
	_cleanup_free_ char *err = NULL;
	Seen s = { .root_fd = -EBADF };
	ProcEventsStats st;
	int small = 4096, r;

	check(procevents_new(on_event, &s, &pe, &err) == 0);
	if (!pe)
		return;
	check(setsockopt(procevents_get_fd(pe), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) == 0);
	for (unsigned i = 0; i < 1000; i++) {
		pid_t pid = spawn_true();

		if (pid > 0)
			(void)waitpid(pid, NULL, 0);
	}
	r = procevents_process(pe);
	check_int(r, -ENOBUFS);
	check(procevents_error(pe) && strstr(procevents_error(pe), "overrun"));
	procevents_get_stats(pe, &st);
	check(st.overruns >= 1);
	check(s.n_exec + s.n_exit > 0);      /* what was queued was handled */
	r = procevents_process(pe);
	check(r >= 0);
	printf("overrun: -ENOBUFS once after %" PRIu64 " queued events, then %d\n",
	       s.n_exec + s.n_exit, r);
}

/*
 * Spawn BURST /bin/true in a child, listen here; returns listener CPU
 * seconds. @coalesce_ms > 0 waits that long after each batch before
 * polling again (sd_event_source_set_ratelimit() in the daemon), so one
 * wakeup handles many events.
 */
static double burst(ProcEvents *pe, Seen *s, int coalesce_ms, unsigned *ret_overruns,
		    unsigned *ret_wakeups, double *ret_wall)
{
	uint64_t start_exec = s->n_exec, t0;
	unsigned overruns = 0, wakeups = 0;
	double cpu0;
	pid_t spawner;
	bool done = false;

	/* Drain first so that only the burst is measured. */
	while (procevents_process(pe) > 0)
		;
	cpu0 = rusage_sec();
	t0 = now_usec();

	spawner = fork();
	if (spawner == 0) {
		unsigned started = 0, running = 0;

		while (started < BURST || running > 0) {
			if (started < BURST && running < IN_FLIGHT) {
				if (spawn_true() > 0) {
					started++;
					running++;
				}
				continue;
			}
			if (waitpid(-1, NULL, 0) > 0)
				running--;
		}
		_exit(0);
	}
	check(spawner > 0);

	for (;;) {
		int r;

		if (!done && waitpid(spawner, NULL, WNOHANG) == spawner) {
			done = true;
			*ret_wall = (double)(now_usec() - t0) / 1e6;
		}
		if (wait_readable(procevents_get_fd(pe), done ? 200 : 100) <= 0) {
			if (done)
				break;
			continue;
		}
		wakeups++;
		r = procevents_process(pe);
		if (r == -ENOBUFS) {
			overruns++;
			if (s->tracker)
				check(workload_tracker_rescan(s->tracker, s->root_fd, now_usec()) == 0);
		} else
			check(r >= 0);
		/* As the daemon does: decide once per batch. */
		if (s->tracker) {
			WorkloadDecision d;

			if (workload_tracker_evaluate(s->tracker, now_usec(), &d) > 0)
				s->switches++;
		}
		if (coalesce_ms > 0)
			(void)poll(NULL, 0, coalesce_ms);
	}
	*ret_overruns = overruns;
	*ret_wakeups = wakeups;
	check(s->n_exec - start_exec >= BURST || overruns > 0);
	return rusage_sec() - cpu0;
}

int main(void)
{
	_cleanup_(procevents_freep) ProcEvents *pe = NULL;
	_cleanup_free_ char *err = NULL;
	_cleanup_close_ int root_fd = -EBADF;
	Seen s = { .root_fd = -EBADF };
	WorkloadMatcher *m = NULL;
	WorkloadDecision d;
	ProcEventsStats st;
	unsigned overruns, wakeups;
	double cpu, wall = 0;
	int r;

	r = procevents_new(on_event, &s, &pe, &err);
	if (r == -EPERM || r == -EACCES || r == -ETIMEDOUT || r == -EPROTONOSUPPORT) {
		printf("SKIP: %s\n", strna(err));
		return 77;
	}
	check_int(r, 0);
	if (r < 0) {
		fprintf(stderr, "%s\n", strna(err));
		return test_end("netlink-live");
	}

	test_exec_seen(pe, &s);
	test_forgeries(pe, &s);
	test_overrun();

	for (int coalesce = 0; coalesce <= 10; coalesce += 10) {
		cpu = burst(pe, &s, coalesce, &overruns, &wakeups, &wall);
		procevents_get_stats(pe, &st);
		printf("burst of %u /bin/true (%.1f s wall, %s): listener %.1f ms CPU "
		       "(%.1f us per exec), %u wakeups, %" PRIu64 " exec / %" PRIu64 " exit events "
		       "in total, %u overruns, %" PRIu64 " other events (kernel filter %s)\n",
		       BURST, wall, coalesce ? "10 ms coalescing" : "wakeup per event",
		       cpu * 1000, cpu * 1e6 / BURST, wakeups, s.n_exec, s.n_exit, overruns,
		       st.other, st.other < BURST / 2 ? "on" : "off");
	}

	/* The daemon's path: every exec resolved (exe, comm) and matched. */
	check(root_open("/", &root_fd) == 0);
	check(workload_matcher_new(&m) == 0);
	check(workload_matcher_add(m, WORKLOAD_EXE, "/usr/sbin/topotune-no-such", "database") == 0);
	check(workload_matcher_add(m, WORKLOAD_COMM, "true", "latency") == 0);
	check(workload_tracker_new(m, 10000000, &s.tracker) == 0);
	s.root_fd = root_fd;
	check(workload_tracker_rescan(s.tracker, root_fd, now_usec()) == 0);
	check(workload_tracker_evaluate(s.tracker, now_usec(), &d) >= 0);
	cpu = burst(pe, &s, 10, &overruns, &wakeups, &wall);
	{
		/* However many were caught alive: at most one switch, and
		 * none back before the 10 s hold-down. */
		if (workload_tracker_evaluate(s.tracker, now_usec(), &d) > 0)
			s.switches++;
		printf("burst of %u /bin/true with workload tracking (%.1f s wall, 10 ms coalescing): "
		       "listener %.1f ms CPU (%.1f us per exec), %u wakeups, %u overruns, "
		       "%u resolve errors, profile now %s, %u switch(es)\n",
		       BURST, wall, cpu * 1000, cpu * 1e6 / BURST, wakeups, overruns, s.resolve_errors,
		       strna(d.profile), s.switches);
		check(s.switches <= 1);
	}
	workload_tracker_free(s.tracker);
	return test_end("netlink-live");
}
