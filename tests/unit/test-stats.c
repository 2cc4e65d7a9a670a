/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * agent/basic/stats: bad input, summaries, the exact Mann-Whitney critical
 * values against the published two-sided 5 % table, the achieved levels,
 * the verdict rule. test-stats.py checks the same functions against scipy.
 */
#include <math.h>

#include "macro.h"
#include "stats.h"
#include "test.h"

#define check_near(got, want)                                                   \
	do {                                                                    \
		double _g = (got), _w = (want);                                 \
		test_checks++;                                                  \
		if (!(fabs(_g - _w) <= 1e-12 * MAX(1.0, fabs(_w)))) {           \
			test_failures++;                                        \
			fprintf(stderr, "%s:%d: %s: got %.17g, want %.17g\n",   \
				__FILE__, __LINE__, #got, _g, _w);              \
		}                                                               \
	} while (0)

static void test_bad_input(void)
{
	const double one[] = { 1 }, nan_[] = { 1, NAN, 2 }, inf_[] = { 1, INFINITY };
	static double many[STATS_SAMPLES_MAX + 1];
	StatsInterval iv = { .estimate = 42 };
	StatsSummary s = { .median = 42 };
	StatsComparison c = {};
	double m = 42;

	check_int(stats_median(one, 0, &m), -ENODATA);
	check_int(stats_median(NULL, 1, &m), -EINVAL);
	check_int(stats_median(nan_, 3, &m), -EINVAL);
	check_int(stats_median(inf_, 2, &m), -EINVAL);
	check_int(stats_summarize(nan_, 3, &s), -EINVAL);
	check_int(stats_summarize(one, 0, &s), -ENODATA);
	check_int(stats_summarize(NULL, 1, &s), -EINVAL);
	check_int(stats_summarize(many, ELEMENTSOF(many), &s), -E2BIG);
	check_int(stats_median(many, ELEMENTSOF(many), &m), -E2BIG);
	check_int(stats_median(many, ELEMENTSOF(many) - 1, &m), 0);
	check_int(stats_hl_shift(one, 1, one, 0, 0.95, &iv), -ENODATA);
	check_int(stats_hl_shift(one, 0, one, 1, 0.95, &iv), -ENODATA);
	check_int(stats_hl_shift(one, 1, nan_, 3, 0.95, &iv), -EINVAL);
	check_int(stats_hl_shift(one, 1, one, 1, 0, &iv), -EINVAL);
	check_int(stats_hl_shift(one, 1, one, 1, 1, &iv), -EINVAL);
	check_int(stats_hl_shift(one, 1, one, 1, NAN, &iv), -EINVAL);
	check_int(stats_compare(inf_, 2, one, 1, 0.95, false, &c), -EINVAL);
	check_int(stats_min_samples(1.5), -EINVAL);
	/* ret_* untouched on failure */
	check_near(m, 0);   /* the one successful call above: 1000 zeros */
	check_near(s.median, 42);
	check_near(iv.estimate, 42);
	check(stats_verdict(NULL, true) == _STATS_VERDICT_INVALID);
	check(stats_verdict_to_string(_STATS_VERDICT_MAX) == NULL);
	check(stats_verdict_to_string(_STATS_VERDICT_INVALID) == NULL);
}

static const struct {
	size_t n;
	double x[8];
	double median, mad, q1, q3;
} summary_cases[] = {
	{ 1, { 5 }, 5, 0, 5, 5 },
	{ 2, { 3, 1 }, 2, 1, 1.5, 2.5 },
	{ 3, { 10, 30, 20 }, 20, 10, 15, 25 },
	/* sorted 1 2 4 7 11: |x - 4| = 3 2 0 3 7 -> 0 2 3 3 7 */
	{ 5, { 11, 1, 7, 2, 4 }, 4, 3, 2, 7 },
	/* sorted 1 2 3 4 10 20: h(q1) = 1.25, h(q3) = 3.75; |x - 3.5| -> 0.5 0.5 1.5 2.5 6.5 16.5 */
	{ 6, { 20, 1, 4, 10, 2, 3 }, 3.5, 2, 2.25, 8.5 },
};

static void test_summary(void)
{
	for (size_t i = 0; i < ELEMENTSOF(summary_cases); i++) {
		StatsSummary s;
		double m;

		check_int(stats_summarize(summary_cases[i].x, summary_cases[i].n, &s), 0);
		check_int(stats_median(summary_cases[i].x, summary_cases[i].n, &m), 0);
		check_int(s.n, summary_cases[i].n);
		check_near(m, summary_cases[i].median);
		check_near(s.median, summary_cases[i].median);
		check_near(s.mad, summary_cases[i].mad);
		check_near(s.q1, summary_cases[i].q1);
		check_near(s.q3, summary_cases[i].q3);
	}
}

/*
 * Two-sided alpha = 0.05 critical values of the Mann-Whitney U (reject when
 * U <= crit) from the published tables (e.g. Milton 1964, Table 1; Siegel &
 * Castellan, Table J): the interval is [D(crit + 1), D(N - crit)], so
 * k = crit + 1; -1 where the table has "-" (no test at that level).
 */
static const struct {
	size_t n, m;
	int crit;
} crit_cases[] = {
	{ 2, 7, -1 }, { 2, 8, 0 }, { 3, 3, -1 }, { 3, 4, -1 }, { 3, 5, 0 },
	{ 4, 4, 0 }, { 4, 6, 2 }, { 5, 5, 2 }, { 5, 10, 8 }, { 6, 6, 5 },
	{ 7, 7, 8 }, { 8, 8, 13 }, { 9, 9, 17 }, { 10, 10, 23 }, { 10, 20, 55 },
	{ 15, 15, 64 }, { 20, 20, 127 },
};

static void test_critical_values(void)
{
	static double a[20], b[20];

	for (size_t i = 0; i < ELEMENTSOF(a); i++) {
		a[i] = (double)i;
		b[i] = (double)i + 0.25;   /* every difference distinct from its neighbours' */
	}
	for (size_t i = 0; i < ELEMENTSOF(crit_cases); i++) {
		char ctx[32];
		StatsInterval iv;

		snprintf(ctx, sizeof(ctx), "%zu vs %zu", crit_cases[i].n, crit_cases[i].m);
		check_int(stats_hl_shift(a, crit_cases[i].n, b, crit_cases[i].m, 0.95, &iv), 0);
		check_ctx(ctx, iv.exact);
		check_ctx(ctx, iv.available == (crit_cases[i].crit >= 0));
		check_ctx(ctx, iv.k == (crit_cases[i].crit >= 0 ? (size_t)crit_cases[i].crit + 1 : 1));
		check_ctx(ctx, iv.confidence >= 0.95 || !iv.available);
		if (iv.k != (crit_cases[i].crit >= 0 ? (size_t)crit_cases[i].crit + 1 : 1))
			fprintf(stderr, "  [%s] k = %zu\n", ctx, iv.k);
	}
}

static void test_tiny_n(void)
{
	/* the 9 differences b - a, sorted: 2 3 3.5 4 4.5 5.5 6.75 7.75 8.75 */
	const double a[] = { 1, 2, 3 }, b[] = { 5, 6.5, 9.75 };
	const double a4[] = { 1, 2, 3, 4 }, b4[] = { 5, 6, 7, 8 };
	StatsInterval iv;

	check_int(stats_hl_shift(a, 3, b, 3, 0.95, &iv), 0);
	check(!iv.available);
	check_int(iv.k, 1);
	check_int(iv.n_differences, 9);
	check_near(iv.lower, 2);        /* 5 - 3 */
	check_near(iv.upper, 8.75);     /* 9.75 - 1 */
	check_near(iv.confidence, 0.9); /* 1 - 2 / C(6, 3) */
	check_near(iv.estimate, 4.5);
	check(stats_verdict(&iv, false) == STATS_VERDICT_NO_CLEAR_DIFFERENCE);

	/* the same data at 90 %: exactly achievable (1 - 0.9 is not 0.1 in binary) */
	check_int(stats_hl_shift(a, 3, b, 3, 0.9, &iv), 0);
	check(iv.available);
	check_near(iv.confidence, 0.9);
	check(stats_verdict(&iv, false) == STATS_VERDICT_SLOWER);

	check_int(stats_hl_shift(a4, 4, b4, 4, 0.95, &iv), 0);
	check(iv.available);
	check_int(iv.k, 1);
	check_near(iv.confidence, 1 - 2.0 / 70);
	check_near(iv.lower, 1);
	check_near(iv.upper, 7);
	check_near(iv.estimate, 4);

	check_int(stats_min_samples(0.95), 4);
	check_int(stats_min_samples(0.99), 5);
	check_int(stats_min_samples(0.9), 3);
	check_int(stats_min_samples(0.5), 2);
}

static const struct {
	StatsInterval iv;
	bool higher_is_better;
	StatsVerdict want;
} verdict_cases[] = {
	{ { .available = true, .lower = -0.2, .upper = -0.1 }, false, STATS_VERDICT_FASTER },
	{ { .available = true, .lower = -0.2, .upper = -0.1 }, true, STATS_VERDICT_SLOWER },
	{ { .available = true, .lower = 0.1, .upper = 0.2 }, false, STATS_VERDICT_SLOWER },
	{ { .available = true, .lower = 0.1, .upper = 0.2 }, true, STATS_VERDICT_FASTER },
	{ { .available = true, .lower = -0.1, .upper = 0.2 }, true, STATS_VERDICT_NO_CLEAR_DIFFERENCE },
	{ { .available = true, .lower = 0, .upper = 0.2 }, true, STATS_VERDICT_NO_CLEAR_DIFFERENCE },
	{ { .available = true, .lower = -0.2, .upper = 0 }, false, STATS_VERDICT_NO_CLEAR_DIFFERENCE },
	{ { .available = false, .lower = 0.1, .upper = 0.2 }, true, STATS_VERDICT_NO_CLEAR_DIFFERENCE },
};

static void test_verdict(void)
{
	for (size_t i = 0; i < ELEMENTSOF(verdict_cases); i++) {
		StatsVerdict v = stats_verdict(&verdict_cases[i].iv, verdict_cases[i].higher_is_better);

		check_str(stats_verdict_to_string(v), stats_verdict_to_string(verdict_cases[i].want));
	}
}

static void test_compare(void)
{
	/* wall times: B about 20 % lower */
	const double a[] = { 10, 11, 12, 10.5, 11.5 }, b[] = { 8, 8.5, 9, 8.2, 8.8 };
	const double neg_a[] = { -3, -2, -1, -2.5, -1.5 }, neg_b[] = { 1, 2, 3, 2.5, 1.5 };
	StatsComparison c;

	check_int(stats_compare(a, 5, b, 5, 0.95, false, &c), 0);
	check(c.ratio_valid);
	check_near(c.a.median, 11);
	check_near(c.b.median, 8.5);
	check(c.ratio.upper < 0 && c.ratio.lower < c.ratio.estimate && c.ratio.estimate < c.ratio.upper);
	check(c.ratio.estimate > -0.3 && c.ratio.estimate < -0.15);
	check_str(stats_verdict_to_string(c.verdict), "faster");
	check_int(stats_compare(a, 5, b, 5, 0.95, true, &c), 0);
	check_str(stats_verdict_to_string(c.verdict), "slower");
	/* B against itself: the estimate 0, no clear difference */
	check_int(stats_compare(a, 5, a, 5, 0.95, false, &c), 0);
	check_near(c.shift.estimate, 0);
	check_near(c.ratio.estimate, 0);
	check_str(stats_verdict_to_string(c.verdict), "no clear difference");
	/* values <= 0: no ratio, the verdict from the shift */
	check_int(stats_compare(neg_a, 5, neg_b, 5, 0.95, true, &c), 0);
	check(!c.ratio_valid);
	check_near(c.shift.estimate, 4);
	check_str(stats_verdict_to_string(c.verdict), "faster");
}

static void test_normal_approximation(void)
{
	/* 60 vs 60: N = 3600, sigma = sqrt(3600 * 121 / 12), k = floor(1800.5 - 1.959964 sigma) */
	static double a[60], b[60];
	StatsInterval iv;

	for (size_t i = 0; i < ELEMENTSOF(a); i++) {
		a[i] = (double)i;
		b[i] = (double)i + 0.5;
	}
	check_int(stats_hl_shift(a, 60, b, 60, 0.95, &iv), 0);
	check(!iv.exact);
	check(iv.available);
	check_int(iv.k, 1427);
	check(iv.confidence > 0.95 && iv.confidence < 0.951);
	/* 50 vs 50 is the last exact size */
	check_int(stats_hl_shift(a, STATS_EXACT_MAX, b, STATS_EXACT_MAX, 0.95, &iv), 0);
	check(iv.exact);
}

int main(void)
{
	test_bad_input();
	test_summary();
	test_critical_values();
	test_tiny_n();
	test_verdict();
	test_compare();
	test_normal_approximation();
	return test_end("test-stats");
}
