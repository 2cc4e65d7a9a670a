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

int ctl_session_open(const CtlContext *ctx, Session *s, bool want_config)
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
	if (optind < argc)
		return log_error_errno(-EINVAL, "%s: unexpected argument '%s'", argv[0], argv[optind]);
	return 0;
}

void ctl_json_begin(JsonWriter *w)
{
	json_init(w, stdout, true);
	json_begin_object(w);
	json_key(w, "schema");
	json_int(w, CTL_JSON_SCHEMA);
}

void ctl_json_end(JsonWriter *w)
{
	json_end_object(w);
	json_finish(w);
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
	if (ctl_session_open(ctx, &s, false) < 0)
		return 2;
	if (json) {
		JsonWriter w;

		ctl_json_begin(&w);
		print_topology_json(&w, &s.identity, s.topology);
		ctl_json_end(&w);
	} else {
		print_identity(stdout, &s.identity);
		print_topology(stdout, s.topology);
	}
	return 0;
}

static int verb_profiles(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(session_selection_done) SessionSelection sel = {};
	_cleanup_free_ char *err = NULL;
	const char *selected;
	ProfileInfo *list = NULL;
	bool json = ctx->json;
	size_t n = 0;
	int r;

	if (parse_json_option(argc, argv, &json) < 0)
		return 2;
	if (ctl_session_open(ctx, &s, true) < 0)
		return 2;
	r = profile_list(s.config_fd, &list, &n, &err);
	if (r < 0) {
		log_error_errno(r, "%s", err ?: "Failed to list profiles");
		return 2;
	}
	/* As topotuned selects at start (no hold, no SetProfile(), no workload). */
	(void)session_select(&s, NULL, &sel);
	selected = sel.name;
	if (json) {
		JsonWriter w;

		ctl_json_begin(&w);
		json_key(&w, "source");
		json_string(&w, "configuration");
		json_key(&w, "profile");
		json_string(&w, selected);
		json_key(&w, "profiles");
		json_begin_array(&w);
		for (size_t i = 0; i < n; i++)
			json_row(&w, JSON_STR("name", list[i].name), JSON_STR("description", list[i].description),
				 JSON_STR("path", list[i].path));
		json_end_array(&w);
		ctl_json_end(&w);
	} else {
		for (size_t i = 0; i < n; i++)
			printf("%c %-12s %-45s %s\n", streq_ptr(selected, list[i].name) ? '*' : ' ',
			       tty_text(list[i].name), tty_text(list[i].path), tty_text(list[i].description));
		if (n == 0)
			printf("No profiles in /etc/topotune/profiles or /usr/lib/topotune/profiles.\n");
	}
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

	if (ctl_session_open(ctx, s, true) < 0)
		return -EINVAL;
	r = session_compute(s, profile, &p, &settings, ret, &err);
	if (r < 0)
		return log_error_errno(r, "%s", err ?: "Failed to compute the plan");
	return 0;
}

static void step_json(JsonWriter *w, const PlanStep *st)
{
	_cleanup_free_ char *origin = st->origin.file ? origin_to_string(&st->origin) : NULL;

	json_row(w, JSON_STR("setting", setting_id_to_string(st->setting)),
		 JSON_STR("action", step_action_to_string(st->action)), JSON_STR("actual", st->from),
		 JSON_STR("desired", st->to), JSON_STR("control", st->control ? st->control->name : NULL),
		 JSON_STR("why", st->why), JSON_STR("origin", origin));
}

