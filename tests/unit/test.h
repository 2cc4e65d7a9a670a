/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Table-driven unit test helpers: every check prints FILE:LINE and both
 * values on mismatch and counts; test_end() prints a summary and returns
 * the exit status.
 */
#pragma once

#include <inttypes.h>
#include <stdio.h>
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

static inline int test_end(const char *name)
{
	printf("%s: %u checks, %u failed\n", name, test_checks, test_failures);
	return test_failures ? 1 : 0;
}
