/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Corpus replay for compilers without libFuzzer (gcc): feed every file named
 * on the command line, or found in a directory named there, to the target's
 * LLVMFuzzerTestOneInput() once, in name order. A crash or a failed property
 * aborts the process, which fails the meson test; the sanitizer build turns
 * memory errors into the same.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static int replay_file(const char *path)
{
	uint8_t *buf = NULL;
	size_t size = 0, cap = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "%s: %m\n", path);
		return -errno;
	}
	for (;;) {
		size_t n;

		if (size == cap) {
			uint8_t *b = realloc(buf, (cap = cap ? cap * 2 : 4096));

			if (!b)
				abort();
			buf = b;
		}
		n = fread(buf + size, 1, cap - size, f);
		if (n == 0)
			break;
		size += n;
	}
	fclose(f);
	/* An exact-size copy, so that ASan sees reads past the input's end. */
	uint8_t *exact = malloc(size ?: 1);

	if (!exact)
		abort();
	memcpy(exact, buf, size);
	free(buf);
	fprintf(stderr, "replay %s (%zu bytes)\n", path, size);
	LLVMFuzzerTestOneInput(exact, size);
	free(exact);
	return 0;
}

static int filter(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

int main(int argc, char **argv)
{
	unsigned n = 0, failed = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct dirent **list;
		struct stat st;
		int m;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "%s: %m\n", argv[i]);
			failed++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed += replay_file(argv[i]) < 0;
			n++;
			continue;
		}
		m = scandir(argv[i], &list, filter, alphasort);
		if (m < 0) {
			fprintf(stderr, "%s: %m\n", argv[i]);
			failed++;
			continue;
		}
		for (int j = 0; j < m; j++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", argv[i], list[j]->d_name);
			failed += replay_file(path) < 0;
			n++;
			free(list[j]);
		}
		free(list);
	}
	printf("%u inputs replayed, %u unreadable\n", n, failed);
	if (n == 0) {
		fprintf(stderr, "no inputs: a replay that runs nothing cannot fail\n");
		return 1;
	}
	return failed ? 1 : 0;
}
