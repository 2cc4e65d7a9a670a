/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Profiles, topotune.conf, hardware.d rules and the layering of their
 * settings, with every bad-input class and its exact error text. Fixture
 * trees live in tests/unit/profile-data/; error cases build small trees in a
 * temporary directory from tables. argv[1] is the source root.
 */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>

#include "fileio.h"
#include "profile.h"
#include "strutil.h"
#include "test.h"

static const char *srcdir = ".";

/* ---- helpers ------------------------------------------------------------ */

static int open_fixture(const char *name)
{
	_cleanup_free_ char *p = strprintf("%s/tests/unit/profile-data/%s", srcdir, name);
	int fd = -EBADF;

	if (!p || root_open(p, &fd) < 0) {
		fprintf(stderr, "cannot open fixture %s\n", strna(p));
		exit(EXIT_FAILURE);
	}
	return fd;
}

typedef struct TreeFile {
	const char *path;   /* ends in '/': a directory */
	const char *text;
} TreeFile;

#define TREE_MAX 20

static int mkdir_parents(const char *root, const char *rel)
{
	_cleanup_free_ char *p = strprintf("%s/%s", root, rel);

	if (!p)
		return -ENOMEM;
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

/* Build a tree below a fresh temporary directory; returns its path. */
static char *tree_make(const TreeFile *files)
{
	char tmpl[] = "/tmp/test-profile.XXXXXX";
	char *root = mkdtemp(tmpl);

	if (!root)
		return NULL;
	root = strdup(root);
	if (!root)
		return NULL;
	for (const TreeFile *f = files; f && f->path; f++) {
		_cleanup_free_ char *p = strprintf("%s/%s", root, f->path);
		FILE *out;

		if (!p || mkdir_parents(root, f->path) < 0)
			goto fail;
		if (p[strlen(p) - 1] == '/')
			continue;   /* directory: made by mkdir_parents */
		out = fopen(p, "we");
		if (!out)
			goto fail;
		fputs(f->text, out);
		if (fclose(out) != 0)
			goto fail;
	}
	return root;
fail:
	fprintf(stderr, "cannot build test tree in %s\n", root);
	exit(EXIT_FAILURE);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static void tree_remove(char *root)
{
	if (!root)
		return;
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
}

static int tree_open(const char *root)
{
	int fd = -EBADF;

	if (!root || root_open(root, &fd) < 0) {
		fprintf(stderr, "cannot open tree %s\n", strna(root));
		exit(EXIT_FAILURE);
	}
	return fd;
}

/* "key = value (origin)" for every setting, one per line. */
static char *settings_dump(const ProfileSettings *s)
{
	static const char *const keys[] = {
		"smt_buddy_assist", "relax_domain_level", "isolated_cpus", "housekeeping_smt",
	};
	StrBuf b = {};
	char *ret = NULL;

	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		_cleanup_free_ char *v = NULL, *o = NULL;

		if (profile_settings_format_value(s, keys[i], &v) < 0)
			return NULL;
		o = origin_to_string(profile_settings_origin(s, keys[i]));
		strbuf_appendf(&b, "%s = %s (%s)\n", keys[i], v, strna(o));
	}
	if (strbuf_steal(&b, &ret) < 0)
		return NULL;
	return ret;
}

static void strv_dump(StrBuf *b, const char *key, char **l)
{
	if (!l)
		return;
	strbuf_appendf(b, "%s =", key);
	STRV_FOREACH(s, l)
		strbuf_appendf(b, " %s", *s);
	strbuf_append(b, "\n");
}

static char *profile_dump(const Profile *p)
{
	_cleanup_free_ char *settings = settings_dump(&p->settings);
	_cleanup_free_ char *wo = origin_to_string(&p->workload_origin);
	StrBuf b = {};
	char *ret = NULL;

	strbuf_appendf(&b, "profile %s from %s: %s\nchain =", p->name, p->path,
		       strna(p->description));
	STRV_FOREACH(c, p->chain)
		strbuf_appendf(&b, " %s", *c);
	strbuf_appendf(&b, "\n%s", strna(settings));
	strv_dump(&b, "exe", p->workload_exe);
	strv_dump(&b, "comm", p->workload_comm);
	strv_dump(&b, "cgroup", p->workload_cgroup);
	if (p->workload_origin.file)
		strbuf_appendf(&b, "workload from %s\n", strna(wo));
	if (strbuf_steal(&b, &ret) < 0)
		return NULL;
	return ret;
}

/* ---- string tables ------------------------------------------------------ */

static void test_string_tables(void)
{
	check_str(smt_buddy_mode_to_string(SMT_BUDDY_ON), "on");
	check_int(smt_buddy_mode_from_string("keep"), SMT_BUDDY_KEEP);
	check_int(smt_buddy_mode_from_string("yes"), -EINVAL);
	check(!smt_buddy_mode_to_string(_SMT_BUDDY_MAX));
	check_str(relax_mode_to_string(RELAX_AUTO), "auto");
	check_int(relax_mode_from_string("level"), RELAX_LEVEL);
	check_str(isolation_mode_to_string(ISOLATION_PER_NODE), "per-node");
	check_int(isolation_mode_from_string("none"), ISOLATION_NONE);
	check_str(housekeeping_smt_to_string(HOUSEKEEPING_WHOLE_CORES), "whole-cores");
	check_int(housekeeping_smt_from_string("any"), HOUSEKEEPING_ANY);
	check_int(housekeeping_smt_from_string(NULL), -EINVAL);
	check_str(rollback_mode_to_string(ROLLBACK_NOT_ON_EXIT), "not-on-exit");
	check_int(rollback_mode_from_string("on-exit"), ROLLBACK_ON_EXIT);
	check_int(rollback_mode_from_string("never"), -EINVAL);
}

static void test_origin(void)
{
	_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;
	Origin o = {}, copy = {};

	a = origin_to_string(&o);
	check_str(a, "built-in default");
	check_int(origin_copy(&o, &(Origin) { (char *)"/etc/topotune/topotune.conf", 3 }), 0);
	b = origin_to_string(&o);
	check_str(b, "/etc/topotune/topotune.conf:3");
	check_int(origin_copy(&copy, &o), 0);
	origin_done(&o);
	c = origin_to_string(&copy);
	check_str(c, "/etc/topotune/topotune.conf:3");
	check(!o.file);
	origin_done(&copy);
}

static const struct {
	const char *name;
	bool valid;
} name_cases[] = {
	{ "balanced", true },
	{ "hpc-2.node_local", true },
	{ "A9", true },
	{ "", false },
	{ ".hidden", false },
	{ "../x", false },
	{ "a/b", false },
	{ "a b", false },
	{ "caf\xc3\xa9", false },
};

static void test_profile_names(void)
{
	char longest[PROFILE_NAME_MAX + 2];

	for (size_t i = 0; i < ELEMENTSOF(name_cases); i++)
		check_ctx(name_cases[i].name, profile_name_is_valid(name_cases[i].name) == name_cases[i].valid);
	check(!profile_name_is_valid(NULL));

	/* NAME.ini fits a directory entry, one character more does not (ENAMETOOLONG, not "no such profile"). */
	memset(longest, 'l', sizeof(longest) - 1);
	longest[PROFILE_NAME_MAX] = '\0';
	check(profile_name_is_valid(longest));
	longest[PROFILE_NAME_MAX] = 'l';
	longest[PROFILE_NAME_MAX + 1] = '\0';
	check(!profile_name_is_valid(longest));
}

/* ---- one profile file: good ---------------------------------------------- */

static const struct {
	const char *name;
	const char *text;
	const char *want;
} parse_good[] = {
	{
		"everything, with both comment styles",
		"# leading comment\n"
		"; another\n"
		"[profile]\n"
		"description = Tuned for C#-heavy services   # '#' inside a word stays\n"
		"include = base\n"
		"\n"
		"[scheduler]\n"
		"smt_buddy_assist = on           # on | off | keep\n"
		"relax_domain_level = auto       ; from topology\n"
		"[isolation]\n"
		"isolated_cpus = 0-3,8\n"
		"housekeeping_smt = any\n"
		"[workload]\n"
		"exe = /usr/sbin/mysqld   /usr/bin/clickhouse-server\n"
		"comm = mysqld clickhouse-serv\n"
		"cgroup = /system.slice/db.service\n",
		"profile t from /t.ini: Tuned for C#-heavy services\n"
		"chain = t\n"
		"smt_buddy_assist = on (/t.ini:8)\n"
		"relax_domain_level = auto (/t.ini:9)\n"
		"isolated_cpus = 0-3,8 (/t.ini:11)\n"
		"housekeeping_smt = any (/t.ini:12)\n"
		"exe = /usr/sbin/mysqld /usr/bin/clickhouse-server\n"
		"comm = mysqld clickhouse-serv\n"
		"cgroup = /system.slice/db.service\n"
		"workload from /t.ini:14\n",
	},
	{
		"empty file: built-in defaults",
		"",
		"profile t from /t.ini: n/a\n"
		"chain = t\n"
		"smt_buddy_assist = keep (built-in default)\n"
		"relax_domain_level = keep (built-in default)\n"
		"isolated_cpus = none (built-in default)\n"
		"housekeeping_smt = whole-cores (built-in default)\n",
	},
	{
		"byte order mark, CRLF, indented keys are not continuations",
		"\xEF\xBB\xBF[scheduler]\r\n"
		"  relax_domain_level = -1\r\n"
		"\tsmt_buddy_assist = keep\r\n"
		"[isolation]\r\n"
		"isolated_cpus = auto:2-per-node\r\n",
		"profile t from /t.ini: n/a\n"
		"chain = t\n"
		"smt_buddy_assist = keep (/t.ini:3)\n"
		"relax_domain_level = -1 (/t.ini:2)\n"
		"isolated_cpus = auto:2-per-node (/t.ini:5)\n"
		"housekeeping_smt = whole-cores (built-in default)\n",
	},
	{
		"highest relax level, per-LLC isolation, section repeated",
		"[scheduler]\n"
		"relax_domain_level = 15\n"
		"[isolation]\n"
		"isolated_cpus = auto:1-per-llc\n"
		"[scheduler]\n"
		"smt_buddy_assist = off\n",
		"profile t from /t.ini: n/a\n"
		"chain = t\n"
		"smt_buddy_assist = off (/t.ini:6)\n"
		"relax_domain_level = 15 (/t.ini:2)\n"
		"isolated_cpus = auto:1-per-llc (/t.ini:4)\n"
		"housekeeping_smt = whole-cores (built-in default)\n",
	},
	{
		"keep and none spelled out",
		"[scheduler]\n"
		"relax_domain_level = keep\n"
		"[isolation]\n"
		"isolated_cpus = keep\n",
		"profile t from /t.ini: n/a\n"
		"chain = t\n"
		"smt_buddy_assist = keep (built-in default)\n"
		"relax_domain_level = keep (/t.ini:2)\n"
		"isolated_cpus = keep (/t.ini:4)\n"
		"housekeeping_smt = whole-cores (built-in default)\n",
	},
};

static void test_parse_good(void)
{
	for (size_t i = 0; i < ELEMENTSOF(parse_good); i++) {
		_cleanup_(profile_freep) Profile *p = NULL;
		_cleanup_free_ char *err = NULL, *dump = NULL;
		int r;

		r = profile_parse_string(parse_good[i].text, "/t.ini", &p, &err);
		check_ctx(parse_good[i].name, r == 0);
		if (r < 0) {
			fprintf(stderr, "  error: %s\n", strna(err));
			continue;
		}
		dump = profile_dump(p);
		check_str(dump, parse_good[i].want);
	}
}

/* ---- one profile file: every bad-input class ------------------------------ */

#define T "/usr/lib/topotune/profiles/t.ini"
#define LONG50 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct {
	const char *text;
	const char *want;
} parse_bad[] = {
	{ "[sched]\n",
	  T ":1: unknown section [sched]" },
	{ "[profile]\ndescription = x\n\n[Scheduler]\n",
	  T ":4: unknown section [Scheduler]" },
	{ "[scheduler]\nsmt_buddy = on\n",
	  T ":2: unknown key 'smt_buddy' in [scheduler]" },
	{ "[isolation]\nsmt_buddy_assist = on\n",
	  T ":2: unknown key 'smt_buddy_assist' in [isolation]" },
	{ "[profile]\nname = x\n",
	  T ":2: unknown key 'name' in [profile]" },
	{ "[workload]\npid = 1\n",
	  T ":2: unknown key 'pid' in [workload]" },
	{ "smt_buddy_assist = on\n",
	  T ":1: key 'smt_buddy_assist' outside of any section" },
	{ "[scheduler]\nsmt_buddy_assist = maybe\n",
	  T ":2: invalid value 'maybe' for smt_buddy_assist: expected on, off or keep" },
	{ "[scheduler]\nsmt_buddy_assist = ON\n",
	  T ":2: invalid value 'ON' for smt_buddy_assist: expected on, off or keep" },
	{ "[scheduler]\nrelax_domain_level = 16\n",
	  T ":2: invalid value '16' for relax_domain_level: expected -1..15, auto or keep" },
	{ "[scheduler]\nrelax_domain_level = -2\n",
	  T ":2: invalid value '-2' for relax_domain_level: expected -1..15, auto or keep" },
	{ "[scheduler]\nrelax_domain_level = 2 levels\n",
	  T ":2: invalid value '2 levels' for relax_domain_level: expected -1..15, auto or keep" },
	{ "[isolation]\nhousekeeping_smt = cores\n",
	  T ":2: invalid value 'cores' for housekeeping_smt: expected whole-cores or any" },
	{ "[scheduler]\nnuma_balancing = 2\n",
	  T ":2: invalid value '2' for numa_balancing: expected keep, off, on, memory-tiering or on+memory-tiering" },
	{ "[isolation]\nnuma_balancing = on\n",
	  T ":2: unknown key 'numa_balancing' in [isolation]" },
	{ "[isolation]\nhousekeeping = irqs,timers\n",
	  T ":2: invalid value 'irqs,timers' for housekeeping: unknown part 'timers'; expected all, none or a comma "
	    "list of irqs, workqueues and irqbalance" },
	{ "[isolation]\nhousekeeping = irqs,irqs\n",
	  T ":2: invalid value 'irqs,irqs' for housekeeping: repeated part 'irqs'; expected all, none or a comma "
	    "list of irqs, workqueues and irqbalance" },
	{ "[isolation]\nhousekeeping = irqs,\n",
	  T ":2: invalid value 'irqs,' for housekeeping: unknown part ''; expected all, none or a comma "
	    "list of irqs, workqueues and irqbalance" },
	{ "[scheduler]\nhousekeeping = all\n",
	  T ":2: unknown key 'housekeeping' in [scheduler]" },
	{ "[isolation]\nisolated_cpus = 3-1\n",
	  T ":2: invalid CPU list '3-1' for isolated_cpus: bad text at '3-1'" },
	{ "[isolation]\nisolated_cpus = 1,,2\n",
	  T ":2: invalid CPU list '1,,2' for isolated_cpus: bad text at ',2'" },
	{ "[isolation]\nisolated_cpus = 0-99999\n",
	  T ":2: invalid CPU list '0-99999' for isolated_cpus: CPU number out of range (max 8191) at '0-99999'" },
	{ "[isolation]\nisolated_cpus = 0-3 junk\n",
	  T ":2: invalid CPU list '0-3 junk' for isolated_cpus: bad text at 'junk'" },
	{ "[isolation]\nisolated_cpus = 0-3#4\n",
	  T ":2: invalid CPU list '0-3#4' for isolated_cpus: bad text at '#4'" },
	{ "[isolation]\nisolated_cpus = all\n",
	  T ":2: invalid value 'all' for isolated_cpus: expected none, keep, a CPU list, auto:<n>-per-llc or auto:<n>-per-node" },
	{ "[isolation]\nisolated_cpus = auto:0-per-llc\n",
	  T ":2: invalid value 'auto:0-per-llc' for isolated_cpus: expected auto:<n>-per-llc or auto:<n>-per-node with n >= 1" },
	{ "[isolation]\nisolated_cpus = auto:2-per-socket\n",
	  T ":2: invalid value 'auto:2-per-socket' for isolated_cpus: expected auto:<n>-per-llc or auto:<n>-per-node with n >= 1" },
	{ "[isolation]\nisolated_cpus = auto:-per-node\n",
	  T ":2: invalid value 'auto:-per-node' for isolated_cpus: expected auto:<n>-per-llc or auto:<n>-per-node with n >= 1" },
	{ "[scheduler]\nsmt_buddy_assist = on\n\nsmt_buddy_assist = off\n",
	  T ":4: duplicate key 'smt_buddy_assist' (first set at line 2)" },
	{ "[scheduler]\nrelax_domain_level = 1\n[isolation]\n[scheduler]\nrelax_domain_level = 1\n",
	  T ":5: duplicate key 'relax_domain_level' (first set at line 2)" },
	{ "[profile]\ndescription =\n",
	  T ":2: empty value for 'description'" },
	{ "[profile]\ndescription = # only a comment\n",
	  T ":2: empty value for 'description'" },
	{ "[scheduler]\n= on\n",
	  T ":2: missing key name before '='" },
	{ "[scheduler]\nsmt_buddy_assist on\n",
	  T ":2: expected '[section]' or 'key = value', got 'smt_buddy_assist on'" },
	{ "[scheduler\n",
	  T ":1: unterminated section header '[scheduler'" },
	{ "[scheduler] smt_buddy_assist = on\n",
	  T ":1: unexpected text after section header: ' smt_buddy_assist = on'" },
	{ "[profile]\ninclude = ../x\n",
	  T ":2: invalid profile name '../x' for include: expected letters, digits, '_', '.' or '-', not starting with '.'" },
	{ "[workload]\nexe = /usr/bin/a mysqld\n",
	  T ":2: invalid value '/usr/bin/a mysqld' for exe: 'mysqld' is not an absolute path" },
	{ "[workload]\ncgroup = system.slice\n",
	  T ":2: invalid value 'system.slice' for cgroup: 'system.slice' is not an absolute path" },
	{ "[workload]\ncomm = clickhouse-server\n",
	  T ":2: invalid value 'clickhouse-server' for comm: 'clickhouse-server' is longer than 15 characters" },
	{ "[profile]\ndescription = " LONG50 LONG50 LONG50 LONG50 "\n",
	  T ":2: line too long (more than 198 characters after removing comments)" },
	/* The first error wins, also when inih would report a later one. */
	{ "[sched]\n[scheduler]\nsmt_buddy_assist = maybe\n",
	  T ":1: unknown section [sched]" },
};

