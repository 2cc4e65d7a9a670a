/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topotunectl trial: which profile is faster on this machine, for this
 * workload. Runs COMMAND (or a preset) under each profile in interleaved
 * rounds (ABBA...), each profile held through topotuned (HoldProfile) so
 * that a crash, Ctrl-C or a lost session returns the machine to the
 * profile it had; waits after each switch until Verify() says the values
 * are in place and the kernel's domains match the prediction; records the
 * metric and the scheduler counters that explain a difference; reports
 * each profile against the first with a distribution-free 95 % interval
 * (agent/basic/stats.h). Depends on sd-bus, the kernel counters, the
 * statistics and the presets.
 */
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <regex.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "ctl.h"
#include "fileio.h"
#include "json.h"
#include "log.h"
#include "online.h"
#include "session.h"
#include "stats.h"
#include "strutil.h"
#include "trial-presets.h"

#define TRIAL_ROUNDS_DEFAULT 5U
#define TRIAL_ROUNDS_MAX 200U
#define TRIAL_PROFILES_MAX 8U
#define TRIAL_SETTLE_DEFAULT_S 10.0
/* A run's output is kept for the metric and for the error message: its last bytes. */
#define TRIAL_OUTPUT_MAX (1024U * 1024U)

typedef struct TrialRun {
	size_t profile;          /* index into the profiles */
	unsigned round;          /* 1-based; 0: a warm-up run, not counted */
	double value;            /* the metric */
	double wall_s;
	double settle_s;         /* from the switch until values and layout were in place */
	bool verified;           /* Verify() said in sync before the run */
	int layout_differences;  /* -1: not checked */
	double *deltas;          /* per counter key, NAN where a counter is missing */
	size_t n_deltas;         /* the keys known at this run */
} TrialRun;

typedef struct Trial {
	const CtlContext *ctx;
	sd_bus *bus;
	uint32_t cookie;
	char **profiles;
	size_t n_profiles;
	unsigned rounds, warmup;
	double confidence, settle_s;
	bool higher_is_better, json, check_layout;
	const char *metric_name;  /* "wall_time_s", a preset's, or "metric" */
	regex_t metric_re;
	bool have_re;
	const TrialPreset *preset;
	char **argv;              /* what runs */
	char **counter_keys;      /* "softirq SCHED", "smt_buddy pushed", "MC lb_gained", ... */
	TrialRun *runs;
	size_t n_runs;
	char **notes;
} Trial;

static void trial_done(Trial *t)
{
	for (size_t i = 0; i < t->n_runs; i++)
		free(t->runs[i].deltas);
	free(t->runs);
	strv_free(t->counter_keys);
	strv_free(t->notes);
	strv_free(t->argv);
	if (t->have_re)
		regfree(&t->metric_re);
	sd_bus_flush_close_unref(t->bus);
}

