/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Root-fd file I/O. Depends on nothing but libc and the kernel's headers.
 * Every read is whole-file (or whole first line) then parse-from-memory:
 * sysfs attributes are small and a single read() gives a consistent
 * snapshot. Every path is resolved beneath the directory fd it is given,
 * with openat2() where the kernel has it and a component walk where it
 * does not (fileio.h says which rules apply to reading and to writing).
 */
#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "fileio.h"
#include "macro.h"
#include "strutil.h"

const char *path_relative(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

/* --- resolution beneath a directory fd --------------------------------- */

/* -1: not decided yet; 0: the component walk; 1: openat2(). */
static int have_openat2 = -1;

void fileio_force_walk(bool walk)
{
	have_openat2 = walk ? 0 : -1;
}

static bool use_openat2(void)
{
	if (have_openat2 < 0) {
		const char *e = getenv("TOPOTUNE_FILEIO_WALK");
		struct open_how oh = { .flags = O_PATH | O_CLOEXEC };
		long fd;

		if (e && streq(e, "1"))
			return (have_openat2 = 0);
		/*
		 * Asked once: kernels before 5.6 say ENOSYS, and container seccomp
		 * filters written before openat2() existed often say EPERM.
		 */
		fd = syscall(SYS_openat2, AT_FDCWD, "/", &oh, sizeof(oh));
		if (fd >= 0)
			close((int)fd);
		have_openat2 = fd >= 0 || (errno != ENOSYS && errno != EPERM);
	}
	return have_openat2 > 0;
}

/* Symlinks followed in one resolution, as the kernel counts them (MAXSYMLINKS). */
#define WALK_LINKS_MAX 40U
/* Directories held open on the way down: deeper paths fail with -ENAMETOOLONG. */
#define WALK_DEPTH_MAX 64U

/*
 * openat2()'s RESOLVE_IN_ROOT (@follow) or RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS
 * (!@follow) done by hand, for kernels without it: every component is opened
 * with O_NOFOLLOW and checked; a symlink is read and its target spliced into
 * what is left of the path, an absolute one starting again at @dir_fd. The
 * directories passed are held open, so ".." never leaves @dir_fd and a
 * directory renamed or replaced meanwhile cannot lead elsewhere.
 */
static int walk_open(int dir_fd, const char *path, int flags, mode_t mode, bool follow)
{
	int stack[WALK_DEPTH_MAX];
	size_t depth = 0;
	unsigned links = 0;
	char *buf, *p;
	int r;

	buf = strdup(path);
	if (!buf)
		return -ENOMEM;
	p = buf;
	for (;;) {
		int cur = depth > 0 ? stack[depth - 1] : dir_fd;
		char target[PATH_MAX], *comp, *rest;
		struct stat st;
		bool last, link = false;
		ssize_t n;
		int fd;

		while (*p == '/')
			p++;
		comp = *p ? p : (char *)".";
		p += strcspn(p, "/");
		if (*p)
			*p++ = '\0';
		while (*p == '/')
			p++;
		last = !*p;

		if (streq(comp, "..")) {
			if (depth > 0)
				safe_close(stack[--depth]);
			else if (!follow) {
				r = -EXDEV;   /* as RESOLVE_BENEATH */
				goto out;
			}
			if (!last)
				continue;
			comp = (char *)".";
		} else if (streq(comp, ".") && !last)
			continue;
		cur = depth > 0 ? stack[depth - 1] : dir_fd;

		if (last) {
			fd = openat(cur, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode);
			if (fd >= 0 && (flags & O_PATH)) {
				/* O_PATH|O_NOFOLLOW gives the link itself. */
				if (fstat(fd, &st) < 0) {
					r = negative_errno();
					safe_close(fd);
					goto out;
				}
				if (S_ISLNK(st.st_mode)) {
					safe_close(fd);
					link = true;
				}
			} else if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
				r = negative_errno();
				if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
					goto out;
				link = true;
			} else if (fd < 0) {
				r = negative_errno();
				goto out;
			}
			if (!link) {
				r = fd;
				goto out;
			}
		} else {
			fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0) {
				r = negative_errno();
				goto out;
			}
			if (fstat(fd, &st) < 0) {
				r = negative_errno();
				safe_close(fd);
				goto out;
			}
			if (S_ISDIR(st.st_mode)) {
				if (depth >= WALK_DEPTH_MAX) {
					safe_close(fd);
					r = -ENAMETOOLONG;
					goto out;
				}
				stack[depth++] = fd;
				continue;
			}
			safe_close(fd);
			if (!S_ISLNK(st.st_mode)) {
				r = -ENOTDIR;
				goto out;
			}
		}

		/* @comp is a symlink. */
		if (!follow || ++links > WALK_LINKS_MAX) {
			r = -ELOOP;
			goto out;
		}
		n = readlinkat(cur, comp, target, sizeof(target) - 1);
		if (n < 0) {
			r = negative_errno();
			goto out;
		}
		if (n == 0) {
			r = -ENOENT;
			goto out;
		}
		target[n] = '\0';
		if (target[0] == '/')
			while (depth > 0)
				safe_close(stack[--depth]);
		rest = malloc((size_t)n + 1 + strlen(p) + 1);
		if (!rest) {
			r = -ENOMEM;
			goto out;
		}
		sprintf(rest, "%s%s%s", target, *p ? "/" : "", p);
		free(buf);
		buf = p = rest;
	}
