/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel capability probe: reads, never writes. Depends on basic only.
 * A control counts as present when its file exists; whether a write will
 * be accepted is the applier's business (lockdown makes debugfs read-only,
 * so a debugfs control under lockdown is reported as not usable).
 */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>

#include "fileio.h"
#include "fixes.h"
#include "kernel.h"
#include "strutil.h"

void kernel_caps_done(KernelCaps *c)
{
	strv_free(c->notes);
	cpuset_done(&c->isolated);
	cpuset_done(&c->irq_default);
	cpuset_done(&c->workqueue_mask);
	kernel_irqs_free(c->irqs, c->n_irqs);
	free(c->irqs_refused);
	free(c->irqs_refused_error);
	*c = (KernelCaps) {};
}

void kernel_irqs_free(KernelIrq *irqs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cpuset_done(&irqs[i].affinity);
	free(irqs);
}

static void caps_init(KernelCaps *c)
{
	*c = (KernelCaps) {};
}

static const ControlState *state(const KernelCaps *c, ControlId id)
{
	return id >= 0 && id < _CONTROL_ID_MAX ? &c->controls[id] : NULL;
}

bool kernel_caps_has(const KernelCaps *c, ControlId id)
{
	const ControlState *s = state(c, id);

	return s && s->present;
}

int kernel_caps_value(const KernelCaps *c, ControlId id, int unknown)
{
	const ControlState *s = state(c, id);

	return s && s->present ? s->value : unknown;
}

int kernel_caps_max(const KernelCaps *c, ControlId id)
{
	const ControlState *s = state(c, id);

	return s && s->present ? s->max : -1;
}

int kernel_caps_current(const KernelCaps *c, SettingId setting, int unknown)
{
	CONTROL_FOREACH(i)
		if (kernel_control_get(i)->setting == setting && c->controls[i].present)
			return c->controls[i].value;
	return unknown;
}

const KernelControl *kernel_caps_control(const KernelCaps *c, SettingId setting)
{
	CONTROL_FOREACH(i) {
		const KernelControl *k = kernel_control_get(i);

		if (k->setting == setting && k->kind != CONTROL_CMDLINE && c->controls[i].present)
			return k;
	}
	return NULL;
}

void kernel_caps_set(KernelCaps *c, ControlId id, bool present, int value)
{
	const KernelControl *k = kernel_control_get(id);

	assert(k);
	c->controls[id] = (ControlState) { present, present ? value : 0,
					   present ? kernel_control_max(k, c->release) : 0 };
}

const char *kernel_caps_entry(const KernelCaps *c, size_t i, bool *ret)
{
	size_t n = 0;

	/* The controls with a file (or socket) of their own; a boot parameter or the partition is no capability. */
	CONTROL_FOREACH(j) {
		const KernelControl *k = kernel_control_get(j);

		if (k->kind == CONTROL_CMDLINE || k->kind == CONTROL_PARTITION)
			continue;
		if (n++ == i) {
			*ret = c->controls[j].present;
			return k->key;
		}
	}
	switch (i - n) {
	case 0:
		*ret = c->cgroup_v2;
		return "cgroup_v2";
	case 1:
		*ret = c->cgroup_v2_cpuset;
		return "cgroup_v2_cpuset";
	case 2:
		*ret = c->cpuset_partitions;
		return "cpuset_partitions";
	case 3:
		*ret = c->debugfs_sched;
		return "debugfs_sched";
	case 4:
		*ret = c->lockdown;
		return "lockdown";
	case 5:
		*ret = c->numa_averaging_intel;
		return "numa_averaging_intel";
	case 6:
		*ret = c->numa_averaging_hygon;
		return "numa_averaging_hygon";
	case 7:
		*ret = c->schedstat_version > 0;
		return "schedstat";
	case 8:
		*ret = kernel_caps_sched_ext_running(c);
		return "sched_ext";
	default:
		break;
	}
	/* Then one entry per known fix (fixes.c): does the release carry it? */
	if (i - n - 9 < _KERNEL_FIX_MAX) {
		static char names[_KERNEL_FIX_MAX][24];
		const KernelFix *f = kernel_fix_get((KernelFixId)(i - n - 9));

		snprintf(names[f->id], sizeof(names[f->id]), "fix_%s", f->commit);
		*ret = kernel_fix_carried(f, c->release) > 0;
		return names[f->id];
	}
	return NULL;
}

