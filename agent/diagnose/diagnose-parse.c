/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The text of the files diagnose samples, parsed from memory: /proc/stat's
 * cpuN lines, /proc/PID/task/TID/stat and status, /proc/interrupts. Pure
 * and strict (fuzzed by tests/fuzz/fuzz-diagnose.c); depends on basic only.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>

#include "diagnose.h"
#include "strutil.h"

#define PF_KTHREAD 0x00200000U

void stat_sample_done(StatSample *s)
{
	free(s->cpu);
	*s = (StatSample) {};
}

void task_sample_done(TaskSample *t)
{
	cpuset_done(&t->allowed);
}

void diagnose_tick_done(DiagnoseTick *t)
{
	stat_sample_done(&t->stat);
	for (size_t i = 0; i < t->n_tasks; i++)
		task_sample_done(&t->tasks[i]);
	free(t->tasks);
	*t = (DiagnoseTick) {};
}

void irq_table_done(IrqTable *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->lines[i].count);
	free(t->lines);
	*t = (IrqTable) {};
}

/* An unsigned decimal at *p, skipping blanks before it; advances *p. */
static int next_u64(const char **p, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return -EBADMSG;
	for (; isdigit((unsigned char)*s); s++) {
		uint64_t digit = (uint64_t)(*s - '0');

		if (v > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		v = v * 10 + digit;
	}
	*p = s;
	*ret = v;
	return 0;
}

static const char *next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? nl + 1 : p + strlen(p);
}

static int stat_line(const char *p, StatSample *s)
{
	uint64_t cpu, v[8] = {};
	CpuTimes *t;

	if (next_u64(&p, &cpu) < 0 || cpu >= CPUSET_MAX_CPUS)
		return -EBADMSG;
	/* user nice system idle iowait irq softirq steal; older kernels stop earlier */
	for (size_t i = 0; i < ELEMENTSOF(v); i++)
		if (next_u64(&p, &v[i]) < 0) {
			if (i < 4)
				return -EBADMSG;
			break;
		}
	if (cpu >= s->n) {
		unsigned n = (unsigned)cpu + 1;

		t = realloc(s->cpu, n * sizeof(CpuTimes));
		if (!t)
			return -ENOMEM;
		memset(t + s->n, 0, (n - s->n) * sizeof(CpuTimes));
		s->cpu = t;
		s->n = n;
	}
	t = &s->cpu[cpu];
	t->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	t->total = t->busy + v[3] + v[4];
	t->present = true;
	return 0;
}

int diagnose_parse_stat(const char *text, StatSample *ret)
{
	StatSample s = {};
	int r;

	for (const char *p = text; *p; p = next_line(p)) {
		const char *rest = startswith(p, "cpu");

		if (!rest || !isdigit((unsigned char)*rest))
			continue;
		r = stat_line(rest, &s);
		if (r < 0) {
			stat_sample_done(&s);
			return r;
		}
	}
	*ret = s;
	return 0;
}

int diagnose_parse_task_stat(const char *text, TaskSample *ret)
{
	const char *open_p = strchr(text, '('), *close_p = strrchr(text, ')'), *p;
	uint64_t v, utime = 0, stime = 0, flags = 0, cpu = 0, threads = 0;
	TaskSample t = { .cpu = -1 };
	int tid;

	if (!open_p || !close_p || close_p < open_p || sscanf(text, "%d (", &tid) != 1 || tid <= 0)
		return -EBADMSG;
	t.tid = t.tgid = tid;
	snprintf(t.comm, sizeof(t.comm), "%.*s", (int)MIN(close_p - open_p - 1, (long)sizeof(t.comm) - 1),
		 open_p + 1);
	p = close_p + 1;
	while (*p == ' ')
		p++;
	if (!*p || !isalpha((unsigned char)*p))
		return -EBADMSG;
	t.state = *p++;
	/* fields 4.. 39: ppid pgrp session tty_nr tpgid flags ... processor */
	for (int field = 4; field <= 39; field++) {
		while (*p == ' ')
			p++;
		if (*p == '-')
			p++;   /* tty_nr and tpgid may be negative; their value is not used */
		if (next_u64(&p, &v) < 0)
			return -EBADMSG;
		if (field == 9)
			flags = v;
		else if (field == 14)
			utime = v;
		else if (field == 15)
			stime = v;
		else if (field == 20)
			threads = v;
		else if (field == 39)
			cpu = v;
	}
	if (cpu >= CPUSET_MAX_CPUS)
		return -EBADMSG;
	t.cpu = (int)cpu;
	t.cputime = utime + stime;
	t.kthread = flags & PF_KTHREAD;
	t.threads = (unsigned)MIN(threads, (uint64_t)UINT32_MAX);
	*ret = t;
	return 0;
}

