/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The detectors that read the machine's facts and the kernel's counters:
 * numa-levels (the kernel's NUMA levels against the planner's model with
 * averaged remote distances), newidle-cross-node (schedstat deltas),
 * isolation-noisy (interrupts and tasks on isolated CPUs), sched-ext,
 * and kernel (the table of known fixes) with the firmware facts. Pure.
 */
#include "diagnose.h"
#include "strutil.h"

static int evidence_add(Finding *f, char *line)
{
	return line ? strv_push(&f->evidence, line) : -ENOMEM;
}

static const CpuSet *node_of(const Topology *t, unsigned cpu)
{
	if (cpu >= t->n_slots || t->cpus[cpu].node < 0 || (size_t)t->cpus[cpu].node >= t->nodes.n)
		return NULL;
	return &t->nodes.items[t->cpus[cpu].node].cpus;
}

/* Most levels above the node any CPU has (spans that reach beyond its node). */
static unsigned predicted_cross_levels(const DomainLayout *l, const Topology *t)
{
	unsigned best = 0;

	for (unsigned cpu = 0; cpu < l->n_slots; cpu++) {
		const CpuSet *node = node_of(t, cpu);
		unsigned n = 0;

		for (size_t i = 0; node && i < l->cpus[cpu].n; i++)
			n += !cpuset_is_subset(&l->cpus[cpu].sd[i].span->cpus, node);
		best = MAX(best, n);
	}
	return best;
}

static unsigned live_cross_levels(const LiveLayout *l, const Topology *t)
{
	unsigned best = 0;

	for (unsigned cpu = 0; cpu < l->n_slots; cpu++) {
		const CpuSet *node = node_of(t, cpu);
		unsigned n = 0;

		for (size_t i = 0; node && i < l->cpus[cpu].n; i++)
			n += !cpuset_is_subset(&l->cpus[cpu].sd[i].span, node);
		best = MAX(best, n);
	}
	return best;
}

int diagnose_cross_node_levels(const LiveLayout *live, const Topology *t, bool **ret, size_t *ret_n)
{
	for (unsigned cpu = 0; live && cpu < live->n_slots; cpu++) {
		const CpuSet *node = node_of(t, cpu);
		bool *v;

		if (!node || live->cpus[cpu].n == 0)
			continue;
		v = calloc(live->cpus[cpu].n, sizeof(bool));
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < live->cpus[cpu].n; i++)
			v[i] = !cpuset_is_subset(&live->cpus[cpu].sd[i].span, node);
		*ret = v;
		*ret_n = live->cpus[cpu].n;
		return 0;
	}
	*ret = NULL;
	*ret_n = 0;
	return 0;
}

static int predict_levels(const LevelsInput *in, const KernelCaps *caps, unsigned *ret)
{
	_cleanup_(domain_layout_freep) DomainLayout *l = NULL;
	DomainInput di = {
		.topology = in->topology,
		.identity = in->identity,
		.caps = caps,
		.cpu_map = &in->topology->online,
		.relax_level = -1,
	};
	int r = domains_predict(&di, &l);

	if (r < 0)
		return r;
	*ret = predicted_cross_levels(l, in->topology);
	return 0;
}

/* The off-package distances: "node 0-3: 28, node 0-5: 32 (2 values, 28..32)". */
static char *asymmetry_text(const Topology *t, unsigned *ret_values)
{
	unsigned seen[16], n_seen = 0, lo = ~0U, hi = 0;
	StrBuf b = {};
	char *ret = NULL;
	unsigned shown = 0;

	for (size_t a = 0; a < t->nodes.n; a++)
		for (size_t c = a + 1; c < t->nodes.n; c++) {
			int pa = cpuset_is_empty(&t->nodes.items[a].cpus) ? -1 :
				 t->cpus[cpuset_first(&t->nodes.items[a].cpus)].package;
			int pc = cpuset_is_empty(&t->nodes.items[c].cpus) ? -1 :
				 t->cpus[cpuset_first(&t->nodes.items[c].cpus)].package;
			unsigned d = topology_distance(t, a, c);
			bool known = false;

			if (pa < 0 || pa == pc)
				continue;
			for (unsigned i = 0; i < n_seen; i++)
				known |= seen[i] == d;
			if (!known && n_seen < ELEMENTSOF(seen)) {
				seen[n_seen++] = d;
				if (shown++ < 6)
					strbuf_appendf(&b, "%snode %d-%d: %u", shown > 1 ? ", " : "", t->nodes.items[a].id,
						       t->nodes.items[c].id, d);
			}
			lo = MIN(lo, d);
			hi = MAX(hi, d);
		}
	if (n_seen == 0) {
		strbuf_done(&b);
		*ret_values = 0;
		return strdup("no off-package node pairs");
	}
	strbuf_appendf(&b, " (%u distinct off-package distances, %u..%u)", n_seen, lo, hi);
	*ret_values = n_seen;
	return strbuf_steal(&b, &ret) < 0 ? NULL : ret;
}

