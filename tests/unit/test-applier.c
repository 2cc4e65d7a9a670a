/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The applier against a fake tree, with faults injected through ApplierIo:
 * every failure must end with a clear error naming the path and the tree
 * byte for byte as it was; a crash must leave a record that restores it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "applier.h"
#include "fileio.h"
#include "strutil.h"
#include "test.h"
#include "topo-build.h"

typedef struct Fault {
	const char *path;        /* substring of the path to fail */
	bool on_write;           /* else on read */
	int error;               /* errno to return, 0: none */
	const char *read_as;     /* return this content instead (a kernel that ignores writes...) */
	unsigned skip;           /* let this many matching calls through first */
} Fault;

static Fault fault;

static bool hit(const char *path, bool write)
{
	if (!fault.path || write != fault.on_write || !strstr(path, fault.path))
		return false;
	if (fault.skip > 0) {
		fault.skip--;
		return false;
	}
	return true;
}

static int f_read(void *u, int root_fd, const char *path, char **ret)
{
	if (hit(path, false)) {
		if (fault.error)
			return -fault.error;
		if (fault.read_as) {
			/* A wrong answer once: the kernel then behaves again. */
			fault.path = NULL;
			*ret = strdup(fault.read_as);
			return *ret ? 0 : -ENOMEM;
		}
	}
	return applier_io_default.read(u, root_fd, path, ret);
}

static int f_write(void *u, int root_fd, const char *path, const char *value)
{
	if (hit(path, true) && fault.error)
		return -fault.error;
	return applier_io_default.write(u, root_fd, path, value);
}

static void put(int fd, const char *path, const char *content);

static int f_mkdir(void *u, int root_fd, const char *path)
{
	_cleanup_free_ char *cpus = NULL, *part = NULL;
	int r;

	if (hit(path, true) && fault.error)
		return -fault.error;
	r = applier_io_default.mkdir(u, root_fd, path);
	if (r < 0)
		return r;
	/* What the kernel puts in a new cgroup. */
	cpus = strprintf("%s/cpuset.cpus", path);
	part = strprintf("%s/cpuset.cpus.partition", path);
	put(root_fd, cpus, "\n");
	put(root_fd, part, "member\n");
	return 0;
}

static int f_remove(void *u, int root_fd, const char *path, bool dir)
{
	if (dir) {
		/* The kernel removes a cgroup's files with it. */
		_cleanup_free_ char *cpus = strprintf("%s/cpuset.cpus", path), *part = strprintf("%s/cpuset.cpus.partition", path);

		(void)unlinkat(root_fd, cpus, 0);
		(void)unlinkat(root_fd, part, 0);
	}
	return applier_io_default.remove(u, root_fd, path, dir);
}

static const ApplierIo fault_io = { f_read, f_write, f_mkdir, f_remove, NULL };

/* --- a fake tree ---------------------------------------------------------- */

static void put(int fd, const char *path, const char *content)
{
	char dir[256];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = strchr(dir, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		(void)mkdirat(fd, dir, 0755);
		*p = '/';
	}
	check(write_string_at(fd, path, content) == 0 || (close(openat(fd, path, O_CREAT | O_WRONLY, 0644)),
							 write_string_at(fd, path, content) == 0));
}

static int make_tree(char *tmpl)
{
	int fd;

	check(mkdtemp(tmpl) != NULL);
	check(root_open(tmpl, &fd) == 0);
	put(fd, "proc/sys/kernel/sched_smt_buddy_assist", "0\n");
	put(fd, "proc/sys/kernel/sched_relax_domain_level", "-1\n");
	put(fd, "sys/kernel/debug/sched/features", "PLACE_LAG NO_SMT_BUDDY_ASSIST TTWU_QUEUE \n");
	put(fd, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	put(fd, "sys/fs/cgroup/cgroup.subtree_control", "cpuset cpu memory\n");
	put(fd, "sys/fs/cgroup/cpuset.cpus.isolated", "\n");
	put(fd, "run/topotune/.keep", "");
	return fd;
}

/* Every file below @dir: "path\ncontent\n", sorted by readdir order of a stable walk. */
static void snapshot_dir(int dfd, const char *prefix, StrBuf *b)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;

	/*
	 * Not dup(dfd): root_open() gives an O_PATH fd, which readdir() cannot
	 * read (EBADF), and every snapshot would be empty.
	 */
	d = fdopendir(openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	check(d != NULL);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
			(void)strv_extend(&names, de->d_name);
	closedir(d);
	/* sort for a stable order */
	for (size_t i = 0; names && names[i]; i++)
		for (size_t j = i + 1; names[j]; j++)
			if (strcmp(names[i], names[j]) > 0) {
				char *t = names[i];

				names[i] = names[j];
				names[j] = t;
			}
	STRV_FOREACH(n, names) {
		_cleanup_free_ char *path = strprintf("%s%s", prefix, *n), *content = NULL;
		int sub = openat(dfd, *n, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (sub >= 0) {
			_cleanup_free_ char *p2 = strprintf("%s/", path);

			strbuf_appendf(b, "%s/\n", path);
			snapshot_dir(sub, p2, b);
			close(sub);
		} else if (read_file_at(dfd, *n, 0, &content, NULL) >= 0)
			strbuf_appendf(b, "%s\n%s\n", path, content);
	}
	strv_free(names);
}

static char *snapshot(int fd)
{
	StrBuf b = {};
	char *s = NULL;

	snapshot_dir(fd, "", &b);
	(void)strbuf_steal(&b, &s);
	return s ?: strdup("");
}

static void rm_rf(const char *path)
{
	_cleanup_free_ char *cmd = strprintf("rm -rf '%s'", path);

	if (cmd && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", path);
}

/* --- plans ---------------------------------------------------------------- */

static const TopoSpec small = { 1, 4, 2, 2, 2, NULL, NULL };
static const CpuIdentity intel = { .vendor = CPU_VENDOR_INTEL, .arch = "x86", .have_family = true, .family = 6,
				   .model = 0x55 };

/* As planned on a kernel whose SMT_BUDDY_ASSIST is @smt_current. */
static Plan *make_plan_on(SmtBuddyMode smt, RelaxMode relax, int level, const char *isolated, bool debugfs_only,
			  int smt_current)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	ProfileSettings s = {
		.value[SETTING_SMT_BUDDY_ASSIST].mode = smt,
		.origin[SETTING_SMT_BUDDY_ASSIST] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 3 },
		.value[SETTING_RELAX_DOMAIN_LEVEL].mode = relax,
		.value[SETTING_RELAX_DOMAIN_LEVEL].level = level,
		.origin[SETTING_RELAX_DOMAIN_LEVEL] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 4 },
		.value[SETTING_ISOLATED_CPUS].mode = isolated ? ISOLATION_LIST : ISOLATION_NONE,
		.origin[SETTING_ISOLATED_CPUS] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 6 },
	};
	KernelCaps k;
	PlanInput in;
	Plan *p = NULL;

	check(topo_build(&small, &t) == 0);
	if (isolated)
		check(cpuset_parse_list(isolated, &s.value[SETTING_ISOLATED_CPUS].cpus, NULL) == 0);
	kernel_caps_patched(&k);
	kernel_caps_set(&k, CONTROL_SMT_BUDDY_SYSCTL, !debugfs_only, smt_current);
	kernel_caps_set(&k, CONTROL_SMT_BUDDY_DEBUGFS, true, smt_current);
	in = (PlanInput) { &intel, t, &k, &s, "t" };
	check(plan_compute(&in, &p) == 0);
	cpuset_done(&s.value[SETTING_ISOLATED_CPUS].cpus);
	kernel_caps_done(&k);
	return p;
}

static Plan *make_plan(SmtBuddyMode smt, RelaxMode relax, int level, const char *isolated, bool debugfs_only)
{
	return make_plan_on(smt, relax, level, isolated, debugfs_only, 0);
}

static char *file(int fd, const char *path)
{
	char *s = NULL;

	if (read_file_at(fd, path, 0, &s, NULL) < 0)
		return strdup("(missing)");
	return s;
}

static void test_apply_verify_revert(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_free_ char *before = snapshot(fd), *after = NULL, *smt = NULL, *relax = NULL, *cpus = NULL,
			    *part = NULL;
	_cleanup_(plan_freep) Plan *p = make_plan(SMT_BUDDY_ON, RELAX_LEVEL, 2, "3,7", false);
	_cleanup_(applier_freep) Applier *a = NULL;
	Mismatch *m = NULL;
	size_t n = 99;

	/* The snapshots see the tree: the comparisons below can fail. */
	check(strstr(before, "proc/sys/kernel/sched_smt_buddy_assist\n0\n"));
	fault = (Fault) {};
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	/* smt, relax, slice dir, cpuset.cpus, partition: subtree_control already has cpuset. */
	check_int(applier_apply(a, p), 5);
	check_str(smt = file(fd, "proc/sys/kernel/sched_smt_buddy_assist"), "1");
	check_str(relax = file(fd, "proc/sys/kernel/sched_relax_domain_level"), "2");
	check_str(cpus = file(fd, "sys/fs/cgroup/topotune.slice/cpuset.cpus"), "3,7");
	check_str(part = file(fd, "sys/fs/cgroup/topotune.slice/cpuset.cpus.partition"), "isolated");
	check(path_exists_at(fd, STATE_FILE));
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 0);
	mismatches_free(m, n);

	/* Applying the same plan again changes nothing. */
	check_int(applier_apply(a, p), 0);

	/* Another writer: verify reports drift. */
	check(write_string_at(fd, "proc/sys/kernel/sched_relax_domain_level", "5") == 0);
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 1);
	if (n == 1) {
		check_int(m[0].setting, SETTING_RELAX_DOMAIN_LEVEL);
		check_str(m[0].want, "2");
		check_str(m[0].got, "5");
	}
	mismatches_free(m, n);
	check(write_string_at(fd, "proc/sys/kernel/sched_relax_domain_level", "2") == 0);

	check(applier_revert(a) == 0);
	after = snapshot(fd);
	check_str(after, before);
	rm_rf(tmpl);
}

