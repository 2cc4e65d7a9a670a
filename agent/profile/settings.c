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

static const char *const smt_buddy_mode_table[_SMT_BUDDY_MAX] = {
	[SMT_BUDDY_KEEP] = "keep",
	[SMT_BUDDY_OFF] = "off",
	[SMT_BUDDY_ON] = "on",
};
DEFINE_STRING_TABLE_LOOKUP(smt_buddy_mode, SmtBuddyMode);

static const char *const relax_mode_table[_RELAX_MAX] = {
	[RELAX_KEEP] = "keep",
	[RELAX_AUTO] = "auto",
	[RELAX_LEVEL] = "level",
};
DEFINE_STRING_TABLE_LOOKUP(relax_mode, RelaxMode);

static const char *const isolation_mode_table[_ISOLATION_MAX] = {
	[ISOLATION_KEEP] = "keep",
	[ISOLATION_NONE] = "none",
	[ISOLATION_LIST] = "list",
	[ISOLATION_PER_LLC] = "per-llc",
	[ISOLATION_PER_NODE] = "per-node",
};
DEFINE_STRING_TABLE_LOOKUP(isolation_mode, IsolationMode);

static const char *const housekeeping_smt_table[_HOUSEKEEPING_MAX] = {
	[HOUSEKEEPING_WHOLE_CORES] = "whole-cores",
	[HOUSEKEEPING_ANY] = "any",
};
DEFINE_STRING_TABLE_LOOKUP(housekeeping_smt, HousekeepingSmt);

static const char *const rollback_mode_table[_ROLLBACK_MAX] = {
	[ROLLBACK_ON_EXIT] = "on-exit",
	[ROLLBACK_NOT_ON_EXIT] = "not-on-exit",
};
DEFINE_STRING_TABLE_LOOKUP(rollback_mode, RollbackMode);

/* The kernel rejects relax levels above its number of domain levels; 15 is ample. */
#define RELAX_LEVEL_MAX 15

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
	*s = (ProfileSettings) {
		.smt_buddy_assist = SMT_BUDDY_KEEP,
		.relax_mode = RELAX_KEEP,
		.relax_level = -1,
		.isolation = ISOLATION_NONE,
		.housekeeping_smt = HOUSEKEEPING_WHOLE_CORES,
	};
}

void profile_settings_done(ProfileSettings *s)
{
	origin_done(&s->smt_buddy_assist_origin);
	origin_done(&s->relax_origin);
	cpuset_done(&s->isolated_cpus);
	origin_done(&s->isolation_origin);
	origin_done(&s->housekeeping_origin);
	*s = (ProfileSettings) {};
}

