/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The planner. Pure: takes the identity, topology, kernel capabilities and
 * effective settings by value and returns a Plan; no I/O, no logging.
 * Depends on the types of cpuid, topology, kernel and profile, and on the
 * domain model in domains.c.
 */
#include <assert.h>

#include "planner.h"
#include "strutil.h"

static const char *const step_action_table[_STEP_ACTION_MAX] = {
	[STEP_SET] = "set",
	[STEP_NONE] = "in-sync",
	[STEP_KEEP] = "keep",
	[STEP_NOT_APPLICABLE] = "not-applicable",
	[STEP_UNSUPPORTED] = "unsupported",
	[STEP_PENDING_REBOOT] = "pending-reboot",
	[STEP_REFUSED] = "refused",
};
DEFINE_STRING_TABLE_LOOKUP(step_action, StepAction);

static void step_done(PlanStep *s)
{
	free(s->from);
	free(s->to);
	free(s->why);
	origin_done(&s->origin);
}

Plan *plan_free(Plan *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < _SETTING_MAX; i++)
		step_done(&p->steps[i]);
	free(p->profile);
	cpuset_done(&p->isolated);
	cpuset_done(&p->housekeeping);
	free(p->kernel_cmdline);
	domain_layout_free(p->layout);
	free(p);
	return NULL;
}

/* No control: a step that writes nothing and names no control it reads. */
#define NO_CONTROL _CONTROL_ID_INVALID

