/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Scratch trees for the file-reading fuzz targets (see fuzz-tree.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz-tree.h"

static int root_fd = -1;
static char root_path[PATH_MAX];

static void die(const char *what, const char *path)
{
	fprintf(stderr, "fuzz-tree: %s %s: %s\n", what, path, strerror(errno));
	abort();
}

static void clear_at(int dir_fd)
{
	DIR *d;
	struct dirent *de;
	int fd = dup(dir_fd);

	if (fd < 0)
		die("dup", root_path);
	d = fdopendir(fd);
	if (!d)
		die("fdopendir", root_path);
	rewinddir(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dir_fd, de->d_name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM)
			die("unlink", de->d_name);
		int sub = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (sub < 0)
			die("open", de->d_name);
		clear_at(sub);
		close(sub);
		if (unlinkat(dir_fd, de->d_name, AT_REMOVEDIR) < 0)
			die("rmdir", de->d_name);
	}
	closedir(d);
}

void fuzz_tree_clear(int dir_fd)
{
	clear_at(dir_fd);
}

static void remove_root(void)
{
	if (root_fd < 0)
		return;
	clear_at(root_fd);
	close(root_fd);
	rmdir(root_path);
}

int fuzz_tree_root(void)
{
	const char *base;

	if (root_fd >= 0)
		return root_fd;
	base = getenv("TOPOTUNE_FUZZ_TMPDIR");
	if (!base)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR") ?: "/tmp";
	snprintf(root_path, sizeof(root_path), "%s/topotune-fuzz.XXXXXX", base);
	if (!mkdtemp(root_path))
		die("mkdtemp", root_path);
	root_fd = open(root_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		die("open", root_path);
	atexit(remove_root);
	return root_fd;
}

const char *fuzz_tree_path(void)
{
	(void)fuzz_tree_root();
	return root_path;
}

void fuzz_tree_write(int dir_fd, const char *path, const void *data, size_t size)
{
	char buf[PATH_MAX];
	int fd;

	snprintf(buf, sizeof(buf), "%s", path);
	/* Parents only when missing: most files go to directories that exist. */
	fd = openat(dir_fd, buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT) {
		for (char *p = strchr(buf, '/'); p; p = strchr(p + 1, '/')) {
			*p = 0;
			if (mkdirat(dir_fd, buf, 0755) < 0 && errno != EEXIST)
				die("mkdir", buf);
			*p = '/';
		}
		fd = openat(dir_fd, buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	if (fd < 0)
		die("create", buf);
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		die("write", buf);
	close(fd);
}
