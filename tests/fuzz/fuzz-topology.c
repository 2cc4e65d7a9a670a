/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sysfs topology reader (agent/topology) and the domain model that
 * consumes its result (agent/planner/domains.c, plan.c): each input becomes
 * a small fake sysfs tree (format in fuzz-topology.h) in a private scratch
 * directory; topology_load() must never crash, and whatever it accepts must
 * be consistent enough for domains_predict() and plan_compute() to run.
 */
#include <errno.h>
#include <stdio.h>

#include "fuzz-topology.h"
#include "fuzz-tree.h"
#include "fuzz.h"
#include "planner.h"

static const CpuIdentity identities[] = {
	{ .vendor = CPU_VENDOR_HYGON, .arch = "x86", .have_family = true, .family = 0x18, .model = 7 },
	{ .vendor = CPU_VENDOR_INTEL, .arch = "x86", .have_family = true, .family = 6, .model = 0xad },
	{ .vendor = CPU_VENDOR_AMD, .arch = "x86", .have_family = true, .family = 0x1a, .model = 0x11 },
	{ .vendor = CPU_VENDOR_ARM, .arch = "arm64" },
};

static void path_of(unsigned idx, char *buf, size_t size)
{
	const size_t ng = FUZZ_ELEMENTS(fuzz_topo_global), nc = FUZZ_ELEMENTS(fuzz_topo_per_cpu);
	const size_t nk = FUZZ_ELEMENTS(fuzz_topo_per_cache), nn = FUZZ_ELEMENTS(fuzz_topo_per_node);

	if (idx < ng) {
		snprintf(buf, size, "%s", fuzz_topo_global[idx]);
		return;
	}
	idx -= ng;
	if (idx < FUZZ_TOPO_CPUS * FUZZ_TOPO_PER_CPU) {
		unsigned cpu = idx / FUZZ_TOPO_PER_CPU, f = idx % FUZZ_TOPO_PER_CPU;

		if (f < nc)
			snprintf(buf, size, "sys/devices/system/cpu/cpu%u/%s", cpu, fuzz_topo_per_cpu[f]);
		else {
			f -= nc;
			snprintf(buf, size, "sys/devices/system/cpu/cpu%u/cache/index%zu/%s", cpu, f / nk,
				 fuzz_topo_per_cache[f % nk]);
		}
		return;
	}
	idx -= FUZZ_TOPO_CPUS * FUZZ_TOPO_PER_CPU;
	if (idx < FUZZ_TOPO_NODES * nn) {
		snprintf(buf, size, "sys/devices/system/node/node%zu/%s", idx / nn, fuzz_topo_per_node[idx % nn]);
		return;
	}
	idx -= FUZZ_TOPO_NODES * nn;
	if (idx < FUZZ_TOPO_CPUS * FUZZ_ELEMENTS(fuzz_topo_per_cpu_late)) {
		snprintf(buf, size, "sys/devices/system/cpu/cpu%zu/%s", idx / FUZZ_ELEMENTS(fuzz_topo_per_cpu_late),
			 fuzz_topo_per_cpu_late[idx % FUZZ_ELEMENTS(fuzz_topo_per_cpu_late)]);
		return;
	}
	idx -= FUZZ_TOPO_CPUS * FUZZ_ELEMENTS(fuzz_topo_per_cpu_late);
	if (idx < FUZZ_TOPO_CPUS * FUZZ_ELEMENTS(fuzz_topo_per_cpu_kind)) {
		snprintf(buf, size, "sys/devices/system/cpu/cpu%zu/%s", idx / FUZZ_ELEMENTS(fuzz_topo_per_cpu_kind),
			 fuzz_topo_per_cpu_kind[idx % FUZZ_ELEMENTS(fuzz_topo_per_cpu_kind)]);
		return;
	}
	idx -= FUZZ_TOPO_CPUS * FUZZ_ELEMENTS(fuzz_topo_per_cpu_kind);
	snprintf(buf, size, "%s", fuzz_topo_kind_global[idx % FUZZ_ELEMENTS(fuzz_topo_kind_global)]);
}

