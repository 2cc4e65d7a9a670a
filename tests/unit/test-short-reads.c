/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every reader of the agent against a read() that does what POSIX allows
 * and the kernel rarely does: return fewer bytes than asked (one at a time,
 * or in odd chunks), fail with EINTR before reading, or fail once with
 * EAGAIN or EIO. read() is wrapped at link time (-Wl,--wrap=read), so the
 * agent's own code is exercised unchanged, on trees of generated machines
 * (argv[1], made by sysroot-tests.sh) with a /proc/schedstat, debugfs
 * domains, configuration, a write-ahead record and processes added.
 *
 * Short reads and EINTR must give results identical to plain reads. A
 * read that fails must end in an error, or in a note that names it; never
 * in a quietly different result. The applier under any of these either
 * does exactly what it does with plain reads, or fails and leaves the tree
 * byte for byte as it was. Also: every reader on a root fd of an empty
 * tree ends with a clear error or note and writes nothing.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applier.h"
#include "domains-live.h"
#include "fileio.h"
#include "strutil.h"
#include "test.h"
#include "topo-build.h"
#include "workload.h"

/* --- the wrapped read() --------------------------------------------------------- */

typedef enum Mode {
	MODE_PLAIN,
	MODE_ONE_BYTE,     /* at most one byte per call */
	MODE_CHUNKS,       /* 1-7 bytes per call */
	MODE_EINTR,        /* every other call: EINTR before reading anything */
	MODE_MIXED,        /* EINTR now and then, chunks of 1-5 bytes otherwise */
	MODE_FAIL_AT,      /* call number fail_at fails with fail_errno, once */
	_MODE_MAX,
} Mode;

static const char *const mode_names[_MODE_MAX] = {
	"plain", "one byte per read", "chunks of 1-7 bytes", "EINTR every other read", "EINTR and chunks", "fail once",
};

static Mode mode;
static unsigned calls, fail_at, shortened, interrupted;
static int fail_errno;
static uint32_t rng = 1;

ssize_t __real_read(int fd, void *buf, size_t count);
ssize_t __wrap_read(int fd, void *buf, size_t count);
ssize_t __real___read_chk(int fd, void *buf, size_t count, size_t buflen);
ssize_t __wrap___read_chk(int fd, void *buf, size_t count, size_t buflen);

static unsigned next_random(unsigned n)
{
	rng = rng * 1103515245U + 12345U;
	return (rng >> 16) % n;
}

/* How many bytes this call may return; < 0: fail it with -errno. */
static ssize_t fault(size_t count)
{
	unsigned n = calls++;
	size_t max = count;

	switch (mode) {
	case MODE_PLAIN:
		break;
	case MODE_ONE_BYTE:
		max = 1;
		break;
	case MODE_CHUNKS:
		max = 1 + next_random(7);
		break;
	case MODE_EINTR:
		if (n % 2 == 0) {
			interrupted++;
			return -EINTR;
		}
		break;
	case MODE_MIXED:
		if (next_random(3) == 0) {
			interrupted++;
			return -EINTR;
		}
		max = 1 + next_random(5);
		break;
	case MODE_FAIL_AT:
		if (n == fail_at)
			return -fail_errno;
		break;
	default:
		break;
	}
	if (max < count)
		shortened++;
	return (ssize_t)MIN(max, count);
}

ssize_t __wrap_read(int fd, void *buf, size_t count)
{
	ssize_t n = fault(count);

	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	return __real_read(fd, buf, (size_t)n);
}

/* _FORTIFY_SOURCE turns some read() calls into this one. */
ssize_t __wrap___read_chk(int fd, void *buf, size_t count, size_t buflen)
{
	ssize_t n = fault(count);

	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	return __real___read_chk(fd, buf, (size_t)n, buflen);
}

/* --- describing what a reader found --------------------------------------------- */