bool kernel_caps_sched_ext_running(const KernelCaps *c)
{
	return streq(c->sched_ext_state, "enabled") || streq(c->sched_ext_state, "enabling");
}

void kernel_probe_sched_ext(int root_fd, KernelCaps *c)
{
	char buf[64];

	c->sched_ext_state[0] = c->sched_ext_ops[0] = '\0';
	if (read_line_buf_at(root_fd, "sys/kernel/sched_ext/state", buf, sizeof(buf)) >= 0)
		snprintf(c->sched_ext_state, sizeof(c->sched_ext_state), "%s", buf);
	if (read_line_buf_at(root_fd, "sys/kernel/sched_ext/root/ops", buf, sizeof(buf)) >= 0)
		snprintf(c->sched_ext_ops, sizeof(c->sched_ext_ops), "%s", buf);
}

/* Parse "major.minor" of a release string; 0 on failure. */
static unsigned release_code(const char *release)
{
	unsigned major = 0, minor = 0;

	if (sscanf(release, "%u.%u", &major, &minor) < 2)
		return 0;
	return major * 1000 + minor;
}

static void note(KernelCaps *c, const char *s)
{
	(void)strv_extend(&c->notes, s);
}

/*
 * A missing file (ENOENT, or ENOTDIR for a missing directory on the way)
 * is an absent control, said by the notes below where it matters. A file
 * that is there and cannot be read (EIO, EACCES, EAGAIN...) is taken as
 * absent too, but never silently: the note names the path and the error.
 */
static int checked(KernelCaps *c, const char *path, int r)
{
	if (r < 0 && r != -ENOENT && r != -ENOTDIR)
		(void)strv_push(&c->notes, strprintf("/%s: %s, taken as absent", path, strerror(-r)));
	return r;
}

static int probe_line(KernelCaps *c, int root_fd, const char *path, char **ret)
{
	return checked(c, path, read_line_at(root_fd, path, ret));
}

static int probe_file(KernelCaps *c, int root_fd, const char *path, char **ret)
{
	return checked(c, path, read_file_at(root_fd, path, 0, ret, NULL));
}

/*
 * Every control of the table, in its order: a control is there when its
 * file is and holds what the control's decoder understands.
 */
static void probe_controls(KernelCaps *c, int root_fd)
{
	CONTROL_FOREACH(i) {
		const KernelControl *k = kernel_control_get(i);
		_cleanup_free_ char *s = NULL;
		int v;

		if (k->probed_elsewhere)
			continue;
		if ((k->kind == CONTROL_FEATURE ? probe_file(c, root_fd, k->path, &s)
						: probe_line(c, root_fd, k->path, &s)) < 0)
			continue;
		if (kernel_control_decode(k, s, &v) >= 0)
			c->controls[i] = (ControlState) { true, v, kernel_control_max(k, c->release) };
	}
}

/* A hex CPU mask file; -ENOENT when absent, -EINVAL when it holds no mask. */
static int probe_mask(KernelCaps *c, int root_fd, const char *path, CpuSet *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = probe_line(c, root_fd, path, &s);
	if (r < 0)
		return r;
	r = cpuset_parse_mask(s, ret);
	if (r == -EINVAL)
		(void)strv_push(&c->notes, strprintf("/%s: not a CPU mask ('%s'), taken as absent", path, s));
	return r;
}

static int irq_compare(const void *a, const void *b)
{
	const KernelIrq *x = a, *y = b;

	return x->irq < y->irq ? -1 : x->irq > y->irq;
}

/* The PID in "irqbalance<PID>.sock", or 0. */
static int irqbalance_sock_pid(const char *name)
{
	const char *p = startswith(name, "irqbalance");
	unsigned pid;
	int n = -1;

	if (!p || sscanf(p, "%u.sock%n", &pid, &n) != 1 || n < 0 || p[n] || pid == 0 || pid > INT_MAX)
		return 0;
	return (int)pid;
}