_printf_(5, 6) static int step_set(PlanStep *s, StepAction a, ControlId control, const Origin *o,
				   const char *why_fmt, ...)
{
	va_list ap;
	int r;

	s->action = a;
	s->control = kernel_control_get(control);
	va_start(ap, why_fmt);
	r = vstrprintf_to(&s->why, why_fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	return o ? origin_copy(&s->origin, o) : 0;
}

static const char *onoff(int v)
{
	return v < 0 ? "unknown" : v ? "on" : "off";
}

static int plan_smt_buddy(const PlanInput *in, Plan *p)
{
	const ProfileSettings *s = in->settings;
	const KernelCaps *k = in->caps;
	PlanStep *st = &p->steps[SETTING_SMT_BUDDY_ASSIST];
	bool sysctl = kernel_caps_has(k, CONTROL_SMT_BUDDY_SYSCTL);
	bool debugfs = kernel_caps_has(k, CONTROL_SMT_BUDDY_DEBUGFS);
	int current = kernel_caps_current(k, SETTING_SMT_BUDDY_ASSIST, -1);
	const Origin *o = &s->origin[SETTING_SMT_BUDDY_ASSIST];
	SmtBuddyMode mode = s->value[SETTING_SMT_BUDDY_ASSIST].mode;
	bool want = mode == SMT_BUDDY_ON;
	int r;

	p->smt_buddy_assist = current > 0;
	r = strprintf_to(&st->from, "%s", (sysctl || debugfs) ? onoff(current)
										    : "absent");
	if (r < 0)
		return r;
	r = strprintf_to(&st->to, "%s", mode == SMT_BUDDY_KEEP ? st->from : onoff(want));
	if (r < 0)
		return r;

	if (mode == SMT_BUDDY_KEEP)
		return step_set(st, STEP_KEEP, NO_CONTROL, o, "smt_buddy_assist = keep: left as the kernel has it");
	if (!sysctl && !debugfs && !want)
		return step_set(st, STEP_NONE, NO_CONTROL, o, "kernel lacks SMT_BUDDY_ASSIST, which is as good as off");
	if (!sysctl && !debugfs)
		return step_set(st, STEP_UNSUPPORTED, NO_CONTROL, o,
				"kernel lacks SMT_BUDDY_ASSIST (needs the topotune kernel series)");
	if (want && in->topology->threads_per_core <= 1)
		return step_set(st, STEP_NOT_APPLICABLE, NO_CONTROL, o,
				"no SMT siblings on this machine: nothing to push to");
	if (current == (int)want)
		return step_set(st, STEP_NONE, sysctl ? CONTROL_SMT_BUDDY_SYSCTL : CONTROL_SMT_BUDDY_DEBUGFS,
				o, "already %s", onoff(want));
	p->smt_buddy_assist = want;
	if (sysctl)
		return step_set(st, STEP_SET, CONTROL_SMT_BUDDY_SYSCTL, o, "wanted %s", onoff(want));
	if (k->lockdown) {
		p->smt_buddy_assist = current > 0;
		return step_set(st, STEP_UNSUPPORTED, CONTROL_SMT_BUDDY_DEBUGFS, o,
				"only the debugfs control exists and lockdown (%s) makes debugfs read-only",
				k->lockdown_mode);
	}
	return step_set(st, STEP_SET, CONTROL_SMT_BUDDY_DEBUGFS, o, "wanted %s (no sysctl: debugfs)", onoff(want));
}

int plan_predict_layout(const PlanInput *in, const CpuSet *isolated, int relax, DomainLayout **ret)
{
	CpuSet map = {};
	DomainInput di = {
		.topology = in->topology,
		.identity = in->identity,
		.caps = in->caps,
		.relax_level = relax,
	};
	int r;

	r = cpuset_copy(&map, &in->topology->online);
	if (r < 0)
		return r;
	cpuset_andnot(&map, isolated);
	di.cpu_map = &map;
	r = domains_predict(&di, ret);
	cpuset_done(&map);
	return r;
}

/* The auto relax level, and the layout without isolation or relax it was read off. */
static int auto_relax_level(const PlanInput *in, DomainLayout **ret_layout)
{
	_cleanup_(domain_layout_freep) DomainLayout *l = NULL;
	CpuSet none = {};
	int r;

	r = plan_predict_layout(in, &none, -1, &l);
	if (r < 0)
		return r;
	r = domain_layout_first_cross_node_level(l, in->topology);
	if (ret_layout)
		*ret_layout = TAKE_PTR(l);
	return r;
}

int plan_auto_relax_level(const PlanInput *in)
{
	assert(in);

	return auto_relax_level(in, NULL);
}

static int plan_relax(const PlanInput *in, Plan *p)
{
	const ProfileSettings *s = in->settings;
	const KernelCaps *k = in->caps;
	PlanStep *st = &p->steps[SETTING_RELAX_DOMAIN_LEVEL];
	bool sysctl = kernel_caps_has(k, CONTROL_RELAX_SYSCTL), cgroup_v1 = kernel_caps_has(k, CONTROL_RELAX_CGROUP_V1);
	int current = kernel_caps_current(k, SETTING_RELAX_DOMAIN_LEVEL, -1);
	const SettingValue *v = &s->value[SETTING_RELAX_DOMAIN_LEVEL];
	const Origin *o = &s->origin[SETTING_RELAX_DOMAIN_LEVEL];
	int want, r;
	_cleanup_free_ char *derivation = NULL;

	p->relax_level = current;
	r = strprintf_to(&st->from, "%d", current);
	if (r < 0)
		return r;

	switch (v->mode) {
	case RELAX_KEEP:
		r = strprintf_to(&st->to, "%s", st->from);
		if (r < 0)
			return r;
		return step_set(st, STEP_KEEP, NO_CONTROL, o, "relax_domain_level = keep");
	case RELAX_AUTO:
		/* plan_compute() reuses the layout when nothing is isolated. */
		p->layout = domain_layout_free(p->layout);
		want = auto_relax_level(in, &p->layout);
		if (want < -1)
			return want;
		derivation = want >= 0 ? strprintf("auto: level %d is the lowest that crosses a NUMA node", want)
				       : strdup("auto: no level crosses a NUMA node, kernel default");
		if (!derivation)
			return -ENOMEM;
		break;
	case RELAX_LEVEL:
		want = v->level;
		derivation = strprintf("relax_domain_level = %d", want);
		if (!derivation)
			return -ENOMEM;
		break;
	default:
		return -EINVAL;
	}

	r = strprintf_to(&st->to, "%d", want);
	if (r < 0)
		return r;
	if (want == current)
		return step_set(st, STEP_NONE,
				sysctl ? CONTROL_RELAX_SYSCTL :
				cgroup_v1 ? CONTROL_RELAX_CGROUP_V1 : NO_CONTROL,
				o, "%s; already in effect", derivation);
	if (sysctl || cgroup_v1) {
		p->relax_level = want;
		return step_set(st, STEP_SET, sysctl ? CONTROL_RELAX_SYSCTL : CONTROL_RELAX_CGROUP_V1, o,
				"%s", derivation);
	}
	r = want >= 0 ? strprintf_to(&p->kernel_cmdline, "relax_domain_level=%d", want)
		      : strprintf_to(&p->kernel_cmdline, "-relax_domain_level");
	if (r < 0)
		return r;
	return step_set(st, STEP_PENDING_REBOOT, CONTROL_RELAX_CMDLINE, o,
			"%s; no runtime control on this kernel: %s the kernel command line and reboot", derivation,
			want >= 0 ? "add relax_domain_level= to" : "remove relax_domain_level= from");
}

/*
 * Add the last @n cores of @group (ordered by first CPU) to @ret, leaving
 * one. With @kind >= 0 only cores of that kind are taken; the one left may
 * be of any kind.
 */
static int take_last_cores(const Topology *t, const CpuSet *group, unsigned n, int kind, CpuSet *ret,
			   unsigned *ret_taken)
{
	unsigned taken = 0, cores = 0;
	int r;

	CPUSET_FOREACH(cpu, group)
		if (t->cpus[cpu].core >= 0 && cpuset_first(&t->cores.items[t->cpus[cpu].core].cpus) == cpu)
			cores++;
	for (int cpu = cpuset_last(group); cpu >= 0 && taken < n && cores - taken > 1; cpu--) {
		const CpuSet *core;

		if (!cpuset_contains(group, (unsigned)cpu) || t->cpus[cpu].core < 0)
			continue;
		if (kind >= 0 && t->cpus[cpu].kind != kind)
			continue;
		core = &t->cores.items[t->cpus[cpu].core].cpus;
		if (cpuset_first(core) != cpu || cpuset_intersects(core, ret))
			continue;
		r = cpuset_or(ret, core);
		if (r < 0)
			return r;
		taken++;
	}
	if (ret_taken)
		*ret_taken = taken;
	return 0;
}

/*
 * On a machine of several core kinds, the kind auto: isolation takes in
 * @group: the lowest-capacity one it has (kinds are ordered so; without
 * capacities Intel's atom before core). Isolated CPUs serve a workload
 * that asked for them, and the housekeeping set keeps the big cores the
 * scheduler places everything else on; one kind per group keeps the
 * isolated CPUs alike. -1: no kinds known, any core.
 */
static int group_kind(const Topology *t, const CpuSet *group)
{
	int best = -1;

	if (!topology_heterogeneous(t))
		return -1;
	CPUSET_FOREACH(cpu, group)
		if (t->cpus[cpu].kind >= 0 && (best < 0 || t->cpus[cpu].kind < best))
			best = t->cpus[cpu].kind;
	return best;
}

int plan_auto_isolation(const Topology *t, IsolationMode mode, unsigned n, CpuSet *ret)
{
	CpuSet set = {};
	int r = 0;

	assert(t);
	assert(ret);

	if (mode == ISOLATION_PER_LLC) {
		for (size_t i = 0; i < t->llcs.n && r >= 0; i++)
			r = take_last_cores(t, &t->llcs.items[i].cpus, n, group_kind(t, &t->llcs.items[i].cpus), &set,
					    NULL);
	} else if (mode == ISOLATION_PER_NODE) {
		for (size_t i = 0; i < t->nodes.n && r >= 0; i++) {
			const CpuSet *node = &t->nodes.items[i].cpus;
			int kind = group_kind(t, node);
			unsigned need = n;

			if (cpuset_is_empty(node))
				continue;
			/* Fill from the node's last LLC backwards so the set shares caches. */
			for (size_t j = t->llcs.n; j > 0 && need > 0 && r >= 0; j--) {
				CpuSet part = {};
				unsigned got = 0;

				if (!cpuset_intersects(&t->llcs.items[j - 1].cpus, node))
					continue;
				r = cpuset_copy(&part, &t->llcs.items[j - 1].cpus);
				if (r >= 0) {
					cpuset_and(&part, node);
					/* Keep one core per node: only the node's first LLC may not be emptied. */
					if (cpuset_first(&part) == cpuset_first(node))
						r = take_last_cores(t, &part, need, kind, &set, &got);
					else {
						CpuSet tmp = {};

						r = cpuset_copy(&tmp, &part);
						if (r >= 0)
							r = cpuset_add(&tmp, (unsigned)cpuset_first(node));
						if (r >= 0)
							r = take_last_cores(t, &tmp, need, kind, &set, &got);
						cpuset_done(&tmp);
					}
				}
				cpuset_done(&part);
				need -= MIN(need, got);
			}
			if (t->llcs.n == 0 && r >= 0)
				r = take_last_cores(t, node, n, kind, &set, NULL);
		}
	} else
		r = -EINVAL;
	if (r < 0) {
		cpuset_done(&set);
		return r;
	}
	cpuset_done(ret);
	*ret = set;
	return 0;
}

/* "auto: last cores of every LLC" and, with core kinds, which kinds they are. */
static int auto_isolation_why(const Topology *t, IsolationMode mode, const CpuSet *want, char **ret)
{
	StrBuf b = {};
	bool first = true;

	strbuf_appendf(&b, "auto: last cores of every %s", mode == ISOLATION_PER_LLC ? "LLC" : "node");
	if (topology_heterogeneous(t)) {
		strbuf_append(&b, ", of the lowest-capacity core kind in each: ");
		for (size_t k = 0; k < t->kinds.n; k++) {
			const TopoKind *kd = &t->kinds.items[k];

			if (!cpuset_intersects(&kd->cpus, want))
				continue;
			if (streq(kd->name, "unidentified"))
				strbuf_appendf(&b, "%scores of capacity %u", first ? "" : ", ", kd->capacity);
			else if (kd->capacity)
				strbuf_appendf(&b, "%s%s (capacity %u)", first ? "" : ", ", kd->name, kd->capacity);
			else
				strbuf_appendf(&b, "%s%s", first ? "" : ", ", kd->name);
			first = false;
		}
		if (first)
			strbuf_append(&b, "none could be taken");
	}
	return strbuf_steal(&b, ret);
}

static int plan_isolation(const PlanInput *in, Plan *p)
{
	const ProfileSettings *s = in->settings;
	const KernelCaps *k = in->caps;
	const Topology *t = in->topology;
	PlanStep *st = &p->steps[SETTING_ISOLATED_CPUS];
	const SettingValue *v = &s->value[SETTING_ISOLATED_CPUS];
	const Origin *o = &s->origin[SETTING_ISOLATED_CPUS];
	_cleanup_free_ char *cur = NULL, *want_text = NULL;
	CpuSet want = {};
	int r;

	r = cpuset_copy(&p->isolated, &k->isolated);
	if (r < 0)
		return r;
	r = cpuset_format_list(&k->isolated, &cur);
	if (r < 0)
		return r;
	r = strprintf_to(&st->from, "%s", !k->isolated_known ? "unknown" : *cur ? cur : "none");
	if (r < 0)
		return r;

	switch (v->mode) {
	case ISOLATION_KEEP:
		r = strprintf_to(&st->to, "%s", st->from);
		if (r < 0)
			return r;
		return step_set(st, STEP_KEEP, NO_CONTROL, o, "isolated_cpus = keep");
	case ISOLATION_NONE:
		break;
	case ISOLATION_LIST:
		r = cpuset_copy(&want, &v->cpus);
		break;
	case ISOLATION_PER_LLC:
	case ISOLATION_PER_NODE:
		r = plan_auto_isolation(t, v->mode, v->per_group, &want);
		break;
	default:
		r = -EINVAL;
	}
	if (r >= 0)
		r = cpuset_format_list(&want, &want_text);
	if (r >= 0)
		r = strprintf_to(&st->to, "%s", *want_text ? want_text : "none");
	if (r < 0)
		goto out;

	if (!cpuset_is_subset(&want, &t->online)) {
		CpuSet bad = {};
		_cleanup_free_ char *b = NULL;

		r = cpuset_copy(&bad, &want);
		if (r >= 0) {
			cpuset_andnot(&bad, &t->online);
			r = cpuset_format_list(&bad, &b);
		}
		cpuset_done(&bad);
		if (r >= 0)
			r = step_set(st, STEP_REFUSED, NO_CONTROL, o, "not online: %s", b);
		goto out;
	}
	{
		CpuSet hk = {};

		r = cpuset_copy(&hk, &t->online);
		if (r >= 0) {
			cpuset_andnot(&hk, &want);
			if (cpuset_is_empty(&hk))
				r = step_set(st, STEP_REFUSED, NO_CONTROL, o, "no housekeeping CPU would remain");
		}
		cpuset_done(&hk);
		if (r < 0 || st->action == STEP_REFUSED)
			goto out;
	}
	if (s->value[SETTING_HOUSEKEEPING_SMT].mode == HOUSEKEEPING_WHOLE_CORES)
		for (size_t i = 0; i < t->cores.n; i++) {
			const CpuSet *core = &t->cores.items[i].cpus;

			if (cpuset_intersects(core, &want) && !cpuset_is_subset(core, &want)) {
				_cleanup_free_ char *c = NULL;

				r = cpuset_format_list(core, &c);
				if (r >= 0)
					r = step_set(st, STEP_REFUSED, NO_CONTROL, o,
						     "would split the SMT siblings %s (housekeeping_smt = whole-cores)", c);
				goto out;
			}
		}

	if (k->isolated_known && cpuset_equal(&want, &k->isolated))
		r = step_set(st, STEP_NONE, CONTROL_CPUSET_PARTITION, o, "already isolated as wanted");
	else if (cpuset_is_empty(&want) && (!k->cgroup_v2_cpuset || !k->cpuset_partitions)) {
		/* Nothing can be isolated through partitions here, so none are: in sync, nothing to use. */
		r = strprintf_to(&st->from, "none");
		if (r >= 0)
			r = step_set(st, STEP_NONE, NO_CONTROL, o,
				     "no isolated CPUs wanted, and without cgroup v2 cpuset partitions (%s) none are",
				     !k->cgroup_v2 ? "no cgroup v2 hierarchy" :
				     !k->cgroup_v2_cpuset ? "cpuset controller not available" : "kernel older than 5.11");
	} else if (!k->cgroup_v2_cpuset || !k->cpuset_partitions)
		r = step_set(st, STEP_UNSUPPORTED, NO_CONTROL, o,
			     "isolation needs cgroup v2 cpuset partitions (%s)",
			     !k->cgroup_v2 ? "no cgroup v2 hierarchy; cgroup v1 is refused" :
			     !k->cgroup_v2_cpuset ? "cpuset controller not available" : "kernel older than 5.11");
	else {
		_cleanup_free_ char *why = NULL;

		r = cpuset_copy(&p->isolated, &want);
		if (r >= 0 && (v->mode == ISOLATION_PER_LLC || v->mode == ISOLATION_PER_NODE))
			r = auto_isolation_why(t, v->mode, &want, &why);
		if (r >= 0)
			r = step_set(st, STEP_SET, CONTROL_CPUSET_PARTITION, o, "%s",
				     why ?: v->mode == ISOLATION_NONE ? "no isolated CPUs wanted" : "explicit list");
	}
out:
	cpuset_done(&want);
	return r;
}

/* "off and on": the names of the values 0..@max of @c. */
static int values_text(const KernelControl *c, int max, char **ret)
{
	StrBuf b = {};

	for (int v = 0; v <= max; v++) {
		_cleanup_free_ char *t = NULL;

		if (kernel_control_format(c, v, &t) < 0) {
			b.error = -ENOMEM;
			break;
		}
		strbuf_appendf(&b, "%s%s", v == 0 ? "" : v == max ? " and " : ", ", t);
	}
	return strbuf_steal(&b, ret);
}

/* Why the step of a setting of one control cannot be done: the kernel lacks the control. */
static int plan_control_absent(const KernelControl *c, PlanStep *st, const Origin *o)
{
	if (c->kind == CONTROL_FEATURE)
		return step_set(st, STEP_UNSUPPORTED, NO_CONTROL, o, "kernel lacks %s (no %s in /%s)", c->feature,
				c->token, c->path);
	return step_set(st, STEP_UNSUPPORTED, NO_CONTROL, o, "kernel lacks %s (no /%s%s%s)", c->feature, c->path,
			c->kconfig ? ": " : "", strempty(c->kconfig));
}

/*
 * The step of every setting that is one control's value
 * (SETTING_OF_CONTROL()): keep, or the value through the control when the
 * kernel has it and takes the value. A kernel without the control does
 * what the control's value 0 does.
 */
static int plan_control_setting(const PlanInput *in, SettingId id, Plan *p)
{
	const KernelCaps *k = in->caps;
	const Setting *s = setting_get(id);
	const KernelControl *c = kernel_control_get(s->control);
	PlanStep *st = &p->steps[id];
	const Origin *o = &in->settings->origin[id];
	int mode = in->settings->value[id].mode, want = mode - SETTING_VALUE_BASE, max, r;
	bool present = kernel_caps_has(k, s->control);
	int current = kernel_caps_value(k, s->control, -1);

	assert(c);

	r = present ? kernel_control_format(c, current, &st->from) : strdup_to(&st->from, "absent");
	if (r < 0)
		return r;
	if (mode == SETTING_KEEP) {
		r = strdup_to(&st->to, st->from);
		return r < 0 ? r : step_set(st, STEP_KEEP, NO_CONTROL, o, "%s = keep: left as the kernel has it",
					    s->key);
	}
	if (want < 0 || (size_t)want >= kernel_control_n_values(c))
		return -EINVAL;
	r = kernel_control_format(c, want, &st->to);
	if (r < 0)
		return r;

	if (!present && want == 0)
		return step_set(st, STEP_NONE, NO_CONTROL, o, "kernel lacks %s, which is as good as %s", c->feature,
				st->to);
	if (!present)
		return plan_control_absent(c, st, o);
	max = kernel_caps_max(k, s->control);
	if (want > max) {
		_cleanup_free_ char *takes = NULL;

		r = values_text(c, max, &takes);
		if (r < 0)
			return r;
		return step_set(st, STEP_UNSUPPORTED, NO_CONTROL, o, "kernel %s takes only %s%s%s", k->release, takes,
				c->max_why ? ": " : "", strempty(c->max_why));
	}
	if (current == want)
		return step_set(st, STEP_NONE, s->control, o, "already %s", st->to);
	if (c->kind == CONTROL_FEATURE && k->lockdown)
		return step_set(st, STEP_UNSUPPORTED, s->control, o, "lockdown (%s) makes debugfs read-only",
				k->lockdown_mode);
	return step_set(st, STEP_SET, s->control, o, "wanted %s", st->to);
}

static const ControlId housekeeping_controls[_HOUSEKEEPING_PART_MAX] = {
	[HOUSEKEEPING_IRQS] = CONTROL_IRQ_AFFINITY,
	[HOUSEKEEPING_WORKQUEUES] = CONTROL_WORKQUEUE_CPUMASK,
	[HOUSEKEEPING_IRQBALANCE] = CONTROL_IRQBALANCE_SOCKET,
};

/*
 * "irqs 0-5; workqueues 0-5; irqbalance bans 6-7": the parts in @parts as
 * they hold @cpus (@banned NULL: irqbalance's bans unknown, it runs). The
 * applier's read-back says the same words (applier_read_actual()).
 */
static int housekeeping_text(int parts, const KernelCaps *k, const CpuSet *cpus, const CpuSet *wq,
			     const CpuSet *banned, char **ret)
{
	StrBuf b = {};

	for (HousekeepingPart i = 0; i < _HOUSEKEEPING_PART_MAX; i++) {
		const CpuSet *set = i == HOUSEKEEPING_IRQS ? cpus : i == HOUSEKEEPING_WORKQUEUES ? wq : banned;
		_cleanup_free_ char *l = NULL;

		if (!(parts & (1 << i)))
			continue;
		strbuf_append(&b, b.len ? "; " : "");
		if (!kernel_caps_has(k, housekeeping_controls[i]))
			strbuf_append(&b, i == HOUSEKEEPING_IRQBALANCE ? "irqbalance not running" :
				      i == HOUSEKEEPING_IRQS ? "irqs absent" : "workqueues absent");
		else if (i == HOUSEKEEPING_IRQBALANCE && !set)
			strbuf_append(&b, "irqbalance running");
		else if (cpuset_format_list(set, &l) < 0)
			b.error = -ENOMEM;
		else
			strbuf_appendf(&b, "%s %s", i == HOUSEKEEPING_IRQBALANCE ? "irqbalance bans" :
				       i == HOUSEKEEPING_IRQS ? "irqs" : "workqueues", *l ? l : "unknown");
	}
	return strbuf_steal(&b, ret);
}

static bool irq_refused(const KernelCaps *k, unsigned irq)
{
	for (size_t j = 0; j < k->n_irqs_refused; j++)
		if (k->irqs_refused[j] == irq)
			return true;
	return false;
}

/* How many IRQs the apply moves: an isolated CPU in their affinity, and not known to refuse. */
static unsigned irqs_to_move(const KernelCaps *k, const CpuSet *isolated)
{
	unsigned n = 0;

	for (size_t i = 0; i < k->n_irqs; i++)
		n += !irq_refused(k, k->irqs[i].irq) && cpuset_intersects(&k->irqs[i].affinity, isolated);
	return n;
}

static void housekeeping_why(StrBuf *b, const KernelCaps *k, int mode, int usable, const CpuSet *isolated)
{
	_cleanup_free_ char *iso = NULL;

	if (cpuset_format_list(isolated, &iso) < 0) {
		b->error = -ENOMEM;
		return;
	}
	strbuf_appendf(b, "keep off the isolated CPUs %s", iso);
	if (usable & (1 << HOUSEKEEPING_IRQS)) {
		strbuf_appendf(b, "; %u of %zu IRQs have isolated CPUs in their affinity and move",
			       irqs_to_move(k, isolated), k->n_irqs);
		for (size_t j = 0; j < k->n_irqs_refused; j++) {
			int e = k->irqs_refused_error ? k->irqs_refused_error[j] : 0;

			strbuf_appendf(b, "%sIRQ %u: the kernel refused", j ? ", " : "; cannot be moved: ",
				       k->irqs_refused[j]);
			if (e < 0)
				strbuf_appendf(b, " (%s: %s)", kernel_errno_name(e), kernel_irq_refused_reason(e));
		}
	} else if (mode & (1 << HOUSEKEEPING_IRQS))
		strbuf_append(b, "; no /proc/irq/default_smp_affinity: IRQs not moved");
	if ((mode & (1 << HOUSEKEEPING_WORKQUEUES)) && !(usable & (1 << HOUSEKEEPING_WORKQUEUES)))
		strbuf_append(b, "; no /sys/devices/virtual/workqueue/cpumask: unbound workqueues not moved");
	if ((mode & (1 << HOUSEKEEPING_IRQBALANCE)) && !(usable & (1 << HOUSEKEEPING_IRQBALANCE)))
		strbuf_append(b, "; irqbalance not running (no socket in /run/irqbalance): nothing to tell");
	/* What no runtime write moves, said where an operator looks. */
	strbuf_append(b, "; not moved: per-CPU kernel threads (kworker/N, ksoftirqd/N) and managed IRQs; "
		      "the tick and RCU callbacks need nohz_full= and rcu_nocbs= on the kernel command line (a reboot)");
}

/*
 * housekeeping: the IRQs, the unbound workqueues and irqbalance keep off
 * the isolated CPUs. One step for the three parts; the applier expands the
 * IRQ part over the IRQs there when it runs (they come and go).
 */
static int plan_housekeeping(const PlanInput *in, Plan *p)
{
	const KernelCaps *k = in->caps;
	PlanStep *st = &p->steps[SETTING_HOUSEKEEPING];
	const Origin *o = &in->settings->origin[SETTING_HOUSEKEEPING];
	int mode = in->settings->value[SETTING_HOUSEKEEPING].mode, usable = 0, r;
	StrBuf why = {};
	CpuSet hk = {};
	StepAction action;

	if (mode < 0 || mode > HOUSEKEEPING_ALL)
		return -EINVAL;
	r = housekeeping_text(mode ?: HOUSEKEEPING_ALL, k, &k->irq_default, &k->workqueue_mask, NULL, &st->from);
	if (r < 0)
		return r;
	if (mode == 0) {
		r = strdup_to(&st->to, st->from);
		return r < 0 ? r : step_set(st, STEP_KEEP, NO_CONTROL, o,
					    "housekeeping = none: IRQs, workqueues and irqbalance left as they are");
	}
	if (cpuset_is_empty(&p->isolated)) {
		r = strdup_to(&st->to, st->from);
		return r < 0 ? r : step_set(st, STEP_NOT_APPLICABLE, NO_CONTROL, o,
					    "no isolated CPUs: nothing to keep IRQs and workqueues off");
	}

	r = cpuset_copy(&hk, &in->topology->online);
	if (r < 0)
		return r;
	cpuset_andnot(&hk, &p->isolated);
	r = housekeeping_text(mode, k, &hk, &hk, &p->isolated, &st->to);
	cpuset_done(&hk);
	if (r < 0)
		return r;

	for (HousekeepingPart i = 0; i < _HOUSEKEEPING_PART_MAX; i++)
		if ((mode & (1 << i)) && kernel_caps_has(k, housekeeping_controls[i]))
			usable |= 1 << i;
	p->housekeeping_parts = usable;
	housekeeping_why(&why, k, mode, usable, &p->isolated);
	r = strbuf_steal(&why, &st->why);
	if (r < 0)
		return r;
	if (!usable)
		action = STEP_UNSUPPORTED;
	else if (streq(st->from, st->to) && irqs_to_move(k, &p->isolated) == 0)
		action = STEP_NONE;
	else
		action = STEP_SET;
	st->action = action;
	st->control = usable ? kernel_control_get(housekeeping_controls[__builtin_ctz((unsigned)usable)]) : NULL;
	return origin_copy(&st->origin, o);
}

/*
 * The planner's part of each setting that is more than one control's value
 * (those have plan_control_setting()): the function that makes its step,
 * or for a setting without one, the setting whose step reads it.
 */
static const struct {
	int (*step)(const PlanInput *in, Plan *p);
	SettingId read_by;
} plan_table[_SETTING_MAX] = {
	[SETTING_SMT_BUDDY_ASSIST] = { plan_smt_buddy },
	[SETTING_RELAX_DOMAIN_LEVEL] = { plan_relax },
	[SETTING_ISOLATED_CPUS] = { plan_isolation },
	[SETTING_HOUSEKEEPING_SMT] = { NULL, SETTING_ISOLATED_CPUS },
	[SETTING_HOUSEKEEPING] = { plan_housekeeping },
};

SettingId plan_step_of(SettingId id)
{
	if (id < 0 || id >= _SETTING_MAX)
		return _SETTING_INVALID;
	return plan_table[id].step || setting_get(id)->of_control ? id : plan_table[id].read_by;
}

static int plan_step(const PlanInput *in, SettingId id, Plan *p)
{
	if (setting_get(id)->of_control)
		return plan_control_setting(in, id, p);
	return plan_table[id].step(in, p);
}

int plan_compute(const PlanInput *in, Plan **ret)
{
	_cleanup_(plan_freep) Plan *p = NULL;
	int r;

	assert(in);
	assert(ret);

	p = calloc(1, sizeof(Plan));
	if (!p)
		return -ENOMEM;
	p->profile = strdup(in->profile ?: "(none)");
	if (!p->profile)
		return -ENOMEM;

	SETTING_FOREACH(i) {
		PlanStep *st = &p->steps[i];

		if (plan_step_of(i) != i) {
			*st = (PlanStep) { .setting = _SETTING_INVALID, .action = STEP_NOT_APPLICABLE };
			continue;
		}
		st->setting = i;
		r = plan_step(in, i, p);
		if (r < 0)
			return r;
	}

	r = cpuset_copy(&p->housekeeping, &in->topology->online);
	if (r < 0)
		return r;
	cpuset_andnot(&p->housekeeping, &p->isolated);

	/*
	 * The auto relax level's layout is this one when nothing is
	 * isolated, but for the relax level: one prediction, not two.
	 */
	if (p->layout && cpuset_is_empty(&p->isolated))
		domain_layout_relax(p->layout, p->relax_level);
	else {
		p->layout = domain_layout_free(p->layout);
		r = plan_predict_layout(in, &p->isolated, p->relax_level, &p->layout);
		if (r < 0)
			return r;
	}

	*ret = TAKE_PTR(p);
	return 0;
}

MatchFacts plan_match_facts(const CpuIdentity *id, const Topology *t)
{
	MatchFacts f = {
		.vendor = cpu_vendor_to_string(id->vendor),
		.family = id->family,
		.model = id->model,
		.packages = (unsigned)t->packages.n,
		.cpus = cpuset_count(&t->online),
		.nodes_per_package = t->nodes_per_package,
		.smt = t->threads_per_core > 1,
		.n_core_kinds = (unsigned)t->kinds.n,
	};

	for (size_t i = 0; i < MIN(t->kinds.n, (size_t)MATCH_CORE_KINDS_MAX); i++)
		f.core_kinds[i] = (MatchCoreKind) {
			.key = t->kinds.items[i].key,
			.name = t->kinds.items[i].name,
			.capacity = t->kinds.items[i].capacity,
		};
	return f;
}

int plan_format(const Plan *p, unsigned cpu, char **ret)
{
	_cleanup_free_ char *layout = NULL, *iso = NULL, *hk = NULL;
	StrBuf b = {};
	int r;

	assert(p);
	assert(ret);

	strbuf_appendf(&b, "Profile: %s\n", p->profile);
	strbuf_append(&b, "Steps:\n");
	SETTING_FOREACH(i) {
		const PlanStep *s = &p->steps[i];
		_cleanup_free_ char *o = NULL;

		if (!plan_has_step(p, i))
			continue;
		o = origin_to_string(&s->origin);

		strbuf_appendf(&b, "  %-18s %-14s %s -> %s", setting_id_to_string(s->setting),
			       step_action_to_string(s->action), s->from, s->to);
		if (s->control)
			strbuf_appendf(&b, " via %s", s->control->name);
		strbuf_appendf(&b, "\n      why: %s\n      from: %s\n", s->why, o ?: "?");
	}
	if (p->kernel_cmdline)
		strbuf_appendf(&b, "Pending reboot: kernel command line %s\n", p->kernel_cmdline);

	r = cpuset_format_list(&p->isolated, &iso);
	if (r >= 0)
		r = cpuset_format_list(&p->housekeeping, &hk);
	if (r >= 0)
		r = domain_layout_format(p->layout, cpu, &layout);
	if (r < 0) {
		strbuf_done(&b);
		return r;
	}
	strbuf_appendf(&b, "Isolated: %s\nHousekeeping: %s\n", *iso ? iso : "none", hk);
	strbuf_appendf(&b, "Predicted scheduler domains (relax_domain_level %d, SMT_BUDDY_ASSIST %s):\n%s",
		       p->relax_level, p->smt_buddy_assist ? "on" : "off", layout);
	return strbuf_steal(&b, ret);
}