int diagnose_numa_levels(const LevelsInput *in, Diagnosis *d)
{
	const Topology *t = in->topology;
	Finding f = { .kind = DIAGNOSE_NUMA_LEVELS, .severity = DIAGNOSE_WARNING };
	KernelCaps averaged = *in->caps;
	_cleanup_free_ char *asym = NULL;
	unsigned built, model, values;
	bool applies = diagnose_averaging_applies(t, in->identity), from_live;
	int r;

	d->checked[DIAGNOSE_NUMA_LEVELS] = true;
	if (topology_cpu_nodes(t) < 2 || !t->distance)
		return 0;
	/* The planner's model with the averaging on: what the series (or stock SNC-3) gives here. */
	averaged.numa_averaging_intel = averaged.numa_averaging_hygon = true;
	r = predict_levels(in, &averaged, &model);
	if (r < 0)
		return r;
	from_live = in->live && !cpuset_is_empty(&in->live->listed);
	if (from_live)
		built = live_cross_levels(in->live, t);
	else {
		r = predict_levels(in, in->caps, &built);
		if (r < 0)
			return r;
	}
	if (built <= model)
		return 0;
	asym = asymmetry_text(t, &values);
	if (!asym)
		return -ENOMEM;
	f.summary = strprintf("the kernel built %u scheduler levels above the node where averaged remote distances "
			      "give %u: the SLIT's remote distances are asymmetric",
			      built, model);
	r = evidence_add(&f, strprintf("levels built: %s", from_live ? "as /proc/schedstat reports them"
									: "predicted for this kernel (it reports no layout)"));
	if (r >= 0)
		r = evidence_add(&f, strprintf("remote distances: %s", asym));
	if (r >= 0)
		r = evidence_add(&f, strprintf("%u packages, %u nodes per package; the averaging %s this CPU "
					       "(Hygon family 0x18 model 7, Intel GNR/CWF SNC-3)",
					       (unsigned)t->packages.n, t->nodes_per_package,
					       applies ? "applies to" : "does not apply to"));
	if (r >= 0)
		r = cpuset_copy(&f.cpus, &t->online);
	if (r < 0) {
		finding_done(&f);
		return r;
	}
	f.remedy = strdup(applies ? "topotune's kernel series averages the remote-package distances "
				    "(kernel-patches/7.3/0002, 6.12/0005; stock since 6.17 on Intel SNC-3); until then "
				    "relax_domain_level = auto (profile database or hpc) keeps newidle balancing "
				    "inside the node; confirm with 'topotunectl trial'"
				  : "the averaging of the series does not apply to this CPU; relax_domain_level = auto "
				    "(profile database or hpc) keeps newidle balancing inside the node; confirm with "
				    "'topotunectl trial'");
	return diagnosis_add(d, &f);
}

/* ---- newidle-cross-node ---- */

static const DomainCounters *counters_at(const KernelCounters *c, unsigned index)
{
	for (size_t i = 0; i < c->n_domains; i++)
		if (c->domains[i].index == index)
			return &c->domains[i];
	return NULL;
}

#define NEWIDLE(field) (2 * SCHEDSTAT_LB_FIELDS + (field))