static void append_set(StrBuf *b, const char *what, const CpuSet *s)
{
	_cleanup_free_ char *l = NULL;

	check(cpuset_format_list(s, &l) == 0);
	strbuf_appendf(b, "%s=%s\n", what, strna(l));
}

static void append_notes(StrBuf *b, char **notes)
{
	STRV_FOREACH(n, notes)
		strbuf_appendf(b, "note: %s\n", *n);
}

static void append_groups(StrBuf *b, const char *what, const TopoGroupList *l)
{
	strbuf_appendf(b, "%s: %zu\n", what, l->n);
	for (size_t i = 0; i < l->n; i++) {
		_cleanup_free_ char *cpus = NULL;

		check(cpuset_format_list(&l->items[i].cpus, &cpus) == 0);
		strbuf_appendf(b, "  %zu: id %d package %d cpus %s\n", i, l->items[i].id, l->items[i].package, strna(cpus));
	}
}

static char *done(StrBuf *b)
{
	char *s = NULL;

	check(strbuf_steal(b, &s) == 0);
	return s ?: strdup("");
}

static char *read_topology(int root)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	StrBuf b = {};
	int r = topology_load(root, &t);

	strbuf_appendf(&b, "topology_load: %d\n", r);
	if (r < 0)
		return done(&b);
	strbuf_appendf(&b, "slots %u llc_level %u smt %u nodes/package %u synthetic %d\n", t->n_slots, t->llc_level,
		       t->threads_per_core, t->nodes_per_package, t->nodes_synthetic);
	append_set(&b, "possible", &t->possible);
	append_set(&b, "present", &t->present);
	append_set(&b, "online", &t->online);
	append_set(&b, "offline", &t->offline);
	append_groups(&b, "packages", &t->packages);
	append_groups(&b, "dies", &t->dies);
	append_groups(&b, "cores", &t->cores);
	append_groups(&b, "l2s", &t->l2s);
	append_groups(&b, "llcs", &t->llcs);
	append_groups(&b, "nodes", &t->nodes);
	for (size_t a = 0; t->distance && a < t->nodes.n; a++) {
		for (size_t c = 0; c < t->nodes.n; c++)
			strbuf_appendf(&b, " %u", topology_distance(t, a, c));
		strbuf_append(&b, "\n");
	}
	for (unsigned c = 0; c < t->n_slots; c++) {
		const TopoCpu *p = &t->cpus[c];

		strbuf_appendf(&b, "cpu%u %d ids %d %d %d %d idx %d %d %d %d %d %d\n", c, p->online, p->package_id,
			       p->die_id, p->core_id, p->node_id, p->package, p->die, p->core, p->l2, p->llc, p->node);
	}
	append_notes(&b, t->notes);
	return done(&b);
}

static char *read_kernel(int root)
{
	StrBuf b = {};
	KernelCaps k;
	int r = kernel_probe(root, &k);

	strbuf_appendf(&b, "kernel_probe: %d\n", r);
	if (r < 0)
		return done(&b);
	strbuf_appendf(&b, "release %s smt %d %d cur %d relax %d %d cur %d boot %d\n", k.release,
		       kernel_caps_has(&k, CONTROL_SMT_BUDDY_SYSCTL), kernel_caps_has(&k, CONTROL_SMT_BUDDY_DEBUGFS),
		       kernel_caps_current(&k, SETTING_SMT_BUDDY_ASSIST, -1), kernel_caps_has(&k, CONTROL_RELAX_SYSCTL),
		       kernel_caps_has(&k, CONTROL_RELAX_CGROUP_V1),
		       kernel_caps_current(&k, SETTING_RELAX_DOMAIN_LEVEL, -1),
		       kernel_caps_value(&k, CONTROL_RELAX_CMDLINE, -1));
	strbuf_appendf(&b, "cgroup %d %d %d known %d debugfs %d lockdown %d %s avg %d %d schedstat %d\n", k.cgroup_v2,
		       k.cgroup_v2_cpuset, k.cpuset_partitions, k.isolated_known, k.debugfs_sched, k.lockdown,
		       k.lockdown_mode, k.numa_averaging_intel, k.numa_averaging_hygon, k.schedstat_version);
	append_set(&b, "isolated", &k.isolated);
	append_notes(&b, k.notes);
	kernel_caps_done(&k);
	return done(&b);
}

