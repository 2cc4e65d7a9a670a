/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Streaming JSON output with string escaping. */
#include <assert.h>
#include <math.h>

#include "json.h"

void json_init(JsonWriter *w, FILE *f, bool pretty)
{
	assert(w);
	assert(f);

	*w = (JsonWriter) { .f = f, .pretty = pretty };
}

static void indent(JsonWriter *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (unsigned i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

static void value_prefix(JsonWriter *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (w->need_comma[w->depth])
			fputc(',', w->f);
		w->need_comma[w->depth] = true;
		indent(w);
	}
}

static void begin(JsonWriter *w, char c)
{
	value_prefix(w);
	fputc(c, w->f);
	if (w->depth + 1 < JSON_DEPTH_MAX)
		w->depth++;
	w->need_comma[w->depth] = false;
}

static void end(JsonWriter *w, char c)
{
	bool had = w->need_comma[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (had)
		indent(w);
	fputc(c, w->f);
}

void json_begin_object(JsonWriter *w)
{
	assert(w);

	begin(w, '{');
}

void json_end_object(JsonWriter *w)
{
	assert(w);

	end(w, '}');
}

void json_begin_array(JsonWriter *w)
{
	assert(w);

	begin(w, '[');
}

void json_end_array(JsonWriter *w)
{
	assert(w);

	end(w, ']');
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void json_key(JsonWriter *w, const char *key)
{
	assert(w);
	assert(key);

	value_prefix(w);
	put_string(w->f, key);
	fputs(w->pretty ? ": " : ":", w->f);
	w->after_key = true;
}

void json_string(JsonWriter *w, const char *s)
{
	assert(w);

	value_prefix(w);
	if (s)
		put_string(w->f, s);
	else
		fputs("null", w->f);
}

void json_int(JsonWriter *w, long long v)
{
	assert(w);

	value_prefix(w);
	fprintf(w->f, "%lld", v);
}

void json_double(JsonWriter *w, double v)
{
	char buf[32];

	assert(w);

	if (!isfinite(v)) {
		json_null(w);
		return;
	}
	/* %.17g round-trips; without '.', 'e' or 'n' it is an integer, valid JSON too. */
	snprintf(buf, sizeof(buf), "%.17g", v);
	value_prefix(w);
	fputs(buf, w->f);
}

void json_bool(JsonWriter *w, bool v)
{
	assert(w);

	value_prefix(w);
	fputs(v ? "true" : "false", w->f);
}

void json_null(JsonWriter *w)
{
	assert(w);

	value_prefix(w);
	fputs("null", w->f);
}

void json_finish(JsonWriter *w)
{
	assert(w);

	fputc('\n', w->f);
}

void json_fields(JsonWriter *w, const JsonField *f, size_t n)
{
	assert(w);

	json_begin_object(w);
	for (size_t i = 0; i < n; i++) {
		json_key(w, f[i].key);
		switch (f[i].type) {
		case JSON_FIELD_INT:
			json_int(w, f[i].i);
			break;
		case JSON_FIELD_STRING:
			json_string(w, f[i].s);
			break;
		case JSON_FIELD_BOOL:
			json_bool(w, f[i].b);
			break;
		case JSON_FIELD_STRV:
			json_begin_array(w);
			for (char *const *p = f[i].v; p && *p; p++)
				json_string(w, *p);
			json_end_array(w);
			break;
		}
	}
	json_end_object(w);
}