int diagnose_newidle(const NewidleInput *in, Diagnosis *d)
{
	Finding f = { .kind = DIAGNOSE_NEWIDLE_CROSS_NODE, .severity = DIAGNOSE_INFO };
	uint64_t count = 0, balanced = 0, gained = 0;
	int r = 0;

	d->checked[DIAGNOSE_NEWIDLE_CROSS_NODE] = true;
	if (!in->before || !in->after || in->seconds <= 0)
		return 0;
	for (size_t i = 0; i < in->after->n_domains; i++) {
		const DomainCounters *b = &in->after->domains[i], *a = counters_at(in->before, b->index);
		uint64_t c, bal, g;

		if (!a || b->index >= in->n_cross_node || !in->cross_node[b->index])
			continue;
		if (b->v[NEWIDLE(SCHEDSTAT_LB_COUNT)] < a->v[NEWIDLE(SCHEDSTAT_LB_COUNT)] ||
		    b->v[NEWIDLE(1)] < a->v[NEWIDLE(1)] || b->v[NEWIDLE(SCHEDSTAT_LB_GAINED)] < a->v[NEWIDLE(SCHEDSTAT_LB_GAINED)])
			continue;   /* counters reset (CPU hotplug): no delta */
		c = b->v[NEWIDLE(SCHEDSTAT_LB_COUNT)] - a->v[NEWIDLE(SCHEDSTAT_LB_COUNT)];
		bal = b->v[NEWIDLE(1)] - a->v[NEWIDLE(1)];
		g = b->v[NEWIDLE(SCHEDSTAT_LB_GAINED)] - a->v[NEWIDLE(SCHEDSTAT_LB_GAINED)];
		count += c;
		balanced += bal;
		gained += g;
		if (c > 0 && r >= 0)
			r = evidence_add(&f, strprintf("domain%u %s (crosses a node): %llu newidle balances, %llu found "
						       "nothing to pull, %llu tasks pulled across nodes",
						       b->index, b->name[0] ? b->name : "(unnamed)", (unsigned long long)c,
						       (unsigned long long)bal, (unsigned long long)g));
	}
	/* Pulling across nodes now and then is balancing; more than one task a second is a pattern. */
	if (r < 0 || (double)gained < in->seconds || gained == 0) {
		finding_done(&f);
		return r;
	}
	if ((double)gained >= 10 * in->seconds)
		f.severity = DIAGNOSE_WARNING;
	f.seconds = in->seconds;
	f.summary = strprintf("%.1f tasks/s pulled across NUMA nodes by newly idle CPUs (%llu in %.1f s; %llu "
			      "newidle balances at cross-node levels, %.0f%% found nothing to pull)",
			      (double)gained / in->seconds, (unsigned long long)gained, in->seconds,
			      (unsigned long long)count, count ? 100.0 * (double)balanced / (double)count : 0.0);
	if (in->relax_level >= 0)
		f.remedy = strprintf("relax_domain_level = %d (auto: the lowest level that crosses a node; profile "
				     "database or hpc) stops newidle pulls across nodes%s; confirm with 'topotunectl "
				     "trial --profile balanced --profile database'",
				     in->relax_level,
				     diagnose_series_present(in->caps)
					     ? ", as smt_buddy_assist = on does above the LLC"
					     : " (at run time with topotune's series: kernel.sched_relax_domain_level; "
					       "else the boot parameter)");
	else
		f.remedy = strdup("no level crosses a node in the model: check 'topotunectl layout --compare'");
	if (r < 0) {
		finding_done(&f);
		return r;
	}
	return diagnosis_add(d, &f);
}

/* ---- isolation-noisy ---- */

/* Line @i of the other table if it has the same name (the usual case), else the first of that name. */
static const IrqLine *irq_find(const IrqTable *t, size_t i, const char *name)
{
	if (i < t->n && streq(t->lines[i].name, name))
		return &t->lines[i];
	for (i = 0; i < t->n; i++)
		if (streq(t->lines[i].name, name))
			return &t->lines[i];
	return NULL;
}

static bool is_device_irq(const char *name)
{
	return name[0] && strspn(name, "0123456789") == strlen(name);
}

