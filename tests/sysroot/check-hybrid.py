#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""topotunectl on generated hybrid machines (Intel P/E cores, Arm
big.LITTLE), against the expected output in hybrid/CASE.txt.

    check-hybrid.py TOPOTUNECTL GEN-SYSROOT CONF-DIR [--write DIR]

Each case is a spec, files changed in the generated tree (None removes
one), and topotunectl verbs. What each checks: the core kinds (identity,
CPUs, capacity) in text and JSON, a damaged kind file named in a note, the
asymmetric-capacity flags of the predicted domains, which kind auto:
isolation takes, and hardware rules that match a core kind.
Prints PASS/FAIL per case and "N passed, M failed"; a FAIL shows a diff.
--write DIR writes what topotunectl printed to DIR/CASE.txt (to be read by
a human before it becomes the expected text).
"""
import difflib
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "hybrid")
RPL = "raptorlake-8p16e"
ARM = "arm-biglittle-4a55-4a76"
ARM2 = "arm-2cluster-10x925-10a725"
CPU = "sys/devices/system/cpu"

RULE = """# Intel hybrid desktops: isolate two E-cores for the pinned threads
[match]
has_core_kind = atom core
[profile]
name = hpc
[isolation]
isolated_cpus = auto:2-per-node
"""

# case: (spec, {path: text or None (remove) or "GLOB*" removal}, verbs)
CASES = {
    # P/E kinds from the cpu_core/cpu_atom PMUs; x86 has no capacities
    "raptorlake-topology": (RPL, {}, [["topology"], ["topology", "--json", "core_kinds"]]),
    # big.LITTLE kinds from midr_el1 and cpu_capacity
    "arm-topology": (ARM, {}, [["topology"], ["topology", "--json", "core_kinds"]]),
    # no midr_el1 (older kernels): the MIDR from /proc/cpuinfo
    "arm-cpuinfo-midr": (ARM, {f"{CPU}/cpu*/regs": None}, [["topology"]]),
    # cpu5's cpu_capacity unparsable: named, cpu5 a kind of unknown capacity
    "arm-bad-capacity": (ARM, {f"{CPU}/cpu5/cpu_capacity": "x\n"}, [["topology"]]),
    # MC spans both capacities: ASYM_CPUCAPACITY and _FULL, as the kernel sets them
    "arm-layout": (ARM, {}, [["layout", "--cpu", "0"], ["layout", "--cpu", "4"]]),
    # x86 hybrid: kinds without capacities, no asym flags, and the layout says why
    "raptorlake-layout": (RPL, {}, [["layout", "--cpu", "0"], ["layout", "--cpu", "16"],
                                    ["layout", "--json", "--cpu", "16"]]),
    # hpc's auto:2-per-llc takes E-cores on Intel hybrid
    "raptorlake-plan-hpc": (RPL, {}, [["plan", "--profile", "hpc"]]),
    # ... and the A55s on big.LITTLE, where the big cores are numbered last (taken before)
    "arm-plan-hpc": (ARM, {}, [["plan", "--profile", "hpc"]]),
    # hardware rules on core kinds: the E-core rule picks hpc, the Cortex-A55 one does not match
    "raptorlake-rule": (RPL, {"etc/topotune/hardware.d/60-hybrid.ini": RULE}, [["plan"], ["explain", "isolated_cpus"]]),
    "arm-rule": (ARM, {"etc/topotune/hardware.d/60-hybrid.ini": RULE}, [["plan"]]),
    # two micro-architectures, five capacities: two kinds (the MIDR parts), each with the capacities seen,
    # named as lscpu names them, and the machine's Name: too
    "arm-2cluster-topology": (ARM2, {}, [["topology"]]),
    # no MIDR at all: capacity classes within the tolerance, still two kinds
    "arm-2cluster-capacity-only": (ARM2, {f"{CPU}/cpu*/regs": None, "proc/cpuinfo": "processor\t: 0\nCPU implementer\t: 0x41\n"},
                                   [["topology"]]),
}


def edit(root, changes):
    for path, text in changes.items():
        if text is not None and not glob.has_magic(path):
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        paths = glob.glob(os.path.join(root, path)) if glob.has_magic(path) else [os.path.join(root, path)]
        for p in sorted(paths):
            if text is None:
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
            else:
                with open(p, "w") as f:
                    f.write(text)


def output(ctl, root, verbs):
    out = ""
    for v in verbs:
        key = None
        if v[0] == "topology" and len(v) == 3:
            v, key = v[:2], v[2]
        p = subprocess.run([ctl, "--root", root, *v], capture_output=True, text=True, timeout=60)
        text = p.stdout
        if v[0] == "layout" and '  "cpus"' in text:
            # the per-CPU domains are in the text layouts: keep the head
            text = text[:text.index('  "cpus"')]
        if key and p.returncode == 0:
            # the part of the JSON this case is about
            text = json.dumps({k: json.loads(text).get(k) for k in (key, key + "_source")}, indent=2) + "\n"
        shown = " ".join(v) + (f"  # {key}" if key else "")
        out += f"$ topotunectl {shown}\n{text}{p.stderr}(exit {p.returncode})\n"
    return out


def main():
    args = sys.argv[1:]
    write = None
    if "--write" in args:
        i = args.index("--write")
        write = args[i + 1]
        del args[i:i + 2]
    # TOPOTUNE_REGEN=1 meson test --suite expected: write the expected files themselves (tests/README.md).
    if os.environ.get("TOPOTUNE_REGEN", "0") not in ("", "0"):
        write = EXPECTED
    ctl, gen, conf = args
    passed = failed = 0
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="hybrid.", dir=base) as tmp:
        for name, (spec, changes, verbs) in CASES.items():
            root = os.path.join(tmp, name)
            subprocess.run([sys.executable, gen, "-q", spec, root], check=True)
            shutil.copytree(os.path.join(conf, "profiles"), os.path.join(root, "usr/lib/topotune/profiles"))
            shutil.copytree(os.path.join(conf, "hardware.d"), os.path.join(root, "usr/lib/topotune/hardware.d"))
            edit(root, changes)
            got = output(ctl, root, verbs)
            if write:
                with open(os.path.join(write, name + ".txt"), "w") as f:
                    f.write(got)
            try:
                with open(os.path.join(EXPECTED, name + ".txt")) as f:
                    want = f.read()
            except OSError as e:
                want = f"<{e.strerror}>\n"
            if got == want:
                passed += 1
                print(f"PASS {name}")
            else:
                failed += 1
                print(f"FAIL {name}: topotunectl's output (+) differs from hybrid/{name}.txt (-)")
                sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                           f"hybrid/{name}.txt", "topotunectl", n=1))
    if failed:
        print("(if the change is meant: TOPOTUNE_REGEN=1 meson test --suite expected, then review git diff)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
