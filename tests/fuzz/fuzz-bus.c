/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus face of topotuned (agent/service/manager-bus.c) with the real
 * Manager behind it: each input builds a fake machine in a scratch tree,
 * starts a Manager on it as topotuned's run() does, serves the
 * org.topotune1 vtable on one end of a socketpair (an sd-bus server
 * connection, anonymous authentication) and sends it real method calls
 * from a peer thread on the other end. The peer also plays systemd
 * (SetUnitProperties, the isolation slice's AllowedCPUs=, answered or
 * refused as the input says) and "the world" (another writer changing,
 * removing or replacing files between calls). At the end the peer asks the
 * daemon to stop, as SIGTERM does.
 *
 * Input: byte 0 and 1 are options (machine, kernel, configuration, see
 * build_tree()), then steps: an op byte (bit 7: send without waiting for
 * the reply, to pipeline calls) and its arguments: strings are a tag byte
 * (< 0x80: a dictionary entry; else that many & 0x7f raw bytes), booleans
 * one byte, CPU numbers 4 bytes little-endian.
 *
 * Properties: every call gets a reply, a method return or an error whose
 * name is one of ours or a standard one, with a message; arguments that
 * are bad by themselves get the documented error (a name that is not a
 * profile, or names no profile on disk: NoSuchProfile; a CPU that is not
 * online: InvalidArgs; a wrong signature: InvalidArgs); calls that only
 * read, and mutating calls that fail, leave the tree byte for byte as it
 * was (sys/devices aside, see snapshot_dir()); after a successful change
 * Verify() says in sync, or "unreadable" where the world broke a file;
 * when nobody else touched the tree, stopping restores it byte for byte
 * to what it was before the first apply. ASan/LSan (replay and libFuzzer)
 * add: no memory error, no leak.
 *
 * As root the mutating methods are authorised without polkit (uid 0);
 * other users get AccessDenied for every mutation, which is checked the
 * same way but reaches less code.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "fileio.h"
#include "fuzz-tree.h"
#include "fuzz.h"
#include "log.h"
#include "manager.h"
#include "strutil.h"

#ifndef FUZZ_SOURCE_ROOT
#error "FUZZ_SOURCE_ROOT: the source tree, for the shipped conf/"
#endif

#define CPUS 12
#define CORES 6
#define STEPS_MAX 48
#define CALL_TIMEOUT_USEC (8 * 1000000ULL)
#define SLICE "sys/fs/cgroup/topotune.slice"
#define FEATURES "sys/kernel/debug/sched/features"

/* Keep the fuzzer's change records out of the host's journal: the daemon logs them to stderr then. */
int sd_journal_send_with_location(const char *file, const char *line, const char *func, const char *format, ...)
{
	return -ENOSYS;
}

static char *mfree_str(char *s)
{
	free(s);
	return NULL;
}

typedef struct Bytes {
	const uint8_t *data;
	size_t size, pos;
} Bytes;

static uint8_t next(Bytes *b)
{
	return b->pos < b->size ? b->data[b->pos++] : 0;
}

static bool more(const Bytes *b)
{
	return b->pos < b->size;
}

static uint32_t next_u32(Bytes *b)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < 4; i++)
		v |= (uint32_t)next(b) << (8 * i);
	return v;
}

/* --- the shipped configuration ------------------------------------------------- */

typedef struct ConfFile {
	char *path;     /* below the root: usr/lib/topotune/profiles/hpc.ini */
	char *text;
} ConfFile;

static bool verbose;
static ConfFile conf[32];
static size_t n_conf;

static void conf_add_dir(const char *src, const char *dst)
{
	DIR *d = opendir(src);
	struct dirent *de;

	if (!d) {
		fprintf(stderr, "fuzz-bus: %s: %m\n", src);
		abort();
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *text = NULL;

		if (!(len > 4 && streq(de->d_name + len - 4, ".ini")) && !(len > 5 && streq(de->d_name + len - 5, ".conf")))
			continue;
		fuzz_assert(n_conf < FUZZ_ELEMENTS(conf));
		/* fileio paths are relative to the fd: no AT_FDCWD with an absolute path. */
		fuzz_assert(read_file_at(dirfd(d), de->d_name, 0, &text, NULL) >= 0);
		conf[n_conf].path = strprintf("%s/%s", dst, de->d_name);
		conf[n_conf++].text = text;
	}
	closedir(d);
}

