/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The detectors: samples and machine facts in, findings out. Pure: no
 * I/O, no clock, no logging. Each finding carries its evidence and the
 * remedy in topotune's terms (a profile, a setting, `topotunectl trial`,
 * the kernel series); nothing here changes anything.
 */
#include <math.h>

#include "diagnose.h"
#include "strutil.h"

static const char *const diagnose_kind_table[_DIAGNOSE_KIND_MAX] = {
	[DIAGNOSE_SMT_STACKING] = "smt-stacking",
	[DIAGNOSE_NUMA_LEVELS] = "numa-levels",
	[DIAGNOSE_NEWIDLE_CROSS_NODE] = "newidle-cross-node",
	[DIAGNOSE_ISOLATION_NOISY] = "isolation-noisy",
	[DIAGNOSE_SCHED_EXT] = "sched-ext",
	[DIAGNOSE_KERNEL] = "kernel",
};
DEFINE_STRING_TABLE_LOOKUP(diagnose_kind, DiagnoseKind);

static const char *const diagnose_severity_table[_DIAGNOSE_SEVERITY_MAX] = {
	[DIAGNOSE_INFO] = "info",
	[DIAGNOSE_WARNING] = "warning",
};
DEFINE_STRING_TABLE_LOOKUP(diagnose_severity, DiagnoseSeverity);

bool diagnose_kind_needs_live(DiagnoseKind k)
{
	return k == DIAGNOSE_SMT_STACKING || k == DIAGNOSE_NEWIDLE_CROSS_NODE || k == DIAGNOSE_ISOLATION_NOISY;
}

void finding_done(Finding *f)
{
	free(f->summary);
	cpuset_done(&f->cpus);
	strv_free(f->tasks);
	strv_free(f->evidence);
	free(f->remedy);
	*f = (Finding) {};
}

void diagnosis_done(Diagnosis *d)
{
	for (size_t i = 0; i < d->n_findings; i++)
		finding_done(&d->findings[i]);
	free(d->findings);
	for (size_t i = 0; i < _DIAGNOSE_KIND_MAX; i++)
		free(d->not_checked[i]);
	strv_free(d->unreadable);
	*d = (Diagnosis) {};
}

int diagnosis_add(Diagnosis *d, Finding *f)
{
	Finding *n;

	if (!f->summary || !f->remedy) {
		finding_done(f);
		return -ENOMEM;
	}
	n = realloc(d->findings, (d->n_findings + 1) * sizeof(Finding));
	if (!n) {
		finding_done(f);
		return -ENOMEM;
	}
	d->findings = n;
	d->findings[d->n_findings++] = *f;
	*f = (Finding) {};
	return 0;
}

size_t diagnosis_count(const Diagnosis *d, DiagnoseKind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n_findings; i++)
		n += kind < 0 || d->findings[i].kind == kind;
	return n;
}

int diagnosis_format(const Diagnosis *d, char **ret)
{
	StrBuf b = {};

	for (size_t i = 0; i < d->n_findings; i++) {
		const Finding *f = &d->findings[i];
		_cleanup_free_ char *cpus = NULL;

		if (cpuset_format_list(&f->cpus, &cpus) < 0)
			return -ENOMEM;
		strbuf_appendf(&b, "%s [%s] %s\n", diagnose_kind_to_string(f->kind),
			       diagnose_severity_to_string(f->severity), f->summary);
		if (*cpus)
			strbuf_appendf(&b, "  cpus: %s\n", cpus);
		if (f->seconds > 0)
			strbuf_appendf(&b, "  seconds: %.1f\n", f->seconds);
		STRV_FOREACH(t, f->tasks)
			strbuf_appendf(&b, "  task: %s\n", *t);
		STRV_FOREACH(e, f->evidence)
			strbuf_appendf(&b, "  evidence: %s\n", *e);
		strbuf_appendf(&b, "  remedy: %s\n", f->remedy);
	}
	for (size_t k = 0; k < _DIAGNOSE_KIND_MAX; k++)
		if (d->not_checked[k])
			strbuf_appendf(&b, "not checked: %s: %s\n", diagnose_kind_to_string(k), d->not_checked[k]);
	STRV_FOREACH(u, d->unreadable)
		strbuf_appendf(&b, "unreadable: %s\n", *u);
	return strbuf_steal(&b, ret);
}

/* ---- facts shared by the detectors ---- */

