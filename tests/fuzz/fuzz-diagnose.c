/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parsers of topotunectl diagnose (agent/diagnose/diagnose-parse.c) and
 * the detectors that consume them.
 *
 * Input: text, up to the first NUL byte, given to all four parsers: as
 * /proc/stat, /proc/PID/task/TID/stat, .../status and /proc/interrupts.
 *
 * Properties: each parser accepts or says -EBADMSG/-ERANGE/-ENOENT/-ENOMEM,
 * and what it accepts is bounded (CPU numbers below CPUSET_MAX_CPUS,
 * terminated names). A sample compared with itself
 * shows nothing: two ticks of the same /proc/stat and task find no
 * stacking, the same /proc/interrupts twice no noisy isolated CPU.
 */
#include <errno.h>

#include "diagnose.h"
#include "fuzz.h"
#include "strutil.h"

static void stat_and_task(const char *text)
{
	DiagnoseTick ticks[2] = {};
	TaskSample t = {};
	CpuSet cores[1] = {};
	KernelCaps caps = {};
	Diagnosis d = {};
	int r, rt;

	r = diagnose_parse_stat(text, &ticks[0].stat);
	fuzz_assert(r >= 0 || r == -EBADMSG || r == -ENOMEM);
	if (r < 0)
		return;
	fuzz_assert(ticks[0].stat.n <= CPUSET_MAX_CPUS);
	fuzz_assert(diagnose_parse_stat(text, &ticks[1].stat) >= 0);
	ticks[1].usec = 500000;

	rt = diagnose_parse_task_stat(text, &t);
	fuzz_assert(rt >= 0 || rt == -EBADMSG);
	if (rt >= 0) {
		TaskSample u = t;

		fuzz_assert(memchr(t.comm, 0, sizeof(t.comm)));
		fuzz_assert(t.cpu >= 0 && (unsigned)t.cpu < CPUSET_MAX_CPUS);
		t.allowed = (CpuSet) {};
		u.allowed = (CpuSet) {};
		fuzz_assert(cpuset_add_range(&t.allowed, 0, 3) >= 0 && cpuset_add_range(&u.allowed, 0, 3) >= 0);
		ticks[0].tasks = malloc(sizeof(TaskSample));
		ticks[1].tasks = malloc(sizeof(TaskSample));
		fuzz_assert(ticks[0].tasks && ticks[1].tasks);
		ticks[0].tasks[0] = t;
		ticks[1].tasks[0] = u;
		ticks[0].n_tasks = ticks[1].n_tasks = 1;
	}
	fuzz_assert(cpuset_add_range(&cores[0], 0, 1) >= 0);
	fuzz_assert(diagnose_smt_stacking(&(StackingInput) { ticks, 2, cores, 1, 100, &caps }, &d) >= 0);
	/* the same counters twice: no CPU was busy, nothing stacked */
	fuzz_assert(d.n_findings == 0);
	diagnosis_done(&d);
	cpuset_done(&cores[0]);
	diagnose_tick_done(&ticks[0]);
	diagnose_tick_done(&ticks[1]);
}

static void status(const char *text)
{
	CpuSet s = {};
	int r = diagnose_parse_status_allowed(text, &s);

	fuzz_assert(r >= 0 || r == -EBADMSG || r == -ENOENT || r == -ENOMEM);
	if (r >= 0)
		fuzz_assert(cpuset_is_empty(&s) || (unsigned)cpuset_last(&s) < CPUSET_MAX_CPUS);
	cpuset_done(&s);
}

static void interrupts(const char *text)
{
	IrqTable a = {}, b = {};
	CpuSet iso = {};
	Diagnosis d = {};
	int r = diagnose_parse_interrupts(text, &a);

	fuzz_assert(r >= 0 || r == -EBADMSG || r == -ENOMEM);
	if (r < 0)
		return;
	fuzz_assert(a.n_cpus > 0 && a.n_cpus <= CPUSET_MAX_CPUS);
	for (size_t i = 0; i < a.n; i++) {
		fuzz_assert(memchr(a.lines[i].name, 0, sizeof(a.lines[i].name)));
		fuzz_assert(memchr(a.lines[i].desc, 0, sizeof(a.lines[i].desc)));
	}
	fuzz_assert(diagnose_parse_interrupts(text, &b) >= 0);
	fuzz_assert(cpuset_add_range(&iso, 0, 7) >= 0);
	fuzz_assert(diagnose_isolation(&(IsolationInput) { &iso, NULL, &a, &b, NULL, 0, 1.0 }, &d) >= 0);
	fuzz_assert(d.n_findings == 0);
	diagnosis_done(&d);
	cpuset_done(&iso);
	irq_table_done(&a);
	irq_table_done(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size);

	stat_and_task(text);
	status(text);
	interrupts(text);
	free(text);
	return 0;
}
