/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The profile module's ini parsers (agent/profile): the input is one file's
 * text, read as a profile (profile_parse_string), then written into a
 * scratch tree and loaded as a profile with includes resolved, as
 * topotune.conf and as a hardware rule, through the same loaders the daemon
 * uses. Never crash; a failure always carries a message; what loads can be
 * resolved, selected and printed.
 */
#include <fcntl.h>
#include <unistd.h>

#include "cpuset.h"
#include "fuzz-tree.h"
#include "fuzz.h"
#include "profile.h"

static const MatchFacts facts[] = {
	{ "hygon", 0x18, 7, 2, 384, 6, true },
	{ "amd", 0x1a, 0x11, 2, 640, 10, true },
	{ "intel", 6, 0xad, 2, 384, 3, true },
	{ "unknown", 0, 0, 1, 2, 1, false },
};

static void check_settings(const ProfileSettings *s)
{
	SETTING_FOREACH(i) {
		char *v = NULL, *o;

		fuzz_assert(profile_settings_format_value(s, setting_id_to_string(i), &v) >= 0);
		free(v);
		o = origin_to_string(profile_settings_origin(s, setting_id_to_string(i)));
		free(o);
	}
}

static void check_error(int r, char **err)
{
	/* Every refusal names a place (or at least says something). */
	if (r < 0 && r != -ENOMEM)
		fuzz_assert(*err && **err);
	free(*err);
	*err = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size), *err = NULL;
	int root = fuzz_tree_root();
	Profile *p = NULL, *loaded = NULL;
	Config *c = NULL;
	HardwareRule **rules = NULL;
	size_t n_rules = 0;
	int r;

	r = profile_parse_string(text, "/usr/lib/topotune/profiles/fuzz.ini", &p, &err);
	check_error(r, &err);
	if (r >= 0)
		check_settings(&p->settings);

	/* The same text as a vendor profile (with a base to include), the config and a rule. */
	fuzz_tree_write(root, "usr/lib/topotune/profiles/fuzz.ini", text, strlen(text));
	fuzz_tree_write(root, "usr/lib/topotune/profiles/base.ini", "[scheduler]\nsmt_buddy_assist = on\n", 34);
	fuzz_tree_write(root, "etc/topotune/topotune.conf", text, strlen(text));
	fuzz_tree_write(root, "usr/lib/topotune/hardware.d/50-fuzz.ini", text, strlen(text));

	r = profile_load(root, "fuzz", &loaded, &err);
	check_error(r, &err);
	r = config_load(root, &c, &err);
	check_error(r, &err);
	r = hardware_rules_load(root, &rules, &n_rules, &err);
	check_error(r, &err);

	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		ProfileSettings eff;
		char *name = NULL;
		Origin o = {};

		for (size_t j = 0; j < n_rules; j++)
			(void)hardware_rule_matches(rules[j], &facts[i]);
		if (profile_select(c, rules, n_rules, &facts[i], &name, &o) >= 0) {
			free(name);
			origin_done(&o);
		}
		if (settings_resolve(rules, n_rules, &facts[i], loaded ?: p, c, &eff) >= 0) {
			check_settings(&eff);
			profile_settings_done(&eff);
		}
	}

	hardware_rules_free(rules, n_rules);
	config_free(c);
	profile_free(loaded);
	profile_free(p);
	fuzz_tree_clear(root);
	free(text);
	return 0;
}
