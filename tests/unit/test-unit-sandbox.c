/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unit's sandbox against the files topotuned writes: every path the
 * control table and the applier write must be writable inside
 * topotuned.service's mount namespace, and every path the unit opens must
 * be one of them (or one of the daemon's own files). With --bootloader, the
 * same for topotune-bootloader.service and what update-grub and grubby
 * write.
 *
 * The namespace is modelled as systemd 252 (Debian 12) builds it
 * (src/core/namespace.c): ProtectSystem=strict makes "/" read-only but for
 * the API file systems, ProtectKernelTunables= and ProtectControlGroups=
 * add read-only entries, ReadWritePaths= read-write ones, BindPaths=
 * writable bind mounts. Entries on the same path are reduced to one
 * (drop_duplicates()), read-only if any of them was: a ReadWritePaths= or
 * a BindPaths= onto a protected path does nothing. A path takes the mode of
 * the deepest entry above it. The systemd VM
 * (tests/install/systemd-vm.sh) is where the model meets the real thing.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "macro.h"
#include "test.h"

typedef enum Mode {	/* systemd's MountMode, in its order of priority */
	BIND,
	READ_ONLY,
	READ_WRITE,
	READ_WRITE_IMPLICIT,
} Mode;

typedef struct Entry {
	char path[256];
	char source[256];   /* BIND: what is bound there */
	Mode mode;
} Entry;

typedef struct Namespace {
	Entry e[128];
	size_t n;
	char timeout_start[64];   /* the unit's TimeoutStartSec=, verbatim ("" if none) */
	char timeout_stop[64];
} Namespace;

static void add(Namespace *ns, const char *path, Mode mode)
{
	size_t l = strlen(path);

	if (ns->n >= ELEMENTSOF(ns->e) || l >= sizeof(ns->e[0].path))
		abort();
	memcpy(ns->e[ns->n].path, path, l + 1);
	while (l > 1 && ns->e[ns->n].path[l - 1] == '/')
		ns->e[ns->n].path[--l] = '\0';
	ns->e[ns->n++].mode = mode;
}

/* systemd 252's protect_kernel_tunables_{proc,sys}_table. */
static const char *const kernel_tunables[] = {
	"/proc/acpi", "/proc/apm", "/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/kallsyms",
	"/proc/kcore", "/proc/latency_stats", "/proc/mtrr", "/proc/scsi", "/proc/sys", "/proc/sysrq-trigger",
	"/proc/timer_list", "/proc/timer_stats", "/sys", "/sys/kernel/debug", "/sys/kernel/tracing",
};

/* Each path of a space-separated list, its "-" (ignore if missing) dropped. */
static void add_list(Namespace *ns, char *value, Mode mode)
{
	for (char *save = NULL, *w = strtok_r(value, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (*w == '-')
			w++;
		const char *src = w;

		if (mode == BIND && strchr(w, ':')) {
			*strchr(w, ':') = '\0';
			w += strlen(w) + 1;   /* SOURCE:DEST: the mount is at DEST */
		}
		add(ns, w, mode);
		snprintf(ns->e[ns->n - 1].source, sizeof(ns->e[0].source), "%s", src);
	}
}

static int load_unit(const char *file, Namespace *ns)
{
	FILE *f = fopen(file, "re");
	char line[1024];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');

		line[strcspn(line, "\n")] = '\0';
		if (!eq || *line == '#')
			continue;
		*eq = '\0';
		if (streq(line, "ProtectSystem") && streq(eq + 1, "strict")) {
			add(ns, "/", READ_ONLY);
			add(ns, "/proc", READ_WRITE_IMPLICIT);
			add(ns, "/sys", READ_WRITE_IMPLICIT);
			add(ns, "/dev", READ_WRITE_IMPLICIT);
		} else if (streq(line, "ProtectKernelTunables") && streq(eq + 1, "yes")) {
			for (size_t i = 0; i < ELEMENTSOF(kernel_tunables); i++)
				add(ns, kernel_tunables[i], READ_ONLY);
		} else if (streq(line, "ProtectControlGroups") && streq(eq + 1, "yes")) {
			add(ns, "/sys/fs/cgroup", READ_ONLY);
		} else if (streq(line, "ReadWritePaths")) {
			add_list(ns, eq + 1, READ_WRITE);
		} else if (streq(line, "BindPaths")) {
			add_list(ns, eq + 1, BIND);
		} else if (streq(line, "TimeoutStartSec")) {
			snprintf(ns->timeout_start, sizeof(ns->timeout_start), "%s", eq + 1);
		} else if (streq(line, "TimeoutStopSec")) {
			snprintf(ns->timeout_stop, sizeof(ns->timeout_stop), "%s", eq + 1);
		} else if (streq(line, "RuntimeDirectory")) {
			char p[300];

			snprintf(p, sizeof(p), "/run/%s", eq + 1);
			add(ns, p, READ_WRITE);
		}
	}
	fclose(f);
	return 0;
}

/* @prefix is @path or a directory above it. */
static bool path_under(const char *path, const char *prefix)
{
	size_t l = strlen(prefix);

	if (streq(prefix, "/"))
		return true;
	return strncmp(path, prefix, l) == 0 && (path[l] == '\0' || path[l] == '/');
}

/*
 * The mode @path has in the namespace: that of the deepest entry above it;
 * of several entries on that path, read-only if one of them is.
 */
static int mode_of(const Namespace *ns, const char *path)
{
	size_t best_len = 0;
	int best = READ_WRITE_IMPLICIT;   /* no entry: the host's own mount */

	for (size_t i = 0; i < ns->n; i++) {
		size_t l = strlen(ns->e[i].path);

		if (!path_under(path, ns->e[i].path) || l < best_len)
			continue;
		if (l > best_len || ns->e[i].mode == READ_ONLY)
			best = ns->e[i].mode;
		best_len = l;
	}
	return best;
}

static bool writable(const Namespace *ns, const char *path)
{
	return mode_of(ns, path) != READ_ONLY;
}

/*
 * A systemd time span in seconds ("90s", "2min", "1min 30s", "90"), -1 for
 * anything else, "infinity" and "0" (no timeout) included.
 */
static long timespan_sec(const char *s)
{
	long total = 0;

	while (*s) {
		char *end;
		long v;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		errno = 0;
		v = strtol(s, &end, 10);
		if (errno || end == s || v < 0)
			return -1;
		s = end;
		if (strncmp(s, "min", 3) == 0) {
			v *= 60;
			s += 3;
		} else if (*s == 's') {
			s++;
		} else if (*s && *s != ' ') {
			return -1;
		}
		total += v;
	}
	return total > 0 ? total : -1;
}

/* The files topotuned writes, "/"-rooted: the control table's and the applier's own. */
static size_t written_paths(char paths[][256], size_t max)
{
	static const char *const own[] = {
		"/run/topotune/irq/default_smp_affinity",             /* IRQ_BIND_DIR, a bind of /proc/irq */
		"/run/topotune/irq/1/smp_affinity_list",              /* apply_irq(), every IRQ */
		"/sys/fs/cgroup/topotune.slice/cpuset.cpus.partition", /* the isolation partition */
		"/run/topotune/bootloader.request",                   /* the bootloader request */
		"/run/topotune/irqs-refused",                         /* the IRQs the kernel refused */
		"/run/topotune/state",                                /* the write-ahead record */
	};
	size_t n = 0;

	for (ControlId i = 0; i < _CONTROL_ID_MAX && n < max; i++) {
		const KernelControl *c = kernel_control_get(i);

		/*
		 * The command line is read; irqbalance's socket is connected to,
		 * not written; proc/irq is written through its bind (above).
		 */
		if (c->kind == CONTROL_CMDLINE || c->kind == CONTROL_IRQBALANCE || c->kind == CONTROL_PARTITION ||
		    c->kind == CONTROL_IRQS)
			continue;
		snprintf(paths[n++], 256, "/%s", c->path);
	}
	for (size_t i = 0; i < ELEMENTSOF(own) && n < max; i++)
		snprintf(paths[n++], 256, "%s", own[i]);
	return n;
}

/* The model itself, on the case that broke hpc under the real systemd. */
static void test_model(void)
{
	Namespace ns = {};
	char rw[] = "-/proc/irq -/proc/sys/kernel/numa_balancing";
	char bind[] = "-/proc/irq";
	char bind_elsewhere[] = "-/proc/irq:/run/topotune/irq";

	add(&ns, "/", READ_ONLY);
	add(&ns, "/proc", READ_WRITE_IMPLICIT);
	for (size_t i = 0; i < ELEMENTSOF(kernel_tunables); i++)
		add(&ns, kernel_tunables[i], READ_ONLY);
	add_list(&ns, rw, READ_WRITE);
	/* A ReadWritePaths= on the protected directory itself is void... */
	check(!writable(&ns, "/proc/irq/default_smp_affinity"));
	check(!writable(&ns, "/proc/irq/5/smp_affinity_list"));
	/* ...one below it opens that file only. */
	check(writable(&ns, "/proc/sys/kernel/numa_balancing"));
	check(!writable(&ns, "/proc/sys/kernel/sched_schedstats"));
	check(!writable(&ns, "/etc/topotune/topotune.conf"));
	check(writable(&ns, "/proc/self/status"));
	/* Nor does a bind mount onto it: the entry that stays is read-only... */
	add_list(&ns, bind, BIND);
	check(!writable(&ns, "/proc/irq/5/smp_affinity_list"));
	/* ...but a bind of it elsewhere is writable there. */
	add(&ns, "/run/topotune", READ_WRITE);
	add_list(&ns, bind_elsewhere, BIND);
	check(writable(&ns, "/run/topotune/irq/5/smp_affinity_list"));
	check(!writable(&ns, "/proc/irq/5/smp_affinity_list"));
}

static bool bound(const Namespace *ns, const char *dest, const char *source)
{
	for (size_t i = 0; i < ns->n; i++)
		if (ns->e[i].mode == BIND && streq(ns->e[i].path, dest) && streq(ns->e[i].source, source))
			return true;
	return false;
}

/* What the unit opens beyond the controls: the daemon's own files. */
static const char *const own_dirs[] = {
	"/run/topotune",                     /* RuntimeDirectory= and the record */
	"/etc/topotune/topotune.conf.d",     /* persistent choices (topotunectl set-profile --persist) */
	"/var/lib/prometheus/node-exporter", /* metrics_textfile's default directory */
};

static void test_unit(const char *unit)
{
	Namespace ns = {};
	char paths[64][256];
	size_t n = written_paths(paths, ELEMENTSOF(paths));

	check_int(load_unit(unit, &ns), 0);
	check(ns.n > 0);
	/*
	 * Issue 29: start (crash recovery, then the first apply) and stop (the
	 * revert) are bounded by the unit itself, finite and within 5 minutes,
	 * not by whatever DefaultTimeoutStartSec= the manager has.
	 */
	test_checks += 2;
	if (timespan_sec(ns.timeout_start) <= 0 || timespan_sec(ns.timeout_start) > 300) {
		test_failures++;
		fprintf(stderr, "%s: TimeoutStartSec='%s': want an explicit bound of at most 5min\n", unit,
			ns.timeout_start);
	}
	if (timespan_sec(ns.timeout_stop) <= 0 || timespan_sec(ns.timeout_stop) > 300) {
		test_failures++;
		fprintf(stderr, "%s: TimeoutStopSec='%s': want an explicit bound of at most 5min\n", unit,
			ns.timeout_stop);
	}
	/* The IRQ files are written through a bind of /proc/irq at IRQ_BIND_DIR. */
	test_checks++;
	if (!bound(&ns, "/run/topotune/irq", "/proc/irq")) {
		test_failures++;
		fprintf(stderr, "%s: no BindPaths=/proc/irq:/run/topotune/irq\n", unit);
	}
	for (size_t i = 0; i < n; i++)
		if (!writable(&ns, paths[i])) {
			test_checks++;
			test_failures++;
			fprintf(stderr, "%s: %s is read-only in topotuned's namespace\n", unit, paths[i]);
		}
	/* Every ReadWritePaths=/BindPaths= entry opens a written file or one of the daemon's own directories. */
	for (size_t i = 0; i < ns.n; i++) {
		bool used = false;

		if (ns.e[i].mode != READ_WRITE && ns.e[i].mode != BIND)
			continue;
		for (size_t j = 0; j < n && !used; j++)
			used = path_under(paths[j], ns.e[i].path);
		for (size_t j = 0; j < ELEMENTSOF(own_dirs) && !used; j++)
			used = streq(ns.e[i].path, own_dirs[j]);
		test_checks++;
		if (!used) {
			test_failures++;
			fprintf(stderr, "%s: %s is opened, but topotuned writes nothing there\n", unit, ns.e[i].path);
		}
	}
}

/*
 * What topotune-bootloader.service's update-bootloader writes, itself and
 * through the tools it runs, with the temporary files they rename over
 * them (those need the directory writable, not only the file):
 * - update-bootloader's render(): the drop-in, through DROPIN.tmp.
 * - update-grub (Debian 12, grub2 2.06 grub-mkconfig): grub.cfg.new, renamed.
 * - grubby, as Fedora ships it (grubby-bls of Fedora's rpms/grubby, mirrored
 *   at github.com/fedora-riscv/grubby, commit
 *   68f872a10efca0a0553717a20f99460d9692865c, grubby 8.40-69), for
 *   --update-kernel=ALL --args= / --remove-args=: update_bls_fragment()
 *   edits every entry's options with set_bls_value() (sed -i: a sedXXXXXX
 *   beside it), GRUB_CMDLINE_LINUX in /etc/default/grub (sed -i, so a
 *   temporary file in /etc/default), kernelopts in the grubenv through
 *   grub2-editenv (grubenv.new, renamed) and /etc/kernel/cmdline (created
 *   when missing); update_grubcfg() runs grub2-mkconfig -o
 *   /boot/grub2/grub.cfg on ppc64le OPAL machines. grubby ignores a failed
 *   write and exits 0: a read-only path here is a silent no-op there.
 */
static const char *const bootloader_written[] = {
	"/etc/default/grub.d/topotune.cfg.tmp", "/etc/default/grub.d/topotune.cfg",
	"/boot/grub/grub.cfg.new",              "/boot/grub/grub.cfg",
	"/boot/loader/entries/sedXXXXXX",       "/boot/loader/entries/MACHINE-ID-VERSION.conf",
	"/etc/default/sedXXXXXX",               "/etc/default/grub",
	"/boot/grub2/grubenv.new",              "/boot/grub2/grubenv",
	"/etc/kernel/cmdline",
	"/boot/grub2/grub.cfg.new",             "/boot/grub2/grub.cfg",
};

static void test_bootloader_unit(const char *unit)
{
	Namespace ns = {};

	check_int(load_unit(unit, &ns), 0);
	check(ns.n > 0);
	check(!writable(&ns, "/etc/passwd"));
	for (size_t i = 0; i < ELEMENTSOF(bootloader_written); i++) {
		test_checks++;
		if (!writable(&ns, bootloader_written[i])) {
			test_failures++;
			fprintf(stderr, "%s: %s is read-only in its namespace\n", unit, bootloader_written[i]);
		}
	}
	/* Every ReadWritePaths= entry opens a file one of them writes. */
	for (size_t i = 0; i < ns.n; i++) {
		bool used = false;

		if (ns.e[i].mode != READ_WRITE && ns.e[i].mode != BIND)
			continue;
		for (size_t j = 0; j < ELEMENTSOF(bootloader_written) && !used; j++)
			used = path_under(bootloader_written[j], ns.e[i].path);
		test_checks++;
		if (!used) {
			test_failures++;
			fprintf(stderr, "%s: %s is opened, but nothing writes there\n", unit, ns.e[i].path);
		}
	}
}

static void test_timespan(void)
{
	static const struct {
		const char *in;
		long sec;
	} t[] = {
		{ "90s", 90 }, { "90", 90 }, { "2min", 120 }, { "1min 30s", 90 },
		{ "infinity", -1 }, { "0", -1 }, { "", -1 }, { "5h", -1 },
	};

	for (size_t i = 0; i < ELEMENTSOF(t); i++)
		check_int(timespan_sec(t[i].in), t[i].sec);
}

int main(int argc, char **argv)
{
	if (argc == 3 && streq(argv[1], "--bootloader")) {
		test_model();
		test_bootloader_unit(argv[2]);
		return test_end("unit-sandbox-bootloader");
	}
	if (argc != 2) {
		fprintf(stderr, "usage: %s [--bootloader] UNIT-FILE\n", argv[0]);
		return 2;
	}
	test_model();
	test_timespan();
	test_unit(argv[1]);
	return test_end("unit-sandbox");
}