out:
	while (depth > 0)
		safe_close(stack[--depth]);
	free(buf);
	return r;
}

/* openat2(); -ENOSYS (and the walk from then on) where the kernel has none. */
static int openat2_retry(int dir_fd, const char *rel, const struct open_how *oh)
{
	for (unsigned i = 0; i < 16; i++) {
		long fd = syscall(SYS_openat2, dir_fd, rel, oh, sizeof(*oh));

		if (fd >= 0)
			return (int)fd;
		/* A rename somewhere in the tree raced with "..": the kernel asks to retry. */
		if (errno == EAGAIN)
			continue;
		if (errno == ENOSYS)
			have_openat2 = 0;
		return negative_errno();
	}
	return -EAGAIN;
}

int open_beneath(int dir_fd, const char *path, int flags, unsigned mode, FileResolve how)
{
	const char *rel = path_relative(path);

	if (use_openat2()) {
		struct open_how oh = {
			.flags = (uint64_t)(flags | O_CLOEXEC),
			.mode = (flags & O_CREAT) ? mode : 0,
			.resolve = how == FILEIO_READ ? RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
						       : RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		int fd = openat2_retry(dir_fd, rel, &oh);

		if (fd != -ENOSYS)
			return fd;
	}
	return walk_open(dir_fd, rel, flags, (mode_t)mode, how == FILEIO_READ);
}

int open_parent_beneath(int dir_fd, const char *path, int *ret_fd, const char **ret_name)
{
	_cleanup_free_ char *parent = NULL;
	const char *rel = path_relative(path), *name;
	int fd;

	name = strrchr(rel, '/');
	name = name ? name + 1 : rel;
	if (!*name || streq(name, ".") || streq(name, ".."))
		return -EINVAL;
	parent = strndup(rel, (size_t)(name - rel));
	if (!parent)
		return -ENOMEM;
	fd = open_beneath(dir_fd, parent, O_PATH | O_DIRECTORY, 0, FILEIO_WRITE);
	if (fd < 0)
		return fd;
	*ret_fd = fd;
	*ret_name = name;
	return 0;
}

int mkdir_beneath(int dir_fd, const char *path, unsigned mode)
{
	_cleanup_close_ int fd = -EBADF;
	const char *name;
	int r;

	assert(path);

	r = open_parent_beneath(dir_fd, path, &fd, &name);
	if (r < 0)
		return r;
	return mkdirat(fd, name, (mode_t)mode) < 0 ? negative_errno() : 0;
}

int unlink_beneath(int dir_fd, const char *path, bool dir)
{
	_cleanup_close_ int fd = -EBADF;
	const char *name;
	int r;

	assert(path);

	r = open_parent_beneath(dir_fd, path, &fd, &name);
	if (r < 0)
		return r;
	return unlinkat(fd, name, dir ? AT_REMOVEDIR : 0) < 0 ? negative_errno() : 0;
}

/* A file to read: never a FIFO or a device that blocks open() or read(). */
static int open_regular(int dir_fd, const char *path, FileResolve how)
{
	struct stat st;
	int fd;

	fd = open_beneath(dir_fd, path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, how);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		int r = negative_errno();

		safe_close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		safe_close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
	}
	return fd;
}

