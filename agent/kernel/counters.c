/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel counters for metrics: /proc/schedstat's per-domain load-balance
 * counters summed per domain, /proc/sched_smt_buddy_stat summed over CPUs.
 * Depends on basic; reads through the root fd only.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "fileio.h"
#include "prom.h"

void kernel_counters_done(KernelCounters *c)
{
	if (!c)
		return;
	free(c->domains);
	free(c->cpu_domains);
	free(c->smt_buddy_per_cpu);
	free(c->softirqs_per_cpu);
	*c = (KernelCounters) {};
}

KernelCounters *kernel_counters_free(KernelCounters *c)
{
	if (!c)
		return NULL;
	kernel_counters_done(c);
	free(c);
	return NULL;
}

static CpuCounters *cpu_counters_add(CpuCounters **a, size_t *n, unsigned cpu)
{
	CpuCounters *p = reallocarray(*a, *n + 1, sizeof(CpuCounters));

	if (!p)
		return NULL;
	*a = p;
	p = &p[(*n)++];
	*p = (CpuCounters) { .cpu = cpu };
	return p;
}

static int parse_u64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

static DomainCounters *domain_get(KernelCounters *c, unsigned index, const char *name)
{
	DomainCounters *d;

	for (size_t i = 0; i < c->n_domains; i++)
		if (c->domains[i].index == index && streq(c->domains[i].name, name))
			return &c->domains[i];
	d = reallocarray(c->domains, c->n_domains + 1, sizeof(DomainCounters));
	if (!d)
		return NULL;
	c->domains = d;
	d = &c->domains[c->n_domains++];
	*d = (DomainCounters) { .index = index };
	snprintf(d->name, sizeof(d->name), "%s", name);
	return d;
}

/*
 * Call @f with the whitespace-separated words of each non-empty line of
 * @text (NULL-terminated). @f returns < 0 to fail, 0 to go on, > 0 to stop.
 */
