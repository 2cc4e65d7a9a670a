/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Prometheus text exposition format, as node_exporter's textfile
 * collector and the Prometheus server parse it. Depends on strutil only.
 */
#include <assert.h>

#include "prom.h"

void prom_family(StrBuf *b, const char *name, const char *type, const char *help)
{
	assert(b && name && type && help);
	strbuf_appendf(b, "# HELP %s ", name);
	/* HELP text escapes only backslash and newline. */
	for (const char *p = help; *p; p++)
		if (*p == '\\')
			strbuf_append(b, "\\\\");
		else if (*p == '\n')
			strbuf_append(b, "\\n");
		else
			strbuf_appendf(b, "%c", *p);
	strbuf_appendf(b, "\n# TYPE %s %s\n", name, type);
}

static void label_value(StrBuf *b, const char *v)
{
	for (const char *p = v; *p; p++)
		if (*p == '\\')
			strbuf_append(b, "\\\\");
		else if (*p == '"')
			strbuf_append(b, "\\\"");
		else if (*p == '\n')
			strbuf_append(b, "\\n");
		else
			strbuf_appendf(b, "%c", *p);
}

static void sample_name(StrBuf *b, const char *name, const char *const *labels)
{
	strbuf_append(b, name);
	if (labels && labels[0]) {
		strbuf_append(b, "{");
		for (size_t i = 0; labels[i] && labels[i + 1]; i += 2) {
			strbuf_appendf(b, "%s%s=\"", i ? "," : "", labels[i]);
			label_value(b, labels[i + 1]);
			strbuf_append(b, "\"");
		}
		strbuf_append(b, "}");
	}
}

void prom_sample(StrBuf *b, const char *name, const char *const *labels, unsigned long long value)
{
	assert(b && name);
	sample_name(b, name, labels);
	strbuf_appendf(b, " %llu\n", value);
}

void prom_sample_int(StrBuf *b, const char *name, const char *const *labels, long long value)
{
	assert(b && name);
	sample_name(b, name, labels);
	strbuf_appendf(b, " %lld\n", value);
}
