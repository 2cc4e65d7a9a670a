/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CPU sets: storage, set algebra, kernel cpulist/cpumask parse and format. */
#include <assert.h>
#include <inttypes.h>
#include <string.h>
#include <ctype.h>

#include "cpuset.h"
#include "macro.h"
#include "strutil.h"

void cpuset_done(CpuSet *s)
{
	assert(s);

	free(s->bits);
	*s = (CpuSet) {};
}

static int cpuset_grow(CpuSet *s, size_t n_words)
{
	uint64_t *b;

	if (n_words <= s->n_words)
		return 0;
	b = realloc(s->bits, n_words * sizeof(uint64_t));
	if (!b)
		return -ENOMEM;
	memset(b + s->n_words, 0, (n_words - s->n_words) * sizeof(uint64_t));
	s->bits = b;
	s->n_words = n_words;
	return 0;
}

int cpuset_add(CpuSet *s, unsigned cpu)
{
	int r;

	assert(s);

	if (cpu >= CPUSET_MAX_CPUS)
		return -ERANGE;
	r = cpuset_grow(s, cpu / 64 + 1);
	if (r < 0)
		return r;
	s->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
	return 0;
}

int cpuset_add_range(CpuSet *s, unsigned first, unsigned last)
{
	int r;

	assert(s);

	if (first > last)
		return -EINVAL;
	if (last >= CPUSET_MAX_CPUS)
		return -ERANGE;
	r = cpuset_grow(s, last / 64 + 1);
	if (r < 0)
		return r;
	for (unsigned c = first; c <= last; c++)
		s->bits[c / 64] |= UINT64_C(1) << (c % 64);
	return 0;
}

