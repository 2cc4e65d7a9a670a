/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The settings a profile, a hardware rule or topotune.conf can carry
 * ([scheduler] and [isolation]), their provenance, the layering of those
 * sources into one effective value each, and the choice of the profile.
 * Pure apart from allocation; depends on basic.
 */
#include <ctype.h>

#include "profile-internal.h"
#include "strutil.h"

static const char *const rollback_mode_table[_ROLLBACK_MAX] = {
	[ROLLBACK_ON_EXIT] = "on-exit",
	[ROLLBACK_NOT_ON_EXIT] = "not-on-exit",
};
DEFINE_STRING_TABLE_LOOKUP(rollback_mode, RollbackMode);

bool profile_name_is_valid(const char *name)
{
	size_t n = 0;

	if (!name || !*name || name[0] == '.')
		return false;
	for (const char *p = name; *p; p++, n++)
		if (n >= PROFILE_NAME_MAX || !isascii((unsigned char)*p) ||
		    !(isalnum((unsigned char)*p) || strchr("_.-", *p)))
			return false;
	return true;
}

int ini_check_profile_name(IniFile *ini, const char *key, const char *value)
{
	if (profile_name_is_valid(value))
		return 0;
	return ini_error(ini, -EINVAL,
			 "invalid profile name '%s' for %s: expected letters, digits, '_', '.' or '-', not starting with '.'",
			 value, key);
}

void origin_done(Origin *o)
{
	free(o->file);
	*o = (Origin) {};
}

int origin_set(Origin *o, const char *file, unsigned line)
{
	int r;

	r = strdup_to(&o->file, file);
	if (r < 0)
		return r;
	o->line = file ? line : 0;
	return 0;
}

int origin_copy(Origin *dst, const Origin *src)
{
	return origin_set(dst, src->file, src->line);
}

char *origin_to_string(const Origin *o)
{
	if (!o->file)
		return strdup("built-in default");
	if (o->line == 0)
		return strdup(o->file);
	return strprintf("%s:%u", o->file, o->line);
}

void profile_settings_init(ProfileSettings *s)
{
	*s = (ProfileSettings) {};
	SETTING_FOREACH(i)
		s->value[i] = setting_get(i)->default_value;
}

void profile_settings_done(ProfileSettings *s)
{
	SETTING_FOREACH(i) {
		setting_value_done(&s->value[i]);
		origin_done(&s->origin[i]);
	}
}

int profile_settings_copy(const ProfileSettings *s, ProfileSettings *ret)
{
	_cleanup_(profile_settings_done) ProfileSettings c = {};

	SETTING_FOREACH(i)
		if (setting_value_copy(&s->value[i], &c.value[i]) < 0 || origin_copy(&c.origin[i], &s->origin[i]) < 0)
			return -ENOMEM;

	*ret = c;
	c = (ProfileSettings) {};
	return 0;
}

int profile_settings_overlay(ProfileSettings *base, const ProfileSettings *over)
{
	_cleanup_(profile_settings_done) ProfileSettings t = {};
	int r;

	/* Work on a copy so that @base is unchanged if an allocation fails. */
	r = profile_settings_copy(base, &t);
	if (r < 0)
		return r;

	SETTING_FOREACH(i) {
		if (!over->origin[i].file)
			continue;
		setting_value_done(&t.value[i]);
		r = setting_value_copy(&over->value[i], &t.value[i]);
		if (r < 0)
			return r;
		r = origin_copy(&t.origin[i], &over->origin[i]);
		if (r < 0)
			return r;
	}

	profile_settings_done(base);
	*base = t;
	t = (ProfileSettings) {};
	return 0;
}

int profile_settings_format_value(const ProfileSettings *s, const char *key, char **ret)
{
	SettingId id = setting_id_from_string(key);

	if (id < 0)
		return -ENOENT;
	return setting_format(id, &s->value[id], ret);
}

const Origin *profile_settings_origin(const ProfileSettings *s, const char *key)
{
	SettingId id = setting_id_from_string(key);

	return id < 0 ? NULL : &s->origin[id];
}

int settings_parse_key(IniFile *ini, ProfileSettings *s, const char *section,
		       const char *key, const char *value)
{
	SETTING_FOREACH(i) {
		const Setting *row = setting_get(i);
		_cleanup_free_ char *error = NULL;
		SettingValue v = {};
		int r;

		if (!streq(row->section, section) || !streq(row->key, key))
			continue;
		r = row->parse(row, value, &v, &error);
		if (r == -ENOMEM || (r < 0 && !error))
			return ini_error(ini, r, "out of memory");
		if (r < 0)
			return ini_error(ini, r, "%s", error);
		setting_value_done(&s->value[i]);
		s->value[i] = v;
		if (origin_set(&s->origin[i], ini_file(ini), ini_line(ini)) < 0)
			return ini_error(ini, -ENOMEM, "out of memory");
		return 0;
	}
	return ini_unknown_key(ini, section, key);
}

int settings_resolve(HardwareRule *const *rules, size_t n_rules, const MatchFacts *f,
		     const Profile *p, const Config *c, ProfileSettings *ret)
{
	_cleanup_(profile_settings_done) ProfileSettings s = {};
	int r;

	profile_settings_init(&s);

	for (size_t i = 0; f && i < n_rules; i++) {
		if (!hardware_rule_matches(rules[i], f))
			continue;
		r = profile_settings_overlay(&s, &rules[i]->settings);
		if (r < 0)
			return r;
	}
	if (p) {
		r = profile_settings_overlay(&s, &p->settings);
		if (r < 0)
			return r;
	}
	if (c) {
		r = profile_settings_overlay(&s, &c->overrides);
		if (r < 0)
			return r;
	}

	*ret = s;
	s = (ProfileSettings) {};
	return 0;
}

int profile_select(const Config *c, HardwareRule *const *rules, size_t n_rules,
		   const MatchFacts *f, char **ret_name, Origin *ret_origin)
{
	_cleanup_(origin_done) Origin o = {};
	_cleanup_free_ char *name = NULL;
	const char *choice = "balanced";
	const Origin *from = &o;

	if (c && c->profile && c->profile_origin.file) {
		choice = c->profile;
		from = &c->profile_origin;
	} else
		for (size_t i = n_rules; f && i > 0; i--) {
			const HardwareRule *rule = rules[i - 1];

			if (rule->profile && hardware_rule_matches(rule, f)) {
				choice = rule->profile;
				from = &rule->profile_origin;
				break;
			}
		}

	name = strdup(choice);
	if (!name)
		return -ENOMEM;
	if (ret_origin) {
		Origin copy = {};

		/* An output: overwritten, not released. */
		if (origin_copy(&copy, from) < 0)
			return -ENOMEM;
		*ret_origin = copy;
	}
	*ret_name = TAKE_PTR(name);
	return 0;
}