static int for_each_line_words(const char *text, int (*f)(char **w, void *userdata), void *userdata)
{
	_cleanup_strv_free_ char **lines = NULL;
	int r;

	r = strv_split(text, "\n", &lines);
	if (r < 0)
		return r;
	STRV_FOREACH(line, lines) {
		_cleanup_strv_free_ char **w = NULL;

		r = strv_split(*line, WHITESPACE, &w);
		if (r < 0)
			return r;
		if (!w[0])
			continue;
		r = f(w, userdata);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	return 0;
}

typedef struct SchedstatParse {
	KernelCounters *c;
	bool in_cpu;
	unsigned cpu;
} SchedstatParse;

/*
 * A version 16 domain line (6.12) after its mask: per idle type 8
 * sched_balance_rq() fields, lb_imbalance where version 17 has its four
 * lb_imbalance_* fields, then the same 12 others. Stored in version 17's
 * positions; the four imbalance fields stay 0 and are not exported for
 * version 16 (lb_field_exported()).
 */
static int schedstat_v16_fields(char **w, uint64_t v[static SCHEDSTAT_DOMAIN_FIELDS])
{
	static const uint8_t lb_v16[] = { 0, 1, 2, /* lb_imbalance */ 0xff, 7, 8, 9, 10 };
	size_t k = 0;

	memset(v, 0, SCHEDSTAT_DOMAIN_FIELDS * sizeof(uint64_t));
	for (unsigned t = 0; t < SCHEDSTAT_IDLE_TYPES; t++)
		for (size_t f = 0; f < ELEMENTSOF(lb_v16); f++, k++) {
			uint64_t x;

			if (!w[k] || parse_u64(w[k], &x) < 0)
				return -EBADMSG;
			if (lb_v16[f] != 0xff)
				v[t * SCHEDSTAT_LB_FIELDS + lb_v16[f]] = x;
		}
	for (size_t f = SCHEDSTAT_IDLE_TYPES * SCHEDSTAT_LB_FIELDS; f < SCHEDSTAT_DOMAIN_FIELDS; f++, k++)
		if (!w[k] || parse_u64(w[k], &v[f]) < 0)
			return -EBADMSG;
	return w[k] ? -EBADMSG : 0;
}

static int schedstat_line(char **w, void *userdata)
{
	SchedstatParse *sp = userdata;
	KernelCounters *c = sp->c;
	uint64_t v[SCHEDSTAT_DOMAIN_FIELDS];
	CpuDomainCounters *cd;
	DomainCounters *d;
	const char *p, *name;
	unsigned n;
	size_t k;
	int r;

	if (streq(w[0], "version")) {
		if (!w[1] || safe_atoi(w[1], &c->schedstat_version) < 0 || c->schedstat_version <= 0)
			return -EBADMSG;
		return 0;
	}
	if (startswith(w[0], "cpu")) {
		sp->in_cpu = safe_atou_base(w[0] + 3, 10, &sp->cpu) >= 0;
		return 0;
	}
	/* Other versions name and order the fields differently: not guessed at. */
	if ((c->schedstat_version != 16 && c->schedstat_version != 17) || !(p = startswith(w[0], "domain")))
		return 0;
	if (!sp->in_cpu || safe_atou_base(p, 10, &n) < 0 || !w[1] || !w[2])
		return -EBADMSG;
	if (c->schedstat_version == 16) {
		r = schedstat_v16_fields(w + 2, v);
		if (r < 0)
			return r;
		name = "";
	} else {
		for (k = 0; k < SCHEDSTAT_DOMAIN_FIELDS; k++)
			if (!w[3 + k] || parse_u64(w[3 + k], &v[k]) < 0)
				return -EBADMSG;
		name = w[1];
	}
	if (strlen(name) >= sizeof(d->name))
		return -EBADMSG;
	d = domain_get(c, n, name);
	if (!d)
		return -ENOMEM;
	d->cpus++;
	for (k = 0; k < SCHEDSTAT_DOMAIN_FIELDS; k++)
		d->v[k] += v[k];

	cd = reallocarray(c->cpu_domains, c->n_cpu_domains + 1, sizeof(CpuDomainCounters));
	if (!cd)
		return -ENOMEM;
	c->cpu_domains = cd;
	cd = &c->cpu_domains[c->n_cpu_domains++];
	*cd = (CpuDomainCounters) { .cpu = sp->cpu, .index = n };
	snprintf(cd->name, sizeof(cd->name), "%s", name);
	memcpy(cd->v, v, sizeof(v));
	return 0;
}

void counter_history_done(CounterHistory *h)
{
	if (!h)
		return;
	free(h->slots);
	free(h->smt_buddy);
	free(h->softirqs);
	*h = (CounterHistory) {};
}

static CounterSlot *slot_get(CounterHistory *h, const CpuDomainCounters *cd)
{
	CounterSlot *s;

	for (size_t i = 0; i < h->n_slots; i++)
		if (h->slots[i].cpu == cd->cpu && h->slots[i].index == cd->index && streq(h->slots[i].name, cd->name))
			return &h->slots[i];
	s = reallocarray(h->slots, h->n_slots + 1, sizeof(CounterSlot));
	if (!s)
		return NULL;
	h->slots = s;
	s = &h->slots[h->n_slots++];
	*s = (CounterSlot) { .cpu = cd->cpu, .index = cd->index };
	snprintf(s->name, sizeof(s->name), "%s", cd->name);
	return s;
}

/* What the struct behind @s counted goes to its base: it is gone, or a new one took its place. */
static void slot_retire(CounterSlot *s)
{
	for (size_t k = 0; k < SCHEDSTAT_DOMAIN_FIELDS; k++) {
		s->base[k] += s->last[k];
		s->last[k] = 0;
	}
}

/*
 * Fold the per-CPU lines @now (@n_fields fields each) into @tallies and
 * set @ret_sum to the sums over every CPU ever seen (see CpuTally).
 */
static int tally(CpuTally **tallies, size_t *n_tallies, const CpuCounters *now, size_t n_now, size_t n_fields,
		 uint64_t *ret_sum)
{
	assert(n_fields <= SMT_BUDDY_STAT_FIELDS);

	for (size_t i = 0; i < n_now; i++) {
		CpuTally *t = NULL;

		for (size_t j = 0; j < *n_tallies && !t; j++)
			if ((*tallies)[j].cpu == now[i].cpu)
				t = &(*tallies)[j];
		if (!t) {
			t = reallocarray(*tallies, *n_tallies + 1, sizeof(CpuTally));
			if (!t)
				return -ENOMEM;
			*tallies = t;
			t = &t[(*n_tallies)++];
			*t = (CpuTally) { .cpu = now[i].cpu };
		}
		/*
		 * Both files print 32-bit counters (%u): one lower than before
		 * went round 2^32 once, as a CPU's SCHED softirqs do in weeks.
		 * A value that never fitted in 32 bits started again from 0.
		 */
		for (size_t k = 0; k < n_fields; k++)
			if (now[i].v[k] < t->last[k])
				t->base[k] += t->last[k] <= UINT32_MAX ? (uint64_t)UINT32_MAX + 1 : t->last[k];
		memcpy(t->last, now[i].v, sizeof(t->last));
	}
	for (size_t k = 0; k < n_fields; k++) {
		ret_sum[k] = 0;
		for (size_t j = 0; j < *n_tallies; j++)
			ret_sum[k] += (*tallies)[j].base[k] + (*tallies)[j].last[k];
	}
	return 0;
}

int kernel_counters_accumulate(KernelCounters *c, CounterHistory *h)
{
	int r;

	assert(c && h);

	for (size_t i = 0; i < h->n_slots; i++)
		h->slots[i].seen = false;
	for (size_t i = 0; i < c->n_cpu_domains; i++) {
		const CpuDomainCounters *cd = &c->cpu_domains[i];
		CounterSlot *s = slot_get(h, cd);

		if (!s)
			return -ENOMEM;
		for (size_t k = 0; k < SCHEDSTAT_DOMAIN_FIELDS; k++)
			if (cd->v[k] < s->last[k]) {
				slot_retire(s);
				break;
			}
		memcpy(s->last, cd->v, sizeof(s->last));
		s->seen = true;
	}
	for (size_t i = 0; i < h->n_slots; i++)
		if (!h->slots[i].seen)
			slot_retire(&h->slots[i]);

	r = tally(&h->smt_buddy, &h->n_smt_buddy, c->smt_buddy_per_cpu, c->n_smt_buddy_per_cpu,
		  SMT_BUDDY_STAT_FIELDS, c->smt_buddy);
	if (r < 0)
		return r;
	if (c->have_sched_softirqs) {
		r = tally(&h->softirqs, &h->n_softirqs, c->softirqs_per_cpu, c->n_softirqs_per_cpu, 1,
			  &c->sched_softirqs);
		if (r < 0)
			return r;
	}

	free(c->domains);
	c->domains = NULL;
	c->n_domains = 0;
	for (size_t i = 0; i < h->n_slots; i++) {
		const CounterSlot *s = &h->slots[i];
		DomainCounters *d = domain_get(c, s->index, s->name);

		if (!d)
			return -ENOMEM;
		d->cpus += s->seen;
		for (size_t k = 0; k < SCHEDSTAT_DOMAIN_FIELDS; k++)
			d->v[k] += s->base[k] + s->last[k];
	}
	return 0;
}

int kernel_counters_parse_schedstat(KernelCounters *c, const char *text)
{
	SchedstatParse sp = { .c = c };
	int r;

	assert(c && text);

	r = for_each_line_words(text, schedstat_line, &sp);
	if (r < 0)
		return r;
	if (c->schedstat_version == 0)
		return -EBADMSG;
	return 0;
}

static int smt_buddy_line(char **w, void *userdata)
{
	KernelCounters *c = userdata;
	uint64_t v[SMT_BUDDY_STAT_FIELDS];
	CpuCounters *cc;
	unsigned n;

	if (streq(w[0], "version")) {
		if (!w[1] || safe_atoi(w[1], &c->smt_buddy_version) < 0 || c->smt_buddy_version <= 0)
			return -EBADMSG;
		return 0;
	}
	if (c->smt_buddy_version != SMT_BUDDY_STAT_VERSION || !startswith(w[0], "cpu"))
		return 0;
	if (safe_atou_base(w[0] + 3, 10, &n) < 0)
		return -EBADMSG;
	for (size_t k = 0; k < SMT_BUDDY_STAT_FIELDS; k++)
		if (!w[1 + k] || parse_u64(w[1 + k], &v[k]) < 0)
			return -EBADMSG;
	if (w[1 + SMT_BUDDY_STAT_FIELDS])
		return -EBADMSG;
	cc = cpu_counters_add(&c->smt_buddy_per_cpu, &c->n_smt_buddy_per_cpu, n);
	if (!cc)
		return -ENOMEM;
	memcpy(cc->v, v, sizeof(v));
	c->smt_buddy_cpus++;
	for (size_t k = 0; k < SMT_BUDDY_STAT_FIELDS; k++)
		c->smt_buddy[k] += v[k];
	return 0;
}

int kernel_counters_parse_smt_buddy(KernelCounters *c, const char *text)
{
	int r;

	assert(c && text);

	r = for_each_line_words(text, smt_buddy_line, c);
	if (r < 0)
		return r;
	if (c->smt_buddy_version == 0)
		return -EBADMSG;
	return 0;
}

typedef struct SoftirqsParse {
	KernelCounters *c;
	unsigned *cpus;          /* the header's "CPU0 CPU1 ...", column by column */
	size_t n_cpus;
} SoftirqsParse;

static int softirqs_header(SoftirqsParse *sp, char **w)
{
	size_t n = strv_length(w);

	free(sp->cpus);
	sp->n_cpus = 0;
	sp->cpus = calloc(n, sizeof(unsigned));
	if (!sp->cpus)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++)
		if (!startswith(w[k], "CPU") || safe_atou_base(w[k] + 3, 10, &sp->cpus[k]) < 0)
			return -EBADMSG;
	sp->n_cpus = n;
	return 0;
}

