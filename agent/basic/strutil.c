/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* String helpers: strict number parsing, string vectors, a growable buffer. */
#include <assert.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>

#include "strutil.h"

int safe_atolli(const char *s, long long *ret)
{
	char *end;
	long long v;

	assert(ret);

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno > 0)
		return -errno;
	if (end == s || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int safe_atoi(const char *s, int *ret)
{
	long long v;
	int r;

	assert(ret);

	r = safe_atolli(s, &v);
	if (r < 0)
		return r;
	if (v < INT_MIN || v > INT_MAX)
		return -ERANGE;
	*ret = (int)v;
	return 0;
}

int safe_atou_base(const char *s, int base, unsigned *ret)
{
	char *end;
	unsigned long v;

	assert(ret);

	if (!s || !*s || !(isdigit((unsigned char)*s)))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, base);
	if (errno > 0)
		return -errno;
	if (end == s || *end)
		return -EINVAL;
	if (v > UINT_MAX)
		return -ERANGE;
	*ret = (unsigned)v;
	return 0;
}

int safe_atou(const char *s, unsigned *ret)
{
	assert(ret);

	return safe_atou_base(s, 0, ret);
}

bool string_has_word(const char *text, const char *word)
{
	size_t l = strlen(word);

	if (l == 0)
		return false;
	for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
		bool start = p == text || strchr(WHITESPACE, p[-1]);
		bool end = !p[l] || strchr(WHITESPACE, p[l]);

		if (start && end)
			return true;
	}
	return false;
}

char *strip_trailing(char *s)
{
	size_t l = strlen(s);

	while (l > 0 && strchr(WHITESPACE, s[l - 1]))
		s[--l] = '\0';
	return s;
}

char *strip(char *s)
{
	while (*s && strchr(WHITESPACE, *s))
		s++;
	return strip_trailing(s);
}

char *ascii_strlower(char *s)
{
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return s;
}

int strdup_to(char **dst, const char *src)
{
	char *c = NULL;

	assert(dst);

	if (src) {
		c = strdup(src);
		if (!c)
			return -ENOMEM;
	}
	free(*dst);
	*dst = c;
	return 0;
}

char *vstrprintf(const char *fmt, va_list ap)
{
	char *s;

	assert(fmt);

	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

char *strprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	assert(fmt);

	va_start(ap, fmt);
	s = vstrprintf(fmt, ap);
	va_end(ap);
	return s;
}

