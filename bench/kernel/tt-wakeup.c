/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tt-wakeup: wakeup latency in the manner of Chris Mason's schbench, which
 * Debian does not package (the harness runs the real schbench instead when
 * it is on PATH). M message threads each own T worker threads. A message
 * thread sleeps SLEEP usec, then wakes every one of its workers that is
 * waiting, stamping the time; a woken worker records how long it took to
 * get a CPU (the wakeup latency the scheduler's placement decides), burns
 * CPU usec of work, and waits again. Nothing is pinned.
 *
 *   tt-wakeup [-m MESSAGE-THREADS] [-t WORKERS-PER-MESSAGE-THREAD]
 *             [-r SECONDS] [-s SLEEP-USEC] [-c CPU-USEC]
 *
 * Defaults as schbench's: -m 2 -t 16 -r 30 -s 10000 -c 10000. Prints the
 * latency percentiles in usec (the 99th marked with '*', as schbench does)
 * and the work units completed per second:
 *   Wakeup latencies (usec) 50.0th: 4 90.0th: 9 *99.0th: 25 99.9th: 80 (1234 samples)
 *   Requests: 1234.5 per second
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Log-linear histogram of microseconds: exact below 1024, then 64 buckets
 * per power of two (at most 1.6 % off).
 */
#define HIST_LINEAR 1024
#define HIST_SUB 64
#define HIST_BUCKETS (HIST_LINEAR + HIST_SUB * 54)

typedef struct Worker {
	atomic_int word;	/* futex: 1 = woken */
	atomic_int waiting;	/* 1 while in futex_wait, claimable by the waker */
	_Atomic uint64_t stamp;	/* ns, when the message thread woke it */
	uint64_t requests;
	uint64_t *hist;
	pthread_t tid;
	const struct Config *cfg;
} Worker;

typedef struct Config {
	unsigned long message_threads, workers, runtime, sleep_us, cpu_us;
	atomic_int stop;
} Config;

typedef struct Message {
	Worker *workers;
	pthread_t tid;
	const Config *cfg;
} Message;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static unsigned bucket_of(uint64_t us)
{
	unsigned msb;

	if (us < HIST_LINEAR)
		return us;
	msb = 63 - __builtin_clzll(us);
	return HIST_LINEAR + HIST_SUB * (msb - 10) + ((us >> (msb - 6)) & (HIST_SUB - 1));
}

static uint64_t value_of(unsigned b)
{
	unsigned msb;

	if (b < HIST_LINEAR)
		return b;
	msb = (b - HIST_LINEAR) / HIST_SUB + 10;
	return ((uint64_t)1 << msb) + ((uint64_t)((b - HIST_LINEAR) % HIST_SUB) << (msb - 6));
}

static void futex_wait(atomic_int *word, int val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(atomic_int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void burn(uint64_t us)
{
	uint64_t end = now_ns() + us * 1000;
	volatile unsigned long x = 0;

	int i;

	while (now_ns() < end)
		for (i = 0; i < 100; i++)
			x += i;
}

static void *worker_main(void *arg)
{
	Worker *w = arg;
	const Config *cfg = w->cfg;

	for (;;) {
		uint64_t lat;
		unsigned b;

		atomic_store(&w->word, 0);
		atomic_store(&w->waiting, 1);
		while (!atomic_load(&w->word) && !atomic_load(&cfg->stop))
			futex_wait(&w->word, 0);
		if (atomic_load(&cfg->stop))
			break;
		lat = (now_ns() - atomic_load(&w->stamp)) / 1000;
		b = bucket_of(lat);
		w->hist[b < HIST_BUCKETS ? b : HIST_BUCKETS - 1]++;
		burn(cfg->cpu_us);
		w->requests++;
	}
	return NULL;
}

static void *message_main(void *arg)
{
	Message *m = arg;
	const Config *cfg = m->cfg;
	struct timespec nap = { cfg->sleep_us / 1000000, (cfg->sleep_us % 1000000) * 1000 };
	unsigned long i;

	while (!atomic_load(&cfg->stop)) {
		nanosleep(&nap, NULL);
		for (i = 0; i < cfg->workers; i++) {
			Worker *w = &m->workers[i];

			if (!atomic_exchange(&w->waiting, 0))
				continue;	/* still working on the last one */
			atomic_store(&w->stamp, now_ns());
			atomic_store(&w->word, 1);
			futex_wake(&w->word);
		}
	}
	for (i = 0; i < cfg->workers; i++) {
		atomic_store(&m->workers[i].word, 1);
		futex_wake(&m->workers[i].word);
	}
	return NULL;
}

static int parse_ulong(const char *arg, unsigned long *ret)
{
	char *end;

	errno = 0;
	*ret = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-')
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	Config cfg = { .message_threads = 2, .workers = 16, .runtime = 30,
		       .sleep_us = 10000, .cpu_us = 10000 };
	static const double pct[] = { 50.0, 90.0, 99.0, 99.9 };
	uint64_t *hist, samples = 0, requests = 0, seen;
	unsigned long i, j, n;
	Message *msg;
	Worker *w;
	int opt, r;
	double t0;

	while ((opt = getopt(argc, argv, "m:t:r:s:c:")) >= 0) {
		unsigned long *dst = opt == 'm' ? &cfg.message_threads : opt == 't' ? &cfg.workers :
				     opt == 'r' ? &cfg.runtime : opt == 's' ? &cfg.sleep_us : &cfg.cpu_us;

		if (opt == '?' || parse_ulong(optarg, dst) < 0) {
			fprintf(stderr, "usage: %s [-m MESSAGE-THREADS] [-t WORKERS] [-r SECONDS] "
				"[-s SLEEP-USEC] [-c CPU-USEC]\n", argv[0]);
			return 2;
		}
	}
	if (!cfg.message_threads || !cfg.workers || !cfg.runtime || !cfg.sleep_us) {
		fprintf(stderr, "%s: -m, -t, -r and -s must be at least 1\n", argv[0]);
		return 2;
	}
	n = cfg.message_threads * cfg.workers;
	msg = calloc(cfg.message_threads, sizeof(*msg));
	w = calloc(n, sizeof(*w));
	hist = calloc(HIST_BUCKETS * (n + 1), sizeof(*hist));
	if (!msg || !w || !hist) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	for (i = 0; i < n; i++) {
		w[i].cfg = &cfg;
		w[i].hist = hist + HIST_BUCKETS * (i + 1);
		r = pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
		if (r) {
			fprintf(stderr, "%s: pthread_create: %s\n", argv[0], strerror(r));
			return 1;
		}
	}
	t0 = now_ns() * 1e-9;
	for (i = 0; i < cfg.message_threads; i++) {
		msg[i].cfg = &cfg;
		msg[i].workers = w + i * cfg.workers;
		r = pthread_create(&msg[i].tid, NULL, message_main, &msg[i]);
		if (r) {
			fprintf(stderr, "%s: pthread_create: %s\n", argv[0], strerror(r));
			return 1;
		}
	}
	sleep(cfg.runtime);
	atomic_store(&cfg.stop, 1);
	for (i = 0; i < cfg.message_threads; i++)
		pthread_join(msg[i].tid, NULL);
	for (i = 0; i < n; i++)
		pthread_join(w[i].tid, NULL);

	for (i = 0; i < n; i++) {
		requests += w[i].requests;
		for (j = 0; j < HIST_BUCKETS; j++) {
			hist[j] += w[i].hist[j];
			samples += w[i].hist[j];
		}
	}
	printf("Wakeup latencies (usec)");
	for (i = 0, j = 0, seen = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		uint64_t want = (uint64_t)(samples * pct[i] / 100.0);

		while (j < HIST_BUCKETS - 1 && seen + hist[j] <= want)
			seen += hist[j++];
		printf(" %s%.1fth: %llu", pct[i] == 99.0 ? "*" : "", pct[i],
		       samples ? (unsigned long long)value_of(j) : 0ULL);
	}
	printf(" (%llu samples)\n", (unsigned long long)samples);
	printf("Requests: %.1f per second\n", requests / (now_ns() * 1e-9 - t0));
	free(hist);
	free(w);
	free(msg);
	return samples ? 0 : 1;
}
