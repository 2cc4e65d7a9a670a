/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Diagnose(u duration_ms): agent/diagnose over the bus. Reads are open, so
 * no polkit. The sampling never blocks the event loop: the call is held
 * (its message referenced) while a timer takes one tick every
 * DIAGNOSE_TICK_USEC, and the reply goes out at the end. One diagnosis at
 * a time (org.topotune1.Error.Busy otherwise); the duration is bounded by
 * DIAGNOSE_DURATION_MAX_USEC (60 s). The finding counts of the last one
 * feed topotune_diagnosis_findings in Metrics().
 */
#include <inttypes.h>

#include "log.h"
#include "manager.h"
#include "prom.h"
#include "strutil.h"

static int append_finding(sd_bus_message *reply, const Finding *f)
{
	_cleanup_free_ char *cpus = NULL;
	int r;

	r = cpuset_format_list(&f->cpus, &cpus);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'r', "ssssdasass");
	if (r < 0)
		return r;
	r = sd_bus_message_append(reply, "ssssd", diagnose_kind_to_string(f->kind),
				  diagnose_severity_to_string(f->severity), f->summary, cpus, f->seconds);
	if (r < 0)
		return r;
	r = sd_bus_message_append_strv(reply, f->tasks);
	if (r < 0)
		return r;
	r = sd_bus_message_append_strv(reply, f->evidence);
	if (r < 0)
		return r;
	r = sd_bus_message_append(reply, "s", f->remedy);
	if (r < 0)
		return r;
	return sd_bus_message_close_container(reply);
}

static int escape_to(char **s)
{
	char *e = utf8_escape_invalid(*s);

	if (!e)
		return -ENOMEM;
	free(*s);
	*s = e;
	return 0;
}

static int escape_strv(char **l)
{
	for (size_t i = 0; l && l[i]; i++)
		if (escape_to(&l[i]) < 0)
			return -ENOMEM;
	return 0;
}

/* Text from the kernel's files (task names, IRQ descriptions) goes on the bus only as valid UTF-8. */
static int diagnosis_sanitize(Diagnosis *d)
{
	for (size_t i = 0; i < d->n_findings; i++) {
		Finding *f = &d->findings[i];

		if (escape_to(&f->summary) < 0 || escape_to(&f->remedy) < 0 || escape_strv(f->tasks) < 0 ||
		    escape_strv(f->evidence) < 0)
			return -ENOMEM;
	}
	return escape_strv(d->unreadable);
}

/* The notes of the reply: the kinds not checked and why, the files that could not be read. */
static int diagnosis_notes(const Diagnosis *d, char ***ret)
{
	_cleanup_strv_free_ char **notes = NULL;
	int r;

	for (DiagnoseKind k = 0; k < _DIAGNOSE_KIND_MAX; k++) {
		if (!d->not_checked[k])
			continue;
		r = strv_push(&notes, strprintf("not checked: %s: %s", diagnose_kind_to_string(k), d->not_checked[k]));
		if (r < 0)
			return r;
	}
	STRV_FOREACH(u, d->unreadable) {
		r = strv_push(&notes, strprintf("unreadable: %s", *u));
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(notes);
	return 0;
}

/* (a(ssssdasass) findings, as notes) */
static int diagnosis_build_reply(sd_bus_message *call, Diagnosis *d, sd_bus_message **ret)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_strv_free_ char **notes = NULL;
	int r;

	r = diagnosis_sanitize(d);
	if (r < 0)
		return r;
	r = diagnosis_notes(d, &notes);
	if (r < 0)
		return r;
	r = sd_bus_message_new_method_return(call, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', "(ssssdasass)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < d->n_findings; i++) {
		r = append_finding(reply, &d->findings[i]);
		if (r < 0)
			return r;
	}
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	r = sd_bus_message_append_strv(reply, notes);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(reply);
	return 0;
}

static int diagnose_reply(Manager *m, sd_bus_message *call, Diagnosis *d)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	r = diagnosis_build_reply(call, d, &reply);
	if (r < 0)
		return sd_bus_reply_method_errnof(call, r, "Diagnose: building the reply failed: %m");
	return sd_bus_send(NULL, reply, NULL);
}

/* Remember what the last diagnosis found, for the metrics. */
static void diagnose_record(Manager *m, const Diagnosis *d)
{
	for (DiagnoseKind k = 0; k < _DIAGNOSE_KIND_MAX; k++) {
		m->diagnosis_checked[k] = d->checked[k];
		m->diagnosis_findings[k] = (unsigned)diagnosis_count(d, k);
	}
	m->diagnosis_done = true;
}

static int diagnose_finish(Manager *m)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = TAKE_PTR(m->diagnose_call);
	_cleanup_(diagnose_sampler_freep) DiagnoseSampler *s = TAKE_PTR(m->diagnose_sampler);
	_cleanup_(diagnosis_done) Diagnosis d = {};
	int r;

	m->diagnose_timer = sd_event_source_disable_unref(m->diagnose_timer);
	r = diagnose_run(m->session.root_fd, &m->diagnose_req, s, m->session.topology, &m->session.identity,
			 &m->session.caps, &d);
	if (r < 0) {
		log_warning_errno(r, "Diagnose failed: %m");
		return call ? sd_bus_reply_method_errnof(call, r, "Diagnose failed: %m") : r;
	}
	diagnose_record(m, &d);
	log_info("Diagnose: %zu finding%s in %.1f s", d.n_findings, d.n_findings == 1 ? "" : "s", d.duration);
	return call ? diagnose_reply(m, call, &d) : 0;
}

