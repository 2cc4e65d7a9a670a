/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The settings table: per setting its ini section and key, default, parse
 * and format functions and man page, the way timesyncd's gperf file maps
 * Section.Key to a parser. Pure apart from allocation; depends on basic.
 */
#include <assert.h>
#include <ctype.h>

#include "setting.h"
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

static const char *const housekeeping_part_table[_HOUSEKEEPING_PART_MAX] = {
	[HOUSEKEEPING_IRQS] = "irqs",
	[HOUSEKEEPING_WORKQUEUES] = "workqueues",
	[HOUSEKEEPING_IRQBALANCE] = "irqbalance",
};
DEFINE_STRING_TABLE_LOOKUP(housekeeping_part, HousekeepingPart);

/* The kernel rejects relax levels above its number of domain levels; 15 is ample. */
#define RELAX_LEVEL_MAX 15

int setting_parse_name(const Setting *s, const char *text, SettingValue *ret, char **ret_error)
{
	for (size_t i = 0; i < s->n_names; i++)
		if (s->names[i] && streq(s->names[i], text)) {
			*ret = (SettingValue) { .mode = (int)i };
			return 0;
		}
	return error_message(ret_error, -EINVAL, "invalid value '%s' for %s: expected %s", text, s->key, s->expected);
}

int setting_format_name(const Setting *s, const SettingValue *v, char **ret)
{
	return strdup_to(ret, v->mode >= 0 && (size_t)v->mode < s->n_names ? strna(s->names[v->mode]) : "n/a");
}

/* "keep, off or on": the names a setting of one control takes. */
static int control_expected(const KernelControl *c, char **ret)
{
	size_t n = kernel_control_n_values(c);
	StrBuf b = {};

	strbuf_append(&b, "keep");
	for (size_t i = 0; i < n; i++)
		strbuf_appendf(&b, "%s%s", i + 1 == n ? " or " : ", ", c->values[i]);
	return strbuf_steal(&b, ret);
}

int setting_parse_control(const Setting *s, const char *text, SettingValue *ret, char **ret_error)
{
	const KernelControl *c = kernel_control_get(s->control);
	_cleanup_free_ char *expected = NULL;
	int r;

	assert(c);

	if (streq(text, "keep")) {
		*ret = (SettingValue) { .mode = SETTING_KEEP };
		return 0;
	}
	for (size_t i = 0; i < kernel_control_n_values(c); i++)
		if (streq(c->values[i], text)) {
			*ret = (SettingValue) { .mode = SETTING_VALUE_BASE + (int)i };
			return 0;
		}
	r = control_expected(c, &expected);
	if (r < 0)
		return r;
	return error_message(ret_error, -EINVAL, "invalid value '%s' for %s: expected %s", text, s->key, expected);
}

int setting_format_control(const Setting *s, const SettingValue *v, char **ret)
{
	const KernelControl *c = kernel_control_get(s->control);
	_cleanup_free_ char *t = NULL;
	int r;

	assert(c);

	if (v->mode < SETTING_VALUE_BASE || (size_t)(v->mode - SETTING_VALUE_BASE) >= kernel_control_n_values(c))
		return strdup_to(ret, v->mode == SETTING_KEEP ? "keep" : "n/a");
	r = kernel_control_format(c, v->mode - SETTING_VALUE_BASE, &t);
	if (r < 0)
		return r;
	free(*ret);
	*ret = TAKE_PTR(t);
	return 0;
}

static int parse_relax(const Setting *s, const char *text, SettingValue *ret, char **ret_error)
{
	int level = -1;
	RelaxMode m;

	if (streq(text, "auto") || streq(text, "keep"))
		m = relax_mode_from_string(text);
	else if (safe_atoi(text, &level) >= 0 && level >= -1 && level <= RELAX_LEVEL_MAX)
		m = RELAX_LEVEL;
	else
		return error_message(ret_error, -EINVAL, "invalid value '%s' for %s: expected -1..%d, auto or keep",
				     text, s->key, RELAX_LEVEL_MAX);
	*ret = (SettingValue) { .mode = m, .level = m == RELAX_LEVEL ? level : -1 };
	return 0;
}