int diagnose_parse_status_allowed(const char *text, CpuSet *ret)
{
	for (const char *p = text; *p; p = next_line(p)) {
		const char *v = startswith(p, "Cpus_allowed_list:");
		_cleanup_free_ char *line = NULL;

		if (!v)
			continue;
		line = strndup(v, strcspn(v, "\n"));
		if (!line)
			return -ENOMEM;
		return cpuset_parse_list(strip(line), ret, NULL) < 0 ? -EBADMSG : 0;
	}
	return -ENOENT;
}

/* The header "CPU0 CPU1 CPU4": column -> CPU number. */
static int irq_header(const char *line, unsigned **ret_cols, size_t *ret_n, unsigned *ret_max)
{
	_cleanup_free_ unsigned *cols = NULL;
	size_t n = 0, alloc = 0;
	unsigned max = 0;
	const char *p = line;

	for (;;) {
		uint64_t cpu;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || !*p)
			break;
		if (!startswith(p, "CPU"))
			return -EBADMSG;
		p += 3;
		if (next_u64(&p, &cpu) < 0 || cpu >= CPUSET_MAX_CPUS)
			return -EBADMSG;
		if (n == alloc) {
			unsigned *c = realloc(cols, (alloc = alloc * 2 + 16) * sizeof(unsigned));

			if (!c)
				return -ENOMEM;
			cols = c;
		}
		cols[n++] = (unsigned)cpu;
		max = MAX(max, (unsigned)cpu + 1);
	}
	if (n == 0)
		return -EBADMSG;
	*ret_cols = TAKE_PTR(cols);
	*ret_n = n;
	*ret_max = max;
	return 0;
}

static int irq_line(const char *p, const unsigned *cols, size_t n_cols, IrqTable *t)
{
	const char *colon = strchr(p, ':'), *end = p + strcspn(p, "\n");
	IrqLine *l, *nl;
	const char *name = p;

	if (!colon || colon > end)
		return -EBADMSG;
	while (*name == ' ')
		name++;
	nl = realloc(t->lines, (t->n + 1) * sizeof(IrqLine));
	if (!nl)
		return -ENOMEM;
	t->lines = nl;
	l = &t->lines[t->n];
	*l = (IrqLine) {};
	l->count = calloc(t->n_cpus, sizeof(uint64_t));
	if (!l->count)
		return -ENOMEM;
	t->n++;
	snprintf(l->name, sizeof(l->name), "%.*s", (int)MIN(colon - name, (long)sizeof(l->name) - 1), name);
	p = colon + 1;
	/* "ERR:" and "MIS:" have one count, not one per CPU */
	for (size_t i = 0; i < n_cols; i++) {
		uint64_t v;
		const char *q = p;

		if (next_u64(&q, &v) < 0 || q > end)
			break;
		l->count[cols[i]] = v;
		p = q;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	snprintf(l->desc, sizeof(l->desc), "%.*s", (int)MIN(end - p, (long)sizeof(l->desc) - 1), p);
	return 0;
}

int diagnose_parse_interrupts(const char *text, IrqTable *ret)
{
	_cleanup_free_ unsigned *cols = NULL;
	IrqTable t = {};
	size_t n_cols;
	const char *p;
	int r;

	r = irq_header(text, &cols, &n_cols, &t.n_cpus);
	if (r < 0)
		return r;
	for (p = next_line(text); *p; p = next_line(p)) {
		if (p[strspn(p, " \t")] == '\n')
			continue;
		r = irq_line(p, cols, n_cols, &t);
		if (r < 0) {
			irq_table_done(&t);
			return r;
		}
	}
	*ret = t;
	return 0;
}
