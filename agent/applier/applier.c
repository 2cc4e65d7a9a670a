/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The applier: executes a Plan through the root fd, with a write-ahead
 * record, read-back, all-or-nothing rollback and byte-exact revert.
 * Depends on basic and the planner's types. It does no D-Bus itself: the
 * daemon passes hooks for systemd's AllowedCPUs= and StartUnit/StopUnit.
 *
 * Isolation under systemd (what systemd 252, Debian 12's, does; from
 * src/core/slice.c, cgroup.c and systemd.resource-control(5)):
 * - A slice has a cgroup only while it is active: slice_start() realises
 *   it (unit_realize_cgroup()), stopping prunes it. SetUnitProperties() on
 *   an inactive slice only keeps the property (runtime: a drop-in in
 *   /run/systemd/system.control/); nothing appears in /sys/fs/cgroup.
 * - A unit with AllowedCPUs= needs the cpuset controller: when systemd
 *   realises it, it enables cpuset in every parent's cgroup.subtree_control
 *   on the way down (the root's included) and writes the unit's
 *   cpuset.cpus; when no active unit needs cpuset any more it disables it
 *   again. We never write subtree_control ourselves under systemd: systemd
 *   owns it and would undo it.
 * - systemd acts after it answers: a job runs from its event loop, a
 *   property change of an active unit goes through the realisation queue.
 *   So each step is waited for in the tree (wait_slice()).
 * - systemd knows nothing of cpuset.cpus.partition: we write it, and read
 *   it back (the kernel says "isolated invalid (reason)" when it refuses).
 *   systemd may write cpuset.cpus again (daemon-reload): the same value,
 *   which the kernel accepts for a partition.
 * - Units in a slice depend on it (Requires=, After=): stopping the slice
 *   stops them. Revert therefore stops the slice only when it has no
 *   cgroup below it (cgroup.stat nr_descendants 0); otherwise it stays
 *   active without our AllowedCPUs= and partition.
 * - There is no call to drop one runtime property: revert sets
 *   AllowedCPUs= empty (the default), which stays in the runtime drop-in
 *   until the next boot.
 * - Setting a property of a slice realises its cgroup even when the slice
 *   is inactive (bus_slice_commit_properties()), so a cgroup directory is
 *   no proof that the slice runs: its ActiveState is asked for.
 * So the steps are StartUnit (WRITE_UNIT), AllowedCPUs= (WRITE_SYSTEMD),
 * cpuset.cpus.partition (WRITE_PARTITION); revert and crash recovery undo
 * them in reverse through the same calls, and the slice's cgroup goes with
 * the stop that comes last.
 * - Under topotuned.service the slice is active before the daemon starts
 *   (Wants=, After=; its sandbox can only open a cgroup that exists when
 *   the namespace is made), so StartUnit is a step already in sync and
 *   revert never stops it; the slice's StopWhenUnneeded= stops it with the
 *   service when no workload runs in it.
 */
#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "applier.h"
#include "control.h"
#include "fileio.h"
#include "log.h"
#include "strutil.h"

static const char *const write_kind_table[_WRITE_KIND_MAX] = {
	[WRITE_PLAIN] = "plain",
	[WRITE_FEATURE] = "feature",
	[WRITE_SUBTREE] = "subtree",
	[WRITE_PARTITION] = "partition",
	[WRITE_MKDIR] = "mkdir",
	[WRITE_FILE] = "file",
	[WRITE_SYSTEMD] = "systemd",
	[WRITE_UNIT] = "unit",
	[WRITE_MASK] = "mask",
	[WRITE_IRQ] = "irq",
	[WRITE_IRQBALANCE] = "irqbalance",
};
DEFINE_STRING_TABLE_LOOKUP(write_kind, WriteKind);

#define SLICE_DIR "sys/fs/cgroup/" ISOLATION_SLICE
/*
 * With manage_bootloader the daemon writes data, not shell: the relax level
 * alone, in run/topotune/bootloader.request. topotune-bootloader.path starts
 * the service whose helper (units/update-bootloader) validates it and
 * renders /etc/default/grub.d/topotune.cfg itself; the daemon's sandbox
 * cannot write grub.d, which update-grub sources as root.
 */
#define BOOT_REQUEST STATE_DIR "/bootloader.request"

static int io_read(void *u, int root_fd, const char *path, char **ret)
{
	/* What the applier writes it reads by the same rule: never through a link. */
	return read_file_beneath(root_fd, path, FILEIO_WRITE, 0, ret, NULL);
}

static int io_write(void *u, int root_fd, const char *path, const char *value)
{
	return write_string_at(root_fd, path, value);
}

static int io_mkdir(void *u, int root_fd, const char *path)
{
	return mkdir_beneath(root_fd, path, 0755);
}

static int io_create(void *u, int root_fd, const char *path, const char *value)
{
	return create_file_at(root_fd, path, value, 0644);
}

static int io_remove(void *u, int root_fd, const char *path, bool dir)
{
	return unlink_beneath(root_fd, path, dir);
}

const ApplierIo applier_io_default = {
	.read = io_read,
	.write = io_write,
	.mkdir = io_mkdir,
	.remove = io_remove,
	.create = io_create,
};

static void record_done(ChangeRecord *c)
{
	free(c->path);
	free(c->old);
	free(c->new);
	free(c->why);
	*c = (ChangeRecord) {};
}

Applier *applier_free(Applier *a)
{
	if (!a)
		return NULL;
	for (size_t i = 0; i < a->n_changes; i++)
		record_done(&a->changes[i]);
	free(a->changes);
	free(a->error);
	free(a->irqs_refused);
	free(a->irqs_refused_error);
	free(a->irqs_seen);
	free(a->irqbalance_path);
	free(a->irq_dir);
	free(a);
	return NULL;
}

int applier_set_irq_dir(Applier *a, const char *dir)
{
	_cleanup_close_ int fd = -EBADF;
	struct statfs sfs;
	char *d;

	fd = open_beneath(a->root_fd, dir, O_RDONLY | O_DIRECTORY, 0, FILEIO_WRITE);
	if (fd == -ENOENT || fd == -ENOTDIR)
		return 0;
	if (fd < 0)
		return fd;
	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	/* An empty mount point, or anything but procfs: proc/irq itself. */
	if ((unsigned long)sfs.f_type != PROC_SUPER_MAGIC || faccessat(fd, "default_smp_affinity", F_OK, 0) < 0)
		return 0;
	d = strdup(dir);
	if (!d)
		return -ENOMEM;
	free(a->irq_dir);
	a->irq_dir = d;
	return 1;
}

int applier_new(int root_fd, const ApplierIo *io, const ApplierHooks *hooks, Applier **ret)
{
	Applier *a = calloc(1, sizeof(Applier));

	assert(ret);

	if (!a)
		return -ENOMEM;
	a->root_fd = root_fd;
	a->io = io ? *io : applier_io_default;
	a->unit_wait_ms = 5000;
	if (hooks)
		a->hooks = *hooks;
	*ret = a;
	return 0;
}

_printf_(3, 4) static int fail(Applier *a, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vstrprintf_to(&a->error, fmt, ap);   /* out of memory: the previous error stays */
	va_end(ap);
	return r;
}

/* --- the record file ------------------------------------------------------ */

static bool plain_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._/:+,-", c);
}

char *state_escape(const char *s)
{
	StrBuf b = {};
	char *r;

	if (!s)
		return strdup("!");
	strbuf_append(&b, "=");
	for (const char *p = s; *p; p++)
		if (plain_char(*p))
			strbuf_appendf(&b, "%c", *p);
		else
			strbuf_appendf(&b, "%%%02X", (unsigned char)*p);
	return strbuf_steal(&b, &r) < 0 ? NULL : r;
}

int state_unescape(const char *s, char **ret)
{
	char *out, *o;

	assert(s);
	assert(ret);

	if (streq(s, "!")) {
		*ret = NULL;
		return 0;
	}
	if (s[0] != '=')
		return -EBADMSG;
	out = o = malloc(strlen(s) + 1);
	if (!out)
		return -ENOMEM;
	for (const char *p = s + 1; *p; p++) {
		if (*p == '%') {
			unsigned v;

			if (!p[1] || !p[2] || sscanf(p + 1, "%2x", &v) != 1 || v == 0) {
				free(out);
				return -EBADMSG;
			}
			*o++ = (char)v;
			p += 2;
		} else if (plain_char(*p))
			*o++ = *p;
		else {
			free(out);
			return -EBADMSG;
		}
	}
	*o = '\0';
	*ret = out;
	return 0;
}

/*
 * The record's directory, made if missing, by the write rule: a run/ or
 * run/topotune/ that is a symlink is refused, not followed.
 */
static int state_dir_open(Applier *a, bool create, int *ret_fd)
{
	int fd, r;

	if (create) {
		r = mkdir_beneath(a->root_fd, "run", 0755);
		if (r < 0 && r != -EEXIST)
			return fail(a, r, "/run: %s", strerror(-r));
		r = mkdir_beneath(a->root_fd, STATE_DIR, 0755);
		if (r < 0 && r != -EEXIST)
			return fail(a, r, "/" STATE_DIR ": %s", strerror(-r));
	}
	fd = open_beneath(a->root_fd, STATE_DIR, O_PATH | O_DIRECTORY, 0, FILEIO_WRITE);
	if (fd < 0)
		return fail(a, fd, "/" STATE_DIR ": %s", strerror(-fd));
	*ret_fd = fd;
	return 0;
}

