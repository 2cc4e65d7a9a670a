#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Reliability stress: topotuned on a private dbus-daemon against a generated
# sysroot, killed, hammered and instrumented. Prints figures; asserts nothing
# fatal, but ends with one summary line ("stress: OK ..." or "stress: FAILED ...")
# and exits 1 when something failed.
#
#   bench/stress.sh [TOPOTUNED [TOPOTUNECTL [TOPOTUNED_ASAN]]]
#       defaults: build/agent/service/topotuned, build/agent/cli/topotunectl,
#                 build-asan/agent/service/topotuned
#
#  1. kill -9 trials on small-2s-4n (patched kernel; 32 CPUs, 4 nodes, SMT):
#     a byte-exact snapshot of the whole tree (every path, its type and mode,
#     regular files' bytes, symlinks' targets) after one clean start/stop;
#     then per trial: start topotuned, drive it (SetProfile of the five
#     shipped profiles, Apply, Revert, Reload; random order), SIGKILL it, start
#     it again (it recovers from the write-ahead record), stop it (SIGTERM;
#     rollback = on-exit) and compare the tree with the snapshot. Kinds:
#       delay   kill after a random delay (0-KILL_MAX_MS from the spawn);
#       double  as delay, then the restart is killed during its recovery
#               (strace: at its Kth mutating syscall, K random 1-8; without
#               strace after a random 0-30 ms) before the final start/stop;
#       syscall strace -e inject=NAME:signal=KILL:when=N, for every mutating
#               syscall (write/pwrite64/rename*/unlink*/mkdir*/rmdir/
#               ftruncate/fsync/fdatasync/symlink*, and openat for writing) that
#               a fixed scenario (start, SetProfile latency, hpc, Revert,
#               Apply, SetProfile throughput, SIGTERM) makes under the root.
#  2. concurrent clients: CLIENTS processes (python3-dbus, one connection
#     each) calling SetProfile/Apply/Revert/Reload/Verify/Get/GetAll/Plan/
#     GetCpuDomains for CLIENT_SECS; counts calls, replies, named errors and
#     lost calls (no reply in CALL_TIMEOUT s); then the daemon must be alive,
#     Verify() after a final Apply in sync, and SIGTERM must restore the tree.
#  3. valgrind (memcheck, --leak-check=full) and the ASan+UBSan build, each
#     through one apply/revert cycle of every profile and a stop.
#  4. the fuzz tier: tests/fuzz/run-fuzzers.sh FUZZ_SECS (0 skips it).
#
# Environment: TRIALS (delay + double trials, default 200; a third double),
# KILL_MAX_MS (default 400), SYSCALL_TRIALS (cap on the syscall sweep, default
# all; 0 skips), CLIENTS (8), CLIENT_SECS (60), CALL_TIMEOUT (60), VALGRIND
# (1), ASAN (1), FUZZ_SECS (60 per target; 0 skips), SEED (random), SPEC
# (small-2s-4n), WORK (a new directory below /dev/shm, removed unless KEEP=1),
# NICE (0). Needs root, dbus-daemon, busctl, /usr/bin/python3 with
# python3-dbus; strace and valgrind when present. Every process it starts is
# stopped by its pid at the end, also on error or Ctrl-C.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
daemon=$(readlink -f "${1:-$src/build/agent/service/topotuned}")
ctl=$(readlink -f "${2:-$src/build/agent/cli/topotunectl}")
asan=$(readlink -f "${3:-$src/build-asan/agent/service/topotuned}")
for f in "$daemon" "$ctl"; do
	[ -x "$f" ] || { echo "stress: $f is missing (meson setup build && ninja -C build)" >&2; exit 2; }
done
for c in dbus-daemon busctl; do
	command -v "$c" >/dev/null || { echo "stress: $c is needed" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "stress: needs root" >&2; exit 2; }
py=/usr/bin/python3
"$py" -c 'import dbus' 2>/dev/null || { echo "stress: $py lacks python3-dbus" >&2; exit 2; }
renice -n "${NICE:-0}" $$ >/dev/null 2>&1

exec "$py" - "$src" "$daemon" "$ctl" "$asan" <<'PY'
import faulthandler, json, os, random, re, shutil, signal, subprocess, sys, tempfile, threading, time
import dbus

src, daemon, ctl, asan = sys.argv[1:5]
env = os.environ.get
TRIALS = int(env("TRIALS", "200"))
KILL_MAX = float(env("KILL_MAX_MS", "400")) / 1000
SYSCALL_TRIALS = env("SYSCALL_TRIALS", "all")
CLIENTS = int(env("CLIENTS", "8"))
CLIENT_SECS = float(env("CLIENT_SECS", "60"))
CALL_TIMEOUT = float(env("CALL_TIMEOUT", "60"))
DO_VALGRIND = env("VALGRIND", "1") == "1"
DO_ASAN = env("ASAN", "1") == "1"
FUZZ_SECS = int(env("FUZZ_SECS", "60"))
SEED = int(env("SEED", str(random.SystemRandom().randrange(1 << 31))))
SPEC = env("SPEC", "small-2s-4n")
rng = random.Random(SEED)
work = env("WORK") or tempfile.mkdtemp(prefix="topotune-stress-", dir="/dev/shm")
os.makedirs(work, exist_ok=True)
os.chmod(work, 0o755)
NAME, OPATH, IFACE = "org.topotune1", "/org/topotune1", "org.topotune1.Manager"
PROPS = "org.freedesktop.DBus.Properties"
PROFILES = ["balanced", "latency", "hpc", "throughput", "database"]
strace = shutil.which("strace")
valgrind = shutil.which("valgrind")

