/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workload rules: matching table, rule validation, the tracker's timelines
 * (switch at once, return only after the hold-down, one switch per burst
 * of 10,000 short-lived execs), its pid table against a reference, and
 * the resolver and rescan against a fake root with proc/PID/{exe,comm,cgroup}.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "fileio.h"
#include "procevents.h"
#include "profile.h"
#include "strutil.h"
#include "test.h"
#include "workload.h"

#define SEC 1000000ULL
#define HOLD (10 * SEC)

/* Rules in priority order, as the daemon adds profiles. */
static WorkloadMatcher *make_matcher(bool catch_all)
{
	WorkloadMatcher *m = NULL;

	check(workload_matcher_new(&m) == 0);
	check(workload_matcher_add(m, WORKLOAD_EXE, "/usr/sbin/mysqld", "database") == 0);      /* 0 */
	check(workload_matcher_add(m, WORKLOAD_COMM, "postgres", "database") == 0);             /* 1 */
	check(workload_matcher_add(m, WORKLOAD_CGROUP, "/system.slice/clickhouse-server.service/",
				   "database") == 0);                                              /* 2 */
	check(workload_matcher_add(m, WORKLOAD_COMM, "mpirun", "hpc") == 0);                    /* 3 */
	check(workload_matcher_add(m, WORKLOAD_CGROUP, "/hpc.slice", "hpc") == 0);              /* 4 */
	if (catch_all)
		check(workload_matcher_add(m, WORKLOAD_CGROUP, "/", "latency") == 0);          /* 5 */
	return m;
}

static const struct {
	const char *exe, *comm, *cgroup;
	int rule;
	const char *profile;
} match_cases[] = {
	{ "/usr/sbin/mysqld", "mysqld", "/system.slice/mysql.service", 0, "database" },
	{ "/usr/sbin/mysqld2", "mysqld", NULL, -ENOENT, NULL },
	{ "/usr/lib/postgresql/15/bin/postgres", "postgres", NULL, 1, "database" },
	{ NULL, "postgres", NULL, 1, "database" },
	{ NULL, "Postgres", NULL, -ENOENT, NULL },
	{ "/usr/bin/clickhouse", "clickhouse-serv", "/system.slice/clickhouse-server.service", 2, "database" },
	{ "/usr/bin/clickhouse", "clickhouse-serv", "/system.slice/clickhouse-server.service/sub", 2, "database" },
	{ "/usr/bin/x", "x", "/system.slice/clickhouse-server.service2", -ENOENT, NULL },
	{ "/usr/bin/x", "x", "/system.slice", -ENOENT, NULL },
	{ "/usr/bin/mpirun", "mpirun", "/user.slice", 3, "hpc" },
	{ "/opt/app/solver", "solver", "/hpc.slice/job-17.scope", 4, "hpc" },
	{ "/opt/app/solver", "solver", "/hpc.slicer", -ENOENT, NULL },
	/* The first rule wins: exe of database before comm of hpc. */
	{ "/usr/sbin/mysqld", "mpirun", "/hpc.slice", 0, "database" },
	{ NULL, "mpirun", "/system.slice/clickhouse-server.service", 2, "database" },
	{ NULL, NULL, NULL, -ENOENT, NULL },
};