bool diagnose_series_present(const KernelCaps *caps)
{
	return kernel_caps_has(caps, CONTROL_SMT_BUDDY_SYSCTL) || kernel_caps_has(caps, CONTROL_SMT_BUDDY_DEBUGFS) ||
	       kernel_caps_has(caps, CONTROL_RELAX_SYSCTL);
}

bool diagnose_averaging_applies(const Topology *t, const CpuIdentity *id)
{
	if (!id || !id->have_family || t->packages.n < 2 || t->nodes_per_package < 3)
		return false;
	if (id->vendor == CPU_VENDOR_INTEL && id->family == 6 && (id->model == 0xad || id->model == 0xdd))
		return true;
	return id->vendor == CPU_VENDOR_HYGON && id->family == 0x18 && id->model == 7;
}

bool diagnose_fix_relevant(const KernelFix *f, const Topology *t, const CpuIdentity *id)
{
	switch (f->scope) {
	case KERNEL_FIX_SCOPE_INTEL_SNC3:
		return diagnose_averaging_applies(t, id) && id->vendor == CPU_VENDOR_INTEL;
	default:
		return true;
	}
}

/* "kernel 7.3.4 carries 82d6e01a0699 (...)" or "lacks ...", and where it is. */
static char *fix_line(const KernelFix *f, const KernelCaps *caps)
{
	_cleanup_free_ char *where = kernel_fix_releases_text(f);
	int c = kernel_fix_carried(f, caps->release);

	if (!where)
		return NULL;
	return strprintf("kernel %s %s %s (\"%s\"; %s)", caps->release[0] ? caps->release : "(release unknown)",
			 c > 0 ? "carries" : c == 0 ? "lacks, by its version," : "may or may not carry", f->commit,
			 f->subject, where);
}

static int evidence_add(Finding *f, char *line)
{
	return line ? strv_push(&f->evidence, line) : -ENOMEM;
}

/* ---- smt-stacking ---- */

/* Busy fraction of @cpu between two ticks; -1 unknown. */
static double busy_fraction(const DiagnoseTick *a, const DiagnoseTick *b, unsigned cpu)
{
	const CpuTimes *x, *y;

	if (cpu >= a->stat.n || cpu >= b->stat.n)
		return -1;
	x = &a->stat.cpu[cpu];
	y = &b->stat.cpu[cpu];
	if (!x->present || !y->present || y->total <= x->total || y->busy < x->busy)
		return -1;
	return (double)(y->busy - x->busy) / (double)(y->total - x->total);
}

static const TaskSample *tick_task(const DiagnoseTick *t, int tid)
{
	for (size_t i = 0; i < t->n_tasks; i++)
		if (t->tasks[i].tid == tid)
			return &t->tasks[i];
	return NULL;
}

#define STACK_BUSY 0.8     /* a CPU this busy in an interval is taken */
#define STACK_IDLE 0.2     /* a CPU this idle could have run a task */
#define STACK_TASK 0.3     /* a task that ran this share of the interval is a hog */

/* A task that was runnable at both ticks and ran most of the interval on its CPU. */
static bool task_busy(const DiagnoseTick *a, const TaskSample *t, double seconds, unsigned hz)
{
	const TaskSample *p = tick_task(a, t->tid);

	return t->state == 'R' && p && t->cputime >= p->cputime &&
	       (double)(t->cputime - p->cputime) >= STACK_TASK * seconds * hz;
}

typedef struct StackAcc {
	double seconds;
	CpuSet stacked, idle;
	char **tasks;
	char **examples;
} StackAcc;

static int acc_task(StackAcc *acc, const TaskSample *t)
{
	_cleanup_free_ char *s = strprintf("%d %s", t->tid, t->comm);

	if (!s)
		return -ENOMEM;
	if (strv_contains(acc->tasks, s) || strv_length(acc->tasks) >= 16)
		return 0;
	return strv_push(&acc->tasks, TAKE_PTR(s));
}

static int acc_example(StackAcc *acc, char *line)
{
	if (!line)
		return -ENOMEM;
	if (strv_length(acc->examples) >= 6) {
		free(line);
		return 0;
	}
	return strv_push(&acc->examples, line);
}

/* The busy fraction of @cpu in the interval, -1 unknown. */
static double fr(const StackingInput *in, const double *frac, int cpu)
{
	return cpu >= 0 && (unsigned)cpu < in->ticks[0].stat.n ? frac[cpu] : -1;
}

