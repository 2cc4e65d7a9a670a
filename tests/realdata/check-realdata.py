#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Check `topotunectl topology --json` against real machines.

Reads the shared real-data set (../shared/realdata: sysfs dumps S01-S19 and
CPUID dumps C01-C14, see its README.md) and asserts, for every dump, facts
that upstream projects wrote down about those machines: hwloc's lstopo output
(.console, .xml), util-linux's lscpu expected output, the OpenShift node
tuning operator's expected JSON, nri-plugins' and ghw's test assertions, and
libcpuid's expected blocks.  The expected values are quoted in the tables
below, or read from the upstream expected-output file that sits next to the
dump; none of them was produced by topotune.  Where upstream counts something
differently from the kernel (and so from topotune), the check says so in a
comment, cites the upstream number, and asserts what the kernel reports.

Usage: check-realdata.py --topotunectl BUILD/agent/cli/topotunectl
                         [--realdata DIR]

DIR defaults to ../shared/realdata next to the checkout.  Output: one line
per check (PASS, FAIL, XFAIL, XPASS, SKIP), then "N passed, M failed"
(", K skipped" when something was skipped).  Exit status 1 if anything
FAILed or XPASSed, else 0 -- also when DIR is absent: the data set is
optional, and its absence is reported as a skip.