/*
 * /proc/softirqs: a header of CPU names, then "NAME: n n ..." per softirq;
 * SCHED summed, and kept per CPU (a column without a header is its index).
 */
static int softirqs_line(char **w, void *userdata)
{
	SoftirqsParse *sp = userdata;
	KernelCounters *c = sp->c;
	uint64_t sum = 0, v;

	if (startswith(w[0], "CPU"))
		return softirqs_header(sp, w);
	if (!streq(w[0], "SCHED:"))
		return 0;
	if (!w[1])
		return -EBADMSG;
	for (size_t k = 1; w[k]; k++) {
		CpuCounters *cc;

		if (parse_u64(w[k], &v) < 0 || v > UINT64_MAX - sum)
			return -EBADMSG;
		sum += v;
		cc = cpu_counters_add(&c->softirqs_per_cpu, &c->n_softirqs_per_cpu,
				      k - 1 < sp->n_cpus ? sp->cpus[k - 1] : (unsigned)(k - 1));
		if (!cc)
			return -ENOMEM;
		cc->v[0] = v;
	}
	c->have_sched_softirqs = true;
	c->sched_softirqs = sum;
	return 1;
}

int kernel_counters_parse_softirqs(KernelCounters *c, const char *text)
{
	SoftirqsParse sp = { .c = c };
	int r;

	assert(c && text);

	r = for_each_line_words(text, softirqs_line, &sp);
	free(sp.cpus);
	return r;
}