static int state_save(Applier *a)
{
	_cleanup_close_ int fd = -EBADF, dir_fd = -EBADF;
	StrBuf b = {};
	_cleanup_free_ char *text = NULL;
	size_t len, held = 0;
	ssize_t written;
	int r;

	for (size_t i = 0; i < a->n_changes; i++)
		held += !a->changes[i].restored;
	if (held == 0) {
		r = unlink_beneath(a->root_fd, STATE_FILE, false);
		if (r < 0 && r != -ENOENT)
			return fail(a, r, "/" STATE_FILE ": %s", strerror(-r));
		/* A state.tmp a kill -9 left between its creation and its rename: never a record. */
		r = unlink_beneath(a->root_fd, STATE_FILE ".tmp", false);
		if (r < 0 && r != -ENOENT)
			return fail(a, r, "/" STATE_FILE ".tmp: %s", strerror(-r));
		return 0;
	}
	r = state_dir_open(a, true, &dir_fd);
	if (r < 0)
		return r;

	strbuf_append(&b, "# topotune write-ahead record v1: kind done setting path old new why\n");
	for (size_t i = 0; i < a->n_changes; i++) {
		const ChangeRecord *c = &a->changes[i];
		_cleanup_free_ char *p = NULL, *o = NULL, *n = NULL, *w = NULL;

		if (c->restored)
			continue;   /* the original is back: nothing left to restore */
		p = state_escape(c->path);
		o = state_escape(c->old);
		n = state_escape(c->new);
		w = state_escape(c->why);

		if (!p || !o || !n || !w) {
			strbuf_done(&b);
			return -ENOMEM;
		}
		strbuf_appendf(&b, "change %s %d %s %s %s %s %s\n", write_kind_to_string(c->kind), c->done,
			       setting_id_to_string(c->setting), p, o, n, w);
	}
	r = strbuf_steal(&b, &text);
	if (r < 0)
		return r;

	/*
	 * A fresh file: whatever has the name (a stale one, a planted symlink)
	 * goes first, and O_EXCL|O_NOFOLLOW never opens anything but ours.
	 */
	(void)unlinkat(dir_fd, "state.tmp", 0);
	fd = openat(dir_fd, "state.tmp", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(a, negative_errno(), "/" STATE_FILE ".tmp: %s", strerror(errno));
	len = strlen(text);
	written = write(fd, text, len);
	if (written < 0 || (size_t)written != len || fsync(fd) < 0) {
		/* A short write sets no errno. */
		r = written >= 0 && (size_t)written != len ? -EIO : negative_errno();
		(void)unlinkat(dir_fd, "state.tmp", 0);
		return fail(a, r, "/" STATE_FILE ".tmp: %s", strerror(-r));
	}
	if (renameat(dir_fd, "state.tmp", dir_fd, "state") < 0) {
		r = negative_errno();
		/* The previous record stays as it was, and no half-made one beside it. */
		(void)unlinkat(dir_fd, "state.tmp", 0);
		return fail(a, r, "/" STATE_FILE ": %s", strerror(-r));
	}
	return 0;
}

static ChangeRecord *find_record(Applier *a, const char *path);
static void drop_record(Applier *a, size_t i);
static int read_housekeeping(Applier *a, const PlanStep *st, char **ret);
static int verify_irqs(Applier *a, const Plan *plan, Mismatch **m, size_t *n);
static int restore_one(Applier *a, size_t i);

/*
 * --- the allow-list: every path topotune writes, and what it writes there ---
 * The kernel controls' files and values come from the control table; the
 * isolation slice's steps and the bootloader drop-in are the applier's own.
 */

#define ROOT_SUBTREE "sys/fs/cgroup/cgroup.subtree_control"
#define SLICE_CPUS SLICE_DIR "/cpuset.cpus"
#define SLICE_PARTITION SLICE_DIR "/cpuset.cpus.partition"
#define SYSTEMD_ALLOWED "systemd:" ISOLATION_SLICE "/AllowedCPUs"
#define SYSTEMD_UNIT "systemd:" ISOLATION_SLICE "/ActiveState"
#define IRQ_DEFAULT "proc/irq/default_smp_affinity"
#define WORKQUEUE_MASK "sys/devices/virtual/workqueue/cpumask"
#define IRQBALANCE_DIR "run/irqbalance"

static const struct {
	WriteKind kind;
	const char *path;
} allowed_writes[] = {
	{ WRITE_FILE, BOOT_REQUEST },
	{ WRITE_SYSTEMD, SYSTEMD_ALLOWED },
	{ WRITE_UNIT, SYSTEMD_UNIT },
	{ WRITE_SUBTREE, ROOT_SUBTREE },
	{ WRITE_MKDIR, SLICE_DIR },
	{ WRITE_PLAIN, SLICE_CPUS },
	{ WRITE_PARTITION, SLICE_PARTITION },
	{ WRITE_MASK, IRQ_DEFAULT },
	{ WRITE_MASK, WORKQUEUE_MASK },
};

/* "proc/irq/<N>/smp_affinity_list" -> N; -EINVAL for any other path. */
static int irq_of_path(const char *path)
{
	const char *p = startswith(path, "proc/irq/");
	unsigned irq;
	int n = -1;

	if (!p || !isdigit((unsigned char)*p) || sscanf(p, "%u/smp_affinity_list%n", &irq, &n) != 1 || n < 0 ||
	    p[n] || irq > INT_MAX)
		return -EINVAL;
	return (int)irq;
}

/* "run/irqbalance/irqbalance<PID>.sock", the socket irqbalance 1.9 listens on. */
static bool irqbalance_path_valid(const char *path)
{
	const char *p = startswith(path, IRQBALANCE_DIR "/irqbalance");
	unsigned pid;
	int n = -1;

	return p && isdigit((unsigned char)*p) && sscanf(p, "%u.sock%n", &pid, &n) == 1 && n > 0 && !p[n] &&
	       pid > 0;
}

/* A hex mask as the kernel prints it ("ff", "00000000,000000ff"), blanks around it. */
static bool mask_valid(const char *value)
{
	CpuSet set = {};
	bool ok;

	if (strlen(value) > CPUSET_MAX_CPUS / 4 + CPUSET_MAX_CPUS / 32 + 2)
		return false;
	ok = cpuset_parse_mask(value, &set) >= 0;
	cpuset_done(&set);
	return ok;
}

/*
 * A boot loader request is one relax level and a newline, nothing else:
 * "2\n". units/update-bootloader checks the same before rendering it.
 */
static bool boot_request_valid(const char *value)
{
	int v = 0;
	size_t n = 0;

	if (!value)
		return true;   /* absent: no request */
	for (; value[n] >= '0' && value[n] <= '9'; n++)
		v = v * 10 + (value[n] - '0');
	/* "0\n" to "15\n": no sign, no leading zero. */
	return n >= 1 && n <= 2 && !(n == 2 && value[0] == '0') && v <= BOOT_RELAX_LEVEL_MAX &&
	       streq(value + n, "\n");
}

/* A number file's value (a sysctl, cgroup v1's relax level): one integer, blanks around it. */
static bool control_value_valid(const KernelControl *c, const char *value)
{
	_cleanup_free_ char *t = strdup(value);
	int v;

	/* kernel_control_decode() strips: a newline inside would end the number. */
	return t && !strpbrk(strip(t), WHITESPACE) && kernel_control_decode(c, t, &v) >= 0;
}

/* A cpulist ("", "2,8", "0-11") with blanks around it. */
static bool cpulist_valid(const char *value)
{
	_cleanup_free_ char *t = strdup(value);
	CpuSet set = {};
	int r;

	if (!t || strpbrk(strip(t), WHITESPACE))
		return false;
	r = cpuset_parse_list(t, &set, NULL);
	cpuset_done(&set);
	return r >= 0;
}

/* What cpuset.cpus.partition holds, as topotune writes it back. */
static bool partition_valid(const char *value)
{
	_cleanup_free_ char *t = strdup(value);

	return t && (streq(strip(t), "member") || streq(t, "root") || streq(t, "isolated"));
}

/*
 * Is this a write the planner makes? The planner's writes go through push(),
 * which asks here too; a record from disk is checked against the same list
 * before anything touches its path. Returns NULL or why not.
 */
static const char *write_refused(WriteKind kind, const char *path, const char *value)
{
	const KernelControl *control = NULL;
	bool listed = false;
	int v;

	for (size_t i = 0; i < ELEMENTSOF(allowed_writes); i++)
		if (allowed_writes[i].kind == kind && streq(allowed_writes[i].path, path))
			listed = true;
	if ((kind == WRITE_IRQ && irq_of_path(path) >= 0) || (kind == WRITE_IRQBALANCE && irqbalance_path_valid(path)))
		listed = true;
	for (ControlId i = 0; !listed && i < _CONTROL_ID_MAX; i++) {
		const KernelControl *c = kernel_control_get(i);

		if ((kind == WRITE_PLAIN && c->kind == CONTROL_VALUE) ||
		    (kind == WRITE_FEATURE && c->kind == CONTROL_FEATURE))
			if (c->path && streq(c->path, path)) {
				control = c;
				listed = true;
			}
	}
	if (!listed)
		return "not a path topotune writes";
	/*
	 * Every value parses as what it is, as the plan's values do: a record's
	 * original is written back verbatim, so garbage or shell there would
	 * reach the kernel or the boot loader. NULL (absent) is only for files
	 * and directories we create.
	 */
	if (value && control && kind == WRITE_PLAIN && !control_value_valid(control, value))
		return "not a value of the control (a number)";
	if (value && !control && kind == WRITE_PLAIN && !cpulist_valid(value))
		return "not a CPU list";
	if (value && kind == WRITE_SYSTEMD && !cpulist_valid(value))
		return "not a CPU list";
	if (value && (kind == WRITE_IRQ || kind == WRITE_IRQBALANCE) && !cpulist_valid(value))
		return "not a CPU list";
	if (value && kind == WRITE_MASK && !mask_valid(value))
		return "not a CPU mask";
	if (value && kind == WRITE_PARTITION && !partition_valid(value))
		return "not a partition type (member, root, isolated)";
	if (!value && kind != WRITE_FILE && kind != WRITE_MKDIR && kind != WRITE_UNIT)
		return "no value";
	/* A feature token is the control's own (a record's original may be "": no token). */
	if (control && kind == WRITE_FEATURE && value && *value &&
	    (kernel_control_decode(control, value, &v) < 0 || strchr(value, ' ')))
		return "not a sched_features token topotune writes";
	switch (kind) {
	case WRITE_SUBTREE:
		if (value && !streq(value, "+cpuset") && !streq(value, "-cpuset"))
			return "not a controller change topotune makes";
		break;
	case WRITE_MKDIR:
		if (value && !streq(value, "dir"))
			return "not a directory record";
		break;
	case WRITE_FILE:
		if (!boot_request_valid(value))
			return "not a boot loader request (a relax level and a newline)";
		break;
	case WRITE_UNIT:
		if (value && !streq(value, "active") && !streq(value, "inactive"))
			return "not a unit state topotune sets";
		break;
	default:
		break;
	}
	return NULL;
}

/* One line of the record; NULL *ret_bad: a change, else why the line is refused. */
static int parse_line(Applier *a, const char *line, ChangeRecord *ret, const char **ret_bad)
{
	_cleanup_strv_free_ char **w = NULL;
	ChangeRecord c = {};
	int kind, r;

	*ret_bad = NULL;
	r = strv_split(line, " ", &w);
	if (r < 0)
		return r;
	if (strv_length(w) != 8 || !streq(w[0], "change") || (!streq(w[2], "0") && !streq(w[2], "1"))) {
		*ret_bad = "malformed record";
		return 0;
	}
	kind = write_kind_from_string(w[1]);
	c.setting = setting_id_from_string(w[3]);
	if (kind < 0 || (int)c.setting < 0) {
		*ret_bad = "unknown kind or setting";
		return 0;
	}
	c.kind = kind;
	c.done = streq(w[2], "1");
	if (state_unescape(w[4], &c.path) < 0 || !c.path || state_unescape(w[5], &c.old) < 0 ||
	    state_unescape(w[6], &c.new) < 0 || state_unescape(w[7], &c.why) < 0) {
		record_done(&c);
		*ret_bad = "bad value encoding";
		return 0;
	}
	*ret_bad = write_refused(c.kind, c.path, c.old) ?: write_refused(c.kind, c.path, c.new);
	if (!*ret_bad && find_record(a, c.path))
		*ret_bad = "path recorded twice";
	if (*ret_bad) {
		record_done(&c);
		return 0;
	}
	*ret = c;
	return 0;
}

static int add_change(Applier *a, ChangeRecord *c)
{
	ChangeRecord *n = realloc(a->changes, (a->n_changes + 1) * sizeof(ChangeRecord));

	if (!n) {
		record_done(c);
		return -ENOMEM;
	}
	a->changes = n;
	a->changes[a->n_changes++] = *c;
	*c = (ChangeRecord) {};
	return 0;
}

/*
 * The next line of @*p, cut in place (its newline becomes the end); NULL at
 * the end of the text. One pass over the text, whatever its number of lines.
 */
static char *next_line(char **p)
{
	char *l = *p, *nl;

	if (!l || !*l)
		return NULL;
	nl = strchr(l, '\n');
	if (nl) {
		*nl = '\0';
		*p = nl + 1;
	} else
		*p = l + strlen(l);
	return l;
}

/* The record as read_file_beneath() gives it, within STATE_FILE_MAX bytes. */
static int read_record(Applier *a, char **ret)
{
	return read_file_beneath(a->root_fd, STATE_FILE, FILEIO_WRITE, STATE_FILE_MAX, ret, NULL);
}

int applier_load_state(Applier *a)
{
	_cleanup_free_ char *text = NULL;
	unsigned lineno = 0;
	char *p, *l;
	int r;

	assert(a);

	r = read_record(a, &text);
	if (r == -ENOENT)
		return 0;
	if (r == -EFBIG)
		return fail(a, r, "/" STATE_FILE ": larger than %u bytes: not a record topotune writes",
			    STATE_FILE_MAX);
	if (r < 0)
		return fail(a, r, "/" STATE_FILE ": %s", strerror(-r));

	for (p = text; (l = next_line(&p));) {
		ChangeRecord c = {};
		const char *bad;

		lineno++;
		if (l[0] == '#' || !l[0])
			continue;
		r = parse_line(a, l, &c, &bad);
		if (r < 0)
			return r;
		if (bad)
			return fail(a, -EBADMSG, "/" STATE_FILE ":%u: %s", lineno, bad);
		r = add_change(a, &c);
		if (r < 0)
			return r;
	}
	return (int)a->n_changes;
}

void recovery_done(Recovery *rec)
{
	assert(rec);

	rec->problems = strv_free(rec->problems);
	free(rec->aside);
	*rec = (Recovery) {};
}

/*
 * Keep @text in run/topotune/state.failed-<UTC time>, a new file ("-2",
 * "-3"... when a second recovery falls in the same second); @text NULL:
 * move the record itself there, whatever it is.
 */
static int set_aside(Applier *a, const char *text, char **ret_path)
{
	_cleanup_close_ int dir_fd = -EBADF;
	char stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	int r;

	r = state_dir_open(a, text != NULL, &dir_fd);
	if (r < 0)
		return r;
	if (!gmtime_r(&now, &tm) || strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm) == 0)
		return -EINVAL;
	for (unsigned i = 1; i < 100; i++) {
		_cleanup_free_ char *name = i == 1 ? strprintf("state.failed-%s", stamp)
						  : strprintf("state.failed-%s-%u", stamp, i);
		_cleanup_close_ int fd = -EBADF;
		size_t len;
		ssize_t n;

		if (!name)
			return -ENOMEM;
		if (!text) {
			if (renameat2(dir_fd, "state", dir_fd, name, RENAME_NOREPLACE) < 0) {
				if (errno == EEXIST)
					continue;
				return fail(a, negative_errno(), "/" STATE_FILE ": moving it to %s: %m", name);
			}
		} else {
			fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 && errno == EEXIST)
				continue;
			if (fd < 0)
				return fail(a, negative_errno(), "/" STATE_DIR "/%s: %m", name);
			len = strlen(text);
			n = write(fd, text, len);
			if (n < 0 || (size_t)n != len || fsync(fd) < 0) {
				r = n >= 0 && (size_t)n != len ? -EIO : negative_errno();
				(void)unlinkat(dir_fd, name, 0);
				return fail(a, r, "/" STATE_DIR "/%s: %s", name, strerror(-r));
			}
		}
		*ret_path = strprintf("/" STATE_DIR "/%s", name);
		return *ret_path ? 0 : -ENOMEM;
	}
	return fail(a, -EEXIST, "/" STATE_DIR "/state.failed-%s: too many", stamp);
}

