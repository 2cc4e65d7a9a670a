/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sysfs topology reader against generated trees of the seed machines
 * (argv[1] holds one directory per spec, made by sysroot-tests.sh), and
 * against damaged copies: missing and truncated files must be named or
 * reported unknown, never guessed.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "cpuid.h"
#include "fileio.h"
#include "fixes.h"
#include "kernel.h"
#include "strutil.h"
#include "test.h"
#include "topology.h"

static const char *base;

typedef struct Expect {
	const char *spec;
	unsigned cpus, packages, cores, threads, llcs, nodes, nodes_per_package;
	const char *node0, *node_last;
	unsigned d03;             /* distance node0 -> node3 (0: n/a) */
	CpuVendor vendor;
	unsigned family, model;
} Expect;

static const Expect seeds[] = {
	{ "hygon-7447v-2s-nps3", 384, 2, 192, 2, 24, 6, 3, "0-31,192-223", "160-191,352-383", 21,
	  CPU_VENDOR_HYGON, 0x18, 7 },
	{ "hygon-7447v-2s-nps6", 384, 2, 192, 2, 24, 12, 6, "0-15,192-207", "176-191,368-383", 0,
	  CPU_VENDOR_HYGON, 0x18, 7 },
	{ "turin-9845-2s-nps10", 640, 2, 320, 2, 20, 20, 10, "0-15,320-335", "304-319,624-639", 12,
	  CPU_VENDOR_AMD, 0x1a, 0x11 },
	{ "siena-8534-nps2-llc", 128, 1, 64, 2, 8, 8, 8, "0-7,64-71", "56-63,120-127", 11,
	  CPU_VENDOR_AMD, 0x19, 0xa0 },
	{ "gnr-2s-snc3", 384, 2, 192, 2, 2, 6, 3, "0-31,192-223", "160-191,352-383", 21,
	  CPU_VENDOR_INTEL, 6, 0xad },
	{ "vm-2cpu", 2, 1, 2, 1, 1, 1, 1, "0-1", "0-1", 0, CPU_VENDOR_INTEL, 6, 6 },
};

static int open_tree(const char *name)
{
	char path[4096];
	int fd = -EBADF;

	snprintf(path, sizeof(path), "%s/%s", base, name);
	if (root_open(path, &fd) < 0)
		fprintf(stderr, "cannot open %s\n", path);
	return fd;
}

static void test_seed(const Expect *e)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_free_ char *n0 = NULL, *nl = NULL;
	_cleanup_close_ int fd = open_tree(e->spec);
	CpuIdentity id;

	check_ctx(e->spec, fd >= 0);
	check_ctx(e->spec, topology_load(fd, &t) == 0);
	if (!t)
		return;
	check_int(cpuset_count(&t->online), e->cpus);
	check_int(t->packages.n, e->packages);
	check_int(t->cores.n, e->cores);
	check_int(t->threads_per_core, e->threads);
	check_int(t->llcs.n, e->llcs);
	check_int(t->llc_level, 3);
	check_int(t->nodes.n, e->nodes);
	check_int(t->nodes_per_package, e->nodes_per_package);
	check(cpuset_format_list(&t->nodes.items[0].cpus, &n0) == 0);
	check(cpuset_format_list(&t->nodes.items[t->nodes.n - 1].cpus, &nl) == 0);
	check_str(n0, e->node0);
	check_str(nl, e->node_last);
	check_ctx(e->spec, t->distance != NULL);
	if (e->d03)
		check_int(topology_distance(t, 0, 3), e->d03);
	check_ctx(e->spec, strv_length(t->notes) == 0);
	if (strv_length(t->notes))
		fprintf(stderr, "  first note: %s\n", t->notes[0]);

	check_ctx(e->spec, cpuid_identify_sysroot(fd, &id) == 0);
	check_int(id.vendor, e->vendor);
	check_int(id.family, e->family);
	check_int(id.model, e->model);
	/* Hygon parts are named by number, never by libcpuid's codename. */
	check_ctx(e->spec, id.codename[0] == '\0');
}