int vstrprintf_to(char **dst, const char *fmt, va_list ap)
{
	char *s = vstrprintf(fmt, ap);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

int error_message(char **ret_error, int error, const char *fmt, ...)
{
	va_list ap;

	if (!ret_error)
		return error;

	va_start(ap, fmt);
	(void)vstrprintf_to(ret_error, fmt, ap);
	va_end(ap);
	return error;
}

int strprintf_to(char **dst, const char *fmt, ...)
{
	va_list ap;
	int r;

	assert(dst);
	assert(fmt);

	va_start(ap, fmt);
	r = vstrprintf_to(dst, fmt, ap);
	va_end(ap);
	return r;
}

char **strv_free(char **l)
{
	if (!l)
		return NULL;
	for (char **p = l; *p; p++)
		free(*p);
	free(l);
	return NULL;
}

size_t strv_length(char *const *l)
{
	size_t n = 0;

	while (l && l[n])
		n++;
	return n;
}

int strv_push(char ***l, char *value)
{
	size_t n = strv_length(*l);
	char **c;

	c = realloc(*l, sizeof(char *) * (n + 2));
	if (!c) {
		free(value);
		return -ENOMEM;
	}
	c[n] = value;
	c[n + 1] = NULL;
	*l = c;
	return 0;
}

int strv_extend(char ***l, const char *value)
{
	char *c = strdup(value);

	assert(l);

	if (!c)
		return -ENOMEM;
	return strv_push(l, c);
}

bool strv_contains(char *const *l, const char *s)
{
	STRV_FOREACH(i, l)
		if (streq(*i, s))
			return true;
	return false;
}

char **strv_copy(char *const *l)
{
	_cleanup_strv_free_ char **c = calloc(1, sizeof(char *));

	if (!c)
		return NULL;
	for (size_t i = 0; l && l[i]; i++)
		if (strv_extend(&c, l[i]) < 0)
			return NULL;
	return TAKE_PTR(c);
}

char *strv_join(char *const *l, const char *sep)
{
	StrBuf b = {};
	char *ret = NULL;

	strbuf_append(&b, "");
	for (size_t i = 0; l && l[i]; i++) {
		if (i > 0)
			strbuf_append(&b, sep);
		strbuf_append(&b, l[i]);
	}
	return strbuf_steal(&b, &ret) < 0 ? NULL : ret;
}

int strv_split(const char *s, const char *sep, char ***ret)
{
	_cleanup_strv_free_ char **l = NULL;
	size_t n_words = 0, alloc = 1;

	assert(sep);
	assert(ret);

	/* Counted here, the array doubled: one pass, whatever the number of words. */
	l = calloc(alloc, sizeof(char *));
	if (!l)
		return -ENOMEM;

	while (*s) {
		size_t n;

		s += strspn(s, sep);
		n = strcspn(s, sep);
		if (n == 0)
			break;
		if (n_words + 2 > alloc) {
			char **c = reallocarray(l, alloc * 2, sizeof(char *));

			if (!c)
				return -ENOMEM;
			l = c;
			alloc *= 2;
		}
		l[n_words] = strndup(s, n);
		if (!l[n_words])
			return -ENOMEM;
		l[++n_words] = NULL;
		s += n;
	}
	*ret = TAKE_PTR(l);
	return 0;
}

void strbuf_done(StrBuf *b)
{
	assert(b);

	free(b->buf);
	*b = (StrBuf) {};
}

void strbuf_vappendf(StrBuf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	assert(fmt);

	if (b->error)
		return;

	va_copy(aq, ap);
	n = vsnprintf(b->buf ? b->buf + b->len : NULL, b->buf ? b->alloc - b->len : 0, fmt, aq);
	va_end(aq);
	if (n < 0) {
		b->error = -EINVAL;
		return;
	}
	if (!b->buf || b->len + (size_t)n + 1 > b->alloc) {
		size_t want = MAX(b->alloc * 2, b->len + (size_t)n + 1);
		char *p;

		want = MAX(want, (size_t)256);
		p = realloc(b->buf, want);
		if (!p) {
			b->error = -ENOMEM;
			return;
		}
		b->buf = p;
		b->alloc = want;
		vsnprintf(b->buf + b->len, b->alloc - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void strbuf_appendf(StrBuf *b, const char *fmt, ...)
{
	va_list ap;

	assert(b);
	assert(fmt);

	va_start(ap, fmt);
	strbuf_vappendf(b, fmt, ap);
	va_end(ap);
}

void strbuf_append(StrBuf *b, const char *s)
{
	assert(b);

	strbuf_appendf(b, "%s", s);
}

int strbuf_steal(StrBuf *b, char **ret)
{
	int r = b->error;

	assert(ret);

	if (r < 0) {
		strbuf_done(b);
		return r;
	}
	if (!b->buf) {
		b->buf = strdup("");
		if (!b->buf)
			return -ENOMEM;
	}
	*ret = b->buf;
	*b = (StrBuf) {};
	return 0;
}

/* Length of the valid UTF-8 sequence at @p, 0 when there is none. */
static size_t utf8_sequence(const unsigned char *p)
{
	unsigned n, cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2)
		return 0;   /* a continuation byte, or a two-byte overlong form */
	if (p[0] < 0xe0)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] < 0xf0)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] < 0xf5)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (unsigned i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;   /* also at the terminating NUL */
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	if ((cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
		return 0;
	return n;
}

bool utf8_is_valid(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_sequence(p);

		if (n == 0)
			return false;
		p += n;
	}
	return true;
}

char *utf8_escape_invalid(const char *s)
{
	StrBuf b = {};
	char *r = NULL;

	if (utf8_is_valid(s))
		return strdup(s);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_sequence(p);

		if (n == 0) {
			strbuf_appendf(&b, "\\x%02x", *p++);
			continue;
		}
		strbuf_appendf(&b, "%.*s", (int)n, (const char *)p);
		p += n;
	}
	return strbuf_steal(&b, &r) < 0 ? NULL : r;
}

static char *escape_control(const char *s, bool lines)
{
	StrBuf b = {};
	char *r = NULL;

	for (const unsigned char *p = (const unsigned char *)strempty(s); *p;) {
		size_t n = utf8_sequence(p);

		if (n == 0 || (n == 1 && ((*p < 0x20 && (!lines || (*p != '\n' && *p != '\t'))) || *p == 0x7f)) ||
		    (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
			/* Invalid, or a C0/C1 control a terminal would act on: as bytes. */
			for (size_t i = 0; i < MAX(n, (size_t)1); i++)
				strbuf_appendf(&b, "\\x%02x", p[i]);
			p += MAX(n, (size_t)1);
			continue;
		}
		strbuf_appendf(&b, "%.*s", (int)n, (const char *)p);
		p += n;
	}
	if (strbuf_steal(&b, &r) < 0)
		return NULL;
	return r ?: strdup("");
}

char *text_escape_control(const char *s)
{
	return escape_control(s, true);
}

char *text_escape_line(const char *s)
{
	return escape_control(s, false);
}

char *text_bounded(const char *s, size_t max)
{
	_cleanup_free_ char *e = NULL;
	size_t len = strlen(strempty(s));

	if (len <= max)
		return text_escape_line(s);
	e = strndup(s, max);
	if (!e)
		return NULL;
	{
		_cleanup_free_ char *t = text_escape_line(e);

		return t ? strprintf("%s... (%zu bytes)", t, len) : NULL;
	}
}
