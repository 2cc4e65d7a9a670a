/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topotunectl verbs that run the library in-process: they discover,
 * load the configuration and plan, and print. Nothing here writes to the
 * system.
 */
#include <fcntl.h>
#include <getopt.h>

#include "ctl.h"
#include "fileio.h"
#include "json.h"
#include "log.h"
#include "online.h"
#include "compare.h"
#include "counters.h"
#include "planner.h"
#include "session.h"
#include "strutil.h"
#include "topology-print.h"

/* Discover (and configure), logging what fails. */
static int session_open(const CtlContext *ctx, Session *s, bool want_config)
{
	_cleanup_free_ char *err = NULL;
	SessionKernel kernel = streq(ctx->kernel, "patched") ? SESSION_KERNEL_PATCHED :
			       streq(ctx->kernel, "stock") ? SESSION_KERNEL_STOCK : SESSION_KERNEL_PROBE;
	int r;

	r = session_discover(s, ctx->root, ctx->config_root, !ctx->offline, ctx->cpuid_dump, kernel, &err);
	if (r >= 0 && want_config)
		r = session_configure(s, &err);
	if (r < 0)
		return log_error_errno(r, "%s", err ?: "Failed to read the machine or its configuration");
	return 0;
}

int parse_json_option(int argc, char *argv[], bool *json)
{
	static const struct option options[] = { { "json", no_argument, NULL, 'j' }, {} };
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "j", options, NULL)) >= 0)
		if (c == 'j')
			*json = true;
		else
			return -EINVAL;
	return 0;
}

int parse_cpu_arg(const char *s, unsigned *ret)
{
	int r = safe_atou_base(s, 10, ret);

	if (r < 0 || *ret >= CPUSET_MAX_CPUS)
		return log_error_errno(-EINVAL, "--cpu: expected a CPU number, got '%s'", s);
	return 0;
}

static int verb_topology(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(session_done) Session s = SESSION_INIT;
	bool json = ctx->json;

	if (parse_json_option(argc, argv, &json) < 0)
		return 2;
	if (session_open(ctx, &s, false) < 0)
		return 2;
	if (json)
		print_topology_json(stdout, &s.identity, s.topology);
	else {
		print_identity(stdout, &s.identity);
		print_topology(stdout, s.topology);
	}
	return 0;
}

static int verb_profiles(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_free_ char *err = NULL, *selected = NULL;
	ProfileInfo *list = NULL;
	size_t n = 0;
	int r;

	if (session_open(ctx, &s, true) < 0)
		return 2;
	r = profile_list(s.config_fd, &list, &n, &err);
	if (r < 0) {
		log_error_errno(r, "%s", err ?: "Failed to list profiles");
		return 2;
	}
	(void)profile_select(s.config, s.rules, s.n_rules, &s.facts, &selected, NULL);
	for (size_t i = 0; i < n; i++)
		printf("%c %-12s %-45s %s\n", streq_ptr(selected, list[i].name) ? '*' : ' ', tty_text(list[i].name),
		       tty_text(list[i].path), tty_text(list[i].description));
	if (n == 0)
		printf("No profiles in /etc/topotune/profiles or /usr/lib/topotune/profiles.\n");
	profile_info_array_free(list, n);
	return 0;
}

const char *tty_text(const char *s)
{
	static char *ring[8];
	static unsigned next;
	char **slot = &ring[next++ % ELEMENTSOF(ring)];

	free(*slot);
	*slot = text_escape_control(s);
	return *slot ?: "(out of memory)";
}

static int compute(const CtlContext *ctx, Session *s, const char *profile, Plan **ret)
{
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_(profile_settings_done) ProfileSettings settings = {};
	_cleanup_free_ char *err = NULL;
	int r;

	if (session_open(ctx, s, true) < 0)
		return -EINVAL;
	r = session_compute(s, profile, &p, &settings, ret, &err);
	if (r < 0)
		return log_error_errno(r, "%s", err ?: "Failed to compute the plan");
	return 0;
}