int kernel_counters_load(int root_fd, KernelCounters **ret)
{
	_cleanup_(kernel_counters_freep) KernelCounters *c = NULL;
	_cleanup_free_ char *text = NULL;
	int r, v;

	c = calloc(1, sizeof(KernelCounters));
	if (!c)
		return -ENOMEM;
	c->schedstats_enabled = read_int_at(root_fd, "proc/sys/kernel/sched_schedstats", &v) >= 0 ? !!v : -1;

	r = read_file_at(root_fd, "proc/schedstat", READ_FILE_MAX, &text, NULL);
	if (r >= 0)
		r = kernel_counters_parse_schedstat(c, text);
	if (r < 0 && r != -ENOENT)
		return r;
	free(text);
	text = NULL;

	/*
	 * A malformed buddy file loses its own counters only, not schedstat's
	 * and the softirqs': the metrics say which file was left out.
	 */
	r = read_file_at(root_fd, "proc/sched_smt_buddy_stat", READ_FILE_MAX, &text, NULL);
	if (r >= 0)
		r = kernel_counters_parse_smt_buddy(c, text);
	if (r == -EBADMSG) {
		c->smt_buddy_malformed = true;
		c->smt_buddy_cpus = 0;
		memset(c->smt_buddy, 0, sizeof(c->smt_buddy));
		free(c->smt_buddy_per_cpu);
		c->smt_buddy_per_cpu = NULL;
		c->n_smt_buddy_per_cpu = 0;
	} else if (r < 0 && r != -ENOENT)
		return r;
	free(text);
	text = NULL;

	r = read_file_at(root_fd, "proc/softirqs", READ_FILE_MAX, &text, NULL);
	if (r >= 0)
		r = kernel_counters_parse_softirqs(c, text);
	if (r < 0 && r != -ENOENT)
		return r;

	*ret = TAKE_PTR(c);
	return 0;
}

