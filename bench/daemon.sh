#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Daemon benchmark: topotuned on a private dbus-daemon against generated
# sysroots (turin-9845-2s-nps10, 640 CPUs, and vm-2cpu, 2 CPUs) plus the
# shipped conf/. Prints figures, asserts nothing.
#
#   bench/daemon.sh [TOPOTUNED [TOPOTUNECTL [BUS_LATENCY]]]
#       defaults: build/agent/service/topotuned, build/agent/cli/topotunectl,
#                 build/bench/bus-latency
#
#  1. cold start: spawn -> READY=1 on $NOTIFY_SOCKET (a unix datagram socket
#     of this script), RUNS runs after 2 warm-ups, median (min-max); CPU time
#     to READY=1 (/proc/PID/task/*/schedstat);
#  2. RSS: VmHWM and VmRSS at READY=1 and after IDLE_SECS idle, and the CPU
#     it used while idle;
#  3. D-Bus latency: bench/bus-latency (in-process sd-bus, CALLS calls each of
#     Get(State), Verify(), GetCpuDomains(u 0), taking turns), then busctl
#     (a whole process per call, BUSCTL_CALLS calls each), p50/p99/max;
#  4. drift timer: CPU time over DRIFT_SECS with `verify_interval = 1`
#     (a conf.d drop-in) minus a run with `verify_interval = 0`, per verify and
#     per hour at the default 60 s and at 1 s;
#  5. TuneD (Debian's tuned 2.x; installed with apt-get when missing, TUNED=0
#     skips it): start-up (to its "static tuning ... applied" log line and to its
#     first D-Bus answer), RSS, idle CPU, and `tuned-adm active` wall time
#     against `topotunectl --bus-address ADDR status`, interleaved. TuneD runs
#     in the foreground on its own private bus (DBUS_SYSTEM_BUS_ADDRESS) with a
#     no-op profile written to /etc/tuned/topotune-bench-noop (removed after;
#     /etc/tuned/active_profile and profile_mode are restored), so it tunes
#     nothing on this machine.
#
# Environment: RUNS (default 10), CALLS (10000), BUSCTL_CALLS (200),
# STATUS_CALLS (20), IDLE_SECS (10), DRIFT_SECS (60), TUNED (1), WORK (a new
# directory below /dev/shm, removed unless KEEP=1), NICE (niceness of
# everything, default 0). Needs root (topotuned writes the tree's
# proc/sys; TuneD), dbus-daemon, busctl, python3. Every process it starts is
# stopped by its pid at the end, also on error or Ctrl-C.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
daemon=$(readlink -f "${1:-$src/build/agent/service/topotuned}")
ctl=$(readlink -f "${2:-$src/build/agent/cli/topotunectl}")
lat=$(readlink -f "${3:-$src/build/bench/bus-latency}")
for f in "$daemon" "$ctl" "$lat"; do
	[ -x "$f" ] || { echo "daemon: $f is missing (meson setup build && ninja -C build)" >&2; exit 2; }
done
for c in dbus-daemon busctl; do
	command -v "$c" >/dev/null || { echo "daemon: $c is needed" >&2; exit 2; }
done
if [ "${TUNED:-1}" = 1 ] && ! command -v tuned >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "daemon: installing tuned (apt-get install tuned)" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tuned >/dev/null 2>&1 ||
		echo "daemon: apt-get install tuned failed; the TuneD part is skipped" >&2
fi
# TuneD and the dbus module want Debian's python, not a pyenv one.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
renice -n "${NICE:-0}" $$ >/dev/null 2>&1

exec "$py" - "$src" "$daemon" "$ctl" "$lat" <<'PY'
import glob, os, shutil, signal, socket, statistics, subprocess, sys, tempfile, threading, time

src, daemon, ctl, lat = sys.argv[1:5]
env = os.environ.get
RUNS = max(int(env("RUNS", "10")), 1)
CALLS = int(env("CALLS", "10000"))
BUSCTL_CALLS = int(env("BUSCTL_CALLS", "200"))
STATUS_CALLS = int(env("STATUS_CALLS", "20"))
IDLE = float(env("IDLE_SECS", "10"))
DRIFT = float(env("DRIFT_SECS", "60"))
DO_TUNED = env("TUNED", "1") == "1"
work = env("WORK") or tempfile.mkdtemp(prefix="topotune-daemon-", dir="/dev/shm")
os.makedirs(work, exist_ok=True)
NAME, OPATH, IFACE = "org.topotune1", "/org/topotune1", "org.topotune1.Manager"

