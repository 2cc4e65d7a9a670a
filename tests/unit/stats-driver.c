/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs stats_compare() on samples from the command line and prints every
 * field as key=value with full precision, for test-stats.py to compare with
 * scipy:  stats-driver CONFIDENCE lower|higher A1,A2,... B1,B2,...
 * Exit status 0, or 1 with "error=-ERRNO" when stats_compare() fails.
 */
#include <stdlib.h>

#include "macro.h"
#include "stats.h"

static int parse_list(const char *s, double **ret, size_t *ret_n)
{
	_cleanup_free_ double *v = NULL;
	size_t n = 0;

	v = calloc(strlen(s) + 1, sizeof(double));
	if (!v)
		return -ENOMEM;
	while (*s) {
		char *end;

		v[n++] = strtod(s, &end);
		if (end == s || (*end && *end != ','))
			return -EINVAL;
		s = *end ? end + 1 : end;
	}
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

static void print_summary(const char *p, const StatsSummary *s)
{
	printf("%s.n=%zu\n%s.median=%.17g\n%s.mad=%.17g\n%s.q1=%.17g\n%s.q3=%.17g\n%s.min=%.17g\n%s.max=%.17g\n",
	       p, s->n, p, s->median, p, s->mad, p, s->q1, p, s->q3, p, s->min, p, s->max);
}

static void print_interval(const char *p, const StatsInterval *i)
{
	printf("%s.estimate=%.17g\n%s.lower=%.17g\n%s.upper=%.17g\n%s.confidence=%.17g\n"
	       "%s.k=%zu\n%s.n_differences=%zu\n%s.available=%d\n%s.exact=%d\n",
	       p, i->estimate, p, i->lower, p, i->upper, p, i->confidence,
	       p, i->k, p, i->n_differences, p, i->available, p, i->exact);
}

int main(int argc, char **argv)
{
	_cleanup_free_ double *a = NULL, *b = NULL;
	size_t n_a = 0, n_b = 0;
	StatsComparison c;
	int r;

	if (argc != 5 || parse_list(argv[3], &a, &n_a) < 0 || parse_list(argv[4], &b, &n_b) < 0) {
		fprintf(stderr, "usage: stats-driver CONFIDENCE lower|higher A1,A2,... B1,B2,...\n");
		return 2;
	}
	r = stats_compare(a, n_a, b, n_b, strtod(argv[1], NULL), streq(argv[2], "higher"), &c);
	if (r < 0) {
		printf("error=%d\n", r);
		return 1;
	}
	print_summary("a", &c.a);
	print_summary("b", &c.b);
	print_interval("shift", &c.shift);
	printf("ratio.valid=%d\n", c.ratio_valid);
	if (c.ratio_valid)
		print_interval("ratio", &c.ratio);
	printf("verdict=%s\n", stats_verdict_to_string(c.verdict));
	printf("min_samples=%d\n", stats_min_samples(strtod(argv[1], NULL)));
	return 0;
}