static void test_match(void)
{
	_cleanup_(workload_matcher_freep) WorkloadMatcher *m = make_matcher(false);
	_cleanup_(workload_matcher_freep) WorkloadMatcher *all = make_matcher(true);

	check_int(m->n_rules, 5);
	check_int(m->needs, WORKLOAD_NEED_EXE | WORKLOAD_NEED_COMM | WORKLOAD_NEED_CGROUP);
	check_str(m->rules[2].text, "cgroup:/system.slice/clickhouse-server.service");
	check_str(m->rules[3].text, "comm:mpirun");

	for (size_t i = 0; i < ELEMENTSOF(match_cases); i++) {
		char ctx[64];
		int r = workload_match_rule(m, match_cases[i].exe, match_cases[i].comm,
					    match_cases[i].cgroup);

		snprintf(ctx, sizeof(ctx), "match case %zu", i);
		check_ctx(ctx, r == match_cases[i].rule);
		if (r != match_cases[i].rule)
			fprintf(stderr, "  [%s] got %d, want %d\n", ctx, r, match_cases[i].rule);
		check_ctx(ctx, streq_ptr(workload_match(m, match_cases[i].exe, match_cases[i].comm,
							match_cases[i].cgroup), match_cases[i].profile));
	}

	/* "/" takes every process that has a cgroup, but only last. */
	check_int(workload_match_rule(all, "/bin/sh", "sh", "/user.slice/user-0.slice"), 5);
	check_int(workload_match_rule(all, "/bin/sh", "sh", "/"), 5);
	check_int(workload_match_rule(all, "/bin/sh", "sh", NULL), -ENOENT);
	check_int(workload_match_rule(all, NULL, "postgres", "/"), 1);
}

static void test_rule_validation(void)
{
	static const struct {
		WorkloadRuleKind kind;
		const char *value, *profile;
		int ret;
	} cases[] = {
		{ WORKLOAD_EXE, "/usr/bin/x", "p", 0 },
		{ WORKLOAD_EXE, "usr/bin/x", "p", -EINVAL },
		{ WORKLOAD_EXE, "", "p", -EINVAL },
		{ WORKLOAD_COMM, "fifteen-chars-x", "p", 0 },
		{ WORKLOAD_COMM, "sixteen-chars-xx", "p", -EINVAL },
		{ WORKLOAD_COMM, "", "p", -EINVAL },
		{ WORKLOAD_CGROUP, "/", "p", 0 },
		{ WORKLOAD_CGROUP, "system.slice", "p", -EINVAL },
		{ WORKLOAD_EXE, "/usr/bin/x", "../etc", -EINVAL },
		{ WORKLOAD_EXE, "/usr/bin/x", "", -EINVAL },
		{ WORKLOAD_EXE, "/usr/bin/x", NULL, -EINVAL },
		{ _WORKLOAD_KIND_MAX, "/usr/bin/x", "p", -EINVAL },
	};
	_cleanup_(workload_matcher_freep) WorkloadMatcher *m = NULL;
	size_t ok = 0;

	check(workload_matcher_new(&m) == 0);
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		int r = workload_matcher_add(m, cases[i].kind, cases[i].value, cases[i].profile);

		check_ctx(strempty(cases[i].value), r == cases[i].ret);
		if (r == 0)
			ok++;
	}
	check_int(m->n_rules, ok);
	check_str(workload_rule_kind_to_string(WORKLOAD_CGROUP), "cgroup");
	check_int(workload_rule_kind_from_string("comm"), WORKLOAD_COMM);
}

static void test_from_profile(void)
{
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_(workload_matcher_freep) WorkloadMatcher *m = NULL;
	_cleanup_free_ char *err = NULL;
	StrBuf b = {};
	_cleanup_free_ char *texts = NULL;

	check(profile_parse_string("[workload]\n"
				   "exe = /usr/sbin/mysqld /usr/bin/clickhouse-server\n"
				   "comm = postgres\n"
				   "cgroup = /db.slice\n",
				   "/usr/lib/topotune/profiles/database.ini", &p, &err) == 0);
	if (!p) {
		fprintf(stderr, "profile: %s\n", strna(err));
		return;
	}
	check(workload_matcher_new(&m) == 0);
	check(workload_matcher_add_profile(m, p) == 0);
	for (size_t i = 0; i < m->n_rules; i++)
		strbuf_appendf(&b, "%s -> %s\n", m->rules[i].text, m->rules[i].profile);
	check(strbuf_steal(&b, &texts) == 0);
	check_str(texts,
		  "exe:/usr/sbin/mysqld -> database\n"
		  "exe:/usr/bin/clickhouse-server -> database\n"
		  "comm:postgres -> database\n"
		  "cgroup:/db.slice -> database\n");
}

/* ---- tracker timelines ---- */

typedef struct Timeline {
	WorkloadTracker *t;
	unsigned switches;
	const char *profile;     /* wanted now; NULL: configured */
	uint64_t next;
} Timeline;

