/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysfs topology reader. Depends on basic only; all reads are relative to a
 * root fd. Files that old kernels or odd architectures lack fall back in the
 * order lscpu and hwloc use: *_list -> hex mask, cpu/online -> cpuN/online.
 *
 * To keep discovery cheap on 640-CPU machines a CPU whose core (or cache
 * group) is already known from a sibling's files is not read again: the
 * kernel reports the same sets for every member. The cost left is one
 * open/read/close per file, so each is read with one read() into the stack,
 * opened below sys/devices/system/cpu, and nothing is read that the sets
 * already tell (a CPU's L2 level, the cpuN directory list).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>

#include "cpuid.h"
#include "fileio.h"
#include "strutil.h"
#include "topology.h"

#define CPU_DIR "sys/devices/system/cpu"
#define NODE_DIR "sys/devices/system/node"

static void group_list_done(TopoGroupList *l)
{
	for (size_t i = 0; i < l->n; i++)
		cpuset_done(&l->items[i].cpus);
	free(l->items);
	*l = (TopoGroupList) {};
}

Topology *topology_free(Topology *t)
{
	if (!t)
		return NULL;
	free(t->cpus);
	cpuset_done(&t->possible);
	cpuset_done(&t->present);
	cpuset_done(&t->online);
	cpuset_done(&t->offline);
	cpuset_done(&t->missing);
	group_list_done(&t->packages);
	group_list_done(&t->dies);
	group_list_done(&t->cores);
	group_list_done(&t->l2s);
	group_list_done(&t->llcs);
	group_list_done(&t->nodes);
	for (size_t i = 0; i < t->kinds.n; i++)
		cpuset_done(&t->kinds.items[i].cpus);
	free(t->kinds.items);
	free(t->distance);
	strv_free(t->notes);
	free(t);
	return NULL;
}

_printf_(2, 3) static int note(Topology *t, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vstrprintf(fmt, ap);
	va_end(ap);
	return s ? strv_push(&t->notes, s) : -ENOMEM;
}

/* Append a group; returns its index. */
static int group_add(TopoGroupList *l, int id)
{
	/* Lists only grow here: room for 4, then doubled whenever n reaches a power of two. */
	if (l->n == 0 || (l->n >= 4 && (l->n & (l->n - 1)) == 0)) {
		TopoGroup *n = reallocarray(l->items, MAX(l->n * 2, 4U), sizeof(TopoGroup));

		if (!n)
			return -ENOMEM;
		l->items = n;
	}
	l->items[l->n] = (TopoGroup) { .id = id, .package = -1 };
	return (int)l->n++;
}

/* The group @id (of package index @package, for dies), or -1. */
static int group_find(const TopoGroupList *l, int id, int package)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].id == id && l->items[i].package == package)
			return (int)i;
	return -1;
}

/*
 * A one-line attribute into @buf, one read() and no allocation; a longer
 * line (a cpulist of thousands of CPUs) is allocated into @ret_long.
 * @ret_line points at whichever holds it.
 */
static int read_attr(int fd, const char *path, char *buf, size_t size, char **ret_long, const char **ret_line)
{
	int r;

	r = read_attr_at(fd, path, buf, size);
	if (r == -ENOBUFS) {
		r = read_line_at(fd, path, ret_long);
		if (r < 0)
			return r;
		*ret_line = *ret_long;
		return 0;
	}
	if (r < 0)
		return r;
	*ret_line = buf;
	return 0;
}

static int read_cpulist_at(int root_fd, const char *path, CpuSet *ret)
{
	_cleanup_free_ char *l = NULL;
	char buf[4096];
	const char *s;
	int r;

	r = read_attr(root_fd, path, buf, sizeof(buf), &l, &s);
	if (r < 0)
		return r;
	return cpuset_parse_list(s, ret, NULL);
}

static int read_cpumask_at(int root_fd, const char *path, CpuSet *ret)
{
	_cleanup_free_ char *l = NULL;
	char buf[4096];
	const char *s;
	int r;

	r = read_attr(root_fd, path, buf, sizeof(buf), &l, &s);
	if (r < 0)
		return r;
	return cpuset_parse_mask(s, ret);
}

static int read_int_attr(int root_fd, const char *path, int *ret)
{
	char buf[64];
	int r;

	r = read_attr_at(root_fd, path, buf, sizeof(buf));
	if (r < 0)
		return r == -ENOBUFS ? -ERANGE : r;
	return safe_atoi(buf, ret);
}

static int read_unsigned_attr(int root_fd, const char *path, unsigned *ret)
{
	char buf[64];
	int r;

	r = read_attr_at(root_fd, path, buf, sizeof(buf));
	if (r < 0)
		return r == -ENOBUFS ? -ERANGE : r;
	return safe_atou(buf, ret);
}

/*
 * The strings up to NULL, concatenated into @buf and cut to fit as
 * snprintf() would: its format parsing was a quarter of the instructions
 * spent in user space on a 640-CPU tree.
 */
__attribute__((sentinel)) static const char *path_join(char *buf, size_t size, ...)
{
	const char *s;
	size_t len = 0;
	va_list ap;

	va_start(ap, size);
	while ((s = va_arg(ap, const char *))) {
		size_t n = MIN(strlen(s), size - 1 - len);

		memcpy(buf + len, s, n);
		len += n;
	}
	va_end(ap);
	buf[len] = '\0';
	return buf;
}

/* @v in decimal, in @buf of at least 12 bytes. */
static const char *num(char *buf, int v)
{
	char tmp[12], *d = tmp + sizeof(tmp);
	unsigned u = v < 0 ? 0U - (unsigned)v : (unsigned)v;

	*--d = '\0';
	do
		*--d = (char)('0' + u % 10);
	while ((u /= 10));
	if (v < 0)
		*--d = '-';
	return memcpy(buf, d, (size_t)(tmp + sizeof(tmp) - d));
}

/* DIR/NAME_list, else DIR/NAME as a hex mask. */
static int read_set_pair(int root_fd, const char *dir, const char *list_name, const char *mask_name, CpuSet *ret)
{
	char path[256];
	int r;

	r = read_cpulist_at(root_fd, path_join(path, sizeof(path), dir, "/", list_name, NULL), ret);
	if (r != -ENOENT || !mask_name)
		return r;
	return read_cpumask_at(root_fd, path_join(path, sizeof(path), dir, "/", mask_name, NULL), ret);
}

