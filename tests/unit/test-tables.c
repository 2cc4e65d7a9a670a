/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What lists the settings and the controls outside the code, against the
 * tables: the JSON Schema's setting names, the man pages' lists, the bash
 * completion (which asks topotunectl). A setting added to the tables and
 * missing in one of them fails here, with the file and what is missing.
 * (The unit's ReadWritePaths= against the control table: test-unit-sandbox.)
 */
#include <stdlib.h>

#include "planner.h"
#include "strutil.h"
#include "test.h"

#define WORDS_MAX 64

typedef struct Words {
	char *w[WORDS_MAX];
	size_t n;
} Words;

static const char *source_root;

static char *read_source(const char *rel)
{
	_cleanup_free_ char *path = strprintf("%s/%s", source_root, rel);
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	if (!path || !(f = fopen(path, "re")))
		return NULL;
	buf = malloc(1 << 20);
	if (buf) {
		size = fread(buf, 1, (1 << 20) - 1, f);
		buf[size] = '\0';
	}
	fclose(f);
	return buf;
}

static void words_add(Words *w, const char *s, size_t len)
{
	for (size_t i = 0; i < w->n; i++)
		if (strlen(w->w[i]) == len && strncmp(w->w[i], s, len) == 0)
			return;
	if (w->n < WORDS_MAX)
		w->w[w->n++] = strndup(s, len);
}

static void words_done(Words *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->w[i]);
	w->n = 0;
}

