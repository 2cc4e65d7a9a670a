#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""topotunectl end to end on generated sysroots with the shipped conf/.

Usage: test-cli.py TOPOTUNECTL GEN-SYSROOT CONF-DIR
Each check prints PASS/FAIL; the last line is "N passed, M failed".
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sysroot_tree  # noqa: E402

ctl, gen, conf = sys.argv[1:4]
results = {"pass": 0, "fail": 0}


def check(name, cond, detail=""):
    if cond:
        results["pass"] += 1
        print(f"PASS {name}")
    else:
        results["fail"] += 1
        print(f"FAIL {name}: {detail}")


def run(*args):
    p = subprocess.run([ctl, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def run_bounded(*args, timeout=10):
    """run() that reports a hang as exit status None instead of raising."""
    try:
        p = subprocess.run([ctl, *args], capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", f"(still running after {timeout} s)"


def make_tree(base, spec, *gen_args):
    return sysroot_tree.make_tree(gen, conf, base, spec, *gen_args)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


tmpbase = "/dev/shm" if os.path.isdir("/dev/shm") else None
with tempfile.TemporaryDirectory(dir=tmpbase) as base:
    turin = make_tree(base, "turin-9845-2s-nps10")
    hygon = make_tree(base, "hygon-7447v-2s-nps6")
    vm = make_tree(base, "vm-2cpu")

    # The acceptance facts for the dual Turin NPS=10 tree.
    rc, out, err = run("--root", turin, "topology", "--json")
    check("turin topology --json exits 0", rc == 0, err)
    j = json.loads(out) if rc == 0 else {}
    check("turin: 2 packages", j.get("packages") == 2, j.get("packages"))
    check("turin: 20 nodes", j.get("nodes") == 20, j.get("nodes"))
    check("turin: 640 CPUs", j.get("cpus") == 640, j.get("cpus"))
    check("turin: 320 cores", j.get("cores") == 320, j.get("cores"))
    check("turin: node19 cpus", j.get("node_list", [{}])[-1].get("cpus") == "304-319,624-639", out[-300:])
    check("turin: vendor amd family 0x1a", j.get("cpu", {}).get("vendor") == "amd" and j["cpu"].get("family") == 0x1a)

    # The default machine: balanced keeps the kernel's defaults, the Hygon rule included
    # (its author measured regressions with SMT_BUDDY_ASSIST); throughput turns it on.
    rc, out, err = run("--root", hygon, "plan")
    check("hygon plan (balanced): exits 0, SMT_BUDDY_ASSIST kept as the kernel has it (built-in default)",
          rc == 0 and "Profile: balanced" in out
          and "  smt_buddy_assist   keep           off -> off\n" in out, out + err)
    rc, out, err = run("--root", hygon, "plan", "--profile", "throughput")
    check("hygon plan --profile throughput exits 0", rc == 0, err)
    check("hygon plan --profile throughput: SMT_BUDDY_ASSIST set on, from throughput.ini",
          any(l.strip().startswith("smt_buddy_assist") and " set " in l and "-> on" in l for l in out.splitlines())
          and "from: /usr/lib/topotune/profiles/throughput.ini:" in out, out)
    check("hygon plan: predicted layout", "Predicted scheduler domains" in out and " NUMA " in out, out)
    check("hygon plan: averaged distances on the patched kernel", "off-package distances averaged" in out, out)
    rc, out, err = run("--root", hygon, "layout", "--json")
    j = json.loads(out) if rc == 0 else {}
    check("hygon layout --json: 384 CPUs with domains", len(j.get("cpus", [])) == 384, err)
    rc, out, err = run("--root", hygon, "--kernel", "stock", "plan", "--profile", "throughput")
    check("hygon plan on a stock kernel: SMT_BUDDY_ASSIST unsupported", "unsupported" in out, out)
    rc, out, err = run("--root", hygon, "--kernel", "stock", "plan", "--profile", "hpc")
    check("hygon plan on a stock kernel: relax pending reboot", "pending-reboot" in out and "relax_domain_level=" in out, out)

    rc, out, err = run("--root", hygon, "explain", "smt_buddy_assist")
    check("explain smt_buddy_assist under balanced on the Hygon tree: keep, the built-in default, no rule layer",
          rc == 0 and out.startswith("smt_buddy_assist = keep\n  from: built-in default\n") and "hardware.d" not in out,
          out + err)
    sel = os.path.join(hygon, "etc/topotune/topotune.conf.d/50-throughput.conf")
    write(sel, "[daemon]\nprofile = throughput\n")
    rc, out, err = run("--root", hygon, "explain", "smt_buddy_assist")
    os.unlink(sel)
    check("explain names a file:line (throughput selected: its profile line)",
          rc == 0 and out.startswith("smt_buddy_assist = on\n  from: /usr/lib/topotune/profiles/throughput.ini:"),
          out + err)
    # Every key the ini files accept is explainable (issue 13: it exited 2 'unknown setting').
    rc, out, err = run("--root", hygon, "explain", "housekeeping_smt")
    check("explain housekeeping_smt: exit 0 with its value and default",
          rc == 0 and out.startswith("housekeeping_smt = ") and "whole-cores" in out and "isolated_cpus" in out,
          (rc, out, err))
    rc, out, err = run("--root", hygon, "explain", "numa_balancing")
    check("explain numa_balancing: keep by default, the kernel's value through its sysctl",
          rc == 0 and out.startswith("numa_balancing = keep") and "plan: keep, on -> on" in out, (rc, out, err))
    write(os.path.join(hygon, "etc/topotune/profiles/numa.ini"),
          "[profile]\ndescription = t\n[scheduler]\nnuma_balancing = memory-tiering\n")
    rc, out, err = run("--root", hygon, "plan", "--profile", "numa")
    check("plan: numa_balancing = memory-tiering set through sysctl kernel.numa_balancing",
          rc == 0 and any(l.split()[:5] == ["numa_balancing", "set", "on", "->", "memory-tiering"]
                          and l.endswith("via sysctl kernel.numa_balancing") for l in out.splitlines()), out + err)
    # Every file that sets the key, in order, the one in force marked (issue 28, item 4).
    d = os.path.join(hygon, "etc/topotune")
    write(os.path.join(d, "topotune.conf.d/10-a.conf"), "[daemon]\nprofile = site\n[scheduler]\nrelax_domain_level = 2\n")
    write(os.path.join(d, "topotune.conf.d/20-b.conf"), "[scheduler]\nrelax_domain_level = 4\n")
    write(os.path.join(d, "profiles/site.ini"), "[profile]\ninclude = database\n[scheduler]\nrelax_domain_level = 1\n")
    rc, out, err = run("--root", hygon, "explain", "relax_domain_level")
    rows = [l.split() for l in out.splitlines()[4:8]]
    check("explain shows every layer that sets the key: a base profile, the profile, each drop-in; winner marked",
          rc == 0 and out.startswith("relax_domain_level = 4\n")
          and rows == [["profile", "latency", "(included", "by", "database)", "3", "/usr/lib/topotune/profiles/latency.ini:15"],
                       ["profile", "site", "1", "/etc/topotune/profiles/site.ini:4"],
                       ["conf.d", "10-a.conf", "2", "/etc/topotune/topotune.conf.d/10-a.conf:4"],
                       ["*", "conf.d", "20-b.conf", "4", "/etc/topotune/topotune.conf.d/20-b.conf:2"]],
          out + err)
    rc, out, err = run("--root", hygon, "explain", "--json", "relax_domain_level")
    j = json.loads(out) if rc == 0 else {}
    check("explain --json: the same layers, winner true only for the drop-in in force",
          [(x["layer"], x["value"], x["winner"]) for x in j.get("layers", [])]
          == [("profile latency (included by database)", "3", False), ("profile site", "1", False),
              ("conf.d 10-a.conf", "2", False), ("conf.d 20-b.conf", "4", True)], out + err)
    for f in ("topotune.conf.d/10-a.conf", "topotune.conf.d/20-b.conf", "profiles/site.ini"):
        os.remove(os.path.join(d, f))
    rc, out, err = run("explain", "--list")
    # The schema's list is checked against the settings table (test-tables).
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../schema/topotunectl.schema.json")) as f:
        schema_settings = json.load(f)["$defs"]["setting"]["enum"]
    check("explain --list: the settings table's names, one a line",
          rc == 0 and out.split() == schema_settings and "numa_balancing" in schema_settings, (rc, out, err))
    rc, out, err = run("--root", hygon, "profiles")
    check("profiles lists balanced", rc == 0 and "balanced" in out, out + err)

    # [daemon] metrics options: checked like every other key, FILE:LINE on a bad value.
    for bad, what in (("metrics_textfile = topotune.prom", "an absolute path of a file ending in .prom"),
                      ("metrics_textfile = /var/lib/prometheus/node-exporter/topotune.txt", "ending in .prom"),
                      ("metrics_interval = 0", "expected seconds (1 or more)")):
        write(os.path.join(vm, "etc/topotune/topotune.conf.d/80-metrics.conf"), f"[daemon]\n{bad}\n")
        rc, out, err = run("--root", vm, "check")
        check(f"check: '{bad}' is an error with FILE:LINE",
              rc == 2 and "/etc/topotune/topotune.conf.d/80-metrics.conf:2: invalid value" in err + out
              and what in err + out, (rc, out, err))
    write(os.path.join(vm, "etc/topotune/topotune.conf.d/80-metrics.conf"),
          "[daemon]\nmetrics_textfile = /var/lib/prometheus/node-exporter/topotune.prom\nmetrics_interval = 30\n")
    rc, out, err = run("--root", vm, "check")
    check("check: good metrics options pass", rc == 0, (rc, out, err))
    os.unlink(os.path.join(vm, "etc/topotune/topotune.conf.d/80-metrics.conf"))
    rc, out, err = run("--root", vm, "metrics", "extra")
    check("metrics takes no arguments: exit 2", rc == 2 and "no arguments" in err, (rc, out, err))

    # check: the configuration as topotuned reads it; candidates before they are installed.
    def tree_state(root):
        return sorted((d, f, open(os.path.join(d, f), "rb").read()) for d, _, fs in os.walk(os.path.join(root, "etc"))
                      for f in fs)
    before = tree_state(hygon)
    rc, out, err = run("--root", hygon, "check")
    check("check: the shipped configuration is OK, exit 0",
          rc == 0 and out.startswith("OK: 1 configuration file, 6 profiles, 3 hardware rules."), (rc, out, err))
    write(os.path.join(base, "cand/bad.ini"), "[profile]\nsmt_buddy_assist = on\n")
    rc, out, err = run("--root", hygon, "check", "--as", "/etc/topotune/profiles/cand.ini", os.path.join(base, "cand/bad.ini"))
    check("check --as: a bad candidate profile: exit 2, FILE:LINE as it would be installed",
          rc == 2 and "/etc/topotune/profiles/cand.ini:2: unknown key 'smt_buddy_assist' in [profile]" in err
          and "1 error." in err, (rc, out, err))
    write(os.path.join(base, "cand/profiles/site.ini"), "[profile]\ninclude = throughput\n")
    write(os.path.join(base, "cand/topotune.conf.d/50-site.conf"), "[daemon]\nprofile = site\n")
    rc, out, err = run("--root", hygon, "check", os.path.join(base, "cand/topotune.conf.d/50-site.conf"))
    check("check: a candidate drop-in selecting a profile that is not there: its FILE:LINE",
          rc == 2 and "/etc/topotune/topotune.conf.d/50-site.conf:2: profile 'site' not found" in err, (rc, out, err))
    rc, out, err = run("--root", hygon, "check", os.path.join(base, "cand/topotune.conf.d/50-site.conf"),
                       os.path.join(base, "cand/profiles/site.ini"))
    check("check: candidates take their kind from their directory; together they are OK",
          rc == 0 and "as /etc/topotune/profiles/site.ini" in out and "7 profiles" in out, (rc, out, err))
    rc, out, err = run("--root", hygon, "check", os.path.join(base, "cand/bad.ini"))
    check("check: a candidate from nowhere known needs --as", rc == 2 and "--as" in err, (rc, out, err))
    # A name that is not UTF-8: said so, not a bare "Invalid argument" (issue 29).
    p = subprocess.run([ctl, "set-profile", os.fsdecode(b"thr\xffput")], capture_output=True, timeout=60)
    err = p.stderr.decode(errors="replace")
    check("set-profile with a non-UTF-8 name: exit 2, says it is not valid UTF-8",
          p.returncode == 2 and "not valid UTF-8" in err and "thr\\xffput" in err, (p.returncode, err))
    # FILE an absolute symlink (as /etc/alternatives makes them): read where it leads (issue 29).
    write(os.path.join(base, "cand/real/good.ini"), "[profile]\ninclude = throughput\n")
    os.symlink(os.path.join(base, "cand/real/good.ini"), os.path.join(base, "cand/abs-link.ini"))
    rc, out, err = run("--root", hygon, "check", "--as", "/etc/topotune/profiles/cand.ini",
                       os.path.join(base, "cand/abs-link.ini"))
    check("check --as: FILE an absolute symlink is read where it points", rc == 0, (rc, out, err))
    # A NUL byte in a candidate: refused with FILE:LINE, not cut short and OK.
    with open(os.path.join(base, "cand/nul.ini"), "wb") as f:
        f.write(b"[profile]\ninclude = throughput\n\0[bogus]\n")
    rc, out, err = run("--root", hygon, "check", "--as", "/etc/topotune/profiles/cand.ini",
                       os.path.join(base, "cand/nul.ini"))
    check("check --as: a NUL byte in FILE: exit 2 with FILE:LINE",
          rc != 0 and "nul.ini:3: NUL byte" in err, (rc, out, err))
    write(os.path.join(hygon, "etc/topotune/hardware.d/60-x.ini"), "[match]\nvendor = hygon\n[profile]\nname = nope\n")
    write(os.path.join(hygon, "etc/topotune/profiles/broken.ini"), "[scheduler]\nrelax_domain_level = deep\n")
    before = tree_state(hygon)
    rc, out, err = run("--root", hygon, "check")
    check("check: every error, each with FILE:LINE (the selected rule's profile); a broken profile not "
          "selected is a warning with its FILE:LINE (issue 28, item 3)",
          rc == 2 and "/etc/topotune/hardware.d/60-x.ini:4: profile 'nope' not found" in err
          and "Warning: /etc/topotune/profiles/broken.ini:2: " in err and "1 error." in err, (rc, out, err))
    rc, out, err = run("--root", hygon, "check", "--json")
    j = json.loads(out) if out else {}
    check("check --json: schema, ok false, errors and warnings with file and line",
          rc == 2 and j.get("schema") == 1 and j.get("ok") is False
          and [e["file"] for e in j.get("errors", [])] == ["/etc/topotune/hardware.d/60-x.ini"]
          and [(w["file"], w["line"]) for w in j.get("warnings", [])] == [("/etc/topotune/profiles/broken.ini", 2)],
          out)
    check("check changes nothing", tree_state(hygon) == before)
    os.remove(os.path.join(hygon, "etc/topotune/hardware.d/60-x.ini"))
    # topotuned configures with a broken profile it does not select: check exits 0 and warns;
    # selected (a drop-in's profile =) or given as a candidate, it is an error.
    rc, out, err = run("--root", hygon, "check")
    check("check: a broken profile not selected: exit 0, a warning with FILE:LINE",
          rc == 0 and "Warning: /etc/topotune/profiles/broken.ini:2: " in err and out.startswith("OK: "),
          (rc, out, err))
    rc, out, err = run("--root", hygon, "check", "--as", "/etc/topotune/profiles/broken.ini",
                       os.path.join(hygon, "etc/topotune/profiles/broken.ini"))
    check("check: the same profile given as the candidate: exit 2",
          rc == 2 and "/etc/topotune/profiles/broken.ini:2: " in err and "Warning" not in err, (rc, out, err))
    write(os.path.join(hygon, "etc/topotune/topotune.conf.d/70-broken.conf"), "[daemon]\nprofile = broken\n")
    rc, out, err = run("--root", hygon, "check")
    check("check: the same profile selected by a drop-in: exit 2, as topotuned then starts failed",
          rc == 2 and "/etc/topotune/profiles/broken.ini:2: " in err and "Warning" not in err, (rc, out, err))
    os.remove(os.path.join(hygon, "etc/topotune/topotune.conf.d/70-broken.conf"))
    os.remove(os.path.join(hygon, "etc/topotune/profiles/broken.ini"))
    shutil.copy(os.path.join(hygon, "etc/topotune/topotune.conf"), os.path.join(base, "conf.save"))
    write(os.path.join(hygon, "etc/topotune/topotune.conf"), "[daemon]\nrollback = sometimes\n")
    rc, out, err = run("--root", hygon, "check")
    check("check: a bad topotune.conf: FILE:LINE", rc == 2 and "/etc/topotune/topotune.conf:2: " in err, err)
    shutil.copy(os.path.join(base, "conf.save"), os.path.join(hygon, "etc/topotune/topotune.conf"))
    # check fails exactly where topotuned would not configure, and lists every error (issue 28, item 3).
    empty = os.path.join(base, "empty-root")
    os.makedirs(empty)
    rc, out, err = run("--root", empty, "check")
    check("check on an empty root: exit 2, the built-in default profile balanced is not there",
          rc == 2 and "built-in default: profile 'balanced' not found" in err and "1 error." in err, (rc, out, err))
    os.rename(os.path.join(hygon, "usr/lib/topotune/profiles/balanced.ini"), os.path.join(base, "balanced.save"))
    rc, out, err = run("--root", hygon, "check")
    check("check without balanced.ini (no profile = set): exit 2, as topotuned then starts failed",
          rc == 2 and "profile 'balanced' not found" in err, (rc, out, err))
    os.rename(os.path.join(base, "balanced.save"), os.path.join(hygon, "usr/lib/topotune/profiles/balanced.ini"))
    write(os.path.join(hygon, "etc/topotune/topotune.conf.d/10-a.conf"),
          "[daemon]\nrollback = sometimes\nbogus = 1\n[nosuch]\nx = 1\n[daemon]\nverify_interval = x\n")
    write(os.path.join(hygon, "etc/topotune/topotune.conf.d/20-b.conf"), "[daemon]\nfoo\n")
    write(os.path.join(hygon, "etc/topotune/hardware.d/60-x.ini"), "[match]\nvendor = hygon\nfamily = x\n[nope]\n")
    write(os.path.join(hygon, "etc/topotune/hardware.d/61-y.ini"), "[match]\nbogus = 1\n")
    write(os.path.join(hygon, "etc/topotune/profiles/broken.ini"),
          "[scheduler]\nrelax_domain_level = deep\nsmt_buddy_assist = maybe\n")
    rc, out, err = run("--root", hygon, "check")
    want = ["/etc/topotune/topotune.conf.d/10-a.conf:2: invalid value 'sometimes' for rollback",
            "/etc/topotune/topotune.conf.d/10-a.conf:3: unknown key 'bogus' in [daemon]",
            "/etc/topotune/topotune.conf.d/10-a.conf:4: unknown section [nosuch]",
            "/etc/topotune/topotune.conf.d/10-a.conf:7: invalid value 'x' for verify_interval",
            "/etc/topotune/topotune.conf.d/20-b.conf:2: expected '[section]' or 'key = value', got 'foo'",
            "/etc/topotune/hardware.d/60-x.ini:3: ", "/etc/topotune/hardware.d/60-x.ini:4: unknown section [nope]",
            "/etc/topotune/hardware.d/61-y.ini:2: "]
    # broken.ini is not selected: every bad line of it too, as warnings.
    warn = ["Warning: /etc/topotune/profiles/broken.ini:2: ", "Warning: /etc/topotune/profiles/broken.ini:3: "]
    lines = err.splitlines()
    missing = [w for w in want + warn if not any(l.startswith(w) for l in lines)]
    check("check lists every error: each bad line of each file, every drop-in, every rule, each once",
          rc == 2 and not missing and f"{len(want)} errors." in err and len(set(lines)) == len(lines),
          f"missing {missing}: {err}")
    for f in ("topotune.conf.d/10-a.conf", "topotune.conf.d/20-b.conf", "hardware.d/60-x.ini", "hardware.d/61-y.ini",
              "profiles/broken.ini"):
        os.remove(os.path.join(hygon, "etc/topotune", f))

    # check asks what topotuned selects (session_select_profile()), not every profile anyone names:
    # the cases where the two disagreed. (tests/dbus/test-truth.py starts topotuned on each.)
    rule = os.path.join(hygon, "etc/topotune/hardware.d/60-x.ini")
    persist = os.path.join(hygon, "etc/topotune/topotune.conf.d/99-set-profile.conf")
    write(rule, "[match]\nvendor = hygon\n[profile]\nname = nope\n")
    write(persist, "[daemon]\nprofile = latency\n")
    rc, out, err = run("--root", hygon, "check")
    check("check: the persistent choice (99-set-profile.conf) beats a matching rule naming a missing profile: "
          "exit 0, the rule in a note, latency selected",
          rc == 0 and "Profile: latency, as topotuned selects it at start "
          "(/etc/topotune/topotune.conf.d/99-set-profile.conf:2)" in out
          and "Note: /etc/topotune/hardware.d/60-x.ini:4: profile 'nope' not found" in err, (rc, out, err))
    os.remove(persist)
    write(rule, "[match]\nvendor = intel\n[profile]\nname = nope\n")
    rc, out, err = run("--root", hygon, "check")
    check("check: a rule for other machines naming a missing profile: exit 0, a note says it does not match",
          rc == 0 and "Profile: balanced" in out and "does not match" in err, (rc, out, err))
    write(rule, "[match]\nvendor = hygon\n[profile]\nname = throughput\n")
    os.rename(os.path.join(hygon, "usr/lib/topotune/profiles/balanced.ini"), os.path.join(base, "balanced.save"))
    rc, out, err = run("--root", hygon, "check", "--json")
    j = json.loads(out) if out else {}
    check("check: without balanced.ini, a matching rule selecting throughput: exit 0, as topotuned starts applied",
          rc == 0 and j.get("ok") is True and j.get("profile") == "throughput"
          and j.get("profile_origin") == "/etc/topotune/hardware.d/60-x.ini:4", (rc, out, err))
    write(rule, "[match]\nvendor = amd\n[profile]\nname = throughput\n")
    rc, out, err = run("--root", hygon, "check")
    check("check: ... and with the rule not matching: exit 2, balanced is selected and missing",
          rc == 2 and "built-in default: profile 'balanced' not found" in err, (rc, out, err))
    os.rename(os.path.join(base, "balanced.save"), os.path.join(hygon, "usr/lib/topotune/profiles/balanced.ini"))
    os.remove(rule)

    # Bad input: exit 2 and a message naming the place.
    write(os.path.join(vm, "etc/topotune/profiles/broken.ini"), "[scheduler]\nsmt_buddy_assist = maybe\n")
    rc, out, err = run("--root", vm, "plan", "--profile", "broken")
    check("broken profile: exit 2", rc == 2, (rc, err))
    check("broken profile: FILE:LINE in the error", "/etc/topotune/profiles/broken.ini:2:" in err, err)
    write(os.path.join(vm, "etc/topotune/profiles/unknown.ini"), "[scheduler]\nsmt_buddy = on\n")
    rc, out, err = run("--root", vm, "plan", "--profile", "unknown")
    check("unknown key: exit 2 with FILE:LINE", rc == 2 and "/etc/topotune/profiles/unknown.ini:2:" in err, err)
    write(os.path.join(vm, "etc/topotune/profiles/badcpus.ini"), "[isolation]\nisolated_cpus = 3-1\n")
    rc, out, err = run("--root", vm, "plan", "--profile", "badcpus")
    check("cpulist 3-1: exit 2 quoting it", rc == 2 and "3-1" in err, err)
    rc, out, err = run("--root", vm, "plan", "--profile", "nosuch")
    check("missing profile: exit 2", rc == 2 and "nosuch" in err, err)
    rc, out, err = run("--root", os.path.join(base, "does-not-exist"), "topology")
    check("missing root: exit 2 naming it", rc == 2 and "does-not-exist" in err, err)
    os.makedirs(os.path.join(base, "empty"))
    rc, out, err = run("--root", os.path.join(base, "empty"), "topology")
    check("empty root: exit 2, no crash", rc == 2 and err.strip() != "", err)
    rc, out, err = run("--root", vm, "frobnicate")
    check("unknown verb: exit 2", rc == 2, err)
    rc, out, err = run("--root", vm, "explain", "nonsense")
    check("explain unknown setting: exit 2", rc == 2 and "nonsense" in err, err)
    rc, out, err = run("--root", vm, "layout", "--cpu", "x")
    check("layout --cpu x: exit 2", rc == 2, err)

    # Scale: a 4 MiB profile, 10,000 profiles, a profile with 100,000 keys.
    big = os.path.join(vm, "etc/topotune/profiles/big.ini")
    write(big, "[scheduler]\nsmt_buddy_assist = off\n" + ("# padding padding padding padding padding\n" * 100000))
    check("4 MiB profile is 4 MiB", os.path.getsize(big) >= 4 * 1024 * 1024, os.path.getsize(big))
    rc, out, err = run("--root", vm, "plan", "--profile", "big")
    check("4 MiB profile: plans", rc == 0 and "Profile: big" in out, err)
    write(os.path.join(vm, "etc/topotune/profiles/keys.ini"),
          "[scheduler]\n" + "".join(f"key{i} = on\n" for i in range(100000)))
    rc, out, err = run("--root", vm, "plan", "--profile", "keys")
    check("100,000 keys: exit 2 at the first unknown key",
          rc == 2 and "/etc/topotune/profiles/keys.ini:2: unknown key 'key0'" in err, err)
    many = os.path.join(base, "many")
    shutil.copytree(vm, many, symlinks=True)
    pdir = os.path.join(many, "etc/topotune/profiles")
    for f in os.listdir(pdir):
        os.remove(os.path.join(pdir, f))
    for i in range(10000):
        with open(os.path.join(pdir, f"p{i:05d}.ini"), "w") as f:
            f.write(f"[profile]\ndescription = generated {i}\n")
    rc, out, err = run("--root", many, "profiles")
    check("10,000 profiles: all listed", rc == 0 and out.count("generated") == 10000, (rc, err[-200:]))

    # A FIFO (or a device, a socket) among the configuration files: refused at once, never read.
    fifo = os.path.join(vm, "etc/topotune/topotune.conf.d/50-fifo.conf")
    os.makedirs(os.path.dirname(fifo), exist_ok=True)
    os.mkfifo(fifo)
    rc, out, err = run_bounded("--root", vm, "plan")
    check("FIFO drop-in in topotune.conf.d: exit 2 at once, naming it",
          rc == 2 and "/etc/topotune/topotune.conf.d/50-fifo.conf: not a regular file" in err, (rc, err))
    os.remove(fifo)
    os.mkfifo(os.path.join(vm, "etc/topotune/profiles/fifo.ini"))
    rc, out, err = run_bounded("--root", vm, "plan", "--profile", "fifo")
    check("FIFO profile: exit 2 at once, naming it",
          rc == 2 and "/etc/topotune/profiles/fifo.ini: not a regular file" in err, (rc, err))
    rc, out, err = run_bounded("--root", vm, "profiles")
    check("FIFO profile: profiles lists it as invalid, no hang",
          rc == 0 and "fifo" in out and "not a regular file" in out, (rc, out, err))
    os.remove(os.path.join(vm, "etc/topotune/profiles/fifo.ini"))
    hwfifo = os.path.join(vm, "etc/topotune/hardware.d/10-fifo.ini")
    os.makedirs(os.path.dirname(hwfifo), exist_ok=True)
    os.mkfifo(hwfifo)
    rc, out, err = run_bounded("--root", vm, "plan")
    check("FIFO hardware rule: exit 2 at once, naming it", rc == 2 and "10-fifo.ini: not a regular file" in err,
          (rc, err))
    os.remove(hwfifo)
    write(os.path.join(vm, "etc/topotune/profiles/huge.ini"), "[scheduler]\n" + "#" * (9 * 1024 * 1024) + "\n")
    rc, out, err = run_bounded("--root", vm, "plan", "--profile", "huge")
    check("9 MiB profile: refused with its size", rc == 2 and "huge.ini: larger than 8 MiB" in err, (rc, err))
    os.remove(os.path.join(vm, "etc/topotune/profiles/huge.ini"))

    # A profile's bytes reach the terminal escaped, as the daemon's bus text is.
    write(os.path.join(vm, "etc/topotune/profiles/esc.ini"),
          "[profile]\ndescription = red \x1b[31mALERT\x1b[0m \x07 \x9b2J\n")
    with open(os.path.join(vm, "etc/topotune/profiles/bin.ini"), "wb") as f:
        f.write(b"[profile]\ndescription = bin \xff\xfe\x01 end\n")
    p = subprocess.run([ctl, "--root", vm, "profiles"], capture_output=True, timeout=60)
    check("profiles (offline): control and invalid bytes escaped, never raw",
          p.returncode == 0 and b"\x1b" not in p.stdout and b"\x07" not in p.stdout and b"\xff" not in p.stdout
          and b"\xc2\x9b" not in p.stdout and b"red \\x1b[31mALERT" in p.stdout and b"bin \\xff\\xfe\\x01 end" in p.stdout,
          p.stdout[-400:])
    write(os.path.join(vm, "etc/topotune/profiles/esckey.ini"), "[scheduler]\nsmt\x1b[2J = on\n")
    p = subprocess.run([ctl, "--root", vm, "plan", "--profile", "esckey"], capture_output=True, timeout=60)
    check("an error quoting a profile line: escaped on stderr",
          p.returncode == 2 and b"\x1b" not in p.stderr and b"smt\\x1b[2J" in p.stderr, p.stderr[-300:])
    for f in ("esc.ini", "bin.ini", "esckey.ini"):
        os.remove(os.path.join(vm, "etc/topotune/profiles", f))

    # layout --compare: the kernel's /proc/schedstat against the prediction.
    write(os.path.join(vm, "proc/schedstat"),
          "version 17\ntimestamp 1\ncpu0 0 0\ndomain0 MC 3 0 0\ncpu1 0 0\ndomain0 MC 3 0 0\n")
    rc, out, err = run("--root", vm, "layout", "--compare")
    check("layout --compare: equal -> exit 0", rc == 0 and "match the prediction" in out, out + err)
    write(os.path.join(vm, "proc/schedstat"),
          "version 17\ntimestamp 1\ncpu0 0 0\ndomain0 SMT 1 0\ndomain1 MC 3 0 0\ncpu1 0 0\ndomain0 MC 3 0 0\n")
    rc, out, err = run("--root", vm, "layout", "--compare")
    check("layout --compare: different -> exit 1 naming the CPU",
          rc == 1 and "cpu0: 2 domains, predicted 1" in out, out + err)
    os.remove(os.path.join(vm, "proc/schedstat"))
    rc, out, err = run("--root", vm, "layout", "--compare")
    check("layout --compare without schedstat: exit 2 naming it", rc == 2 and "proc/schedstat" in err, out + err)

    # diagnose: --root reads the recorded tree only and says which kinds need a live machine.
    rc, out, err = run("--root", vm, "diagnose")
    check("diagnose --root: the live kinds are named as not checked, exit 0 or 1",
          rc in (0, 1) and "not checked: smt-stacking: needs a live machine" in out
          and "Firmware: " in out, out + err)
    rc, out, err = run("--root", vm, "diagnose", "--duration", "0")
    check("diagnose --duration 0: exit 2, the bad value named", rc == 2 and "'0'" in err, err)
    rc, out, err = run("--root", vm, "diagnose", "extra")
    check("diagnose with an argument: exit 2, named", rc == 2 and "extra" in err, err)
    if os.geteuid() == 0 and os.access(ctl, os.X_OK):
        p = subprocess.run([ctl, "diagnose", "--duration", "0.6", "--json"], capture_output=True, text=True,
                           timeout=60, user="nobody", group="nogroup" if os.path.exists("/etc/group") else None)
        check("diagnose on the live machine as an ordinary user: exit 0 or 1, sampled, a schema 1 document",
              p.returncode in (0, 1) and json.loads(p.stdout or "{}").get("live") is True, p.stdout[-400:] + p.stderr)

    # The completion offers every verb of --help (one declaration, checked here).
    rc, out, _ = run("--help")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../completion/topotunectl")) as f:
        m = re.search(r"local verbs='([^']*)'", f.read())
    help_verbs = set(re.findall(r"^  ([a-z][a-z-]+)\b", out, re.M))
    check("completion's verbs are --help's", m and set(m.group(1).split()) == help_verbs,
          (sorted(help_verbs), m and m.group(1)))

    # After topotuned applied hpc and the kernel refused IRQs 25 and 26 (managed: EIO), only they are left
    # on isolated CPUs; the daemon keeps them in /run/topotune/irqs-refused. The offline plan reads that
    # file: housekeeping is in sync, and the IRQs that cannot move are named with the kernel's answer.
    small = make_tree(base, "small-2s-4n")
    hk_list, hk_mask = ",".join(str(c) for c in range(0, 32, 2)), "55555555"
    write(os.path.join(small, "proc/irq/default_smp_affinity"), hk_mask + "\n")
    write(os.path.join(small, "sys/devices/virtual/workqueue/cpumask"), hk_mask + "\n")
    for irq, cpus in ((1, hk_list), (8, hk_list), (9, hk_list), (24, "0,2,16,18"), (27, "12,14,28,30")):
        write(os.path.join(small, f"proc/irq/{irq}/smp_affinity_list"), cpus + "\n")
    refused = os.path.join(small, "run/topotune/irqs-refused")
    # IRQ 99 was freed since the apply: ignored.
    write(refused, "# IRQs whose affinity the kernel refused at topotuned's last apply: IRQ ERRNO\n"
                   "25 EIO\n26 EIO\n99 EIO\n")

    def housekeeping_line(out):
        return next((l for l in out.splitlines() if l.startswith("  housekeeping ")), "")

    rc, out, err = run("--root", small, "plan", "--profile", "hpc")
    check("plan after refused IRQs: housekeeping in sync, not set", rc == 0
          and housekeeping_line(out).split()[1:2] == ["in-sync"], housekeeping_line(out) + err)
    check("plan after refused IRQs: no IRQ counted as a move; 25 and 26 named with the kernel's answer",
          "0 of 8 IRQs have isolated CPUs in their affinity and move" in out
          and "IRQ 25: the kernel refused (EIO: managed or per-CPU), IRQ 26: the kernel refused (EIO: managed or "
          "per-CPU)" in out and "IRQ 99" not in out, out)
    rc, out, err = run("--root", small, "plan", "--profile", "hpc", "--json")
    j = json.loads(out) if rc == 0 else {}
    hk_step = next((x for x in j.get("steps", []) if x.get("setting") == "housekeeping"), {})
    check("plan --json after refused IRQs: housekeeping in sync, irqs_refused lists 25 and 26 with EIO",
          hk_step.get("action") == "in-sync"
          and j.get("irqs_refused") == [{"irq": 25, "error": "EIO", "reason": "managed or per-CPU"},
                                        {"irq": 26, "error": "EIO", "reason": "managed or per-CPU"}],
          out[-1500:] + err)

    # A damaged file: named with its line in a kernel note, ignored whole (the IRQs count as moves again).
    write(refused, "25 EIO\n26 not-an-errno\n")
    rc, out, err = run("--root", small, "plan", "--profile", "hpc")
    check("damaged irqs-refused: exit 0, a note names the file and line, nothing taken from it", rc == 0
          and "Kernel note: housekeeping: /run/topotune/irqs-refused:2: not \"IRQ ERRNO\"" in out
          and housekeeping_line(out).split()[1:2] == ["set"] and "the kernel refused" not in out
          and "2 of 8 IRQs have isolated CPUs in their affinity and move" in out, out + err)
    rc, out, err = run("--root", small, "plan", "--profile", "hpc", "--json")
    j = json.loads(out) if rc == 0 else {}
    check("damaged irqs-refused --json: the note in kernel.notes, irqs_refused empty",
          j.get("irqs_refused") == [] and any("/run/topotune/irqs-refused:2:" in n
                                              for n in j.get("kernel", {}).get("notes", [])), out[-1500:] + err)
    # A link planted there is not followed (it could lead out of the root): said, not read.
    os.remove(refused)
    os.symlink("/etc/hostname", refused)
    rc, out, err = run("--root", small, "plan", "--profile", "hpc")
    check("irqs-refused a symlink: not followed, a note names the file", rc == 0
          and "Kernel note: housekeeping: /run/topotune/irqs-refused: " in out and "the kernel refused" not in out,
          out + err)
    # No file (no daemon ran, or it reverted): the plan is the plain one, without a note.
    os.remove(refused)
    rc, out, err = run("--root", small, "plan", "--profile", "hpc")
    check("no irqs-refused: housekeeping set, 2 of 8 IRQs move, no note", rc == 0
          and "2 of 8 IRQs have isolated CPUs in their affinity and move" in out and "irqs-refused" not in out,
          out + err)

    # Truncated sysfs file: reported, not guessed, no crash.
    open(os.path.join(vm, "sys/devices/system/cpu/cpu1/topology/thread_siblings_list"), "w").close()
    os.remove(os.path.join(vm, "sys/devices/system/cpu/cpu1/topology/thread_siblings"))
    rc, out, err = run("--root", vm, "topology", "--json")
    j = json.loads(out) if rc == 0 else {}
    check("truncated thread_siblings_list: still 2 CPUs", j.get("cpus") == 2, out + err)
    check("truncated thread_siblings_list: named in a note",
          any("cpu1/topology/thread_siblings_list: does not list cpu1" in n for n in j.get("notes", [])), out)

print(f"{results['pass']} passed, {results['fail']} failed")
sys.exit(1 if results["fail"] else 0)
