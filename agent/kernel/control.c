/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control table: per kernel control its path, kind of write and value
 * encoding, in one place for the probe, the applier and its read-back.
 * Pure; depends on basic only.
 */
#include <assert.h>
#include <limits.h>

#include "control.h"
#include "strutil.h"

static const char *const off_on[] = { "off", "on", NULL };

/* kernel.numa_balancing's bits: 1 NUMA_BALANCING_NORMAL, 2 NUMA_BALANCING_MEMORY_TIERING. */
static const char *const numa_balancing_values[] = { "off", "on", "memory-tiering", "on+memory-tiering", NULL };

/* Memory tiering (2, and 1|2) came with 5.18; before, the sysctl took 0 or 1. */
static int numa_balancing_max(const char *release)
{
	unsigned major = 0, minor = 0;

	if (sscanf(release, "%u.%u", &major, &minor) < 2)
		return 3;
	return major * 1000 + minor >= 5018 ? 3 : 1;
}

static const KernelControl control_table[_CONTROL_ID_MAX] = {
	[CONTROL_SMT_BUDDY_SYSCTL] = {
		.key = "smt_buddy_sysctl",
		.setting = SETTING_SMT_BUDDY_ASSIST,
		.name = "sysctl kernel.sched_smt_buddy_assist",
		.kind = CONTROL_VALUE,
		.path = "proc/sys/kernel/sched_smt_buddy_assist",
		.values = off_on,
		.boolean = true,
		.patched = true,
	},
	[CONTROL_SMT_BUDDY_DEBUGFS] = {
		.key = "smt_buddy_debugfs",
		.setting = SETTING_SMT_BUDDY_ASSIST,
		.name = "debugfs sched/features",
		.kind = CONTROL_FEATURE,
		.path = "sys/kernel/debug/sched/features",
		.token = "SMT_BUDDY_ASSIST",
		.values = off_on,
		.boolean = true,
		.patched = true,
	},
	[CONTROL_RELAX_SYSCTL] = {
		.key = "relax_sysctl",
		.setting = SETTING_RELAX_DOMAIN_LEVEL,
		.name = "sysctl kernel.sched_relax_domain_level",
		.kind = CONTROL_VALUE,
		.path = "proc/sys/kernel/sched_relax_domain_level",
		.patched = true,
		.assumed = -1,
	},
	[CONTROL_RELAX_CGROUP_V1] = {
		.key = "relax_cgroup_v1",
		.setting = SETTING_RELAX_DOMAIN_LEVEL,
		.name = "cgroup v1 cpuset.sched_relax_domain_level",
		.kind = CONTROL_VALUE,
		.path = "sys/fs/cgroup/cpuset/cpuset.sched_relax_domain_level",
	},
	[CONTROL_RELAX_CMDLINE] = {
		.key = "relax_cmdline",
		.setting = SETTING_RELAX_DOMAIN_LEVEL,
		.name = "kernel command line",
		.kind = CONTROL_CMDLINE,
		.path = "proc/cmdline",
		.token = "relax_domain_level",
	},
	[CONTROL_CPUSET_PARTITION] = {
		.key = "cpuset_partition",
		.setting = SETTING_ISOLATED_CPUS,
		.name = "cgroup v2 isolated partition topotune.slice",
		.kind = CONTROL_PARTITION,
		.path = "sys/fs/cgroup/cpuset.cpus.isolated",
		.probed_elsewhere = true,
		.stock = true,
		.patched = true,
	},
	[CONTROL_NUMA_BALANCING_SYSCTL] = {
		.key = "numa_balancing_sysctl",
		.setting = SETTING_NUMA_BALANCING,
		.name = "sysctl kernel.numa_balancing",
		.kind = CONTROL_VALUE,
		.path = "proc/sys/kernel/numa_balancing",
		.values = numa_balancing_values,
		.max_value = numa_balancing_max,
		.feature = "NUMA balancing",
		.kconfig = "CONFIG_NUMA_BALANCING",
		.max_why = "memory tiering needs 5.18 or later",
		.stock = true,
		.patched = true,
		.assumed = 1,
	},
	/*
	 * housekeeping: the IRQ default affinity and every IRQ's affinity, the
	 * unbound workqueues' cpumask and irqbalance's banned CPUs exclude the
	 * isolated CPUs. Each of them is a set of CPUs, probed into KernelCaps.
	 */
	[CONTROL_IRQ_AFFINITY] = {
		.key = "irq_affinity",
		.setting = SETTING_HOUSEKEEPING,
		.name = "/proc/irq (default_smp_affinity, N/smp_affinity_list)",
		.kind = CONTROL_IRQS,
		.path = "proc/irq/default_smp_affinity",
		.probed_elsewhere = true,
		.stock = true,
		.patched = true,
	},
	[CONTROL_WORKQUEUE_CPUMASK] = {
		.key = "workqueue_cpumask",
		.setting = SETTING_HOUSEKEEPING,
		.name = "/sys/devices/virtual/workqueue/cpumask",
		.kind = CONTROL_CPUMASK,
		.path = "sys/devices/virtual/workqueue/cpumask",
		.probed_elsewhere = true,
		.stock = true,
		.patched = true,
	},
	[CONTROL_IRQBALANCE_SOCKET] = {
		.key = "irqbalance_socket",
		.setting = SETTING_HOUSEKEEPING,
		.name = "irqbalance's socket (settings cpus)",
		.kind = CONTROL_IRQBALANCE,
		.path = "run/irqbalance",
		.probed_elsewhere = true,
	},
	[CONTROL_AUTOGROUP_SYSCTL] = {
		.key = "autogroup_sysctl",
		.setting = SETTING_AUTOGROUP,
		.name = "sysctl kernel.sched_autogroup_enabled",
		.kind = CONTROL_VALUE,
		.path = "proc/sys/kernel/sched_autogroup_enabled",
		.values = off_on,
		.boolean = true,
		.feature = "autogroup",
		.kconfig = "CONFIG_SCHED_AUTOGROUP",
		.stock = true,
		.patched = true,
		.assumed = 1,
	},
};

