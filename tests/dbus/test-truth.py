#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every report reads what the kernel holds (issue 28).

Usage: test-truth.py TOPOTUNED TOPOTUNECTL SOURCE_ROOT

topotuned on a private dbus-daemon, on a generated sysroot (small-2s-4n,
the topotune series). First each path that once left a stale "actual"
behind: a switch to a profile that keeps a setting (the restore happens
under it), auto-profile, reload, revert, another writer, CPU hotplug; then
hpc's isolated partition (the test plays the kernel's side of it), hotplug
under it, other writers of its cpuset files, revert. Then a property test:
a random sequence of set-profile (hpc too), set-profile --persistent,
auto-profile, reload, apply, revert, external writes (sysctls, the slice's
cpuset files) and hotplug; after every step status, status --json, the
Settings property, IsolatedCpus, HousekeepingCpus, DomainLayout (against
an all-keep profile's offline prediction on the files), Metrics() and
Verify() must agree with the files of the tree. Last: the live layout
after a rebuild, counters across domain rebuilds and CPU hotplug, and
`check` against topotuned's start on six configurations.

TOPOTUNE_TRUTH_SEED picks the sequence (default 28), TOPOTUNE_TRUTH_STEPS
its length (default 40); a failure prints the seed and the steps so far.
Needs root, dbus-daemon, busctl, python3-dbus, python3-gi; exit 77 = skipped.
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

if len(sys.argv) != 4:
    print(__doc__)
    sys.exit(2)
TOPOTUNED, CTL, SRC = (os.path.abspath(a) for a in sys.argv[1:])

try:
    import dbus
except ImportError as e:
    print(f"SKIP truth tier: {e} (apt-get install python3-dbus)")
    sys.exit(77)
for tool in ("dbus-daemon", "busctl"):
    if not shutil.which(tool):
        print(f"SKIP truth tier: {tool} not installed")
        sys.exit(77)
if os.geteuid() != 0:
    print("SKIP truth tier: needs root")
    sys.exit(77)

NAME, PATH, IFACE = "org.topotune1", "/org/topotune1", "org.topotune1.Manager"
SPEC = "small-2s-4n"
SEED = int(os.environ.get("TOPOTUNE_TRUTH_SEED", "28"))
STEPS = int(os.environ.get("TOPOTUNE_TRUTH_STEPS", "40"))
SMT = "proc/sys/kernel/sched_smt_buddy_assist"
RELAX = "proc/sys/kernel/sched_relax_domain_level"
NUMA = "proc/sys/kernel/numa_balancing"
ONLINE = "sys/devices/system/cpu/online"
DROPIN = "etc/topotune/topotune.conf.d/99-set-profile.conf"
SLICE = "sys/fs/cgroup/topotune.slice"
ROOT_ISOLATED = "sys/fs/cgroup/cpuset.cpus.isolated"
# hpc isolates CPUs in an isolated partition of topotune.slice: after every step the
# test plays the kernel (play_kernel()) as it does for CPU hotplug.
PROFILES = ("balanced", "latency", "throughput", "database", "hpc")
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


base = tempfile.mkdtemp(prefix="topotune-truth-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
os.chmod(base, 0o755)
SOCK = os.path.join(base, "bus.sock")
ADDR = f"unix:path={SOCK}"


def spawn(argv, log):
    p = subprocess.Popen(argv, stdout=open(log, "ab"), stderr=subprocess.STDOUT)
    procs.append(p)
    return p


def gen(root, offline=None):
    subprocess.run([sys.executable, os.path.join(SRC, "tests/sysroot/gen-sysroot.py"), "-q"]
                   + (["--offline", offline] if offline else []) + [SPEC, root], check=True)


def cpulist(text):
    out = set()
    for part in filter(None, text.strip().split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def fmt_cpulist(cpus):
    cpus, runs = sorted(cpus), []
    for c in cpus:
        if runs and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def make_tree(name):
    root = os.path.join(base, name)
    gen(root)
    # What systemd and the kernel would have: the slice's cgroup with its files.
    os.makedirs(os.path.join(root, SLICE), exist_ok=True)
    wr(root, SLICE + "/cpuset.cpus", "\n")
    wr(root, SLICE + "/cpuset.cpus.partition", "member\n")
    shutil.copytree(os.path.join(SRC, "conf/profiles"), os.path.join(root, "usr/lib/topotune/profiles"))
    shutil.copytree(os.path.join(SRC, "conf/hardware.d"), os.path.join(root, "usr/lib/topotune/hardware.d"))
    os.makedirs(os.path.join(root, "etc/topotune/topotune.conf.d"), exist_ok=True)
    shutil.copy(os.path.join(SRC, "conf/topotune.conf"), os.path.join(root, "etc/topotune/"))
    wr(root, "etc/topotune/topotune.conf.d/50-test.conf", "[daemon]\nverify_interval = 0\n")
    return root


def rd(root, rel):
    with open(os.path.join(root, rel)) as f:
        return f.read().strip()


def wr(root, rel, value):
    with open(os.path.join(root, rel), "w") as f:
        f.write(value)


def swap_system(root, offline):
    """Play the kernel's CPU hotplug: sys/devices/system of a tree with @offline, cpu/online last."""
    src = os.path.join(base, "hotplug-src")
    shutil.rmtree(src, ignore_errors=True)
    gen(src, offline)
    sysd = os.path.join(root, "sys/devices/system")
    new = sysd + ".new"
    shutil.copytree(os.path.join(src, "sys/devices/system"), new, symlinks=True)
    online = rd(new, "cpu/online")
    wr(new, "cpu/online", rd(root, ONLINE) + "\n")
    os.rename(sysd, sysd + ".old")
    os.rename(new, sysd)
    shutil.rmtree(sysd + ".old")
    shutil.copy(os.path.join(src, "proc/cpuinfo"), os.path.join(root, "proc/cpuinfo"))
    wr(root, ONLINE, online + "\n")
    shutil.rmtree(src)


def play_kernel(root):
    """The kernel's side of an isolated partition: the root's cpuset.cpus.isolated lists
    the online CPUs of a valid one (the test writes it after every step, as the kernel would)."""
    part = rd(root, SLICE + "/cpuset.cpus.partition")
    iso = set()
    if part.startswith("isolated") and "invalid" not in part:
        iso = cpulist(rd(root, SLICE + "/cpuset.cpus")) & cpulist(rd(root, ONLINE))
    wr(root, ROOT_ISOLATED, fmt_cpulist(iso) + "\n")


def files_say(root):
    """What the kernel holds, from the tree's files, spelled as Settings spells it."""
    numa = ("off", "on", "memory-tiering", "on+memory-tiering")
    return {
        "smt_buddy_assist": "on" if int(rd(root, SMT)) else "off",
        "relax_domain_level": str(int(rd(root, RELAX))),
        "numa_balancing": numa[int(rd(root, NUMA))],
        "isolated_cpus": fmt_cpulist(cpulist(rd(root, ROOT_ISOLATED))) or "none",
    }


def layout_levels(levels):
    """{level: (name, flags, covered CPUs, spans)} from DomainLayout's a(usssas) or its like."""
    return {int(lv): (str(name), str(flags), frozenset(cpulist(str(cov))), frozenset(str(sp) for sp in spans))
            for lv, name, flags, cov, spans in levels}


def files_layout(root):
    """The layout the kernel builds from the tree's files now (it reports none): an all-keep
    profile's offline prediction, on the relax level and isolated CPUs the files hold."""
    r = subprocess.run([CTL, "--root", root, "--config-root", KEEP, "layout", "--profile", "current", "--json"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return {"error": r.stderr}
    per = {}
    for c in json.loads(r.stdout)["cpus"]:
        for d in c["domains"]:
            name, flags, cov, spans = per.setdefault(d["level"], [d["name"], d["flags"], set(), set()])
            cov |= cpulist(d["span"])
            spans.add(d["span"])
    return layout_levels((lv, n, f, fmt_cpulist(c), sp) for lv, (n, f, c, sp) in per.items())


# The configuration root of files_layout(): one profile that keeps every setting.
KEEP = os.path.join(base, "keep-config")
os.makedirs(os.path.join(KEEP, "etc/topotune/profiles"))
wr(KEEP, "etc/topotune/profiles/current.ini", "[scheduler]\nsmt_buddy_assist = keep\nrelax_domain_level = keep\n"
   "numa_balancing = keep\n[isolation]\nisolated_cpus = keep\n")

with open(os.path.join(SRC, "tests/private-bus.conf")) as f:
    conf = f.read().replace("@ADDRESS@", ADDR)
with open(os.path.join(base, "bus.conf"), "w") as f:
    f.write(conf)
spawn(["dbus-daemon", "--nofork", "--nopidfile", "--config-file", os.path.join(base, "bus.conf")],
      os.path.join(base, "bus.log"))
for _ in range(100):
    if os.path.exists(SOCK):
        break
    time.sleep(0.05)
bus = dbus.bus.BusConnection(ADDR)


def obj():
    return bus.get_object(NAME, PATH)


def prop(p):
    return obj().Get(IFACE, p, dbus_interface="org.freedesktop.DBus.Properties")


def mgr():
    return dbus.Interface(obj(), IFACE)


def start_daemon(root, log):
    p = spawn([TOPOTUNED, "--root", root, "--bus-address", ADDR, "--no-systemd", "--poll-interval", "1"], log)
    end = time.time() + 15
    while time.time() < end and not bus.name_has_owner(NAME) and p.poll() is None:
        time.sleep(0.05)
    try:
        prop("State")
        return p, True
    except dbus.exceptions.DBusException:
        return p, False


def stop_daemon(p):
    p.terminate()
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    end = time.time() + 10
    while time.time() < end and bus.name_has_owner(NAME):
        time.sleep(0.05)


def ctl(*args):
    r = subprocess.run([CTL, "--bus-address", ADDR] + list(args), capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def bus_settings():
    return {str(s[0]): (str(s[1]), str(s[2]), bool(s[3])) for s in prop("Settings")}


def status_text_settings():
    """{setting: actual} from the readable status: the rows below "Settings:"."""
    rc, out = ctl("status")
    rows, inside = {}, False
    for line in out.splitlines():
        words = line.split()
        if line.strip().startswith("Settings"):
            inside = True
            continue
        if inside and len(words) >= 3 and words[0] in ("smt_buddy_assist", "relax_domain_level", "numa_balancing",
                                                       "isolated_cpus"):
            rows[words[0]] = words[2]
    return rows


def status_json_settings():
    rc, out = ctl("status", "--json")
    doc = json.loads(out)
    return {s["setting"]: (s["desired"], s["actual"], s["in_sync"]) for s in doc["settings"]}


def metric_actual():
    """{setting: actual} from Metrics(): the topotune_setting_actual gauge, or _info's value label."""
    out = {}
    for line in str(mgr().Metrics()).splitlines():
        fam, _, rest = line.partition("{")
        if fam not in ("topotune_setting_actual", "topotune_setting_actual_info"):
            continue
        labels, _, value = rest.partition("} ")
        lab = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels))
        out[lab["setting"]] = lab["value"] if fam.endswith("_info") else value.strip()
    return out


def numeric(setting, text):
    """A Settings value as the numeric gauge carries it."""
    if setting == "relax_domain_level":
        return str(int(text))
    return {"off": "0", "on": "1", "memory-tiering": "2", "on+memory-tiering": "3"}.get(text, text)


def agree(root, what):
    """After a step: every report says what the files say; verify lists exactly the differences."""
    play_kernel(root)
    files = files_say(root)
    st = bus_settings()
    js = status_json_settings()
    tx = status_text_settings()
    mt = metric_actual()
    state = str(prop("State"))
    bad = []
    for k, v in files.items():
        if k not in st:
            continue
        desired = st[k][0]
        if st[k][1] != v:
            bad.append(f"Settings {k} actual {st[k][1]}, files {v}")
        if js.get(k, (None, None))[1] != v:
            bad.append(f"status --json {k} actual {js.get(k)}, files {v}")
        if tx.get(k) != v:
            bad.append(f"status {k} actual {tx.get(k)}, files {v}")
        if mt.get(k) != numeric(k, v):
            bad.append(f"metrics {k} actual {mt.get(k)}, files {v}")
        if st[k][2] != (desired in ("keep", v)):
            bad.append(f"Settings {k} in_sync {st[k][2]} for desired {desired}, files {v}")
    iso = files["isolated_cpus"].replace("none", "")
    online = cpulist(rd(root, ONLINE))
    if str(prop("IsolatedCpus")) != iso:
        bad.append(f"IsolatedCpus {prop('IsolatedCpus')}, files {iso}")
    if cpulist(str(prop("HousekeepingCpus"))) != online - cpulist(iso):
        bad.append(f"HousekeepingCpus {prop('HousekeepingCpus')}, files: online minus {iso}")
    want_layout, got_layout = files_layout(root), layout_levels(prop("DomainLayout"))
    if got_layout != want_layout:
        diff = sorted(k for k in set(want_layout) | set(got_layout) if want_layout.get(k) != got_layout.get(k))
        bad.append(f"DomainLayout differs at levels {diff}: "
                   + "; ".join(f"{k}: {got_layout.get(k)} != {want_layout.get(k)}" for k in diff[:2]))
    ok, mism = mgr().Verify()
    want = sorted(k for k, v in files.items() if k in st and st[k][0] not in ("keep", v)) if state != "off" else []
    got = sorted(str(m[0]) for m in mism)
    if got != want or bool(ok) != (not want):
        bad.append(f"Verify {bool(ok)} {got}, files differ in {want}")
    rc, _ = ctl("verify")
    if rc != (1 if want else 0):
        bad.append(f"topotunectl verify exit {rc}, files differ in {want}")
    return check(what, not bad, "; ".join(bad))


try:
    root = make_tree("truth")
    log = os.path.join(base, "topotuned.log")
    d, ok = start_daemon(root, log)
    if not check("topotuned starts on the small tree", ok, open(log).read()[-1500:]):
        raise SystemExit(1)
    agree(root, "start (balanced): reports agree with the files")

    # --- the paths that left a stale actual behind ------------------------------------
    ctl("set-profile", "latency")
    agree(root, "set-profile latency: relax 3 in the files and in every report")
    ctl("set-profile", "balanced")
    check("set-profile balanced: the relax level is restored in the kernel", rd(root, RELAX) == "-1")
    agree(root, "set-profile latency -> balanced (relax keep): every report says -1")
    ctl("set-profile", "throughput")
    ctl("set-profile", "balanced")
    agree(root, "set-profile throughput -> balanced (smt keep): every report says off")
    ctl("set-profile", "--persistent", "latency")
    ctl("auto-profile")
    agree(root, "set-profile --persistent latency, auto-profile: every report says -1")
    ctl("set-profile", "latency")
    ctl("reload")
    agree(root, "set-profile latency, reload: every report says -1")
    wr(root, RELAX, "2\n")
    agree(root, "another writer sets relax 2 under balanced (keep): every report says 2")
    wr(root, RELAX, "-1\n")
    ctl("set-profile", "throughput")
    ctl("revert")
    agree(root, "throughput, revert: every report says off")
    ctl("apply")
    swap_system(root, "5,21")
    end = time.time() + 10
    while time.time() < end and int(prop("Topology")["threads"]) != 30:
        time.sleep(0.1)
    wr(root, SMT, "0\n")
    agree(root, "hotplug (cpu5,21 offline) and another writer: every report says the files")
    swap_system(root, None)
    end = time.time() + 10
    while time.time() < end and int(prop("Topology")["threads"]) != 32:
        time.sleep(0.1)
    ctl("apply")
    agree(root, "back online and apply: every report says the files")

    # --- isolation: hpc's partition, hotplug under it, another writer, revert -------------
    def wait_threads(n):
        end = time.time() + 10
        while time.time() < end and int(prop("Topology")["threads"]) != n:
            time.sleep(0.1)

    ctl("set-profile", "hpc")
    iso0 = rd(root, SLICE + "/cpuset.cpus")
    check("set-profile hpc: an isolated partition of topotune.slice",
          rd(root, SLICE + "/cpuset.cpus.partition") == "isolated" and iso0, iso0)
    agree(root, "set-profile hpc: every report says the partition's CPUs (and a layout without them)")
    gone = min(cpulist(iso0 or "6"))
    swap_system(root, str(gone))
    wait_threads(31)
    agree(root, f"hotplug under hpc: cpu{gone} (isolated) offline: every report says the files")
    swap_system(root, None)
    wait_threads(32)
    agree(root, f"hotplug under hpc: cpu{gone} back: every report says the files")
    wr(root, SLICE + "/cpuset.cpus.partition", "member\n")
    agree(root, "another writer makes the partition a member: nothing isolated, every report says so")
    ctl("apply")
    wr(root, SLICE + "/cpuset.cpus", "2-3\n")
    agree(root, "another writer puts CPUs 2-3 in the partition: every report says 2-3")
    ctl("apply")
    agree(root, "apply: the partition's CPUs as hpc wants again")
    ctl("set-profile", "balanced")
    agree(root, "hpc -> balanced: the partition restored, nothing isolated")
    wr(root, SLICE + "/cpuset.cpus", "2-3\n")
    wr(root, SLICE + "/cpuset.cpus.partition", "isolated\n")
    agree(root, "balanced, another writer isolates CPUs 2-3 (drift): every report says 2-3")
    swap_system(root, "3")
    wait_threads(31)
    agree(root, "... and cpu3 goes offline: the partition isolates cpu2 alone, every report says 2")
    swap_system(root, None)
    wait_threads(32)
    wr(root, SLICE + "/cpuset.cpus.partition", "member\n")
    wr(root, SLICE + "/cpuset.cpus", "\n")
    ctl("set-profile", "hpc")
    ctl("revert")
    agree(root, "hpc, revert: nothing isolated, every report says so")
    ctl("apply")

    # --- the property: random sequences ------------------------------------------------
    rng = random.Random(SEED)
    done = []
    offline = None
    for i in range(STEPS):
        kind = rng.choice(("set-profile", "persistent", "auto-profile", "reload", "apply", "revert",
                           "write", "write", "hotplug"))
        if kind == "set-profile":
            step = ("set-profile", rng.choice(PROFILES))
        elif kind == "persistent":
            step = ("set-profile", "--persistent", rng.choice(PROFILES))
        elif kind == "write":
            f, v = rng.choice(((SMT, rng.choice("01")), (RELAX, str(rng.randint(-1, 5))), (NUMA, rng.choice("01")),
                               (SLICE + "/cpuset.cpus.partition", rng.choice(("member", "isolated"))),
                               (SLICE + "/cpuset.cpus", rng.choice(("", "2-3", "6-7,14-15")))))
            step = ("write", f, v)
        elif kind == "hotplug":
            offline = None if offline else rng.choice(("3,19", "12,28", "7"))
            step = ("hotplug", offline or "none")
        else:
            step = (kind,)
        done.append(" ".join(step))
        if step[0] == "write":
            wr(root, step[1], step[2] + "\n")
        elif step[0] == "hotplug":
            swap_system(root, offline)
            want = 32 - (len(offline.split(",")) if offline else 0)
            end = time.time() + 10
            while time.time() < end and int(prop("Topology")["threads"]) != want:
                time.sleep(0.1)
        else:
            ctl(*step)
        if not agree(root, f"seed {SEED} step {i + 1}: {done[-1]}"):
            print(f"# reproduce: TOPOTUNE_TRUTH_SEED={SEED} TOPOTUNE_TRUTH_STEPS={i + 1}; steps: " + " | ".join(done))
            break

    # --- the live layout: another writer's rebuild shows at once --------------------------
    # With /proc/schedstat v17 the kernel reports its domains; a rebuild (another writer's
    # relax level or partition, which the daemon does not see) changes their spans.
    def one_level(masks):
        """/proc/schedstat v17 with one MC domain per CPU: CPU -> its span as a hex mask."""
        return "version 17\ntimestamp 4294892296\n" + "".join(
            f"cpu{c} 0 0 0 0 0 0 1 2 3\ndomain0 MC {m:08x} " + " ".join(["0"] * 45) + "\n"
            for c, m in masks.items())

    def live_spans():
        return sorted(str(sp) for lv in prop("DomainLayout") if int(lv[0]) == 0 for sp in lv[4])

    wr(root, "proc/schedstat", one_level({c: 0xffffffff for c in range(32)}))
    first = live_spans()
    wr(root, "proc/schedstat", one_level({c: 0x0000ffff if c < 16 else 0xffff0000 for c in range(32)}))
    second = live_spans()
    check("live layout: the kernel rebuilds its domains behind the daemon's back: DomainLayout follows",
          first == ["0-31"] and second == ["0-15", "16-31"]
          and any("as the kernel reports it" in str(r) for r in prop("StateReasons")), f"{first} -> {second}")

    # --- counters across domain rebuilds -------------------------------------------------
    # The kernel's domain counters live in its sched_domain structs: a rebuild starts
    # them at 0 and a CPU that loses its domains (hpc isolation) stops reporting them.
    def schedstat(cpus):
        """/proc/schedstat v17: CPU -> the value of every field of its SMT and MC lines."""
        text = "version 17\ntimestamp 4294892296\n"
        for cpu, v in cpus.items():
            text += f"cpu{cpu} 0 0 0 0 0 0 1 2 3\n"
            if v is not None:
                text += "".join(f"domain{i} {n} ffffffff " + " ".join([str(v)] * 45) + "\n"
                                for i, n in enumerate(("SMT", "MC")))
        return text

    def lb_count():
        for line in str(mgr().Metrics()).splitlines():
            if line.startswith('topotune_schedstat_lb_count_total{index="1",domain="MC",idle="busy"}'):
                return int(float(line.split()[-1]))
        return None

    wr(root, "proc/schedstat", schedstat({0: 100, 1: 100, 2: 100, 3: 100}))
    before = lb_count()
    wr(root, "proc/schedstat", schedstat({0: 5, 1: 5, 2: None, 3: None}))
    after = lb_count()
    check("schedstat _total never goes down: CPUs 2-3 lose their domains, 0-1 are rebuilt (400 -> 410)",
          before == 400 and after == 410, f"{before} -> {after}")
    wr(root, "proc/schedstat", schedstat({0: 7, 1: 7, 2: 3, 3: 3}))
    check("... and the domains come back: each CPU's count adds on (410 + 2 + 2 + 3 + 3 = 420)",
          lb_count() == 420, str(lb_count()))

    # --- per-CPU counters across CPU hotplug ---------------------------------------------
    # /proc/sched_smt_buddy_stat has a line per online CPU, from counters in the CPU's
    # runqueue, which stay while it is offline; /proc/softirqs a column per possible CPU.
    def metric(name):
        for line in str(mgr().Metrics()).splitlines():
            if line.startswith(name + " "):
                return int(float(line.split()[-1]))
        return None

    def per_cpu_files(values):
        """@values: CPU -> count, None for a CPU offline (no buddy line; its softirqs column stays)."""
        wr(root, "proc/sched_smt_buddy_stat", "version 2\ntimestamp 4294892296\n"
           + "".join(f"cpu{c} {v} {v}\n" for c, v in values.items() if v is not None))
        kept = {c: v for c, v in values.items() if v is not None}
        wr(root, "proc/softirqs", " " * 20 + "".join(f"CPU{c:<8d}" for c in values) + "\n"
           + "          HI:" + "".join(f" {0:10d}" for c in values) + "\n"
           + "       SCHED:" + "".join(f" {kept.get(c, last_softirq.get(c, 0)):10d}" for c in values) + "\n")
        last_softirq.update(kept)

    def hotplug(off, threads):
        swap_system(root, off)
        end = time.time() + 10
        while time.time() < end and int(prop("Topology")["threads"]) != threads:
            time.sleep(0.1)

    last_softirq = {}
    if offline:
        hotplug(None, 32)
    per_cpu_files({c: 10 for c in range(32)})
    sums = [(metric("topotune_smt_buddy_pushed_total"), metric("topotune_softirqs_sched_total"))]
    hotplug("7", 31)
    per_cpu_files({c: None if c == 7 else 10 for c in range(32)})
    sums.append((metric("topotune_smt_buddy_pushed_total"), metric("topotune_softirqs_sched_total")))
    hotplug(None, 32)
    per_cpu_files({c: 12 if c == 7 else 10 for c in range(32)})
    sums.append((metric("topotune_smt_buddy_pushed_total"), metric("topotune_softirqs_sched_total")))
    check("cpu7 offline and back: the SMT buddy and softirq _total sums keep its counts (320, 320, 322)",
          sums == [(320, 320), (320, 320), (322, 322)], str(sums))
    stop_daemon(d)

    # --- check fails exactly where topotuned fails to configure --------------------------
    # Each configuration on a tree of its own: topotuned starts on it (State failed, or
    # not) and `topotunectl --root TREE check` must say the same (exit 2, or 0).
    sel = make_tree("select")
    rule = os.path.join(sel, "etc/topotune/hardware.d/60-x.ini")
    persist = os.path.join(sel, DROPIN)
    balanced = os.path.join(sel, "usr/lib/topotune/profiles/balanced.ini")
    cases = (
        ("a matching rule names a missing profile", "amd", "nope", None, True),
        ("... and the persistent choice names latency", "amd", "nope", "latency", True),
        ("a rule for other machines names a missing profile", "intel", "nope", None, True),
        ("no balanced.ini, a matching rule selects throughput", "amd", "throughput", None, False),
        ("no balanced.ini, the rule does not match", "intel", "throughput", None, False),
        ("no balanced.ini, the persistent choice names throughput", "intel", "nope", "throughput", False),
    )
    saved = open(balanced).read()
    os.makedirs(os.path.dirname(rule), exist_ok=True)
    for what, vendor, name, chosen, have_balanced in cases:
        wr(sel, rule, f"[match]\nvendor = {vendor}\n[profile]\nname = {name}\n")
        if chosen:
            wr(sel, persist, f"[daemon]\nprofile = {chosen}\n")
        elif os.path.exists(persist):
            os.remove(persist)
        if have_balanced:
            wr(sel, balanced, saved)
        elif os.path.exists(balanced):
            os.remove(balanced)
        slog = os.path.join(base, "topotuned-select.log")
        ds, ok = start_daemon(sel, slog)
        state = str(prop("State")) if ok else "not started"
        stop_daemon(ds)
        r = subprocess.run([CTL, "--root", sel, "check"], capture_output=True, text=True, timeout=60)
        check(f"check and topotuned agree: {what} (State {state}, check exit {r.returncode})",
              ok and (state == "failed") == (r.returncode == 2) and r.returncode in (0, 2),
              r.stdout + r.stderr + open(slog).read()[-600:])
    # A broken profile that nothing selects: topotuned configures and starts (balanced),
    # check warns with FILE:LINE and exits 0; once a drop-in selects it, both fail.
    wr(sel, balanced, saved)
    wr(sel, rule, "[match]\nvendor = intel\n[profile]\nname = latency\n")
    if os.path.exists(persist):
        os.remove(persist)
    os.makedirs(os.path.join(sel, "etc/topotune/profiles"), exist_ok=True)
    wr(sel, os.path.join(sel, "etc/topotune/profiles/broken.ini"), "[scheduler]\nrelax_domain_level = deep\n")
    for what, chosen in (("a broken profile nothing selects", None),
                         ("... selected by the persistent choice", "broken")):
        if chosen:
            wr(sel, persist, f"[daemon]\nprofile = {chosen}\n")
        slog = os.path.join(base, "topotuned-select.log")
        ds, ok = start_daemon(sel, slog)
        state = str(prop("State")) if ok else "not started"
        stop_daemon(ds)
        r = subprocess.run([CTL, "--root", sel, "check"], capture_output=True, text=True, timeout=60)
        check(f"check and topotuned agree: {what} (State {state}, check exit {r.returncode})",
              ok and (state == "failed") == (r.returncode == 2) and r.returncode in (0, 2)
              and "/etc/topotune/profiles/broken.ini:2: " in r.stderr,
              r.stdout + r.stderr + open(slog).read()[-600:])
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    if os.environ.get("KEEP_TREE") != "1":
        shutil.rmtree(base, ignore_errors=True)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
