/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Predicted versus reported scheduler domains. Pure: the live layout is a
 * value read elsewhere (agent/kernel/domains-live.c).
 */
#include <assert.h>

#include "compare.h"
#include "strutil.h"

int domain_flags_parse(const char *text, unsigned *ret)
{
	_cleanup_strv_free_ char **words = NULL;
	unsigned flags = 0;
	int r;

	assert(text);
	assert(ret);

	r = strv_split(text, WHITESPACE, &words);
	if (r < 0)
		return r;
	STRV_FOREACH(w, words) {
		const char *name = startswith(*w, "SD_") ?: *w;
		bool found = false;

		/*
		 * Kernels up to 6.12 (at least) print SD_OVERLAP on every NUMA
		 * level built from overlapping groups; later kernels dropped
		 * the flag. It follows from the layout, so it is not compared.
		 */
		if (streq(name, "OVERLAP"))
			continue;

		for (unsigned bit = 0; bit < 14; bit++) {
			_cleanup_free_ char *s = NULL;

			r = domain_flags_to_string(1U << bit, &s);
			if (r < 0)
				return r;
			if (streq(s, name)) {
				flags |= 1U << bit;
				found = true;
				break;
			}
		}
		if (!found)
			return -EBADMSG;
	}
	*ret = flags;
	return 0;
}

_printf_(4, 5) static int diff(char ***l, size_t *n, size_t max, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if ((*n)++ >= max)
		return 0;
	va_start(ap, fmt);
	s = vstrprintf(fmt, ap);
	va_end(ap);
	return s ? strv_push(l, s) : -ENOMEM;
}

int domains_compare(const DomainLayout *p, const LiveLayout *live, size_t max, char ***ret_diffs)
{
	_cleanup_strv_free_ char **l = NULL;
	unsigned slots = MAX(p->n_slots, live->n_slots);
	size_t n = 0;
	int r = 0;

	l = calloc(1, sizeof(char *));
	if (!l)
		return -ENOMEM;

	for (unsigned cpu = 0; cpu < slots && r >= 0; cpu++) {
		size_t pn = cpu < p->n_slots ? p->cpus[cpu].n : 0;
		size_t ln = cpu < live->n_slots ? live->cpus[cpu].n : 0;

		/* A report of some CPUs only (a capture of cpu0) says nothing of the rest. */
		if (!cpuset_contains(&live->listed, cpu))
			continue;

		if (pn != ln) {
			r = diff(&l, &n, max, "cpu%u: %zu domains, predicted %zu", cpu, ln, pn);
			continue;
		}
		for (size_t i = 0; i < pn && r >= 0; i++) {
			const SchedDomain *sd = &p->cpus[cpu].sd[i];
			const LiveDomain *ld = &live->cpus[cpu].sd[i];

			if (!cpuset_equal(&sd->span->cpus, &ld->span)) {
				_cleanup_free_ char *a = NULL, *b = NULL;

				r = cpuset_format_list(&ld->span, &a);
				if (r >= 0)
					r = cpuset_format_list(&sd->span->cpus, &b);
				if (r >= 0)
					r = diff(&l, &n, max, "cpu%u domain%zu: span %s, predicted %s", cpu, i, a, b);
			}
			if (r >= 0 && ld->name[0] && !streq(ld->name, sd->name))
				r = diff(&l, &n, max, "cpu%u domain%zu: name %s, predicted %s", cpu, i, ld->name, sd->name);
			if (r >= 0 && ld->level >= 0 && ld->level != sd->level)
				r = diff(&l, &n, max, "cpu%u domain%zu: level %d, predicted %d", cpu, i, ld->level, sd->level);
			if (r >= 0 && ld->flags) {
				unsigned f;

				if (domain_flags_parse(ld->flags, &f) < 0)
					r = diff(&l, &n, max, "cpu%u domain%zu: unknown flags \"%s\"", cpu, i, ld->flags);
				else if (f != sd->flags) {
					_cleanup_free_ char *extra = NULL, *missing = NULL;

					r = domain_flags_to_string(f & ~sd->flags, &extra);
					if (r >= 0)
						r = domain_flags_to_string(sd->flags & ~f, &missing);
					if (r >= 0)
						r = diff(&l, &n, max, "cpu%u domain%zu: flags differ: kernel has [%s], lacks [%s]",
							 cpu, i, extra, missing);
				}
			}
		}
	}
	if (r < 0)
		return r;
	*ret_diffs = TAKE_PTR(l);
	return (int)MIN(n, (size_t)INT32_MAX);
}