/* Why a set file was not used, as a note says it. */
static const char *set_problem(int r, bool list, int cpu, char *buf, size_t size)
{
	if (r == -EINVAL || r == -ERANGE)
		return list ? "not a CPU list" : "not a CPU mask";
	if (r == -EDOM) {
		snprintf(buf, size, "does not list cpu%d", cpu);
		return buf;
	}
	return strerror(-r);
}

/*
 * The first of @names (files below @dir; a name ending in "list" is a
 * cpulist, any other a hex mask) that can be read and parsed and, if
 * @cpu >= 0, holds @cpu: the kernel offers the same fact in several files,
 * and one damaged file must not cost the fact. A missing file is skipped
 * quietly (old kernels lack the lists); a file that does not parse is
 * named in a note with the file used instead. When none is usable the
 * first bad (else missing) file and why go to @why ("PATH: REASON") and
 * its error is returned: -ENOENT when every file is missing.
 * @shown is what precedes @dir in the note ("/sys/devices/system/cpu/").
 */
static int read_set_sources(int fd, Topology *t, const char *shown, const char *dir, const char *const *names,
			    int cpu, CpuSet *ret, char *why, size_t why_size)
{
	const char *bad = NULL;
	char path[256], buf[32];
	int bad_r = -ENOENT;
	size_t len = 0;

	if (why)
		*why = '\0';

	for (const char *const *n = names; *n; n++) {
		bool list = endswith(*n, "list");
		int r;

		path_join(path, sizeof(path), dir, "/", *n, NULL);
		r = list ? read_cpulist_at(fd, path, ret) : read_cpumask_at(fd, path, ret);
		if (r == -ENOMEM)
			return r;
		if (r >= 0 && cpu >= 0 && !cpuset_contains(ret, (unsigned)cpu))
			r = -EDOM;
		if (r >= 0) {
			if (bad && note(t, "%s%s/%s: %s, using %s", shown, dir, bad,
					set_problem(bad_r, endswith(bad, "list"), cpu, buf, sizeof(buf)), *n) < 0)
				return -ENOMEM;
			return 0;
		}
		cpuset_done(ret);
		if (r == -ENOENT)
			continue;
		if (!bad) {
			bad = *n;
			bad_r = r;
		}
		/* Every bad file, in case none is usable: "DIR/A: why; B: why". */
		if (why && len == 0)
			len = (size_t)snprintf(why, why_size, "%s%s/%s: %s", shown, dir, *n,
					       set_problem(r, list, cpu, buf, sizeof(buf)));
		else if (why && len < why_size)
			len += (size_t)snprintf(why + len, why_size - len, "; %s: %s", *n,
						set_problem(r, list, cpu, buf, sizeof(buf)));
	}
	if (why && !bad)
		snprintf(why, why_size, "%s%s/%s: %s", shown, dir, names[0], strerror(ENOENT));
	return bad_r;
}

/* Numeric cpuN / nodeN entries of a directory, as a set. */
static int scan_numbered_dir(int root_fd, const char *dir, const char *prefix, CpuSet *ret)
{
	_cleanup_close_ int fd = -EBADF;
	CpuSet set = {};
	struct dirent *de;
	DIR *d;
	int r = 0;

	fd = open_beneath(root_fd, dir, O_RDONLY | O_DIRECTORY, 0, FILEIO_READ);
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d)
		return negative_errno();
	TAKE_FD(fd);

	while ((de = readdir(d))) {
		const char *num = startswith(de->d_name, prefix);
		unsigned n;

		if (!num || safe_atou_base(num, 10, &n) < 0)
			continue;
		r = cpuset_add(&set, n);
		if (r < 0)
			break;
	}
	closedir(d);
	if (r < 0) {
		cpuset_done(&set);
		return r;
	}
	cpuset_done(ret);
	*ret = set;
	return 0;
}

/*
 * CPU sets from cpu/present, possible and online (else the cpuN
 * directories and their online files). @ret_nodir gets the present CPUs
 * without a cpuN directory; a present CPU that is offline and has none is
 * named in a note (an online one is load_cpu_topology()'s to judge).
 */
static int load_cpu_sets(int cpu_fd, Topology *t, CpuSet *ret_nodir)
{
	_cleanup_free_ char *l = NULL;
	CpuSet dirs = {}, gone = {};
	int r;

	/* One getdents() or two, even for 640 CPUs. */
	r = scan_numbered_dir(cpu_fd, ".", "cpu", &dirs);
	if (r < 0)
		return r;
	r = read_cpulist_at(cpu_fd, "present", &t->present);
	if (r < 0) {
		note(t, "/" CPU_DIR "/present: %s, using the cpuN directories", strerror(-r));
		r = cpuset_copy(&t->present, &dirs);
		if (r < 0)
			goto out;
	}
	r = read_cpulist_at(cpu_fd, "possible", &t->possible);
	if (r < 0) {
		r = cpuset_copy(&t->possible, &t->present);
		if (r < 0)
			goto out;
	}

	r = read_cpulist_at(cpu_fd, "online", &t->online);
	if (r < 0) {
		/* Old dumps: per-CPU "online" files; a CPU without one (cpu0) is online. */
		note(t, "/" CPU_DIR "/online: %s, using cpuN/online", strerror(-r));
		CPUSET_FOREACH(cpu, &t->present) {
			char path[64], nb[12];
			int v;

			if (!cpuset_contains(&dirs, (unsigned)cpu))
				continue;
			path_join(path, sizeof(path), "cpu", num(nb, cpu), "/online", NULL);
			if (read_int_attr(cpu_fd, path, &v) >= 0 && v == 0)
				continue;
			r = cpuset_add(&t->online, (unsigned)cpu);
			if (r < 0)
				goto out;
		}
	}
	if (cpuset_is_empty(&t->online)) {
		r = -ENODATA;
		goto out;
	}
	/* Every online CPU is present even where a dump's files disagree. */
	r = cpuset_or(&t->present, &t->online);
	if (r >= 0)
		r = cpuset_or(&t->possible, &t->present);
	if (r >= 0)
		r = cpuset_copy(&t->offline, &t->present);
	if (r >= 0)
		r = cpuset_copy(ret_nodir, &t->present);
	if (r < 0)
		goto out;
	cpuset_andnot(&t->offline, &t->online);
	cpuset_andnot(ret_nodir, &dirs);

	r = cpuset_copy(&gone, ret_nodir);
	if (r < 0)
		goto out;
	cpuset_and(&gone, &t->offline);
	if (!cpuset_is_empty(&gone)) {
		r = cpuset_format_list(&gone, &l);
		if (r >= 0)
			r = note(t, "/" CPU_DIR ": no cpuN directory for offline CPU%s %s listed in cpu/present",
				 cpuset_count(&gone) == 1 ? "" : "s", l);
		if (r < 0)
			goto out;
	}

	t->n_slots = (unsigned)cpuset_last(&t->possible) + 1;
	t->cpus = calloc(t->n_slots, sizeof(TopoCpu));
	if (!t->cpus) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < t->n_slots; i++)
		t->cpus[i] = (TopoCpu) {
			.package_id = -1, .die_id = -1, .core_id = -1, .node_id = -1,
			.package = -1, .die = -1, .core = -1, .l2 = -1, .llc = -1, .node = -1,
			.kind = -1,
		};
	CPUSET_FOREACH(cpu, &t->online)
		t->cpus[cpu].online = true;
	r = 0;