static void test_parse_bad(void)
{
	for (size_t i = 0; i < ELEMENTSOF(parse_bad); i++) {
		_cleanup_(profile_freep) Profile *p = NULL;
		_cleanup_free_ char *err = NULL;
		int r;

		r = profile_parse_string(parse_bad[i].text, T, &p, &err);
		check_ctx(parse_bad[i].want, r == -EINVAL);
		check_ctx(parse_bad[i].want, !p);
		check_str(err, parse_bad[i].want);
	}
}

static void test_long_comment_is_fine(void)
{
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_free_ char *err = NULL;

	/* Comments are dropped before inih's 200 byte line limit applies. */
	check_int(profile_parse_string("# " LONG50 LONG50 LONG50 LONG50 "\n"
				       "[scheduler]\nsmt_buddy_assist = on   # " LONG50 LONG50 LONG50 LONG50 "\n",
				       "/t.ini", &p, &err), 0);
	check(p && p->settings.value[SETTING_SMT_BUDDY_ASSIST].mode == SMT_BUDDY_ON);
}

static void test_numa_balancing(void)
{
	static const char *const values[] = { "keep", "off", "on", "memory-tiering", "on+memory-tiering" };

	for (size_t i = 0; i < ELEMENTSOF(values); i++) {
		_cleanup_(profile_freep) Profile *p = NULL;
		_cleanup_free_ char *err = NULL, *text = NULL, *v = NULL, *o = NULL;

		text = strprintf("[profile]\ndescription = t\n[scheduler]\nnuma_balancing = %s\n", values[i]);
		check_int(profile_parse_string(text, "/t.ini", &p, &err), 0);
		if (!p)
			continue;
		check_int(p->settings.value[SETTING_NUMA_BALANCING].mode, (int)i);
		check_int(profile_settings_format_value(&p->settings, "numa_balancing", &v), 0);
		check_str(v, values[i]);
		o = origin_to_string(profile_settings_origin(&p->settings, "numa_balancing"));
		check_str(o, "/t.ini:4");
	}
}

