/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Leveled logging to stderr; "%m" expands to the error passed in. Messages
 * quote files and callers, so control characters and invalid UTF-8 are
 * written as \xNN: a profile cannot drive the terminal or the journal.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"
#include "strutil.h"

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
	char *msg = NULL, *text = NULL;
	va_list ap;

	if (error < 0)
		error = -error;
	if (level > log_max_level)
		return -error;

	errno = error;
	va_start(ap, fmt);
	if (log_max_level >= LOG_DEBUG)
		fprintf(stderr, "%s:%d: ", file, line);
	if (vasprintf(&msg, fmt, ap) >= 0)
		text = text_escape_control(msg);
	va_end(ap);
	fputs(text ?: msg ?: "(out of memory)", stderr);
	free(text);
	free(msg);
	fputc('\n', stderr);
	errno = saved;
	return -error;
}
