// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Time to spread: how long two CPU hogs stay stacked on one SMT thread
 * after the idle sibling becomes allowed, in guest jiffies (guest/init
 * t_spread; the evidence that SMT_BUDDY_ASSIST's push does or does not
 * add anything to what the base kernel's idle balancing already does).
 *
 *   tt-spread A B TRIALS SETTLE_MS TIMEOUT_MS [SYSCTL [STATE]]
 *
 * B may be a comma-separated list: then the hogs are allowed on A and all
 * of those (guest/init t_idlecore: the sibling and another, idle core).
 *
 * Each trial: two hogs pinned to CPU A for SETTLE_MS (the idle CPUs' pulls
 * fail meanwhile and their balance intervals back off, as after any
 * all-pinned stretch), then both are allowed on A and B at once and the
 * time until they run on different CPUs is measured: jiffies from the
 * "timestamp" line of /proc/schedstat and nanoseconds of CLOCK_MONOTONIC.
 * Each hog stores the CPU it runs on in shared memory at every loop, so
 * a queued hog keeps showing A and the spread is seen the moment the
 * moved one runs on B. With SYSCTL (the path of
 * kernel.sched_smt_buddy_assist) every trial writes STATE (0 or 1) to it
 * first; without STATE the trials alternate 0, 1, 0, 1, ...  Alternating
 * is not a fair comparison: an "on" trial's push leaves the sibling's
 * backed-off balance interval as it was (the sibling never pulls), so the
 * "off" trial after it waits that interval out (guest/init t_spread runs
 * the two states as separate blocks for this reason).  Without SYSCTL
 * every trial is state 0.
 * One line per trial:
 *   TT SPREAD trial=N buddy=S jiffies=J us=U spread=1|0 pushed=P cpus=X,Y
 * (spread=0: still stacked at TIMEOUT_MS; pushed: the change of the
 * pushed counter of A in /proc/sched_smt_buddy_stat, -1 without it;
 * cpus: where the two hogs ran when the spread was seen).
 * This process keeps itself on CPU 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
	volatile int cpu[2];
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t off = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	while (off + 1 < size && (n = read(fd, buf + off, size - 1 - off)) > 0)
		off += n;
	close(fd);
	buf[off] = 0;
	return 0;
}

static long long jiffies(void)
{
	static char buf[1 << 16];
	char *p;

	if (read_file("/proc/schedstat", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "timestamp ");
	return p ? atoll(p + 10) : -1;
}

/* The "pushed" counter of @cpu in /proc/sched_smt_buddy_stat, or -1. */
static long long pushed(int cpu)
{
	static char buf[1 << 16];
	char key[32], *p;

	if (read_file("/proc/sched_smt_buddy_stat", buf, sizeof(buf)) < 0)
		return -1;
	snprintf(key, sizeof(key), "\ncpu%d ", cpu);
	p = strstr(buf, key);
	return p ? atoll(p + strlen(key)) : -1;
}

static int write_state(const char *path, int state)
{
	char c = state ? '1' : '0';
	int fd = open(path, O_WRONLY);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, &c, 1) != 1)
		r = -errno;
	close(fd);
	return r;
}

/* Allow @pid on @a and, unless NULL, the CPUs of the list @b ("3,4,5"). */
static int pin(pid_t pid, int a, const char *b)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a, &set);
	for (const char *p = b; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
		CPU_SET(atoi(p), &set);
	return sched_setaffinity(pid, sizeof(set), &set) < 0 ? -errno : 0;
}

static pid_t hog(struct shared *sh, int k, int a)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (pin(0, a, NULL) < 0)
		_exit(1);
	for (;;)
		sh->cpu[k] = sched_getcpu();
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	int a, trials, settle, timeout, fixed = -1;
	const char *b, *sysctl = NULL;
	struct shared *sh;

	if (argc < 6) {
		fprintf(stderr, "usage: tt-spread A B TRIALS SETTLE_MS TIMEOUT_MS [SYSCTL [STATE]]\n");
		return 2;
	}
	a = atoi(argv[1]);
	b = argv[2];
	trials = atoi(argv[3]);
	settle = atoi(argv[4]);
	timeout = atoi(argv[5]);
	if (argc > 6)
		sysctl = argv[6];
	if (argc > 7)
		fixed = atoi(argv[7]) ? 1 : 0;
	if (pin(0, 0, NULL) < 0) {
		perror("sched_setaffinity");
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}

	for (int t = 0; t < trials; t++) {
		int state = !sysctl ? 0 : fixed >= 0 ? fixed : t % 2;
		int spread = 0, c0 = -1, c1 = -1;
		long long j0, j1, t0, t1, p0, p1;
		pid_t h[2];

		if (sysctl && write_state(sysctl, state) < 0) {
			perror(sysctl);
			return 1;
		}
		sh->cpu[0] = sh->cpu[1] = -1;
		h[0] = hog(sh, 0, a);
		h[1] = hog(sh, 1, a);
		msleep(settle);

		p0 = pushed(a);
		j0 = jiffies();
		t0 = now_ns();
		pin(h[0], a, b);
		pin(h[1], a, b);
		for (;;) {
			c0 = sh->cpu[0];
			c1 = sh->cpu[1];
			t1 = now_ns();
			if (c0 >= 0 && c1 >= 0 && c0 != c1) {
				spread = 1;
				break;
			}
			if (t1 - t0 > timeout * 1000000LL)
				break;
			usleep(100);
		}
		j1 = jiffies();
		p1 = pushed(a);
		kill(h[0], SIGKILL);
		kill(h[1], SIGKILL);
		waitpid(h[0], NULL, 0);
		waitpid(h[1], NULL, 0);
		printf("TT SPREAD trial=%d buddy=%d jiffies=%lld us=%lld spread=%d pushed=%lld cpus=%d,%d\n",
		       t, state, j1 - j0, (t1 - t0) / 1000, spread, p0 < 0 || p1 < 0 ? -1 : p1 - p0,
		       c0, c1);
		fflush(stdout);
		msleep(100);
	}
	if (sysctl)
		write_state(sysctl, 0);
	return 0;
}
