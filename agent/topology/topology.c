/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysfs topology reader. Depends on basic only; all reads are relative to a
 * root fd. Files that old kernels or odd architectures lack fall back in the
 * order lscpu and hwloc use: *_list -> hex mask, cpu/online -> cpuN/online.
 *
 * To keep discovery cheap on 640-CPU machines a CPU whose core (or cache
 * group) is already known from a sibling's files is not read again: the
 * kernel reports the same sets for every member.
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
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	return strv_push(&t->notes, s);
}

/* Append a group; returns its index. */
static int group_add(TopoGroupList *l, int id)
{
	TopoGroup *n;

	n = realloc(l->items, (l->n + 1) * sizeof(TopoGroup));
	if (!n)
		return -ENOMEM;
	l->items = n;
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

static int read_cpulist_at(int root_fd, const char *path, CpuSet *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = read_line_at(root_fd, path, &s);
	if (r < 0)
		return r;
	return cpuset_parse_list(s, ret, NULL);
}

static int read_cpumask_at(int root_fd, const char *path, CpuSet *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = read_line_at(root_fd, path, &s);
	if (r < 0)
		return r;
	return cpuset_parse_mask(s, ret);
}

/* DIR/NAME_list, else DIR/NAME as a hex mask. */
static int read_set_pair(int root_fd, const char *dir, const char *list_name, const char *mask_name, CpuSet *ret)
{
	char path[256];
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, list_name);
	r = read_cpulist_at(root_fd, path, ret);
	if (r != -ENOENT || !mask_name)
		return r;
	snprintf(path, sizeof(path), "%s/%s", dir, mask_name);
	return read_cpumask_at(root_fd, path, ret);
}

