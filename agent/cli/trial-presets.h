/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * `topotunectl trial --preset NAME[:N]`: the seeds' workloads as one table,
 * running the programs bench/kernel/workloads.sh runs, with its arguments
 * (see bench/kernel/README.md for how each maps to the seeds' tables):
 *
 *   preset              program (package)                 metric           better
 *   hackbench[:G]       hackbench (rt-tests)              time_s           lower
 *   schbench[:T]        schbench if on PATH, else tt-wakeup  p99_wakeup_us lower
 *   schbench-rps[:T]    the same                          requests_per_s   higher
 *   stream-copy[:T]     tt-stream (ours)                  copy_MBps        higher
 *   stream-triad[:T]    tt-stream (ours)                  triad_MBps       higher
 *   stress-ng-taskset[:N]  stress-ng (stress-ng)          bogo_ops_per_s   higher
 *
 * The metric is the number in capture group `metric_group` of the POSIX
 * extended regex `metric_regex`, at its first match in the program's stdout
 * and stderr together (stress-ng prints its metrics on stderr). A preset's
 * command exits non-zero when its run is not to be counted (tt-stream when
 * its arrays check wrong).
 *
 * tt-stream and tt-wakeup are built from bench/kernel and installed in
 * TOPOTUNE_BENCH_DIR (/usr/lib/topotune/bench); the environment variable
 * TOPOTUNE_BENCH_DIR overrides that (the qemu guest has them in
 * /usr/lib/tt-bench). hackbench and stress-ng come from Debian packages and
 * are looked up on PATH; a missing one is named with its package.
 */

typedef struct TrialPresetEnv {
	unsigned ncpu;                  /* online CPUs */
	unsigned taskset_max;           /* stress-ng --taskset 0-N default */
	unsigned long stream_elements;  /* tt-stream -n */
	unsigned seconds;               /* schbench/tt-wakeup -r, stress-ng --timeout */
	unsigned loops;                 /* hackbench -l */
	unsigned repeats;               /* tt-stream -r (the first is a warm-up) */
} TrialPresetEnv;

typedef struct TrialPreset {
	const char *name;
	const char *summary;
	const char *seed;               /* which seed table it reproduces */
	const char *const *programs;    /* alternatives, the first found wins; NULL-terminated */
	const char *package;            /* Debian package of the external program, NULL: ours */
	/*
	 * Arguments after the program, NULL-terminated. Placeholders: @PARAM@
	 * (the N of NAME:N, or param_default), @PARAM+1@, @NCPU@, @NCPU/2@,
	 * @SECONDS@, @LOOPS@, @ELEMENTS@, @REPEATS@, @TASKSET_MAX@.
	 */
	const char *const *args;
	const char *param_name;         /* what N means */
	const char *param_default;      /* a placeholder or a number */
	const char *metric;
	const char *metric_regex;
	unsigned metric_group;
	bool higher_is_better;
} TrialPreset;

extern const TrialPreset trial_presets[];
extern const size_t trial_presets_count;

/*
 * The harness's rules (bench/kernel/workloads.sh): stress-ng's hogs cover
 * node 0 and half of node 1 (else 3/4 of the CPUs); STREAM's arrays 4x the
 * sum of the last-level caches, at least 10M elements; 30 s runs, 1000
 * hackbench loops, 10 STREAM repeats. @smoke: the harness's --smoke sizes
 * (seconds-long, for the qemu guest: 3 s, 20 loops, 200000 elements).
 * @node1_cpus 0 means there is no second node. -EINVAL for ncpu 0.
 */
int trial_preset_env_init(TrialPresetEnv *ret, unsigned ncpu, unsigned node0_cpus,
			  unsigned node1_cpus, uint64_t llc_bytes_total, bool smoke);

const TrialPreset *trial_preset_find(const char *name);

/*
 * "NAME" or "NAME:N" (N a decimal in 1..1000000). *ret_param is NULL for
 * the default, else a copy of N. -ENOENT for an unknown name, -EINVAL for a
 * bad N (or an N given to a preset without a parameter).
 */
int trial_preset_parse(const char *spec, const TrialPreset **ret_preset, char **ret_param);

/* argv[0] = @program, then the expanded arguments. @param NULL: the default. */
int trial_preset_argv(const TrialPreset *p, const TrialPresetEnv *env, const char *program,
		      const char *param, char ***ret_argv);

/*
 * The program to run: each alternative in turn, in @bench_dir (NULL: the
 * environment's TOPOTUNE_BENCH_DIR, else the built-in one) and then on
 * PATH. -ENOENT with *ret_error naming what is missing and its package.
 */
int trial_preset_find_program(const TrialPreset *p, const char *bench_dir, char **ret_path,
			      char **ret_error);

/* The metric from the command's output: -ENOMSG when the regex does not match, -EINVAL if not a number. */
int trial_preset_parse_metric(const TrialPreset *p, const char *output, double *ret);
