/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workload rules -> wanted profile. Matching and the tracker are pure (time
 * is a parameter); only workload_resolve() and the rescan read files, and
 * only below the root fd. Exec bursts are the hot path: an exit of an
 * untracked pid is one hash probe, an exec reads only the facts the rules
 * need, and nothing here allocates per event once the pid table has grown.
 * Depends on basic, profile (types only) and procevents (types only).
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "fileio.h"
#include "macro.h"
#include "procevents.h"
#include "profile.h"
#include "strutil.h"
#include "workload.h"

static const char *const workload_rule_kind_table[_WORKLOAD_KIND_MAX] = {
	[WORKLOAD_EXE] = "exe",
	[WORKLOAD_COMM] = "comm",
	[WORKLOAD_CGROUP] = "cgroup",
};

DEFINE_STRING_TABLE_LOOKUP(workload_rule_kind, WorkloadRuleKind);

/* The kernel keeps TASK_COMM_LEN - 1 characters of a task's name. */
#define COMM_MAX 15

int workload_matcher_new(WorkloadMatcher **ret)
{
	WorkloadMatcher *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	*ret = m;
	return 0;
}

WorkloadMatcher *workload_matcher_free(WorkloadMatcher *m)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->n_rules; i++) {
		free(m->rules[i].value);
		free(m->rules[i].profile);
		free(m->rules[i].text);
	}
	free(m->rules);
	free(m);
	return NULL;
}

int workload_matcher_add(WorkloadMatcher *m, WorkloadRuleKind kind, const char *value,
			 const char *profile)
{
	_cleanup_free_ char *v = NULL, *p = NULL, *text = NULL;
	WorkloadRule *rules;
	size_t l;

	if (!value || !profile || !profile_name_is_valid(profile))
		return -EINVAL;
	l = strlen(value);
	switch (kind) {
	case WORKLOAD_EXE:
		if (value[0] != '/' || l >= PATH_MAX)
			return -EINVAL;
		break;
	case WORKLOAD_COMM:
		if (l == 0 || l > COMM_MAX)
			return -EINVAL;
		break;
	case WORKLOAD_CGROUP:
		if (value[0] != '/' || l >= PATH_MAX)
			return -EINVAL;
		/* "/a/b/" and "/a/b" are the same prefix. */
		while (l > 1 && value[l - 1] == '/')
			l--;
		break;
	default:
		return -EINVAL;
	}

	v = strndup(value, l);
	p = strdup(profile);
	if (!v || !p)
		return -ENOMEM;
	text = strprintf("%s:%s", workload_rule_kind_to_string(kind), v);
	if (!text)
		return -ENOMEM;

	rules = realloc(m->rules, (m->n_rules + 1) * sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	m->rules = rules;
	m->rules[m->n_rules++] = (WorkloadRule) {
		.kind = kind,
		.value = TAKE_PTR(v),
		.profile = TAKE_PTR(p),
		.text = TAKE_PTR(text),
	};
	m->needs |= 1U << kind;
	return 0;
}

int workload_matcher_add_profile(WorkloadMatcher *m, const Profile *p)
{
	struct {
		WorkloadRuleKind kind;
		char **values;
	} lists[] = {
		{ WORKLOAD_EXE, p->workload_exe },
		{ WORKLOAD_COMM, p->workload_comm },
		{ WORKLOAD_CGROUP, p->workload_cgroup },
	};
	int r;

	for (size_t i = 0; i < ELEMENTSOF(lists); i++)
		STRV_FOREACH(v, lists[i].values) {
			r = workload_matcher_add(m, lists[i].kind, *v, p->name);
			if (r < 0)
				return r;
		}
	return 0;
}

static bool cgroup_has_prefix(const char *cgroup, const char *prefix)
{
	const char *rest;

	if (streq(prefix, "/"))
		return cgroup[0] == '/';
	rest = startswith(cgroup, prefix);
	return rest && (*rest == '\0' || *rest == '/');
}

int workload_match_rule(const WorkloadMatcher *m, const char *exe, const char *comm,
			const char *cgroup)
{
	for (size_t i = 0; i < m->n_rules; i++) {
		const WorkloadRule *r = &m->rules[i];

		switch (r->kind) {
		case WORKLOAD_EXE:
			if (exe && streq(exe, r->value))
				return (int)i;
			break;
		case WORKLOAD_COMM:
			if (comm && streq(comm, r->value))
				return (int)i;
			break;
		case WORKLOAD_CGROUP:
			if (cgroup && cgroup_has_prefix(cgroup, r->value))
				return (int)i;
			break;
		default:
			break;
		}
	}
	return -ENOENT;
}

const char *workload_match(const WorkloadMatcher *m, const char *exe, const char *comm,
			   const char *cgroup)
{
	int i = workload_match_rule(m, exe, comm, cgroup);

	return i < 0 ? NULL : m->rules[i].profile;
}

/* A vanished process shows up as ENOENT (no /proc/PID) or ESRCH. */
static int gone(int r)
{
	return r == -ENOENT || r == -ESRCH ? -ESRCH : r;
}

/*
 * Small procfs file into a fixed buffer: no allocation on the hot path. A
 * short read only means "read again": until EOF, a full buffer, or with
 * @line the end of the first line (comm is one line: no read() for the EOF).
 */
static int read_small_at(int root_fd, const char *path, bool line, char *buf, size_t size, size_t *ret_len)
{
	_cleanup_close_ int fd = -EBADF;
	size_t have = 0;

	fd = open_beneath(root_fd, path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, FILEIO_READ);
	if (fd < 0)
		return gone(fd);
	while (have < size - 1) {
		ssize_t n = read(fd, buf + have, size - 1 - have);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return gone(negative_errno());
		}
		if (n == 0)
			break;
		if (line && memchr(buf + have, '\n', (size_t)n)) {
			have += (size_t)n;
			break;
		}
		have += (size_t)n;
	}
	buf[have] = '\0';
	*ret_len = have;
	return 0;
}