static void tl_eval(Timeline *tl, uint64_t now)
{
	WorkloadDecision d;
	int r = workload_tracker_evaluate(tl->t, now, &d);

	check(r >= 0);
	if (r > 0)
		tl->switches++;
	tl->profile = d.profile;
	tl->next = d.next_usec;
}

static void tl_init(Timeline *tl)
{
	*tl = (Timeline) {};
	check(workload_tracker_new(make_matcher(false), HOLD, &tl->t) == 0);
}

static void test_timeline_basic(void)
{
	Timeline tl;
	WorkloadDecision d;

	tl_init(&tl);
	tl_eval(&tl, 0);
	check_int(tl.switches, 0);
	check(tl.profile == NULL);
	check(tl.next == WORKLOAD_NEVER);

	/* mysqld starts: switch at once. */
	check(workload_tracker_exec(tl.t, 1000, 0, 1 * SEC) == 0);
	tl_eval(&tl, 1 * SEC);
	check_int(tl.switches, 1);
	check_str(tl.profile, "database");
	check_int(workload_tracker_count(tl.t, 0), 1);
	check(workload_tracker_evaluate(tl.t, 1 * SEC, &d) == 0);
	check_str(d.rule_text, "exe:/usr/sbin/mysqld");

	/* It exits at 5 s: stay for the hold-down, 10 s. */
	workload_tracker_exit(tl.t, 1000, 5 * SEC);
	check_int(workload_tracker_count(tl.t, 0), 0);
	tl_eval(&tl, 5 * SEC);
	check_int(tl.switches, 1);
	check_str(tl.profile, "database");
	check_int(tl.next, 15 * SEC);
	tl_eval(&tl, 15 * SEC - 1);
	check_int(tl.switches, 1);
	check_str(tl.profile, "database");
	tl_eval(&tl, 15 * SEC);
	check_int(tl.switches, 2);
	check(tl.profile == NULL);
	check(tl.next == WORKLOAD_NEVER);
	tl_eval(&tl, 100 * SEC);
	check_int(tl.switches, 2);

	/* A restart inside the hold-down: no switch at all. */
	check(workload_tracker_exec(tl.t, 2000, 0, 200 * SEC) == 0);
	tl_eval(&tl, 200 * SEC);
	check_int(tl.switches, 3);
	workload_tracker_exit(tl.t, 2000, 201 * SEC);
	tl_eval(&tl, 201 * SEC);
	check(workload_tracker_exec(tl.t, 2001, 0, 209 * SEC) == 0);
	tl_eval(&tl, 209 * SEC);
	tl_eval(&tl, 230 * SEC);
	check_int(tl.switches, 3);
	check_str(tl.profile, "database");

	/* The tracked process execs something else: it no longer counts. */
	check(workload_tracker_exec(tl.t, 2001, -1, 240 * SEC) == 0);
	check_int(workload_tracker_n_tracked(tl.t), 0);
	tl_eval(&tl, 245 * SEC);
	check_str(tl.profile, "database");
	tl_eval(&tl, 250 * SEC);
	check(tl.profile == NULL);
	check_int(tl.switches, 4);

	check(workload_tracker_exec(tl.t, 0, 0, 0) == -EINVAL);
	check(workload_tracker_exec(tl.t, 5, 99, 0) == -EINVAL);
	workload_tracker_free(tl.t);
}

