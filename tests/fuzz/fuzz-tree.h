/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/*
 * Private scratch trees for targets that must go through the root-fd file
 * readers: one temporary directory per process (on /dev/shm when present),
 * removed at exit; the target builds and empties a tree below it per input.
 */

/* The process's scratch directory fd; created on first use, aborts on failure. */
int fuzz_tree_root(void);
/* Its path (for code that opens the root itself, like the daemon's --root). */
const char *fuzz_tree_path(void);
/* Write @path (relative, parents created) below @dir_fd; aborts on failure. */
void fuzz_tree_write(int dir_fd, const char *path, const void *data, size_t size);
/* Remove everything below @dir_fd (the directory itself stays). */
void fuzz_tree_clear(int dir_fd);
