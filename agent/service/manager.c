/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Manager of topotuned: discovery (identity, topology, kernel), the
 * configuration and the active profile, planning, applying through the
 * applier, crash recovery, verification with drift back-off, and the
 * journal record of every change. The bus side is in manager-bus.c.
 * Depends on every library module; it is the only place that owns them all.
 */
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include "fileio.h"
#include "log.h"
#include "manager.h"
#include "strutil.h"

static char *mfree_str(char *s)
{
	free(s);
	return NULL;
}

static const char *const manager_state_table[_MANAGER_STATE_MAX] = {
	[MANAGER_APPLIED] = "applied",
	[MANAGER_DEGRADED] = "degraded",
	[MANAGER_PENDING_REBOOT] = "pending-reboot",
	[MANAGER_FAILED] = "failed",
	[MANAGER_OFF] = "off",
};

DEFINE_STRING_TABLE_LOOKUP(manager_state, ManagerState);

Manager *manager_free(Manager *m)
{
	if (!m)
		return NULL;
	sd_event_source_unref(m->verify_timer);
	sd_event_source_unref(m->metrics_timer);
	free(m->metrics_written);
	counter_history_done(&m->counters);
	manager_events_done(m);
	manager_diagnose_done(m);
	manager_auth_cancel(m);
	manager_hold_clear(m);
	sd_bus_flush_close_unref(m->bus);
	sd_event_unref(m->event);
	applier_free(m->applier);
	plan_free(m->plan);
	profile_settings_done(&m->settings);
	profile_free(m->profile);
	live_layout_free(m->live);
	domain_layout_free(m->predicted);
	cpuset_done(&m->kernel_isolated);
	free(m->layout_fingerprint);
	session_done(&m->session);
	for (size_t i = 0; i < _SETTING_MAX; i++)
		free(m->backoff_reason[i]);
	for (size_t i = 0; i < _SETTING_MAX; i++)
		free(m->drift_seen[i]);
	for (size_t i = 0; i < MANAGER_CHANGED_PROPERTIES_MAX; i++)
		free(m->emitted[i]);
	free(m->apply_error);
	free(m->plan_error);
	free(m->reload_error);
	free(m->recovered);
	strv_free(m->recovery_problems);
	choice_done(&m->choice);
	free(m->config_root);
	free(m->root);
	free(m->bus_address);
	free(m);
	return NULL;
}

int manager_new(Manager **ret)
{
	Manager *m = calloc(1, sizeof(Manager));

	if (!m)
		return -ENOMEM;
	m->session = (Session) SESSION_INIT;
	m->use_systemd = true;
	m->poll_usec = MANAGER_POLL_USEC_DEFAULT;
	m->workload_hold_usec = 30 * 1000000ULL;
	m->state = MANAGER_OFF;
	profile_settings_init(&m->settings);
	*ret = m;
	return 0;
}

/* --- the journal ------------------------------------------------------------ */

/* A recorded value for MESSAGE=: without the file's trailing newline. */
static char *display_value(const char *v)
{
	char *s = strdup(v ?: "(absent)");

	return s ? strip_trailing(s) : NULL;
}

static void journal_change(void *userdata, const ChangeRecord *c, bool revert)
{
	Manager *m = userdata;
	const char *setting = setting_id_to_string(c->setting);
	const char *old = c->prev, *new = revert ? c->old : c->new;
	_cleanup_free_ char *msg = NULL, *source = NULL, *why = NULL, *o = NULL, *old_text = NULL, *new_text = NULL;
	int r;

	/*
	 * Why: the plan being applied says it best (the record keeps the
	 * reason of its first write); a restore puts back the original.
	 */
	if (revert)
		why = strdup("restoring the value from before topotune");
	else if (m->applying_plan && (size_t)c->setting < _SETTING_MAX) {
		const PlanStep *st = &m->applying_plan->steps[c->setting];

		o = origin_to_string(&st->origin);
		why = strprintf("%s; %s", st->why, strna(o));
	} else
		why = strdup(strempty(c->why));
	if (!why)
		return (void)log_oom();
	source = strprintf("%s%s%s", strempty(m->change_source), m->change_source && *why ? ": " : "", why);
	old_text = display_value(old);
	new_text = display_value(new);
	if (!source || !old_text || !new_text)
		return (void)log_oom();
	msg = strprintf("%s %s: /%s \"%s\" -> \"%s\" (%s)", revert ? "Restored" : "Changed", setting, c->path,
			old_text, new_text, source);
	if (!msg)
		return (void)log_oom();

	r = sd_journal_send("MESSAGE_ID=" TOPOTUNE_MESSAGE_CHANGE,
			    "MESSAGE=%s", msg,
			    "PRIORITY=%i", LOG_NOTICE,
			    "SETTING=%s", setting,
			    "OLD=%s", old ?: "",
			    "NEW=%s", new ?: "",
			    "SOURCE=%s", source,
			    "PATH=/%s", c->path,
			    "REVERT=%s", revert ? "yes" : "no",
			    NULL);
	/* Without journald (tests, containers) stderr is the record. */
	if (r < 0 || !getenv("JOURNAL_STREAM"))
		log_notice("%s", msg);
}