/* numa_balancing goes through its control row: written, read back, verified and reverted byte-exact. */
static void test_numa_balancing(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_free_ char *before = NULL, *after = NULL, *numa = NULL, *actual = NULL;
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_(plan_freep) Plan *p = NULL;
	_cleanup_(applier_freep) Applier *a = NULL;
	ProfileSettings s = {
		.value[SETTING_NUMA_BALANCING].mode = NUMA_BALANCING_TIERING,
		.origin[SETTING_NUMA_BALANCING] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 5 },
	};
	KernelCaps k;
	PlanInput in;
	Mismatch *m = NULL;
	size_t n = 99;

	put(fd, "proc/sys/kernel/numa_balancing", "1\n");
	before = snapshot(fd);
	check(strstr(before, "proc/sys/kernel/numa_balancing\n1\n"));
	check(topo_build(&small, &t) == 0);
	check(kernel_probe(fd, &k) == 0);
	check_int(kernel_caps_value(&k, CONTROL_NUMA_BALANCING_SYSCTL, -1), 1);
	in = (PlanInput) { &intel, t, &k, &s, "t" };
	check(plan_compute(&in, &p) == 0);
	kernel_caps_done(&k);
	if (!p)
		return;
	check_int(p->steps[SETTING_NUMA_BALANCING].action, STEP_SET);

	fault = (Fault) {};
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_apply(a, p), 1);
	check_str(numa = file(fd, "proc/sys/kernel/numa_balancing"), "2");
	check_int(applier_read_actual(a, &p->steps[SETTING_NUMA_BALANCING], &actual), 0);
	check_str(actual, "memory-tiering");
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 0);
	mismatches_free(m, n);

	/* Another writer turns it off: drift, in the setting's words. */
	check(write_string_at(fd, "proc/sys/kernel/numa_balancing", "0") == 0);
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 1);
	if (n == 1) {
		check_int(m[0].setting, SETTING_NUMA_BALANCING);
		check_str(m[0].want, "memory-tiering");
		check_str(m[0].got, "off");
	}
	mismatches_free(m, n);
	check(write_string_at(fd, "proc/sys/kernel/numa_balancing", "2") == 0);

	check(applier_revert(a) == 0);
	after = snapshot(fd);
	check_str(after, before);
	rm_rf(tmpl);
}

static void test_fault(const char *name, Fault f, int want_error, const char *want_message, bool debugfs_only)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_free_ char *before = snapshot(fd), *after = NULL;
	_cleanup_(plan_freep) Plan *p = make_plan(SMT_BUDDY_ON, RELAX_LEVEL, 2, "3,7", debugfs_only);
	_cleanup_(applier_freep) Applier *a = NULL;
	int r;

	fault = f;
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	r = applier_apply(a, p);
	check_ctx(name, r == want_error);
	if (r != want_error)
		fprintf(stderr, "  [%s] got %d (%s)\n", name, r, strna(a->error));
	check_ctx(name, a->error && strstr(a->error, want_message));
	if (a->error && !strstr(a->error, want_message))
		fprintf(stderr, "  [%s] error \"%s\" lacks \"%s\"\n", name, a->error, want_message);
	check_ctx(name, a->n_changes == 0);
	fault = (Fault) {};
	after = snapshot(fd);
	check_ctx(name, streq(after, before));
	if (!streq(after, before))
		fprintf(stderr, "--- before:\n%s--- after:\n%s", before, after);
	rm_rf(tmpl);
}

static void test_faults(void)
{
	static const int errnos[] = { EPERM, EACCES, EROFS, ENOENT, EINVAL };

	/* The second write (relax) fails: the first (smt) must be undone. */
	for (size_t i = 0; i < ELEMENTSOF(errnos); i++) {
		_cleanup_free_ char *msg = strprintf("/proc/sys/kernel/sched_relax_domain_level: writing \"2\": %s",
						     strerror(errnos[i]));

		test_fault(strerror(errnos[i]),
			   (Fault) { .path = "sched_relax_domain_level", .on_write = true, .error = errnos[i] },
			   -errnos[i], msg, false);
	}
	/* The last step fails after four writes: all four come back. */
	test_fault("partition EACCES", (Fault) { .path = "cpuset.cpus.partition", .on_write = true, .error = EACCES },
		   -EACCES, "/sys/fs/cgroup/topotune.slice/cpuset.cpus.partition: writing \"isolated\"", false);
	/* The kernel takes the write but reports the partition invalid. */
	test_fault("partition invalid",
		   (Fault) { .path = "cpuset.cpus.partition", .read_as = "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n",
			     .skip = 1 },
		   -EINVAL, "reports \"isolated invalid (Cpu list in cpuset.cpus not exclusive)\"", false);
	/* A kernel that ignores the write. */
	test_fault("write ignored", (Fault) { .path = "sched_smt_buddy_assist", .read_as = "0\n", .skip = 1 }, -EIO,
		   "/proc/sys/kernel/sched_smt_buddy_assist: read back \"0\" after writing \"1\"", false);
	/* debugfs read-only under lockdown. */
	test_fault("debugfs EPERM", (Fault) { .path = "sched/features", .on_write = true, .error = EPERM }, -EPERM,
		   "/sys/kernel/debug/sched/features: writing \"SMT_BUDDY_ASSIST\": Operation not permitted", true);
	/* The file disappears between probe and read. */
	test_fault("vanished", (Fault) { .path = "sched_smt_buddy_assist", .error = ENOENT }, -ENOENT,
		   "/proc/sys/kernel/sched_smt_buddy_assist: No such file or directory", false);
	/* mkdir of the slice refused. */
	test_fault("cgroup mkdir EROFS", (Fault) { .path = "topotune.slice", .on_write = true, .error = EROFS },
		   -EROFS, "topotune.slice: writing \"dir\": Read-only file system", false);
}

/*
 * A failed apply that changes a setting we already hold: the rollback puts
 * the record back as it was, reason included, so the file on disk is byte
 * for byte the one from before the attempt.
 */
static void test_rollback_keeps_record(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_free_ char *before = snapshot(fd), *held = NULL, *after_fail = NULL, *after = NULL;
	_cleanup_(plan_freep) Plan *p1 = make_plan(SMT_BUDDY_ON, RELAX_KEEP, 0, NULL, false);
	/* Planned once p1 holds: SMT_BUDDY_ASSIST is on, back off for another reason. */
	_cleanup_(plan_freep) Plan *p2 = make_plan_on(SMT_BUDDY_OFF, RELAX_LEVEL, 2, NULL, false, 1);
	_cleanup_(applier_freep) Applier *a = NULL;

	fault = (Fault) {};
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_apply(a, p1), 1);
	held = snapshot(fd);
	fault = (Fault) { .path = "sched_relax_domain_level", .on_write = true, .error = EACCES };
	check_int(applier_apply(a, p2), -EACCES);
	fault = (Fault) {};
	after_fail = snapshot(fd);
	check_str(after_fail, held);
	check_int(a->n_changes, 1);
	check(applier_revert(a) == 0);
	after = snapshot(fd);
	check_str(after, before);
	rm_rf(tmpl);
}

/*
 * Kernels before 6.7 have cpuset partitions but no cpuset.cpus.isolated:
 * "nothing isolated" is in sync there, not "unreadable" drift at every
 * verification.
 */
static void test_no_isolated_file(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(plan_freep) Plan *p = make_plan(SMT_BUDDY_ON, RELAX_KEEP, 0, NULL, false);
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_free_ char *actual = NULL;
	Mismatch *m = NULL;
	size_t n = 99;

	check(unlinkat(fd, "sys/fs/cgroup/cpuset.cpus.isolated", 0) == 0);
	fault = (Fault) {};
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_apply(a, p), 1);
	check(applier_read_actual(a, &p->steps[SETTING_ISOLATED_CPUS], &actual) == 0);
	check_str(actual, "none");
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 0);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "  %s: want %s, got %s\n", setting_id_to_string(m[i].setting), m[i].want, m[i].got);
	mismatches_free(m, n);
	check(applier_revert(a) == 0);
	rm_rf(tmpl);
}

/* Our slice's partition is there and cannot be read: verification says so, it is not "none". */
static void test_unreadable_partition(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(plan_freep) Plan *p = make_plan(SMT_BUDDY_ON, RELAX_LEVEL, 2, "3,7", false);
	_cleanup_(applier_freep) Applier *a = NULL;
	char *actual = NULL;
	Mismatch *m = NULL;
	size_t n = 99;

	fault = (Fault) {};
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_apply(a, p), 5);
	fault = (Fault) { .path = "cpuset.cpus.partition", .error = EIO };
	check_int(applier_read_actual(a, &p->steps[SETTING_ISOLATED_CPUS], &actual), -EIO);
	check(actual == NULL);
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 1);
	if (n == 1)
		check_str(m[0].got, "unreadable: Input/output error");
	mismatches_free(m, n);
	fault = (Fault) {};
	check(applier_revert(a) == 0);
	rm_rf(tmpl);
}

/*
 * A file that disappears after the plan was made: the probe saw it, the
 * apply does not. Once before the apply, once between the applier's read
 * of the original and its write (the hook removes it right after reading).
 * Either way: an error naming the path, nothing recorded, the earlier
 * write undone, and the tree as the world left it (the file gone, never
 * recreated by the write).
 */
static const char *vanish_path;

static int f_read_vanish(void *u, int root_fd, const char *path, char **ret)
{
	int r = applier_io_default.read(u, root_fd, path, ret);

	if (r >= 0 && vanish_path && streq(path, vanish_path)) {
		check(unlinkat(root_fd, path, 0) == 0);
		vanish_path = NULL;
	}
	return r;
}

static const ApplierIo vanish_io = { f_read_vanish, f_write, f_mkdir, f_remove, NULL };

