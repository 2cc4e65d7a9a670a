/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor of sysfs discovery: read each file of a list once, whole,
 * below a root directory, and do nothing else. bench/discovery.sh feeds it
 * the exact files topotunectl opened (from strace), so topotunectl's time
 * minus this program's time is what topotune spends beyond the unavoidable
 * open/read/close of its inputs (parsing, the model, output, process and
 * library start-up beyond a libc-only program).
 *
 *   floor [-1] [-t] ROOT LIST     LIST: one path per line, relative to ROOT
 *
 * -1: stop at the first short read instead of reading until read() returns
 * 0. A sysfs attribute arrives whole in its first read(), so this is the
 * floor of a reader that saves the second, empty read() per file.
 * -t: also print the time of the open/read/close loop alone, in
 * microseconds (without process start-up), for per-class breakdowns.
 *
 * Prints "FILES files, BYTES bytes"; exit 1 if any file could not be read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 16];

int main(int argc, char **argv)
{
	unsigned long files = 0, bytes = 0, failed = 0;
	int single = 0, timed = 0, opt;
	struct timespec t0, t1;
	char *list = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int root;

	while ((opt = getopt(argc, argv, "1t")) >= 0)
		switch (opt) {
		case '1':
			single = 1;
			break;
		case 't':
			timed = 1;
			break;
		default:
			return 2;
		}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: %s [-1] [-t] ROOT LIST\n", argv[0]);
		return 2;
	}
	root = open(argv[optind], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		fprintf(stderr, "%s: %s\n", argv[optind], strerror(errno));
		return 2;
	}
	f = fopen(argv[optind + 1], "re");
	if (!f) {
		fprintf(stderr, "%s: %s\n", argv[optind + 1], strerror(errno));
		return 2;
	}
	/* The list is read first, so that -t times the reads of the tree alone. */
	char **paths = NULL;
	size_t n_paths = 0;

	while ((len = getline(&list, &cap, f)) > 0) {
		char **p;

		if (list[len - 1] == '\n')
			list[--len] = 0;
		if (len == 0)
			continue;
		p = realloc(paths, (n_paths + 1) * sizeof(char *));
		if (!p || !(p[n_paths] = strdup(list[0] == '/' ? list + 1 : list))) {
			fprintf(stderr, "out of memory\n");
			return 2;
		}
		paths = p;
		n_paths++;
	}
	free(list);
	fclose(f);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < n_paths; i++) {
		ssize_t n;
		int fd;

		fd = openat(root, paths[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			failed++;
			continue;
		}
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			bytes += (unsigned long)n;
			if (single && (size_t)n < sizeof(buf))
				break;
		}
		if (n < 0)
			failed++;
		close(fd);
		files++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (size_t i = 0; i < n_paths; i++)
		free(paths[i]);
	free(paths);
	printf("%lu files, %lu bytes", files, bytes);
	if (timed)
		printf(" in %ld us", (long)((t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000));
	printf("\n");
	if (failed)
		fprintf(stderr, "%lu files could not be read\n", failed);
	return failed ? 1 : 0;
}