static void journal_drift(const char *setting, const char *want, const char *got, const char *action)
{
	_cleanup_free_ char *msg = strprintf("Drift: %s is \"%s\", wanted \"%s\"; %s", setting, got, want, action);
	int r;

	if (!msg)
		return (void)log_oom();
	r = sd_journal_send("MESSAGE_ID=" TOPOTUNE_MESSAGE_DRIFT, "MESSAGE=%s", msg, "PRIORITY=%i", LOG_WARNING,
			    "SETTING=%s", setting, "NEW=%s", want, "OLD=%s", got, NULL);
	if (r < 0 || !getenv("JOURNAL_STREAM"))
		log_warning("%s", msg);
}

/* --- discovery and configuration -------------------------------------------- */

int manager_discover(Manager *m)
{
	bool live = streq(m->root, "/");
	ApplierHooks hooks = {
		.set_allowed_cpus = m->use_systemd ? manager_set_allowed_cpus : NULL,
		.set_unit_active = m->use_systemd ? manager_set_unit_active : NULL,
		.get_unit_state = m->use_systemd ? manager_get_unit_state : NULL,
		.changed = journal_change,
		.userdata = m,
	};
	_cleanup_free_ char *err = NULL;
	int r;

	r = session_discover(&m->session, m->root, m->config_root, live, NULL, SESSION_KERNEL_PROBE, &err);
	if (r < 0)
		return log_error_errno(r, "%s", err ?: "Failed to discover the machine");
	m->caps_fresh = true;
	STRV_FOREACH(n, m->session.topology->notes)
		log_info("Topology: %s", *n);
	STRV_FOREACH(n, m->session.caps.notes)
		log_info("Kernel: %s", *n);

	r = applier_new(m->session.root_fd, NULL, &hooks, &m->applier);
	if (r < 0)
		return log_oom();
	/* Under the unit, proc/irq is written through its bind (the sandbox keeps /proc/irq read-only). */
	r = applier_set_irq_dir(m->applier, IRQ_BIND_DIR);
	if (r < 0)
		log_warning_errno(r, "/%s: %m; writing /proc/irq itself", IRQ_BIND_DIR);
	else if (r > 0)
		log_debug("Writing /proc/irq through /%s", IRQ_BIND_DIR);
	return 0;
}

int manager_load_config(Manager *m, char **ret_error)
{
	int r;

	r = session_configure(&m->session, ret_error);
	if (r < 0)
		return r;
	m->applier->manage_bootloader = m->session.config->manage_bootloader;
	return 0;
}

/* --- planning ----------------------------------------------------------------- */

int manager_compute(Manager *m, const char *name, Profile **ret_profile, ProfileSettings *ret_settings,
		    Plan **ret_plan, char **ret_error)
{
	_cleanup_(session_selection_done) SessionSelection sel = {};
	int r;

	if (!name) {
		r = choice_select(&m->choice, &m->session, &sel);
		if (r < 0)
			return error_message(ret_error, r, "Failed to select a profile: %s", strerror(-r));
		name = sel.name;
	}

	/* The kernel state of now: the plan's "from" and what is already in place. */
	if (!m->caps_fresh) {
		kernel_caps_done(&m->session.caps);
		r = kernel_probe(m->session.root_fd, &m->session.caps);
		if (r < 0)
			return r;
	}
	m->caps_fresh = false;
	/*
	 * Which IRQs refused at the last apply: the plan names them. The probe
	 * read them from the file the applier keeps; the applier's own list is
	 * the same, and stands when that file could not be written.
	 */
	if (m->applier && m->applier->n_irqs_refused > 0) {
		KernelCaps *k = &m->session.caps;
		size_t n = m->applier->n_irqs_refused;

		free(k->irqs_refused);
		free(k->irqs_refused_error);
		k->n_irqs_refused = 0;
		k->irqs_refused = malloc(n * sizeof(unsigned));
		k->irqs_refused_error = malloc(n * sizeof(int));
		if (!k->irqs_refused || !k->irqs_refused_error)
			return -ENOMEM;
		memcpy(k->irqs_refused, m->applier->irqs_refused, n * sizeof(unsigned));
		memcpy(k->irqs_refused_error, m->applier->irqs_refused_error, n * sizeof(int));
		k->n_irqs_refused = n;
	}

	return session_compute(&m->session, name, ret_profile, ret_settings, ret_plan, ret_error);
}

/* A value the profile chain itself asks for (not a hardware default, not a built-in). */
static bool origin_is_profile(const Origin *o)
{
	return o && o->file && strstr(o->file, "/profiles/");
}

