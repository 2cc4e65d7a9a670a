/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hardware.d rules: a [match] on CPU identity and topology facts, and the
 * defaults (profile, [scheduler], [isolation]) that apply when it matches.
 * One rule per file; /etc shadows /usr/lib by file name; all rules apply in
 * lexical order of file names. Depends on basic and the inih wrapper.
 */
#include <ctype.h>
#include <limits.h>
#include <strings.h>

#include "profile-internal.h"
#include "strutil.h"

static const char *const hardware_sections[] = {
	"match", "profile", "scheduler", "isolation", NULL,
};

HardwareRule *hardware_rule_free(HardwareRule *r)
{
	if (!r)
		return NULL;
	free(r->path);
	free(r->vendor);
	strv_free(r->has_core_kinds);
	free(r->profile);
	origin_done(&r->profile_origin);
	profile_settings_done(&r->settings);
	free(r);
	return NULL;
}

void hardware_rules_free(HardwareRule **rules, size_t n)
{
	if (!rules)
		return;
	for (size_t i = 0; i < n; i++)
		hardware_rule_free(rules[i]);
	free(rules);
}

static bool in_range(unsigned v, unsigned min, unsigned max)
{
	return v >= min && v <= max;
}

/*
 * Whether @want names core kind @k: its key ("atom", "0x41:0xd46"), or its
 * name in lower case without the vendor word, spaces as '-' ("cortex-a510").
 */
static bool core_kind_is(const MatchCoreKind *k, const char *want)
{
	const char *n;
	char buf[64];
	size_t i;

	if (k->key && strcasecmp(k->key, want) == 0)
		return true;
	if (!k->name)
		return false;
	n = startswith(k->name, "Arm ") ?: startswith(k->name, "Intel ") ?: k->name;
	for (i = 0; n[i] && i < sizeof(buf) - 1; i++)
		buf[i] = n[i] == ' ' ? '-' : (char)tolower((unsigned char)n[i]);
	buf[i] = '\0';
	return streq(buf, want);
}

static bool core_kinds_match(const HardwareRule *r, const MatchFacts *f)
{
	unsigned n = MIN(f->n_core_kinds, MATCH_CORE_KINDS_MAX);
	bool capacity_rule = r->core_capacity_min > 0 || r->core_capacity_max < UINT_MAX, found = !capacity_rule;

	if (!in_range(f->n_core_kinds, r->core_kinds_min, r->core_kinds_max))
		return false;
	STRV_FOREACH(w, r->has_core_kinds) {
		bool any = false;

		for (unsigned i = 0; i < n && !any; i++)
			any = core_kind_is(&f->core_kinds[i], *w);
		if (!any)
			return false;
	}
	for (unsigned i = 0; i < n && !found; i++)
		found = f->core_kinds[i].capacity > 0 &&
			in_range(f->core_kinds[i].capacity, r->core_capacity_min, r->core_capacity_max);
	return found;
}

bool hardware_rule_matches(const HardwareRule *r, const MatchFacts *f)
{
	if (r->vendor && !streq_ptr(r->vendor, f->vendor))
		return false;
	if (r->smt >= 0 && (bool)r->smt != f->smt)
		return false;
	if (!core_kinds_match(r, f))
		return false;
	return in_range(f->family, r->family_min, r->family_max) &&
	       in_range(f->model, r->model_min, r->model_max) &&
	       in_range(f->packages, r->packages_min, r->packages_max) &&
	       in_range(f->cpus, r->cpus_min, r->cpus_max) &&
	       in_range(f->nodes_per_package, r->nodes_per_package_min, r->nodes_per_package_max);
}

/* Decimal, or hexadecimal with 0x; no octal surprises from "010". */
static int parse_number(const char *s, unsigned *ret)
{
	if (startswith(s, "0x") || startswith(s, "0X"))
		return s[2] ? safe_atou_base(s, 16, ret) : -EINVAL;
	return safe_atou_base(s, 10, ret);
}

/* "N" or "A-B" (white space around '-' allowed). */
static int parse_range(const char *value, unsigned *ret_min, unsigned *ret_max)
{
	_cleanup_free_ char *copy = NULL;
	char *dash, *a, *b;
	unsigned lo, hi;

	copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	dash = strchr(copy, '-');
	if (!dash) {
		if (parse_number(strip(copy), &lo) < 0)
			return -EINVAL;
		*ret_min = *ret_max = lo;
		return 0;
	}
	*dash = '\0';
	a = strip(copy);
	b = strip(dash + 1);
	if (parse_number(a, &lo) < 0 || parse_number(b, &hi) < 0)
		return -EINVAL;
	if (lo > hi)
		return -ERANGE;
	*ret_min = lo;
	*ret_max = hi;
	return 0;
}