live = []            # Popen objects still to stop
summary = []         # (part, figure) rows
problems = []        # what failed, for the summary line
t_start = time.time()


def out(s=""):
    print(s, flush=True)


def cleanup():
    for p in reversed(live):
        if p.poll() is None:
            kids = children(p.pid)
            p.terminate()
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            for c in kids:   # a tracee strace left behind
                try:
                    os.kill(c, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    live.clear()
    if env("KEEP", "0") != "1":
        shutil.rmtree(work, ignore_errors=True)


def on_signal(sig, _):
    raise SystemExit(128 + sig)


signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGINT, on_signal)
faulthandler.register(signal.SIGUSR1)   # kill -USR1 PID: where it is


def spawn(argv, **kw):
    kw.setdefault("stdin", subprocess.DEVNULL)
    p = subprocess.Popen(argv, **kw)
    live.append(p)
    return p


def reap(p):
    if p in live:
        live.remove(p)


# --- tree, snapshot ------------------------------------------------------------------
def make_tree(name):
    root = os.path.join(work, name)
    subprocess.run([sys.executable, os.path.join(src, "tests/sysroot/gen-sysroot.py"), "-q",
                    "--set", "kernel.patched=yes", SPEC, root], check=True)
    shutil.copytree(os.path.join(src, "conf/profiles"), os.path.join(root, "usr/lib/topotune/profiles"))
    shutil.copytree(os.path.join(src, "conf/hardware.d"), os.path.join(root, "usr/lib/topotune/hardware.d"))
    os.makedirs(os.path.join(root, "etc/topotune/topotune.conf.d"), exist_ok=True)
    shutil.copy(os.path.join(src, "conf/topotune.conf"), os.path.join(root, "etc/topotune/"))
    with open(os.path.join(root, "etc/topotune/topotune.conf.d/50-stress.conf"), "w") as f:
        f.write("[daemon]\nverify_interval = 0\n")
    # /run/topotune as topotune.tmpfiles and the unit's RuntimeDirectory= make it.
    os.makedirs(os.path.join(root, "run/topotune"), mode=0o700)
    os.chmod(os.path.join(root, "run/topotune"), 0o700)
    # What systemd and the kernel would have for the isolation slice (as tests/dbus does).
    d = os.path.join(root, "sys/fs/cgroup/topotune.slice")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cpuset.cpus"), "w") as f:
        f.write("\n")
    with open(os.path.join(d, "cpuset.cpus.partition"), "w") as f:
        f.write("member\n")
    return root


def snapshot(root):
    """Every path under root: (type+mode, bytes | link target | None)."""
    snap = {}
    for dp, dns, fns in os.walk(root):
        for n in dns + fns:
            p = os.path.join(dp, n)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                snap[rel] = (st.st_mode, "->" + os.readlink(p))
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    data = f.read()
                # cpuset.cpus.partition is rendered by the kernel ("member\n"); the
                # applier writes back the mode word only (tests/dbus does the same).
                if rel.endswith("cpuset.cpus.partition"):
                    data = data.rstrip(b"\n")
                snap[rel] = (st.st_mode, data)
            else:
                snap[rel] = (st.st_mode, None)
    return snap


def snap_diff(a, b, limit=20):
    lines = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            def show(v):
                if v is None:
                    return "<absent>"
                mode, data = v
                d = data if isinstance(data, str) or data is None else data[:80]
                return f"mode {mode:o} {d!r}"
            lines.append(f"{k}: {show(a.get(k))} -> {show(b.get(k))}")
    return lines[:limit], len(lines)


# --- bus and daemon ----------------------------------------------------------------
def start_bus():
    sock = os.path.join(work, "bus.sock")
    conf = os.path.join(work, "bus.conf")
    with open(os.path.join(src, "tests/private-bus.conf")) as f:
        text = f.read().replace("@ADDRESS@", "unix:path=" + sock)
    with open(conf, "w") as f:
        f.write(text)
    spawn(["dbus-daemon", "--nofork", "--nopidfile", "--config-file", conf],
          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(500):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    else:
        raise SystemExit("stress: dbus-daemon did not create its socket")
    return "unix:path=" + sock


def mgr():
    return dbus.Interface(bus.get_object(NAME, OPATH, introspect=False), IFACE)


def prop(p, timeout=CALL_TIMEOUT):
    return bus.get_object(NAME, OPATH, introspect=False).Get(IFACE, p, dbus_interface=PROPS, timeout=timeout)


def has_owner():
    try:
        return bool(bus.name_has_owner(NAME))
    except dbus.exceptions.DBusException:
        return False


def wait_gone(timeout=15):
    end = time.time() + timeout
    while time.time() < end and has_owner():
        time.sleep(0.01)


def owner_pid():
    try:
        return int(bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                     "GetConnectionUnixProcessID", "s", (NAME,)))
    except dbus.exceptions.DBusException:
        return None