char *manager_unsupported(const Manager *m, const Plan *plan)
{
	StrBuf b = {};
	char *s = NULL;

	for (size_t i = 0; i < _SETTING_MAX; i++) {
		const PlanStep *st = &plan->steps[i];

		if (st->action != STEP_UNSUPPORTED && st->action != STEP_REFUSED)
			continue;
		if (!origin_is_profile(&st->origin))
			continue;
		_cleanup_free_ char *o = origin_to_string(&st->origin);
		strbuf_appendf(&b, "%s%s = %s (%s): %s: %s", b.len ? "; " : "", setting_id_to_string(st->setting), st->to,
			       strna(o), step_action_to_string(st->action), st->why);
	}
	if (b.len == 0) {
		strbuf_done(&b);
		return NULL;
	}
	return strbuf_steal(&b, &s) < 0 ? NULL : s;
}

/* The kernel's value of @id as Settings reads it; NULL when it cannot be read. */
static char *kernel_value(Manager *m, SettingId id)
{
	PlanStep none = { .setting = id, .action = STEP_KEEP };
	char *s = NULL;

	if (applier_read_actual(m->applier, m->plan ? &m->plan->steps[id] : &none, &s) < 0)
		return NULL;
	return s;
}

/*
 * /proc/schedstat's domain lines without their counters ("cpuN", "domainN
 * NAME MASK"), hashed (FNV-1a): what moves when the kernel rebuilds its
 * domains with other spans. 0: no such file.
 */
static uint64_t schedstat_domains_hash(Manager *m)
{
	_cleanup_free_ char *text = NULL;
	uint64_t h = 14695981039346656037ULL;
	unsigned words = 3;

	if (read_file_at(m->session.root_fd, "proc/schedstat", READ_FILE_MAX, &text, NULL) < 0)
		return 0;
	for (const char *p = text; *p;) {
		const char *eol = strchrnul(p, '\n');
		unsigned keep = startswith(p, "version ") ? 2 : startswith(p, "cpu") ? 1 :
				startswith(p, "domain") ? words : 0;

		if (startswith(p, "version ") && atoi(p + 8) < 17)
			words = 2;   /* "domainN MASK counters...": no name */
		for (const char *q = p; keep > 0 && q < eol; q++) {
			if (*q == ' ' && --keep == 0)
				break;
			h = (h ^ (unsigned char)*q) * 1099511628211ULL;
		}
		h = (h ^ '\n') * 1099511628211ULL;
		p = *eol ? eol + 1 : eol;
	}
	return h;
}

void manager_invalidate_layout(Manager *m)
{
	m->layout_fingerprint = mfree_str(m->layout_fingerprint);
}

static void predict_layout(Manager *m, const char *relax_text)
{
	const CpuSet *isolated;
	PlanInput in;
	int relax;

	m->predicted = domain_layout_free(m->predicted);
	if (!m->plan)
		return;
	if (!relax_text || safe_atoi(relax_text, &relax) < 0)
		relax = m->plan->relax_level;
	isolated = m->kernel_isolated_known ? &m->kernel_isolated : &m->plan->isolated;
	/*
	 * The kernel holds the CPUs the plan isolates: the plan predicted this
	 * very layout already, but perhaps for another relax level.
	 */
	if (m->plan->layout && cpuset_equal(isolated, &m->plan->isolated) &&
	    m->plan_topology_generation == m->topology_generation) {
		m->predicted = TAKE_PTR(m->plan->layout);
		if (relax != m->plan->relax_level)
			domain_layout_relax(m->predicted, relax);
		return;
	}
	in = (PlanInput) {
		.identity = &m->session.identity,
		.topology = m->session.topology,
		.caps = &m->session.caps,
		.settings = &m->settings,
		.profile = m->plan->profile,
	};
	if (plan_predict_layout(&in, isolated, relax, &m->predicted) < 0)
		log_debug("Predicting the kernel's layout failed: no layout shown.");
}

void manager_refresh_layout(Manager *m)
{
	_cleanup_free_ char *relax = NULL, *isolated = NULL, *online = NULL, *fp = NULL;
	LiveLayout *l = NULL;
	uint64_t iteration = 0;
	bool same_turn;

	same_turn = m->event && sd_event_get_iteration(m->event, &iteration) >= 0 &&
		    iteration == m->layout_iteration;
	if (same_turn && m->layout_fingerprint)
		return;
	m->layout_iteration = iteration;

	relax = kernel_value(m, SETTING_RELAX_DOMAIN_LEVEL);
	isolated = kernel_value(m, SETTING_ISOLATED_CPUS);
	if (cpuset_format_list(&m->session.topology->online, &online) < 0)
		online = NULL;
	fp = strprintf("%s|%s|%s|%016llx|%s", strna(relax), strna(isolated), strna(online),
		       (unsigned long long)schedstat_domains_hash(m), m->plan ? "plan" : "none");
	if (fp && streq_ptr(fp, m->layout_fingerprint))
		return;

	cpuset_done(&m->kernel_isolated);
	m->kernel_isolated_known = isolated &&
		(streq(isolated, "none") || cpuset_parse_list(isolated, &m->kernel_isolated, NULL) >= 0);
	m->live = live_layout_free(m->live);
	if (live_layout_load(m->session.root_fd, &l) >= 0)
		m->live = l;
	predict_layout(m, relax);
	m->layout_generation++;
	free(m->layout_fingerprint);
	m->layout_fingerprint = TAKE_PTR(fp);
}