static int verb_plan(const CtlContext *ctx, int argc, char *argv[])
{
	static const struct option options[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'c' },
		{}
	};
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_free_ char *text = NULL, *desc = NULL;
	const char *profile = NULL;
	unsigned cpu = 0;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "p:c:", options, NULL)) >= 0)
		switch (c) {
		case 'p':
			profile = optarg;
			break;
		case 'c':
			if (parse_cpu_arg(optarg, &cpu) < 0)
				return 2;
			break;
		default:
			return 2;
		}

	if (compute(ctx, &s, profile, &plan) < 0)
		return 2;
	r = cpu_identity_describe(&s.identity, &desc);
	if (r >= 0)
		r = plan_format(plan, cpu, &text);
	if (r < 0) {
		log_oom();
		return 2;
	}
	printf("CPU: %s\nKernel: %s\n", desc, s.caps.release[0] ? s.caps.release : "unknown");
	STRV_FOREACH(n, s.caps.notes)
		printf("Kernel note: %s\n", *n);
	fputs(tty_text(text), stdout);
	return 0;
}

static void layout_json(const Plan *p, const Topology *t)
{
	JsonWriter w;

	json_init(&w, stdout, true);
	json_begin_object(&w);
	json_key(&w, "relax_domain_level");
	json_int(&w, p->relax_level);
	json_key(&w, "smt_buddy_assist");
	json_bool(&w, p->smt_buddy_assist);
	json_key(&w, "sched_distances");
	json_begin_array(&w);
	for (size_t i = 0; i < p->layout->n_numa_distances; i++)
		json_int(&w, p->layout->numa_distances[i]);
	json_end_array(&w);
	/* Unknown node distances: the sched distances above are the kernel's default, not facts. */
	json_key(&w, "sched_distances_assumed");
	json_bool(&w, p->layout->distances_assumed);
	if (p->layout->distances_assumed) {
		json_key(&w, "assumed_distances");
		json_begin_object(&w);
		json_key(&w, "local");
		json_int(&w, DOMAINS_LOCAL_DISTANCE);
		json_key(&w, "remote");
		json_int(&w, DOMAINS_REMOTE_DISTANCE);
		json_key(&w, "why");
		json_string(&w, DOMAINS_ASSUMED_DISTANCES_TEXT);
		json_end_object(&w);
	}
	/* Core kinds without capacities: the asymmetric-capacity flags are left out, and why. */
	if (p->layout->capacities_unknown) {
		json_key(&w, "capacities_unknown");
		json_string(&w, DOMAINS_CAPACITIES_UNKNOWN_TEXT);
	}
	json_key(&w, "cpus");
	json_begin_array(&w);
	CPUSET_FOREACH(cpu, &t->online) {
		const CpuDomains *d = &p->layout->cpus[cpu];

		json_begin_object(&w);
		json_key(&w, "cpu");
		json_int(&w, cpu);
		json_key(&w, "domains");
		json_begin_array(&w);
		for (size_t i = 0; i < d->n; i++) {
			_cleanup_free_ char *span = NULL, *flags = NULL;

			if (cpuset_format_list(&d->sd[i].span, &span) < 0 || domain_flags_to_string(d->sd[i].flags, &flags) < 0)
				continue;
			json_row(&w, JSON_INT("level", d->sd[i].level), JSON_STR("name", d->sd[i].name),
				 JSON_STR("span", span), JSON_STR("flags", flags), JSON_BOOL("newidle", d->sd[i].newidle));
		}
		json_end_array(&w);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_key(&w, "warnings");
	json_begin_array(&w);
	STRV_FOREACH(x, p->layout->warnings)
		json_string(&w, *x);
	json_end_array(&w);
	json_end_object(&w);
	json_finish(&w);
}

/*
 * The layout the kernel reports (proc/schedstat, debugfs) against the one
 * the model predicts for the kernel's current settings. Exit 0 equal, 1
 * different, 2 error.
 */
static int layout_compare(const CtlContext *ctx)
{
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_(live_layout_freep) LiveLayout *live = NULL;
	_cleanup_strv_free_ char **diffs = NULL;
	/* Every setting's mode 0 is "keep" (housekeeping_smt's whole-cores then has nothing to shape). */
	ProfileSettings keep = {};
	PlanInput in;
	int r, n;

	if (session_open(ctx, &s, false) < 0)
		return 2;
	in = (PlanInput) { &s.identity, s.topology, &s.caps, &keep, "current kernel settings" };
	r = plan_compute(&in, &plan);
	if (r < 0)
		return log_error_errno(r, "Failed to predict the layout: %m"), 2;
	r = live_layout_load(s.root_fd, &live);
	if (r < 0)
		return log_error_errno(r, "Failed to read %s/proc/schedstat: %m", streq(ctx->root, "/") ? "" : ctx->root), 2;
	n = domains_compare(plan->layout, live, 40, &diffs);
	if (n < 0)
		return log_error_errno(n, "Failed to compare layouts: %m"), 2;
	printf("Kernel: schedstat version %d%s; predicted for relax_domain_level %d, SMT_BUDDY_ASSIST %s\n",
	       live->schedstat_version, live->debugfs ? ", debugfs names, levels and flags" : "",
	       plan->relax_level, plan->smt_buddy_assist ? "on" : "off");
	STRV_FOREACH(note, live->notes)
		printf("Note: %s\n", *note);
	STRV_FOREACH(w, plan->layout->warnings)
		printf("Predicted kernel message: %s\n", *w);
	if (n == 0) {
		printf("The kernel's scheduler domains match the prediction.\n");
		return 0;
	}
	STRV_FOREACH(d, diffs)
		printf("%s\n", *d);
	if ((size_t)n > strv_length(diffs))
		printf("... %zu more differences\n", (size_t)n - strv_length(diffs));
	printf("%d difference%s.\n", n, n == 1 ? "" : "s");
	return 1;
}

static int verb_layout(const CtlContext *ctx, int argc, char *argv[])
{
	static const struct option options[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "compare", no_argument, NULL, 'C' },
		{}
	};
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_free_ char *text = NULL;
	const char *profile = NULL;
	bool json = ctx->json;
	unsigned cpu = 0;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "p:c:j", options, NULL)) >= 0)
		switch (c) {
		case 'p':
			profile = optarg;
			break;
		case 'c':
			if (parse_cpu_arg(optarg, &cpu) < 0)
				return 2;
			break;
		case 'j':
			json = true;
			break;
		case 'C':
			return layout_compare(ctx);
		default:
			return 2;
		}

	if (compute(ctx, &s, profile, &plan) < 0)
		return 2;
	if (json) {
		layout_json(plan, s.topology);
		return 0;
	}
	if (domain_layout_format(plan->layout, cpu, &text) < 0) {
		log_oom();
		return 2;
	}
	fputs(tty_text(text), stdout);
	return 0;
}