static void test_vanished(bool during_apply)
{
	const char *ctx = during_apply ? "vanished between read and write" : "vanished after the probe";
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(plan_freep) Plan *p = make_plan(SMT_BUDDY_ON, RELAX_LEVEL, 2, "3,7", false);
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_free_ char *before = NULL, *after = NULL;

	fault = (Fault) {};
	if (during_apply)
		vanish_path = "proc/sys/kernel/sched_relax_domain_level";
	else
		check(unlinkat(fd, "proc/sys/kernel/sched_relax_domain_level", 0) == 0);
	before = snapshot(fd);
	check(applier_new(fd, &vanish_io, NULL, &a) == 0);
	check_int(applier_apply(a, p), -ENOENT);
	check_ctx(ctx, a->error && strstr(a->error, during_apply ?
		  "/proc/sys/kernel/sched_relax_domain_level: writing \"2\": No such file or directory" :
		  "/proc/sys/kernel/sched_relax_domain_level: No such file or directory"));
	check_ctx(ctx, a->n_changes == 0);
	/* Gone, and not made again by the write. */
	check_ctx(ctx, !path_exists_at(fd, "proc/sys/kernel/sched_relax_domain_level"));
	check_ctx(ctx, !path_exists_at(fd, STATE_FILE));
	if (during_apply)
		/* The world's removal aside, the tree is as it was. */
		put(fd, "proc/sys/kernel/sched_relax_domain_level", "-1\n");
	after = snapshot(fd);
	check_str(after, before);
	check_ctx(ctx, strstr(after, "proc/sys/kernel/sched_smt_buddy_assist\n0\n") != NULL);
	vanish_path = NULL;
	rm_rf(tmpl);
}

/*
 * The record cannot be written (its path is a directory): the apply fails
 * naming it, before any write to the kernel, and leaves no half-made
 * record beside it. Once with nothing held, once holding a change.
 */
static void test_record_unwritable(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(plan_freep) Plan *p1 = make_plan(SMT_BUDDY_ON, RELAX_KEEP, 0, NULL, false);
	_cleanup_(plan_freep) Plan *p2 = make_plan_on(SMT_BUDDY_OFF, RELAX_LEVEL, 2, NULL, false, 1);
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_free_ char *before = NULL, *after = NULL, *held = NULL, *after2 = NULL;

	fault = (Fault) {};
	check(mkdirat(fd, STATE_FILE, 0755) == 0);
	before = snapshot(fd);
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_apply(a, p1), -EISDIR);
	check(a->error && streq(a->error, "/run/topotune/state: Is a directory"));
	after = snapshot(fd);
	check_str(after, before);

	/* Holding SMT_BUDDY_ASSIST on, then the record's path is taken. */
	check(unlinkat(fd, STATE_FILE, AT_REMOVEDIR) == 0);
	check_int(applier_apply(a, p1), 1);
	check(unlinkat(fd, STATE_FILE, 0) == 0);
	check(mkdirat(fd, STATE_FILE, 0755) == 0);
	held = snapshot(fd);
	check_int(applier_apply(a, p2), -EISDIR);
	check(a->error && streq(a->error, "/run/topotune/state: Is a directory"));
	after2 = snapshot(fd);
	check_str(after2, held);
	check(!path_exists_at(fd, STATE_FILE ".tmp"));
	rm_rf(tmpl);
}

/*
 * An apply first puts back what the new plan no longer wants; when a later
 * step fails, that goes back to our value too: all or nothing. Once with
 * the record unwritable after the restore, once with a write refused.
 */
static void test_rollback_restores(bool record_fails)
{
	const char *ctx = record_fails ? "record unwritable after a restore" : "write refused after a restore";
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(plan_freep) Plan *p1 = make_plan(SMT_BUDDY_ON, RELAX_LEVEL, 2, NULL, false);
	/* Planned once p1 holds: relax is kept (ours goes), SMT_BUDDY_ASSIST goes back off. */
	_cleanup_(plan_freep) Plan *p2 = make_plan_on(record_fails ? SMT_BUDDY_ON : SMT_BUDDY_OFF, RELAX_KEEP, 0, NULL,
						      false, 1);
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_free_ char *held = NULL, *after = NULL;
	Mismatch *m = NULL;
	size_t n = 99;

	fault = (Fault) {};
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_apply(a, p1), 2);
	if (record_fails) {
		check(unlinkat(fd, STATE_FILE, 0) == 0);
		check(mkdirat(fd, STATE_FILE, 0755) == 0);
	} else
		fault = (Fault) { .path = "sched_smt_buddy_assist", .on_write = true, .error = EACCES };
	held = snapshot(fd);
	check_ctx(ctx, applier_apply(a, p2) == (record_fails ? -EISDIR : -EACCES));
	fault = (Fault) {};
	after = snapshot(fd);
	check_str(after, held);
	check_ctx(ctx, a->n_changes == 2);
	check(applier_verify(a, p1, &m, &n) == 0);
	check_int(n, 0);
	mismatches_free(m, n);
	if (record_fails) {
		check(unlinkat(fd, STATE_FILE, AT_REMOVEDIR) == 0);
		check(applier_revert(a) == 0);
	} else {
		/* The record on disk still holds both: a crash now would restore both. */
		_cleanup_(applier_freep) Applier *b = NULL;

		check(applier_new(fd, NULL, NULL, &b) == 0);
		check_int(applier_load_state(b), 2);
		check(applier_revert(a) == 0);
	}
	rm_rf(tmpl);
}

/*
 * The same, when another writer changed the held value after our apply: a
 * rollback puts back that writer's value, not ours.
 */
static void test_rollback_restores_other_writer(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(plan_freep) Plan *p1 = make_plan(SMT_BUDDY_ON, RELAX_LEVEL, 2, NULL, false);
	_cleanup_(plan_freep) Plan *p2 = make_plan_on(SMT_BUDDY_OFF, RELAX_KEEP, 0, NULL, false, 1);
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_free_ char *held = NULL, *after = NULL, *relax = NULL;

	fault = (Fault) {};
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_apply(a, p1), 2);
	check(write_string_at(fd, "proc/sys/kernel/sched_relax_domain_level", "0\n") == 0);
	held = snapshot(fd);
	fault = (Fault) { .path = "sched_smt_buddy_assist", .on_write = true, .error = EACCES };
	check_int(applier_apply(a, p2), -EACCES);
	fault = (Fault) {};
	after = snapshot(fd);
	check_str(after, held);
	check_str(relax = file(fd, "proc/sys/kernel/sched_relax_domain_level"), "0\n");
	check(applier_revert(a) == 0);
	rm_rf(tmpl);
}

static void test_crash_recovery(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_free_ char *before = snapshot(fd), *after = NULL;
	_cleanup_(plan_freep) Plan *p = make_plan(SMT_BUDDY_ON, RELAX_LEVEL, 3, "3,7", false);
	Applier *a = NULL;

	fault = (Fault) {};
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_apply(a, p), 5);
	/* kill -9: the process is gone, the record stays. */
	applier_free(a);

	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_load_state(a), 5);
	check(applier_revert(a) == 0);
	check(!path_exists_at(fd, STATE_FILE));
	after = snapshot(fd);
	check_str(after, before);
	applier_free(a);

	/* A corrupt record is refused with its line, not half-used. */
	check(write_string_at(fd, STATE_FILE, "change plain 1 nonsense\n") == 0 ||
	      (close(openat(fd, STATE_FILE, O_CREAT | O_WRONLY, 0600)), write_string_at(fd, STATE_FILE, "change plain 1 nonsense\n") == 0));
	check(applier_new(fd, NULL, NULL, &a) == 0);
	check_int(applier_load_state(a), -EBADMSG);
	check(a->error && strstr(a->error, "/run/topotune/state:1: malformed record"));
	applier_free(a);
	rm_rf(tmpl);
}

/*
 * kill -9 between creating the record's state.tmp and renaming it into place
 * (bench/stress.sh hit it at the openat, write and fsync of state.tmp): the
 * half-made file must not outlive the next start's revert.
 */
static void test_crash_leaves_tmp(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(plan_freep) Plan *p = make_plan(SMT_BUDDY_ON, RELAX_LEVEL, 3, "3,7", false);
	Applier *a = NULL;

	fault = (Fault) {};
	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_apply(a, p), 5);
	/* The next state_save() was cut short after its openat(O_CREAT). */
	check(close(openat(fd, STATE_FILE ".tmp", O_CREAT | O_WRONLY | O_EXCL, 0600)) == 0);
	check(write_string_at(fd, STATE_FILE ".tmp", "# topotune write-ahead record v1: kind d") == 0);
	applier_free(a);

	check(applier_new(fd, &fault_io, NULL, &a) == 0);
	check_int(applier_load_state(a), 5);
	check(applier_revert(a) == 0);
	check(!path_exists_at(fd, STATE_FILE));
	check(!path_exists_at(fd, STATE_FILE ".tmp"));
	applier_free(a);
	rm_rf(tmpl);
}

static void test_diff(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_free_ char *before = snapshot(fd), *after = NULL, *relax = NULL, *smt = NULL;
	_cleanup_(plan_freep) Plan *p1 = make_plan(SMT_BUDDY_ON, RELAX_LEVEL, 2, NULL, false);
	_cleanup_(plan_freep) Plan *p2 = make_plan(SMT_BUDDY_ON, RELAX_KEEP, 0, NULL, false);
	_cleanup_(applier_freep) Applier *a = NULL;

	fault = (Fault) {};
	check(applier_new(fd, NULL, NULL, &a) == 0);
	check_int(applier_apply(a, p1), 2);
	/* The second profile keeps relax: it goes back to the boot value, smt stays. */
	check_int(applier_apply(a, p2), 1);
	check_str(relax = file(fd, "proc/sys/kernel/sched_relax_domain_level"), "-1\n");
	check_str(smt = file(fd, "proc/sys/kernel/sched_smt_buddy_assist"), "1");
	check_int(a->n_changes, 1);
	check(applier_revert(a) == 0);
	after = snapshot(fd);
	check_str(after, before);
	rm_rf(tmpl);
}

/*
 * No runtime relax control: with manage_bootloader the boot loader request
 * (the level alone) is written, revert removes it. The daemon never writes
 * /etc/default/grub.d: units/update-bootloader renders the drop-in.
 */
