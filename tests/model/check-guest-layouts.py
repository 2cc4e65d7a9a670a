#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The planner's domain model against what real 7.3.4 and 6.12 guests reported.

tests/vm/expected/*.txt are captures from the kernel tier's qemu guests
(unpatched and patched 7.3.4; Hygon F18 M7 with 3 and 1 nodes per socket,
Intel GNR with the SNC-3 SLIT), tests/vm/expected/<series>/*.txt the same
for another base (6.12: its "release" file names the kernel release the
sysroot reports, so the model predicts for that kernel; /proc/schedstat is
version 16 there, without domain names): cpu0's /proc/schedstat domains, debugfs
level/name/flags, the SLIT rows and the sched_verbose log. For each, build
a sysroot of the same machine, put the capture in it as proc/schedstat and
debugfs files, and ask `topotunectl layout --compare`: the model must
predict every span, name, sd->level and flag, and must predict the kernel's
"groups don't span domain->span" error exactly where the guest logged it.

Usage: check-guest-layouts.py TOPOTUNECTL GEN-SYSROOT EXPECTED-DIR
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ctl, gen, expected_dir = sys.argv[1:4]
results = {"pass": 0, "fail": 0}

CPUS = {
    "hygon": ("HygonGenuine", "0x18", "7", "Hygon C86 7447v (qemu Dhyana model 7)"),
    "gnr": ("GenuineIntel", "6", "0xad", "Intel Xeon 6 (qemu, family 6 model 0xad)"),
}


def check(name, cond, detail=""):
    results["pass" if cond else "fail"] += 1
    print(f"{'PASS' if cond else 'FAIL'} {name}{'' if cond else ': ' + str(detail)}")


def parse(path):
    cap = {"version": None, "domains": [], "debugfs": {}, "nodes": [], "error": False}
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"# /proc/schedstat version (\d+)", line)
        if m:
            cap["version"] = int(m.group(1))
        m = re.match(r"cpu0 domain(\d+) (?:(\S+) )?([0-9a-f,]+)$", line)
        if m:
            cap["domains"].append((int(m.group(1)), m.group(2), m.group(3)))
        m = re.match(r"cpu0 domain(\d+) level=(\d+) name=(\S+) flags=(\S*)", line)
        if m:
            cap["debugfs"][int(m.group(1))] = (m.group(2), m.group(3), m.group(4).replace(",", " "))
        m = re.match(r"node(\d+) cpus=(\S+) distance=(\S+)", line)
        if m:
            cap["nodes"].append([int(x) for x in m.group(3).split(",")])
        if "ERROR: groups don't span domain->span" in line:
            cap["error"] = True
    return cap


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


files = sorted(glob.glob(os.path.join(expected_dir, "*.txt")) +
               glob.glob(os.path.join(expected_dir, "*", "*.txt")))
if not files:
    print(f"SKIP guest layouts: no captures in {expected_dir}")
tmpbase = "/dev/shm" if os.path.isdir("/dev/shm") else None
with tempfile.TemporaryDirectory(dir=tmpbase) as base:
    for path in files:
        name = os.path.basename(path)[:-4]           # hygon3-base
        sub = os.path.dirname(path)
        release = None
        if os.path.realpath(sub) != os.path.realpath(expected_dir):
            release = open(os.path.join(sub, "release")).read().strip()
        m = re.match(r"(hygon|gnr)(\d)-(base|patched)$", name)
        if not m:
            check(f"{name}: known capture name", False, "expected (hygon|gnr)N-(base|patched)")
            continue
        vendor, npp, kind = m.group(1), int(m.group(2)), m.group(3)
        cap = parse(path)
        if not cap["domains"] or not cap["nodes"] or not cap["version"]:
            check(f"{name}: capture complete", False, cap)
            continue
        v, fam, model, brand = CPUS[vendor]
        if release:
            name = f"{os.path.basename(sub)}/{name}"
        root = os.path.join(base, name.replace("/", "-"))
        matrix = "\n".join(" ".join(str(d) for d in row) for row in cap["nodes"])
        # The guest: 2 sockets x 3 cores x 2 threads, siblings numbered next to
        # each other, the same SLIT; TCG reports one L3 per package.
        subprocess.run([sys.executable, gen, "-q",
                        "--set", f"cpu.vendor={v}", "--set", f"cpu.family={fam}",
                        "--set", f"cpu.model={model}", "--set", f"cpu.model_name={brand}",
                        "--set", "topology.packages=2", "--set", "topology.cores_per_package=3",
                        "--set", "topology.threads_per_core=2",
                        "--set", f"topology.nodes_per_package={npp}",
                        "--set", "topology.cores_per_llc=3",
                        "--set", "topology.numbering=threads-adjacent",
                        "--set", f"numa.distance={matrix}",
                        "--set", f"kernel.patched={'yes' if kind == 'patched' else 'no'}",
                        *(["--set", f"kernel.release={release}"] if release else []),
                        "vm-2cpu", root], check=True)
        text = f"version {cap['version']}\ntimestamp 1\ncpu0 0 0 0 0 0 0 0 0 0\n"
        for idx, dname, mask in cap["domains"]:
            # Named domain lines from version 17 on.
            text += (f"domain{idx} {dname} {mask} 0 0 0\n" if dname
                     else f"domain{idx} {mask} 0 0 0\n")
        write(root, "proc/schedstat", text)
        for idx, (level, dname, flags) in cap["debugfs"].items():
            d = f"sys/kernel/debug/sched/domains/cpu0/domain{idx}"
            write(root, f"{d}/level", f"{level}\n")
            write(root, f"{d}/name", f"{dname}\n")
            write(root, f"{d}/flags", f"{flags}\n")
        p = subprocess.run([ctl, "--root", root, "layout", "--compare"], capture_output=True, text=True)
        check(f"{name}: {len(cap['domains'])} domains of cpu0 match the model (spans, names, levels, flags)",
              p.returncode == 0, p.stdout + p.stderr)
        predicted = [l for l in p.stdout.splitlines() if "groups don't span" in l]
        cpu0_error = any(re.search(r"CPUs (0\b|0-|0,)", l) for l in predicted)
        check(f"{name}: 'groups don't span domain->span' {'predicted' if cap['error'] else 'not predicted'} for cpu0, as logged",
              cpu0_error == cap["error"], p.stdout)

print(f"{results['pass']} passed, {results['fail']} failed")
sys.exit(1 if results["fail"] else 0)