void cpuset_remove(CpuSet *s, unsigned cpu)
{
	assert(s);

	if (cpu / 64 < s->n_words)
		s->bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

bool cpuset_contains(const CpuSet *s, unsigned cpu)
{
	return cpu / 64 < s->n_words && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

static unsigned count_words(const uint64_t *w, size_t n_words)
{
	unsigned n = 0;

	for (size_t i = 0; i < n_words; i++)
		n += (unsigned)__builtin_popcountll(w[i]);
	return n;
}

#if defined(__x86_64__) || defined(__i386__)
/*
 * The x86-64 baseline has no POPCNT, so the loop above calls libgcc's
 * table-driven __popcountdi2 for every word: a fifth of the instructions of
 * "topotunectl plan" at 2,048 CPUs. Every x86 CPU topotune targets has the
 * instruction (since Nehalem and Barcelona); the check is one load.
 */
__attribute__((target("popcnt"))) static unsigned count_words_popcnt(const uint64_t *w, size_t n_words)
{
	unsigned n = 0;

	for (size_t i = 0; i < n_words; i++)
		n += (unsigned)__builtin_popcountll(w[i]);
	return n;
}
#endif

unsigned cpuset_count(const CpuSet *s)
{
	assert(s);

#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_cpu_supports("popcnt"))
		return count_words_popcnt(s->bits, s->n_words);
#endif
	return count_words(s->bits, s->n_words);
}

bool cpuset_is_empty(const CpuSet *s)
{
	assert(s);

	for (size_t i = 0; i < s->n_words; i++)
		if (s->bits[i])
			return false;
	return true;
}

static uint64_t word(const CpuSet *s, size_t i)
{
	return i < s->n_words ? s->bits[i] : 0;
}

/* Whether words [@from, n_words) of @s are all zero. */
static bool zero_from(const CpuSet *s, size_t from)
{
	for (size_t i = from; i < s->n_words; i++)
		if (s->bits[i])
			return false;
	return true;
}

/*
 * The set operations below are the planner's inner loop (a span per CPU
 * and level: CPUs^2/64 words in all), so the words both sets have are
 * handled in one branch-free loop, and only the longer set's tail word by
 * word.
 */
bool cpuset_equal(const CpuSet *a, const CpuSet *b)
{
	size_t n = MIN(a->n_words, b->n_words);

	if (n > 0 && memcmp(a->bits, b->bits, n * sizeof(uint64_t)) != 0)
		return false;
	return zero_from(a, n) && zero_from(b, n);
}

uint64_t cpuset_hash(const CpuSet *s)
{
	size_t n = s->n_words;
	uint64_t h = UINT64_C(1469598103934665603);

	/* Equal sets may differ in trailing zero words: they must hash alike. */
	while (n > 0 && !s->bits[n - 1])
		n--;
	for (size_t i = 0; i < n; i++) {
		h = (h ^ s->bits[i]) * UINT64_C(1099511628211);
		h ^= h >> 29;
	}
	return h;
}

int cpuset_compare(const CpuSet *a, const CpuSet *b)
{
	int fa = cpuset_first(a), fb = cpuset_first(b);

	if (fa != fb)
		return fa < fb ? -1 : 1;
	for (size_t i = 0, n = MAX(a->n_words, b->n_words); i < n; i++)
		if (word(a, i) != word(b, i))
			return word(a, i) < word(b, i) ? -1 : 1;
	return 0;
}

bool cpuset_is_subset(const CpuSet *sub, const CpuSet *super)
{
	size_t n;
	uint64_t extra = 0;

	assert(sub);
	assert(super);

	n = MIN(sub->n_words, super->n_words);
	for (size_t i = 0; i < n; i++)
		extra |= sub->bits[i] & ~super->bits[i];
	return !extra && zero_from(sub, n);
}

bool cpuset_intersects(const CpuSet *a, const CpuSet *b)
{
	size_t n = MIN(a->n_words, b->n_words);

	for (size_t i = 0; i < n; i++)
		if (a->bits[i] & b->bits[i])
			return true;
	return false;
}

int cpuset_copy(CpuSet *dst, const CpuSet *src)
{
	CpuSet c = {};

	assert(dst);
	assert(src);

	if (src->n_words > 0) {
		c.bits = malloc(src->n_words * sizeof(uint64_t));
		if (!c.bits)
			return -ENOMEM;
		memcpy(c.bits, src->bits, src->n_words * sizeof(uint64_t));
		c.n_words = src->n_words;
	}
	cpuset_done(dst);
	*dst = c;
	return 0;
}

int cpuset_or(CpuSet *dst, const CpuSet *src)
{
	int r;

	assert(dst);
	assert(src);

	r = cpuset_grow(dst, src->n_words);
	if (r < 0)
		return r;
	for (size_t i = 0; i < src->n_words; i++)
		dst->bits[i] |= src->bits[i];
	return 0;
}

void cpuset_and(CpuSet *dst, const CpuSet *src)
{
	size_t n;

	assert(dst);
	assert(src);

	n = MIN(dst->n_words, src->n_words);
	for (size_t i = 0; i < n; i++)
		dst->bits[i] &= src->bits[i];
	if (dst->n_words > n)
		memset(dst->bits + n, 0, (dst->n_words - n) * sizeof(uint64_t));
}

void cpuset_andnot(CpuSet *dst, const CpuSet *src)
{
	size_t n;

	assert(dst);
	assert(src);

	n = MIN(dst->n_words, src->n_words);
	for (size_t i = 0; i < n; i++)
		dst->bits[i] &= ~src->bits[i];
}

int cpuset_next(const CpuSet *s, unsigned from)
{
	size_t i = from / 64;
	uint64_t w;

	assert(s);

	if (i >= s->n_words)
		return -1;
	w = s->bits[i] & (~UINT64_C(0) << (from % 64));
	for (;;) {
		if (w)
			return (int)(i * 64 + (size_t)__builtin_ctzll(w));
		if (++i >= s->n_words)
			return -1;
		w = s->bits[i];
	}
}

int cpuset_first(const CpuSet *s)
{
	assert(s);

	return cpuset_next(s, 0);
}

int cpuset_last(const CpuSet *s)
{
	assert(s);

	for (size_t i = s->n_words; i > 0; i--)
		if (s->bits[i - 1])
			return (int)((i - 1) * 64 + 63 - (size_t)__builtin_clzll(s->bits[i - 1]));
	return -1;
}

static int parse_cpu_number(const char **p, unsigned *ret)
{
	const char *s = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= CPUSET_MAX_CPUS)
			return -ERANGE;
		s++;
	}
	*p = s;
	*ret = (unsigned)v;
	return 0;
}

