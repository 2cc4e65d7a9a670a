#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""topotunectl on generated trees with one file damaged (gen-sysroot.py
--damage), against the expected output in damage/CASE.txt.

    check-damage.py TOPOTUNECTL GEN-SYSROOT CONF-DIR [--write DIR]

Each case is the small-2s-4n machine (2 packages x 8 cores x 2 threads, two
nodes per package, two L3s per node) with one kind of damage; the rule is
that the reader takes the same fact from the next file the kernel offers and
names the damaged one in a note, or says "unknown", and never counts wrong.
Prints PASS/FAIL per case and "N passed, M failed"; a FAIL shows a diff.
--write DIR writes what topotunectl printed to DIR/CASE.txt (for a human
to read before it becomes the expected text: never copy it unread).
"""
import difflib
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "damage")

# case: (gen-sysroot --damage items, topotunectl verbs)
CASES = {
    # node1/cpulist "3-1,x": its cpumap says 4-7,20-23
    "node-cpulist": (["node-cpulist=1"], [["topology"]]),
    # cpu3's thread_siblings_list unparsable: thread_siblings says 3,19
    "thread-siblings": (["thread-siblings=3"], [["topology"]]),
    # cpu0's L3 shared_cpu_list unparsable, its shared_cpu_map intact
    "l3-list": (["l3-list=0"], [["topology", "--json"]]),
    # cpu0's L3 list and map both unparsable: cpu1's set names cpu0
    "l3-list-and-map": (["l3-list=0", "l3-map=0"], [["topology", "--json"]]),
    # the L3 list and map of both CPUs of one L3 (0-1,16-17) unparsable: by cache id
    "l3-whole-group": ([f"l3-list={c}" for c in (0, 1, 16, 17)] +
                       [f"l3-map={c}" for c in (0, 1, 16, 17)], [["topology", "--json"]]),
    # cpu0's package_cpus_list unparsable: package_cpus
    "package-list": (["package-list=0"], [["topology"]]),
    # cpu/online (and present, possible) name 32-47, which do not exist
    "phantom-cpus": (["phantom-cpus=16"], [["topology"], ["topology", "--json"]]),
    # cpu5's directory is gone; cpu21's sibling list, its caches and node1 name it
    "cpu-dir": (["cpu-dir=5"], [["topology"]]),
    # no nodeN/distance: the plan and the layout say the distances are assumed
    "no-distance": (["no-distance"], [["topology"], ["plan"], ["layout", "--json", "--cpu", "0"]]),
}


def output(ctl, root, verbs):
    out = ""
    for v in verbs:
        p = subprocess.run([ctl, "--root", root, *v], capture_output=True, text=True, timeout=60)
        text = p.stdout
        if v[0] == "layout" and '  "cpus"' in text:
            # the per-CPU domains are the plan's business: keep the head
            text = text[:text.index('  "cpus"')]
        out += f"$ topotunectl {' '.join(v)}\n{text}{p.stderr}(exit {p.returncode})\n"
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
    with tempfile.TemporaryDirectory(prefix="damage.", dir=base) as tmp:
        for name, (damage, verbs) in CASES.items():
            root = os.path.join(tmp, name)
            subprocess.run([sys.executable, gen, "-q", *[f"--damage={d}" for d in damage], "small-2s-4n", root],
                           check=True)
            shutil.copytree(os.path.join(conf, "profiles"), os.path.join(root, "usr/lib/topotune/profiles"))
            shutil.copytree(os.path.join(conf, "hardware.d"), os.path.join(root, "usr/lib/topotune/hardware.d"))
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
                print(f"FAIL {name}: topotunectl's output (+) differs from damage/{name}.txt (-)")
                sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                           f"damage/{name}.txt", "topotunectl", n=1))
    if failed:
        print("(if the change is meant: TOPOTUNE_REGEN=1 meson test --suite expected, then review git diff)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
