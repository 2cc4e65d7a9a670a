/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor of sysfs discovery: read each file of a list once, whole,
 * below a root directory, and do nothing else. bench/discovery.sh feeds it
 * the exact files topotunectl opened (from strace), so topotunectl's time
 * minus this program's time is what topotune spends beyond the unavoidable
 * open/read/close of its inputs (parsing, the model, output, process and
 * library start-up beyond a libc-only program).
 *
 *   floor ROOT LIST     LIST: one path per line, relative to ROOT
 *
 * Prints "FILES files, BYTES bytes"; exit 1 if any file could not be read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[1 << 16];

int main(int argc, char **argv)
{
	unsigned long files = 0, bytes = 0, failed = 0;
	char *list = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int root;

	if (argc != 3) {
		fprintf(stderr, "usage: %s ROOT LIST\n", argv[0]);
		return 2;
	}
	root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	f = fopen(argv[2], "re");
	if (!f) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	while ((len = getline(&list, &cap, f)) > 0) {
		ssize_t n;
		int fd;

		if (list[len - 1] == '\n')
			list[--len] = 0;
		if (len == 0)
			continue;
		fd = openat(root, list[0] == '/' ? list + 1 : list, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			failed++;
			continue;
		}
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			bytes += (unsigned long)n;
		if (n < 0)
			failed++;
		close(fd);
		files++;
	}
	free(list);
	fclose(f);
	printf("%lu files, %lu bytes\n", files, bytes);
	if (failed)
		fprintf(stderr, "%lu files could not be read\n", failed);
	return failed ? 1 : 0;
}
