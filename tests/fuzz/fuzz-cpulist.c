/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cpulist and hex-mask parsing (agent/basic/cpuset.c): never crash, and
 * whatever parses formats back to a list that parses to the same set.
 */
#include "cpuset.h"
#include "fuzz.h"

static void check_round_trip(const CpuSet *set)
{
	CpuSet again = {};
	char *text = NULL;
	const char *bad = NULL;

	fuzz_assert(cpuset_format_list(set, &text) >= 0);
	fuzz_assert(cpuset_parse_list(text, &again, &bad) >= 0);
	fuzz_assert(cpuset_equal(set, &again));
	fuzz_assert(cpuset_count(set) == cpuset_count(&again));
	if (!cpuset_is_empty(set)) {
		fuzz_assert(cpuset_first(set) >= 0);
		fuzz_assert((unsigned)cpuset_last(set) < CPUSET_MAX_CPUS);
	}
	cpuset_done(&again);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	CpuSet list = {}, mask = {};
	const char *bad = NULL;
	int r;

	r = cpuset_parse_list(s, &list, &bad);
	if (r >= 0)
		check_round_trip(&list);
	else if (bad)
		/* The error position points into the input. */
		fuzz_assert(bad >= s && bad <= s + strlen(s));

	r = cpuset_parse_mask(s, &mask);
	if (r >= 0) {
		check_round_trip(&mask);
		/* Set algebra on the two results must stay consistent. */
		if (!cpuset_is_empty(&list)) {
			CpuSet u = {};

			fuzz_assert(cpuset_copy(&u, &list) >= 0);
			fuzz_assert(cpuset_or(&u, &mask) >= 0);
			fuzz_assert(cpuset_is_subset(&list, &u) && cpuset_is_subset(&mask, &u));
			cpuset_andnot(&u, &mask);
			fuzz_assert(!cpuset_intersects(&u, &mask));
			cpuset_done(&u);
		}
	}

	cpuset_done(&list);
	cpuset_done(&mask);
	free(s);
	return 0;
}