static void test_timeline_priority(void)
{
	Timeline tl;

	tl_init(&tl);
	/* hpc job (rule 3) runs; then a database (rule 0) starts. */
	check(workload_tracker_exec(tl.t, 300, 3, 0) == 0);
	tl_eval(&tl, 0);
	check_str(tl.profile, "hpc");
	check(workload_tracker_exec(tl.t, 400, 0, 1 * SEC) == 0);
	tl_eval(&tl, 1 * SEC);
	check_str(tl.profile, "database");
	check_int(tl.switches, 2);

	/* The database goes; hpc takes over only after the hold-down. */
	workload_tracker_exit(tl.t, 400, 2 * SEC);
	tl_eval(&tl, 2 * SEC);
	check_str(tl.profile, "database");
	tl_eval(&tl, 12 * SEC);
	check_str(tl.profile, "hpc");
	check_int(tl.switches, 3);

	/* A lower rule appearing never displaces a higher one. */
	check(workload_tracker_exec(tl.t, 500, 4, 13 * SEC) == 0);
	tl_eval(&tl, 13 * SEC);
	check_str(tl.profile, "hpc");
	check_int(tl.switches, 3);

	/* A pid moves from one rule to another by exec. */
	check(workload_tracker_exec(tl.t, 300, 1, 14 * SEC) == 0);
	check_int(workload_tracker_count(tl.t, 3), 0);
	check_int(workload_tracker_count(tl.t, 1), 1);
	tl_eval(&tl, 14 * SEC);
	check_str(tl.profile, "database");
	check_int(tl.switches, 4);
	workload_tracker_free(tl.t);
}

static double now_cpu_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 10,000 short-lived processes in 1 s, each exec+exit evaluated on its own. */
static void test_timeline_burst(void)
{
	Timeline tl;
	ProcEvent ev;
	double cpu;

	tl_init(&tl);
	cpu = now_cpu_sec();
	for (unsigned i = 0; i < 10000; i++) {
		uint64_t at = 5 * SEC + (uint64_t)i * 100;    /* 100 us apart */
		pid_t pid = (pid_t)(20000 + i);

		check(workload_tracker_exec(tl.t, pid, 1, at) == 0);   /* comm postgres */
		tl_eval(&tl, at);
		ev = (ProcEvent) { .type = PROCEV_EXIT, .pid = pid, .tgid = pid };
		check(workload_tracker_handle_event(tl.t, -EBADF, &ev, at + 50) == 0);
		tl_eval(&tl, at + 50);
	}
	cpu = now_cpu_sec() - cpu;
	check_int(tl.switches, 1);
	check_str(tl.profile, "database");
	check_int(workload_tracker_n_tracked(tl.t), 0);
	/* Last exit at 5 s + 999,950 us: back exactly one hold-down later. */
	check_int(tl.next, 5 * SEC + 999950 + HOLD);
	tl_eval(&tl, 5 * SEC + 999950 + HOLD - 1);
	check_int(tl.switches, 1);
	tl_eval(&tl, 5 * SEC + 999950 + HOLD);
	check_int(tl.switches, 2);
	check(tl.profile == NULL);
	printf("tracker: 10000 exec+exit with evaluation: %.2f ms CPU\n", cpu * 1000);
	workload_tracker_free(tl.t);

	/* The same burst of a program no rule names: nothing at all. */
	tl_init(&tl);
	for (unsigned i = 0; i < 10000; i++) {
		uint64_t at = (uint64_t)i * 100;

		check(workload_tracker_exec(tl.t, (pid_t)(20000 + i), -1, at) == 0);
		tl_eval(&tl, at);
		workload_tracker_exit(tl.t, (pid_t)(20000 + i), at + 50);
		tl_eval(&tl, at + 50);
	}
	tl_eval(&tl, 100 * SEC);
	check_int(tl.switches, 0);
	check_int(workload_tracker_n_tracked(tl.t), 0);
	workload_tracker_free(tl.t);
}