static void check_topology(const Topology *t)
{
	fuzz_assert(!cpuset_is_empty(&t->online));
	fuzz_assert(t->n_slots > (unsigned)cpuset_last(&t->possible));
	fuzz_assert(cpuset_is_subset(&t->online, &t->present));
	CPUSET_FOREACH(cpu, &t->online) {
		const TopoCpu *c = &t->cpus[cpu];

		fuzz_assert(c->online);
		fuzz_assert(c->package < (int)t->packages.n && c->core < (int)t->cores.n);
		fuzz_assert(c->llc < (int)t->llcs.n && c->l2 < (int)t->l2s.n && c->node < (int)t->nodes.n);
		fuzz_assert(c->die < (int)t->dies.n);
	}
	(void)topology_cpu_nodes(t);
	for (size_t k = 0; k < t->kinds.n; k++) {
		fuzz_assert(!cpuset_is_empty(&t->kinds.items[k].cpus));
		fuzz_assert(cpuset_is_subset(&t->kinds.items[k].cpus, &t->online));
		CPUSET_FOREACH(cpu, &t->kinds.items[k].cpus)
			fuzz_assert(t->cpus[cpu].kind == (int)k);
	}
}

static void predict(const Topology *t, uint8_t opt)
{
	const CpuIdentity *id = &identities[(opt >> 5) & 3];
	int relax = (int)((opt >> 2) & 7) - 1;
	DomainLayout *l = NULL;
	KernelCaps caps;
	char *text = NULL;

	if (opt & 1)
		kernel_caps_patched(&caps);
	else
		kernel_caps_stock(&caps);

	DomainInput in = {
		.topology = t, .identity = id, .caps = &caps, .cpu_map = &t->online,
		.relax_level = relax,
	};
	if (domains_predict(&in, &l) >= 0) {
		CPUSET_FOREACH(cpu, &t->online) {
			fuzz_assert(domain_layout_format(l, (unsigned)cpu, &text) >= 0);
			free(text);
			text = NULL;
		}
		(void)domain_layout_first_cross_node_level(l, t);
		domain_layout_free(l);
	}

	/* The whole planner on what the reader produced, with default settings. */
	ProfileSettings s;
	Plan *p = NULL;

	profile_settings_init(&s);
	s.value[SETTING_SMT_BUDDY_ASSIST].mode = opt & 2 ? SMT_BUDDY_ON : SMT_BUDDY_OFF;
	s.value[SETTING_RELAX_DOMAIN_LEVEL].mode = opt & 0x80 ? RELAX_AUTO : RELAX_LEVEL;
	s.value[SETTING_RELAX_DOMAIN_LEVEL].level = relax;
	PlanInput pin = { .identity = id, .topology = t, .caps = &caps, .settings = &s, .profile = "fuzz" };
	if (plan_compute(&pin, &p) >= 0) {
		fuzz_assert(plan_format(p, (unsigned)cpuset_first(&t->online), &text) >= 0);
		free(text);
		plan_free(p);
	}
	profile_settings_done(&s);
	kernel_caps_done(&caps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int root = fuzz_tree_root();
	Topology *t = NULL;
	uint8_t opt;
	char path[256];
	int r;

	if (size < 1)
		return 0;
	opt = data[0];
	for (size_t i = 1; i + 2 < size;) {
		unsigned idx = (data[i] | (unsigned)data[i + 1] << 8) % FUZZ_TOPO_N_PATHS;
		size_t len = data[i + 2];

		i += 3;
		if (len > size - i)
			len = size - i;
		path_of(idx, path, sizeof(path));
		fuzz_tree_write(root, path, data + i, len);
		i += len;
	}

	r = topology_load(root, &t);
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "topology_load: %s\n", r < 0 ? strerror(-r) : "ok");
	if (r >= 0) {
		check_topology(t);
		predict(t, opt);
		topology_free(t);
	}
	fuzz_tree_clear(root);
	return 0;
}