/*
 * One problem for StateReasons; past RECOVERY_PROBLEMS_MAX they are only
 * counted: the file aside has every line, and a record of 200,000 bad lines
 * must not become 13 MB of a D-Bus property.
 */
static void recovery_problem(Recovery *rec, const char *fmt, ...) _printf_(2, 3);
static void recovery_problem(Recovery *rec, const char *fmt, ...)
{
	va_list ap;

	if (rec->n_problems++ >= RECOVERY_PROBLEMS_MAX)
		return;
	va_start(ap, fmt);
	(void)strv_push(&rec->problems, vstrprintf(fmt, ap));
	va_end(ap);
}

/* "... and N more", once, after the last problem. */
static void recovery_problems_end(Recovery *rec)
{
	unsigned more = rec->n_problems > RECOVERY_PROBLEMS_MAX ? rec->n_problems - RECOVERY_PROBLEMS_MAX : 0;

	if (more > 0)
		(void)strv_push(&rec->problems,
				strprintf("... and %u more problem%s of the record (all of them in %s)", more,
					  more == 1 ? "" : "s", strna(rec->aside)));
}

int applier_recover(Applier *a, Recovery *ret)
{
	_cleanup_free_ char *text = NULL;
	Recovery rec = {};
	StrBuf aside = {};
	unsigned lineno = 0;
	size_t kept = 0;
	char *cur, *l;
	int r;

	assert(a);

	*ret = (Recovery) {};
	r = read_record(a, &text);
	if (r == -ENOENT)
		return 0;
	strbuf_append(&aside, "# topotune: what recovery could not restore, or refused; nothing reads this file again\n");
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* Not a record we can read (a link, a FIFO, too big): out of the way, whole, untouched. */
		strbuf_done(&aside);
		if (r == -EFBIG)
			recovery_problem(&rec, "/" STATE_FILE ": larger than %u bytes: not a record topotune writes, "
					 "nothing restored", STATE_FILE_MAX);
		else
			recovery_problem(&rec, "/" STATE_FILE ": %s", strerror(-r));
		if (set_aside(a, NULL, &rec.aside) < 0)
			recovery_problem(&rec, "%s", strna(a->error));
		*ret = rec;
		return 0;
	}

	for (cur = text; (l = next_line(&cur));) {
		ChangeRecord c = {};
		const char *bad;

		lineno++;
		if (l[0] == '#' || !l[0])
			continue;
		rec.found++;
		r = parse_line(a, l, &c, &bad);
		if (r < 0)
			goto fail;
		if (bad) {
			/* Never touched: the line goes aside as it was. */
			recovery_problem(&rec, "/" STATE_FILE ":%u: %s, left alone", lineno, bad);
			strbuf_appendf(&aside, "%s\n", l);
			kept++;
			continue;
		}
		r = add_change(a, &c);
		if (r < 0)
			goto fail;
	}

	for (size_t i = a->n_changes; i > 0; i--) {
		ChangeRecord *c = &a->changes[i - 1];
		_cleanup_free_ char *p = NULL, *o = NULL, *n = NULL, *w = NULL;

		if (restore_one(a, i - 1) >= 0) {
			rec.restored++;
			continue;
		}
		recovery_problem(&rec, "%s", a->error ?: "restore failed");
		p = state_escape(c->path);
		o = state_escape(c->old);
		n = state_escape(c->new);
		w = state_escape(c->why);
		if (!p || !o || !n || !w) {
			r = -ENOMEM;
			goto fail;
		}
		strbuf_appendf(&aside, "change %s %d %s %s %s %s %s\n", write_kind_to_string(c->kind), c->done,
			       setting_id_to_string(c->setting), p, o, n, w);
		kept++;
	}
	/* What is left is aside; this run starts with a clean record. */
	for (size_t i = a->n_changes; i > 0; i--)
		drop_record(a, i - 1);

	if (kept > 0) {
		_cleanup_free_ char *t = NULL;

		r = strbuf_steal(&aside, &t);
		if (r < 0)
			goto fail;
		r = set_aside(a, t, &rec.aside);
		if (r < 0) {
			/* The record stays where it is; the next start tries again. */
			recovery_problem(&rec, "cannot keep it aside: %s", a->error ?: strerror(-r));
			recovery_problems_end(&rec);
			*ret = rec;
			return 0;
		}
	} else
		strbuf_done(&aside);
	r = unlink_beneath(a->root_fd, STATE_FILE, false);
	if (r < 0 && r != -ENOENT)
		recovery_problem(&rec, "/" STATE_FILE ": cannot remove it: %s", strerror(-r));
	recovery_problems_end(&rec);
	*ret = rec;
	return 0;
fail:
	strbuf_done(&aside);
	recovery_done(&rec);
	return r;
}

/* --- one write ----------------------------------------------------------- */

/* The value of @path as the record keeps it: what to write to get back here. */
static int read_current(Applier *a, WriteKind kind, const char *path, const char *value, char **ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	switch (kind) {
	case WRITE_MKDIR:
		*ret = dir_exists_at(a->root_fd, path) ? strdup("dir") : NULL;
		return 0;
	case WRITE_SYSTEMD:
		/* systemd keeps the property; the slice's cpuset.cpus mirrors it. */
		r = a->io.read(a->io.userdata, a->root_fd, SLICE_DIR "/cpuset.cpus", &s);
		*ret = strdup(r >= 0 ? strip(s) : "");
		return *ret ? 0 : -ENOMEM;
	case WRITE_IRQBALANCE: {
		/*
		 * irqbalance does not say which CPUs its socket banned: ours, while
		 * that irqbalance runs, or none (it starts without any).
		 */
		ChangeRecord *c = find_record(a, path);

		*ret = strdup(c && c->new ? c->new : "");
		return *ret ? 0 : -ENOMEM;
	}
	case WRITE_UNIT:
		/* What systemd says; "activating" and "reloading" are on their way to active. */
		if (!a->hooks.get_unit_state)
			return -EOPNOTSUPP;
		r = a->hooks.get_unit_state(a->hooks.userdata, ISOLATION_SLICE, &s);
		if (r < 0)
			return r;
		*ret = strdup(streq(s, "active") || streq(s, "activating") || streq(s, "reloading") ? "active"
												       : "inactive");
		return *ret ? 0 : -ENOMEM;
	default:
		break;
	}

	r = a->io.read(a->io.userdata, a->root_fd, path, &s);
	if (r == -ENOENT && kind == WRITE_FILE) {
		*ret = NULL;
		return 0;
	}
	if (r < 0)
		return r;
	switch (kind) {
	case WRITE_FEATURE: {
		/* value is "SMT_BUDDY_ASSIST" or "NO_SMT_BUDDY_ASSIST" */
		const char *base = startswith(value, "NO_") ?: value;
		_cleanup_free_ char *no = strprintf("NO_%s", base);

		if (!no)
			return -ENOMEM;
		*ret = strdup(string_has_word(s, no) ? no : string_has_word(s, base) ? base : "");
		break;
	}
	case WRITE_SUBTREE: {
		const char *ctrl = value + 1;

		*ret = strprintf("%c%s", string_has_word(s, ctrl) ? '+' : '-', ctrl);
		break;
	}
	default:
		/* Keep the bytes: revert writes back exactly what was there. */
		*ret = TAKE_PTR(s);
		return 0;
	}
	return *ret ? 0 : -ENOMEM;
}