static void free_conf(void)
{
	for (size_t i = 0; i < n_conf; i++) {
		free(conf[i].path);
		free(conf[i].text);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *src = getenv("TOPOTUNE_FUZZ_SOURCE_ROOT") ?: FUZZ_SOURCE_ROOT;
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/conf/profiles", src);
	conf_add_dir(dir, "usr/lib/topotune/profiles");
	snprintf(dir, sizeof(dir), "%s/conf/hardware.d", src);
	conf_add_dir(dir, "usr/lib/topotune/hardware.d");
	snprintf(dir, sizeof(dir), "%s/conf", src);
	conf_add_dir(dir, "etc/topotune");
	atexit(free_conf);

	verbose = getenv("TOPOTUNE_FUZZ_VERBOSE");
	if (!verbose)
		log_set_max_level(LOG_CRIT);
	unsetenv("NOTIFY_SOCKET");
	return 0;
}

/* --- the machine ----------------------------------------------------------------- */

_printf_(3, 4) static void put(int root, const char *path, const char *fmt, ...)
{
	_cleanup_free_ char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	fuzz_assert(vasprintf(&s, fmt, ap) >= 0);
	va_end(ap);
	fuzz_tree_write(root, path, s, strlen(s));
}

/* 2 packages x 3 cores x SMT2, one node and one LLC per core, threads numbered last. */
static int cpu_core(int cpu)
{
	return cpu % CORES;
}

static int cpu_package(int cpu)
{
	return cpu_core(cpu) / 3;
}

static void write_cpu(int root, int cpu)
{
	static const char *const types[] = { "Data", "Instruction", "Unified", "Unified" };
	int core = cpu_core(cpu), pkg = cpu_package(cpu);
	char base[128], p[192];
	_cleanup_free_ char *smt = strprintf("%d,%d", core, core + CORES);
	_cleanup_free_ char *pkgl = strprintf("%d-%d,%d-%d", pkg * 3, pkg * 3 + 2, pkg * 3 + CORES, pkg * 3 + CORES + 2);

	fuzz_assert(smt && pkgl);
	snprintf(base, sizeof(base), "sys/devices/system/cpu/cpu%d", cpu);
#define P(sub) (snprintf(p, sizeof(p), "%s/%s", base, sub), p)
	put(root, P("online"), "1\n");
	put(root, P("topology/physical_package_id"), "%d\n", pkg);
	put(root, P("topology/die_id"), "0\n");
	put(root, P("topology/core_id"), "%d\n", core % 3);
	put(root, P("topology/cluster_id"), "%d\n", core % 3);
	put(root, P("topology/thread_siblings_list"), "%s\n", smt);
	put(root, P("topology/core_cpus_list"), "%s\n", smt);
	put(root, P("topology/core_siblings_list"), "%s\n", pkgl);
	put(root, P("topology/package_cpus_list"), "%s\n", pkgl);
	put(root, P("topology/die_cpus_list"), "%s\n", pkgl);
	for (int i = 0; i < 4; i++) {
		char idx[64];

		snprintf(idx, sizeof(idx), "cache/index%d/level", i);
		put(root, P(idx), "%d\n", i < 2 ? 1 : i);
		snprintf(idx, sizeof(idx), "cache/index%d/type", i);
		put(root, P(idx), "%s\n", types[i]);
		snprintf(idx, sizeof(idx), "cache/index%d/id", i);
		put(root, P(idx), "%d\n", core);
		snprintf(idx, sizeof(idx), "cache/index%d/shared_cpu_list", i);
		put(root, P(idx), "%s\n", smt);
	}
#undef P
}

static const char *const features_patched =
	"PLACE_LAG PLACE_DEADLINE_INITIAL RUN_TO_PARITY NO_NEXT_BUDDY CACHE_HOT_BUDDY NO_SMT_BUDDY_ASSIST "
	"DELAY_DEQUEUE WAKEUP_PREEMPTION NO_HRTICK TTWU_QUEUE SIS_UTIL ATTACH_AGE_LOAD WA_IDLE UTIL_EST \n";
static const char *const features_stock =
	"PLACE_LAG PLACE_DEADLINE_INITIAL RUN_TO_PARITY NO_NEXT_BUDDY CACHE_HOT_BUDDY "
	"DELAY_DEQUEUE WAKEUP_PREEMPTION NO_HRTICK TTWU_QUEUE SIS_UTIL ATTACH_AGE_LOAD WA_IDLE UTIL_EST \n";

/* A v17 /proc/schedstat of this machine: SMT, then NUMA over the package, then everything. */
static void write_schedstat(int root, bool offline11)
{
	StrBuf b = {};
	char *s = NULL;

	strbuf_append(&b, "version 17\ntimestamp 4295048735\n");
	for (int cpu = 0; cpu < CPUS - offline11; cpu++) {
		int core = cpu_core(cpu), pkg = cpu_package(cpu);
		unsigned smt = (1U << core) | (1U << (core + CORES));
		unsigned pk = (7U << (pkg * 3)) | (7U << (pkg * 3 + CORES));

		strbuf_appendf(&b, "cpu%d 0 0 0 0 0 0 1405830522 123456 1049\n", cpu);
		strbuf_appendf(&b, "domain0 SMT %03x 0 0 0 0 0 0 0 0 0\n", smt);
		strbuf_appendf(&b, "domain1 NUMA %03x 0 0 0 0 0 0 0 0 0\n", pk);
		strbuf_appendf(&b, "domain2 NUMA %03x 0 0 0 0 0 0 0 0 0\n", offline11 ? 0x7ffU : 0xfffU);
	}
	fuzz_assert(strbuf_steal(&b, &s) >= 0);
	fuzz_tree_write(root, "proc/schedstat", s, strlen(s));
	free(s);
}

/*
 * Options, byte 0: bit 0 Hygon 0x18/7 (its hardware rule matches) else Intel;
 * 1 patched kernel (the series' sysctls, SMT_BUDDY_ASSIST feature) else stock;
 * 2 cgroup v1 cpuset hierarchy else v2 with partitions; 3 isolation through
 * (the peer playing) systemd; 4 lockdown integrity; 5 a write-ahead record of
 * a previous run that did not stop; 6 the administrator's profiles (one
 * shadows latency, one is broken at line 4); 7 CPU 11 offline.
 * Byte 1: bits 0-1 the configured profile (balanced, hpc, latency, broken);
 * 2 manage_bootloader = yes; 3 rollback = not-on-exit; 4 a /proc/schedstat
 * of the machine; 5 a /proc/schedstat from the input (2-byte length, then
 * the text); 6 the slice's cpuset.cpus.partition is a directory (EISDIR);
 * 7 the slice's cgroup exists (always with systemd).
 */
/* sys/devices: the CPUs and nodes; nothing writes there, so it is kept from one input to the next. */
static void build_devices(int root, bool offline11)
{
	StrBuf online = {};
	char *s = NULL;

	for (int cpu = 0; cpu < CPUS; cpu++)
		if (!(offline11 && cpu == CPUS - 1))
			write_cpu(root, cpu);
	if (offline11) {
		put(root, "sys/devices/system/cpu/cpu11/online", "0\n");
		put(root, "sys/devices/system/cpu/online", "0-10\n");
		put(root, "sys/devices/system/cpu/offline", "11\n");
	} else
		put(root, "sys/devices/system/cpu/online", "0-11\n");
	put(root, "sys/devices/system/cpu/present", "0-11\n");
	put(root, "sys/devices/system/cpu/possible", "0-11\n");
	put(root, "sys/devices/system/node/online", "0-5\n");
	put(root, "sys/devices/system/node/possible", "0-5\n");
	for (int n = 0; n < CORES; n++) {
		char path[96];

		snprintf(path, sizeof(path), "sys/devices/system/node/node%d/cpulist", n);
		if (offline11 && n == CPUS - 1 - CORES)
			put(root, path, "%d\n", n);
		else
			put(root, path, "%d,%d\n", n, n + CORES);
		strbuf_append(&online, "");
		for (int k = 0; k < CORES; k++)
			strbuf_appendf(&online, "%s%d", k ? " " : "", k == n ? 10 : k / 3 == n / 3 ? 12 : 32);
		strbuf_append(&online, "\n");
		fuzz_assert(strbuf_steal(&online, &s) >= 0);
		snprintf(path, sizeof(path), "sys/devices/system/node/node%d/distance", n);
		fuzz_tree_write(root, path, s, strlen(s));
		s = mfree_str(s);
	}
}

/* Remove @name below @dir_fd, a file or a whole directory. */
static void remove_at(int dir_fd, const char *name)
{
	int fd;

	if (unlinkat(dir_fd, name, 0) >= 0)
		return;
	fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	fuzz_assert(fd >= 0);
	fuzz_tree_clear(fd);
	close(fd);
	fuzz_assert(unlinkat(dir_fd, name, AT_REMOVEDIR) >= 0);
}

/* Empty the tree but sys/devices, when it is the machine @offline11 asks for. */
static void clear_tree(int root, bool offline11)
{
	static int devices = -1;   /* what sys/devices holds: -1 nothing yet */
	int sys;

	if (devices != offline11) {
		fuzz_tree_clear(root);
		build_devices(root, offline11);
		devices = offline11;
		return;
	}
	sys = openat(root, "sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fuzz_assert(sys >= 0);
	for (int pass = 0; pass < 2; pass++) {
		int dfd = pass == 0 ? root : sys;
		_cleanup_strv_free_ char **names = NULL;
		struct dirent *de;
		DIR *d = fdopendir(openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));

		fuzz_assert(d);
		while ((de = readdir(d)))
			if (!streq(de->d_name, ".") && !streq(de->d_name, "..") &&
			    !streq(de->d_name, pass == 0 ? "sys" : "devices"))
				fuzz_assert(strv_extend(&names, de->d_name) >= 0);
		closedir(d);
		STRV_FOREACH(n, names)
			remove_at(dfd, *n);
	}
	close(sys);
}

static void build_tree(int root, uint8_t o0, uint8_t o1, Bytes *in)
{
	static const char *const configured[] = { NULL, "hpc", "latency", "broken" };
	bool hygon = o0 & 1, patched = o0 & 2, v1 = o0 & 4, offline11 = o0 & 0x80;
	char *s = NULL;

	clear_tree(root, offline11);

	if (hygon)
		put(root, "proc/cpuinfo",
		    "processor\t: 0\nvendor_id\t: HygonGenuine\ncpu family\t: 24\nmodel\t\t: 7\n"
		    "model name\t: Hygon C86 7447v 96-core Processor\nstepping\t: 1\nflags\t\t: fpu ht lm\n\n");
	else
		put(root, "proc/cpuinfo",
		    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 173\n"
		    "model name\t: Intel(R) Xeon(R) 6972P\nstepping\t: 1\nflags\t\t: fpu ht lm\n\n");
	put(root, "proc/sys/kernel/osrelease", "7.3.4\n");
	put(root, "proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz-7.3.4 root=/dev/vda1 ro quiet\n");
	put(root, "sys/kernel/security/lockdown", o0 & 0x10 ? "none [integrity] confidentiality\n"
							      : "[none] integrity confidentiality\n");
	if (patched) {
		put(root, "proc/sys/kernel/sched_smt_buddy_assist", "0\n");
		put(root, "proc/sys/kernel/sched_relax_domain_level", "-1\n");
	}
	put(root, "sys/kernel/debug/sched/features", "%s", patched ? features_patched : features_stock);
	if (v1) {
		put(root, "sys/fs/cgroup/cpuset/cpuset.sched_relax_domain_level", "-1\n");
		put(root, "sys/fs/cgroup/cpuset/cpuset.cpus", "0-11\n");
	} else {
		put(root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
		/*
		 * cpuset already on: the kernel renders "+cpuset" as a word of this
		 * list, a plain file would keep the "+cpuset" written into it.
		 */
		put(root, "sys/fs/cgroup/cgroup.subtree_control", "cpuset cpu memory\n");
		put(root, "sys/fs/cgroup/cpuset.cpus.isolated", "\n");
		put(root, "sys/fs/cgroup/cpuset.cpus.effective", "0-11\n");
		if ((o0 & 8) || (o1 & 0x80)) {
			/*
			 * The slice's cgroup exists: systemd realised it, or an earlier
			 * run made it. A plain mkdir() below the tree would not give it
			 * the files the kernel does (without it, isolating fails at
			 * cpuset.cpus and is rolled back).
			 */
			put(root, SLICE "/cpuset.cpus", "\n");
			put(root, SLICE "/cpuset.cpus.partition", "member\n");
		}
		if (o1 & 0x40)
			fuzz_assert(mkdirat(root, "sys", 0755) >= 0 || errno == EEXIST);
	}
	if ((o1 & 0x40) && !v1) {
		put(root, SLICE "/cpuset.cpus", "\n");
		fuzz_assert(mkdirat(root, SLICE "/cpuset.cpus.partition", 0755) >= 0 || errno == EEXIST);
	}
	/* tmpfiles.d makes it at boot. */
	fuzz_assert(mkdirat(root, "run", 0755) >= 0 || errno == EEXIST);
	fuzz_assert(mkdirat(root, "run/topotune", 0755) >= 0 || errno == EEXIST);
	if ((o0 & 0x20) && patched)
		/* Crashed with SMT_BUDDY_ASSIST on and relax at 2, both were kernel defaults before. */
		put(root, "run/topotune/state",
		    "# topotune write-ahead record v1: kind done setting path old new why\n"
		    "change plain 1 smt_buddy_assist =proc/sys/kernel/sched_smt_buddy_assist =0%%0A =1 =x.ini:3\n"
		    "change plain 0 relax_domain_level =proc/sys/kernel/sched_relax_domain_level =-1%%0A =2 =x.ini:4\n");

	for (size_t i = 0; i < n_conf; i++)
		fuzz_tree_write(root, conf[i].path, conf[i].text, strlen(conf[i].text));
	if (o0 & 0x40) {
		put(root, "etc/topotune/profiles/latency.ini",
		    "[profile]\ndescription = site latency\n[scheduler]\nsmt_buddy_assist = off\nrelax_domain_level = 2\n");
		put(root, "etc/topotune/profiles/local.ini",
		    "[profile]\ninclude = latency\n[isolation]\nisolated_cpus = 2,8\n");
	}
	put(root, "etc/topotune/profiles/broken.ini",
	    "[profile]\ndescription = broken\n[scheduler]\nsmt_buddy_assist = sometimes\n");
	if (configured[o1 & 3] || (o1 & 0x0c)) {
		StrBuf c = {};

		strbuf_append(&c, "[daemon]\n");
		if (configured[o1 & 3])
			strbuf_appendf(&c, "profile = %s\n", configured[o1 & 3]);
		if (o1 & 4)
			strbuf_append(&c, "manage_bootloader = yes\n");
		if (o1 & 8)
			strbuf_append(&c, "rollback = not-on-exit\n");
		fuzz_assert(strbuf_steal(&c, &s) >= 0);
		fuzz_tree_write(root, "etc/topotune/topotune.conf.d/50-fuzz.conf", s, strlen(s));
		s = mfree_str(s);
	}
	if (o1 & 4)
		fuzz_assert(mkdirat(root, "etc/default", 0755) >= 0 || errno == EEXIST);
	if (o1 & 4)
		fuzz_assert(mkdirat(root, "etc/default/grub.d", 0755) >= 0 || errno == EEXIST);
	if (o1 & 0x10)
		write_schedstat(root, offline11);
	if (o1 & 0x20) {
		size_t len = next(in) | (size_t)next(in) << 8;

		len = MIN(len, in->size - in->pos);
		fuzz_tree_write(root, "proc/schedstat", in->data + in->pos, len);
		in->pos += len;
	}
}

/* --- snapshots ------------------------------------------------------------------- */

/* Entries are "TNAME", T the type ('d' or 'f'): sorted by name. */
static int cmp_entry(const void *a, const void *b)
{
	return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

/*
 * Every path below @d with the bytes of every file, in name order, but
 * sys/devices (the CPUs and nodes: nine tenths of the files): nothing of
 * topotune writes there (the applier's paths are elsewhere), and the tree
 * keeps it from one input to the next.
 */
static void snapshot_dir(DIR *d, const char *prefix, StrBuf *b)
{
	_cleanup_strv_free_ char **names = NULL;
	struct dirent *de;

	while ((de = readdir(d))) {
		bool dir = de->d_type == DT_DIR;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (de->d_type == DT_UNKNOWN) {
			struct stat st;

			fuzz_assert(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) >= 0);
			dir = S_ISDIR(st.st_mode);
		}
		fuzz_assert(strv_push(&names, strprintf("%c%s", dir ? 'd' : 'f', de->d_name)) >= 0);
	}
	if (!names)
		return;
	qsort(names, strv_length(names), sizeof(char *), cmp_entry);
	STRV_FOREACH(n, names) {
		const char *name = *n + 1;
		_cleanup_free_ char *content = NULL;
		size_t size = 0;

		if (**n == 'd') {
			_cleanup_free_ char *sub = strprintf("%s%s/", prefix, name);
			DIR *sd;

			fuzz_assert(sub);
			strbuf_appendf(b, "%s\n", sub);
			if (streq(sub, "sys/devices/"))
				continue;
			sd = fdopendir(openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
			fuzz_assert(sd);
			snapshot_dir(sd, sub, b);
			closedir(sd);
			continue;
		}
		fuzz_assert(read_file_at(dirfd(d), name, 0, &content, &size) >= 0);
		strbuf_appendf(b, "%s%s [%zu]\n", prefix, name, size);
		strbuf_append(b, content);
		strbuf_append(b, "\n");
	}
}

static char *snapshot(int root)
{
	DIR *d = fdopendir(openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	StrBuf b = {};
	char *s = NULL;

	fuzz_assert(d);
	snapshot_dir(d, "", &b);
	closedir(d);
	fuzz_assert(strbuf_steal(&b, &s) >= 0);
	return s;
}

/* @snap without the entry of file @path (its header line "PATH [SIZE]" and its bytes). */
static char *snapshot_without(const char *snap, const char *path)
{
	_cleanup_free_ char *head = strprintf("%s [", path);
	const char *at = snap;
	size_t size;
	char *s;

	fuzz_assert(head);
	for (;;) {
		at = strstr(at, head);
		if (!at)
			return strdup(snap);
		if (at == snap || at[-1] == '\n')
			break;
		at++;
	}
	size = strtoul(at + strlen(head), NULL, 10);
	s = strprintf("%.*s%s", (int)(at - snap), snap, strchr(at, '\n') + 1 + size + 1);
	fuzz_assert(s);
	return s;
}

static void check_unchanged(const char *what, const char *before, const char *after, bool skip_record)
{
	_cleanup_free_ char *b = NULL, *a = NULL;

	if (streq(before, after))
		return;
	if (skip_record) {
		/*
		 * Another writer put something else in the daemon's record: a
		 * rollback writing the daemon's own record back is no change.
		 */
		b = snapshot_without(before, STATE_FILE);
		a = snapshot_without(after, STATE_FILE);
		if (streq(b, a))
			return;
		before = b;
		after = a;
	}
	/* Name the first difference. */
	size_t i = 0, line = 0;

	for (; before[i] && before[i] == after[i]; i++)
		if (before[i] == '\n')
			line = i + 1;
	fprintf(stderr, "fuzz-bus: %s changed the tree; first difference:\n--- before:\n%.300s\n--- after:\n%.300s\n",
		what, before + line, after + line);
	fuzz_assert(!"tree unchanged");
}

/* --- the peer: caller, systemd and the rest of the world ----------------------- */

typedef struct Peer {
	int fd;
	int stop_fd;
	int root;
	Bytes in;
	bool offline11;
	bool cgroup_v2;
	char *isolated_said;    /* what kernel_sync() last put in cpuset.cpus.isolated */
	char *features;         /* sched/features as the kernel would show it (features_sync()) */
	char *last;             /* the tree after the last checked call, while nothing changed it */
	sd_bus *bus;
	bool systemd_fail;
	char *allowed_cpus;     /* the slice's AllowedCPUs= as systemd keeps it */
	bool world_changed;     /* another writer touched the tree */
	bool record_tampered;   /* ... the daemon's record, since the daemon last wrote it */
	bool foreign_isolation; /* ... the root's cpuset.cpus.isolated: another tool's partition */
	bool stop_unclean;      /* the stop cannot restore everything (systemd refuses) */
	unsigned pending;       /* pipelined calls without a reply yet */
} Peer;

static void peer_flag(bool *flag, bool v)
{
	__atomic_store_n(flag, v, __ATOMIC_SEQ_CST);
}

static bool peer_get(bool *flag)
{
	return __atomic_load_n(flag, __ATOMIC_SEQ_CST);
}

/*
 * The kernel keeps the root's cpuset.cpus.isolated: the CPUs of valid
 * isolated partitions (only ours here). Plain files do not, so between
 * calls the peer does it, when our partition moved; a value another writer
 * put there stays until then.
 */
/*
 * debugfs sched/features as the kernel has it (kernel/sched/debug.c):
 * reading gives the whole list, NAME or NO_NAME for every feature; a write
 * is one token, NAME or NO_NAME of a feature the list has, which flips that
 * feature, and anything else is refused with EINVAL, the list unchanged.
 * The scratch tree's file is plain: the daemon's write of "SMT_BUDDY_ASSIST"
 * leaves just that token in it, which no kernel would show. Applied here to
 * whatever was written since: one token updates the list the file last
 * held (p->features), anything else the kernel would have refused puts
 * that list back. Run before every look at the tree.
 */
static void features_sync(Peer *p)
{
	_cleanup_free_ char *now = NULL, *token = NULL, *list = NULL;
	_cleanup_strv_free_ char **words = NULL;
	const char *base;
	StrBuf b = {};
	bool found = false;

	if (!p->features || read_file_at(p->root, FEATURES, 0, &now, NULL) < 0)
		return;   /* gone or a directory: the world broke it, nothing to model */
	if (streq(now, p->features))
		return;
	token = strdup(now);
	fuzz_assert(token);
	strip(token);
	base = startswith(token, "NO_") ?: token;
	fuzz_assert(strv_split(p->features, WHITESPACE, &words) >= 0);
	STRV_FOREACH(w, words) {
		const char *wb = startswith(*w, "NO_") ?: *w;

		if (*token && !strpbrk(token, WHITESPACE) && streq(wb, base)) {
			strbuf_appendf(&b, "%s ", token);
			found = true;
		} else
			strbuf_appendf(&b, "%s ", *w);
	}
	strbuf_append(&b, "\n");
	fuzz_assert(strbuf_steal(&b, &list) >= 0);
	if (found) {
		free(p->features);
		p->features = TAKE_PTR(list);
	}
	/* Refused (not one known token) or taken: the kernel shows the whole list. */
	fuzz_tree_write(p->root, FEATURES, p->features, strlen(p->features));
	p->last = mfree_str(p->last);
}

static void kernel_sync(Peer *p)
{
	_cleanup_free_ char *part = NULL, *cpus = NULL;
	char *want;

	features_sync(p);
	if (!p->cgroup_v2 || dir_exists_at(p->root, "sys/fs/cgroup/cpuset.cpus.isolated"))
		return;
	if (read_file_at(p->root, SLICE "/cpuset.cpus.partition", 0, &part, NULL) >= 0 &&
	    startswith(part, "isolated") && !strstr(part, "invalid") &&
	    read_file_at(p->root, SLICE "/cpuset.cpus", 0, &cpus, NULL) >= 0)
		want = strprintf("%s\n", strip(cpus));
	else
		want = strdup("\n");
	fuzz_assert(want);
	if (streq_ptr(p->isolated_said, want)) {
		free(want);
		return;
	}
	free(p->isolated_said);
	p->isolated_said = want;
	fuzz_tree_write(p->root, "sys/fs/cgroup/cpuset.cpus.isolated", want, strlen(want));
	p->last = mfree_str(p->last);
}

/* Bits to cpulist, as systemd's cpu_set_from_dbus() reads them. */
static char *mask_to_list(const uint8_t *mask, size_t n)
{
	CpuSet set = {};
	char *s = NULL;

	for (size_t i = 0; i < n * 8; i++)
		if (mask[i / 8] & (1U << (i % 8)))
			fuzz_assert(cpuset_add(&set, (unsigned)i) >= 0);
	fuzz_assert(cpuset_format_list(&set, &s) >= 0);
	cpuset_done(&set);
	return s;
}

static int systemd_set_unit_properties(Peer *p, sd_bus_message *m)
{
	_cleanup_free_ char *list = NULL;
	const char *unit, *name;
	const void *mask;
	size_t n = 0;
	int runtime;

	fuzz_assert(sd_bus_message_read(m, "sb", &unit, &runtime) >= 0);
	fuzz_assert(streq(unit, "topotune.slice") && runtime);
	fuzz_assert(sd_bus_message_enter_container(m, 'a', "(sv)") > 0);
	fuzz_assert(sd_bus_message_enter_container(m, 'r', "sv") > 0);
	fuzz_assert(sd_bus_message_read(m, "s", &name) >= 0);
	fuzz_assert(streq(name, "AllowedCPUs"));
	fuzz_assert(sd_bus_message_enter_container(m, 'v', "ay") > 0);
	fuzz_assert(sd_bus_message_read_array(m, 'y', &mask, &n) >= 0);
	if (peer_get(&p->systemd_fail))
		return sd_bus_reply_method_errorf(m, "org.freedesktop.systemd1.UnitMasked", "Unit %s is masked.", unit);
	list = mask_to_list(mask, n);
	/*
	 * What systemd does (tests/dbus/fake-systemd.py does the same, later):
	 * keeps the property; only an active slice has a cgroup to write it to.
	 */
	free(p->allowed_cpus);
	p->allowed_cpus = TAKE_PTR(list);
	if (dir_exists_at(p->root, SLICE))
		put(p->root, SLICE "/cpuset.cpus", "%s\n", p->allowed_cpus);
	return sd_bus_reply_method_return(m, NULL);
}

/* StartUnit/StopUnit of the slice: its cgroup made with the cpuset files, or removed. */
static int systemd_start_stop(Peer *p, sd_bus_message *m, bool start)
{
	const char *unit, *mode;

	fuzz_assert(sd_bus_message_read(m, "ss", &unit, &mode) >= 0);
	fuzz_assert(streq(unit, "topotune.slice"));
	if (peer_get(&p->systemd_fail))
		return sd_bus_reply_method_errorf(m, "org.freedesktop.systemd1.UnitMasked", "Unit %s is masked.", unit);
	if (start) {
		fuzz_assert(mkdirat(p->root, SLICE, 0755) >= 0 || errno == EEXIST);
		put(p->root, SLICE "/cpuset.cpus", "%s\n", strempty(p->allowed_cpus));
		if (!path_exists_at(p->root, SLICE "/cpuset.cpus.partition"))
			put(p->root, SLICE "/cpuset.cpus.partition", "member\n");
	} else if (dir_exists_at(p->root, SLICE))
		remove_at(p->root, SLICE);
	return sd_bus_reply_method_return(m, "o", "/org/freedesktop/systemd1/job/1");
}

/* Method calls from the daemon: systemd's, and polkit's should a non-root run ask. */
static int on_daemon_call(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Peer *p = userdata;

	if (!sd_bus_message_is_method_call(m, NULL, NULL))
		return 0;
	if (sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager", "SetUnitProperties"))
		return systemd_set_unit_properties(p, m);
	if (sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager", "StartUnit") ||
	    sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager", "StopUnit"))
		return systemd_start_stop(p, m, streq(sd_bus_message_get_member(m), "StartUnit"));
	if (sd_bus_message_is_method_call(m, "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization"))
		return sd_bus_reply_method_return(m, "bba{ss}", 1, 0, 0);
	return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_UNKNOWN_METHOD, "The peer has no %s.",
					  strna(sd_bus_message_get_member(m)));
}

typedef struct Call {
	Peer *peer;
	const char *what;          /* for messages */
	const char *want_error;    /* this error and no other */
	const char *want_signature;/* of a method return */
	bool want_success;
	bool mutating;
	bool check_tree;           /* not pipelined: compare the tree around it */
	bool verify_after;         /* success: Verify() must say in sync */
	char *before;
	sd_bus_slot *slot;
	bool must_fail;            /* no success, error not known in advance */
	bool done, ok;
} Call;

static bool error_name_known(const char *name)
{
	static const char *const ours[] = {
		BUS_ERROR_NO_SUCH_PROFILE, BUS_ERROR_INVALID_PROFILE, BUS_ERROR_UNSUPPORTED, BUS_ERROR_BUSY,
		BUS_ERROR_INVALID_CONFIGURATION,
	};

	for (size_t i = 0; i < FUZZ_ELEMENTS(ours); i++)
		if (streq(name, ours[i]))
			return true;
	/* No reply at all is not an answer. */
	if (streq(name, SD_BUS_ERROR_NO_REPLY) || streq(name, SD_BUS_ERROR_TIMEOUT) ||
	    streq(name, SD_BUS_ERROR_DISCONNECTED))
		return false;
	return startswith(name, "org.freedesktop.DBus.Error.") || startswith(name, "System.Error.");
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	Call *c = userdata;
	Peer *p = c->peer;
	const sd_bus_error *e = sd_bus_message_get_error(m);

	c->done = true;
	if (verbose)
		fprintf(stderr, "fuzz-bus: %s -> %s%s%s\n", c->what, e ? strna(e->name) : "ok", e ? ": " : "",
			e ? strna(e->message) : "");
	if (e) {
		if (!e->name || !error_name_known(e->name) || !e->message || !*e->message ||
		    (c->want_error && !streq(e->name, c->want_error)) || c->want_success) {
			fprintf(stderr, "fuzz-bus: %s: error %s \"%s\"%s%s\n", c->what, strna(e->name), strna(e->message),
				c->want_error ? ", wanted " : "", strempty(c->want_error));
			fuzz_assert(!"a proper error");
		}
		if (c->check_tree && !(c->mutating && strstr(c->what, "Revert"))) {
			char *after;

			/* The daemon's writes as the kernel shows them (a rollback's token: the list). */
			features_sync(p);
			after = snapshot(p->root);

			check_unchanged(c->what, c->before, after, p->record_tampered);
			free(p->last);
			p->last = after;
		}
		return 0;
	}
	if (c->want_error || c->must_fail) {
		fprintf(stderr, "fuzz-bus: %s: succeeded, wanted %s\n", c->what, c->want_error ?: "an error");
		fuzz_assert(!"the documented error");
	}
	c->ok = true;
	if (c->mutating)
		p->record_tampered = false;   /* what the daemon holds is on disk again */
	if (c->want_signature)
		fuzz_assert(streq_ptr(sd_bus_message_get_signature(m, true), c->want_signature));
	if (c->check_tree && !c->mutating) {
		char *after;

		features_sync(p);
		after = snapshot(p->root);

		check_unchanged(c->what, c->before, after, false);
		free(p->last);
		p->last = after;
	}
	return 0;
}

/* Process the peer's connection until @done, or until every pipelined call has its reply. */
static void peer_run(Peer *p, const bool *done)
{
	for (;;) {
		int r;

		if (done ? *done : p->pending == 0)
			return;
		r = sd_bus_process(p->bus, NULL);
		if (r < 0) {
			fprintf(stderr, "fuzz-bus: the daemon's connection failed: %s\n", strerror(-r));
			fuzz_assert(!"connection up");
		}
		if (r > 0)
			continue;
		fuzz_assert(sd_bus_wait(p->bus, UINT64_MAX) >= 0);
	}
}

static int on_pipelined_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	Call *c = userdata;

	on_reply(m, c, ret_error);
	c->peer->pending--;
	free(c->before);
	sd_bus_slot_unref(c->slot);
	free(c);
	return 0;
}

/* Send @m; wait for the reply unless pipelined. Takes @c (heap) when pipelined. */
static void call(Peer *p, sd_bus_message *m, Call *c, bool pipelined)
{
	c->peer = p;
	if (pipelined) {
		Call *h = malloc(sizeof(Call));

		fuzz_assert(h);
		*h = *c;
		h->check_tree = false;
		h->verify_after = false;
		fuzz_assert(sd_bus_call_async(p->bus, &h->slot, m, on_pipelined_reply, h, CALL_TIMEOUT_USEC) >= 0);
		p->pending++;
		p->last = mfree_str(p->last);
		return;
	}
	peer_run(p, NULL);
	kernel_sync(p);
	c->check_tree = true;
	/* The tree after the previous call, when nothing has touched it since: saves reading it again. */
	c->before = p->last ?: snapshot(p->root);
	p->last = NULL;
	fuzz_assert(sd_bus_call_async(p->bus, &c->slot, m, on_reply, c, CALL_TIMEOUT_USEC) >= 0);
	peer_run(p, &c->done);
	c->slot = sd_bus_slot_unref(c->slot);
	free(c->before);
}

/* A call outside the checks (Ping, Verify): wait for its reply, serving systemd meanwhile. */
static int on_plain_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	sd_bus_message **reply = userdata;

	*reply = sd_bus_message_ref(m);
	return 0;
}

static sd_bus_message *call_plain(Peer *p, sd_bus_message *m)
{
	_cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
	sd_bus_message *reply = NULL;

	fuzz_assert(sd_bus_call_async(p->bus, &slot, m, on_plain_reply, &reply, CALL_TIMEOUT_USEC) >= 0);
	for (;;) {
		int r;

		if (reply)
			return reply;
		r = sd_bus_process(p->bus, NULL);
		fuzz_assert(r >= 0);
		if (r == 0)
			fuzz_assert(sd_bus_wait(p->bus, UINT64_MAX) >= 0);
	}
}

static sd_bus_message *new_call(Peer *p, const char *member)
{
	sd_bus_message *m = NULL;

	fuzz_assert(sd_bus_message_new_method_call(p->bus, &m, NULL, TOPOTUNE_BUS_PATH, TOPOTUNE_BUS_INTERFACE,
						   member) >= 0);
	return m;
}

/* --- arguments ------------------------------------------------------------------- */

static const char *const names[] = {
	"balanced", "database", "hpc", "latency", "throughput", "broken", "local", "fuzz", "nope", "",
	"../x", "..", ".hidden", "a/b", "latency.ini", "LATENCY", "b\xc3\xa4lanced", "\xf0\x9f\x98\x80", "-", "base",
	" latency", "latency\n", "hpc\t", "%s%n", "*", "/etc/passwd", "long", "verylong",
};

/* A string argument; NULL: raw bytes sd-bus would not send (not UTF-8): skip the call. */
static char *next_string(Bytes *b)
{
	uint8_t t = next(b);
	char *s;

	if (t < 0x80) {
		const char *n = names[t % FUZZ_ELEMENTS(names)];

		if (streq(n, "long") || streq(n, "verylong")) {
			size_t len = streq(n, "long") ? 300 : 70000;

			s = malloc(len + 1);
			fuzz_assert(s);
			memset(s, 'l', len);
			s[len] = 0;
			return s;
		}
		s = strdup(n);
		fuzz_assert(s);
		return s;
	}
	size_t len = MIN((size_t)(t & 0x7f), b->size - b->pos);

	s = fuzz_strndup(b->data + b->pos, len);
	b->pos += len;
	return s;
}

/* Would profile_load() find a file for @name below the tree? */
static bool profile_on_disk(Peer *p, const char *name)
{
	_cleanup_free_ char *a = strprintf("etc/topotune/profiles/%s.ini", name);
	_cleanup_free_ char *b = strprintf("usr/lib/topotune/profiles/%s.ini", name);

	fuzz_assert(a && b);
	return path_exists_at(p->root, a) || path_exists_at(p->root, b);
}

/*
 * A name that is not a profile (bad, or no file of that name): NoSuchProfile,
 * nothing else. Checked before authorisation when the name is bad, after it
 * when the file is missing: a caller that is not root learns only that.
 */
static const char *want_for_name(Peer *p, const char *name, bool mutating)
{
	if (!profile_name_is_valid(name))
		return BUS_ERROR_NO_SUCH_PROFILE;
	if (!profile_on_disk(p, name))
		return mutating && geteuid() != 0 ? SD_BUS_ERROR_ACCESS_DENIED : BUS_ERROR_NO_SUCH_PROFILE;
	return NULL;
}

/* Append @s; false when sd-bus refuses it (not valid UTF-8). */
static bool append_string(sd_bus_message *m, const char *s)
{
	return sd_bus_message_append(m, "s", s) >= 0;
}

/*
 * In the kernel the sysctl and the SMT_BUDDY_ASSIST token of sched/features
 * are one bit; plain files disagree once another writer wrote one of them,
 * and then which one topotune reads decides the answer.
 */
static bool smt_views_disagree(Peer *p)
{
	_cleanup_free_ char *sysctl = NULL, *features = NULL;
	int v;

	if (read_file_at(p->root, "proc/sys/kernel/sched_smt_buddy_assist", 0, &sysctl, NULL) < 0 ||
	    read_file_at(p->root, "sys/kernel/debug/sched/features", 0, &features, NULL) < 0)
		return false;
	if (string_has_word(features, "SMT_BUDDY_ASSIST"))
		return safe_atoi(strip(sysctl), &v) < 0 || v == 0;
	if (string_has_word(features, "NO_SMT_BUDDY_ASSIST"))
		return safe_atoi(strip(sysctl), &v) < 0 || v != 0;
	return false;
}

static void verify_in_sync(Peer *p, const char *what)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_call(p, "Verify"), *reply = NULL;
	const sd_bus_error *e;
	int ok = 0;

	kernel_sync(p);
	reply = call_plain(p, m);
	e = sd_bus_message_get_error(reply);
	if (e) {
		fprintf(stderr, "fuzz-bus: Verify after %s: %s\n", what, strna(e->message));
		fuzz_assert(!"Verify answers after a successful change");
	}
	fuzz_assert(sd_bus_message_read(reply, "b", &ok) >= 0);
	if (!ok) {
		const char *s, *w, *g;

		/* A file the world broke (a directory now) is "unreadable"; a wrong value is a bug. */
		fuzz_assert(sd_bus_message_enter_container(reply, 'a', "(sss)") >= 0);
		while (sd_bus_message_read(reply, "(sss)", &s, &w, &g) > 0) {
			if (startswith(g, "unreadable: "))
				continue;
			/*
			 * CPUs another tool isolated are not topotune's to release:
			 * with "none" wanted they stay a mismatch, rightly reported.
			 */
			if (streq(s, "isolated_cpus") && p->foreign_isolation)
				continue;
			if (streq(s, "smt_buddy_assist") && smt_views_disagree(p))
				continue;
			fprintf(stderr, "fuzz-bus: after %s: %s wanted %s, is %s\n", what, s, w, g);
			fuzz_assert(!"in sync after a successful change");
		}
	}
}

/* --- the steps ------------------------------------------------------------------- */

static const char *const properties[] = {
	"Version", "State", "StateReasons", "ActiveProfile", "ActiveProfileReason", "WorkloadRules", "CpuVendor",
	"CpuFamily", "CpuModel", "CpuName", "Topology", "Settings", "KernelCapabilities", "IsolatedCpus",
	"HousekeepingCpus", "RebootRequired", "PendingKernelCmdline", "DomainLayout", "Nope", "",
};

/* Files another writer changes between calls. */
static const char *const world_paths[] = {
	"proc/sys/kernel/sched_smt_buddy_assist",
	"proc/sys/kernel/sched_relax_domain_level",
	"sys/kernel/debug/sched/features",
	"sys/fs/cgroup/cpuset.cpus.isolated",
	SLICE "/cpuset.cpus.partition",
	SLICE "/cpuset.cpus",
	"etc/topotune/profiles/fuzz.ini",
	"etc/topotune/topotune.conf.d/60-fuzz.conf",
	"usr/lib/topotune/profiles/latency.ini",
	"run/topotune/state",
	"proc/schedstat",
	"run/topotune/bootloader.request",
};

static const char *const world_values[] = {
	"0\n", "1\n", "-1\n", "3\n", "isolated\n", "member\n", "root\n",
	"isolated invalid (Cpu list in cpuset.cpus not exclusive)\n", "2,8\n", "0-11\n", "",
	"SMT_BUDDY_ASSIST NO_HRTICK\n",
	"[profile]\ninclude = fuzz\n",
	"[profile]\ninclude = nope\n",
	"[scheduler]\nsmt_buddy_assist = on\nrelax_domain_level = 2\n[isolation]\nisolated_cpus = 1,7\n",
	"[isolation]\nisolated_cpus = auto:1-per-llc\nhousekeeping_smt = whole-cores\n",
	"[daemon]\nprofile = fuzz\n",
	"[daemon]\nmanage_bootloader = yes\n",
	"[scheduler]\nrelax_domain_level = 99\n",
	"# topotune write-ahead record v1\n"
	"change plain 1 smt_buddy_assist =proc/sys/kernel/sched_smt_buddy_assist =0%0A =1 =x\n",
	"change nonsense\n",
	"version 17\ncpu0 0\ndomain0 SMT 041\ndomain1 NUMA fff\n",
};

static void world_change(Peer *p)
{
	const char *path = world_paths[next(&p->in) % FUZZ_ELEMENTS(world_paths)];
	uint8_t how = next(&p->in);

	peer_run(p, NULL);   /* between calls, not during one */
	peer_flag(&p->world_changed, true);
	if (streq(path, STATE_FILE))
		p->record_tampered = true;
	if (streq(path, "sys/fs/cgroup/cpuset.cpus.isolated"))
		p->foreign_isolation = true;
	p->last = mfree_str(p->last);
	switch (how % 4) {
	case 0:   /* gone */
		if (unlinkat(p->root, path, 0) < 0 && errno == EISDIR)
			(void)unlinkat(p->root, path, AT_REMOVEDIR);
		break;
	case 1: { /* replaced by a directory: writes get EISDIR */
		_cleanup_free_ char *dir = strdup(path);

		fuzz_assert(dir);
		(void)unlinkat(p->root, path, 0);
		for (char *s = strchr(dir, '/'); s; s = strchr(s + 1, '/')) {
			*s = 0;
			(void)mkdirat(p->root, dir, 0755);
			*s = '/';
		}
		(void)mkdirat(p->root, path, 0755);
		break;
	}
	default: { /* new content */
		_cleanup_free_ char *raw = NULL;
		const char *v;

		if (how % 4 == 2)
			v = world_values[next(&p->in) % FUZZ_ELEMENTS(world_values)];
		else
			v = raw = next_string(&p->in);
		if (dir_exists_at(p->root, path) && unlinkat(p->root, path, AT_REMOVEDIR) < 0)
			break;   /* a directory with something in it stays */
		fuzz_tree_write(p->root, path, v, strlen(v));
		/* Another writer's write to sched/features is a kernel write too. */
		if (streq(path, FEATURES))
			features_sync(p);
	}
	}
}

static void step(Peer *p)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
	_cleanup_free_ char *s1 = NULL;
	uint8_t op = next(&p->in);
	bool pipelined = op & 0x80;
	Call c = {};
	int b;

	if (verbose)
		fprintf(stderr, "fuzz-bus: step %#x at byte %zu\n", op, p->in.pos - 1);

	switch (op & 0x0f) {
	case 0:
		m = new_call(p, "ListProfiles");
		c = (Call) { .what = "ListProfiles", .want_signature = "a(sss)" };
		break;
	case 1:
		m = new_call(p, "SetProfile");
		s1 = next_string(&p->in);
		b = next(&p->in) & 1;
		if (!append_string(m, s1) || sd_bus_message_append(m, "b", b) < 0)
			return;
		c = (Call) { .what = "SetProfile", .mutating = true, .want_error = want_for_name(p, s1, true),
			     .want_signature = "", .verify_after = true };
		break;
	case 2:
	case 3:
		m = new_call(p, (op & 0x0f) == 2 ? "Apply" : "Revert");
		fuzz_assert(sd_bus_message_append(m, "b", next(&p->in) & 1) >= 0);
		c = (Call) { .what = (op & 0x0f) == 2 ? "Apply" : "Revert", .mutating = true, .want_signature = "",
			     .verify_after = (op & 0x0f) == 2 };
		break;
	case 4:
		m = new_call(p, "Reload");
		c = (Call) { .what = "Reload", .mutating = true, .want_signature = "", .verify_after = true };
		break;
	case 5:
		m = new_call(p, "Plan");
		s1 = next_string(&p->in);
		if (!append_string(m, s1))
			return;
		c = (Call) { .what = "Plan", .want_error = *s1 ? want_for_name(p, s1, false) : NULL,
			     .want_signature = "a(ssss)s" };
		break;
	case 6:
		m = new_call(p, "Verify");
		c = (Call) { .what = "Verify", .want_signature = "ba(sss)" };
		break;
	case 7: {
		uint32_t cpu = next(&p->in) & 1 ? next(&p->in) % 16 : next_u32(&p->in);
		bool online = cpu < CPUS && !(p->offline11 && cpu == CPUS - 1);

		m = new_call(p, "GetCpuDomains");
		fuzz_assert(sd_bus_message_append(m, "u", cpu) >= 0);
		c = (Call) { .what = "GetCpuDomains", .want_error = online ? NULL : SD_BUS_ERROR_INVALID_ARGS,
			     .want_success = online, .want_signature = "a(ussas)" };
		break;
	}
	case 8: {
		const char *prop = properties[next(&p->in) % FUZZ_ELEMENTS(properties)];

		fuzz_assert(sd_bus_message_new_method_call(p->bus, &m, NULL, TOPOTUNE_BUS_PATH,
							   "org.freedesktop.DBus.Properties", "Get") >= 0);
		fuzz_assert(sd_bus_message_append(m, "ss", TOPOTUNE_BUS_INTERFACE, prop) >= 0);
		c = (Call) { .what = "Properties.Get", .want_success = !streq(prop, "Nope") && *prop,
			     .want_signature = "v" };
		break;
	}
	case 9:
		fuzz_assert(sd_bus_message_new_method_call(p->bus, &m, NULL, TOPOTUNE_BUS_PATH,
							   "org.freedesktop.DBus.Properties", "GetAll") >= 0);
		fuzz_assert(sd_bus_message_append(m, "s", next(&p->in) & 1 ? TOPOTUNE_BUS_INTERFACE : "") >= 0);
		c = (Call) { .what = "Properties.GetAll", .want_success = true, .want_signature = "a{sv}" };
		break;
	case 10: {
		const char *prop = properties[next(&p->in) % FUZZ_ELEMENTS(properties)];

		fuzz_assert(sd_bus_message_new_method_call(p->bus, &m, NULL, TOPOTUNE_BUS_PATH,
							   "org.freedesktop.DBus.Properties", "Set") >= 0);
		fuzz_assert(sd_bus_message_append(m, "ssv", TOPOTUNE_BUS_INTERFACE, prop, "s", "hpc") >= 0);
		/* Read-only or unknown: an error either way. */
		c = (Call) { .what = "Properties.Set", .must_fail = true };
		break;
	}
	case 11:
		fuzz_assert(sd_bus_message_new_method_call(p->bus, &m, NULL, TOPOTUNE_BUS_PATH,
							   "org.freedesktop.DBus.Introspectable", "Introspect") >= 0);
		c = (Call) { .what = "Introspect", .want_success = true, .want_signature = "s" };
		break;
	case 12: {
		/* A method with arguments of the wrong types. */
		static const char *const members[] = { "ListProfiles", "SetProfile", "Apply", "Revert",
						       "Reload", "Plan", "Verify", "GetCpuDomains" };
		static const char *const real[] = { "", "sb", "b", "b", "", "s", "", "u" };
		static const char *const sigs[] = { "", "s", "b", "u", "sb", "bs", "ss", "su", "as", "sbb", "bb" };
		unsigned mi = next(&p->in) % FUZZ_ELEMENTS(members);
		const char *sig = sigs[next(&p->in) % FUZZ_ELEMENTS(sigs)];

		if (streq(sig, real[mi]))
			return;
		m = new_call(p, members[mi]);
		for (const char *t = sig; *t; t++)
			switch (*t) {
			case 's':
				fuzz_assert(sd_bus_message_append(m, "s", "hpc") >= 0);
				break;
			case 'b':
				fuzz_assert(sd_bus_message_append(m, "b", 1) >= 0);
				break;
			case 'u':
				fuzz_assert(sd_bus_message_append(m, "u", 3) >= 0);
				break;
			default:
				fuzz_assert(sd_bus_message_append(m, "as", 2, "a", "b") >= 0);
			}
		c = (Call) { .what = "wrong signature", .want_error = SD_BUS_ERROR_INVALID_ARGS, .must_fail = true };
		break;
	}
	case 13: {
		static const char *const paths[] = { TOPOTUNE_BUS_PATH, "/org/topotune1/x", "/", "/org" };
		static const char *const ifaces[] = { TOPOTUNE_BUS_INTERFACE, "org.topotune1.Nope", "org.freedesktop.DBus.Peer" };
		static const char *const members[] = { "Nope", "SetProfile", "Ping", "GetMachineId" };
		const char *path = paths[next(&p->in) % FUZZ_ELEMENTS(paths)];
		const char *iface = ifaces[next(&p->in) % FUZZ_ELEMENTS(ifaces)];
		const char *member = members[next(&p->in) % FUZZ_ELEMENTS(members)];

		if (streq(path, TOPOTUNE_BUS_PATH) && streq(iface, TOPOTUNE_BUS_INTERFACE) && streq(member, "SetProfile"))
			return;
		fuzz_assert(sd_bus_message_new_method_call(p->bus, &m, NULL, path, iface, member) >= 0);
		/* org.freedesktop.DBus.Peer answers on every path; nothing else is there. */
		c = (Call) { .what = "elsewhere", .must_fail = !streq(iface, "org.freedesktop.DBus.Peer") };
		break;
	}
	case 14:
		world_change(p);
		return;
	default:
		peer_flag(&p->systemd_fail, next(&p->in) & 1);
		return;
	}

	call(p, m, &c, pipelined);
	if (!pipelined && c.ok && c.verify_after)
		verify_in_sync(p, c.what);
}

static void *peer_main(void *userdata)
{
	Peer *p = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *ping = NULL, *reply = NULL;
	unsigned steps = 0;
	int r;

	fuzz_assert(sd_bus_new(&p->bus) >= 0);
	fuzz_assert(sd_bus_set_fd(p->bus, p->fd, p->fd) >= 0);
	fuzz_assert(sd_bus_set_anonymous(p->bus, true) >= 0);
	fuzz_assert(sd_bus_add_filter(p->bus, NULL, on_daemon_call, p) >= 0);
	fuzz_assert(sd_bus_start(p->bus) >= 0);

	/* Answered once the daemon has started and serves: until then, be systemd. */
	fuzz_assert(sd_bus_message_new_method_call(p->bus, &ping, NULL, TOPOTUNE_BUS_PATH, "org.freedesktop.DBus.Peer",
						   "Ping") >= 0);
	reply = call_plain(p, ping);
	fuzz_assert(!sd_bus_message_is_method_error(reply, NULL));

	while (more(&p->in) && steps++ < STEPS_MAX)
		step(p);
	peer_run(p, NULL);

	/* SIGTERM; keep answering systemd while the daemon restores. From here on the tree is the daemon's. */
	p->last = mfree_str(p->last);
	peer_flag(&p->stop_unclean, peer_get(&p->systemd_fail));
	fuzz_assert(write(p->stop_fd, "x", 1) == 1);
	for (;;) {
		r = sd_bus_process(p->bus, NULL);
		if (r < 0 || !sd_bus_is_open(p->bus))
			break;
		if (r == 0 && sd_bus_wait(p->bus, UINT64_MAX) < 0)
			break;
	}
	p->bus = sd_bus_flush_close_unref(p->bus);
	return NULL;
}

/* --- the daemon ---------------------------------------------------------------------- */

/* What topotuned's SIGTERM handler does. */
static int on_stop(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Manager *m = userdata;

	if (!(m->session.config && m->session.config->rollback == ROLLBACK_NOT_ON_EXIT) &&
	    (m->state != MANAGER_OFF || m->applier->n_changes > 0))
		(void)manager_revert(m, "stop");
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* topotuned's run() from the bus connection to the event loop, on @m->bus. */
static void daemon_run(Manager *m, int root, char **ret_baseline)
{
	_cleanup_free_ char *err = NULL;
	int r;

	fuzz_assert(manager_connect_bus(m) >= 0);
	fuzz_assert(manager_discover(m) >= 0);
	r = manager_load_config(m, &err);
	if (r < 0)
		fprintf(stderr, "fuzz-bus: configuration: %s\n", strna(err));
	fuzz_assert(r >= 0);
	fuzz_assert(manager_recover(m) >= 0);
	/* What stopping must restore: the tree before the first apply. */
	*ret_baseline = snapshot(root);
	(void)manager_workload_setup(m);
	err = mfree_str(err);
	r = manager_switch(m, NULL, "start", &err);
	if (r < 0 && !m->apply_error) {
		m->plan_error = strprintf("the selected profile does not load: %s", err ?: strerror(-r));
		fuzz_assert(m->plan_error);
		m->state = MANAGER_FAILED;
	}
	fuzz_assert(manager_arm_verify_timer(m) >= 0);
	fuzz_assert(sd_event_loop(m->event) >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Bytes in = { data, size, 0 };
	uint8_t o0 = next(&in), o1 = next(&in);
	int root = fuzz_tree_root(), fds[2], stop[2];
	_cleanup_free_ char *baseline = NULL;
	Manager *m = NULL;
	Peer peer = {};
	pthread_t thread;
	sd_id128_t id;

	if (size < 2)
		return 0;
	build_tree(root, o0, o1, &in);

	fuzz_assert(manager_new(&m) >= 0);
	m->root = strdup(fuzz_tree_path());
	fuzz_assert(m->root);
	m->use_systemd = o0 & 8;
	/* No polling timer may fire while the peer compares trees. */
	m->poll_usec = 3600 * 1000000ULL;
	fuzz_assert(sd_event_new(&m->event) >= 0);

	fuzz_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) >= 0);
	fuzz_assert(pipe2(stop, O_CLOEXEC | O_NONBLOCK) >= 0);
	fuzz_assert(sd_id128_randomize(&id) >= 0);
	fuzz_assert(sd_bus_new(&m->bus) >= 0);
	fuzz_assert(sd_bus_set_fd(m->bus, fds[0], fds[0]) >= 0);
	fuzz_assert(sd_bus_set_server(m->bus, true, id) >= 0);
	fuzz_assert(sd_bus_set_anonymous(m->bus, true) >= 0);
	fuzz_assert(sd_bus_start(m->bus) >= 0);
	fuzz_assert(sd_event_add_io(m->event, NULL, stop[0], EPOLLIN, on_stop, m) >= 0);

	peer = (Peer) { .fd = fds[1], .stop_fd = stop[1], .root = root, .in = in, .offline11 = o0 & 0x80,
			.cgroup_v2 = !(o0 & 4), .isolated_said = strdup("\n") };
	fuzz_assert(peer.isolated_said);
	(void)read_file_at(root, FEATURES, 0, &peer.features, NULL);
	fuzz_assert(pthread_create(&thread, NULL, peer_main, &peer) == 0);

	daemon_run(m, root, &baseline);

	/* Stopped: with nobody else writing, everything is as it was before the first apply. */
	if (!(m->session.config && m->session.config->rollback == ROLLBACK_NOT_ON_EXIT) && !peer_get(&peer.world_changed) &&
	    !peer_get(&peer.stop_unclean)) {
		_cleanup_free_ char *after = NULL;

		kernel_sync(&peer);
		after = snapshot(root);
		check_unchanged("starting and stopping", baseline, after, false);
	}
	m = manager_free(m);   /* closes the connection: the peer returns */
	fuzz_assert(pthread_join(thread, NULL) == 0);
	free(peer.isolated_said);
	free(peer.features);
	free(peer.allowed_cpus);
	safe_close(stop[0]);
	safe_close(stop[1]);
	return 0;
}