/* SMT siblings pair cpu N with N + cores, as Linux numbers AMD and Intel servers. */
static void test_siblings(void)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_close_ int fd = open_tree("turin-9845-2s-nps10");
	_cleanup_free_ char *s = NULL;

	check(topology_load(fd, &t) == 0);
	if (!t)
		return;
	check(cpuset_format_list(&t->cores.items[t->cpus[5].core].cpus, &s) == 0);
	check_str(s, "5,325");
	check_int(t->cpus[325].core, t->cpus[5].core);
	check_int(t->cpus[639].node_id, 19);
	check_int(t->cpus[639].package_id, 1);
}

static void test_offline(void)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_close_ int fd = open_tree("vm-offline");
	_cleanup_free_ char *on = NULL, *off = NULL;

	check(topology_load(fd, &t) == 0);
	if (!t)
		return;
	check(cpuset_format_list(&t->online, &on) == 0);
	check(cpuset_format_list(&t->offline, &off) == 0);
	check_str(on, "0-2");
	check_str(off, "3");
	check_int(t->cores.n, 3);
	check(!t->cpus[3].online);
	check_int(t->cpus[3].core, -1);
}

static void test_sparse_packages(void)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_close_ int fd = open_tree("sparse-packages");

	check(topology_load(fd, &t) == 0);
	if (!t)
		return;
	check_int(t->packages.n, 2);
	check_int(t->packages.items[0].id, 36);
	check_int(t->packages.items[1].id, 8442);
	check_int(t->nodes_per_package, 1);
}

static bool note_contains(const Topology *t, const char *s)
{
	STRV_FOREACH(n, t->notes)
		if (strstr(*n, s))
			return true;
	return false;
}

static void put(int fd, const char *path, const char *value)
{
	check_ctx(path, write_string_at(fd, path, value) == 0);
}

/*
 * L2 groups from the shared sets alone, on the private "damaged" copy
 * (before test_damage(); 8 cores x 2 threads, cpu N and N+8 one core, one
 * L3 for all): cores 0-5 share their L2 in pairs and only cpu0 keeps its
 * index2/level, so a CPU whose L3 is known must tell its L2 by the set. On
 * cores 6 and 7 index2 is the L3 itself (no L2): its set is the L3's, so
 * the level decides and there is no L2 group. A cpulist longer than the
 * reader's buffer still parses.
 */
static void test_l2_from_sets(void)
{
	_cleanup_close_ int fd = open_tree("damaged");
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_free_ char *s = NULL, *n1 = NULL;
	char path[96], line[5], pad[6000];
	int dfd;

	if (fd < 0) {
		check(false);
		return;
	}
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	check(dfd >= 0);
	for (int cpu = 0; cpu < 16; cpu++) {
		int core = cpu % 8;

		snprintf(path, sizeof(path), "sys/devices/system/cpu/cpu%d/cache/index2/shared_cpu_list", cpu);
		if (core < 6) {
			char set[32];

			snprintf(set, sizeof(set), "%d-%d,%d-%d\n", core & ~1, core | 1, (core & ~1) + 8, (core | 1) + 8);
			put(dfd, path, set);
			snprintf(path, sizeof(path), "sys/devices/system/cpu/cpu%d/cache/index2/level", cpu);
			if (cpu > 0)
				check(unlinkat(dfd, path, 0) == 0);
		} else {
			put(dfd, path, "0-15\n");
			snprintf(path, sizeof(path), "sys/devices/system/cpu/cpu%d/cache/index2/level", cpu);
			put(dfd, path, "3\n");
			snprintf(path, sizeof(path), "sys/devices/system/cpu/cpu%d/cache/index3/level", cpu);
			check(unlinkat(dfd, path, 0) == 0);
		}
	}
	memset(pad, ' ', sizeof(pad));
	memcpy(pad, "4-7,12-15", 9);
	pad[sizeof(pad) - 2] = '\n';
	pad[sizeof(pad) - 1] = '\0';
	put(dfd, "sys/devices/system/node/node1/cpulist", pad);
	close(dfd);

	check(read_line_buf_at(fd, "sys/devices/system/cpu/online", line, sizeof(line)) == 4);
	check_str(line, "0-15");
	check(read_line_buf_at(fd, "sys/devices/system/cpu/online", line, sizeof(line) - 1) == -ENOBUFS);

	check(topology_load(fd, &t) == 0);
	if (!t)
		return;
	check_int(t->llcs.n, 1);
	check_int(t->l2s.n, 3);
	check_int(t->cpus[10].l2, t->cpus[3].l2);
	if (t->cpus[10].l2 >= 0) {
		check(cpuset_format_list(&t->l2s.items[t->cpus[10].l2].cpus, &s) == 0);
		check_str(s, "2-3,10-11");
	}
	check_int(t->cpus[6].l2, -1);
	check_int(t->cpus[15].l2, -1);
	check_int(t->cpus[15].llc, 0);
	check_int(t->llc_level, 3);
	check(cpuset_format_list(&t->nodes.items[1].cpus, &n1) == 0);
	check_str(n1, "4-7,12-15");
	check(strv_length(t->notes) == 0);
	if (strv_length(t->notes))
		fprintf(stderr, "  first note: %s\n", t->notes[0]);
}