/*
 * Every setting of one control (SETTING_OF_CONTROL()): the control serves
 * it alone, names its values and what a kernel without it lacks (the
 * planner's generic step says it), and each name parses and formats back.
 */
static void test_control_settings(void)
{
	SETTING_FOREACH(i) {
		const Setting *s = setting_get(i);
		const KernelControl *c;
		size_t serving = 0;

		if (!s->of_control)
			continue;
		c = kernel_control_get(s->control);
		check_ctx(s->key, c && c->setting == i);
		if (!c)
			continue;
		check_ctx(s->key, kernel_control_n_values(c) >= 2 && c->feature);
		check_ctx(s->key, c->kind == CONTROL_VALUE || c->kind == CONTROL_FEATURE);
		check_ctx(s->key, s->default_value.mode == SETTING_KEEP);
		CONTROL_FOREACH(j)
			serving += kernel_control_get(j)->setting == i;
		check_ctx(s->key, serving == 1);
		for (size_t v = 0; v <= kernel_control_n_values(c); v++) {
			const char *name = v == 0 ? "keep" : c->values[v - 1];
			_cleanup_free_ char *err = NULL, *back = NULL;
			SettingValue sv = {};

			check_ctx(name, s->parse(s, name, &sv, &err) == 0);
			check_ctx(name, sv.mode == (v == 0 ? SETTING_KEEP : SETTING_VALUE_BASE + (int)v - 1));
			check_ctx(name, setting_format(i, &sv, &back) == 0);
			check_str(back, name);
		}
	}
}

/* housekeeping: all, none or parts in any order; formatted in the table's order, "all" when complete. */
static void test_housekeeping(void)
{
	static const struct {
		const char *text;
		int mode;
		const char *formatted;
	} values[] = {
		{ "none", 0, "none" },
		{ "all", HOUSEKEEPING_ALL, "all" },
		{ "irqs", 1 << HOUSEKEEPING_IRQS, "irqs" },
		{ "irqbalance,irqs", (1 << HOUSEKEEPING_IRQS) | (1 << HOUSEKEEPING_IRQBALANCE), "irqs,irqbalance" },
		{ "workqueues, irqs", (1 << HOUSEKEEPING_IRQS) | (1 << HOUSEKEEPING_WORKQUEUES), "irqs,workqueues" },
		{ "irqs,workqueues,irqbalance", HOUSEKEEPING_ALL, "all" },
	};

	for (size_t i = 0; i < ELEMENTSOF(values); i++) {
		_cleanup_(profile_freep) Profile *p = NULL;
		_cleanup_free_ char *err = NULL, *text = NULL, *v = NULL, *o = NULL;

		text = strprintf("[profile]\ndescription = t\n[isolation]\nhousekeeping = %s\n", values[i].text);
		check_int(profile_parse_string(text, "/t.ini", &p, &err), 0);
		if (!p)
			continue;
		check_int(p->settings.value[SETTING_HOUSEKEEPING].mode, values[i].mode);
		check_int(profile_settings_format_value(&p->settings, "housekeeping", &v), 0);
		check_str(v, values[i].formatted);
		o = origin_to_string(profile_settings_origin(&p->settings, "housekeeping"));
		check_str(o, "/t.ini:4");
	}
}

/* ---- profile_load on fixture trees --------------------------------------- */

#define USR "/usr/lib/topotune/profiles/"
#define ETC "/etc/topotune/profiles/"

static const struct {
	const char *name;
	const char *want;
} load_good[] = {
	{ "throughput",
	  "profile throughput from " USR "throughput.ini: Throughput over base\n"
	  "chain = base throughput\n"
	  "smt_buddy_assist = on (" USR "throughput.ini:6)\n"
	  "relax_domain_level = auto (" USR "throughput.ini:7)\n"
	  "isolated_cpus = none (built-in default)\n"
	  "housekeeping_smt = any (" USR "base.ini:10)\n"
	  "exe = /usr/sbin/mysqld /usr/bin/clickhouse-server\n"
	  "comm = clickhouse\n"
	  "workload from " USR "throughput.ini:10\n" },
	/* Admin profile over a vendor chain: inherits the nearest description,
	 * not the workload rules. */
	{ "local",
	  "profile local from " ETC "local.ini: Throughput over base\n"
	  "chain = base throughput local\n"
	  "smt_buddy_assist = on (" USR "throughput.ini:6)\n"
	  "relax_domain_level = auto (" USR "throughput.ini:7)\n"
	  "isolated_cpus = 2-3,6-7 (" ETC "local.ini:6)\n"
	  "housekeeping_smt = any (" USR "base.ini:10)\n" },
	{ "shadowed",
	  "profile shadowed from " ETC "shadowed.ini: admin copy\n"
	  "chain = shadowed\n"
	  "smt_buddy_assist = keep (built-in default)\n"
	  "relax_domain_level = keep (built-in default)\n"
	  "isolated_cpus = none (built-in default)\n"
	  "housekeeping_smt = whole-cores (built-in default)\n" },
	/* /etc/.../vendorx.ini says include = vendorx: the vendor file. */
	{ "vendorx",
	  "profile vendorx from " ETC "vendorx.ini: Vendor profile extended by the admin\n"
	  "chain = vendorx vendorx\n"
	  "smt_buddy_assist = on (" USR "vendorx.ini:5)\n"
	  "relax_domain_level = 2 (" ETC "vendorx.ini:6)\n"
	  "isolated_cpus = none (built-in default)\n"
	  "housekeeping_smt = whole-cores (built-in default)\n" },
};

