/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's metrics in the Prometheus text format: what the Manager knows
 * (state, profile, settings, drift and repairs, the domain layout) and the
 * kernel's counters (agent/kernel/counters.c). Served by Metrics() on the
 * bus and, when [daemon] metrics_textfile is set, written for
 * node_exporter's textfile collector every metrics_interval seconds.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "control.h"
#include "counters.h"
#include "fileio.h"
#include "log.h"
#include "manager.h"
#include "prom.h"
#include "strutil.h"

/*
 * A value of setting @id as the number its kernel control holds ("on" -> 1,
 * "-1" -> -1, "memory-tiering" -> 2); -EINVAL for a value that is no number
 * (keep, a CPU list, "absent") and for a setting whose control holds none.
 */
static int setting_number(SettingId id, const char *text, int *ret)
{
	for (ControlId i = 0; text && i < _CONTROL_ID_MAX; i++) {
		const KernelControl *c = kernel_control_get(i);

		if (c->setting != id)
			continue;
		if (c->kind != CONTROL_VALUE && c->kind != CONTROL_FEATURE)
			return -EINVAL;
		return kernel_control_parse(c, text, ret);
	}
	return -EINVAL;
}

/*
 * Per setting, the value wanted and the value the kernel holds: a numeric
 * gauge where the value is a number, else an _info sample carrying the text
 * in a label (node_exporter's way): a new series per value only for strings.
 */
static void metrics_settings(Manager *m, StrBuf *b)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "topotune_setting_desired", "gauge",
		  "The value the active profile wants, as the kernel's control holds it (on 1, off 0); no sample when it is no number" },
		{ "topotune_setting_desired_info", "gauge",
		  "The value the active profile wants when it is no number (label value: keep, a CPU list), always 1" },
		{ "topotune_setting_actual", "gauge",
		  "The value the kernel holds now, as its control holds it (on 1, off 0); no sample when it is no number" },
		{ "topotune_setting_actual_info", "gauge",
		  "The value the kernel holds now when it is no number (label value: a CPU list, absent), always 1" },
		{ "topotune_setting_in_sync", "gauge", "1 when the kernel holds the value wanted, else 0" },
		{ "topotune_setting_drift_total", "counter", "Drifts seen by the verify timer (a Drift signal each)" },
		{ "topotune_setting_repairs_total", "counter", "Values re-applied after a drift" },
	};
	char *actual[_SETTING_MAX] = {};

	for (size_t i = 0; m->plan && i < _SETTING_MAX; i++) {
		if (!plan_has_step(m->plan, i))
			continue;
		actual[i] = manager_setting_actual(m, (SettingId)i);
		if (!actual[i])
			goto oom;
	}
	for (size_t f = 0; f < ELEMENTSOF(fam); f++) {
		prom_family(b, fam[f].name, fam[f].type, fam[f].help);
		for (size_t i = 0; m->plan && i < _SETTING_MAX; i++) {
			const PlanStep *st = &m->plan->steps[i];
			const char *name = setting_id_to_string((SettingId)i);
			const char *value = f <= 1 ? (st->action == STEP_KEEP ? "keep" : strempty(st->to)) : actual[i];
			bool number;
			int v;

			if (!plan_has_step(m->plan, i))
				continue;
			number = f <= 3 && setting_number((SettingId)i, value, &v) >= 0;
			switch (f) {
			case 0:
			case 2:
				if (number)
					prom_sample_int(b, fam[f].name, (const char *const[]) { "setting", name, NULL }, v);
				break;
			case 1:
			case 3:
				if (!number)
					prom_sample(b, fam[f].name,
						    (const char *const[]) { "setting", name, "value", value, NULL }, 1);
				break;
			default:
				prom_sample(b, fam[f].name, (const char *const[]) { "setting", name, NULL },
					    f == 4 ? manager_setting_in_sync(m, (SettingId)i, actual[i])
					    : f == 5 ? m->drift_count[i] : m->repair_count[i]);
			}
		}
	}
	for (size_t i = 0; i < _SETTING_MAX; i++)
		free(actual[i]);
	return;
oom:
	for (size_t i = 0; i < _SETTING_MAX; i++)
		free(actual[i]);
	b->error = -ENOMEM;
}