static int format_relax(const Setting *s, const SettingValue *v, char **ret)
{
	char *t = v->mode == RELAX_LEVEL ? strprintf("%d", v->level) : strdup(strna(relax_mode_to_string(v->mode)));

	if (!t)
		return -ENOMEM;
	free(*ret);
	*ret = t;
	return 0;
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

static int parse_isolated_cpus(const Setting *s, const char *value, SettingValue *ret, char **ret_error)
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
			return r;
		if (r < 0)
			return error_message(ret_error, -EINVAL,
					     "invalid value '%s' for %s: expected auto:<n>-per-llc or auto:<n>-per-node with n >= 1",
					     value, s->key);
	} else if (isdigit((unsigned char)value[0])) {
		r = cpuset_parse_list(value, &set, &bad);
		if (r == -ERANGE)
			return error_message(ret_error, -EINVAL,
					     "invalid CPU list '%s' for %s: CPU number out of range (max %u) at '%s'",
					     value, s->key, CPUSET_MAX_CPUS - 1, strempty(bad));
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return error_message(ret_error, -EINVAL, "invalid CPU list '%s' for %s: bad text at '%s'",
					     value, s->key, strempty(bad));
		mode = ISOLATION_LIST;
	} else
		return error_message(ret_error, -EINVAL,
				     "invalid value '%s' for %s: expected none, keep, a CPU list, auto:<n>-per-llc or auto:<n>-per-node",
				     value, s->key);

	*ret = (SettingValue) { .mode = mode, .per_group = n, .cpus = set };
	return 0;
}

static int format_isolated_cpus(const Setting *s, const SettingValue *v, char **ret)
{
	char *t = NULL;
	int r;

	switch (v->mode) {
	case ISOLATION_LIST:
		r = cpuset_format_list(&v->cpus, &t);
		if (r < 0)
			return r;
		break;
	case ISOLATION_PER_LLC:
		t = strprintf("auto:%u-per-llc", v->per_group);
		break;
	case ISOLATION_PER_NODE:
		t = strprintf("auto:%u-per-node", v->per_group);
		break;
	default:
		t = strdup(strna(isolation_mode_to_string(v->mode)));
	}
	if (!t)
		return -ENOMEM;
	free(*ret);
	*ret = t;
	return 0;
}

/* "all", "none" or a comma list of parts ("irqs,irqbalance"), each once. */
static int parse_housekeeping(const Setting *s, const char *text, SettingValue *ret, char **ret_error)
{
	_cleanup_strv_free_ char **words = NULL;
	int mode = 0, r;

	if (streq(text, "all") || streq(text, "none")) {
		*ret = (SettingValue) { .mode = streq(text, "all") ? HOUSEKEEPING_ALL : 0 };
		return 0;
	}
	/* strv_split() drops empty words: "irqs," would pass for "irqs". */
	if (text[0] == ',' || strstr(text, ",,") || (*text && text[strlen(text) - 1] == ','))
		return error_message(ret_error, -EINVAL,
				     "invalid value '%s' for %s: unknown part ''; expected all, none or a comma list of "
				     "irqs, workqueues and irqbalance", text, s->key);
	r = strv_split(text, ",", &words);
	if (r < 0)
		return r;
	STRV_FOREACH(w, words) {
		HousekeepingPart p = housekeeping_part_from_string(strip(*w));

		if (p < 0 || (mode & (1 << p)))
			return error_message(ret_error, -EINVAL,
					     "invalid value '%s' for %s: %s '%s'; expected all, none or a comma list of "
					     "irqs, workqueues and irqbalance", text, s->key,
					     p < 0 ? "unknown part" : "repeated part", *w);
		mode |= 1 << p;
	}
	if (mode == 0)
		return error_message(ret_error, -EINVAL,
				     "invalid value '%s' for %s: expected all, none or a comma list of irqs, workqueues "
				     "and irqbalance", text, s->key);
	*ret = (SettingValue) { .mode = mode };
	return 0;
}

static int format_housekeeping(const Setting *s, const SettingValue *v, char **ret)
{
	StrBuf b = {};
	char *t = NULL;
	int r;

	if (v->mode == 0 || v->mode == HOUSEKEEPING_ALL)
		return strdup_to(ret, v->mode ? "all" : "none");
	for (HousekeepingPart p = 0; p < _HOUSEKEEPING_PART_MAX; p++)
		if (v->mode & (1 << p))
			strbuf_appendf(&b, "%s%s", b.len ? "," : "", housekeeping_part_to_string(p));
	r = strbuf_steal(&b, &t);
	if (r < 0)
		return r;
	free(*ret);
	*ret = t;
	return 0;
}

