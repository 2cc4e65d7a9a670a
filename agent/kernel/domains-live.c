/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Readers of the scheduler-domain layout the running kernel reports.
 * /proc/schedstat gives each CPU's attached domains with their spans
 * (version 17 adds the level name); debugfs sched/domains adds names, flags
 * and sd->level where it is mounted and sched_verbose populated it.
 * Depends on basic only.
 */
#include "domains-live.h"
#include "fileio.h"
#include "strutil.h"

LiveLayout *live_layout_free(LiveLayout *l)
{
	if (!l)
		return NULL;
	for (unsigned c = 0; c < l->n_slots; c++) {
		for (size_t i = 0; i < l->cpus[c].n; i++) {
			cpuset_done(&l->cpus[c].sd[i].span);
			free(l->cpus[c].sd[i].flags);
		}
		free(l->cpus[c].sd);
	}
	free(l->cpus);
	cpuset_done(&l->listed);
	strv_free(l->notes);
	free(l);
	return NULL;
}

static int ensure_slot(LiveLayout *l, unsigned cpu)
{
	LiveCpuDomains *n;

	if (cpu < l->n_slots)
		return 0;
	if (cpu >= CPUSET_MAX_CPUS)
		return -ERANGE;
	n = realloc(l->cpus, (cpu + 1) * sizeof(LiveCpuDomains));
	if (!n)
		return -ENOMEM;
	memset(n + l->n_slots, 0, (cpu + 1 - l->n_slots) * sizeof(LiveCpuDomains));
	l->cpus = n;
	l->n_slots = cpu + 1;
	return 0;
}

static int add_domain(LiveLayout *l, unsigned cpu, int index, const char *name, const char *mask)
{
	LiveCpuDomains *c = &l->cpus[cpu];
	LiveDomain *n, *d;
	int r;

	if (index != (int)c->n)
		return -EBADMSG;   /* domains are listed bottom-up without gaps */
	n = realloc(c->sd, (c->n + 1) * sizeof(LiveDomain));
	if (!n)
		return -ENOMEM;
	c->sd = n;
	d = &c->sd[c->n];
	*d = (LiveDomain) { .index = index, .level = -1 };
	snprintf(d->name, sizeof(d->name), "%s", strempty(name));
	r = cpuset_parse_mask(mask, &d->span);
	if (r < 0) {
		cpuset_done(&d->span);
		return -EBADMSG;
	}
	c->n++;
	return 0;
}

int schedstat_parse(const char *text, LiveLayout **ret)
{
	_cleanup_(live_layout_freep) LiveLayout *l = NULL;
	_cleanup_strv_free_ char **lines = NULL;
	int cpu = -1, r;

	l = calloc(1, sizeof(LiveLayout));
	if (!l)
		return -ENOMEM;
	r = strv_split(text, "\n", &lines);
	if (r < 0)
		return r;

	STRV_FOREACH(line, lines) {
		_cleanup_strv_free_ char **w = NULL;
		const char *p;
		unsigned n;

		r = strv_split(*line, WHITESPACE, &w);
		if (r < 0)
			return r;
		if (!w[0])
			continue;
		if (streq(w[0], "version")) {
			if (!w[1] || safe_atoi(w[1], &l->schedstat_version) < 0)
				return -EBADMSG;
		} else if ((p = startswith(w[0], "cpu"))) {
			if (safe_atou_base(p, 10, &n) < 0)
				return -EBADMSG;
			r = ensure_slot(l, n);
			if (r < 0)
				return r;
			r = cpuset_add(&l->listed, n);
			if (r < 0)
				return r;
			cpu = (int)n;
		} else if ((p = startswith(w[0], "domain"))) {
			bool named = l->schedstat_version >= 17;

			if (cpu < 0 || safe_atou_base(p, 10, &n) < 0 || !w[1] || (named && !w[2]))
				return -EBADMSG;
			r = add_domain(l, (unsigned)cpu, (int)n, named ? w[1] : NULL, named ? w[2] : w[1]);
			if (r < 0)
				return r;
		}
		/* "timestamp" and unknown lines are ignored, as newer versions add fields. */
	}
	if (l->schedstat_version == 0)
		return -EBADMSG;
	*ret = TAKE_PTR(l);
	return 0;
}

/* A debugfs file that is there but cannot be read: named in a note, not taken for "not populated". */
static int debugfs_read(LiveLayout *l, const char *path, int r)
{
	if (r < 0 && r != -ENOENT && r != -ENOTDIR)
		(void)strv_push(&l->notes, strprintf("/%s: %s", path, strerror(-r)));
	return r;
}

static void enrich_from_debugfs(int root_fd, LiveLayout *l)
{
	for (unsigned cpu = 0; cpu < l->n_slots; cpu++)
		for (size_t i = 0; i < l->cpus[cpu].n; i++) {
			LiveDomain *d = &l->cpus[cpu].sd[i];
			char path[128];
			_cleanup_free_ char *s = NULL;
			int v, r;

			snprintf(path, sizeof(path), "sys/kernel/debug/sched/domains/cpu%u/domain%zu/name", cpu, i);
			r = debugfs_read(l, path, read_line_at(root_fd, path, &s));
			if (r == -ENOENT || r == -ENOTDIR)
				return;   /* not populated: no sched_verbose, or no debugfs */
			if (r >= 0) {
				l->debugfs = true;
				snprintf(d->name, sizeof(d->name), "%s", s);
			}
			snprintf(path, sizeof(path), "sys/kernel/debug/sched/domains/cpu%u/domain%zu/flags", cpu, i);
			if (debugfs_read(l, path, read_line_at(root_fd, path, &d->flags)) >= 0)
				strip(d->flags);
			snprintf(path, sizeof(path), "sys/kernel/debug/sched/domains/cpu%u/domain%zu/level", cpu, i);
			if (debugfs_read(l, path, read_int_at(root_fd, path, &v)) >= 0)
				d->level = v;
		}
}

int live_layout_load(int root_fd, LiveLayout **ret)
{
	_cleanup_free_ char *text = NULL;
	LiveLayout *l;
	int r;

	r = read_file_at(root_fd, "proc/schedstat", 0, &text, NULL);
	if (r < 0)
		return r;
	r = schedstat_parse(text, &l);
	if (r < 0)
		return r;
	enrich_from_debugfs(root_fd, l);
	if (!l->debugfs)
		(void)strv_extend(&l->notes, "/sys/kernel/debug/sched/domains: not populated (boot with sched_verbose "
					     "and mount debugfs for names, levels and flags)");
	*ret = l;
	return 0;
}