static int isolation_irqs(const IsolationInput *in, Finding *f, uint64_t *ret_total)
{
	uint64_t total = 0;

	for (size_t i = 0; in->before && in->after && i < in->after->n; i++) {
		const IrqLine *b = &in->after->lines[i], *a = irq_find(in->before, i, b->name);

		if (!a || !is_device_irq(b->name))
			continue;
		CPUSET_FOREACH(cpu, in->isolated) {
			uint64_t delta;

			if ((unsigned)cpu >= in->after->n_cpus || (unsigned)cpu >= in->before->n_cpus ||
			    b->count[cpu] <= a->count[cpu])
				continue;
			delta = b->count[cpu] - a->count[cpu];
			total += delta;
			if (cpuset_add(&f->cpus, (unsigned)cpu) < 0 ||
			    evidence_add(f, strprintf("IRQ %s (%s): %llu on isolated CPU %d (/proc/interrupts)", b->name,
						      b->desc, (unsigned long long)delta, cpu)) < 0)
				return -ENOMEM;
		}
	}
	*ret_total = total;
	return 0;
}

static int isolation_tasks(const IsolationInput *in, Finding *f, size_t *ret_n)
{
	size_t n = 0;

	for (size_t k = 0; k < in->n_ticks; k++)
		for (size_t i = 0; i < in->ticks[k].n_tasks; i++) {
			const TaskSample *t = &in->ticks[k].tasks[i];
			_cleanup_free_ char *allowed = NULL, *name = NULL;

			/* per-CPU kernel threads are the kernel's; the partition's own tasks may only run there */
			if (t->kthread || t->cpu < 0 || !cpuset_contains(in->isolated, (unsigned)t->cpu) ||
			    cpuset_is_empty(&t->allowed) || cpuset_is_subset(&t->allowed, in->isolated))
				continue;
			name = strprintf("%d %s", t->tid, t->comm);
			if (!name || cpuset_format_list(&t->allowed, &allowed) < 0)
				return -ENOMEM;
			if (strv_contains(f->tasks, name))
				continue;
			n++;
			if (strv_extend(&f->tasks, name) < 0 || cpuset_add(&f->cpus, (unsigned)t->cpu) < 0 ||
			    evidence_add(f, strprintf("task %s ran on isolated CPU %d, allowed %s", name, t->cpu,
						      allowed)) < 0)
				return -ENOMEM;
		}
	*ret_n = n;
	return 0;
}

int diagnose_isolation(const IsolationInput *in, Diagnosis *d)
{
	Finding f = { .kind = DIAGNOSE_ISOLATION_NOISY, .severity = DIAGNOSE_WARNING };
	_cleanup_free_ char *cpus = NULL, *iso = NULL;
	uint64_t irqs = 0;
	size_t tasks = 0;
	int r;

	d->checked[DIAGNOSE_ISOLATION_NOISY] = true;
	if (!in->isolated || cpuset_is_empty(in->isolated))
		return 0;
	r = isolation_irqs(in, &f, &irqs);
	if (r >= 0)
		r = isolation_tasks(in, &f, &tasks);
	if (r >= 0 && irqs == 0 && tasks == 0) {
		finding_done(&f);
		return 0;
	}
	if (r >= 0)
		r = cpuset_format_list(&f.cpus, &cpus);
	if (r >= 0)
		r = cpuset_format_list(in->isolated, &iso);
	if (r < 0) {
		finding_done(&f);
		return r;
	}
	f.seconds = in->seconds;
	f.summary = strprintf("isolated CPU(s) %s are not quiet: %llu device interrupts and %zu unrelated task(s) "
			      "in %.1f s (isolated: %s, from %s)",
			      cpus, (unsigned long long)irqs, tasks, in->seconds, iso,
			      in->isolated_source ?: "the cgroup root");
	f.remedy = strdup("route the IRQs to the housekeeping CPUs (/proc/irq/N/smp_affinity_list, or irqaffinity= "
			  "on the kernel command line); run only the workload in topotune-isolated.slice (Slice=), "
			  "as profile hpc's isolated_cpus sets it up; 'topotunectl status' shows HousekeepingCpus");
	return diagnosis_add(d, &f);
}

/* ---- sched-ext ---- */

