/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trial's workload presets: names and NAME:N, the command line each expands
 * to on a fixed machine, the metric read from recorded outputs.
 *
 *   test-trial-presets              the table checks
 *   test-trial-presets --run DIR    also run every preset whose program is
 *                                   found (DIR: the build's bench/kernel),
 *                                   seconds-long, and read its metric
 */
#include <sys/wait.h>

#include "macro.h"
#include "strutil.h"
#include "test.h"
#include "trial-presets.h"

/* 12 CPUs in 6 nodes of 2, 6 x 8 MiB L3: the kernel tier's Hygon guest */
static TrialPresetEnv guest_env(bool smoke)
{
	TrialPresetEnv e = {};

	check_int(trial_preset_env_init(&e, 12, 2, 2, 6ULL * 8 * 1024 * 1024, smoke), 0);
	return e;
}

static char *join(char **argv)
{
	_cleanup_(strbuf_done) StrBuf b = {};
	char *s = NULL;

	STRV_FOREACH(a, argv)
		strbuf_appendf(&b, "%s%s", a == argv ? "" : " ", *a);
	return strbuf_steal(&b, &s) < 0 ? NULL : s;
}

static const struct {
	const char *spec;
	bool smoke;
	const char *want;       /* NULL: rejected */
} argv_cases[] = {
	{ "hackbench", false, "P -g 8 -l 1000" },
	{ "hackbench:128", false, "P -g 128 -l 1000" },
	{ "hackbench:2", true, "P -g 2 -l 20" },
	{ "schbench", false, "P -m 2 -t 6 -r 30" },
	{ "schbench:32", false, "P -m 2 -t 32 -r 30" },
	{ "schbench-rps", true, "P -m 2 -t 6 -r 3" },
	/* each array 4 x the 48 MiB of L3: 4 x 48 MiB / 8 B elements */
	{ "stream-copy", false, "P -n 25165824 -r 10 -t 12" },
	{ "stream-triad:4", true, "P -n 200000 -r 3 -t 4" },
	/* node 0 (2 CPUs) and half of node 1: CPUs 0-2, as workloads.sh --smoke printed */
	{ "stress-ng-taskset", true,
	  "P --taskset 0-2 --cpu 3 --cpu-method float128 --metrics --timeout 3s --temp-path /tmp" },
	{ "stress-ng-taskset:95", false,
	  "P --taskset 0-95 --cpu 96 --cpu-method float128 --metrics --timeout 30s --temp-path /tmp" },
	{ "hackbench:0", false, NULL },
	{ "hackbench:", false, NULL },
	{ "hackbench:-1", false, NULL },
	{ "hackbench:0x10", false, NULL },
	{ "hackbench:1000001", false, NULL },
	{ "hackbench:8:8", false, NULL },
	{ "hackbench :8", false, NULL },
	{ "nosuch", false, NULL },
	{ "", false, NULL },
};

static void test_argv(void)
{
	for (size_t i = 0; i < ELEMENTSOF(argv_cases); i++) {
		TrialPresetEnv env = guest_env(argv_cases[i].smoke);
		_cleanup_strv_free_ char **argv = NULL;
		_cleanup_free_ char *param = NULL, *s = NULL;
		const TrialPreset *p = NULL;
		int r;

		r = trial_preset_parse(argv_cases[i].spec, &p, &param);
		if (!argv_cases[i].want) {
			check_ctx(argv_cases[i].spec, r < 0);
			check_ctx(argv_cases[i].spec, !param);
			continue;
		}
		check_ctx(argv_cases[i].spec, r == 0);
		if (r < 0)
			continue;
		check_int(trial_preset_argv(p, &env, "P", param, &argv), 0);
		s = join(argv);
		check_str(s, argv_cases[i].want);
	}
	check_int(trial_preset_parse("nosuch:3", &(const TrialPreset *){ NULL }, &(char *){ NULL }), -ENOENT);
}

static void test_env(void)
{
	TrialPresetEnv e;

	check_int(trial_preset_env_init(&e, 0, 0, 0, 0, false), -EINVAL);
	/* the Hygon 7447v host: 384 CPUs, 32 per node, 48 L3s of 32 MiB */
	check_int(trial_preset_env_init(&e, 384, 32, 32, 48ULL * 32 * 1024 * 1024, false), 0);
	check_int(e.taskset_max, 47);                   /* node 0 and half of node 1 */
	check_int(e.stream_elements, 805306368);        /* 4 x 1.5 GiB / 8 */
	check_int(e.seconds, 30);
	/* one node: 3/4 of the CPUs */
	check_int(trial_preset_env_init(&e, 16, 16, 0, 0, false), 0);
	check_int(e.taskset_max, 11);
	check_int(e.stream_elements, 10000000);         /* STREAM's floor without L3 figures */
	check_int(trial_preset_env_init(&e, 1, 1, 0, 0, false), 0);
	check_int(e.taskset_max, 1);
}

/* Outputs recorded from the programs (versions named) and from schbench's two formats. */
static const struct {
	const char *preset;
	const char *output;
	double want;            /* < 0: no metric in this output */
} metric_cases[] = {
	{ "hackbench", "Running in process mode with 1 groups using 40 file descriptors each (== 40 tasks)\n"
		       "Each sender will pass 20 messages of 100 bytes\nTime: 0.036\n", 0.036 },   /* rt-tests 2.4 */
	{ "hackbench", "Time: 12\n", 12 },
	{ "hackbench", "hackbench: fork: Resource temporarily unavailable\n", -1 },
	{ "stream-copy", "Elements: 200000 per array, 4.6 MiB in all, 2 threads, 3 repeats\n"
			 "Copy: 20654.4 MB/s avg 0.000163 s\nScale: 16143.8 MB/s avg 0.001665 s\n"
			 "Add: 24253.1 MB/s avg 0.000208 s\nTriad: 17856.1 MB/s avg 0.001464 s\nCheck: ok\n", 20654.4 },
	{ "stream-triad", "Copy: 20654.4 MB/s avg 0.000163 s\nTriad: 17856.1 MB/s avg 0.001464 s\nCheck: ok\n", 17856.1 },
	{ "stream-triad", "Copy: 20654.4 MB/s avg 0.000163 s\n", -1 },
	{ "schbench", "Wakeup latencies (usec) 50.0th: 14 90.0th: 364 *99.0th: 4480 99.9th: 4480 (35 samples)\n"
		      "Requests: 30.6 per second\n", 4480 },                                     /* tt-wakeup */
	{ "schbench", "Wakeup Latencies percentiles (usec) runtime 30 (s) (193920 total samples)\n"
		      "\t  50.0th: 9          (59062 samples)\n\t* 99.0th: 24         (15396 samples)\n"
		      "Request Latencies percentiles (usec) runtime 30 (s) (194054 total samples)\n"
		      "\t* 99.0th: 9680       (17434 samples)\n", 24 },      /* schbench 1.0: the first table */
	{ "schbench", "Latency percentiles (usec)\n\t50.0000th: 15\n\t*99.0000th: 39\n\t99.9000th: 72\n", 39 },
	{ "schbench-rps", "Requests: 30.6 per second\n", 30.6 },
	{ "schbench-rps", "average rps: 6464.57\n", 6464.57 },
	{ "stress-ng-taskset",
	  "stress-ng: info:  [28868] dispatching hogs: 1 cpu\n"
	  "stress-ng: metrc: [28868] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s CPU used per       RSS Max\n"
	  "stress-ng: metrc: [28868]                           (secs)    (secs)    (secs)   (real time) (usr+sys time) instance (%)          (KB)\n"
	  "stress-ng: metrc: [28868] cpu                 394      2.00      0.31      0.00       196.54        1278.96        15.37          2996\n",
	  196.54 },                                                                      /* 0.15.06 */
	{ "stress-ng-taskset", "stress-ng: info:  [9] cpu   1000  10.01  9.9  0.01  99.90  100.91\n", 99.90 },
	{ "stress-ng-taskset", "stress-ng: info:  [28868] successful run completed in 2.04s\n", -1 },
};

static void test_metric(void)
{
	for (size_t i = 0; i < ELEMENTSOF(metric_cases); i++) {
		const TrialPreset *p = trial_preset_find(metric_cases[i].preset);
		double v = -42;
		int r;

		check_ctx(metric_cases[i].preset, p);
		if (!p)
			continue;
		r = trial_preset_parse_metric(p, metric_cases[i].output, &v);
		if (metric_cases[i].want < 0) {
			check_ctx(metric_cases[i].preset, r == -ENOMSG);
			check_ctx(metric_cases[i].preset, v == -42);
		} else {
			check_ctx(metric_cases[i].preset, r == 0);
			check_ctx(metric_cases[i].preset, v == metric_cases[i].want);
			if (v != metric_cases[i].want)
				fprintf(stderr, "  [%s] got %g, want %g\n", metric_cases[i].preset, v,
					metric_cases[i].want);
		}
	}
}

static void test_table(void)
{
	check(trial_presets_count >= 6);
	for (size_t i = 0; i < trial_presets_count; i++) {
		const TrialPreset *p = &trial_presets[i];

		check_ctx(p->name, trial_preset_find(p->name) == p);
		check_ctx(p->name, p->programs && p->programs[0] && p->args && p->metric && p->metric_regex);
		check_ctx(p->name, p->metric_group >= 1);
		check_ctx(p->name, p->param_name && p->param_default);
		check_ctx(p->name, p->summary && p->seed);
	}
}

/* Run @argv with stdout and stderr into one string (as trial reads them). */
static int run_capture(char **argv, char **ret_out, int *ret_status)
{
	_cleanup_(strbuf_done) StrBuf b = {};
	int fds[2], status;
	char buf[4096];
	ssize_t n;
	pid_t pid;

	if (pipe(fds) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		if (chdir("/tmp") < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], buf, sizeof(buf) - 1)) > 0) {
		buf[n] = 0;
		strbuf_append(&b, buf);
	}
	close(fds[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	*ret_status = status;
	return strbuf_steal(&b, ret_out);
}

/* Small enough for seconds; the parameter where the default would load every CPU. */
static const struct {
	const char *spec;
} run_cases[] = {
	{ "hackbench:1" }, { "schbench:1" }, { "schbench-rps:1" }, { "stream-copy:2" },
	{ "stream-triad:2" }, { "stress-ng-taskset:1" },
};

static void test_run(const char *bench_dir)
{
	TrialPresetEnv env = guest_env(true);

	env.seconds = 1;
	for (size_t i = 0; i < ELEMENTSOF(run_cases); i++) {
		_cleanup_free_ char *param = NULL, *path = NULL, *error = NULL, *out = NULL;
		_cleanup_strv_free_ char **argv = NULL;
		const TrialPreset *p;
		int r, status = -1;
		double v = -1;

		check_int(trial_preset_parse(run_cases[i].spec, &p, &param), 0);
		r = trial_preset_find_program(p, bench_dir, &path, &error);
		if (r == -ENOENT && p->package) {
			/* an external tool: say so, as trial does */
			printf("skip %s: %s\n", run_cases[i].spec, error);
			check_ctx(run_cases[i].spec, error && strstr(error, p->package));
			continue;
		}
		check_ctx(run_cases[i].spec, r == 0);
		if (r < 0) {
			fprintf(stderr, "  %s\n", strempty(error));
			continue;
		}
		check_int(trial_preset_argv(p, &env, path, param, &argv), 0);
		check_int(run_capture(argv, &out, &status), 0);
		check_ctx(run_cases[i].spec, WIFEXITED(status) && WEXITSTATUS(status) == 0);
		r = trial_preset_parse_metric(p, strempty(out), &v);
		check_ctx(run_cases[i].spec, r == 0 && v >= 0);
		printf("%-20s %s -> %s = %g\n", run_cases[i].spec, path, p->metric, v);
		if (r < 0)
			fprintf(stderr, "--- output of %s:\n%s---\n", path, strempty(out));
	}

	/* a missing program of ours names the directory; an external one its package */
	{
		_cleanup_free_ char *path = NULL, *error = NULL, *error2 = NULL;

		check_int(setenv("PATH", "/nonexistent", 1), 0);
		check_int(trial_preset_find_program(trial_preset_find("stream-copy"), "/nonexistent",
						    &path, &error), -ENOENT);
		check(error && strstr(error, "TOPOTUNE_BENCH_DIR"));
		check_int(trial_preset_find_program(trial_preset_find("hackbench"), "/nonexistent",
						    &path, &error2), -ENOENT);
		check(error2 && strstr(error2, "apt-get install rt-tests"));
		check(!path);
	}
}

int main(int argc, char **argv)
{
	test_env();
	test_table();
	test_argv();
	test_metric();
	if (argc == 3 && streq(argv[1], "--run"))
		test_run(argv[2]);
	return test_end("test-trial-presets");
}