static int on_diagnose_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	Manager *m = userdata;
	uint64_t now = 0;
	int r;

	(void)sd_event_now(m->event, CLOCK_MONOTONIC, &now);
	r = diagnose_sampler_tick(m->diagnose_sampler, now);
	if (r < 0 || now >= m->diagnose_end) {
		if (r < 0)
			log_warning_errno(r, "Diagnose: sampling failed, reporting what was sampled: %m");
		(void)diagnose_finish(m);
		return 0;
	}
	r = sd_event_source_set_time(src, MIN(now + m->diagnose_req.tick_usec, m->diagnose_end));
	if (r >= 0)
		r = sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
	if (r < 0) {
		log_warning_errno(r, "Diagnose: re-arming the timer failed, ending early: %m");
		(void)diagnose_finish(m);
	}
	return 0;
}

int manager_method_diagnose(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	uint32_t duration_ms;
	uint64_t now = 0;
	int r;

	r = sd_bus_message_read(msg, "u", &duration_ms);
	if (r < 0)
		return r;
	if ((uint64_t)duration_ms * 1000 > DIAGNOSE_DURATION_MAX_USEC)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "Diagnose: duration %" PRIu32 " ms is above the bound of %llu ms", duration_ms,
					 DIAGNOSE_DURATION_MAX_USEC / 1000);
	if (m->diagnose_call)
		return sd_bus_error_setf(error, BUS_ERROR_BUSY, "Diagnose: another diagnosis is sampling; try again");
	for (DiagnoseKind k = 0; k < _DIAGNOSE_KIND_MAX; k++)
		m->diagnose_req.want[k] = true;
	m->diagnose_req.tick_usec = DIAGNOSE_TICK_USEC;
	m->diagnose_req.live = duration_ms > 0;
	m->diagnose_call = sd_bus_message_ref(msg);
	if (!m->diagnose_req.live)
		return diagnose_finish(m);   /* the kinds that need no sampling, at once */

	(void)sd_event_now(m->event, CLOCK_MONOTONIC, &now);
	m->diagnose_end = now + (uint64_t)duration_ms * 1000;
	r = diagnose_sampler_new(m->session.root_fd, &m->diagnose_req, now, &m->diagnose_sampler);
	if (r >= 0)
		r = sd_event_add_time(m->event, &m->diagnose_timer, CLOCK_MONOTONIC,
				      MIN(now + m->diagnose_req.tick_usec, m->diagnose_end), 0, on_diagnose_timer, m);
	if (r < 0) {
		m->diagnose_call = sd_bus_message_unref(m->diagnose_call);
		m->diagnose_sampler = diagnose_sampler_free(m->diagnose_sampler);
		return sd_bus_error_set_errnof(error, r, "Diagnose: starting the sampling failed: %m");
	}
	return 1;   /* the reply comes from the timer */
}

void manager_diagnose_done(Manager *m)
{
	m->diagnose_timer = sd_event_source_disable_unref(m->diagnose_timer);
	m->diagnose_sampler = diagnose_sampler_free(m->diagnose_sampler);
	m->diagnose_call = sd_bus_message_unref(m->diagnose_call);
}

void manager_diagnose_metrics(Manager *m, StrBuf *b)
{
	_cleanup_(diagnosis_done) Diagnosis cheap = {};
	DiagnoseRequest req = {};

	/* The kinds that need no sampling are read now; the sampled ones come from the last Diagnose(). */
	for (DiagnoseKind k = 0; k < _DIAGNOSE_KIND_MAX; k++)
		req.want[k] = !diagnose_kind_needs_live(k);
	if (m->session.topology &&
	    diagnose_run(m->session.root_fd, &req, NULL, m->session.topology, &m->session.identity, &m->session.caps,
			 &cheap) < 0) {
		strbuf_append(b, "# diagnosis findings left out: out of memory\n");
		return;
	}
	prom_family(b, "topotune_diagnosis_findings", "gauge",
		    "Findings per kind (topotunectl diagnose): numa-levels, sched-ext and kernel read at each scrape; "
		    "smt-stacking, newidle-cross-node and isolation-noisy from the last Diagnose() call, absent "
		    "before one");
	for (DiagnoseKind k = 0; k < _DIAGNOSE_KIND_MAX; k++) {
		const char *labels[] = { "kind", diagnose_kind_to_string(k), NULL };

		if (!diagnose_kind_needs_live(k))
			prom_sample(b, "topotune_diagnosis_findings", labels, diagnosis_count(&cheap, k));
		else if (m->diagnosis_done && m->diagnosis_checked[k])
			prom_sample(b, "topotune_diagnosis_findings", labels, m->diagnosis_findings[k]);
	}
}