/* The "0::PATH" line of /proc/PID/cgroup (v2 unified hierarchy). */
static void cgroup_v2_path(const char *text, char *ret, size_t size)
{
	const char *line = text;

	ret[0] = '\0';
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t l = nl ? (size_t)(nl - line) : strlen(line);

		if (l >= 3 && memcmp(line, "0::", 3) == 0) {
			l -= 3;
			if (l < size) {
				memcpy(ret, line + 3, l);
				ret[l] = '\0';
			}
			return;
		}
		line = nl ? nl + 1 : NULL;
	}
}

int workload_resolve(int root_fd, pid_t pid, unsigned needs, WorkloadProcess *ret)
{
	char path[64];
	size_t len;
	int r;

	if (pid <= 0)
		return -EINVAL;

	ret->exe[0] = ret->comm[0] = ret->cgroup[0] = '\0';

	if (needs & WORKLOAD_NEED_EXE) {
		ssize_t n;

		snprintf(path, sizeof(path), "proc/%d/exe", (int)pid);
		n = readlinkat(root_fd, path, ret->exe, sizeof(ret->exe) - 1);
		if (n >= 0) {
			ret->exe[n] = '\0';
			/* Replaced on disk while running (package upgrade). */
			if (n > 10 && streq(ret->exe + n - 10, " (deleted)"))
				ret->exe[n - 10] = '\0';
		} else {
			r = gone(negative_errno());
			if (r != -ESRCH)
				return r;
			/* An exited, not yet reaped process (zombie) has no
			 * exe but still its comm and cgroup: short-lived
			 * workloads are often seen only in that state. */
			if (!(needs & (WORKLOAD_NEED_COMM | WORKLOAD_NEED_CGROUP)))
				return r;
		}
	}

	if (needs & WORKLOAD_NEED_COMM) {
		char buf[64];

		snprintf(path, sizeof(path), "proc/%d/comm", (int)pid);
		r = read_small_at(root_fd, path, true, buf, sizeof(buf), &len);
		if (r < 0)
			return r;
		len = strcspn(buf, "\n");
		len = MIN(len, sizeof(ret->comm) - 1);
		memcpy(ret->comm, buf, len);
		ret->comm[len] = '\0';
	}

	if (needs & WORKLOAD_NEED_CGROUP) {
		char buf[8192];

		snprintf(path, sizeof(path), "proc/%d/cgroup", (int)pid);
		r = read_small_at(root_fd, path, false, buf, sizeof(buf), &len);
		if (r < 0)
			return r;
		cgroup_v2_path(buf, ret->cgroup, sizeof(ret->cgroup));
	}

	return 0;
}

/*
 * Tracked pids: open addressing with linear probing and backward-shift
 * deletion (no tombstones), load factor at most 1/2. pid 0 marks a free
 * slot; the kernel never reports it.
 */
typedef struct PidSlot {
	pid_t pid;
	int rule;
	unsigned gen;            /* rescan generation that last saw it */
} PidSlot;

typedef struct RuleState {
	unsigned count;
	uint64_t last_exit_usec; /* when count last dropped to zero */
} RuleState;

struct WorkloadTracker {
	WorkloadMatcher *matcher;
	RuleState *state;        /* per rule */
	uint64_t hold_usec;
	int active;              /* rule in force, -1: configured profile */

	PidSlot *slots;
	unsigned bits;           /* capacity = 1 << bits */
	size_t n;
	unsigned gen;
};

