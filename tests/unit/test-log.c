/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Log lines carry their "<N>" priority exactly when stderr is the stream
 * $JOURNAL_STREAM names (a service under systemd), so that journald files
 * warnings and errors at their priority.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "strutil.h"
#include "test.h"

/* Log one warning and one error with stderr on a fresh file; return what was written. */
static void logged(const char *journal_stream_of, char *buf, size_t size)
{
	char path[] = "/tmp/test-log.XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	struct stat st;
	char env[64];
	ssize_t n;

	check(fd >= 0 && saved >= 0);
	unlink(path);
	check(fstat(fd, &st) == 0);
	if (!journal_stream_of)
		unsetenv("JOURNAL_STREAM");
	else if (streq(journal_stream_of, "this")) {
		snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
		setenv("JOURNAL_STREAM", env, 1);
	} else
		setenv("JOURNAL_STREAM", journal_stream_of, 1);
	fflush(stderr);
	check(dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	log_open();
	log_warning("no cpuset in %s", "the root");
	log_error("apply failed");
	/* A caller's text with a newline and a priority prefix (a HoldProfile reason). */
	log_notice("held: %s", "x\n<0>forged\tline");
	log_debug("not shown");
	fflush(stderr);
	check(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
	close(saved);
	n = pread(fd, buf, size - 1, 0);
	check(n >= 0);
	buf[n < 0 ? 0 : n] = '\0';
	close(fd);
}

int main(void)
{
	char buf[256];

	logged("this", buf, sizeof(buf));
	/* On the journal's stream one message is one line: no record forged. */
	check_str(buf, "<4>no cpuset in the root\n<3>apply failed\n<5>held: x\\x0a<0>forged\\x09line\n");
	logged(NULL, buf, sizeof(buf));
	check_str(buf, "no cpuset in the root\napply failed\nheld: x\n<0>forged\tline\n");
	/* Another stream (stderr redirected by the service itself): no prefix. */
	logged("1:2", buf, sizeof(buf));
	check_str(buf, "no cpuset in the root\napply failed\nheld: x\n<0>forged\tline\n");
	logged("garbage", buf, sizeof(buf));
	check_str(buf, "no cpuset in the root\napply failed\nheld: x\n<0>forged\tline\n");
	/* What the bus echoes of a caller (HoldProfile's reason): one line, bounded. */
	{
		_cleanup_free_ char *t = text_bounded("a\nb\tc", 200);

		check_str(t, "a\\x0ab\\x09c");
	}
	return test_end("log");
}