static char *read_identity(int root)
{
	_cleanup_free_ char *d = NULL;
	StrBuf b = {};
	CpuIdentity id = {};
	int r = cpuid_identify_sysroot(root, &id);

	strbuf_appendf(&b, "cpuid_identify_sysroot: %d\n", r);
	if (r < 0)
		return done(&b);
	check(cpu_identity_describe(&id, &d) == 0);
	strbuf_appendf(&b, "%s\nvendor %s arch %s family %u model %u stepping %u brand %s\n", strna(d), id.vendor_string,
		       id.arch, id.family, id.model, id.stepping, id.brand);
	return done(&b);
}

static char *read_layout(int root)
{
	_cleanup_(live_layout_freep) LiveLayout *l = NULL;
	StrBuf b = {};
	int r = live_layout_load(root, &l);

	strbuf_appendf(&b, "live_layout_load: %d\n", r);
	if (r < 0)
		return done(&b);
	strbuf_appendf(&b, "version %d debugfs %d slots %u\n", l->schedstat_version, l->debugfs, l->n_slots);
	append_set(&b, "listed", &l->listed);
	for (unsigned c = 0; c < l->n_slots; c++)
		for (size_t i = 0; i < l->cpus[c].n; i++) {
			const LiveDomain *d = &l->cpus[c].sd[i];
			_cleanup_free_ char *span = NULL;

			check(cpuset_format_list(&d->span, &span) == 0);
			strbuf_appendf(&b, "cpu%u domain%d level %d %s [%s] %s\n", c, d->index, d->level, d->name,
				       strna(d->flags), strna(span));
		}
	append_notes(&b, l->notes);
	return done(&b);
}

static void append_settings(StrBuf *b, const ProfileSettings *s)
{
	static const char *const keys[] = { "smt_buddy_assist", "relax_domain_level", "isolated_cpus", "housekeeping_smt" };

	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		_cleanup_free_ char *v = NULL;

		check(profile_settings_format_value(s, keys[i], &v) == 0);
		strbuf_appendf(b, "  %s = %s\n", keys[i], strna(v));
	}
}

static char *read_configuration(int root)
{
	_cleanup_(config_freep) Config *c = NULL;
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL;
	HardwareRule **rules = NULL;
	ProfileInfo *list = NULL;
	size_t n_rules = 0, n = 0;
	StrBuf b = {};
	int r;

	r = config_load(root, &c, &e1);
	strbuf_appendf(&b, "config_load: %d %s\n", r, strempty(e1));
	if (r >= 0) {
		strbuf_appendf(&b, "profile %s rollback %d bootloader %d verify %u\n", strna(c->profile), c->rollback,
			       c->manage_bootloader, c->verify_interval_sec);
		STRV_FOREACH(f, c->files)
			strbuf_appendf(&b, "file %s\n", *f);
		append_settings(&b, &c->overrides);
	}
	r = hardware_rules_load(root, &rules, &n_rules, &e2);
	strbuf_appendf(&b, "hardware_rules_load: %d %zu %s\n", r, n_rules, strempty(e2));
	for (size_t i = 0; r >= 0 && i < n_rules; i++)
		strbuf_appendf(&b, "rule %s:%u %s\n", rules[i]->path, rules[i]->line, strna(rules[i]->vendor));
	if (r >= 0)
		hardware_rules_free(rules, n_rules);
	r = profile_list(root, &list, &n, &e3);
	strbuf_appendf(&b, "profile_list: %d %zu %s\n", r, n, strempty(e3));
	for (size_t i = 0; r >= 0 && i < n; i++)
		strbuf_appendf(&b, "  %s %s %s\n", list[i].name, strna(list[i].description), list[i].path);
	if (r >= 0)
		profile_info_array_free(list, n);
	r = profile_load(root, "site", &p, &e4);
	strbuf_appendf(&b, "profile_load: %d %s\n", r, strempty(e4));
	if (r >= 0) {
		strbuf_appendf(&b, "%s %s %s\n", p->name, p->path, strna(p->description));
		STRV_FOREACH(ch, p->chain)
			strbuf_appendf(&b, "chain %s\n", *ch);
		append_settings(&b, &p->settings);
	}
	return done(&b);
}

