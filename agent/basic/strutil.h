/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

#define WHITESPACE " \t\n\r"

/* Strict number parsing: the whole string must be the number (base 0 allows 0x). */
int safe_atoi(const char *s, int *ret);
int safe_atou(const char *s, unsigned *ret);
int safe_atou_base(const char *s, int base, unsigned *ret);
int safe_atolli(const char *s, long long *ret);

/* Does @text contain @word delimited by whitespace or the ends ("NO_X" is not "X")? */
bool string_has_word(const char *text, const char *word) _pure_;

char *strip_trailing(char *s);
char *strip(char *s);
char *ascii_strlower(char *s);

int strdup_to(char **dst, const char *src);
char *strprintf(const char *fmt, ...) _printf_(1, 2);
/* The one vasprintf() wrapper: the formatted string, NULL when out of memory. */
char *vstrprintf(const char *fmt, va_list ap) _printf_(1, 0);
/* Format into *dst, releasing what it held, like strdup_to(); *dst is unchanged on -ENOMEM. */
int strprintf_to(char **dst, const char *fmt, ...) _printf_(2, 3);
int vstrprintf_to(char **dst, const char *fmt, va_list ap) _printf_(2, 0);
/* Set *ret_error (if given) to the formatted message; returns @error. */
int error_message(char **ret_error, int error, const char *fmt, ...) _printf_(3, 4);

/* NULL-terminated string vectors. */
char **strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
#define _cleanup_strv_free_ _cleanup_(strv_freep)
size_t strv_length(char *const *l);
int strv_push(char ***l, char *value);  /* takes ownership, also on failure */
int strv_extend(char ***l, const char *value);
bool strv_contains(char *const *l, const char *s);
/* Split at any of @sep, skipping empty words. */
int strv_split(const char *s, const char *sep, char ***ret);
/* A deep copy of @l (NULL: an empty list); NULL: out of memory. */
char **strv_copy(char *const *l);
/* The strings of @l with @sep between them ("" for none); NULL: out of memory. */
char *strv_join(char *const *l, const char *sep);
#define STRV_FOREACH(s, l) for (char *const *s = (l); s && *s; s++)

/*
 * Text from files for D-Bus, which takes only valid UTF-8 (as sd-bus checks
 * it: no overlong forms, surrogates, code points above U+10FFFF or
 * noncharacters). utf8_escape_invalid() copies @s with each byte outside
 * such a sequence written as "\xNN"; NULL on allocation failure.
 */
bool utf8_is_valid(const char *s) _pure_;
char *utf8_escape_invalid(const char *s);

/*
 * Text from files or callers for a terminal or a log: invalid UTF-8 and the
 * control characters a terminal acts on (C0 but newline and tab, DEL, C1)
 * written as "\xNN". text_escape_line() escapes newline and tab too: one
 * line whatever the text, for the journal, where a newline starts a record
 * of its own. text_bounded() is text_escape_line() cut after @max bytes,
 * saying how long it was: for echoing a caller's argument.
 */
char *text_escape_control(const char *s);
char *text_escape_line(const char *s);
char *text_bounded(const char *s, size_t max);

/* Growable string buffer for building output text. */
typedef struct StrBuf {
	char *buf;
	size_t len, alloc;
	int error;   /* first allocation failure, sticky */
} StrBuf;

void strbuf_done(StrBuf *b);
void strbuf_append(StrBuf *b, const char *s);
void strbuf_appendf(StrBuf *b, const char *fmt, ...) _printf_(2, 3);
void strbuf_vappendf(StrBuf *b, const char *fmt, va_list ap) _printf_(2, 0);
/* Returns -ENOMEM if any append failed; on success hands over the string. */
int strbuf_steal(StrBuf *b, char **ret);
