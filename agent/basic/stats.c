/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Median, MAD, quartiles and the Hodges-Lehmann shift with its exact
 * Mann-Whitney interval, for `topotunectl trial` (see stats.h for the
 * choices and their reasons). Depends on libc and libm only.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "stats.h"

/*
 * Levels within this relative distance of an achievable one count as
 * achieved: 1 - 0.9 is 0.09999999999999998 in binary, and 3 vs 3 must still
 * give its 90 % interval when asked for 0.9.
 */
#define LEVEL_SLACK 1e-9

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static int check_sample(const double *x, size_t n)
{
	if (n == 0)
		return -ENODATA;
	if (!x)
		return -EINVAL;
	if (n > STATS_SAMPLES_MAX)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -EINVAL;
	return 0;
}

static int check_confidence(double c)
{
	return isfinite(c) && c > 0 && c < 1 ? 0 : -EINVAL;
}

/* A sorted copy of the sample @x, after check_sample(). */
static int sorted_copy(const double *x, size_t n, double **ret)
{
	double *s;
	int r;

	r = check_sample(x, n);
	if (r < 0)
		return r;
	s = malloc(n * sizeof(double));
	if (!s)
		return -ENOMEM;
	memcpy(s, x, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	*ret = s;
	return 0;
}

static double median_sorted(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Type 7: h = (n - 1) p, interpolate between s[floor(h)] and the next. */
static double quantile_sorted(const double *s, size_t n, double p)
{
	double h = (double)(n - 1) * p;
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return s[n - 1];
	return s[lo] + (h - (double)lo) * (s[lo + 1] - s[lo]);
}

int stats_median(const double *x, size_t n, double *ret)
{
	_cleanup_free_ double *s = NULL;
	int r;

	assert(ret);

	r = sorted_copy(x, n, &s);
	if (r < 0)
		return r;
	*ret = median_sorted(s, n);
	return 0;
}

int stats_summarize(const double *x, size_t n, StatsSummary *ret)
{
	_cleanup_free_ double *s = NULL;
	StatsSummary sum = { .n = n };
	int r;

	assert(ret);

	r = sorted_copy(x, n, &s);
	if (r < 0)
		return r;
	sum.min = s[0];
	sum.max = s[n - 1];
	sum.median = median_sorted(s, n);
	sum.q1 = quantile_sorted(s, n, 0.25);
	sum.q3 = quantile_sorted(s, n, 0.75);
	/* the deviations, sorted in place of the values, which are no longer needed */
	for (size_t i = 0; i < n; i++)
		s[i] = fabs(s[i] - sum.median);
	qsort(s, n, sizeof(double), cmp_double);
	sum.mad = median_sorted(s, n);
	*ret = sum;
	return 0;
}

/* Standard normal distribution function. */
static double norm_cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

/* Its inverse for p in (0.5, 1), by bisection: slow, but only called once per comparison. */
static double norm_quantile_upper(double p)
{
	double lo = 0, hi = 40;

	for (int i = 0; i < 200 && hi - lo > 0; i++) {
		double mid = (lo + hi) / 2;

		if (mid == lo || mid == hi)
			break;
		if (norm_cdf(mid) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * Exact lower tail of the Mann-Whitney U statistic under the null
 * hypothesis: the number of the C(n+m, n) equally likely orderings with
 * U = u is the coefficient of q^u in the Gaussian binomial [n+m, n]_q, from
 * f(i, j) = f(i - 1, j) + q^i f(i, j - 1) (the largest of all i + j values is
 * an a, adding no pair, or a b, above all i a's). Integer counts: exact up to
 * C(100, 50) ~ 1e29 < 2^127. Only u <= N/2 is kept (terms only move up).
 *
 * Returns k: the largest k >= 1 with P(U <= k - 1) <= alpha / 2, or 0 when
 * even P(U = 0) is too big; *ret_tail is P(U <= k - 1) (P(U = 0) for 0).
 */
typedef unsigned __int128 u128;

static int exact_k(size_t n, size_t m, double alpha, size_t *ret_k, double *ret_tail)
{
	_cleanup_free_ u128 *f = NULL;
	size_t len = n * m / 2 + 1, k = 0;
	u128 total = 0, cum = 0;
	long double limit;

	f = calloc((m + 1) * len, sizeof(u128));
	if (!f)
		return -ENOMEM;
	for (size_t j = 0; j <= m; j++)
		f[j * len] = 1;                 /* f(0, j) = 1 */
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) /* f(i, 0) = 1 stays */
			for (size_t u = i; u < len; u++)
				f[j * len + u] += f[(j - 1) * len + u - i];

	/* C(n + m, n), computed apart because only half the coefficients are kept */
	total = 1;
	for (size_t i = 1; i <= n; i++)
		total = total * (m + i) / i;    /* exact at every step: C(m + i, i) */

	limit = (long double)alpha / 2 * (long double)total * (1 + LEVEL_SLACK);
	for (size_t u = 0; u < len; u++) {
		if ((long double)(cum + f[m * len + u]) > limit)
			break;
		cum += f[m * len + u];
		k = u + 1;
	}
	*ret_k = k;
	*ret_tail = (double)((long double)(k ? cum : f[m * len]) / (long double)total);
	return 0;
}

/* The same k from the normal approximation with continuity correction. */
static void normal_k(size_t n, size_t m, double alpha, size_t *ret_k, double *ret_tail)
{
	double N = (double)n * (double)m;
	double sigma = sqrt(N * (double)(n + m + 1) / 12);
	double z = norm_quantile_upper(1 - alpha / 2);
	double k = floor(N / 2 + 0.5 - z * sigma);

	if (k < 1) {
		*ret_k = 0;
		*ret_tail = norm_cdf((0.5 - N / 2) / sigma);
		return;
	}
	*ret_k = (size_t)k;
	*ret_tail = norm_cdf((k - 1 + 0.5 - N / 2) / sigma);
}

int stats_hl_shift(const double *a, size_t n_a, const double *b, size_t n_b,
		   double confidence, StatsInterval *ret)
{
	_cleanup_free_ double *d = NULL;
	StatsInterval iv = {};
	size_t N, k;
	double tail;
	int r;

	assert(ret);

	r = check_sample(a, n_a);
	if (r < 0)
		return r;
	r = check_sample(b, n_b);
	if (r < 0)
		return r;
	r = check_confidence(confidence);
	if (r < 0)
		return r;

	N = n_a * n_b;
	d = malloc(N * sizeof(double));
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < n_a; i++)
		for (size_t j = 0; j < n_b; j++)
			d[i * n_b + j] = b[j] - a[i];
	qsort(d, N, sizeof(double), cmp_double);

	iv.n_differences = N;
	iv.estimate = median_sorted(d, N);
	iv.exact = n_a <= STATS_EXACT_MAX && n_b <= STATS_EXACT_MAX;
	if (iv.exact) {
		r = exact_k(n_a, n_b, 1 - confidence, &k, &tail);
		if (r < 0)
			return r;
	} else
		normal_k(n_a, n_b, 1 - confidence, &k, &tail);

	iv.available = k >= 1;
	iv.k = iv.available ? k : 1;
	iv.lower = d[iv.k - 1];
	iv.upper = d[N - iv.k];
	/*
	 * Unavailable: the widest interval [D(1), D(N)] misses the shift only
	 * when U is 0 or N, so it covers with 1 - 2 P(U = 0).
	 */
	iv.confidence = 1 - 2 * tail;
	*ret = iv;
	return 0;
}

static const char *const verdict_table[_STATS_VERDICT_MAX] = {
	[STATS_VERDICT_NO_CLEAR_DIFFERENCE] = "no clear difference",
	[STATS_VERDICT_FASTER] = "faster",
	[STATS_VERDICT_SLOWER] = "slower",
};

const char *stats_verdict_to_string(StatsVerdict v)
{
	if (v < 0 || v >= _STATS_VERDICT_MAX)
		return NULL;
	return verdict_table[v];
}

StatsVerdict stats_verdict(const StatsInterval *i, bool higher_is_better)
{
	if (!i)
		return _STATS_VERDICT_INVALID;
	if (!i->available)
		return STATS_VERDICT_NO_CLEAR_DIFFERENCE;
	if (i->lower > 0)   /* B above A */
		return higher_is_better ? STATS_VERDICT_FASTER : STATS_VERDICT_SLOWER;
	if (i->upper < 0)   /* B below A */
		return higher_is_better ? STATS_VERDICT_SLOWER : STATS_VERDICT_FASTER;
	return STATS_VERDICT_NO_CLEAR_DIFFERENCE;
}

static bool all_positive(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(x[i] > 0))
			return false;
	return true;
}

static int log_copy(const double *x, size_t n, double **ret)
{
	double *l = malloc(n * sizeof(double));

	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		l[i] = log(x[i]);
	*ret = l;
	return 0;
}

int stats_compare(const double *a, size_t n_a, const double *b, size_t n_b,
		  double confidence, bool higher_is_better, StatsComparison *ret)
{
	StatsComparison c = {};
	int r;

	assert(ret);

	r = stats_summarize(a, n_a, &c.a);
	if (r < 0)
		return r;
	r = stats_summarize(b, n_b, &c.b);
	if (r < 0)
		return r;
	r = stats_hl_shift(a, n_a, b, n_b, confidence, &c.shift);
	if (r < 0)
		return r;

	c.ratio_valid = all_positive(a, n_a) && all_positive(b, n_b);
	if (c.ratio_valid) {
		_cleanup_free_ double *la = NULL, *lb = NULL;

		r = log_copy(a, n_a, &la);
		if (r < 0)
			return r;
		r = log_copy(b, n_b, &lb);
		if (r < 0)
			return r;
		r = stats_hl_shift(la, n_a, lb, n_b, confidence, &c.ratio);
		if (r < 0)
			return r;
		c.ratio.estimate = expm1(c.ratio.estimate);
		c.ratio.lower = expm1(c.ratio.lower);
		c.ratio.upper = expm1(c.ratio.upper);
	}
	c.verdict = stats_verdict(c.ratio_valid ? &c.ratio : &c.shift, higher_is_better);
	*ret = c;
	return 0;
}

int stats_min_samples(double confidence)
{
	if (check_confidence(confidence) < 0)
		return -EINVAL;
	/* n vs n: an interval exists once P(U = 0) = 1 / C(2n, n) <= alpha / 2 */
	for (unsigned n = 1; n <= STATS_SAMPLES_MAX; n++) {
		double c = 1;

		for (unsigned i = 1; i <= n; i++)
			c = c * (n + i) / i;
		if (2 / c <= (1 - confidence) * (1 + LEVEL_SLACK))
			return (int)n;
	}
	return -ERANGE;
}