out:
	cpuset_done(&dirs);
	cpuset_done(&gone);
	return r;
}

static int read_id(int cpu_fd, int cpu, const char *name, int *ret)
{
	char path[96], nb[12];

	path_join(path, sizeof(path), "cpu", num(nb, cpu), "/topology/", name, NULL);
	return read_int_attr(cpu_fd, path, ret);
}

/* The group of @l whose CPU set already holds @cpu, or -1. */
static int group_of(const TopoGroupList *l, unsigned cpu)
{
	for (size_t i = 0; i < l->n; i++)
		if (cpuset_contains(&l->items[i].cpus, cpu))
			return (int)i;
	return -1;
}

/*
 * Put @cpu in the group @id of @l and, from DIR/LIST (else DIR/MASK, else
 * the second pair), every online CPU the kernel says shares it: those CPUs
 * then need not read their own id file. Without a list the group grows CPU
 * by CPU. A negative @id (physical_package_id -1 on powerpc and s390) makes
 * a group of its own per distinct set, as lscpu and hwloc group by
 * core_siblings.
 */
static int group_claim(int cpu_fd, Topology *t, TopoGroupList *l, int id, int package, int cpu, const char *list,
		       const char *mask, const char *list2, const char *mask2, int *ret_index)
{
	CpuSet set = {};
	char dir[64], nb[12], why[192];
	int g, r;

	g = id >= 0 ? group_find(l, id, package) : -1;
	if (g < 0) {
		g = group_add(l, id);
		if (g < 0)
			return g;
		l->items[g].package = package;
	}
	*ret_index = g;
	r = cpuset_add(&l->items[g].cpus, (unsigned)cpu);
	if (r < 0)
		return r;

	path_join(dir, sizeof(dir), "cpu", num(nb, cpu), "/topology", NULL);
	r = read_set_sources(cpu_fd, t, "/" CPU_DIR "/", dir, (const char *const[]) { list, mask, list2, mask2, NULL },
			     cpu, &set, why, sizeof(why));
	if (r >= 0) {
		cpuset_and(&set, &t->online);
		r = cpuset_or(&l->items[g].cpus, &set);
	} else if (r == -ENOENT)
		r = 0;   /* a kernel without these lists: each CPU reads its own id */
	else if (r != -ENOMEM)
		r = note(t, "%s, its other members by their own ids", why);
	cpuset_done(&set);
	return r;
}

static int load_package_and_die(int cpu_fd, Topology *t, int cpu)
{
	TopoCpu *c = &t->cpus[cpu];
	int g, r;

	g = group_of(&t->packages, (unsigned)cpu);
	if (g >= 0) {
		c->package = g;
		c->package_id = t->packages.items[g].id;
	} else {
		if (read_id(cpu_fd, cpu, "physical_package_id", &c->package_id) < 0) {
			note(t, "/" CPU_DIR "/cpu%d/topology/physical_package_id: missing, package unknown", cpu);
			c->package_id = -1;
		}
		r = group_claim(cpu_fd, t, &t->packages, c->package_id, -1, cpu, "package_cpus_list", "package_cpus",
				"core_siblings_list", "core_siblings", &c->package);
		if (r < 0)
			return r;
	}

	/* Die ids repeat across packages: a die is (package, die_id). */
	g = group_of(&t->dies, (unsigned)cpu);
	if (g >= 0) {
		c->die = g;
		c->die_id = t->dies.items[g].id;
	} else if (read_id(cpu_fd, cpu, "die_id", &c->die_id) >= 0 && c->die_id >= 0) {
		r = group_claim(cpu_fd, t, &t->dies, c->die_id, c->package, cpu, "die_cpus_list",
				"die_cpus", NULL, NULL, &c->die);
		if (r < 0)
			return r;
	} else
		c->die_id = -1;
	return 0;
}

/* One online CPU's core, package and die. */
static int load_one_cpu(int cpu_fd, Topology *t, int cpu)
{
	TopoCpu *c = &t->cpus[cpu];
	char dir[64], nb[12], why[192];
	CpuSet sib = {};
	int core, r;

	if (c->core >= 0) {
		/* A sibling already read our core: inherit its ids and groups. */
		TopoCpu *first = NULL;

		CPUSET_FOREACH(s, &t->cores.items[c->core].cpus)
			if (s != cpu && t->cpus[s].package >= 0) {
				first = &t->cpus[s];
				break;
			}
		if (!first)
			return -EBADSLT;   /* cannot happen: the core's reader has its package */

		c->package_id = first->package_id;
		c->die_id = first->die_id;
		c->core_id = first->core_id;
		c->package = first->package;
		c->die = first->die;
		r = cpuset_add(&t->packages.items[c->package].cpus, (unsigned)cpu);
		if (r >= 0 && c->die >= 0)
			r = cpuset_add(&t->dies.items[c->die].cpus, (unsigned)cpu);
		if (r < 0)
			return r;
	} else {
		r = load_package_and_die(cpu_fd, t, cpu);
		if (r < 0)
			return r;
		/*
		 * Neither core_id nor cluster_id is read: cores are the
		 * thread_siblings sets, and nothing uses the ids or clusters.
		 */

		path_join(dir, sizeof(dir), "cpu", num(nb, cpu), "/topology", NULL);
		r = read_set_sources(cpu_fd, t, "/" CPU_DIR "/", dir,
				     (const char *const[]) { "thread_siblings_list", "thread_siblings",
							     "core_cpus_list", "core_cpus", NULL },
				     cpu, &sib, why, sizeof(why));
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			note(t, "%s, treating cpu%d as its own core", why, cpu);
		/* Siblings that are offline have no say; we must be in our own set. */
		cpuset_and(&sib, &t->online);
		r = cpuset_add(&sib, (unsigned)cpu);
		if (r < 0) {
			cpuset_done(&sib);
			return r;
		}

		core = group_add(&t->cores, c->core_id);
		if (core < 0) {
			cpuset_done(&sib);
			return core;
		}
		t->cores.items[core].cpus = sib;
		CPUSET_FOREACH(s, &sib)
			if (t->cpus[s].core < 0)
				t->cpus[s].core = core;
		if (c->core != core) {
			/* Inconsistent siblings: the kernel gave cpu a set we already saw. */
			c->core = core;
		}
	}

	return 0;
}

