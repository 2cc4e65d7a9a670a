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
void json_bool(JsonWriter *w, bool v);
void json_null(JsonWriter *w);
void json_finish(JsonWriter *w);
