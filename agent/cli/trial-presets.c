/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The workload presets of `topotunectl trial`: one table row per seed
 * workload, naming the program bench/kernel/workloads.sh runs for it, its
 * arguments, and how to read its figure. No copy of the load programs:
 * tt-stream and tt-wakeup are bench/kernel's, installed in
 * TOPOTUNE_BENCH_DIR. Depends on basic only; the program lookup reads the
 * real file system (PATH), which is the CLI's business, not a sysroot's.
 */
#include <ctype.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <unistd.h>

#include "macro.h"
#include "strutil.h"
#include "trial-presets.h"

#ifndef TOPOTUNE_BENCH_DIR
#define TOPOTUNE_BENCH_DIR "/usr/lib/topotune/bench"
#endif

#define STRV(...) ((const char *const[]) { __VA_ARGS__, NULL })

/* the harness's one line each, so that trial and workloads.sh measure the same thing */
#define SCHBENCH_ARGS STRV("-m", "2", "-t", "@PARAM@", "-r", "@SECONDS@")
#define STREAM_ARGS STRV("-n", "@ELEMENTS@", "-r", "@REPEATS@", "-t", "@PARAM@")

const TrialPreset trial_presets[] = {
	{
		.name = "hackbench",
		.summary = "hackbench -g G -l 1000: G groups of 20 senders and 20 receivers over sockets",
		.seed = "hackbench groups 1..128 (SMT_BUDDY_ASSIST: -14.9 % on average on the Hygon 7447v)",
		.programs = STRV("hackbench"),
		.package = "rt-tests",
		.args = STRV("-g", "@PARAM@", "-l", "@LOOPS@"),
		.param_name = "groups",
		.param_default = "8",
		.metric = "time_s",
		.metric_regex = "^Time: *([0-9]+(\\.[0-9]+)?)",
		.metric_group = 1,
		.higher_is_better = false,
	},
	{
		.name = "schbench",
		.summary = "schbench -m 2 -t T: wakeup latency of 2 message threads x T workers",
		.seed = "schbench workers ncpu/4..ncpu (the t64 p99 collapse with SMT_BUDDY_ASSIST)",
		.programs = STRV("schbench", "tt-wakeup"),
		.package = NULL,        /* tt-wakeup is ours; schbench is not packaged by Debian */
		.args = SCHBENCH_ARGS,
		.param_name = "workers per message thread",
		.param_default = "@NCPU/2@",
		.metric = "p99_wakeup_us",
		/* the first p99 is the wakeup table in schbench ("* 99.0th:", "*99.0000th:") and tt-wakeup */
		.metric_regex = "\\* ?99\\.0+th: *([0-9]+(\\.[0-9]+)?)",
		.metric_group = 1,
		.higher_is_better = false,
	},
	{
		.name = "schbench-rps",
		.summary = "as schbench, the requests completed per second",
		.seed = "schbench requests_per_s",
		.programs = STRV("schbench", "tt-wakeup"),
		.package = NULL,
		.args = SCHBENCH_ARGS,
		.param_name = "workers per message thread",
		.param_default = "@NCPU/2@",
		.metric = "requests_per_s",
		.metric_regex = "(Requests|average rps): *([0-9]+(\\.[0-9]+)?)",
		.metric_group = 2,
		.higher_is_better = true,
	},
	{
		.name = "stream-copy",
		.summary = "tt-stream: STREAM Copy, one unpinned thread per CPU, arrays 4x all L3",
		.seed = "STREAM Copy (SMT_BUDDY_ASSIST: +44 %)",
		.programs = STRV("tt-stream"),
		.package = NULL,
		.args = STREAM_ARGS,
		.param_name = "threads",
		.param_default = "@NCPU@",
		.metric = "copy_MBps",
		.metric_regex = "^Copy: *([0-9]+(\\.[0-9]+)?) MB/s",
		.metric_group = 1,
		.higher_is_better = true,
	},
	{
		.name = "stream-triad",
		.summary = "tt-stream: STREAM Triad, one unpinned thread per CPU, arrays 4x all L3",
		.seed = "STREAM Triad (SMT_BUDDY_ASSIST: +44 %)",
		.programs = STRV("tt-stream"),
		.package = NULL,
		.args = STREAM_ARGS,
		.param_name = "threads",
		.param_default = "@NCPU@",
		.metric = "triad_MBps",
		.metric_regex = "^Triad: *([0-9]+(\\.[0-9]+)?) MB/s",
		.metric_group = 1,
		.higher_is_better = true,
	},
	{
		.name = "stress-ng-taskset",
		.summary = "stress-ng --taskset 0-N --cpu N+1 --cpu-method float128: N+1 hogs on N+1 CPUs",
		.seed = "seed 001: the 4x stress-ng collapse when the hogs stack up",
		.programs = STRV("stress-ng"),
		.package = "stress-ng",
		.args = STRV("--taskset", "0-@PARAM@", "--cpu", "@PARAM+1@", "--cpu-method", "float128",
			     "--metrics", "--timeout", "@SECONDS@s", "--temp-path", "/tmp"),
		.param_name = "last CPU of the taskset",
		.param_default = "@TASKSET_MAX@",
		.metric = "bogo_ops_per_s",
		/* "stress-ng: metrc: [PID] cpu OPS REAL USR SYS OPS/S(real) ..." (0.15; "info:" before) */
		.metric_regex = "\\] cpu +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +([0-9]+(\\.[0-9]+)?)",
		.metric_group = 1,
		.higher_is_better = true,
	},
};
const size_t trial_presets_count = ELEMENTSOF(trial_presets);