/*
 * Every online CPU's core, package and die. A CPU that cpu/online
 * lists but that has no cpuN directory (@nodir) is real if another CPU's
 * sibling list names it: it takes its place from that list, with a note.
 * One that nothing else names is not counted at all (a damaged or
 * hand-edited cpu/online would otherwise add one-CPU cores and packages):
 * it goes to t->missing, out of the online and present sets.
 */
static int load_cpu_topology(int cpu_fd, Topology *t, const CpuSet *nodir)
{
	_cleanup_free_ char *l = NULL;
	int r;

	CPUSET_FOREACH(cpu, &t->online) {
		if (cpuset_contains(nodir, (unsigned)cpu))
			continue;
		r = load_one_cpu(cpu_fd, t, cpu);
		if (r < 0)
			return r;
	}
	CPUSET_FOREACH(cpu, nodir) {
		if (!t->cpus[cpu].online)
			continue;
		if (t->cpus[cpu].core >= 0) {
			r = load_one_cpu(cpu_fd, t, cpu);
			if (r >= 0)
				r = note(t, "/" CPU_DIR "/cpu%d: missing although cpu/online lists it; its place "
					 "from the files of the CPUs that name it", cpu);
			if (r < 0)
				return r;
			continue;
		}
		r = cpuset_add(&t->missing, (unsigned)cpu);
		if (r < 0)
			return r;
		t->cpus[cpu].online = false;
	}
	if (!cpuset_is_empty(&t->missing)) {
		cpuset_andnot(&t->online, &t->missing);
		cpuset_andnot(&t->present, &t->missing);
		cpuset_andnot(&t->offline, &t->missing);
		if (cpuset_format_list(&t->missing, &l) < 0 ||
		    note(t, "/" CPU_DIR "/online: lists %s, which %s no cpuN directory and no sibling list names: "
			 "not counted", l, cpuset_count(&t->missing) == 1 ? "has" : "have") < 0)
			return -ENOMEM;
		if (cpuset_is_empty(&t->online))
			return -ENODATA;
	}

	for (size_t i = 0; i < t->cores.n; i++)
		t->threads_per_core = MAX(t->threads_per_core, cpuset_count(&t->cores.items[i].cpus));
	return 0;
}

typedef struct CacheInfo {
	unsigned level;
	int id;
	CpuSet shared;
	bool lost;     /* no usable set file: only the level and id are known */
} CacheInfo;

static int cache_group(Topology *t, TopoGroupList *l, const CacheInfo *ci, bool is_llc)
{
	int g;
	int r;

	g = group_add(l, ci->id);
	if (g < 0)
		return g;
	r = cpuset_copy(&l->items[g].cpus, &ci->shared);
	if (r < 0)
		return r;
	cpuset_and(&l->items[g].cpus, &t->online);
	CPUSET_FOREACH(s, &l->items[g].cpus) {
		int *slot = is_llc ? &t->cpus[s].llc : &t->cpus[s].l2;

		if (*slot < 0)
			*slot = g;
	}
	return 0;
}

/*
 * One cache index directory of @cpu: its id (for LLCs) and its shared set.
 * When no set file is usable the id is still read, and @why says what
 * was wrong.
 */
static int read_cache_index(int cpu_fd, Topology *t, int cpu, const char *dir, bool want_id, CacheInfo *ci,
			    char *why, size_t why_size)
{
	char path[160];

	ci->id = -1;
	if (want_id) {
		path_join(path, sizeof(path), dir, "/id", NULL);
		if (read_int_attr(cpu_fd, path, &ci->id) < 0)
			ci->id = -1;
	}
	return read_set_sources(cpu_fd, t, "/" CPU_DIR "/", dir,
				(const char *const[]) { "shared_cpu_list", "shared_cpu_map", NULL }, cpu, &ci->shared,
				why, why_size);
}

/* A CPU whose last-level cache set could not be read. */
typedef struct LostCache {
	int cpu, id;
	unsigned level;
	char why[192];
} LostCache;

/*
 * The LLC of each CPU in @lost, from the next source the kernel offers:
 * another member's set already named it (most often), else the cache id,
 * shared with a group in the same package or, failing that, a group of
 * its own that later CPUs with that id join. Each is named in a note.
 */
