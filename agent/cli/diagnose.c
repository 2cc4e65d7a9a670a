/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topotunectl diagnose: always in-process and read-only, like the offline
 * verbs (no daemon, no D-Bus: it runs in a bare initramfs with only /proc
 * and /sys). It samples the live machine for --duration and runs the
 * detectors of agent/diagnose; with --root only the kinds that need no
 * sampling run, and the output says which were not checked and why.
 * Exit 0 nothing found, 1 findings, 2 error.
 */
#include <getopt.h>
#include <math.h>
#include <time.h>

#include "ctl.h"
#include "diagnose.h"
#include "log.h"
#include "session.h"
#include "strutil.h"

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

static void sleep_usec(uint64_t usec)
{
	struct timespec ts = { .tv_sec = (time_t)(usec / 1000000ULL), .tv_nsec = (long)(usec % 1000000ULL) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int parse_only(const char *arg, DiagnoseRequest *req, bool *have_only)
{
	_cleanup_strv_free_ char **l = NULL;

	if (strv_split(arg, ",", &l) < 0)
		return log_oom();
	if (!*have_only)
		memset(req->want, 0, sizeof(req->want));
	*have_only = true;
	STRV_FOREACH(k, l) {
		DiagnoseKind kind = diagnose_kind_from_string(*k);

		if (kind < 0) {
			StrBuf b = {};
			_cleanup_free_ char *names = NULL;

			for (DiagnoseKind i = 0; i < _DIAGNOSE_KIND_MAX; i++)
				strbuf_appendf(&b, "%s%s", i ? ", " : "", diagnose_kind_to_string(i));
			(void)strbuf_steal(&b, &names);
			return log_error_errno(-EINVAL, "--only: unknown kind '%s': expected %s", tty_text(*k),
					       strna(names));
		}
		req->want[kind] = true;
	}
	return 0;
}

static int parse_duration(const char *arg, uint64_t *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end || !isfinite(v) || v <= 0 || v > 3600)
		return log_error_errno(-EINVAL, "--duration: expected seconds, more than 0 and at most 3600, got '%s'",
				       tty_text(arg));
	*ret = (uint64_t)(v * 1e6);
	return 0;
}

/* Sample for @duration: a tick every req->tick_usec (and one at the end). */
static int sample(int root_fd, const DiagnoseRequest *req, uint64_t duration, DiagnoseSampler **ret)
{
	_cleanup_(diagnose_sampler_freep) DiagnoseSampler *s = NULL;
	uint64_t start = now_usec(), next = start;
	int r;

	r = diagnose_sampler_new(root_fd, req, start, &s);
	if (r < 0)
		return r;
	while (next < start + duration) {
		uint64_t now;

		next = MIN(next + req->tick_usec, start + duration);
		now = now_usec();
		if (next > now)
			sleep_usec(next - now);
		r = diagnose_sampler_tick(s, now_usec());
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(s);
	return 0;
}

static void json_strv(JsonWriter *w, const char *key, char *const *l)
{
	json_key(w, key);
	json_begin_array(w);
	STRV_FOREACH(x, l)
		json_string(w, *x);
	json_end_array(w);
}

static void kernel_json(JsonWriter *w, const Session *s)
{
	json_key(w, "kernel");
	json_begin_object(w);
	json_key(w, "release");
	json_string(w, s->caps.release[0] ? s->caps.release : NULL);
	json_key(w, "series");
	json_bool(w, diagnose_series_present(&s->caps));
	json_key(w, "sched_ext");
	json_string(w, s->caps.sched_ext_state[0] ? s->caps.sched_ext_state : NULL);
	json_key(w, "sched_ext_ops");
	json_string(w, s->caps.sched_ext_ops[0] ? s->caps.sched_ext_ops : NULL);
	json_key(w, "fixes");
	json_begin_array(w);
	KERNEL_FIX_FOREACH(i) {
		const KernelFix *f = kernel_fix_get(i);
		int c = kernel_fix_carried(f, s->caps.release);

		json_begin_object(w);
		json_key(w, "commit");
		json_string(w, f->commit);
		json_key(w, "subject");
		json_string(w, f->subject);
		json_key(w, "fixes");
		json_string(w, f->fixes);
		json_strv(w, "releases", (char *const *)f->releases);
		json_key(w, "carried");
		if (c < 0)
			json_null(w);
		else
			json_bool(w, c > 0);
		json_key(w, "relevant");
		json_bool(w, diagnose_fix_relevant(f, s->topology, &s->identity));
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

static void finding_json(JsonWriter *w, const Finding *f)
{
	_cleanup_free_ char *cpus = NULL;

	(void)cpuset_format_list(&f->cpus, &cpus);
	json_begin_object(w);
	json_key(w, "kind");
	json_string(w, diagnose_kind_to_string(f->kind));
	json_key(w, "severity");
	json_string(w, diagnose_severity_to_string(f->severity));
	json_key(w, "summary");
	json_string(w, f->summary);
	json_key(w, "cpus");
	json_string(w, strempty(cpus));
	json_key(w, "seconds");
	json_double(w, f->seconds);
	json_strv(w, "tasks", f->tasks);
	json_strv(w, "evidence", f->evidence);
	json_key(w, "remedy");
	json_string(w, f->remedy);
	json_end_object(w);
}

static void diagnosis_json(const Diagnosis *d, const Session *s, const FirmwareFacts *ff, bool live)
{
	JsonWriter w;

	ctl_json_begin(&w);
	json_key(&w, "source");
	json_string(&w, "diagnose");
	json_key(&w, "live");
	json_bool(&w, live);
	json_key(&w, "duration");
	json_double(&w, d->duration);
	kernel_json(&w, s);
	json_key(&w, "firmware");
	json_row(&w, JSON_INT("packages", ff->packages), JSON_INT("nodes_per_package", ff->nodes_per_package),
		 JSON_BOOL("llc_as_node", ff->llc_as_node), JSON_STR("mode", ff->mode[0] ? ff->mode : NULL));
	json_key(&w, "checked");
	json_begin_array(&w);
	for (DiagnoseKind k = 0; k < _DIAGNOSE_KIND_MAX; k++)
		if (d->checked[k])
			json_string(&w, diagnose_kind_to_string(k));
	json_end_array(&w);
	json_key(&w, "not_checked");
	json_begin_array(&w);
	for (DiagnoseKind k = 0; k < _DIAGNOSE_KIND_MAX; k++)
		if (d->not_checked[k])
			json_row(&w, JSON_STR("kind", diagnose_kind_to_string(k)), JSON_STR("why", d->not_checked[k]));
	json_end_array(&w);
	json_strv(&w, "unreadable", d->unreadable);
	json_key(&w, "findings");
	json_begin_array(&w);
	for (size_t i = 0; i < d->n_findings; i++)
		finding_json(&w, &d->findings[i]);
	json_end_array(&w);
	ctl_json_end(&w);
}

static int diagnosis_text(const Diagnosis *d, const Session *s, const FirmwareFacts *ff, bool live)
{
	_cleanup_free_ char *text = NULL;
	size_t n_checked = 0;

	if (diagnosis_format(d, &text) < 0)
		return log_oom();
	printf("Kernel: %s, topotune series %s%s%s\n", s->caps.release[0] ? s->caps.release : "unknown",
	       diagnose_series_present(&s->caps) ? "present" : "absent",
	       kernel_caps_sched_ext_running(&s->caps) ? ", sched_ext " : "",
	       kernel_caps_sched_ext_running(&s->caps) ? s->caps.sched_ext_ops : "");
	printf("Firmware: %u package%s, %u node%s per package%s%s\n", ff->packages, ff->packages == 1 ? "" : "s",
	       ff->nodes_per_package, ff->nodes_per_package == 1 ? "" : "s", ff->mode[0] ? ": " : "", ff->mode);
	if (live)
		printf("Sampled: %.1f s\n", d->duration);
	for (DiagnoseKind k = 0; k < _DIAGNOSE_KIND_MAX; k++)
		n_checked += d->checked[k];
	fputs(tty_text(text), stdout);
	if (d->n_findings == 0)
		printf("No findings (%zu kind%s checked).\n", n_checked, n_checked == 1 ? "" : "s");
	else
		printf("%zu finding%s.\n", d->n_findings, d->n_findings == 1 ? "" : "s");
	return 0;
}

int verb_diagnose(const CtlContext *ctx, int argc, char *argv[])
{
	enum { ARG_LIST_KINDS = 0x100, ARG_SAMPLE };
	static const struct option options[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "only", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "list-kinds", no_argument, NULL, ARG_LIST_KINDS },
		{ "sample", no_argument, NULL, ARG_SAMPLE },
		{}
	};
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(diagnose_sampler_freep) DiagnoseSampler *sampler = NULL;
	_cleanup_(diagnosis_done) Diagnosis d = {};
	DiagnoseRequest req = { .tick_usec = DIAGNOSE_TICK_USEC };
	uint64_t duration = DIAGNOSE_DURATION_DEFAULT_USEC;
	bool json = ctx->json, have_only = false, force_sample = false;
	FirmwareFacts ff;
	int c, r;

	for (DiagnoseKind k = 0; k < _DIAGNOSE_KIND_MAX; k++)
		req.want[k] = true;
	optind = 0;
	while ((c = getopt_long(argc, argv, "d:o:j", options, NULL)) >= 0)
		switch (c) {
		case 'd':
			if (parse_duration(optarg, &duration) < 0)
				return 2;
			break;
		case 'o':
			if (parse_only(optarg, &req, &have_only) < 0)
				return 2;
			break;
		case 'j':
			json = true;
			break;
		case ARG_LIST_KINDS:
			/* for shell completion and the tests: the kinds table, one a line */
			for (DiagnoseKind k = 0; k < _DIAGNOSE_KIND_MAX; k++)
				printf("%s\n", diagnose_kind_to_string(k));
			return 0;
		case ARG_SAMPLE:
			force_sample = true;
			break;
		default:
			return 2;
		}
	if (optind < argc)
		return log_error("diagnose: unexpected argument '%s'", tty_text(argv[optind])), 2;

	req.live = !ctx->offline || force_sample;
	if (ctl_session_open(ctx, &s, false) < 0)
		return 2;
	if (req.live) {
		r = sample(s.root_fd, &req, duration, &sampler);
		if (r < 0)
			return log_error_errno(r, "Sampling failed: %m"), 2;
	}
	r = diagnose_run(s.root_fd, &req, sampler, s.topology, &s.identity, &s.caps, &d);
	if (r < 0)
		return log_error_errno(r, "Diagnosis failed: %m"), 2;
	STRV_FOREACH(u, d.unreadable)
		log_warning("Could not read %s", tty_text(*u));
	diagnose_firmware_facts(s.topology, &s.identity, &ff);
	if (json)
		diagnosis_json(&d, &s, &ff, req.live);
	else if (diagnosis_text(&d, &s, &ff, req.live) < 0)
		return 2;
	if (fflush(stdout) != 0)
		return 2;
	return d.n_findings > 0 ? 1 : 0;
}