/* The domain names of @cpu bottom-up, "SMT MC NODE NUMA"; the layout the daemon serves. */
static char *cpu_stack(Manager *m, unsigned cpu, unsigned *ret_n)
{
	StrBuf b = {};
	char *s = NULL;
	size_t n = 0;

	if (manager_layout_is_live(m)) {
		if (cpu < m->live->n_slots)
			for (n = 0; n < m->live->cpus[cpu].n; n++)
				strbuf_appendf(&b, "%s%s", n ? " " : "",
					       *m->live->cpus[cpu].sd[n].name ? m->live->cpus[cpu].sd[n].name : "domain");
	} else if (m->predicted && cpu < m->predicted->n_slots)
		for (n = 0; n < m->predicted->cpus[cpu].n; n++)
			strbuf_appendf(&b, "%s%s", n ? " " : "", m->predicted->cpus[cpu].sd[n].name);
	strbuf_append(&b, "");
	if (strbuf_steal(&b, &s) < 0)
		return NULL;
	*ret_n = (unsigned)n;
	return s;
}

/* CPUs with the same domain stack are one class: its CPUs and its number of levels. */
static void metrics_domains(Manager *m, StrBuf *b)
{
	_cleanup_strv_free_ char **stacks = NULL;
	CpuSet *sets = NULL;
	unsigned *levels = NULL;
	size_t n = 0;

	manager_refresh_layout(m);
	prom_family(b, "topotune_domain_levels", "gauge",
		    "Scheduler domains of each class of CPUs with the same domain stack (label domains, bottom-up), "
		    "as the kernel reports them (source live) or as predicted (source predicted)");
	CPUSET_FOREACH(cpu, &m->session.topology->online) {
		_cleanup_free_ char *s = NULL;
		unsigned nl = 0;
		size_t k;

		s = cpu_stack(m, cpu, &nl);
		if (!s)
			goto oom;
		for (k = 0; k < n && !streq(stacks[k], s); k++)
			;
		if (k == n) {
			CpuSet *ns = reallocarray(sets, n + 1, sizeof(CpuSet));
			unsigned *nlv;

			if (!ns)
				goto oom;
			sets = ns;
			nlv = reallocarray(levels, n + 1, sizeof(unsigned));
			if (!nlv)
				goto oom;
			levels = nlv;
			sets[n] = (CpuSet) {};
			levels[n] = nl;
			if (strv_push(&stacks, TAKE_PTR(s)) < 0) {
				n++;
				goto oom;
			}
			n++;
		}
		if (cpuset_add(&sets[k], cpu) < 0)
			goto oom;
	}
	for (size_t k = 0; k < n; k++) {
		_cleanup_free_ char *list = NULL;

		if (cpuset_format_list(&sets[k], &list) < 0)
			goto oom;
		prom_sample(b, "topotune_domain_levels",
			    (const char *const[]) { "cpus", list, "domains", stacks[k], "source",
						    manager_layout_is_live(m) ? "live" : "predicted", NULL },
			    levels[k]);
	}
	goto done;
oom:
	b->error = -ENOMEM;
done:
	for (size_t k = 0; k < n; k++)
		cpuset_done(&sets[k]);
	free(sets);
	free(levels);
}