static void test_bootloader(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_free_ char *before = NULL, *after = NULL, *dropin = NULL;
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_(plan_freep) Plan *p = NULL;
	ProfileSettings s = {
		.value[SETTING_SMT_BUDDY_ASSIST].mode = SMT_BUDDY_KEEP,
		.value[SETTING_RELAX_DOMAIN_LEVEL].mode = RELAX_LEVEL,
		.value[SETTING_RELAX_DOMAIN_LEVEL].level = 2,
		.origin[SETTING_RELAX_DOMAIN_LEVEL] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 4 },
		.value[SETTING_ISOLATED_CPUS].mode = ISOLATION_KEEP,
	};
	KernelCaps k;
	PlanInput in;

	/* grub.d without /etc/default/grub (the package ships grub.d): no GRUB, nothing written. */
	put(fd, "etc/default/grub.d/.keep", "");
	before = snapshot(fd);
	check(topo_build(&small, &t) == 0);
	kernel_caps_stock(&k);
	in = (PlanInput) { &intel, t, &k, &s, "t" };
	check(plan_compute(&in, &p) == 0);
	check(applier_new(fd, NULL, NULL, &a) == 0);
	a->manage_bootloader = true;
	check_int(applier_apply(a, p), 0);
	check(!path_exists_at(fd, "etc/default/grub.d/topotune.cfg"));
	check(!path_exists_at(fd, "run/topotune/bootloader.request"));
	check(applier_revert(a) == 0);
	a = applier_free(a);
	p = plan_free(p);
	t = topology_free(t);
	kernel_caps_done(&k);
	after = snapshot(fd);
	check_str(after, before);
	free(after);
	after = NULL;

	put(fd, "etc/default/grub", "GRUB_DEFAULT=0\n");
	free(before);
	before = snapshot(fd);
	check(topo_build(&small, &t) == 0);
	kernel_caps_stock(&k);
	in = (PlanInput) { &intel, t, &k, &s, "t" };
	check(plan_compute(&in, &p) == 0);
	check_int(p->steps[SETTING_RELAX_DOMAIN_LEVEL].action, STEP_PENDING_REBOOT);
	check_str(p->kernel_cmdline, "relax_domain_level=2");

	check(applier_new(fd, NULL, NULL, &a) == 0);
	/* Without manage_bootloader nothing is written. */
	check_int(applier_apply(a, p), 0);
	check(!path_exists_at(fd, "run/topotune/bootloader.request"));
	a->manage_bootloader = true;
	check_int(applier_apply(a, p), 1);
	/* Data, not shell: the level and a newline; grub.d is left to the helper. */
	check_str(dropin = file(fd, "run/topotune/bootloader.request"), "2\n");
	check(!path_exists_at(fd, "etc/default/grub.d/topotune.cfg"));
	check(applier_revert(a) == 0);
	check(!path_exists_at(fd, "run/topotune/bootloader.request"));
	after = snapshot(fd);
	check_str(after, before);

	/* A GRUB without /etc/default/grub.d: still only the request; grub.d is not made. */
	check(unlinkat(fd, "etc/default/grub.d/.keep", 0) == 0 && unlinkat(fd, "etc/default/grub.d", AT_REMOVEDIR) == 0);
	free(before);
	before = snapshot(fd);
	check_int(applier_apply(a, p), 1);
	check(!path_exists_at(fd, "etc/default/grub.d"));
	free(dropin);
	check_str(dropin = file(fd, "run/topotune/bootloader.request"), "2\n");
	check(applier_revert(a) == 0);
	free(after);
	after = snapshot(fd);
	check_str(after, before);

	/* No GRUB at all: nothing written, the apply succeeds, the command line stays pending. */
	check(unlinkat(fd, "etc/default/grub", 0) == 0);
	free(before);
	before = snapshot(fd);
	check_int(applier_apply(a, p), 0);
	check(!a->error);
	free(after);
	after = snapshot(fd);
	check_str(after, before);
	kernel_caps_done(&k);
	rm_rf(tmpl);
}


/*
 * Recovery restores what the allow-list allows and can be put back, and
 * sets the rest aside: nothing outside the list is created or written, and
 * the record is gone afterwards.
 */
static void test_recover_aside(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_(recovery_done) Recovery rec = {};
	_cleanup_free_ char *relax = NULL, *kept = NULL, *aside_rel = NULL;

	put(fd, "etc/cron.d/.keep", "");
	put(fd, "proc/sys/kernel/sched_relax_domain_level", "3\n");
	put(fd, STATE_FILE,
	    "# topotune write-ahead record v1: kind done setting path old new why\n"
	    "change file 1 relax_domain_level =etc/cron.d/topotune =*%20root%20sh%0A ! =planted\n"
	    "change plain 1 smt_buddy_assist =../../../etc/passwd =x ! =planted\n"
	    "change feature 1 smt_buddy_assist =sys/kernel/debug/sched/features =PLACE_LAG%20x =SMT_BUDDY_ASSIST =planted\n"
	    "change partition 1 isolated_cpus =sys/fs/cgroup/topotune.slice/cpuset.cpus.partition =member%0A =isolated =crash\n"
	    "change plain 1 relax_domain_level =proc/sys/kernel/sched_relax_domain_level =-1%0A =3 =crash\n"
	    "change plain 1 relax_domain_level =proc/sys/kernel/sched_relax_domain_level =-1%0A =3 =twice\n"
	    "change plain 1 smt_buddy_ass\n");
	check(applier_new(fd, NULL, NULL, &a) == 0);
	check_int(applier_recover(a, &rec), 0);
	check_int(rec.found, 7);
	check_int(rec.restored, 1);
	check_int(strv_length(rec.problems), 6);
	check(!path_exists_at(fd, "etc/cron.d/topotune"));
	check_str(relax = file(fd, "proc/sys/kernel/sched_relax_domain_level"), "-1\n");
	check(!path_exists_at(fd, STATE_FILE));
	check_int(a->n_changes, 0);
	check(rec.aside && startswith(rec.aside, "/run/topotune/state.failed-"));
	aside_rel = rec.aside ? strdup(rec.aside + 1) : NULL;
	check(aside_rel && read_file_at(fd, aside_rel, 0, &kept, NULL) == 0);
	check(kept && strstr(kept, "=etc/cron.d/topotune ") && strstr(kept, "=../../../etc/passwd ") &&
	      strstr(kept, "=PLACE_LAG%20x ") && strstr(kept, "cpuset.cpus.partition") && strstr(kept, "=twice") &&
	      strstr(kept, "smt_buddy_ass\n") && !strstr(kept, "=crash\nchange plain"));
	for (size_t i = 0; rec.problems && rec.problems[i]; i++)
		check_ctx(rec.problems[i], strstr(rec.problems[i], "/run/topotune/state") ||
					   strstr(rec.problems[i], "cpuset.cpus.partition"));

	/* Recovery again: nothing to do, the file aside stays. */
	recovery_done(&rec);
	check_int(applier_recover(a, &rec), 0);
	check_int(rec.found, 0);
	check(!rec.problems && !rec.aside);
	check(aside_rel && path_exists_at(fd, aside_rel));

	/* A record that is a symlink (or a FIFO): moved aside whole, never followed, never a name reused. */
	check(symlinkat("/etc/shadow", fd, STATE_FILE) == 0);
	recovery_done(&rec);
	check_int(applier_recover(a, &rec), 0);
	check_int(rec.found, 0);
	check(rec.problems && strstr(rec.problems[0], "/run/topotune/state: Too many levels of symbolic links"));
	check(rec.aside && aside_rel && !streq(rec.aside + 1, aside_rel));
	check(!path_exists_at(fd, STATE_FILE));
	{
		_cleanup_close_ int dfd = open_beneath(fd, STATE_DIR, O_PATH | O_DIRECTORY, 0, FILEIO_WRITE);
		char target[64] = "";

		check(rec.aside && readlinkat(dfd, strrchr(rec.aside, '/') + 1, target, sizeof(target) - 1) > 0);
		check_str(target, "/etc/shadow");
	}
	rm_rf(tmpl);
}

/*
 * A record whose values are shell or garbage (issue 29): every value passes
 * the parser a plan's value passes, or its line is set aside and reported,
 * never written. One good line shows that the rest still gets restored.
 */
static void test_recover_garbage(void)
{
	static const char *const bad[] = {
		/* sysctls: the control's number, nothing else */
		"change plain 1 relax_domain_level =proc/sys/kernel/sched_relax_domain_level =1;reboot%0A =3 =x\n",
		"change plain 1 numa_balancing =proc/sys/kernel/numa_balancing =%24(id) =1 =x\n",
		"change plain 1 smt_buddy_assist =proc/sys/kernel/sched_smt_buddy_assist =1%0A2 =0 =x\n",
		"change plain 1 smt_buddy_assist =proc/sys/kernel/sched_smt_buddy_assist = =0 =x\n",
		"change plain 1 relax_domain_level =sys/fs/cgroup/cpuset/cpuset.sched_relax_domain_level =abc =2 =x\n",
		/* the slice's CPUs and partition */
		"change plain 1 isolated_cpus =sys/fs/cgroup/topotune.slice/cpuset.cpus =0-3%0Arm%20-rf =2 =x\n",
		"change systemd 1 isolated_cpus =systemd:topotune.slice/AllowedCPUs =x%3By =2 =x\n",
		"change partition 1 isolated_cpus =sys/fs/cgroup/topotune.slice/cpuset.cpus.partition =threaded =isolated =x\n",
		/* the boot loader request: shell where a level belongs */
		"change file 1 relax_domain_level =run/topotune/bootloader.request "
		"=GRUB_CMDLINE_LINUX_DEFAULT%3D%22%24(touch%20/pwned)%22%0A =2%0A =x\n",
		"change file 1 relax_domain_level =run/topotune/bootloader.request ! =2%3Breboot%0A =x\n",
	};
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_(recovery_done) Recovery rec = {};
	_cleanup_free_ char *smt = NULL;
	StrBuf b = {};
	char *text = NULL;

	put(fd, "sys/fs/cgroup/cpuset/cpuset.sched_relax_domain_level", "2\n");
	put(fd, "sys/fs/cgroup/topotune.slice/cpuset.cpus", "2\n");
	put(fd, "sys/fs/cgroup/topotune.slice/cpuset.cpus.partition", "isolated\n");
	put(fd, "run/topotune/bootloader.request", "2\n");
	put(fd, "proc/sys/kernel/sched_relax_domain_level", "3\n");
	put(fd, "proc/sys/kernel/numa_balancing", "1\n");
	strbuf_append(&b, "# topotune write-ahead record v1: kind done setting path old new why\n");
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		strbuf_append(&b, bad[i]);
	strbuf_append(&b, "change plain 1 smt_buddy_assist =proc/sys/kernel/sched_smt_buddy_assist =1%0A =0 =good\n");
	check(strbuf_steal(&b, &text) >= 0);
	put(fd, STATE_FILE, text);
	free(text);

	check(applier_new(fd, NULL, NULL, &a) == 0);
	check_int(applier_recover(a, &rec), 0);
	check_int(rec.found, ELEMENTSOF(bad) + 1);
	check_int(rec.restored, 1);
	check_int(strv_length(rec.problems), ELEMENTSOF(bad));
	for (size_t i = 0; rec.problems && rec.problems[i]; i++)
		check_ctx(rec.problems[i], strstr(rec.problems[i], "/run/topotune/state:") &&
					   strstr(rec.problems[i], "left alone"));
	/* Nothing written: the tree is as it was but for the record, now aside. */
	check(!path_exists_at(fd, STATE_FILE));
	check(rec.aside != NULL);
	{
		static const char *const files[][2] = {
			{ "sys/fs/cgroup/cpuset/cpuset.sched_relax_domain_level", "2\n" },
			{ "sys/fs/cgroup/topotune.slice/cpuset.cpus", "2\n" },
			{ "sys/fs/cgroup/topotune.slice/cpuset.cpus.partition", "isolated\n" },
			{ "run/topotune/bootloader.request", "2\n" },
			{ "proc/sys/kernel/sched_relax_domain_level", "3\n" },
			{ "proc/sys/kernel/numa_balancing", "1\n" },
		};

		for (size_t i = 0; i < ELEMENTSOF(files); i++) {
			_cleanup_free_ char *got = file(fd, files[i][0]);

			check_ctx(files[i][0], got && streq(got, files[i][1]));
		}
	}
	/* The one good line is restored. */
	check_str(smt = file(fd, "proc/sys/kernel/sched_smt_buddy_assist"), "1\n");
	rm_rf(tmpl);
}