void kernel_probe_housekeeping(int root_fd, KernelCaps *c)
{
	_cleanup_close_ int fd = -EBADF;
	DIR *d;

	cpuset_done(&c->irq_default);
	cpuset_done(&c->workqueue_mask);
	kernel_irqs_free(c->irqs, c->n_irqs);
	c->irqs = NULL;
	c->n_irqs = 0;
	c->irqbalance_pid = 0;

	kernel_caps_set(c, CONTROL_IRQ_AFFINITY,
			probe_mask(c, root_fd, "proc/irq/default_smp_affinity", &c->irq_default) >= 0, 0);
	fd = open_beneath(root_fd, "proc/irq", O_RDONLY | O_DIRECTORY, 0, FILEIO_READ);
	if (fd >= 0 && (d = fdopendir(fd))) {
		fd = -EBADF;
		for (struct dirent *de; (de = readdir(d));) {
			_cleanup_free_ char *path = NULL, *s = NULL;
			KernelIrq *n;
			CpuSet aff = {};
			unsigned irq;

			if (safe_atou_base(de->d_name, 10, &irq) < 0)
				continue;
			path = strprintf("proc/irq/%u/smp_affinity_list", irq);
			/* An IRQ freed while we look (ENOENT) is no IRQ of this machine any more. */
			if (!path || read_line_at(root_fd, path, &s) < 0 || cpuset_parse_list(s, &aff, NULL) < 0)
				continue;
			n = realloc(c->irqs, (c->n_irqs + 1) * sizeof(KernelIrq));
			if (!n) {
				cpuset_done(&aff);
				break;
			}
			c->irqs = n;
			c->irqs[c->n_irqs++] = (KernelIrq) { irq, aff };
		}
		closedir(d);
		qsort(c->irqs, c->n_irqs, sizeof(KernelIrq), irq_compare);
	}
	kernel_caps_set(c, CONTROL_WORKQUEUE_CPUMASK,
			probe_mask(c, root_fd, "sys/devices/virtual/workqueue/cpumask", &c->workqueue_mask) >= 0, 0);

	/* irqbalance 1.9 (Debian 12) listens on run/irqbalance/irqbalance<PID>.sock. */
	fd = open_beneath(root_fd, "run/irqbalance", O_RDONLY | O_DIRECTORY, 0, FILEIO_READ);
	if (fd >= 0 && (d = fdopendir(fd))) {
		fd = -EBADF;
		for (struct dirent *de; (de = readdir(d));) {
			int pid = irqbalance_sock_pid(de->d_name);

			if (pid > 0 && (de->d_type == DT_SOCK || de->d_type == DT_UNKNOWN))
				c->irqbalance_pid = pid;
		}
		closedir(d);
	}
	kernel_caps_set(c, CONTROL_IRQBALANCE_SOCKET, c->irqbalance_pid > 0, 0);
}