static const Setting setting_table[_SETTING_MAX] = {
	[SETTING_SMT_BUDDY_ASSIST] = {
		.section = "scheduler",
		.key = "smt_buddy_assist",
		.man = "topotune.profile(5)",
		.default_value = { .mode = SMT_BUDDY_KEEP },
		.parse = setting_parse_name,
		.format = setting_format_name,
		.names = smt_buddy_mode_table,
		.n_names = _SMT_BUDDY_MAX,
		.expected = "on, off or keep",
	},
	[SETTING_RELAX_DOMAIN_LEVEL] = {
		.section = "scheduler",
		.key = "relax_domain_level",
		.man = "topotune.profile(5)",
		.default_value = { .mode = RELAX_KEEP, .level = -1 },
		.parse = parse_relax,
		.format = format_relax,
	},
	[SETTING_ISOLATED_CPUS] = {
		.section = "isolation",
		.key = "isolated_cpus",
		.man = "topotune.profile(5)",
		.default_value = { .mode = ISOLATION_NONE },
		.parse = parse_isolated_cpus,
		.format = format_isolated_cpus,
	},
	[SETTING_HOUSEKEEPING_SMT] = {
		.section = "isolation",
		.key = "housekeeping_smt",
		.man = "topotune.profile(5)",
		.default_value = { .mode = HOUSEKEEPING_WHOLE_CORES },
		.parse = setting_parse_name,
		.format = setting_format_name,
		.names = housekeeping_smt_table,
		.n_names = _HOUSEKEEPING_MAX,
		.expected = "whole-cores or any",
	},
	[SETTING_NUMA_BALANCING] = {
		.section = "scheduler",
		.key = "numa_balancing",
		.man = "topotune.profile(5)",
		SETTING_OF_CONTROL(CONTROL_NUMA_BALANCING_SYSCTL),
	},
	[SETTING_HOUSEKEEPING] = {
		.section = "isolation",
		.key = "housekeeping",
		.man = "topotune.profile(5)",
		.default_value = { .mode = 0 },
		.parse = parse_housekeeping,
		.format = format_housekeeping,
		.expected = "all, none or a comma list of irqs, workqueues and irqbalance",
	},
	[SETTING_AUTOGROUP] = {
		.section = "scheduler",
		.key = "autogroup",
		.man = "topotune.profile(5)",
		SETTING_OF_CONTROL(CONTROL_AUTOGROUP_SYSCTL),
	},
};

const Setting *setting_get(SettingId id)
{
	if (id < 0 || id >= _SETTING_MAX)
		return NULL;
	return &setting_table[id];
}

const char *setting_id_to_string(SettingId id)
{
	const Setting *s = setting_get(id);

	return s ? s->key : NULL;
}

SettingId setting_id_from_string(const char *s)
{
	if (!s)
		return _SETTING_INVALID;
	SETTING_FOREACH(i)
		if (streq(setting_table[i].key, s))
			return i;
	return _SETTING_INVALID;
}

char *setting_names_text(void)
{
	StrBuf b = {};
	char *ret = NULL;

	SETTING_FOREACH(i)
		strbuf_appendf(&b, "%s%s", i == 0 ? "" : i + 1 == _SETTING_MAX ? " or " : ", ", setting_table[i].key);
	if (strbuf_steal(&b, &ret) < 0)
		return NULL;
	return ret;
}

void setting_value_done(SettingValue *v)
{
	cpuset_done(&v->cpus);
	*v = (SettingValue) {};
}

int setting_value_copy(const SettingValue *v, SettingValue *ret)
{
	SettingValue c = *v;
	int r;

	c.cpus = (CpuSet) {};
	r = cpuset_copy(&c.cpus, &v->cpus);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}

int setting_format(SettingId id, const SettingValue *v, char **ret)
{
	const Setting *s = setting_get(id);
	char *t = NULL;
	int r;

	if (!s)
		return -ENOENT;
	r = s->format(s, v, &t);
	if (r < 0)
		return r;
	*ret = t;
	return 0;
}
