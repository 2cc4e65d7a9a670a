/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tt-stream: memory bandwidth in the manner of John McCalpin's STREAM
 * (Copy, Scale, Add, Triad over three arrays of doubles), written for the
 * kernel workload harness because STREAM is not packaged in Debian. One
 * pthread per CPU of the affinity mask (or -t), each owning a contiguous
 * slice and first-touching it, so page placement follows where the
 * scheduler puts the threads - which is what the harness compares. The
 * threads are not pinned.
 *
 *   tt-stream [-n ELEMENTS] [-t THREADS] [-r REPEATS]
 *
 * Prints, like STREAM, the best rate of each kernel over REPEATS (the first
 * repeat is a warm-up and not counted) and the average time:
 *   Copy: 12345.6 MB/s avg 0.012345 s
 * then "Check: ok" once the arrays hold the values the kernels must have
 * produced; exit 1 if they do not.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { COPY, SCALE, ADD, TRIAD, KERNELS };
static const char *const kernel_name[KERNELS] = { "Copy", "Scale", "Add", "Triad" };
/* bytes moved per element by each kernel */
static const int kernel_bytes[KERNELS] = { 16, 16, 24, 24 };
static const double scalar = 3.0;

typedef struct Shared {
	double *a, *b, *c;
	size_t n;
	unsigned threads;
	unsigned repeats;
	pthread_barrier_t barrier;
	double best[KERNELS], total[KERNELS];
} Shared;

typedef struct Worker {
	Shared *s;
	pthread_t tid;
	size_t from, to;
} Worker;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run_kernel(Shared *s, int k, size_t from, size_t to)
{
	double *a = s->a, *b = s->b, *c = s->c;
	size_t j;

	switch (k) {
	case COPY:
		for (j = from; j < to; j++)
			c[j] = a[j];
		break;
	case SCALE:
		for (j = from; j < to; j++)
			b[j] = scalar * c[j];
		break;
	case ADD:
		for (j = from; j < to; j++)
			c[j] = a[j] + b[j];
		break;
	case TRIAD:
		for (j = from; j < to; j++)
			a[j] = b[j] + scalar * c[j];
		break;
	}
}

/* Thread 0 also keeps the time: barrier, kernel, barrier. */
static void *worker(void *arg)
{
	Worker *w = arg;
	Shared *s = w->s;
	int lead = w->from == 0;	/* thread 0 */
	unsigned r;
	size_t j;
	int k;

	for (j = w->from; j < w->to; j++) {
		s->a[j] = 1.0;
		s->b[j] = 2.0;
		s->c[j] = 0.0;
	}
	pthread_barrier_wait(&s->barrier);
	for (r = 0; r < s->repeats; r++)
		for (k = 0; k < KERNELS; k++) {
			double t0 = 0;

			pthread_barrier_wait(&s->barrier);
			if (lead)
				t0 = now();
			run_kernel(s, k, w->from, w->to);
			pthread_barrier_wait(&s->barrier);
			if (lead && r > 0) {
				double t = now() - t0;

				s->total[k] += t;
				if (s->best[k] == 0 || t < s->best[k])
					s->best[k] = t;
			}
		}
	return NULL;
}

/* What a[], b[], c[] hold after REPEATS rounds, as STREAM checks it. */
static int check(const Shared *s)
{
	double a = 1.0, b = 2.0, c = 0.0;
	size_t j, step;
	unsigned r;

	for (r = 0; r < s->repeats; r++) {
		c = a;
		b = scalar * c;
		c = a + b;
		a = b + scalar * c;
	}
	step = s->n / 1024 + 1;
	for (j = 0; j < s->n; j += step)
		if (fabs(s->a[j] - a) > 1e-8 * fabs(a) || fabs(s->b[j] - b) > 1e-8 * fabs(b) ||
		    fabs(s->c[j] - c) > 1e-8 * fabs(c))
			return -1;
	return 0;
}

static int parse_size(const char *arg, unsigned long *ret)
{
	char *end;

	errno = 0;
	*ret = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *ret == 0 || arg[0] == '-')
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = 10000000, threads = 0, repeats = 10;
	Shared s = { 0 };
	Worker *w;
	cpu_set_t set;
	unsigned i;
	int opt, r, k;

	while ((opt = getopt(argc, argv, "n:t:r:")) >= 0) {
		unsigned long *dst = opt == 'n' ? &n : opt == 't' ? &threads : &repeats;

		if (opt == '?' || parse_size(optarg, dst) < 0) {
			fprintf(stderr, "usage: %s [-n ELEMENTS] [-t THREADS] [-r REPEATS >= 2]\n", argv[0]);
			return 2;
		}
	}
	if (repeats < 2) {
		fprintf(stderr, "%s: -r must be at least 2 (the first repeat is a warm-up)\n", argv[0]);
		return 2;
	}
	if (!threads) {
		if (sched_getaffinity(0, sizeof(set), &set) < 0) {
			perror("sched_getaffinity");
			return 1;
		}
		threads = CPU_COUNT(&set);
	}
	if (threads > n)
		threads = n;
	s.n = n;
	s.threads = threads;
	s.repeats = repeats;
	s.a = malloc(n * sizeof(double));
	s.b = malloc(n * sizeof(double));
	s.c = malloc(n * sizeof(double));
	w = calloc(threads, sizeof(*w));
	if (!s.a || !s.b || !s.c || !w) {
		fprintf(stderr, "%s: cannot allocate 3 x %lu doubles\n", argv[0], n);
		return 1;
	}
	pthread_barrier_init(&s.barrier, NULL, threads);
	for (i = 0; i < threads; i++) {
		w[i].s = &s;
		w[i].from = n * i / threads;
		w[i].to = n * (i + 1) / threads;
		if (i == 0)
			continue;
		r = pthread_create(&w[i].tid, NULL, worker, &w[i]);
		if (r) {
			fprintf(stderr, "%s: pthread_create: %s\n", argv[0], strerror(r));
			return 1;
		}
	}
	worker(&w[0]);
	for (i = 1; i < threads; i++)
		pthread_join(w[i].tid, NULL);

	printf("Elements: %lu per array, %.1f MiB in all, %lu threads, %lu repeats\n", n,
	       3.0 * n * sizeof(double) / (1 << 20), threads, repeats);
	for (k = 0; k < KERNELS; k++)
		printf("%s: %.1f MB/s avg %.6f s\n", kernel_name[k],
		       1e-6 * kernel_bytes[k] * n / s.best[k], s.total[k] / (repeats - 1));
	if (check(&s) < 0) {
		printf("Check: FAILED\n");
		return 1;
	}
	printf("Check: ok\n");
	free(s.a);
	free(s.b);
	free(s.c);
	free(w);
	return 0;
}
