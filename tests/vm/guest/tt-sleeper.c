// SPDX-License-Identifier: GPL-2.0
/*
 * tt-sleeper: the sleeping task of the "a delayed-dequeue task is never
 * counted as pushed" check (guest/init t_delayed).
 *
 *   tt-sleeper A B CTL CYCLES BUSY_US SLEEP_US NICE
 *
 * The test keeps two hogs pinned to CPU A; B is A's idle SMT sibling.  The
 * main thread (the sleeper, at nice NICE: busybox-static has no nice
 * applet) does, each cycle: allowed on A only, burn BUSY_US of CPU time
 * there, competing with the hogs at a low weight, so that it often blocks
 * with negative lag and is delayed-dequeued (it stays queued on A,
 * sched_delayed, after it blocks); then block on a pipe.
 *
 * A control thread pinned to CPU CTL waits until the sleeper is blocked
 * (state S), reads A's push counter from /proc/sched_smt_buddy_stat, allows
 * the sleeper on A and B, notes whether a delayed task is queued on A now
 * (h_nr_queued > h_nr_runnable in /sys/kernel/debug/sched/debug; the hogs
 * never sleep, so that is the sleeper), sleeps SLEEP_US, reads the counter
 * again and only then wakes the sleeper.  Between the two reads the
 * sleeper is blocked and the hogs may not move: a push counted there
 * moved another task (an unbound kernel thread queued on A can be pushed
 * legitimately) or the sleeping one, which is what a push with
 * migrate_load semantics does to a sched_delayed task.  Which one it was
 * shows in the sleeper's task_cpu() (/proc stat field 39): a blocked task
 * that was pushed is on B before it wakes up.
 *
 * Prints one line: cycles=N delayed_at_widen=N pushed_while_blocked=N
 * moved_while_blocked=N pushed_and_moved=N (cycles in which A counted a
 * push and the blocked sleeper changed CPU) woke_on_a=N woke_on_b=N
 * (where the sleeper ran after each wake-up).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int cpu_a, cpu_b, cpu_ctl;
static long cycles, busy_us, sleep_us;
static int to_ctl[2], to_sleeper[2];
static volatile pid_t sleeper_tid;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void allow(pid_t tid, int a, int b)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a, &set);
	if (b >= 0)
		CPU_SET(b, &set);
	if (sched_setaffinity(tid, sizeof(set), &set))
		die("sched_setaffinity");
}

static long pushed_of(int cpu)
{
	char name[32], line[256], tag[32];
	long pushed = -1, v;
	FILE *f;

	f = fopen("/proc/sched_smt_buddy_stat", "re");
	if (!f)
		die("/proc/sched_smt_buddy_stat");
	snprintf(name, sizeof(name), "cpu%d", cpu);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %ld", tag, &v) == 2 && !strcmp(tag, name)) {
			pushed = v;
			break;
		}
	}
	fclose(f);
	return pushed;
}

/* h_nr_queued - h_nr_runnable of @cpu's root cfs_rq, or -1 */
static int delayed_on(int cpu)
{
	char head[32], line[256];
	int on = 0, q = -1, r = -1;
	FILE *f;

	f = fopen("/sys/kernel/debug/sched/debug", "re");
	if (!f)
		return -1;
	snprintf(head, sizeof(head), "cfs_rq[%d]:", cpu);
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "cfs_rq[", 7))
			on = !strncmp(line, head, strlen(head));
		if (!on || !c)
			continue;
		if (strstr(line, ".h_nr_runnable "))
			r = atoi(c + 1);
		else if (strstr(line, ".h_nr_queued "))
			q = atoi(c + 1);
	}
	fclose(f);
	return q < 0 || r < 0 ? -1 : q - r;
}

/* state letter and CPU (field 39, task_cpu()) of a thread of ours */
static char state_of(pid_t tid, int *ret_cpu)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || !p[1] || !p[2])
		return '?';
	/* p + 2 is field 3 */
	if (ret_cpu) {
		char *f = p + 2;

		for (i = 3; i < 39 && f; i++) {
			f = strchr(f, ' ');
			if (f)
				f++;
		}
		*ret_cpu = f ? atoi(f) : -1;
	}
	return p[2];
}

static long long cputime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void *control(void *unused)
{
	long i, delayed = 0, pushed = 0, moved = 0, both = 0;
	struct timespec nap = {
		.tv_sec = sleep_us / 1000000,
		.tv_nsec = (sleep_us % 1000000) * 1000,
	};
	char c;

	(void)unused;
	allow(0, cpu_ctl, -1);
	for (i = 0; i < cycles; i++) {
		long p0, p1;
		int cpu0 = -1, cpu1 = -1;
		char st;

		if (read(to_ctl[0], &c, 1) != 1)
			die("read");
		while (state_of(sleeper_tid, NULL) != 'S')
			sched_yield();
		p0 = pushed_of(cpu_a);
		allow(sleeper_tid, cpu_a, cpu_b);
		delayed += delayed_on(cpu_a) > 0;
		state_of(sleeper_tid, &cpu0);
		nanosleep(&nap, NULL);
		p1 = pushed_of(cpu_a);
		st = state_of(sleeper_tid, &cpu1);
		if (st != 'S') {
			fprintf(stderr, "sleeper not blocked (%c)\n", st);
			exit(1);
		}
		pushed += p1 > p0;
		moved += cpu1 != cpu0;
		both += p1 > p0 && cpu1 != cpu0;
		if (write(to_sleeper[1], "w", 1) != 1)
			die("write");
	}
	printf("cycles=%ld delayed_at_widen=%ld pushed_while_blocked=%ld moved_while_blocked=%ld pushed_and_moved=%ld ",
	       cycles, delayed, pushed, moved, both);
	return NULL;
}

int main(int argc, char **argv)
{
	long i, woke_a = 0, woke_b = 0;
	volatile unsigned long spin = 0;
	long long until;
	pthread_t ctl;
	char c;

	if (argc != 8) {
		fprintf(stderr, "usage: %s A B CTL CYCLES BUSY_US SLEEP_US NICE\n", argv[0]);
		return 2;
	}
	cpu_a = atoi(argv[1]);
	cpu_b = atoi(argv[2]);
	cpu_ctl = atoi(argv[3]);
	cycles = atol(argv[4]);
	busy_us = atol(argv[5]);
	sleep_us = atol(argv[6]);
	sleeper_tid = syscall(SYS_gettid);
	if (pipe(to_ctl) || pipe(to_sleeper))
		die("pipe");
	if (pthread_create(&ctl, NULL, control, NULL))
		die("pthread_create");
	/* per thread on Linux: the control thread keeps nice 0 */
	if (setpriority(PRIO_PROCESS, sleeper_tid, atoi(argv[7])))
		die("setpriority");

	for (i = 0; i < cycles; i++) {
		int cpu;

		allow(0, cpu_a, -1);
		until = cputime_us() + busy_us;
		while (cputime_us() < until)
			spin++;
		if (write(to_ctl[1], "s", 1) != 1)
			die("write");
		if (read(to_sleeper[0], &c, 1) != 1)
			die("read");
		cpu = sched_getcpu();
		woke_a += cpu == cpu_a;
		woke_b += cpu == cpu_b;
	}
	pthread_join(ctl, NULL);
	printf("woke_on_a=%ld woke_on_b=%ld\n", woke_a, woke_b);
	return 0;
}
