/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's profile choice: a hold above SetProfile() above a workload
 * rule above the configuration above "balanced"; a hold that fails to
 * apply is put back; cookies are never 0.
 */
#include <stdlib.h>

#include "choice.h"
#include "test.h"

/* Which choices are made, and what choice_select() must answer. */
static const struct {
	const char *hold, *manual, *workload, *configured;
	const char *name, *reason, *source;
} cases[] = {
	{ NULL, NULL, NULL, NULL, "balanced", "configured", "built-in default" },
	{ NULL, NULL, NULL, "latency", "latency", "configured", "/etc/topotune/topotune.conf:3" },
	{ NULL, NULL, "hpc", "latency", "hpc", "workload:comm:mysqld", "workload rule comm:mysqld" },
	{ NULL, "throughput", "hpc", "latency", "throughput", "manual", "SetProfile(throughput) by :1.42" },
	{ "power", "throughput", "hpc", "latency", "power", "hold", "HoldProfile(power) by :1.9: bench" },
	{ "power", NULL, NULL, NULL, "power", "hold", "HoldProfile(power) by :1.9: bench" },
};

static void setup(ProfileChoice *c, Session *s, Config *config, const char *hold, const char *manual,
		  const char *workload, const char *configured)
{
	ChoiceHold h = {};

	*config = (Config) {};
	if (configured) {
		config->profile = (char *)configured;
		config->profile_origin = (Origin) { .file = (char *)"/etc/topotune/topotune.conf", .line = 3 };
	}
	s->config = config;
	if (hold) {
		check_int(choice_hold_new(c, hold, ":1.9", "bench", 64, &h), 0);
		choice_hold_swap(c, &h);
		choice_hold_done(&h);
		check_int(choice_hold_commit(c, ":1.9"), 0);
	}
	check_int(choice_set_manual(c, manual, manual ? "SetProfile(throughput) by :1.42" : NULL), 0);
	check_int(choice_set_workload(c, workload, workload ? "comm:mysqld" : NULL), workload ? 1 : 0);
}

static void test_order(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ProfileChoice c = {};
		Session s = SESSION_INIT;
		SessionSelection sel = {};
		Config config;

		setup(&c, &s, &config, cases[i].hold, cases[i].manual, cases[i].workload, cases[i].configured);
		check_int(choice_select(&c, &s, &sel), 0);
		check_str(sel.name, cases[i].name);
		check_str(sel.reason, cases[i].reason);
		check_str(sel.source, cases[i].source);
		check_int(sel.configured, !strcmp(cases[i].reason, "configured"));
		check_int(choice_is_explicit(&c), cases[i].hold || cases[i].manual);

		/* What was applied without a name is recorded as choice_select() says. */
		check_int(choice_applied(&c, &s, NULL, "Apply by :1.5"), 0);
		check_str(c.reason, cases[i].reason);
		check_str(c.source, cases[i].source);
		session_selection_done(&sel);
		choice_done(&c);
	}
}

static void test_applied_by_name(void)
{
	ProfileChoice c = {};
	Session s = SESSION_INIT;

	check_int(choice_applied(&c, &s, "latency", "SetProfile(latency) by :1.7"), 0);
	check_str(c.reason, "manual");
	check_str(c.source, "SetProfile(latency) by :1.7");
	check_int(choice_applied(&c, &s, "latency", NULL), 0);
	check_str(c.source, "");
	choice_done(&c);
}

static void test_hold(void)
{
	ProfileChoice c = {};
	ChoiceHold h = {};

	/* A new hold has no cookie and no holder until it took effect. */
	check_int(choice_hold_new(&c, "power", ":1.9", "", 64, &h), 0);
	check_int(h.cookie, 0);
	check(!h.holder);
	check_str(h.reason, "no reason given");
	check_str(h.source, "HoldProfile(power) by :1.9: no reason given");
	choice_hold_swap(&c, &h);
	check_str(c.hold.profile, "power");
	check(!choice_held_by_other(&c, ":1.10"));

	/* The switch failed: put back, nothing held. */
	choice_hold_swap(&c, &h);
	choice_hold_done(&h);
	check(!c.hold.profile);
	check(!choice_is_explicit(&c));

	check_int(choice_hold_new(&c, "power", ":1.9", "bench\nrun", 64, &h), 0);
	choice_hold_swap(&c, &h);
	choice_hold_done(&h);
	check_int(choice_hold_commit(&c, ":1.9"), 0);
	check_int(c.hold.cookie, 1);
	check_str(c.hold.holder, ":1.9");
	check_str(c.hold.reason, "bench\\x0arun");
	check(choice_held_by_other(&c, ":1.10"));
	check(!choice_held_by_other(&c, ":1.9"));

	/* The holder holds another profile: same cookie, same holder. */
	check_int(choice_hold_new(&c, "latency", ":1.9", "x", 64, &h), 0);
	check_int(h.cookie, 1);
	check_str(h.holder, ":1.9");
	choice_hold_swap(&c, &h);
	choice_hold_done(&h);
	check_int(choice_hold_commit(&c, ":1.9"), 0);
	check_int(c.hold.cookie, 1);
	check_str(c.hold.profile, "latency");

	/* Cookies count on and skip 0 when they wrap. */
	choice_hold_clear(&c);
	check(!choice_held_by_other(&c, ":1.10"));
	c.last_cookie = UINT32_MAX;
	check_int(choice_hold_new(&c, "power", ":1.11", "y", 64, &h), 0);
	choice_hold_swap(&c, &h);
	choice_hold_done(&h);
	check_int(choice_hold_commit(&c, ":1.11"), 0);
	check_int(c.hold.cookie, 1);

	/* The reason is bounded. */
	check_int(choice_hold_new(&c, "power", ":1.11", "0123456789", 4, &h), 0);
	check(!strncmp(h.reason, "0123", 4) && !strstr(h.reason, "4567"));
	choice_hold_done(&h);
	choice_done(&c);
}

static void test_manual_and_workload(void)
{
	ProfileChoice c = {};

	check_int(choice_set_workload(&c, "hpc", "comm:mysqld"), 1);
	check_int(choice_set_workload(&c, "hpc", "comm:mysqld"), 0);
	check_int(choice_set_workload(&c, "hpc", "exe:/usr/bin/x"), 1);
	check_str(c.workload_rule, "exe:/usr/bin/x");
	check(!choice_is_explicit(&c));
	check_int(choice_set_workload(&c, NULL, NULL), 1);
	check(!c.workload && !c.workload_rule);

	check_int(choice_set_manual(&c, "latency", NULL), 0);
	check_str(c.manual, "latency");
	check_str(c.manual_source, "");
	check(choice_is_explicit(&c));
	check_int(choice_set_manual(&c, NULL, "ignored"), 0);
	check(!c.manual && !c.manual_source);
	choice_done(&c);
}

int main(void)
{
	test_order();
	test_applied_by_name();
	test_hold();
	test_manual_and_workload();
	return test_end("choice");
}