/* Numeric cpuN / nodeN entries of a directory, as a set. */
static int scan_numbered_dir(int root_fd, const char *dir, const char *prefix, CpuSet *ret)
{
	_cleanup_close_ int fd = -EBADF;
	CpuSet set = {};
	struct dirent *de;
	DIR *d;
	int r = 0;

	fd = openat(root_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
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

static int load_cpu_sets(int root_fd, Topology *t)
{
	CpuSet dirs = {};
	int r;

	r = scan_numbered_dir(root_fd, CPU_DIR, "cpu", &dirs);
	if (r < 0)
		return r;

	r = read_cpulist_at(root_fd, CPU_DIR "/present", &t->present);
	if (r < 0) {
		note(t, "/" CPU_DIR "/present: %s, using the cpuN directories", strerror(-r));
		r = cpuset_copy(&t->present, &dirs);
		if (r < 0)
			goto out;
	}
	r = read_cpulist_at(root_fd, CPU_DIR "/possible", &t->possible);
	if (r < 0) {
		r = cpuset_copy(&t->possible, &t->present);
		if (r < 0)
			goto out;
	}

	r = read_cpulist_at(root_fd, CPU_DIR "/online", &t->online);
	if (r < 0) {
		/* Old dumps: per-CPU "online" files; a CPU without one (cpu0) is online. */
		note(t, "/" CPU_DIR "/online: %s, using cpuN/online", strerror(-r));
		CPUSET_FOREACH(cpu, &t->present) {
			char path[64];
			int v;

			if (!cpuset_contains(&dirs, (unsigned)cpu))
				continue;
			snprintf(path, sizeof(path), CPU_DIR "/cpu%d/online", cpu);
			if (read_int_at(root_fd, path, &v) >= 0 && v == 0)
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

static int read_id(int root_fd, int cpu, const char *name, int *ret)
{
	char path[96];

	snprintf(path, sizeof(path), CPU_DIR "/cpu%d/topology/%s", cpu, name);
	return read_int_at(root_fd, path, ret);
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
static int group_claim(int root_fd, Topology *t, TopoGroupList *l, int id, int package, int cpu, const char *list,
		       const char *mask, const char *list2, const char *mask2, int *ret_index)
{
	CpuSet set = {};
	char dir[64];
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

	snprintf(dir, sizeof(dir), CPU_DIR "/cpu%d/topology", cpu);
	r = read_set_pair(root_fd, dir, list, mask, &set);
	if (r == -ENOENT && list2)
		r = read_set_pair(root_fd, dir, list2, mask2, &set);
	if (r >= 0) {
		cpuset_and(&set, &t->online);
		r = cpuset_or(&l->items[g].cpus, &set);
	} else
		r = 0;
	cpuset_done(&set);
	return r;
}

static int load_package_and_die(int root_fd, Topology *t, int cpu)
{
	TopoCpu *c = &t->cpus[cpu];
	int g, r;

	g = group_of(&t->packages, (unsigned)cpu);
	if (g >= 0) {
		c->package = g;
		c->package_id = t->packages.items[g].id;
	} else {
		if (read_id(root_fd, cpu, "physical_package_id", &c->package_id) < 0) {
			note(t, "/" CPU_DIR "/cpu%d/topology/physical_package_id: missing, package unknown", cpu);
			c->package_id = -1;
		}
		r = group_claim(root_fd, t, &t->packages, c->package_id, -1, cpu, "package_cpus_list", "package_cpus",
				"core_siblings_list", "core_siblings", &c->package);
		if (r < 0)
			return r;
	}

	/* Die ids repeat across packages: a die is (package, die_id). */
	g = group_of(&t->dies, (unsigned)cpu);
	if (g >= 0) {
		c->die = g;
		c->die_id = t->dies.items[g].id;
	} else if (read_id(root_fd, cpu, "die_id", &c->die_id) >= 0 && c->die_id >= 0) {
		r = group_claim(root_fd, t, &t->dies, c->die_id, c->package, cpu, "die_cpus_list",
				"die_cpus", NULL, NULL, &c->die);
		if (r < 0)
			return r;
	} else
		c->die_id = -1;
	return 0;
}

static int load_cpu_topology(int root_fd, Topology *t)
{
	int r;

	CPUSET_FOREACH(cpu, &t->online) {
		TopoCpu *c = &t->cpus[cpu];
		char dir[64];
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
			r = cpuset_add(&t->packages.items[c->package].cpus, (unsigned)cpu);
			if (r >= 0 && c->die >= 0)
				r = cpuset_add(&t->dies.items[c->die].cpus, (unsigned)cpu);
			if (r < 0)
				return r;
		} else {
			r = load_package_and_die(root_fd, t, cpu);
			if (r < 0)
				return r;
			if (read_id(root_fd, cpu, "cluster_id", &c->cluster_id) < 0)
				c->cluster_id = -1;
			/* core_id is not read: cores are the thread_siblings sets; no one uses the id. */

			snprintf(dir, sizeof(dir), CPU_DIR "/cpu%d/topology", cpu);
			r = read_set_pair(root_fd, dir, "thread_siblings_list", "thread_siblings", &sib);
			if (r == -ENOENT)
				r = read_set_pair(root_fd, dir, "core_cpus_list", "core_cpus", &sib);
			if (r < 0) {
				note(t, "/%s/thread_siblings_list: %s, treating cpu%d as its own core", dir,
				     strerror(-r), cpu);
				cpuset_done(&sib);
				r = cpuset_add(&sib, (unsigned)cpu);
				if (r < 0)
					return r;
			}
			if (r >= 0 && !cpuset_contains(&sib, (unsigned)cpu))
				note(t, "/%s/thread_siblings_list: does not list cpu%d, treating it as its own core",
				     dir, cpu);
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

		if (c->cluster_id >= 0) {
			r = group_join(&t->clusters, c->cluster_id, c->package, cpu, &c->cluster);
			if (r < 0)
				return r;
		}
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
static int read_cache_index(int root_fd, Topology *t, const char *dir, bool want_id, CacheInfo *ci)
{
	char path[160];
	int r;

	r = read_set_pair(root_fd, dir, "shared_cpu_list", "shared_cpu_map", &ci->shared);
	if (r < 0) {
		note(t, "/%s/shared_cpu_list: %s, cache ignored", dir, strerror(-r));
		cpuset_done(&ci->shared);
		return r;
	}
	ci->id = -1;
	if (want_id) {
		snprintf(path, sizeof(path), "%s/id", dir);
		if (read_int_at(root_fd, path, &ci->id) < 0)
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
static int load_caches(int root_fd, Topology *t)
{
	bool any_cache_dir = false;
	int l2_hint = -1, r;

	CPUSET_FOREACH(cpu, &t->online) {
		CacheInfo best = { .id = -1 }, l2 = { .id = -1 };
		TopoCpu *c = &t->cpus[cpu];
		unsigned l1_indexes = 0;
		char dir[96], path[128];

		if (c->llc >= 0 && (c->l2 >= 0 || t->llc_level <= 2))
			continue;

		if (c->llc >= 0 && l2_hint >= 0) {
			unsigned level;

			snprintf(dir, sizeof(dir), CPU_DIR "/cpu%d/cache/index%d", cpu, l2_hint);
			snprintf(path, sizeof(path), "%s/level", dir);
			if (read_unsigned_at(root_fd, path, &level) >= 0 && level == 2 &&
			    read_cache_index(root_fd, t, dir, false, &l2) >= 0) {
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

			snprintf(dir, sizeof(dir), CPU_DIR "/cpu%d/cache/index%u", cpu, idx);
			snprintf(path, sizeof(path), "%s/level", dir);
			r = read_unsigned_at(root_fd, path, &level);
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
				if (read_cache_index(root_fd, t, dir, false, &l2) >= 0) {
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
						r = read_cache_index(root_fd, t, dir, true, &ci);
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
			snprintf(dir, sizeof(dir), CPU_DIR "/cpu%d/cache/index%u", cpu, idx);
			snprintf(path, sizeof(path), "%s/type", dir);
			if (read_line_at(root_fd, path, &type) >= 0 && streq(type, "Instruction"))
				continue;
			if (read_cache_index(root_fd, t, dir, true, &best) >= 0)
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

static int load_distances(int root_fd, Topology *t, const CpuSet *columns)
{
	size_t n = t->nodes.n;
	_cleanup_free_ unsigned *d = NULL;

	d = calloc(n * n, sizeof(unsigned));
	if (!d)
		return -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		_cleanup_strv_free_ char **words = NULL;
		_cleanup_free_ char *line = NULL;
		char path[96];
		int r;

		snprintf(path, sizeof(path), NODE_DIR "/node%d/distance", t->nodes.items[i].id);
		r = read_line_at(root_fd, path, &line);
		if (r < 0)
			return note(t, "/%s: %s, distances unknown", path, strerror(-r));
		r = strv_split(line, WHITESPACE, &words);
		if (r < 0)
			return r;
		/*
		 * A row has one value per online node; nodes without a directory
		 * (an offline node0 in some dumps) still count, so map columns by
		 * node/online (else node/possible) ids when the sizes say so.
		 */
		if (strv_length(words) != n && strv_length(words) != cpuset_count(columns))
			return note(t, "/%s: %zu values for %zu nodes, distances unknown", path,
				    strv_length(words), n);
		for (size_t j = 0; j < n; j++) {
			size_t col = j;
			int id = t->nodes.items[j].id;

			if (strv_length(words) != n) {
				col = 0;
				CPUSET_FOREACH(c, columns) {
					if (c == id)
						break;
					col++;
				}
			}
			if (col >= strv_length(words) || safe_atou_base(words[col], 10, &d[i * n + j]) < 0)
				return note(t, "/%s: bad or missing value for node%d, distances unknown", path, id);
		}
	}
	t->distance = TAKE_PTR(d);
	return 0;
}

static int read_distance_columns(int root_fd, Topology *t, const CpuSet *dirs, CpuSet *ret)
{
	_cleanup_strv_free_ char **words = NULL;
	_cleanup_free_ char *line = NULL;
	char path[96];
	size_t n;

	snprintf(path, sizeof(path), NODE_DIR "/node%d/distance", t->nodes.items[0].id);
	if (read_line_at(root_fd, path, &line) < 0 || strv_split(line, WHITESPACE, &words) < 0)
		return cpuset_copy(ret, dirs);
	n = strv_length(words);
	if (read_cpulist_at(root_fd, NODE_DIR "/online", ret) >= 0 && cpuset_count(ret) == n)
		return 0;
	if (read_cpulist_at(root_fd, NODE_DIR "/possible", ret) >= 0 && cpuset_count(ret) == n)
		return 0;
	return cpuset_copy(ret, dirs);
}

static int load_nodes(int root_fd, Topology *t)
{
	CpuSet ids = {}, columns = {};
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
		char dir[64];
		int g;

		g = group_add(&t->nodes, id);
		if (g < 0)
			goto fail;
		snprintf(dir, sizeof(dir), NODE_DIR "/node%d", id);
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
	/* Which node ids the columns of a distance row stand for: online, else possible. */
	r = read_distance_columns(root_fd, t, &ids, &columns);
	cpuset_done(&ids);
	if (r >= 0)
		r = load_distances(root_fd, t, &columns);
	cpuset_done(&columns);
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
	int r;

	t = calloc(1, sizeof(Topology));
	if (!t)
		return -ENOMEM;

	r = load_cpu_sets(root_fd, t);
	if (r < 0)
		return r;
	r = load_cpu_topology(root_fd, t);
	if (r < 0)
		return r;
	r = load_caches(root_fd, t);
	if (r < 0)
		return r;
	r = load_nodes(root_fd, t);
	if (r < 0)
		return r;
	compute_nodes_per_package(t);

	*ret = TAKE_PTR(t);
	return 0;
}
