/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel counters for metrics: /proc/schedstat version 17 domain lines summed
 * per domain with each field where sched-stats.rst puts it, the series'
 * /proc/sched_smt_buddy_stat summed, and the metric text they give.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"
#include "test.h"

/* Field k of a domain line holds k*mul, so each sum names its field. */
static char *domain_line(unsigned n, const char *name, const char *mask, unsigned mul)
{
	StrBuf b = {};
	char *s = NULL;

	strbuf_appendf(&b, "domain%u %s %s", n, name, mask);
	for (unsigned k = 1; k <= SCHEDSTAT_DOMAIN_FIELDS; k++)
		strbuf_appendf(&b, " %u", k * mul);
	strbuf_append(&b, "\n");
	(void)strbuf_steal(&b, &s);
	return s;
}

static void test_schedstat(void)
{
	_cleanup_free_ char *d00 = domain_line(0, "SMT", "00000003", 1), *d01 = domain_line(1, "MC", "0000000f", 1);
	_cleanup_free_ char *d10 = domain_line(0, "SMT", "00000003", 10), *d11 = domain_line(1, "MC", "0000000f", 100);
	_cleanup_free_ char *text = strprintf("version 17\ntimestamp 4295048735\n"
					      "cpu0 0 0 0 0 0 0 1 2 3\n%s%s"
					      "cpu1 0 0 0 0 0 0 1 2 3\n%s%s", d00, d01, d10, d11);
	KernelCounters c = {};

	check(kernel_counters_parse_schedstat(&c, text) == 0);
	check_int(c.schedstat_version, 17);
	check_int(c.n_domains, 2);
	if (c.n_domains == 2) {
		check_str(c.domains[0].name, "SMT");
		check_int(c.domains[0].index, 0);
		check_int(c.domains[0].cpus, 2);
		/* lb_failed when newly idle is field 25; alb_pushed 36; ttwu_move_affine 44. */
		check_int(c.domains[0].v[24], 25 * 11);
		check_int(c.domains[0].v[35], 36 * 11);
		check_int(c.domains[1].v[43], 44 * 101);
		check_str(c.domains[1].name, "MC");
	}
	kernel_counters_done(&c);
}

static void test_schedstat_other_versions(void)
{
	/*
	 * Version 15 orders the idle types differently: no counters, no error.
	 * (Version 16 is read into version 17's positions: test-diagnose's
	 * recorded 6.12 sample.)
	 */
	KernelCounters c = {};

	check(kernel_counters_parse_schedstat(&c, "version 15\ncpu0 0 0 0\ndomain0 00000003 1 2 3\n") == 0);
	check_int(c.schedstat_version, 15);
	check_int(c.n_domains, 0);
	kernel_counters_done(&c);
}

static void test_schedstat_bad(void)
{
	static const char *const bad[] = {
		"",
		"timestamp 1\n",
		"version x\n",
		"version 17\ndomain0 SMT 3 1 2 3\n",              /* a domain before any cpu line */
		"version 17\ncpu0 1\ndomain0 SMT 3 1 2 3\n",      /* 3 of 45 fields */
		"version 17\ncpu0 1\ndomainX SMT 3 1\n",
		"version 16\ncpu0 0 0 0\ndomain0 00000003 1 2 3\n",   /* 3 of 36 fields */
	};

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		KernelCounters c = {};

		check_ctx(bad[i], kernel_counters_parse_schedstat(&c, bad[i]) == -EBADMSG);
		kernel_counters_done(&c);
	}
}

