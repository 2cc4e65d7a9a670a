/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sampling of topotunectl diagnose and topotuned's Diagnose(): what
 * the detectors need, read below the root fd, read-only, as an ordinary
 * user where the files allow (what could not be read is listed, never
 * guessed). A tick reads /proc/stat and each process's /proc/PID/stat
 * (a multi-threaded one's /proc/PID/task/TID/stat), and the status of
 * the runnable ones; kernel threads, found in the first tick, are skipped
 * after it (no detector counts them: per-CPU ones cannot move, and the
 * isolation check leaves them to the kernel). The first and the last tick
 * read the scheduler counters and /proc/interrupts. The caller owns the clock:
 * topotunectl sleeps between ticks, topotuned arms a timer.
 */
#include <dirent.h>
#include <fcntl.h>

#include "diagnose.h"
#include "fileio.h"
#include "strutil.h"

struct DiagnoseSampler {
	int root_fd;                /* not owned */
	DiagnoseRequest req;
	uint64_t start;
	DiagnoseTick *ticks;
	size_t n_ticks;
	KernelCounters *counters;   /* at the first tick */
	IrqTable irqs;              /* at the first tick */
	bool have_irqs;
	unsigned user_hz;
	char **unreadable;
	int *kthreads;              /* PIDs of kernel threads seen in the first tick, sorted */
	size_t n_kthreads;
};

static void unreadable(DiagnoseSampler *s, const char *path, int r)
{
	_cleanup_free_ char *line = strprintf("/%s: %s", path, strerror(-r));

	if (line && !strv_contains(s->unreadable, line))
		(void)strv_push(&s->unreadable, TAKE_PTR(line));
}

DiagnoseSampler *diagnose_sampler_free(DiagnoseSampler *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n_ticks; i++)
		diagnose_tick_done(&s->ticks[i]);
	free(s->ticks);
	kernel_counters_free(s->counters);
	irq_table_done(&s->irqs);
	strv_free(s->unreadable);
	free(s->kthreads);
	free(s);
	return NULL;
}

static int read_stat(DiagnoseSampler *s, StatSample *ret)
{
	_cleanup_free_ char *text = NULL;
	int r;

	r = read_file_at(s->root_fd, "proc/stat", 0, &text, NULL);
	if (r < 0) {
		unreadable(s, "proc/stat", r);
		return r;
	}
	return diagnose_parse_stat(text, ret);
}

static int tasks_push(DiagnoseTick *t, TaskSample *ts)
{
	TaskSample *n = realloc(t->tasks, (t->n_tasks + 1) * sizeof(TaskSample));

	if (!n) {
		task_sample_done(ts);
		return -ENOMEM;
	}
	t->tasks = n;
	t->tasks[t->n_tasks++] = *ts;
	return 0;
}

/* A thread's stat line in @buf: kept when runnable, with its allowed CPUs from @status_path. */
static int keep_task(DiagnoseSampler *s, int proc_fd, const char *buf, int tgid, const char *status_path,
		     DiagnoseTick *t, TaskSample *ret_parsed)
{
	_cleanup_free_ char *status = NULL;
	TaskSample ts;
	int r;

	if (diagnose_parse_task_stat(buf, &ts) < 0)
		return 0;
	*ret_parsed = ts;
	if (ts.state != 'R' || ts.kthread)
		return 0;
	ts.tgid = tgid;
	r = read_file_at(proc_fd, status_path, 0, &status, NULL);
	if (r >= 0)
		(void)diagnose_parse_status_allowed(status, &ts.allowed);
	else if (r != -ENOENT && r != -ESRCH)
		unreadable(s, "proc/PID/task/TID/status", r);
	return tasks_push(t, &ts);
}