/* An allowed CPU (not @skip) idle in the interval, preferring one whose whole core is idle. */
static int idle_allowed(const StackingInput *in, const double *frac, const CpuSet *allowed, const CpuSet *skip)
{
	int any = -1;

	CPUSET_FOREACH(cpu, allowed) {
		if (fr(in, frac, cpu) < 0 || fr(in, frac, cpu) >= STACK_IDLE || cpuset_contains(skip, (unsigned)cpu))
			continue;
		for (size_t c = 0; c < in->n_cores; c++) {
			bool whole = cpuset_contains(&in->cores[c], (unsigned)cpu);

			CPUSET_FOREACH(s, &in->cores[c])
				if (whole && (fr(in, frac, s) < 0 || fr(in, frac, s) >= STACK_IDLE))
					whole = false;
			if (whole)
				return cpu;
		}
		if (any < 0)
			any = cpu;
	}
	return any;
}

static int stack_interval(const StackingInput *in, size_t k, const double *frac, StackAcc *acc)
{
	const DiagnoseTick *a = &in->ticks[k - 1], *b = &in->ticks[k];
	double dt = (double)(b->usec - a->usec) / 1e6;
	bool stacked = false;
	int r;

	/* Two hogs on one CPU while a CPU one of them may use is idle. */
	for (size_t i = 0; i < b->n_tasks; i++) {
		const TaskSample *t = &b->tasks[i], *other = NULL;
		_cleanup_(cpuset_done) CpuSet allowed = {}, here = {};
		int idle;

		if (!task_busy(a, t, dt, in->user_hz))
			continue;
		for (size_t j = i + 1; j < b->n_tasks && !other; j++)
			if (b->tasks[j].cpu == t->cpu && task_busy(a, &b->tasks[j], dt, in->user_hz))
				other = &b->tasks[j];
		if (!other)
			continue;
		if (cpuset_copy(&allowed, &t->allowed) < 0 || cpuset_or(&allowed, &other->allowed) < 0 ||
		    cpuset_add(&here, (unsigned)t->cpu) < 0)
			return -ENOMEM;
		idle = idle_allowed(in, frac, &allowed, &here);
		if (idle < 0)
			continue;
		stacked = true;
		if (cpuset_add(&acc->stacked, (unsigned)t->cpu) < 0 || cpuset_add(&acc->idle, (unsigned)idle) < 0 ||
		    acc_task(acc, t) < 0 || acc_task(acc, other) < 0)
			return -ENOMEM;
		r = acc_example(acc, strprintf("%.1f-%.1f s: tasks %d (%s) and %d (%s) shared CPU %d while CPU %d "
					       "(allowed) was %.0f%% busy",
					       (double)a->usec / 1e6, (double)b->usec / 1e6, t->tid, t->comm, other->tid,
					       other->comm, t->cpu, idle, 100 * frac[idle]));
		if (r < 0)
			return r;
	}

	/* Hogs on two SMT siblings of one core while a whole core one of them may use is idle. */
	for (size_t c = 0; c < in->n_cores; c++) {
		const TaskSample *on[2] = {};
		_cleanup_(cpuset_done) CpuSet allowed = {};
		_cleanup_free_ char *core = NULL, *idle_core = NULL;
		int idle;

		if (cpuset_count(&in->cores[c]) < 2)
			continue;
		for (size_t i = 0; i < b->n_tasks; i++) {
			const TaskSample *t = &b->tasks[i];

			if (t->cpu < 0 || !cpuset_contains(&in->cores[c], (unsigned)t->cpu) ||
			    !task_busy(a, t, dt, in->user_hz) || fr(in, frac, t->cpu) < STACK_BUSY)
				continue;
			if (!on[0])
				on[0] = t;
			else if (t->cpu != on[0]->cpu && !on[1])
				on[1] = t;
		}
		if (!on[1])
			continue;
		if (cpuset_copy(&allowed, &on[0]->allowed) < 0 || cpuset_or(&allowed, &on[1]->allowed) < 0)
			return -ENOMEM;
		idle = idle_allowed(in, frac, &allowed, &in->cores[c]);
		if (idle < 0)
			continue;
		/* only a whole idle core makes SMT stacking a loss */
		for (size_t d = 0; d < in->n_cores; d++)
			if (cpuset_contains(&in->cores[d], (unsigned)idle)) {
				bool whole = true;

				CPUSET_FOREACH(s, &in->cores[d])
					whole = whole && fr(in, frac, s) >= 0 && fr(in, frac, s) < STACK_IDLE;
				if (!whole || cpuset_format_list(&in->cores[d], &idle_core) < 0)
					idle = -1;
			}
		if (idle < 0 || !idle_core || cpuset_format_list(&in->cores[c], &core) < 0)
			continue;
		stacked = true;
		if (cpuset_or(&acc->stacked, &in->cores[c]) < 0 || cpuset_add(&acc->idle, (unsigned)idle) < 0 ||
		    acc_task(acc, on[0]) < 0 || acc_task(acc, on[1]) < 0)
			return -ENOMEM;
		r = acc_example(acc, strprintf("%.1f-%.1f s: tasks %d (%s) and %d (%s) on the siblings of core %s "
					       "while core %s (allowed) was idle",
					       (double)a->usec / 1e6, (double)b->usec / 1e6, on[0]->tid, on[0]->comm,
					       on[1]->tid, on[1]->comm, core, idle_core));
		if (r < 0)
			return r;
	}
	if (stacked)
		acc->seconds += dt;
	return 0;
}

