/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdio.h>

/*
 * A tiny streaming JSON writer for --json output. It tracks nesting only to
 * place commas; callers are trusted to balance begin/end.
 */
#define JSON_DEPTH_MAX 32

typedef struct JsonWriter {
	FILE *f;
	unsigned depth;
	bool need_comma[JSON_DEPTH_MAX];
	bool after_key;
	bool pretty;
} JsonWriter;

void json_init(JsonWriter *w, FILE *f, bool pretty);
void json_begin_object(JsonWriter *w);
void json_end_object(JsonWriter *w);
void json_begin_array(JsonWriter *w);
void json_end_array(JsonWriter *w);
void json_key(JsonWriter *w, const char *key);
void json_string(JsonWriter *w, const char *s);   /* NULL writes null */
void json_int(JsonWriter *w, long long v);
/* A finite double with 17 significant digits (round-trips); null for NaN and infinities. */
void json_double(JsonWriter *w, double v);
void json_bool(JsonWriter *w, bool v);
void json_null(JsonWriter *w);
void json_finish(JsonWriter *w);

/* One field of a row: a key and its value. */
typedef enum JsonFieldType {
	JSON_FIELD_INT,
	JSON_FIELD_STRING,
	JSON_FIELD_BOOL,
	JSON_FIELD_STRV,   /* an array of strings; NULL: empty */
} JsonFieldType;

typedef struct JsonField {
	const char *key;
	JsonFieldType type;
	long long i;
	const char *s;
	bool b;
	char *const *v;
} JsonField;

#define JSON_INT(k, x) { .key = (k), .type = JSON_FIELD_INT, .i = (x) }
#define JSON_STR(k, x) { .key = (k), .type = JSON_FIELD_STRING, .s = (x) }
#define JSON_BOOL(k, x) { .key = (k), .type = JSON_FIELD_BOOL, .b = (x) }
#define JSON_STRV(k, x) { .key = (k), .type = JSON_FIELD_STRV, .v = (x) }

/* A row as one object of @n fields. */
void json_fields(JsonWriter *w, const JsonField *f, size_t n);
#define json_row(w, ...)                                                                        \
	json_fields((w), (const JsonField[]) { __VA_ARGS__ },                                     \
		    sizeof((const JsonField[]) { __VA_ARGS__ }) / sizeof(JsonField))