static void explain_layer(const char *what, const ProfileSettings *s, SettingId id)
{
	const Origin *o = &s->origin[id];
	_cleanup_free_ char *v = NULL, *where = NULL;

	if (!o->file)
		return;
	(void)setting_format(id, &s->value[id], &v);
	where = origin_to_string(o);
	printf("    %-36s %-16s %s\n", tty_text(what), strna(v), tty_text(strna(where)));
}

static int verb_explain(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_(profile_settings_done) ProfileSettings settings = {};
	_cleanup_free_ char *v = NULL, *where = NULL, *def = NULL, *names = NULL, *err = NULL;
	const PlanStep *st;
	SettingId id;
	int r;

	if (argc == 2 && streq(argv[1], "--list")) {
		/* For shell completion: the settings table's names, one a line. */
		SETTING_FOREACH(i)
			printf("%s\n", setting_id_to_string(i));
		return 0;
	}
	names = setting_names_text();
	if (!names)
		return log_oom(), 2;
	if (argc != 2) {
		log_error("explain: expected one setting: %s", names);
		return 2;
	}
	id = setting_id_from_string(argv[1]);
	if (id < 0) {
		log_error("explain: unknown setting '%s': expected %s", argv[1], names);
		return 2;
	}
	if (session_open(ctx, &s, true) < 0)
		return 2;
	r = session_compute(&s, NULL, &p, &settings, &plan, &err);
	if (r < 0)
		return log_error_errno(r, "%s", err ?: "Failed to compute the plan"), 2;

	(void)setting_format(id, &settings.value[id], &v);
	(void)setting_format(id, &setting_get(id)->default_value, &def);
	where = origin_to_string(&settings.origin[id]);
	printf("%s = %s\n  from: %s\n  layers, lowest first:\n", argv[1], strna(v), tty_text(strna(where)));
	printf("    %-36s %-16s %s\n", "built-in default", strna(def), "-");
	for (size_t i = 0; i < s.n_rules; i++)
		if (hardware_rule_matches(s.rules[i], &s.facts)) {
			const char *slash = strrchr(s.rules[i]->path, '/');
			_cleanup_free_ char *label = strprintf("hardware rule %s", slash ? slash + 1 : s.rules[i]->path);

			explain_layer(label ?: "hardware rule", &s.rules[i]->settings, id);
		}
	{
		_cleanup_free_ char *label = strprintf("profile %s", p->name);

		explain_layer(label ?: "profile", &p->settings, id);
	}
	if (s.config)
		explain_layer("topotune.conf / conf.d", &s.config->overrides, id);

	if (!plan_has_step(plan, id)) {
		printf("  plan: no step of its own; the %s step reads it\n", setting_id_to_string(plan_step_of(id)));
		id = plan_step_of(id);
	}
	st = &plan->steps[id];
	printf("  plan: %s, %s -> %s%s%s\n  why: %s\n", step_action_to_string(st->action), st->from, st->to,
	       st->control ? " via " : "", st->control ? st->control->name : "",
	       tty_text(st->why));
	return 0;
}