live = []            # Popen objects still to stop
restore = []         # callables run at the end
summary = []         # rows of the final table


def cleanup():
    for p in reversed(live):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    live.clear()
    for f in reversed(restore):
        try:
            f()
        except Exception as e:  # keep restoring the rest
            print(f"daemon: cleanup: {e}", file=sys.stderr)
    if env("KEEP", "0") != "1":
        shutil.rmtree(work, ignore_errors=True)


def on_signal(sig, _):
    raise SystemExit(128 + sig)


signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGINT, on_signal)


def pct(v, q):
    s = sorted(v)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def med_range(v, fmt="{:.1f}"):
    return f"{fmt.format(statistics.median(v))} ({fmt.format(min(v))}-{fmt.format(max(v))})"


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_ns(pid):
    """CPU time of every thread of pid so far, in ns (schedstat: ns resolution)."""
    total = 0
    for t in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(t) as f:
                total += int(f.read().split()[0])
        except (OSError, IndexError, ValueError):
            pass
    return total


def cpu_ticks_ms(pid):
    """utime+stime from /proc/PID/stat, in ms (clock-tick resolution)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def spawn(argv, **kw):
    kw.setdefault("stdin", subprocess.DEVNULL)
    p = subprocess.Popen(argv, **kw)
    live.append(p)
    return p


def stop(p, sig=signal.SIGTERM, timeout=15):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in live:
        live.remove(p)
    return p.returncode


# --- trees and buses ---------------------------------------------------------------
def make_tree(name, spec, interval=None):
    root = os.path.join(work, name)
    subprocess.run([sys.executable, os.path.join(src, "tests/sysroot/gen-sysroot.py"), "-q", spec, root],
                   check=True, stdin=subprocess.DEVNULL)
    shutil.copytree(os.path.join(src, "conf/profiles"), os.path.join(root, "usr/lib/topotune/profiles"))
    shutil.copytree(os.path.join(src, "conf/hardware.d"), os.path.join(root, "usr/lib/topotune/hardware.d"))
    os.makedirs(os.path.join(root, "etc/topotune/topotune.conf.d"), exist_ok=True)
    shutil.copy(os.path.join(src, "conf/topotune.conf"), os.path.join(root, "etc/topotune/"))
    set_interval(root, interval)
    return root


def set_interval(root, interval):
    f = os.path.join(root, "etc/topotune/topotune.conf.d/50-bench.conf")
    if interval is None:
        if os.path.exists(f):
            os.unlink(f)
    else:
        with open(f, "w") as fh:
            fh.write(f"[daemon]\nverify_interval = {interval}\n")


def start_bus(name):
    sock = os.path.join(work, name + ".sock")
    conf = os.path.join(work, name + ".conf")
    with open(conf, "w") as f:
        f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={sock}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow send_type="method_call"/>
  </policy>
</busconfig>
""")
    spawn(["dbus-daemon", "--nofork", "--nopidfile", "--config-file", conf],
          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    else:
        raise SystemExit(f"daemon: dbus-daemon did not create {sock}")
    return "unix:path=" + sock


def start_daemon(root, addr, log):
    """topotuned, timed from spawn to READY=1. Returns (Popen, seconds)."""
    npath = os.path.join(work, "notify.sock")
    if os.path.exists(npath):
        os.unlink(npath)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(npath)
    s.settimeout(60)
    e = dict(os.environ, NOTIFY_SOCKET=npath)
    with open(log, "w") as lf:
        t0 = time.perf_counter()
        p = spawn([daemon, "--root", root, "--bus-address", addr, "--no-systemd"], env=e,
                  stdout=lf, stderr=lf)
    try:
        while True:
            msg = s.recv(4096)
            if b"READY=1" in msg.split(b"\n"):
                t = time.perf_counter() - t0
                break
    except socket.timeout:
        stop(p, signal.SIGKILL)
        raise SystemExit(f"daemon: no READY=1 from topotuned on {root} in 60 s:\n" + open(log).read()[-2000:])
    finally:
        s.close()
        os.unlink(npath)
    return p, t


def run_wall(argv, e=None):
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       env=e)
    t = (time.perf_counter() - t0) * 1000
    if r.returncode != 0:
        raise SystemExit(f"daemon: {' '.join(argv)} failed ({r.returncode}): {r.stderr.decode()[-500:]}")
    return t