static void plan_json(const Plan *plan, const Session *s, const char *desc)
{
	_cleanup_free_ char *isolated = NULL, *housekeeping = NULL;
	JsonWriter w;

	(void)cpuset_format_list(&plan->isolated, &isolated);
	(void)cpuset_format_list(&plan->housekeeping, &housekeeping);
	ctl_json_begin(&w);
	json_key(&w, "profile");
	json_string(&w, plan->profile);
	json_key(&w, "cpu_description");
	json_string(&w, desc);
	json_key(&w, "kernel");
	json_row(&w, JSON_STR("release", s->caps.release[0] ? s->caps.release : NULL),
		 JSON_STRV("notes", s->caps.notes));
	json_key(&w, "steps");
	json_begin_array(&w);
	for (size_t i = 0; i < _SETTING_MAX; i++)
		if (plan_has_step(plan, i))
			step_json(&w, &plan->steps[i]);
	json_end_array(&w);
	json_key(&w, "isolated_cpus");
	json_string(&w, isolated);
	json_key(&w, "housekeeping_cpus");
	json_string(&w, housekeeping);
	json_key(&w, "relax_domain_level");
	json_int(&w, plan->relax_level);
	json_key(&w, "smt_buddy_assist");
	json_bool(&w, plan->smt_buddy_assist);
	json_key(&w, "pending_kernel_cmdline");
	json_string(&w, plan->kernel_cmdline ?: "");
	/* What housekeeping cannot move: the IRQs the kernel refused at topotuned's last apply. */
	json_key(&w, "irqs_refused");
	json_begin_array(&w);
	for (size_t i = 0; i < s->caps.n_irqs_refused; i++) {
		int e = s->caps.irqs_refused_error ? s->caps.irqs_refused_error[i] : 0;

		json_row(&w, JSON_INT("irq", s->caps.irqs_refused[i]),
			 JSON_STR("error", e < 0 ? kernel_errno_name(e) : NULL),
			 JSON_STR("reason", kernel_irq_refused_reason(e)));
	}
	json_end_array(&w);
	ctl_json_end(&w);
}

/* The options of plan and layout: what to predict, for which CPU, how. */
typedef struct ViewOptions {
	const char *profile;
	unsigned cpu;
	bool have_cpu, json, compare;
} ViewOptions;

/* --profile P, --cpu N, --json and (layout's) --compare; 0, or 2 (logged). */
static int parse_view_options(const CtlContext *ctx, int argc, char *argv[], bool with_compare, ViewOptions *ret)
{
	static const struct option options[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "compare", no_argument, NULL, 'C' },
		{}
	};
	/* plan's: without --compare. */
	static const struct option plan_options[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{}
	};
	ViewOptions o = { .json = ctx->json };
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "p:c:j", with_compare ? options : plan_options, NULL)) >= 0)
		switch (c) {
		case 'p':
			o.profile = optarg;
			break;
		case 'c':
			if (parse_cpu_arg(optarg, &o.cpu) < 0)
				return 2;
			o.have_cpu = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'C':
			o.compare = true;
			break;
		default:
			return 2;
		}
	*ret = o;
	return 0;
}

static int verb_plan(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_free_ char *text = NULL, *desc = NULL;
	ViewOptions o;
	int r;

	r = parse_view_options(ctx, argc, argv, false, &o);
	if (r)
		return r;
	if (optind < argc)
		return log_error("plan: unexpected argument '%s'", argv[optind]), 2;
	if (o.json && o.have_cpu)
		return log_error("plan --json has no layout; use 'layout --json --cpu N'"), 2;

	if (compute(ctx, &s, o.profile, &plan) < 0)
		return 2;
	r = cpu_identity_describe(&s.identity, &desc);
	if (r >= 0 && !o.json)
		r = plan_format(plan, o.cpu, &text);
	if (r < 0) {
		log_oom();
		return 2;
	}
	if (o.json) {
		plan_json(plan, &s, desc);
		return 0;
	}
	printf("CPU: %s\nKernel: %s\n", desc, s.caps.release[0] ? s.caps.release : "unknown");
	STRV_FOREACH(n, s.caps.notes)
		printf("Kernel note: %s\n", *n);
	fputs(tty_text(text), stdout);
	return 0;
}