static double cpu_seconds(void)
{
	struct timespec ts;

	check(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A record of bad lines (issue 29: 600 KB took 101 s, StateReasons grew to
 * 13.7 MB), as large as one may be: STATE_FILE_MAX bytes exactly, 524,288
 * lines. Recovery reads it in one pass, keeps every line aside but reports
 * at most RECOVERY_PROBLEMS_MAX of them and a count; a record one byte
 * larger is set aside whole, unread, with the reason. The quadratic reader
 * needed minutes for 200,000 lines; linear work is milliseconds, so the
 * CPU-time bound is far from both, and from topotuned.service's
 * TimeoutStartSec=90s, which this bounds.
 */
static void test_recover_large(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_(recovery_done) Recovery rec = {};
	_cleanup_free_ char *kept = NULL, *big = NULL, *more = NULL;
	const unsigned lines = STATE_FILE_MAX / 2;
	size_t size = 0;
	double t0;
	char *text;

	text = malloc(lines * 2 + 1);
	check(text != NULL);
	if (!text)
		return;
	for (unsigned i = 0; i < lines; i++)
		memcpy(text + i * 2, "x\n", 2);
	text[lines * 2] = '\0';
	put(fd, STATE_FILE, text);
	free(text);

	check(applier_new(fd, NULL, NULL, &a) == 0);
	t0 = cpu_seconds();
	check_int(applier_recover(a, &rec), 0);
	check_ctx("524,288 lines in CPU seconds", cpu_seconds() - t0 < 5.0);
	check_int(rec.found, lines);
	check_int(rec.n_problems, lines);
	check_int(strv_length(rec.problems), RECOVERY_PROBLEMS_MAX + 1);
	if (strv_length(rec.problems) == RECOVERY_PROBLEMS_MAX + 1) {
		more = strprintf("... and %u more problems", lines - RECOVERY_PROBLEMS_MAX);
		check(more && strstr(rec.problems[RECOVERY_PROBLEMS_MAX], more));
		check(strstr(rec.problems[RECOVERY_PROBLEMS_MAX - 1], "/run/topotune/state:16: malformed"));
	}
	check(rec.aside && read_file_at(fd, rec.aside + 1, 0, &kept, &size) == 0);
	check_int(size, strlen("# topotune: what recovery could not restore, or refused; nothing reads this file again\n") +
			    lines * 2);

	/* One byte over the bound: set aside whole, nothing parsed, the reason says so. */
	recovery_done(&rec);
	big = malloc(STATE_FILE_MAX + 2);
	check(big != NULL);
	if (!big)
		return;
	memset(big, '#', STATE_FILE_MAX + 1);
	big[STATE_FILE_MAX + 1] = '\0';
	put(fd, STATE_FILE, big);
	check_int(applier_recover(a, &rec), 0);
	check_int(rec.found, 0);
	check(rec.problems && strstr(rec.problems[0], "/run/topotune/state: larger than 1048576 bytes"));
	check_int(strv_length(rec.problems), 1);
	check(rec.aside && !path_exists_at(fd, STATE_FILE));
	rm_rf(tmpl);
}

/* The file outside the root, read with plain stdio: the test's view, not the agent's. */
static void check_victim(const char *victim)
{
	char buf[128] = "";
	FILE *v = fopen(victim, "re");

	check(v && fread(buf, 1, sizeof(buf) - 1, v) > 0);
	if (v)
		fclose(v);
	check_str(buf, "root:x:0:0::/root:/bin/sh\n");
}

/*
 * Links out of the root: a sysctl, the bootloader drop-in and the record's
 * temporary file pointing at a file outside (absolute or through ".."). The
 * apply must fail or go around them, and the outside file stays as it was.
 */
static void test_links_out(const char *target_kind)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_free_ char *outside = strprintf("%s.outside", tmpl), *victim = strprintf("%s/passwd", outside);
	_cleanup_free_ char *cmd = NULL, *got = NULL, *link_path = NULL, *target = NULL;
	_cleanup_(plan_freep) Plan *p = make_plan(SMT_BUDDY_ON, RELAX_KEEP, 0, NULL, false);
	_cleanup_(applier_freep) Applier *a = NULL;
	bool absolute = streq(target_kind, "absolute");
	FILE *f;

	check(mkdir(outside, 0755) == 0);
	f = fopen(victim, "we");
	check(f != NULL);
	if (f) {
		fputs("root:x:0:0::/root:/bin/sh\n", f);
		fclose(f);
	}

	/* 1. The sysctl is a link to the outside file. */
	check(unlinkat(fd, "proc/sys/kernel/sched_smt_buddy_assist", 0) == 0);
	/* Relative: from <root>/proc/sys/kernel/ four levels up is /tmp, then into the sibling. */
	target = absolute ? strdup(victim) : strprintf("../../../../%s/passwd", strrchr(outside, '/') + 1);
	check(symlinkat(target, fd, "proc/sys/kernel/sched_smt_buddy_assist") == 0);
	check(applier_new(fd, NULL, NULL, &a) == 0);
	check_int(applier_apply(a, p), -ELOOP);
	check_ctx(target_kind, a->error && strstr(a->error, "/proc/sys/kernel/sched_smt_buddy_assist"));
	check_victim(victim);
	check_ctx(target_kind, !path_exists_at(fd, STATE_FILE));
	a = applier_free(a);
	check(unlinkat(fd, "proc/sys/kernel/sched_smt_buddy_assist", 0) == 0);
	put(fd, "proc/sys/kernel/sched_smt_buddy_assist", "0\n");

	/* 2. The record's temporary file is a link (run/topotune/ is three levels deep): the outside stays. */
	check(symlinkat(absolute ? victim : target + 3, fd, STATE_FILE ".tmp") == 0);
	check(applier_new(fd, NULL, NULL, &a) == 0);
	check_int(applier_apply(a, p), 1);
	check_victim(victim);
	check(read_file_at(fd, STATE_FILE, 0, &got, NULL) == 0);
	check_ctx(target_kind, got && startswith(got, "# topotune write-ahead record"));
	check(applier_revert(a) == 0);
	a = applier_free(a);

	/* 3. The boot loader request is a link to a passwd-like file. */
	{
		_cleanup_(topology_freep) Topology *t = NULL;
		_cleanup_(plan_freep) Plan *pb = NULL;
		ProfileSettings s = {
			.value[SETTING_SMT_BUDDY_ASSIST].mode = SMT_BUDDY_KEEP,
			.value[SETTING_RELAX_DOMAIN_LEVEL].mode = RELAX_LEVEL,
			.value[SETTING_RELAX_DOMAIN_LEVEL].level = 2,
			.value[SETTING_ISOLATED_CPUS].mode = ISOLATION_KEEP,
		};
		KernelCaps k;
		PlanInput in;

		put(fd, "etc/default/grub", "GRUB_DEFAULT=0\n");
		check(symlinkat(absolute ? victim : target + 3, fd, "run/topotune/bootloader.request") == 0);
		check(topo_build(&small, &t) == 0);
		kernel_caps_stock(&k);
		in = (PlanInput) { &intel, t, &k, &s, "t" };
		check(plan_compute(&in, &pb) == 0);
		check(applier_new(fd, NULL, NULL, &a) == 0);
		a->manage_bootloader = true;
		check_int(applier_apply(a, pb), -ELOOP);
		check_ctx(target_kind, a->error && strstr(a->error, "/run/topotune/bootloader.request"));
		kernel_caps_done(&k);
	}
	check_victim(victim);
	rm_rf(tmpl);
	rm_rf(outside);
}

static void test_escape(void)
{
	static const char *values[] = { "", "0", "a b\n", "100%", "GRUB=\"$X y\"\n", "x=y" };

	for (size_t i = 0; i < ELEMENTSOF(values); i++) {
		_cleanup_free_ char *e = state_escape(values[i]), *u = NULL;

		check(e && !strpbrk(e, " \n\t"));
		check(state_unescape(e, &u) == 0);
		check_str(u, values[i]);
	}
	{
		char *u = (char *)"x";

		check(state_unescape("!", &u) == 0 && u == NULL);
		check(state_unescape("=%zz", &u) == -EBADMSG);
		check(state_unescape("nope", &u) == -EBADMSG);
	}
}

static void test_empty_root(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_(plan_freep) Plan *p = make_plan(SMT_BUDDY_ON, RELAX_LEVEL, 2, NULL, false);
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_free_ char *after = NULL;
	int fd;

	check(mkdtemp(tmpl) != NULL);
	check(root_open(tmpl, &fd) == 0);
	check(applier_new(fd, NULL, NULL, &a) == 0);
	check_int(applier_apply(a, p), -ENOENT);
	check(a->error && strstr(a->error, "/proc/sys/kernel/sched_smt_buddy_assist"));
	after = snapshot(fd);
	check_str(after, "");
	close(fd);
	rm_rf(tmpl);
}

/*
 * The unit binds /proc/irq at run/topotune/irq: the applier writes IRQ files
 * there only when that is procfs with the IRQ files in it. A plain
 * directory (or a link) in a tree never redirects a write.
 */
static void test_irq_dir(void)
{
	char tmpl[] = "/tmp/topotune-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl), rootfd = -EBADF;
	Applier *a = NULL;

	check(applier_new(fd, NULL, NULL, &a) == 0);
	check_int(applier_set_irq_dir(a, IRQ_BIND_DIR), 0);   /* absent */
	put(fd, IRQ_BIND_DIR "/default_smp_affinity", "f\n");
	check_int(applier_set_irq_dir(a, IRQ_BIND_DIR), 0);   /* not procfs */
	check(a->irq_dir == NULL);
	check(unlinkat(fd, IRQ_BIND_DIR "/default_smp_affinity", 0) == 0);
	check(unlinkat(fd, IRQ_BIND_DIR, AT_REMOVEDIR) == 0);
	check(symlinkat("/proc/irq", fd, IRQ_BIND_DIR) == 0);  /* out of the root: refused */
	check(applier_set_irq_dir(a, IRQ_BIND_DIR) <= 0);
	check(a->irq_dir == NULL);
	applier_free(a);

	/* The machine's own procfs, as the unit's bind shows it. */
	if (access("/proc/irq/default_smp_affinity", F_OK) == 0) {
		check(root_open("/", &rootfd) == 0);
		check(applier_new(rootfd, NULL, NULL, &a) == 0);
		check_int(applier_set_irq_dir(a, "proc/irq"), 1);
		check_str(a->irq_dir, "proc/irq");
		applier_free(a);
	}
	rm_rf(tmpl);
}

/* --- housekeeping: IRQs, workqueues, irqbalance ------------------------------ */

static void check_file_at(const char *where, int fd, const char *path, const char *want)
{
	_cleanup_free_ char *s = file(fd, path);

	check_ctx(where, streq(s, want));
	if (!streq(s, want))
		fprintf(stderr, "%s: /%s holds \"%s\", want \"%s\"\n", where, path, s, want);
}
#define check_file_str(x) #x
#define check_file_line(l) check_file_str(l)
#define check_file(fd, path, want) check_file_at(__FILE__ ":" check_file_line(__LINE__), fd, path, want)

static void check_file_lacks(int fd, const char *path, const char *text)
{
	_cleanup_free_ char *s = file(fd, path);

	check(!strstr(s, text));
}

/*
 * A kernel's /proc/irq as the applier meets it: the IRQs in @managed refuse
 * a new affinity with EIO (irq_can_set_affinity_usr() is false for a
 * managed or per-CPU IRQ, and write_irq_affinity() says EIO); writing IRQ
 * @trigger frees IRQ @vanish and allocates IRQ @appear meanwhile.
 */
static struct {
	const char *managed[4];
	unsigned trigger, vanish, appear;
	bool fired;
} irqk;

static bool irq_managed(const char *path)
{
	for (size_t i = 0; i < ELEMENTSOF(irqk.managed) && irqk.managed[i]; i++) {
		_cleanup_free_ char *p = strprintf("proc/irq/%s/smp_affinity_list", irqk.managed[i]);

		if (streq(path, p))
			return true;
	}
	return false;
}

static int irq_write(void *u, int root_fd, const char *path, const char *value)
{
	_cleanup_free_ char *trigger = strprintf("proc/irq/%u/smp_affinity_list", irqk.trigger);
	int r;

	if (irq_managed(path))
		return -EIO;
	r = f_write(u, root_fd, path, value);
	if (r >= 0 && irqk.trigger && !irqk.fired && streq(path, trigger)) {
		_cleanup_free_ char *gone = strprintf("proc/irq/%u/smp_affinity_list", irqk.vanish),
				    *dir = strprintf("proc/irq/%u", irqk.vanish),
				    *new = strprintf("proc/irq/%u/smp_affinity_list", irqk.appear);

		irqk.fired = true;
		check(unlinkat(root_fd, gone, 0) == 0 && unlinkat(root_fd, dir, AT_REMOVEDIR) == 0);
		put(root_fd, new, "0-7\n");
	}
	return r;
}

/* What irqbalance's socket heard, one command per connection. */
static char *irqbalance_heard;

static int irqbalance_fake(void *u, int root_fd, const char *path, const char *cpus)
{
	if (!path_exists_at(root_fd, path))
		return -ECONNREFUSED;
	free(irqbalance_heard);
	irqbalance_heard = strprintf("%s settings cpus %s", path, *cpus ? cpus : "NULL");
	return 0;
}

static const ApplierIo irq_io = { f_read, irq_write, f_mkdir, f_remove, NULL, NULL, irqbalance_fake };

static void put_irqs(int fd)
{
	put(fd, "proc/irq/default_smp_affinity", "ff\n");
	put(fd, "proc/irq/0/smp_affinity_list", "0\n");
	put(fd, "proc/irq/1/smp_affinity_list", "0-7\n");
	put(fd, "proc/irq/9/smp_affinity_list", "3\n");
	put(fd, "proc/irq/24/smp_affinity_list", "7\n");
	put(fd, "proc/irq/25/smp_affinity_list", "0-7\n");
	put(fd, "sys/devices/virtual/workqueue/cpumask", "000000ff\n");
}

/*
 * Killed between an IRQ's record and the kernel's refusal (EIO: managed or
 * per-CPU), as the systemd VM's kill at the first IRQ write found on
 * Debian's 6.1 (IRQ 0): the IRQ still has the record's original, so
 * recovery has nothing to put back and no problem to report. A refusing
 * IRQ whose affinity is no longer the original is a problem, set aside.
 */
static void test_recover_irq_refused(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_(recovery_done) Recovery rec = {};
	_cleanup_free_ char *kept = NULL;

	put_irqs(fd);
	put(fd, STATE_FILE,
	    "# topotune write-ahead record v1: kind done setting path old new why\n"
	    "change irq 1 housekeeping =proc/irq/1/smp_affinity_list =0-7%0A =0-2,4-6 =crash\n"
	    "change irq 1 housekeeping =proc/irq/25/smp_affinity_list =3%0A =0-2,4-6 =crash\n"
	    "change irq 0 housekeeping =proc/irq/24/smp_affinity_list =7%0A =0-2,4-6 =crash\n");
	put(fd, "proc/irq/1/smp_affinity_list", "0-2,4-6\n");
	irqk = (typeof(irqk)) { .managed = { "24", "25" } };
	check(applier_new(fd, &irq_io, NULL, &a) == 0);
	check_int(applier_recover(a, &rec), 0);
	check_int(rec.found, 3);
	check_int(rec.restored, 2);
	check_int(strv_length(rec.problems), 1);
	check(rec.problems && strstr(rec.problems[0], "proc/irq/25/smp_affinity_list"));
	check_file(fd, "proc/irq/1/smp_affinity_list", "0-7\n");
	check_file(fd, "proc/irq/24/smp_affinity_list", "7\n");
	check(rec.aside && read_file_at(fd, rec.aside + 1, 0, &kept, NULL) == 0);
	check(kept && strstr(kept, "irq/25/") && !strstr(kept, "irq/24/"));
	irqk = (typeof(irqk)) {};
	rm_rf(tmpl);
}

/* The plan on the tree as the probe finds it: CPUs 3,7 (core 3) isolated, housekeeping @mode. */
static Plan *make_hk_plan(int fd, int mode, const char *isolated)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	ProfileSettings s = {
		.value[SETTING_ISOLATED_CPUS].mode = isolated ? ISOLATION_LIST : ISOLATION_NONE,
		.origin[SETTING_ISOLATED_CPUS] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 6 },
		.value[SETTING_HOUSEKEEPING].mode = mode,
		.origin[SETTING_HOUSEKEEPING] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 7 },
	};
	KernelCaps k;
	PlanInput in;
	Plan *p = NULL;

	check(topo_build(&small, &t) == 0);
	if (isolated)
		check(cpuset_parse_list(isolated, &s.value[SETTING_ISOLATED_CPUS].cpus, NULL) == 0);
	check(kernel_probe(fd, &k) == 0);
	in = (PlanInput) { &intel, t, &k, &s, "t" };
	check(plan_compute(&in, &p) == 0);
	cpuset_done(&s.value[SETTING_ISOLATED_CPUS].cpus);
	kernel_caps_done(&k);
	return p;
}