/* Is @cur (as read_current() gives it) already @value? */
static bool same_value(WriteKind kind, const char *cur, const char *value)
{
	_cleanup_free_ char *c = NULL, *v = NULL;

	if (!cur || !value)
		return cur == value;
	if (kind == WRITE_FILE || kind == WRITE_FEATURE || kind == WRITE_SUBTREE || kind == WRITE_MKDIR ||
	    kind == WRITE_UNIT)
		return streq(cur, value);
	if (kind == WRITE_MASK || kind == WRITE_IRQ || kind == WRITE_IRQBALANCE) {
		/* The same CPUs: "ff" is "000000ff", "0-3" is "0,1,2,3". */
		CpuSet x = {}, y = {};
		bool eq;

		eq = (kind == WRITE_MASK ? cpuset_parse_mask(cur, &x) >= 0 && cpuset_parse_mask(value, &y) >= 0
					 : cpuset_parse_list(cur, &x, NULL) >= 0 && cpuset_parse_list(value, &y, NULL) >= 0) &&
		     cpuset_equal(&x, &y);
		cpuset_done(&x);
		cpuset_done(&y);
		return eq;
	}
	c = strdup(cur);
	v = strdup(value);
	/* Whole values: "isolated invalid (reason)" is not "isolated". */
	return c && v && streq(strip(c), strip(v));
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Does the slice's cpuset.cpus list @cpus (NULL: any non-empty set)? */
static bool slice_cpus_are(Applier *a, const char *cpus)
{
	_cleanup_free_ char *s = NULL;
	CpuSet have = {}, want = {};
	bool ok;

	if (a->io.read(a->io.userdata, a->root_fd, SLICE_DIR "/cpuset.cpus", &s) < 0 ||
	    cpuset_parse_list(strip(s), &have, NULL) < 0)
		return false;
	if (!cpus)
		ok = !cpuset_is_empty(&have);
	else
		ok = cpuset_parse_list(cpus, &want, NULL) >= 0 && cpuset_equal(&have, &want);
	cpuset_done(&have);
	cpuset_done(&want);
	return ok;
}

typedef enum SliceWait {
	WAIT_GONE,      /* the slice stopped: its cgroup removed */
	WAIT_CGROUP,    /* the slice started: its cgroup made */
	WAIT_CPUS,       /* AllowedCPUs= in force: cpuset enabled for it, its cpuset.cpus as asked */
} SliceWait;

/*
 * systemd acts on a job or a property change from its own event loop, after
 * it answered the call: wait (a->unit_wait_ms at most) until the slice's
 * cgroup is as asked.
 */
static int wait_slice(Applier *a, SliceWait what, const char *cpus)
{
	for (unsigned waited = 0;; waited += 10) {
		bool done = what == WAIT_GONE ? !dir_exists_at(a->root_fd, SLICE_DIR) :
			    what == WAIT_CGROUP ? dir_exists_at(a->root_fd, SLICE_DIR) :
			    path_exists_at(a->root_fd, SLICE_DIR "/cpuset.cpus.partition") && slice_cpus_are(a, cpus);

		if (done)
			return 0;
		if (waited >= a->unit_wait_ms)
			break;
		sleep_ms(10);
	}
	if (what == WAIT_GONE)
		return fail(a, -ETIMEDOUT, "/%s: still there %u ms after systemd was asked to stop %s", SLICE_DIR,
			    a->unit_wait_ms, ISOLATION_SLICE);
	if (!dir_exists_at(a->root_fd, SLICE_DIR))
		return fail(a, -ETIMEDOUT, "/%s: systemd did not create the slice's cgroup within %u ms", SLICE_DIR,
			    a->unit_wait_ms);
	if (!path_exists_at(a->root_fd, SLICE_DIR "/cpuset.cpus.partition"))
		return fail(a, -ETIMEDOUT,
			    "/%s/cpuset.cpus.partition: absent %u ms after AllowedCPUs= was set on the active slice: "
			    "systemd did not enable the cpuset controller for it", SLICE_DIR, a->unit_wait_ms);
	return fail(a, -ETIMEDOUT, "/%s/cpuset.cpus: not \"%s\" %u ms after systemd was given AllowedCPUs=", SLICE_DIR,
		    cpus, a->unit_wait_ms);
}

/* Did the kernel take @value? Returns 0, or -EIO with a->error set. */
static int read_back(Applier *a, WriteKind kind, const char *path, const char *value)
{
	_cleanup_free_ char *s = NULL;
	int r;

	if (kind == WRITE_UNIT)
		return wait_slice(a, value && streq(value, "active") ? WAIT_CGROUP : WAIT_GONE, NULL);
	if (kind == WRITE_IRQBALANCE)
		return 0;   /* its socket answers nothing to "settings" */
	if (kind == WRITE_MKDIR)
		return value ? (dir_exists_at(a->root_fd, path) ? 0 : fail(a, -EIO, "/%s: not created", path))
			     : (dir_exists_at(a->root_fd, path) ? fail(a, -EIO, "/%s: still exists", path) : 0);
	if (kind == WRITE_SYSTEMD) {
		_cleanup_free_ char *state = NULL;

		/* An active slice gets the CPUs now (we start it first); an inactive one when it starts. */
		if (!value || !*value || read_current(a, WRITE_UNIT, SYSTEMD_UNIT, "active", &state) < 0 ||
		    !streq(state, "active"))
			return 0;
		return wait_slice(a, WAIT_CPUS, value);
	}
	r = a->io.read(a->io.userdata, a->root_fd, path, &s);
	if (kind == WRITE_FILE && !value)
		return r == -ENOENT ? 0 : fail(a, -EIO, "/%s: still exists", path);
	if (r < 0)
		return fail(a, r, "/%s: read back: %s", path, strerror(-r));

	switch (kind) {
	case WRITE_FEATURE:
		if (string_has_word(s, value))
			return 0;
		break;
	case WRITE_SUBTREE:
		if (string_has_word(s, value + 1) == (value[0] == '+'))
			return 0;
		break;
	case WRITE_PARTITION: {
		_cleanup_free_ char *v = strdup(value);

		if (!v)
			return -ENOMEM;
		strip(s);
		strip(v);
		if (startswith(s, v) && !strstr(s, "invalid"))
			return 0;
		return fail(a, -EINVAL, "/%s: the kernel reports \"%s\" after writing \"%s\"", path, s, v);
	}
	case WRITE_FILE:
		if (streq(s, value))
			return 0;
		break;
	default:
		if (same_value(kind, s, value))
			return 0;
	}
	return fail(a, -EIO, "/%s: read back \"%s\" after writing \"%s\"", path, strip(s), value);
}

/* How many cgroups (units) run below the slice: cgroup.stat's nr_descendants. */
static unsigned slice_units(Applier *a)
{
	_cleanup_free_ char *s = NULL;
	const char *p;
	unsigned n = 0;

	if (a->io.read(a->io.userdata, a->root_fd, SLICE_DIR "/cgroup.stat", &s) < 0)
		return 0;
	p = strstr(s, "nr_descendants ");
	if (p && sscanf(p, "nr_descendants %u", &n) != 1)
		n = 0;
	return n;
}

/*
 * Write @value (NULL: remove what we created) and read it back. *ret_wrote
 * says whether the kernel accepted the write itself, i.e. whether there is
 * anything to undo when the read-back fails.
 */
static int do_write_full(Applier *a, WriteKind kind, const char *path, const char *value, bool *ret_wrote)
{
	int r;

	if (ret_wrote)
		*ret_wrote = false;

	switch (kind) {
	case WRITE_MKDIR:
		r = value ? a->io.mkdir(a->io.userdata, a->root_fd, path)
			  : a->io.remove(a->io.userdata, a->root_fd, path, true);
		break;
	case WRITE_FILE:
		r = !value ? a->io.remove(a->io.userdata, a->root_fd, path, false) :
		    a->io.create ? a->io.create(a->io.userdata, a->root_fd, path, value) :
				   io_create(NULL, a->root_fd, path, value);
		break;
	case WRITE_SYSTEMD:
		/* A record from a run with systemd, recovered by one without (--no-systemd). */
		r = a->hooks.set_allowed_cpus ? a->hooks.set_allowed_cpus(a->hooks.userdata, ISOLATION_SLICE, value ?: "")
					      : -EOPNOTSUPP;
		break;
	case WRITE_IRQBALANCE:
		r = a->io.irqbalance ? a->io.irqbalance(a->io.userdata, a->root_fd, path, value ?: "")
				     : applier_irqbalance_send(a->root_fd, path, value ?: "");
		break;
	case WRITE_UNIT:
		if (!(value && streq(value, "active"))) {
			unsigned busy = slice_units(a);

			if (busy > 0) {
				/* Stopping the slice would stop them: it stays, without our settings. */
				log_info("%s stays active: %u unit%s run%s in it", ISOLATION_SLICE, busy,
					 busy == 1 ? "" : "s", busy == 1 ? "s" : "");
				if (ret_wrote)
					*ret_wrote = true;
				return 0;
			}
		}
		r = a->hooks.set_unit_active ? a->hooks.set_unit_active(a->hooks.userdata, ISOLATION_SLICE,
									 value && streq(value, "active"))
					     : -EOPNOTSUPP;
		break;
	default: {
		const char *irq = a->irq_dir ? startswith(path, "proc/irq/") : NULL;
		_cleanup_free_ char *alias = irq ? strprintf("%s/%s", a->irq_dir, irq) : NULL;

		if (irq && !alias)
			return -ENOMEM;
		r = a->io.write(a->io.userdata, a->root_fd, alias ?: path, value ?: "");
		if (r < 0 && alias)
			return fail(a, r, "/%s: writing \"%s\" (through /%s): %s", path, value ?: "(remove)", alias,
				    strerror(-r));
	}
	}
	if (r < 0)
		return fail(a, r, "/%s: writing \"%s\": %s", path, value ?: "(remove)", strerror(-r));
	if (ret_wrote)
		*ret_wrote = true;
	return read_back(a, kind, path, value);
}

static int do_write(Applier *a, WriteKind kind, const char *path, const char *value)
{
	return do_write_full(a, kind, path, value, NULL);
}

/* --- plans to writes ----------------------------------------------------- */

typedef struct Write {
	SettingId setting;
	WriteKind kind;
	const char *path;
	char *value;
	const char *why;
} Write;

typedef struct WriteList {
	Write w[8];
	size_t n;
} WriteList;

static void write_list_done(WriteList *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->w[i].value);
	l->n = 0;
}

static int push(WriteList *l, SettingId s, WriteKind k, const char *path, const char *value, const char *why)
{
	char *v;

	/* The list recovery trusts a record by: a write not on it is a bug here. */
	if (write_refused(k, path, value))
		return -EPERM;
	v = strdup(value);
	if (!v)
		return -ENOMEM;
	if (l->n >= ELEMENTSOF(l->w)) {
		free(v);
		return -E2BIG;
	}
	l->w[l->n++] = (Write) { s, k, path, v, why };
	return 0;
}

/* The socket of the irqbalance running now: 1 and its path, 0 none. */
static int find_irqbalance(Applier *a, char **ret)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *found = NULL;
	DIR *d;

	fd = open_beneath(a->root_fd, IRQBALANCE_DIR, O_RDONLY | O_DIRECTORY, 0, FILEIO_WRITE);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d)
		return negative_errno();
	fd = -EBADF;
	for (struct dirent *de; (de = readdir(d));) {
		_cleanup_free_ char *p = strprintf(IRQBALANCE_DIR "/%s", de->d_name);

		if (!p) {
			closedir(d);
			return -ENOMEM;
		}
		if ((de->d_type == DT_SOCK || de->d_type == DT_UNKNOWN) && irqbalance_path_valid(p)) {
			free(found);
			found = TAKE_PTR(p);
		}
	}
	closedir(d);
	if (!found)
		return 0;
	*ret = TAKE_PTR(found);
	return 1;
}

