#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""topotuned on the live kernel: workload switching through the proc connector.

Usage: test-live.py TOPOTUNED

Runs `topotuned --root / --config-root CONF --bus-address ADDR --no-systemd
--workload-hold 1` on a private dbus-daemon. CONF holds profiles whose
[scheduler] and [isolation] are all `keep`, so the live system is never
written: the test asserts that the plans have no `set` step and that
/proc/sys/kernel, /sys/fs/cgroup (top level) and /run/topotune are the same
before and after. Profile `wl` has `[workload] comm = ttwl-XXXXXX` (a copy of
/bin/sleep; comm is at most 15 characters).

  - start the probe: ActiveProfile=wl, ActiveProfileReason=workload:comm:ttwl-XXXXXX (unique per run)
    arrive as PropertiesChanged; WorkloadRules counts the pid
  - stop it: after the hold-down (1 s) back to the configured profile, reason configured
  - 1,000 short-lived probe execs: at most one switch to wl and one back (Applied
    signals and ActiveProfile changes counted); the daemon's CPU time over the burst
  - in a new PID namespace the kernel does not answer the connector: State degraded,
    the reason in StateReasons, and the /proc rescan every --poll-interval still switches

Needs root, dbus-daemon and python3-dbus/python3-gi; skips (exit 77) without them or
when the proc connector is refused. Prints PASS/FAIL lines and "N passed, M failed".
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def private_bus_conf(address):
    """The test tiers' one private-bus configuration (tests/private-bus.conf)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "private-bus.conf")) as f:
        return f.read().replace("@ADDRESS@", address)


if len(sys.argv) != 2:
    print(__doc__)
    sys.exit(2)
TOPOTUNED = os.path.abspath(sys.argv[1])

try:
    import dbus
    import dbus.mainloop.glib
    from gi.repository import GLib
except ImportError as e:
    print(f"SKIP live tier: {e} (apt-get install python3-dbus python3-gi)")
    sys.exit(77)
if os.geteuid() != 0:
    print("SKIP live tier: needs root (the proc connector needs CAP_NET_ADMIN)")
    sys.exit(77)
if not shutil.which("dbus-daemon"):
    print("SKIP live tier: dbus-daemon not installed")
    sys.exit(77)

NAME, PATH, IFACE = "org.topotune1", "/org/topotune1", "org.topotune1.Manager"
# Unique per run: the rule sees every process on the machine, a concurrent run's probes too.
PROBE_COMM = f"ttwl-{os.getpid() & 0xffffff:06x}"   # comm: at most 15 characters
RULE = f"comm:{PROBE_COMM}"
BURST = int(os.environ.get("TOPOTUNE_LIVE_BURST", "1000"))
OVERRUN = 8000   # execs while the daemon is stopped: more than its 4 MiB socket buffer holds
passed = failed = 0
procs = []


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name}" + (f": {detail}" if detail else ""))
    sys.stdout.flush()
    return ok


base = tempfile.mkdtemp(prefix="topotune-live-")
SOCK = os.path.join(base, "bus.sock")
ADDR = f"unix:path={SOCK}"
CONF = os.path.join(base, "conf")
PROBE = os.path.join(base, "bin", PROBE_COMM)


def wr(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def log_text(log):
    with open(log, errors="replace") as f:
        return f.read()


def spawn(argv, log, **kw):
    f = open(log, "ab")
    p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, **kw)
    procs.append(p)
    return p


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    if os.environ.get("KEEP_TREE") != "1":
        shutil.rmtree(base, ignore_errors=True)


# --- what must not change on the host -------------------------------------------------
def watched_files():
    files = []
    for d in ("/proc/sys/kernel",):
        for fn in sorted(os.listdir(d)):
            if fn.startswith("sched_"):
                files.append(os.path.join(d, fn))
    for fn in ("cgroup.subtree_control", "cpuset.cpus.isolated", "cpuset.cpus.partition", "cpuset.cpus"):
        files.append(os.path.join("/sys/fs/cgroup", fn))
    files += ["/sys/kernel/debug/sched/features", "/run/topotune/state"]
    return files


def snapshot():
    snap = {}
    for p in watched_files():
        try:
            with open(p, "rb") as f:
                snap[p] = f.read()
        except OSError as e:
            snap[p] = f"<{e.strerror}>"
    try:
        snap["/sys/fs/cgroup/ (dirs)"] = sorted(e.name for e in os.scandir("/sys/fs/cgroup") if e.is_dir())
    except OSError:
        pass
    return snap


def snap_diff(a, b):
    return [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])   # utime + stime


# --- configuration: everything keep ------------------------------------------------------
KEEP = ("[scheduler]\nsmt_buddy_assist = keep\nrelax_domain_level = keep\n"
        "[isolation]\nisolated_cpus = keep\n")
wr(os.path.join(CONF, "etc/topotune/topotune.conf"), "[daemon]\nprofile = keepall\nverify_interval = 0\n")
wr(os.path.join(CONF, "usr/lib/topotune/profiles/keepall.ini"),
   "[profile]\ndescription = live test: change nothing\n" + KEEP)
wr(os.path.join(CONF, "usr/lib/topotune/profiles/wl.ini"),
   "[profile]\ndescription = live test: the probe runs\n" + KEEP + f"[workload]\ncomm = {PROBE_COMM}\n")
os.makedirs(os.path.dirname(PROBE))
shutil.copy(shutil.which("sleep") or "/bin/sleep", PROBE)

# --- the bus ------------------------------------------------------------------------------
wr(os.path.join(base, "bus.conf"), private_bus_conf(ADDR))

signals = []   # (time, kind, payload)


def on_props(iface, changed, invalidated, path=None):
    if iface == IFACE:
        signals.append((time.monotonic(), "props", {str(k): v for k, v in changed.items()},
                        [str(i) for i in invalidated]))


def on_applied(profile, changes):
    signals.append((time.monotonic(), "applied", str(profile), int(changes)))


def pump(seconds):
    ctx = GLib.MainContext.default()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        while ctx.pending():
            ctx.iteration(False)
        time.sleep(0.005)
    while ctx.pending():
        ctx.iteration(False)


def wait_for(pred, timeout):
    """Pump the bus until pred() holds; the time it took, or None."""
    ctx = GLib.MainContext.default()
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        while ctx.pending():
            ctx.iteration(False)
        if pred():
            return time.monotonic() - t0
        time.sleep(0.005)
    return None


def profile_changes(since):
    """(time, ActiveProfile, ActiveProfileReason) of every PropertiesChanged that carried them."""
    return [(t, str(p["ActiveProfile"]), str(p.get("ActiveProfileReason", "")))
            for t, kind, p, *_ in signals[since:] if kind == "props" and "ActiveProfile" in p]


def switches(since):
    """ActiveProfile transitions among the signals since @since."""
    out, last = [], None
    for _, p, _r in profile_changes(since):
        if p != last:
            out.append(p)
        last = p
    return out


def last_profile(since=0):
    ch = profile_changes(since)
    return ch[-1][1:] if ch else (None, None)


try:
    spawn(["dbus-daemon", "--nofork", "--nopidfile", "--config-file", os.path.join(base, "bus.conf")],
          os.path.join(base, "bus.log"))
    for _ in range(100):
        if os.path.exists(SOCK):
            break
        time.sleep(0.05)
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(ADDR)
    bus.add_signal_receiver(on_props, signal_name="PropertiesChanged",
                            dbus_interface="org.freedesktop.DBus.Properties", path=PATH)
    bus.add_signal_receiver(on_applied, signal_name="Applied", dbus_interface=IFACE, path=PATH)

    def prop(p):
        return bus.get_object(NAME, PATH).Get(IFACE, p, dbus_interface="org.freedesktop.DBus.Properties")

    def mgr():
        return dbus.Interface(bus.get_object(NAME, PATH), IFACE)

    def start_daemon(log, extra=(), prefix=()):
        argv = list(prefix) + [TOPOTUNED, "--root", "/", "--config-root", CONF, "--bus-address", ADDR,
                               "--no-systemd", "--workload-hold", "1"] + list(extra)
        p = spawn(argv, log)
        end = time.time() + 20
        while time.time() < end and p.poll() is None:
            if bus.name_has_owner(NAME):
                try:
                    prop("State")   # answered once the first apply is done
                    return p, True
                except dbus.exceptions.DBusException:
                    pass
            time.sleep(0.05)
        return p, False

    def stop_daemon(p):
        # Under unshare --fork, topotuned is its child; unshare exits with the child's status.
        try:
            with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        target = kids[0] if kids and os.path.basename(p.args[0]) == "unshare" else p.pid
        os.kill(target, signal.SIGTERM)
        try:
            rc = p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        end = time.time() + 10
        while time.time() < end and bus.name_has_owner(NAME):
            time.sleep(0.05)
        return rc

    before = snapshot()
    dlog = os.path.join(base, "topotuned.log")
    d, ok = start_daemon(dlog)
    if not ok:
        check("topotuned --root / --config-root starts", False, log_text(dlog)[-2000:])
        raise SystemExit(1)
    reasons = [str(s) for s in prop("StateReasons")]
    refused = [r for r in reasons if r.startswith("proc connector unavailable")]
    if refused:
        print(f"SKIP live tier: the proc connector is refused here: {refused[0]}")
        stop_daemon(d)
        cleanup()
        sys.exit(77)
    check("topotuned on the live root starts in the configured profile, State applied",
          str(prop("ActiveProfile")) == "keepall" and str(prop("ActiveProfileReason")) == "configured"
          and str(prop("State")) == "applied", f"{prop('ActiveProfile')} {prop('State')} {reasons}")
    rules = [tuple(str(x) for x in r) for r in prop("WorkloadRules")]
    check("WorkloadRules lists the rule, its profile and 0 matching pids", rules == [(RULE, "wl", "0")], str(rules))

    plans = {}
    for p in ("", "wl"):
        steps, _text = mgr().Plan(p)
        plans[p or "configured"] = [(str(s[0]), str(s[1])) for s in steps]
    check("the plans of both profiles have no 'set' step (the live system is never written)",
          all(a != "set" for steps in plans.values() for _, a in steps), str(plans))

    # --- one probe: switch, then back after the hold-down ---------------------------------
    mark = len(signals)
    t_start = time.monotonic()
    probe = subprocess.Popen([PROBE, "30"])
    took = wait_for(lambda: last_profile(mark) == ("wl", f"workload:{RULE}"), 10)
    check(f"probe started: PropertiesChanged ActiveProfile=wl, ActiveProfileReason=workload:comm:ttwl-PID",
          took is not None, str(profile_changes(mark)))
    print(f"# exec -> ActiveProfile=wl on the bus: {took * 1000:.1f} ms" if took is not None else "# no switch")
    rules = [tuple(str(x) for x in r) for r in prop("WorkloadRules")]
    check("WorkloadRules counts the running probe", rules == [(RULE, "wl", "1")], str(rules))
    check("... read through Get: ActiveProfile and ActiveProfileReason agree",
          str(prop("ActiveProfile")) == "wl" and str(prop("ActiveProfileReason")) == f"workload:{RULE}"
          and any(RULE in str(r) for r in prop("StateReasons")))
    check("WorkloadRules never travels in PropertiesChanged (counts move with every exec)",
          not any("WorkloadRules" in s[2] or "WorkloadRules" in s[3] for s in signals if s[1] == "props"))

    mark = len(signals)
    probe.kill()
    probe.wait()
    t_exit = time.monotonic()
    took = wait_for(lambda: last_profile(mark) == ("keepall", "configured"), 10)
    check("probe stopped: back to the configured profile, ActiveProfileReason=configured",
          took is not None, str(profile_changes(mark)))
    check("... not before the 1 s hold-down, and not much later", took is not None and 0.95 <= took <= 3.0,
          f"{took}")
    if took is not None:
        print(f"# exit -> ActiveProfile=keepall on the bus: {took * 1000:.0f} ms (hold-down 1000 ms)")
    rules = [tuple(str(x) for x in r) for r in prop("WorkloadRules")]
    check("WorkloadRules back to 0 pids", rules == [(RULE, "wl", "0")], str(rules))

    # --- a burst of short-lived probes ----------------------------------------------------
    pump(0.5)
    mark = len(signals)
    cpu0 = cpu_ticks(d.pid)
    t0 = time.monotonic()
    subprocess.run(["sh", "-c", f'i=0; while [ $i -lt {BURST} ]; do "{PROBE}" 0; i=$((i+1)); done'], check=True)
    burst_s = time.monotonic() - t0
    back = wait_for(lambda: last_profile(mark)[0] == "keepall" and time.monotonic() - t0 > burst_s + 1.2, 10)
    pump(1.5)   # anything late would show up now
    cpu1 = cpu_ticks(d.pid)
    hz = os.sysconf("SC_CLK_TCK")
    sw = switches(mark)
    applied = [s for s in signals[mark:] if s[1] == "applied"]
    n_props = sum(1 for s in signals[mark:] if s[1] == "props")
    cpu_ms = (cpu1 - cpu0) * 1000 / hz
    print(f"# burst of {BURST} execs of {PROBE_COMM} in {burst_s:.2f} s: switches {sw}, {len(applied)} Applied, "
          f"{n_props} PropertiesChanged, daemon CPU {cpu_ms:.0f} ms ({cpu_ms * 1000 / BURST:.0f} us per exec)")
    check(f"burst of {BURST} short-lived probes: at most one switch to wl and one back",
          back is not None and sw in ([], ["wl", "keepall"]) and len(applied) <= 2, f"{sw} applied={applied}")
    check("... no PropertiesChanged flood (at most one per switch)", n_props <= 2, f"{n_props}")
    check("... ends in the configured profile", str(prop("ActiveProfile")) == "keepall"
          and str(prop("ActiveProfileReason")) == "configured")

    # --- an overrun: the daemon stopped while execs pile up in its socket -------------------
    # ENOBUFS means events were lost, not that the source is broken: one log line, a
    # rescan of /proc (which finds the probe whose exec event was dropped), not degraded.
    mark = len(signals)
    d.send_signal(signal.SIGSTOP)
    loops = [subprocess.Popen(["sh", "-c", f'i=0; while [ $i -lt {OVERRUN // 4} ]; do "{PROBE}" 0; i=$((i+1)); done'])
             for _ in range(4)]
    for p in loops:
        p.wait()
    probe = subprocess.Popen([PROBE, "30"])   # its exec event comes after the queue is full
    time.sleep(0.2)
    d.send_signal(signal.SIGCONT)
    took = wait_for(lambda: last_profile(mark)[0] == "wl", 10)
    lost = log_text(dlog).count("Process events were lost")
    if lost == 0:
        print(f"SKIP overrun case: {OVERRUN} execs while stopped did not overrun the socket buffer")
    else:
        check(f"{OVERRUN} execs while the daemon is stopped: the overrun is logged once, /proc rescanned, "
              "the running probe found", lost == 1 and took is not None and str(prop("ActiveProfile")) == "wl",
              f"lost={lost} {profile_changes(mark)}")
        check("... not degraded (an overrun is not a failed source)", str(prop("State")) == "applied"
              and not any("unavailable" in str(r) for r in prop("StateReasons")), str(list(prop("StateReasons"))))
    probe.kill()
    probe.wait()
    wait_for(lambda: last_profile(mark)[0] == "keepall", 10)

    rc = stop_daemon(d)
    check("SIGTERM: exit 0", rc == 0, log_text(dlog)[-1500:])
    diff = snap_diff(before, snapshot())
    check("the live system is untouched: /proc/sys/kernel/sched_*, /sys/fs/cgroup, debugfs features, "
          "/run/topotune/state", not diff, str(diff))
    check("the daemon logged no change record", "Changed " not in log_text(dlog) and "Restored " not in log_text(dlog),
          log_text(dlog)[-1500:])

    # --- a connector that does not answer: degraded, /proc rescans ------------------------
    can_unshare = shutil.which("unshare") and subprocess.run(
        ["unshare", "--pid", "--fork", "--kill-child", "true"], capture_output=True).returncode == 0
    if can_unshare:
        nlog = os.path.join(base, "topotuned-pidns.log")
        mark = len(signals)
        d, ok = start_daemon(nlog, ["--poll-interval", "1"], ["unshare", "--pid", "--fork", "--kill-child"])
        reasons = [str(s) for s in prop("StateReasons")] if ok else []
        check("in a new PID namespace (the kernel does not ack the connector): State degraded, "
              "StateReasons says why and that /proc is rescanned",
              ok and str(prop("State")) == "degraded"
              and any(r.startswith("proc connector unavailable") and "rescanning /proc every 1 s" in r
                      for r in reasons), f"{reasons} {log_text(nlog)[-800:]}")
        check("... the reason is logged once", log_text(nlog).count("proc connector unavailable") == 1,
              log_text(nlog)[-800:])
        probe = subprocess.Popen([PROBE, "30"])
        took = wait_for(lambda: last_profile(mark) == ("wl", f"workload:{RULE}"), 5)
        check("... the rescan finds the probe: ActiveProfile=wl", took is not None, str(profile_changes(mark)))
        probe.kill()
        probe.wait()
        took = wait_for(lambda: last_profile(mark) == ("keepall", "configured"), 6)
        check("... and the configured profile after it exits", took is not None, str(profile_changes(mark)))
        check("... still degraded (State does not forget the lost source)", str(prop("State")) == "degraded")
        rc = stop_daemon(d)
        check("... SIGTERM: exit 0", rc == 0, log_text(nlog)[-1500:])
    else:
        print("SKIP degraded connector case: unshare --pid not available here")

    logs = "".join(log_text(os.path.join(base, f)) for f in os.listdir(base) if f.endswith(".log"))
    check("no sanitizer report", "Sanitizer" not in logs and "runtime error:" not in logs)
except SystemExit:
    pass
except Exception:
    import traceback
    traceback.print_exc()
    check("the live tier ran to its end", False, "exception above")
finally:
    cleanup()

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