static void test_load_good(void)
{
	_cleanup_close_ int fd = open_fixture("layers");

	for (size_t i = 0; i < ELEMENTSOF(load_good); i++) {
		_cleanup_(profile_freep) Profile *p = NULL;
		_cleanup_free_ char *err = NULL, *dump = NULL;
		int r;

		r = profile_load(fd, load_good[i].name, &p, &err);
		check_ctx(load_good[i].name, r == 0);
		if (r < 0) {
			fprintf(stderr, "  error: %s\n", strna(err));
			continue;
		}
		dump = profile_dump(p);
		check_str(dump, load_good[i].want);
	}
}

#define NOT_FOUND "not found in /etc/topotune/profiles or /usr/lib/topotune/profiles"
#define BAD_NAME "expected letters, digits, '_', '.' or '-', not starting with '.'"

static const struct {
	const char *name;
	int error;
	const char *want;
} load_bad[] = {
	{ "cycle-a", -ELOOP, USR "cycle-b.ini:2: include cycle cycle-a -> cycle-b -> cycle-a" },
	{ "self", -ELOOP, USR "self.ini:2: include cycle self -> self" },
	{ "missing-include", -ENOLINK,
	  USR "missing-include.ini:3: included profile 'nonexistent' " NOT_FOUND },
	{ "bad-inner", -EINVAL,
	  USR "has-error.ini:2: invalid value 'maybe' for smt_buddy_assist: expected on, off or keep" },
	{ "isdir", -EISDIR, USR "isdir.ini: Is a directory" },
	{ "nonexistent", -ENOENT, "profile 'nonexistent' " NOT_FOUND },
	{ "../x", -EINVAL, "invalid profile name '../x': " BAD_NAME },
	{ "../../etc/passwd", -EINVAL, "invalid profile name '../../etc/passwd': " BAD_NAME },
	{ ".hidden", -EINVAL, "invalid profile name '.hidden': " BAD_NAME },
	{ "", -EINVAL, "invalid profile name '': " BAD_NAME },
};

static void test_load_bad(void)
{
	_cleanup_close_ int fd = open_fixture("broken");

	for (size_t i = 0; i < ELEMENTSOF(load_bad); i++) {
		Profile *p = NULL;
		_cleanup_free_ char *err = NULL;
		int r;

		r = profile_load(fd, load_bad[i].name, &p, &err);
		check_ctx(load_bad[i].name, r == load_bad[i].error);
		check_ctx(load_bad[i].name, !p);
		check_str(err, load_bad[i].want);
		profile_free(p);
	}
}

static void test_include_depth(void)
{
	TreeFile files[18] = {};
	char paths[17][64], texts[17][64];
	_cleanup_free_ char *err = NULL, *err2 = NULL;
	_cleanup_(profile_freep) Profile *p = NULL;
	Profile *q = NULL;
	char *root;
	int fd;

	/* d0 -> d1 -> ... -> d16: 17 profiles, one more than allowed. */
	for (int i = 0; i <= 16; i++) {
		snprintf(paths[i], sizeof(paths[i]), "usr/lib/topotune/profiles/d%d.ini", i);
		if (i < 16)
			snprintf(texts[i], sizeof(texts[i]), "[profile]\ninclude = d%d\n", i + 1);
		else
			snprintf(texts[i], sizeof(texts[i]), "[scheduler]\nsmt_buddy_assist = on\n");
		files[i] = (TreeFile) { paths[i], texts[i] };
	}
	root = tree_make(files);
	fd = tree_open(root);

	check_int(profile_load(fd, "d1", &p, &err), 0);
	check_int(p ? (long long)strv_length(p->chain) : -1, 16);
	check_int(profile_load(fd, "d0", &q, &err2), -ELOOP);
	check_str(err2, USR "d15.ini:2: include chain longer than 16 profiles: "
		  "d0 -> d1 -> d2 -> d3 -> d4 -> d5 -> d6 -> d7 -> d8 -> d9 -> d10 -> d11 -> "
		  "d12 -> d13 -> d14 -> d15 -> d16");
	check(!q);

	safe_close(fd);
	tree_remove(root);
}

static char *info_dump(const ProfileInfo *infos, size_t n)
{
	StrBuf b = {};
	char *ret = NULL;

	for (size_t i = 0; i < n; i++)
		strbuf_appendf(&b, "%s | %s | %s\n", infos[i].name, infos[i].description, infos[i].path);
	if (strbuf_steal(&b, &ret) < 0)
		return NULL;
	return ret;
}

static void test_list(void)
{
	static const struct {
		const char *fixture;
		const char *want;
	} cases[] = {
		{ "layers",
		  "base | Base of the chain | " USR "base.ini\n"
		  "local | Throughput over base | " ETC "local.ini\n"
		  "shadowed | admin copy | " ETC "shadowed.ini\n"
		  "throughput | Throughput over base | " USR "throughput.ini\n"
		  "vendorx | Vendor profile extended by the admin | " ETC "vendorx.ini\n" },
		/* Broken profiles are listed, not hidden, and fail nothing else. */
		{ "broken",
		  "bad-inner | invalid: " USR "has-error.ini:2: invalid value 'maybe' for smt_buddy_assist: expected on, off or keep | " USR "bad-inner.ini\n"
		  "cycle-a | invalid: " USR "cycle-b.ini:2: include cycle cycle-a -> cycle-b -> cycle-a | " USR "cycle-a.ini\n"
		  "cycle-b | invalid: " USR "cycle-a.ini:2: include cycle cycle-b -> cycle-a -> cycle-b | " USR "cycle-b.ini\n"
		  "good | Fine | " USR "good.ini\n"
		  "has-error | invalid: " USR "has-error.ini:2: invalid value 'maybe' for smt_buddy_assist: expected on, off or keep | " USR "has-error.ini\n"
		  "isdir | invalid: " USR "isdir.ini: Is a directory | " USR "isdir.ini\n"
		  "missing-include | invalid: " USR "missing-include.ini:3: included profile 'nonexistent' " NOT_FOUND " | " USR "missing-include.ini\n"
		  "self | invalid: " USR "self.ini:2: include cycle self -> self | " USR "self.ini\n" },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_close_ int fd = open_fixture(cases[i].fixture);
		_cleanup_free_ char *err = NULL, *dump = NULL;
		ProfileInfo *infos = NULL;
		size_t n = 0;

		check_ctx(cases[i].fixture, profile_list(fd, &infos, &n, &err) == 0);
		dump = info_dump(infos, n);
		check_str(dump, cases[i].want);
		profile_info_array_free(infos, n);
	}
}

/* ---- topotune.conf -------------------------------------------------------- */

static char *config_dump(const Config *c)
{
	_cleanup_free_ char *o = origin_to_string(&c->profile_origin);
	_cleanup_free_ char *s = settings_dump(&c->overrides);
	StrBuf b = {};
	char *ret = NULL;

	strbuf_appendf(&b, "profile = %s (%s)\nrollback = %s\nmanage_bootloader = %s\n"
		       "verify_interval = %u\n%sfiles:",
		       c->profile, strna(o), rollback_mode_to_string(c->rollback),
		       c->manage_bootloader ? "yes" : "no", c->verify_interval_sec, strna(s));
	STRV_FOREACH(f, c->files)
		strbuf_appendf(&b, " %s", *f);
	strbuf_append(&b, "\n");
	if (strbuf_steal(&b, &ret) < 0)
		return NULL;
	return ret;
}

#define CONF "/etc/topotune/topotune.conf"
#define DROPIN "/etc/topotune/topotune.conf.d/"