static int match_key(IniFile *ini, HardwareRule *r, const char *key, const char *value)
{
	/* A missing end is a one-sided bound; all keys narrow what they set. */
	const struct {
		const char *key;
		unsigned *min, *max;
	} ranges[] = {
		{ "family", &r->family_min, &r->family_max },
		{ "model", &r->model_min, &r->model_max },
		{ "packages", &r->packages_min, &r->packages_max },
		{ "cpus", &r->cpus_min, &r->cpus_max },
		{ "nodes_per_package", &r->nodes_per_package_min, &r->nodes_per_package_max },
		{ "min_nodes_per_package", &r->nodes_per_package_min, NULL },
		{ "max_nodes_per_package", NULL, &r->nodes_per_package_max },
		{ "core_kinds", &r->core_kinds_min, &r->core_kinds_max },
		{ "core_capacity", &r->core_capacity_min, &r->core_capacity_max },
	};

	if (streq(key, "vendor")) {
		for (const char *p = value; *p; p++)
			if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || strchr("_-", *p)))
				return ini_error(ini, -EINVAL,
						 "invalid value '%s' for vendor: expected a lower-case vendor name such as intel, amd, hygon or zhaoxin",
						 value);
		if (strdup_to(&r->vendor, value) < 0)
			return ini_error(ini, -ENOMEM, "out of memory");
		return 0;
	}

	if (streq(key, "has_core_kind")) {
		_cleanup_strv_free_ char **words = NULL;

		if (strv_split(value, WHITESPACE, &words) < 0)
			return ini_error(ini, -ENOMEM, "out of memory");
		if (!words || !*words)
			return ini_error(ini, -EINVAL, "empty value for has_core_kind: expected a core kind such as atom, core, cortex-a510 or 0x41:0xd46");
		STRV_FOREACH(w, words) {
			for (const char *p = *w; *p; p++)
				if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || strchr(":_-", *p)))
					return ini_error(ini, -EINVAL,
							 "invalid value '%s' for has_core_kind: expected lower-case core kinds such as atom, core, cortex-a510 or 0x41:0xd46 (topotunectl topology lists them)",
							 *w);
			if (strv_extend(&r->has_core_kinds, *w) < 0)
				return ini_error(ini, -ENOMEM, "out of memory");
		}
		return 0;
	}

	if (streq(key, "smt")) {
		if (!streq(value, "yes") && !streq(value, "no"))
			return ini_error(ini, -EINVAL, "invalid value '%s' for smt: expected yes or no",
					 value);
		r->smt = streq(value, "yes");
		return 0;
	}

	for (size_t i = 0; i < ELEMENTSOF(ranges); i++) {
		bool single = !ranges[i].min || !ranges[i].max;
		unsigned lo, hi;
		int k;

		if (!streq(key, ranges[i].key))
			continue;

		if (single) {
			k = parse_number(value, &lo);
			hi = lo;
		} else
			k = parse_range(value, &lo, &hi);
		if (k == -ENOMEM)
			return ini_error(ini, k, "out of memory");
		if (k == -ERANGE)
			return ini_error(ini, -EINVAL, "invalid range '%s' for %s: start above end",
					 value, key);
		if (k < 0)
			return ini_error(ini, -EINVAL,
					 "invalid value '%s' for %s: expected %s (decimal or 0x hex)", value,
					 key, single ? "a number" : "a number or a range A-B");

		if (ranges[i].min)
			*ranges[i].min = MAX(*ranges[i].min, lo);
		if (ranges[i].max)
			*ranges[i].max = MIN(*ranges[i].max, hi);
		if (r->nodes_per_package_min > r->nodes_per_package_max)
			return ini_error(ini, -EINVAL,
					 "%s = %s contradicts the other nodes_per_package keys: nothing can match",
					 key, value);
		return 0;
	}

	return ini_unknown_key(ini, "match", key);
}

typedef struct HardwareParse {
	HardwareRule *rule;
	bool has_match;
} HardwareParse;

static int hardware_section(IniFile *ini, const char *section, void *userdata)
{
	HardwareParse *hp = userdata;

	if (streq(section, "match") && !hp->has_match) {
		hp->has_match = true;
		hp->rule->line = ini_line(ini);
	}
	return 0;
}