/* Damage the tree below @name (a private copy) and check what is reported. */
static void test_damage(void)
{
	_cleanup_close_ int fd = open_tree("damaged");
	_cleanup_(topology_freep) Topology *t = NULL;
	int dfd;

	if (fd < 0) {
		check(false);
		return;
	}
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	check(dfd >= 0);
	/* Distances gone, thread_siblings_list gone (mask remains), a truncated package id. */
	check(unlinkat(dfd, "sys/devices/system/node/node1/distance", 0) == 0);
	check(unlinkat(dfd, "sys/devices/system/cpu/cpu2/topology/thread_siblings_list", 0) == 0);
	check(write_string_at(dfd, "sys/devices/system/cpu/cpu0/topology/physical_package_id", "") == 0);
	check(unlinkat(dfd, "sys/devices/system/cpu/online", 0) == 0);
	close(dfd);

	check(topology_load(fd, &t) == 0);
	if (!t)
		return;
	check(t->distance == NULL);
	check(note_contains(t, "/sys/devices/system/node/node1/distance: No such file or directory, distances unknown"));
	/* Fell back to the hex mask: cpu2's core is still two threads. */
	check_int(cpuset_count(&t->cores.items[t->cpus[2].core].cpus), 2);
	/* cpu0 reads the package id for all: its list claims the other CPUs. */
	check(note_contains(t, "/sys/devices/system/cpu/cpu0/topology/physical_package_id: missing, package unknown"));
	check_int(t->cpus[0].package_id, -1);
	check_int(t->cpus[4].package_id, -1);
	check_int(t->packages.n, 1);
	check_int(cpuset_count(&t->packages.items[0].cpus), 16);
	check(note_contains(t, "/sys/devices/system/cpu/online: No such file or directory, using cpuN/online"));
	check_int(cpuset_count(&t->online), 16);
}

static void test_empty_root(void)
{
	_cleanup_(topology_freep) Topology *t = NULL;
	_cleanup_close_ int fd = open_tree("empty");
	KernelCaps k;
	CpuIdentity id;

	check(topology_load(fd, &t) == -ENOENT);
	check(t == NULL);
	check(cpuid_identify_sysroot(fd, &id) == -ENODATA);
	/* The probe still answers: everything missing, each with a reason. */
	check(kernel_probe(fd, &k) == 0);
	check(!kernel_caps_has(&k, CONTROL_SMT_BUDDY_SYSCTL) && !kernel_caps_has(&k, CONTROL_RELAX_SYSCTL) &&
	      !k.cgroup_v2);
	check_int(strv_length(k.notes), 3);
	kernel_caps_done(&k);
}

static void test_kernel_probe(void)
{
	_cleanup_close_ int fd = open_tree("hygon-7447v-2s-nps3"), fs = open_tree("vm-2cpu"),
			    fl = open_tree("vm-lockdown");
	KernelCaps k;

	check(kernel_probe(fd, &k) == 0);
	check(kernel_caps_has(&k, CONTROL_SMT_BUDDY_SYSCTL) && kernel_caps_has(&k, CONTROL_SMT_BUDDY_DEBUGFS) &&
	      kernel_caps_has(&k, CONTROL_RELAX_SYSCTL));
	check_int(kernel_caps_current(&k, SETTING_SMT_BUDDY_ASSIST, -1), 0);
	check_int(kernel_caps_current(&k, SETTING_RELAX_DOMAIN_LEVEL, -1), -1);
	check(k.cgroup_v2_cpuset && k.cpuset_partitions && k.isolated_known);
	check(k.numa_averaging_hygon && k.numa_averaging_intel);
	check(!k.lockdown);
	kernel_caps_done(&k);

	check(kernel_probe(fs, &k) == 0);
	check(!kernel_caps_has(&k, CONTROL_SMT_BUDDY_SYSCTL) && !kernel_caps_has(&k, CONTROL_SMT_BUDDY_DEBUGFS) &&
	      !kernel_caps_has(&k, CONTROL_RELAX_SYSCTL) && !kernel_caps_has(&k, CONTROL_RELAX_CGROUP_V1));
	check(!k.numa_averaging_hygon);
	check_int(strv_length(k.notes), 2);
	kernel_caps_done(&k);

	check(kernel_probe(fl, &k) == 0);
	check(k.lockdown);
	check_str(k.lockdown_mode, "confidentiality");
	check_int(kernel_caps_value(&k, CONTROL_RELAX_CMDLINE, -1), 2);
	check_int(kernel_caps_current(&k, SETTING_RELAX_DOMAIN_LEVEL, -1), 2);
	kernel_caps_done(&k);
}

