#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The --json contract, offline: every verb of `topotunectl --help` prints a
document that validates against schema/topotunectl.schema.json, or is named
here as one the dbus tier validates (it needs topotuned), or refuses --json
with an error (metrics: the Prometheus text format).

Usage: test-json.py TOPOTUNECTL GEN-SYSROOT CONF-DIR
Each check prints PASS/FAIL; the last line is "N passed, M failed".
"""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import json_contract  # noqa: E402
import sysroot_tree  # noqa: E402

ctl, gen, conf = sys.argv[1:4]
results = {"pass": 0, "fail": 0}

# Verbs that need topotuned: validated by tests/dbus/test-dbus.py.
DAEMON_VERBS = {"status", "apply", "revert", "reload", "verify", "set-profile", "auto-profile", "hold", "trial"}


def check(name, cond, detail=""):
    results["pass" if cond else "fail"] += 1
    print(f"PASS {name}" if cond else f"FAIL {name}: {detail}")


def run(*args):
    p = subprocess.run([ctl, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def make_tree(base, spec, *gen_args):
    return sysroot_tree.make_tree(gen, conf, base, spec, *gen_args)


covered = set()


def validate(name, kind, args, rcs=(0,)):
    """Run topotunectl ARGS; its stdout must be a valid @kind document."""
    verb = next(a for a in args if not a.startswith("-") and not a.startswith("/")
                and a not in ("stock", "patched", "probe"))
    rc, out, err = run(*args)
    doc, errs = json_contract.parse_and_validate(out, kind)
    check(f"{name}: exit {rc}, a valid '{kind}' document",
          rc in rcs and doc is not None and not errs, f"rc {rc}: " + "; ".join(errs[:5]) + err[-300:])
    if rc in rcs and doc is not None and not errs:
        covered.add(verb)
    return doc or {}


tmpbase = "/dev/shm" if os.path.isdir("/dev/shm") else None
with tempfile.TemporaryDirectory(dir=tmpbase) as base:
    hygon = make_tree(base, "hygon-7447v-2s-nps6")
    vm = make_tree(base, "vm-2cpu")
    nodist = make_tree(base, "gnr-2s-snc3", "--damage", "no-distance")
    arm = make_tree(base, "arm-2cluster-10x925-10a725")

    # The schema itself: the setting names are the settings table's.
    rc, out, _ = run("explain", "--list")
    check("schema's setting names are `explain --list`",
          sorted(json_contract.SCHEMA["$defs"]["setting"]["enum"]) == sorted(out.split()), out)

    for root in (hygon, vm, nodist, arm):
        tag = os.path.basename(root)
        validate(f"{tag} topology", "topology", ["--root", root, "topology", "--json"])
        validate(f"{tag} profiles", "profiles", ["--root", root, "profiles", "--json"])
        validate(f"{tag} plan", "plan", ["--root", root, "plan", "--json"])
        validate(f"{tag} layout", "layout_predicted", ["--root", root, "layout", "--json"])
    # The text prints "capacity 718-731" per kind: JSON carries both ends, lowest and highest.
    d = validate("arm two kinds: topology", "topology", ["--root", arm, "topology", "--json"])
    kinds = {k["name"]: (k.get("capacity_min"), k.get("capacity")) for k in d.get("core_kinds", [])}
    check("topology --json: each core kind with its lowest and highest capacity",
          kinds == {"Arm Cortex-A725": (718, 731), "Arm Cortex-X925": (1014, 1024)}, kinds)
    d = validate("hygon plan --profile throughput (patched kernel)", "plan",
                 ["--root", hygon, "--kernel", "patched", "plan", "--profile", "throughput", "--json"])
    steps = {s["setting"]: s for s in d.get("steps", [])}
    check("plan --json: smt_buddy_assist step with action, desired and origin FILE:LINE",
          steps.get("smt_buddy_assist", {}).get("action") == "set"
          and steps["smt_buddy_assist"]["desired"] == "on"
          and re.search(r"throughput\.ini:\d+$", steps["smt_buddy_assist"]["origin"] or ""), steps)
    d = validate("global --json before the verb", "plan", ["--json", "--root", vm, "plan"])
    d = validate("hygon layout --cpu 7", "layout_predicted", ["--root", hygon, "layout", "--json", "--cpu", "7"])
    check("layout --json --cpu 7: only CPU 7", [c["cpu"] for c in d.get("cpus", [])] == [7], d.get("cpus"))
    d = validate("no distances: layout --cpu 0 says assumed", "layout_predicted",
                 ["--root", nodist, "layout", "--json", "--cpu", "0"])
    check("... sched_distances_assumed with the assumed values", d.get("sched_distances_assumed") is True
          and d.get("assumed_distances", {}).get("remote") == 20, d)
    validate("layout --profile latency", "layout_predicted",
             ["--root", hygon, "layout", "--profile", "latency", "--json"])
    for setting in out.split():
        d = validate(f"explain {setting}", "explain", ["--root", hygon, "explain", "--json", setting])
    d = validate("explain --json relax_domain_level on hygon", "explain",
                 ["--root", hygon, "--kernel", "patched", "explain", "--json", "isolated_cpus"])
    check("explain: step of its own, layers lowest first",
          d.get("step", {}).get("setting") == "isolated_cpus" and isinstance(d.get("layers"), list), d)
    d = validate("explain housekeeping_smt (read by the isolated_cpus step)", "explain",
                 ["--root", hygon, "explain", "--json", "housekeeping_smt"])
    check("... its step is isolated_cpus'", d.get("step", {}).get("setting") == "isolated_cpus", d)

    with open(os.path.join(vm, "proc/schedstat"), "w") as f:
        f.write("version 17\ntimestamp 1\ncpu0 0 0\ndomain0 MC 3 0 0\ncpu1 0 0\ndomain0 MC 3 0 0\n")
    d = validate("layout --compare, equal", "layout_compare", ["--root", vm, "layout", "--compare", "--json"])
    check("... match true, 0 differences", d.get("match") is True and d.get("differences") == 0, d)
    with open(os.path.join(vm, "proc/schedstat"), "w") as f:
        f.write("version 17\ntimestamp 1\ncpu0 0 0\ndomain0 SMT 1 0\ndomain1 MC 3 0 0\ncpu1 0 0\ndomain0 MC 3 0 0\n")
    d = validate("layout --compare, different (exit 1)", "layout_compare",
                 ["--root", vm, "layout", "--json", "--compare"], rcs=(1,))
    check("... match false, the difference named", d.get("match") is False
          and any("cpu0" in x for x in d.get("first_differences", [])), d)

    validate("check, valid", "check", ["--root", hygon, "check", "--json"])
    bad = os.path.join(base, "bad.ini")
    with open(bad, "w") as f:
        f.write("[scheduler]\nsmt_buddy_assist = maybe\n")
    d = validate("check a bad candidate (exit 2)", "check",
                 ["--root", hygon, "check", "--json", "--as", "/etc/topotune/profiles/x.ini", bad], rcs=(2,))
    check("... its error names the file and line", any(e.get("line") == 2 for e in d.get("errors", [])), d)

    rc, out, err = run("--root", vm, "metrics", "--json")
    check("metrics --json refuses (Prometheus text format), exit 2, nothing on stdout",
          rc == 2 and out == "" and "Prometheus" in err, (rc, out[:100], err))
    rc, out, err = run("--json", "--root", vm, "metrics")
    check("global --json metrics refuses too", rc == 2 and out == "" and "Prometheus" in err, (rc, err))
    covered.add("metrics")
    rc, out, err = run("--root", vm, "profiles", "extra")
    check("profiles with an argument: exit 2, named", rc == 2 and "extra" in err, err)

    # diagnose: the recorded-tree kinds on --root; the live kinds say they were not checked.
    rc, out, _ = run("diagnose", "--list-kinds")
    check("schema's diagnose kinds are `diagnose --list-kinds`",
          sorted(json_contract.SCHEMA["$defs"]["diagnose_kind"]["enum"]) == sorted(out.split()), out)
    nps3 = make_tree(base, "hygon-7447v-2s-nps3", "--set", "kernel.patched=no")
    d = validate("hygon nps3 diagnose (base kernel: extra NUMA levels)", "diagnose",
                 ["--root", nps3, "diagnose", "--json"], rcs=(1,))
    check("... numa-levels found, smt-stacking not checked (needs a live machine)",
          any(f["kind"] == "numa-levels" for f in d.get("findings", []))
          and any(n["kind"] == "smt-stacking" for n in d.get("not_checked", [])), d)
    d = validate("hygon diagnose --only numa-levels (patched kernel: none)", "diagnose",
                 ["--root", nps3, "--kernel", "patched", "diagnose", "--only", "numa-levels", "--json"])
    check("... nothing found, only numa-levels checked", d.get("findings") == [] and d.get("checked") == ["numa-levels"], d)
    d = validate("vm diagnose --sample (a recorded tree sampled as if live)", "diagnose",
                 ["--root", vm, "diagnose", "--sample", "--duration", "0.2", "--only", "smt-stacking", "--json"])
    check("... live, sampled, no findings on an idle tree", d.get("live") is True and d.get("findings") == [], d)
    m = json.loads(run("--root", nps3, "diagnose", "--json")[1])
    m["findings"][0].pop("cpus")
    check("the schema rejects a finding without cpus", json_contract.errors(m, "diagnose"), m)
    rc, out, err = run("--root", vm, "diagnose", "--only", "nosuchkind")
    check("diagnose --only with an unknown kind: exit 2, the kinds named", rc == 2 and "smt-stacking" in err, err)

    # A validator that cannot fail would prove nothing: renamed or missing keys are caught.
    d = json.loads(run("--root", vm, "plan", "--json")[1])
    for what, mutate in (("schema 2", lambda x: x.update(schema=2)),
                         ("a step's desired renamed to want", lambda x: x["steps"][0].update(want=x["steps"][0].pop("desired"))),
                         ("profile missing", lambda x: x.pop("profile"))):
        m = copy.deepcopy(d)
        mutate(m)
        check(f"the schema rejects {what}", json_contract.errors(m, "plan"), m)

    # Every verb the help lists is covered here or in the dbus tier.
    rc, out, _ = run("--help")
    verbs = set(re.findall(r"^  ([a-z][a-z-]+)\b", out, re.M))
    missing = verbs - covered - DAEMON_VERBS
    check(f"every verb of --help has a JSON check ({len(verbs)} verbs)", verbs and not missing, sorted(missing))

print(f"{results['pass']} passed, {results['fail']} failed")
sys.exit(1 if results["fail"] else 0)
