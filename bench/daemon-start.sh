#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Daemon start-up benchmark: spawn -> READY=1 of topotuned on the 640-CPU
# tree (turin-9845-2s-nps10 with the shipped conf/) and a private
# dbus-daemon, with its CPU time, VmHWM at READY=1 and VmRSS after
# IDLE_SECS; each LABEL=TOPOTUNED build and `lscpu --sysroot TREE` (the
# anchor) run in the same loop, round after round, so that the machine's
# load falls on all alike. Then where the time goes: the start-up phases
# that topotuned -v logs ("start-up: PHASE N.NN ms"), medians. Prints
# figures, asserts nothing.
#
#   bench/daemon-start.sh [TOPOTUNED [LABEL=OTHER-TOPOTUNED...]]
#
# Environment: RUNS (default 20, after 2 warm-ups), IDLE_SECS (1), SPEC
# (turin-9845-2s-nps10), WORK (a new directory below /dev/shm, removed
# unless KEEP=1). Needs dbus-daemon, python3, lscpu; root (topotuned writes
# the tree's proc/sys). Every process it starts is stopped by its pid.
# topotuned runs with the Environment= of units/topotuned.service, as its
# unit runs it (bench/unitenv.py; UNIT_ENV=0 leaves it out).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
daemon=$(readlink -f "${1:-$src/build/agent/service/topotuned}")
shift || true
exec python3 - "$src" "$daemon" "$@" <<'PY'
import glob, os, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

src, daemon, alts = sys.argv[1], sys.argv[2], [a.split("=", 1) for a in sys.argv[3:]]
sys.path.insert(0, os.path.join(src, "bench"))
from unitenv import describe, unit_environment  # noqa: E402
UNIT_ENV = unit_environment(src)
env = os.environ.get
RUNS = max(int(env("RUNS", "20")), 3)
IDLE = float(env("IDLE_SECS", "1"))
SPEC = env("SPEC", "turin-9845-2s-nps10")
work = env("WORK") or tempfile.mkdtemp(prefix="topotune-start-", dir="/dev/shm")
os.makedirs(work, exist_ok=True)
live = []


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in live:
        live.remove(p)