static size_t slot_home(const WorkloadTracker *t, pid_t pid)
{
	/* Fibonacci hashing: consecutive pids spread over the table. */
	return (size_t)(((uint32_t)pid * 2654435769U) >> (32 - t->bits));
}

static size_t slot_mask(const WorkloadTracker *t)
{
	return ((size_t)1 << t->bits) - 1;
}

static PidSlot *slot_find(const WorkloadTracker *t, pid_t pid)
{
	for (size_t i = slot_home(t, pid);; i = (i + 1) & slot_mask(t)) {
		if (t->slots[i].pid == pid)
			return &t->slots[i];
		if (t->slots[i].pid == 0)
			return NULL;
	}
}

static PidSlot *slot_insert_new(WorkloadTracker *t, pid_t pid)
{
	size_t i;

	for (i = slot_home(t, pid); t->slots[i].pid != 0; i = (i + 1) & slot_mask(t))
		;
	t->slots[i] = (PidSlot) { .pid = pid, .rule = -1 };
	t->n++;
	return &t->slots[i];
}

static int slots_grow(WorkloadTracker *t)
{
	PidSlot *old = t->slots;
	size_t old_cap = (size_t)1 << t->bits;

	if (t->bits >= 30)
		return -ENOMEM;
	t->slots = calloc(old_cap * 2, sizeof(PidSlot));
	if (!t->slots) {
		t->slots = old;
		return -ENOMEM;
	}
	t->bits++;
	t->n = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].pid != 0)
			*slot_insert_new(t, old[i].pid) = old[i];
	free(old);
	return 0;
}

static void slot_delete(WorkloadTracker *t, PidSlot *s)
{
	size_t mask = slot_mask(t), i = (size_t)(s - t->slots), j = i;

	for (;;) {
		size_t k;

		j = (j + 1) & mask;
		if (t->slots[j].pid == 0)
			break;
		k = slot_home(t, t->slots[j].pid);
		/* Entry j may stay if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t->slots[i] = t->slots[j];
		i = j;
	}
	t->slots[i] = (PidSlot) {};
	t->n--;
}

int workload_tracker_new(WorkloadMatcher *m, uint64_t hold_usec, WorkloadTracker **ret)
{
	_cleanup_(workload_matcher_freep) WorkloadMatcher *matcher = m;
	WorkloadTracker *t;

	if (!matcher)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->bits = 6;
	t->slots = calloc((size_t)1 << t->bits, sizeof(PidSlot));
	t->state = calloc(MAX(matcher->n_rules, (size_t)1), sizeof(RuleState));
	if (!t->slots || !t->state) {
		free(t->slots);
		free(t->state);
		free(t);
		return -ENOMEM;
	}
	t->matcher = TAKE_PTR(matcher);
	t->hold_usec = hold_usec;
	t->active = -1;
	*ret = t;
	return 0;
}

WorkloadTracker *workload_tracker_free(WorkloadTracker *t)
{
	if (!t)
		return NULL;
	workload_matcher_free(t->matcher);
	free(t->state);
	free(t->slots);
	free(t);
	return NULL;
}

const WorkloadMatcher *workload_tracker_matcher(const WorkloadTracker *t)
{
	return t->matcher;
}

unsigned workload_tracker_count(const WorkloadTracker *t, size_t rule)
{
	return rule < t->matcher->n_rules ? t->state[rule].count : 0;
}

size_t workload_tracker_n_tracked(const WorkloadTracker *t)
{
	return t->n;
}

static void rule_drop(WorkloadTracker *t, int rule, uint64_t now_usec)
{
	RuleState *st = &t->state[rule];

	if (st->count > 0 && --st->count == 0)
		st->last_exit_usec = now_usec;
}

int workload_tracker_exec(WorkloadTracker *t, pid_t pid, int rule, uint64_t now_usec)
{
	PidSlot *s;
	int r;

	if (pid <= 0 || rule < -1 || (rule >= 0 && (size_t)rule >= t->matcher->n_rules))
		return -EINVAL;

	s = slot_find(t, pid);
	if (rule < 0) {
		/* A tracked process exec'd something that is not a workload. */
		if (s) {
			rule_drop(t, s->rule, now_usec);
			slot_delete(t, s);
		}
		return 0;
	}

	if (s) {
		s->gen = t->gen;
		if (s->rule == rule)
			return 0;
		rule_drop(t, s->rule, now_usec);
	} else {
		if ((t->n + 1) * 2 > ((size_t)1 << t->bits)) {
			r = slots_grow(t);
			if (r < 0)
				return r;
		}
		s = slot_insert_new(t, pid);
		s->gen = t->gen;
	}
	s->rule = rule;
	t->state[rule].count++;
	return 0;
}

