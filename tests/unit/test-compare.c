/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Predicted against reported domains: equal layouts, and each kind of difference. */
#include "compare.h"
#include "strutil.h"
#include "test.h"
#include "topo-build.h"

static const CpuIdentity intel = { .vendor = CPU_VENDOR_INTEL, .arch = "x86", .have_family = true, .family = 6,
				   .model = 0x55 };

/* 1 package, 2 cores x 2 threads, 1 node: SMT {0,2} {1,3}; MC 0-3. */
static const TopoSpec tiny = { 1, 2, 2, 1, 0, NULL, NULL };

static DomainLayout *predict(int relax)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	DomainLayout *l = NULL;
	KernelCaps k;
	DomainInput in;

	check(topo_build(&tiny, &t) == 0);
	kernel_caps_patched(&k);
	in = (DomainInput) { t, &intel, &k, &t->online, relax };
	check(domains_predict(&in, &l) == 0);
	kernel_caps_done(&k);
	return l;
}

static const char schedstat[] =
	"version 17\ntimestamp 1\n"
	"cpu0 0\ndomain0 SMT 5 0\ndomain1 MC f 0\n"
	"cpu1 0\ndomain0 SMT a 0\ndomain1 MC f 0\n"
	"cpu2 0\ndomain0 SMT 5 0\ndomain1 MC f 0\n"
	"cpu3 0\ndomain0 SMT a 0\ndomain1 MC f 0\n";

static void test_equal(void)
{
	_cleanup_(domain_layout_freep) DomainLayout *p = predict(-1);
	_cleanup_(live_layout_freep) LiveLayout *l = NULL;
	_cleanup_strv_free_ char **d = NULL;

	check(schedstat_parse(schedstat, &l) == 0);
	/* debugfs, as a guest with sched_verbose shows it */
	l->cpus[0].sd[0].level = 0;
	l->cpus[0].sd[1].level = 2;
	l->cpus[0].sd[0].flags = strdup("SD_BALANCE_NEWIDLE SD_BALANCE_EXEC SD_BALANCE_FORK SD_WAKE_AFFINE "
					"SD_SHARE_CPUCAPACITY SD_SHARE_LLC SD_PREFER_SIBLING");
	check_int(domains_compare(p, l, 10, &d), 0);
	check_int(strv_length(d), 0);
}

static void test_differences(void)
{
	_cleanup_(domain_layout_freep) DomainLayout *p = predict(1);
	_cleanup_(live_layout_freep) LiveLayout *l = NULL;
	_cleanup_strv_free_ char **d = NULL;
	_cleanup_free_ char *all = NULL;
	StrBuf b = {};

	check(schedstat_parse(schedstat, &l) == 0);
	/* relax 1 clears NEWIDLE at MC (level 2); the kernel here kept it. */
	l->cpus[0].sd[1].level = 2;
	l->cpus[0].sd[1].flags = strdup("SD_BALANCE_NEWIDLE SD_BALANCE_EXEC SD_BALANCE_FORK SD_WAKE_AFFINE "
					"SD_SHARE_LLC SD_PREFER_SIBLING");
	cpuset_remove(&l->cpus[3].sd[1].span, 0);
	snprintf(l->cpus[2].sd[0].name, sizeof(l->cpus[2].sd[0].name), "CLS");
	/* the kernel attached one domain fewer */
	cpuset_done(&l->cpus[1].sd[1].span);
	l->cpus[1].n = 1;
	check_int(domains_compare(p, l, 10, &d), 4);
	STRV_FOREACH(s, d)
		strbuf_appendf(&b, "%s\n", *s);
	check(strbuf_steal(&b, &all) == 0);
	check_str(all,
		  "cpu0 domain1: flags differ: kernel has [BALANCE_NEWIDLE], lacks []\n"
		  "cpu1: 1 domains, predicted 2\n"
		  "cpu2 domain0: name CLS, predicted SMT\n"
		  "cpu3 domain1: span 1-3, predicted 0-3\n");
	strv_free(d);
	d = NULL;
	/* Only @max lines, but every difference counted. */
	check_int(domains_compare(p, l, 1, &d), 4);
	check_int(strv_length(d), 1);
}

static void test_flags_parse(void)
{
	unsigned f;

	check(domain_flags_parse("SD_BALANCE_NEWIDLE SD_NUMA", &f) == 0);
	check_int(f, SD_BALANCE_NEWIDLE | SD_NUMA);
	check(domain_flags_parse("", &f) == 0);
	check_int(f, 0);
	check(domain_flags_parse("SD_FROBNICATE", &f) == -EBADMSG);
}

int main(void)
{
	test_equal();
	test_differences();
	test_flags_parse();
	return test_end("test-compare");
}