bool manager_layout_is_live(const Manager *m)
{
	if (!m->live || m->live->schedstat_version <= 0)
		return false;
	for (unsigned c = 0; c < m->live->n_slots; c++)
		if (m->live->cpus[c].n > 0)
			return true;
	return false;
}

/* --- state -------------------------------------------------------------------- */

void manager_update_state(Manager *m)
{
	/* A kernel event source lost is a degraded daemon, even with every setting in place. */
	bool degraded = m->backed_off != 0 || m->proc_note || m->uevent_note || m->recovery_problems ||
			m->reload_error, pending = false;

	manager_irq_poll_sync(m);
	if (m->state == MANAGER_OFF)
		return;
	if (m->apply_error || m->plan_error) {
		m->state = MANAGER_FAILED;
		return;
	}
	for (size_t i = 0; m->plan && i < _SETTING_MAX; i++)
		switch (m->plan->steps[i].action) {
		case STEP_UNSUPPORTED:
		case STEP_REFUSED:
			degraded = true;
			break;
		case STEP_PENDING_REBOOT:
			pending = true;
			break;
		default:
			break;
		}
	m->state = pending ? MANAGER_PENDING_REBOOT : degraded ? MANAGER_DEGRADED : MANAGER_APPLIED;
}

int manager_state_reasons(Manager *m, char ***ret)
{
	_cleanup_strv_free_ char **l = NULL;
	int r = 0;

	manager_refresh_layout(m);
	if (m->state == MANAGER_OFF)
		r = strv_extend(&l, "off: reverted; call Apply or SetProfile to tune again");
	if (r >= 0 && m->apply_error)
		r = strv_push(&l, strprintf("apply failed and was rolled back: %s", m->apply_error));
	if (r >= 0 && m->plan_error)
		r = strv_extend(&l, m->plan_error);
	if (r >= 0 && m->reload_error)
		r = strv_push(&l, strprintf("reload failed, the previous configuration stays in force: %s",
					    m->reload_error));
	if (r >= 0 && m->recovered)
		r = strv_push(&l, strdup(m->recovered));
	STRV_FOREACH(p, m->recovery_problems)
		if (r >= 0)
			r = strv_push(&l, strprintf("recovery: %s", *p));
	if (r >= 0 && m->choice.workload_rule && m->choice.workload)
		r = strv_push(&l, strprintf("workload rule %s has running processes: profile %s%s",
					    m->choice.workload_rule, m->choice.workload,
					    m->choice.manual ? " wanted, but SetProfile() chose explicitly" : ""));
	if (r >= 0 && m->proc_note)
		r = strv_extend(&l, m->proc_note);
	if (r >= 0 && m->uevent_note)
		r = strv_extend(&l, m->uevent_note);
	if (r >= 0) {
		/* read again at each Get: a BPF scheduler comes and goes without telling us */
		KernelCaps k = {};

		kernel_probe_sched_ext(m->session.root_fd, &k);
		if (kernel_caps_sched_ext_running(&k))
			r = strv_push(&l, strprintf("sched_ext: BPF scheduler '%s' is %s: the fair-class settings "
						    "(smt_buddy_assist, relax_domain_level, numa_balancing) do not "
						    "govern the tasks it schedules",
						    k.sched_ext_ops[0] ? k.sched_ext_ops : "unknown", k.sched_ext_state));
	}
	if (r >= 0 && m->applier && m->applier->n_irqs_refused > 0) {
		StrBuf b = {};
		char *t = NULL;

		for (size_t i = 0; i < m->applier->n_irqs_refused; i++)
			strbuf_appendf(&b, "%s%u", i ? ", " : "", m->applier->irqs_refused[i]);
		r = strbuf_steal(&b, &t);
		if (r >= 0)
			r = strv_push(&l, strprintf("housekeeping: IRQ %s keep%s their affinity: the kernel refused a "
						    "new one (managed or per-CPU IRQs)", t,
						    m->applier->n_irqs_refused == 1 ? "s" : ""));
		free(t);
	}
	for (size_t i = 0; r >= 0 && m->plan && i < _SETTING_MAX; i++) {
		const PlanStep *st = &m->plan->steps[i];

		if (st->action == STEP_UNSUPPORTED || st->action == STEP_REFUSED || st->action == STEP_PENDING_REBOOT)
			r = strv_push(&l, strprintf("%s: %s: %s", setting_id_to_string(st->setting),
						    step_action_to_string(st->action), st->why));
		if (r >= 0 && m->backoff_reason[i])
			r = strv_extend(&l, m->backoff_reason[i]);
	}
	if (r >= 0 && m->plan && m->plan->kernel_cmdline && *m->plan->kernel_cmdline)
		r = strv_push(&l, strprintf("kernel command line to add: %s", m->plan->kernel_cmdline));
	if (r >= 0)
		r = strv_push(&l, manager_layout_is_live(m)
				      ? strprintf("DomainLayout: as the kernel reports it (/proc/schedstat v%d%s)",
						  m->live->schedstat_version, m->live->debugfs ? " and debugfs" : "")
				      : m->predicted ? strdup("DomainLayout: predicted by the planner (the kernel reports no layout)")
						: strdup("DomainLayout: unknown (the kernel reports no layout, and there is no plan)"));
	if (r >= 0 && !manager_layout_is_live(m) && m->predicted && m->predicted->distances_assumed)
		r = strv_push(&l, strdup("DomainLayout: " DOMAINS_ASSUMED_DISTANCES_TEXT));
	if (r < 0)
		return -ENOMEM;
	if (!l) {
		l = calloc(1, sizeof(char *));
		if (!l)
			return -ENOMEM;
	}
	*ret = TAKE_PTR(l);
	return 0;
}