/*
 * Managed IRQs refuse and are reported, not fatal; the rest move to the
 * housekeeping CPUs of their affinity; drift is per file; a kill -9 leaves a
 * record that restores every byte, masks in the kernel's own spelling.
 */
static void test_housekeeping_apply(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_free_ char *before = NULL, *after = NULL, *actual = NULL;
	_cleanup_(plan_freep) Plan *p = NULL;
	Applier *a = NULL;
	Mismatch *m = NULL;
	size_t n = 99;

	put_irqs(fd);
	before = snapshot(fd);
	check(strstr(before, "proc/irq/1/smp_affinity_list\n0-7\n"));
	p = make_hk_plan(fd, HOUSEKEEPING_ALL, "3,7");
	if (!p)
		return;
	check_int(p->steps[SETTING_HOUSEKEEPING].action, STEP_SET);
	check_str(p->steps[SETTING_HOUSEKEEPING].to, "irqs 0-2,4-6; workqueues 0-2,4-6; irqbalance not running");

	fault = (Fault) {};
	irqk = (typeof(irqk)) { .managed = { "24" } };
	check(applier_new(fd, &irq_io, NULL, &a) == 0);
	/* slice dir, cpuset.cpus, partition; default affinity, workqueues; IRQs 1, 9 and 25. */
	check_int(applier_apply(a, p), 8);
	check_file(fd, "proc/irq/default_smp_affinity", "77");
	check_file(fd, "sys/devices/virtual/workqueue/cpumask", "77");
	check_file(fd, "proc/irq/0/smp_affinity_list", "0\n");
	check_file(fd, "proc/irq/1/smp_affinity_list", "0-2,4-6");
	/* Only on isolated CPUs before: all the housekeeping CPUs now. */
	check_file(fd, "proc/irq/9/smp_affinity_list", "0-2,4-6");
	check_file(fd, "proc/irq/24/smp_affinity_list", "7\n");
	check_file(fd, "proc/irq/25/smp_affinity_list", "0-2,4-6");
	check_int(a->n_irqs_refused, 1);
	if (a->n_irqs_refused == 1) {
		check_int(a->irqs_refused[0], 24);
		check_int(a->irqs_refused_error[0], -EIO);
	}
	check_int(a->irqs_moved, 3);
	check(!a->error || !strstr(a->error, "irq/24"));
	/* The refusal is kept for the planners that run without the daemon (topotunectl plan)... */
	check_file(fd, KERNEL_IRQS_REFUSED_FILE,
		   "# IRQs whose affinity the kernel refused at topotuned's last apply: IRQ ERRNO\n24 EIO\n");
	/* ... whose probe reads it: nothing left to move, IRQ 24 named with the kernel's answer. */
	{
		_cleanup_(plan_freep) Plan *again = make_hk_plan(fd, HOUSEKEEPING_ALL, "3,7");

		check(again);
		if (again) {
			const char *why = again->steps[SETTING_HOUSEKEEPING].why;

			check_int(again->steps[SETTING_HOUSEKEEPING].action, STEP_NONE);
			check(strstr(why, "0 of 5 IRQs have isolated CPUs in their affinity and move; cannot be moved: "
				     "IRQ 24: the kernel refused (EIO: managed or per-CPU)"));
			/* Applying that plan moves nothing, and the IRQ still refuses: the file stays. */
			check_int(applier_apply(a, again), 0);
			check_int(a->n_irqs_refused, 1);
			check(path_exists_at(fd, KERNEL_IRQS_REFUSED_FILE));
		}
	}
	check_int(applier_read_actual(a, &p->steps[SETTING_HOUSEKEEPING], &actual), 0);
	check_str(actual, "irqs 0-2,4-6; workqueues 0-2,4-6; irqbalance not running");
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 0);
	mismatches_free(m, n);

	/* Another writer puts IRQ 1 back on every CPU: drift of that file, by its path. */
	check(write_string_at(fd, "proc/irq/1/smp_affinity_list", "0-7") == 0);
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 1);
	if (n == 1) {
		check_int(m[0].setting, SETTING_HOUSEKEEPING);
		check_str(m[0].want, "/proc/irq/1/smp_affinity_list: 0-2,4-6");
		check_str(m[0].got, "/proc/irq/1/smp_affinity_list: 0-7");
	}
	mismatches_free(m, n);
	/* ... and the workqueue mask: the step's text says which part. */
	check(write_string_at(fd, "sys/devices/virtual/workqueue/cpumask", "ff") == 0);
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 2);
	if (n == 2)
		check_str(m[1].got, "irqs 0-2,4-6; workqueues 0-7; irqbalance not running");
	mismatches_free(m, n);
	/* The repair writes both again, from the record's originals. */
	check_int(applier_apply(a, p), 2);
	check_file(fd, "proc/irq/1/smp_affinity_list", "0-2,4-6");
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 0);
	mismatches_free(m, n);
	/*
	 * irqbalance, told the banned CPUs, narrows IRQ 1 to one housekeeping
	 * CPU: in sync, and an apply leaves it there (seen in the systemd VM:
	 * verify called that drift, and a repair would fight irqbalance).
	 */
	check(write_string_at(fd, "proc/irq/1/smp_affinity_list", "5") == 0);
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 0);
	mismatches_free(m, n);
	check_int(applier_apply(a, p), 0);
	check_file(fd, "proc/irq/1/smp_affinity_list", "5");
	/* Onto an isolated CPU: drift. */
	check(write_string_at(fd, "proc/irq/1/smp_affinity_list", "3") == 0);
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 1);
	mismatches_free(m, n);
	check_int(applier_apply(a, p), 1);
	check_file(fd, "proc/irq/1/smp_affinity_list", "0-2,4-6");

	/* kill -9: the record restores every byte, IRQ by IRQ; the refused IRQs' file goes with it. */
	applier_free(a);
	check(path_exists_at(fd, KERNEL_IRQS_REFUSED_FILE));
	check(applier_new(fd, &irq_io, NULL, &a) == 0);
	check_int(applier_load_state(a), 8);
	check(applier_revert(a) == 0);
	check(!path_exists_at(fd, KERNEL_IRQS_REFUSED_FILE));
	after = snapshot(fd);
	check_str(after, before);
	applier_free(a);

	/* A record that names another file under proc/irq is refused, not followed. */
	put(fd, STATE_FILE, "change irq 1 housekeeping =proc/irq/1/../../sys/kernel/x =0-7 =0 =t\n");
	check(applier_new(fd, NULL, NULL, &a) == 0);
	check_int(applier_load_state(a), -EBADMSG);
	check(a->error && strstr(a->error, "state:1: not a path topotune writes"));
	applier_free(a);
	put(fd, STATE_FILE, "change mask 1 housekeeping =proc/irq/default_smp_affinity =ff =77%3Brm =t\n");
	check(applier_new(fd, NULL, NULL, &a) == 0);
	check_int(applier_load_state(a), -EBADMSG);
	check(a->error && strstr(a->error, "state:1: not a CPU mask"));
	applier_free(a);
	rm_rf(tmpl);
}

