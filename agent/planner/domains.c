/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scheduler-domain prediction. Pure: depends on the types of topology,
 * cpuid and kernel only, performs no I/O.
 *
 * The model follows kernel/sched/topology.c:
 *  - topology levels: SMT, CLS, MC, PKG (x86 drops PKG when a package holds
 *    several nodes, arch/x86/kernel/smpboot.c), then NODE and one NUMA level
 *    per further unique sched distance (sched_init_numa());
 *  - a CPU's levels are built bottom-up until one spans the whole cpu_map;
 *    sd->level counts every built level, degenerate ones included;
 *  - sd_init() flags, NUMA levels beyond RECLAIM_DISTANCE lose
 *    EXEC/FORK/WAKE_AFFINE, relax_domain_level clears NEWIDLE|WAKE at
 *    levels >= the request (set_domain_attribute());
 *  - cpu_attach_domain() drops degenerate parents and a degenerate base;
 *  - asym_cpu_capacity_classify(): a domain that spans CPUs of two or more
 *    capacities gets SD_ASYM_CPUCAPACITY, and _FULL as well when it spans
 *    every capacity present in the cpu_map. The capacities are the core
 *    kinds' cpu_capacity; CPUs of unknown capacity take no part.
 */
#include <assert.h>

#include "domains.h"
#include "strutil.h"

#define RECLAIM_DISTANCE 30
#define MAX_LEVELS 64            /* the topology table: SMT CLS MC PKG and the NUMA levels */

enum { TL_SMT, TL_CLS, TL_MC, TL_PKG, TL_NODE, TL_NUMA };

static const char *const tl_names[] = {
	[TL_SMT] = "SMT", [TL_CLS] = "CLS", [TL_MC] = "MC", [TL_PKG] = "PKG", [TL_NODE] = "NODE", [TL_NUMA] = "NUMA",
};

typedef struct TopoLevel {
	int kind;
	unsigned numa_level;     /* index into the distance table */
} TopoLevel;

DomainLayout *domain_layout_free(DomainLayout *l)
{
	if (!l)
		return NULL;
	free(l->domains);
	free(l->cpus);
	for (size_t i = 0; i < l->n_spans; i++) {
		cpuset_done(&l->spans[i]->cpus);
		free(l->spans[i]);
	}
	free(l->spans);
	free(l->numa_distances);
	strv_free(l->warnings);
	free(l);
	return NULL;
}

static bool is_x86(const CpuIdentity *id)
{
	return id && streq(id->arch, "x86");
}

static bool averaging_applies(const Topology *t, const CpuIdentity *id, const KernelCaps *caps)
{
	if (!id || !id->have_family || t->packages.n == 1 || t->nodes_per_package < 3)
		return false;
	if (id->vendor == CPU_VENDOR_INTEL && id->family == 6 && (id->model == 0xad || id->model == 0xdd))
		return caps->numa_averaging_intel;       /* GNR-X, CWF-X: stock kernels */
	if (id->vendor == CPU_VENDOR_HYGON && id->family == 0x18 && id->model == 7)
		return caps->numa_averaging_hygon;       /* topotune's series */
	return false;
}

static int node_package(const Topology *t, size_t node)
{
	int pkg = -1;

	CPUSET_FOREACH(cpu, &t->nodes.items[node].cpus) {
		if (pkg < 0)
			pkg = t->cpus[cpu].package;
		else if (pkg != t->cpus[cpu].package)
			return -1;
	}
	return pkg;
}

/* slit_validate(): on-trace clusters symmetric, one package each, distinct. */
static bool slit_valid(const Topology *t)
{
	size_t u = t->nodes_per_package;
	int prev = -1;

	if (!t->distance || u == 0 || t->nodes.n % u != 0)
		return false;
	for (size_t n = 0; n < t->nodes.n; n += u) {
		int pkg = -1;

		for (size_t k = 0; k < u; k++)
			for (size_t l = k; l < u; l++)
				if (topology_distance(t, n + k, n + l) != topology_distance(t, n + l, n + k))
					return false;
		for (size_t k = 0; k < u; k++) {
			int p = node_package(t, n + k);

			if (p < 0 || (pkg >= 0 && p != pkg))
				return false;
			pkg = p;
		}
		if (n > 0 && pkg == prev)
			return false;
		prev = pkg;
	}
	return true;
}

unsigned domains_sched_distance(const Topology *t, const CpuIdentity *id, const KernelCaps *caps, size_t a,
				size_t b, bool *ret_averaged)
{
	size_t u = t->nodes_per_package, x, y;
	unsigned long d = 0;

	if (ret_averaged)
		*ret_averaged = false;
	if (!t->distance)
		return a == b ? DOMAINS_LOCAL_DISTANCE : DOMAINS_REMOTE_DISTANCE;
	if (!averaging_applies(t, id, caps) || a / u == b / u || !slit_valid(t))
		return topology_distance(t, a, b);

	x = a - a % u;
	y = b - b % u;
	for (size_t i = x; i < x + u; i++)
		for (size_t j = y; j < y + u; j++)
			d += topology_distance(t, i, j) + topology_distance(t, j, i);
	if (ret_averaged)
		*ret_averaged = true;
	return (unsigned)(d / (2 * u * u));
}

