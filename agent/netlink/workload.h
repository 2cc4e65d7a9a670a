/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Workload rules: which running program asks for which profile.
 *
 *  WorkloadMatcher  the rules of all profiles, in priority order (the order
 *                   the profiles were added; first wins). Pure.
 *  workload_resolve reads one process's exe/comm/cgroup below a root fd.
 *  WorkloadTracker  the pids that currently match, per rule, and the
 *                   profile wanted now, with a hold-down before returning
 *                   to the configured profile. Time is a parameter (usec,
 *                   CLOCK_MONOTONIC in the daemon) so tests are exact.
 *
 * Daemon use, per procevents_process() batch:
 *   handler: workload_tracker_handle_event(t, root_fd, ev, now);
 *   after the batch (and when the timer at decision.next_usec fires):
 *     if (workload_tracker_evaluate(t, now, &d) > 0) switch to d.profile
 *     (NULL: the configured one); arm the timer at d.next_usec.
 *   on -ENOBUFS and at start: workload_tracker_rescan(t, root_fd, now).
 */

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

struct Profile;
struct ProcEvent;

typedef enum WorkloadRuleKind {
	WORKLOAD_EXE,        /* absolute path of the executable (/proc/PID/exe) */
	WORKLOAD_COMM,       /* task name, at most 15 characters (/proc/PID/comm) */
	WORKLOAD_CGROUP,     /* cgroup v2 path prefix, whole components (/proc/PID/cgroup) */
	_WORKLOAD_KIND_MAX,
	_WORKLOAD_KIND_INVALID = -EINVAL,
} WorkloadRuleKind;

const char *workload_rule_kind_to_string(WorkloadRuleKind k) _const_;
WorkloadRuleKind workload_rule_kind_from_string(const char *s) _pure_;

typedef struct WorkloadRule {
	WorkloadRuleKind kind;
	char *value;
	char *profile;
	char *text;          /* "exe:/usr/sbin/mysqld": the rule as D-Bus shows it */
} WorkloadRule;

/* Which facts the rules look at: workload_resolve() reads only those. */
#define WORKLOAD_NEED_EXE (1U << WORKLOAD_EXE)
#define WORKLOAD_NEED_COMM (1U << WORKLOAD_COMM)
#define WORKLOAD_NEED_CGROUP (1U << WORKLOAD_CGROUP)

typedef struct WorkloadMatcher {
	WorkloadRule *rules;
	size_t n_rules;
	unsigned needs;
} WorkloadMatcher;

int workload_matcher_new(WorkloadMatcher **ret);
WorkloadMatcher *workload_matcher_free(WorkloadMatcher *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(WorkloadMatcher *, workload_matcher_free);

/* -EINVAL: exe/cgroup not absolute, comm empty or longer than 15, bad profile name. */
int workload_matcher_add(WorkloadMatcher *m, WorkloadRuleKind kind, const char *value,
			 const char *profile);
/* All of @p's workload_exe, then _comm, then _cgroup rules, for @p->name. */
int workload_matcher_add_profile(WorkloadMatcher *m, const struct Profile *p);

/*
 * The first rule that matches (index), or -ENOENT. Any fact may be NULL
 * (unknown): rules about it do not match.
 */
int workload_match_rule(const WorkloadMatcher *m, const char *exe, const char *comm,
			const char *cgroup) _pure_;
/* The profile of that rule, or NULL. */
const char *workload_match(const WorkloadMatcher *m, const char *exe, const char *comm,
			   const char *cgroup) _pure_;

typedef struct WorkloadProcess {
	char exe[PATH_MAX];      /* "" when not read or not readable */
	char comm[16];
	char cgroup[PATH_MAX];   /* the v2 "0::" path; "" on v1-only systems */
} WorkloadProcess;

/*
 * Read the @needs facts of @pid below @root_fd (proc/PID/exe, comm,
 * cgroup). -ESRCH when the process is gone or was never there (also for
 * the ENOENT that a racing exit produces), other -errno as it comes.
 * A "(deleted)" suffix of exe (upgraded binary) is removed. A zombie
 * (exited, not yet reaped) has no exe: it resolves with exe "" when comm
 * or cgroup is asked for, so comm/cgroup rules still see it.
 */
int workload_resolve(int root_fd, pid_t pid, unsigned needs, WorkloadProcess *ret);

typedef struct WorkloadTracker WorkloadTracker;

/* Takes @m (also on failure). @hold_usec: hold-down before leaving a workload profile. */
int workload_tracker_new(WorkloadMatcher *m, uint64_t hold_usec, WorkloadTracker **ret);
WorkloadTracker *workload_tracker_free(WorkloadTracker *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(WorkloadTracker *, workload_tracker_free);

const WorkloadMatcher *workload_tracker_matcher(const WorkloadTracker *t) _pure_;

/* @pid now runs an image that matches rule @rule (index), or none (-1). */
int workload_tracker_exec(WorkloadTracker *t, pid_t pid, int rule, uint64_t now_usec);
/* @pid exited; O(1) and nothing to do when it was not tracked. */
void workload_tracker_exit(WorkloadTracker *t, pid_t pid, uint64_t now_usec);

/* Live pids matching @rule (for WorkloadRules a(sss)); total tracked pids. */
unsigned workload_tracker_count(const WorkloadTracker *t, size_t rule) _pure_;
size_t workload_tracker_n_tracked(const WorkloadTracker *t) _pure_;

/*
 * Handle one proc connector event: on exec resolve and match the process
 * (a process that is already gone is ignored), on exit of a thread-group
 * leader forget it. Returns 0, or -errno from the resolver other than
 * -ESRCH (the event is dropped; the caller may log at debug level).
 */
int workload_tracker_handle_event(WorkloadTracker *t, int root_fd, const struct ProcEvent *ev,
				  uint64_t now_usec);

/*
 * Walk root_fd's proc/ and rebuild the tracked set: at start, and after
 * events were lost (-ENOBUFS). Pids no longer present count as exited now.
 */
int workload_tracker_rescan(WorkloadTracker *t, int root_fd, uint64_t now_usec);

#define WORKLOAD_NEVER UINT64_MAX

typedef struct WorkloadDecision {
	int rule;                /* index of the rule in force, -1: the configured profile */
	const char *profile;     /* its profile, NULL: the configured profile */
	const char *rule_text;   /* "comm:mysqld", NULL for configured */
	uint64_t next_usec;      /* evaluate again then (hold-down expiry), or WORKLOAD_NEVER */
} WorkloadDecision;

/*
 * Decide: the first rule with live pids wins at once if it outranks the
 * rule in force (or none is); the rule in force is given up for a lower
 * one, or for the configured profile, only when it has had no live pid
 * for the hold-down time. Returns 1 when the rule in force changed by
 * this call (a switch), else 0; @ret always describes the rule in force.
 */
int workload_tracker_evaluate(WorkloadTracker *t, uint64_t now_usec, WorkloadDecision *ret);
