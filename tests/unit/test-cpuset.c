/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpulist / cpumask parsing and formatting, including every bad-input class. */
#include "cpuset.h"
#include "macro.h"
#include "test.h"

static const struct {
	const char *in;
	const char *want;   /* formatted list, or NULL if it must be rejected */
	const char *bad;    /* offending text for rejected input */
} list_cases[] = {
	{ "", "", NULL },
	{ "0", "0", NULL },
	{ "0-3", "0-3", NULL },
	{ "0-3,8,10-11\n", "0-3,8,10-11", NULL },
	{ "3,2,1,0", "0-3", NULL },
	{ "0-15,320-335", "0-15,320-335", NULL },
	{ "0-15:2/4", "0-1,4-5,8-9,12-13", NULL },
	{ "8191", "8191", NULL },
	{ "3-1", NULL, "3-1" },
	{ "1,,2", NULL, ",2" },
	{ "0-99999", NULL, "0-99999" },
	{ "8192", NULL, "8192" },
	{ "1-2x", NULL, "x" },
	{ "1 2", NULL, "2" },
	{ ",1", NULL, ",1" },
	{ "1,", NULL, "" },
	{ "-1", NULL, "-1" },
	{ "0-3:0/4", NULL, "0-3:0/4" },
	{ "0-3:5/4", NULL, "0-3:5/4" },
	{ "a", NULL, "a" },
};

static void test_parse_list(void)
{
	for (size_t i = 0; i < ELEMENTSOF(list_cases); i++) {
		CpuSet s = {};
		const char *bad = NULL;
		int r;

		r = cpuset_parse_list(list_cases[i].in, &s, &bad);
		if (list_cases[i].want) {
			_cleanup_free_ char *f = NULL;

			check_ctx(list_cases[i].in, r == 0);
			check_ctx(list_cases[i].in, cpuset_format_list(&s, &f) == 0);
			check_str(f, list_cases[i].want);
		} else {
			check_ctx(list_cases[i].in, r < 0);
			check_str(bad, list_cases[i].bad);
			check_ctx(list_cases[i].in, cpuset_is_empty(&s));
		}
		cpuset_done(&s);
	}
}

static const struct {
	const char *in;
	const char *want;
} mask_cases[] = {
	{ "00000003", "0-1" },
	{ "ff,00000000", "32-39" },
	{ "00000000,00000000,00000001\n", "0" },
	{ "80000000,00000001", "0,63" },
	{ "0", "" },
	{ "zz", NULL },
	{ "", NULL },
};

static void test_parse_mask(void)
{
	for (size_t i = 0; i < ELEMENTSOF(mask_cases); i++) {
		CpuSet s = {};
		int r = cpuset_parse_mask(mask_cases[i].in, &s);

		if (mask_cases[i].want) {
			_cleanup_free_ char *f = NULL;

			check_ctx(mask_cases[i].in, r == 0);
			check_ctx(mask_cases[i].in, cpuset_format_list(&s, &f) == 0);
			check_str(f, mask_cases[i].want);
		} else
			check_ctx(mask_cases[i].in, r == -EINVAL);
		cpuset_done(&s);
	}
}

/* The mask the applier writes to default_smp_affinity and the workqueue cpumask, as bitmap_parse() reads it. */
static void test_format_mask(void)
{
	static const struct {
		const char *list;
		const char *want;
	} cases[] = {
		{ "", "0" },
		{ "0", "1" },
		{ "0-2,4-6", "77" },
		{ "0-31", "ffffffff" },
		{ "32", "1,00000000" },
		{ "0,63", "80000000,00000001" },
		{ "8191", "80000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000" },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_free_ char *m = NULL, *back = NULL;
		CpuSet s = {}, t = {};

		check_ctx(cases[i].list, cpuset_parse_list(cases[i].list, &s, NULL) == 0);
		check_ctx(cases[i].list, cpuset_format_mask(&s, &m) == 0);
		check_str(m, cases[i].want);
		/* And back: what the kernel prints is what it reads. */
		check_ctx(cases[i].list, m && cpuset_parse_mask(m, &t) == 0 && cpuset_equal(&s, &t));
		cpuset_done(&s);
		cpuset_done(&t);
	}
}

static void test_algebra(void)
{
	CpuSet a = {}, b = {}, c = {};
	_cleanup_free_ char *f = NULL;

	check(cpuset_parse_list("0-7", &a, NULL) == 0);
	check(cpuset_parse_list("4-11,200", &b, NULL) == 0);
	check(cpuset_intersects(&a, &b));
	check(!cpuset_is_subset(&b, &a));
	check(cpuset_copy(&c, &a) == 0);
	check(cpuset_or(&c, &b) == 0);
	check_int(cpuset_count(&c), 13);
	check_int(cpuset_last(&c), 200);
	cpuset_andnot(&c, &a);
	check(cpuset_format_list(&c, &f) == 0);
	check_str(f, "8-11,200");
	cpuset_and(&a, &b);
	check_int(cpuset_first(&a), 4);
	check_int(cpuset_count(&a), 4);
	check(cpuset_add(&a, CPUSET_MAX_CPUS) == -ERANGE);
	cpuset_done(&a);
	cpuset_done(&b);
	cpuset_done(&c);
}

/*
 * Sets of different lengths: a set that grew past a member later removed
 * is longer than its value needs, and equal to, a subset of, or the
 * intersection with a short set all the same.
 */
static void test_lengths(void)
{
	CpuSet s = {}, l = {}, t = {};

	check(cpuset_parse_list("1,3", &s, NULL) == 0);
	check(cpuset_parse_list("1,3,300", &l, NULL) == 0);
	check(!cpuset_equal(&s, &l) && !cpuset_equal(&l, &s));
	check(cpuset_is_subset(&s, &l) && !cpuset_is_subset(&l, &s));
	cpuset_remove(&l, 300);
	check(l.n_words > s.n_words);
	check(cpuset_equal(&s, &l) && cpuset_equal(&l, &s));
	check(cpuset_hash(&s) == cpuset_hash(&l));
	check(cpuset_is_subset(&s, &l) && cpuset_is_subset(&l, &s));
	check(cpuset_parse_list("3,200-210", &t, NULL) == 0);
	cpuset_and(&t, &s);
	check_int(cpuset_count(&t), 1);
	check_int(cpuset_last(&t), 3);
	check(cpuset_parse_list("1-3,200-210", &t, NULL) == 0);
	cpuset_andnot(&t, &s);
	check_int(cpuset_count(&t), 12);
	check_int(cpuset_first(&t), 2);
	check(cpuset_add(&l, 200) == 0);
	check(!cpuset_equal(&s, &l) && !cpuset_is_subset(&l, &s));
	check(cpuset_hash(&s) != cpuset_hash(&l));
	cpuset_done(&s);
	cpuset_done(&l);
	cpuset_done(&t);
}

int main(void)
{
	test_parse_list();
	test_parse_mask();
	test_format_mask();
	test_algebra();
	test_lengths();
	return test_end("test-cpuset");
}