static void test_smt_buddy(void)
{
	KernelCounters c = {};

	check(kernel_counters_parse_smt_buddy(&c, "version 2\ntimestamp 4295048735\n"
					      "cpu0 1 2\ncpu1 10 20\n") == 0);
	check_int(c.smt_buddy_version, 2);
	check_int(c.smt_buddy_cpus, 2);
	check_int(c.smt_buddy[0], 11);
	check_int(c.smt_buddy[1], 22);

	/* Fewer or more fields than version 2 has: malformed, not guessed. */
	kernel_counters_done(&c);
	check(kernel_counters_parse_smt_buddy(&c, "version 2\ncpu0 1\n") == -EBADMSG);
	kernel_counters_done(&c);
	check(kernel_counters_parse_smt_buddy(&c, "version 2\ncpu0 1 2 3\n") == -EBADMSG);
	kernel_counters_done(&c);
	check(kernel_counters_parse_smt_buddy(&c, "cpu0 1 2 3\n") == -EBADMSG);
	kernel_counters_done(&c);
	/*
	 * Another version may mean other fields (version 1, of the unreleased
	 * series v4, had a fourth): counted as absent, not misread.
	 */
	check(kernel_counters_parse_smt_buddy(&c, "version 1\ncpu0 1 2 3 4\n") == 0);
	check_int(c.smt_buddy_version, 1);
	check_int(c.smt_buddy_cpus, 0);
	kernel_counters_done(&c);
	check(kernel_counters_parse_smt_buddy(&c, "version 3\ncpu0 1 2 3 4 5\n") == 0);
	check_int(c.smt_buddy_cpus, 0);
	kernel_counters_done(&c);
}

static void test_softirqs(void)
{
	KernelCounters c = {};

	check(kernel_counters_parse_softirqs(&c, "                    CPU0       CPU1\n"
					     "          HI:          0          1\n"
					     "       SCHED:     120345       7001\n"
					     "     HRTIMER:          0          0\n") == 0);
	check(c.have_sched_softirqs);
	check_int(c.sched_softirqs, 127346);
	kernel_counters_done(&c);
	check(kernel_counters_parse_softirqs(&c, "    CPU0\n   HI: 1\n") == 0);
	check(!c.have_sched_softirqs);
	kernel_counters_done(&c);
	check(kernel_counters_parse_softirqs(&c, "    CPU0\n   SCHED: 1 x\n") == -EBADMSG);
	kernel_counters_done(&c);
	check(kernel_counters_parse_softirqs(&c, "SCHED: 18446744073709551615 1\n") == -EBADMSG);
	kernel_counters_done(&c);
}

/*
 * The per-CPU counters across CPU hotplug and 32-bit wrap: each step is
 * /proc/sched_smt_buddy_stat (one line per online CPU: -1 is a CPU offline,
 * its line gone) and /proc/softirqs (a column per possible CPU, as the
 * kernel prints it), each CPU's fields all the value given, then the sums
 * the _total metrics carry. A sum never goes down: a CPU offline keeps its
 * counts (its struct stays), one back carries on from them, a lower value
 * went round 2^32.
 */