def daemon_pid(p):
    """topotuned's pid: p's, or its child's when p is strace."""
    if os.path.basename(p.args[0]) == "strace":
        for _ in range(1000):   # strace forks a probe child first: wait for the exec of topotuned
            for c in children(p.pid):
                try:
                    if b"--root" in open(f"/proc/{c}/cmdline", "rb").read():
                        return c
                except OSError:
                    pass
            if p.poll() is not None:
                return None
            time.sleep(0.01)
        return None
    return p.pid


def alive(pid):
    """pid runs (not gone, not a zombie strace has yet to reap)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, TypeError):
        return False


def wait_ready(p, timeout=120):
    """Our topotuned owns the name and answered State (the first apply is done then)."""
    end = time.time() + timeout
    pid = daemon_pid(p)
    while time.time() < end:
        if p.poll() is not None or not alive(pid):
            return False
        if has_owner() and owner_pid() == pid:
            try:
                prop("State", timeout=max(1, end - time.time()))
                return True
            except dbus.exceptions.DBusException:
                if p.poll() is not None:
                    return False
        time.sleep(0.01)
    return False


def start(root, log, prefix=(), binary=None, extra_env=None):
    wait_gone()
    o = owner_pid() if has_owner() else None
    if o:   # never expected: a daemon left over would answer for the next one
        problems.append(f"harness: pid {o} still owned {NAME} before a start")
        if work.encode() in open(f"/proc/{o}/cmdline", "rb").read():
            os.kill(o, signal.SIGKILL)
            wait_gone()
    argv = list(prefix) + [binary or daemon, "--root", root, "--bus-address", ADDR, "--no-systemd"]
    e = dict(os.environ, **(extra_env or {}))
    lf = open(log, "ab")
    p = spawn(argv, stdout=lf, stderr=lf, env=e)
    lf.close()
    return p


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def hard_kill(p):
    """SIGKILL p and what it runs (strace's tracee: killing strace alone detaches it, alive)."""
    for c in children(p.pid):
        try:
            os.kill(c, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if p.poll() is None:
        p.kill()
    p.wait()


def signal_daemon(p, sig):
    pid = daemon_pid(p)
    if pid and p.poll() is None:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def stop(p, sig=signal.SIGTERM, timeout=60):
    if p.poll() is None:
        signal_daemon(p, sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            hard_kill(p)
    reap(p)
    wait_gone()
    return p.returncode


def drive(p, log_calls=None, limit=30):
    """Mutating calls in a random order until the daemon p dies (at most limit s)."""
    n = 0
    end = time.time() + limit
    while p.poll() is None and time.time() < end:
        r = rng.random()
        try:
            if r < 0.55:
                mgr().SetProfile(rng.choice(PROFILES), False, timeout=CALL_TIMEOUT)
            elif r < 0.7:
                mgr().Apply(False, timeout=CALL_TIMEOUT)
            elif r < 0.85:
                mgr().Revert(False, timeout=CALL_TIMEOUT)
            else:
                mgr().Reload(timeout=CALL_TIMEOUT)
            n += 1
        except dbus.exceptions.DBusException as e:
            if not has_owner():
                break
            if log_calls is not None:
                log_calls.append(e.get_dbus_name())
            n += 1
    return n


def record_exists(root):
    return os.path.exists(os.path.join(root, "run/topotune/state"))


def final_check(root, ref, log):
    """Start again (recovery), stop, compare. Returns (started, rc, reasons, diff, ndiff)."""
    p = start(root, log)
    ok = wait_ready(p)
    reasons = ""
    if ok:
        try:
            reasons = "; ".join(str(s) for s in prop("StateReasons")) + " | state=" + str(prop("State"))
        except dbus.exceptions.DBusException as e:
            reasons = "StateReasons: " + str(e)
    rc = stop(p)
    diff, nd = snap_diff(ref, snapshot(root))
    return ok, rc, reasons, diff, nd


MUTATING = ["write", "pwrite64", "writev", "rename", "renameat", "renameat2", "unlink", "unlinkat",
            "mkdir", "mkdirat", "rmdir", "ftruncate", "truncate", "fsync", "fdatasync", "symlink",
            "symlinkat", "link", "linkat", "openat"]


def kill_trials(root, ref):
    log = os.path.join(work, "topotuned-kill.log")
    res = {"delay": [0, 0], "double": [0, 0], "syscall": [0, 0]}   # trials, mismatches
    failed_restarts = []
    bad_rc = []
    degraded = 0
    first_mismatch = []
    paths = {}   # path -> trials in which it differed
    records_at_kill = 0
    double_with_record = 0

    def judge(kind, label, started, rc, reasons, diff, nd):
        nonlocal degraded
        res[kind][0] += 1
        if not started:
            failed_restarts.append(f"{label}: {reasons}")
        if rc != 0:
            bad_rc.append(f"{label}: exit {rc}")
        if "degraded" in reasons:
            degraded += 1
        if nd:
            res[kind][1] += 1
            for l in diff:
                k = l.split(":", 1)[0]
                paths[k] = paths.get(k, 0) + 1
            if not first_mismatch:
                first_mismatch.extend([f"{label} ({nd} paths differ):"] + diff)

    n_double = TRIALS // 3
    kinds = ["delay"] * (TRIALS - n_double) + ["double"] * n_double
    rng.shuffle(kinds)
    t0 = time.time()
    for i, kind in enumerate(kinds):
        delay = rng.uniform(0, KILL_MAX)
        p = start(root, log)
        th = threading.Thread(target=lambda: (time.sleep(delay), p.poll() is None and p.send_signal(signal.SIGKILL)))
        th.start()
        if wait_ready(p, timeout=delay + 5) and p.poll() is None:
            drive(p)
        th.join()
        p.wait()
        reap(p)
        wait_gone()
        rec = record_exists(root)
        records_at_kill += rec
        label = f"{kind} #{i} (kill at {delay * 1000:.0f} ms, record {'left' if rec else 'absent'})"
        if kind == "double":
            double_with_record += rec
            if strace:
                k = rng.randint(1, 8)
                p = start(root, log, prefix=[strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=" + ",".join(MUTATING),
                                             "-e", f"inject={','.join(MUTATING)}:signal=KILL:when={k}"])
                label += f", restart killed at its mutating syscall #{k}"
            else:
                d2 = rng.uniform(0, 0.03)
                p = start(root, log)
                time.sleep(d2)
                p.send_signal(signal.SIGKILL)
                label += f", restart killed at {d2 * 1000:.0f} ms"
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:   # got through without a kill: stop it the hard way
                hard_kill(p)
            reap(p)
        judge(kind, label, *final_check(root, ref, log))
        if (i + 1) % 25 == 0:
            out(f"   ... {i + 1}/{len(kinds)} random trials, {time.time() - t0:.0f} s, "
                f"mismatches {res['delay'][1] + res['double'][1]}")
    t_random = time.time() - t0

    # --- every mutating syscall of a fixed scenario -----------------------------------------
    hit = {}
    if strace and SYSCALL_TRIALS != "0":
        def scenario(p, ready_timeout=120):
            ready = wait_ready(p, timeout=ready_timeout)
            if env("DEBUG") and not ready:
                out(f"   scenario: not ready: pid {daemon_pid(p)} alive {alive(daemon_pid(p))} owner {owner_pid()}")
            if ready and p.poll() is None:
                for call in (lambda: mgr().SetProfile("latency", False, timeout=CALL_TIMEOUT),
                             lambda: mgr().SetProfile("hpc", False, timeout=CALL_TIMEOUT),
                             lambda: mgr().Revert(False, timeout=CALL_TIMEOUT),
                             lambda: mgr().Apply(False, timeout=CALL_TIMEOUT),
                             lambda: mgr().SetProfile("throughput", False, timeout=CALL_TIMEOUT)):
                    try:
                        call()
                    except dbus.exceptions.DBusException as e:
                        if env("DEBUG"):
                            out(f"   scenario: {e.get_dbus_name()}: {e.get_dbus_message()}")
                        break
            signal_daemon(p, signal.SIGTERM)
            pid = daemon_pid(p)
            end = time.time() + 60
            while alive(pid) and time.time() < end:
                time.sleep(0.01)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                hard_kill(p)
            reap(p)
            wait_gone()

        fdcalls = ("write", "pwrite64", "writev", "fsync", "fdatasync", "ftruncate")

        def under_root(name, args):
            """The path under root a mutating syscall acts on, or None."""
            if name in fdcalls:
                m = re.match(r"\d+<" + re.escape(root) + r"([^>]*)>", args)
                return (m.group(1) or "/") if m else None
            if name == "openat" and not re.search(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC", args):
                return None
            got = re.findall(r"<" + re.escape(root) + r"([^>]*)>(?:, \"([^\"]*)\")?", args)
            if got:
                return os.path.join(got[-1][0] or "/", got[-1][1])
            got = re.findall(re.escape(root) + r"([^>\",]*)", args)
            return got[-1] if got else None

        tr = os.path.join(work, "discover.strace")
        discovered = False
        for attempt in range(3):   # a start under strace that did not get ready is tried again
            p = start(root, log, prefix=[strace, "-f", "-qq", "-y", "-s", "64", "-o", tr, "-e", "trace=" + ",".join(MUTATING)])
            scenario(p, ready_timeout=300)   # every syscall traced: slow on a loaded machine
            if os.path.exists(tr) and "SetProfile" in open(log, errors="replace").read().rsplit("Ready:", 1)[-1]:
                discovered = True
                break
            out("   syscall sweep: the scenario under strace did not run; again")
        if not discovered:
            # A partial trace would sweep a few syscalls and look like a pass.
            out("   syscall sweep: the scenario under strace never ran in 3 starts; no sweep")
            problems.append("syscall sweep: the scenario under strace never ran (3 starts)")
            tr = os.devnull
        nd = snap_diff(ref, snapshot(root))[1]
        counts, targets, tids = {}, [], set()
        rx = re.compile(r"^(\d+)\s+(\w+)\((.*)$")
        for line in open(tr, errors="replace"):
            m = rx.match(line)
            if not m or m.group(2) not in MUTATING:
                continue
            tid, name, args = m.groups()
            tids.add(tid)
            key = (tid, name)
            counts[key] = counts.get(key, 0) + 1
            path = under_root(name, args)
            if path is None:
                continue   # stderr, the bus socket, a read-only open
            targets.append((tid, name, counts[key], path))
        out(f"   syscall sweep: the scenario (start, SetProfile latency, hpc, Revert, Apply, SetProfile "
            f"throughput, SIGTERM) makes {len(targets)} mutating syscalls under the root "
            f"({', '.join(f'{n} {sum(1 for t in targets if t[1] == n)}' for n in sorted({t[1] for t in targets}))}); "
            f"{len(tids)} thread(s); the untouched run left the tree {'as it was' if not nd else 'CHANGED'}")
        if len(tids) > 1:
            out("   (more than one thread: the per-thread invocation numbers below are for the main one)")
        if SYSCALL_TRIALS != "all":
            targets = targets[:int(SYSCALL_TRIALS)]
        t1 = time.time()
        confirmed = 0
        for j, (tid, name, nth, path) in enumerate(targets):
            tj = time.time()
            tl = os.path.join(work, "inject.strace")
            p = start(root, log, prefix=[strace, "-f", "-qq", "-y", "-o", tl, "-e", f"trace={name}",
                                         "-e", f"inject={name}:signal=KILL:when={nth}"])
            scenario(p)
            last, text = "", ""
            try:
                with open(tl, errors="replace") as f:
                    text = f.read()
                lines = [l for l in text.splitlines() if re.match(r"^\d+\s+" + name + r"\(", l)]
                last = lines[-1] if lines else ""
            except OSError:
                pass
            killed = "+++ killed by SIGKILL +++" in text
            confirmed += killed
            hit_path = under_root(name, last.split("(", 1)[1]) if "(" in last else None
            hit_path = hit_path or "?"
            hit[(name, hit_path)] = hit.get((name, hit_path), 0) + 1
            label = f"syscall #{j} ({name} #{nth} on {path}; {'killed' if killed else 'NOT killed'} at {name} on {hit_path})"
            if not killed:
                res["syscall"][0] += 0
            tk = time.time()
            judge("syscall", label, *final_check(root, ref, log))
            if env("DEBUG"):
                out(f"   {label}: {tk - tj:.1f} s + {time.time() - tk:.1f} s")
            if (j + 1) % 25 == 0:
                out(f"   ... {j + 1}/{len(targets)} syscall trials, {time.time() - t1:.0f} s, mismatches {res['syscall'][1]}")
        t_sys = time.time() - t1
    else:
        t_sys = confirmed = 0
        out("   syscall sweep skipped: " + ("strace not found" if not strace else "SYSCALL_TRIALS=0"))

    total = sum(v[0] for v in res.values())
    mism = sum(v[1] for v in res.values())
    out(f"   random-delay kills: {res['delay'][0]} trials, {res['delay'][1]} mismatches")
    out(f"   double kills (restart killed during recovery): {res['double'][0]} trials, {res['double'][1]} mismatches; "
        f"{double_with_record} of them had a record to recover when the restart was killed")
    out(f"   (random trials: a record was left by {records_at_kill} of {len(kinds)} first kills; {t_random:.0f} s)")
    if res["syscall"][0]:
        out(f"   killed at a mutating syscall: {res['syscall'][0]} trials, {res['syscall'][1]} mismatches, "
            f"{len(hit)} distinct (syscall, path) points; the kill is in strace's log in {confirmed} of them; {t_sys:.0f} s")
        for (name, path), c in sorted(hit.items(), key=lambda kv: kv[0][1])[:60]:
            out(f"      {name:<10} {path}  x{c}")
    out(f"   total: {total} trials, {mism} trees not byte-identical, {len(failed_restarts)} restarts failed, "
        f"{len(bad_rc)} stops not exit 0, {degraded} restarts degraded")
    if paths:
        out("   paths that differed: " + ", ".join(f"{k} ({v} trials)" for k, v in sorted(paths.items())))
    for l in first_mismatch:
        out("   MISMATCH " + l)
    for l in failed_restarts[:5]:
        out("   RESTART FAILED " + l)
    for l in bad_rc[:5]:
        out("   BAD EXIT " + l)
    summary.append(("kill -9 trials", f"{total} trials ({res['delay'][0]} random delay, {res['double'][0]} double "
                    f"kills during recovery, {res['syscall'][0]} at each mutating syscall): {mism} mismatches, "
                    f"{len(failed_restarts)} failed restarts, {len(bad_rc)} bad exits"))
    if mism or failed_restarts or bad_rc:
        problems.append(f"kill -9: {mism} mismatches, {len(failed_restarts)} failed restarts, {len(bad_rc)} bad exits")


CLIENT = r'''
import dbus, json, random, sys, time
addr, secs, timeout, seed = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
bus = dbus.bus.BusConnection(addr)
obj = bus.get_object("org.topotune1", "/org/topotune1", introspect=False)
m = dbus.Interface(obj, "org.topotune1.Manager")
P = "org.freedesktop.DBus.Properties"
profiles = ["balanced", "latency", "hpc", "throughput", "database"]
calls = [("SetProfile", 5, lambda: m.SetProfile(rng.choice(profiles), False, timeout=timeout)),
         ("Apply", 2, lambda: m.Apply(False, timeout=timeout)),
         ("Revert", 2, lambda: m.Revert(False, timeout=timeout)),
         ("Reload", 1, lambda: m.Reload(timeout=timeout)),
         ("Verify", 3, lambda: m.Verify(timeout=timeout)),
         ("Get", 3, lambda: obj.Get("org.topotune1.Manager", rng.choice(["State", "ActiveProfile", "Settings",
                                    "StateReasons", "IsolatedCpus"]), dbus_interface=P, timeout=timeout)),
         ("GetAll", 1, lambda: obj.GetAll("org.topotune1.Manager", dbus_interface=P, timeout=timeout)),
         ("Plan", 1, lambda: m.Plan(rng.choice(profiles), timeout=timeout)),
         ("GetCpuDomains", 1, lambda: m.GetCpuDomains(dbus.UInt32(rng.randrange(40)), timeout=timeout))]
bag = [c for c in calls for _ in range(c[1])]
st = {"sent": 0, "ok": 0, "errors": {}, "lost": 0, "by": {}, "max_ms": 0.0}
end = time.time() + secs
while time.time() < end:
    name, _, fn = rng.choice(bag)
    st["sent"] += 1
    st["by"][name] = st["by"].get(name, 0) + 1
    t = time.time()
    try:
        fn()
        st["ok"] += 1
    except dbus.exceptions.DBusException as e:
        n = e.get_dbus_name() or "?"
        if n == "org.freedesktop.DBus.Error.NoReply":
            st["lost"] += 1
        else:
            k = name + ": " + n
            st["errors"][k] = st["errors"].get(k, 0) + 1
    st["max_ms"] = max(st["max_ms"], (time.time() - t) * 1000)
print(json.dumps(st))
'''


def play_kernel(root):
    cg = os.path.join(root, "sys/fs/cgroup")
    with open(os.path.join(cg, "topotune.slice/cpuset.cpus.partition")) as f:
        part = f.read().strip()
    cpus = ""
    if part == "isolated":
        with open(os.path.join(cg, "topotune.slice/cpuset.cpus")) as f:
            cpus = f.read().strip()
    with open(os.path.join(cg, "cpuset.cpus.isolated"), "w") as f:
        f.write(cpus + "\n")


def concurrent(root, ref):
    log = os.path.join(work, "topotuned-clients.log")
    cf = os.path.join(work, "client.py")
    with open(cf, "w") as f:
        f.write(CLIENT)
    p = start(root, log)
    if not wait_ready(p):
        problems.append("concurrent: the daemon did not start")
        out("   the daemon did not start")
        stop(p)
        return
    cl = [spawn([sys.executable, cf, ADDR, str(CLIENT_SECS), str(CALL_TIMEOUT), str(SEED + i)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(CLIENTS)]
    stats = []
    for c in cl:
        o, e = c.communicate()
        reap(c)
        try:
            stats.append(json.loads(o))
        except ValueError:
            problems.append("concurrent: a client died")
            out("   a client died: " + e[-500:])
    alive = p.poll() is None
    sent = sum(s["sent"] for s in stats)
    ok = sum(s["ok"] for s in stats)
    lost = sum(s["lost"] for s in stats)
    errs, by = {}, {}
    for s in stats:
        for k, v in s["errors"].items():
            errs[k] = errs.get(k, 0) + v
        for k, v in s["by"].items():
            by[k] = by.get(k, 0) + v
    nerr = sum(errs.values())
    out(f"   {len(stats)} clients x {CLIENT_SECS:.0f} s: {sent} calls sent, {ok + nerr} replies ({ok} success, "
        f"{nerr} named errors), {lost} lost (no reply in {CALL_TIMEOUT:.0f} s); slowest reply "
        f"{max((s['max_ms'] for s in stats), default=0):.0f} ms")
    out("   calls: " + ", ".join(f"{k} {v}" for k, v in sorted(by.items())))
    for k, v in sorted(errs.items()):
        out(f"   error {k}: {v}")
    verify = "?"
    if alive:
        try:
            # Plain files do not do what the kernel does: the root's cpuset.cpus.isolated lists
            # what a valid isolated partition isolates (tests/dbus writes it the same way). The
            # planner reads it, so without it "no isolation wanted" looks in sync after hpc.
            play_kernel(root)
            mgr().Apply(False, timeout=CALL_TIMEOUT)
            play_kernel(root)
            vok, mism = mgr().Verify(timeout=CALL_TIMEOUT)
            verify = f"Verify after a final Apply: ok={bool(vok)}, {len(mism)} mismatches " + \
                     (str([tuple(str(x) for x in m) for m in mism][:4]) if mism else "") + \
                     f"; State {prop('State')}, profile {prop('ActiveProfile')}"
            if not vok:
                problems.append("concurrent: Verify not in sync")
        except dbus.exceptions.DBusException as e:
            verify = f"final Apply/Verify failed: {e.get_dbus_name()}: {e.get_dbus_message()}"
            problems.append("concurrent: final Apply/Verify failed")
    out(f"   daemon alive after the clients: {alive}; {verify}")
    rc = stop(p)
    play_kernel(root)
    diff, nd = snap_diff(ref, snapshot(root))
    out(f"   SIGTERM: exit {rc}; tree {'byte-identical to the snapshot' if not nd else f'DIFFERS in {nd} paths'}")
    for l in diff:
        out("   MISMATCH " + l)
    if not alive or lost or rc != 0 or nd or len(stats) != CLIENTS:
        problems.append(f"concurrent: alive={alive} lost={lost} exit={rc} differing paths={nd}")
    summary.append(("concurrent clients", f"{sent} calls from {len(stats)} clients in {CLIENT_SECS:.0f} s: "
                    f"{ok} success, {nerr} named errors, {lost} lost; alive {alive}; stop exit {rc}; tree "
                    f"{'identical' if not nd else 'DIFFERS'}"))


def cycle(p):
    """One apply/revert round of every profile, the reading calls, a stop."""
    if not wait_ready(p, timeout=300):
        return False
    for pr in PROFILES:
        mgr().SetProfile(pr, False, timeout=300)
        mgr().Verify(timeout=300)
        mgr().Plan(pr, timeout=300)
    mgr().Revert(False, timeout=300)
    mgr().Apply(False, timeout=300)
    mgr().Reload(timeout=300)
    mgr().GetCpuDomains(dbus.UInt32(3), timeout=300)
    mgr().ListProfiles(timeout=300)
    bus.get_object(NAME, OPATH, introspect=False).GetAll(IFACE, dbus_interface=PROPS, timeout=300)
    for bad in ("../x", "", "nope"):
        try:
            mgr().SetProfile(bad, False, timeout=300)
        except dbus.exceptions.DBusException:
            pass
    return True


def sanitizers(root, ref):
    if DO_VALGRIND and valgrind:
        vlog = os.path.join(work, "valgrind.log")
        log = os.path.join(work, "topotuned-valgrind.log")
        p = start(root, log, prefix=[valgrind, "--quiet", "--leak-check=full", "--show-leak-kinds=all",
                                     "--errors-for-leak-kinds=definite,indirect", "--error-exitcode=99",
                                     "--track-fds=no", f"--log-file={vlog}"])
        t0 = time.time()
        try:
            done = cycle(p)
        except dbus.exceptions.DBusException as e:
            done = False
            out(f"   valgrind: a call failed: {e}")
        rc = stop(p, timeout=300)
        vtext = open(vlog, errors="replace").read() if os.path.exists(vlog) else ""
        # --quiet: the log holds only errors and the leak records that are errors.
        errs = len(re.findall(r"^==\d+== (Invalid|Conditional|Use of uninit|Syscall param|Mismatched|"
                              r"Source and destination|Argument)", vtext, re.M))
        leaks = re.findall(r"^==\d+== ([\d,]+ bytes in [\d,]+ blocks are (?:definitely|indirectly|possibly) lost)",
                           vtext, re.M)
        nd = snap_diff(ref, snapshot(root))[1]
        out(f"   valgrind {subprocess.run([valgrind, '--version'], capture_output=True, text=True).stdout.strip()}: "
            f"cycle {'done' if done else 'NOT done'} in {time.time() - t0:.0f} s, exit {rc} "
            f"(99 = errors), {errs} memory errors, {len(leaks)} leak records; tree "
            f"{'identical' if not nd else 'DIFFERS'}")
        for l in leaks[:5]:
            out("   leak: " + l)
        if vtext.strip():
            out("   valgrind log (head):\n" + "\n".join("      " + l for l in vtext.splitlines()[:40]))
        ok = done and rc == 0 and not errs and not leaks and not nd
        summary.append(("valgrind", f"{'clean' if ok else 'NOT clean'}: exit {rc}, {errs} errors, {len(leaks)} leaks"))
        if not ok:
            problems.append("valgrind not clean")
    else:
        out("   valgrind: skipped (" + ("VALGRIND=0" if not DO_VALGRIND else "not installed") + ")")
    if DO_ASAN and os.access(asan, os.X_OK):
        log = os.path.join(work, "topotuned-asan.log")
        open(log, "w").close()
        p = start(root, log, binary=asan,
                  extra_env={"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:exitcode=98",
                             "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"})
        try:
            done = cycle(p)
        except dbus.exceptions.DBusException as e:
            done = False
            out(f"   asan: a call failed: {e}")
        rc = stop(p, timeout=120)
        text = open(log, errors="replace").read()
        bad = re.findall(r"(ERROR: AddressSanitizer[^\n]*|ERROR: LeakSanitizer[^\n]*|runtime error:[^\n]*)", text)
        nd = snap_diff(ref, snapshot(root))[1]
        out(f"   ASan+UBSan build ({asan}): cycle {'done' if done else 'NOT done'}, exit {rc}, "
            f"{len(bad)} sanitizer reports; tree {'identical' if not nd else 'DIFFERS'}")
        for l in bad[:5]:
            out("   " + l)
        ok = done and rc == 0 and not bad and not nd
        summary.append(("ASan+UBSan", f"{'clean' if ok else 'NOT clean'}: exit {rc}, {len(bad)} reports"))
        if not ok:
            problems.append("ASan/UBSan not clean")
    else:
        out(f"   ASan: skipped ({'ASAN=0' if not DO_ASAN else asan + ' missing: meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false'})")


def fuzz():
    if FUZZ_SECS <= 0:
        out("   skipped (FUZZ_SECS=0)")
        return
    t0 = time.time()
    r = subprocess.run([os.path.join(src, "tests/fuzz/run-fuzzers.sh"), str(FUZZ_SECS)], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True)
    for l in r.stdout.splitlines():
        out("   " + l)
    m = re.search(r"^total: (\d+) executions, (\d+) crashes/leaks/timeouts/OOMs, (\d+) slow units", r.stdout, re.M)
    pf = re.search(r"^(\d+) passed, (\d+) failed", r.stdout, re.M)
    if m:
        summary.append(("fuzz", f"{int(m.group(1)):,} executions, {m.group(2)} crashes/leaks/timeouts/OOMs, "
                        f"{m.group(3)} slow units, {FUZZ_SECS} s per target ({time.time() - t0:.0f} s with the build)"))
    if r.returncode != 0 or not pf or pf.group(2) != "0":
        problems.append("fuzz: " + (pf.group(0) if pf else f"run-fuzzers.sh exit {r.returncode}"))
        out(r.stderr[-1500:])


try:
    out(f"stress: topotuned {daemon}; seed {SEED}; spec {SPEC} (patched kernel); work {work}")
    out(f"machine: {os.cpu_count()} CPUs, load average {' '.join(open('/proc/loadavg').read().split()[:3])}, "
        f"kernel {os.uname().release}; strace {'yes' if strace else 'no'}, valgrind {'yes' if valgrind else 'no'}")
    ADDR = start_bus()
    bus = dbus.bus.BusConnection(ADDR)
    root = make_tree("tree")
    pristine = snapshot(root)
    # A clean start and stop: the reference for every trial.
    p = start(root, os.path.join(work, "topotuned-clean.log"))
    ok = wait_ready(p)
    rc = stop(p)
    ref = snapshot(root)
    diff, nd = snap_diff(pristine, ref)
    out(f"\n0. Clean start/stop: started {ok}, exit {rc}; {len(ref)} paths; against the generated tree: "
        + ("byte-identical" if not nd else f"{nd} paths differ: " + "; ".join(diff)))
    if not ok or rc != 0:
        problems.append("the clean start/stop failed")

    out(f"\n1. kill -9 trials (TRIALS={TRIALS}, KILL_MAX_MS={KILL_MAX * 1000:.0f})")
    kill_trials(root, ref)
    out(f"\n2. Concurrent clients (CLIENTS={CLIENTS}, CLIENT_SECS={CLIENT_SECS:.0f})")
    concurrent(root, ref)
    out("\n3. valgrind and ASan+UBSan: every profile applied, verified and planned, Revert, Apply, Reload, reads, "
        "bad names, SIGTERM")
    sanitizers(root, ref)
    out(f"\n4. Fuzz tier: tests/fuzz/run-fuzzers.sh {FUZZ_SECS}")
    fuzz()
    out(f"\nload average at the end: {' '.join(open('/proc/loadavg').read().split()[:3])}; "
        f"{time.time() - t_start:.0f} s in all")
    out("\nSummary:")
    for k, v in summary:
        out(f"  {k}: {v}")
    if problems:
        out("stress: FAILED: " + "; ".join(problems))
    else:
        out(f"stress: OK: {'; '.join(f'{k}: {v}' for k, v in summary)}")
    rc_all = 1 if problems else 0
finally:
    cleanup()
sys.exit(rc_all)
PY