static int add_unique(unsigned **v, size_t *n, unsigned d)
{
	unsigned *nv;
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*v)[i] == d)
			return 0;
	nv = realloc(*v, (*n + 1) * sizeof(unsigned));
	if (!nv)
		return -ENOMEM;
	/* insertion keeps the table sorted */
	for (i = *n; i > 0 && nv[i - 1] > d; i--)
		nv[i] = nv[i - 1];
	nv[i] = d;
	*v = nv;
	(*n)++;
	return 0;
}

/*
 * Spans are interned twice over. By content: a layout keeps each distinct
 * span once (DomainLayout.spans), found by cpuset_hash(). By origin: the
 * mask a level gives a CPU depends only on the CPU's core, cache, node or
 * package there, so it is made once per such group, not once per CPU, and
 * the span that also covers the level below once per pair of spans. Made
 * per CPU, as the kernel does, the prediction cost CPUs x levels bitmaps of
 * CPUs/64 words each.
 */
typedef struct SpanKey {
	int a, b, c, d;
} SpanKey;

typedef struct SpanMemo {
	struct {
		SpanKey key;
		DomainSpan *span;        /* NULL: an empty slot */
	} *slot;
	size_t cap, n;
} SpanMemo;

typedef struct SpanTable {
	DomainSpan **slot;
	size_t cap;
} SpanTable;

typedef struct Ctx {
	const DomainInput *in;
	const Topology *t;
	CpuSet *capacity_spans;   /* the kernel's asym_cap_list: CPUs per distinct capacity */
	size_t n_capacities;
	unsigned *dist;           /* nodes.n^2 sched distances */
	unsigned map_weight;      /* cpuset_count(in->cpu_map) */
	SpanMemo memo;            /* origin -> span */
	SpanTable table;          /* content -> span */
	TopoLevel tl[MAX_LEVELS];
	size_t n_tl;
	DomainLayout *l;
} Ctx;

static uint64_t span_key_hash(const SpanKey *k)
{
	const int v[] = { k->a, k->b, k->c, k->d };
	uint64_t h = UINT64_C(1469598103934665603);

	for (size_t i = 0; i < ELEMENTSOF(v); i++)
		h = (h ^ (uint32_t)v[i]) * UINT64_C(1099511628211);
	return h ^ (h >> 32);
}

static bool span_key_equal(const SpanKey *x, const SpanKey *y)
{
	return x->a == y->a && x->b == y->b && x->c == y->c && x->d == y->d;
}

static DomainSpan *span_memo_get(const SpanMemo *m, const SpanKey *k)
{
	if (m->cap == 0)
		return NULL;
	for (size_t i = span_key_hash(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slot[i].span)
			return NULL;
		if (span_key_equal(&m->slot[i].key, k))
			return m->slot[i].span;
	}
}

/* Into a free slot: @m has room, and @k is not in it. */
static void span_memo_insert(SpanMemo *m, const SpanKey *k, DomainSpan *span)
{
	size_t i;

	for (i = span_key_hash(k) & (m->cap - 1); m->slot[i].span; i = (i + 1) & (m->cap - 1))
		;
	m->slot[i].key = *k;
	m->slot[i].span = span;
	m->n++;
}

static int span_memo_put(SpanMemo *m, const SpanKey *k, DomainSpan *span)
{
	if (2 * (m->n + 1) > m->cap) {
		SpanMemo g = { .cap = m->cap ? 2 * m->cap : 64 };

		g.slot = calloc(g.cap, sizeof(*g.slot));
		if (!g.slot)
			return -ENOMEM;
		for (size_t j = 0; j < m->cap; j++)
			if (m->slot[j].span)
				span_memo_insert(&g, &m->slot[j].key, m->slot[j].span);
		free(m->slot);
		*m = g;
	}
	span_memo_insert(m, k, span);
	return 0;
}

