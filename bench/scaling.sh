#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Scaling benchmark: discovery (`topotunectl --root DIR topology --json`) and
# the plan (`topotunectl --root DIR plan`) from 16 to 2,048 CPUs, with
# `lscpu --sysroot DIR` as the anchor, the three taking turns round after
# round. The trees are turin-9845-2s-nps10 (2 packages, SMT2, a node and
# an L3 per 16 cores) with the cores per package scaled: 4, 32, 64, 160,
# 256, 512 (16 ... 2,048 CPUs), the shipped conf/ copied in. Prints CPU time
# (user + system, wait4()) medians, per CPU, and the plan's cost beyond
# discovery; asserts nothing.
#
#   bench/scaling.sh [TOPOTUNECTL [LABEL=OTHER-TOPOTUNECTL...]]
#
# Environment: INSTR (default 1: also count instructions with callgrind,
# when valgrind is installed, one run per size and build), RUNS (default 10, after 2 warm-ups), CORES (the cores per
# package, default "4 32 64 160 256 512"), WORK (default a new directory
# below /dev/shm, removed unless KEEP=1). Needs python3 and lscpu.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
ctl=$(readlink -f "${1:-$src/build/agent/cli/topotunectl}")
shift || true
exec python3 - "$src" "$ctl" "$@" <<'PY'
import os, shutil, statistics, subprocess, sys, tempfile, time

src, ctl, alts = sys.argv[1], sys.argv[2], [a.split("=", 1) for a in sys.argv[3:]]
env = os.environ.get
RUNS = max(int(env("RUNS", "10")), 3)
CORES = [int(c) for c in env("CORES", "4 32 64 160 256 512").split()]
work = env("WORK") or tempfile.mkdtemp(prefix="topotune-scaling-", dir="/dev/shm")
os.makedirs(work, exist_ok=True)
fa = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0), (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]


def run(argv):
    """CPU ms (user + system) and wall ms of one whole process; None if it failed."""
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=fa)
    _, st, ru = os.wait4(pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    return ((ru.ru_utime + ru.ru_stime) * 1000, wall) if os.waitstatus_to_exitcode(st) == 0 else None


def tree(cores):
    root = os.path.join(work, f"c{cores}")
    sets = [f"topology.cores_per_package={cores}", f"topology.nodes_per_package={max(1, cores // 16)}",
            f"topology.cores_per_llc={min(16, cores)}"]
    subprocess.run([sys.executable, os.path.join(src, "tests/sysroot/gen-sysroot.py"), "-q", "--force"] +
                   [a for s in sets for a in ("--set", s)] + ["turin-9845-2s-nps10", root], check=True)
    shutil.copytree(os.path.join(src, "conf/profiles"), os.path.join(root, "usr/lib/topotune/profiles"),
                    dirs_exist_ok=True)
    shutil.copytree(os.path.join(src, "conf/hardware.d"), os.path.join(root, "usr/lib/topotune/hardware.d"),
                    dirs_exist_ok=True)
    os.makedirs(os.path.join(root, "etc/topotune"), exist_ok=True)
    shutil.copy(os.path.join(src, "conf/topotune.conf"), os.path.join(root, "etc/topotune/"))
    return root


builds = [("topotune", ctl)] + alts
print(f"Scaling: CPU time (user + system) per whole process, median of {RUNS} rounds after 2 warm-ups, "
      f"the commands taking turns; load average {' '.join(open('/proc/loadavg').read().split()[:3])}")
for n, b in builds:
    print(f"  {n}: {b} --root DIR topology --json | plan")
print("  lscpu: lscpu --sysroot DIR")
rows = []
try:
    for cores in CORES:
        root = tree(cores)
        ncpu = 2 * cores * 2
        cmds = [("lscpu", ["/usr/bin/lscpu", "--sysroot", root])]
        for n, b in builds:
            cmds += [(f"{n} topology", [b, "--root", root, "topology", "--json"]),
                     (f"{n} plan", [b, "--root", root, "plan"])]
        t = {k: [] for k, _ in cmds}
        for i in range(2 + RUNS):
            for k, argv in cmds:
                r = run(argv)
                if i >= 2 and r:
                    t[k].append(r[0])
        rows.append((ncpu, {k: statistics.median(v) if v else None for k, v in t.items()}))
        print(f"  measured {ncpu} CPUs", file=sys.stderr)
    print(f"  load average after: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    print()
    hdr = ["CPUs", "lscpu ms", "lscpu us/CPU"]
    for n, _ in builds:
        hdr += [f"{n} topology ms", "us/CPU", "x lscpu", f"{n} plan ms", "plan-topology ms", "us/CPU"]
    print("  " + "  ".join(f"{h:>14}" for h in hdr))
    for ncpu, m in rows:
        cells = [f"{ncpu}", f"{m['lscpu']:.1f}", f"{m['lscpu'] * 1000 / ncpu:.1f}"]
        for n, _ in builds:
            top, plan = m[f"{n} topology"], m[f"{n} plan"]
            cells += [f"{top:.1f}", f"{top * 1000 / ncpu:.1f}", f"{m['lscpu'] / top:.1f}x",
                      f"{plan:.1f}", f"{plan - top:.1f}", f"{(plan - top) * 1000 / ncpu:.1f}"]
        print("  " + "  ".join(f"{c:>14}" for c in cells))
    print("\n  us/CPU: the median CPU time divided by the CPUs; plan-topology: what the plan costs beyond discovery")
    # Instructions do not depend on the machine or its load (CPU time at a
    # few ms is tick-quantised and cache-bound): one callgrind run each.
    if shutil.which("valgrind") and env("INSTR", "1") == "1":
        def instr(argv):
            r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for line in r.stderr.splitlines():
                if "Collected" in line or "I   refs" in line:
                    return int(line.split()[-1].replace(",", ""))
            return None
        print("\n  Instructions (valgrind --tool=callgrind, one run each; INSTR=0 skips this): "
              "plan beyond discovery, per CPU")
        hdr = ["CPUs"] + [h for n, _ in builds for h in (f"{n} topology", f"{n} plan", "beyond/CPU")]
        print("  " + "  ".join(f"{h:>16}" for h in hdr))
        for cores in CORES:
            root = tree(cores)
            ncpu = 2 * cores * 2
            cells = [f"{ncpu}"]
            for n, b in builds:
                top = instr([b, "--root", root, "topology", "--json"])
                plan = instr([b, "--root", root, "plan"])
                cells += [f"{top:,}", f"{plan:,}", f"{(plan - top) // ncpu:,}"] if top and plan else ["-"] * 3
            print("  " + "  ".join(f"{c:>16}" for c in cells))
finally:
    if env("KEEP", "0") != "1":
        shutil.rmtree(work, ignore_errors=True)
PY
