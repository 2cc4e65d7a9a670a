#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Turn a sysroot (generated or a real dump) into a fuzz-topology or
fuzz-kernel input, or a qemu guest's capture into a fuzz-schedstat input.

    mkseed.py topology [--opt N] SYSROOT OUTFILE
    mkseed.py kernel SYSROOT OUTFILE
    mkseed.py schedstat [--version N] [--debugfs] GUEST.raw OUTFILE
    mkseed.py bus - OUTDIR

Only the files the target knows (fuzz-topology.h: CPUs 0-7, nodes 0-3, 2-byte path index;
fuzz-kernel.c: KERNEL_PATHS) are taken, each as one record; longer contents
are cut to 255 bytes. topology inputs start with the options byte --opt.

schedstat rebuilds /proc/schedstat from the "TT SCHEDSTAT" lines of a
tests/vm/expected/*.raw capture in the layout of kernel schedstat --version
(15, 16: "domainN MASK", 17, 18: "domainN NAME MASK"; the statistics are
made-up counters of the right number), cut after the last CPU that fits in
4 KiB; --debugfs appends a NUL and the "TT DOMAIN" lines of CPUs 0-3 as
fuzz-schedstat's debugfs records (name, flags, level).

bus writes the fuzz-bus scenarios below (BUS_SEEDS) to OUTDIR, one file
each: option bytes, then steps in fuzz-bus.c's encoding.
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
PER_CPU_KIND = ["cpu_capacity", "regs/identification/midr_el1"]   # after those
KIND_GLOBAL = ["sys/devices/cpu_core/cpus", "sys/devices/cpu_atom/cpus", "proc/cpuinfo"]
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
    for cpu in range(CPUS):
        out += [f"sys/devices/system/cpu/cpu{cpu}/{f}" for f in PER_CPU_KIND]
    out += KIND_GLOBAL
    return out


# Statistics per line as the kernel prints them: cpuN has 9 fields in every
# version; domainN has 3 x 8 load-balance counters + 12 (v15, v16), 3 x 11 + 12 (v17, v18).
DEBUGFS_FILES = ["name", "flags", "level"]


def schedstat_seed(raw, version, debugfs):
    doms, debug = {}, {}
    with open(raw) as fh:
        for line in fh:
            w = line.split()
            if w[:2] == ["TT", "SCHEDSTAT"] and len(w) == 6:
                doms.setdefault(int(w[2][3:]), []).append((int(w[3][6:]), w[4], w[5]))
            elif w[:2] == ["TT", "DOMAIN"]:
                kv = dict(x.split("=", 1) for x in w[4:])
                debug[(int(w[2][3:]), int(w[3][6:]))] = kv
    if not doms:
        sys.exit(f"{raw}: no TT SCHEDSTAT lines")
    nstat = 3 * 8 + 12 if version < 17 else 3 * 11 + 12
    text = f"version {version}\ntimestamp 4295048735\n"
    for cpu in sorted(doms):
        block = f"cpu{cpu} 0 0 {cpu * 7} {cpu * 3} {cpu} 0 1405830522 123456 {1049 + cpu}\n"
        for idx, name, mask in sorted(doms[cpu]):
            stats = " ".join(str((cpu * 31 + idx * 7 + i) % 5) for i in range(nstat))
            head = f"domain{idx} {name} {mask}" if version >= 17 else f"domain{idx} {mask}"
            block += f"{head} {stats}\n"
        if len(text) + len(block) > 4096 - (1024 if debugfs else 0):
            break
        text += block
    data = text.encode()
    if debugfs:
        data += b"\0"
        for (cpu, idx), kv in sorted(debug.items()):
            if cpu > 3 or idx > 3:
                continue
            for f, key in enumerate(DEBUGFS_FILES):
                v = kv.get(key)
                if v is None:
                    continue
                v = (v.replace(",", " ") + (" \n" if key == "flags" else "\n")).encode()[:255]
                data += bytes([cpu, idx, f, len(v)]) + v
    return data


# fuzz-bus.c's encoding: op codes, and indexes into its names[], properties[],
# world_paths[] and world_values[] tables.
NAMES = ["balanced", "database", "hpc", "latency", "throughput", "broken", "local", "fuzz", "nope", "",
         "../x", "..", ".hidden", "a/b", "latency.ini", "LATENCY", "b\u00e4lanced", "emoji", "-", "base",
         " latency", "latency\n", "hpc\t", "%s%n", "*", "/etc/passwd", "long", "verylong"]
PROPS = ["Version", "State", "StateReasons", "ActiveProfile", "ActiveProfileReason", "WorkloadRules",
         "CpuVendor", "CpuFamily", "CpuModel", "CpuName", "Topology", "Settings", "KernelCapabilities",
         "IsolatedCpus", "HousekeepingCpus", "RebootRequired", "PendingKernelCmdline", "DomainLayout",
         "Nope", ""]
WORLD = ["smt", "relax", "features", "isolated", "partition", "slice-cpus", "fuzz.ini", "60-fuzz.conf",
         "vendor-latency", "state", "schedstat", "grub"]
PIPE = 0x80


def s_(name):
    """A string argument: a dictionary name, or raw bytes."""
    if isinstance(name, bytes):
        return [0x80 | len(name)] + list(name)
    return [NAMES.index(name)]


def set_profile(name, interactive=0, pipe=0):
    return [1 | pipe] + s_(name) + [interactive]


def plan(name):
    return [5] + s_(name)


def schedstat_in(text):
    """Byte 1 bit 5: a /proc/schedstat from the input, 2-byte length first."""
    return [len(text) & 0xff, len(text) >> 8] + list(text)


def cpu_domains(cpu):
    return [7, 1, cpu] if cpu < 256 else [7, 0] + list(cpu.to_bytes(4, "little"))


def world(path, how, value=None):
    out = [14, WORLD.index(path), how]
    if how == 2:
        out.append(value)
    elif how == 3:
        out += s_(value)
    return out


LIST, APPLY, REVERT, RELOAD, VERIFY, GETALL, INTROSPECT = [0], [2, 0], [3, 0], [4], [6], [9, 1], [11]
READS = LIST + VERIFY + GETALL + INTROSPECT + [0x08, 1, 0x08, 11, 0x08, 17]
HYGON, PATCHED, V1, SYSTEMD, LOCKDOWN, RECORD, ADMIN, OFFLINE = 1, 2, 4, 8, 0x10, 0x20, 0x40, 0x80
CONF_HPC, CONF_LATENCY, CONF_BROKEN, BOOTLOADER, NOT_ON_EXIT, SCHEDSTAT, SCHEDSTAT_IN, EISDIR, SLICE = \
    1, 2, 3, 4, 8, 0x10, 0x20, 0x40, 0x80
SHIPPED = ["balanced", "database", "hpc", "latency", "throughput"]

BUS_SEEDS = {
    "every-method": [HYGON | PATCHED, 0] + READS + sum((set_profile(p) + VERIFY for p in SHIPPED), []) +
    sum((plan(p) for p in SHIPPED + [""]), []) + sum((cpu_domains(c) for c in (0, 5, 11, 12, 2**32 - 1)), []) +
    sum(([8, i] for i in range(len(PROPS))), []) + APPLY + RELOAD + REVERT + VERIFY + APPLY,
    "intel-stock": [PATCHED * 0, 0] + READS + set_profile("throughput") + set_profile("latency") +
    set_profile("hpc") + plan("hpc") + APPLY + REVERT,
    "stock-bootloader": [HYGON, BOOTLOADER] + set_profile("latency") + [8, 15, 8, 16] + REVERT + set_profile("latency"),
    "cgroup-v1": [HYGON | PATCHED | V1, 0] + set_profile("latency") + set_profile("hpc") + VERIFY + REVERT,
    "systemd-isolation": [HYGON | PATCHED | SYSTEMD, 0] + set_profile("hpc") + VERIFY + [8, 13, 8, 14] +
    [15, 1] + set_profile("latency") + set_profile("hpc") + [15, 0] + set_profile("latency") + set_profile("hpc") + REVERT,
    "systemd-refuses-at-stop": [HYGON | PATCHED | SYSTEMD, CONF_HPC] + READS + [15, 1],
    "cgroupfs-isolation": [HYGON | PATCHED, CONF_HPC | SLICE] + VERIFY + set_profile("balanced") +
    set_profile("hpc") + world("partition", 2, 7) + VERIFY + APPLY + REVERT,
    "cgroupfs-mkdir": [HYGON | PATCHED | ADMIN, 0] + set_profile("local") + READS + set_profile("latency") + REVERT,
    "partition-eisdir": [HYGON | PATCHED, EISDIR] + set_profile("hpc") + READS + set_profile("latency"),
    "lockdown": [HYGON | PATCHED | LOCKDOWN, 0] + set_profile("throughput") + READS,
    "crash-record": [HYGON | PATCHED | RECORD, 0] + [8, 2] + REVERT + APPLY,
    "admin-profiles": [HYGON | PATCHED | ADMIN, SLICE] + set_profile("local") + VERIFY + set_profile("broken") +
    plan("broken") + plan("local") + set_profile("latency") + LIST,
    "offline-cpu": [HYGON | PATCHED | OFFLINE, SCHEDSTAT] + cpu_domains(11) + cpu_domains(10) + [8, 17] +
    set_profile("hpc") + VERIFY,
    "configured-broken": [HYGON | PATCHED, CONF_BROKEN] + [8, 1, 8, 2] + VERIFY + APPLY + RELOAD +
    set_profile("latency") + RELOAD,
    "not-on-exit": [PATCHED, CONF_LATENCY | NOT_ON_EXIT] + VERIFY,
    "schedstat-live": [HYGON | PATCHED, SCHEDSTAT] + cpu_domains(0) + cpu_domains(7) + [8, 17, 8, 2] +
    set_profile("hpc") + [8, 17],
    "schedstat-input": [HYGON | PATCHED, SCHEDSTAT_IN] +
    schedstat_in(b"version 18\ncpu3 0\ndomain0 SMT 0\ndomain1 X ffffffff,ffffffff\n") +
    cpu_domains(3) + [8, 17, 8, 2],
    "world-drift": [HYGON | PATCHED, 0] + set_profile("latency") + world("relax", 2, 1) + VERIFY + [8, 11] +
    APPLY + world("smt", 0) + VERIFY + APPLY + REVERT,
    "world-eisdir": [HYGON | PATCHED, 0] + world("relax", 1) + set_profile("latency") + VERIFY + APPLY + REVERT,
    "world-profiles": [HYGON | PATCHED, 0] + world("fuzz.ini", 2, 14) + set_profile("fuzz") + VERIFY +
    world("fuzz.ini", 2, 12) + set_profile("fuzz") + plan("fuzz") + world("vendor-latency", 0) +
    set_profile("latency") + world("60-fuzz.conf", 2, 16) + world("fuzz.ini", 2, 15) + RELOAD + VERIFY +
    world("60-fuzz.conf", 3, b"[daemon]\nprofile = ../x\n") + RELOAD,
    "world-state": [HYGON | PATCHED, 0] + set_profile("latency") + world("state", 2, 20) + REVERT +
    world("state", 0) + REVERT + APPLY,
    "world-partition": [HYGON | PATCHED, 0] + set_profile("hpc") + world("partition", 2, 7) + VERIFY + APPLY +
    world("slice-cpus", 1) + REVERT,
    "odd-names": [HYGON | PATCHED, 0] + sum((set_profile(n) + plan(n) for n in NAMES), []) +
    set_profile(b"b\xc3\xa4") + set_profile(b"x\xff") + plan(b"latency\x00x") + set_profile(b"latency"),
    "wrong-calls": [HYGON | PATCHED, 0] + sum(([12, m, g] for m in range(8) for g in (0, 1, 4, 8)), []) +
    sum(([13, a, b, c] for a in range(4) for b in range(3) for c in range(4)), []) +
    sum(([10, i] for i in (1, 3, 11, 18)), []) + [9, 0],
    # Found by fuzzing: a valid-looking name too long for a file name got ENAMETOOLONG, not NoSuchProfile.
    "regress-enametoolong": [HYGON | PATCHED, 0] + plan("long") + set_profile("long") + plan("verylong"),
    # Found by fuzzing: a failed apply over a held setting left that record's reason changed.
    "regress-rollback-why": [HYGON | PATCHED | ADMIN, 0] + set_profile("local") + REVERT,
    # Found by fuzzing: no root cpuset.cpus.isolated (kernels before 6.7) made Verify report drift.
    "regress-no-isolated-file": [HYGON | PATCHED, 0] + world("isolated", 0) + APPLY + VERIFY +
    set_profile("latency"),
    # Found by fuzzing: a record path taken by a directory left run/topotune/state.tmp behind.
    "regress-record-unwritable": [HYGON | PATCHED, 0] + world("state", 1) + set_profile("latency") + APPLY +
    world("state", 0) + set_profile("latency"),
    # Found by fuzzing: a failed apply left the originals it had restored first.
    "regress-restore-rollback": [HYGON | PATCHED, 0] + set_profile("hpc") + world("state", 1) +
    set_profile("balanced") + world("state", 0) + set_profile("balanced"),
    # Found by fuzzing: an error quoting bytes that are not UTF-8 (a drop-in's line) was no reply at all.
    "regress-invalid-utf8": [HYGON | PATCHED, SCHEDSTAT_IN] +
    schedstat_in(b"version 17\ncpu0 0\ndomain0 SM\x97T 041\ndomain1 NUMA fff\n") +
    world("60-fuzz.conf", 3, b"\x97\x97") + RELOAD + world("60-fuzz.conf", 0) +
    world("fuzz.ini", 3, b"[profile]\ndescription = caf\xe9\n") + LIST + world("relax", 3, b"\xff\n") +
    VERIFY + plan("latency") + GETALL + cpu_domains(0) + [8, 17] + set_profile("latency") + VERIFY,
    # Found by fuzzing: the undo of a restore put back our value over another writer's.
    "regress-restore-other-writer": [HYGON | PATCHED, 0] + set_profile("hpc") + world("relax", 2, 0) +
    world("state", 1) + set_profile("balanced"),
    "pipelined": [HYGON | PATCHED | SYSTEMD, 0] + set_profile("latency", pipe=PIPE) +
    set_profile("hpc", pipe=PIPE) + [APPLY[0] | PIPE, 0, REVERT[0] | PIPE, 0, RELOAD[0] | PIPE] +
    set_profile("nope", pipe=PIPE) + [PIPE | 6, PIPE | 0] + VERIFY + set_profile("hpc") + REVERT,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("target", choices=["topology", "kernel", "schedstat", "bus"])
    ap.add_argument("--opt", type=lambda s: int(s, 0), default=0x03)
    ap.add_argument("--version", type=int, default=17)
    ap.add_argument("--debugfs", action="store_true")
    ap.add_argument("root")
    ap.add_argument("out")
    a = ap.parse_args()
    if a.target == "bus":
        os.makedirs(a.out, exist_ok=True)
        for name, data in BUS_SEEDS.items():
            with open(os.path.join(a.out, "seed-" + name), "wb") as fh:
                fh.write(bytes(data))
        print(f"{a.out}: {len(BUS_SEEDS)} seeds")
        return
        data = schedstat_seed(a.root, a.version, a.debugfs)
        with open(a.out, "wb") as fh:
            fh.write(data)
        print(f"{a.out}: {len(data)} bytes")
        return
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