/* The pid table against a plain array, through grows and deletions. */
static void test_pid_table(void)
{
	enum { N = 1 << 17 };
	static signed char ref[N];
	unsigned counts[5] = {}, bad = 0;
	WorkloadTracker *t = NULL;
	uint32_t x = 12345;

	check(workload_tracker_new(make_matcher(false), HOLD, &t) == 0);
	memset(ref, -1, sizeof(ref));
	for (unsigned i = 0; i < 400000; i++) {
		pid_t pid;
		int rule;

		x = x * 1103515245U + 12345U;
		pid = (pid_t)(1 + (x >> 8) % (N - 1));
		x = x * 1103515245U + 12345U;
		if ((x >> 16) % 3 == 0) {
			workload_tracker_exit(t, pid, i);
			if (ref[pid] >= 0)
				counts[ref[pid]]--;
			ref[pid] = -1;
		} else {
			rule = (int)((x >> 20) % 6) - 1;
			check(workload_tracker_exec(t, pid, rule, i) == 0);
			if (ref[pid] >= 0)
				counts[ref[pid]]--;
			ref[pid] = (signed char)rule;
			if (rule >= 0)
				counts[rule]++;
		}
	}
	for (size_t r = 0; r < 5; r++)
		if (workload_tracker_count(t, r) != counts[r])
			bad++;
	check_int(bad, 0);
	{
		size_t n = 0;

		for (size_t p = 0; p < N; p++)
			n += ref[p] >= 0;
		check_int(workload_tracker_n_tracked(t), n);
	}
	/* Exit everything the reference knows: the table must end empty. */
	for (size_t p = 1; p < N; p++)
		workload_tracker_exit(t, (pid_t)p, 0);
	check_int(workload_tracker_n_tracked(t), 0);
	for (size_t r = 0; r < 5; r++)
		check_int(workload_tracker_count(t, r), 0);
	workload_tracker_free(t);
}

/* ---- resolver and rescan on a fake root ---- */