char *manager_setting_actual(Manager *m, SettingId id)
{
	char *s = NULL;

	if (!m->plan)
		return strdup("unknown");
	if (applier_read_actual(m->applier, &m->plan->steps[id], &s) < 0)
		return strdup("unreadable");
	return s;
}

bool manager_setting_in_sync(Manager *m, SettingId id, const char *actual)
{
	const PlanStep *st;

	if (!m->plan)
		return false;
	st = &m->plan->steps[id];
	switch (st->action) {
	case STEP_KEEP:
	case STEP_NOT_APPLICABLE:
		return true;
	case STEP_SET:
	case STEP_NONE:
		return streq_ptr(actual, st->to);
	default:
		return false;
	}
}

int manager_status_text(Manager *m, char **ret)
{
	unsigned changes = m->applier ? (unsigned)m->applier->n_changes : 0;

	*ret = strprintf("%s: profile %s, %u change%s held", manager_state_to_string(m->state),
			 m->profile ? m->profile->name : "(none)", changes, changes == 1 ? "" : "s");
	return *ret ? 0 : -ENOMEM;
}

static void notify_status(Manager *m)
{
	_cleanup_free_ char *s = NULL;

	if (manager_status_text(m, &s) >= 0) {
		_cleanup_free_ char *n = strprintf("STATUS=%s", s);

		if (n)
			(void)sd_notify(false, n);
	}
}

/* --- apply, revert, recover --------------------------------------------------- */

int manager_switch(Manager *m, const char *name, const char *source, char **ret_error)
{
	Profile *p = NULL;
	Plan *plan = NULL;
	ProfileSettings settings;
	int r;

	r = manager_compute(m, name, &p, &settings, &plan, ret_error);
	if (r < 0)
		return r;
	return manager_switch_computed(m, name, source, p, &settings, plan, ret_error);
}

int manager_switch_computed(Manager *m, const char *name, const char *source, Profile *profile,
			    ProfileSettings *computed, Plan *computed_plan, char **ret_error)
{
	_cleanup_(profile_freep) Profile *p = profile;
	_cleanup_(plan_freep) Plan *plan = computed_plan;
	ProfileSettings settings = *computed;
	int r;

	if (!m->session.config->partial_apply) {
		_cleanup_free_ char *unsupported = manager_unsupported(m, plan);

		if (unsupported) {
			/* All or nothing, as asked: the plan in force stays. */
			profile_settings_done(&settings);
			log_error("Profile %s not applied (partial_apply = no): %s", p->name, unsupported);
			if (ret_error)
				*ret_error = strprintf("Profile %s: %s; nothing changed (partial_apply = no)", p->name,
						       unsupported);
			return -EOPNOTSUPP;
		}
	}

	m->change_source = source;
	m->applying_plan = plan;
	r = applier_apply(m->applier, plan);
	m->applying_plan = NULL;
	m->change_source = NULL;

	free(m->apply_error);
	m->apply_error = NULL;
	if (r < 0) {
		/* Rolled back: the old plan still describes the system. */
		m->apply_error = strdup(m->applier->error ?: strerror(-r));
		if (ret_error)
			*ret_error = strdup(m->applier->error ?: strerror(-r));
		profile_settings_done(&settings);
		log_error_errno(r, "Applying profile %s failed, rolled back: %s", p->name, strna(m->apply_error));
		manager_invalidate_layout(m);
		manager_update_state(m);
		notify_status(m);
		return r;
	}

	m->plan_error = mfree_str(m->plan_error);
	/* Asked for by name (SetProfile()): a manual choice by @source; else the choice manager_compute() made. */
	(void)choice_applied(&m->choice, &m->session, name, source);
	profile_free(m->profile);
	m->profile = TAKE_PTR(p);
	profile_settings_done(&m->settings);
	m->settings = settings;
	plan_free(m->plan);
	m->plan = TAKE_PTR(plan);
	m->plan_topology_generation = m->topology_generation;
	m->state = MANAGER_APPLIED;
	m->reapplied = 0;
	m->backed_off = 0;
	for (size_t i = 0; i < _SETTING_MAX; i++)
		m->backoff_reason[i] = mfree_str(m->backoff_reason[i]);
	manager_invalidate_layout(m);
	manager_update_state(m);
	/* Degraded is worth a warning in the journal (journalctl -p warning finds it). */
	log_full_errno(m->state == MANAGER_DEGRADED ? LOG_WARNING :
		       m->state == MANAGER_PENDING_REBOOT ? LOG_NOTICE : LOG_INFO, 0,
		       "Profile %s applied (%d write%s, %s), state %s.", m->profile->name, r, r == 1 ? "" : "s",
		       strna(source), manager_state_to_string(m->state));
	notify_status(m);
	return r;
}