static int resolve_lost_llcs(Topology *t, const LostCache *lost, size_t n_lost)
{
	for (size_t i = 0; i < n_lost; i++) {
		TopoCpu *c = &t->cpus[lost[i].cpu];
		const char *why = lost[i].why;
		int g = c->llc, r;

		if (g >= 0) {
			CpuSet other = {};
			int by;

			r = cpuset_copy(&other, &t->llcs.items[g].cpus);
			if (r < 0)
				return r;
			cpuset_remove(&other, (unsigned)lost[i].cpu);
			by = cpuset_first(&other);
			cpuset_done(&other);
			r = note(t, "%s, its L%u from cpu%d's set", why, lost[i].level, by);
		} else if (lost[i].id >= 0 && lost[i].level == t->llc_level) {
			for (size_t k = 0; k < t->llcs.n; k++) {
				int first = cpuset_first(&t->llcs.items[k].cpus);

				if (t->llcs.items[k].id == lost[i].id && first >= 0 &&
				    t->cpus[first].package == c->package) {
					g = (int)k;
					break;
				}
			}
			if (g < 0) {
				g = group_add(&t->llcs, lost[i].id);
				if (g < 0)
					return g;
			}
			r = cpuset_add(&t->llcs.items[g].cpus, (unsigned)lost[i].cpu);
			if (r < 0)
				return r;
			c->llc = g;
			r = note(t, "%s, its L%u by cache id %d", why, lost[i].level, lost[i].id);
		} else
			r = note(t, "%s, its last-level cache unknown", why);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Cache groups. Every member of an L2 or LLC group lists the same set, so
 * one CPU reads it for all; a CPU whose LLC is known stops at its L2, found
 * first at the index where the previous CPU had it. L1 caches are skipped
 * (only their level is read) unless a machine has nothing above L1. A CPU
 * without a cpuN directory (@nodir) has only what its siblings' sets say.
 */
static int load_caches(int cpu_fd, Topology *t, const CpuSet *nodir)
{
	_cleanup_free_ LostCache *lost = NULL;
	size_t n_lost = 0;
	bool any_cache_dir = false;
	int l2_hint = -1, r;

	CPUSET_FOREACH(cpu, &t->online) {
		CacheInfo best = { .id = -1 }, l2 = { .id = -1 };
		TopoCpu *c = &t->cpus[cpu];
		unsigned l1_indexes = 0;
		char dir[96], path[128], nb[12], ib[12], why[192], l2_why[192] = "";

		if (c->llc >= 0 && (c->l2 >= 0 || t->llc_level <= 2))
			continue;
		if (cpuset_contains(nodir, (unsigned)cpu))
			continue;

		if (c->llc >= 0 && l2_hint >= 0) {
			unsigned level = 0;

			path_join(dir, sizeof(dir), "cpu", num(nb, cpu), "/cache/index", num(ib, l2_hint), NULL);
			if (l2_hint >= 2 && t->llc_level == 3 &&
			    read_set_pair(cpu_fd, dir, "shared_cpu_list", "shared_cpu_map", &l2.shared) >= 0) {
				/*
				 * The set tells the level without its file: a CPU's
				 * caches come by ascending level (CPUID leaf 4 or
				 * 0x8000001d, ACPI PPTT, device tree), at most a data
				 * and an instruction cache per level, so index 2 and up
				 * is L2 or higher; with L3 the last level, a set
				 * strictly inside this CPU's L3 is its L2. A set equal
				 * to the L3's (no L2 at this index) asks the level file.
				 */
				cpuset_and(&l2.shared, &t->online);
				if (cpuset_is_subset(&l2.shared, &t->llcs.items[c->llc].cpus) &&
				    !cpuset_equal(&l2.shared, &t->llcs.items[c->llc].cpus))
					level = 2;
			}
			if (level != 2)
				cpuset_done(&l2.shared);
			path_join(path, sizeof(path), dir, "/level", NULL);
			if (level == 2 ||
			    (read_unsigned_attr(cpu_fd, path, &level) >= 0 && level == 2)) {
				r = cpuset_is_empty(&l2.shared) ?
					read_cache_index(cpu_fd, t, cpu, dir, false, &l2, why, sizeof(why)) : 0;
				if (r >= 0) {
					l2.level = 2;
					r = cache_group(t, &t->l2s, &l2, false);
				} else if (r != -ENOMEM)
					r = note(t, "%s, its L2 unknown", why);
				cpuset_done(&l2.shared);
				if (r < 0)
					return r;
				continue;
			}
			l2 = (CacheInfo) { .id = -1 };
		}

		for (unsigned idx = 0; idx < 16; idx++) {
			CacheInfo ci = { .id = -1 };
			unsigned level;

			path_join(dir, sizeof(dir), "cpu", num(nb, cpu), "/cache/index", num(ib, (int)idx), NULL);
			path_join(path, sizeof(path), dir, "/level", NULL);
			r = read_unsigned_attr(cpu_fd, path, &level);
			if (r == -ENOENT)
				break;
			any_cache_dir = true;
			if (r < 0)
				continue;
			if (level <= 1) {
				l1_indexes |= 1U << idx;
				continue;
			}
			if (level == 2 && l2.level == 0 && !*l2_why && c->l2 < 0) {
				r = read_cache_index(cpu_fd, t, cpu, dir, false, &l2, l2_why, sizeof(l2_why));
				if (r == -ENOMEM) {
					cpuset_done(&best.shared);
					return r;
				}
				if (r >= 0) {
					l2.level = 2;
					l2_hint = (int)idx;
					*l2_why = '\0';
				}
			}
			if (level > best.level) {
				/* A CPU whose LLC is known needs its level, not its set. */
				if (c->llc < 0) {
					if (level == 2 && l2.level == 2)
						r = cpuset_copy(&ci.shared, &l2.shared);
					else
						r = read_cache_index(cpu_fd, t, cpu, dir, true, &ci, why, sizeof(why));
					if (r == -ENOMEM) {
						cpuset_done(&l2.shared);
						cpuset_done(&best.shared);
						return r;
					}
					/* The level is known, the set is not: never fall back to a lower level. */
					ci.lost = r < 0;
				}
				cpuset_done(&best.shared);
				best = ci;
				best.level = level;
			}
			if (c->llc >= 0 && (l2.level == 2 || c->l2 >= 0))
				break;
		}

		/* Nothing above L1: the L1 data (or unified) cache is the last level. */
		for (unsigned idx = 0; best.level == 0 && idx < 16; idx++) {
			_cleanup_free_ char *type = NULL;

			if (!(l1_indexes & (1U << idx)))
				continue;
			path_join(dir, sizeof(dir), "cpu", num(nb, cpu), "/cache/index", num(ib, (int)idx), NULL);
			path_join(path, sizeof(path), dir, "/type", NULL);
			if (read_line_at(cpu_fd, path, &type) >= 0 && streq(type, "Instruction"))
				continue;
			r = read_cache_index(cpu_fd, t, cpu, dir, true, &best, why, sizeof(why));
			if (r == -ENOMEM)
				return r;
			best.level = 1;
			best.lost = r < 0;
		}

		r = 0;
		if (best.level > 0) {
			if (t->llc_level == 0)
				t->llc_level = best.level;
			if (best.level != t->llc_level)
				note(t, "/" CPU_DIR "/cpu%d/cache: highest cache level %u differs from %u", cpu,
				     best.level, t->llc_level);
			if (c->llc < 0 && !best.lost)
				r = cache_group(t, &t->llcs, &best, true);
			else if (c->llc < 0) {
				LostCache *n = reallocarray(lost, n_lost + 1, sizeof(LostCache));

				if (!n)
					r = -ENOMEM;
				else {
					lost = n;
					lost[n_lost] = (LostCache) { .cpu = cpu, .id = best.id, .level = best.level };
					snprintf(lost[n_lost++].why, sizeof(lost->why), "%s", why);
				}
			}
		}
		/* A set file of the L2 that is not also the lost LLC's. */
		if (r >= 0 && *l2_why && !(best.lost && best.level == 2))
			r = note(t, "%s, its L2 unknown", l2_why);
		if (r >= 0 && l2.level == 2 && c->l2 < 0 && t->llc_level > 2)
			r = cache_group(t, &t->l2s, &l2, false);
		cpuset_done(&best.shared);
		cpuset_done(&l2.shared);
		if (r < 0)
			return r;
		if (best.level == 0 && c->llc < 0)
			break;   /* no cache information on this machine */
	}
	if (!any_cache_dir)
		note(t, "/" CPU_DIR "/cpu*/cache: missing, cache groups unknown");
	return resolve_lost_llcs(t, lost, n_lost);
}

/*
 * Which node ids the @n_values columns of a distance row stand for:
 * node/online, else node/possible, when their size says so; else the node
 * directories.
 */
static int distance_columns(int node_fd, const CpuSet *dirs, size_t n_values, CpuSet *ret)
{
	if (read_cpulist_at(node_fd, "online", ret) >= 0 && cpuset_count(ret) == n_values)
		return 0;
	if (read_cpulist_at(node_fd, "possible", ret) >= 0 && cpuset_count(ret) == n_values)
		return 0;
	return cpuset_copy(ret, dirs);
}

static int load_distances(int node_fd, Topology *t, const CpuSet *dirs)
{
	size_t n = t->nodes.n;
	_cleanup_free_ unsigned *d = NULL;
	CpuSet columns = {};
	int r = 0;

	d = calloc(n * n, sizeof(unsigned));
	if (!d)
		return -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		_cleanup_strv_free_ char **words = NULL;
		_cleanup_free_ char *l = NULL;
		char path[96], buf[4096], nb[12];
		const char *line;
		size_t m;

		path_join(path, sizeof(path), "node", num(nb, t->nodes.items[i].id), "/distance", NULL);
		r = read_attr(node_fd, path, buf, sizeof(buf), &l, &line);
		if (r < 0) {
			r = note(t, "/" NODE_DIR "/%s: %s, distances unknown", path, strerror(-r));
			goto out;
		}
		r = strv_split(line, WHITESPACE, &words);
		if (r < 0)
			goto out;
		m = strv_length(words);
		/*
		 * A row has one value per online node; nodes without a directory
		 * (an offline node0 in some dumps) still count, so map columns by
		 * node/online (else node/possible) ids when the sizes say so.
		 * The first row's size decides, as the kernel prints all alike.
		 */
		if (i == 0) {
			r = m == n ? cpuset_copy(&columns, dirs) : distance_columns(node_fd, dirs, m, &columns);
			if (r < 0)
				goto out;
		}
		if (m != n && m != cpuset_count(&columns)) {
			r = note(t, "/" NODE_DIR "/%s: %zu values for %zu nodes, distances unknown", path, m, n);
			goto out;
		}
		for (size_t j = 0; j < n; j++) {
			size_t col = j;
			int id = t->nodes.items[j].id;

			if (m != n) {
				col = 0;
				CPUSET_FOREACH(c, &columns) {
					if (c == id)
						break;
					col++;
				}
			}
			if (col >= m || safe_atou_base(words[col], 10, &d[i * n + j]) < 0) {
				r = note(t, "/" NODE_DIR "/%s: bad or missing value for node%d, distances unknown", path, id);
				goto out;
			}
		}
	}
	t->distance = TAKE_PTR(d);
	r = 0;
out:
	cpuset_done(&columns);
	return r;
}

/* The node files are opened below sys/devices/system/node, as the CPU files below cpu. */
static int load_nodes(int root_fd, Topology *t)
{
	_cleanup_close_ int node_fd = -EBADF;
	CpuSet ids = {};
	int r;

	node_fd = open_beneath(root_fd, NODE_DIR, O_PATH | O_DIRECTORY, 0, FILEIO_READ);
	r = node_fd < 0 ? node_fd : scan_numbered_dir(node_fd, ".", "node", &ids);
	if (r < 0 || cpuset_is_empty(&ids)) {
		int g;

		/* A kernel without NUMA has one node; say that we assumed it. */
		note(t, "/" NODE_DIR ": %s, assuming one NUMA node", r < 0 ? strerror(-r) : "no nodes");
		cpuset_done(&ids);
		t->nodes_synthetic = true;
		g = group_add(&t->nodes, 0);
		if (g < 0)
			return g;
		r = cpuset_copy(&t->nodes.items[g].cpus, &t->online);
		if (r < 0)
			return r;
		CPUSET_FOREACH(cpu, &t->online) {
			t->cpus[cpu].node = g;
			t->cpus[cpu].node_id = 0;
		}
		return 0;
	}

	CPUSET_FOREACH(id, &ids) {
		char dir[64], nb[12], why[192];
		int g;

		g = group_add(&t->nodes, id);
		if (g < 0)
			goto fail;
		path_join(dir, sizeof(dir), "node", num(nb, id), NULL);
		r = read_set_sources(node_fd, t, "/" NODE_DIR "/", dir, (const char *const[]) { "cpulist", "cpumap", NULL }, -1,
				     &t->nodes.items[g].cpus, why, sizeof(why));
		if (r == -ENOMEM)
			goto fail;
		if (r < 0) {
			note(t, "%s, node CPUs unknown", why);
			continue;
		}
		cpuset_and(&t->nodes.items[g].cpus, &t->online);
		CPUSET_FOREACH(cpu, &t->nodes.items[g].cpus) {
			if (t->cpus[cpu].node >= 0) {
				/* Firmware that puts a CPU in several nodes: the first wins. */
				note(t, "/" NODE_DIR "/%s/cpulist: cpu%d is already in node%d, ignored here", dir, cpu,
				     t->cpus[cpu].node_id);
				cpuset_remove(&t->nodes.items[g].cpus, (unsigned)cpu);
				continue;
			}
			t->cpus[cpu].node = g;
			t->cpus[cpu].node_id = id;
		}
	}
	r = load_distances(node_fd, t, &ids);
	cpuset_done(&ids);
	return r;
fail:
	cpuset_done(&ids);
	return -ENOMEM;
}

/*
 * Core kinds. Three per-CPU facts, each read only where the kernel offers
 * it (the first online CPU's file says whether it does, so a 640-CPU x86
 * server pays two failed opens, not 1 280): the Intel hybrid core type
 * from the cpu_core/cpu_atom PMUs' cpus lists, the capacity from
 * cpuN/cpu_capacity, the Arm MIDR from cpuN/regs/identification/midr_el1,
 * else from /proc/cpuinfo (older arm64 kernels, 32-bit arm).
 */
typedef struct CpuKindFacts {
	char core_type[8];
	bool have_midr;
	unsigned implementer, part;
	unsigned capacity;
} CpuKindFacts;

/* "0x00000000411fd461": implementer [31:24], part [15:4]. */
static int parse_midr(const char *s, unsigned *ret_implementer, unsigned *ret_part)
{
	unsigned long long v;
	char *end;

	if (!startswith(s, "0x"))
		return -EINVAL;
	errno = 0;
	v = strtoull(s + 2, &end, 16);
	if (errno || end == s + 2 || *end || v > UINT32_MAX)
		return -EINVAL;
	*ret_implementer = (unsigned)(v >> 24) & 0xff;
	*ret_part = (unsigned)(v >> 4) & 0xfff;
	return 0;
}

/*
 * The "CPU implementer" and "CPU part" of every processor block of an arm
 * /proc/cpuinfo into @facts. A block without them is left alone.
 */
static int midr_from_cpuinfo(int root_fd, Topology *t, CpuKindFacts *facts)
{
	_cleanup_free_ char *text = NULL;
	int cpu = -1, r;
	unsigned impl = 0;
	bool have_impl = false;

	r = read_file_at(root_fd, "proc/cpuinfo", READ_FILE_MAX, &text, NULL);
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	for (char *line = text, *next; line && *line; line = next) {
		const char *v;
		unsigned u;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		v = strchr(line, ':');
		if (!v)
			continue;
		v = strip((char *)v + 1);
		if (startswith(line, "processor")) {
			cpu = safe_atou(v, &u) >= 0 && u < t->n_slots ? (int)u : -1;
			have_impl = false;
		} else if (cpu >= 0 && startswith(line, "CPU implementer")) {
			have_impl = safe_atou_base(v, 16, &impl) >= 0;
		} else if (cpu >= 0 && have_impl && startswith(line, "CPU part")) {
			if (safe_atou_base(v, 16, &u) < 0) {
				r = note(t, "/proc/cpuinfo: processor %d: CPU part \"%s\" is not a number, its kind unknown",
					 cpu, v);
				if (r < 0)
					return r;
				continue;
			}
			facts[cpu] = (CpuKindFacts) { .have_midr = true, .implementer = impl, .part = u,
						      .capacity = facts[cpu].capacity };
		}
	}
	return 0;
}

/*
 * Capacities that differ by at most this many percent of the larger are one
 * class: the kernel scales cpu_capacity from each CPU's measured or
 * firmware-given performance, and CPUs of one micro-architecture differ a
 * little (the X925 cluster of a GB10 reads 1014-1024).
 */
#define KIND_CAPACITY_TOLERANCE_PERCENT 10U

/*
 * A core kind is a micro-architecture: the Intel core type or the Arm MIDR
 * implementer and part, whatever the CPUs' capacities. Only where neither
 * exists is it a capacity class, within the tolerance.
 */
static bool kind_facts_equal(const CpuKindFacts *a, const CpuKindFacts *b)
{
	unsigned hi = MAX(a->capacity, b->capacity), lo = MIN(a->capacity, b->capacity);

	if (!streq(a->core_type, b->core_type) || a->have_midr != b->have_midr)
		return false;
	if (*a->core_type)
		return true;
	if (a->have_midr)
		return a->implementer == b->implementer && a->part == b->part;
	if (!lo)
		return a->capacity == b->capacity;
	return (hi - lo) * 100U <= hi * KIND_CAPACITY_TOLERANCE_PERCENT;
}

/* Lowest first: by capacity where both know one, atom before core, else by first CPU. */
static int kind_compare(const void *pa, const void *pb)
{
	const TopoKind *a = pa, *b = pb;

	if (a->capacity && b->capacity && a->capacity != b->capacity)
		return a->capacity < b->capacity ? -1 : 1;
	if (!streq(a->core_type, b->core_type) && *a->core_type && *b->core_type)
		return streq(a->core_type, "atom") ? -1 : 1;
	return cpuset_first(&a->cpus) - cpuset_first(&b->cpus);
}

static void kind_describe(TopoKind *k)
{
	const char *arm = k->have_midr ? cpuid_arm_part_name(k->implementer, k->part) : NULL;

	if (*k->core_type) {
		snprintf(k->key, sizeof(k->key), "%s", k->core_type);
		snprintf(k->name, sizeof(k->name), "%s", streq(k->core_type, "atom") ? "Intel Atom (E-core)"
										    : "Intel Core (P-core)");
	} else if (k->have_midr) {
		snprintf(k->key, sizeof(k->key), "0x%02x:0x%03x", k->implementer, k->part);
		if (arm)
			snprintf(k->name, sizeof(k->name), "Arm %s", arm);
		else
			snprintf(k->name, sizeof(k->name), "implementer 0x%02x part 0x%03x", k->implementer, k->part);
	} else if (k->capacity) {
		snprintf(k->key, sizeof(k->key), "capacity-%u", k->capacity);
		snprintf(k->name, sizeof(k->name), "unidentified");
	} else {
		snprintf(k->key, sizeof(k->key), "unknown");
		snprintf(k->name, sizeof(k->name), "kind unknown");
	}
}

static int load_kind_pmu(int root_fd, Topology *t, const char *pmu, CpuKindFacts *facts, bool *found)
{
	char path[64];
	CpuSet set = {};
	int r;

	snprintf(path, sizeof(path), "sys/devices/%s/cpus", pmu);
	r = read_cpulist_at(root_fd, path, &set);
	if (r == -ENOENT)
		return 0;
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return note(t, "/%s: %s, %s cores unknown", path, r == -EINVAL || r == -ERANGE ? "not a CPU list" :
			    strerror(-r), pmu);
	*found = true;
	CPUSET_FOREACH(cpu, &set)
		if ((unsigned)cpu < t->n_slots)
			snprintf(facts[cpu].core_type, sizeof(facts[cpu].core_type), "%s", pmu + strlen("cpu_"));
	cpuset_done(&set);
	return 0;
}

/* Every online CPU's kind facts, grouped into kinds; a bad file is named and its fact left unknown. */
static int load_kinds(int root_fd, int cpu_fd, Topology *t)
{
	_cleanup_free_ CpuKindFacts *facts = NULL;
	bool pmu = false, capacity = false, midr = false, cpuinfo = false;
	int first = cpuset_first(&t->online), r;
	char path[96], nb[12], buf[64];

	facts = calloc(t->n_slots, sizeof(CpuKindFacts));
	if (!facts)
		return -ENOMEM;

	r = load_kind_pmu(root_fd, t, "cpu_core", facts, &pmu);
	if (r >= 0)
		r = load_kind_pmu(root_fd, t, "cpu_atom", facts, &pmu);
	if (r < 0)
		return r;

	path_join(path, sizeof(path), "cpu", num(nb, first), "/cpu_capacity", NULL);
	capacity = path_exists_at(cpu_fd, path);
	path_join(path, sizeof(path), "cpu", num(nb, first), "/regs/identification/midr_el1", NULL);
	midr = path_exists_at(cpu_fd, path);

	CPUSET_FOREACH(cpu, &t->online) {
		if (capacity) {
			path_join(path, sizeof(path), "cpu", num(nb, cpu), "/cpu_capacity", NULL);
			r = read_unsigned_attr(cpu_fd, path, &facts[cpu].capacity);
			if (r == -ENOMEM)
				return r;
			if (r >= 0 && facts[cpu].capacity == 0)
				r = -EINVAL;
			if (r < 0 && note(t, "/" CPU_DIR "/%s: %s, capacity of cpu%d unknown", path,
					  r == -EINVAL || r == -ERANGE ? "not a capacity" : strerror(-r), cpu) < 0)
				return -ENOMEM;
		}
		if (midr) {
			path_join(path, sizeof(path), "cpu", num(nb, cpu), "/regs/identification/midr_el1", NULL);
			r = read_attr_at(cpu_fd, path, buf, sizeof(buf));
			if (r >= 0)
				r = parse_midr(buf, &facts[cpu].implementer, &facts[cpu].part);
			if (r >= 0)
				facts[cpu].have_midr = true;
			else if (note(t, "/" CPU_DIR "/%s: %s, kind of cpu%d unknown", path,
				      r == -EINVAL || r == -ENOBUFS ? "not a MIDR" : strerror(-r), cpu) < 0)
				return -ENOMEM;
		}
	}
	/* arm64 has cpu_capacity everywhere; a kernel without midr_el1 still prints the MIDR in cpuinfo. */
	if (capacity && !midr && !pmu) {
		r = midr_from_cpuinfo(root_fd, t, facts);
		if (r < 0)
			return r;
		CPUSET_FOREACH(cpu, &t->online)
			cpuinfo |= facts[cpu].have_midr;
	}
	if (!pmu && !capacity && !midr)
		return 0;
	snprintf(t->kinds.source, sizeof(t->kinds.source), "%s%s%s%s", pmu ? ", cpu_core/cpu_atom" : "",
		 capacity ? ", cpu_capacity" : "", midr ? ", midr_el1" : "", cpuinfo ? ", cpuinfo" : "");
	memmove(t->kinds.source, t->kinds.source + 2, strlen(t->kinds.source + 2) + 1);

	CPUSET_FOREACH(cpu, &t->online) {
		size_t k;

		for (k = 0; k < t->kinds.n; k++)
			if (kind_facts_equal(&facts[cpuset_first(&t->kinds.items[k].cpus)], &facts[cpu]))
				break;
		if (k == t->kinds.n) {
			TopoKind *n = reallocarray(t->kinds.items, t->kinds.n + 1, sizeof(TopoKind));

			if (!n)
				return -ENOMEM;
			t->kinds.items = n;
			n[k] = (TopoKind) {
				.have_midr = facts[cpu].have_midr,
				.implementer = facts[cpu].implementer,
				.part = facts[cpu].part,
				.capacity = facts[cpu].capacity,
			};
			n[k].capacity_min = facts[cpu].capacity;
			snprintf(n[k].core_type, sizeof(n[k].core_type), "%s", facts[cpu].core_type);
			t->kinds.n++;
		}
		/* The capacities seen: @capacity the highest, which orders kinds and names a capacity class. */
		t->kinds.items[k].capacity = MAX(t->kinds.items[k].capacity, facts[cpu].capacity);
		t->kinds.items[k].capacity_min = MIN(t->kinds.items[k].capacity_min, facts[cpu].capacity);
		r = cpuset_add(&t->kinds.items[k].cpus, (unsigned)cpu);
		if (r < 0)
			return r;
	}
	for (size_t k = 0; k < t->kinds.n; k++)
		kind_describe(&t->kinds.items[k]);
	qsort(t->kinds.items, t->kinds.n, sizeof(TopoKind), kind_compare);
	for (size_t k = 0; k < t->kinds.n; k++)
		CPUSET_FOREACH(cpu, &t->kinds.items[k].cpus)
			t->cpus[cpu].kind = (int)k;
	return 0;
}

bool topology_heterogeneous(const Topology *t)
{
	return t->kinds.n > 1;
}

static void compute_nodes_per_package(Topology *t)
{
	for (size_t p = 0; p < t->packages.n; p++) {
		unsigned n = 0;

		for (size_t i = 0; i < t->nodes.n; i++)
			if (cpuset_intersects(&t->nodes.items[i].cpus, &t->packages.items[p].cpus))
				n++;
		t->nodes_per_package = MAX(t->nodes_per_package, n);
	}
}

unsigned topology_cpu_nodes(const Topology *t)
{
	unsigned n = 0;

	for (size_t i = 0; i < t->nodes.n; i++)
		if (!cpuset_is_empty(&t->nodes.items[i].cpus))
			n++;
	return n;
}

int topology_node_index(const Topology *t, int node_id)
{
	return group_find(&t->nodes, node_id, -1);
}

int topology_load(int root_fd, Topology **ret)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_close_ int cpu_fd = -EBADF;
	CpuSet nodir = {};
	int r;

	t = calloc(1, sizeof(Topology));
	if (!t)
		return -ENOMEM;

	/* The CPU files are opened below sys/devices/system/cpu: four path components fewer each. */
	cpu_fd = open_beneath(root_fd, CPU_DIR, O_PATH | O_DIRECTORY, 0, FILEIO_READ);
	if (cpu_fd < 0)
		return cpu_fd;
	r = load_cpu_sets(cpu_fd, t, &nodir);
	if (r >= 0)
		r = load_cpu_topology(cpu_fd, t, &nodir);
	if (r >= 0)
		r = load_caches(cpu_fd, t, &nodir);
	if (r >= 0)
		r = load_kinds(root_fd, cpu_fd, t);
	cpuset_done(&nodir);
	if (r < 0)
		return r;
	r = load_nodes(root_fd, t);
	if (r < 0)
		return r;
	compute_nodes_per_package(t);

	*ret = TAKE_PTR(t);
	return 0;
}
