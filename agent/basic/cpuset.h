/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A growable set of CPU numbers. A CpuSet is a value: embed it, and release
 * its storage with cpuset_done(). The zero value is the empty set.
 */

/* The kernel's NR_CPUS ceiling (CONFIG_MAXSMP); anything above is bad input. */
#define CPUSET_MAX_CPUS 8192U

typedef struct CpuSet {
	uint64_t *bits;
	size_t n_words;
} CpuSet;

void cpuset_done(CpuSet *s);
int cpuset_add(CpuSet *s, unsigned cpu);
int cpuset_add_range(CpuSet *s, unsigned first, unsigned last);
void cpuset_remove(CpuSet *s, unsigned cpu);
bool cpuset_contains(const CpuSet *s, unsigned cpu);
unsigned cpuset_count(const CpuSet *s);
bool cpuset_is_empty(const CpuSet *s);
bool cpuset_equal(const CpuSet *a, const CpuSet *b);
bool cpuset_is_subset(const CpuSet *sub, const CpuSet *super);
bool cpuset_intersects(const CpuSet *a, const CpuSet *b);
int cpuset_copy(CpuSet *dst, const CpuSet *src);
int cpuset_or(CpuSet *dst, const CpuSet *src);
void cpuset_and(CpuSet *dst, const CpuSet *src);
void cpuset_andnot(CpuSet *dst, const CpuSet *src);
/* First member >= @from, or -1. */
int cpuset_next(const CpuSet *s, unsigned from);
int cpuset_first(const CpuSet *s);
int cpuset_last(const CpuSet *s);
int cpuset_compare(const CpuSet *a, const CpuSet *b);
/* A hash of the members: equal sets hash alike whatever their storage length. */
uint64_t cpuset_hash(const CpuSet *s);

#define CPUSET_FOREACH(cpu, set) \
	for (int cpu = cpuset_first(set); cpu >= 0; cpu = cpuset_next(set, (unsigned)cpu + 1))

/*
 * Parse the kernel's cpulist syntax: "0-3,8,10-15:2/4". Strict: reversed
 * ranges ("3-1"), empty items ("1,,2"), CPUs beyond CPUSET_MAX_CPUS and
 * trailing garbage are -EINVAL/-ERANGE, with @ret_bad (if given) pointing
 * at the offending text. An empty string (or only whitespace) is the empty
 * set, as sysfs prints it.
 */
int cpuset_parse_list(const char *s, CpuSet *ret, const char **ret_bad);
/* Parse a kernel %*pb hex mask: "ffff,00000000". */
int cpuset_parse_mask(const char *s, CpuSet *ret);

/*
 * The same as bitmap_parse() reads it: 32-bit words in hex, most significant
 * first, separated by commas ("1,00000003"); "0" for the empty set.
 */
int cpuset_format_mask(const CpuSet *s, char **ret);

/* Kernel-style list ("0-3,8"); "" for the empty set. */
int cpuset_format_list(const CpuSet *s, char **ret);
