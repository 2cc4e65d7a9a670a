/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel capability probe: reads, never writes. Depends on basic only.
 * A control counts as present when its file exists; whether a write will
 * be accepted is the applier's business (lockdown makes debugfs read-only,
 * so a debugfs control under lockdown is reported as not usable).
 */
#include "fileio.h"
#include "kernel.h"
#include "strutil.h"

void kernel_caps_done(KernelCaps *c)
{
	strv_free(c->notes);
	cpuset_done(&c->isolated);
	*c = (KernelCaps) {};
}

static void caps_init(KernelCaps *c)
{
	*c = (KernelCaps) {
		.smt_buddy_current = -1,
		.relax_current = -1,
		.relax_boot = -1,
	};
}

/* Parse "major.minor" of a release string; 0 on failure. */
static unsigned release_code(const char *release)
{
	unsigned major = 0, minor = 0;

	if (sscanf(release, "%u.%u", &major, &minor) < 2)
		return 0;
	return major * 1000 + minor;
}

static int cmdline_int(const char *cmdline, const char *key, int *ret)
{
	_cleanup_strv_free_ char **words = NULL;
	size_t kl = strlen(key);
	int r;

	r = strv_split(cmdline, WHITESPACE, &words);
	if (r < 0)
		return r;
	STRV_FOREACH(w, words)
		if (strncmp(*w, key, kl) == 0 && (*w)[kl] == '=')
			return safe_atoi(*w + kl + 1, ret);
	return -ENOENT;
}

static void note(KernelCaps *c, const char *s)
{
	(void)strv_extend(&c->notes, s);
}

/*
 * A missing file (ENOENT, or ENOTDIR for a missing directory on the way)
 * is an absent control, said by the notes below where it matters. A file
 * that is there and cannot be read (EIO, EACCES, EAGAIN...) is taken as
 * absent too, but never silently: the note names the path and the error.
 */
static int checked(KernelCaps *c, const char *path, int r)
{
	if (r < 0 && r != -ENOENT && r != -ENOTDIR)
		(void)strv_push(&c->notes, strprintf("/%s: %s, taken as absent", path, strerror(-r)));
	return r;
}

static int probe_line(KernelCaps *c, int root_fd, const char *path, char **ret)
{
	return checked(c, path, read_line_at(root_fd, path, ret));
}

static int probe_file(KernelCaps *c, int root_fd, const char *path, char **ret)
{
	return checked(c, path, read_file_at(root_fd, path, 0, ret, NULL));
}

/* A number: a file that holds none is absent, as before. */
static int probe_int(KernelCaps *c, int root_fd, const char *path, int *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = probe_line(c, root_fd, path, &s);
	if (r < 0)
		return r;
	return safe_atoi(s, ret);
}

