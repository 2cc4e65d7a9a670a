/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Root-fd file I/O. Depends on nothing but libc. Every read is whole-file
 * (or whole first line) then parse-from-memory: sysfs attributes are small
 * and a single read() gives a consistent snapshot.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "fileio.h"
#include "macro.h"
#include "strutil.h"

const char *path_relative(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

int root_open(const char *path, int *ret_fd)
{
	int fd;

	fd = open(path ?: "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_PATH);
	if (fd < 0)
		return negative_errno();
	*ret_fd = fd;
	return 0;
}

int read_file_at(int dir_fd, const char *path, size_t max, char **ret, size_t *ret_size)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	size_t size = 0, alloc = 4096;

	if (max == 0)
		max = READ_FILE_MAX;

	fd = openat(dir_fd, path_relative(path), O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negative_errno();

	buf = malloc(alloc);
	if (!buf)
		return -ENOMEM;

	for (;;) {
		ssize_t n;

		if (alloc - size < 2) {
			char *p;

			if (alloc >= max + 1)
				return -EFBIG;
			alloc = MIN(alloc * 2, max + 1);
			p = realloc(buf, alloc);
			if (!p)
				return -ENOMEM;
			buf = p;
		}

		n = read(fd, buf + size, alloc - size - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (n == 0)
			break;
		size += (size_t)n;
		if (size > max)
			return -EFBIG;
	}

	buf[size] = '\0';
	if (ret_size)
		*ret_size = size;
	*ret = TAKE_PTR(buf);
	return 0;
}

int read_head_at(int dir_fd, const char *path, size_t size, char **ret)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	size_t have = 0;

	fd = openat(dir_fd, path_relative(path), O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negative_errno();
	buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	while (have < size) {
		ssize_t n = read(fd, buf + have, size - have);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	buf[have] = '\0';
	*ret = TAKE_PTR(buf);
	return 0;
}

int read_line_at(int dir_fd, const char *path, char **ret)
{
	char *buf, *nl;
	int r;

	r = read_file_at(dir_fd, path, 0, &buf, NULL);
	if (r < 0)
		return r;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	strip_trailing(buf);
	*ret = buf;
	return 0;
}

int read_line_buf_at(int dir_fd, const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = -EBADF;
	size_t have = 0;
	char *nl;

	if (size == 0)
		return -ENOBUFS;
	fd = openat(dir_fd, path_relative(path), O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negative_errno();

	/* Short reads and EINTR only mean "read again", until a newline or EOF. */
	for (;;) {
		char one, *to = buf + have;
		size_t want = size - 1 - have;
		ssize_t n;

		if (want == 0) {
			/* Full: the line fits if a newline or EOF comes next. */
			to = &one;
			want = 1;
		}
		n = read(fd, to, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (n == 0)
			break;
		nl = memchr(to, '\n', (size_t)n);
		if (to == &one) {
			if (!nl)
				return -ENOBUFS;
			break;
		}
		have += (size_t)n;
		if (nl) {
			have = (size_t)(nl - buf);
			break;
		}
	}
	buf[have] = '\0';
	/* A NUL inside the line ends it, as for read_line_at()'s string. */
	return (int)strlen(strip_trailing(buf));
}

int read_int_at(int dir_fd, const char *path, int *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = read_line_at(dir_fd, path, &s);
	if (r < 0)
		return r;
	return safe_atoi(s, ret);
}

int read_unsigned_at(int dir_fd, const char *path, unsigned *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = read_line_at(dir_fd, path, &s);
	if (r < 0)
		return r;
	return safe_atou(s, ret);
}

int write_string_at(int dir_fd, const char *path, const char *value)
{
	_cleanup_close_ int fd = -EBADF;
	size_t len = strlen(value);
	ssize_t n;
	int r;

	fd = openat(dir_fd, path_relative(path), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_TRUNC);
	if (fd < 0)
		return negative_errno();

	do
		n = write(fd, value, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return negative_errno();
	if ((size_t)n != len)
		return -EIO;

	r = close(TAKE_FD(fd));
	if (r < 0)
		return negative_errno();
	return 0;
}

int create_file_at(int dir_fd, const char *path, const char *value, unsigned mode)
{
	_cleanup_close_ int fd = -EBADF;
	size_t len = strlen(value);

	fd = openat(dir_fd, path_relative(path), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, (mode_t)mode);
	if (fd < 0)
		return negative_errno();
	if (write(fd, value, len) != (ssize_t)len)
		return errno > 0 ? -errno : -EIO;
	if (close(TAKE_FD(fd)) < 0)
		return negative_errno();
	return 0;
}

bool path_exists_at(int dir_fd, const char *path)
{
	return faccessat(dir_fd, path_relative(path), F_OK, AT_EACCESS) >= 0;
}

bool dir_exists_at(int dir_fd, const char *path)
{
	struct stat st;

	if (fstatat(dir_fd, path_relative(path), &st, 0) < 0)
		return false;
	return S_ISDIR(st.st_mode);
}