static void test_config_good(void)
{
	_cleanup_close_ int fd = open_fixture("layers");
	_cleanup_(config_freep) Config *c = NULL, *d = NULL;
	_cleanup_free_ char *err = NULL, *dump = NULL, *dump2 = NULL;
	char *root;
	int efd;

	check_int(config_load(fd, &c, &err), 0);
	dump = c ? config_dump(c) : NULL;
	check_str(dump,
		  "profile = throughput (" CONF ":2)\n"
		  "rollback = not-on-exit\n"
		  "manage_bootloader = yes\n"
		  "verify_interval = 30\n"
		  "smt_buddy_assist = keep (built-in default)\n"
		  "relax_domain_level = 0 (" DROPIN "50-x.conf:3)\n"
		  "isolated_cpus = auto:1-per-llc (" DROPIN "50-x.conf:6)\n"
		  "housekeeping_smt = any (" CONF ":7)\n"
		  "files: " CONF " " DROPIN "10-a.conf " DROPIN "50-x.conf\n");

	/* No files at all: every default, nothing read. */
	root = tree_make(NULL);
	efd = tree_open(root);
	check_int(config_load(efd, &d, &err), 0);
	dump2 = d ? config_dump(d) : NULL;
	check_str(dump2,
		  "profile = balanced (built-in default)\n"
		  "rollback = on-exit\n"
		  "manage_bootloader = no\n"
		  "verify_interval = 60\n"
		  "smt_buddy_assist = keep (built-in default)\n"
		  "relax_domain_level = keep (built-in default)\n"
		  "isolated_cpus = none (built-in default)\n"
		  "housekeeping_smt = whole-cores (built-in default)\n"
		  "files:\n");
	safe_close(efd);
	tree_remove(root);
}

static const struct {
	TreeFile files[3];
	int error;
	const char *want;
} config_bad[] = {
	{ { { "etc/topotune/topotune.conf", "[daemon]\nprofile = hpc\n" },
	    { "etc/topotune/topotune.conf.d/20-bad.conf", "[deamon]\n" } },
	  -EINVAL, DROPIN "20-bad.conf:1: unknown section [deamon]" },
	{ { { "etc/topotune/topotune.conf", "[workload]\nexe = /bin/true\n" } },
	  -EINVAL, CONF ":1: unknown section [workload]" },
	{ { { "etc/topotune/topotune.conf", "[daemon]\nprofil = hpc\n" } },
	  -EINVAL, CONF ":2: unknown key 'profil' in [daemon]" },
	{ { { "etc/topotune/topotune.conf", "[daemon]\nrollback = sometimes\n" } },
	  -EINVAL, CONF ":2: invalid value 'sometimes' for rollback: expected on-exit or not-on-exit" },
	{ { { "etc/topotune/topotune.conf", "[daemon]\nmanage_bootloader = true\n" } },
	  -EINVAL, CONF ":2: invalid value 'true' for manage_bootloader: expected yes or no" },
	{ { { "etc/topotune/topotune.conf", "[daemon]\nverify_interval = 1m\n" } },
	  -EINVAL, CONF ":2: invalid value '1m' for verify_interval: expected seconds (0 = off)" },
	{ { { "etc/topotune/topotune.conf", "[daemon]\nverify_interval = -1\n" } },
	  -EINVAL, CONF ":2: invalid value '-1' for verify_interval: expected seconds (0 = off)" },
	{ { { "etc/topotune/topotune.conf", "[daemon]\nprofile = ../../tmp/x\n" } },
	  -EINVAL, CONF ":2: invalid profile name '../../tmp/x' for profile: " BAD_NAME },
	{ { { "etc/topotune/topotune.conf",
	      "[daemon]\nprofile = a\n[scheduler]\nsmt_buddy_assist = on\n[daemon]\nprofile = b\n" } },
	  -EINVAL, CONF ":6: duplicate key 'profile' (first set at line 2)" },
	{ { { "etc/topotune/topotune.conf/", NULL } },
	  -EISDIR, CONF ": Is a directory" },
	{ { { "etc/topotune/topotune.conf.d/10-dir.conf/", NULL } },
	  -EISDIR, DROPIN "10-dir.conf: Is a directory" },
	{ { { "etc/topotune/topotune.conf", "[isolation]\nisolated_cpus = 1,,2\n" },
	    { "etc/topotune/topotune.conf.d/90-x.conf", "[isolation]\nisolated_cpus = 1\n" } },
	  -EINVAL, CONF ":2: invalid CPU list '1,,2' for isolated_cpus: bad text at ',2'" },
};

static void test_config_bad(void)
{
	for (size_t i = 0; i < ELEMENTSOF(config_bad); i++) {
		char *root = tree_make(config_bad[i].files);
		int fd = tree_open(root);
		_cleanup_free_ char *err = NULL;
		Config *c = NULL;

		check_ctx(config_bad[i].want, config_load(fd, &c, &err) == config_bad[i].error);
		check_ctx(config_bad[i].want, !c);
		check_str(err, config_bad[i].want);
		config_free(c);
		safe_close(fd);
		tree_remove(root);
	}
}

/*
 * A NUL byte ended an ini file silently: everything after it was ignored
 * and check said OK (issue 29). Refused with FILE:LINE, in topotune.conf, a
 * profile and a hardware rule alike.
 */
static void test_nul_byte(void)
{
	/* Each valid up to its NUL on line 3: only the NUL can refuse it. */
	static const struct {
		const char *path;
		const char text[64];
		size_t size;
	} cases[] = {
#define NUL_CASE(p, t) { p, t, sizeof(t) - 1 }
		NUL_CASE("etc/topotune/topotune.conf", "[daemon]\nprofile = throughput\n\0[daemon]\nbogus = 1\n"),
		NUL_CASE("etc/topotune/profiles/nul.ini", "[profile]\ndescription = x\n\0[profile]\nbogus = 1\n"),
		NUL_CASE("etc/topotune/hardware.d/50-nul.ini", "[match]\nsmt = yes\n\0[match]\nbogus = 1\n"),
#undef NUL_CASE
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		static const TreeFile none[] = { { "etc/topotune/.keep", "" }, {} };
		char *root = tree_make(none);
		_cleanup_free_ char *p = strprintf("%s/%s", root, cases[i].path), *err = NULL, *want = NULL;
		Config *c = NULL;
		Profile *pr = NULL;
		HardwareRule **rules = NULL;
		size_t n = 0;
		FILE *f;
		int fd, r;

		check(mkdir_parents(root, cases[i].path) == 0);
		f = fopen(p, "we");
		check(f && fwrite(cases[i].text, 1, cases[i].size, f) == cases[i].size);
		if (f)
			fclose(f);
		fd = tree_open(root);
		want = strprintf("/%s:3: NUL byte: not a text file, refused (inih would stop reading there)", cases[i].path);
		if (i == 0)
			r = config_load(fd, &c, &err);
		else if (i == 1)
			r = profile_load(fd, "nul", &pr, &err);
		else
			r = hardware_rules_load(fd, &rules, &n, &err);
		check_ctx(cases[i].path, r == -EBADMSG);
		check_str(err, want);
		config_free(c);
		profile_free(pr);
		hardware_rules_free(rules, n);
		safe_close(fd);
		tree_remove(root);
	}
}

/* An error quotes at most 80 bytes of a line, cut at a character, then "...". */
static void test_long_line_quoted_short(void)
{
	_cleanup_free_ char *line = malloc(1024 * 1024 + 1), *text = NULL, *err = NULL, *want = NULL;
	Profile *p = NULL;

	check(line != NULL);
	if (!line)
		return;
	/* 79 'x' then a two-byte 'ä' across the cut at 80, then a megabyte of 'y' */
	memset(line, 'y', 1024 * 1024);
	line[1024 * 1024] = '\0';
	memset(line, 'x', 79);
	memcpy(line + 79, "\xc3\xa4", 2);
	text = strprintf("[profile]\n%s\n", line);
	check(profile_parse_string(text, "/etc/topotune/profiles/long.ini", &p, &err) == -EINVAL);
	line[79] = '\0';
	want = strprintf("/etc/topotune/profiles/long.ini:2: expected '[section]' or 'key = value', got '%s...'", line);
	check_str(err, want);
	check(err && strlen(err) < 200);
	profile_free(p);
}

/* ---- hardware.d ------------------------------------------------------------ */

#define HW_USR "/usr/lib/topotune/hardware.d/"
#define HW_ETC "/etc/topotune/hardware.d/"

static const MatchFacts hygon_7447v_nps3 = {
	.vendor = "hygon", .family = 0x18, .model = 7,
	.packages = 2, .cpus = 384, .nodes_per_package = 3, .smt = true,
};

/* Names of the matching rules' files, space separated. */
static char *matching(HardwareRule **rules, size_t n, const MatchFacts *f)
{
	StrBuf b = {};
	char *ret = NULL;

	for (size_t i = 0; i < n; i++)
		if (hardware_rule_matches(rules[i], f))
			strbuf_appendf(&b, "%s%s", b.len ? " " : "", strrchr(rules[i]->path, '/') + 1);
	if (strbuf_steal(&b, &ret) < 0)
		return NULL;
	return ret;
}