static bool words_has(const Words *w, const char *s)
{
	for (size_t i = 0; i < w->n; i++)
		if (streq(w->w[i], s))
			return true;
	return false;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/*
 * The words of @text from @begin up to @end: the scdoc bold names "*name*"
 * (@quote '*') or the JSON strings "\"name\"" (@quote '"'). -ENOENT when a
 * marker is missing.
 */
static int words_between(const char *text, const char *begin, const char *end, char quote, Words *ret)
{
	const char *p = text ? strstr(text, begin) : NULL, *e;

	if (!p)
		return -ENOENT;
	p += strlen(begin);
	e = strstr(p, end);
	if (!e)
		return -ENOENT;
	for (; p < e; p++) {
		size_t l = 0;

		if (*p != quote)
			continue;
		while (p + 1 + l < e && name_char(p[1 + l]))
			l++;
		if (l > 0 && p[1 + l] == quote) {
			words_add(ret, p + 1, l);
			p += l + 1;
		}
	}
	return 0;
}

/* @got holds exactly @want's words (in any order); each difference is a failure naming @where. */
static void check_words(const char *where, const Words *got, const Words *want)
{
	test_checks++;
	for (size_t i = 0; i < want->n; i++)
		if (!words_has(got, want->w[i])) {
			test_failures++;
			fprintf(stderr, "%s: '%s' of the table is missing\n", where, want->w[i]);
		}
	for (size_t i = 0; i < got->n; i++)
		if (!words_has(want, got->w[i])) {
			test_failures++;
			fprintf(stderr, "%s: '%s' is listed, but no row of the table has it\n", where, got->w[i]);
		}
}

static void all_settings(Words *ret, bool own_step_only)
{
	SETTING_FOREACH(i)
		if (!own_step_only || plan_step_of(i) == i)
			words_add(ret, setting_id_to_string(i), strlen(setting_id_to_string(i)));
}

/* The schema's "setting" enum: every setting, in the table's order. */
static void test_schema(void)
{
	_cleanup_free_ char *text = read_source("schema/topotunectl.schema.json");
	Words got = {}, want = {};

	check_int(words_between(text, "\"setting\": {\"enum\": [", "]", '"', &got), 0);
	all_settings(&want, false);
	check_words("schema/topotunectl.schema.json \"setting\"", &got, &want);
	check_int(got.n, want.n);
	for (size_t i = 0; i < MIN(got.n, want.n); i++)
		check_str(got.w[i], want.w[i]);
	words_done(&got);
	words_done(&want);
}

/* Lines "*KEY =* ..." of @text between @begin and @end: the keys a man page documents there. */
static int man_keys(const char *text, const char *begin, const char *end, Words *ret)
{
	const char *p = text ? strstr(text, begin) : NULL, *e;

	if (!p)
		return -ENOENT;
	e = strstr(p + strlen(begin), end) ?: p + strlen(p);
	for (; p && p < e; p = strchr(p, '\n')) {
		size_t l = 0;

		p++;
		if (*p != '*')
			continue;
		while (name_char(p[1 + l]))
			l++;
		if (l > 0 && startswith(p + 1 + l, " =*"))
			words_add(ret, p + 1, l);
	}
	return 0;
}

static void test_man_profile(void)
{
	_cleanup_free_ char *text = read_source("man/topotune.profile.5.scd");
	Words got = {}, want = {};
	const char *sections[] = { "scheduler", "isolation" };

	/* Each setting under its own section's heading. */
	for (size_t s = 0; s < ELEMENTSOF(sections); s++) {
		_cleanup_free_ char *begin = strprintf("\n## [%s]\n", sections[s]);
		_cleanup_free_ char *where = strprintf("man/topotune.profile.5.scd [%s]", sections[s]);

		check_int(man_keys(text, begin, "\n#", &got), 0);
		SETTING_FOREACH(i)
			if (streq(setting_get(i)->section, sections[s]))
				words_add(&want, setting_id_to_string(i), strlen(setting_id_to_string(i)));
		check_words(where, &got, &want);
		words_done(&got);
		words_done(&want);
	}
	/* Every setting is documented in topotune.profile(5), the page its row names. */
	SETTING_FOREACH(i)
		check_str(setting_get(i)->man, "topotune.profile(5)");
}

static void test_man_lists(void)
{
	static const struct {
		const char *file, *what, *begin, *end;
		bool own_step_only;
	} lists[] = {
		/* The keys of topotune.conf(5)'s [scheduler] and [isolation]. */
		{ "man/topotune.conf.5.scd", "[scheduler] AND [isolation]", "\n# [scheduler] AND [isolation]\n", "\n# ",
		  false },
		/* Settings a(sssbs): the settings with a step of their own. */
		{ "man/org.topotune1.5.scd", "Settings", "*Settings* a(sssbs)", "desired value", true },
		/* explain SETTING: any setting. */
		{ "man/topotunectl.1.scd", "explain", "_SETTING_ is any key of", "*explain --list*", false },
	};

	for (size_t l = 0; l < ELEMENTSOF(lists); l++) {
		_cleanup_free_ char *text = read_source(lists[l].file);
		_cleanup_free_ char *where = strprintf("%s %s", lists[l].file, lists[l].what);
		Words got = {}, want = {};

		if (l == 0)
			check_int(man_keys(text, lists[l].begin, lists[l].end, &got), 0);
		else
			check_int(words_between(text, lists[l].begin, lists[l].end, '*', &got), 0);
		all_settings(&want, lists[l].own_step_only);
		check_words(where, &got, &want);
		words_done(&got);
		words_done(&want);
	}
}

/* KernelCapabilities a{sb}: its first entries, one per control with a file of its own. */
static void test_man_capabilities(void)
{
	_cleanup_free_ char *text = read_source("man/org.topotune1.5.scd");
	Words got = {}, want = {};

	check_int(words_between(text, "*KernelCapabilities* a{sb}", "*cgroup_v2*", '*', &got), 0);
	CONTROL_FOREACH(i) {
		const KernelControl *c = kernel_control_get(i);

		if (c->kind != CONTROL_CMDLINE && c->kind != CONTROL_PARTITION)
			words_add(&want, c->key, strlen(c->key));
	}
	check_words("man/org.topotune1.5.scd KernelCapabilities", &got, &want);
	words_done(&got);
	words_done(&want);
}

/* topotuned(8) names every sysctl the unit leaves writable. */
static void test_man_sysctls(void)
{
	_cleanup_free_ char *text = read_source("man/topotuned.8.scd");

	CONTROL_FOREACH(i) {
		const KernelControl *c = kernel_control_get(i);
		const char *name = startswith(c->path, "proc/sys/");
		_cleanup_free_ char *bold = NULL;

		if (!name || c->kind != CONTROL_VALUE)
			continue;
		bold = strprintf("*%s*", name);
		for (char *p = bold; p && *p; p++)
			if (*p == '/')
				*p = '.';
		check_ctx(bold, text && strstr(text, bold));
	}
}

/* The completion asks topotunectl for the names, and lists none itself. */
static void test_completion(void)
{
	_cleanup_free_ char *text = read_source("completion/topotunectl");

	check(text && strstr(text, "topotunectl explain --list"));
	SETTING_FOREACH(i) {
		const char *key = setting_id_to_string(i);

		for (const char *p = text; p && (p = strstr(p, key)); p++)
			check_ctx(key, (p > text && name_char(p[-1])) || name_char(p[strlen(key)]));
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s SOURCE-ROOT\n", argv[0]);
		return 2;
	}
	source_root = argv[1];
	test_schema();
	test_man_profile();
	test_man_lists();
	test_man_capabilities();
	test_man_sysctls();
	test_completion();
	return test_end("test-tables");
}
