/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's profile choice: what a hold, SetProfile() and the workload
 * rules want, ordered with the configuration by session_select_profile().
 * Depends on basic and session; no bus, no I/O, no logging.
 */
#include <assert.h>
#include <stdlib.h>

#include "choice.h"
#include "strutil.h"

void choice_hold_done(ChoiceHold *h)
{
	free(h->profile);
	free(h->holder);
	free(h->reason);
	free(h->source);
	*h = (ChoiceHold) {};
}

void choice_done(ProfileChoice *c)
{
	choice_hold_done(&c->hold);
	free(c->manual);
	free(c->manual_source);
	free(c->workload);
	free(c->workload_rule);
	free(c->reason);
	free(c->source);
	*c = (ProfileChoice) {};
}

static SessionChoice choice_view(const ProfileChoice *c)
{
	return (SessionChoice) {
		.hold = c->hold.profile,
		.hold_source = c->hold.source,
		.manual = c->manual,
		.manual_source = c->manual_source,
		.workload = c->workload,
		.workload_rule = c->workload_rule,
	};
}

int choice_select(const ProfileChoice *c, const Session *s, SessionSelection *ret)
{
	SessionChoice view = choice_view(c);

	return session_select(s, &view, ret);
}

int choice_applied(ProfileChoice *c, const Session *s, const char *name, const char *source)
{
	_cleanup_(session_selection_done) SessionSelection sel = {};
	int r;

	free(c->reason);
	free(c->source);
	c->reason = c->source = NULL;
	if (name) {
		c->reason = strdup("manual");
		c->source = strdup(strempty(source));
		return c->reason && c->source ? 0 : -ENOMEM;
	}
	r = choice_select(c, s, &sel);
	if (r < 0)
		return r;
	c->reason = TAKE_PTR(sel.reason);
	c->source = TAKE_PTR(sel.source);
	return 0;
}

bool choice_held_by_other(const ProfileChoice *c, const char *sender)
{
	return c->hold.cookie && !streq_ptr(c->hold.holder, sender);
}

int choice_hold_new(const ProfileChoice *c, const char *profile, const char *holder, const char *reason,
		    size_t reason_max, ChoiceHold *ret)
{
	_cleanup_(choice_hold_done) ChoiceHold h = {};

	assert(profile && holder && reason);

	h.cookie = c->hold.cookie;
	h.profile = strdup(profile);
	h.reason = text_bounded(*reason ? reason : "no reason given", reason_max);
	if (!h.profile || !h.reason)
		return -ENOMEM;
	if (c->hold.holder) {
		h.holder = strdup(c->hold.holder);
		if (!h.holder)
			return -ENOMEM;
	}
	h.source = strprintf("HoldProfile(%s) by %s: %s", profile, holder, h.reason);
	if (!h.source)
		return -ENOMEM;
	*ret = h;
	h = (ChoiceHold) {};
	return 0;
}

void choice_hold_swap(ProfileChoice *c, ChoiceHold *h)
{
	ChoiceHold t = c->hold;

	c->hold = *h;
	*h = t;
}

int choice_hold_commit(ProfileChoice *c, const char *holder)
{
	char *h;

	if (c->hold.cookie)
		return 0;
	h = strdup(holder);
	if (!h)
		return -ENOMEM;
	free(c->hold.holder);
	c->hold.holder = h;
	c->hold.cookie = ++c->last_cookie ?: ++c->last_cookie;   /* never 0 */
	return 0;
}

void choice_hold_clear(ProfileChoice *c)
{
	choice_hold_done(&c->hold);
}

int choice_set_manual(ProfileChoice *c, const char *name, const char *source)
{
	_cleanup_free_ char *n = NULL, *s = NULL;

	if (name) {
		n = strdup(name);
		s = strdup(strempty(source));
		if (!n || !s)
			return -ENOMEM;
	}
	free(c->manual);
	c->manual = TAKE_PTR(n);
	free(c->manual_source);
	c->manual_source = TAKE_PTR(s);
	return 0;
}

int choice_set_workload(ProfileChoice *c, const char *profile, const char *rule)
{
	_cleanup_free_ char *p = NULL, *r = NULL;

	if (streq_ptr(profile, c->workload) && streq_ptr(rule, c->workload_rule))
		return 0;
	if (profile) {
		p = strdup(profile);
		if (!p)
			return -ENOMEM;
	}
	if (rule) {
		r = strdup(rule);
		if (!r)
			return -ENOMEM;
	}
	free(c->workload);
	c->workload = TAKE_PTR(p);
	free(c->workload_rule);
	c->workload_rule = TAKE_PTR(r);
	return 1;
}

bool choice_is_explicit(const ProfileChoice *c)
{
	return c->hold.profile || c->manual;
}