static void test_hardware_layers(void)
{
	static const struct {
		const char *name;
		MatchFacts facts;
		const char *want;
	} cases[] = {
		{ "7447v NPS3", { "hygon", 0x18, 7, 2, 384, 3, true },
		  "50-hygon.ini 60-smt.ini 70-big.ini" },
		{ "7447v NPS2: below min_nodes_per_package", { "hygon", 0x18, 7, 2, 384, 2, true },
		  "60-smt.ini 70-big.ini" },
		{ "model above range", { "hygon", 0x18, 8, 2, 384, 3, true },
		  "60-smt.ini 70-big.ini" },
		{ "model 4, one package, no SMT", { "hygon", 0x18, 4, 1, 128, 4, false },
		  "50-hygon.ini" },
		{ "GNR SNC-2", { "intel", 6, 0xad, 2, 512, 2, true },
		  "55-intel.ini 60-smt.ini 70-big.ini" },
		{ "GNR SNC-3: above max_nodes_per_package", { "intel", 6, 0xad, 1, 64, 3, false },
		  "" },
		{ "Turin 640 CPUs at cpus = 256-1024", { "amd", 0x1a, 0x11, 2, 640, 10, true },
		  "60-smt.ini 70-big.ini" },
		{ "1025 CPUs: above the range", { "amd", 0x1a, 0x11, 2, 1025, 10, true },
		  "60-smt.ini" },
		{ "unknown vendor", { NULL, 0, 0, 1, 2, 1, false }, "" },
	};
	_cleanup_close_ int fd = open_fixture("layers");
	_cleanup_free_ char *err = NULL;
	HardwareRule **rules = NULL;
	size_t n = 0;

	check_int(hardware_rules_load(fd, &rules, &n, &err), 0);
	check_int(n, 4);
	if (n == 4) {
		/* Lexical order of file names across both directories, /etc shadowing. */
		check_str(rules[0]->path, HW_USR "50-hygon.ini");
		check_str(rules[1]->path, HW_ETC "55-intel.ini");
		check_str(rules[2]->path, HW_ETC "60-smt.ini");
		check_str(rules[3]->path, HW_USR "70-big.ini");
		check_int(rules[0]->line, 2);
		check_int(rules[0]->family_min, 0x18);
		check_int(rules[0]->family_max, 0x18);
		check_int(rules[0]->model_min, 4);
		check_int(rules[0]->model_max, 7);
		check_int(rules[0]->nodes_per_package_min, 3);
		check_int(rules[0]->nodes_per_package_max, UINT_MAX);
		check_int(rules[1]->nodes_per_package_max, 2);
		check_int(rules[2]->smt, 1);
		check_int(rules[3]->smt, -1);
		check_str(rules[0]->profile, "throughput");
	}

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_free_ char *got = matching(rules, n, &cases[i].facts);

		check_ctx(cases[i].name, got && streq(got, cases[i].want));
		if (got && !streq(got, cases[i].want))
			fprintf(stderr, "  got '%s', want '%s'\n", got, cases[i].want);
	}
	hardware_rules_free(rules, n);
}

static void test_hardware_match_keys(void)
{
	static const TreeFile files[] = {
		{ "usr/lib/topotune/hardware.d/a-family.ini", "[match]\nfamily = 0x19-0x1a\n" },
		{ "usr/lib/topotune/hardware.d/b-npp.ini",
		  "[match]\nnodes_per_package = 2 - 4\nmin_nodes_per_package = 3\n" },
		{ "usr/lib/topotune/hardware.d/c-cpus.ini", "[match]\ncpus = 640\n" },
		{ "usr/lib/topotune/hardware.d/d-amd-nosmt.ini", "[match]\nvendor = amd\nsmt = no\n" },
		{ "usr/lib/topotune/hardware.d/e-any.ini", "# matches everything\n[match]\n" },
		{ "usr/lib/topotune/hardware.d/f-model.ini", "[match]\nmodel = 0x10-31\npackages = 1-2\n" },
		{ "usr/lib/topotune/hardware.d/README", "not a rule" },
		{}
	};
	static const struct {
		const char *name;
		MatchFacts facts;
		const char *want;
	} cases[] = {
		{ "family 0x19, 2 nodes", { "amd", 0x19, 0x11, 1, 64, 2, true },
		  "a-family.ini e-any.ini f-model.ini" },
		{ "family 0x1a, 3 nodes, 640 CPUs, no SMT", { "amd", 0x1a, 0x02, 2, 640, 3, false },
		  "a-family.ini b-npp.ini c-cpus.ini d-amd-nosmt.ini e-any.ini" },
		{ "family 0x18, 4 nodes, model 31, 4 packages", { "hygon", 0x18, 31, 4, 64, 4, false },
		  "b-npp.ini e-any.ini" },
		{ "5 nodes, model 32", { "intel", 6, 32, 1, 64, 5, true }, "e-any.ini" },
	};
	char *root = tree_make(files);
	int fd = tree_open(root);
	_cleanup_free_ char *err = NULL;
	HardwareRule **rules = NULL;
	size_t n = 0;

	check_int(hardware_rules_load(fd, &rules, &n, &err), 0);
	check_int(n, 6);
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_free_ char *got = matching(rules, n, &cases[i].facts);

		check_ctx(cases[i].name, got && streq(got, cases[i].want));
		if (got && !streq(got, cases[i].want))
			fprintf(stderr, "  got '%s', want '%s'\n", got, cases[i].want);
	}
	hardware_rules_free(rules, n);
	safe_close(fd);
	tree_remove(root);
}

/* has_core_kind, core_kinds and core_capacity against the kinds topotunectl topology lists. */
static void test_hardware_core_kinds(void)
{
	static const TreeFile files[] = {
		{ "usr/lib/topotune/hardware.d/a-atom.ini", "[match]\nvendor = intel\nhas_core_kind = atom\n" },
		{ "usr/lib/topotune/hardware.d/b-pe.ini", "[match]\nhas_core_kind = core atom\n" },
		{ "usr/lib/topotune/hardware.d/c-a510.ini", "[match]\nhas_core_kind = cortex-a510\n" },
		{ "usr/lib/topotune/hardware.d/d-midr.ini", "[match]\nhas_core_kind = 0x41:0xd4e\n" },
		{ "usr/lib/topotune/hardware.d/e-little.ini", "[match]\ncore_capacity = 1-511\n" },
		{ "usr/lib/topotune/hardware.d/f-mixed.ini", "[match]\ncore_kinds = 2-8\n" },
		{ "usr/lib/topotune/hardware.d/g-one.ini", "[match]\ncore_kinds = 1\n" },
		{}
	};
	static const struct {
		const char *name;
		MatchFacts facts;
		const char *want;
	} cases[] = {
		{ "Raptor Lake: P and E cores, no capacities",
		  { "intel", 6, 0xb7, 1, 32, 1, true, 2,
		    { { "atom", "Intel Atom (E-core)", 0 }, { "core", "Intel Core (P-core)", 0 } } },
		  "a-atom.ini b-pe.ini f-mixed.ini" },
		{ "Meteor Lake-like: E-cores only named, no P",
		  { "intel", 6, 0xaa, 1, 8, 1, false, 1, { { "atom", "Intel Atom (E-core)", 0 } } },
		  "a-atom.ini g-one.ini" },
		{ "phone: A510 280, A715 855, X3 1024",
		  { "arm", 0, 0, 3, 8, 1, false, 3,
		    { { "0x41:0xd46", "Arm Cortex-A510", 280 }, { "0x41:0xd4d", "Arm Cortex-A715", 855 },
		      { "0x41:0xd4e", "Arm Cortex-X3", 1024 } } },
		  "c-a510.ini d-midr.ini e-little.ini f-mixed.ini" },
		{ "big cores only: capacity 1024",
		  { "arm", 0, 0, 1, 4, 1, false, 1, { { "0x41:0xd4e", "Arm Cortex-X3", 1024 } } },
		  "d-midr.ini g-one.ini" },
		/* An x86 server: the kernel says nothing of kinds; nothing claims it is "1 kind". */
		{ "no kinds known", { "amd", 0x1a, 0x11, 2, 640, 10, true }, "" },
	};
	char *root = tree_make(files);
	int fd = tree_open(root);
	_cleanup_free_ char *err = NULL;
	HardwareRule **rules = NULL;
	size_t n = 0;

	check_int(hardware_rules_load(fd, &rules, &n, &err), 0);
	check_int(n, 7);
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_free_ char *got = matching(rules, n, &cases[i].facts);

		check_ctx(cases[i].name, got && streq(got, cases[i].want));
		if (got && !streq(got, cases[i].want))
			fprintf(stderr, "  got '%s', want '%s'\n", got, cases[i].want);
	}
	hardware_rules_free(rules, n);
	safe_close(fd);
	tree_remove(root);
}

#define HW_T HW_USR "10-x.ini"