static double now_s(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- the counters that explain a difference ------------------------------------- */

/* Counter deltas of one run, named; @keys grows with the names seen first. */
static int counter_deltas(char ***keys, const KernelCounters *a, const KernelCounters *b, double **ret)
{
	static const struct {
		const char *name;
		unsigned field;    /* an index into DomainCounters.v, or below: a lb field summed over idle types */
		bool lb;
	} dom[] = {
		{ "lb_count", SCHEDSTAT_LB_COUNT, true },
		{ "lb_failed", SCHEDSTAT_LB_FAILED, true },
		{ "lb_gained", SCHEDSTAT_LB_GAINED, true },
		{ "alb_pushed", SCHEDSTAT_ALB_PUSHED, false },
		{ "ttwu_move_affine", SCHEDSTAT_TTWU_MOVE_AFFINE, false },
	};
	_cleanup_free_ double *d = NULL;
	size_t n;
	int r;

	/* Names first (a key's index is stable for the whole trial), then values. */
	if (b->have_sched_softirqs && !strv_contains(*keys, "softirq SCHED")) {
		r = strv_extend(keys, "softirq SCHED");
		if (r < 0)
			return r;
	}
	for (size_t f = 0; b->smt_buddy_version == SMT_BUDDY_STAT_VERSION && f < SMT_BUDDY_STAT_FIELDS; f++) {
		_cleanup_free_ char *k = strprintf("smt_buddy %s", kernel_counters_smt_buddy_field(f));

		if (!k)
			return -ENOMEM;
		if (!strv_contains(*keys, k) && (r = strv_extend(keys, k)) < 0)
			return r;
	}
	for (size_t i = 0; i < b->n_domains; i++)
		for (size_t f = 0; f < ELEMENTSOF(dom); f++) {
			_cleanup_free_ char *k = strprintf("domain%u %s %s", b->domains[i].index, b->domains[i].name,
							   dom[f].name);

			if (!k)
				return -ENOMEM;
			if (!strv_contains(*keys, k) && (r = strv_extend(keys, k)) < 0)
				return r;
		}

	n = strv_length(*keys);
	d = malloc(MAX(n, (size_t)1) * sizeof(double));
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		d[i] = NAN;
	for (size_t i = 0; i < n; i++) {
		const char *k = (*keys)[i];

		if (streq(k, "softirq SCHED") && a->have_sched_softirqs && b->have_sched_softirqs)
			d[i] = (double)(b->sched_softirqs - a->sched_softirqs);
		for (size_t f = 0; f < SMT_BUDDY_STAT_FIELDS; f++)
			if (a->smt_buddy_version == SMT_BUDDY_STAT_VERSION &&
			    b->smt_buddy_version == SMT_BUDDY_STAT_VERSION && startswith(k, "smt_buddy ") &&
			    streq(k + strlen("smt_buddy "), kernel_counters_smt_buddy_field(f)))
				d[i] = (double)(b->smt_buddy[f] - a->smt_buddy[f]);
	}
	for (size_t i = 0; i < b->n_domains; i++) {
		const DomainCounters *y = &b->domains[i], *x = NULL;

		for (size_t j = 0; j < a->n_domains; j++)
			if (a->domains[j].index == y->index && streq(a->domains[j].name, y->name))
				x = &a->domains[j];
		if (!x)
			continue;
		for (size_t f = 0; f < ELEMENTSOF(dom); f++) {
			_cleanup_free_ char *k = strprintf("domain%u %s %s", y->index, y->name, dom[f].name);
			uint64_t v = 0;

			if (!k)
				return -ENOMEM;
			if (dom[f].lb)
				for (unsigned t = 0; t < SCHEDSTAT_IDLE_TYPES; t++)
					v += y->v[t * SCHEDSTAT_LB_FIELDS + dom[f].field] -
					     x->v[t * SCHEDSTAT_LB_FIELDS + dom[f].field];
			else
				v = y->v[dom[f].field] - x->v[dom[f].field];
			for (size_t q = 0; q < n; q++)
				if (streq((*keys)[q], k))
					d[q] = (double)v;
		}
	}
	*ret = TAKE_PTR(d);
	return 0;
}

/* --- one run ------------------------------------------------------------------- */

/* Run @argv with its stdout and stderr in *ret_output (the last TRIAL_OUTPUT_MAX bytes). */
static int run_command(char **argv, char **ret_output, double *ret_wall, int *ret_status)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int fds[2], status;
	double start;
	pid_t pid;

	buf = malloc(TRIAL_OUTPUT_MAX + 1);
	if (!buf)
		return -ENOMEM;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	start = now_s();
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(fds[0]);
		close(fds[1]);
		return e;
	}
	if (pid == 0) {
		/* The workload dies with topotunectl: no run outlives the hold that frames it. */
		(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (dup2(fds[1], STDOUT_FILENO) < 0 || dup2(fds[1], STDERR_FILENO) < 0)
			_exit(127);
		execvp(argv[0], argv);
		dprintf(STDERR_FILENO, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	_Static_assert(65536 < TRIAL_OUTPUT_MAX, "a chunk must fit the buffer");
	for (;;) {
		char chunk[65536];
		ssize_t k = read(fds[0], chunk, sizeof(chunk));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		/* A chunk is smaller than the buffer: drop the oldest bytes to make room. */
		if (len + (size_t)k > TRIAL_OUTPUT_MAX) {
			size_t drop = len + (size_t)k - TRIAL_OUTPUT_MAX;

			memmove(buf, buf + drop, len - drop);
			len -= drop;
		}
		memcpy(buf + len, chunk, (size_t)k);
		len += (size_t)k;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_wall = now_s() - start;
	buf[len] = 0;
	*ret_status = status;
	*ret_output = TAKE_PTR(buf);
	return 0;
}

static int parse_metric(Trial *t, const char *output, double wall, double *ret)
{
	regmatch_t m[2];
	_cleanup_free_ char *num = NULL;
	char *end;
	size_t g;

	if (!t->have_re && !t->preset) {
		*ret = wall;
		return 0;
	}
	if (!t->have_re)
		return trial_preset_parse_metric(t->preset, output, ret);
	if (regexec(&t->metric_re, output, 2, m, 0) != 0)
		return -ENOMSG;
	g = m[1].rm_so >= 0 ? 1 : 0;
	num = strndup(output + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
	if (!num)
		return -ENOMEM;
	errno = 0;
	*ret = strtod(num, &end);
	if (errno != 0 || end == num || !isfinite(*ret))
		return -EINVAL;
	return 0;
}

/* The last lines of a failed run's output, for the error message. */
static const char *output_tail(const char *output)
{
	size_t n = strlen(output), lines = 0;

	while (n > 0 && lines < 12)
		if (output[--n] == '\n' && n + 1 < strlen(output))
			lines++;
	return output + n;
}

/*
 * Hold @profile, then wait until Verify() is in sync and the kernel's
 * domains match the prediction (or --settle ran out: noted, not fatal).
 */
static int switch_to(Trial *t, size_t profile, TrialRun *run)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *reason = NULL;
	double start = now_s();
	uint32_t cookie;
	int r;

	reason = strprintf("topotunectl trial: round %u of %u, %s", run->round, t->rounds, t->profiles[profile]);
	if (!reason)
		return log_oom();
	r = sd_bus_call_method(t->bus, ONLINE_DEST, ONLINE_PATH, ONLINE_IFACE, "HoldProfile", &error, &reply, "ssb",
			       t->profiles[profile], reason, isatty(STDIN_FILENO) > 0);
	if (r >= 0)
		r = sd_bus_message_read(reply, "u", &cookie);
	if (r < 0) {
		online_call_failed("HoldProfile", &error, r);
		return -EIO;
	}
	t->cookie = cookie;

	run->layout_differences = -1;
	for (;;) {
		_cleanup_(sd_bus_message_unrefp) sd_bus_message *v = NULL;
		int ok = 0;

		sd_bus_error_free(&error);
		if (sd_bus_call_method(t->bus, ONLINE_DEST, ONLINE_PATH, ONLINE_IFACE, "Verify", &error, &v, "") >= 0)
			(void)sd_bus_message_read(v, "b", &ok);
		run->verified = ok;
		if (ok && t->check_layout) {
			_cleanup_free_ char *first = NULL;

			run->layout_differences = ctl_layout_differences(t->ctx, &first);
			if (run->layout_differences < 0) {
				/* No /proc/schedstat (or it does not parse): said once, not checked again. */
				t->check_layout = false;
				(void)strv_extend(&t->notes, "the kernel's domain layout could not be read "
					    "(/proc/schedstat): switches were checked with Verify() only");
			}
		}
		if (ok && run->layout_differences <= 0)
			break;
		if (now_s() - start > t->settle_s)
			break;
		(void)usleep(100 * 1000);
	}
	run->settle_s = now_s() - start;
	return 0;
}

static int do_run(Trial *t, size_t profile, unsigned round, unsigned n_done, unsigned n_total)
{
	_cleanup_(kernel_counters_freep) KernelCounters *before = NULL, *after = NULL;
	_cleanup_close_ int root_fd = -EBADF;
	_cleanup_free_ char *output = NULL;
	TrialRun run = { .profile = profile, .round = round }, *more;
	int r, status;

	r = switch_to(t, profile, &run);
	if (r < 0)
		return r;
	r = root_open(t->ctx->root, &root_fd);
	if (r < 0)
		return log_error_errno(r, "%s: %m", t->ctx->root);
	r = kernel_counters_load(root_fd, &before);
	if (r >= 0)
		r = run_command(t->argv, &output, &run.wall_s, &status);
	if (r >= 0)
		r = kernel_counters_load(root_fd, &after);
	if (r < 0)
		return log_error_errno(r, "Round %u (%s): %m", round, t->profiles[profile]);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		log_error("Round %u (%s): %s %s %d; its last output:\n%s", round, t->profiles[profile], t->argv[0],
			  WIFEXITED(status) ? "exited with" : "was killed by signal",
			  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), output_tail(output));
		return -ECHILD;
	}
	r = parse_metric(t, output, run.wall_s, &run.value);
	if (r < 0) {
		log_error("Round %u (%s): no %s in the output of %s (%s); its last output:\n%s", round,
			  t->profiles[profile], t->metric_name, t->argv[0],
			  r == -ENOMSG ? "the pattern does not match" : "not a number", output_tail(output));
		return -EBADMSG;
	}
	r = counter_deltas(&t->counter_keys, before, after, &run.deltas);
	if (r < 0)
		return log_oom();
	run.n_deltas = strv_length(t->counter_keys);
	more = reallocarray(t->runs, t->n_runs + 1, sizeof(TrialRun));
	if (!more) {
		free(run.deltas);
		return log_oom();
	}
	t->runs = more;
	t->runs[t->n_runs++] = run;
	/* Progress: a trial takes minutes. */
	log_info("[%u/%u] %s %s: %s = %.6g (settled in %.1f s%s)", n_done, n_total,
		 round ? "round" : "warm-up", t->profiles[profile], t->metric_name, run.value, run.settle_s,
		 run.layout_differences > 0 ? ", layout differs from the prediction" :
		 !run.verified ? ", NOT in sync" : "");
	return 0;
}

/* --- the report ------------------------------------------------------------------ */

typedef struct ProfileResult {
	double *values;
	size_t n;
	StatsSummary summary;
	double *counters;          /* per key: the median delta per round */
	StatsComparison cmp;       /* against profile 0 (i > 0) */
	bool have_cmp;
} ProfileResult;

static int compute_results(Trial *t, ProfileResult *res)
{
	size_t n_keys = strv_length(t->counter_keys);
	int r;

	for (size_t p = 0; p < t->n_profiles; p++) {
		_cleanup_free_ double *col = calloc(MAX(t->n_runs, (size_t)1), sizeof(double));

		res[p].values = calloc(t->rounds, sizeof(double));
		res[p].counters = calloc(MAX(n_keys, (size_t)1), sizeof(double));
		if (!res[p].values || !res[p].counters || !col)
			return -ENOMEM;
		for (size_t i = 0; i < t->n_runs; i++)
			if (t->runs[i].round && t->runs[i].profile == p)
				res[p].values[res[p].n++] = t->runs[i].value;
		r = stats_summarize(res[p].values, res[p].n, &res[p].summary);
		if (r < 0)
			return r;
		for (size_t k = 0; k < n_keys; k++) {
			size_t m = 0;

			for (size_t i = 0; i < t->n_runs; i++)
				if (t->runs[i].round && t->runs[i].profile == p && k < t->runs[i].n_deltas &&
				    !isnan(t->runs[i].deltas[k]))
					col[m++] = t->runs[i].deltas[k];
			if (m == 0 || stats_median(col, m, &res[p].counters[k]) < 0)
				res[p].counters[k] = NAN;
		}
	}
	for (size_t p = 1; p < t->n_profiles; p++) {
		r = stats_compare(res[0].values, res[0].n, res[p].values, res[p].n, t->confidence, t->higher_is_better,
				  &res[p].cmp);
		if (r < 0)
			return r;
		res[p].have_cmp = true;
	}
	return 0;
}

static void results_free(ProfileResult *res, size_t n)
{
	for (size_t p = 0; res && p < n; p++) {
		free(res[p].values);
		free(res[p].counters);
	}
	free(res);
}

/* The interval a comparison is judged on: relative when every value is > 0, else the shift. */
static const StatsInterval *judged(const StatsComparison *c)
{
	return c->ratio_valid ? &c->ratio : &c->shift;
}

static void print_text(const Trial *t, const ProfileResult *res)
{
	size_t n_keys = strv_length(t->counter_keys);

	printf("Trial: %zu profiles, %u rounds each%s, interleaved (ABBA...); %s, %s is better.\n", t->n_profiles,
	       t->rounds, t->warmup ? " after warm-up" : "", t->metric_name,
	       t->higher_is_better ? "higher" : "lower");
	printf("\n  %-16s %4s %14s %12s %14s %14s\n", "PROFILE", "N", "MEDIAN", "MAD", "MIN", "MAX");
	for (size_t p = 0; p < t->n_profiles; p++)
		printf("  %-16s %4zu %14.6g %12.4g %14.6g %14.6g\n", t->profiles[p], res[p].n, res[p].summary.median,
		       res[p].summary.mad, res[p].summary.min, res[p].summary.max);
	printf("\n");
	for (size_t p = 1; p < t->n_profiles; p++) {
		const StatsComparison *c = &res[p].cmp;
		const StatsInterval *i = judged(c);
		const char *verdict = stats_verdict_to_string(c->verdict);

		if (c->ratio_valid)
			printf("  %s against %s: %+.1f %%, interval [%+.1f %%, %+.1f %%]", t->profiles[p], t->profiles[0],
			       100 * i->estimate, 100 * i->lower, 100 * i->upper);
		else
			printf("  %s against %s: %+.6g, interval [%+.6g, %+.6g]", t->profiles[p], t->profiles[0],
			       i->estimate, i->lower, i->upper);
		if (i->available)
			printf(" (%s %.1f %% interval): %s\n", i->exact ? "exact" : "approximate", 100 * i->confidence,
			       verdict);
		else
			printf(" (no %.0f %% interval exists at %zu against %zu rounds; this widest one is %.1f %%): "
			       "%s at this n\n", 100 * t->confidence, c->a.n, c->b.n, 100 * i->confidence, verdict);
	}
	if (n_keys) {
		printf("\n  Scheduler counters, median per round:\n  %-40s", "");
		for (size_t p = 0; p < t->n_profiles; p++)
			printf(" %14.14s", t->profiles[p]);
		printf("\n");
		for (size_t k = 0; k < n_keys; k++) {
			bool any = false;

			for (size_t p = 0; p < t->n_profiles; p++)
				any = any || (!isnan(res[p].counters[k]) && res[p].counters[k] != 0);
			if (!any)
				continue;   /* a counter that never moved explains nothing */
			printf("  %-40s", t->counter_keys[k]);
			for (size_t p = 0; p < t->n_profiles; p++)
				printf(" %14.6g", res[p].counters[k]);
			printf("\n");
		}
	}
	STRV_FOREACH(n, t->notes)
		printf("\nNote: %s\n", *n);
}

static void json_interval(JsonWriter *w, const char *key, const StatsInterval *i)
{
	json_key(w, key);
	json_begin_object(w);
	json_key(w, "estimate");
	json_double(w, i->estimate);
	json_key(w, "lower");
	json_double(w, i->lower);
	json_key(w, "upper");
	json_double(w, i->upper);
	json_key(w, "confidence");
	json_double(w, i->confidence);
	json_key(w, "available");
	json_bool(w, i->available);
	json_key(w, "exact");
	json_bool(w, i->exact);
	json_end_object(w);
}

static void print_json(const Trial *t, const ProfileResult *res)
{
	size_t n_keys = strv_length(t->counter_keys);
	JsonWriter w;

	ctl_json_begin(&w);
	json_key(&w, "command");
	json_string(&w, "trial");
	json_key(&w, "metric");
	json_row(&w, JSON_STR("name", t->metric_name), JSON_BOOL("higher_is_better", t->higher_is_better),
		 JSON_STR("source", t->have_re ? "regex" : t->preset ? "preset" : "wall_time"));
	json_key(&w, "workload");
	json_row(&w, JSON_STR("preset", t->preset ? t->preset->name : NULL), JSON_STRV("argv", t->argv));
	json_key(&w, "rounds");
	json_int(&w, t->rounds);
	json_key(&w, "warmup");
	json_int(&w, t->warmup);
	json_key(&w, "confidence");
	json_double(&w, t->confidence);
	json_key(&w, "method");
	json_string(&w, "Hodges-Lehmann estimate, Mann-Whitney (Wilcoxon rank-sum) confidence interval");
	json_key(&w, "profiles");
	json_begin_array(&w);
	for (size_t p = 0; p < t->n_profiles; p++) {
		const StatsSummary *s = &res[p].summary;

		json_begin_object(&w);
		json_key(&w, "name");
		json_string(&w, t->profiles[p]);
		json_key(&w, "n");
		json_int(&w, (long long)res[p].n);
		json_key(&w, "values");
		json_begin_array(&w);
		for (size_t i = 0; i < res[p].n; i++)
			json_double(&w, res[p].values[i]);
		json_end_array(&w);
		json_key(&w, "median");
		json_double(&w, s->median);
		json_key(&w, "mad");
		json_double(&w, s->mad);
		json_key(&w, "min");
		json_double(&w, s->min);
		json_key(&w, "max");
		json_double(&w, s->max);
		json_key(&w, "q1");
		json_double(&w, s->q1);
		json_key(&w, "q3");
		json_double(&w, s->q3);
		json_key(&w, "counters");
		json_begin_object(&w);
		for (size_t k = 0; k < n_keys; k++) {
			json_key(&w, t->counter_keys[k]);
			json_double(&w, res[p].counters[k]);
		}
		json_end_object(&w);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_key(&w, "comparisons");
	json_begin_array(&w);
	for (size_t p = 1; p < t->n_profiles; p++) {
		const StatsComparison *c = &res[p].cmp;

		json_begin_object(&w);
		json_key(&w, "profile");
		json_string(&w, t->profiles[p]);
		json_key(&w, "reference");
		json_string(&w, t->profiles[0]);
		if (c->ratio_valid)
			json_interval(&w, "relative", &c->ratio);
		else {
			json_key(&w, "relative");
			json_null(&w);
		}
		json_interval(&w, "shift", &c->shift);
		json_key(&w, "verdict");
		json_string(&w, stats_verdict_to_string(c->verdict));
		json_end_object(&w);
	}
	json_end_array(&w);
	json_key(&w, "runs");
	json_begin_array(&w);
	for (size_t i = 0; i < t->n_runs; i++) {
		const TrialRun *r = &t->runs[i];

		json_begin_object(&w);
		json_key(&w, "profile");
		json_string(&w, t->profiles[r->profile]);
		json_key(&w, "round");
		json_int(&w, r->round);
		json_key(&w, "value");
		json_double(&w, r->value);
		json_key(&w, "wall_s");
		json_double(&w, r->wall_s);
		json_key(&w, "settle_s");
		json_double(&w, r->settle_s);
		json_key(&w, "in_sync");
		json_bool(&w, r->verified);
		json_key(&w, "layout_differences");
		if (r->layout_differences >= 0)
			json_int(&w, r->layout_differences);
		else
			json_null(&w);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_key(&w, "notes");
	json_begin_array(&w);
	STRV_FOREACH(n, t->notes)
		json_string(&w, *n);
	json_end_array(&w);
	ctl_json_end(&w);
}

/* The sizes presets need: online CPUs, the first two nodes' CPUs, the last-level caches' bytes. */
static int preset_env(const CtlContext *ctx, bool smoke, TrialPresetEnv *ret)
{
	_cleanup_(session_done) Session s = SESSION_INIT;
	const Topology *tp;
	uint64_t llc_bytes = 0;

	if (ctl_session_open(ctx, &s, false) < 0)
		return -EINVAL;
	tp = s.topology;
	for (size_t i = 0; tp->llc_level && i < tp->llcs.n; i++) {
		_cleanup_free_ char *path = NULL, *text = NULL;
		int first = cpuset_first(&tp->llcs.items[i].cpus);
		unsigned long long kib;
		char unit = 0;

		/* cpuN/cache/indexM/size, "32768K": the LLC is the index whose level is llc_level. */
		for (unsigned idx = 0; first >= 0 && idx < 8; idx++) {
			_cleanup_free_ char *lp = strprintf("sys/devices/system/cpu/cpu%d/cache/index%u/level", first, idx);
			unsigned level;

			if (!lp || read_unsigned_at(s.root_fd, lp, &level) < 0 || level != tp->llc_level)
				continue;
			path = strprintf("sys/devices/system/cpu/cpu%d/cache/index%u/size", first, idx);
			break;
		}
		if (path && read_line_at(s.root_fd, path, &text) >= 0 && sscanf(text, "%llu%c", &kib, &unit) >= 1)
			llc_bytes += kib * (unit == 'M' ? 1024ULL * 1024 : unit == 'K' ? 1024ULL : 1ULL);
	}
	return trial_preset_env_init(ret, cpuset_count(&tp->online),
				     tp->nodes.n > 0 ? cpuset_count(&tp->nodes.items[0].cpus) : 0,
				     tp->nodes.n > 1 ? cpuset_count(&tp->nodes.items[1].cpus) : 0, llc_bytes, smoke);
}

static int parse_positive(const char *opt, const char *s, unsigned max, unsigned *ret)
{
	if (safe_atou_base(s, 10, ret) < 0 || *ret > max)
		return log_error_errno(-EINVAL, "%s: expected a number up to %u, got '%s'", opt, max, s);
	return 0;
}

/* A hold already in force (another trial, a topotunectl hold): refuse, naming it. */
static int refuse_if_held(sd_bus *bus)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	const char *profile, *holder, *reason, *source;
	uint32_t cookie;
	int r;

	r = sd_bus_get_property(bus, ONLINE_DEST, ONLINE_PATH, ONLINE_IFACE, "ProfileHold", &error, &reply, "(ussss)");
	if (r >= 0)
		r = sd_bus_message_read(reply, "(ussss)", &cookie, &profile, &holder, &reason, &source);
	if (r < 0)
		return online_call_failed("Reading ProfileHold (a topotuned with HoldProfile is needed)", &error, r);
	if (cookie == 0)
		return 0;
	log_error("Profile %s is held by %s (%s): another trial or hold is running; nothing was changed.",
		  tty_text(profile), tty_text(holder), tty_text(reason));
	return 2;
}

/* The command line of trial, before it is checked and turned into a Trial. */
typedef struct TrialArgs {
	char **profiles;
	const char *metric, *preset;
	bool higher, smoke;
	char **command;           /* after "--"; NULL with --preset */
} TrialArgs;

static void trial_args_done(TrialArgs *a)
{
	strv_free(a->profiles);
}

static int parse_level(const char *opt, const char *s, double min, double max, bool open, const char *expected,
		       double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(open ? v > min && v < max : v >= min && v <= max))
		return log_error("%s: expected %s", opt, expected), -EINVAL;
	*ret = v;
	return 0;
}

/* The options; 0 or 2 (a usage error, logged). */
static int trial_parse_args(Trial *t, TrialArgs *a, int argc, char *argv[])
{
	enum { ARG_METRIC = 0x100, ARG_HIGHER, ARG_PRESET, ARG_CONFIDENCE, ARG_SETTLE, ARG_SMOKE, ARG_NO_LAYOUT };
	static const struct option options[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "rounds", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "metric", required_argument, NULL, ARG_METRIC },
		{ "higher-is-better", no_argument, NULL, ARG_HIGHER },
		{ "preset", required_argument, NULL, ARG_PRESET },
		{ "confidence", required_argument, NULL, ARG_CONFIDENCE },
		{ "settle", required_argument, NULL, ARG_SETTLE },
		{ "smoke", no_argument, NULL, ARG_SMOKE },
		{ "no-layout-check", no_argument, NULL, ARG_NO_LAYOUT },
		{ "json", no_argument, NULL, 'j' },
		{}
	};
	int c;

	optind = 0;
	/* "+": options end at COMMAND; its own options are its. */
	while ((c = getopt_long(argc, argv, "+p:n:w:j", options, NULL)) >= 0)
		switch (c) {
		case 'p':
			if (strv_contains(a->profiles, optarg))
				return log_error("trial: --profile %s given twice", optarg), 2;
			if (strv_extend(&a->profiles, optarg) < 0)
				return log_oom(), 2;
			break;
		case 'n':
			if (parse_positive("--rounds", optarg, TRIAL_ROUNDS_MAX, &t->rounds) < 0 || t->rounds == 0)
				return 2;
			break;
		case 'w':
			if (parse_positive("--warmup", optarg, 10, &t->warmup) < 0)
				return 2;
			break;
		case ARG_METRIC:
			a->metric = optarg;
			break;
		case ARG_HIGHER:
			a->higher = true;
			break;
		case ARG_PRESET:
			a->preset = optarg;
			break;
		case ARG_CONFIDENCE:
			if (parse_level("--confidence", optarg, 0.5, 1, true, "a level between 0.5 and 1, e.g. 0.95",
					&t->confidence) < 0)
				return 2;
			break;
		case ARG_SETTLE:
			if (parse_level("--settle", optarg, 0, 3600, false, "seconds (0-3600)", &t->settle_s) < 0)
				return 2;
			break;
		case ARG_SMOKE:
			a->smoke = true;
			break;
		case ARG_NO_LAYOUT:
			t->check_layout = false;
			break;
		case 'j':
			t->json = true;
			break;
		default:
			return 2;
		}
	if (optind < argc && streq(argv[optind], "--"))
		optind++;
	if (optind < argc)
		a->command = argv + optind;
	return 0;
}