static void test_accumulate_per_cpu(void)
{
	static const struct {
		int64_t buddy[4], softirq[4];
		uint64_t buddy_sum, softirq_sum;
		unsigned buddy_cpus;
	} steps[] = {
		{ { 10, 10, 10, 10 }, { 100, 100, 100, 100 }, 40, 400, 4 },
		{ { 12, 12, 12, -1 }, { 110, 110, 110, 100 }, 46, 430, 3 },     /* cpu3 offline */
		{ { 12, 12, 13, -1 }, { 110, 110, 111, 100 }, 47, 431, 3 },
		{ { 12, 12, 13, 10 }, { 110, 110, 111, 100 }, 47, 431, 4 },     /* back, as it left */
		{ { 12, 12, 13, 15 }, { 110, 110, 111, 105 }, 52, 436, 4 },
		{ { -1, -1, 13, 15 }, { 110, 110, 111, 105 }, 52, 436, 2 },     /* cpu0-1 offline */
		{ { 20, 20, 13, 15 }, { 4294967295LL, 110, 111, 105 }, 68, 4294967621ULL, 4 },
		{ { 20, 20, 13, 15 }, { 5, 110, 111, 105 }, 68, 4294967627ULL, 4 },   /* cpu0 went round: +6 */
	};
	CounterHistory h = {};

	for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
		_cleanup_free_ char *ctx = strprintf("step %zu", i), *buddy = NULL, *softirqs = NULL;
		StrBuf b = {}, s = {};
		KernelCounters c = {};

		strbuf_append(&b, "version 2\ntimestamp 4295048735\n");
		strbuf_append(&s, "                    CPU0       CPU1       CPU2       CPU3\n"
				  "          HI:          0          0          0          0\n       SCHED:");
		for (unsigned cpu = 0; cpu < 4; cpu++) {
			if (steps[i].buddy[cpu] >= 0)
				strbuf_appendf(&b, "cpu%u %" PRIi64 " %" PRIi64 "\n", cpu, steps[i].buddy[cpu],
					       steps[i].buddy[cpu]);
			strbuf_appendf(&s, " %10" PRIi64, steps[i].softirq[cpu]);
		}
		strbuf_append(&s, "\n     HRTIMER:          0          0          0          0\n");
		check(strbuf_steal(&b, &buddy) == 0);
		check(strbuf_steal(&s, &softirqs) == 0);
		check_ctx(ctx, kernel_counters_parse_smt_buddy(&c, buddy) == 0);
		check_ctx(ctx, kernel_counters_parse_softirqs(&c, softirqs) == 0);
		check_ctx(ctx, kernel_counters_accumulate(&c, &h) == 0);
		check_int(c.smt_buddy[0], steps[i].buddy_sum);
		check_int(c.smt_buddy[1], steps[i].buddy_sum);
		check_int(c.smt_buddy_cpus, steps[i].buddy_cpus);
		check_int(c.sched_softirqs, steps[i].softirq_sum);
		kernel_counters_done(&c);
	}
	counter_history_done(&h);
}