static const struct {
	TreeFile files[3];
	int error;
	const char *want;
} hardware_bad[] = {
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[scheduler]\nsmt_buddy_assist = on\n" } },
	  -EINVAL, HW_T ": missing [match] section (a rule must say which machines it is for)" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\nfamily = 0x20-0x10\n" } },
	  -EINVAL, HW_T ":2: invalid range '0x20-0x10' for family: start above end" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\nmodel = seven\n" } },
	  -EINVAL, HW_T ":2: invalid value 'seven' for model: expected a number or a range A-B (decimal or 0x hex)" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\ncpus = 0x\n" } },
	  -EINVAL, HW_T ":2: invalid value '0x' for cpus: expected a number or a range A-B (decimal or 0x hex)" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\nmin_nodes_per_package = 1-2\n" } },
	  -EINVAL, HW_T ":2: invalid value '1-2' for min_nodes_per_package: expected a number (decimal or 0x hex)" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini",
	      "[match]\nmin_nodes_per_package = 4\nmax_nodes_per_package = 2\n" } },
	  -EINVAL, HW_T ":3: max_nodes_per_package = 2 contradicts the other nodes_per_package keys: nothing can match" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\nvendor = Intel\n" } },
	  -EINVAL, HW_T ":2: invalid value 'Intel' for vendor: expected a lower-case vendor name such as intel, amd, hygon or zhaoxin" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\nhas_core_kind = Atom\n" } },
	  -EINVAL, HW_T ":2: invalid value 'Atom' for has_core_kind: expected lower-case core kinds such as atom, core, cortex-a510 or 0x41:0xd46 (topotunectl topology lists them)" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\ncore_capacity = 1024-512\n" } },
	  -EINVAL, HW_T ":2: invalid range '1024-512' for core_capacity: start above end" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\nsmt = maybe\n" } },
	  -EINVAL, HW_T ":2: invalid value 'maybe' for smt: expected yes or no" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\nstepping = 1\n" } },
	  -EINVAL, HW_T ":2: unknown key 'stepping' in [match]" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\n[profile]\ndescription = x\n" } },
	  -EINVAL, HW_T ":3: unknown key 'description' in [profile]" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\n[profile]\nname = a/b\n" } },
	  -EINVAL, HW_T ":3: invalid profile name 'a/b' for name: " BAD_NAME },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\n[workload]\n" } },
	  -EINVAL, HW_T ":2: unknown section [workload]" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\nvendor = amd\nvendor = amd\n" } },
	  -EINVAL, HW_T ":3: duplicate key 'vendor' (first set at line 2)" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\n[isolation]\nisolated_cpus = 0-3 x\n" } },
	  -EINVAL, HW_T ":3: invalid CPU list '0-3 x' for isolated_cpus: bad text at 'x'" },
	/* A broken admin file shadows a good vendor file: the admin's error. */
	{ { { "usr/lib/topotune/hardware.d/10-x.ini", "[match]\n" },
	    { "etc/topotune/hardware.d/10-x.ini", "[match]\nfamily = 0x18\nfamily = 0x19\n" } },
	  -EINVAL, HW_ETC "10-x.ini:3: duplicate key 'family' (first set at line 2)" },
	{ { { "usr/lib/topotune/hardware.d/10-x.ini/", NULL } },
	  -EISDIR, HW_T ": Is a directory" },
};

static void test_hardware_bad(void)
{
	for (size_t i = 0; i < ELEMENTSOF(hardware_bad); i++) {
		char *root = tree_make(hardware_bad[i].files);
		int fd = tree_open(root);
		_cleanup_free_ char *err = NULL;
		HardwareRule **rules = NULL;
		size_t n = 0;

		check_ctx(hardware_bad[i].want, hardware_rules_load(fd, &rules, &n, &err) == hardware_bad[i].error);
		check_ctx(hardware_bad[i].want, !rules && n == 0);
		check_str(err, hardware_bad[i].want);
		hardware_rules_free(rules, n);
		safe_close(fd);
		tree_remove(root);
	}
}

static void test_hardware_shadow_fixes_vendor(void)
{
	static const TreeFile files[] = {
		{ "usr/lib/topotune/hardware.d/10-x.ini", "[match]\nfamily = junk\n" },
		{ "etc/topotune/hardware.d/10-x.ini", "[match]\nfamily = 0x18\n" },
		{}
	};
	char *root = tree_make(files);
	int fd = tree_open(root);
	_cleanup_free_ char *err = NULL;
	HardwareRule **rules = NULL;
	size_t n = 0;

	check_int(hardware_rules_load(fd, &rules, &n, &err), 0);
	check_int(n, 1);
	check_str(n == 1 ? rules[0]->path : NULL, HW_ETC "10-x.ini");
	hardware_rules_free(rules, n);
	safe_close(fd);
	tree_remove(root);
}

/* ---- precedence and selection --------------------------------------------- */

#define L_HW_HYGON "(" HW_USR "50-hygon.ini:12)"
#define L_HW_BIG "(" HW_USR "70-big.ini:"
#define L_HW_SMT "(" HW_ETC "60-smt.ini:5)"

static void test_precedence(void)
{
	_cleanup_close_ int fd = open_fixture("layers");
	_cleanup_(profile_freep) Profile *throughput = NULL, *local = NULL;
	_cleanup_(config_freep) Config *config = NULL;
	_cleanup_free_ char *err = NULL;
	HardwareRule **rules = NULL;
	size_t n = 0;

	check_int(hardware_rules_load(fd, &rules, &n, &err), 0);
	check_int(profile_load(fd, "throughput", &throughput, &err), 0);
	check_int(profile_load(fd, "local", &local, &err), 0);
	check_int(config_load(fd, &config, &err), 0);

	const struct {
		const char *name;
		const MatchFacts *facts;
		const Profile *profile;
		const Config *config;
		const char *want;
	} cases[] = {
		{ "built-in defaults only", NULL, NULL, NULL,
		  "smt_buddy_assist = keep (built-in default)\n"
		  "relax_domain_level = keep (built-in default)\n"
		  "isolated_cpus = none (built-in default)\n"
		  "housekeeping_smt = whole-cores (built-in default)\n" },
		{ "hardware rules over defaults, later rule wins", &hygon_7447v_nps3, NULL, NULL,
		  "smt_buddy_assist = on " L_HW_HYGON "\n"
		  "relax_domain_level = 2 " L_HW_BIG "6)\n"
		  "isolated_cpus = auto:2-per-node " L_HW_BIG "9)\n"
		  "housekeeping_smt = whole-cores " L_HW_SMT "\n" },
		{ "profile (base, then includer) over hardware", &hygon_7447v_nps3, throughput, NULL,
		  "smt_buddy_assist = on (" USR "throughput.ini:6)\n"
		  "relax_domain_level = auto (" USR "throughput.ini:7)\n"
		  "isolated_cpus = auto:2-per-node " L_HW_BIG "9)\n"
		  "housekeeping_smt = any (" USR "base.ini:10)\n" },
		{ "topotune.conf, then drop-ins, over the profile", &hygon_7447v_nps3, throughput, config,
		  "smt_buddy_assist = on (" USR "throughput.ini:6)\n"
		  "relax_domain_level = 0 (" DROPIN "50-x.conf:3)\n"
		  "isolated_cpus = auto:1-per-llc (" DROPIN "50-x.conf:6)\n"
		  "housekeeping_smt = any (" CONF ":7)\n" },
		{ "admin profile three deep, no rules", NULL, local, NULL,
		  "smt_buddy_assist = on (" USR "throughput.ini:6)\n"
		  "relax_domain_level = auto (" USR "throughput.ini:7)\n"
		  "isolated_cpus = 2-3,6-7 (" ETC "local.ini:6)\n"
		  "housekeeping_smt = any (" USR "base.ini:10)\n" },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_(profile_settings_done) ProfileSettings s = {};
		_cleanup_free_ char *dump = NULL;

		check_ctx(cases[i].name, settings_resolve(rules, n, cases[i].facts, cases[i].profile,
							  cases[i].config, &s) == 0);
		dump = settings_dump(&s);
		check_str(dump, cases[i].want);
	}

	/* The result is a deep copy: it outlives every source. */
	{
		_cleanup_(profile_settings_done) ProfileSettings s = {};
		_cleanup_free_ char *o = NULL;

		check_int(settings_resolve(rules, n, &hygon_7447v_nps3, NULL, NULL, &s), 0);
		hardware_rules_free(rules, n);
		o = origin_to_string(&s.origin[SETTING_SMT_BUDDY_ASSIST]);
		check_str(o, HW_USR "50-hygon.ini:12");
	}
}