Python 3 standard library only.  Dumps are unpacked into a temporary
directory (under /dev/shm when it exists) and removed afterwards.
"""

import argparse
import json
import lzma
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter

# ---------------------------------------------------------------------------
# Known topotune bugs.  Each entry is (dump, check) -> why it fails today.
# A listed check that fails prints XFAIL and does not fail the run; a listed
# check that passes prints XPASS and fails the run, so the entry is removed
# together with the fix.  Keep the reason specific: what the upstream file
# says, what the kernel file says, what topotune printed.
# ---------------------------------------------------------------------------
XFAIL = {
    # Empty: the last entries (physical_package_id -1 on POWER7 and s390,
    # where the package comes from core_siblings) were fixed in
    # agent/topology/topology.c join_package_by_siblings().
}


# ---------------------------------------------------------------------------
# cpulists and masks
# ---------------------------------------------------------------------------
def parse_cpulist(text):
    cpus = set()
    text = text.strip()
    if not text:
        return cpus
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            cpus.update(range(int(lo), int(hi) + 1))
        else:
            cpus.add(int(part))
    return cpus


def fmt_cpulist(cpus):
    cpus = sorted(cpus)
    out = []
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def parse_hwloc_mask(text):
    """hwloc XML cpuset: comma-separated 32-bit hex words, most significant
    first; an empty word is zero."""
    cpus = set()
    words = text.split(",")
    for pos, word in enumerate(reversed(words)):
        val = int(word, 16) if word else 0
        for bit in range(32):
            if val >> bit & 1:
                cpus.add(pos * 32 + bit)
    return cpus


def groups(sets):
    """A comparable, printable form of a collection of CPU sets (ids ignored)."""
    return sorted((fmt_cpulist(s) for s in sets), key=lambda s: (len(s) == 0, s))


# ---------------------------------------------------------------------------
# Upstream expected-output readers
# ---------------------------------------------------------------------------
class Upstream:
    """Facts read from one upstream expected-output file."""

    def __init__(self, source):
        self.source = source      # printed in FAIL lines
        self.counts = Counter()   # hwloc object type -> count
        self.sets = {}            # hwloc object type -> [(os_index, cpuset)]
        self.info = {}            # CPUVendor, CPUFamilyNumber, ...
        self.distances = None     # {(from_os, to_os): value}


_CONSOLE_LINE = re.compile(r"^( *)([A-Za-z][A-Za-z0-9]*)(\([A-Za-z]+\))?(?: L#\d+)?(?: \((.*)\))?$")
_MEMORY_TYPES = ("NUMANode", "MemCache")


def read_hwloc_console(path):
    """lstopo's text output: an indented tree; the tree ends at the first
    line that is not an object (the "depth N:" summary)."""
    up = Upstream("hwloc " + os.path.basename(path))
    stack = []   # [(indent, node)]
    nodes = []
    # newline="\n": some attribute values (DMI strings) contain a bare \r.
    with open(path, newline="\n") as f:
        for line in f:
            line = line.rstrip("\n")
            m = _CONSOLE_LINE.match(line)
            if not m:
                break
            indent, otype, attrs = len(m.group(1)), m.group(2), m.group(4) or ""
            pm = re.match(r"P#(\d+)", attrs)
            node = {"type": otype, "os": int(pm.group(1)) if pm else None,
                    "pus": set(), "parent": None}
            for key, val in re.findall(r'(CPU\w+)=("[^"]*"|\S+)', attrs):
                up.info.setdefault(key, val.strip('"'))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            if stack:
                node["parent"] = stack[-1][1]
            stack.append((indent, node))
            nodes.append(node)
    for node in nodes:
        up.counts[node["type"]] += 1
        if node["type"] == "PU":
            anc = node["parent"]
            while anc is not None:
                anc["pus"].add(node["os"])
                anc = anc["parent"]
    for node in nodes:
        cpus = node["pus"]
        if node["type"] in _MEMORY_TYPES:
            # A memory object has no CPU children: its cpuset is the one of
            # the nearest normal object it is attached to.
            anc = node["parent"]
            while anc["type"] in _MEMORY_TYPES:
                anc = anc["parent"]
            cpus = anc["pus"]
        up.sets.setdefault(node["type"], []).append((node["os"], set(cpus)))
    return up


def read_hwloc_xml(path):
    up = Upstream("hwloc " + os.path.basename(path))
    root = ET.parse(path).getroot()
    for obj in root.iter("object"):
        otype = obj.get("type")
        up.counts[otype] += 1
        osi = obj.get("os_index")
        cpus = parse_hwloc_mask(obj.get("cpuset")) if obj.get("cpuset") else set()
        up.sets.setdefault(otype, []).append((int(osi) if osi else None, cpus))
        for info in obj.findall("info"):
            if info.get("name", "").startswith("CPU"):
                up.info.setdefault(info.get("name"), info.get("value"))
    for dist in root.iter("distances2"):
        if dist.get("type") != "NUMANode" or dist.get("indexing") != "os":
            continue
        idx = [int(x) for x in dist.find("indexes").text.split()]
        vals = [int(x) for v in dist.findall("u64values") for x in v.text.split()]
        n = len(idx)
        up.distances = {(idx[i], idx[j]): vals[i * n + j] for i in range(n) for j in range(n)}
    return up


class Lscpu:
    """lscpu's expected output: the "Key: value" summary (repeated keys kept
    in order) and the first `lscpu -p` block (logical CPU,Core,Socket,...)."""

    def __init__(self, path):
        self.source = "util-linux " + os.path.basename(path)
        self.items = []
        self.rows = []     # dicts keyed by the -p header names
        header = None
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("# CPU,"):
                    if header is not None:
                        break
                    header = line[2:].split(",")
                    continue
                if header is not None:
                    if line and line[0].isdigit():
                        self.rows.append(dict(zip(header, line.split(","))))
                    elif self.rows:
                        break
                    continue
                m = re.match(r"^([^:#][^:]*):\s*(.*)$", line)
                if m:
                    self.items.append((m.group(1).strip(), m.group(2).strip()))

    def get(self, key):
        vals = [v for k, v in self.items if k == key]
        if len(vals) != 1:
            raise KeyError("%s: %d values for %r" % (self.source, len(vals), key))
        return vals[0]

    def all(self, key):
        return [v for k, v in self.items if k == key]

    def column_groups(self, column):
        """CPU sets by the value of a -p column ('-' or empty: unknown)."""
        out = {}
        for row in self.rows:
            val = row.get(column, "")
            if val in ("", "-"):
                continue
            out.setdefault(val, set()).add(int(row["CPU"]))
        return out


# ---------------------------------------------------------------------------
# Checks and reporting
# ---------------------------------------------------------------------------
class Report:
    def __init__(self):
        self.n = Counter()

    def line(self, kind, text):
        self.n[kind] += 1
        print("%s %s" % (kind, text))
        sys.stdout.flush()

    def summary(self):
        failed = self.n["FAIL"] + self.n["XPASS"]
        if self.n["XFAIL"]:
            print("%d expected failures (XFAIL table at the top of %s)"
                  % (self.n["XFAIL"], os.path.basename(__file__)))
        text = "%d passed, %d failed" % (self.n["PASS"], failed)
        if self.n["SKIP"]:
            text += ", %d skipped" % self.n["SKIP"]
        print(text)
        return 1 if failed else 0


class Target:
    """One topotune run on one machine, and the checks made on it."""

    def __init__(self, report, dump, j, stderr=""):
        self.report, self.dump, self.j, self.stderr = report, dump, j, stderr

    def check(self, what, got, want, source):
        key = (self.dump, what)
        ok = got == want
        if key in XFAIL:
            if ok:
                self.report.line("XPASS", "%s: %s = %s: now passes, remove it from XFAIL"
                                 % (self.dump, what, _show(got)))
            else:
                g, w = _mismatch(got, want)
                self.report.line("XFAIL", "%s: %s: got %s, want %s (%s) -- %s"
                                 % (self.dump, what, g, w, source, XFAIL[key]))
        elif ok:
            self.report.line("PASS", "%s: %s = %s" % (self.dump, what, _show(want)))
        else:
            g, w = _mismatch(got, want)
            self.report.line("FAIL", "%s: %s: got %s, want %s (%s)"
                             % (self.dump, what, g, w, source))

    # topotune's view, in the forms the checks compare
    def __getitem__(self, key):
        return self.j[key]

    def ids(self, listname):
        return {e["id"]: parse_cpulist(e["cpus"]) for e in self.j[listname]}

    def cpusets(self, listname):
        return groups(parse_cpulist(e["cpus"]) for e in self.j[listname])

    def note_about(self, needle):
        return any(needle in n for n in self.j["notes"])

    def distance_rows(self):
        """{(from, to): value} in node ids, or None."""
        d = self.j["distances"]
        if d is None:
            return None
        ids = [e["id"] for e in self.j["node_list"]]
        return {(ids[a], ids[b]): d[a][b] for a in range(len(ids)) for b in range(len(ids))}


def _fmt(v):
    if isinstance(v, (set, frozenset)):
        return "'%s'" % fmt_cpulist(v)
    if isinstance(v, dict):
        return "{%s}" % ", ".join("%s: %s" % (_fmt(k), _fmt(x)) for k, x in sorted(v.items()))
    if isinstance(v, list):
        return "[%s]" % ", ".join(_fmt(x) for x in v)
    if isinstance(v, tuple):
        return "(%s)" % ", ".join(_fmt(x) for x in v)
    return repr(v)


def _show(v, limit=300):
    text = _fmt(v)
    return text if len(text) <= limit else text[:limit] + "..."


def _mismatch(got, want):
    """got/want for a FAIL line; for two dicts only the keys that differ."""
    if isinstance(got, dict) and isinstance(want, dict):
        keys = sorted(k for k in set(got) | set(want) if got.get(k, "<none>") != want.get(k, "<none>"))
        got = {k: got.get(k, "<none>") for k in keys}
        want = {k: want.get(k, "<none>") for k in keys}
    return _show(got, 1000), _show(want, 1000)


# ---------------------------------------------------------------------------
# Check building blocks shared by the dumps
# ---------------------------------------------------------------------------
VENDOR = {"GenuineIntel": "intel", "AuthenticAMD": "amd", "HygonGenuine": "hygon",
          "ARM": "arm", "IBM/S390": "ibm"}


def spec_counts(t, up, quoted):
    """The counts quoted in the realdata README must be what the upstream
    file says; otherwise the table below, or the reader, is wrong."""
    got = {k: up.counts[k] for k in quoted}
    t.check("README quote matches %s" % up.source, got, quoted, "realdata README.md")


def hwloc_identity(t, up):
    if "CPUVendor" in up.info:
        t.check("cpu.vendor", t["cpu"]["vendor"], VENDOR[up.info["CPUVendor"]], up.source)
    if "CPUFamilyNumber" in up.info:
        t.check("cpu.family", t["cpu"].get("family"), int(up.info["CPUFamilyNumber"]), up.source)
    if "CPUModelNumber" in up.info:
        t.check("cpu.model", t["cpu"].get("model"), int(up.info["CPUModelNumber"]), up.source)
    if "CPUStepping" in up.info:
        t.check("cpu.stepping", t["cpu"].get("stepping"), int(up.info["CPUStepping"]), up.source)
    if "CPUModel" in up.info:
        t.check("cpu.name", " ".join(t["cpu"]["name"].split()), " ".join(up.info["CPUModel"].split()),
                up.source + " (whitespace folded)")


def hwloc_common(t, up, cores=True, llc="L3Cache"):
    """The facts every hwloc-described machine shares with the kernel view:
    online CPUs = PUs, packages with their CPUs (by P#), NUMA nodes with
    their CPUs (by P#), last-level cache groups, cores."""
    src = up.source
    pus = {o for o, _ in up.sets["PU"]}
    t.check("cpus", t["cpus"], up.counts["PU"], src)
    t.check("online", parse_cpulist(t["online"]), pus, src)
    t.check("packages", t["packages"], up.counts["Package"], src)
    want = {o: s for o, s in up.sets["Package"]}
    if None not in want:
        t.check("package cpus by id", t.ids("package_list"), want, src)
    else:
        # No P# (physical_package_id -1): compare the groups only.
        t.check("package cpus", t.cpusets("package_list"),
                groups(s for _, s in up.sets["Package"]), src)
    t.check("cpu_nodes", t["cpu_nodes"], up.counts["NUMANode"], src)
    want = {o: s for o, s in up.sets["NUMANode"]}
    got = {i: s for i, s in t.ids("node_list").items() if i in want}
    t.check("node cpus by id", got, want, src)
    t.check("llcs", t["llcs"], up.counts[llc], src)
    t.check("llc_level", t["llc_level"], int(llc[1]), src)
    t.check("llc cpus", t.cpusets("llc_list"), groups(s for _, s in up.sets[llc]), src)
    if cores:
        t.check("cores", t["cores"], up.counts["Core"], src)
    hwloc_identity(t, up)


def distances_check(t, want, source):
    """want: {(from, to): value} for every pair of the listed node ids."""
    got = t.distance_rows()
    if got is not None:
        got = {k: v for k, v in got.items() if k in want}
    t.check("distances", got, want, source)


def matrix(ids, rows):
    return {(ids[a], ids[b]): rows[a][b] for a in range(len(ids)) for b in range(len(ids))}


def distances_unknown(t, path, source):
    """No distance file in the dump: topotune must say so, not invent 10/20."""
    t.check("distances", t["distances"], None, source)
    t.check("note names %s" % path, t.note_about(path), True, source)


# ---------------------------------------------------------------------------
# The sysfs dumps.  Each function gets the Target (topotune's JSON for the
# dump's root), the unpacked root and the realdata directory.
# ---------------------------------------------------------------------------
def s01(t, root, data):
    up = read_hwloc_console(os.path.join(data, "sysfs/hwloc/64amd64-4s2n4ca2co.console"))
    spec_counts(t, up, {"Package": 4, "NUMANode": 8, "L3Cache": 8, "L2Cache": 32,
                        "Core": 64, "PU": 64})
    hwloc_common(t, up, cores=False)
    # hwloc counts 64 Core: each integer core of a Bulldozer compute unit is
    # a Core for it.  The kernel lists the two as thread_siblings (the
    # README: "every thread_siblings_list has 2 CPUs"), and the scheduler
    # builds its SMT level from that, so topotune must report 32 cores with
    # two threads each.  32 = hwloc's 32 L2 (one per compute unit).
    t.check("cores (kernel: CMT pairs are thread siblings)", t["cores"], up.counts["L2Cache"], up.source)
    t.check("threads_per_core", t["threads_per_core"], 2, "README S01 machine: thread_siblings pairs")
    t.check("nodes_per_package", t["nodes_per_package"], 2, "README S01: 2 NUMA nodes per socket")
    t.check("distance values", sorted(set(v for v in (t.distance_rows() or {}).values())),
            [10, 16, 22], "README S01 cross-check: distances 10/16/22")


def s02(t, root, data):
    up = read_hwloc_xml(os.path.join(data, "sysfs/hwloc/x86+linux__64amd64-4p2n4ca2co.xml"))
    spec_counts(t, up, {"Package": 4, "NUMANode": 8, "L3Cache": 8, "L2Cache": 32,
                        "Core": 64, "PU": 64})
    hwloc_common(t, up, cores=False)
    # As S01: hwloc's 64 Cores are 32 Bulldozer compute units of two
    # kernel thread siblings each.
    t.check("cores (kernel: CMT pairs are thread siblings)", t["cores"], up.counts["L2Cache"], up.source)
    t.check("threads_per_core", t["threads_per_core"], 2, "README S02: thread_siblings pairs as in S01")
    t.check("node 2 cpus", t.ids("node_list").get(2), set(range(32, 40)), "README S02 machine: node2=32-39")
    t.check("node 6 cpus", t.ids("node_list").get(6), set(range(16, 24)), "README S02 machine: node6=16-23")
    distances_check(t, up.distances, up.source)


def s03(t, root, data):
    up = read_hwloc_console(os.path.join(data, "sysfs/hwloc/48amd64-4pa2n6c-sparse.console"))
    spec_counts(t, up, {"Package": 4, "NUMANode": 8, "L3Cache": 8, "Core": 48, "PU": 48})
    hwloc_common(t, up)
    t.check("node ids", sorted(t.ids("node_list")), sorted(o for o, _ in up.sets["NUMANode"]),
            up.source + "; README S03 cross-check: node/online = 0-2,33-34,45,72-73")
    t.check("smt", t["smt"], False, "README S03 machine: no SMT")
    t.check("distance values", sorted(set((t.distance_rows() or {}).values())), [10, 16, 22],
            "README S03 cross-check: distances 10/16/22")


def s04(t, root, data):
    up = read_hwloc_console(os.path.join(data, "sysfs/hwloc/memorysidecaches.console"))
    spec_counts(t, up, {"Package": 2, "L3Cache": 2, "Group": 4, "NUMANode": 4,
                        "Core": 40, "PU": 80})
    hwloc_common(t, up)
    # SNC-2: package 0 holds nodes 0 and 2 (hwloc: NUMANode P#0 and P#2
    # under Package P#0).
    t.check("nodes_per_package", t["nodes_per_package"], 2, up.source)
    t.check("node 0 cpus", t.ids("node_list").get(0), set(range(0, 80, 4)),
            "README S04 cross-check: node0=0,4,...,76")
    ids = [0, 1, 2, 3]
    distances_check(t, matrix(ids, [[10, 21, 11, 21], [21, 10, 21, 11],
                                    [11, 21, 10, 21], [21, 11, 21, 10]]),
                    "README S04 cross-check: rows 10 21 11 21 / 21 10 21 11")


def s05_4socket(t, root, data):
    src = "nri-plugins pools_test.go (4-socket-server-nosnc)"
    # "leaf 36 CPUs, root 36*4=144": four sockets, each its own NUMA node.
    t.check("cpus", t["cpus"], 144, src)
    t.check("packages", t["packages"], 4, src)
    t.check("package sizes", sorted(len(s) for s in t.ids("package_list").values()), [36] * 4, src)
    t.check("cpu_nodes", t["cpu_nodes"], 4, "README S05 machine: 4 NUMA nodes")
    t.check("node 0 cpus", t.ids("node_list").get(0), parse_cpulist("0-17,72-89"),
            "README S05 machine: node0=0-17,72-89")
    t.check("cores", t["cores"], 72, "README S05 machine: 144 CPUs, SMT2 (72 cores)")
    t.check("distance values", sorted(set((t.distance_rows() or {}).values())), [10, 21],
            "README S05 machine: distances 10/21")
    modalias_identity(t)


def s05_desktop(t, root, data):
    src = "nri-plugins pools_test.go (desktop)"
    t.check("cpus", t["cpus"], 20, src + ": 20 CPUs in the leaf and root pools")
    t.check("packages", t["packages"], 1, "README S05 machine: 1 socket")
    t.check("cpu_nodes", t["cpu_nodes"], 1, "README S05 machine: 1 node")
    t.check("cores", t["cores"], 10, "README S05 machine: 20 CPUs (10 cores, SMT2)")
    modalias_identity(t)


def s05_server(t, root, data):
    src = "nri-plugins pools_test.go (server)"
    # "leaf pool 28 CPUs, root 112, remaining pool nodes {0..6}": root +
    # 2 sockets + 4 SNC nodes = 7 pools.
    t.check("cpus", t["cpus"], 112, src)
    t.check("packages", t["packages"], 2, src + ": 7 pools = root + 2 sockets + 4 nodes")
    t.check("cpu_nodes", t["cpu_nodes"], 4, src + ": 7 pools = root + 2 sockets + 4 nodes")
    t.check("cpu node sizes", sorted(len(s) for i, s in t.ids("node_list").items() if s),
            [28] * 4, src + ": leaf pool 28 CPUs")
    # The PMEM nodes have memory but no CPU: node/has_cpu=0-3, has_memory=0-5.
    t.check("nodes", t["nodes"], 6, "README S05 machine: has_memory=0-5")
    t.check("cpu-less nodes", sorted(i for i, s in t.ids("node_list").items() if not s), [4, 5],
            "README S05 machine: node4/node5 are CPU-less PMEM nodes")
    t.check("node 0 cpus", t.ids("node_list").get(0), set(range(0, 112, 4)),
            "README S05 machine: node0=0,4,8,...,108")
    t.check("nodes_per_package", t["nodes_per_package"], 2, "README S05 machine: SNC-2")
    # PMEM node distances: 17 to the local SNC node, 28 to every other CPU node.
    d = t.distance_rows() or {}
    for pm in (4, 5):
        t.check("node %d distances to CPU nodes" % pm,
                sorted(d.get((c, pm)) for c in range(4)), [17, 28, 28, 28],
                "README S05 machine: 17 to the local SNC node, 28 otherwise")
    modalias_identity(t)


def modalias_identity(t):
    # No /proc/cpuinfo in the nri-plugins dumps: identity comes from
    # cpu/modalias ("x86 family 6 model 0x55").
    src = "README S05: cpu/modalias says x86 family 6 model 0x55"
    t.check("cpu.source", t["cpu"]["source"], "modalias", src)
    t.check("cpu.vendor", t["cpu"]["vendor"], "intel", src)
    t.check("cpu.family", t["cpu"].get("family"), 6, src)
    t.check("cpu.model", t["cpu"].get("model"), 0x55, src)


def s06(t, root, data):
    up = read_hwloc_console(os.path.join(data, "sysfs/hwloc/256ppc-8n8s4t.console"))
    spec_counts(t, up, {"Group0": 4, "Group1": 8, "NUMANode": 8, "Package": 64,
                        "L3Cache": 64, "Core": 64, "PU": 256})
    # hwloc's 64 Packages have no P# (physical_package_id is -1): it builds
    # them from core_siblings, the kernel's own package mask.
    hwloc_common(t, up)
    t.check("threads_per_core", t["threads_per_core"], 4, up.source + ": 4 PU per Core")
    t.check("node ids", sorted(t.ids("node_list")), [0, 1, 4, 5, 8, 9, 12, 13], up.source)
    # No cpu/online or cpu/present in this old dump: topotune must say what
    # it used instead.
    t.check("note names cpu/online", t.note_about("/sys/devices/system/cpu/online"), True,
            "README S06: no cpu/online file")
    d = t.distance_rows() or {}
    t.check("distance values", sorted(set(d.values())), [10, 20, 40],
            "README S06 cross-check: distances 10/20/40")
    t.check("distance pairs at 20", sorted(k for k, v in d.items() if v == 20 and k[0] < k[1]),
            [(0, 1), (4, 5), (8, 9), (12, 13)], "README S06 cross-check: {0,1},{4,5},{8,9},{12,13} at 20")


def lscpu_common(t, ls, sockets=True, cores=True):
    src = ls.source
    present = {int(r["CPU"]) for r in ls.rows}
    t.check("present count", len(parse_cpulist(t["present"])), int(ls.get("CPU(s)")), src + ": CPU(s)")
    t.check("online", parse_cpulist(t["online"]), parse_cpulist(ls.get("On-line CPU(s) list")), src)
    off = ls.all("Off-line CPU(s) list")
    t.check("offline", parse_cpulist(t["offline"]), parse_cpulist(off[0]) if off else set(), src)
    tpc = set(int(v) for v in ls.all("Thread(s) per core"))
    t.check("threads_per_core", t["threads_per_core"], max(tpc), src)
    if sockets:
        socks = ls.column_groups("Socket")
        t.check("packages", t["packages"], len(socks), src + ": Socket column of lscpu -p")
        t.check("package cpus", t.cpusets("package_list"), groups(socks.values()),
                src + ": Socket column of lscpu -p")
    if cores:
        t.check("cores", t["cores"], len(ls.column_groups("Core")), src + ": Core column of lscpu -p")
    nn = ls.all("NUMA node(s)")
    if nn:
        t.check("nodes", t["nodes"], int(nn[0]), src)
        want = {}
        for k, v in ls.items:
            m = re.match(r"NUMA node(\d+) CPU\(s\)", k)
            if m:
                want[int(m.group(1))] = parse_cpulist(v)
        t.check("node cpus by id", t.ids("node_list"), want, src)
    for lvl in ("L3", "L2", "L1d"):
        inst = ls.all("%s cache" % lvl)
        if inst:
            # The last-level cache: the highest level lscpu lists.
            n = int(re.search(r"\((\d+) instances?\)", inst[0]).group(1))
            t.check("llcs", t["llcs"], n, src + ": %s cache instances" % lvl)
            t.check("llc_level", t["llc_level"], int(lvl[1]), src + ": highest cache listed")
            col = ls.column_groups(lvl)
            if col:
                t.check("llc cpus", t.cpusets("llc_list"), groups(col.values()),
                        src + ": %s column of lscpu -p" % lvl)
            break
    if "Vendor ID" in dict(ls.items) and ls.get("Vendor ID") in VENDOR:
        t.check("cpu.vendor", t["cpu"]["vendor"], VENDOR[ls.get("Vendor ID")], src)
    if ls.all("CPU family") and ls.get("Vendor ID") in ("GenuineIntel", "AuthenticAMD"):
        t.check("cpu.family", t["cpu"].get("family"), int(ls.get("CPU family")), src)
        t.check("cpu.model", t["cpu"].get("model"), int(ls.get("Model")), src)


def s07(t, root, data):
    ls = Lscpu(os.path.join(data, "sysfs/util-linux/lscpu-ppc64-POWER7-64cpu.expected"))
    # lscpu: Socket(s) 16, one per core, from core_siblings_list (0-3 for
    # cpu0..3): physical_package_id is -1, so the kernel's package mask is
    # the only package information there is.
    lscpu_common(t, ls)
    t.check("cpu.name", t["cpu"]["name"], ls.get("Model name"), ls.source)
    t.check("cpu-less node 1", t.ids("node_list").get(1), set(), ls.source + ": NUMA node1 CPU(s) empty")
    t.check("cpu_nodes", t["cpu_nodes"], 1, ls.source + ": only node0 has CPUs")
    distances_unknown(t, "node0/distance", "README S07: no node*/distance files")


def s08(t, root, data):
    up = read_hwloc_console(os.path.join(data, "sysfs/hwloc/128arm-2pa2n8cluster4co.console"))
    spec_counts(t, up, {"Package": 2, "NUMANode": 4, "L3Cache": 4, "Group": 32,
                        "L2Cache": 128, "Core": 128, "PU": 128})
    hwloc_common(t, up)
    t.check("package ids", sorted(t.ids("package_list")), [36, 8442], up.source + ": Package P#36, P#8442")
    # CPUImplementer=0x48 is HiSilicon in Arm's implementer code list.
    t.check("cpu.vendor", t["cpu"]["vendor"], "hisilicon", up.source + ": CPUImplementer=0x48")
    t.check("smt", t["smt"], False, up.source + ": one PU per Core")
    distances_check(t, matrix([0, 1, 2, 3], [[10, 16, 32, 33], [16, 10, 25, 32],
                                             [32, 25, 10, 16], [33, 32, 16, 10]]),
                    "README S08 cross-check: distance rows")


def s09(t, root, data):
    up = read_hwloc_console(os.path.join(data, "sysfs/hwloc/offline-cpu0-node0.console"))
    spec_counts(t, up, {"Package": 2, "NUMANode": 1, "L3Cache": 2, "Core": 17, "PU": 17})
    hwloc_common(t, up)
    t.check("node ids", sorted(t.ids("node_list")), [1], up.source + ": 1 NUMANode (P#1)")
    t.check("present", parse_cpulist(t["present"]), set(range(24)), "README S09 machine: present=0-23")
    # The kernel's cpu/offline (0-3,21-191) also lists possible-but-absent
    # CPUs; topotune's "offline" is present and not online, as lscpu's
    # Off-line list.
    t.check("offline", parse_cpulist(t["offline"]), set(range(24)) - {o for o, _ in up.sets["PU"]},
            "README S09 machine: present=0-23, " + up.source + " PUs")
    # node1's distance file is "21 10": only node1 exists, so the matrix
    # is its own entry.
    distances_check(t, {(1, 1): 10}, "README S09 cross-check: node1 distance = 21 10")


def s10(t, root, data):
    up = read_hwloc_console(os.path.join(data, "sysfs/hwloc/8em64t-2s2ca2c-buggynuma.console"))
    spec_counts(t, up, {"Package": 2, "NUMANode": 1, "L2Cache": 4, "Core": 8, "PU": 8})
    # The firmware puts CPUs 0-7 in all 8 nodes.  hwloc merges the
    # duplicates into 1 NUMANode; the kernel cannot have a CPU in two nodes
    # and the node directories still exist, so topotune keeps the 8 node
    # ids, gives the CPUs to the first node only (1 node with CPUs, as hwloc
    # says) and notes the duplicates.
    hwloc_common(t, up, llc="L2Cache")
    t.check("nodes (directories)", t["nodes"], 8, "README S10 cross-check: node0..node7")
    t.check("note on duplicate node cpus", t.note_about("node1/cpulist"), True,
            "README S10: node0..node7 cpulist = 0-7")
    t.check("distance values", sorted(set((t.distance_rows() or {}).values())), [10],
            "README S10 cross-check: all distances 10")


def s11(t, root, data):
    ls = Lscpu(os.path.join(data, "sysfs/util-linux/lscpu-arm-A510-A710-A715-X3.expected"))
    # lscpu prints one block per core type (Cortex-A510, A710, A715, X3),
    # each with its own "Socket(s): 1" and per-type Core ids, so it gives no
    # machine-wide socket or core-id count; the cores are the sum of the
    # blocks' "Core(s) per socket" x "Socket(s)": 3+2+2+1.
    lscpu_common(t, ls, sockets=False, cores=False)
    per = [int(c) * int(s) for c, s in zip(ls.all("Core(s) per socket"), ls.all("Socket(s)"))]
    t.check("core types", len(ls.all("Model name")), 4, ls.source)
    t.check("cores", t["cores"], sum(per), ls.source + ": sum of Core(s) per socket x Socket(s)")
    # No /sys/devices/system/node at all.
    t.check("nodes", t["nodes"], 1, ls.source + ": no NUMA lines")
    t.check("note names system/node", t.note_about("/sys/devices/system/node"), True,
            "README S11: no node directory")
    t.check("distances", t["distances"], None, "README S11: no node directory")
    # One core kind per lscpu model-name block, with as many CPUs (1 thread per core).
    kinds = {k["name"].removeprefix("Arm "): k["count"] for k in t["core_kinds"] or []}
    want = {n: int(c) * int(s) for n, c, s in zip(ls.all("Model name"), ls.all("Core(s) per socket"),
                                                 ls.all("Socket(s)"))}
    t.check("core kinds by name and CPU count", kinds, want, ls.source + ": one block per Model name")
    # The machine's name uses the part table too: every Model name lscpu prints (ours in CPU order).
    name = t["cpu"]["name"] or ""
    t.check("cpu.name names the parts as lscpu does",
            (name.startswith("Arm "), sorted(name.removeprefix("Arm ").split(" + "))), (True, sorted(ls.all("Model name"))),
            ls.source + ": Model name of each block")
    t.check("core kind capacities", [(k["cpus"], k["capacity"]) for k in t["core_kinds"] or []],
            [("0-2", 280), ("3-4", 855), ("5-6", 855), ("7", 1024)],
            "README S11: A510 cpu0-2 280, A715 cpu3-4 and A710 cpu5-6 855, X3 cpu7 1024")


def s12(t, root, data):
    up = read_hwloc_console(os.path.join(data, "sysfs/hwloc/20em64t-hybrid-1p6c2t+2ca4co1t.console"))
    spec_counts(t, up, {"Package": 1, "L3Cache": 1, "L2Cache": 8, "Core": 14, "PU": 20})
    hwloc_common(t, up)
    # 6 P-cores with 2 PUs (SMT) and 8 E-cores with 1: 14 cores, 20 CPUs.
    t.check("smt", t["smt"], True, up.source + ": P-cores have 2 PUs")
    t.check("threads_per_core", t["threads_per_core"], 2, up.source + ": at most 2 PUs per Core")
    # hwloc's cpukinds here come from cpufreq frequencies; the dump has no
    # cpu_core/cpu_atom PMU and x86 has no cpu_capacity: no kind is claimed.
    t.check("core kinds unknown", (t["core_kinds"], t["core_kinds_source"]), ([], None),
            "README S12: no cpu_core/cpu_atom or cpu_capacity files in the dump")


def s13(t, root, data):
    ls = Lscpu(os.path.join(data, "sysfs/util-linux/lscpu-rv64-milkvpioneer.expected"))
    # core_id repeats per cluster (0-3); lscpu's logical Core column still
    # has 64 values, and "Core(s) per socket: 64".
    lscpu_common(t, ls)
    t.check("cores per socket x sockets", t["cores"], int(ls.get("Core(s) per socket")) * int(ls.get("Socket(s)")),
            ls.source)
    t.check("nodes_per_package", t["nodes_per_package"], 4, ls.source + ": 4 nodes, 1 socket")
    # No cache directories and no distance files in the dump.
    t.check("llcs", t["llcs"], 0, "README S13: no cache directories")
    t.check("note on missing cache", t.note_about("cache"), True, "README S13: no cache directories")
    distances_unknown(t, "node0/distance", "README S13 cross-check: no node distance files")


def s14(t, root, data):
    ls = Lscpu(os.path.join(data, "sysfs/util-linux/lscpu-s390-lpar.expected"))
    # lscpu's "Core(s) per socket 4 / Socket(s) per book 6 / Book(s) 4" come
    # from /proc/sysinfo "CPU Topology SW: 0 0 0 4 6 4" (the machine's
    # topology slots), not from the CPUs of this LPAR; the -p block is the
    # per-CPU view built from core_siblings, and is what is compared.
    lscpu_common(t, ls)
    t.check("nodes", t["nodes"], 1, ls.source + ": no NUMA lines")
    t.check("note names system/node", t.note_about("/sys/devices/system/node"), True,
            "README S14: no NUMA directory")
    t.check("llcs", t["llcs"], 0, "README S14: no cache directories")


def s15(t, root, data):
    ls = Lscpu(os.path.join(data, "sysfs/util-linux/lscpu-x86_64-dell_e4310.expected"))
    lscpu_common(t, ls)
    t.check("cpu.name", t["cpu"]["name"], ls.get("Model name"), ls.source)
    distances_unknown(t, "node0/distance", "README S15: no node distance files")


def s16(t, root, data):
    ls = Lscpu(os.path.join(data, "sysfs/util-linux/lscpu-x86_64-64cpu-linux6.2.expected"))
    lscpu_common(t, ls)
    t.check("cpu.name", t["cpu"]["name"], ls.get("Model name"), ls.source)
    distances_unknown(t, "node0/distance", "README S16: no node distance files")


def s17(t, root, data):
    src = "ghw README.md (ghwc on linux-amd64-amd-ryzen-1600)"
    # "1 physical package, 6 cores, 12 hardware threads"; core ids have a
    # gap (0,1,2,4,5,6) and siblings are n and n+6.
    t.check("packages", t["packages"], 1, src)
    t.check("cores", t["cores"], 6, src)
    t.check("cpus", t["cpus"], 12, src)
    t.check("threads_per_core", t["threads_per_core"], 2, src + ": [0 6] [1 7] ...")
    t.check("llc cpus", t.cpusets("llc_list"), groups([parse_cpulist("0-2,6-8"), parse_cpulist("3-5,9-11")]),
            "README S17 machine: 2 L3s (CCX 0-2,6-8 and 3-5,9-11)")
    t.check("cpu.vendor", t["cpu"]["vendor"], "amd", "README S17 machine: AuthenticAMD family 0x17 model 1")
    t.check("cpu.family", t["cpu"].get("family"), 0x17, "README S17 machine: AuthenticAMD family 0x17 model 1")
    t.check("cpu.model", t["cpu"].get("model"), 1, "README S17 machine: AuthenticAMD family 0x17 model 1")
    # No cpu/online in the snapshot.
    t.check("note names cpu/online", t.note_about("/sys/devices/system/cpu/online"), True,
            "README S17: no cpu/online file")


def s18(t, root, data):
    src = "node-tuning-operator ppc-expected-info-must-gather.bare-metal.json"
    with open(os.path.join(data, "sysfs/cluster-node-tuning-operator/ppc-expected-info-must-gather.bare-metal.json")) as f:
        info = [n for r in json.load(f) for n in r["nodes"] if n["name"] == "master.internal"][0]
    t.check("cpus", t["cpus"], info["cpus_count"], src)
    t.check("smt", t["smt"], info["smt_enabled"], src)
    t.check("cpu_nodes", t["cpu_nodes"], info["numa_cells_count"], src)
    t.check("node cpus by id", t.ids("node_list"),
            {c["id"]: set(c["cores"]) for c in info["numa_cells"]}, src)
    # cAdvisor's view of the same node, in the same tarball.
    mi_src = "machineinfo.json in the must-gather (cAdvisor)"
    with open(os.path.join(root, "machineinfo.json")) as f:
        mi = json.load(f)
    t.check("packages", t["packages"], mi["num_sockets"], mi_src)
    t.check("cpus (cAdvisor num_cores)", t["cpus"], mi["num_cores"], mi_src)
    # cAdvisor's num_physical_cores is 28: it counts distinct core_id
    # values, which repeat in each socket.  The kernel has 2 x 28 cores.
    t.check("cores", t["cores"], 2 * mi["num_physical_cores"], mi_src + ": 28 core ids x 2 sockets")
    t.check("llcs", t["llcs"], 2, "README S18 cross-check: 2 L3")
    distances_check(t, matrix([0, 1], [[10, 20], [20, 10]]), "README S18 cross-check: distances 10 20 / 20 10")
    t.check("cpu.model", t["cpu"].get("model"), 106,
            "README S18 machine: Xeon Gold 6330 (Ice Lake-SP, family 6 model 0x6a)")
    t.check("note names cpu/online", t.note_about("/sys/devices/system/cpu/online"), True,
            "README S18: no cpu/online file")


def s19(t, root, data):
    src = "ghw cpu_linux_test.go (TestCheckCPUTopologyFilesForOfflineCPU)"
    # Loading must not complain about the offline CPUs' missing topology
    # directories, and gives >= 1 node with >= 1 core.
    t.check("no complaint about offline cpus", [l for l in t.stderr.splitlines() + t["notes"]
                                                 if re.search(r"cpu[23]\b", l)], [], src)
    t.check("nodes with cpus >= 1", t["cpu_nodes"] >= 1, True, src)
    t.check("cores >= 1", t["cores"] >= 1, True, src)
    t.check("online", parse_cpulist(t["online"]), {0, 1}, "README S19 machine: online=0-1")
    t.check("offline", parse_cpulist(t["offline"]), {2, 3}, "README S19 machine: offline=2-3")
    t.check("present", parse_cpulist(t["present"]), {0, 1, 2, 3}, "README S19 machine: present=0-3")
    t.check("packages", t["packages"], 2, "README S19 machine: 2 sockets x 1 core")
    t.check("node 0 cpus", t.ids("node_list").get(0), {0, 1}, "README S19 machine: 1 NUMA node (0-1)")


# (id, tarball below DIR, root inside the tarball, checks)
SYSFS = [
    ("S01", "sysfs/hwloc/64amd64-4s2n4ca2co.tar.bz2", "64amd64-4s2n4ca2co", s01),
    ("S02", "sysfs/hwloc/x86+linux__64amd64-4p2n4ca2co.tar.bz2", "64amd64-4p2n4ca2co/fsroot", s02),
    ("S03", "sysfs/hwloc/48amd64-4pa2n6c-sparse.tar.bz2", "48amd64-4d2n6c-sparse", s03),
    ("S04", "sysfs/hwloc/memorysidecaches.tar.bz2", "memorysidecaches", s04),
    ("S05/4-socket-server-nosnc", "sysfs/nri-plugins/topology-aware-policy-testdata-sysfs.tar.bz2",
     "sysfs/4-socket-server-nosnc", s05_4socket),
    ("S05/desktop", "sysfs/nri-plugins/topology-aware-policy-testdata-sysfs.tar.bz2",
     "sysfs/desktop", s05_desktop),
    ("S05/server", "sysfs/nri-plugins/topology-aware-policy-testdata-sysfs.tar.bz2",
     "sysfs/server", s05_server),
    ("S06", "sysfs/hwloc/256ppc-8n8s4t.tar.bz2", "256ppc-8n8s4t", s06),
    ("S07", "sysfs/util-linux/ppc64-POWER7-64cpu.tar.gz", "ppc64-POWER7-64cpu", s07),
    ("S08", "sysfs/hwloc/128arm-2pa2n8cluster4co.tar.bz2", "128arm-2pa2n8cluster4co", s08),
    ("S09", "sysfs/hwloc/offline-cpu0-node0.tar.bz2", "offline-cpu0-node0", s09),
    ("S10", "sysfs/hwloc/8em64t-2s2ca2c-buggynuma.tar.bz2", "8em64t-2s2ca2c-buggynuma", s10),
    ("S11", "sysfs/util-linux/arm-A510-A710-A715-X3.tar.gz", "arm-A510-A710-A715-X3", s11),
    ("S12", "sysfs/hwloc/20em64t-hybrid-1p6c2t+2ca4co1t.tar.bz2", "20em64t-hybrid-1p6c2t+2ca4co1t", s12),
    ("S13", "sysfs/util-linux/rv64-milkvpioneer.tar.gz", "rv64-milkvpioneer", s13),
    ("S14", "sysfs/util-linux/s390-lpar.tar.gz", "s390-lpar", s14),
    ("S15", "sysfs/util-linux/x86_64-dell_e4310.tar.gz", "x86_64-dell_e4310", s15),
    ("S16", "sysfs/util-linux/x86_64-64cpu-linux6.2.tar.gz", "x86_64-64cpu-linux6.2", s16),
    ("S17", "sysfs/ghw/linux-amd64-amd-ryzen-1600.tar.gz", ".", s17),
    ("S18", "sysfs/cluster-node-tuning-operator/bare-metal-master.internal-sysinfo.tgz", ".", s18),
    ("S19", "sysfs/ghw/linux-amd64-offlineCPUs.tar.gz", ".", s19),
]


# ---------------------------------------------------------------------------
# The CPUID dumps.  Expected identity in display form (family and model with
# the extended fields folded in).  For libcpuid .test files the numbers are
# also read back from the file's own expected block (extfamily, extmodel,
# stepping) and must agree with this table; for the hwloc per-PU dumps, from
# the hwloc XML (CPUVendor, CPUFamilyNumber, CPUModelNumber, CPUStepping);
# for the InstLatx64 dumps they are quoted from the realdata README.
# "brand" is quoted from the README's machine description, compared with
# whitespace folded.  "not_codename" is the wrong name libcpuid gives a
# Hygon part (README); topotune must never print it.
# ---------------------------------------------------------------------------
CPUID = [
    dict(id="C01", file="cpuid/libcpuid/amd-epyc-9654-96-core-processor-dual.test.xz",
         vendor="amd", family=25, model=17, stepping=1, codename_unknown=True, not_codename="EPYC (Milan)"),
    dict(id="C02", file="cpuid/libcpuid/amd-epyc-9655-96-core-processor.test.xz",
         vendor="amd", family=26, model=2, stepping=1, brand="AMD EPYC 9655 96-Core Processor",
         codename_unknown=True, not_codename="Abu Dhabi"),
    dict(id="C03", file="cpuid/libcpuid/amd-epyc-7742-64-core-processor-dual.test.xz",
         vendor="amd", family=23, model=49, stepping=0),
    dict(id="C04", file="cpuid/libcpuid/hygon-c86-7185-32-core-processor.test",
         vendor="hygon", family=24, model=0, stepping=1, brand="Hygon C86 7185 32-core Processor",
         not_codename="C86 (Dhyana)"),
    dict(id="C05", file="cpuid/instlatx64/HygonGenuine0900F11_Hygon_01_CPUID.txt",
         vendor="hygon", family=0x18, model=1, stepping=1, brand="Hygon C86 3250 8-core Processor",
         not_codename="Athlon II X4 (Llano)",
         source="README C05: CPUID(1).EAX=0x00900F11 (family 0x18, model 1, stepping 1)"),
    dict(id="C06", file="cpuid/instlatx64/HygonGenuine0900F22_Hygon_01_CPUID.txt",
         vendor="hygon", family=0x18, model=2, stepping=2, brand="Hygon C86 3350 8-core Processor",
         not_codename="Opteron (Barcelona)",
         source="README C06: CPUID(1).EAX=0x00900F22 (family 0x18, model 2, stepping 2)"),
    dict(id="C07", file="cpuid/instlatx64/GenuineIntel00A06D1_GraniteRapids_03_CPUID.txt",
         vendor="intel", family=6, model=0xAD, stepping=1, brand="Intel(R) Xeon(R) 658X",
         source="README C07: CPUID(1).EAX=0x000A06D1 (family 6, model 0xAD, stepping 1)"),
    dict(id="C08", file="cpuid/libcpuid/intel-xeon-w9-3475x.test.xz",
         vendor="intel", family=6, model=143, stepping=8, codename_unknown=True, not_codename="Conroe"),
    dict(id="C09", file="cpuid/libcpuid/intel-xeon-gold-5520+.test.xz",
         vendor="intel", family=6, model=207, stepping=2, codename_unknown=True, not_codename="Conroe"),
    dict(id="C10", file="cpuid/instlatx64/AuthenticAMD0AA0F02_K19_Bergamo_04_CPUID.txt",
         vendor="amd", family=0x19, model=0xA0, stepping=2, brand="AMD EPYC 9754 128-Core Emb Processor",
         source="README C10: CPUID(1).EAX=0x00AA0F02 (family 0x19, model 0xA0, stepping 2)"),
    dict(id="C11", file="cpuid/hwloc-x86/AMD-19h-Zen4-2xEpyc-9654.tar.bz2",
         vendor="amd", family=25, model=17, stepping=1),
    dict(id="C12", file="cpuid/hwloc-x86/Hygon-Dhyana-32cores.tar.bz2",
         vendor="hygon", family=24, model=0, stepping=0, brand="Hygon Dhyana Eng Sample"),
    dict(id="C13", file="cpuid/hwloc-x86/Intel-SapphireRapids-2xXeonMax9460.tar.bz2",
         vendor="intel", family=6, model=143, stepping=8, brand="Intel (R) Xeon (R) CPU Max 9460"),
    dict(id="C14", file="cpuid/libcpuid/intel-core-ultra-7-265k.test",
         vendor="intel", family=6, model=198, stepping=2, codename_unknown=True),
]

# libcpuid tests/run_tests.py field order (x86)
_LIBCPUID_FIELDS = ["architecture", "feature-level", "purpose", "family", "model", "stepping",
                    "extfamily", "extmodel"]


def libcpuid_expected(text):
    """The first expected block of a libcpuid .test file; "codename" is the
    line after the SSE unit size ("128 (non-authoritative)")."""
    parts = re.split(r"^-{80}$\n", text, flags=re.M)
    lines = parts[1].splitlines()
    exp = dict(zip(_LIBCPUID_FIELDS, lines))
    for i, line in enumerate(lines[:-1]):
        if line.endswith("authoritative)"):
            exp["codename"] = lines[i + 1]
    return exp


def hwloc_pu_to_libcpuid(pu_text):
    """hwloc's per-PU cpuid file -> libcpuid's legacy raw format.  Only the
    subleaf-0 lines are kept: basic_cpuid[leaf] / ext_cpuid[leaf-0x80000000]
    are all libcpuid needs for vendor, family, model and brand."""
    out = []
    for line in pu_text.splitlines():
        if line.startswith("#") or "=>" not in line:
            continue
        left, right = line.split("=>")
        _mask, eax, _ebx, ecx, _edx = (int(x, 16) for x in left.split())
        regs = " ".join("%08x" % int(x, 16) for x in right.split())
        if ecx != 0:
            continue
        if eax < 0x80000000:
            out.append("basic_cpuid[%d]=%s" % (eax, regs))
        else:
            out.append("ext_cpuid[%d]=%s" % (eax - 0x80000000, regs))
    return "\n".join(out) + "\n"


def check_cpuid(report, tool, data, tmp, sysroot, item):
    cid, rel = item["id"], item["file"]
    path = os.path.join(data, rel)
    if not os.path.exists(path):
        report.line("SKIP", "%s: %s not found" % (cid, rel))
        return
    if rel.endswith(".xz"):
        with lzma.open(path, "rt") as f:
            text = f.read()
    elif rel.endswith(".tar.bz2"):
        with tarfile.open(path) as tar:
            pu0 = [m for m in tar.getmembers() if m.name.endswith("/pu0")][0]
            text = hwloc_pu_to_libcpuid(tar.extractfile(pu0).read().decode())
    else:
        with open(path) as f:
            text = f.read()
    dump = os.path.join(tmp, cid + ".raw")
    with open(dump, "w") as f:
        f.write(text)

    want = (item["vendor"], item["family"], item["model"], item["stepping"])
    source = item.get("source")
    up = None
    if rel.endswith(".tar.bz2"):
        up = read_hwloc_xml(path.replace(".tar.bz2", ".xml"))
        source = up.source + " (pu0 converted to libcpuid format)"
        quoted = (VENDOR[up.info["CPUVendor"]], int(up.info["CPUFamilyNumber"]),
                  int(up.info["CPUModelNumber"]), int(up.info["CPUStepping"]))
    exp = None
    if rel.endswith(".tar.bz2"):
        pass
    elif source is None:
        exp = libcpuid_expected(text)
        source = "libcpuid expected block of %s" % os.path.basename(rel)
        # libcpuid's family/model fields are the base values; the display
        # values are extfamily/extmodel.
        quoted = (item["vendor"], int(exp["extfamily"]), int(exp["extmodel"]), int(exp["stepping"]))
    else:
        quoted = None   # quoted from the README above; nothing to read back
    if quoted is not None:
        Target(report, cid, {}).check("table matches %s" % source, want, quoted, "CPUID table in this script")

    j, err = run_topology(tool, sysroot, ["--cpuid-dump", dump])
    if j is None:
        report.line("FAIL", "%s: topotunectl --cpuid-dump failed: %s" % (cid, err.strip()))
        return
    t = Target(report, cid, j, err)
    cpu = j["cpu"]
    t.check("cpu.source", cpu["source"], "cpuid-dump", "--cpuid-dump given")
    t.check("cpu.vendor", cpu["vendor"], item["vendor"], source)
    t.check("cpu.family", cpu.get("family"), item["family"], source)
    t.check("cpu.model", cpu.get("model"), item["model"], source)
    t.check("cpu.stepping", cpu.get("stepping"), item["stepping"], source)
    if "brand" in item:
        t.check("cpu.name", " ".join(cpu["name"].split()), item["brand"],
                "README %s machine (whitespace folded)" % cid)
    # A codename is printed only when the linked libcpuid can know it: then it is
    # the name the libcpuid release that wrote the .test file expects.
    if exp is not None and "codename" in exp and cpu.get("codename") is not None:
        t.check("cpu.codename", cpu["codename"], exp["codename"],
                "libcpuid expected block of %s" % os.path.basename(rel))
    if item.get("codename_unknown"):
        t.check("no codename, and why: the part is newer than topotune's table of libcpuid's names",
                (cpu.get("codename"), cpu.get("codename_note", "").startswith("codename unknown to libcpuid ")),
                (None, True), "ISSUE 14: Debian 12's libcpuid 0.6.2 names newer parts wrongly")
    if "not_codename" in item:
        out = json.dumps(j)
        t.check("output contains libcpuid's codename %r" % item["not_codename"],
                item["not_codename"] in out, False, "README %s / ISSUE 2 item 3" % cid)
        p = subprocess.run([tool, "--root", sysroot, "--cpuid-dump", dump, "topology"], capture_output=True,
                           text=True, timeout=60)
        t.check("text output contains libcpuid's codename %r" % item["not_codename"],
                item["not_codename"] in p.stdout, False, "README %s / ISSUE 2 item 3, ISSUE 14" % cid)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------
def run_topology(tool, root, extra=()):
    cmd = [tool, "--root", root] + list(extra) + ["topology", "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    if p.returncode != 0:
        return None, "exit %d: %s" % (p.returncode, p.stderr)
    try:
        return json.loads(p.stdout), p.stderr
    except ValueError as e:
        return None, "bad JSON (%s): %s" % (e, p.stdout[:200])


def unpack(tarball, dest):
    """Unpack directories, regular files and relative symlinks that stay
    inside dest; skip anything else (the ghw snapshots' absolute etc/mtab
    link, device nodes).  Not extractall(): its per-member chown, chmod and
    utime take ~20 s on the 64k-entry nri-plugins tarball; this takes ~3 s."""
    dest = os.path.realpath(dest)
    seen = set()   # directories known to resolve inside dest

    def mkdir_inside(path):
        if path in seen:
            return True
        os.makedirs(path, exist_ok=True)
        real = os.path.realpath(path)
        if real != dest and not real.startswith(dest + os.sep):
            return False
        seen.add(path)
        return True

    with tarfile.open(tarball) as tar:
        for m in tar:
            name = os.path.normpath(m.name)
            if os.path.isabs(name) or name == "." or name.split(os.sep)[0] == "..":
                continue
            path = os.path.join(dest, name)
            if not mkdir_inside(os.path.dirname(path)):
                continue
            if m.isdir():
                mkdir_inside(path)
            elif m.isfile() or m.islnk():
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
                with os.fdopen(fd, "wb") as f:
                    f.write(tar.extractfile(m).read())
            elif m.issym():
                target = os.path.normpath(os.path.join(os.path.dirname(name), m.linkname))
                if os.path.isabs(m.linkname) or target.split(os.sep)[0] == "..":
                    continue
                os.symlink(m.linkname, path)


# ---------------------------------------------------------------------------
# topotunectl diagnose on real dumps: the firmware mode of S04 (SNC-2, as
# hwloc's lstopo shows: two NUMANodes under each Package of an Intel part)
# from `diagnose --root`, and a recorded sample built from S18's real
# /proc/interrupts (112 CPU columns: README S18, 2 x Xeon Gold 6330, 28
# cores x 2 threads each) through the isolation detector. The expected IRQ
# and column counts are this script's own reading of the file.
# ---------------------------------------------------------------------------
def check_diagnose(report, args, roots):
    root = roots.get("S04")
    if root is None:
        report.line("SKIP", "S04 diagnose: no S04")
    else:
        p = subprocess.run([args.topotunectl, "--root", root, "diagnose", "--json"],
                           capture_output=True, text=True, timeout=120)
        j = json.loads(p.stdout) if p.returncode in (0, 1) and p.stdout else {}
        t = Target(report, "S04", j)
        t.check("diagnose exit status", p.returncode in (0, 1), True, "0 nothing found, 1 findings")
        t.check("diagnose firmware mode", j.get("firmware", {}).get("mode"), "SNC-2",
                "hwloc memorysidecaches.console: 2 NUMANode per Package, Intel")
        t.check("diagnose: smt-stacking needs a live machine",
                any(n["kind"] == "smt-stacking" and "live machine" in n["why"] for n in j.get("not_checked", [])),
                True, "a recorded tree has no samples over time")
    root = roots.get("S18")
    if root is None or not args.test_diagnose:
        report.line("SKIP", "S18 recorded interrupts: %s" % ("no S18" if root is None else "no --test-diagnose"))
        return
    path = os.path.join(root, "proc/interrupts")
    with open(path) as f:
        lines = f.read().splitlines()
    header = lines[0].split()
    body = [ln for ln in lines[1:] if ln.strip()]
    first_irq = next(ln.split(":")[0].strip() for ln in body if ln.split(":")[0].strip().isdigit())
    p = subprocess.run([args.test_diagnose, "--interrupts", path], capture_output=True, text=True, timeout=60)
    out = p.stdout
    t = Target(report, "S18", {})
    t.check("interrupts: parsed", p.returncode, 0, p.stderr.strip()[-200:] or "test-diagnose --interrupts")
    t.check("interrupts: CPU columns", re.search(r"^cpus (\d+)$", out, re.M) and
            int(re.search(r"^cpus (\d+)$", out, re.M).group(1)), len(header),
            "the header's CPUn columns (README S18: 112 CPUs)")
    t.check("interrupts: lines", re.search(r"^lines (\d+)$", out, re.M) and
            int(re.search(r"^lines (\d+)$", out, re.M).group(1)), len(body), "the file's lines after the header")
    t.check("isolation-noisy on the recorded sample names IRQ %s on CPU 3" % first_irq,
            ("evidence: IRQ %s (" % first_irq) in out and "250 on isolated CPU 3" in out
            and out.count("evidence: IRQ") == 1, True, "250 interrupts added to its CPU3 column")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_data = os.path.normpath(os.path.join(here, "..", "..", "..", "shared", "realdata"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topotunectl", required=True)
    ap.add_argument("--realdata", default=default_data)
    ap.add_argument("--test-diagnose", help="build/tests/unit/test-diagnose, for the recorded-sample check")
    args = ap.parse_args()
    report = Report()
    data = args.realdata

    if not os.path.isdir(data):
        report.line("SKIP", "realdata: %s not found" % data)
        return report.summary()

    tmpbase = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="topotune-realdata-", dir=tmpbase) as tmp:
        unpacked = {}
        roots = {}
        for dump, rel, inner, fn in SYSFS:
            tarball = os.path.join(data, rel)
            if not os.path.exists(tarball):
                report.line("SKIP", "%s: %s not found" % (dump, rel))
                continue
            if rel not in unpacked:
                unpacked[rel] = os.path.join(tmp, "s%d" % len(unpacked))
                unpack(tarball, unpacked[rel])
            root = os.path.normpath(os.path.join(unpacked[rel], inner))
            if not os.path.isdir(os.path.join(root, "sys/devices/system/cpu")):
                report.line("FAIL", "%s: no sys/devices/system/cpu below %s in %s" % (dump, inner, rel))
                continue
            roots[dump] = root
            j, err = run_topology(args.topotunectl, root)
            if j is None:
                report.line("FAIL", "%s: topotunectl failed: %s" % (dump, err.strip()))
                continue
            try:
                fn(Target(report, dump, j, err), root, data)
            except Exception as e:  # a broken check must not hide the others
                report.line("FAIL", "%s: check raised %s: %s" % (dump, type(e).__name__, e))

        try:
            check_diagnose(report, args, roots)
        except Exception as e:
            report.line("FAIL", "diagnose: check raised %s: %s" % (type(e).__name__, e))

        sysroot = roots.get("S15")
        for item in CPUID:
            if sysroot is None:
                report.line("SKIP", "%s: no sysroot (S15) to run with" % item["id"])
                continue
            try:
                check_cpuid(report, args.topotunectl, data, tmp, sysroot, item)
            except Exception as e:
                report.line("FAIL", "%s: check raised %s: %s" % (item["id"], type(e).__name__, e))

    return report.summary()


if __name__ == "__main__":
    sys.exit(main())