/* A malformed /proc/sched_smt_buddy_stat loses its own counters, not schedstat's. */
static void test_load_malformed_buddy(void)
{
	char tmpl[] = "/tmp/test-counters.XXXXXX", path[128];
	_cleanup_free_ char *d0 = domain_line(2, "MC", "0000000f", 1), *text = NULL;
	KernelCounters *c = NULL;
	StrBuf b = {};
	FILE *f;
	int fd;

	check(mkdtemp(tmpl) != NULL);
	snprintf(path, sizeof(path), "%s/proc", tmpl);
	check(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/proc/schedstat", tmpl);
	f = fopen(path, "w");
	check(f && fprintf(f, "version 17\ncpu0 0\n%s", d0) > 0 && fclose(f) == 0);
	snprintf(path, sizeof(path), "%s/proc/sched_smt_buddy_stat", tmpl);
	f = fopen(path, "w");
	check(f && fputs("version 2\ncpu0 1 2 3\n", f) >= 0 && fclose(f) == 0);
	fd = open(tmpl, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	check(fd >= 0);
	check(kernel_counters_load(fd, &c) == 0);
	if (c) {
		check(c->n_domains == 1);
		check(c->smt_buddy_malformed);
		kernel_counters_metrics(c, &b);
		check(strbuf_steal(&b, &text) == 0);
		check(text && strstr(text, "topotune_schedstat_lb_count_total{"));
		check(text && strstr(text, "# /proc/sched_smt_buddy_stat is malformed"));
		check(text && !strstr(text, "topotune_smt_buddy_pushed_total"));
		kernel_counters_free(c);
	}
	close(fd);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/schedstat", tmpl);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc", tmpl);
	rmdir(path);
	rmdir(tmpl);
}

static void test_metrics_text(void)
{
	_cleanup_free_ char *d0 = domain_line(2, "MC", "0000000f", 1), *text = NULL;
	_cleanup_free_ char *in = strprintf("version 17\ncpu0 0\n%s", d0);
	KernelCounters c = { .schedstats_enabled = 1 };
	StrBuf b = {};

	check(kernel_counters_parse_schedstat(&c, in) == 0);
	check(kernel_counters_parse_smt_buddy(&c, "version 2\ncpu0 5 6\n") == 0);
	kernel_counters_metrics(&c, &b);
	check(strbuf_steal(&b, &text) == 0);
	if (!text)
		return;
	check(strstr(text, "# TYPE topotune_schedstat_lb_count_total counter\n"));
	check(strstr(text, "topotune_schedstat_lb_count_total{index=\"2\",domain=\"MC\",idle=\"busy\"} 1\n"));
	check(strstr(text, "topotune_schedstat_lb_count_total{index=\"2\",domain=\"MC\",idle=\"idle\"} 12\n"));
	check(strstr(text, "topotune_schedstat_lb_gained_total{index=\"2\",domain=\"MC\",idle=\"newly_idle\"} 30\n"));
	check(strstr(text, "topotune_schedstat_alb_pushed_total{index=\"2\",domain=\"MC\"} 36\n"));
	check(strstr(text, "topotune_schedstat_ttwu_wake_remote_total{index=\"2\",domain=\"MC\"} 43\n"));
	check(strstr(text, "topotune_smt_buddy_push_failed_total 6\n"));
	check(!strstr(text, "refused"));
	check(!strstr(text, "newidle_stopped"));
	check(strstr(text, "topotune_schedstats_enabled 1\n"));
	check(!strstr(text, "sbe_"));
	kernel_counters_done(&c);
}

/*
 * Domain counters across rebuilds: each sample is /proc/schedstat as CPUs 0-3
 * report their MC line (every field the value given; -1: the CPU has no
 * domains), then the MC sum and CPU count the metrics carry. The sum never
 * goes down: a lower line is a rebuilt domain, a missing one took its counts.
 */
static void test_accumulate(void)
{
	static const struct {
		int v[4];
		uint64_t sum;
		unsigned cpus;
	} steps[] = {
		{ { 100, 100, 100, 100 }, 400, 4 },
		{ { 110, 110, 110, 110 }, 440, 4 },   /* counting on */
		{ { 5, 5, -1, -1 }, 450, 2 },         /* hpc isolation: 2-3 lose their domains, 0-1 rebuilt */
		{ { 7, 7, -1, -1 }, 454, 2 },
		{ { 7, 7, 3, 3 }, 460, 4 },           /* isolation ends: 2-3 start again at 3 */
		{ { 1, 7, 3, 3 }, 461, 4 },           /* cpu0 alone rebuilt (hotplug) */
	};
	CounterHistory h = {};

	for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
		_cleanup_free_ char *ctx = strprintf("step %zu", i);
		StrBuf b = {};
		_cleanup_free_ char *text = NULL;
		KernelCounters c = {};

		strbuf_append(&b, "version 17\n");
		for (unsigned cpu = 0; cpu < 4; cpu++) {
			strbuf_appendf(&b, "cpu%u 0 0 0 0 0 0 1 2 3\n", cpu);
			if (steps[i].v[cpu] >= 0) {
				strbuf_append(&b, "domain0 MC 0000000f");
				for (unsigned k = 0; k < SCHEDSTAT_DOMAIN_FIELDS; k++)
					strbuf_appendf(&b, " %d", steps[i].v[cpu]);
				strbuf_append(&b, "\n");
			}
		}
		check(strbuf_steal(&b, &text) == 0);
		check_ctx(ctx, kernel_counters_parse_schedstat(&c, text) == 0);
		check_ctx(ctx, kernel_counters_accumulate(&c, &h) == 0);
		check_ctx(ctx, c.n_domains == 1);
		if (c.n_domains == 1) {
			check_int(c.domains[0].v[SCHEDSTAT_LB_COUNT], steps[i].sum);
			check_int(c.domains[0].v[SCHEDSTAT_TTWU_MOVE_AFFINE], steps[i].sum);
			check_int(c.domains[0].cpus, steps[i].cpus);
		}
		kernel_counters_done(&c);
	}
	counter_history_done(&h);
}

int main(void)
{
	test_schedstat();
	test_schedstat_other_versions();
	test_schedstat_bad();
	test_smt_buddy();
	test_load_malformed_buddy();
	test_softirqs();
	test_metrics_text();
	test_accumulate();
	test_accumulate_per_cpu();
	return test_end("test-counters");
}