/*
 * IRQ 9 is freed and IRQ 40 allocated while the apply runs: 9 is skipped,
 * 40 is left to verification, which names it as new since the last IRQ
 * pass (no drift: CI, ASan, 2026-12-05, an IRQ that appeared between the
 * daemon's catch-up pass and its verification was "Drift:"), and the next
 * pass moves it. Once a pass saw it, an isolated CPU in it is drift.
 * Revert restores what we moved, and leaves IRQ 41 (appeared since) alone.
 */
static void test_housekeeping_irqs_come_and_go(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(plan_freep) Plan *p = NULL;
	_cleanup_(applier_freep) Applier *a = NULL;
	Mismatch *m = NULL;
	size_t n = 99;

	put_irqs(fd);
	p = make_hk_plan(fd, 1 << HOUSEKEEPING_IRQS, "3,7");
	if (!p)
		return;
	fault = (Fault) {};
	irqk = (typeof(irqk)) { .managed = { "24", "25" }, .trigger = 1, .vanish = 9, .appear = 40 };
	check(applier_new(fd, &irq_io, NULL, &a) == 0);
	/* slice dir, cpuset.cpus, partition, default affinity, IRQ 1. */
	check_int(applier_apply(a, p), 5);
	check(irqk.fired);
	check_int(a->irqs_gone, 1);
	check_int(a->n_irqs_refused, 2);
	check_file(fd, "proc/irq/40/smp_affinity_list", "0-7\n");
	check_file_lacks(fd, STATE_FILE, "irq/9/");
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 1);
	if (n == 1) {
		check_str(m[0].want, "/proc/irq/40/smp_affinity_list: 0-2,4-6");
		check_str(m[0].got, "/proc/irq/40/smp_affinity_list: 0-7 (an IRQ not moved yet)");
		check(m[0].new_irq);
	}
	mismatches_free(m, n);
	check_int(applier_irqs_appeared(a), 1);
	check_int(applier_apply_irqs(a, p), 1);
	check_file(fd, "proc/irq/40/smp_affinity_list", "0-2,4-6");
	/* The managed IRQs are no drift: the kernel keeps them, and said so. */
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 0);
	mismatches_free(m, n);
	/* Seen by a pass: an isolated CPU there again is drift, named with its path. */
	put(fd, "proc/irq/40/smp_affinity_list", "0-7\n");
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 1);
	if (n == 1) {
		check_str(m[0].want, "/proc/irq/40/smp_affinity_list: 0-2,4-6");
		check_str(m[0].got, "/proc/irq/40/smp_affinity_list: 0-7");
		check(!m[0].new_irq);
	}
	mismatches_free(m, n);
	check_int(applier_apply(a, p), 1);
	check_file(fd, "proc/irq/40/smp_affinity_list", "0-2,4-6");

	/* IRQ 40 freed after we moved it: its record has nothing to restore, and the revert goes on. */
	put(fd, "proc/irq/41/smp_affinity_list", "3\n");
	check(unlinkat(fd, "proc/irq/40/smp_affinity_list", 0) == 0 && unlinkat(fd, "proc/irq/40", AT_REMOVEDIR) == 0);
	check_int(applier_revert(a), 0);
	check_file(fd, "proc/irq/default_smp_affinity", "ff\n");
	check_file(fd, "proc/irq/1/smp_affinity_list", "0-7\n");
	check(!path_exists_at(fd, "proc/irq/40"));
	check_file(fd, "proc/irq/41/smp_affinity_list", "3\n");
	check(!path_exists_at(fd, STATE_FILE));
	rm_rf(tmpl);
}

/*
 * A driver binds after the apply and its IRQs appear (issue 30): the IRQ
 * pass alone moves the one on an isolated CPU through the record, leaves
 * the one already off them, and writes nothing else (the default affinity
 * another writer changed meanwhile stays as it is: that is verification's).
 * A managed IRQ among the new ones is reported. Revert puts the moved one
 * back as it came and leaves an IRQ that appeared after the pass alone.
 */