int diagnose_sched_ext(const KernelCaps *caps, Diagnosis *d)
{
	Finding f = { .kind = DIAGNOSE_SCHED_EXT, .severity = DIAGNOSE_WARNING };
	const char *ops = caps->sched_ext_ops[0] ? caps->sched_ext_ops : "unknown";

	d->checked[DIAGNOSE_SCHED_EXT] = true;
	if (!kernel_caps_sched_ext_running(caps))
		return 0;
	f.summary = strprintf("a sched_ext scheduler ('%s') is %s: the fair-class settings topotune drives do not "
			      "govern the tasks it schedules",
			      ops, caps->sched_ext_state);
	if (evidence_add(&f, strprintf("/sys/kernel/sched_ext/state: %s", caps->sched_ext_state)) < 0 ||
	    evidence_add(&f, strprintf("/sys/kernel/sched_ext/root/ops: %s", ops)) < 0) {
		finding_done(&f);
		return -ENOMEM;
	}
	f.remedy = strprintf("smt_buddy_assist, relax_domain_level and the numa_balancing interplay act on "
			     "CFS/EEVDF only: tune '%s' itself, or stop it to let the active profile apply "
			     "('topotunectl status' says so in its state reasons)",
			     ops);
	return diagnosis_add(d, &f);
}

/* ---- kernel and firmware ---- */

void diagnose_firmware_facts(const Topology *t, const CpuIdentity *id, FirmwareFacts *ret)
{
	FirmwareFacts ff = { .packages = (unsigned)t->packages.n, .nodes_per_package = t->nodes_per_package };
	unsigned nodes = 0, llc_nodes = 0;

	for (size_t n = 0; n < t->nodes.n; n++) {
		if (cpuset_is_empty(&t->nodes.items[n].cpus))
			continue;
		nodes++;
		for (size_t l = 0; l < t->llcs.n; l++)
			if (cpuset_equal(&t->llcs.items[l].cpus, &t->nodes.items[n].cpus)) {
				llc_nodes++;
				break;
			}
	}
	ff.llc_as_node = nodes > ff.packages && nodes > 1 && llc_nodes == nodes && t->llcs.n > 0;
	if (ff.llc_as_node && id && (id->vendor == CPU_VENDOR_AMD || id->vendor == CPU_VENDOR_HYGON))
		snprintf(ff.mode, sizeof(ff.mode), "LLC as NUMA node (each node one L3)");
	else if (ff.nodes_per_package > 1 && id && id->vendor == CPU_VENDOR_INTEL)
		snprintf(ff.mode, sizeof(ff.mode), "SNC-%u", ff.nodes_per_package);
	else if (ff.nodes_per_package > 1 && id && (id->vendor == CPU_VENDOR_AMD || id->vendor == CPU_VENDOR_HYGON))
		snprintf(ff.mode, sizeof(ff.mode), "NPS%u", ff.nodes_per_package);
	else if (ff.nodes_per_package > 1)
		snprintf(ff.mode, sizeof(ff.mode), "%u nodes per package", ff.nodes_per_package);
	*ret = ff;
}

int diagnose_kernel(const KernelCaps *caps, const Topology *t, const CpuIdentity *id, Diagnosis *d)
{
	bool series = diagnose_series_present(caps);
	int r;

	d->checked[DIAGNOSE_KERNEL] = true;
	KERNEL_FIX_FOREACH(i) {
		const KernelFix *fix = kernel_fix_get(i);
		Finding f = { .kind = DIAGNOSE_KERNEL, .severity = DIAGNOSE_WARNING };
		_cleanup_free_ char *where = NULL;

		if (!diagnose_fix_relevant(fix, t, id) || kernel_fix_carried(fix, caps->release) != 0 ||
		    (fix->in_series && series))
			continue;
		where = kernel_fix_releases_text(fix);
		if (!where)
			return -ENOMEM;
		f.summary = strprintf("kernel %s lacks %s (\"%s\") by its version: %s", caps->release, fix->commit,
				      fix->subject, fix->fixes);
		r = evidence_add(&f, strprintf("%s", where));
		if (r >= 0)
			r = evidence_add(&f, strdup("a distribution kernel may carry a backport its version does not show"));
		if (r >= 0)
			r = evidence_add(&f, strprintf("topotune's series: %s", series ? "present" : "absent"));
		if (r < 0) {
			finding_done(&f);
			return r;
		}
		f.remedy = strprintf("a kernel release that carries %s%s", fix->commit,
				     fix->in_series ? ", or topotune's kernel series (kernel-patches/6.12)" : "");
		r = diagnosis_add(d, &f);
		if (r < 0)
			return r;
	}
	return 0;
}