/*
 * housekeeping: the IRQ default affinity and the unbound workqueues' mask
 * become the housekeeping CPUs, irqbalance bans the isolated ones. The IRQs
 * themselves are apply_irqs()'s: they are only known when it runs.
 */
static int housekeeping_writes(Applier *a, const Plan *plan, const PlanStep *st, WriteList *l)
{
	_cleanup_free_ char *mask = NULL, *banned = NULL, *sock = NULL;
	int parts = plan->housekeeping_parts, r = 0;

	r = cpuset_format_mask(&plan->housekeeping, &mask);
	if (r < 0)
		return r;
	if (parts & (1 << HOUSEKEEPING_IRQS))
		r = push(l, st->setting, WRITE_MASK, IRQ_DEFAULT, mask, st->why);
	if (r >= 0 && (parts & (1 << HOUSEKEEPING_WORKQUEUES)))
		r = push(l, st->setting, WRITE_MASK, WORKQUEUE_MASK, mask, st->why);
	if (r < 0 || !(parts & (1 << HOUSEKEEPING_IRQBALANCE)))
		return r;
	r = find_irqbalance(a, &sock);
	if (r < 0)
		return r;
	if (r == 0) {
		log_notice("housekeeping: no irqbalance socket in /" IRQBALANCE_DIR " now: irqbalance not told.");
		return 0;
	}
	r = cpuset_format_list(&plan->isolated, &banned);
	if (r < 0)
		return r;
	/* The write list keeps the path, not a copy: the applier holds it. */
	free(a->irqbalance_path);
	a->irqbalance_path = TAKE_PTR(sock);
	return push(l, st->setting, WRITE_IRQBALANCE, a->irqbalance_path, banned, st->why);
}

static int plan_writes(Applier *a, const Plan *plan, unsigned skip_mask, WriteList *l)
{
	int r = 0;

	for (size_t i = 0; i < _SETTING_MAX && r >= 0; i++) {
		const PlanStep *st = &plan->steps[i];

		if (!plan_has_step(plan, i) || (skip_mask & (1U << i)))
			continue;
		if (st->action == STEP_PENDING_REBOOT && a->manage_bootloader && plan->kernel_cmdline &&
		    !startswith(plan->kernel_cmdline, "-")) {
			_cleanup_free_ char *v = NULL;
			int level, n = -1;

			/* The one parameter topotune puts on the command line, and nothing else. */
			if (sscanf(plan->kernel_cmdline, "relax_domain_level=%d%n", &level, &n) != 1 ||
			    n != (int)strlen(plan->kernel_cmdline) || level < 0 || level > BOOT_RELAX_LEVEL_MAX) {
				r = -EINVAL;
				continue;
			}
			/*
			 * Without /etc/default/grub (grub-pc and grub-efi make it)
			 * this is no GRUB we handle: the command line stays pending
			 * (PendingKernelCmdline) and everything else is applied.
			 */
			if (!path_exists_at(a->root_fd, "etc/default/grub")) {
				log_notice("manage_bootloader = yes, but /etc/default/grub is absent (not a GRUB system): "
					   "add %s to the kernel command line yourself", plan->kernel_cmdline);
				continue;
			}
			v = strprintf("%d\n", level);
			if (!v) {
				r = -ENOMEM;
				continue;
			}
			r = push(l, st->setting, WRITE_FILE, BOOT_REQUEST, v, st->why);
			continue;
		}
		if (st->action != STEP_SET)
			continue;
		switch (st->control ? st->control->kind : _CONTROL_KIND_INVALID) {
		case CONTROL_VALUE:
		case CONTROL_FEATURE: {
			_cleanup_free_ char *bytes = NULL;
			int v;

			r = kernel_control_parse(st->control, st->to, &v);
			if (r >= 0)
				r = kernel_control_encode(st->control, v, &bytes);
			if (r >= 0)
				r = push(l, st->setting, st->control->kind == CONTROL_FEATURE ? WRITE_FEATURE : WRITE_PLAIN,
					 st->control->path, bytes, st->why);
			break;
		}
		case CONTROL_IRQS:
		case CONTROL_CPUMASK:
		case CONTROL_IRQBALANCE:
			r = housekeeping_writes(a, plan, st, l);
			break;
		case CONTROL_PARTITION: {
			_cleanup_free_ char *cpus = NULL;

			r = cpuset_format_list(&plan->isolated, &cpus);
			if (r < 0 || !*cpus)
				break;   /* nothing to isolate: restoring is the job of the caller */
			/*
			 * systemd keeps a slice's cgroup for sure only while the slice
			 * is active, and enables the cpuset controller on the way down
			 * for an active unit with AllowedCPUs=: start the slice, set
			 * the property, then make its cgroup a partition. Undone in
			 * reverse, the slice stops last, with its cgroup.
			 */
			if (a->hooks.set_allowed_cpus) {
				if (a->hooks.set_unit_active && a->hooks.get_unit_state)
					r = push(l, st->setting, WRITE_UNIT, SYSTEMD_UNIT, "active", st->why);
				if (r >= 0)
					r = push(l, st->setting, WRITE_SYSTEMD, SYSTEMD_ALLOWED, cpus, st->why);
			} else {
				r = push(l, st->setting, WRITE_SUBTREE, ROOT_SUBTREE, "+cpuset",
					 st->why);
				if (r >= 0)
					r = push(l, st->setting, WRITE_MKDIR, SLICE_DIR, "dir", st->why);
				if (r >= 0)
					r = push(l, st->setting, WRITE_PLAIN, SLICE_CPUS, cpus, st->why);
			}
			if (r >= 0)
				r = push(l, st->setting, WRITE_PARTITION, SLICE_PARTITION, "isolated",
					 st->why);
			break;
		}
		default:
			break;
		}
	}
	return r;
}

static ChangeRecord *find_record(Applier *a, const char *path)
{
	for (size_t i = 0; i < a->n_changes; i++)
		if (streq(a->changes[i].path, path))
			return &a->changes[i];
	return NULL;
}

static void drop_record(Applier *a, size_t i)
{
	record_done(&a->changes[i]);
	memmove(a->changes + i, a->changes + i + 1, (a->n_changes - i - 1) * sizeof(ChangeRecord));
	a->n_changes--;
}

static bool write_list_has(const WriteList *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (streq(l->w[i].path, path))
			return true;
	return false;
}

static void notify(Applier *a, ChangeRecord *c, bool revert)
{
	bool fill = !c->prev;

	if (!a->hooks.changed)
		return;
	/* Unless the caller knows better, the replaced value is the other end of the record. */
	if (fill)
		c->prev = revert ? c->new : c->old;
	a->hooks.changed(a->hooks.userdata, c, revert);
	if (fill)
		c->prev = NULL;
}

/*
 * A record whose file went away with what it held: an IRQ freed since (its
 * affinity went with it), an irqbalance that stopped (and the CPUs its
 * socket banned with it). Nothing to put back: restored.
 */
static bool record_gone(const ChangeRecord *c, int r)
{
	if (c->kind == WRITE_IRQ && r == -ENOENT)
		log_info("/%s: the IRQ is gone, nothing to restore.", c->path);
	else if (c->kind == WRITE_IRQBALANCE && (r == -ENOENT || r == -ECONNREFUSED))
		log_info("/%s: that irqbalance is gone, and with it the CPUs it was told to ban.", c->path);
	else
		return false;
	return true;
}

/*
 * An IRQ that refuses any affinity (managed or per-CPU: EIO) and still has
 * the record's original: the write the record has under way was refused
 * too (a crash between the record and its refusal), nothing to put back.
 */
static bool irq_kept_original(Applier *a, const ChangeRecord *c)
{
	_cleanup_free_ char *cur = NULL;

	return a->io.read(a->io.userdata, a->root_fd, c->path, &cur) >= 0 && same_value(WRITE_IRQ, cur, c->old);
}

/* Restore record @i's original; on success drop it. */
static int restore_one(Applier *a, size_t i)
{
	ChangeRecord *c = &a->changes[i];
	int r;

	if (c->kind == WRITE_MKDIR && c->old)
		r = 0;   /* it existed before us */
	else if (c->kind == WRITE_MKDIR && !dir_exists_at(a->root_fd, c->path))
		r = 0;   /* ours, and gone already (the slice removed after a crash) */
	else
		r = do_write(a, c->kind, c->path, c->old);
	if (r < 0 && record_gone(c, r))
		r = 0;
	if (r == -EIO && c->kind == WRITE_IRQ && irq_kept_original(a, c))
		r = 0;
	if (r < 0)
		return r;
	notify(a, c, true);
	drop_record(a, i);
	return 0;
}

/* One write of this apply, for rollback. */
typedef struct Undo {
	WriteKind kind;
	const char *path;
	char *before;          /* value before this apply (NULL: absent) */
	char *prev_new;        /* the record's previous "new", if it existed */
	char *prev_why;        /* and its previous "why" */
	bool created_record;
	bool restored;         /* the record's original written back; the record goes on success */
	bool attempted;        /* do_write() was called: the kernel may have it */
} Undo;

/* --- the IRQ pass ---------------------------------------------------------- */

static bool irq_pass_wanted(const Plan *plan, unsigned skip_mask)
{
	return plan->steps[SETTING_HOUSEKEEPING].action == STEP_SET &&
	       (plan->housekeeping_parts & (1 << HOUSEKEEPING_IRQS)) && !(skip_mask & (1U << SETTING_HOUSEKEEPING));
}

static int irq_compare(const void *x, const void *y)
{
	unsigned a = *(const unsigned *)x, b = *(const unsigned *)y;

	return a < b ? -1 : a > b;
}

/* The IRQs in proc/irq now, sorted. */
static int list_irqs(Applier *a, unsigned **ret, size_t *ret_n)
{
	_cleanup_close_ int fd = -EBADF;
	unsigned *irqs = NULL;
	size_t n = 0;
	DIR *d;

	fd = open_beneath(a->root_fd, "proc/irq", O_RDONLY | O_DIRECTORY, 0, FILEIO_WRITE);
	if (fd < 0)
		return fail(a, fd, "/proc/irq: %s", strerror(-fd));
	d = fdopendir(fd);
	if (!d)
		return fail(a, negative_errno(), "/proc/irq: %m");
	fd = -EBADF;
	for (struct dirent *de; (de = readdir(d));) {
		unsigned irq, *t;

		if (safe_atou_base(de->d_name, 10, &irq) < 0 || irq > INT_MAX)
			continue;
		t = realloc(irqs, (n + 1) * sizeof(unsigned));
		if (!t) {
			free(irqs);
			closedir(d);
			return -ENOMEM;
		}
		irqs = t;
		irqs[n++] = irq;
	}
	closedir(d);
	if (n > 1)
		qsort(irqs, n, sizeof(unsigned), irq_compare);
	*ret = irqs;
	*ret_n = n;
	return 0;
}