def kb(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def cpu_ms(pid):
    return sum(int(open(t).read().split()[0]) for t in glob.glob(f"/proc/{pid}/task/*/schedstat")) / 1e6


root = os.path.join(work, "tree")
subprocess.run([sys.executable, os.path.join(src, "tests/sysroot/gen-sysroot.py"), "-q", "--force", SPEC, root],
               check=True)
shutil.copytree(os.path.join(src, "conf/profiles"), os.path.join(root, "usr/lib/topotune/profiles"), dirs_exist_ok=True)
shutil.copytree(os.path.join(src, "conf/hardware.d"), os.path.join(root, "usr/lib/topotune/hardware.d"),
                dirs_exist_ok=True)
os.makedirs(os.path.join(root, "etc/topotune/topotune.conf.d"), exist_ok=True)
shutil.copy(os.path.join(src, "conf/topotune.conf"), os.path.join(root, "etc/topotune/"))
ncpu = len(glob.glob(os.path.join(root, "sys/devices/system/cpu/cpu[0-9]*")))

sock = os.path.join(work, "bus.sock")
conf = os.path.join(work, "bus.conf")
open(conf, "w").write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path={sock}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*" eavesdrop="true"/>
<allow eavesdrop="true"/><allow receive_sender="*"/><allow send_type="method_call"/></policy></busconfig>
""")
bus = subprocess.Popen(["dbus-daemon", "--nofork", "--nopidfile", "--config-file", conf],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
live.append(bus)
for _ in range(500):
    if os.path.exists(sock):
        break
    time.sleep(0.01)
addr = "unix:path=" + sock


def start(binary, verbose=False):
    """(wall ms to READY=1, CPU ms to READY=1, VmHWM KiB, VmRSS KiB after IDLE, log)."""
    npath = os.path.join(work, "notify.sock")
    if os.path.exists(npath):
        os.unlink(npath)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(npath)
    s.settimeout(60)
    log = os.path.join(work, "daemon.log")
    argv = [binary, "--root", root, "--bus-address", addr, "--no-systemd"] + (["-v"] if verbose else [])
    with open(log, "w") as lf:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, env=dict(os.environ, **UNIT_ENV, NOTIFY_SOCKET=npath), stdin=subprocess.DEVNULL,
                             stdout=lf, stderr=lf)
    live.append(p)
    s.settimeout(0.5)
    try:
        while True:
            try:
                if b"READY=1" in s.recv(4096).split(b"\n"):
                    break
            except socket.timeout:
                if p.poll() is not None or time.perf_counter() - t0 > 60:
                    stop(p)
                    raise SystemExit(f"daemon-start: no READY=1 from {binary}:\n" + open(log).read()[-2000:])
        wall = (time.perf_counter() - t0) * 1000
        cpu, hwm = cpu_ms(p.pid), kb(p.pid, "VmHWM")
    finally:
        s.close()
        os.unlink(npath)
    rss = 0
    if IDLE > 0 and not verbose:
        time.sleep(IDLE)
        rss = kb(p.pid, "VmRSS")
    stop(p)
    return wall, cpu, hwm, rss, open(log).read()


def anchor():
    t0 = time.perf_counter()
    pid = os.posix_spawn("/usr/bin/lscpu", ["lscpu", "--sysroot", root], os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, _, ru = os.wait4(pid, 0)
    return (time.perf_counter() - t0) * 1000, (ru.ru_utime + ru.ru_stime) * 1000


builds = [("topotuned", daemon)] + alts
res = {n: [] for n, _ in builds}
anc = []
try:
    print(f"topotuned start-up on {SPEC} ({ncpu} CPUs), {RUNS} rounds after 2 warm-ups, "
          f"load average {' '.join(open('/proc/loadavg').read().split()[:3])}")
    for n, b in builds:
        print(f"  {n} = {b} --root TREE --bus-address ADDR --no-systemd")
    print(f"  environment of units/topotuned.service: {describe(UNIT_ENV)}")
    for i in range(2 + RUNS):
        a = anchor()
        for n, b in builds:
            r = start(b)
            if i >= 2:
                res[n].append(r)
        if i >= 2:
            anc.append(a)
    print(f"  load average after: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    med = statistics.median
    print(f"\n  {'build':<14} {'to READY=1 ms':>22} {'CPU to READY=1 ms':>18} {'VmHWM@READY KiB':>16} "
          f"{'VmRSS after %gs KiB' % IDLE:>20}")
    for n, _ in builds:
        w = [r[0] for r in res[n]]
        print(f"  {n:<14} {med(w):>8.1f} ({min(w):.1f}-{max(w):.1f}){'':>3} {med([r[1] for r in res[n]]):>14.1f}"
              f"{med([r[2] for r in res[n]]):>17.0f} {med([r[3] for r in res[n]]):>20.0f}")
    w = [a[0] for a in anc]
    print(f"  {'lscpu (anchor)':<14} {med(w):>8.1f} ({min(w):.1f}-{max(w):.1f}){'':>3} {med([a[1] for a in anc]):>14.1f}")

    # Where the time goes: the phases topotuned -v logs, in separate runs.
    phases, walls = {}, []
    for i in range(RUNS):
        r = start(daemon, verbose=True)
        walls.append(r[0])
        for line in r[4].splitlines():
            m = re.search(r"start-up: (.+?) ([0-9.]+) ms", line)
            if m:
                phases.setdefault(m.group(1), []).append(float(m.group(2)))
    if phases:
        print(f"\n  where the time goes ({daemon} -v, {RUNS} runs; wall ms per phase, median):")
        for k, v in phases.items():
            print(f"    {k:<44} {med(v):>7.2f}")
        rest = med(walls) - sum(med(v) for v in phases.values())
        print(f"    {'the rest: exec, dynamic linking, main() setup':<44} {rest:>7.2f}   (spawn -> READY=1 {med(walls):.2f})")
finally:
    for p in reversed(live):
        stop(p)
    if env("KEEP", "0") != "1":
        shutil.rmtree(work, ignore_errors=True)
PY
