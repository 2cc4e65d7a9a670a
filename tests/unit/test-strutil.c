/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* String helpers: words in kernel control files, strict numbers, splitting. */
#include "strutil.h"
#include "test.h"

static const struct {
	const char *text, *word;
	bool want;
} words[] = {
	{ "PLACE_LAG NO_SMT_BUDDY_ASSIST TTWU_QUEUE ", "SMT_BUDDY_ASSIST", false },
	{ "PLACE_LAG NO_SMT_BUDDY_ASSIST TTWU_QUEUE ", "NO_SMT_BUDDY_ASSIST", true },
	{ "SMT_BUDDY_ASSIST", "SMT_BUDDY_ASSIST", true },
	{ "cpuset cpu io memory\n", "cpuset", true },
	{ "cpu io memory\n", "cpuset", false },
	{ "+cpuset", "cpuset", false },
	{ "", "cpuset", false },
	{ "cpuset", "", false },
};

/* What sd-bus refuses in a string, escaped; what it takes, unchanged. */
static const struct {
	const char *text, *want;
} utf8[] = {
	{ "", "" },
	{ "latency", "latency" },
	{ "b\xc3\xa4lanced \xf0\x9f\x98\x80", "b\xc3\xa4lanced \xf0\x9f\x98\x80" },
	{ "\x97\x97", "\\x97\\x97" },
	{ "a\xc3", "a\\xc3" },                         /* cut short */
	{ "\xc0\xaf", "\\xc0\\xaf" },                  /* overlong '/' */
	{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf" },          /* overlong, three bytes */
	{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },          /* a surrogate */
	{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },  /* above U+10FFFF */
	{ "\xef\xbf\xbe", "\\xef\\xbf\\xbe" },          /* U+FFFE */
	{ "\xef\xb7\x90", "\\xef\\xb7\\x90" },          /* U+FDD0 */
	{ "ok\xff ok", "ok\\xff ok" },
};

/* For a terminal: C0 (but newline and tab), DEL, C1 and invalid bytes as \xNN. */
static const struct {
	const char *text, *want;
} controls[] = {
	{ "plain text", "plain text" },
	{ "a\tb\nc", "a\tb\nc" },
	{ "red \x1b[31mALERT", "red \\x1b[31mALERT" },
	{ "bell\x07 del\x7f", "bell\\x07 del\\x7f" },
	{ "csi \xc2\x9b" "2J", "csi \\xc2\\x9b2J" },
	{ "nbsp \xc2\xa0 caf\xc3\xa9", "nbsp \xc2\xa0 caf\xc3\xa9" },
	{ "bin \xff\xfe\x01", "bin \\xff\\xfe\\x01" },
	{ "", "" },
};

int main(void)
{
	_cleanup_strv_free_ char **l = NULL;
	unsigned u;
	int i;

	for (size_t k = 0; k < ELEMENTSOF(words); k++)
		check_ctx(words[k].text, string_has_word(words[k].text, words[k].word) == words[k].want);

	check(safe_atou("0x18", &u) == 0 && u == 0x18);
	check(safe_atou_base("010", 10, &u) == 0 && u == 10);
	check(safe_atou("-1", &u) == -EINVAL);
	check(safe_atou("7 ", &u) == -EINVAL);
	check(safe_atoi("-1", &i) == 0 && i == -1);
	check(safe_atoi("99999999999", &i) == -ERANGE);

	{
		_cleanup_free_ char *t = NULL;

		/* strprintf_to() replaces what the pointer held, like strdup_to(). */
		check_int(strprintf_to(&t, "%s=%d", "level", 2), 0);
		check_str(t, "level=2");
		check_int(strprintf_to(&t, "-%s", t), 0);
		check_str(t, "-level=2");
	}

	check(strv_split("  a b\tc \n", WHITESPACE, &l) == 0);
	check_int(strv_length(l), 3);
	check_str(l[2], "c");
	{
		_cleanup_free_ char *j = strv_join(l, " -- "), *none = strv_join(NULL, ","), *one = strv_join(l + 2, ",");

		check_str(j, "a -- b -- c");
		check_str(none, "");
		check_str(one, "c");
	}
	{
		_cleanup_strv_free_ char **c = strv_copy(l), **e = strv_copy(NULL);

		check_int(strv_length(c), 3);
		check(c && c[0] != l[0] && streq(c[2], "c"));
		check(e && !e[0]);
	}

	for (size_t k = 0; k < ELEMENTSOF(utf8); k++) {
		_cleanup_free_ char *e = utf8_escape_invalid(utf8[k].text);

		check_ctx(utf8[k].want, utf8_is_valid(utf8[k].text) == streq(utf8[k].text, utf8[k].want));
		check_str(e, utf8[k].want);
		check_ctx(utf8[k].want, e && utf8_is_valid(e));
	}
	for (size_t k = 0; k < ELEMENTSOF(controls); k++) {
		_cleanup_free_ char *e = text_escape_control(controls[k].text);

		check_str(e, controls[k].want);
	}
	{
		_cleanup_free_ char *big = malloc(10001), *e = NULL;

		check(big != NULL);
		if (big) {
			memset(big, 'x', 10000);
			big[10000] = '\0';
			e = text_bounded(big, 64);
			check(e && strlen(e) < 100 && strstr(e, "... (10000 bytes)"));
		}
		free(e);
		e = text_bounded("short\x1b", 64);
		check_str(e, "short\\x1b");
	}
	return test_end("test-strutil");
}