int manager_revert(Manager *m, const char *source)
{
	int r;

	m->change_source = source;
	r = applier_revert(m->applier);
	m->change_source = NULL;
	if (r < 0)
		return log_error_errno(r, "Reverting failed, the record stays in /%s: %s", STATE_FILE,
				       strna(m->applier->error));
	m->state = MANAGER_OFF;
	free(m->apply_error);
	m->apply_error = NULL;
	m->backed_off = m->reapplied = 0;
	for (size_t i = 0; i < _SETTING_MAX; i++)
		m->backoff_reason[i] = mfree_str(m->backoff_reason[i]);
	manager_invalidate_layout(m);
	notify_status(m);
	return 0;
}

void manager_hold_clear(Manager *m)
{
	m->hold_track = sd_bus_track_unref(m->hold_track);
	choice_hold_clear(&m->choice);
}

int manager_release_hold(Manager *m, const char *why)
{
	_cleanup_free_ char *profile = TAKE_PTR(m->choice.hold.profile), *err = NULL;
	uint32_t cookie = m->choice.hold.cookie;
	int r;

	if (!cookie)
		return 0;
	manager_hold_clear(m);
	manager_emit_profile_released(m, cookie, why);
	if (m->state == MANAGER_OFF) {
		log_info("Profile hold %u on %s ended (%s); everything was reverted, nothing applied.", cookie,
			 strna(profile), why);
		return 0;
	}
	r = manager_switch(m, NULL, why, &err);
	if (r < 0)
		return log_error_errno(r, "Profile hold %u on %s ended (%s); applying the profile without it failed: %s",
				       cookie, strna(profile), why, err ?: strerror(-r));
	log_notice("Profile hold %u on %s ended (%s); back to profile %s (%s).", cookie, strna(profile), why,
		   m->profile ? m->profile->name : "?", strna(m->choice.reason));
	return r;
}

int manager_recover(Manager *m)
{
	_cleanup_(recovery_done) Recovery rec = {};
	int r;

	/*
	 * A kill -9 between a temporary file's creation and its rename leaves
	 * ".#NAME.topotune-tmp" beside the drop-in of set-profile --persistent
	 * and the boot loader request: gone at start, not at the next write.
	 */
	r = create_file_remove_stale_at(m->session.config_fd, MANAGER_PROFILE_DROPIN);
	if (r < 0)
		log_warning_errno(r, "Failed to remove a stale temporary file beside /%s, ignoring: %m",
				  MANAGER_PROFILE_DROPIN);
	r = create_file_remove_stale_at(m->session.root_fd, STATE_DIR "/bootloader.request");
	if (r >= 0)
		r = create_file_remove_stale_at(m->session.root_fd, KERNEL_IRQS_REFUSED_FILE);
	if (r < 0)
		log_warning_errno(r, "Failed to remove a stale temporary file in /%s, ignoring: %m", STATE_DIR);

	m->change_source = "recovery: record of a previous run";
	r = applier_recover(m->applier, &rec);
	m->change_source = NULL;
	manager_invalidate_layout(m);
	if (r < 0 || rec.found > 0 || rec.problems)
		m->caps_fresh = false;
	if (r < 0)
		return log_error_errno(r, "Failed to recover the record of a previous run: %m");
	if (rec.found == 0 && !rec.problems)
		return 0;

	/*
	 * Whatever the record held, the daemon starts: what could not be put
	 * back is kept aside for a human to read and the state says so. A
	 * record that stops every start would need a human to delete it.
	 */
	free(m->recovered);
	m->recovered = strprintf("recovered: restored %u of %u change%s a previous run left in /%s%s%s",
				 rec.restored, rec.found, rec.found == 1 ? "" : "s", STATE_FILE,
				 rec.aside ? "; the rest is kept in " : "", strempty(rec.aside));
	(void)sd_journal_send("MESSAGE_ID=" TOPOTUNE_MESSAGE_RECOVERED, "MESSAGE=%s", strna(m->recovered),
			      "PRIORITY=%i", rec.problems ? LOG_ERR : LOG_WARNING, "RESTORED=%u", rec.restored,
			      "FOUND=%u", rec.found, "ASIDE=%s", strempty(rec.aside), NULL);
	if (rec.problems)
		log_error("%s", strna(m->recovered));
	else
		log_warning("%s", strna(m->recovered));
	STRV_FOREACH(p, rec.problems)
		log_error("Recovery: %s", *p);
	strv_free(m->recovery_problems);
	m->recovery_problems = TAKE_PTR(rec.problems);
	return (int)rec.restored;
}

