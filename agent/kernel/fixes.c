/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The table of known upstream fixes and the version test against a kernel
 * release string. Pure; depends on basic only.
 */
#include <stdio.h>

#include "fixes.h"
#include "strutil.h"

/*
 * Where the releases come from: seed 001 (the report that asked for the
 * backport) and the 6.19/stable queue mails for 82d6e01a0699; the 6.17
 * merge and Tim Chen's 6.18 backport mails for 4d6dd05d07d0, which
 * kernel-patches/6.12 carries (patch 0002). See kernel-patches/README.md.
 */
static const KernelFix fixes[_KERNEL_FIX_MAX] = {
	[KERNEL_FIX_DST_GROUP_ALLOWED] = {
		.id = KERNEL_FIX_DST_GROUP_ALLOWED,
		.commit = "82d6e01a0699",
		.subject = "sched/fair: Only update stats for allowed CPUs when looking for dst group",
		.releases = { "6.19", "6.12.97", "6.1.178" },
		.fixes = "tasks with a restricted affinity stack on SMT siblings while an allowed core is idle",
		.scope = KERNEL_FIX_SCOPE_ALL,
	},
	[KERNEL_FIX_SNC3_DOMAINS] = {
		.id = KERNEL_FIX_SNC3_DOMAINS,
		.commit = "4d6dd05d07d0",
		.subject = "sched/topology: Fix sched domain build error for GNR, CWF in SNC-3 mode",
		.releases = { "6.17" },
		.fixes = "an asymmetric SNC-3 SLIT builds extra NUMA levels (and a domain build error)",
		.scope = KERNEL_FIX_SCOPE_INTEL_SNC3,
		.in_series = true,
	},
};

const KernelFix *kernel_fix_get(KernelFixId id)
{
	if (id < 0 || id >= _KERNEL_FIX_MAX)
		return NULL;
	return &fixes[id];
}

/* "6.12.97-1-amd64" -> 6, 12, 97; a missing sublevel is -1. */
static int parse_version(const char *s, int v[3])
{
	int n = 0;

	v[0] = v[1] = v[2] = -1;
	if (sscanf(s, "%d.%d%n", &v[0], &v[1], &n) < 2 || v[0] < 0 || v[1] < 0)
		return -EINVAL;
	if (s[n] == '.' && sscanf(s + n + 1, "%d", &v[2]) == 1 && v[2] < 0)
		return -EINVAL;
	return 0;
}

int kernel_fix_carried(const KernelFix *f, const char *release)
{
	int have[3];

	if (!f || !release || parse_version(release, have) < 0)
		return -EINVAL;
	for (size_t i = 0; f->releases[i]; i++) {
		int want[3];

		if (parse_version(f->releases[i], want) < 0)
			continue;
		if (want[2] < 0) {
			/* a mainline release: it and everything after it */
			if (have[0] > want[0] || (have[0] == want[0] && have[1] >= want[1]))
				return 1;
		} else if (have[0] == want[0] && have[1] == want[1] && have[2] >= want[2])
			return 1;
	}
	return 0;
}

char *kernel_fix_releases_text(const KernelFix *f)
{
	StrBuf b = {};
	char *ret = NULL;

	strbuf_appendf(&b, "%s is in", f->commit);
	for (size_t i = 0; f->releases[i]; i++)
		strbuf_appendf(&b, "%s %s", i ? "," : "", f->releases[i]);
	if (f->in_series)
		strbuf_append(&b, " and in topotune's 6.12 series");
	return strbuf_steal(&b, &ret) < 0 ? NULL : ret;
}
