#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The CPU cost of topotunectl diagnose's sampling at the default duration
# (5 s: 6 ticks of /proc/stat and the processes, the counters and
# /proc/interrupts at both ends) on a generated 640-CPU tree (dual Turin
# 9845, NPS10) with a 640-column /proc/stat, /proc/interrupts and
# /proc/schedstat v17, and NTASKS processes of which NRUN are runnable.
# The goal is < 1 % of one CPU. Prints figures, asserts nothing.
#
#   bench/diagnose-overhead.sh [TOPOTUNECTL]
#
# CPU time is user + system of the child from wait4() (python's
# resource.getrusage(RUSAGE_CHILDREN)). The sampling's own cost is the
# 5 s run's CPU time minus that of a run that samples once (--duration
# 0.001): discovery of the 640-CPU machine is paid once either way and is
# not sampling. RUNS (default 5) runs of each, the median reported.
# Environment: NTASKS (default 400), NRUN (default 64), NKTHREADS (default
# 2560), RUNS, WORK (default
# /dev/shm/topotune-diag-bench, removed unless KEEP=1).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
ctl=${1:-$src/build/agent/cli/topotunectl}
work=${WORK:-/dev/shm/topotune-diag-bench}
[ -d /dev/shm ] || work=${WORK:-/tmp/topotune-diag-bench}
ntasks=${NTASKS:-400}
nrun=${NRUN:-64}
nkthreads=${NKTHREADS:-2560}
runs=${RUNS:-5}

rm -rf "$work"
mkdir -p "$work"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
python3 "$src/tests/sysroot/gen-sysroot.py" -q turin-9845-2s-nps10 "$work/root"

python3 - "$work/root" "$ntasks" "$nrun" "$nkthreads" <<'PY'
import os, sys
root, ntasks, nrun, nkthreads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
cpus = 640
proc = os.path.join(root, "proc")
os.makedirs(proc, exist_ok=True)
with open(os.path.join(proc, "stat"), "w") as f:
    f.write("cpu  %d 0 %d %d 0 0 0 0 0 0\n" % (cpus * 1000, cpus * 100, cpus * 9000))
    for c in range(cpus):
        f.write("cpu%d %d 3 %d %d 12 0 7 0 0 0\n" % (c, 1000 + c, 100, 9000))
    f.write("intr 123456\nctxt 987654\nbtime 1700000000\nprocesses 4242\nprocs_running %d\n" % nrun)
with open(os.path.join(proc, "interrupts"), "w") as f:
    f.write(" " * 11 + "".join("CPU%-8d" % c for c in range(cpus)) + "\n")
    for irq in list(range(96)) + ["NMI", "LOC", "RES", "CAL", "TLB"]:
        f.write("%4s: " % irq + "".join("%10d " % ((c * 7 + 3) % 1000) for c in range(cpus))
                + " PCI-MSI-edge dev%s\n" % irq)
fields = " ".join(str(i) for i in range(1, 46))
with open(os.path.join(proc, "schedstat"), "w") as f:
    f.write("version 17\ntimestamp 4294892296\n")
    for c in range(cpus):
        f.write("cpu%d 0 0 0 0 0 0 1 2 3\n" % c)
        for i, name in enumerate(("SMT", "MC", "NUMA", "NUMA")):
            f.write("domain%d %s %x %s\n" % (i, name, 1 << c, fields))
STAT = ("%d (%s) %s 2 %d %d 0 -1 %d 100 0 0 0 480 20 0 0 20 0 1 0 100 1000 10 "
        "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 %d 0 0 0 0 0\n")


def task(pid, comm, state, flags, cpu, allowed):
    for d in (os.path.join(proc, str(pid)), os.path.join(proc, str(pid), "task", str(pid))):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "stat"), "w") as f:
            f.write(STAT % (pid, comm, state, pid, pid, flags, cpu))
        with open(os.path.join(d, "status"), "w") as f:
            f.write("Name:\t%s\nState:\t%s\nTgid:\t%d\nPid:\t%d\n" % (comm, state, pid, pid)
                    + "Cpus_allowed_list:\t%s\nMems_allowed_list:\t0-19\nvoluntary_ctxt_switches:\t10\n" % allowed)


for k in range(nkthreads):   # per-CPU kernel threads: PF_KTHREAD, pinned
    task(10 + k, "ksoftirqd/%d" % (k % cpus), "S", 0x04208040, k % cpus, str(k % cpus))
for pid in range(100000, 100000 + ntasks):
    task(pid, "worker-%d" % pid, "R" if pid - 100000 < nrun else "S", 4194560, pid % cpus, "0-639")
PY

python3 - "$ctl" "$work/root" "$runs" <<'PY'
import os, resource, statistics, subprocess, sys, time
ctl, root, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])

def cpu_of(duration):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([ctl, "--root", root, "diagnose", "--sample", "--duration", duration, "--json"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        sys.exit("diagnose failed: %s" % p.stderr)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall

once = [cpu_of("0.001") for _ in range(runs)]
full = [cpu_of("5") for _ in range(runs)]
c1 = statistics.median(c for c, _ in once)
c5 = statistics.median(c for c, _ in full)
w5 = statistics.median(w for _, w in full)
sampling = max(c5 - c1, 0.0)
print("diagnose --duration 5 on a 640-CPU tree (%s):" % os.path.basename(root))
print("  one tick (discovery + detectors): %.1f ms CPU" % (c1 * 1000))
print("  5 s of sampling:                  %.1f ms CPU, %.2f s wall" % (c5 * 1000, w5))
print("  the sampling itself: %.1f ms CPU in %.1f s = %.3f %% of one CPU (goal < 1 %%)"
      % (sampling * 1000, w5, 100 * sampling / w5))
PY