const KernelControl *kernel_control_get(ControlId id)
{
	if (id < 0 || id >= _CONTROL_ID_MAX)
		return NULL;
	return &control_table[id];
}

ControlId kernel_control_id(const KernelControl *c)
{
	assert(c);
	assert(c >= control_table && c < control_table + _CONTROL_ID_MAX);

	return (ControlId)(c - control_table);
}

int kernel_control_max(const KernelControl *c, const char *release)
{
	assert(c);

	return c->max_value ? c->max_value(release) : INT_MAX;
}

static int cmdline_int(const char *cmdline, const char *key, int *ret)
{
	_cleanup_strv_free_ char **words = NULL;
	size_t kl = strlen(key);
	int r;

	r = strv_split(cmdline, WHITESPACE, &words);
	if (r < 0)
		return r;
	STRV_FOREACH(w, words)
		if (strncmp(*w, key, kl) == 0 && (*w)[kl] == '=')
			return safe_atoi(*w + kl + 1, ret);
	return -ENOENT;
}

int kernel_control_decode(const KernelControl *c, const char *content, int *ret)
{
	_cleanup_free_ char *s = NULL;
	int v, r;

	assert(c);
	assert(content);
	assert(ret);

	switch (c->kind) {
	case CONTROL_FEATURE: {
		_cleanup_free_ char *no = strprintf("NO_%s", c->token);

		if (!no)
			return -ENOMEM;
		if (string_has_word(content, c->token))
			v = 1;
		else if (string_has_word(content, no))
			v = 0;
		else
			return -ENOENT;
		break;
	}
	case CONTROL_CMDLINE:
		r = cmdline_int(content, c->token, &v);
		if (r < 0)
			return r;
		break;
	case CONTROL_VALUE:
		s = strdup(content);
		if (!s)
			return -ENOMEM;
		r = safe_atoi(strip(s), &v);
		if (r < 0)
			return r;
		if (c->boolean)
			v = !!v;
		break;
	default:
		return -EOPNOTSUPP;
	}
	*ret = v;
	return 0;
}

int kernel_control_encode(const KernelControl *c, int value, char **ret)
{
	char *s;

	assert(c);
	assert(ret);

	switch (c->kind) {
	case CONTROL_FEATURE:
		s = value ? strdup(c->token) : strprintf("NO_%s", c->token);
		break;
	case CONTROL_VALUE:
		s = strprintf("%d", value);
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

size_t kernel_control_n_values(const KernelControl *c)
{
	size_t n = 0;

	assert(c);

	while (c->values && c->values[n])
		n++;
	return n;
}

int kernel_control_format(const KernelControl *c, int value, char **ret)
{
	char *s;

	assert(c);
	assert(ret);

	if (value >= 0 && (size_t)value < kernel_control_n_values(c))
		s = strdup(c->values[value]);
	else
		s = strprintf("%d", value);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

int kernel_control_parse(const KernelControl *c, const char *text, int *ret)
{
	assert(c);
	assert(text);
	assert(ret);

	for (size_t i = 0; i < kernel_control_n_values(c); i++)
		if (streq(c->values[i], text)) {
			*ret = (int)i;
			return 0;
		}
	return safe_atoi(text, ret);
}

int kernel_control_read_text(const KernelControl *c, const char *content, char **ret)
{
	_cleanup_free_ char *s = NULL;
	int v, r;

	assert(c);
	assert(content);
	assert(ret);

	r = kernel_control_decode(c, content, &v);
	if (r >= 0)
		return kernel_control_format(c, v, ret);
	if (r == -ENOMEM)
		return r;
	if (c->kind == CONTROL_FEATURE)
		s = strdup("absent");
	else if (c->boolean)
		/* Anything but 0 is on, as the kernel's proc_dointvec reads it. */
		s = strdup(c->values[1]);
	else {
		s = strdup(content);
		if (s)
			strip(s);
	}
	if (!s)
		return -ENOMEM;
	*ret = TAKE_PTR(s);
	return 0;
}