/* Options that go together, and the profiles taken; 0 or 2. */
static int trial_check_args(Trial *t, const TrialArgs *a)
{
	t->n_profiles = strv_length(a->profiles);
	if (t->n_profiles < 2 || t->n_profiles > TRIAL_PROFILES_MAX)
		return log_error("trial: expected 2 to %u --profile options (the first is the reference)",
				 TRIAL_PROFILES_MAX), 2;
	if (!!a->preset == !!a->command)
		return log_error("trial: expected either --preset NAME[:N] or -- COMMAND..."), 2;
	if (a->higher && !a->metric)
		return log_error("trial: --higher-is-better goes with --metric REGEX (wall time is lower-is-better; a "
				 "preset knows its metric)"), 2;
	if (a->smoke && !a->preset)
		return log_error("trial: --smoke sizes a --preset for a quick run (the qemu guest)"), 2;
	if (t->ctx->offline)
		return log_error("trial runs on this machine through topotuned; it has no offline mode (--root)."), 2;
	t->profiles = a->profiles;
	return 0;
}

/* --metric REGEX: the value is the first group (or match) in the output; 0 or 2. */
static int trial_set_metric(Trial *t, const char *metric, bool higher)
{
	int r;

	r = regcomp(&t->metric_re, metric, REG_EXTENDED | REG_NEWLINE);
	if (r != 0) {
		char msg[256];

		regerror(r, &t->metric_re, msg, sizeof(msg));
		return log_error("--metric: not a POSIX extended regular expression: %s", msg), 2;
	}
	t->have_re = true;
	t->higher_is_better = higher;
	t->metric_name = "metric";
	return 0;
}

