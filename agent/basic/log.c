/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Leveled logging to stderr; "%m" expands to the error passed in. Messages
 * quote files and callers, so control characters and invalid UTF-8 are
 * written as \xNN: a profile cannot drive the terminal or the journal. On
 * the journal's stream newlines are escaped too: one message, one record.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "strutil.h"

static int log_max_level = LOG_INFO;
static bool log_level_prefix;

/*
 * systemd connects a service's stderr to journald and says so in
 * $JOURNAL_STREAM ("DEVICE:INODE" of that stream). journald reads a "<N>"
 * prefix as the line's priority (SyslogLevelPrefix=yes, the default), as
 * sd-daemon(3) describes; without one every line would be filed at the
 * unit's SyslogLevel= (info), and "journalctl -p warning" would find no
 * warning. On a terminal or a pipe the prefix stays off.
 */
void log_open(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	log_level_prefix = e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) >= 0 &&
			   (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

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
	if (log_level_prefix)
		fprintf(stderr, "<%d>", level);
	if (log_max_level >= LOG_DEBUG)
		fprintf(stderr, "%s:%d: ", file, line);
	/*
	 * journald makes a record of each line of the stream, "<N>" prefix and
	 * all: a newline in a caller's text (a HoldProfile reason) would forge
	 * a record with a priority of its choosing. One line there.
	 */
	if (vasprintf(&msg, fmt, ap) >= 0)
		text = log_level_prefix ? text_escape_line(msg) : text_escape_control(msg);
	va_end(ap);
	fputs(text ?: msg ?: "(out of memory)", stderr);
	free(text);
	free(msg);
	fputc('\n', stderr);
	errno = saved;
	return -error;
}
