/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/schedstat parsing: version 16 and 17 texts, and malformed ones. */
#include "domains-live.h"
#include "strutil.h"
#include "test.h"

/* A 4-CPU guest: SMT pairs, one MC, as 7.x prints it (fields shortened). */
static const char v17[] =
	"version 17\n"
	"timestamp 4295048735\n"
	"cpu0 0 0 0 0 0 0 1405830522 123456 1049\n"
	"domain0 SMT 00000003 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"domain1 MC 0000000f 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	"cpu1 0 0 0 0 0 0 1 2 3\n"
	"domain0 SMT 00000003 0 0 0\n"
	"domain1 MC 0000000f 0 0 0\n"
	"cpu2 0 0 0 0 0 0 1 2 3\n"
	"domain0 SMT 0000000c 0 0 0\n"
	"domain1 MC 0000000f 0 0 0\n";

static const char v16[] =
	"version 16\n"
	"timestamp 4295048735\n"
	"cpu0 0 0 0 0 0 0 1 2 3\n"
	"domain0 00000000,00000003 0 0 0\n"
	"domain1 ffffffff,ffffffff 0 0 0\n";

static void test_v17(void)
{
	_cleanup_(live_layout_freep) LiveLayout *l = NULL;
	_cleanup_free_ char *a = NULL, *b = NULL;

	check(schedstat_parse(v17, &l) == 0);
	if (!l)
		return;
	check_int(l->schedstat_version, 17);
	check_int(l->n_slots, 3);
	check_int(l->cpus[0].n, 2);
	check_str(l->cpus[0].sd[0].name, "SMT");
	check_str(l->cpus[2].sd[1].name, "MC");
	check(cpuset_format_list(&l->cpus[2].sd[0].span, &a) == 0);
	check_str(a, "2-3");
	check(cpuset_format_list(&l->cpus[1].sd[1].span, &b) == 0);
	check_str(b, "0-3");
	check_int(l->cpus[0].sd[1].level, -1);
}

static void test_v16(void)
{
	_cleanup_(live_layout_freep) LiveLayout *l = NULL;

	check(schedstat_parse(v16, &l) == 0);
	if (!l)
		return;
	check_int(l->schedstat_version, 16);
	check_str(l->cpus[0].sd[0].name, "");
	check_int(cpuset_count(&l->cpus[0].sd[1].span), 64);
}

static const char *const bad[] = {
	"",
	"timestamp 1\ncpu0 0\n",                       /* no version */
	"version x\n",
	"version 17\ndomain0 SMT 3\n",                 /* domain before any cpu */
	"version 17\ncpu0 0\ndomain1 SMT 3\n",         /* gap: domain1 first */
	"version 17\ncpu0 0\ndomain0 SMT\n",           /* no mask */
	"version 17\ncpu0 0\ndomain0 SMT xyz\n",       /* bad mask */
	"version 17\ncpu99999 0\n",                    /* CPU out of range */
	"version 17\ncpuX 0\n",
};

static void test_bad(void)
{
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		LiveLayout *l = NULL;
		int r = schedstat_parse(bad[i], &l);

		check_ctx(bad[i], r < 0);
		check_ctx(bad[i], l == NULL);
	}
}

int main(void)
{
	test_v17();
	test_v16();
	test_bad();
	return test_end("test-schedstat");
}