/* --preset NAME[:N]: its command line and, unless --metric, its metric; 0 or 2. */
static int trial_set_preset(Trial *t, const char *preset, bool smoke)
{
	_cleanup_free_ char *param = NULL, *program = NULL, *err = NULL;
	TrialPresetEnv env;
	int r;

	r = trial_preset_parse(preset, &t->preset, &param);
	if (r == -ENOENT) {
		StrBuf b = {};
		_cleanup_free_ char *names = NULL;

		for (size_t i = 0; i < trial_presets_count; i++)
			strbuf_appendf(&b, "%s%s", i ? ", " : "", trial_presets[i].name);
		(void)strbuf_steal(&b, &names);
		return log_error("--preset: no preset '%s'; there are %s", preset, strna(names)), 2;
	}
	if (r < 0)
		return log_error("--preset: bad count in '%s'", preset), 2;
	r = trial_preset_find_program(t->preset, NULL, &program, &err);
	if (r < 0)
		return log_error("--preset %s: %s", t->preset->name, err ?: strerror(-r)), 2;
	if (preset_env(t->ctx, smoke, &env) < 0)
		return 2;
	r = trial_preset_argv(t->preset, &env, program, param, &t->argv);
	if (r < 0)
		return log_error_errno(r, "--preset %s: %m", t->preset->name), 2;
	if (!t->have_re) {
		t->metric_name = t->preset->metric;
		t->higher_is_better = t->preset->higher_is_better;
	}
	return 0;
}