static void put(int root, const char *path, const char *text)
{
	_cleanup_close_ int fd = openat(root, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	check(fd >= 0);
	check(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
}

static void make_proc(int root, int pid, const char *exe, const char *comm, const char *cgroup)
{
	char p[128];

	snprintf(p, sizeof(p), "proc/%d", pid);
	check(mkdirat(root, p, 0755) == 0);
	if (exe) {
		snprintf(p, sizeof(p), "proc/%d/exe", pid);
		check(symlinkat(exe, root, p) == 0);
	}
	if (comm) {
		snprintf(p, sizeof(p), "proc/%d/comm", pid);
		put(root, p, comm);
	}
	if (cgroup) {
		snprintf(p, sizeof(p), "proc/%d/cgroup", pid);
		put(root, p, cgroup);
	}
}

static void remove_proc(int root, int pid)
{
	static const char *const files[] = { "exe", "comm", "cgroup" };
	char p[128];

	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		snprintf(p, sizeof(p), "proc/%d/%s", pid, files[i]);
		(void)unlinkat(root, p, 0);
	}
	snprintf(p, sizeof(p), "proc/%d", pid);
	check(unlinkat(root, p, AT_REMOVEDIR) == 0);
}

static void test_resolver(void)
{
	char dir[] = "/tmp/test-workload.XXXXXX";
	_cleanup_close_ int root = -EBADF;
	WorkloadProcess wp;
	WorkloadTracker *t = NULL;
	WorkloadDecision d;
	ProcEvent ev;
	unsigned all = WORKLOAD_NEED_EXE | WORKLOAD_NEED_COMM | WORKLOAD_NEED_CGROUP;

	check(mkdtemp(dir) != NULL);
	check(root_open(dir, &root) == 0);
	root = safe_close(root);
	root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	check(root >= 0);
	check(mkdirat(root, "proc", 0755) == 0);

	make_proc(root, 100, "/usr/sbin/mysqld", "mysqld\n", "0::/system.slice/mysql.service\n");
	make_proc(root, 200, "/usr/lib/postgresql/15/bin/postgres (deleted)", "postgres\n",
		  "12:cpuset:/\n11:memory:/system.slice/pg.service\n0::/system.slice/pg.service\n");
	make_proc(root, 300, NULL, "postgres\n", "0::/\n");     /* no exe: a zombie */
	make_proc(root, 400, "/usr/bin/mpirun", "mpirun\n", "1:name=systemd:/user.slice\n");  /* v1 only */
	make_proc(root, 500, "/bin/sleep", "sleep\n", "0::/hpc.slice/job-1.scope\n");
	check(mkdirat(root, "proc/self", 0755) == 0);        /* not a pid: skipped */

	check(workload_resolve(root, 100, all, &wp) == 0);
	check_str(wp.exe, "/usr/sbin/mysqld");
	check_str(wp.comm, "mysqld");
	check_str(wp.cgroup, "/system.slice/mysql.service");

	check(workload_resolve(root, 200, all, &wp) == 0);
	check_str(wp.exe, "/usr/lib/postgresql/15/bin/postgres");
	check_str(wp.cgroup, "/system.slice/pg.service");

	check(workload_resolve(root, 400, all, &wp) == 0);
	check_str(wp.cgroup, "");

	/* A zombie: no exe, but comm and cgroup rules still see it. */
	check(workload_resolve(root, 300, WORKLOAD_NEED_COMM, &wp) == 0);
	check_str(wp.comm, "postgres");
	check_str(wp.exe, "");
	check(workload_resolve(root, 300, all, &wp) == 0);
	check_str(wp.exe, "");
	check_str(wp.comm, "postgres");
	check_int(workload_resolve(root, 300, WORKLOAD_NEED_EXE, &wp), -ESRCH);
	check_int(workload_resolve(root, 999, all, &wp), -ESRCH);
	check_int(workload_resolve(root, 0, all, &wp), -EINVAL);

	/* Rescan: mysqld (rule 0), postgres and the zombie (1), mpirun (3),
	 * sleep in hpc.slice (4). */
	check(workload_tracker_new(make_matcher(false), HOLD, &t) == 0);
	check(workload_tracker_rescan(t, root, 1 * SEC) == 0);
	check_int(workload_tracker_n_tracked(t), 5);
	check_int(workload_tracker_count(t, 0), 1);
	check_int(workload_tracker_count(t, 1), 2);
	check_int(workload_tracker_count(t, 3), 1);
	check_int(workload_tracker_count(t, 4), 1);
	check(workload_tracker_evaluate(t, 1 * SEC, &d) == 1);
	check_str(d.profile, "database");

	/* mysqld and postgres vanished without exit events (overrun). */
	remove_proc(root, 100);
	remove_proc(root, 200);
	remove_proc(root, 300);
	check(workload_tracker_rescan(t, root, 2 * SEC) == 0);
	check_int(workload_tracker_n_tracked(t), 2);
	check_int(workload_tracker_count(t, 1), 0);
	check(workload_tracker_evaluate(t, 2 * SEC, &d) == 0);
	check_str(d.profile, "database");
	check_int(d.next_usec, 12 * SEC);
	check(workload_tracker_evaluate(t, 12 * SEC, &d) == 1);
	check_str(d.profile, "hpc");

	/* Events: an exec that is already gone is ignored; a thread's exit is
	 * not the process's. */
	ev = (ProcEvent) { .type = PROCEV_EXEC, .pid = 777, .tgid = 777 };
	check(workload_tracker_handle_event(t, root, &ev, 13 * SEC) == 0);
	make_proc(root, 600, "/usr/sbin/mysqld", "mysqld\n", "0::/\n");
	ev = (ProcEvent) { .type = PROCEV_EXEC, .pid = 600, .tgid = 600 };
	check(workload_tracker_handle_event(t, root, &ev, 13 * SEC) == 0);
	check_int(workload_tracker_count(t, 0), 1);
	ev = (ProcEvent) { .type = PROCEV_EXIT, .pid = 601, .tgid = 600 };
	check(workload_tracker_handle_event(t, root, &ev, 14 * SEC) == 0);
	check_int(workload_tracker_count(t, 0), 1);
	ev = (ProcEvent) { .type = PROCEV_EXIT, .pid = 600, .tgid = 600 };
	check(workload_tracker_handle_event(t, root, &ev, 15 * SEC) == 0);
	check_int(workload_tracker_count(t, 0), 0);
	workload_tracker_free(t);

	for (int pid = 400; pid <= 600; pid += 100)
		remove_proc(root, pid);
	check(unlinkat(root, "proc/self", AT_REMOVEDIR) == 0);
	check(unlinkat(root, "proc", AT_REMOVEDIR) == 0);
	check(rmdir(dir) == 0);
}

int main(void)
{
	test_match();
	test_rule_validation();
	test_from_profile();
	test_timeline_basic();
	test_timeline_priority();
	test_timeline_burst();
	test_pid_table();
	test_resolver();
	return test_end("workload");
}