try:
    print(f"topotuned: {daemon}")
    print(f"machine: {os.cpu_count()} CPUs, load average {open('/proc/loadavg').read().split()[:3]}, "
          f"kernel {os.uname().release}")
    trees = [("turin-640", make_tree("turin-640", "turin-9845-2s-nps10")),
             ("vm-2cpu", make_tree("vm-2cpu", "vm-2cpu"))]
    addr = start_bus("bus")
    log = os.path.join(work, "topotuned.log")

    # --- 1. cold start ---------------------------------------------------------------
    print(f"\n1. Cold start: spawn -> READY=1 on NOTIFY_SOCKET, ms, median (min-max) of {RUNS} runs after 2 warm-ups")
    print("   (binary and tree in the page cache; every start applies the profile to the tree, every stop reverts it)")
    print(f"   {'tree':<10} {'CPUs':>5} {'to READY=1 ms':>22} {'CPU to READY=1 ms':>22} {'VmHWM at READY=1 KiB':>22}")
    for label, root in trees:
        ncpu = len(glob.glob(os.path.join(root, "sys/devices/system/cpu/cpu[0-9]*")))
        walls, cpus, hwm = [], [], []
        for i in range(2 + RUNS):
            p, t = start_daemon(root, addr, log)
            c = cpu_ns(p.pid) / 1e6
            h = status_kb(p.pid, "VmHWM")
            stop(p)
            if i >= 2:
                walls.append(t * 1000)
                cpus.append(c)
                hwm.append(h)
        print(f"   {label:<10} {ncpu:>5} {med_range(walls):>22} {med_range(cpus):>22} {med_range(hwm, '{:.0f}'):>22}")
        summary.append((f"cold start to READY=1, {label} ({ncpu} CPUs)", f"{med_range(walls)} ms",
                        f"{statistics.median(cpus):.1f} ms CPU"))

    # --- 2. RSS, 3. latency -------------------------------------------------------------
    print(f"\n2. Memory: VmHWM/VmRSS at READY=1 and after {IDLE:.0f} s idle (KiB); CPU while idle")
    print(f"   {'tree':<10} {'VmHWM@ready':>12} {'VmRSS@ready':>12} {'VmRSS idle':>11} {'VmHWM idle':>11} "
          f"{'idle CPU ms':>11} {'VmHWM after calls':>18}")
    lat_out = {}
    busctl_out = {}
    for label, root in trees:
        p, _ = start_daemon(root, addr, log)
        h0, r0 = status_kb(p.pid, "VmHWM"), status_kb(p.pid, "VmRSS")
        c0 = cpu_ns(p.pid)
        time.sleep(IDLE)
        c1 = cpu_ns(p.pid)
        h1, r1 = status_kb(p.pid, "VmHWM"), status_kb(p.pid, "VmRSS")
        # 3a. in-process sd-bus client
        r = subprocess.run([lat, addr, str(CALLS)], stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"daemon: bus-latency failed: {r.stderr}")
        lat_out[label] = r.stdout
        # 3b. busctl, a whole process per call, the two kinds taking turns
        base = ["busctl", f"--address={addr}"]
        kinds = {"busctl get-property State": base + ["get-property", NAME, OPATH, IFACE, "State"],
                 "busctl call Verify": base + ["call", NAME, OPATH, IFACE, "Verify"],
                 "busctl call GetCpuDomains u 0": base + ["call", NAME, OPATH, IFACE, "GetCpuDomains", "u", "0"]}
        times = {k: [] for k in kinds}
        for _ in range(BUSCTL_CALLS):
            for k, argv in kinds.items():
                times[k].append(run_wall(argv))
        busctl_out[label] = times
        h2, r2 = status_kb(p.pid, "VmHWM"), status_kb(p.pid, "VmRSS")
        stop(p)
        print(f"   {label:<10} {h0:>12} {r0:>12} {r1:>11} {h1:>11} {(c1 - c0) / 1e6:>11.2f} {h2:>18}")
        summary.append((f"RSS, {label}", f"peak (VmHWM) {h0 / 1024:.1f} MiB at start, {h2 / 1024:.1f} MiB after the calls",
                        f"steady (VmRSS after {IDLE:.0f} s idle) {r1 / 1024:.1f} MiB"))

    print(f"\n3a. D-Bus latency, in-process sd-bus client (bench/bus-latency, {CALLS} calls of each kind, "
          "blocking, the kinds taking turns)")
    for label, out in lat_out.items():
        print(f"   {label}:")
        for line in out.splitlines():
            print("     " + line)
        for line in out.splitlines()[1:]:
            f = line.split()
            k = " ".join(f[:-5])
            summary.append((f"D-Bus {k}, sd-bus client, {label}", f"p50 {f[-4]} us, p99 {f[-3]} us",
                            f"max {f[-2]} us"))
    print(f"\n3b. D-Bus latency from busctl (a whole process per call, {BUSCTL_CALLS} calls each), ms")
    print(f"   {'tree':<10} {'call':<32} {'p50':>7} {'p99':>7} {'max':>7}")
    for label, times in busctl_out.items():
        for k, v in times.items():
            print(f"   {label:<10} {k:<32} {pct(v, .5):>7.2f} {pct(v, .99):>7.2f} {max(v):>7.2f}")
            if label == "turin-640":
                summary.append((f"{k} (whole process), {label}", f"p50 {pct(v, .5):.2f} ms, p99 {pct(v, .99):.2f} ms", ""))

    # --- 4. drift timer --------------------------------------------------------------------
    label, root = trees[0]
    print(f"\n4. Drift timer on {label}: CPU over {DRIFT:.0f} s with verify_interval = 1, minus verify_interval = 0")
    res = {}
    for iv in (0, 1):
        set_interval(root, iv)
        p, _ = start_daemon(root, addr, log)
        time.sleep(1)
        c0, k0 = cpu_ns(p.pid), cpu_ticks_ms(p.pid)
        time.sleep(DRIFT)
        c1, k1 = cpu_ns(p.pid), cpu_ticks_ms(p.pid)
        stop(p)
        drifted = sum(1 for line in open(log) if "rift" in line)
        res[iv] = ((c1 - c0) / 1e6, k1 - k0, drifted)
        print(f"   verify_interval = {iv}: {res[iv][0]:.2f} ms CPU (schedstat), {res[iv][1]:.0f} ms (utime+stime ticks), "
              f"{drifted} drift lines in its log")
    set_interval(root, None)
    per_verify = (res[1][0] - res[0][0]) / DRIFT  # one verify a second
    idle_h = res[0][0] / DRIFT * 3600
    print(f"   per verify: {per_verify:.3f} ms CPU")
    print(f"   per hour: {per_verify * 60:.1f} ms at the default 60 s, {per_verify * 3600:.0f} ms at 1 s "
          f"(the daemon without the timer: {idle_h:.0f} ms/h)")
    summary.append(("drift timer CPU per hour", f"{per_verify * 60:.1f} ms at 60 s (default), {per_verify * 3600:.0f} ms at 1 s",
                    f"{per_verify * 1000:.0f} us per verify; idle without it {idle_h:.0f} ms/h"))

    # --- 5. TuneD ------------------------------------------------------------------------------
    print("\n5. TuneD")
    tuned = shutil.which("tuned")
    tuned_adm = shutil.which("tuned-adm")
    running = [d for d in glob.glob("/proc/[0-9]*/cmdline")
               if b"/usr/sbin/tuned" in open(d, "rb").read().split(b"\0")[:2]] if tuned else []
    tuned_ok = False
    if not DO_TUNED:
        print("   skipped (TUNED=0)")
    elif not tuned or not tuned_adm:
        print("   skipped: tuned is not installed (apt-get install tuned)")
    elif os.geteuid() != 0:
        print("   skipped: needs root")
    elif running:
        print(f"   skipped: a tuned already runs ({', '.join(r.split('/')[2] for r in running)})")
    else:
        ver = subprocess.run([tuned, "--version"], capture_output=True, text=True)
        print(f"   {(ver.stdout or ver.stderr).strip()}, foreground (`tuned --profile topotune-bench-noop`), "
              "its own private bus as the system bus, no polkitd (root's calls pass its fallback)")
        saved = {}
        for f in ("/etc/tuned/active_profile", "/etc/tuned/profile_mode"):
            saved[f] = open(f, "rb").read() if os.path.exists(f) else None

        def restore_tuned_files(saved=saved):
            for f, data in saved.items():
                if data is None:
                    if os.path.exists(f):
                        os.unlink(f)
                else:
                    with open(f, "wb") as fh:
                        fh.write(data)
            shutil.rmtree("/etc/tuned/topotune-bench-noop", ignore_errors=True)
        restore.append(restore_tuned_files)
        os.makedirs("/etc/tuned/topotune-bench-noop", exist_ok=True)
        with open("/etc/tuned/topotune-bench-noop/tuned.conf", "w") as f:
            f.write("[main]\nsummary=topotune bench: a profile that tunes nothing\n")
        taddr = start_bus("tuned-bus")
        tenv = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=taddr)
        import dbus
        tbus = dbus.bus.BusConnection(taddr)

        def start_tuned():
            """tuned, timed to its 'static tuning ... applied' log line and to its first D-Bus answer."""
            marks = {}
            t0 = time.perf_counter()
            p = spawn([tuned, "--profile", "topotune-bench-noop"], env=tenv,
                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            tail = []

            def reader():
                for line in p.stderr:
                    tail.append(line)
                    if b"static tuning from profile" in line and "log" not in marks:
                        marks["log"] = time.perf_counter() - t0
            th = threading.Thread(target=reader, daemon=True)
            th.start()
            while time.perf_counter() - t0 < 60:
                if p.poll() is not None:
                    raise RuntimeError(f"tuned exited {p.returncode}: " + b"".join(tail[-20:]).decode(errors="replace"))
                try:
                    tbus.call_blocking("com.redhat.tuned", "/Tuned", "com.redhat.tuned.control",
                                       "active_profile", "", (), timeout=30)
                    marks["dbus"] = time.perf_counter() - t0
                    break
                except dbus.exceptions.DBusException:
                    time.sleep(0.005)
            else:
                raise RuntimeError("tuned did not answer on D-Bus in 60 s: " + b"".join(tail[-20:]).decode(errors="replace"))
            for _ in range(500):
                if "log" in marks:
                    break
                time.sleep(0.01)
            return p, marks, tail

        try:
            logs, answers, cpus = [], [], []
            for i in range(2 + RUNS):
                p, marks, _ = start_tuned()
                c = cpu_ns(p.pid) / 1e6
                stop(p)
                if i >= 2:
                    answers.append(marks["dbus"] * 1000)
                    cpus.append(c)
                    if "log" in marks:
                        logs.append(marks["log"] * 1000)
            print(f"   start-up, ms, median (min-max) of {RUNS}: to 'static tuning ... applied' "
                  f"{med_range(logs) if logs else 'not logged'}; to the first D-Bus answer (active_profile) "
                  f"{med_range(answers)}; CPU to that answer {med_range(cpus)}")
            summary.append(("TuneD start-up to first D-Bus answer", f"{med_range(answers)} ms",
                            f"{statistics.median(cpus):.0f} ms CPU; log line 'static tuning applied' at "
                            f"{statistics.median(logs):.0f} ms" if logs else ""))

            # RSS and idle CPU, then status calls interleaved with topotunectl status
            p, _, _ = start_tuned()
            tp, _ = start_daemon(trees[0][1], addr, log)
            h0, r0 = status_kb(p.pid, "VmHWM"), status_kb(p.pid, "VmRSS")
            c0 = cpu_ns(p.pid)
            tc0 = cpu_ns(tp.pid)
            time.sleep(IDLE)
            c1 = cpu_ns(p.pid)
            tc1 = cpu_ns(tp.pid)
            h1, r1 = status_kb(p.pid, "VmHWM"), status_kb(p.pid, "VmRSS")
            print(f"   memory, KiB: VmHWM {h0} at start, VmRSS {r0} at start, {r1} after {IDLE:.0f} s idle "
                  f"(VmHWM {h1}); CPU while idle {(c1 - c0) / 1e6:.1f} ms "
                  f"(topotuned on {trees[0][0]} in the same {IDLE:.0f} s: {(tc1 - tc0) / 1e6:.2f} ms)")
            summary.append(("TuneD RSS", f"peak (VmHWM) {h1 / 1024:.1f} MiB", f"steady {r1 / 1024:.1f} MiB"))
            summary.append((f"idle CPU over {IDLE:.0f} s, TuneD vs topotuned",
                            f"TuneD {(c1 - c0) / 1e6:.1f} ms", f"topotuned {(tc1 - tc0) / 1e6:.2f} ms"))
            ta, tt = [], []
            for i in range(2 + STATUS_CALLS):
                a = run_wall([tuned_adm, "active"], e=tenv)
                b = run_wall([ctl, "--bus-address", addr, "status"])
                if i >= 2:
                    ta.append(a)
                    tt.append(b)
            print(f"   status call, whole process, ms, median (min-max) of {STATUS_CALLS}, taking turns: "
                  f"`tuned-adm active` {med_range(ta)}; `topotunectl --bus-address ADDR status` "
                  f"({trees[0][0]}) {med_range(tt)}")
            summary.append(("status call (whole process)", f"topotunectl status {med_range(tt)} ms",
                            f"tuned-adm active {med_range(ta)} ms"))
            stop(tp)
            stop(p)
            tuned_ok = True
        except RuntimeError as e:
            print(f"   TuneD could not be measured: {e}")

    print("\nSummary (for the README):")
    print("| what | figure | also |")
    print("|---|---|---|")
    for row in summary:
        print("| " + " | ".join(row) + " |")
finally:
    cleanup()
PY