/* Per idle type, the 11 sched_balance_rq() fields of sched-stats.rst, in order. */
static const char *const lb_fields[] = {
	"lb_count", "lb_balanced", "lb_failed", "lb_imbalance_load", "lb_imbalance_util",
	"lb_imbalance_task", "lb_imbalance_misfit", "lb_gained", "lb_hot_gained",
	"lb_nobusyq", "lb_nobusyg",
};

static const char *const lb_help[] = {
	"Times sched_balance_rq() was called",
	"Times sched_balance_rq() found the load did not need balancing",
	"Times sched_balance_rq() tried to move tasks and failed",
	"Total imbalance in load",
	"Total imbalance in utilization",
	"Total imbalance in number of tasks",
	"Total imbalance due to misfit tasks",
	"Times detach_task() was called (tasks pulled)",
	"Times detach_task() was called on a cache-hot task",
	"Times sched_balance_rq() found no busier queue",
	"Times a busier queue was found but no busier group",
};

/* The version 16+ order of enum cpu_idle_type. */
static const char *const idle_types[] = { "busy", "idle", "newly_idle" };

/* Fields 34-36 and 43-45; 37-42 (sbe_*, sbf_*) are unused by the kernel. */
static const struct {
	unsigned field;   /* 1-based, as sched-stats.rst numbers them */
	const char *name, *help;
} other_fields[] = {
	{ 34, "alb_count", "Times active_load_balance() was called" },
	{ 35, "alb_failed", "Times active_load_balance() tried to move a task and failed" },
	{ 36, "alb_pushed", "Times active_load_balance() moved a task" },
	{ 43, "ttwu_wake_remote", "Wakeups whose waker and wakee CPUs share this domain (remote wakeups)" },
	{ 44, "ttwu_move_affine", "Tasks moved to the waking CPU in this domain (wake affine)" },
	{ 45, "ttwu_move_balance", "Tasks moved to the waking CPU by balancing on wakeup (unused since 2.6.25)" },
};

static const struct {
	const char *name, *help;
} buddy_fields[SMT_BUDDY_STAT_FIELDS] = {
	{ "pushed", "Tasks SMT_BUDDY_ASSIST pushed to an idle SMT sibling, summed over CPUs" },
	{ "push_failed", "SMT_BUDDY_ASSIST pushes that failed, summed over CPUs" },
};

const char *kernel_counters_smt_buddy_field(size_t i)
{
	return i < ELEMENTSOF(buddy_fields) ? buddy_fields[i].name : NULL;
}

static void domain_sample(StrBuf *b, const char *name, const DomainCounters *d, const char *idle, uint64_t v)
{
	char index[16];

	snprintf(index, sizeof(index), "%u", d->index);
	prom_sample(b, name, (const char *const[]) { "index", index, "domain", d->name,
						     idle ? "idle" : NULL, idle, NULL }, v);
}