int root_open(const char *path, int *ret_fd)
{
	int fd;

	assert(ret_fd);

	fd = open(path ?: "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_PATH);
	if (fd < 0)
		return negative_errno();
	*ret_fd = fd;
	return 0;
}

int read_file_at(int dir_fd, const char *path, size_t max, char **ret, size_t *ret_size)
{
	assert(path);
	assert(ret);

	return read_file_beneath(dir_fd, path, FILEIO_READ, max, ret, ret_size);
}

int read_file_beneath(int dir_fd, const char *path, FileResolve how, size_t max, char **ret, size_t *ret_size)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	size_t size = 0, alloc = 4096;

	assert(path);
	assert(ret);

	if (max == 0)
		max = READ_FILE_MAX;

	fd = open_regular(dir_fd, path, how);
	if (fd < 0)
		return fd;

	buf = malloc(alloc);
	if (!buf)
		return -ENOMEM;

	for (;;) {
		ssize_t n;

		if (alloc - size < 2) {
			char *p;

			if (alloc >= max + 1) {
				char extra;

				/* Exactly @max bytes is still within @max: only a byte more is too big. */
				n = read(fd, &extra, 1);
				if (n < 0 && errno == EINTR)
					continue;
				if (n < 0)
					return negative_errno();
				if (n == 0)
					break;
				return -EFBIG;
			}
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

	assert(path);
	assert(ret);

	fd = open_regular(dir_fd, path, FILEIO_READ);
	if (fd < 0)
		return fd;
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

	assert(path);
	assert(ret);

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

/* The first line of @fd into @buf, as read_line_buf_at() says. */
static int read_line_fd(int fd, char *buf, size_t size)
{
	size_t have = 0;
	char *nl;

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

int read_line_buf_at(int dir_fd, const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = -EBADF;

	assert(path);
	assert(buf);

	if (size == 0)
		return -ENOBUFS;
	fd = open_regular(dir_fd, path, FILEIO_READ);
	if (fd < 0)
		return fd;
	return read_line_fd(fd, buf, size);
}

/*
 * What open_regular() proves with an fstat() per file, proven here by
 * where the file is and by how it is opened: see fileio.h.
 */
static int open_attr(int dir_fd, const char *path)
{
	const char *rel = path_relative(path);

	if (use_openat2()) {
		struct open_how oh = {
			.flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
		};
		int fd = openat2_retry(dir_fd, rel, &oh);

		if (fd != -ENOSYS)
			return fd;
	}
	/* The walk (kernels before 5.6) keeps the fstat(): it makes several calls per component anyway. */
	return open_regular(dir_fd, rel, FILEIO_READ);
}

int read_attr_at(int dir_fd, const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = -EBADF;

	assert(path);
	assert(buf);

	if (size == 0)
		return -ENOBUFS;
	fd = open_attr(dir_fd, path);
	if (fd < 0)
		return fd;
	/* A directory opens and says -EISDIR at read(), as open_regular() says it. */
	return read_line_fd(fd, buf, size);
}

int read_int_at(int dir_fd, const char *path, int *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	assert(path);
	assert(ret);

	r = read_line_at(dir_fd, path, &s);
	if (r < 0)
		return r;
	return safe_atoi(s, ret);
}

int read_unsigned_at(int dir_fd, const char *path, unsigned *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	assert(path);
	assert(ret);

	r = read_line_at(dir_fd, path, &s);
	if (r < 0)
		return r;
	return safe_atou(s, ret);
}

int write_string_at(int dir_fd, const char *path, const char *value)
{
	_cleanup_close_ int fd = -EBADF;
	size_t len = strlen(value);
	struct stat st;
	ssize_t n;
	int r;

	/* No O_TRUNC: what the name leads to is checked before anything changes. */
	fd = open_beneath(dir_fd, path, O_WRONLY | O_NOCTTY | O_NONBLOCK, 0, FILEIO_WRITE);
	if (fd < 0)
		return fd;
	/* sysfs, procfs, cgroupfs and debugfs attributes are all regular files. */
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	/*
	 * A kernel attribute has one name. A second one is a hard link a
	 * --root tree can hold to a file outside it, which no path check sees:
	 * writing would go through to that file.
	 */
	if (st.st_nlink > 1)
		return -EMLINK;
	/* What O_TRUNC did at open(), now that the file is known to be ours. */
	if (ftruncate(fd, 0) < 0)
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
	_cleanup_close_ int parent = -EBADF, fd = -EBADF;
	_cleanup_free_ char *tmp = NULL;
	size_t len = strlen(value);
	const char *name;
	struct stat st;
	ssize_t n;
	int r;

	r = open_parent_beneath(dir_fd, path, &parent, &name);
	if (r < 0)
		return r;
	/*
	 * What is there is replaced by rename(), never written through: a
	 * symlink is refused, a hard link's other names keep their content.
	 */
	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && !S_ISREG(st.st_mode))
		return S_ISLNK(st.st_mode) ? -ELOOP : S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
	tmp = strprintf(".#%s.topotune-tmp", name);
	if (!tmp)
		return -ENOMEM;
	(void)unlinkat(parent, tmp, 0);
	fd = openat(parent, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, (mode_t)mode);
	if (fd < 0)
		return negative_errno();
	/* The mode asked for, not narrowed by the umask (topotuned.service: UMask=0077). */
	if (fchmod(fd, (mode_t)mode) < 0) {
		r = negative_errno();
		goto fail;
	}
	n = write(fd, value, len);
	if (n < 0 || (size_t)n != len) {
		r = n < 0 ? negative_errno() : -EIO;
		goto fail;
	}
	if (close(TAKE_FD(fd)) < 0 || renameat(parent, tmp, parent, name) < 0) {
		r = negative_errno();
		goto fail;
	}
	return 0;
fail:
	(void)unlinkat(parent, tmp, 0);
	return r;
}

int create_file_remove_stale_at(int dir_fd, const char *path)
{
	_cleanup_close_ int parent = -EBADF;
	_cleanup_free_ char *tmp = NULL;
	const char *name;
	int r;

	r = open_parent_beneath(dir_fd, path, &parent, &name);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	tmp = strprintf(".#%s.topotune-tmp", name);
	if (!tmp)
		return -ENOMEM;
	if (unlinkat(parent, tmp, 0) < 0 && errno != ENOENT)
		return negative_errno();
	return 0;
}

bool path_exists_at(int dir_fd, const char *path)
{
	_cleanup_close_ int fd = open_beneath(dir_fd, path, O_PATH, 0, FILEIO_READ);

	return fd >= 0;
}

bool dir_exists_at(int dir_fd, const char *path)
{
	_cleanup_close_ int fd = open_beneath(dir_fd, path, O_PATH | O_DIRECTORY, 0, FILEIO_READ);

	return fd >= 0;
}