int kernel_probe(int root_fd, KernelCaps *ret)
{
	_cleanup_free_ char *s = NULL;
	KernelCaps c;

	caps_init(&c);

	if (probe_line(&c, root_fd, "proc/sys/kernel/osrelease", &s) >= 0)
		snprintf(c.release, sizeof(c.release), "%s", s);
	free(s);
	s = NULL;

	if (probe_line(&c, root_fd, "sys/kernel/security/lockdown", &s) >= 0) {
		const char *open_b = strchr(s, '['), *close_b = open_b ? strchr(open_b, ']') : NULL;

		if (open_b && close_b) {
			snprintf(c.lockdown_mode, sizeof(c.lockdown_mode), "%.*s", (int)(close_b - open_b - 1),
				 open_b + 1);
			c.lockdown = !streq(c.lockdown_mode, "none");
		}
	}
	free(s);
	s = NULL;

	c.debugfs_sched = dir_exists_at(root_fd, "sys/kernel/debug/sched");

	probe_controls(&c, root_fd);
	if (!kernel_caps_has(&c, CONTROL_SMT_BUDDY_SYSCTL) && !kernel_caps_has(&c, CONTROL_SMT_BUDDY_DEBUGFS))
		note(&c, "SMT_BUDDY_ASSIST: not in this kernel (no /proc/sys/kernel/sched_smt_buddy_assist, "
			 "no token in /sys/kernel/debug/sched/features)");
	else if (!kernel_caps_has(&c, CONTROL_SMT_BUDDY_SYSCTL) && c.lockdown)
		note(&c, "SMT_BUDDY_ASSIST: only debugfs control, read-only under lockdown");

	if (!kernel_caps_control(&c, SETTING_RELAX_DOMAIN_LEVEL))
		note(&c, "relax_domain_level: no runtime control (no /proc/sys/kernel/sched_relax_domain_level, "
			 "no cgroup v1 cpuset), boot parameter only");

	if (probe_line(&c, root_fd, "sys/fs/cgroup/cgroup.controllers", &s) >= 0) {
		c.cgroup_v2 = true;
		c.cgroup_v2_cpuset = string_has_word(s, "cpuset");
		c.cpuset_partitions = c.cgroup_v2_cpuset &&
				      (release_code(c.release) == 0 || release_code(c.release) >= 5011);
	}
	free(s);
	s = NULL;
	if (c.cgroup_v2_cpuset && probe_line(&c, root_fd, "sys/fs/cgroup/cpuset.cpus.isolated", &s) >= 0)
		c.isolated_known = cpuset_parse_list(s, &c.isolated, NULL) >= 0;
	free(s);
	s = NULL;
	kernel_caps_set(&c, CONTROL_CPUSET_PARTITION, c.cpuset_partitions, 0);
	if (!c.cgroup_v2_cpuset)
		note(&c, c.cgroup_v2 ? "isolation: cgroup v2 without the cpuset controller"
				     : "isolation: no cgroup v2 hierarchy at /sys/fs/cgroup");

	/*
	 * The stock SNC-3 fix-up landed in 6.17; our series adds Hygon and a
	 * sysctl, and on older bases (6.12) it carries the fix-up's backport.
	 */
	c.numa_averaging_hygon = kernel_caps_has(&c, CONTROL_SMT_BUDDY_SYSCTL);
	c.numa_averaging_intel = release_code(c.release) >= 6017 || c.numa_averaging_hygon;

	if (probe_file(&c, root_fd, "proc/schedstat", &s) >= 0)
		(void)sscanf(s, "version %d", &c.schedstat_version);
	kernel_probe_sched_ext(root_fd, &c);
	kernel_probe_housekeeping(root_fd, &c);
	kernel_probe_irqs_refused(root_fd, &c);
	if (kernel_caps_sched_ext_running(&c))
		(void)strv_push(&c.notes, strprintf("sched_ext: BPF scheduler '%s' is %s: the fair-class settings "
						    "do not govern the tasks it schedules",
						    c.sched_ext_ops[0] ? c.sched_ext_ops : "unknown", c.sched_ext_state));

	*ret = c;
	return 0;
}

const char *kernel_errno_name(int error)
{
	const char *n = error < 0 ? strerrorname_np(-error) : NULL;

	return n ?: "unknown";
}

static int errno_from_name(const char *name)
{
	/* The kernel's errnos end below 4096 (MAX_ERRNO). */
	for (int e = 1; e < 4096; e++) {
		const char *n = strerrorname_np(e);

		if (n && streq(n, name))
			return -e;
	}
	return 0;
}

const char *kernel_irq_refused_reason(int error)
{
	/* irq_set_affinity() says EIO for managed IRQs and for IRQs that cannot move at all (per-CPU). */
	if (error == -EIO)
		return "managed or per-CPU";
	return error < 0 ? strerror(-error) : "the error was not recorded";
}

int kernel_irqs_refused_format(const unsigned *irqs, const int *errors, size_t n, char **ret)
{
	StrBuf b = {};

	strbuf_append(&b, "# IRQs whose affinity the kernel refused at topotuned's last apply: IRQ ERRNO\n");
	for (size_t i = 0; i < n; i++)
		strbuf_appendf(&b, "%u %s\n", irqs[i], kernel_errno_name(errors[i]));
	return strbuf_steal(&b, ret);
}

static int refused_push(unsigned **irqs, int **errors, size_t *n, unsigned irq, int error)
{
	unsigned *i = realloc(*irqs, (*n + 1) * sizeof(unsigned));
	int *e;

	if (!i)
		return -ENOMEM;
	*irqs = i;
	e = realloc(*errors, (*n + 1) * sizeof(int));
	if (!e)
		return -ENOMEM;
	*errors = e;
	i[*n] = irq;
	e[(*n)++] = error;
	return 0;
}

