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
	group_list_done(&t->packages);
	group_list_done(&t->dies);
	group_list_done(&t->clusters);
	group_list_done(&t->cores);
	group_list_done(&t->l2s);
	group_list_done(&t->llcs);
	group_list_done(&t->nodes);
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

/* The group @id (of package index @package, for dies and clusters), or -1. */
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

	r = read_line_buf_at(fd, path, buf, size);
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

	r = read_line_buf_at(root_fd, path, buf, sizeof(buf));
	if (r < 0)
		return r == -ENOBUFS ? -ERANGE : r;
	return safe_atoi(buf, ret);
}

static int read_unsigned_attr(int root_fd, const char *path, unsigned *ret)
{
	char buf[64];
	int r;

	r = read_line_buf_at(root_fd, path, buf, sizeof(buf));
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
 * The cpuN directories, listed only for a tree that lacks cpu/present or
 * cpu/online: reading a directory of 640 entries costs more than the file.
 */
static int cpu_dirs(int cpu_fd, CpuSet *dirs, bool *listed)
{
	int r;

	if (*listed)
		return 0;
	r = scan_numbered_dir(cpu_fd, ".", "cpu", dirs);
	if (r >= 0)
		*listed = true;
	return r;
}

static int load_cpu_sets(int cpu_fd, Topology *t)
{
	CpuSet dirs = {};
	bool listed = false;
	int r;

	r = read_cpulist_at(cpu_fd, "present", &t->present);
	if (r < 0) {
		int k = cpu_dirs(cpu_fd, &dirs, &listed);

		if (k < 0)
			return k;
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
		r = cpu_dirs(cpu_fd, &dirs, &listed);
		if (r < 0)
			goto out;
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
	if (r < 0)
		goto out;
	cpuset_andnot(&t->offline, &t->online);

	t->n_slots = (unsigned)cpuset_last(&t->possible) + 1;
	t->cpus = calloc(t->n_slots, sizeof(TopoCpu));
	if (!t->cpus) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < t->n_slots; i++)
		t->cpus[i] = (TopoCpu) {
			.package_id = -1, .die_id = -1, .cluster_id = -1, .core_id = -1, .node_id = -1,
			.package = -1, .die = -1, .cluster = -1, .core = -1, .l2 = -1, .llc = -1, .node = -1,
		};
	CPUSET_FOREACH(cpu, &t->online)
		t->cpus[cpu].online = true;
	r = 0;
out:
	cpuset_done(&dirs);
	return r;
}

static int read_id(int cpu_fd, int cpu, const char *name, int *ret)
{
	char path[96], nb[12];

	path_join(path, sizeof(path), "cpu", num(nb, cpu), "/topology/", name, NULL);
	return read_int_attr(cpu_fd, path, ret);
}

/* Add @cpu to the group @id of @package, creating it. */
static int group_join(TopoGroupList *l, int id, int package, int cpu, int *ret_index)
{
	int i = group_find(l, id, package);

	if (i < 0) {
		i = group_add(l, id);
		if (i < 0)
			return i;
		l->items[i].package = package;
	}
	*ret_index = i;
	return cpuset_add(&l->items[i].cpus, (unsigned)cpu);
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
	char dir[64], nb[12];
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
	r = read_set_pair(cpu_fd, dir, list, mask, &set);
	if (r == -ENOENT && list2)
		r = read_set_pair(cpu_fd, dir, list2, mask2, &set);
	if (r >= 0) {
		cpuset_and(&set, &t->online);
		r = cpuset_or(&l->items[g].cpus, &set);
	} else
		r = 0;
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

static int load_cpu_topology(int cpu_fd, Topology *t)
{
	int r;

	CPUSET_FOREACH(cpu, &t->online) {
		TopoCpu *c = &t->cpus[cpu];
		char dir[64], nb[12];
		CpuSet sib = {};
		int core;

		if (c->core >= 0) {
			/* A sibling already read our core: inherit its ids and groups. */
			TopoCpu *first = &t->cpus[cpuset_first(&t->cores.items[c->core].cpus)];

			c->package_id = first->package_id;
			c->die_id = first->die_id;
			c->cluster_id = first->cluster_id;
			c->core_id = first->core_id;
			c->package = first->package;
			c->die = first->die;
			c->cluster = first->cluster;
			r = cpuset_add(&t->packages.items[c->package].cpus, (unsigned)cpu);
			if (r >= 0 && c->die >= 0)
				r = cpuset_add(&t->dies.items[c->die].cpus, (unsigned)cpu);
			if (r < 0)
				return r;
		} else {
			r = load_package_and_die(cpu_fd, t, cpu);
			if (r < 0)
				return r;
			if (read_id(cpu_fd, cpu, "cluster_id", &c->cluster_id) < 0)
				c->cluster_id = -1;
			/* core_id is not read: cores are the thread_siblings sets; no one uses the id. */

			path_join(dir, sizeof(dir), "cpu", num(nb, cpu), "/topology", NULL);
			r = read_set_pair(cpu_fd, dir, "thread_siblings_list", "thread_siblings", &sib);
			if (r == -ENOENT)
				r = read_set_pair(cpu_fd, dir, "core_cpus_list", "core_cpus", &sib);
			if (r < 0) {
				note(t, "/" CPU_DIR "/%s/thread_siblings_list: %s, treating cpu%d as its own core", dir,
				     strerror(-r), cpu);
				cpuset_done(&sib);
				r = cpuset_add(&sib, (unsigned)cpu);
				if (r < 0)
					return r;
			}
			if (r >= 0 && !cpuset_contains(&sib, (unsigned)cpu))
				note(t, "/" CPU_DIR "/%s/thread_siblings_list: does not list cpu%d, "
				     "treating it as its own core", dir, cpu);
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

		if (c->cluster >= 0)
			r = cpuset_add(&t->clusters.items[c->cluster].cpus, (unsigned)cpu);
		else if (c->cluster_id >= 0)
			r = group_join(&t->clusters, c->cluster_id, c->package, cpu, &c->cluster);
		if (r < 0)
			return r;
	}

	for (size_t i = 0; i < t->cores.n; i++)
		t->threads_per_core = MAX(t->threads_per_core, cpuset_count(&t->cores.items[i].cpus));
	return 0;
}

typedef struct CacheInfo {
	unsigned level;
	int id;
	CpuSet shared;
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

/* One cache index directory: its shared set and (for LLCs) its id. */
static int read_cache_index(int cpu_fd, Topology *t, const char *dir, bool want_id, CacheInfo *ci)
{
	char path[160];
	int r;

	r = read_set_pair(cpu_fd, dir, "shared_cpu_list", "shared_cpu_map", &ci->shared);
	if (r < 0) {
		note(t, "/" CPU_DIR "/%s/shared_cpu_list: %s, cache ignored", dir, strerror(-r));
		cpuset_done(&ci->shared);
		return r;
	}
	ci->id = -1;
	if (want_id) {
		path_join(path, sizeof(path), dir, "/id", NULL);
		if (read_int_attr(cpu_fd, path, &ci->id) < 0)
			ci->id = -1;
	}
	return 0;
}

/*
 * Cache groups. Every member of an L2 or LLC group lists the same set, so
 * one CPU reads it for all; a CPU whose LLC is known stops at its L2, found
 * first at the index where the previous CPU had it. L1 caches are skipped
 * (only their level is read) unless a machine has nothing above L1.
 */
static int load_caches(int cpu_fd, Topology *t)
{
	bool any_cache_dir = false;
	int l2_hint = -1, r;

	CPUSET_FOREACH(cpu, &t->online) {
		CacheInfo best = { .id = -1 }, l2 = { .id = -1 };
		TopoCpu *c = &t->cpus[cpu];
		unsigned l1_indexes = 0;
		char dir[96], path[128], nb[12], ib[12];

		if (c->llc >= 0 && (c->l2 >= 0 || t->llc_level <= 2))
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
			path_join(path, sizeof(path), dir, "/level", NULL);
			if (level == 2 ||
			    (read_unsigned_attr(cpu_fd, path, &level) >= 0 && level == 2 &&
			     read_cache_index(cpu_fd, t, dir, false, &l2) >= 0)) {
				l2.level = 2;
				r = cache_group(t, &t->l2s, &l2, false);
				cpuset_done(&l2.shared);
				if (r < 0)
					return r;
				continue;
			}
			cpuset_done(&l2.shared);
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
			if (level == 2 && l2.level == 0 && c->l2 < 0) {
				if (read_cache_index(cpu_fd, t, dir, false, &l2) >= 0) {
					l2.level = 2;
					l2_hint = (int)idx;
				}
			}
			if (level > best.level) {
				/* A CPU whose LLC is known needs its level, not its set. */
				if (c->llc < 0) {
					if (level == 2 && l2.level == 2)
						r = cpuset_copy(&ci.shared, &l2.shared);
					else
						r = read_cache_index(cpu_fd, t, dir, true, &ci);
					if (r == -ENOMEM) {
						cpuset_done(&l2.shared);
						cpuset_done(&best.shared);
						return r;
					}
					if (r < 0)
						continue;
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
			if (read_cache_index(cpu_fd, t, dir, true, &best) >= 0)
				best.level = 1;
		}

		r = 0;
		if (best.level > 0) {
			if (t->llc_level == 0)
				t->llc_level = best.level;
			if (best.level != t->llc_level)
				note(t, "/" CPU_DIR "/cpu%d/cache: highest cache level %u differs from %u", cpu,
				     best.level, t->llc_level);
			if (c->llc < 0)
				r = cache_group(t, &t->llcs, &best, true);
		}
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
	return 0;
}

/*
 * Which node ids the @n_values columns of a distance row stand for:
 * node/online, else node/possible, when their size says so; else the node
 * directories.
 */
static int distance_columns(int root_fd, const CpuSet *dirs, size_t n_values, CpuSet *ret)
{
	if (read_cpulist_at(root_fd, NODE_DIR "/online", ret) >= 0 && cpuset_count(ret) == n_values)
		return 0;
	if (read_cpulist_at(root_fd, NODE_DIR "/possible", ret) >= 0 && cpuset_count(ret) == n_values)
		return 0;
	return cpuset_copy(ret, dirs);
}

static int load_distances(int root_fd, Topology *t, const CpuSet *dirs)
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

		path_join(path, sizeof(path), NODE_DIR "/node", num(nb, t->nodes.items[i].id), "/distance", NULL);
		r = read_attr(root_fd, path, buf, sizeof(buf), &l, &line);
		if (r < 0) {
			r = note(t, "/%s: %s, distances unknown", path, strerror(-r));
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
			r = m == n ? cpuset_copy(&columns, dirs) : distance_columns(root_fd, dirs, m, &columns);
			if (r < 0)
				goto out;
		}
		if (m != n && m != cpuset_count(&columns)) {
			r = note(t, "/%s: %zu values for %zu nodes, distances unknown", path, m, n);
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
				r = note(t, "/%s: bad or missing value for node%d, distances unknown", path, id);
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

static int load_nodes(int root_fd, Topology *t)
{
	CpuSet ids = {};
	int r;

	r = scan_numbered_dir(root_fd, NODE_DIR, "node", &ids);
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
		char dir[64], nb[12];
		int g;

		g = group_add(&t->nodes, id);
		if (g < 0)
			goto fail;
		path_join(dir, sizeof(dir), NODE_DIR "/node", num(nb, id), NULL);
		r = read_set_pair(root_fd, dir, "cpulist", "cpumap", &t->nodes.items[g].cpus);
		if (r < 0) {
			note(t, "/%s/cpulist: %s, node CPUs unknown", dir, strerror(-r));
			continue;
		}
		cpuset_and(&t->nodes.items[g].cpus, &t->online);
		CPUSET_FOREACH(cpu, &t->nodes.items[g].cpus) {
			if (t->cpus[cpu].node >= 0) {
				/* Firmware that puts a CPU in several nodes: the first wins. */
				note(t, "/%s/cpulist: cpu%d is already in node%d, ignored here", dir, cpu,
				     t->cpus[cpu].node_id);
				cpuset_remove(&t->nodes.items[g].cpus, (unsigned)cpu);
				continue;
			}
			t->cpus[cpu].node = g;
			t->cpus[cpu].node_id = id;
		}
	}
	r = load_distances(root_fd, t, &ids);
	cpuset_done(&ids);
	return r;
fail:
	cpuset_done(&ids);
	return -ENOMEM;
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
	int r;

	t = calloc(1, sizeof(Topology));
	if (!t)
		return -ENOMEM;

	/* The CPU files are opened below sys/devices/system/cpu: four path components fewer each. */
	cpu_fd = open_beneath(root_fd, CPU_DIR, O_PATH | O_DIRECTORY, 0, FILEIO_READ);
	if (cpu_fd < 0)
		return cpu_fd;
	r = load_cpu_sets(cpu_fd, t);
	if (r < 0)
		return r;
	r = load_cpu_topology(cpu_fd, t);
	if (r < 0)
		return r;
	r = load_caches(cpu_fd, t);
	if (r < 0)
		return r;
	r = load_nodes(root_fd, t);
	if (r < 0)
		return r;
	compute_nodes_per_package(t);

	*ret = TAKE_PTR(t);
	return 0;
}
