/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Statistics for comparing a few benchmark rounds per profile
 * (`topotunectl trial`). Pure: values in, values out; no global state,
 * nothing allocated survives a call. Errors: -ENODATA for an empty sample,
 * -EINVAL for a NaN or infinite value or a confidence outside (0, 1),
 * -E2BIG for more than STATS_SAMPLES_MAX values in one sample, -ENOMEM.
 *
 * Location: the median.
 *
 * Spread: the median absolute deviation from the median (MAD), unscaled
 * (scipy.stats.median_abs_deviation(x, scale=1.0)). Chosen over the standard
 * deviation because one disturbed round (a cron job, a page-cache flush) must
 * not dominate it, and over the IQR because it needs no choice of quantile
 * definition; the quartiles (linear interpolation between order statistics,
 * R's type 7, numpy's default) are reported too, for those who want the IQR.
 *
 * Difference of profile B to the reference A: the Hodges-Lehmann estimator
 * with the exact distribution-free confidence interval of the Mann-Whitney /
 * Wilcoxon rank-sum test (Lehmann 1963; Bauer 1972; Hollander & Wolfe,
 * "Nonparametric Statistical Methods", 4.3). With the N = n_a * n_b pairwise
 * differences D = b_j - a_i sorted ascending, the estimate is their median
 * and the interval is [D(k), D(N + 1 - k)], where k - 1 is the largest U with
 * P(U <= k - 1) <= alpha / 2 under the null distribution of the Mann-Whitney
 * U statistic. The interval is the set of shifts d for which the two-sided
 * rank-sum test of (B - d) against A does not reject at level alpha; its
 * coverage holds for any continuous distribution of the rounds, which a
 * bootstrap does not promise at 3-10 rounds. The null distribution is
 * computed exactly (integer counts, q-binomial recurrence) while both
 * samples have at most STATS_EXACT_MAX values; above that, k comes from the
 * normal approximation with continuity correction
 * (k = floor(N/2 + 1/2 - z * sqrt(N (n_a + n_b + 1) / 12)), no tie
 * correction).
 *
 * The discrete null distribution means only some confidence levels exist:
 * the interval reports the level it achieves (>= the one asked for). With
 * 3 rounds against 3 no 95 % interval exists at all (P(U = 0) = 1/20 >
 * 0.025): then `available` is false, [lower, upper] is the widest interval
 * [D(1), D(N)] and `confidence` says what it achieves (90 % at 3 vs 3), and
 * the verdict is "no clear difference". stats_min_samples() says how many
 * rounds a level needs (95 %: 4 per profile).
 *
 * Relative difference: the same construction on the logarithms of the
 * samples, so the estimate is the Hodges-Lehmann ratio exp(median(ln b_j -
 * ln a_i)) - 1 and the interval is exp(D(k)) - 1 .. exp(D(N + 1 - k)) - 1.
 * It answers "B takes x % more/less than A" under a multiplicative model,
 * which is how scheduler effects on run times and throughputs behave, and
 * the interval keeps the exact coverage above. Dividing the shift by A's
 * median instead would treat that median as a known constant and lose the
 * coverage. It needs every sample > 0 (times, rates); otherwise only the
 * shift in the metric's unit is given (`ratio_valid` false).
 */

/* At most this many values per sample (N = n_a * n_b differences are sorted). */
#define STATS_SAMPLES_MAX 1000U
/* Exact null distribution while both samples have at most this many values. */
#define STATS_EXACT_MAX 50U

typedef struct StatsSummary {
	size_t n;
	double min, max;
	double median;
	double mad;     /* median of |x - median|, unscaled */
	double q1, q3;  /* quartiles, linear interpolation (type 7) */
} StatsSummary;

int stats_median(const double *x, size_t n, double *ret);
int stats_summarize(const double *x, size_t n, StatsSummary *ret);

typedef struct StatsInterval {
	double estimate;        /* Hodges-Lehmann: median of the N differences */
	double lower, upper;    /* D(k), D(N + 1 - k); the widest pair when !available */
	double confidence;      /* the level [lower, upper] achieves (exact, or normal approximation) */
	size_t k;               /* 1-based rank of lower among the sorted differences */
	size_t n_differences;   /* N = n_a * n_b */
	bool available;         /* an interval of at least the asked level exists at these n */
	bool exact;             /* exact null distribution (else normal approximation) */
} StatsInterval;

/* The shift of B relative to A (B - A) with the interval at @confidence (e.g. 0.95). */
int stats_hl_shift(const double *a, size_t n_a, const double *b, size_t n_b,
		   double confidence, StatsInterval *ret);

typedef enum StatsVerdict {
	STATS_VERDICT_NO_CLEAR_DIFFERENCE,
	STATS_VERDICT_FASTER,   /* B better than A: lower if lower is better, higher otherwise */
	STATS_VERDICT_SLOWER,
	_STATS_VERDICT_MAX,
	_STATS_VERDICT_INVALID = -EINVAL,
} StatsVerdict;

/* "faster", "slower", "no clear difference"; NULL when out of range. */
const char *stats_verdict_to_string(StatsVerdict v);

/*
 * Faster or slower only when an interval at the asked level exists and lies
 * entirely on one side of 0 (an endpoint at exactly 0 is no clear
 * difference). Works on a shift or a ratio interval: both have B = A at 0.
 */
StatsVerdict stats_verdict(const StatsInterval *i, bool higher_is_better);

typedef struct StatsComparison {
	StatsSummary a, b;
	StatsInterval shift;    /* B - A, in the metric's unit */
	StatsInterval ratio;    /* B / A - 1 (0.05 = B is 5 % higher); valid when ratio_valid */
	bool ratio_valid;       /* every sample > 0 */
	StatsVerdict verdict;   /* from ratio when valid, else from shift (same sign rule) */
} StatsComparison;

/* Everything `trial` prints for profile B against the reference A. */
int stats_compare(const double *a, size_t n_a, const double *b, size_t n_b,
		  double confidence, bool higher_is_better, StatsComparison *ret);

/*
 * The smallest n such that n rounds per profile give an exact interval at
 * @confidence (0.95 -> 4, 0.99 -> 5), or -EINVAL.
 */
int stats_min_samples(double confidence);