static int refused_add(Applier *a, unsigned irq, int error)
{
	unsigned *i = realloc(a->irqs_refused, (a->n_irqs_refused + 1) * sizeof(unsigned));
	int *e;

	if (!i)
		return -ENOMEM;
	a->irqs_refused = i;
	e = realloc(a->irqs_refused_error, (a->n_irqs_refused + 1) * sizeof(int));
	if (!e)
		return -ENOMEM;
	a->irqs_refused_error = e;
	a->irqs_refused[a->n_irqs_refused] = irq;
	a->irqs_refused_error[a->n_irqs_refused++] = error;
	return 0;
}

/*
 * @cur keeps off the isolated CPUs: in sync, whatever housekeeping CPUs it
 * names. irqbalance, told which CPUs are banned, narrows an IRQ to one
 * housekeeping CPU and moves it among them; that is not drift, and
 * writing all of them again would only fight it.
 */
static bool irq_keeps_off(const char *cur, const CpuSet *isolated)
{
	_cleanup_free_ char *t = strdup(cur);
	CpuSet set = {};
	bool ok;

	if (!t)
		return false;
	ok = cpuset_parse_list(strip(t), &set, NULL) >= 0 && !cpuset_is_empty(&set) &&
	     !cpuset_intersects(&set, isolated);
	cpuset_done(&set);
	return ok;
}

/* What an IRQ should hold: the housekeeping CPUs of its original affinity, or all of them. */
static int irq_target(const Plan *plan, const char *orig, char **ret)
{
	_cleanup_free_ char *t = strdup(orig);
	CpuSet set = {};
	int r;

	if (!t)
		return -ENOMEM;
	r = cpuset_parse_list(strip(t), &set, NULL);
	if (r >= 0) {
		cpuset_and(&set, &plan->housekeeping);
		if (cpuset_is_empty(&set))
			r = cpuset_copy(&set, &plan->housekeeping);
	}
	if (r >= 0)
		r = cpuset_format_list(&set, ret);
	cpuset_done(&set);
	return r;
}

/*
 * One IRQ: written through the record like every other file, but an IRQ
 * that refuses (the kernel manages its affinity: EIO) or goes away while we
 * write is reported, never a failure of the apply. 1 when its
 * smp_affinity_list is not there: freed since the listing, or not there
 * yet (register_irq_proc() makes the directory before its files), or it is
 * empty (never the kernel's: a sysroot's file between its creation and its
 * write), so the next pass looks at it again.
 */
static int apply_irq(Applier *a, const Plan *plan, unsigned irq, int *writes)
{
	_cleanup_free_ char *path = strprintf("proc/irq/%u/smp_affinity_list", irq), *cur = NULL, *want = NULL;
	_cleanup_free_ char *prev_new = NULL, *saved_error = NULL;
	const char *why = plan->steps[SETTING_HOUSEKEEPING].why;
	ChangeRecord *rec;
	size_t at;
	bool created = false, wrote;
	int r, w;

	if (!path)
		return -ENOMEM;
	r = a->io.read(a->io.userdata, a->root_fd, path, &cur);
	rec = find_record(a, path);
	if (r == -ENOENT) {
		_cleanup_free_ char *dir = strprintf("proc/irq/%u", irq);

		if (!dir)
			return -ENOMEM;
		/* Its directory still there: not gone, its files not made yet. */
		if (!dir_exists_at(a->root_fd, dir))
			a->irqs_gone++;
		if (rec)
			drop_record(a, (size_t)(rec - a->changes));
		return 1;
	}
	if (r < 0)
		return refused_add(a, irq, r);
	if (!rec && cur[strspn(cur, WHITESPACE)] == '\0')
		return 1;   /* no IRQ reads an empty affinity: a file still being written (a sysroot) */
	r = irq_target(plan, rec ? rec->old : cur, &want);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return refused_add(a, irq, r);   /* not a CPU list: no IRQ file we understand */
	if (same_value(WRITE_IRQ, cur, want) || irq_keeps_off(cur, &plan->isolated))
		return 0;

	if (!rec) {
		ChangeRecord c = { .setting = SETTING_HOUSEKEEPING, .kind = WRITE_IRQ };

		c.path = strdup(path);
		c.old = TAKE_PTR(cur);
		c.why = strdup(strempty(why));
		c.new = strdup(want);
		if (!c.path || !c.why || !c.new) {
			record_done(&c);
			return -ENOMEM;
		}
		r = add_change(a, &c);
		if (r < 0)
			return r;
		at = a->n_changes - 1;
		created = true;
	} else {
		at = (size_t)(rec - a->changes);
		prev_new = TAKE_PTR(rec->new);
		rec->new = strdup(want);
		if (!rec->new) {
			rec->new = TAKE_PTR(prev_new);
			return -ENOMEM;
		}
	}
	a->changes[at].done = false;
	/* The record reaches the disk before the kernel sees the write. */
	r = state_save(a);
	if (r < 0)
		return r;

	saved_error = a->error ? strdup(a->error) : NULL;
	w = do_write_full(a, WRITE_IRQ, path, want, &wrote);
	rec = &a->changes[at];
	if (w < 0 && (!wrote || w == -ENOENT)) {
		/* Nothing changed: the record goes back to what it was. */
		log_info("IRQ %u: %s", irq, strna(a->error));
		free(a->error);
		a->error = TAKE_PTR(saved_error);
		if (created)
			drop_record(a, at);
		else {
			free(rec->new);
			rec->new = TAKE_PTR(prev_new);
			rec->done = true;
		}
		if (w == -ENOENT)
			a->irqs_gone++;
		else if ((r = refused_add(a, irq, w)) < 0)
			return r;
		return state_save(a);
	}
	rec->done = true;
	if (w < 0) {
		/* Written, and the kernel holds something else: ours to restore, and said. */
		log_info("IRQ %u: %s", irq, strna(a->error));
		free(a->error);
		a->error = TAKE_PTR(saved_error);
		r = refused_add(a, irq, w);
		if (r < 0)
			return r;
	} else
		a->irqs_moved++;
	notify(a, rec, false);
	(*writes)++;
	return state_save(a);
}

/*
 * Every IRQ there now keeps off the isolated CPUs where the kernel lets it;
 * the records of IRQs that went away are dropped (nothing to restore). An
 * IRQ that appears later is the next pass's: the daemon runs one when a
 * driver binds (applier_apply_irqs()), and verification reports it.
 */
static int apply_irqs(Applier *a, const Plan *plan, int *writes)
{
	_cleanup_free_ unsigned *irqs = NULL;
	size_t n = 0, kept = 0;
	int r;

	a->n_irqs_refused = 0;
	a->irqs_moved = a->irqs_gone = 0;
	r = list_irqs(a, &irqs, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		r = apply_irq(a, plan, irqs[i], writes);
		if (r < 0)
			return fail(a, r, "/proc/irq/%u/smp_affinity_list: %s", irqs[i], strerror(-r));
		if (r == 0)
			irqs[kept++] = irqs[i];
		/* else not seen: new to the next pass if it is there then */
	}
	n = kept;
	for (size_t i = a->n_changes; i > 0; i--) {
		const ChangeRecord *c = &a->changes[i - 1];
		unsigned irq;

		if (c->kind != WRITE_IRQ || c->restored)
			continue;
		irq = (unsigned)irq_of_path(c->path);
		if (n > 0 && bsearch(&irq, irqs, n, sizeof(unsigned), irq_compare))
			continue;
		log_info("/%s: the IRQ is gone, nothing to restore.", c->path);
		a->irqs_gone++;
		drop_record(a, i - 1);
	}
	free(a->irqs_seen);
	a->irqs_seen = TAKE_PTR(irqs);
	a->n_irqs_seen = n;
	if (a->n_irqs_refused > 0) {
		StrBuf b = {};
		_cleanup_free_ char *t = NULL;

		for (size_t i = 0; i < a->n_irqs_refused; i++)
			strbuf_appendf(&b, "%s%u (%s)", i ? ", " : "", a->irqs_refused[i],
				       strerror(-a->irqs_refused_error[i]));
		if (strbuf_steal(&b, &t) >= 0)
			log_notice("housekeeping: the kernel keeps the affinity of IRQ %s: managed or per-CPU IRQs "
				   "stay where they are.", t);
	}
	log_info("housekeeping: %u IRQs moved off the isolated CPUs, %zu refused, %u gone meanwhile.", a->irqs_moved,
		 a->n_irqs_refused, a->irqs_gone);
	return 0;
}

static void rollback(Applier *a, Undo *undo, size_t n_undo)
{
	_cleanup_free_ char *first = a->error ? strdup(a->error) : NULL;

	for (size_t i = n_undo; i > 0; i--) {
		Undo *u = &undo[i - 1];
		ChangeRecord *rec = find_record(a, u->path);

		if (u->attempted && do_write(a, u->kind, u->path, u->before) < 0) {
			if (rec)
				rec->restored = false;
			continue;   /* the record stays: revert or recovery retries */
		}
		if (!rec)
			continue;
		if (u->restored) {
			/* Our value is back, and so is the record that says so. */
			rec->restored = false;
			if (u->attempted)
				notify(a, rec, false);
			continue;
		}
		if (u->created_record) {
			if (u->attempted)
				notify(a, rec, true);
			drop_record(a, (size_t)(rec - a->changes));
		} else {
			if (u->attempted) {
				/* The hook hears the undo of this write: new -> before. */
				char *saved_old = rec->old;

				rec->old = u->before;
				rec->prev = rec->new;
				notify(a, rec, true);
				rec->old = saved_old;
				rec->prev = NULL;
			}
			free(rec->new);
			rec->new = TAKE_PTR(u->prev_new);
			/* The record reads as before this apply, why included. */
			if (u->prev_why) {
				free(rec->why);
				rec->why = TAKE_PTR(u->prev_why);
			}
			rec->done = true;
		}
	}
	(void)state_save(a);
	if (first) {
		free(a->error);
		a->error = TAKE_PTR(first);
	}
}

int applier_apply(Applier *a, const Plan *plan)
{
	assert(a);
	assert(plan);

	return applier_apply_masked(a, plan, 0);
}

/* One apply: its writes, what a rollback undoes, and how many writes were made. */
typedef struct ApplyRun {
	const Plan *plan;
	unsigned skip_mask;
	WriteList l;
	Undo *undo;          /* at most one per record to restore and per write */
	size_t n_undo;
	int writes;
} ApplyRun;

static void apply_run_done(ApplyRun *run)
{
	for (size_t i = 0; i < run->n_undo; i++) {
		free(run->undo[i].before);
		free(run->undo[i].prev_new);
		free(run->undo[i].prev_why);
	}
	free(run->undo);
	write_list_done(&run->l);
}

/* Put back the original of record @c, which the new plan leaves alone; < 0: roll back. */
static int restore_record(Applier *a, ApplyRun *run, ChangeRecord *c)
{
	Undo *u = &run->undo[run->n_undo++];
	int r;

	*u = (Undo) { .kind = c->kind, .path = c->path, .restored = true };
	if (c->kind == WRITE_MKDIR && c->old) {
		c->restored = true;   /* it existed before us: nothing to write */
		return 0;
	}
	/* What a rollback puts back: what is there now, ours or another writer's since. */
	r = read_current(a, c->kind, c->path, c->new ?: c->old, &u->before);
	if (r < 0 && record_gone(c, r)) {
		c->restored = true;
		return 0;
	}
	if (r < 0)
		return fail(a, r, "/%s: %s", c->path, strerror(-r));
	r = do_write_full(a, c->kind, c->path, c->old, &u->attempted);
	if (r < 0 && record_gone(c, r)) {
		u->attempted = false;
		c->restored = true;
		return 0;
	}
	if (r < 0)
		return r;
	c->restored = true;
	notify(a, c, true);
	run->writes++;
	return 0;
}