static void test_housekeeping_irqs_new(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_(plan_freep) Plan *p = NULL, *none = NULL;
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_free_ char *record = NULL, *refused = NULL;
	Mismatch *m = NULL;
	size_t n = 99;

	put_irqs(fd);
	p = make_hk_plan(fd, 1 << HOUSEKEEPING_IRQS, "3,7");
	if (!p)
		return;
	fault = (Fault) {};
	irqk = (typeof(irqk)) { .managed = { "24", "52" } };
	check(applier_new(fd, &irq_io, NULL, &a) == 0);
	check_int(applier_irqs_appeared(a), 0);   /* no pass yet: nothing to compare with */
	/* slice dir, cpuset.cpus, partition, default affinity; IRQs 1, 9 and 25. */
	check_int(applier_apply(a, p), 7);
	check_int(applier_irqs_appeared(a), 0);

	put(fd, "proc/irq/50/smp_affinity_list", "0-7\n");
	put(fd, "proc/irq/51/smp_affinity_list", "0-2\n");
	put(fd, "proc/irq/52/smp_affinity_list", "7\n");
	put(fd, "proc/irq/default_smp_affinity", "ff\n");
	check_int(applier_irqs_appeared(a), 1);
	check_int(applier_apply_irqs(a, p), 1);
	check_file(fd, "proc/irq/50/smp_affinity_list", "0-2,4-6");
	check_file(fd, "proc/irq/51/smp_affinity_list", "0-2\n");
	check_file(fd, "proc/irq/52/smp_affinity_list", "7\n");
	check_file(fd, "proc/irq/default_smp_affinity", "ff\n");
	check_int(a->n_irqs_refused, 2);
	if (a->n_irqs_refused == 2)
		check_int(a->irqs_refused[1], 52);
	record = file(fd, STATE_FILE);
	refused = file(fd, KERNEL_IRQS_REFUSED_FILE);
	check(strstr(record, "change irq 1 housekeeping =proc/irq/50/smp_affinity_list =0-7"));
	check(!strstr(record, "irq/51/") && !strstr(record, "irq/52/"));
	check(strstr(refused, "\n52 EIO"));
	check_int(applier_irqs_appeared(a), 0);
	/* Nothing new: the pass writes nothing. */
	check_int(applier_apply_irqs(a, p), 0);
	/*
	 * register_irq_proc() makes an IRQ's directory before its files: a pass
	 * in between finds no smp_affinity_list. The IRQ is not seen yet: once
	 * the file is there it is new, not drift (the CI run of 2026-12-05).
	 */
	check(mkdirat(fd, "proc/irq/54", 0755) == 0);
	check_int(applier_irqs_appeared(a), 1);
	check_int(applier_apply_irqs(a, p), 0);
	check_int(a->irqs_gone, 0);   /* not "gone meanwhile" in the pass's log line */
	check_int(applier_irqs_appeared(a), 1);
	put(fd, "proc/irq/54/smp_affinity_list", "0-7\n");
	check_int(applier_irqs_appeared(a), 1);
	check_int(applier_apply_irqs(a, p), 1);
	check_file(fd, "proc/irq/54/smp_affinity_list", "0-2,4-6");
	check_int(applier_irqs_appeared(a), 0);
	/* A sysroot's file between its creation and its write reads empty: not seen yet either. */
	put(fd, "proc/irq/55/smp_affinity_list", "");
	check_int(applier_apply_irqs(a, p), 0);
	check_file(fd, "proc/irq/55/smp_affinity_list", "");
	check_int(applier_irqs_appeared(a), 1);
	put(fd, "proc/irq/55/smp_affinity_list", "0-7\n");
	check_int(applier_apply_irqs(a, p), 1);
	check_file(fd, "proc/irq/55/smp_affinity_list", "0-2,4-6");
	/* The IRQ of the new driver is no drift any more; the default affinity is. */
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 1);
	if (n == 1)
		check_str(m[0].got, "irqs 0-7");
	mismatches_free(m, n);

	/* A plan that keeps no IRQ off the isolated CPUs: the pass has nothing to do. */
	none = make_hk_plan(fd, 0, "3,7");
	if (none) {
		put(fd, "proc/irq/53/smp_affinity_list", "0-7\n");
		check_int(applier_apply_irqs(a, none), 0);
		check_file(fd, "proc/irq/53/smp_affinity_list", "0-7\n");
	}

	check_int(applier_revert(a), 0);
	check_file(fd, "proc/irq/50/smp_affinity_list", "0-7\n");
	check_file(fd, "proc/irq/51/smp_affinity_list", "0-2\n");
	check_file(fd, "proc/irq/53/smp_affinity_list", "0-7\n");
	check_file(fd, "proc/irq/54/smp_affinity_list", "0-7\n");
	check_file(fd, "proc/irq/55/smp_affinity_list", "0-7\n");
	check_file(fd, "proc/irq/1/smp_affinity_list", "0-7\n");
	check(!path_exists_at(fd, STATE_FILE));
	check_int(applier_irqs_appeared(a), 0);   /* reverted: no pass to compare with */
	rm_rf(tmpl);
}

/*
 * A workqueue cpumask that cannot be written (a read-only mount: the unit
 * without its ReadWritePaths=): the apply fails naming the file and
 * changes nothing, the IRQ default affinity written before it included.
 */
static void test_housekeeping_workqueue_readonly(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl);
	_cleanup_free_ char *before = NULL, *after = NULL;
	_cleanup_(plan_freep) Plan *p = NULL;
	_cleanup_(applier_freep) Applier *a = NULL;

	put_irqs(fd);
	before = snapshot(fd);
	p = make_hk_plan(fd, HOUSEKEEPING_ALL, "3,7");
	if (!p)
		return;
	fault = (Fault) { .path = "workqueue/cpumask", .on_write = true, .error = EROFS };
	irqk = (typeof(irqk)) {};
	check(applier_new(fd, &irq_io, NULL, &a) == 0);
	check_int(applier_apply(a, p), -EROFS);
	check(a->error && strstr(a->error, "/sys/devices/virtual/workqueue/cpumask: writing \"77\": Read-only file system"));
	after = snapshot(fd);
	check_str(after, before);
	rm_rf(tmpl);
}

/*
 * irqbalance is told through its socket: the isolated CPUs banned, and
 * the ban lifted on revert; an irqbalance gone meanwhile took its ban
 * with it (nothing to restore). The real socket protocol is checked
 * against a listening socket.
 */
static void test_housekeeping_irqbalance(void)
{
	char tmpl[] = "/tmp/test-applier-XXXXXX";
	_cleanup_close_ int fd = make_tree(tmpl), lfd = -EBADF, cfd = -EBADF;
	_cleanup_(plan_freep) Plan *p = NULL;
	_cleanup_free_ char *actual = NULL, *sockpath = NULL;
	Applier *a = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[128] = {};
	Mismatch *m = NULL;
	size_t n = 99;

	put_irqs(fd);
	put(fd, "run/irqbalance/.keep", "");
	sockpath = strprintf("%s/run/irqbalance/irqbalance4242.sock", tmpl);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sockpath);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	check(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 4) == 0);

	/* The protocol itself, against the socket: one command, credentials attached. */
	check_int(applier_irqbalance_send(fd, "run/irqbalance/irqbalance4242.sock", "3,7"), 0);
	cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	check(cfd >= 0 && read(cfd, buf, sizeof(buf) - 1) > 0);
	check_str(buf, "settings cpus 3,7");
	check_int(applier_irqbalance_send(fd, "run/irqbalance/irqbalance999.sock", ""), -ENOENT);

	p = make_hk_plan(fd, 1 << HOUSEKEEPING_IRQBALANCE, "3,7");
	if (!p)
		return;
	check_str(p->steps[SETTING_HOUSEKEEPING].from, "irqbalance running");
	check_str(p->steps[SETTING_HOUSEKEEPING].to, "irqbalance bans 3,7");
	irqk = (typeof(irqk)) {};
	check(applier_new(fd, &irq_io, NULL, &a) == 0);
	check_int(applier_apply(a, p), 4);
	check_str(irqbalance_heard, "run/irqbalance/irqbalance4242.sock settings cpus 3,7");
	check_int(applier_read_actual(a, &p->steps[SETTING_HOUSEKEEPING], &actual), 0);
	check_str(actual, "irqbalance bans 3,7");
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 0);
	mismatches_free(m, n);
	check_int(applier_apply(a, p), 0);

	/* irqbalance restarted: a new socket, without our ban: drift, and the repair tells the new one. */
	check(unlinkat(fd, "run/irqbalance/irqbalance4242.sock", 0) == 0);
	lfd = safe_close(lfd);
	free(sockpath);
	sockpath = strprintf("%s/run/irqbalance/irqbalance5000.sock", tmpl);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sockpath);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	check(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	check(applier_verify(a, p, &m, &n) == 0);
	check_int(n, 1);
	if (n == 1)
		check_str(m[0].got, "irqbalance bans none");
	mismatches_free(m, n);
	check_int(applier_apply(a, p), 1);
	check_str(irqbalance_heard, "run/irqbalance/irqbalance5000.sock settings cpus 3,7");
	/* The first irqbalance's record went back when the second one was told (it is gone: nothing to say). */
	check_file_lacks(fd, STATE_FILE, "irqbalance4242");

	/* kill -9, recovery: the ban lifted. */
	applier_free(a);
	free(irqbalance_heard);
	irqbalance_heard = NULL;
	check(applier_new(fd, &irq_io, NULL, &a) == 0);
	check_int(applier_load_state(a), 4);
	check(applier_revert(a) == 0);
	check_str(irqbalance_heard, "run/irqbalance/irqbalance5000.sock settings cpus NULL");
	applier_free(a);
	free(irqbalance_heard);
	irqbalance_heard = NULL;
	rm_rf(tmpl);
}

int main(void)
{
	test_escape();
	test_apply_verify_revert();
	test_numa_balancing();
	test_housekeeping_apply();
	test_irq_dir();
	test_housekeeping_irqs_come_and_go();
	test_housekeeping_irqs_new();
	test_housekeeping_workqueue_readonly();
	test_housekeeping_irqbalance();
	test_faults();
	test_rollback_keeps_record();
	test_no_isolated_file();
	test_unreadable_partition();
	test_vanished(false);
	test_vanished(true);
	test_record_unwritable();
	test_rollback_restores(true);
	test_rollback_restores(false);
	test_rollback_restores_other_writer();
	test_crash_recovery();
	test_crash_leaves_tmp();
	test_diff();
	test_empty_root();
	test_bootloader();
	test_recover_aside();
	test_recover_irq_refused();
	test_recover_garbage();
	test_recover_large();
	test_links_out("absolute");
	test_links_out("relative");
	/* The same where the kernel has no openat2(). */
	fileio_force_walk(true);
	test_links_out("absolute");
	test_links_out("relative");
	return test_end("test-applier");
}