int cpuset_parse_list(const char *s, CpuSet *ret, const char **ret_bad)
{
	CpuSet set = {};
	const char *p = s, *item;
	int r = 0;

	while (*p && strchr(WHITESPACE, *p))
		p++;
	if (!*p)
		goto done;

	for (;;) {
		unsigned a, b, stride = 1, group = 0;

		item = p;
		r = parse_cpu_number(&p, &a);
		if (r < 0)
			goto fail;
		b = a;
		if (*p == '-') {
			p++;
			r = parse_cpu_number(&p, &b);
			if (r < 0)
				goto fail;
			if (b < a) {
				r = -EINVAL;
				goto fail;
			}
			if (*p == ':') {
				p++;
				r = parse_cpu_number(&p, &group);
				if (r < 0 || *p != '/') {
					r = r < 0 ? r : -EINVAL;
					goto fail;
				}
				p++;
				r = parse_cpu_number(&p, &stride);
				if (r < 0 || group == 0 || stride == 0 || group > stride) {
					r = r < 0 ? r : -EINVAL;
					goto fail;
				}
			}
		}
		if (group == 0) {
			r = cpuset_add_range(&set, a, b);
			if (r < 0)
				goto fail;
		} else {
			/* "a-b:used/group": the first @group CPUs of every @stride. */
			for (unsigned c = a; c <= b; c++)
				if ((c - a) % stride < group) {
					r = cpuset_add(&set, c);
					if (r < 0)
						goto fail;
				}
		}

		if (*p == ',') {
			p++;
			continue;
		}
		while (*p && strchr(WHITESPACE, *p))
			p++;
		if (*p) {
			item = p;
			r = -EINVAL;
			goto fail;
		}
		break;
	}
done:
	cpuset_done(ret);
	*ret = set;
	return 0;
fail:
	if (ret_bad)
		*ret_bad = item;
	cpuset_done(&set);
	return r;
}

int cpuset_format_mask(const CpuSet *s, char **ret)
{
	int last = cpuset_last(s);
	StrBuf b = {};

	assert(ret);

	if (last < 0) {
		char *t = strdup("0");

		if (!t)
			return -ENOMEM;
		*ret = t;
		return 0;
	}
	for (int w = last / 32; w >= 0; w--) {
		uint32_t v = 0;

		for (unsigned bit = 0; bit < 32; bit++)
			if (cpuset_contains(s, (unsigned)w * 32 + bit))
				v |= 1U << bit;
		strbuf_appendf(&b, w == last / 32 ? "%" PRIx32 : ",%08" PRIx32, v);
	}
	return strbuf_steal(&b, ret);
}

int cpuset_parse_mask(const char *s, CpuSet *ret)
{
	CpuSet set = {};
	size_t len, nibble = 0;
	int r;

	assert(ret);

	while (*s && strchr(WHITESPACE, *s))
		s++;
	len = strlen(s);
	while (len > 0 && strchr(WHITESPACE, s[len - 1]))
		len--;
	if (len == 0)
		return -EINVAL;

	/* Walk from the least significant end. */
	for (size_t i = len; i > 0; i--) {
		char c = s[i - 1];
		unsigned v;

		if (c == ',')
			continue;
		if (!isxdigit((unsigned char)c)) {
			cpuset_done(&set);
			return -EINVAL;
		}
		v = (unsigned)(isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10);
		for (unsigned bit = 0; bit < 4; bit++)
			if (v & (1U << bit)) {
				r = cpuset_add(&set, (unsigned)(nibble * 4 + bit));
				if (r < 0) {
					cpuset_done(&set);
					return r;
				}
			}
		nibble++;
	}
	cpuset_done(ret);
	*ret = set;
	return 0;
}

int cpuset_format_list(const CpuSet *s, char **ret)
{
	StrBuf b = {};
	int cpu = cpuset_first(s);
	bool first = true;

	while (cpu >= 0) {
		int end = cpu;

		while (cpuset_contains(s, (unsigned)end + 1))
			end++;
		if (end == cpu)
			strbuf_appendf(&b, "%s%d", first ? "" : ",", cpu);
		else
			strbuf_appendf(&b, "%s%d-%d", first ? "" : ",", cpu, end);
		first = false;
		cpu = cpuset_next(s, (unsigned)end + 1);
	}
	return strbuf_steal(&b, ret);
}