static void span_table_insert(SpanTable *t, DomainSpan *span, uint64_t hash)
{
	size_t i;

	for (i = hash & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		;
	t->slot[i] = span;
}

/* The layout's span equal to @set, added if new. Consumes @set. */
static int span_intern(Ctx *c, CpuSet *set, DomainSpan **ret)
{
	DomainLayout *l = c->l;
	SpanTable *t = &c->table;
	uint64_t h = cpuset_hash(set);
	DomainSpan *s, **v;

	for (size_t i = t->cap ? h & (t->cap - 1) : 0; t->cap && t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (cpuset_equal(&t->slot[i]->cpus, set)) {
			cpuset_done(set);
			*ret = t->slot[i];
			return 0;
		}
	if (2 * (l->n_spans + 1) > t->cap) {
		SpanTable g = { .cap = t->cap ? 2 * t->cap : 64 };

		g.slot = calloc(g.cap, sizeof(*g.slot));
		if (!g.slot)
			return -ENOMEM;
		for (size_t i = 0; i < l->n_spans; i++)
			span_table_insert(&g, l->spans[i], cpuset_hash(&l->spans[i]->cpus));
		free(t->slot);
		*t = g;
	}
	v = reallocarray(l->spans, l->n_spans + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->spans = v;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cpus = *set;
	*set = (CpuSet) {};
	s->weight = cpuset_count(&s->cpus);
	s->id = (unsigned)l->n_spans;
	l->spans[l->n_spans++] = s;
	span_table_insert(t, s, h);
	*ret = s;
	return 0;
}

/* Union of the CPUs of nodes within @max sched distance of @node. */
static int numa_mask(Ctx *c, size_t node, unsigned max, CpuSet *ret)
{
	for (size_t m = 0; m < c->t->nodes.n; m++)
		if (c->dist[node * c->t->nodes.n + m] <= max) {
			int r = cpuset_or(ret, &c->t->nodes.items[m].cpus);

			if (r < 0)
				return r;
		}
	return 0;
}

static int level_mask(Ctx *c, const TopoLevel *tl, unsigned cpu, CpuSet *ret)
{
	const Topology *t = c->t;
	const TopoCpu *tc = &t->cpus[cpu];
	int r = 0;

	switch (tl->kind) {
	case TL_SMT:
		if (tc->core >= 0)
			return cpuset_copy(ret, &t->cores.items[tc->core].cpus);
		return cpuset_add(ret, cpu);
	case TL_CLS:
		if (tc->l2 >= 0)
			return cpuset_copy(ret, &t->l2s.items[tc->l2].cpus);
		if (tc->core >= 0)
			return cpuset_copy(ret, &t->cores.items[tc->core].cpus);
		return cpuset_add(ret, cpu);
	case TL_MC:
		/* llc_shared_mask; on SNC the kernel does not share it across nodes. */
		if (tc->llc >= 0) {
			r = cpuset_copy(ret, &t->llcs.items[tc->llc].cpus);
			if (r >= 0 && tc->node >= 0)
				cpuset_and(ret, &t->nodes.items[tc->node].cpus);
			return r;
		}
		if (tc->node >= 0)
			return cpuset_copy(ret, &t->nodes.items[tc->node].cpus);
		return cpuset_add(ret, cpu);
	case TL_PKG:
		/* x86 uses cpu_cpu_mask(): the CPU's node. */
		if (tc->node >= 0 && is_x86(c->in->identity))
			return cpuset_copy(ret, &t->nodes.items[tc->node].cpus);
		if (tc->package >= 0)
			return cpuset_copy(ret, &t->packages.items[tc->package].cpus);
		return cpuset_add(ret, cpu);
	case TL_NODE:
	case TL_NUMA:
		if (tc->node < 0)
			return cpuset_add(ret, cpu);
		return numa_mask(c, (size_t)tc->node, c->l->numa_distances[tl->numa_level], ret);
	}
	return -EINVAL;
}

/* What level_mask() depends on: equal keys, equal masks. */
static SpanKey level_key(const Ctx *c, size_t i, unsigned cpu)
{
	const TopoCpu *tc = &c->t->cpus[cpu];
	int lvl = (int)i, self = -1 - (int)cpu;

	switch (c->tl[i].kind) {
	case TL_SMT:
		return (SpanKey) { lvl, 0, tc->core >= 0 ? tc->core : self, 0 };
	case TL_CLS:
		if (tc->l2 >= 0)
			return (SpanKey) { lvl, 0, tc->l2, 0 };
		return (SpanKey) { lvl, 1, tc->core >= 0 ? tc->core : self, 0 };
	case TL_MC:
		if (tc->llc >= 0)
			return (SpanKey) { lvl, 0, tc->llc, tc->node };
		return (SpanKey) { lvl, 1, tc->node >= 0 ? tc->node : self, 0 };
	case TL_PKG:
		if (tc->node >= 0 && is_x86(c->in->identity))
			return (SpanKey) { lvl, 0, tc->node, 0 };
		return (SpanKey) { lvl, 1, tc->package >= 0 ? tc->package : self, 0 };
	default:
		return (SpanKey) { lvl, 0, tc->node >= 0 ? tc->node : self, 0 };
	}
}

/* The span of level @i of @cpu: its level's mask within the cpu_map. */
static int level_span(Ctx *c, size_t i, unsigned cpu, DomainSpan **ret)
{
	SpanKey k = level_key(c, i, cpu);
	CpuSet set = {};
	DomainSpan *s;
	int r;

	s = span_memo_get(&c->memo, &k);
	if (s) {
		*ret = s;
		return 0;
	}
	r = level_mask(c, &c->tl[i], cpu, &set);
	if (r >= 0) {
		cpuset_and(&set, c->in->cpu_map);
		r = span_intern(c, &set, &s);
	}
	cpuset_done(&set);
	if (r >= 0)
		r = span_memo_put(&c->memo, &k, s);
	if (r < 0)
		return r;
	*ret = s;
	return 0;
}

/*
 * build_sched_domain(): a level that does not cover the one below is made
 * to ("BUG: arch topology borken"). Known per pair of spans.
 */
static int level_span_over(Ctx *c, DomainSpan *s, const DomainSpan *child, DomainSpan **ret)
{
	SpanKey k = { -1, (int)s->id, (int)child->id, 0 };
	CpuSet set = {};
	DomainSpan *u;
	int r;

	if (s == child) {
		*ret = s;
		return 0;
	}
	u = span_memo_get(&c->memo, &k);
	if (u) {
		*ret = u;
		return 0;
	}
	if (cpuset_is_subset(&child->cpus, &s->cpus))
		u = s;
	else {
		if (!strv_contains(c->l->warnings, "BUG: arch topology borken"))
			(void)strv_extend(&c->l->warnings, "BUG: arch topology borken");
		r = cpuset_copy(&set, &s->cpus);
		if (r >= 0)
			r = cpuset_or(&set, &child->cpus);
		if (r >= 0)
			r = span_intern(c, &set, &u);
		cpuset_done(&set);
		if (r < 0)
			return r;
	}
	r = span_memo_put(&c->memo, &k, u);
	if (r < 0)
		return r;
	*ret = u;
	return 0;
}

static unsigned level_flags(Ctx *c, const TopoLevel *tl, int level)
{
	unsigned f = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING;
	int relax = c->in->relax_level;

	switch (tl->kind) {
	case TL_SMT:
		f |= SD_SHARE_CPUCAPACITY | SD_SHARE_LLC;
		break;
	case TL_CLS:
		f |= SD_CLUSTER | SD_SHARE_LLC;
		break;
	case TL_MC:
		f |= SD_SHARE_LLC;
		break;
	case TL_NUMA:
		f &= ~SD_PREFER_SIBLING;
		f |= SD_NUMA | SD_SERIALIZE;
		if (c->l->numa_distances[tl->numa_level] > RECLAIM_DISTANCE)
			f &= ~(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
		break;
	}
	if (relax >= 0 && level >= relax)
		f &= ~(SD_BALANCE_WAKE | SD_BALANCE_NEWIDLE);
	return f;
}

/* asym_cpu_capacity_classify() */
static unsigned asym_capacity_flags(const Ctx *c, const DomainSpan *span)
{
	unsigned count = 0, miss = 0;

	for (size_t i = 0; i < c->n_capacities; i++) {
		if (cpuset_intersects(&span->cpus, &c->capacity_spans[i]))
			count++;
		else if (cpuset_intersects(c->in->cpu_map, &c->capacity_spans[i]))
			miss++;
	}
	if (count < 2)
		return 0;
	return miss ? SD_ASYM_CPUCAPACITY : SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL;
}

/* asym_cpu_capacity_scan(): the CPUs of each distinct capacity; none when there is only one. */
static int capacity_spans(Ctx *c)
{
	const TopoKindList *k = &c->t->kinds;
	_cleanup_free_ unsigned *caps = NULL;
	bool unknown = false;

	c->capacity_spans = calloc(k->n ?: 1, sizeof(CpuSet));
	caps = calloc(k->n ?: 1, sizeof(unsigned));
	if (!c->capacity_spans || !caps)
		return -ENOMEM;
	for (size_t i = 0; i < k->n; i++) {
		size_t j;
		int r;

		if (!k->items[i].capacity) {
			unknown = true;
			continue;
		}
		/* Kinds of one capacity (A710 and A715 at 855) are one entry. */
		for (j = 0; j < c->n_capacities; j++)
			if (caps[j] == k->items[i].capacity)
				break;
		if (j == c->n_capacities)
			caps[c->n_capacities++] = k->items[i].capacity;
		r = cpuset_or(&c->capacity_spans[j], &k->items[i].cpus);
		if (r < 0)
			return r;
	}
	c->l->capacities_unknown = unknown && c->n_capacities == 0 && topology_heterogeneous(c->t);
	if (c->n_capacities == 1)
		c->n_capacities = 0;
	return 0;
}

/* A CPU's levels as built, degenerate ones included: n_tl slots of one block for all CPUs. */
typedef struct Built {
	SchedDomain *sd;
	size_t n;
} Built;

static int build_cpu(Ctx *c, unsigned cpu, Built *b)
{
	for (size_t i = 0; i < c->n_tl; i++) {
		SchedDomain *sd = &b->sd[b->n];
		DomainSpan *s;
		int r;

		r = level_span(c, i, cpu, &s);
		if (r >= 0 && i > 0)
			r = level_span_over(c, s, b->sd[i - 1].span, &s);
		if (r < 0)
			return r;
		b->n++;
		sd->span = s;
		sd->level = (int)i;
		sd->name = tl_names[c->tl[i].kind];
		sd->flags = level_flags(c, &c->tl[i], sd->level) | asym_capacity_flags(c, s);
		if (c->tl[i].kind == TL_NODE || c->tl[i].kind == TL_NUMA)
			sd->distance = c->l->numa_distances[c->tl[i].numa_level];
		/* Spans lie within the cpu_map: as many CPUs is the same CPUs. */
		if (s->weight == c->map_weight)
			break;
	}
	return 0;
}

/* The kernel's sd_degenerate(): @child_span is the span of the level built below, or NULL. */
static bool domain_degenerate(const SchedDomain *sd, const DomainSpan *child_span)
{
	bool many_groups;

	if (sd->span->weight == 1)
		return true;
	many_groups = child_span ? child_span != sd->span : true;
	if ((sd->flags & SD_DEGENERATE_GROUPS_MASK) && many_groups)
		return false;
	if (sd->flags & SD_WAKE_AFFINE)
		return false;
	return true;
}

static bool domain_parent_degenerate(const SchedDomain *sd, const SchedDomain *parent,
				     const DomainSpan *parent_child_span)
{
	unsigned pflags = parent->flags;

	if (domain_degenerate(parent, parent_child_span))
		return true;
	if (sd->span != parent->span)
		return false;
	/* Same span: the parent has a single group. */
	pflags &= ~SD_DEGENERATE_GROUPS_MASK;
	return !(~sd->flags & pflags);
}

/* cpu_attach_domain(): keep what is not degenerate, in place: @b's first b->n then. */
static void attach_cpu(Built *b)
{
	size_t idx[MAX_LEVELS], n = b->n;
	size_t t = 0;

	assert(n <= ELEMENTSOF(idx));
	for (size_t i = 0; i < n; i++)
		idx[i] = i;

	while (t + 1 < n) {
		SchedDomain *child = &b->sd[idx[t]], *parent = &b->sd[idx[t + 1]];

		if (domain_parent_degenerate(child, parent, b->sd[idx[t + 1] - 1].span)) {
			if (parent->flags & SD_PREFER_SIBLING)
				child->flags |= SD_PREFER_SIBLING;
			memmove(idx + t + 1, idx + t + 2, (n - t - 2) * sizeof(size_t));
			n--;
		} else
			t++;
	}
	if (n > 0 && domain_degenerate(&b->sd[idx[0]], idx[0] > 0 ? b->sd[idx[0] - 1].span : NULL)) {
		memmove(idx, idx + 1, (n - 1) * sizeof(size_t));
		n--;
	}

	/* idx[i] >= i: moving down in order overwrites only what was read. */
	for (size_t i = 0; i < n; i++)
		b->sd[i] = b->sd[idx[i]];
	b->n = n;
}

/*
 * The attached domains of every CPU, in one block: per CPU, the levels as
 * built and the domains kept were each an allocation, interleaved with the
 * spans that stay, and freeing the first left the heap in holes.
 */
static int attach_all(Ctx *c, Built *all, const CpuSet *map)
{
	DomainLayout *l = c->l;
	size_t total = 0, k = 0;

	CPUSET_FOREACH(cpu, map) {
		attach_cpu(&all[cpu]);
		total += all[cpu].n;
	}
	l->domains = calloc(total ?: 1, sizeof(SchedDomain));
	if (!l->domains)
		return -ENOMEM;
	CPUSET_FOREACH(cpu, map) {
		if (all[cpu].n == 0)
			continue;
		memcpy(&l->domains[k], all[cpu].sd, all[cpu].n * sizeof(SchedDomain));
		l->cpus[cpu] = (CpuDomains) { .sd = &l->domains[k], .n = all[cpu].n };
		k += all[cpu].n;
	}
	return 0;
}

/*
 * build_overlap_sched_groups() and the sched_verbose check after it. The
 * groups of an overlapping NUMA domain of @cpu come from its members' own
 * domains at that level, visited from @cpu on (wrapping) and skipping what
 * is covered; a member whose build stopped lower (an asymmetric SLIT lets
 * some nodes reach the whole machine sooner) has no domain there and adds
 * nothing, so CPUs can stay uncovered: "groups don't span domain->span".
 */
/* The group find_descended_sibling() makes of member @o at level @i of a domain spanning @span. */
static const CpuSet *sibling_group(const Built *o, size_t i, const CpuSet *span)
{
	size_t k = i;

	if (!cpuset_is_subset(&o->sd[k - 1].span->cpus, span)) {
		while (k > 0 && !cpuset_is_subset(&o->sd[k - 1].span->cpus, span))
			k--;
		while (k > 0 && o->sd[k - 1].span == o->sd[k].span)
			k--;
	}
	return k > 0 ? &o->sd[k - 1].span->cpus : &o->sd[k].span->cpus;
}

/*
 * Spans whose groups cover them whatever CPU the walk starts from: each
 * member reaches level @i and its group (which holds it) lies within the
 * span, so every member is covered by its own group or an earlier one and
 * nothing else is. Most spans are such; each distinct span is judged once
 * per level, not once per CPU.
 */
enum { VERDICT_UNKNOWN, VERDICT_COVERED, VERDICT_MAYBE };

static bool span_surely_covered(const Built *all, size_t i, const DomainSpan *span)
{
	CPUSET_FOREACH(m, &span->cpus) {
		const Built *o = &all[m];

		if (o->n <= i || !cpuset_contains(&o->sd[i].span->cpus, (unsigned)m) ||
		    !cpuset_is_subset(sibling_group(o, i, &span->cpus), &span->cpus))
			return false;
	}
	return true;
}

static int check_overlap_groups(Ctx *c, Built *all, CpuSet *cpu_map)
{
	CpuSet bad[ELEMENTSOF(c->tl)] = {};   /* per level: CPUs whose groups miss some */
	_cleanup_free_ uint8_t *verdict = NULL;  /* [level * n_spans + span id] */
	size_t ns = c->l->n_spans;
	int r = 0;

	verdict = calloc(c->n_tl * ns ?: 1, 1);
	if (!verdict)
		return -ENOMEM;

	CPUSET_FOREACH(cpu, cpu_map) {
		Built *b = &all[cpu];

		for (size_t i = 1; i < b->n; i++) {
			const SchedDomain *sd = &b->sd[i];
			uint8_t *v = &verdict[i * ns + sd->span->id];
			CpuSet covered = {}, todo = {};
			const CpuSet *span = &sd->span->cpus;
			bool wrapped = false;
			int m;

			if (!(sd->flags & SD_NUMA))
				continue;
			if (*v == VERDICT_UNKNOWN)
				*v = span_surely_covered(all, i, sd->span) ? VERDICT_COVERED : VERDICT_MAYBE;
			if (*v == VERDICT_COVERED)
				continue;
			/*
			 * One turn over the span from @cpu on, as the kernel's
			 * for_each_cpu_wrap(): a member that a group already
			 * covers adds nothing, so the turn goes from one
			 * uncovered member to the next (@todo), a step per
			 * group rather than per CPU. Stepping CPU by CPU made
			 * this O(CPUs^2) per NUMA level: 68 ms at 2,048 CPUs.
			 */
			r = cpuset_copy(&todo, span);
			for (m = r >= 0 ? cpuset_next(&todo, (unsigned)cpu) : -1; r >= 0;
			     m = cpuset_next(&todo, (unsigned)m + 1)) {
				const CpuSet *g;
				Built *o;

				if (m < 0 && !wrapped) {
					wrapped = true;
					m = cpuset_first(&todo);
				}
				if (m < 0 || (wrapped && m >= cpu))
					break;
				o = &all[m];
				if (o->n <= i || !cpuset_contains(&o->sd[i].span->cpus, (unsigned)m))
					continue;
				g = sibling_group(o, i, span);
				r = cpuset_or(&covered, g);
				cpuset_andnot(&todo, g);
			}
			if (r >= 0 && !cpuset_equal(&covered, span))
				r = cpuset_add(&bad[i], (unsigned)cpu);
			cpuset_done(&covered);
			cpuset_done(&todo);
			if (r < 0)
				goto out;
		}
	}
	for (size_t i = 0; i < c->n_tl && r >= 0; i++) {
		_cleanup_free_ char *cpus = NULL;
		char *msg;

		if (cpuset_is_empty(&bad[i]))
			continue;
		r = cpuset_format_list(&bad[i], &cpus);
		if (r < 0)
			break;
		msg = strprintf("ERROR: groups don't span domain->span (level %zu %s, CPUs %s)", i,
				c->tl[i].kind == TL_NODE ? "NODE" : "NUMA", cpus);
		r = msg ? strv_push(&c->l->warnings, msg) : -ENOMEM;
	}
out:
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		cpuset_done(&bad[i]);
	return r;
}

/*
 * Newidle balancing runs where SD_BALANCE_NEWIDLE survived
 * relax_domain_level. (The series' v4 also stopped it above the LLC while
 * SMT_BUDDY_ASSIST was on; v5 dropped that for relax_domain_level.)
 */
static void mark_newidle_layout(DomainLayout *l)
{
	for (unsigned cpu = 0; cpu < l->n_slots; cpu++) {
		CpuDomains *d = &l->cpus[cpu];

		for (size_t i = 0; i < d->n; i++)
			d->sd[i].newidle = d->sd[i].flags & SD_BALANCE_NEWIDLE;
	}
}

int domains_predict(const DomainInput *in, DomainLayout **ret)
{
	_cleanup_(domain_layout_freep) DomainLayout *l = NULL;
	const Topology *t = in->topology;
	_cleanup_free_ unsigned *dist = NULL;
	Built *all = NULL;
	SchedDomain *built = NULL;
	size_t nn = t->nodes.n;
	CpuSet map = {};
	Ctx c = { .in = in, .t = t };
	int r;

	l = calloc(1, sizeof(DomainLayout));
	if (!l)
		return -ENOMEM;
	l->n_slots = t->n_slots;
	l->cpus = calloc(t->n_slots ?: 1, sizeof(CpuDomains));
	if (!l->cpus)
		return -ENOMEM;
	c.l = l;

	/* sched_init_numa(): unique distances among nodes that have CPUs or memory. */
	dist = calloc(nn * nn ?: 1, sizeof(unsigned));
	if (!dist)
		return -ENOMEM;
	for (size_t a = 0; a < nn; a++)
		for (size_t b = 0; b < nn; b++) {
			bool avg;

			dist[a * nn + b] = domains_sched_distance(t, in->identity, in->caps, a, b, &avg);
			l->averaged |= avg;
			r = add_unique(&l->numa_distances, &l->n_numa_distances, dist[a * nn + b]);
			if (r < 0)
				return r;
		}
	c.dist = dist;
	c.map_weight = cpuset_count(in->cpu_map);
	r = capacity_spans(&c);
	if (r < 0)
		goto out_caps;
	/* A kernel without NUMA (no node directory) has no distances to know. */
	l->distances_assumed = !t->distance && !t->nodes_synthetic;

	/* The topology table. */
	c.tl[c.n_tl++] = (TopoLevel) { TL_SMT, 0 };
	c.tl[c.n_tl++] = (TopoLevel) { TL_CLS, 0 };
	c.tl[c.n_tl++] = (TopoLevel) { TL_MC, 0 };
	if (!(is_x86(in->identity) && t->nodes_per_package > 1))
		c.tl[c.n_tl++] = (TopoLevel) { TL_PKG, 0 };
	for (size_t j = 0; j < l->n_numa_distances && c.n_tl < ELEMENTSOF(c.tl); j++)
		c.tl[c.n_tl++] = (TopoLevel) { j == 0 ? TL_NODE : TL_NUMA, (unsigned)j };

	r = cpuset_copy(&map, in->cpu_map);
	if (r < 0)
		goto out_caps;
	cpuset_and(&map, &t->online);

	all = calloc(t->n_slots ?: 1, sizeof(Built));
	built = calloc((size_t)t->n_slots * c.n_tl ?: 1, sizeof(SchedDomain));
	if (!all || !built) {
		r = -ENOMEM;
		goto out;
	}
	CPUSET_FOREACH(cpu, &map) {
		all[cpu].sd = &built[(size_t)cpu * c.n_tl];
		r = build_cpu(&c, (unsigned)cpu, &all[cpu]);
		if (r < 0)
			goto out;
	}
	r = check_overlap_groups(&c, all, &map);
	if (r < 0)
		goto out;
	r = attach_all(&c, all, &map);
	if (r < 0)
		goto out;
	mark_newidle_layout(l);
	*ret = TAKE_PTR(l);
	r = 0;
out:
	free(built);
	free(all);
	cpuset_done(&map);
out_caps:
	for (size_t i = 0; c.capacity_spans && i < t->kinds.n; i++)
		cpuset_done(&c.capacity_spans[i]);
	free(c.capacity_spans);
	free(c.memo.slot);
	free(c.table.slot);
	return r;
}

void domain_layout_relax(DomainLayout *l, int relax)
{
	assert(l);

	for (unsigned cpu = 0; cpu < l->n_slots; cpu++)
		for (size_t i = 0; i < l->cpus[cpu].n; i++) {
			SchedDomain *sd = &l->cpus[cpu].sd[i];

			sd->flags &= ~SD_BALANCE_WAKE;
			if (relax >= 0 && sd->level >= relax)
				sd->flags &= ~SD_BALANCE_NEWIDLE;
			else
				sd->flags |= SD_BALANCE_NEWIDLE;
		}
	mark_newidle_layout(l);
}

int domain_flags_to_string(unsigned flags, char **ret)
{
	assert(ret);

	static const char *const names[] = {
		"BALANCE_NEWIDLE", "BALANCE_EXEC", "BALANCE_FORK", "BALANCE_WAKE", "WAKE_AFFINE",
		"ASYM_CPUCAPACITY", "ASYM_CPUCAPACITY_FULL", "SHARE_CPUCAPACITY", "CLUSTER", "SHARE_LLC",
		"SERIALIZE", "ASYM_PACKING", "PREFER_SIBLING", "NUMA",
	};
	StrBuf b = {};

	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (flags & (1U << i))
			strbuf_appendf(&b, "%s%s", b.len ? " " : "", names[i]);
	return strbuf_steal(&b, ret);
}

int domain_layout_first_cross_node_level(const DomainLayout *l, const Topology *t)
{
	/* Per span: 1 within the node of the CPU asked first, 2 beyond it. */
	_cleanup_free_ uint8_t *within = calloc(l->n_spans ?: 1, 1);
	int best = -1;

	assert(l);
	assert(t);

	for (unsigned cpu = 0; cpu < l->n_slots; cpu++) {
		int node = t->cpus[cpu].node;

		if (node < 0)
			continue;
		for (size_t i = 0; i < l->cpus[cpu].n; i++) {
			const SchedDomain *sd = &l->cpus[cpu].sd[i];
			bool beyond;

			/*
			 * A span holds its CPU, so it lies within a node only
			 * if within that CPU's: the answer is the span's.
			 */
			if (within && within[sd->span->id])
				beyond = within[sd->span->id] == 2;
			else {
				beyond = !cpuset_is_subset(&sd->span->cpus, &t->nodes.items[node].cpus);
				if (within)
					within[sd->span->id] = beyond ? 2 : 1;
			}
			if (beyond) {
				if (best < 0 || sd->level < best)
					best = sd->level;
				break;
			}
		}
	}
	return best;
}

typedef struct LevelSummary {
	int level;
	const char *name;
	unsigned min_cpus, max_cpus;
} LevelSummary;

int domain_layout_format(const DomainLayout *l, unsigned cpu, char **ret)
{
	LevelSummary sum[64] = {};
	size_t n_sum = 0;
	StrBuf b = {};

	assert(ret);

	if (cpu >= l->n_slots || l->cpus[cpu].n == 0)
		strbuf_appendf(&b, "cpu%u: no scheduler domains (isolated, offline or alone)\n", cpu);
	else {
		strbuf_appendf(&b, "cpu%u:\n", cpu);
		for (size_t i = 0; i < l->cpus[cpu].n; i++) {
			const SchedDomain *sd = &l->cpus[cpu].sd[i];
			_cleanup_free_ char *span = NULL;

			if (cpuset_format_list(&sd->span->cpus, &span) < 0)
				return -ENOMEM;
			strbuf_appendf(&b, "  %d %-4s %4u cpus  %-28s newidle=%s", sd->level, sd->name,
				       sd->span->weight, span, sd->newidle ? "yes" : "no");
			if (sd->distance)
				strbuf_appendf(&b, " distance=%u%s", sd->distance,
					       l->distances_assumed ? " (assumed)" : "");
			if (sd->flags & SD_ASYM_CPUCAPACITY)
				strbuf_appendf(&b, " asym-capacity=%s",
					       sd->flags & SD_ASYM_CPUCAPACITY_FULL ? "full" : "partial");
			strbuf_append(&b, "\n");
		}
	}

	/* Per level over all CPUs: the range of span sizes. */
	for (unsigned c = 0; c < l->n_slots; c++)
		for (size_t i = 0; i < l->cpus[c].n; i++) {
			const SchedDomain *sd = &l->cpus[c].sd[i];
			unsigned w = sd->span->weight;
			size_t k;

			for (k = 0; k < n_sum; k++)
				if (sum[k].level == sd->level)
					break;
			if (k == n_sum) {
				if (n_sum == ELEMENTSOF(sum))
					continue;
				sum[n_sum++] = (LevelSummary) { sd->level, sd->name, w, w };
			}
			sum[k].min_cpus = MIN(sum[k].min_cpus, w);
			sum[k].max_cpus = MAX(sum[k].max_cpus, w);
		}
	/* sort by level */
	for (size_t i = 1; i < n_sum; i++)
		for (size_t j = i; j > 0 && sum[j - 1].level > sum[j].level; j--) {
			LevelSummary tmp = sum[j];

			sum[j] = sum[j - 1];
			sum[j - 1] = tmp;
		}
	strbuf_append(&b, "levels:");
	for (size_t i = 0; i < n_sum; i++) {
		if (sum[i].min_cpus == sum[i].max_cpus)
			strbuf_appendf(&b, " %d:%s(%u cpus)", sum[i].level, sum[i].name, sum[i].min_cpus);
		else
			strbuf_appendf(&b, " %d:%s(%u-%u cpus)", sum[i].level, sum[i].name, sum[i].min_cpus,
				       sum[i].max_cpus);
	}
	strbuf_append(&b, "\n");
	if (l->n_numa_distances > 0) {
		strbuf_append(&b, "sched distances:");
		for (size_t i = 0; i < l->n_numa_distances; i++)
			strbuf_appendf(&b, " %u", l->numa_distances[i]);
		strbuf_appendf(&b, "%s%s\n", l->averaged ? " (off-package distances averaged)" : "",
			       l->distances_assumed ? " (assumed)" : "");
	}
	if (l->distances_assumed)
		strbuf_append(&b, DOMAINS_ASSUMED_DISTANCES_TEXT "\n");
	if (l->capacities_unknown)
		strbuf_append(&b, DOMAINS_CAPACITIES_UNKNOWN_TEXT "\n");
	STRV_FOREACH(w, l->warnings)
		strbuf_appendf(&b, "kernel would log: %s\n", *w);
	return strbuf_steal(&b, ret);
}