/*
 * What we changed before and the new plan leaves alone goes back first.
 * A setting the plan finds in sync (STEP_NONE) is in sync because of our
 * record: it stays. The records of what went back are dropped only when
 * the whole apply succeeded: a failure later puts our values back with
 * them (and a crash meanwhile restores the originals again).
 */
static int restore_left_alone(Applier *a, ApplyRun *run)
{
	int r;

	for (size_t i = a->n_changes; i > 0; i--) {
		ChangeRecord *c = &a->changes[i - 1];

		if (run->skip_mask & (1U << c->setting))
			continue;
		if (run->plan->steps[c->setting].action == STEP_NONE)
			continue;
		if (write_list_has(&run->l, c->path))
			continue;
		if (c->kind == WRITE_IRQ && irq_pass_wanted(run->plan, run->skip_mask))
			continue;   /* the IRQ pass below keeps or moves it */
		r = restore_record(a, run, c);
		if (r < 0)
			return r;
	}
	return state_save(a);
}

/* The record of write @w, new or updated, with what it found (@cur, taken); @u undoes it. */
static int record_write(Applier *a, const Write *w, char **cur, Undo *u, ChangeRecord **ret)
{
	ChangeRecord *rec = find_record(a, w->path);

	if (!rec) {
		ChangeRecord *n = realloc(a->changes, (a->n_changes + 1) * sizeof(ChangeRecord));

		if (!n)
			return -ENOMEM;
		a->changes = n;
		rec = &a->changes[a->n_changes++];
		*rec = (ChangeRecord) { .setting = w->setting, .kind = w->kind };
		u->created_record = true;
		rec->path = strdup(w->path);
		rec->old = TAKE_PTR(*cur);
		rec->why = strdup(strempty(w->why));
		if (!rec->path || !rec->why)
			return -ENOMEM;
	} else {
		u->prev_new = TAKE_PTR(rec->new);
		u->prev_why = TAKE_PTR(rec->why);
		rec->why = strdup(strempty(w->why));
		if (!rec->why)
			return -ENOMEM;
	}
	rec->new = strdup(w->value);
	if (!rec->new)
		return -ENOMEM;
	rec->done = false;
	*ret = rec;
	return 0;
}

/* Write @w unless it is in place: the record reaches the disk before the kernel sees the write. */
static int apply_write(Applier *a, ApplyRun *run, const Write *w)
{
	_cleanup_free_ char *cur = NULL;
	ChangeRecord *rec;
	Undo *u;
	int r;

	r = read_current(a, w->kind, w->path, w->value, &cur);
	if (r < 0)
		return fail(a, r, "/%s: %s", w->path, strerror(-r));
	if (same_value(w->kind, cur, w->value))
		return 0;

	u = &run->undo[run->n_undo++];
	*u = (Undo) { .kind = w->kind, .path = w->path };
	if (cur) {
		u->before = strdup(cur);
		if (!u->before)
			return -ENOMEM;
	}
	r = record_write(a, w, &cur, u, &rec);
	if (r < 0)
		return r;
	r = state_save(a);
	if (r < 0)
		return r;

	r = do_write_full(a, w->kind, w->path, w->value, &u->attempted);
	if (r < 0)
		return r;
	rec = find_record(a, w->path);
	rec->done = true;
	rec->prev = u->before;
	notify(a, rec, false);
	rec->prev = NULL;
	run->writes++;
	return 0;
}

/*
 * The plan keeps IRQs off the isolated CPUs, whether it moves some now or
 * they are in place already: the IRQs that refused still do.
 */
static bool irqs_kept_off(const Plan *plan)
{
	StepAction act = plan->steps[SETTING_HOUSEKEEPING].action;

	return (act == STEP_SET || act == STEP_NONE) && (plan->housekeeping_parts & (1 << HOUSEKEEPING_IRQS));
}

/*
 * The refused IRQs, for the planners that run without the daemon
 * (topotunectl plan): replaced whole when they change, removed when there
 * are none. The daemon's own state, not a change of the system: no record,
 * and a failure is said and ignored, as the apply itself went well.
 */
static void irqs_refused_save(Applier *a)
{
	_cleanup_free_ char *want = NULL, *cur = NULL;
	int r;

	if (a->n_irqs_refused == 0) {
		r = a->io.remove(a->io.userdata, a->root_fd, KERNEL_IRQS_REFUSED_FILE, false);
		if (r < 0 && r != -ENOENT)
			log_warning_errno(r, "Failed to remove /%s, ignoring: %m", KERNEL_IRQS_REFUSED_FILE);
		return;
	}
	r = kernel_irqs_refused_format(a->irqs_refused, a->irqs_refused_error, a->n_irqs_refused, &want);
	if (r < 0) {
		log_warning_errno(r, "Failed to write /%s, ignoring: %m", KERNEL_IRQS_REFUSED_FILE);
		return;
	}
	if (a->io.read(a->io.userdata, a->root_fd, KERNEL_IRQS_REFUSED_FILE, &cur) >= 0 && streq(cur, want))
		return;
	r = a->io.create ? a->io.create(a->io.userdata, a->root_fd, KERNEL_IRQS_REFUSED_FILE, want) :
			   io_create(NULL, a->root_fd, KERNEL_IRQS_REFUSED_FILE, want);
	if (r < 0)
		log_warning_errno(r, "Failed to write /%s, ignoring: %m", KERNEL_IRQS_REFUSED_FILE);
}

/* Without an IRQ pass, the refused IRQs freed since are dropped: nothing refuses there any more. */
static void irqs_refused_prune(Applier *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_irqs_refused; i++) {
		char path[32];

		snprintf(path, sizeof(path), "proc/irq/%u", a->irqs_refused[i]);
		if (!dir_exists_at(a->root_fd, path))
			continue;
		a->irqs_refused[n] = a->irqs_refused[i];
		a->irqs_refused_error[n++] = a->irqs_refused_error[i];
	}
	a->n_irqs_refused = n;
}

static void irqs_seen_forget(Applier *a)
{
	free(a->irqs_seen);
	a->irqs_seen = NULL;
	a->n_irqs_seen = 0;
}

static int apply_run(Applier *a, ApplyRun *run)
{
	int r;

	r = restore_left_alone(a, run);
	if (r < 0)
		return r;
	for (size_t i = 0; i < run->l.n; i++) {
		r = apply_write(a, run, &run->l.w[i]);
		if (r < 0)
			return r;
	}
	if (irq_pass_wanted(run->plan, run->skip_mask)) {
		r = apply_irqs(a, run->plan, &run->writes);
		if (r < 0)
			return r;
	} else if (!irqs_kept_off(run->plan) && !(run->skip_mask & (1U << SETTING_HOUSEKEEPING))) {
		a->n_irqs_refused = 0;   /* the IRQs go back where they were: none refuses a move */
		irqs_seen_forget(a);     /* and no IRQ is kept off any more: none is new to anyone */
	} else
		irqs_refused_prune(a);
	r = state_save(a);
	if (r < 0)
		return r;
	irqs_refused_save(a);
	return 0;
}

int applier_apply_masked(Applier *a, const Plan *plan, unsigned skip_mask)
{
	_cleanup_(apply_run_done) ApplyRun run = { .plan = plan, .skip_mask = skip_mask };
	int r;

	assert(a);
	assert(plan);

	r = plan_writes(a, plan, skip_mask, &run.l);
	if (r < 0)
		return fail(a, r, "planning writes: %s", strerror(-r));
	run.undo = calloc(a->n_changes + run.l.n, sizeof(Undo));
	if (!run.undo)
		return -ENOMEM;

	r = apply_run(a, &run);
	if (r < 0) {
		rollback(a, run.undo, run.n_undo);
		return r;
	}
	for (size_t i = a->n_changes; i > 0; i--)
		if (a->changes[i - 1].restored)
			drop_record(a, i - 1);
	return run.writes;
}

static bool irq_seen(const Applier *a, unsigned irq)
{
	return a->n_irqs_seen > 0 && bsearch(&irq, a->irqs_seen, a->n_irqs_seen, sizeof(unsigned), irq_compare);
}