int trial_preset_env_init(TrialPresetEnv *ret, unsigned ncpu, unsigned node0_cpus,
			  unsigned node1_cpus, uint64_t llc_bytes_total, bool smoke)
{
	TrialPresetEnv e = { .ncpu = ncpu };
	uint64_t elements;

	if (ncpu == 0 || !ret)
		return -EINVAL;
	if (node0_cpus > 0 && node1_cpus > 1)
		e.taskset_max = node0_cpus + node1_cpus / 2 - 1;
	else
		e.taskset_max = ncpu * 3 / 4 >= 2 ? ncpu * 3 / 4 - 1 : 1;
	e.taskset_max = MIN(MAX(e.taskset_max, 1u), ncpu > 1 ? ncpu - 1 : 1);

	elements = llc_bytes_total / 2;       /* 4 x the bytes, 8 bytes a double */
	e.stream_elements = (unsigned long)MIN(MAX(elements, (uint64_t)10000000), (uint64_t)ULONG_MAX);
	e.seconds = 30;
	e.loops = 1000;
	e.repeats = 10;
	if (smoke) {
		e.stream_elements = 200000;
		e.seconds = 3;
		e.loops = 20;
		e.repeats = 3;
	}
	*ret = e;
	return 0;
}

const TrialPreset *trial_preset_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < trial_presets_count; i++)
		if (streq(trial_presets[i].name, name))
			return &trial_presets[i];
	return NULL;
}

static int parse_count(const char *s, unsigned *ret)
{
	unsigned v;

	if (!s || !*s)
		return -EINVAL;
	for (const char *c = s; *c; c++)
		if (!isdigit((unsigned char)*c))
			return -EINVAL;
	if (safe_atou_base(s, 10, &v) < 0 || v < 1 || v > 1000000)
		return -EINVAL;
	*ret = v;
	return 0;
}

int trial_preset_parse(const char *spec, const TrialPreset **ret_preset, char **ret_param)
{
	_cleanup_free_ char *name = NULL, *param = NULL;
	const TrialPreset *p;
	const char *colon;
	unsigned v;

	if (!spec || !ret_preset || !ret_param)
		return -EINVAL;
	colon = strchr(spec, ':');
	name = colon ? strndup(spec, colon - spec) : strdup(spec);
	if (!name)
		return -ENOMEM;
	p = trial_preset_find(name);
	if (!p)
		return -ENOENT;
	if (colon) {
		if (!p->param_name || parse_count(colon + 1, &v) < 0)
			return -EINVAL;
		param = strdup(colon + 1);
		if (!param)
			return -ENOMEM;
	}
	*ret_preset = p;
	*ret_param = TAKE_PTR(param);
	return 0;
}

/* The value of one placeholder (without its @s), or -EINVAL. */
static int placeholder(const char *key, size_t len, const TrialPresetEnv *env, unsigned long param,
		       unsigned long *ret)
{
	static const char *const names[] = {
		"PARAM", "PARAM+1", "NCPU", "NCPU/2", "SECONDS", "LOOPS", "ELEMENTS", "REPEATS",
		"TASKSET_MAX",
	};
	const unsigned long values[] = {
		param, param + 1, env->ncpu, MAX(env->ncpu / 2, 1u), env->seconds, env->loops,
		env->stream_elements, env->repeats, env->taskset_max,
	};

	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (strlen(names[i]) == len && strncmp(names[i], key, len) == 0) {
			*ret = values[i];
			return 0;
		}
	return -EINVAL;
}