int manager_metrics(Manager *m, char **ret)
{
	_cleanup_(kernel_counters_freep) KernelCounters *kc = NULL;
	_cleanup_free_ char *text = NULL;
	StrBuf b = {};
	int r;

	assert(m && ret);

	prom_family(&b, "topotune_info", "gauge", "topotuned's version");
	prom_sample(&b, "topotune_info", (const char *const[]) { "version", TOPOTUNE_VERSION, NULL }, 1);

	prom_family(&b, "topotune_state", "gauge", "topotuned's State, one-hot: 1 for the state in force");
	for (ManagerState s = 0; s < _MANAGER_STATE_MAX; s++)
		prom_sample(&b, "topotune_state", (const char *const[]) { "state", manager_state_to_string(s), NULL },
			    m->state == s);

	prom_family(&b, "topotune_active_profile", "gauge",
		    "The active profile (label profile) and why it is active (label reason), always 1");
	prom_sample(&b, "topotune_active_profile",
		    (const char *const[]) { "profile", m->profile ? m->profile->name : "",
					    "reason", strempty(m->choice.reason), NULL }, 1);

	prom_family(&b, "topotune_reboot_required", "gauge",
		    "1 when a setting takes effect only at the next boot (PendingKernelCmdline)");
	prom_sample(&b, "topotune_reboot_required", NULL, manager_reboot_required(m));

	metrics_settings(m, &b);
	if (m->session.topology)
		metrics_domains(m, &b);
	manager_diagnose_metrics(m, &b);

	r = kernel_counters_load(m->session.root_fd, &kc);
	if (r >= 0)
		r = kernel_counters_accumulate(kc, &m->counters);
	if (r < 0) {
		/* Every scrape would say it again: debug in the journal, a comment in the text. */
		log_debug_errno(r, "Reading the kernel's scheduler counters failed, leaving them out: %m");
		strbuf_appendf(&b, "# kernel counters left out: /proc/schedstat or /proc/sched_smt_buddy_stat: %s\n",
			       strerror(-r));
	} else
		kernel_counters_metrics(kc, &b);

	r = strbuf_steal(&b, &text);
	if (r < 0)
		return r;
	/* Values read from the kernel are not trusted to be UTF-8; the format requires it. */
	*ret = utf8_escape_invalid(text);
	return *ret ? 0 : -ENOMEM;
}

/* --- the textfile ------------------------------------------------------------- */

static const char *metrics_path(const Manager *m)
{
	return m->session.config ? m->session.config->metrics_textfile : NULL;
}

static void metrics_remove_old(Manager *m, const char *keep)
{
	int r;

	if (!m->metrics_written || streq_ptr(m->metrics_written, keep))
		return;
	r = unlink_beneath(m->session.root_fd, m->metrics_written, false);
	if (r < 0 && r != -ENOENT)
		log_warning_errno(r, "Failed to remove the metrics textfile %s, ignoring: %m", m->metrics_written);
	free(m->metrics_written);
	m->metrics_written = NULL;
}

void manager_metrics_write(Manager *m)
{
	_cleanup_free_ char *text = NULL;
	const char *path = metrics_path(m);
	int r;

	metrics_remove_old(m, path);
	if (!path)
		return;
	r = manager_metrics(m, &text);
	if (r < 0) {
		log_oom();
		return;
	}
	/* A temporary file beside it, renamed over it: the collector never reads half a file. */
	r = create_file_at(m->session.root_fd, path, text, 0644);
	if (r < 0) {
		if (!m->metrics_failed)
			log_warning_errno(r, "Failed to write the metrics textfile %s, ignoring: %m", path);
		m->metrics_failed = true;
		return;
	}
	m->metrics_failed = false;
	if (!m->metrics_written && strdup_to(&m->metrics_written, path) < 0)
		log_oom();
}

static int on_metrics_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	Manager *m = userdata;

	manager_metrics_write(m);
	(void)manager_arm_metrics_timer(m, false);
	return 0;
}

int manager_arm_metrics_timer(Manager *m, bool now)
{
	uint64_t usec;
	int r;

	if (!metrics_path(m)) {
		metrics_remove_old(m, NULL);
		if (m->metrics_timer)
			(void)sd_event_source_set_enabled(m->metrics_timer, SD_EVENT_OFF);
		return 0;
	}
	usec = now ? 1 : (uint64_t)m->session.config->metrics_interval_sec * 1000000ULL;
	if (!m->metrics_timer) {
		r = sd_event_add_time_relative(m->event, &m->metrics_timer, CLOCK_MONOTONIC, usec, 0,
					       on_metrics_timer, m);
		if (r < 0)
			return log_error_errno(r, "Failed to add the metrics timer: %m");
		return 0;
	}
	r = sd_event_source_set_time_relative(m->metrics_timer, usec);
	if (r >= 0)
		r = sd_event_source_set_enabled(m->metrics_timer, SD_EVENT_ONESHOT);
	return r;
}

void manager_metrics_stop(Manager *m)
{
	metrics_remove_old(m, NULL);
}
