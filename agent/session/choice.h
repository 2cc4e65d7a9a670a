/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "session.h"

/*
 * Which profile topotuned applies, and why: a hold (HoldProfile()) above a
 * manual choice (SetProfile()) above a workload rule with running processes
 * above the configuration (topotune.conf and its drop-ins, the persistent
 * choice among them) above a matching hardware rule above "balanced". The
 * daemon records what callers and workload rules want here; choice_select()
 * is the one place that order is applied (through session_select_profile(),
 * which topotunectl check shares). No bus, no I/O, no logging.
 */

typedef struct ChoiceHold {
	uint32_t cookie;             /* 0: no hold */
	char *profile;
	char *holder;                /* the holder's unique bus name */
	char *reason;                /* the holder's words, bounded and escaped */
	char *source;                /* "HoldProfile(P) by :1.9: REASON" */
} ChoiceHold;

typedef struct ProfileChoice {
	ChoiceHold hold;
	uint32_t last_cookie;
	char *manual;                /* SetProfile(): until reload or restart */
	char *manual_source;         /* "SetProfile(P) by :1.42" */
	char *workload;              /* what the workload rules want; NULL: the configured one */
	char *workload_rule;         /* the rule in force, "comm:mysqld" */
	/* What choice_applied() recorded of the profile in force. */
	char *reason;                /* ActiveProfileReason: hold, manual, workload:RULE, configured */
	char *source;                /* ActiveProfileSource: FILE:LINE of the choice, or who made it */
} ProfileChoice;

void choice_done(ProfileChoice *c);

/* The profile to apply now, and why (session_select_profile() over @s's configuration). */
int choice_select(const ProfileChoice *c, const Session *s, SessionSelection *ret);
/*
 * Record why the profile in force was chosen after it was applied: asked for
 * by @name (a manual choice by @source), or (@name NULL) as choice_select() says.
 */
int choice_applied(ProfileChoice *c, const Session *s, const char *name, const char *source);

/* Another bus client than @sender holds a profile. */
bool choice_held_by_other(const ProfileChoice *c, const char *sender);
/*
 * A hold of @profile by @holder (@reason bounded to @reason_max bytes,
 * escaped; empty: "no reason given"), to be swapped in with
 * choice_hold_swap(). The current hold's cookie and holder carry over; a
 * new hold has neither until choice_hold_commit().
 */
int choice_hold_new(const ProfileChoice *c, const char *profile, const char *holder, const char *reason,
		    size_t reason_max, ChoiceHold *ret);
/* Put @h in force and the hold that was into @h (to put back when the switch fails). */
void choice_hold_swap(ProfileChoice *c, ChoiceHold *h);
/* The hold in force took effect: a new one gets a cookie (never 0) and @holder. */
int choice_hold_commit(ProfileChoice *c, const char *holder);
void choice_hold_done(ChoiceHold *h);
/* Forget the hold. */
void choice_hold_clear(ProfileChoice *c);

/* SetProfile(): @name wins over the workload rules and the configuration; NULL ends it. */
int choice_set_manual(ProfileChoice *c, const char *name, const char *source);
/* The workload rules want @profile (NULL: none) by @rule; > 0 if that changed. */
int choice_set_workload(ProfileChoice *c, const char *profile, const char *rule);
/* A hold or SetProfile() chose explicitly: the workload rules wait. */
bool choice_is_explicit(const ProfileChoice *c);
