/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* In-memory topologies for planner tests (see topo-build.h). */
#include "strutil.h"
#include "topo-build.h"

static int group_new(TopoGroupList *l, int id)
{
	TopoGroup *n = realloc(l->items, (l->n + 1) * sizeof(TopoGroup));

	if (!n)
		return -ENOMEM;
	l->items = n;
	l->items[l->n] = (TopoGroup) { .id = id, .package = -1 };
	return (int)l->n++;
}

int topo_build(const TopoSpec *s, Topology **ret)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	unsigned ncores = s->packages * s->cores_per_package, n = ncores * s->threads;
	unsigned cores_per_node = s->cores_per_package / s->nodes_per_package;
	unsigned cores_per_llc = s->cores_per_llc ?: s->cores_per_package;
	unsigned nn = s->packages * s->nodes_per_package;
	CpuSet off = {};
	int r;

	t = calloc(1, sizeof(Topology));
	if (!t)
		return -ENOMEM;
	t->n_slots = n;
	t->cpus = calloc(n, sizeof(TopoCpu));
	if (!t->cpus)
		return -ENOMEM;
	if (s->offline && cpuset_parse_list(s->offline, &off, NULL) < 0)
		return -EINVAL;

	r = cpuset_add_range(&t->possible, 0, n - 1);
	if (r < 0)
		return r;
	r = cpuset_copy(&t->present, &t->possible);
	if (r >= 0)
		r = cpuset_copy(&t->online, &t->possible);
	if (r >= 0)
		r = cpuset_copy(&t->offline, &off);
	if (r < 0)
		return r;
	cpuset_andnot(&t->online, &off);

	for (unsigned p = 0; p < s->packages; p++)
		if (group_new(&t->packages, (int)p) < 0)
			return -ENOMEM;
	for (unsigned i = 0; i < nn; i++)
		if (group_new(&t->nodes, (int)i) < 0)
			return -ENOMEM;
	for (unsigned i = 0; i < ncores / cores_per_llc; i++)
		if (group_new(&t->llcs, (int)i) < 0)
			return -ENOMEM;
	for (unsigned i = 0; i < ncores; i++)
		if (group_new(&t->cores, (int)(i % s->cores_per_package)) < 0)
			return -ENOMEM;

	for (unsigned cpu = 0; cpu < n; cpu++) {
		unsigned core = cpu % ncores, pkg = core / s->cores_per_package;
		unsigned node = pkg * s->nodes_per_package + (core % s->cores_per_package) / cores_per_node;
		unsigned llc = core / cores_per_llc;
		TopoCpu *c = &t->cpus[cpu];
		bool online = !cpuset_contains(&off, cpu);

		*c = (TopoCpu) {
			.online = online,
			.package_id = (int)pkg, .die_id = -1,
			.core_id = (int)(core % s->cores_per_package), .node_id = (int)node,
			.package = (int)pkg, .die = -1, .core = (int)core, .l2 = -1,
			.llc = (int)llc, .node = (int)node, .kind = -1,
		};
		if (!online) {
			c->package = c->core = c->llc = c->node = -1;
			continue;
		}
		if (cpuset_add(&t->packages.items[pkg].cpus, cpu) < 0 ||
		    cpuset_add(&t->nodes.items[node].cpus, cpu) < 0 ||
		    cpuset_add(&t->llcs.items[llc].cpus, cpu) < 0 ||
		    cpuset_add(&t->cores.items[core].cpus, cpu) < 0)
			return -ENOMEM;
	}
	for (size_t k = 0; k < s->n_kinds; k++) {
		TopoKind *kn = reallocarray(t->kinds.items, k + 1, sizeof(TopoKind));

		if (!kn)
			return -ENOMEM;
		t->kinds.items = kn;
		kn[k] = (TopoKind) { .capacity = s->kinds[k].capacity };
		t->kinds.n = k + 1;
		if (cpuset_parse_list(s->kinds[k].cpus, &kn[k].cpus, NULL) < 0)
			return -EINVAL;
		cpuset_and(&kn[k].cpus, &t->online);
		if (s->kinds[k].core_type) {
			snprintf(kn[k].core_type, sizeof(kn[k].core_type), "%s", s->kinds[k].core_type);
			snprintf(kn[k].key, sizeof(kn[k].key), "%s", s->kinds[k].core_type);
			snprintf(kn[k].name, sizeof(kn[k].name), "Intel %s", streq(s->kinds[k].core_type, "atom") ?
				 "Atom (E-core)" : "Core (P-core)");
		} else {
			snprintf(kn[k].key, sizeof(kn[k].key), "capacity-%u", kn[k].capacity);
			snprintf(kn[k].name, sizeof(kn[k].name), "unidentified");
		}
		CPUSET_FOREACH(cpu, &kn[k].cpus)
			t->cpus[cpu].kind = (int)k;
	}
	t->llc_level = 3;
	t->threads_per_core = s->threads;
	t->nodes_per_package = s->nodes_per_package;
	if (s->no_distance) {
		cpuset_done(&off);
		*ret = TAKE_PTR(t);
		return 0;
	}
	t->distance = calloc(nn * nn, sizeof(unsigned));
	if (!t->distance)
		return -ENOMEM;
	for (unsigned a = 0; a < nn; a++)
		for (unsigned b = 0; b < nn; b++)
			t->distance[a * nn + b] = s->distance ? s->distance[a * nn + b] : a == b ? 10 : 20;
	cpuset_done(&off);
	*ret = TAKE_PTR(t);
	return 0;
}
