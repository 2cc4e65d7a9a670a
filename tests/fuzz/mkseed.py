#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Turn a sysroot (generated or a real dump) into a fuzz-topology or
fuzz-kernel input.

    mkseed.py topology [--opt N] SYSROOT OUTFILE
    mkseed.py kernel SYSROOT OUTFILE

Only the files the target knows (fuzz-topology.h: CPUs 0-7, nodes 0-3, 2-byte path index;
fuzz-kernel.c: KERNEL_PATHS) are taken, each as one record; longer contents
are cut to 255 bytes. topology inputs start with the options byte --opt.
"""
import argparse
import os
import sys

GLOBAL = ["sys/devices/system/cpu/present", "sys/devices/system/cpu/possible",
          "sys/devices/system/cpu/online", "sys/devices/system/node/online",
          "sys/devices/system/node/possible"]
PER_CPU = ["online", "topology/physical_package_id", "topology/die_id",
           "topology/cluster_id", "topology/core_id", "topology/thread_siblings_list",
           "topology/thread_siblings", "topology/core_cpus_list", "topology/core_cpus",
           "topology/package_cpus_list", "topology/package_cpus",
           "topology/core_siblings_list", "topology/core_siblings"]
PER_CACHE = ["level", "type", "shared_cpu_list", "shared_cpu_map", "id"]
PER_NODE = ["cpulist", "cpumap", "distance"]
PER_CPU_LATE = ["topology/die_cpus_list", "topology/die_cpus"]   # after the nodes
CPUS, NODES, CACHES = 8, 4, 4
# Keep in the order of fuzz-kernel.c's table.
KERNEL_PATHS = ["proc/sys/kernel/osrelease", "sys/kernel/security/lockdown",
                "proc/sys/kernel/sched_smt_buddy_assist", "sys/kernel/debug/sched/features",
                "proc/sys/kernel/sched_relax_domain_level",
                "sys/fs/cgroup/cpuset/cpuset.sched_relax_domain_level", "proc/cmdline",
                "sys/fs/cgroup/cgroup.controllers", "sys/fs/cgroup/cpuset.cpus.isolated",
                "proc/schedstat", "proc/cpuinfo", "sys/devices/system/cpu/modalias"]


def paths():
    out = list(GLOBAL)
    for cpu in range(CPUS):
        out += [f"sys/devices/system/cpu/cpu{cpu}/{f}" for f in PER_CPU]
        for idx in range(CACHES):
            out += [f"sys/devices/system/cpu/cpu{cpu}/cache/index{idx}/{f}" for f in PER_CACHE]
    for node in range(NODES):
        out += [f"sys/devices/system/node/node{node}/{f}" for f in PER_NODE]
    for cpu in range(CPUS):
        out += [f"sys/devices/system/cpu/cpu{cpu}/{f}" for f in PER_CPU_LATE]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("target", choices=["topology", "kernel"])
    ap.add_argument("--opt", type=lambda s: int(s, 0), default=0x03)
    ap.add_argument("root")
    ap.add_argument("out")
    a = ap.parse_args()
    data = bytearray([a.opt & 0xff] if a.target == "topology" else [])
    n = 0
    for i, p in enumerate(paths() if a.target == "topology" else KERNEL_PATHS):
        f = os.path.join(a.root, p)
        if not os.path.isfile(f):
            continue
        with open(f, "rb") as fh:
            content = fh.read()[:255]
        if a.target == "topology":
            data += bytes([i & 0xff, i >> 8, len(content)]) + content
        else:
            data += bytes([i, len(content)]) + content
        n += 1
    if n == 0:
        sys.exit(f"{a.root}: no topology files found")
    with open(a.out, "wb") as fh:
        fh.write(data)
    print(f"{a.out}: {n} files, {len(data)} bytes")


if __name__ == "__main__":
    main()