static bool numeric(const char *name)
{
	return name[0] && strspn(name, "0123456789") == strlen(name);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static bool known_kthread(const DiagnoseSampler *s, int pid)
{
	return s->n_kthreads > 0 && bsearch(&pid, s->kthreads, s->n_kthreads, sizeof(int), cmp_int);
}

/* The threads of a multi-threaded process. */
static int read_threads(DiagnoseSampler *s, int proc_fd, const char *pid, int tgid, DiagnoseTick *t)
{
	_cleanup_close_ int task_fd = -EBADF;
	char path[96], status_path[96], buf[2048];
	struct dirent *te;
	DIR *td;
	int r = 0;

	snprintf(path, sizeof(path), "%s/task", pid);
	task_fd = open_beneath(proc_fd, path, O_RDONLY | O_DIRECTORY, 0, FILEIO_READ);
	if (task_fd < 0)
		return 0;   /* gone since the listing */
	td = fdopendir(TAKE_FD(task_fd));
	if (!td)
		return 0;
	while (r >= 0 && (te = readdir(td))) {
		TaskSample parsed;

		if (!numeric(te->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/task/%s/stat", pid, te->d_name);
		if (read_line_buf_at(proc_fd, path, buf, sizeof(buf)) < 0)
			continue;
		snprintf(status_path, sizeof(status_path), "%s/task/%s/status", pid, te->d_name);
		r = keep_task(s, proc_fd, buf, tgid, status_path, t, &parsed);
	}
	closedir(td);
	return r;
}

/* One process: its own stat when it has one thread, else each thread's. */
static int read_process(DiagnoseSampler *s, int proc_fd, const char *pid, bool first, DiagnoseTick *t)
{
	char path[64], status_path[64], buf[2048];
	TaskSample parsed = {};
	int tgid, r;

	if (safe_atoi(pid, &tgid) < 0 || (!first && known_kthread(s, tgid)))
		return 0;
	snprintf(path, sizeof(path), "%s/stat", pid);
	if (read_line_buf_at(proc_fd, path, buf, sizeof(buf)) < 0)
		return 0;   /* gone since the listing, or not ours to read */
	snprintf(status_path, sizeof(status_path), "%s/status", pid);
	if (diagnose_parse_task_stat(buf, &parsed) < 0)
		return 0;
	if (parsed.kthread) {
		if (first) {
			int *n = realloc(s->kthreads, (s->n_kthreads + 1) * sizeof(int));

			if (!n)
				return -ENOMEM;
			s->kthreads = n;
			s->kthreads[s->n_kthreads++] = tgid;
		}
		return 0;
	}
	if (parsed.threads > 1)
		return read_threads(s, proc_fd, pid, tgid, t);
	r = keep_task(s, proc_fd, buf, tgid, status_path, t, &parsed);
	return r;
}

static int read_tasks(DiagnoseSampler *s, DiagnoseTick *t)
{
	_cleanup_close_ int proc_fd = -EBADF;
	bool first = s->n_ticks == 0;
	struct dirent *de;
	DIR *d;
	int r = 0, fd;

	proc_fd = open_beneath(s->root_fd, "proc", O_RDONLY | O_DIRECTORY, 0, FILEIO_READ);
	if (proc_fd < 0) {
		unreadable(s, "proc", proc_fd);
		return proc_fd;
	}
	fd = fcntl(proc_fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return negative_errno();
	d = fdopendir(fd);
	if (!d) {
		safe_close(fd);
		return negative_errno();
	}
	while (r >= 0 && (de = readdir(d)))
		if (numeric(de->d_name))
			r = read_process(s, proc_fd, de->d_name, first, t);
	closedir(d);
	if (first && s->n_kthreads > 1)
		qsort(s->kthreads, s->n_kthreads, sizeof(int), cmp_int);
	return r;
}

int diagnose_sampler_tick(DiagnoseSampler *s, uint64_t now_usec)
{
	DiagnoseTick t = { .usec = now_usec - s->start }, *n;
	int r;

	if (s->req.want[DIAGNOSE_SMT_STACKING] || s->req.want[DIAGNOSE_ISOLATION_NOISY]) {
		r = read_stat(s, &t.stat);
		if (r == -ENOMEM)
			return r;
		r = read_tasks(s, &t);
		if (r == -ENOMEM) {
			diagnose_tick_done(&t);
			return r;
		}
	}
	n = realloc(s->ticks, (s->n_ticks + 1) * sizeof(DiagnoseTick));
	if (!n) {
		diagnose_tick_done(&t);
		return -ENOMEM;
	}
	s->ticks = n;
	s->ticks[s->n_ticks++] = t;
	return 0;
}

static int read_interrupts(DiagnoseSampler *s, IrqTable *ret)
{
	_cleanup_free_ char *text = NULL;
	int r;

	r = read_file_at(s->root_fd, "proc/interrupts", 0, &text, NULL);
	if (r < 0) {
		unreadable(s, "proc/interrupts", r);
		return r;
	}
	r = diagnose_parse_interrupts(text, ret);
	if (r < 0)
		unreadable(s, "proc/interrupts", r);
	return r;
}

int diagnose_sampler_new(int root_fd, const DiagnoseRequest *req, uint64_t now_usec, DiagnoseSampler **ret)
{
	_cleanup_(diagnose_sampler_freep) DiagnoseSampler *s = NULL;
	long hz = sysconf(_SC_CLK_TCK);
	int r;

	s = calloc(1, sizeof(DiagnoseSampler));
	if (!s)
		return -ENOMEM;
	s->root_fd = root_fd;
	s->req = *req;
	s->start = now_usec;
	s->user_hz = hz > 0 ? (unsigned)hz : 100;
	if (req->want[DIAGNOSE_NEWIDLE_CROSS_NODE]) {
		r = kernel_counters_load(root_fd, &s->counters);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			unreadable(s, "proc/schedstat", r);
	}
	if (req->want[DIAGNOSE_ISOLATION_NOISY])
		s->have_irqs = read_interrupts(s, &s->irqs) >= 0;
	r = diagnose_sampler_tick(s, now_usec);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}

/* ---- running the detectors ---- */

static int not_checked(Diagnosis *d, DiagnoseKind k, const char *why)
{
	return strdup_to(&d->not_checked[k], why);
}

static int run_stacking(DiagnoseSampler *s, const Topology *t, const KernelCaps *caps, Diagnosis *d)
{
	_cleanup_free_ CpuSet *cores = NULL;
	StackingInput in = { .ticks = s->ticks, .n_ticks = s->n_ticks, .user_hz = s->user_hz, .caps = caps };

	if (s->n_ticks < 2 || s->ticks[0].stat.n == 0)
		return not_checked(d, DIAGNOSE_SMT_STACKING, s->n_ticks < 2 ? "fewer than two samples (--duration too short)"
									    : "no per-CPU times in /proc/stat");
	cores = calloc(t->cores.n ?: 1, sizeof(CpuSet));
	if (!cores)
		return -ENOMEM;
	for (size_t i = 0; i < t->cores.n; i++)
		cores[i] = t->cores.items[i].cpus;   /* borrowed, not copied */
	in.cores = cores;
	in.n_cores = t->cores.n;
	return diagnose_smt_stacking(&in, d);
}

static double sampled_seconds(const DiagnoseSampler *s)
{
	return s->n_ticks ? (double)s->ticks[s->n_ticks - 1].usec / 1e6 : 0;
}

static int run_newidle(DiagnoseSampler *s, const LiveLayout *live, const Topology *t, const CpuIdentity *id,
		       const KernelCaps *caps, Diagnosis *d)
{
	_cleanup_(kernel_counters_freep) KernelCounters *after = NULL;
	_cleanup_free_ bool *cross = NULL;
	ProfileSettings none = {};
	PlanInput pin = { id, t, caps, &none, "diagnose" };
	NewidleInput in = { .seconds = sampled_seconds(s), .caps = caps };
	int r;

	if (!s->counters || s->counters->schedstat_version < 16 || s->counters->schedstat_version > 17 ||
	    s->counters->n_domains == 0) {
		int v = s->counters ? s->counters->schedstat_version : 0;
		_cleanup_free_ char *why = v ? strprintf("needs /proc/schedstat version 16 or 17 with domain lines "
							 "(here: version %d%s)",
							 v, v == 16 || v == 17 ? " without domain lines" : "")
					     : strdup("needs /proc/schedstat version 16 or 17 with domain lines (here: none)");

		return why ? not_checked(d, DIAGNOSE_NEWIDLE_CROSS_NODE, why) : -ENOMEM;
	}
	r = kernel_counters_load(s->root_fd, &after);
	if (r < 0)
		return r == -ENOMEM ? r : not_checked(d, DIAGNOSE_NEWIDLE_CROSS_NODE, "/proc/schedstat unreadable at the end");
	r = diagnose_cross_node_levels(live, t, &cross, &in.n_cross_node);
	if (r < 0)
		return r;
	in.before = s->counters;
	in.after = after;
	in.cross_node = cross;
	in.relax_level = plan_auto_relax_level(&pin);
	if (in.relax_level < -1)
		in.relax_level = -1;
	return diagnose_newidle(&in, d);
}

static int run_isolation(DiagnoseSampler *s, const KernelCaps *caps, Diagnosis *d)
{
	_cleanup_(irq_table_done) IrqTable after = {};
	IsolationInput in = {
		.isolated = &caps->isolated,
		.isolated_source = "/sys/fs/cgroup/cpuset.cpus.isolated",
		.ticks = s->ticks,
		.n_ticks = s->n_ticks,
		.seconds = sampled_seconds(s),
	};

	if (!caps->isolated_known)
		return not_checked(d, DIAGNOSE_ISOLATION_NOISY,
				   "no /sys/fs/cgroup/cpuset.cpus.isolated (cgroup v2 cpuset partitions)");
	if (s->have_irqs && read_interrupts(s, &after) >= 0) {
		in.before = &s->irqs;
		in.after = &after;
	}
	return diagnose_isolation(&in, d);
}

int diagnose_run(int root_fd, const DiagnoseRequest *req, DiagnoseSampler *s, const Topology *topology,
		 const CpuIdentity *identity, const KernelCaps *caps, Diagnosis *d)
{
	_cleanup_(live_layout_freep) LiveLayout *live = NULL;
	int r = 0;

	if (live_layout_load(root_fd, &live) < 0)
		live = NULL;
	for (DiagnoseKind k = 0; r >= 0 && k < _DIAGNOSE_KIND_MAX; k++) {
		if (!req->want[k])
			continue;
		if (diagnose_kind_needs_live(k) && !s) {
			r = not_checked(d, k, "needs a live machine: samples over --duration (none taken on a recorded "
					      "tree, --root)");
			continue;
		}
		switch (k) {
		case DIAGNOSE_SMT_STACKING:
			r = run_stacking(s, topology, caps, d);
			break;
		case DIAGNOSE_NUMA_LEVELS:
			r = diagnose_numa_levels(&(LevelsInput) { topology, identity, caps, live }, d);
			break;
		case DIAGNOSE_NEWIDLE_CROSS_NODE:
			r = run_newidle(s, live, topology, identity, caps, d);
			break;
		case DIAGNOSE_ISOLATION_NOISY:
			r = run_isolation(s, caps, d);
			break;
		case DIAGNOSE_SCHED_EXT:
			r = diagnose_sched_ext(caps, d);
			break;
		case DIAGNOSE_KERNEL:
			r = diagnose_kernel(caps, topology, identity, d);
			break;
		default:
			break;
		}
	}
	if (s) {
		d->duration = sampled_seconds(s);
		STRV_FOREACH(u, s->unreadable)
			if (r >= 0)
				r = strv_extend(&d->unreadable, *u);
	}
	return r;
}
