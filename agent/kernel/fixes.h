/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "macro.h"

/*
 * The upstream scheduler fixes topotune knows about, one row each: the
 * commit, the releases that carry it, and what it fixes. topotunectl
 * diagnose names a missing one, and the daemon's KernelCapabilities says
 * per fix whether the running release carries it. Adding a fix is one row
 * of the table in fixes.c (and one enum id here).
 */

typedef enum KernelFixId {
	KERNEL_FIX_DST_GROUP_ALLOWED,   /* 82d6e01a0699, seed 001 */
	KERNEL_FIX_SNC3_DOMAINS,        /* 4d6dd05d07d0, seed 000 (Intel) */
	_KERNEL_FIX_MAX,
	_KERNEL_FIX_INVALID = -EINVAL,
} KernelFixId;

/* Which machines a fix matters on. */
typedef enum KernelFixScope {
	KERNEL_FIX_SCOPE_ALL,          /* every SMP machine */
	KERNEL_FIX_SCOPE_INTEL_SNC3,   /* Intel GNR-X/CWF-X with three nodes per package */
	_KERNEL_FIX_SCOPE_MAX,
} KernelFixScope;

#define KERNEL_FIX_RELEASES_MAX 4

typedef struct KernelFix {
	KernelFixId id;
	const char *commit;         /* the first 12 hex digits */
	const char *subject;
	/*
	 * "6.19": every release from 6.19 on; "6.12.97": the 6.12 stable
	 * branch from 6.12.97 on. NULL-terminated.
	 */
	const char *releases[KERNEL_FIX_RELEASES_MAX + 1];
	const char *fixes;          /* what goes wrong without it, one line */
	KernelFixScope scope;
	bool in_series;             /* topotune's series carries it where the base lacks it */
} KernelFix;

const KernelFix *kernel_fix_get(KernelFixId id) _const_;
#define KERNEL_FIX_FOREACH(i) for (KernelFixId i = 0; i < _KERNEL_FIX_MAX; i++)

/*
 * Does kernel @release ("6.12.97-1-amd64", "7.3.4+topotune") carry @f by its
 * version? 1 yes, 0 no, -EINVAL when the release is not a version. A
 * distribution kernel may carry a backport its version does not show.
 */
int kernel_fix_carried(const KernelFix *f, const char *release);

/* "82d6e01a0699 is in 6.19, 6.12.97, 6.1.178"; NULL: out of memory. */
char *kernel_fix_releases_text(const KernelFix *f);