void workload_tracker_exit(WorkloadTracker *t, pid_t pid, uint64_t now_usec)
{
	PidSlot *s;

	if (pid <= 0 || t->n == 0)
		return;
	s = slot_find(t, pid);
	if (!s)
		return;
	rule_drop(t, s->rule, now_usec);
	slot_delete(t, s);
}

static int track_pid(WorkloadTracker *t, int root_fd, pid_t pid, uint64_t now_usec)
{
	WorkloadProcess proc;
	int r, rule;

	r = workload_resolve(root_fd, pid, t->matcher->needs, &proc);
	if (r == -ESRCH) {
		/* Exited before we looked: its exit event forgets it. */
		return 0;
	}
	if (r < 0)
		return r;

	rule = workload_match_rule(t->matcher,
				   proc.exe[0] ? proc.exe : NULL,
				   proc.comm[0] ? proc.comm : NULL,
				   proc.cgroup[0] ? proc.cgroup : NULL);
	return workload_tracker_exec(t, pid, rule < 0 ? -1 : rule, now_usec);
}

int workload_tracker_handle_event(WorkloadTracker *t, int root_fd, const ProcEvent *ev,
				  uint64_t now_usec)
{
	switch (ev->type) {
	case PROCEV_EXEC:
		if (t->matcher->n_rules == 0)
			return 0;
		/* After exec the task leads its thread group: pid == tgid. */
		return track_pid(t, root_fd, ev->tgid, now_usec);
	case PROCEV_EXIT:
		/* Other threads' exits say nothing about the process. */
		if (ev->pid == ev->tgid)
			workload_tracker_exit(t, ev->tgid, now_usec);
		return 0;
	default:
		return 0;
	}
}

int workload_tracker_rescan(WorkloadTracker *t, int root_fd, uint64_t now_usec)
{
	_cleanup_free_ pid_t *stale = NULL;
	size_t n_stale = 0, cap;
	DIR *d;
	int fd, r = 0;

	fd = open_beneath(root_fd, "proc", O_RDONLY | O_DIRECTORY, 0, FILEIO_READ);
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d) {
		r = negative_errno();
		close(fd);
		return r;
	}

	t->gen++;
	for (struct dirent *de; (de = readdir(d));) {
		unsigned pid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (safe_atou_base(de->d_name, 10, &pid) < 0 || pid == 0 || pid > INT32_MAX)
			continue;
		if (t->matcher->n_rules == 0)
			continue;
		/* One unreadable process (another namespace's, a
		 * kernel thread's odd state) must not blind us to the rest. */
		r = track_pid(t, root_fd, (pid_t)pid, now_usec);
		if (r == -ENOMEM)
			break;
		r = 0;
	}
	closedir(d);
	if (r < 0)
		return r;

	/* Whatever this walk did not see has exited unnoticed. */
	cap = t->n;
	if (cap == 0)
		return 0;
	stale = malloc(cap * sizeof(pid_t));
	if (!stale)
		return -ENOMEM;
	for (size_t i = 0; i < ((size_t)1 << t->bits); i++)
		if (t->slots[i].pid != 0 && t->slots[i].gen != t->gen)
			stale[n_stale++] = t->slots[i].pid;
	for (size_t i = 0; i < n_stale; i++)
		workload_tracker_exit(t, stale[i], now_usec);
	return 0;
}

static void decision_fill(const WorkloadTracker *t, uint64_t next, WorkloadDecision *ret)
{
	const WorkloadRule *r = t->active >= 0 ? &t->matcher->rules[t->active] : NULL;

	*ret = (WorkloadDecision) {
		.rule = t->active,
		.profile = r ? r->profile : NULL,
		.rule_text = r ? r->text : NULL,
		.next_usec = next,
	};
}

int workload_tracker_evaluate(WorkloadTracker *t, uint64_t now_usec, WorkloadDecision *ret)
{
	int best = -1;
	uint64_t expiry;

	for (size_t i = 0; i < t->matcher->n_rules; i++)
		if (t->state[i].count > 0) {
			best = (int)i;
			break;
		}

	if (best == t->active) {
		decision_fill(t, WORKLOAD_NEVER, ret);
		return 0;
	}

	/* A rule that outranks the one in force takes over at once. */
	if (best >= 0 && (t->active < 0 || best < t->active)) {
		t->active = best;
		decision_fill(t, WORKLOAD_NEVER, ret);
		return 1;
	}

	/* The rule in force has no live pid (else it would be best): leave
	 * it only after the hold-down, so a restart or a burst of short
	 * lived processes does not flap the profile. */
	expiry = t->state[t->active].last_exit_usec + t->hold_usec;
	if (expiry < t->hold_usec)
		expiry = WORKLOAD_NEVER;
	if (now_usec < expiry) {
		decision_fill(t, expiry, ret);
		return 0;
	}
	t->active = best;
	decision_fill(t, WORKLOAD_NEVER, ret);
	return 1;
}