/* lb_imbalance_{load,util,task,misfit} (fields 4-7 of each idle type) are version 17's. */
static bool lb_field_exported(const KernelCounters *c, size_t f)
{
	return c->schedstat_version >= 17 || f < 3 || f > 6;
}

void kernel_counters_metrics(const KernelCounters *c, StrBuf *b)
{
	char metric[96], help[256];

	assert(c && b);

	prom_family(b, "topotune_schedstat_version", "gauge",
		    "Version of /proc/schedstat (0: absent); load-balance counters are exported for versions 16 and 17 "
		    "(16: without the lb_imbalance_* split)");
	prom_sample(b, "topotune_schedstat_version", NULL, (unsigned)MAX(c->schedstat_version, 0));
	if (c->schedstats_enabled >= 0) {
		prom_family(b, "topotune_schedstats_enabled", "gauge",
			    "kernel.sched_schedstats: the kernel counts schedstat and SMT buddy counters only when 1");
		prom_sample(b, "topotune_schedstats_enabled", NULL, (unsigned)c->schedstats_enabled);
	}
	if (c->n_domains > 0) {
		prom_family(b, "topotune_schedstat_domain_cpus", "gauge",
			    "CPUs that report this scheduler domain in /proc/schedstat");
		for (size_t i = 0; i < c->n_domains; i++)
			domain_sample(b, "topotune_schedstat_domain_cpus", &c->domains[i], NULL, c->domains[i].cpus);
		for (size_t f = 0; f < ELEMENTSOF(lb_fields); f++) {
			if (!lb_field_exported(c, f))
				continue;
			snprintf(metric, sizeof(metric), "topotune_schedstat_%s_total", lb_fields[f]);
			snprintf(help, sizeof(help), "%s in this domain, summed over CPUs, by the CPU's idle type (/proc/schedstat %s)",
				 lb_help[f], lb_fields[f]);
			prom_family(b, metric, "counter", help);
			for (size_t i = 0; i < c->n_domains; i++)
				for (size_t t = 0; t < ELEMENTSOF(idle_types); t++)
					domain_sample(b, metric, &c->domains[i], idle_types[t],
						      c->domains[i].v[t * ELEMENTSOF(lb_fields) + f]);
		}
		for (size_t f = 0; f < ELEMENTSOF(other_fields); f++) {
			snprintf(metric, sizeof(metric), "topotune_schedstat_%s_total", other_fields[f].name);
			snprintf(help, sizeof(help), "%s, summed over CPUs (/proc/schedstat %s)", other_fields[f].help,
				 other_fields[f].name);
			prom_family(b, metric, "counter", help);
			for (size_t i = 0; i < c->n_domains; i++)
				domain_sample(b, metric, &c->domains[i], NULL, c->domains[i].v[other_fields[f].field - 1]);
		}
	}

	if (c->have_sched_softirqs) {
		prom_family(b, "topotune_softirqs_sched_total", "counter",
			    "SCHED softirqs (load balancing) raised, summed over CPUs (/proc/softirqs)");
		prom_sample(b, "topotune_softirqs_sched_total", NULL, c->sched_softirqs);
	}
	prom_family(b, "topotune_smt_buddy_stat_version", "gauge",
		    "Version of /proc/sched_smt_buddy_stat of the topotune kernel series (0: absent)");
	prom_sample(b, "topotune_smt_buddy_stat_version", NULL, (unsigned)MAX(c->smt_buddy_version, 0));
	if (c->smt_buddy_malformed) {
		strbuf_append(b, "# /proc/sched_smt_buddy_stat is malformed: its counters are left out\n");
		return;
	}
	if (c->smt_buddy_version != SMT_BUDDY_STAT_VERSION)
		return;
	for (size_t f = 0; f < SMT_BUDDY_STAT_FIELDS; f++) {
		snprintf(metric, sizeof(metric), "topotune_smt_buddy_%s_total", buddy_fields[f].name);
		prom_family(b, metric, "counter", buddy_fields[f].help);
		prom_sample(b, metric, NULL, c->smt_buddy[f]);
	}
}