int applier_irqs_appeared(Applier *a)
{
	_cleanup_free_ unsigned *irqs = NULL;
	size_t n = 0;
	int r;

	assert(a);

	if (!a->irqs_seen)
		return 0;
	r = list_irqs(a, &irqs, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (!irq_seen(a, irqs[i]))
			return 1;
	return 0;
}

int applier_apply_irqs(Applier *a, const Plan *plan)
{
	int writes = 0, r;

	assert(a);
	assert(plan);

	if (!irqs_kept_off(plan))
		return 0;
	r = apply_irqs(a, plan, &writes);
	if (r < 0)
		return r;
	r = state_save(a);
	if (r < 0)
		return r;
	irqs_refused_save(a);
	return writes;
}

/*
 * IRQs the last IRQ pass did not see were never written (a pass that had
 * seen them would have moved them, or found them off the isolated CPUs
 * already): revert leaves them as they are, and says so.
 */
static void revert_note_unseen(Applier *a)
{
	_cleanup_free_ unsigned *irqs = NULL;
	_cleanup_free_ char *t = NULL;
	StrBuf b = {};
	size_t n = 0, k = 0;

	if (!a->irqs_seen || list_irqs(a, &irqs, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = strprintf("proc/irq/%u/smp_affinity_list", irqs[i]);

		if (irq_seen(a, irqs[i]) || (path && find_record(a, path)))
			continue;
		strbuf_appendf(&b, "%s%u", k++ ? ", " : "", irqs[i]);
	}
	if (k > 0 && strbuf_steal(&b, &t) >= 0)
		log_info("housekeeping: IRQ %s appeared after the last IRQ pass and %s never moved: left as %s.", t,
			 k == 1 ? "was" : "were", k == 1 ? "it is" : "they are");
	else
		strbuf_done(&b);
}

int applier_revert(Applier *a)
{
	int r = 0;

	assert(a);

	revert_note_unseen(a);
	for (size_t i = a->n_changes; i > 0; i--) {
		int k = restore_one(a, i - 1);

		if (k < 0 && r == 0)
			r = k;
	}
	(void)state_save(a);
	a->n_irqs_refused = 0;
	irqs_refused_save(a);
	irqs_seen_forget(a);
	return r;
}

/*
 * A step that goes through no control (keep, not applicable, unsupported)
 * still names a value the kernel holds: read it through the first control of
 * its setting the kernel has. The plan's "from" describes the kernel before
 * the apply; a restore, a revert, a recovery or another writer changes it
 * since. -ENOENT: no control of the setting can be read.
 */
static int read_setting(Applier *a, const PlanStep *st, char **ret)
{
	CONTROL_FOREACH(i) {
		const KernelControl *c = kernel_control_get(i);
		_cleanup_free_ char *s = NULL;
		PlanStep via;
		int r;

		if (c->setting != st->setting || c->kind == CONTROL_CMDLINE)
			continue;
		via = *st;
		via.control = c;
		r = applier_read_actual(a, &via, &s);
		if (r == -ENOENT || (r >= 0 && streq(s, "absent")))
			continue;
		if (r < 0)
			return r;
		*ret = TAKE_PTR(s);
		return 0;
	}
	return -ENOENT;
}

int applier_read_actual(Applier *a, const PlanStep *st, char **ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	assert(a);
	assert(st);

	if (!st->control) {
		r = read_setting(a, st, ret);
		if (r != -ENOENT)
			return r;
	}
	switch (st->control ? st->control->kind : _CONTROL_KIND_INVALID) {
	case CONTROL_IRQS:
	case CONTROL_CPUMASK:
	case CONTROL_IRQBALANCE:
		return read_housekeeping(a, st, ret);
	case CONTROL_VALUE:
	case CONTROL_FEATURE:
		r = a->io.read(a->io.userdata, a->root_fd, st->control->path, &s);
		if (r < 0)
			return r;
		return kernel_control_read_text(st->control, s, ret);
	case CONTROL_PARTITION: {
		_cleanup_free_ char *part = NULL, *l = NULL, *online = NULL;
		bool ours = false;
		CpuSet set = {};

		/*
		 * A valid isolated partition of our slice isolates its CPUs; without
		 * one, the root's cpuset.cpus.isolated says what others isolated.
		 */
		r = a->io.read(a->io.userdata, a->root_fd, SLICE_DIR "/cpuset.cpus.partition", &part);
		if (r < 0 && r != -ENOENT)
			return r;   /* our partition is there and does not say what it is: not "none" */
		if (r >= 0 && startswith(strip(part), "isolated") && !strstr(part, "invalid")) {
			ours = true;
			r = a->io.read(a->io.userdata, a->root_fd, SLICE_DIR "/cpuset.cpus", &s);
		} else {
			r = a->io.read(a->io.userdata, a->root_fd, "sys/fs/cgroup/cpuset.cpus.isolated", &s);
			/*
			 * Kernels before 6.7 have partitions but no such file: no one
			 * isolated anything we can see, as kernel_probe() concluded.
			 */
			if (r == -ENOENT)
				r = strdup_to(&s, "");
		}
		if (r < 0)
			return r;
		r = cpuset_parse_list(strip(s), &set, NULL);
		/*
		 * cpuset.cpus keeps a CPU that went offline; the kernel isolates
		 * only the online ones (as cpuset.cpus.isolated lists them).
		 */
		if (r >= 0 && ours && a->io.read(a->io.userdata, a->root_fd, "sys/devices/system/cpu/online", &online) >= 0) {
			CpuSet on = {};

			r = cpuset_parse_list(strip(online), &on, NULL);
			if (r >= 0)
				cpuset_and(&set, &on);
			cpuset_done(&on);
		}
		if (r >= 0)
			r = cpuset_format_list(&set, &l);
		cpuset_done(&set);
		if (r < 0)
			return r;
		*ret = strdup(*l ? l : "none");
		break;
	}
	default:
		*ret = strdup(st->from ?: "unknown");
	}
	return *ret ? 0 : -ENOMEM;
}

void mismatches_free(Mismatch *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].want);
		free(m[i].got);
	}
	free(m);
}

int applier_verify(Applier *a, const Plan *plan, Mismatch **ret, size_t *ret_n)
{
	Mismatch *m = NULL;
	size_t n = 0;
	int r = 0;

	assert(a);
	assert(plan);
	assert(ret);
	assert(ret_n);

	for (size_t i = 0; i < _SETTING_MAX; i++) {
		const PlanStep *st = &plan->steps[i];
		_cleanup_free_ char *got = NULL;
		Mismatch *nm;

		if (st->action != STEP_SET && st->action != STEP_NONE)
			continue;
		if (!st->control)
			continue;
		r = applier_read_actual(a, st, &got);
		if (r < 0) {
			got = strprintf("unreadable: %s", strerror(-r));
			if (!got) {
				r = -ENOMEM;
				break;
			}
			r = 0;
		}
		if (i == SETTING_HOUSEKEEPING && (plan->housekeeping_parts & (1 << HOUSEKEEPING_IRQS))) {
			r = verify_irqs(a, plan, &m, &n);
			if (r < 0)
				break;
		}
		if (streq(got, st->to))
			continue;
		nm = realloc(m, (n + 1) * sizeof(Mismatch));
		if (!nm) {
			r = -ENOMEM;
			break;
		}
		m = nm;
		m[n] = (Mismatch) { .setting = st->setting, .want = strdup(st->to), .got = TAKE_PTR(got) };
		if (!m[n++].want) {
			r = -ENOMEM;
			break;
		}
	}
	if (r < 0) {
		mismatches_free(m, n);
		return r;
	}
	*ret = m;
	*ret_n = n;
	return 0;
}

/* --- irqbalance ------------------------------------------------------------ */

/*
 * irqbalance 1.9 (Debian 12) reads one command per connection on its socket
 * and takes it only from root, by the SCM_CREDENTIALS it asks for: "settings
 * cpus 2,6" bans CPUs 2 and 6 (a cpulist, as IRQBALANCE_BANNED_CPULIST),
 * "settings cpus NULL" lifts that ban; it rescans and moves IRQs off banned
 * CPUs within its interval. The socket is reached through its directory
 * opened beneath the root fd (/proc/self/fd/N/NAME): never a path outside it.
 */
int applier_irqbalance_send(int root_fd, const char *path, const char *cpus)
{
	_cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
	_cleanup_free_ char *msg = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} control = {};
	struct ucred cred = { .pid = getpid(), .uid = getuid(), .gid = getgid() };
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
			     .msg_controllen = sizeof(control) };
	struct cmsghdr *cm;
	const char *name;
	ssize_t n;
	int r;

	assert(path);
	assert(cpus);

	r = open_parent_beneath(root_fd, path, &dir_fd, &name);
	if (r < 0)
		return r;
	r = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dir_fd, name);
	if (r < 0 || (size_t)r >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	msg = strprintf("settings cpus %s", *cpus ? cpus : "NULL");
	if (!msg)
		return -ENOMEM;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return negative_errno();
	if (connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0)
		return negative_errno();
	iov = (struct iovec) { .iov_base = msg, .iov_len = strlen(msg) };
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof(cred));
	memcpy(CMSG_DATA(cm), &cred, sizeof(cred));
	n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	if (n < 0)
		return negative_errno();
	return (size_t)n == strlen(msg) ? 0 : -EIO;
}

/* --- housekeeping read-back -------------------------------------------------- */

static int read_mask_text(Applier *a, const char *path, const char *label, StrBuf *b)
{
	_cleanup_free_ char *s = NULL, *l = NULL;
	CpuSet set = {};
	int r;

	r = a->io.read(a->io.userdata, a->root_fd, path, &s);
	if (r == -ENOENT) {
		strbuf_appendf(b, "%s absent", label);
		return 0;
	}
	if (r < 0)
		return r;
	r = cpuset_parse_mask(s, &set);
	if (r >= 0)
		r = cpuset_format_list(&set, &l);
	cpuset_done(&set);
	if (r == -ENOMEM)
		return r;
	strbuf_appendf(b, "%s %s", label, r < 0 ? "unreadable" : *l ? l : "unknown");
	return 0;
}

/*
 * The housekeeping step's parts as the files and irqbalance hold them now,
 * in the plan's words ("irqs 0-5; workqueues 0-5; irqbalance bans 6-7").
 * irqbalance says nothing of its bans: ours while the irqbalance we told
 * still runs, else none.
 */
static int read_housekeeping(Applier *a, const PlanStep *st, char **ret)
{
	StrBuf b = {};
	int r = 0;

	if (strstr(st->to, "irqs ")) {
		r = read_mask_text(a, IRQ_DEFAULT, "irqs", &b);
	}
	if (r >= 0 && strstr(st->to, "workqueues ")) {
		strbuf_append(&b, b.len ? "; " : "");
		r = read_mask_text(a, WORKQUEUE_MASK, "workqueues", &b);
	}
	if (r >= 0 && strstr(st->to, "irqbalance")) {
		_cleanup_free_ char *sock = NULL;
		const ChangeRecord *c;

		strbuf_append(&b, b.len ? "; " : "");
		r = find_irqbalance(a, &sock);
		c = r > 0 ? find_record(a, sock) : NULL;
		if (r == 0)
			strbuf_append(&b, "irqbalance not running");
		else if (r > 0)
			strbuf_appendf(&b, "irqbalance bans %s", c && c->done && c->new && *c->new ? c->new : "none");
	}
	if (r < 0) {
		strbuf_done(&b);
		return r;
	}
	return strbuf_steal(&b, ret);
}

/*
 * Per IRQ file: one we moved that holds something else now, and an IRQ we
 * never moved with an isolated CPU, each with its path. One that appeared
 * since the last IRQ pass is marked new_irq: not moved yet, but no drift
 * (the daemon runs an IRQ pass before it verifies, and one can appear in
 * between: its caller moves it as a new IRQ).
 */
static int verify_irqs(Applier *a, const Plan *plan, Mismatch **m, size_t *n)
{
	_cleanup_free_ unsigned *irqs = NULL;
	size_t n_irqs = 0;
	int r;

	r = list_irqs(a, &irqs, &n_irqs);
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	for (size_t i = 0; i < n_irqs; i++) {
		_cleanup_free_ char *path = strprintf("proc/irq/%u/smp_affinity_list", irqs[i]), *cur = NULL;
		_cleanup_free_ char *want = NULL;
		const ChangeRecord *c;
		CpuSet set = {};
		bool refused = false, drift;
		Mismatch *nm;

		if (!path)
			return -ENOMEM;
		for (size_t j = 0; j < a->n_irqs_refused; j++)
			refused |= a->irqs_refused[j] == irqs[i];
		if (refused || a->io.read(a->io.userdata, a->root_fd, path, &cur) < 0)
			continue;
		strip(cur);
		c = find_record(a, path);
		/* Moved: drift once it names an isolated CPU again (not when irqbalance narrows it). */
		if (c && c->done)
			drift = !irq_keeps_off(cur, &plan->isolated);
		else {
			drift = cpuset_parse_list(cur, &set, NULL) >= 0 && cpuset_intersects(&set, &plan->isolated);
			cpuset_done(&set);
		}
		if (!drift)
			continue;
		if (c && c->done)
			want = strdup(c->new);
		else if (irq_target(plan, cur, &want) < 0)
			return -ENOMEM;
		nm = realloc(*m, (*n + 1) * sizeof(Mismatch));
		if (!nm || !want)
			return -ENOMEM;
		*m = nm;
		nm[*n] = (Mismatch) {
			.setting = SETTING_HOUSEKEEPING,
			.want = strprintf("/%s: %s", path, want),
			.got = strprintf("/%s: %s%s", path, cur, c ? "" : " (an IRQ not moved yet)"),
			.new_irq = !c && a->irqs_seen && !irq_seen(a, irqs[i]),
		};
		if (!nm[(*n)++].want || !nm[*n - 1].got)
			return -ENOMEM;
	}
	return 0;
}