static char *read_process(int root)
{
	WorkloadProcess w;
	StrBuf b = {};
	int r = workload_resolve(root, 4242, WORKLOAD_NEED_EXE | WORKLOAD_NEED_COMM | WORKLOAD_NEED_CGROUP, &w);

	strbuf_appendf(&b, "workload_resolve: %d\n", r);
	if (r >= 0)
		strbuf_appendf(&b, "exe %s\ncomm %s\ncgroup %s\n", w.exe, w.comm, w.cgroup);
	return done(&b);
}

/* --- trees ------------------------------------------------------------------------ */

static const char *base;

static void put(int root, const char *path, const char *content)
{
	_cleanup_free_ char *dir = strdup(path);
	int fd;

	check(dir != NULL);
	for (char *p = dir ? strchr(dir, '/') : NULL; p; p = strchr(p + 1, '/')) {
		*p = '\0';
		(void)mkdirat(root, dir, 0755);
		*p = '/';
	}
	fd = openat(root, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	check(fd >= 0);
	if (fd >= 0) {
		check(write(fd, content, strlen(content)) == (ssize_t)strlen(content));
		close(fd);
	}
}

static int open_tree(const char *name)
{
	_cleanup_free_ char *path = strprintf("%s/%s", base, name);
	int fd = -EBADF;

	check(path && root_open(path, &fd) == 0);
	return fd;
}

/* What the generator does not make: the kernel's layout, configuration, a process. */
static void add_files(int root)
{
	StrBuf b = {};
	_cleanup_free_ char *cg = NULL, *schedstat = NULL;

	/* Long enough that chunked reads take many calls. */
	strbuf_append(&b, "version 17\ntimestamp 4295048735\n");
	for (int cpu = 0; cpu < 64; cpu++)
		strbuf_appendf(&b, "cpu%d 0 0 0 0 0 0 1405830522 123456 1049\n"
			       "domain0 SMT %016llx 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
			       "domain1 MC ffffffff,ffffffff 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
			       cpu, 3ULL << (cpu & ~1));
	check(strbuf_steal(&b, &schedstat) == 0);
	put(root, "proc/schedstat", schedstat);
	put(root, "sys/kernel/debug/sched/domains/cpu0/domain0/name", "SMT\n");
	put(root, "sys/kernel/debug/sched/domains/cpu0/domain0/flags",
	    "SD_BALANCE_NEWIDLE SD_BALANCE_EXEC SD_BALANCE_FORK SD_WAKE_AFFINE SD_SHARE_CPUCAPACITY SD_SHARE_LLC "
	    "SD_PREFER_SIBLING \n");
	put(root, "sys/kernel/debug/sched/domains/cpu0/domain0/level", "0\n");
	put(root, "sys/kernel/debug/sched/domains/cpu0/domain1/name", "MC\n");

	put(root, "etc/topotune/topotune.conf", "[daemon]\nprofile = site\nverify_interval = 30\n");
	put(root, "etc/topotune/topotune.conf.d/50-local.conf", "# local\n[scheduler]\nrelax_domain_level = 2\n");
	put(root, "usr/lib/topotune/profiles/base.ini",
	    "[profile]\ndescription = the base of every site profile, with a description long enough to come in "
	    "many short reads\n[scheduler]\nsmt_buddy_assist = on\n");
	put(root, "etc/topotune/profiles/site.ini",
	    "[profile]\ninclude = base\n[isolation]\nisolated_cpus = 1\nhousekeeping_smt = whole-cores\n"
	    "[workload]\ncomm = mysqld\n");
	put(root, "usr/lib/topotune/hardware.d/50-intel.ini",
	    "[match]\nvendor = intel\n[scheduler]\nsmt_buddy_assist = off\n");

	put(root, "proc/4242/comm", "mysqld\n");
	b = (StrBuf) {};
	strbuf_append(&b, "0::/system.slice/");
	for (int i = 0; i < 40; i++)
		strbuf_append(&b, "nested-unit-with-a-long-name.slice/");
	strbuf_append(&b, "mysqld.service\n");
	check(strbuf_steal(&b, &cg) == 0);
	put(root, "proc/4242/cgroup", cg);
	(void)symlinkat("/usr/sbin/mysqld (deleted)", root, "proc/4242/exe");
}

/* --- the checks --------------------------------------------------------------------- */

typedef struct Reader {
	const char *name;
	char *(*read)(int root);
	/*
	 * A known gap: topology_load() takes an attribute that is there and
	 * cannot be read for a missing one, without a note. For it a failing
	 * read is only checked not to crash or leak.
	 */
	bool failed_read_unnoted;
} Reader;

static const Reader readers[] = {
	{ "topology", read_topology, true },
	{ "kernel probe", read_kernel },
	{ "identity", read_identity },
	{ "schedstat + debugfs", read_layout },
	{ "configuration", read_configuration },
	{ "process", read_process },
};

static char *run(const Reader *rd, int root, Mode m, unsigned *ret_calls)
{
	char *s;

	mode = m;
	calls = 0;
	rng = 1;
	s = rd->read(root);
	mode = MODE_PLAIN;
	if (ret_calls)
		*ret_calls = calls;
	return s;
}

static void check_same(const char *ctx, const char *want, const char *got)
{
	check_ctx(ctx, streq(want, got));
	if (streq(want, got))
		return;
	/* The first line that differs. */
	const char *w = want, *g = got;

	while (*w && *w == *g) {
		if (*w == '\n') {
			want = w + 1;
			got = g + 1;
		}
		w++;
		g++;
	}
	fprintf(stderr, "  [%s] plain:  %.200s\n  [%s] faulty: %.200s\n", ctx, want, ctx, got);
}

/* A failed read: the same result, an error, or a note that names the failure. */
static void check_failed_read(const char *ctx, const char *want, const char *got, int err)
{
	const char *colon = strchr(got, ':');
	int r = colon ? atoi(colon + 1) : 0;

	if (streq(want, got) || r < 0 || strstr(got, strerror(err)))
		return;
	check_ctx(ctx, !"a failed read ends in an error or a note naming it");
	check_same(ctx, want, got);
}

static void test_tree(const char *name)
{
	_cleanup_close_ int root = open_tree(name);

	if (root < 0)
		return;
	add_files(root);
	for (size_t i = 0; i < ELEMENTSOF(readers); i++) {
		const Reader *rd = &readers[i];
		_cleanup_free_ char *plain = NULL;
		unsigned n_calls = 0;

		plain = run(rd, root, MODE_PLAIN, &n_calls);
		check_ctx(rd->name, n_calls > 0);   /* the wrapper sees the reader's reads */
		for (Mode m = MODE_ONE_BYTE; m < MODE_FAIL_AT; m++) {
			_cleanup_free_ char *ctx = strprintf("%s %s: %s", name, rd->name, mode_names[m]);
			_cleanup_free_ char *got = NULL;

			shortened = interrupted = 0;
			got = run(rd, root, m, NULL);
			/* The mode did something, or the test proves nothing. */
			check_ctx(ctx, m == MODE_EINTR ? interrupted > 0 : shortened > 0);
			check_same(ctx, plain, got);
		}
		/* One failing read at a time, spread over the reader's calls. */
		for (unsigned k = 0; k < n_calls; k += MAX(1U, n_calls / 24)) {
			static const int errs[] = { EAGAIN, EIO, EINTR };

			for (size_t e = 0; e < ELEMENTSOF(errs); e++) {
				_cleanup_free_ char *ctx = strprintf("%s %s: %s at read %u", name, rd->name,
								     strerror(errs[e]), k);
				_cleanup_free_ char *got = NULL;

				fail_at = k;
				fail_errno = errs[e];
				got = run(rd, root, MODE_FAIL_AT, NULL);
				if (errs[e] == EINTR)
					check_same(ctx, plain, got);
				else if (!rd->failed_read_unnoted)
					check_failed_read(ctx, plain, got, errs[e]);
			}
		}
	}
}

/* --- the applier ------------------------------------------------------------------- */

static const TopoSpec small = { 1, 4, 2, 2, 2, NULL, NULL };
static const CpuIdentity intel = { .vendor = CPU_VENDOR_INTEL, .arch = "x86", .have_family = true, .family = 6,
				   .model = 0x55 };

static Plan *make_plan(void)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	ProfileSettings s = {
		.value[SETTING_SMT_BUDDY_ASSIST].mode = SMT_BUDDY_ON,
		.origin[SETTING_SMT_BUDDY_ASSIST] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 3 },
		.value[SETTING_RELAX_DOMAIN_LEVEL].mode = RELAX_LEVEL,
		.value[SETTING_RELAX_DOMAIN_LEVEL].level = 2,
		.origin[SETTING_RELAX_DOMAIN_LEVEL] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 4 },
		.value[SETTING_ISOLATED_CPUS].mode = ISOLATION_LIST,
		.origin[SETTING_ISOLATED_CPUS] = { .file = (char *)"/etc/topotune/profiles/t.ini", .line = 6 },
	};
	KernelCaps k;
	PlanInput in;
	Plan *p = NULL;

	check(topo_build(&small, &t) == 0);
	check(cpuset_parse_list("3,7", &s.value[SETTING_ISOLATED_CPUS].cpus, NULL) == 0);
	kernel_caps_patched(&k);
	in = (PlanInput) { &intel, t, &k, &s, "t" };
	check(plan_compute(&in, &p) == 0);
	cpuset_done(&s.value[SETTING_ISOLATED_CPUS].cpus);
	kernel_caps_done(&k);
	return p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read with the wrapper off: the snapshot is the referee, not a subject. */