int manager_reload_topology(Manager *m)
{
	Topology *t = NULL;
	int r;

	r = topology_load(m->session.root_fd, &t);
	if (r < 0)
		return r;
	topology_free(m->session.topology);
	m->session.topology = t;
	m->topology_generation++;
	m->session.facts.packages = (unsigned)t->packages.n;
	m->session.facts.cpus = cpuset_count(&t->online);
	m->session.facts.nodes_per_package = t->nodes_per_package;
	m->session.facts.smt = t->threads_per_core > 1;
	return 0;
}

void manager_reload_failed(Manager *m, int error, const char *source, const char *message)
{
	free(m->reload_error);
	m->reload_error = strdup(message ?: strerror(-error));
	log_error("%s failed, the previous configuration stays in force: %s", source,
		  message ?: strerror(-error));
	manager_update_state(m);
	notify_status(m);
}

int manager_reload_config(Manager *m, const char *source, char **ret_error)
{
	_cleanup_free_ char *err = NULL;
	int r;

	r = manager_load_config(m, &err);
	if (r < 0) {
		manager_reload_failed(m, r, source, err);
		if (ret_error)
			*ret_error = TAKE_PTR(err);
		return r;
	}
	m->reload_error = mfree_str(m->reload_error);
	/* A reload is a return to the configuration: SetProfile()'s runtime choice ends. */
	(void)choice_set_manual(&m->choice, NULL, NULL);
	/* Profiles may have new [workload] rules, and processes come and go. */
	(void)manager_workload_setup(m);
	/* The textfile may be new, moved or off; written once the reload's apply is done. */
	(void)manager_arm_metrics_timer(m, true);
	return 0;
}

int manager_reload(Manager *m, const char *source, char **ret_error)
{
	_cleanup_free_ char *err = NULL;
	int r;

	r = manager_reload_config(m, source, ret_error);
	if (r < 0)
		return r;
	free(m->apply_error);
	m->apply_error = NULL;
	r = manager_switch(m, NULL, source, &err);
	if (r < 0) {
		/* An apply that failed says so itself (State failed); a profile that does not load here. */
		if (!m->apply_error)
			manager_reload_failed(m, r, source, err);
		if (ret_error)
			*ret_error = TAKE_PTR(err);
		return r;
	}
	(void)manager_arm_verify_timer(m);
	return r;
}

int manager_persist_profile(Manager *m, const char *name, char **ret_error)
{
	_cleanup_(config_freep) Config *c = NULL;
	_cleanup_free_ char *text = NULL;
	ConfigCandidate cand;
	int r;

	if (name)
		text = strprintf("# Written by topotuned for \"topotunectl set-profile --persistent %s\"\n"
				 "# (SetProfilePersistent). \"topotunectl auto-profile\" removes it; it may\n"
				 "# be edited or removed like any drop-in (then: topotunectl reload).\n"
				 "[daemon]\nprofile = %s\n", name, name);
	else
		text = strdup("");
	if (!text)
		return -ENOMEM;

	/* The configuration with the change must load before anything is written. */
	cand = (ConfigCandidate) { MANAGER_PROFILE_DROPIN, text };
	config_candidates_set(&cand, 1);
	r = config_load(m->session.config_fd, &c, ret_error);
	config_candidates_set(NULL, 0);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return -EBADMSG;

	if (!name) {
		r = unlink_beneath(m->session.config_fd, MANAGER_PROFILE_DROPIN, false);
		if (r < 0 && r != -ENOENT)
			return error_message(ret_error, r, "Failed to remove /%s: %s", MANAGER_PROFILE_DROPIN,
					     strerror(-r));
		if (r >= 0)
			log_info("Removed /%s: the profile is chosen by the configuration again.", MANAGER_PROFILE_DROPIN);
		return 0;
	}
	r = mkdir_beneath(m->session.config_fd, MANAGER_PROFILE_DROPIN_DIR, 0755);
	if (r < 0 && r != -EEXIST)
		return error_message(ret_error, r, "Failed to create /%s: %s", MANAGER_PROFILE_DROPIN_DIR,
				     strerror(-r));
	/* A temporary file renamed over the old one: never a half-written drop-in. */
	r = create_file_at(m->session.config_fd, MANAGER_PROFILE_DROPIN, text, 0644);
	if (r < 0)
		return error_message(ret_error, r, "Failed to write /%s: %s", MANAGER_PROFILE_DROPIN, strerror(-r));
	log_info("Wrote /%s: profile = %s.", MANAGER_PROFILE_DROPIN, name);
	return 0;
}