static int hardware_key(IniFile *ini, const char *section, const char *key, const char *value,
			void *userdata)
{
	HardwareParse *hp = userdata;
	HardwareRule *r = hp->rule;
	int k;

	if (streq(section, "match"))
		return match_key(ini, r, key, value);

	if (streq(section, "profile")) {
		if (!streq(key, "name"))
			return ini_unknown_key(ini, section, key);
		k = ini_check_profile_name(ini, key, value);
		if (k < 0)
			return k;
		if (strdup_to(&r->profile, value) < 0 ||
		    origin_set(&r->profile_origin, ini_file(ini), ini_line(ini)) < 0)
			return ini_error(ini, -ENOMEM, "out of memory");
		return 0;
	}

	return settings_parse_key(ini, &r->settings, section, key, value);
}

static const IniSyntax hardware_syntax = {
	.sections = hardware_sections,
	.section = hardware_section,
	.key = hardware_key,
};

static int hardware_rule_parse(const char *text, const char *file, HardwareRule **ret,
			       char **ret_error)
{
	_cleanup_(hardware_rule_freep) HardwareRule *r = NULL;
	HardwareParse hp;
	int k;

	r = calloc(1, sizeof(HardwareRule));
	if (!r)
		return -ENOMEM;
	r->path = strdup(file);
	if (!r->path)
		return -ENOMEM;
	r->family_max = r->model_max = r->packages_max = r->cpus_max = UINT_MAX;
	r->nodes_per_package_max = UINT_MAX;
	r->core_kinds_max = r->core_capacity_max = UINT_MAX;
	r->smt = -1;
	profile_settings_init(&r->settings);

	hp = (HardwareParse) { .rule = r };
	k = ini_parse_text(text, file, &hardware_syntax, &hp, ret_error);
	if (k < 0)
		return k;
	if (!hp.has_match)
		return error_message(ret_error, -EINVAL,
				     "%s: missing [match] section (a rule must say which machines it is for)",
				     file);

	*ret = TAKE_PTR(r);
	return 0;
}

int hardware_rules_load(int root_fd, HardwareRule ***ret, size_t *ret_n, char **ret_error)
{
	_cleanup_strv_free_ char **etc = NULL, **usr = NULL, **names = NULL;
	_cleanup_free_ char *first_error = NULL;
	HardwareRule **rules = NULL;
	size_t n = 0;
	int r, first = 0;

	r = config_dir_list(root_fd, HARDWARE_DIR_ETC, ".ini", &etc, ret_error);
	if (r < 0)
		return r;
	r = config_dir_list(root_fd, HARDWARE_DIR_USR, ".ini", &usr, ret_error);
	if (r < 0)
		return r;

	names = calloc(1, sizeof(char *));
	if (!names)
		return -ENOMEM;
	for (size_t d = 0; d < 2; d++)
		STRV_FOREACH(f, d == 0 ? etc : usr)
			if (!strv_contains(names, *f)) {
				r = strv_extend(&names, *f);
				if (r < 0)
					return r;
			}
	strv_sort_plain(names);

	rules = calloc(strv_length(names) + 1, sizeof(HardwareRule *));
	if (!rules)
		return -ENOMEM;

	STRV_FOREACH(f, names) {
		_cleanup_free_ char *text = NULL, *file = NULL, *err = NULL;
		const char *dir = strv_contains(etc, *f) ? HARDWARE_DIR_ETC : HARDWARE_DIR_USR;

		r = config_file_read(root_fd, dir, *f, &text, &file, &err);
		if (r == -ENOENT)
			r = error_message(&err, r, "/%s/%s: %s", dir, *f, strerror(ENOENT));
		if (r >= 0)
			r = hardware_rule_parse(text, file, &rules[n], &err);
		if (r >= 0) {
			n++;
			continue;
		}
		/* Collecting every error (topotunectl check): the next rule all the same. */
		if (r != -ENOMEM && config_error_collected(err)) {
			if (first >= 0) {
				first = r;
				first_error = TAKE_PTR(err);
			}
			continue;
		}
		if (ret_error)
			*ret_error = TAKE_PTR(err);
		goto fail;
	}
	if (first < 0) {
		r = first;
		if (ret_error)
			*ret_error = TAKE_PTR(first_error);
		goto fail;
	}

	*ret = rules;
	*ret_n = n;
	return 0;

fail:
	hardware_rules_free(rules, n);
	return r;
}