int kernel_probe(int root_fd, KernelCaps *ret)
{
	_cleanup_free_ char *s = NULL;
	KernelCaps c;
	int v;

	caps_init(&c);

	if (probe_line(&c, root_fd, "proc/sys/kernel/osrelease", &s) >= 0)
		snprintf(c.release, sizeof(c.release), "%s", s);
	free(s);
	s = NULL;

	if (probe_line(&c, root_fd, "sys/kernel/security/lockdown", &s) >= 0) {
		const char *open_b = strchr(s, '['), *close_b = open_b ? strchr(open_b, ']') : NULL;

		if (open_b && close_b) {
			snprintf(c.lockdown_mode, sizeof(c.lockdown_mode), "%.*s", (int)(close_b - open_b - 1),
				 open_b + 1);
			c.lockdown = !streq(c.lockdown_mode, "none");
		}
	}
	free(s);
	s = NULL;

	c.debugfs_sched = dir_exists_at(root_fd, "sys/kernel/debug/sched");

	c.smt_buddy_sysctl = probe_int(&c, root_fd, "proc/sys/kernel/sched_smt_buddy_assist", &v) >= 0;
	if (c.smt_buddy_sysctl)
		c.smt_buddy_current = !!v;
	if (probe_file(&c, root_fd, "sys/kernel/debug/sched/features", &s) >= 0) {
		if (string_has_word(s, "SMT_BUDDY_ASSIST"))
			c.smt_buddy_debugfs = true, c.smt_buddy_current = 1;
		else if (string_has_word(s, "NO_SMT_BUDDY_ASSIST"))
			c.smt_buddy_debugfs = true, c.smt_buddy_current = c.smt_buddy_current < 0 ? 0 : c.smt_buddy_current;
	}
	free(s);
	s = NULL;
	if (!c.smt_buddy_sysctl && !c.smt_buddy_debugfs)
		note(&c, "SMT_BUDDY_ASSIST: not in this kernel (no /proc/sys/kernel/sched_smt_buddy_assist, "
			 "no token in /sys/kernel/debug/sched/features)");
	else if (!c.smt_buddy_sysctl && c.lockdown)
		note(&c, "SMT_BUDDY_ASSIST: only debugfs control, read-only under lockdown");

	c.relax_sysctl = probe_int(&c, root_fd, "proc/sys/kernel/sched_relax_domain_level", &v) >= 0;
	if (c.relax_sysctl)
		c.relax_current = v;
	c.relax_cgroup_v1 = probe_int(&c, root_fd, "sys/fs/cgroup/cpuset/cpuset.sched_relax_domain_level", &v) >= 0;
	if (c.relax_cgroup_v1 && !c.relax_sysctl)
		c.relax_current = v;
	if (probe_line(&c, root_fd, "proc/cmdline", &s) >= 0 && cmdline_int(s, "relax_domain_level", &v) >= 0) {
		c.relax_boot = v;
		if (!c.relax_sysctl && !c.relax_cgroup_v1)
			c.relax_current = v;
	}
	free(s);
	s = NULL;
	if (!c.relax_sysctl && !c.relax_cgroup_v1)
		note(&c, "relax_domain_level: no runtime control (no /proc/sys/kernel/sched_relax_domain_level, "
			 "no cgroup v1 cpuset), boot parameter only");

	if (probe_line(&c, root_fd, "sys/fs/cgroup/cgroup.controllers", &s) >= 0) {
		c.cgroup_v2 = true;
		c.cgroup_v2_cpuset = string_has_word(s, "cpuset");
		c.cpuset_partitions = c.cgroup_v2_cpuset &&
				      (release_code(c.release) == 0 || release_code(c.release) >= 5011);
	}
	free(s);
	s = NULL;
	if (c.cgroup_v2_cpuset && probe_line(&c, root_fd, "sys/fs/cgroup/cpuset.cpus.isolated", &s) >= 0)
		c.isolated_known = cpuset_parse_list(s, &c.isolated, NULL) >= 0;
	free(s);
	s = NULL;
	if (!c.cgroup_v2_cpuset)
		note(&c, c.cgroup_v2 ? "isolation: cgroup v2 without the cpuset controller"
				     : "isolation: no cgroup v2 hierarchy at /sys/fs/cgroup");

	/* The stock SNC-3 fix-up landed in 6.17; our series adds Hygon and a sysctl. */
	c.numa_averaging_intel = release_code(c.release) >= 6017;
	c.numa_averaging_hygon = c.smt_buddy_sysctl;

	if (probe_file(&c, root_fd, "proc/schedstat", &s) >= 0)
		(void)sscanf(s, "version %d", &c.schedstat_version);

	*ret = c;
	return 0;
}

void kernel_caps_stock(KernelCaps *ret)
{
	caps_init(ret);
	snprintf(ret->release, sizeof(ret->release), "7.3.4 (assumed, stock)");
	ret->smt_buddy_current = -1;
	ret->cgroup_v2 = ret->cgroup_v2_cpuset = ret->cpuset_partitions = true;
	ret->isolated_known = true;
	ret->debugfs_sched = true;
	ret->numa_averaging_intel = true;
	ret->schedstat_version = 17;
	note(ret, "SMT_BUDDY_ASSIST: not in a stock kernel");
	note(ret, "relax_domain_level: no runtime control on a stock cgroup v2 kernel, boot parameter only");
}

void kernel_caps_patched(KernelCaps *ret)
{
	caps_init(ret);
	snprintf(ret->release, sizeof(ret->release), "7.3.4+topotune (assumed)");
	ret->smt_buddy_sysctl = ret->smt_buddy_debugfs = true;
	ret->smt_buddy_current = 0;
	ret->relax_sysctl = true;
	ret->cgroup_v2 = ret->cgroup_v2_cpuset = ret->cpuset_partitions = true;
	ret->isolated_known = true;
	ret->debugfs_sched = true;
	ret->numa_averaging_intel = ret->numa_averaging_hygon = true;
	ret->schedstat_version = 17;
}