/* --- verification ------------------------------------------------------------- */

void manager_verify_now(Manager *m)
{
	Mismatch *mm = NULL;
	size_t n = 0;
	unsigned drifted = 0, reapply = 0;
	bool new_irqs = false;
	int r;

	if (!m->plan || m->state == MANAGER_OFF)
		return;
	manager_irqs_catch_up(m);
	r = applier_verify(m->applier, m->plan, &mm, &n);
	if (r < 0) {
		log_warning_errno(r, "Verification failed, ignoring: %m");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		SettingId id = mm[i].setting;
		const char *name = setting_id_to_string(id);
		unsigned bit = 1U << id;

		/* Backed off and still the value seen last time: nothing new to tell. */
		bool repeat = (m->backed_off & bit) && streq_ptr(m->drift_seen[id], mm[i].got);

		if (mm[i].new_irq) {
			/* Appeared since the pass above: the next one's, no drift. */
			new_irqs = true;
			continue;
		}
		drifted |= bit;
		if (!repeat) {
			manager_emit_drift(m, name, mm[i].want, mm[i].got);
			m->drift_count[id]++;
		}
		if (strdup_to(&m->drift_seen[id], mm[i].got) < 0)
			log_oom();
		if (m->backed_off & bit) {
			if (!repeat)
				journal_drift(name, mm[i].want, mm[i].got, "backed off: not re-applying");
			continue;
		}
		if (m->reapplied & bit) {
			/* Re-applied at the last check and changed again: someone else writes it. */
			m->backed_off |= bit;
			free(m->backoff_reason[id]);
			m->backoff_reason[id] = strprintf(
				"%s: another writer keeps changing it (want %s, got %s); not re-applying until Apply or SetProfile",
				name, mm[i].want, mm[i].got);
			journal_drift(name, mm[i].want, mm[i].got, "changed again after re-applying: backing off");
			continue;
		}
		journal_drift(name, mm[i].want, mm[i].got, "re-applying once");
		reapply |= bit;
	}
	mismatches_free(mm, n);
	if (new_irqs)
		manager_irqs_catch_up(m);

	/* In sync again: forget the re-apply mark and the value reported. */
	m->reapplied &= drifted;
	for (size_t i = 0; i < _SETTING_MAX; i++)
		if (!(drifted & (1U << i)))
			m->drift_seen[i] = mfree_str(m->drift_seen[i]);
	if (reapply) {
		/*
		 * A setting the kernel already held when the plan was made has a
		 * step "in sync" and nothing for the applier to write: the repair
		 * writes it all the same. Without a record of ours the value the
		 * other writer left becomes the original that stop restores; with
		 * one (we changed it earlier) the record keeps the true original.
		 */
		Plan repair = *m->plan;

		for (size_t i = 0; i < _SETTING_MAX; i++)
			if ((reapply & (1U << i)) && repair.steps[i].action == STEP_NONE &&
			    repair.steps[i].control)
				repair.steps[i].action = STEP_SET;
		/* Settings backed off are left to the other writer; the rest is kept in shape. */
		m->change_source = "drift: re-applying";
		m->applying_plan = m->plan;
		r = applier_apply_masked(m->applier, &repair, m->backed_off);
		m->applying_plan = NULL;
		m->change_source = NULL;
		manager_invalidate_layout(m);
		if (r < 0)
			log_warning("Re-applying after drift failed, rolled back: %s", strna(m->applier->error));
		else {
			m->reapplied |= reapply;
			for (size_t i = 0; i < _SETTING_MAX; i++)
				if (reapply & (1U << i))
					m->repair_count[i]++;
		}
	}
	manager_update_state(m);
	manager_emit_changed(m);
	notify_status(m);
}

static int on_verify_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	Manager *m = userdata;

	manager_verify_now(m);
	(void)manager_arm_verify_timer(m);
	return 0;
}

int manager_arm_verify_timer(Manager *m)
{
	uint64_t usec;
	int r;

	if (!m->session.config || m->session.config->verify_interval_sec == 0) {
		if (m->verify_timer)
			(void)sd_event_source_set_enabled(m->verify_timer, SD_EVENT_OFF);
		return 0;
	}
	usec = (uint64_t)m->session.config->verify_interval_sec * 1000000ULL;
	if (!m->verify_timer) {
		r = sd_event_add_time_relative(m->event, &m->verify_timer, CLOCK_MONOTONIC, usec, 0, on_verify_timer, m);
		if (r < 0)
			return log_error_errno(r, "Failed to add the verify timer: %m");
		return 0;
	}
	r = sd_event_source_set_time_relative(m->verify_timer, usec);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(m->verify_timer, SD_EVENT_ONESHOT);
}
