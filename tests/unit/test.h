/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Table-driven unit test helpers: every check prints FILE:LINE and both
 * values on mismatch and counts; test_end() prints a summary and returns
 * the exit status.
 */
#pragma once

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned test_checks, test_failures;

#define check(expr)                                                             \
	do {                                                                    \
		test_checks++;                                                  \
		if (!(expr)) {                                                  \
			test_failures++;                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,  \
				__LINE__, #expr);                               \
		}                                                               \
	} while (0)

#define check_int(got, want)                                                    \
	do {                                                                    \
		long long _g = (long long)(got), _w = (long long)(want);        \
		test_checks++;                                                  \
		if (_g != _w) {                                                 \
			test_failures++;                                        \
			fprintf(stderr, "%s:%d: %s: got %lld, want %lld\n",     \
				__FILE__, __LINE__, #got, _g, _w);              \
		}                                                               \
	} while (0)

#define check_str(got, want)                                                    \
	do {                                                                    \
		const char *_g = (got), *_w = (want);                           \
		test_checks++;                                                  \
		if (!_g || !_w || strcmp(_g, _w) != 0) {                        \
			test_failures++;                                        \
			fprintf(stderr, "%s:%d: %s:\n--- got:\n%s\n--- want:\n%s\n---\n", \
				__FILE__, __LINE__, #got, _g ? _g : "(null)",   \
				_w ? _w : "(null)");                            \
		}                                                               \
	} while (0)

#define check_ctx(ctx, expr)                                                    \
	do {                                                                    \
		test_checks++;                                                  \
		if (!(expr)) {                                                  \
			test_failures++;                                        \
			fprintf(stderr, "%s:%d: [%s] check failed: %s\n",       \
				__FILE__, __LINE__, (ctx), #expr);              \
		}                                                               \
	} while (0)

/*
 * The expected output in the file @dir/@name against @got. With
 * TOPOTUNE_REGEN=1 in the environment the file is written with @got
 * instead: `TOPOTUNE_REGEN=1 meson test --suite expected`, then review the
 * diff and commit it (tests/README.md).
 */
#define check_expected_file(dir, name, got) test_expected_file(__FILE__, __LINE__, (dir), (name), (got))

static inline void test_expected_file(const char *file, int line, const char *dir, const char *name,
				      const char *got)
{
	char path[4096], *want = NULL;
	size_t size = 0;
	FILE *f;

	test_checks++;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (getenv("TOPOTUNE_REGEN") && *getenv("TOPOTUNE_REGEN") && strcmp(getenv("TOPOTUNE_REGEN"), "0") != 0) {
		f = fopen(path, "we");
		if (!f || fputs(got, f) < 0 || fclose(f) != 0) {
			test_failures++;
			fprintf(stderr, "%s:%d: cannot write %s\n", file, line, path);
		}
		return;
	}
	f = fopen(path, "re");
	if (f) {
		want = malloc(1 << 20);
		if (want) {
			size = fread(want, 1, (1 << 20) - 1, f);
			want[size] = '\0';
		}
		fclose(f);
	}
	if (!want || strcmp(got, want) != 0) {
		test_failures++;
		fprintf(stderr, "%s:%d: %s:\n--- got:\n%s\n--- want:\n%s\n---\n"
			"(if the change is meant: TOPOTUNE_REGEN=1 meson test --suite expected, review git diff)\n",
			file, line, path, got, want ? want : "(no file)");
	}
	free(want);
}

static inline int test_end(const char *name)
{
	printf("%s: %u checks, %u failed\n", name, test_checks, test_failures);
	return test_failures ? 1 : 0;
}