/*
 * Warm-up rounds in the given order, then the measured ones: odd rounds in
 * the given order, even ones reversed (AB BA AB ...), so that neither
 * profile always runs first after a switch. Then the hold ends (or, had we
 * died, when our connection went): the profile before is back. 0 or 2.
 */
static int trial_run_rounds(Trial *t)
{
	unsigned total = (t->warmup + t->rounds) * (unsigned)t->n_profiles, done = 0;
	int r, ret = 0;

	for (unsigned round = 0; ret == 0 && round < t->warmup + t->rounds; round++)
		for (size_t k = 0; k < t->n_profiles; k++) {
			bool reversed = round >= t->warmup && (round - t->warmup) % 2 == 1;
			size_t p = reversed ? t->n_profiles - 1 - k : k;

			r = do_run(t, p, round < t->warmup ? 0 : round - t->warmup + 1, ++done, total);
			if (r < 0) {
				ret = 2;
				break;
			}
		}

	if (t->cookie) {
		_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

		r = sd_bus_call_method(t->bus, ONLINE_DEST, ONLINE_PATH, ONLINE_IFACE, "ReleaseProfile", &error, NULL,
				       "u", t->cookie);
		if (r < 0) {
			log_error("ReleaseProfile(%u): %s", t->cookie, error.message ?: strerror(-r));
			ret = 2;
		}
	}
	return ret;
}