/* The predicted layout: every online CPU's domains, or only @cpu's (>= 0). */
static void layout_json(const Plan *p, const Topology *t, int cpu_only)
{
	JsonWriter w;

	ctl_json_begin(&w);
	json_key(&w, "source");
	json_string(&w, "predicted");
	json_key(&w, "profile");
	json_string(&w, p->profile);
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

		if (cpu_only >= 0 && (int)cpu != cpu_only)
			continue;
		json_begin_object(&w);
		json_key(&w, "cpu");
		json_int(&w, cpu);
		json_key(&w, "domains");
		json_begin_array(&w);
		for (size_t i = 0; i < d->n; i++) {
			_cleanup_free_ char *span = NULL, *flags = NULL;

			if (cpuset_format_list(&d->sd[i].span->cpus, &span) < 0 || domain_flags_to_string(d->sd[i].flags, &flags) < 0)
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
	ctl_json_end(&w);
}

/*
 * The layout the kernel reports (proc/schedstat, debugfs) against the one
 * the model predicts for the kernel's current settings. Exit 0 equal, 1
 * different, 2 error.
 */
/*
 * The kernel's layout against the prediction for its current settings: the
 * number of differences (the first @max in *ret_diffs), or a logged error.
 */
static int compare_compute(const CtlContext *ctx, Session *s, size_t max, Plan **ret_plan, LiveLayout **ret_live,
			   char ***ret_diffs)
{
	/* Every setting's mode 0 is "keep" (housekeeping_smt's whole-cores then has nothing to shape). */
	ProfileSettings keep = {};
	PlanInput in;
	int r, n;

	if (ctl_session_open(ctx, s, false) < 0)
		return -EINVAL;
	in = (PlanInput) { &s->identity, s->topology, &s->caps, &keep, "current kernel settings" };
	r = plan_compute(&in, ret_plan);
	if (r < 0)
		return log_error_errno(r, "Failed to predict the layout: %m");
	r = live_layout_load(s->root_fd, ret_live);
	if (r < 0)
		return log_error_errno(r, "Failed to read %s/proc/schedstat: %m", streq(ctx->root, "/") ? "" : ctx->root);
	n = domains_compare((*ret_plan)->layout, *ret_live, max, ret_diffs);
	if (n < 0)
		return log_error_errno(n, "Failed to compare layouts: %m");
	return n;
}

int ctl_layout_differences(const CtlContext *ctx, char **ret_first)
{
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_(live_layout_freep) LiveLayout *live = NULL;
	_cleanup_strv_free_ char **diffs = NULL;
	int n;

	n = compare_compute(ctx, &s, 1, &plan, &live, &diffs);
	if (n > 0 && ret_first && diffs && diffs[0])
		*ret_first = strdup(diffs[0]);
	return n;
}

static int layout_compare(const CtlContext *ctx, bool json)
{
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_(live_layout_freep) LiveLayout *live = NULL;
	_cleanup_strv_free_ char **diffs = NULL;
	int n;

	n = compare_compute(ctx, &s, 40, &plan, &live, &diffs);
	if (n < 0)
		return 2;
	if (json) {
		JsonWriter w;

		ctl_json_begin(&w);
		json_key(&w, "source");
		json_string(&w, "compare");
		json_key(&w, "schedstat_version");
		json_int(&w, live->schedstat_version);
		json_key(&w, "debugfs");
		json_bool(&w, live->debugfs);
		json_key(&w, "relax_domain_level");
		json_int(&w, plan->relax_level);
		json_key(&w, "smt_buddy_assist");
		json_bool(&w, plan->smt_buddy_assist);
		json_key(&w, "notes");
		json_begin_array(&w);
		STRV_FOREACH(note, live->notes)
			json_string(&w, *note);
		json_end_array(&w);
		json_key(&w, "predicted_messages");
		json_begin_array(&w);
		STRV_FOREACH(x, plan->layout->warnings)
			json_string(&w, *x);
		json_end_array(&w);
		json_key(&w, "match");
		json_bool(&w, n == 0);
		json_key(&w, "differences");
		json_int(&w, n);
		json_key(&w, "first_differences");
		json_begin_array(&w);
		STRV_FOREACH(d, diffs)
			json_string(&w, *d);
		json_end_array(&w);
		ctl_json_end(&w);
		return n == 0 ? 0 : 1;
	}
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

/*
 * layout: through topotuned when @daemon (it runs, and not --root), else
 * predicted in-process; comparing with the kernel's own report and
 * predicting another profile are always in-process jobs.
 */
static int verb_layout(const CtlContext *ctx, int argc, char *argv[], bool daemon)
{
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_free_ char *text = NULL;
	ViewOptions o;
	int r;

	r = parse_view_options(ctx, argc, argv, true, &o);
	if (r)
		return r;
	if (o.compare && (o.profile || o.have_cpu))
		return log_error("layout --compare takes no --profile or --cpu"), 2;
	if (o.compare)
		return layout_compare(ctx, o.json);
	if (daemon && !o.profile)
		return online_layout(ctx, o.have_cpu ? (int)o.cpu : -1, o.json);

	if (optind < argc)
		return log_error("layout: unexpected argument '%s'", argv[optind]), 2;
	if (compute(ctx, &s, o.profile, &plan) < 0)
		return 2;
	if (o.have_cpu && !cpuset_contains(&s.topology->online, o.cpu))
		return log_error("--cpu: CPU %u is not online", o.cpu), 2;
	if (o.json) {
		layout_json(plan, s.topology, o.have_cpu ? (int)o.cpu : -1);
		return 0;
	}
	if (domain_layout_format(plan->layout, o.cpu, &text) < 0) {
		log_oom();
		return 2;
	}
	fputs(tty_text(text), stdout);
	return 0;
}

static int verb_layout_offline(const CtlContext *ctx, int argc, char *argv[])
{
	return verb_layout(ctx, argc, argv, false);
}

static int verb_layout_online(const CtlContext *ctx, int argc, char *argv[])
{
	return verb_layout(ctx, argc, argv, true);
}

/* One layer of a setting's value: built-in default, a hardware rule, the profile, topotune.conf. */
typedef struct ExplainLayer {
	char *what;
	char *value;
	char *origin;   /* NULL: built-in */
	bool winner;    /* the value in force comes from here */
} ExplainLayer;

static int explain_layer(ExplainLayer *l, const char *what, const ProfileSettings *s, SettingId id)
{
	const Origin *o = &s->origin[id];

	if (!o->file)
		return 0;
	l->what = strdup(what);
	l->origin = origin_to_string(o);
	if (!l->what || !l->origin || setting_format(id, &s->value[id], &l->value) < 0)
		return -ENOMEM;
	return 1;
}

static void explain_layers_free(ExplainLayer *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(l[i].what);
		free(l[i].value);
		free(l[i].origin);
	}
	free(l);
}

/* Every file that sets @id, lowest first, and which of them is in force. */
typedef struct Explanation {
	const char *setting;     /* as the user wrote it */
	SettingId id;
	char *value, *where, *def;
	bool from_file;          /* not the built-in default */
	ExplainLayer *layers;
	size_t n_layers, n_max;
	SettingId step_id;       /* the step that reads it: its own, or the one it belongs to */
	const PlanStep *step;
} Explanation;

static void explanation_done(Explanation *e)
{
	free(e->value);
	free(e->where);
	free(e->def);
	explain_layers_free(e->layers, e->n_max);
}

static int explain_add_layer(Explanation *e, const char *what, const ProfileSettings *settings)
{
	int r;

	if (!what)
		return -ENOMEM;
	r = explain_layer(&e->layers[e->n_layers], what, settings, e->id);
	if (r < 0)
		return r;
	e->n_layers += r > 0;
	return 0;
}

/* Hardware rules, each profile of the include chain (base first), topotune.conf, each drop-in. */
static int explain_collect(Explanation *e, const Session *s, const Profile *p)
{
	int r;

	e->n_max = s->n_rules + p->n_layers + (s->config ? strv_length(s->config->files) : 0);
	e->layers = calloc(e->n_max + 1, sizeof(*e->layers));
	if (!e->layers)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_rules; i++) {
		const char *slash = strrchr(s->rules[i]->path, '/');
		_cleanup_free_ char *rule = NULL;

		if (!hardware_rule_matches(s->rules[i], &s->facts))
			continue;
		rule = strprintf("hardware rule %s", slash ? slash + 1 : s->rules[i]->path);
		r = explain_add_layer(e, rule, &s->rules[i]->settings);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->n_layers; i++) {
		const char *name = p->chain[i];
		_cleanup_free_ char *label = NULL;

		label = streq(name, p->name) ? strprintf("profile %s", name)
					     : strprintf("profile %s (included by %s)", name, p->chain[i + 1]);
		r = explain_add_layer(e, label, &p->layers[i]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; s->config && s->config->files[i]; i++) {
		const char *f = s->config->files[i], *slash = strrchr(f, '/');
		const Origin *o = &s->config->layers[i].origin[e->id];
		_cleanup_free_ char *label = NULL;

		/* After this file: only where the value comes from this very file did it set it. */
		if (!o->file || !streq(o->file, f))
			continue;
		label = strstr(f, "/topotune.conf.d/") ? strprintf("conf.d %s", slash + 1) : strdup("topotune.conf");
		r = explain_add_layer(e, label, &s->config->layers[i]);
		if (r < 0)
			return r;
	}
	/* The layer the value in force comes from; none: the built-in default. */
	for (size_t i = 0; i < e->n_layers; i++)
		e->layers[i].winner = e->from_file && streq_ptr(e->layers[i].origin, e->where);
	return 0;
}

static void explain_print_json(const Explanation *e)
{
	JsonWriter w;

	ctl_json_begin(&w);
	json_key(&w, "setting");
	json_string(&w, e->setting);
	json_key(&w, "value");
	json_string(&w, e->value);
	json_key(&w, "origin");
	json_string(&w, e->from_file ? e->where : NULL);
	json_key(&w, "default");
	json_string(&w, e->def);
	json_key(&w, "layers");
	json_begin_array(&w);
	for (size_t i = 0; i < e->n_layers; i++)
		json_row(&w, JSON_STR("layer", e->layers[i].what), JSON_STR("value", e->layers[i].value),
			 JSON_STR("origin", e->layers[i].origin), JSON_BOOL("winner", e->layers[i].winner));
	json_end_array(&w);
	json_key(&w, "step");
	step_json(&w, e->step);
	ctl_json_end(&w);
}

static void explain_print_text(const Explanation *e)
{
	const PlanStep *st = e->step;

	printf("%s = %s\n  from: %s\n  layers, lowest first (* in force):\n", e->setting, strna(e->value),
	       tty_text(strna(e->where)));
	printf("  %s %-40s %-16s %s\n", e->from_file ? " " : "*", "built-in default", strna(e->def), "-");
	for (size_t i = 0; i < e->n_layers; i++)
		printf("  %s %-40s %-16s %s\n", e->layers[i].winner ? "*" : " ", tty_text(e->layers[i].what),
		       e->layers[i].value, tty_text(e->layers[i].origin));
	if (e->step_id != e->id)
		printf("  plan: no step of its own; the %s step reads it\n", setting_id_to_string(e->step_id));
	printf("  plan: %s, %s -> %s%s%s\n  why: %s\n", step_action_to_string(st->action), st->from, st->to,
	       st->control ? " via " : "", st->control ? st->control->name : "",
	       tty_text(st->why));
}

/* The setting named in explain's one argument; 0 or 2 (logged). */
static int explain_parse_setting(int argc, char *argv[], SettingId *ret)
{
	_cleanup_free_ char *names = setting_names_text();
	SettingId id;

	if (!names)
		return log_oom(), 2;
	if (argc - optind != 1)
		return log_error("explain: expected one setting: %s", names), 2;
	id = setting_id_from_string(argv[optind]);
	if (id < 0)
		return log_error("explain: unknown setting '%s': expected %s", argv[optind], names), 2;
	*ret = id;
	return 0;
}

static int verb_explain(const CtlContext *ctx, int argc, char *argv[])
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "list", no_argument, NULL, 'l' },
		{}
	};
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_(profile_settings_done) ProfileSettings settings = {};
	_cleanup_(explanation_done) Explanation e = {};
	_cleanup_free_ char *err = NULL;
	bool json = ctx->json, list = false;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "jl", options, NULL)) >= 0)
		if (c == 'j')
			json = true;
		else if (c == 'l')
			list = true;
		else
			return 2;
	if (list) {
		/* For shell completion: the settings table's names, one a line. */
		SETTING_FOREACH(i)
			printf("%s\n", setting_id_to_string(i));
		return 0;
	}
	r = explain_parse_setting(argc, argv, &e.id);
	if (r)
		return r;
	e.setting = argv[optind];
	if (ctl_session_open(ctx, &s, true) < 0)
		return 2;
	r = session_compute(&s, NULL, &p, &settings, &plan, &err);
	if (r < 0)
		return log_error_errno(r, "%s", err ?: "Failed to compute the plan"), 2;

	(void)setting_format(e.id, &settings.value[e.id], &e.value);
	(void)setting_format(e.id, &setting_get(e.id)->default_value, &e.def);
	e.where = origin_to_string(&settings.origin[e.id]);
	e.from_file = settings.origin[e.id].file;
	if (explain_collect(&e, &s, p) < 0)
		return log_oom(), 2;
	e.step_id = plan_has_step(plan, e.id) ? e.id : plan_step_of(e.id);
	e.step = &plan->steps[e.step_id];
	if (json)
		explain_print_json(&e);
	else
		explain_print_text(&e);
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

	if (argc > 1 || ctx->json)
		return log_error("metrics takes no arguments; its output is the Prometheus text format, not JSON"), 2;
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

