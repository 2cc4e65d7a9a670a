/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * All file access of topotune goes through a directory fd that stands for the
 * root of the system being inspected ("/" in production, a fake tree in tests).
 * Paths given to these helpers are relative to that fd; a leading '/' is
 * ignored so that callers may write the familiar absolute spelling.
 */

#define READ_FILE_MAX (16U * 1024U * 1024U)

int root_open(const char *path, int *ret_fd);

/*
 * Nothing outside the root fd is ever read or written, whatever symlinks a
 * tree holds. Two rules, one for each direction:
 *
 * FILEIO_READ: symlinks are followed as if @dir_fd were "/" (openat2()'s
 *   RESOLVE_IN_ROOT): an absolute target starts again at @dir_fd, ".." stops
 *   there. The kernel's own links in sysfs (cpuN/nodeM -> ../../node/nodeM,
 *   subsystem) resolve as they do on the live system, and so does an
 *   absolute link in a real sysfs with --root /; a link in a dump that
 *   points at the dumping machine's /etc lands in the dump's /etc. Magic
 *   links (/proc/PID/fd/N, /proc/PID/exe) are refused: they lead anywhere.
 *   The rule is relative to the fd given: readers passed a subdirectory fd
 *   stay beneath that subdirectory.
 *
 * FILEIO_WRITE: no symlink at all, in any component (RESOLVE_BENEATH |
 *   RESOLVE_NO_SYMLINKS): -ELOOP; a ".." above @dir_fd: -EXDEV. Every file
 *   topotune writes (sysctls, debugfs, cgroupfs, its record in /run, the
 *   bootloader drop-in) is a plain path on a real system; a link on the way
 *   was planted, and following it even inside the root would write a file
 *   nobody chose. The applier writes only through this rule.
 *
 * openat2() is used where the kernel has it (5.6); where it says ENOSYS (or
 * EPERM, from a seccomp filter that predates it) a component walk
 * (O_NOFOLLOW, readlinkat(), the directories held open) gives the same
 * answers. TOPOTUNE_FILEIO_WALK=1 in the environment, or
 * fileio_force_walk(true), forces the walk, for tests.
 */
typedef enum FileResolve {
	FILEIO_READ,
	FILEIO_WRITE,
} FileResolve;

/* openat() beneath @dir_fd by @how's rule (O_CLOEXEC implied); returns the fd or -errno. */
int open_beneath(int dir_fd, const char *path, int flags, unsigned mode, FileResolve how);
/* The parent directory of @path (O_PATH, FILEIO_WRITE) and the last component's name in @path. */
int open_parent_beneath(int dir_fd, const char *path, int *ret_fd, const char **ret_name);
int mkdir_beneath(int dir_fd, const char *path, unsigned mode);
int unlink_beneath(int dir_fd, const char *path, bool dir);
void fileio_force_walk(bool walk);

/*
 * The readers accept regular files only (a FIFO or a device would block
 * open() or read()): -EISDIR for a directory, -EBADFD for anything else.
 */

/* Read a whole file; the buffer is NUL-terminated. */
int read_file_at(int dir_fd, const char *path, size_t max, char **ret, size_t *ret_size);
/* The same by @how's rule: FILEIO_WRITE for files topotune writes itself. */
int read_file_beneath(int dir_fd, const char *path, FileResolve how, size_t max, char **ret, size_t *ret_size);

/*
 * At most the first @size bytes (NUL-terminated), for files that are long
 * but read from the start only, like /proc/cpuinfo on a 640-CPU machine.
 */
int read_head_at(int dir_fd, const char *path, size_t size, char **ret);

/* First line with trailing whitespace removed. */
int read_line_at(int dir_fd, const char *path, char **ret);

/*
 * The first line into @buf of @size bytes, trailing whitespace removed, as
 * read_line_at() gives it, without an allocation. Reading stops as soon as
 * the line is complete: a sysfs attribute is one line that comes whole in
 * the first read(), so the second read() that only returns 0 is not made.
 * Returns the length of the line; -ENOBUFS when it does not fit.
 */
int read_line_buf_at(int dir_fd, const char *path, char *buf, size_t size);

/*
 * Kernel attributes in bulk (the topology's thousand sysfs files): what
 * read_line_buf_at() does, without its fstat() per file. The file is
 * resolved as FILEIO_READ says and, besides, never on another mount than
 * @dir_fd (openat2()'s RESOLVE_NO_XDEV: -EXDEV): below a directory of the
 * live sysfs or procfs everything is then the kernel's own attribute, never
 * a FIFO or a device, with nothing to check per file. In a --root tree (a
 * plain directory) a FIFO cannot block either: the open is O_NONBLOCK, and
 * read() of a FIFO gives 0 (no writer: an empty line) or -EAGAIN, never a
 * wait. Only the readers above refuse it by name (-EBADFD), as the
 * configuration files need. Without openat2() this is read_line_buf_at().
 */
int read_attr_at(int dir_fd, const char *path, char *buf, size_t size);

int read_int_at(int dir_fd, const char *path, int *ret);
int read_unsigned_at(int dir_fd, const char *path, unsigned *ret);

/*
 * Write @value in one write(), checking close() too, like a sysfs/procfs
 * writer must: the kernel reports most errors from write().
 */
int write_string_at(int dir_fd, const char *path, const char *value);

/*
 * Create (or replace) a regular file with @value, mode @mode: written to a
 * temporary name beside it, then renamed over it, so an existing file is
 * never written through (a symlink there: -ELOOP).
 */
int create_file_at(int dir_fd, const char *path, const char *value, unsigned mode);
/*
 * Remove the temporary file create_file_at() makes for @path
 * (".#NAME.topotune-tmp"), which a kill -9 between its creation and its
 * rename leaves behind. 0 also when there was none.
 */
int create_file_remove_stale_at(int dir_fd, const char *path);

bool path_exists_at(int dir_fd, const char *path);
bool dir_exists_at(int dir_fd, const char *path);

/* Strip leading '/'s; returns "." for the root itself. */
const char *path_relative(const char *path);