/* Each profile against the first, as text or JSON; 0 or 2. */
static int trial_report(Trial *t)
{
	ProfileResult *res;
	int r;

	res = calloc(t->n_profiles, sizeof(ProfileResult));
	if (!res)
		return log_oom(), 2;
	r = compute_results(t, res);
	if (r < 0) {
		results_free(res, t->n_profiles);
		return log_error_errno(r, "Computing the statistics failed: %m"), 2;
	}
	if (t->json)
		print_json(t, res);
	else
		print_text(t, res);
	results_free(res, t->n_profiles);
	return fflush(stdout) == 0 ? 0 : 2;
}

int verb_trial(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(trial_done) Trial t = {
		.ctx = ctx, .rounds = TRIAL_ROUNDS_DEFAULT, .warmup = 1, .confidence = 0.95,
		.settle_s = TRIAL_SETTLE_DEFAULT_S, .json = ctx->json, .check_layout = true,
		.metric_name = "wall_time_s",
	};
	_cleanup_(trial_args_done) TrialArgs a = {};
	int r;

	r = trial_parse_args(&t, &a, argc, argv);
	if (r)
		return r;
	r = trial_check_args(&t, &a);
	if (r)
		return r;
	if (a.metric) {
		r = trial_set_metric(&t, a.metric, a.higher);
		if (r)
			return r;
	}
	if (a.preset) {
		r = trial_set_preset(&t, a.preset, a.smoke);
		if (r)
			return r;
	} else {
		t.argv = strv_copy(a.command);
		if (!t.argv)
			return log_oom(), 2;
	}
	if (t.rounds < (unsigned)MAX(stats_min_samples(t.confidence), 0))
		log_warning("%u rounds per profile cannot give a %.0f %% interval (it needs %d); the report says how "
			    "far it gets.", t.rounds, 100 * t.confidence, stats_min_samples(t.confidence));

	r = online_connect(ctx, &t.bus);
	if (r)
		return r;
	r = refuse_if_held(t.bus);
	if (r)
		return r;
	r = trial_run_rounds(&t);
	if (r)
		return r;
	return trial_report(&t);
}