/*
 * Without topotuned (or with --root) only the kernel's counters can be read:
 * state, profile, settings and drift/repair counts live in the daemon. The
 * output says so in a comment line (the format allows them) and on stderr.
 */
static int verb_metrics(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(kernel_counters_freep) KernelCounters *kc = NULL;
	_cleanup_close_ int root_fd = -EBADF;
	_cleanup_free_ char *text = NULL, *safe = NULL;
	static const char note[] =
		"%s: only the kernel's counters (/proc/schedstat, /proc/sched_smt_buddy_stat); "
		"state, profile, settings, drift and repair counts and the domain layout come from topotuned";
	StrBuf b = {};
	int r;

	if (argc > 1)
		return log_error("metrics takes no arguments"), 2;
	r = root_open(ctx->root, &root_fd);
	if (r < 0)
		return log_error_errno(r, "%s: %m", ctx->root), 2;
	r = kernel_counters_load(root_fd, &kc);
	if (r < 0)
		return log_error_errno(r, "Reading the kernel's scheduler counters below %s failed: %m", ctx->root), 2;
	strbuf_append(&b, "# ");
	strbuf_appendf(&b, note, ctx->offline ? "offline (--root)" : "topotuned is not running");
	strbuf_append(&b, "\n");
	kernel_counters_metrics(kc, &b);
	if (strbuf_steal(&b, &text) < 0 || !(safe = utf8_escape_invalid(text)))
		return log_oom(), 2;
	log_warning(note, ctx->offline ? "offline (--root)" : "topotuned is not running");
	fputs(safe, stdout);
	return fflush(stdout) == 0 ? 0 : 2;
}

int ctl_dispatch(const CtlContext *ctx, int argc, char *argv[])
{
	static const struct {
		const char *name;
		int (*run)(const CtlContext *ctx, int argc, char *argv[]);
	} verbs[] = {
		{ "topology", verb_topology },
		{ "profiles", verb_profiles },
		{ "plan", verb_plan },
		{ "layout", verb_layout },
		{ "explain", verb_explain },
		{ "check", verb_check },
		{ "metrics", verb_metrics },
	};
	bool handled;
	int r;

	r = online_dispatch(ctx, argc, argv, &handled);
	if (handled)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
		if (streq(argv[0], verbs[i].name))
			return verbs[i].run(ctx, argc, argv);

	log_error("Unknown command '%s'. See topotunectl --help.", argv[0]);
	return 2;
}