static void stack_acc_done(StackAcc *acc)
{
	cpuset_done(&acc->stacked);
	cpuset_done(&acc->idle);
	strv_free(acc->tasks);
	strv_free(acc->examples);
}

int diagnose_smt_stacking(const StackingInput *in, Diagnosis *d)
{
	_cleanup_(stack_acc_done) StackAcc acc = {};
	_cleanup_free_ double *frac = NULL;
	_cleanup_free_ char *stacked = NULL, *idle = NULL;
	const KernelFix *fix = kernel_fix_get(KERNEL_FIX_DST_GROUP_ALLOWED);
	Finding f = { .kind = DIAGNOSE_SMT_STACKING, .severity = DIAGNOSE_WARNING };
	double duration;
	int carried, r;

	d->checked[DIAGNOSE_SMT_STACKING] = true;
	if (in->n_ticks < 2 || in->user_hz == 0)
		return 0;
	duration = (double)(in->ticks[in->n_ticks - 1].usec - in->ticks[0].usec) / 1e6;
	frac = calloc(in->ticks[0].stat.n ?: 1, sizeof(double));
	if (!frac)
		return -ENOMEM;
	for (size_t k = 1; k < in->n_ticks; k++) {
		if (in->ticks[k].usec <= in->ticks[k - 1].usec)
			continue;
		for (unsigned cpu = 0; cpu < in->ticks[0].stat.n; cpu++)
			frac[cpu] = busy_fraction(&in->ticks[k - 1], &in->ticks[k], cpu);
		r = stack_interval(in, k, frac, &acc);
		if (r < 0)
			return r;
	}
	/* A moment of stacking is balancing at work; a tenth of the time (and half a second) is not. */
	if (acc.seconds < 0.5 || acc.seconds < 0.1 * duration)
		return 0;

	if (cpuset_format_list(&acc.stacked, &stacked) < 0 || cpuset_format_list(&acc.idle, &idle) < 0)
		return -ENOMEM;
	carried = kernel_fix_carried(fix, in->caps->release);
	f.seconds = acc.seconds;
	f.summary = strprintf("%.1f s of stacked time in %.1f s: runnable tasks shared CPU(s) %s while CPU(s) %s "
			      "(allowed to them) were idle",
			      acc.seconds, duration, stacked, idle);
	f.tasks = TAKE_PTR(acc.tasks);
	f.evidence = TAKE_PTR(acc.examples);
	if (cpuset_copy(&f.cpus, &acc.stacked) < 0 || cpuset_or(&f.cpus, &acc.idle) < 0 ||
	    evidence_add(&f, fix_line(fix, in->caps)) < 0 ||
	    evidence_add(&f, strprintf("topotune's series (SMT_BUDDY_ASSIST): %s",
				       diagnose_series_present(in->caps) ? "present" : "absent")) < 0) {
		finding_done(&f);
		return -ENOMEM;
	}
	f.remedy = strprintf("%s%s; confirm with 'topotunectl trial --profile balanced --profile throughput'",
			     carried > 0 ? "" : "a kernel with 82d6e01a0699 (6.19, 6.12.97, 6.1.178); ",
			     diagnose_series_present(in->caps)
				     ? "profile throughput (smt_buddy_assist = on) pushes a stacked task to the idle core"
				     : "topotune's kernel series (kernel-patches/) adds SMT_BUDDY_ASSIST, which profile "
				       "throughput (smt_buddy_assist = on) turns on");
	return diagnosis_add(d, &f);
}
