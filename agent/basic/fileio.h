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

/* Read a whole file; the buffer is NUL-terminated. */
int read_file_at(int dir_fd, const char *path, size_t max, char **ret, size_t *ret_size);

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

int read_int_at(int dir_fd, const char *path, int *ret);
int read_unsigned_at(int dir_fd, const char *path, unsigned *ret);

/*
 * Write @value in one write(), checking close() too, like a sysfs/procfs
 * writer must: the kernel reports most errors from write().
 */
int write_string_at(int dir_fd, const char *path, const char *value);

/* Create (or replace) a regular file with @value, mode @mode. */
int create_file_at(int dir_fd, const char *path, const char *value, unsigned mode);

bool path_exists_at(int dir_fd, const char *path);
bool dir_exists_at(int dir_fd, const char *path);

/* Strip leading '/'s; returns "." for the root itself. */
const char *path_relative(const char *path);