static void snapshot_dir(int dfd, const char *prefix, StrBuf *b)
{
	_cleanup_strv_free_ char **names = NULL;
	struct dirent *de;
	DIR *d = fdopendir(openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));

	check(d != NULL);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
			check(strv_extend(&names, de->d_name) == 0);
	closedir(d);
	if (!names)
		return;
	qsort(names, strv_length(names), sizeof(char *), cmp_str);
	STRV_FOREACH(n, names) {
		_cleanup_free_ char *content = NULL, *sub = strprintf("%s%s/", prefix, *n);
		int sfd = openat(dfd, *n, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (sfd >= 0) {
			strbuf_appendf(b, "%s\n", sub);
			snapshot_dir(sfd, sub, b);
			close(sfd);
		} else if (read_file_at(dfd, *n, 0, &content, NULL) >= 0)
			strbuf_appendf(b, "%s%s\n%s\n", prefix, *n, content);
		else
			strbuf_appendf(b, "%s%s unreadable\n", prefix, *n);
	}
}

static char *snapshot(int root)
{
	StrBuf b = {};
	Mode saved = mode;

	mode = MODE_PLAIN;
	snapshot_dir(root, "", &b);
	mode = saved;
	return done(&b);
}

static int make_applier_tree(char *tmpl)
{
	int fd = -EBADF;

	check(mkdtemp(tmpl) != NULL);
	check(root_open(tmpl, &fd) == 0);
	put(fd, "proc/sys/kernel/sched_smt_buddy_assist", "0\n");
	put(fd, "proc/sys/kernel/sched_relax_domain_level", "-1\n");
	put(fd, "sys/kernel/debug/sched/features", "PLACE_LAG NO_SMT_BUDDY_ASSIST TTWU_QUEUE \n");
	put(fd, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	put(fd, "sys/fs/cgroup/cgroup.subtree_control", "cpuset cpu memory\n");
	put(fd, "sys/fs/cgroup/cpuset.cpus.isolated", "\n");
	/* The kernel's files of the slice cgroup, as if it existed already. */
	put(fd, "sys/fs/cgroup/topotune.slice/cpuset.cpus", "\n");
	put(fd, "sys/fs/cgroup/topotune.slice/cpuset.cpus.partition", "member\n");
	put(fd, "run/topotune/.keep", "");
	return fd;
}

static void rm_rf(const char *path)
{
	_cleanup_free_ char *cmd = strprintf("rm -rf '%s'", path);

	if (cmd && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", path);
}

/* Apply, read the actual values, verify, reload the record, revert: what happened, and the trees. */
static char *applier_session(Mode m, char **ret_applied, char **ret_before)
{
	char tmpl[] = "/tmp/test-short-reads-XXXXXX";
	_cleanup_close_ int root = make_applier_tree(tmpl);
	_cleanup_(plan_freep) Plan *p = make_plan();
	_cleanup_(applier_freep) Applier *a = NULL, *again = NULL;
	_cleanup_free_ char *before = snapshot(root);
	Mismatch *mm = NULL;
	size_t n = 0;
	StrBuf b = {};
	int r;

	check(applier_new(root, NULL, NULL, &a) == 0);
	mode = m;
	calls = 0;
	rng = 1;
	r = applier_apply(a, p);
	strbuf_appendf(&b, "apply: %d %s\n", r, strna(a->error));
	*ret_applied = snapshot(root);
	if (r >= 0) {
		for (size_t i = 0; i < _SETTING_MAX; i++) {
			_cleanup_free_ char *actual = NULL;
			int k = applier_read_actual(a, &p->steps[i], &actual);

			strbuf_appendf(&b, "actual %zu: %d %s\n", i, k, strna(actual));
		}
		r = applier_verify(a, p, &mm, &n);
		strbuf_appendf(&b, "verify: %d %zu\n", r, n);
		for (size_t i = 0; r >= 0 && i < n; i++)
			strbuf_appendf(&b, "  %s: want %s, got %s\n", setting_id_to_string(mm[i].setting), mm[i].want,
				       mm[i].got);
		if (r >= 0)
			mismatches_free(mm, n);
		check(applier_new(root, NULL, NULL, &again) == 0);
		strbuf_appendf(&b, "load_state: %d\n", applier_load_state(again));
		for (size_t i = 0; i < again->n_changes; i++)
			strbuf_appendf(&b, "  %s %s -> %s\n", again->changes[i].path, strna(again->changes[i].old),
				       strna(again->changes[i].new));
		r = applier_revert(a);
		strbuf_appendf(&b, "revert: %d %s\n", r, strna(a->error));
	}
	mode = MODE_PLAIN;
	/* A revert that failed kept the record: the next one restores. */
	if (a->n_changes > 0)
		check_ctx(mode_names[m], applier_revert(a) == 0);
	{
		_cleanup_free_ char *after = snapshot(root);

		/* Whatever happened, the tree ends as it started. */
		check_ctx(mode_names[m], streq(after, before));
	}
	*ret_before = TAKE_PTR(before);
	rm_rf(tmpl);
	return done(&b);
}

static void test_applier(void)
{
	_cleanup_free_ char *plain = NULL, *plain_applied = NULL, *plain_before = NULL;
	unsigned n_calls;

	plain = applier_session(MODE_PLAIN, &plain_applied, &plain_before);
	n_calls = calls;
	/* smt, relax, the slice's cpuset.cpus and partition (its cgroup exists). */
	check(strstr(plain, "apply: 4 ") != NULL);
	check(strstr(plain, "verify: 0 0") != NULL);
	if (!strstr(plain, "apply: 4 ") || !strstr(plain, "verify: 0 0"))
		fprintf(stderr, "applier, plain reads:\n%s", plain);
	for (Mode m = MODE_ONE_BYTE; m < MODE_FAIL_AT; m++) {
		_cleanup_free_ char *got = NULL, *applied = NULL, *before = NULL;

		got = applier_session(m, &applied, &before);
		check_same(mode_names[m], plain, got);
		check_same(mode_names[m], plain_applied, applied);
	}
	for (unsigned k = 0; k < n_calls; k++) {
		_cleanup_free_ char *got = NULL, *applied = NULL, *before = NULL, *ctx = NULL;

		ctx = strprintf("applier: EAGAIN at read %u", k);
		mode = MODE_PLAIN;
		fail_at = k;
		fail_errno = EAGAIN;
		got = applier_session(MODE_FAIL_AT, &applied, &before);
		if (streq(got, plain))
			continue;
		if (startswith(got, "apply: -11 "))
			/* The apply failed: rolled back, the tree as it was. */
			check_same(ctx, before, applied);
		else {
			/* A later step failed, and said so (the tree at the end was checked above). */
			check_same(ctx, plain_applied, applied);
			check_ctx(ctx, strstr(got, ": -11") || strstr(got, strerror(EAGAIN)));
			if (!strstr(got, ": -11") && !strstr(got, strerror(EAGAIN)))
				check_same(ctx, plain, got);
		}
	}
}

/* --- an empty tree ----------------------------------------------------------------- */

static void test_empty(void)
{
	_cleanup_close_ int root = open_tree("empty");
	_cleanup_(plan_freep) Plan *p = make_plan();
	_cleanup_(applier_freep) Applier *a = NULL;
	_cleanup_free_ char *after = NULL;
	Mismatch *mm = NULL;
	size_t n = 0;

	if (root < 0)
		return;
	for (size_t i = 0; i < ELEMENTSOF(readers); i++) {
		_cleanup_free_ char *got = run(&readers[i], root, MODE_PLAIN, NULL);
		bool said = strstr(got, ": -") || strstr(got, "note: ");

		/* An error, or what is missing named in a note. */
		check_ctx(readers[i].name, said);
		if (!said)
			fprintf(stderr, "  [empty %s]\n%s", readers[i].name, got);
	}
	check(applier_new(root, NULL, NULL, &a) == 0);
	check_int(applier_load_state(a), 0);
	check_int(applier_apply(a, p), -ENOENT);
	check(a->error && strstr(a->error, "/proc/sys/kernel/sched_smt_buddy_assist"));
	check_int(applier_verify(a, p, &mm, &n), 0);
	check(n > 0);
	/* The sysctls are not there; no cgroup isolates anything. */
	for (size_t i = 0; i < n; i++)
		check_ctx(setting_id_to_string(mm[i].setting),
			  mm[i].setting == SETTING_ISOLATED_CPUS ? streq(mm[i].got, "none")
								 : !!startswith(mm[i].got, "unreadable: "));
	mismatches_free(mm, n);
	check_int(applier_revert(a), 0);
	after = snapshot(root);
	check_str(after, "");
}

int main(int argc, char *argv[])
{
	static const char *const trees[] = { "vm-2cpu", "vm-offline", "sparse-packages", "vm-lockdown",
					     "siena-8534-nps2-llc" };

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR-OF-TREES\n", argv[0]);
		return 2;
	}
	base = argv[1];
	for (size_t i = 0; i < ELEMENTSOF(trees); i++)
		test_tree(trees[i]);
	test_applier();
	test_empty();
	return test_end("test-short-reads");
}
