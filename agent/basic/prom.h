/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Writing the Prometheus text exposition format (version 0.0.4): a family's
 * HELP and TYPE lines, then its samples, label values escaped. No project
 * knowledge; the callers decide names and labels.
 */

#include "strutil.h"

/* "# HELP @name @help\n# TYPE @name @type\n"; @type: "gauge", "counter". */
void prom_family(StrBuf *b, const char *name, const char *type, const char *help);

/*
 * One sample: @name{@labels} @value. @labels is NULL or alternating
 * label names and values, NULL-terminated; values are escaped here.
 */
void prom_sample(StrBuf *b, const char *name, const char *const *labels, unsigned long long value);

/* The same with a signed value: a gauge that may be below 0 (relax_domain_level -1). */
void prom_sample_int(StrBuf *b, const char *name, const char *const *labels, long long value);