/* Every row of the control table: what it writes reads back as the same value, in the same words. */
static void test_control_table(void)
{
	size_t n_caps = 0, n_files = 0, n_own = 0;
	const char *name;
	KernelCaps k;
	bool v;

	CONTROL_FOREACH(i) {
		const KernelControl *c = kernel_control_get(i);

		check_ctx(c->key, c->key && kernel_control_id(c) == i);
		check_ctx(c->key, c->setting >= 0 && c->setting < _SETTING_MAX && c->name && c->path);
		/* A file or socket of its own (not a boot parameter, not the partition): a capability. */
		n_own += c->kind != CONTROL_CMDLINE && c->kind != CONTROL_PARTITION;
		if (c->kind != CONTROL_VALUE && c->kind != CONTROL_FEATURE)
			continue;
		n_files++;
		for (int value = c->boolean ? 0 : -1; value <= (c->boolean ? 1 : 3); value++) {
			_cleanup_free_ char *bytes = NULL, *text = NULL, *read = NULL;
			int back = 99;

			check_ctx(c->key, kernel_control_encode(c, value, &bytes) == 0);
			check_ctx(c->key, kernel_control_decode(c, bytes, &back) == 0 && back == value);
			check_ctx(c->key, kernel_control_format(c, value, &text) == 0);
			check_ctx(c->key, kernel_control_parse(c, text, &back) == 0 && back == value);
			check_ctx(c->key, kernel_control_read_text(c, bytes, &read) == 0);
			check_str(read, text);
		}
	}
	check(!kernel_control_get(_CONTROL_ID_INVALID) && !kernel_control_get(_CONTROL_ID_MAX));

	/* A feature file without the token: the control is absent, and says so. */
	{
		_cleanup_free_ char *read = NULL;
		int back;

		check(kernel_control_decode(kernel_control_get(CONTROL_SMT_BUDDY_DEBUGFS), "PLACE_LAG TTWU_QUEUE\n",
					    &back) == -ENOENT);
		check(kernel_control_read_text(kernel_control_get(CONTROL_SMT_BUDDY_DEBUGFS), "PLACE_LAG\n", &read) ==
		      0);
		check_str(read, "absent");
	}

	/* KernelCapabilities: each control with a file, the other facts, one per known fix, each name once. */
	kernel_caps_patched(&k);
	while ((name = kernel_caps_entry(&k, n_caps, &v))) {
		for (size_t j = 0; j < n_caps; j++) {
			bool w;

			check_ctx(name, !streq(kernel_caps_entry(&k, j, &w), name));
		}
		n_caps++;
	}
	check_int(n_caps, n_own + 9 + _KERNEL_FIX_MAX);
	check(n_own == n_files + 3);
	check(kernel_caps_entry(&k, 0, &v) && v);
	/* housekeeping's controls: the assumed kernel has /proc/irq and the workqueue mask, no irqbalance runs */
	for (size_t i = 0; i < n_own; i++) {
		const char *e = kernel_caps_entry(&k, i, &v);

		if (streq(e, "irq_affinity") || streq(e, "workqueue_cpumask"))
			check_ctx(e, v);
		if (streq(e, "irqbalance_socket"))
			check_ctx(e, !v);
	}
	/* the patched 7.3.4 carries 82d6e01a0699; sched_ext is not running */
	check(kernel_caps_entry(&k, n_own + 8, &v) && streq(kernel_caps_entry(&k, n_own + 8, &v), "sched_ext") && !v);
	check(streq(kernel_caps_entry(&k, n_own + 9, &v), "fix_82d6e01a0699") && v);
	/* The memory-tiering modes of numa_balancing need 5.18. */
	check_int(kernel_control_max(kernel_control_get(CONTROL_NUMA_BALANCING_SYSCTL), "5.15.0-91-generic"), 1);
	check_int(kernel_control_max(kernel_control_get(CONTROL_NUMA_BALANCING_SYSCTL), "6.1.0-13-amd64"), 3);
	kernel_caps_done(&k);
}

