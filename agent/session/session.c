/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * discover -> configure -> compute, for topotunectl's offline verbs and for
 * topotuned alike. Depends on cpuid, topology, kernel, profile and the
 * planner; reads through the root fds, logs nothing.
 */
#include <assert.h>

#include "fileio.h"
#include "session.h"
#include "strutil.h"

void session_done(Session *s)
{
	assert(s);

	if (s->config_fd != s->root_fd)
		safe_close(s->config_fd);
	safe_close(s->root_fd);
	topology_free(s->topology);
	kernel_caps_done(&s->caps);
	config_free(s->config);
	hardware_rules_free(s->rules, s->n_rules);
	*s = (Session) SESSION_INIT;
}

int session_discover(Session *s, const char *root, const char *config_root, bool live, const char *cpuid_dump,
		     SessionKernel kernel, char **ret_error)
{
	int r;

	r = root_open(root, &s->root_fd);
	if (r < 0)
		return error_message(ret_error, r, "Failed to open root directory %s: %s", root, strerror(-r));
	if (config_root) {
		r = root_open(config_root, &s->config_fd);
		if (r < 0)
			return error_message(ret_error, r, "Failed to open configuration root %s: %s", config_root,
					     strerror(-r));
	} else
		s->config_fd = s->root_fd;

	r = cpuid_identify(s->root_fd, live, cpuid_dump, &s->identity);
	if (r < 0)
		return error_message(ret_error, r, "Failed to identify the CPU from %s: %s",
				     cpuid_dump ?: live ? "CPUID" : "the sysroot's proc/cpuinfo", strerror(-r));

	r = topology_load(s->root_fd, &s->topology);
	if (r < 0)
		return error_message(ret_error, r,
				     "Failed to read the CPU topology below %s/sys/devices/system/cpu: %s",
				     streq(root, "/") ? "" : root, strerror(-r));

	switch (kernel) {
	case SESSION_KERNEL_PATCHED:
		kernel_caps_patched(&s->caps);
		break;
	case SESSION_KERNEL_STOCK:
		kernel_caps_stock(&s->caps);
		break;
	default:
		r = kernel_probe(s->root_fd, &s->caps);
		if (r < 0)
			return error_message(ret_error, r, "Failed to probe the kernel: %s", strerror(-r));
	}

	s->facts = plan_match_facts(&s->identity, s->topology);
	return 0;
}

int session_configure(Session *s, char **ret_error)
{
	_cleanup_(config_freep) Config *c = NULL;
	HardwareRule **rules = NULL;
	size_t n_rules = 0;
	int r;

	assert(s);

	r = config_load(s->config_fd, &c, ret_error);
	if (r < 0)
		return r;
	r = hardware_rules_load(s->config_fd, &rules, &n_rules, ret_error);
	if (r < 0)
		return r;
	config_free(s->config);
	s->config = TAKE_PTR(c);
	hardware_rules_free(s->rules, s->n_rules);
	s->rules = rules;
	s->n_rules = n_rules;
	return 0;
}

void session_selection_done(SessionSelection *sel)
{
	free(sel->name);
	free(sel->reason);
	free(sel->source);
	origin_done(&sel->origin);
	*sel = (SessionSelection) {};
}

int session_select_profile(const Config *config, HardwareRule *const *rules, size_t n_rules,
			   const MatchFacts *facts, const SessionChoice *choice, SessionSelection *ret)
{
	_cleanup_(session_selection_done) SessionSelection sel = {};
	int r;

	assert(ret);

	if (choice && choice->hold) {
		sel.name = strdup(choice->hold);
		sel.reason = strdup("hold");
		sel.source = strdup(strempty(choice->hold_source));
	} else if (choice && choice->manual) {
		sel.name = strdup(choice->manual);
		sel.reason = strdup("manual");
		sel.source = strdup(strempty(choice->manual_source));
	} else if (choice && choice->workload) {
		sel.name = strdup(choice->workload);
		sel.reason = strprintf("workload:%s", strna(choice->workload_rule));
		sel.source = strprintf("workload rule %s", strna(choice->workload_rule));
	} else {
		r = profile_select(config, rules, n_rules, facts, &sel.name, &sel.origin);
		if (r < 0)
			return r;
		sel.configured = true;
		sel.reason = strdup("configured");
		sel.source = origin_to_string(&sel.origin);
	}
	if (!sel.name || !sel.reason || !sel.source)
		return -ENOMEM;
	*ret = sel;
	sel = (SessionSelection) {};
	return 0;
}

int session_select(const Session *s, const SessionChoice *choice, SessionSelection *ret)
{
	return session_select_profile(s->config, s->rules, s->n_rules, &s->facts, choice, ret);
}

int session_compute(Session *s, const char *name, Profile **ret_profile, ProfileSettings *ret_settings,
		    Plan **ret_plan, char **ret_error)
{
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_(profile_settings_done) ProfileSettings settings = {};
	_cleanup_(session_selection_done) SessionSelection selected = {};
	PlanInput in;
	int r;

	if (!name) {
		r = session_select(s, NULL, &selected);
		if (r < 0)
			return error_message(ret_error, r, "Failed to select a profile: %s", strerror(-r));
		name = selected.name;
	}
	if (!profile_name_is_valid(name))
		return error_message(ret_error, -ENOENT, "'%s' is not a valid profile name", name);
	r = profile_load(s->config_fd, name, &p, ret_error);
	if (r < 0)
		return r;

	r = settings_resolve(s->rules, s->n_rules, &s->facts, p, s->config, &settings);
	if (r < 0)
		return error_message(ret_error, r, "Failed to resolve settings: %s", strerror(-r));
	in = (PlanInput) {
		.identity = &s->identity,
		.topology = s->topology,
		.caps = &s->caps,
		.settings = &settings,
		.profile = p->name,
	};
	r = plan_compute(&in, &plan);
	if (r < 0)
		return error_message(ret_error, r, "Failed to compute the plan: %s", strerror(-r));

	*ret_profile = TAKE_PTR(p);
	*ret_settings = settings;
	settings = (ProfileSettings) {};
	*ret_plan = TAKE_PTR(plan);
	return 0;
}
