/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small generic macros: cleanup attributes, ownership transfer, array sizes,
 * string comparisons. No project knowledge; everything may include this.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _pure_ __attribute__((pure))
#define _const_ __attribute__((const))
#define _unused_ __attribute__((unused))
#define _warn_unused_result_ __attribute__((warn_unused_result))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))

/* Hand over ownership of a pointer: returns the value and clears the variable. */
#define TAKE_PTR(p)                              \
	({                                       \
		__typeof__(p) *_pp_ = &(p);      \
		__typeof__(p) _p_ = *_pp_;       \
		*_pp_ = NULL;                    \
		_p_;                             \
	})

#define TAKE_FD(fd)                              \
	({                                       \
		int *_pfd_ = &(fd);              \
		int _fd_ = *_pfd_;               \
		*_pfd_ = -EBADF;                 \
		_fd_;                            \
	})

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)          \
	static inline void func##p(type *p)               \
	{                                                 \
		if (*p)                                   \
			func(*p);                         \
	}

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	return -EBADF;
}

static inline void closep(int *fd)
{
	safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static inline bool streq_ptr(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return streq(a, b);
}

static inline const char *startswith(const char *s, const char *prefix)
{
	size_t l = strlen(prefix);

	return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}

static inline bool endswith(const char *s, const char *suffix)
{
	size_t l = strlen(s), k = strlen(suffix);

	return l >= k && memcmp(s + l - k, suffix, k) == 0;
}

static inline const char *strempty(const char *s)
{
	return s ?: "";
}

static inline const char *strna(const char *s)
{
	return s ?: "n/a";
}

/* errno may be 0 after a failed libc call on odd paths; never return 0 as an error. */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/*
 * String tables for enums: NAME_to_string() and NAME_from_string(), the latter
 * returning -EINVAL for unknown strings.
 */
#define DEFINE_STRING_TABLE_LOOKUP(name, type)                                  \
	const char *name##_to_string(type i)                                    \
	{                                                                       \
		if (i < 0 || (size_t)i >= ELEMENTSOF(name##_table))             \
			return NULL;                                            \
		return name##_table[i];                                         \
	}                                                                       \
	type name##_from_string(const char *s)                                  \
	{                                                                       \
		if (!s)                                                         \
			return (type)-EINVAL;                                   \
		for (size_t i = 0; i < ELEMENTSOF(name##_table); i++)           \
			if (name##_table[i] && streq(name##_table[i], s))       \
				return (type)i;                                 \
		return (type)-EINVAL;                                           \
	}
