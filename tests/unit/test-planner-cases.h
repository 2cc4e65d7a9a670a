/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The planner cases; the expected plan of each is tests/unit/planner/NAME.txt. Included by test-planner.c. */
static const Case cases[] = {
	{ "hygon-nps3-stock", &hygon_nps3, &hygon_7447v, K_STOCK, SMT_BUDDY_ON, RELAX_AUTO, 0, ISOLATION_NONE, NULL, 0 },
	{ "hygon-nps3-patched", &hygon_nps3, &hygon_7447v, K_PATCHED, SMT_BUDDY_ON, RELAX_AUTO, 0, ISOLATION_NONE, NULL, 0 },
	{ "hygon-nps1-patched", &hygon_nps1, &hygon_7447v, K_PATCHED, SMT_BUDDY_ON, RELAX_AUTO, 0, ISOLATION_NONE, NULL, 0 },
	/*
	 * SMT_BUDDY_ASSIST on and no relax level: newidle balancing reaches
	 * every level (the series' v4 stopped it above the LLC; v5 leaves the
	 * scope to relax_domain_level).
	 */
	{ "hygon-nps3-smt-newidle-unrestricted", &hygon_nps3, &hygon_7447v, K_PATCHED, SMT_BUDDY_ON, RELAX_KEEP, 0, ISOLATION_NONE, NULL, 0 },
	{ "turin-nps10-patched", &turin_nps10, &amd_turin, K_PATCHED, SMT_BUDDY_ON, RELAX_LEVEL, 3, ISOLATION_NONE, NULL, 0 },
	{ "siena-isolate-per-llc", &siena_nps2llc, &amd_siena, K_PATCHED, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_PER_LLC, NULL, 1 },
	{ "gnr-snc3-stock", &gnr_snc3, &intel_gnr, K_STOCK, SMT_BUDDY_OFF, RELAX_AUTO, 0, ISOLATION_NONE, NULL, 0 },
	{ "vm-2cpu-stock", &vm_2cpu, &intel_vm, K_STOCK, SMT_BUDDY_ON, RELAX_AUTO, 0, ISOLATION_NONE, NULL, 0 },
	{ "vm-lockdown-debugfs-only", &vm_offline, &intel_vm, K_LOCKDOWN_DEBUGFS, SMT_BUDDY_ON, RELAX_LEVEL, 1, ISOLATION_LIST, "2,6", 0 },
	/* No isolation wanted where there are no partitions: in sync, not unsupported (issue 14). */
	{ "vm-cgroup-v1-no-isolation", &vm_offline, &intel_vm, K_CGROUP_V1, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_NONE, NULL, 0 },
	{ "vm-cgroup-v1", &vm_offline, &intel_vm, K_CGROUP_V1, SMT_BUDDY_OFF, RELAX_LEVEL, 1, ISOLATION_LIST, "2,6", 0 },
	/* No node distance files: the layout says its distances are the kernel's default, not facts. */
	{ "no-slit-assumed-distances", &no_slit, &amd_turin, K_PATCHED, SMT_BUDDY_KEEP, RELAX_AUTO, 0, ISOLATION_NONE, NULL, 0 },
	{ "refuse-split-smt", &vm_offline, &intel_vm, K_PATCHED, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_LIST, "2", 0 },
	{ "refuse-offline", &vm_offline, &intel_vm, K_PATCHED, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_LIST, "3,7", 0 },
	{ "refuse-no-housekeeping", &vm_offline, &intel_vm, K_PATCHED, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_LIST, "0-2,4-7", 0 },
	/* Asymmetric capacities: the flags where asym_cpu_capacity_classify() puts them. */
	{ "arm-biglittle-asym", &arm_biglittle, &arm_cortex, K_STOCK, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_NONE, NULL, 0 },
	{ "arm-three-capacities", &arm_three_caps, &arm_cortex, K_STOCK, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_NONE, NULL, 0 },
	{ "intel-hybrid-no-capacities", &intel_hybrid, &intel_rpl, K_STOCK, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_NONE, NULL, 0 },
	/* auto: isolation takes the lowest-capacity kind of each group and says which. */
	{ "arm-biglittle-auto-per-llc", &arm_biglittle, &arm_cortex, K_STOCK, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_PER_LLC, NULL, 2 },
	{ "intel-hybrid-auto-per-node", &intel_hybrid, &intel_rpl, K_STOCK, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_PER_NODE, NULL, 3 },
	{ "arm-three-capacities-auto-per-llc", &arm_three_caps, &arm_cortex, K_STOCK, SMT_BUDDY_KEEP, RELAX_KEEP, 0, ISOLATION_PER_LLC, NULL, 1 },
};