/* Absent facts stay absent: the modalias has no stepping, cpuinfo has one. */
static void test_identity_absent_facts(void)
{
	_cleanup_free_ char *d = NULL, *e = NULL;
	CpuIdentity id;

	check(cpuid_parse_modalias("cpu:type:x86,ven0002fam001Amod0011:feature:,0000", &id) == 0);
	check(id.have_family && !id.have_stepping);
	check(cpu_identity_describe(&id, &d) == 0);
	check_str(d, "amd family 0x1a model 0x11");
	check(cpuid_parse_cpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 17\n"
				  "stepping\t: 0\nmodel name\t: AMD EPYC 9965 192-Core Processor\n", &id) == 0);
	check(id.have_stepping);
	check(cpu_identity_describe(&id, &e) == 0);
	check_str(e, "amd family 0x1a model 0x11 stepping 0 (AMD EPYC 9965 192-Core Processor)");
}

/* Which libcpuid release may name which part: never a name from a table older than the CPU. */
static void test_codename_table(void)
{
	static const struct {
		const char *version;
		CpuVendor vendor;
		unsigned family, model;
		bool known;
	} cases[] = {
		{ "0.6.2", CPU_VENDOR_AMD, 0x1a, 0x11, false },    /* EPYC 9965 (Zen 5): 0.6.2 says "EPYC (Naples)" */
		{ "0.6.2", CPU_VENDOR_AMD, 0x1a, 0x02, false },    /* EPYC 9655: "Abu Dhabi" */
		{ "0.6.2", CPU_VENDOR_AMD, 0x19, 0x11, false },    /* EPYC 9654 (Genoa): "EPYC (Milan)" */
		{ "0.6.2", CPU_VENDOR_AMD, 0x19, 0x01, true },     /* Milan */
		{ "0.6.2", CPU_VENDOR_AMD, 0x17, 0x31, true },     /* Rome */
		{ "0.6.2", CPU_VENDOR_INTEL, 6, 0x8f, false },     /* Sapphire Rapids: "Xeon (Conroe/2M)" */
		{ "0.6.2", CPU_VENDOR_INTEL, 6, 0xad, false },     /* Granite Rapids */
		{ "0.6.2", CPU_VENDOR_INTEL, 6, 0x55, true },      /* Skylake-SP */
		{ "0.6.2", CPU_VENDOR_INTEL, 6, 0x9a, true },      /* Alder Lake */
		{ "0.5.1", CPU_VENDOR_INTEL, 6, 0x9a, false },     /* Alder Lake came with 0.6.0 */
		{ "0.6.2", CPU_VENDOR_HYGON, 0x18, 0, false },     /* Hygon: never libcpuid's codename */
		{ "0.7.1", CPU_VENDOR_AMD, 0x1a, 0x11, false },    /* newer than the table: held to its rows */
		{ "0.7.1", CPU_VENDOR_AMD, 0x19, 0x01, true },
		{ "", CPU_VENDOR_AMD, 0x19, 0x01, false },
		{ "x.y", CPU_VENDOR_AMD, 0x19, 0x01, false },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		check_ctx(cases[i].version, cpuid_codename_known(cases[i].version, cases[i].vendor, cases[i].family,
								 cases[i].model) == cases[i].known);
	check(!cpuid_codename_known(NULL, CPU_VENDOR_AMD, 0x19, 0x01));
}

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR-OF-GENERATED-TREES\n", argv[0]);
		return 2;
	}
	base = argv[1];
	for (size_t i = 0; i < ELEMENTSOF(seeds); i++)
		test_seed(&seeds[i]);
	test_siblings();
	test_offline();
	test_sparse_packages();
	test_l2_from_sets();
	test_damage();
	test_empty_root();
	test_kernel_probe();
	test_control_table();
	test_identity_absent_facts();
	test_codename_table();
	return test_end("test-topology");
}