typedef int (*CtlVerbRun)(const CtlContext *ctx, int argc, char *argv[]);

/*
 * Every verb, once: its in-process entry (NULL: it needs topotuned) and its
 * entry through topotuned (NULL: always in-process). With both, topotuned
 * answers when it runs, unless --root.
 */
static const struct {
	const char *name;
	CtlVerbRun offline;
	CtlVerbRun online;
} verbs[] = {
	{ "status", NULL, verb_status },
	{ "apply", NULL, verb_apply },
	{ "revert", NULL, verb_revert },
	{ "reload", NULL, verb_reload },
	{ "verify", NULL, verb_verify },
	{ "set-profile", NULL, verb_set_profile },
	{ "auto-profile", NULL, verb_auto_profile },
	{ "hold", NULL, verb_hold },
	{ "trial", NULL, verb_trial },
	{ "profiles", verb_profiles, online_profiles },
	{ "layout", verb_layout_offline, verb_layout_online },
	{ "metrics", verb_metrics, online_metrics },
	{ "topology", verb_topology, NULL },
	{ "plan", verb_plan, NULL },
	{ "explain", verb_explain, NULL },
	{ "check", verb_check, NULL },
	{ "diagnose", verb_diagnose, NULL },
};

int ctl_dispatch(const CtlContext *ctx, int argc, char *argv[])
{
	for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
		if (!streq(argv[0], verbs[i].name))
			continue;
		if (!verbs[i].online)
			return verbs[i].offline(ctx, argc, argv);
		if (!verbs[i].offline && ctx->offline)
			return log_error("%s talks to topotuned; it has no offline mode (--root). "
					 "Try 'plan' or 'layout' instead.", argv[0]), 2;
		if (verbs[i].offline && (ctx->offline || (!ctx->bus_address && !online_daemon_available(ctx))))
			return verbs[i].offline(ctx, argc, argv);   /* no daemon: read / in-process */
		return verbs[i].online(ctx, argc, argv);
	}
	log_error("Unknown command '%s'. See topotunectl --help.", argv[0]);
	return 2;
}