int kernel_irqs_refused_parse(const char *text, unsigned **ret_irqs, int **ret_errors, size_t *ret_n,
			      unsigned *ret_line)
{
	_cleanup_free_ unsigned *irqs = NULL;
	_cleanup_free_ int *errors = NULL;
	size_t n = 0;
	unsigned line = 0;

	for (const char *p = text; *p;) {
		const char *eol = strchrnul(p, '\n');
		char irq_s[16], name[32], extra[2];
		_cleanup_free_ char *l = strndup(p, (size_t)(eol - p));
		unsigned irq;
		int error, k, r;
		char *t;

		if (!l)
			return -ENOMEM;
		line++;
		p = *eol ? eol + 1 : eol;
		t = strip(l);
		if (*t == '\0' || *t == '#')
			continue;
		k = sscanf(t, "%15s %31s %1s", irq_s, name, extra);
		if (k != 2 || safe_atou_base(irq_s, 10, &irq) < 0 || irq > INT_MAX ||
		    (error = errno_from_name(name)) == 0) {
			if (ret_line)
				*ret_line = line;
			return -EBADMSG;
		}
		r = refused_push(&irqs, &errors, &n, irq, error);
		if (r < 0)
			return r;
	}
	*ret_irqs = TAKE_PTR(irqs);
	*ret_errors = TAKE_PTR(errors);
	*ret_n = n;
	return 0;
}

void kernel_probe_irqs_refused(int root_fd, KernelCaps *c)
{
	_cleanup_free_ char *s = NULL;
	_cleanup_free_ unsigned *irqs = NULL;
	_cleanup_free_ int *errors = NULL;
	size_t n = 0;
	unsigned line = 0;
	int r;

	/* The daemon writes it through no link; a link there was planted: -ELOOP. */
	r = read_file_beneath(root_fd, KERNEL_IRQS_REFUSED_FILE, FILEIO_WRITE, 0, &s, NULL);
	if (r == -ENOENT || r == -ENOTDIR)
		return;
	if (r >= 0)
		r = kernel_irqs_refused_parse(s, &irqs, &errors, &n, &line);
	if (r == -ENOMEM)
		return;
	if (r < 0 && line > 0) {
		(void)strv_push(&c->notes, strprintf("housekeeping: /%s:%u: not \"IRQ ERRNO\" (as \"25 EIO\"), "
						     "ignoring the file: no IRQ is known to refuse a move",
						     KERNEL_IRQS_REFUSED_FILE, line));
		return;
	}
	if (r < 0) {
		(void)strv_push(&c->notes, strprintf("housekeeping: /%s: %s, ignoring the file: no IRQ is known to "
						     "refuse a move", KERNEL_IRQS_REFUSED_FILE, strerror(-r)));
		return;
	}

	free(c->irqs_refused);
	free(c->irqs_refused_error);
	c->irqs_refused = NULL;
	c->irqs_refused_error = NULL;
	c->n_irqs_refused = 0;
	for (size_t i = 0; i < n; i++) {
		char path[32];

		/* Freed since the daemon's apply: nothing to say about it. */
		snprintf(path, sizeof(path), "proc/irq/%u", irqs[i]);
		if (!dir_exists_at(root_fd, path))
			continue;
		if (refused_push(&c->irqs_refused, &c->irqs_refused_error, &c->n_irqs_refused, irqs[i], errors[i]) < 0)
			return;
	}
}

/* The controls the table says a stock (or a patched) kernel has, with their assumed values. */
static void caps_assume(KernelCaps *c, bool patched)
{
	CONTROL_FOREACH(i) {
		const KernelControl *k = kernel_control_get(i);

		if (patched ? k->patched : k->stock)
			kernel_caps_set(c, i, true, k->assumed);
	}
}

void kernel_caps_stock(KernelCaps *ret)
{
	caps_init(ret);
	snprintf(ret->release, sizeof(ret->release), "7.3.4 (assumed, stock)");
	caps_assume(ret, false);
	ret->cgroup_v2 = ret->cgroup_v2_cpuset = ret->cpuset_partitions = true;
	ret->isolated_known = true;
	ret->debugfs_sched = true;
	ret->numa_averaging_intel = true;
	ret->schedstat_version = 17;
	note(ret, "SMT_BUDDY_ASSIST: not in a stock kernel");
	note(ret, "relax_domain_level: no runtime control on a stock cgroup v2 kernel, boot parameter only");
}

void kernel_caps_patched(KernelCaps *ret)
{
	caps_init(ret);
	snprintf(ret->release, sizeof(ret->release), "7.3.4+topotune (assumed)");
	caps_assume(ret, true);
	ret->cgroup_v2 = ret->cgroup_v2_cpuset = ret->cpuset_partitions = true;
	ret->isolated_known = true;
	ret->debugfs_sched = true;
	ret->numa_averaging_intel = ret->numa_averaging_hygon = true;
	ret->schedstat_version = 17;
}
