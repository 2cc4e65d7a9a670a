#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Generate every shipped spec and check the facts the rest of topotune's
tests rely on (counts, exact node lists, siblings, SLITs, formats, bad input).
Prints "N passed, M failed"; exit status 1 if anything failed.
The expected values below are written out by hand from the brief and the
kernel's formats, not computed with the generator's own helpers."""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "gen-sysroot.py")
_s = importlib.util.spec_from_file_location("gen_sysroot", GEN)
gen = importlib.util.module_from_spec(_s)
_s.loader.exec_module(gen)

passed = failed = 0


def check(what, got, want):
    global passed, failed
    if got == want:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}:\n  got:  {got!r}\n  want: {want!r}")


def rd(root, rel):
    try:
        with open(os.path.join(root, rel)) as f:
            return f.read()
    except OSError as e:
        return f"<{e.strerror}>"


def node_list(root, n):
    return rd(root, f"sys/devices/system/node/node{n}/cpulist").strip()


def matrix(root, nodes):
    return [rd(root, f"sys/devices/system/node/node{n}/distance").split()
            for n in nodes]


def make(tmp, name, *args):
    out = os.path.join(tmp, name + "".join(a.replace("/", "_")
                                           for a in args))
    spec = gen.load_spec(gen.resolve_spec_path(name),
                         [a[6:] for a in args if a.startswith("--set=")])
    off = [a[10:] for a in args if a.startswith("--offline=")]
    gen.generate(spec, out, gen.parse_cpulist(",".join(off)))
    return out


def run_cli(*args):
    p = subprocess.run([sys.executable, GEN, *args], capture_output=True,
                       text=True)
    return p.returncode, p.stderr


# name: cpus, packages, nodes, node0, last node, (cpu, its sibling list),
#       L3 groups, first distance row
EXPECT = {
    "hygon-7447v-2s-nps3": (384, 2, 6, "0-31,192-223", "160-191,352-383",
                            (5, "5,197"), 24, "10 15 17 21 28 26"),
    "hygon-7447v-2s-nps6": (384, 2, 12, "0-15,192-207", "176-191,368-383",
                            (200, "8,200"), 24,
                            "10 12 15 15 17 17 21 21 28 28 26 26"),
    "hygon-7447v-2s-nps1": (384, 2, 2, "0-95,192-287", "96-191,288-383",
                            (383, "191,383"), 24, "10 24"),
    "turin-9845-2s-nps10": (640, 2, 20, "0-15,320-335", "304-319,624-639",
                            (1, "1,321"), 20,
                            "10" + " 12" * 9 + " 32" * 10),
    "siena-8534-nps2-llc": (128, 1, 8, "0-7,64-71", "56-63,120-127",
                            (64, "0,64"), 8, "10 11 11 11 12 12 12 12"),
    "gnr-2s-snc3": (384, 2, 6, "0-31,192-223", "160-191,352-383",
                    (100, "100,292"), 2, "10 15 17 21 28 26"),
    "vm-2cpu": (2, 1, 1, "0-1", "0-1", (1, "1"), 1, "10"),
}

SNC3 = [r.split() for r in ("10 15 17 21 28 26", "15 10 15 23 26 23",
                            "17 15 10 26 23 21", "21 28 26 10 15 17",
                            "23 26 23 15 10 15", "26 23 21 17 15 10")]


def check_spec(tmp, name):
    (ncpu, npkg, nnodes, n0, nlast, (cpu, sib), nl3, row0) = EXPECT[name]
    t0 = time.monotonic()
    root = make(tmp, name)
    dt = time.monotonic() - t0
    cpu_d = "sys/devices/system/cpu"
    check(f"{name} present", rd(root, f"{cpu_d}/present"), f"0-{ncpu - 1}\n")
    check(f"{name} online", rd(root, f"{cpu_d}/online"), f"0-{ncpu - 1}\n")
    check(f"{name} offline", rd(root, f"{cpu_d}/offline"), "\n")
    nodes = sorted(int(d[4:]) for d in os.listdir(
        os.path.join(root, "sys/devices/system/node")) if d[4:].isdigit())
    check(f"{name} nodes", nodes, list(range(nnodes)))
    check(f"{name} node0", node_list(root, 0), n0)
    check(f"{name} last node", node_list(root, nnodes - 1), nlast)
    check(f"{name} siblings of cpu{cpu}",
          rd(root, f"{cpu_d}/cpu{cpu}/topology/thread_siblings_list"),
          sib + "\n")
    pk = {rd(root, f"{cpu_d}/cpu{c}/topology/physical_package_id")
          for c in range(ncpu)}
    check(f"{name} packages", len(pk), npkg)
    l3 = {rd(root, f"{cpu_d}/cpu{c}/cache/index3/shared_cpu_list")
          for c in range(ncpu)}
    check(f"{name} L3 groups", len(l3), nl3)
    m = matrix(root, nodes)
    check(f"{name} distance matrix size", (len(m), {len(r) for r in m}),
          (nnodes, {nnodes}))
    check(f"{name} distance row 0", " ".join(m[0]), row0)
    check(f"{name} cpu0 has no online file (x86)",
          os.path.exists(os.path.join(root, f"{cpu_d}/cpu0/online")), False)
    check(f"{name} cpu1 online", rd(root, f"{cpu_d}/cpu1/online"), "1\n")
    info = rd(root, "proc/cpuinfo")
    check(f"{name} cpuinfo processors", info.count("processor\t: "), ncpu)
    check(f"{name} cpuinfo blocks", info.count("\n\n"), ncpu)
    check(f"{name} cpuset.cpus.effective",
          rd(root, "sys/fs/cgroup/cpuset.cpus.effective"), f"0-{ncpu - 1}\n")
    return dt


def check_details(tmp):
    # Hygon NPS3 and GNR carry the kernel comment's SNC-3 SLIT verbatim,
    # asymmetric off-package.
    for name in ("hygon-7447v-2s-nps3", "gnr-2s-snc3"):
        root = os.path.join(tmp, name)
        check(f"{name} SNC-3 SLIT", matrix(root, range(6)), SNC3)
    root = os.path.join(tmp, "hygon-7447v-2s-nps3")
    check("hygon cpuinfo identity", rd(root, "proc/cpuinfo").split(
        "\n")[1:6], ["vendor_id\t: HygonGenuine", "cpu family\t: 24",
                     "model\t\t: 7",
                     "model name\t: Hygon C86 7447v 96-core Processor",
                     "stepping\t: 1"])
    # %*pb: 384 bits = 12 full 32-bit groups
    check("hygon node0 cpumap", rd(root, "sys/devices/system/node/node0/"
                                   "cpumap"),
          "00000000,00000000,00000000,00000000,00000000,ffffffff,"
          "00000000,00000000,00000000,00000000,00000000,ffffffff\n")
    check("hygon sysctl buddy", rd(root, "proc/sys/kernel/"
                                   "sched_smt_buddy_assist"), "0\n")
    check("hygon sysctl relax", rd(root, "proc/sys/kernel/"
                                   "sched_relax_domain_level"), "-1\n")
    feats = rd(root, "sys/kernel/debug/sched/features")
    check("hygon features has NO_SMT_BUDDY_ASSIST",
          "NO_SMT_BUDDY_ASSIST " in feats, True)
    check("features line ends with ' \\n'", feats.endswith(" \n"), True)
    check("lockdown", rd(root, "sys/kernel/security/lockdown"),
          "[none] integrity confidentiality\n")
    check("cgroup.controllers", rd(root, "sys/fs/cgroup/cgroup.controllers"),
          "cpuset cpu io memory hugetlb pids rdma misc\n")
    check("osrelease", rd(root, "proc/sys/kernel/osrelease"), "7.3.4\n")
    check("no schedstat", os.path.exists(os.path.join(root,
                                                      "proc/schedstat")),
          False)
    check("L3 of cpu200", rd(root, "sys/devices/system/cpu/cpu200/cache/"
                             "index3/shared_cpu_list"), "8-15,200-207\n")
    check("L1d of cpu0 size", rd(root, "sys/devices/system/cpu/cpu0/cache/"
                                 "index0/size"), "32K\n")
    # 128 bits = 4 groups; 640 bits = 20 groups
    root = os.path.join(tmp, "siena-8534-nps2-llc")
    check("siena node7 cpumap", rd(root, "sys/devices/system/node/node7/"
                                   "cpumap"),
          "ff000000,00000000,ff000000,00000000\n")
    root = os.path.join(tmp, "turin-9845-2s-nps10")
    check("turin cpumap groups", rd(root, "sys/devices/system/node/node19/"
                                    "cpumap").count(","), 19)
    check("turin identity", rd(root, "proc/cpuinfo").split("\n")[2:4],
          ["cpu family\t: 26", "model\t\t: 17"])
    root = os.path.join(tmp, "vm-2cpu")
    check("vm node0 cpumap (2 bits -> 1 digit)",
          rd(root, "sys/devices/system/node/node0/cpumap"), "3\n")
    check("vm unpatched: no sysctl", os.path.exists(os.path.join(
        root, "proc/sys/kernel/sched_smt_buddy_assist")), False)
    check("vm unpatched: no feature", "SMT_BUDDY_ASSIST" in rd(
        root, "sys/kernel/debug/sched/features"), False)
    check("vm smt control", rd(root, "sys/devices/system/cpu/smt/control"),
          "notsupported\n")


def check_variants(tmp):
    cpu_d = "sys/devices/system/cpu"
    root = make(tmp, "hygon-7447v-2s-nps6", "--offline=0,5,200")
    check("offline list", rd(root, f"{cpu_d}/offline"), "0,5,200\n")
    check("online list", rd(root, f"{cpu_d}/online"),
          "1-4,6-199,201-383\n")
    check("offline cpu0 online=0", rd(root, f"{cpu_d}/cpu0/online"), "0\n")
    check("offline cpu5 has no topology/ or cache/",
          sorted(os.listdir(os.path.join(root, f"{cpu_d}/cpu5"))),
          ["node0", "online"])
    check("sibling of offline cpu", rd(root, f"{cpu_d}/cpu197/topology/"
                                       "thread_siblings_list"), "197\n")
    check("node0 without offline", node_list(root, 0),
          "1-4,6-15,192-199,201-207")
    check("cpuinfo skips offline", rd(root, "proc/cpuinfo").count(
        "processor\t: "), 381)

    root = make(tmp, "vm-2cpu", "--set=kernel.patched=yes",
                "--set=kernel.cgroup=v1", "--set=kernel.lockdown=integrity",
                "--set=kernel.debugfs=no", "--set=topology.package_ids=36")
    check("v1 relax", rd(root, "sys/fs/cgroup/cpuset/"
                         "cpuset.sched_relax_domain_level"), "-1\n")
    check("v1 load balance", rd(root, "sys/fs/cgroup/cpuset/"
                                "cpuset.sched_load_balance"), "1\n")
    check("v1 cpus", rd(root, "sys/fs/cgroup/cpuset/cpuset.cpus"), "0-1\n")
    check("lockdown integrity", rd(root, "sys/kernel/security/lockdown"),
          "none [integrity] confidentiality\n")
    check("debugfs=no", os.path.exists(os.path.join(
        root, "sys/kernel/debug/sched")), False)
    check("patched vm sysctl", rd(root, "proc/sys/kernel/"
                                  "sched_smt_buddy_assist"), "0\n")
    check("sparse package id", rd(root, f"{cpu_d}/cpu1/topology/"
                                  "physical_package_id"), "36\n")

    # a CPU-less node with a rule SLIT
    root = make(tmp, "vm-2cpu", "--set=numa.cpuless_node_ids=4",
                "--set=numa.distance=local=10 cpuless=17")
    check("cpuless node list", node_list(root, 4), "")
    check("cpuless has_cpu", rd(root, "sys/devices/system/node/has_cpu"),
          "0\n")
    check("cpuless has_memory", rd(root, "sys/devices/system/node/"
                                   "has_memory"), "0,4\n")
    check("cpuless distances", matrix(root, [0, 4]),
          [["10", "17"], ["17", "10"]])

    # bad input: exit 2 with a message naming the problem
    bad = os.path.join(tmp, "bad.spec")
    with open(bad, "w") as f:
        f.write("[cpu]\nvendor = X\nfamily = 6\nmodel = 1\nmodel_name = x\n"
                "colour = blue\n[topology]\ncores_per_package = 2\n")
    for what, args, needle in (
            ("unknown key", [bad, os.path.join(tmp, "o1")], "colour"),
            ("reversed offline range", ["vm-2cpu", os.path.join(tmp, "o2"),
                                        "--offline", "1-0"], "1-0"),
            ("offline not present", ["vm-2cpu", os.path.join(tmp, "o3"),
                                     "--offline", "7"], "7"),
            ("matrix size", ["vm-2cpu", os.path.join(tmp, "o4"), "--set",
                             "numa.distance=10 20"], "1x1"),
            ("not divisible", ["vm-2cpu", os.path.join(tmp, "o5"), "--set",
                               "topology.nodes_per_package=3"],
             "nodes_per_package"),
            ("unknown spec", ["no-such-machine", os.path.join(tmp, "o6")],
             "no-such-machine"),
            ("refuses foreign dir", ["vm-2cpu", tmp, "--force"],
             "not a generated sysroot")):
        rc, err = run_cli(*args)
        check(f"bad input: {what}", (rc, needle in err), (2, True))
    cyc = os.path.join(tmp, "cyc.spec")
    with open(cyc, "w") as f:
        f.write("[spec]\ninclude = cyc.spec\n")
    rc, err = run_cli(cyc, os.path.join(tmp, "o7"))
    check("bad input: include cycle", (rc, "cycle" in err), (2, True))


def check_hybrid(tmp):
    """The two hybrid specs: per-kind threads, L2 clusters and kind files."""
    cpu = "sys/devices/system/cpu"
    r = make(tmp, "raptorlake-8p16e")
    check("rpl: present", rd(r, f"{cpu}/present"), "0-31\n")
    check("rpl: cpu_core cpus", rd(r, "sys/devices/cpu_core/cpus"), "0-15\n")
    check("rpl: cpu_atom cpus", rd(r, "sys/devices/cpu_atom/cpus"), "16-31\n")
    check("rpl: P-core siblings adjacent", rd(r, f"{cpu}/cpu14/topology/thread_siblings_list"), "14-15\n")
    check("rpl: E-core alone", rd(r, f"{cpu}/cpu16/topology/thread_siblings_list"), "16\n")
    check("rpl: P-core L2", rd(r, f"{cpu}/cpu1/cache/index2/shared_cpu_list"), "0-1\n")
    check("rpl: E-core cluster L2", rd(r, f"{cpu}/cpu21/cache/index2/shared_cpu_list"), "20-23\n")
    check("rpl: one L3", rd(r, f"{cpu}/cpu31/cache/index3/shared_cpu_list"), "0-31\n")
    check("rpl: no cpu_capacity on x86", os.path.exists(os.path.join(r, f"{cpu}/cpu0/cpu_capacity")), False)
    a = make(tmp, "arm-biglittle-4a55-4a76")
    check("arm: A55 capacity", rd(a, f"{cpu}/cpu3/cpu_capacity"), "397\n")
    check("arm: A76 capacity", rd(a, f"{cpu}/cpu4/cpu_capacity"), "1024\n")
    check("arm: A76 MIDR", rd(a, f"{cpu}/cpu7/regs/identification/midr_el1"), "0x00000000414fd0b0\n")
    info = rd(a, "proc/cpuinfo")
    check("arm: cpuinfo A55 block", "processor\t: 0\nBogoMIPS\t: 48.00\n" in info and
          "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x2\nCPU part\t: 0xd05\n"
          "CPU revision\t: 0\n" in info, True)
    check("arm: cpuinfo A76 part", info.count("CPU part\t: 0xd0b\n"), 4)
    check("arm: no x86 lines", "vendor_id" in info, False)


def main():
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    tmp = tempfile.mkdtemp(prefix="sysroot-check.", dir=base)
    try:
        slow = []
        for name in EXPECT:
            dt = check_spec(tmp, name)
            slow.append(f"{name} {dt:.2f}s")
        check_details(tmp)
        check_variants(tmp)
        check_hybrid(tmp)
        print("generated: " + ", ".join(slow))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