int profile_settings_copy(const ProfileSettings *s, ProfileSettings *ret)
{
	_cleanup_(profile_settings_done) ProfileSettings c = {};

	c.smt_buddy_assist = s->smt_buddy_assist;
	c.relax_mode = s->relax_mode;
	c.relax_level = s->relax_level;
	c.isolation = s->isolation;
	c.isolated_per_group = s->isolated_per_group;
	c.housekeeping_smt = s->housekeeping_smt;

	if (origin_copy(&c.smt_buddy_assist_origin, &s->smt_buddy_assist_origin) < 0 ||
	    origin_copy(&c.relax_origin, &s->relax_origin) < 0 ||
	    origin_copy(&c.isolation_origin, &s->isolation_origin) < 0 ||
	    origin_copy(&c.housekeeping_origin, &s->housekeeping_origin) < 0 ||
	    cpuset_copy(&c.isolated_cpus, &s->isolated_cpus) < 0)
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

	if (over->smt_buddy_assist_origin.file) {
		t.smt_buddy_assist = over->smt_buddy_assist;
		r = origin_copy(&t.smt_buddy_assist_origin, &over->smt_buddy_assist_origin);
		if (r < 0)
			return r;
	}
	if (over->relax_origin.file) {
		t.relax_mode = over->relax_mode;
		t.relax_level = over->relax_level;
		r = origin_copy(&t.relax_origin, &over->relax_origin);
		if (r < 0)
			return r;
	}
	if (over->isolation_origin.file) {
		t.isolation = over->isolation;
		t.isolated_per_group = over->isolated_per_group;
		r = cpuset_copy(&t.isolated_cpus, &over->isolated_cpus);
		if (r < 0)
			return r;
		r = origin_copy(&t.isolation_origin, &over->isolation_origin);
		if (r < 0)
			return r;
	}
	if (over->housekeeping_origin.file) {
		t.housekeeping_smt = over->housekeeping_smt;
		r = origin_copy(&t.housekeeping_origin, &over->housekeeping_origin);
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
	_cleanup_free_ char *v = NULL;

	if (streq(key, "smt_buddy_assist"))
		v = strdup(strna(smt_buddy_mode_to_string(s->smt_buddy_assist)));
	else if (streq(key, "relax_domain_level"))
		v = s->relax_mode == RELAX_LEVEL ? strprintf("%d", s->relax_level)
						 : strdup(strna(relax_mode_to_string(s->relax_mode)));
	else if (streq(key, "isolated_cpus")) {
		switch (s->isolation) {
		case ISOLATION_LIST: {
			int r = cpuset_format_list(&s->isolated_cpus, &v);

			if (r < 0)
				return r;
			break;
		}
		case ISOLATION_PER_LLC:
			v = strprintf("auto:%u-per-llc", s->isolated_per_group);
			break;
		case ISOLATION_PER_NODE:
			v = strprintf("auto:%u-per-node", s->isolated_per_group);
			break;
		default:
			v = strdup(strna(isolation_mode_to_string(s->isolation)));
		}
	} else if (streq(key, "housekeeping_smt"))
		v = strdup(strna(housekeeping_smt_to_string(s->housekeeping_smt)));
	else
		return -ENOENT;
	if (!v)
		return -ENOMEM;

	*ret = TAKE_PTR(v);
	return 0;
}

const Origin *profile_settings_origin(const ProfileSettings *s, const char *key)
{
	if (streq(key, "smt_buddy_assist"))
		return &s->smt_buddy_assist_origin;
	if (streq(key, "relax_domain_level"))
		return &s->relax_origin;
	if (streq(key, "isolated_cpus"))
		return &s->isolation_origin;
	if (streq(key, "housekeeping_smt"))
		return &s->housekeeping_origin;
	return NULL;
}

static int origin_here(IniFile *ini, Origin *o)
{
	if (origin_set(o, ini_file(ini), ini_line(ini)) < 0)
		return ini_error(ini, -ENOMEM, "out of memory");
	return 1;
}

/* "auto:<n>-per-llc" / "auto:<n>-per-node"; 0 if @value has another form. */
static int parse_isolation_auto(const char *value, IsolationMode *ret_mode, unsigned *ret_n)
{
	_cleanup_free_ char *num = NULL;
	const char *p, *dash;
	IsolationMode mode;
	unsigned n;

	p = startswith(value, "auto:");
	if (!p)
		return 0;
	dash = strchr(p, '-');
	if (!dash)
		return -EINVAL;
	if (streq(dash, "-per-llc"))
		mode = ISOLATION_PER_LLC;
	else if (streq(dash, "-per-node"))
		mode = ISOLATION_PER_NODE;
	else
		return -EINVAL;
	num = strndup(p, (size_t)(dash - p));
	if (!num)
		return -ENOMEM;
	if (safe_atou_base(num, 10, &n) < 0 || n < 1 || n > CPUSET_MAX_CPUS)
		return -EINVAL;

	*ret_mode = mode;
	*ret_n = n;
	return 1;
}

static int parse_isolated_cpus(IniFile *ini, ProfileSettings *s, const char *key, const char *value)
{
	IsolationMode mode;
	unsigned n = 0;
	CpuSet set = {};
	const char *bad = NULL;
	int r;

	if (streq(value, "none") || streq(value, "keep"))
		mode = isolation_mode_from_string(value);
	else if (startswith(value, "auto:")) {
		r = parse_isolation_auto(value, &mode, &n);
		if (r == -ENOMEM)
			return ini_error(ini, r, "out of memory");
		if (r < 0)
			return ini_error(ini, -EINVAL,
					 "invalid value '%s' for %s: expected auto:<n>-per-llc or auto:<n>-per-node with n >= 1",
					 value, key);
	} else if (isdigit((unsigned char)value[0])) {
		r = cpuset_parse_list(value, &set, &bad);
		if (r == -ERANGE)
			return ini_error(ini, -EINVAL,
					 "invalid CPU list '%s' for %s: CPU number out of range (max %u) at '%s'",
					 value, key, CPUSET_MAX_CPUS - 1, strempty(bad));
		if (r == -ENOMEM)
			return ini_error(ini, r, "out of memory");
		if (r < 0)
			return ini_error(ini, -EINVAL, "invalid CPU list '%s' for %s: bad text at '%s'",
					 value, key, strempty(bad));
		mode = ISOLATION_LIST;
	} else
		return ini_error(ini, -EINVAL,
				 "invalid value '%s' for %s: expected none, keep, a CPU list, auto:<n>-per-llc or auto:<n>-per-node",
				 value, key);

	cpuset_done(&s->isolated_cpus);
	s->isolated_cpus = set;
	s->isolation = mode;
	s->isolated_per_group = n;
	return origin_here(ini, &s->isolation_origin);
}

int settings_parse_key(IniFile *ini, ProfileSettings *s, const char *section,
		       const char *key, const char *value)
{
	if (streq(section, "scheduler") && streq(key, "smt_buddy_assist")) {
		SmtBuddyMode m = smt_buddy_mode_from_string(value);

		if (m < 0)
			return ini_error(ini, -EINVAL,
					 "invalid value '%s' for %s: expected on, off or keep", value, key);
		s->smt_buddy_assist = m;
		return origin_here(ini, &s->smt_buddy_assist_origin);
	}

	if (streq(section, "scheduler") && streq(key, "relax_domain_level")) {
		int level = -1;
		RelaxMode m;

		if (streq(value, "auto") || streq(value, "keep"))
			m = relax_mode_from_string(value);
		else if (safe_atoi(value, &level) >= 0 && level >= -1 && level <= RELAX_LEVEL_MAX)
			m = RELAX_LEVEL;
		else
			return ini_error(ini, -EINVAL,
					 "invalid value '%s' for %s: expected -1..%d, auto or keep",
					 value, key, RELAX_LEVEL_MAX);
		s->relax_mode = m;
		s->relax_level = m == RELAX_LEVEL ? level : -1;
		return origin_here(ini, &s->relax_origin);
	}

	if (streq(section, "isolation") && streq(key, "isolated_cpus"))
		return parse_isolated_cpus(ini, s, key, value);

	if (streq(section, "isolation") && streq(key, "housekeeping_smt")) {
		HousekeepingSmt h = housekeeping_smt_from_string(value);

		if (h < 0)
			return ini_error(ini, -EINVAL,
					 "invalid value '%s' for %s: expected whole-cores or any", value, key);
		s->housekeeping_smt = h;
		return origin_here(ini, &s->housekeeping_origin);
	}

	return 0;
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
