/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The libFuzzer entry points every target defines. The same target sources
 * are linked either with clang's -fsanitize=fuzzer (run-fuzzers.sh) or with
 * replay.c (the meson tests, any compiler), which feeds them the committed
 * corpus.
 */

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

/* The input as a NUL-terminated string (embedded NULs end it early). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/*
 * A target found a broken property (not a crash): abort, so that libFuzzer
 * saves the input and the replay test fails.
 */
#define fuzz_assert(expr)                                                                      \
	do {                                                                                   \
		if (!(expr)) {                                                                 \
			fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #expr); \
			abort();                                                               \
		}                                                                              \
	} while (0)