static void test_select(void)
{
	_cleanup_close_ int fd = open_fixture("layers");
	_cleanup_(config_freep) Config *config = NULL, *empty = NULL;
	_cleanup_free_ char *err = NULL;
	HardwareRule **rules = NULL;
	size_t n = 0;
	char *root = tree_make(NULL);
	int efd = tree_open(root);

	check_int(hardware_rules_load(fd, &rules, &n, &err), 0);
	check_int(config_load(fd, &config, &err), 0);
	check_int(config_load(efd, &empty, &err), 0);

	const struct {
		const char *name;
		const Config *config;
		MatchFacts facts;
		const char *want;
	} cases[] = {
		{ "topotune.conf names it", config, { "amd", 0x1a, 0x11, 2, 640, 10, true },
		  "throughput from " CONF ":2" },
		{ "hardware rule names it", empty, hygon_7447v_nps3,
		  "throughput from " HW_USR "50-hygon.ini:9" },
		{ "no config at all", NULL, { "intel", 6, 0xad, 2, 512, 2, true },
		  "local from " HW_ETC "55-intel.ini:6" },
		{ "nobody names it", empty, { "amd", 0x1a, 0x11, 2, 640, 10, true },
		  "balanced from built-in default" },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_free_ char *name = NULL, *o = NULL, *got = NULL;
		_cleanup_(origin_done) Origin origin = {};

		check_ctx(cases[i].name, profile_select(cases[i].config, rules, n, &cases[i].facts,
							&name, &origin) == 0);
		o = origin_to_string(&origin);
		got = strprintf("%s from %s", strna(name), strna(o));
		check_str(got, cases[i].want);
	}

	hardware_rules_free(rules, n);
	safe_close(efd);
	tree_remove(root);
}

static void test_overlay_keeps_base_on_unset(void)
{
	_cleanup_(profile_settings_done) ProfileSettings base = {}, over = {}, copy = {};
	_cleanup_free_ char *dump = NULL, *v = NULL;

	profile_settings_init(&base);
	profile_settings_init(&over);
	check_int(cpuset_add_range(&base.value[SETTING_ISOLATED_CPUS].cpus, 0, 3), 0);
	base.value[SETTING_ISOLATED_CPUS].mode = ISOLATION_LIST;
	check_int(origin_copy(&base.origin[SETTING_ISOLATED_CPUS], &(Origin) { (char *)"/a.ini", 1 }), 0);
	over.value[SETTING_ISOLATED_CPUS].mode = ISOLATION_NONE;   /* no origin: not set, must not apply */
	over.value[SETTING_SMT_BUDDY_ASSIST].mode = SMT_BUDDY_OFF;
	check_int(origin_copy(&over.origin[SETTING_SMT_BUDDY_ASSIST], &(Origin) { (char *)"/b.ini", 2 }), 0);

	check_int(profile_settings_overlay(&base, &over), 0);
	check_int(profile_settings_copy(&base, &copy), 0);
	profile_settings_done(&base);
	dump = settings_dump(&copy);
	check_str(dump,
		  "smt_buddy_assist = off (/b.ini:2)\n"
		  "relax_domain_level = keep (built-in default)\n"
		  "isolated_cpus = 0-3 (/a.ini:1)\n"
		  "housekeeping_smt = whole-cores (built-in default)\n");
	check_int(profile_settings_format_value(&copy, "relax", &v), -ENOENT);
	check(!profile_settings_origin(&copy, "relax"));
}

/* ---- the shipped conf/ ----------------------------------------------------- */

static void test_shipped_conf(void)
{
	static const char *const shipped[] = { "balanced", "database", "hpc", "latency", "throughput" };
	_cleanup_free_ char *conf = strprintf("%s/conf", srcdir), *abs = NULL, *err = NULL;
	_cleanup_free_ char *p1 = NULL, *name = NULL;
	_cleanup_(config_freep) Config *config = NULL;
	_cleanup_(origin_done) Origin origin = {};
	ProfileInfo *infos = NULL;
	HardwareRule **rules = NULL;
	size_t n_infos = 0, n_rules = 0;
	char *root;
	int fd;

	abs = conf ? realpath(conf, NULL) : NULL;
	if (!abs) {
		fprintf(stderr, "conf/ not found below %s\n", srcdir);
		check(abs);
		return;
	}
	/*
	 * Install conf/ as a package would, copied. (Links to the source tree
	 * would be absolute links out of the root: they resolve inside it.)
	 */
	root = tree_make((const TreeFile[]) { { "usr/lib/topotune/x", "" }, { "etc/topotune/x", "" }, {} });
	p1 = strprintf("cp -r '%s/profiles' '%s/hardware.d' '%s/usr/lib/topotune/' && cp '%s/topotune.conf' '%s/etc/topotune/'",
		       abs, abs, root, abs, root);
	check(p1 && system(p1) == 0);
	fd = tree_open(root);

	check_int(profile_list(fd, &infos, &n_infos, &err), 0);
	check_int(n_infos, ELEMENTSOF(shipped));
	for (size_t i = 0; i < n_infos && i < ELEMENTSOF(shipped); i++) {
		check_str(infos[i].name, shipped[i]);
		check_ctx(infos[i].description, !startswith(infos[i].description, "invalid:"));
		check_ctx(infos[i].name, strlen(infos[i].description) > 10);
	}
	profile_info_array_free(infos, n_infos);

	check_int(config_load(fd, &config, &err), 0);
	if (config) {
		/* Every key in the shipped file is commented out: all defaults. */
		check_str(config->profile, "balanced");
		check(!config->profile_origin.file);
		check_int(strv_length(config->files), 1);
	}

	free(err);
	err = NULL;
	check_int(hardware_rules_load(fd, &rules, &n_rules, &err), 0);
	if (err)
		fprintf(stderr, "  error: %s\n", err);
	check(n_rules >= 3);
	for (size_t i = 0; i < n_rules; i++) {
		_cleanup_(profile_freep) Profile *p = NULL;
		_cleanup_free_ char *e = NULL;

		if (!rules[i]->profile)
			continue;
		check_ctx(rules[i]->path, profile_load(fd, rules[i]->profile, &p, &e) == 0);
	}

	/*
	 * The seed machine: dual Hygon C86 7447v, 3 nodes per package. The
	 * default profile keeps the kernel's SMT_BUDDY_ASSIST there (its
	 * author measured hackbench and schbench regressions with it); the
	 * throughput profile switches it on.
	 */
	{
		_cleanup_(profile_settings_done) ProfileSettings s = {}, t = {};
		_cleanup_(profile_freep) Profile *p = NULL, *tp = NULL;
		_cleanup_free_ char *o = NULL, *ot = NULL;

		check_int(profile_select(config, rules, n_rules, &hygon_7447v_nps3, &name, &origin), 0);
		check_str(name, "balanced");
		check_int(profile_load(fd, name ?: "balanced", &p, &err), 0);
		check_int(settings_resolve(rules, n_rules, &hygon_7447v_nps3, p, config, &s), 0);
		check_int(s.value[SETTING_SMT_BUDDY_ASSIST].mode, SMT_BUDDY_KEEP);
		o = origin_to_string(&s.origin[SETTING_SMT_BUDDY_ASSIST]);
		check_str(o, "built-in default");

		check_int(profile_load(fd, "throughput", &tp, &err), 0);
		check_int(settings_resolve(rules, n_rules, &hygon_7447v_nps3, tp, config, &t), 0);
		check_int(t.value[SETTING_SMT_BUDDY_ASSIST].mode, SMT_BUDDY_ON);
		ot = origin_to_string(&t.origin[SETTING_SMT_BUDDY_ASSIST]);
		check_ctx(ot, ot && startswith(ot, "/usr/lib/topotune/profiles/throughput.ini:"));
	}

	hardware_rules_free(rules, n_rules);
	safe_close(fd);
	tree_remove(root);
}

int main(int argc, char *argv[])
{
	if (argc > 1)
		srcdir = argv[1];

	test_string_tables();
	test_origin();
	test_profile_names();
	test_parse_good();
	test_parse_bad();
	test_long_comment_is_fine();
	test_numa_balancing();
	test_control_settings();
	test_housekeeping();
	test_load_good();
	test_load_bad();
	test_include_depth();
	test_list();
	test_config_good();
	test_config_bad();
	test_nul_byte();
	test_long_line_quoted_short();
	test_hardware_layers();
	test_hardware_match_keys();
	test_hardware_core_kinds();
	test_hardware_bad();
	test_hardware_shadow_fixes_vendor();
	test_precedence();
	test_select();
	test_overlay_keeps_base_on_unset();
	test_shipped_conf();

	return test_end("profile");
}
