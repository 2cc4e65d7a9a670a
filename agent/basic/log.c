/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Leveled logging to stderr; "%m" expands to the error passed in. */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static int log_max_level = LOG_INFO;

void log_set_max_level(int level)
{
	log_max_level = level;
}

int log_get_max_level(void)
{
	return log_max_level;
}

int log_internal(int level, int error, const char *file, int line, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (error < 0)
		error = -error;
	if (level > log_max_level)
		return -error;

	errno = error;
	va_start(ap, fmt);
	if (log_max_level >= LOG_DEBUG)
		fprintf(stderr, "%s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	errno = saved;
	return -error;
}
