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

	check(strv_split("  a b\tc \n", WHITESPACE, &l) == 0);
	check_int(strv_length(l), 3);
	check_str(l[2], "c");
	return test_end("test-strutil");
}