static int expand(const char *tmpl, const TrialPresetEnv *env, unsigned long param, char **ret)
{
	_cleanup_(strbuf_done) StrBuf b = {};

	for (const char *s = tmpl; *s;) {
		const char *end;
		unsigned long v;

		if (*s != '@' || !(end = strchr(s + 1, '@'))) {
			size_t n = strcspn(s + 1, "@") + 1;
			_cleanup_free_ char *lit = strndup(s, n);

			if (!lit)
				return -ENOMEM;
			strbuf_append(&b, lit);
			s += n;
			continue;
		}
		if (placeholder(s + 1, end - s - 1, env, param, &v) < 0)
			return -EINVAL;
		strbuf_appendf(&b, "%lu", v);
		s = end + 1;
	}
	if (!b.buf && !b.error)
		strbuf_append(&b, "");
	return strbuf_steal(&b, ret);
}

int trial_preset_argv(const TrialPreset *p, const TrialPresetEnv *env, const char *program,
		      const char *param, char ***ret_argv)
{
	_cleanup_strv_free_ char **argv = NULL;
	unsigned long pv = 0;
	int r;

	if (!p || !env || !program || !ret_argv)
		return -EINVAL;
	if (p->param_name) {
		_cleanup_free_ char *def = NULL;
		unsigned v;

		if (param) {
			r = parse_count(param, &v);
			if (r < 0)
				return r;
			pv = v;
		} else {
			r = expand(p->param_default, env, 0, &def);
			if (r < 0)
				return r;
			r = parse_count(def, &v);
			if (r < 0)
				return r;
			pv = v;
		}
	} else if (param)
		return -EINVAL;

	r = strv_extend(&argv, program);
	if (r < 0)
		return r;
	for (const char *const *a = p->args; *a; a++) {
		char *s;

		r = expand(*a, env, pv, &s);
		if (r < 0)
			return r;
		r = strv_push(&argv, s);
		if (r < 0)
			return r;
	}
	*ret_argv = TAKE_PTR(argv);
	return 0;
}

static int find_in(const char *dir, const char *name, char **ret)
{
	_cleanup_free_ char *path = NULL;

	if (!dir || !*dir)
		return -ENOENT;
	path = strprintf("%s/%s", dir, name);
	if (!path)
		return -ENOMEM;
	if (access(path, X_OK) < 0)
		return -ENOENT;
	*ret = TAKE_PTR(path);
	return 0;
}

int trial_preset_find_program(const TrialPreset *p, const char *bench_dir, char **ret_path,
			      char **ret_error)
{
	_cleanup_strv_free_ char **path_dirs = NULL;
	const char *path_env = getenv("PATH");
	_cleanup_(strbuf_done) StrBuf tried = {};
	int r;

	if (!p || !ret_path)
		return -EINVAL;
	if (!bench_dir)
		bench_dir = getenv("TOPOTUNE_BENCH_DIR") ?: TOPOTUNE_BENCH_DIR;
	r = strv_split(path_env ?: "/usr/local/bin:/usr/bin:/bin", ":", &path_dirs);
	if (r < 0)
		return r;

	for (const char *const *name = p->programs; *name; name++) {
		char *found = NULL;

		r = find_in(bench_dir, *name, &found);
		if (r == -ENOMEM)
			return r;
		STRV_FOREACH(d, path_dirs) {
			if (r == 0)
				break;
			r = find_in(*d, *name, &found);
			if (r == -ENOMEM)
				return r;
		}
		if (r == 0) {
			*ret_path = found;
			return 0;
		}
		strbuf_appendf(&tried, "%s%s", tried.len ? " or " : "", *name);
	}
	if (tried.error)
		return -ENOMEM;
	if (p->package)
		return error_message(ret_error, -ENOENT,
				     "preset %s needs %s, which is not installed (apt-get install %s)",
				     p->name, tried.buf, p->package);
	return error_message(ret_error, -ENOENT,
			     "preset %s needs %s, found neither in %s nor on PATH "
			     "(meson builds them in bench/kernel; set TOPOTUNE_BENCH_DIR)",
			     p->name, tried.buf, bench_dir);
}

int trial_preset_parse_metric(const TrialPreset *p, const char *output, double *ret)
{
	regmatch_t m[4];
	regex_t re;
	_cleanup_free_ char *num = NULL;
	char *end;
	double v;
	int r;

	if (!p || !output || !ret || p->metric_group >= ELEMENTSOF(m))
		return -EINVAL;
	if (regcomp(&re, p->metric_regex, REG_EXTENDED | REG_NEWLINE) != 0)
		return -EINVAL;
	r = regexec(&re, output, ELEMENTSOF(m), m, 0);
	regfree(&re);
	if (r != 0 || m[p->metric_group].rm_so < 0)
		return -ENOMSG;
	num = strndup(output + m[p->metric_group].rm_so,
		      m[p->metric_group].rm_eo - m[p->metric_group].rm_so);
	if (!num)
		return -ENOMEM;
	errno = 0;
	v = strtod(num, &end);
	if (errno != 0 || end == num || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}
