#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Build a fake Linux /sys + /proc tree from a small machine spec.

The tree is what topotune reads through its root fd: CPU topology and caches,
NUMA nodes and distances, /proc/cpuinfo, the scheduler knobs of a (patched or
stock) kernel, lockdown, debugfs and the cgroup cpuset files.  File formats
follow the kernel's: hex masks as %*pb (32-bit groups, nr_cpu_ids wide), lists
as %*pbl, one trailing newline.

It never writes /proc/schedstat or sched domains on its own: the domain layout
is what our planner predicts, so a generator guessing it would be circular.
Pass --schedstat FILE to copy a captured one in.

Stdlib only.  See README.md next to this file for the spec keys.
"""

import argparse
import configparser
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC_DIR = os.path.join(HERE, "specs")
MARKER = ".topotune-sysroot"


class SpecError(Exception):
    pass


# ---------------------------------------------------------------- value parsers

def p_int(v):
    try:
        return int(v, 0)
    except ValueError:
        raise SpecError(f"not an integer: {v!r}")


def p_str(v):
    return v


def p_bool(v):
    lv = v.lower()
    if lv in ("yes", "true", "on", "1"):
        return True
    if lv in ("no", "false", "off", "0"):
        return False
    raise SpecError(f"not a boolean (yes/no): {v!r}")


def p_intlist(v):
    return [p_int(x) for x in v.replace(",", " ").split()]


def p_size_k(v):
    """Cache size in KiB: '32K', '1M', '32768K', or 'none' (no such cache)."""
    s = v.strip().upper()
    if s in ("NONE", "", "0"):
        return 0
    mult = 1
    if s.endswith("K"):
        s = s[:-1]
    elif s.endswith("M"):
        s, mult = s[:-1], 1024
    try:
        return int(s) * mult
    except ValueError:
        raise SpecError(f"not a cache size (e.g. 32K, 1M): {v!r}")


def parse_cpulist(v):
    """Kernel cpulist ('0-3,8,10-11'); rejects reversed ranges and junk."""
    out = []
    v = v.strip()
    if not v:
        return out
    for part in v.split(","):
        part = part.strip()
        if not part:
            raise SpecError(f"empty element in cpulist {v!r}")
        a, _, b = part.partition("-")
        try:
            lo = int(a)
            hi = int(b) if b else lo
        except ValueError:
            raise SpecError(f"bad cpulist element {part!r} in {v!r}")
        if hi < lo:
            raise SpecError(f"reversed range {part!r} in {v!r}")
        out.extend(range(lo, hi + 1))
    return sorted(set(out))


def p_cpulist(v):
    return parse_cpulist(v)


def p_enum(*choices):
    def f(v):
        lv = v.lower()
        if lv not in choices:
            raise SpecError(f"{v!r} is not one of {', '.join(choices)}")
        return lv
    return f


def p_distance(v):
    """Either 'local=10 package=12 remote=32' or matrix rows (one per line)."""
    if "=" in v:
        rule = {}
        for tok in v.split():
            k, sep, val = tok.partition("=")
            if not sep or k not in ("local", "package", "remote", "cpuless"):
                raise SpecError(f"bad distance rule token {tok!r} "
                                "(want local=, package=, remote=, cpuless=)")
            rule[k] = p_int(val)
        if "local" not in rule:
            rule["local"] = 10
        return ("rule", rule)
    rows = [p_intlist(line) for line in v.strip().splitlines() if line.strip()]
    return ("matrix", rows)


def p_kinds(v):
    """Core kinds, one line each: cores=N [threads=T] [cores_per_l2=N]
    [capacity=C] [midr=0x...] [pmu=cpu_core|cpu_atom]."""
    kinds = []
    for line in v.strip().splitlines():
        if not line.strip():
            continue
        k = {}
        for tok in line.split():
            key, sep, val = tok.partition("=")
            if not sep or key not in ("cores", "threads", "cores_per_l2",
                                      "capacity", "midr", "pmu"):
                raise SpecError(f"bad kinds token {tok!r} (want cores=, "
                                "threads=, cores_per_l2=, capacity=, "
                                "midr=, pmu=)")
            if key == "pmu":
                if val not in ("cpu_core", "cpu_atom"):
                    raise SpecError(f"pmu={val!r}: want cpu_core or cpu_atom")
                k[key] = val
            else:
                k[key] = p_int(val)
        if "cores" not in k or k["cores"] < 1:
            raise SpecError(f"kinds line {line.strip()!r}: cores=N (N >= 1) "
                            "is required")
        kinds.append(k)
    return kinds


NUMBERINGS = ("threads-last", "amd", "intel", "threads-adjacent",
              "packages-interleaved")

# section -> key -> (parser, default); default None means "required".
SCHEMA = {
    "spec": {
        "description": (p_str, ""),
        "include": (p_str, ""),
    },
    "cpu": {
        "vendor": (p_str, None),
        "family": (p_int, None),
        "model": (p_int, None),
        "stepping": (p_int, 0),
        "model_name": (p_str, None),
        "microcode": (p_str, "0x1"),
        "mhz": (p_str, "2000.000"),
        "bogomips": (p_str, ""),
        "cpuid_level": (p_int, 13),
        "flags": (p_str, "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr "
                         "pge mca cmov pat pse36 clflush mmx fxsr sse sse2 "
                         "syscall nx lm"),
        "vmx_flags": (p_str, ""),
        "bugs": (p_str, ""),
        "tlb_size": (p_str, ""),
        "address_sizes": (p_str, "48 bits physical, 48 bits virtual"),
        "power_management": (p_str, ""),
    },
    "topology": {
        "packages": (p_int, 1),
        "package_ids": (p_intlist, []),
        "dies_per_package": (p_int, 1),
        "cores_per_package": (p_int, None),
        "threads_per_core": (p_int, 1),
        "nodes_per_package": (p_int, 1),
        "cores_per_llc": (p_int, 0),       # 0 = whole package
        "cores_per_l2": (p_int, 1),
        "cores_per_cluster": (p_int, 0),   # 0 = cores_per_l2
        "numbering": (p_enum(*NUMBERINGS), "threads-last"),
        "offline": (p_cpulist, []),
        "possible_cpus": (p_int, 0),       # 0 = number of present CPUs
        "kernel_max": (p_int, 8191),
    },
    "kinds": {
        "kinds": (p_kinds, []),
    },
    "cache": {
        "line_size": (p_int, 64),
        "l1d_size": (p_size_k, 32), "l1d_ways": (p_int, 8),
        "l1i_size": (p_size_k, 32), "l1i_ways": (p_int, 8),
        "l2_size": (p_size_k, 1024), "l2_ways": (p_int, 8),
        "l3_size": (p_size_k, 32768), "l3_ways": (p_int, 16),
    },
    "numa": {
        "node_ids": (p_intlist, []),
        "cpuless_node_ids": (p_intlist, []),
        "memoryless_node_ids": (p_intlist, []),
        "distance": (p_distance, ("rule", {"local": 10, "package": 12,
                                           "remote": 32})),
    },
    "kernel": {
        "release": (p_str, "7.3.4"),
        "build": (p_str, "#1 SMP PREEMPT_DYNAMIC Debian 7.3.4-1 "
                         "(2026-11-20)"),
        "patched": (p_bool, True),
        "smt_buddy_assist": (p_int, 0),
        "relax_domain_level": (p_int, -1),
        "schedstat_version": (p_int, 17),
        "lockdown": (p_enum("none", "integrity", "confidentiality", "absent"),
                     "none"),
        "debugfs": (p_enum("yes", "no", "readonly"), "yes"),
        "cgroup": (p_enum("v2", "v1", "none"), "v2"),
        "cmdline": (p_str, ""),
        "sched_features": (p_str, ""),
        "numa_balancing": (p_int, 1),
        "autogroup": (p_int, 1),
    },
}

# Stock 7.x x86 (non-PREEMPT_RT) kernel/sched/features.h, in order, with
# defaults.  The patch set adds SMT_BUDDY_ASSIST (off by default).
STOCK_FEATURES = [
    ("PLACE_LAG", True), ("PLACE_DEADLINE_INITIAL", True),
    ("PLACE_REL_DEADLINE", True), ("RUN_TO_PARITY", True),
    ("PREEMPT_SHORT", True), ("NEXT_BUDDY", False), ("PICK_BUDDY", True),
    ("CACHE_HOT_BUDDY", True), ("DELAY_DEQUEUE", True), ("DELAY_ZERO", True),
    ("PARANOID_AVG", False), ("WAKEUP_PREEMPTION", True), ("HRTICK", False),
    ("HRTICK_DL", False), ("NONTASK_CAPACITY", True), ("TTWU_QUEUE", True),
    ("SIS_UTIL", True), ("WARN_DOUBLE_CLOCK", False), ("RT_PUSH_IPI", False),
    ("RT_RUNTIME_SHARE", False), ("LB_MIN", False), ("ATTACH_AGE_LOAD", True),
    ("WA_IDLE", True), ("WA_WEIGHT", True), ("WA_BIAS", True),
    ("UTIL_EST", True), ("LATENCY_WARN", False), ("NI_RANDOM", True),
    ("NI_RATE", True),
]


# ---------------------------------------------------------------- spec loading

def resolve_spec_path(name, base_dir=None):
    cands = []
    if base_dir:
        cands.append(os.path.join(base_dir, name))
    cands.append(name)
    n = name if name.endswith(".spec") else name + ".spec"
    cands.append(os.path.join(SPEC_DIR, n))
    for c in cands:
        if os.path.isfile(c):
            return os.path.abspath(c)
    raise SpecError(f"spec not found: {name!r} (no such file, and no "
                    f"{n} in {SPEC_DIR})")


def read_raw(path, stack=()):
    """Raw {section: {key: str}} of a spec, with [spec] include= applied."""
    if path in stack:
        raise SpecError(f"{path}: include cycle: "
                        + " -> ".join(list(stack) + [path]))
    cp = configparser.ConfigParser(inline_comment_prefixes=(";", "#"),
                                   comment_prefixes=(";", "#"),
                                   interpolation=None, strict=True,
                                   empty_lines_in_values=False)
    cp.optionxform = str
    try:
        with open(path, encoding="utf-8") as f:
            cp.read_file(f, source=path)
    except (configparser.Error, OSError, UnicodeError) as e:
        raise SpecError(f"{path}: {e}")
    raw = {}
    inc = cp.get("spec", "include", fallback="").strip()
    if inc:
        raw = read_raw(resolve_spec_path(inc, os.path.dirname(path)),
                       stack + (path,))
    for sec in cp.sections():
        if sec not in SCHEMA:
            raise SpecError(f"{path}: unknown section [{sec}]")
        for key, val in cp.items(sec):
            if key not in SCHEMA[sec]:
                raise SpecError(f"{path}: unknown key {key!r} in [{sec}]")
            if sec == "spec" and key == "include":
                continue
            raw.setdefault(sec, {})[key] = val
    return raw


def load_spec(path, overrides=()):
    raw = read_raw(path)
    for ov in overrides:
        k, sep, v = ov.partition("=")
        sec, dot, key = k.partition(".")
        if not sep or not dot or sec not in SCHEMA or key not in SCHEMA[sec]:
            raise SpecError(f"--set {ov!r}: want SECTION.KEY=VALUE with a "
                            "known section and key")
        raw.setdefault(sec, {})[key] = v
    spec = {}
    for sec, keys in SCHEMA.items():
        spec[sec] = {}
        for key, (parse, default) in keys.items():
            if key in raw.get(sec, {}):
                try:
                    spec[sec][key] = parse(raw[sec][key])
                except SpecError as e:
                    raise SpecError(f"{path}: [{sec}] {key}: {e}")
            elif default is None:
                raise SpecError(f"{path}: [{sec}] {key} is required")
            else:
                spec[sec][key] = default
    spec["name"] = os.path.basename(path)
    return spec


# ---------------------------------------------------------------- formatting

def clog2(n):
    return (n - 1).bit_length() if n > 1 else 0


def fmt_list(cpus):
    """%*pbl: sorted ints -> '0-3,8,10-11'."""
    out = []
    it = iter(cpus)
    try:
        lo = hi = next(it)
    except StopIteration:
        return ""
    for c in it:
        if c == hi + 1:
            hi = c
            continue
        out.append(f"{lo}-{hi}" if hi != lo else f"{lo}")
        lo = hi = c
    out.append(f"{lo}-{hi}" if hi != lo else f"{lo}")
    return ",".join(out)


def fmt_mask(cpus, nbits):
    """%*pb: comma-separated 32-bit groups, the first as wide as needed."""
    v = 0
    for c in cpus:
        v |= 1 << c
    nchunks = (nbits + 31) // 32
    first_w = ((nbits % 32 or 32) + 3) // 4
    parts = []
    for i in range(nchunks - 1, -1, -1):
        w = first_w if i == nchunks - 1 else 8
        parts.append(format((v >> (32 * i)) & 0xFFFFFFFF, f"0{w}x"))
    return ",".join(parts)


# ---------------------------------------------------------------- the model

class Machine:
    """All derived facts of a spec: per-CPU ids, groups, nodes, distances."""

    def __init__(self, spec, extra_offline=()):
        t = spec["topology"]
        self.spec = spec
        P, C, T = t["packages"], t["cores_per_package"], t["threads_per_core"]
        N, D = t["nodes_per_package"], t["dies_per_package"]
        llc = t["cores_per_llc"] or C
        l2 = t["cores_per_l2"]
        clu = t["cores_per_cluster"] or l2
        for what, val in (("packages", P), ("cores_per_package", C),
                          ("threads_per_core", T), ("nodes_per_package", N),
                          ("dies_per_package", D), ("cores_per_l2", l2)):
            if val < 1:
                raise SpecError(f"[topology] {what} must be >= 1")
        for outer, oname, inner, iname in (
                (C, "cores_per_package", llc, "cores_per_llc"),
                (C, "cores_per_package", N, "nodes_per_package"),
                (C, "cores_per_package", D, "dies_per_package"),
                (llc, "cores_per_llc", l2, "cores_per_l2"),
                (llc, "cores_per_llc", clu, "cores_per_cluster")):
            if outer % inner:
                raise SpecError(f"[topology] {oname} ({outer}) is not a "
                                f"multiple of {iname} ({inner})")
        pkg_ids = t["package_ids"] or list(range(P))
        if len(pkg_ids) != P or len(set(pkg_ids)) != P:
            raise SpecError(f"[topology] package_ids needs {P} distinct ids")
        self.P, self.C, self.T, self.N, self.D = P, C, T, N, D
        self.pkg_ids = pkg_ids
        ncores = P * C
        self.ncpus = ncpus = ncores * T

        numbering = t["numbering"]
        if numbering in ("amd", "intel"):
            numbering = "threads-last"

        # Core kinds: the cores of every package in order, first kind first.
        kinds = spec["kinds"]["kinds"] or [{"cores": C}]
        if sum(k["cores"] for k in kinds) != C:
            raise SpecError(f"[kinds] cores add up to "
                            f"{sum(k['cores'] for k in kinds)}, not "
                            f"cores_per_package ({C})")
        self.kinds = kinds
        core_kind, core_threads, core_l2, core_clu = [], [], [], []
        for ki, k in enumerate(kinds):
            kt = k.get("threads", T)
            kl2 = k.get("cores_per_l2", l2)
            kclu = k.get("cores_per_l2", clu)
            if not 1 <= kt <= T:
                raise SpecError(f"[kinds] threads={kt}: want 1.."
                                f"threads_per_core ({T})")
            if k["cores"] % kl2:
                raise SpecError(f"[kinds] cores={k['cores']} is not a "
                                f"multiple of cores_per_l2 ({kl2})")
            for c in range(k["cores"]):
                core_kind.append(ki)
                core_threads.append(kt)
                core_l2.append((ki, c // kl2, clog2(T * kl2)))
                core_clu.append((ki, c // kclu, clog2(T * kclu)))
        self.core_kind = core_kind
        ncores = P * C
        order = []
        for p in range(P):
            for c in range(C):
                for th in range(core_threads[c]):
                    if numbering == "threads-last":
                        key = (th, p * C + c)
                    elif numbering == "threads-adjacent":
                        key = (p * C + c, th)
                    else:                           # packages-interleaved
                        key = (th, c, p)
                    order.append((key, p, c, th))
        order.sort()
        self.ncpus = ncpus = len(order)

        # APIC layout: thread | core in LLC | LLC | package, each field
        # rounded up to a power of two, as firmware does.
        tb, cb = clog2(T), clog2(llc)
        pkg_shift = tb + cb + clog2(C // llc)
        l2_shift = clog2(T * l2)
        clu_shift = clog2(T * clu)
        l3_shift = tb + cb

        # node ids: one per (package, node index), then CPU-less ones
        numa = spec["numa"]
        nids = numa["node_ids"] or list(range(P * N))
        if len(nids) != P * N or len(set(nids)) != P * N:
            raise SpecError(f"[numa] node_ids needs {P * N} distinct ids")
        cpuless = numa["cpuless_node_ids"]
        if set(cpuless) & set(nids) or len(set(cpuless)) != len(cpuless):
            raise SpecError("[numa] cpuless_node_ids overlap node_ids")
        self.nodes = sorted(nids + cpuless)
        self.node_pkg = {nid: i // N for i, nid in enumerate(nids)}
        self.cpuless = set(cpuless)
        self.memoryless = set(numa["memoryless_node_ids"])
        if not self.memoryless <= set(self.nodes):
            raise SpecError("[numa] memoryless_node_ids names unknown nodes")

        self.pkg = [0] * ncpus        # package index
        self.core = [0] * ncpus       # global core index
        self.thread = [0] * ncpus
        self.apic = [0] * ncpus
        self.node = [0] * ncpus       # node id
        self.die = [0] * ncpus        # die index within package
        self.llc = [0] * ncpus        # global LLC index
        self.l2 = [0] * ncpus         # global L2 index
        self.clu = [0] * ncpus        # global cluster index
        self.kind = [0] * ncpus       # index into self.kinds
        self.l2_shifts = [l2_shift] * ncpus
        self.clu_shifts = [clu_shift] * ncpus
        l2_index, clu_index = {}, {}
        seen = set()
        for cpu, (_, p, c, th) in enumerate(order):
            li, ci = divmod(c, llc)
            seen.add(cpu)
            self.pkg[cpu] = p
            self.core[cpu] = p * C + c
            self.thread[cpu] = th
            self.apic[cpu] = ((p << pkg_shift) | (li << (tb + cb))
                              | (ci << tb) | th)
            self.node[cpu] = nids[p * N + c // (C // N)]
            self.die[cpu] = c // (C // D)
            self.llc[cpu] = (p * C + c) // llc
            self.kind[cpu] = core_kind[c]
            if spec["kinds"]["kinds"]:
                self.l2[cpu] = l2_index.setdefault((p,) + core_l2[c][:2],
                                                   len(l2_index))
                self.clu[cpu] = clu_index.setdefault((p,) + core_clu[c][:2],
                                                     len(clu_index))
                self.l2_shifts[cpu] = core_l2[c][2]
                self.clu_shifts[cpu] = core_clu[c][2]
            else:
                self.l2[cpu] = (p * C + c) // l2
                self.clu[cpu] = (p * C + c) // clu
        assert len(seen) == ncpus
        self.pkg_shift, self.tb = pkg_shift, tb
        self.l2_shift, self.clu_shift, self.l3_shift = (l2_shift, clu_shift,
                                                         l3_shift)

        offline = set(t["offline"]) | set(extra_offline)
        bad = sorted(c for c in offline if c >= ncpus)
        if bad:
            raise SpecError(f"offline CPUs {fmt_list(bad)} are not present "
                            f"(0-{ncpus - 1})")
        self.offline = offline
        self.online = [c for c in range(ncpus) if c not in offline]
        self.is_online = [c not in offline for c in range(ncpus)]
        self.nr_cpu_ids = max(t["possible_cpus"], ncpus)
        self.distance = self._distances(numa["distance"])

    def _distances(self, dist):
        kind, val = dist
        n = len(self.nodes)
        if kind == "matrix":
            if len(val) != n or any(len(r) != n for r in val):
                raise SpecError(f"[numa] distance matrix must be {n}x{n} "
                                f"(nodes {fmt_list(self.nodes)})")
            return val
        rows = []
        for a in self.nodes:
            row = []
            for b in self.nodes:
                if a == b:
                    row.append(val["local"])
                elif a in self.cpuless or b in self.cpuless:
                    row.append(val.get("cpuless", val.get("remote", 20)))
                elif self.node_pkg[a] == self.node_pkg[b]:
                    row.append(val.get("package", 12))
                else:
                    row.append(val.get("remote", 32))
            rows.append(row)
        return rows


# ---------------------------------------------------------------- writer

class Tree:
    def __init__(self, root):
        self.root = root
        self.nfiles = 0

    def mkdir(self, rel):
        os.makedirs(os.path.join(self.root, rel), exist_ok=True)

    def write(self, rel, text, mode=0o644):
        path = os.path.join(self.root, rel)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        self.nfiles += 1

    def symlink(self, target, rel):
        os.symlink(target, os.path.join(self.root, rel))


def gen_cpus(m, tree):
    spec = m.spec
    nb = m.nr_cpu_ids
    cache = spec["cache"]
    base = "sys/devices/system/cpu"
    tree.mkdir(base)
    tree.write(f"{base}/possible", fmt_list(range(nb)) + "\n", 0o444)
    tree.write(f"{base}/present", fmt_list(range(m.ncpus)) + "\n", 0o444)
    tree.write(f"{base}/online", fmt_list(m.online) + "\n", 0o444)
    tree.write(f"{base}/offline", fmt_list(sorted(m.offline)) + "\n", 0o444)
    tree.write(f"{base}/kernel_max",
               f"{spec['topology']['kernel_max']}\n", 0o444)
    tree.write(f"{base}/isolated", "\n", 0o444)
    tree.write(f"{base}/nohz_full", "(null)\n", 0o444)
    tree.mkdir(f"{base}/smt")
    smt = m.T > 1
    tree.write(f"{base}/smt/active",
               "1\n" if smt and any(m.is_online[c] and m.thread[c]
                                    for c in range(m.ncpus)) else "0\n",
               0o444)
    tree.write(f"{base}/smt/control", "on\n" if smt else "notsupported\n")

    # (kind, level, type, size K, ways, per-CPU group key, id shift)
    caches = []
    for idx, (lvl, typ, sk, wk, key, shift) in enumerate((
            (1, "Data", "l1d_size", "l1d_ways", m.core, m.tb),
            (1, "Instruction", "l1i_size", "l1i_ways", m.core, m.tb),
            (2, "Unified", "l2_size", "l2_ways", m.l2, m.l2_shifts),
            (3, "Unified", "l3_size", "l3_ways", m.llc, m.l3_shift))):
        if cache[sk]:
            caches.append((idx, lvl, typ, cache[sk], cache[wk], key, shift))

    memo = {}

    def masks(key, cpu):
        """(mask, list) strings of cpu's online group under key, formatted
        once per group: 640 CPUs cost lookups, not 640 bitmaps each."""
        tab = memo.get(id(key))
        if tab is None:
            groups = {}
            for c in m.online:
                groups.setdefault(key[c], []).append(c)
            tab = memo[id(key)] = {
                v: (fmt_mask(g, nb) + "\n", fmt_list(g) + "\n")
                for v, g in groups.items()}
        return tab[key[cpu]]

    diekey = m.pkg if m.D == 1 else [m.pkg[c] * m.D + m.die[c]
                                     for c in range(m.ncpus)]

    line = cache["line_size"]
    for cpu in range(m.ncpus):
        d = f"{base}/cpu{cpu}"
        tree.mkdir(d)
        tree.symlink(f"../../node/node{m.node[cpu]}", f"{d}/node{m.node[cpu]}")
        # x86 has no cpu0/online unless cpu0 can be (and was) offlined
        if cpu != 0 or not m.is_online[0]:
            tree.write(f"{d}/online", "1\n" if m.is_online[cpu] else "0\n")
        kind = m.kinds[m.kind[cpu]]
        if "capacity" in kind:
            # drivers/base/arch_topology.c: arm, arm64, riscv (not x86)
            tree.write(f"{d}/cpu_capacity", f"{kind['capacity']}\n", 0o444)
        if "midr" in kind:
            tree.mkdir(f"{d}/regs/identification")
            tree.write(f"{d}/regs/identification/midr_el1",
                       f"0x{kind['midr']:016x}\n", 0o444)
        if not m.is_online[cpu]:
            # the kernel removes topology/ and cache/ of an offline CPU
            continue
        td = f"{d}/topology"
        tree.mkdir(td)
        w = tree.write
        w(f"{td}/physical_package_id", f"{m.pkg_ids[m.pkg[cpu]]}\n", 0o444)
        w(f"{td}/die_id", f"{m.die[cpu]}\n", 0o444)
        w(f"{td}/cluster_id", f"{m.apic[cpu] >> m.clu_shifts[cpu]}\n", 0o444)
        core_id = (m.apic[cpu] & ((1 << m.pkg_shift) - 1)) >> m.tb
        w(f"{td}/core_id", f"{core_id}\n", 0o444)
        for names, key in ((("core_cpus", "thread_siblings"), m.core),
                           (("cluster_cpus",), m.clu),
                           (("die_cpus",), diekey),
                           (("package_cpus", "core_siblings"), m.pkg)):
            mk, ls = masks(key, cpu)
            for n in names:
                w(f"{td}/{n}", mk, 0o444)
                w(f"{td}/{n}_list", ls, 0o444)
        cd = f"{d}/cache"
        tree.mkdir(cd)
        w(f"{cd}/uevent", "")
        for idx, lvl, typ, size, ways, key, shift in caches:
            ix = f"{cd}/index{idx}"
            tree.mkdir(ix)
            mk, ls = masks(key, cpu)
            sh = shift[cpu] if isinstance(shift, list) else shift
            w(f"{ix}/id", f"{m.apic[cpu] >> sh}\n", 0o444)
            w(f"{ix}/level", f"{lvl}\n", 0o444)
            w(f"{ix}/type", f"{typ}\n", 0o444)
            w(f"{ix}/size", f"{size}K\n", 0o444)
            w(f"{ix}/shared_cpu_map", mk, 0o444)
            w(f"{ix}/shared_cpu_list", ls, 0o444)
            w(f"{ix}/coherency_line_size", f"{line}\n", 0o444)
            w(f"{ix}/ways_of_associativity", f"{ways}\n", 0o444)
            w(f"{ix}/number_of_sets", f"{size * 1024 // (ways * line)}\n",
              0o444)
            w(f"{ix}/physical_line_partition", "1\n", 0o444)
            w(f"{ix}/uevent", "")


def gen_pmus(m, tree):
    """Intel hybrid: one PMU per core type, its cpus the online CPUs of it
    (arch/x86/events/intel/core.c, filled from CPUID leaf 0x1A)."""
    for ki, kind in enumerate(m.kinds):
        if "pmu" in kind:
            d = f"sys/devices/{kind['pmu']}"
            tree.mkdir(d)
            tree.write(f"{d}/cpus", fmt_list([c for c in m.online
                                              if m.kind[c] == ki]) + "\n",
                       0o444)


def gen_nodes(m, tree):
    nb = m.nr_cpu_ids
    base = "sys/devices/system/node"
    tree.mkdir(base)
    allnodes = fmt_list(m.nodes) + "\n"
    members = {n: [] for n in m.nodes}
    present = {n: [] for n in m.nodes}
    for cpu in range(m.ncpus):
        present[m.node[cpu]].append(cpu)
        if m.is_online[cpu]:
            members[m.node[cpu]].append(cpu)
    mem = [n for n in m.nodes if n not in m.memoryless]
    tree.write(f"{base}/possible", allnodes, 0o444)
    tree.write(f"{base}/online", allnodes, 0o444)
    tree.write(f"{base}/has_cpu",
               fmt_list([n for n in m.nodes if members[n]]) + "\n", 0o444)
    tree.write(f"{base}/has_memory", fmt_list(mem) + "\n", 0o444)
    tree.write(f"{base}/has_normal_memory", fmt_list(mem) + "\n", 0o444)
    tree.write(f"{base}/has_generic_initiator", "\n", 0o444)
    for i, n in enumerate(m.nodes):
        d = f"{base}/node{n}"
        tree.mkdir(d)
        # x86 keeps only online CPUs in node_to_cpumask
        tree.write(f"{d}/cpulist", fmt_list(members[n]) + "\n", 0o444)
        tree.write(f"{d}/cpumap", fmt_mask(members[n], nb) + "\n", 0o444)
        tree.write(f"{d}/distance",
                   " ".join(str(x) for x in m.distance[i]) + "\n", 0o444)
        for cpu in present[n]:
            tree.symlink(f"../../cpu/cpu{cpu}", f"{d}/cpu{cpu}")


def cpuinfo_arm(m):
    """arm64 /proc/cpuinfo (arch/arm64/kernel/cpuinfo.c): per CPU its MIDR."""
    c = m.spec["cpu"]
    out = []
    for cpu in m.online:
        midr = m.kinds[m.kind[cpu]]["midr"]
        out.append(f"processor\t: {cpu}\n"
                   f"BogoMIPS\t: {c['bogomips'] or '38.40'}\n"
                   f"Features\t: {c['flags']}\n"
                   f"CPU implementer\t: 0x{midr >> 24 & 0xff:02x}\n"
                   f"CPU architecture: 8\n"
                   f"CPU variant\t: 0x{midr >> 20 & 0xf:x}\n"
                   f"CPU part\t: 0x{midr >> 4 & 0xfff:03x}\n"
                   f"CPU revision\t: {midr & 0xf}\n\n")
    return "".join(out)


def cpuinfo_text(m):
    if all("midr" in k for k in m.kinds):
        return cpuinfo_arm(m)
    c = m.spec["cpu"]
    cache = m.spec["cache"]
    vendor = c["vendor"]
    amdish = vendor in ("AuthenticAMD", "HygonGenuine")
    # x86_cache_size: AMD reports L2 (CPUID 0x80000006), Intel the LLC
    if amdish or not cache["l3_size"]:
        csize = cache["l2_size"]
    else:
        csize = cache["l3_size"]
    bogo = c["bogomips"] or f"{2 * float(c['mhz']):.2f}"
    siblings, cores = {}, {}
    for cpu in m.online:
        siblings[m.pkg[cpu]] = siblings.get(m.pkg[cpu], 0) + 1
        cores.setdefault(m.pkg[cpu], set()).add(m.core[cpu])
    head = (f"vendor_id\t: {vendor}\n"
            f"cpu family\t: {c['family']}\n"
            f"model\t\t: {c['model']}\n"
            f"model name\t: {c['model_name']}\n"
            f"stepping\t: {c['stepping']}\n"
            f"microcode\t: {c['microcode']}\n"
            f"cpu MHz\t\t: {c['mhz']}\n"
            f"cache size\t: {csize} KB\n")
    tail = (f"fpu\t\t: yes\n"
            f"fpu_exception\t: yes\n"
            f"cpuid level\t: {c['cpuid_level']}\n"
            f"wp\t\t: yes\n"
            f"flags\t\t: {c['flags']}\n")
    if c["vmx_flags"]:
        tail += f"vmx flags\t: {c['vmx_flags']}\n"
    tail += f"bugs\t\t: {c['bugs']}\n" if c["bugs"] else "bugs\t\t:\n"
    tail += f"bogomips\t: {bogo}\n"
    if c["tlb_size"]:
        tail += f"TLB size\t: {c['tlb_size']}\n"
    tail += (f"clflush size\t: {cache['line_size']}\n"
             f"cache_alignment\t: {cache['line_size']}\n"
             f"address sizes\t: {c['address_sizes']}\n"
             "power management:"
             + (f" {c['power_management']}" if c["power_management"] else "")
             + "\n\n")
    out = []
    for cpu in m.online:
        p = m.pkg[cpu]
        core_id = (m.apic[cpu] & ((1 << m.pkg_shift) - 1)) >> m.tb
        out.append(f"processor\t: {cpu}\n" + head
                   + f"physical id\t: {m.pkg_ids[p]}\n"
                   f"siblings\t: {siblings[p]}\n"
                   f"core id\t\t: {core_id}\n"
                   f"cpu cores\t: {len(cores[p])}\n"
                   f"apicid\t\t: {m.apic[cpu]}\n"
                   f"initial apicid\t: {m.apic[cpu]}\n" + tail)
    return "".join(out)


def gen_proc(m, tree, schedstat):
    k = m.spec["kernel"]
    rel = k["release"]
    tree.mkdir("proc/sys/kernel")
    tree.write("proc/cpuinfo", cpuinfo_text(m), 0o444)
    cmdline = k["cmdline"] or (f"BOOT_IMAGE=/boot/vmlinuz-{rel} "
                               "root=UUID=6b2a0c3e-5d1f-4a8e-9c7b-2f4e8d1a9b30"
                               " ro quiet")
    tree.write("proc/cmdline", cmdline + "\n", 0o444)
    tree.write("proc/version",
               f"Linux version {rel} (debian-kernel@lists.debian.org) "
               "(x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0, "
               "GNU ld (GNU Binutils for Debian) 2.44) "
               f"{k['build']}\n", 0o444)
    mounts = ["sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0",
              "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0"]
    if k["lockdown"] != "absent":
        mounts.append("securityfs /sys/kernel/security securityfs "
                      "rw,nosuid,nodev,noexec,relatime 0 0")
    if k["cgroup"] == "v2":
        mounts.append("cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,"
                      "relatime,nsdelegate,memory_recursiveprot 0 0")
    elif k["cgroup"] == "v1":
        mounts.append("tmpfs /sys/fs/cgroup tmpfs ro,nosuid,nodev,noexec,"
                      "mode=755 0 0")
        mounts.append("cgroup /sys/fs/cgroup/cpuset cgroup rw,nosuid,nodev,"
                      "noexec,relatime,cpuset 0 0")
    if k["debugfs"] != "no":
        mounts.append("debugfs /sys/kernel/debug debugfs "
                      + ("ro" if k["debugfs"] == "readonly" else "rw")
                      + ",nosuid,nodev,noexec,relatime 0 0")
    tree.write("proc/mounts", "\n".join(mounts) + "\n", 0o444)

    ks = "proc/sys/kernel"
    tree.write(f"{ks}/osrelease", rel + "\n", 0o444)
    tree.write(f"{ks}/ostype", "Linux\n", 0o444)
    tree.write(f"{ks}/version", k["build"] + "\n", 0o444)
    tree.write(f"{ks}/hostname", "sysroot\n")
    tree.write(f"{ks}/numa_balancing", f"{k['numa_balancing']}\n")
    if k["autogroup"] >= 0:    # CONFIG_SCHED_AUTOGROUP=y (Debian's); -1: built without
        tree.write(f"{ks}/sched_autogroup_enabled", f"{k['autogroup']}\n")
    tree.write(f"{ks}/sched_child_runs_first", "0\n")
    tree.write(f"{ks}/sched_rt_period_us", "1000000\n")
    tree.write(f"{ks}/sched_rt_runtime_us", "950000\n")
    tree.write(f"{ks}/sched_schedstats", "0\n")
    tree.write(f"{ks}/sched_util_clamp_max", "1024\n")
    tree.write(f"{ks}/sched_util_clamp_min", "1024\n")
    if k["patched"]:
        tree.write(f"{ks}/sched_smt_buddy_assist",
                   f"{k['smt_buddy_assist']}\n")
        tree.write(f"{ks}/sched_relax_domain_level",
                   f"{k['relax_domain_level']}\n")
    if schedstat:
        shutil.copyfile(schedstat, os.path.join(tree.root, "proc/schedstat"))
        tree.nfiles += 1


def gen_kernel(m, tree):
    k = m.spec["kernel"]
    tree.mkdir("sys/kernel/debug")
    if k["debugfs"] != "no":
        tree.mkdir("sys/kernel/debug/sched")
        if k["sched_features"]:
            feats = k["sched_features"].split()
        else:
            feats = []
            for name, on in STOCK_FEATURES:
                feats.append(name if on else "NO_" + name)
                if name == "CACHE_HOT_BUDDY" and k["patched"]:
                    feats.append("SMT_BUDDY_ASSIST" if k["smt_buddy_assist"]
                                 else "NO_SMT_BUDDY_ASSIST")
        # sched_feat_show() prints "NAME " per feature, then "\n"
        tree.write("sys/kernel/debug/sched/features",
                   "".join(f + " " for f in feats) + "\n",
                   0o444 if k["debugfs"] == "readonly" else 0o644)
    if k["lockdown"] != "absent":
        tree.mkdir("sys/kernel/security")
        levels = ("none", "integrity", "confidentiality")
        tree.write("sys/kernel/security/lockdown",
                   " ".join(f"[{x}]" if x == k["lockdown"] else x
                            for x in levels) + "\n")


def gen_irqs(m, tree):
    """/proc/irq and the unbound workqueues' cpumask as a booted kernel
    leaves them: the default affinity and the workqueue mask every possible
    CPU, the legacy IRQs (0 timer on CPU 0, 1 keyboard, 8 rtc, 9 acpi) and
    one device IRQ per node on that node's CPUs, as irqbalance would have
    spread them. A file tree cannot refuse a write as a managed IRQ does
    (EIO): the unit tests model that through the applier's I/O."""
    nb = m.nr_cpu_ids
    possible = list(range(m.nr_cpu_ids))
    tree.mkdir("proc/irq")
    tree.write("proc/irq/default_smp_affinity", fmt_mask(possible, nb) + "\n")
    irqs = {0: [0], 1: possible, 8: possible, 9: possible}
    for i, n in enumerate(m.nodes):
        on = [c for c in range(m.ncpus) if m.is_online[c] and m.node[c] == n]
        irqs[24 + i] = on or possible
    for irq, cpus in sorted(irqs.items()):
        tree.mkdir(f"proc/irq/{irq}")
        tree.write(f"proc/irq/{irq}/smp_affinity", fmt_mask(cpus, nb) + "\n")
        tree.write(f"proc/irq/{irq}/smp_affinity_list", fmt_list(cpus) + "\n")
    tree.mkdir("sys/devices/virtual/workqueue")
    tree.write("sys/devices/virtual/workqueue/cpumask", fmt_mask(possible, nb) + "\n")


def gen_cgroup(m, tree):
    k = m.spec["kernel"]
    cg = "sys/fs/cgroup"
    tree.mkdir(cg)
    cpus = fmt_list(m.online) + "\n"
    mems = fmt_list([n for n in m.nodes if n not in m.memoryless]) + "\n"
    if k["cgroup"] == "v2":
        tree.write(f"{cg}/cgroup.controllers",
                   "cpuset cpu io memory hugetlb pids rdma misc\n", 0o444)
        tree.write(f"{cg}/cgroup.subtree_control",
                   "cpuset cpu io memory pids\n")
        tree.write(f"{cg}/cgroup.procs", "")
        tree.write(f"{cg}/cpuset.cpus.effective", cpus, 0o444)
        tree.write(f"{cg}/cpuset.mems.effective", mems, 0o444)
        tree.write(f"{cg}/cpuset.cpus.isolated", "\n", 0o444)
    elif k["cgroup"] == "v1":
        d = f"{cg}/cpuset"
        tree.mkdir(d)
        tree.write(f"{d}/cpuset.cpus", cpus)
        tree.write(f"{d}/cpuset.mems", mems)
        tree.write(f"{d}/cpuset.effective_cpus", cpus, 0o444)
        tree.write(f"{d}/cpuset.effective_mems", mems, 0o444)
        tree.write(f"{d}/cpuset.sched_relax_domain_level", "-1\n")
        tree.write(f"{d}/cpuset.sched_load_balance", "1\n")
        tree.write(f"{d}/cgroup.procs", "")
        tree.write(f"{d}/tasks", "")


# ---------------------------------------------------------------- damage

BAD_LIST = "3-1,x\n"      # what a corrupted dump or a bad copy leaves behind


def _damage_cpus(v):
    return parse_cpulist(v) if v else []


def _damage_file(rel, text):
    def f(m, root, arg):
        for n in _damage_cpus(arg):
            path = os.path.join(root, rel.format(n=n))
            if not os.path.exists(path):
                raise SpecError(f"--damage: {rel.format(n=n)}: no such file")
            with open(path, "w") as fh:
                fh.write(text)
    return f


def _damage_remove_dirs(m, root, arg):
    for n in _damage_cpus(arg):
        shutil.rmtree(os.path.join(root, f"sys/devices/system/cpu/cpu{n}"))


def _damage_phantoms(m, root, arg):
    """cpu/possible, present and online name @arg more CPUs above the
    last one, with no cpuN directory, sibling list or node behind them."""
    extra = p_int(arg)
    base = os.path.join(root, "sys/devices/system/cpu")
    last = m.ncpus - 1 + extra
    for f, cpus in (("possible", range(max(last + 1, m.nr_cpu_ids))),
                    ("present", range(last + 1)),
                    ("online", list(m.online) + list(range(m.ncpus, last + 1)))):
        with open(os.path.join(base, f), "w") as fh:
            fh.write(fmt_list(cpus) + "\n")


def _damage_no_distance(m, root, arg):
    for n in m.nodes:
        os.remove(os.path.join(root, f"sys/devices/system/node/node{n}/distance"))


# name: (what it does, function(machine, root, argument))
DAMAGE = {
    "node-cpulist": ("node N's cpulist unparsable (its cpumap intact)",
                     _damage_file("sys/devices/system/node/node{n}/cpulist",
                                  BAD_LIST)),
    "thread-siblings": ("cpuN's thread_siblings_list unparsable",
                        _damage_file("sys/devices/system/cpu/cpu{n}/topology/"
                                     "thread_siblings_list", BAD_LIST)),
    "l3-list": ("cpuN's L3 shared_cpu_list unparsable (shared_cpu_map intact)",
                _damage_file("sys/devices/system/cpu/cpu{n}/cache/index3/"
                             "shared_cpu_list", BAD_LIST)),
    "l3-map": ("cpuN's L3 shared_cpu_map unparsable",
               _damage_file("sys/devices/system/cpu/cpu{n}/cache/index3/"
                            "shared_cpu_map", "xyz\n")),
    "package-list": ("cpuN's package_cpus_list unparsable",
                     _damage_file("sys/devices/system/cpu/cpu{n}/topology/"
                                  "package_cpus_list", BAD_LIST)),
    "cpu-dir": ("cpuN's directory removed (cpu/online still lists it)",
                _damage_remove_dirs),
    "phantom-cpus": ("cpu/possible, present and online name N more CPUs "
                     "that have no cpuN directory", _damage_phantoms),
    "no-distance": ("every nodeN/distance removed", _damage_no_distance),
}


def damage(m, root, items):
    """Apply --damage KIND[=ARG] items to a generated tree."""
    for item in items:
        kind, _, arg = item.partition("=")
        if kind not in DAMAGE:
            raise SpecError(f"--damage: unknown kind {kind!r} (one of "
                            f"{', '.join(DAMAGE)})")
        DAMAGE[kind][1](m, root, arg)


def summary(m):
    nl = []
    for n in m.nodes:
        nl.append(fmt_list([c for c in m.online if m.node[c] == n]))
    return (f"[sysroot]\nspec = {m.spec['name']}\n"
            f"cpus = {m.ncpus}\nonline = {fmt_list(m.online)}\n"
            f"packages = {m.P}\ncores = {m.P * m.C}\nnodes = {len(m.nodes)}\n"
            f"node_cpus = {' | '.join(nl)}\n"
            f"schedstat_version = {m.spec['kernel']['schedstat_version']}\n")


def generate(spec, outdir, offline=(), schedstat=None, force=False,
             damaged=()):
    m = Machine(spec, offline)
    if os.path.lexists(outdir):
        if os.listdir(outdir):
            if not force:
                raise SpecError(f"{outdir}: exists and is not empty "
                                "(use --force to replace a generated tree)")
            if not os.path.exists(os.path.join(outdir, MARKER)):
                raise SpecError(f"{outdir}: not a generated sysroot (no "
                                f"{MARKER}); refusing to delete it")
            shutil.rmtree(outdir)
    os.makedirs(outdir, exist_ok=True)
    tree = Tree(outdir)
    gen_cpus(m, tree)
    gen_pmus(m, tree)
    gen_nodes(m, tree)
    gen_proc(m, tree, schedstat)
    gen_kernel(m, tree)
    gen_irqs(m, tree)
    gen_cgroup(m, tree)
    damage(m, outdir, damaged)
    tree.write(MARKER, summary(m) + "".join(f"damage = {d}\n"
                                            for d in damaged))
    return m, tree


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Generate a fake /sys + /proc tree from a machine spec.")
    ap.add_argument("spec", nargs="?",
                    help="spec file, or the name of one in specs/")
    ap.add_argument("outdir", nargs="?", help="output directory (the root)")
    ap.add_argument("--offline", metavar="LIST", default="",
                    help="cpulist to mark offline (added to the spec's)")
    ap.add_argument("--schedstat", metavar="FILE",
                    help="copy FILE to proc/schedstat")
    ap.add_argument("--set", metavar="SECTION.KEY=VALUE", action="append",
                    default=[], help="override a spec key (repeatable)")
    ap.add_argument("--damage", metavar="KIND[=ARG]", action="append",
                    default=[], help="damage the generated tree (repeatable; "
                    "--damage list names the kinds)")
    ap.add_argument("--force", action="store_true",
                    help="replace OUTDIR if it is a generated tree")
    ap.add_argument("--list", action="store_true",
                    help="list the shipped specs and exit")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    if a.damage == ["list"]:
        for k, (what, _) in DAMAGE.items():
            print(f"{k:16} {what}")
        return 0
    if a.list:
        for f in sorted(os.listdir(SPEC_DIR)):
            if f.endswith(".spec"):
                print(f[:-5])
        return 0
    if not a.spec or not a.outdir:
        ap.error("SPEC and OUTDIR are required")
    try:
        spec = load_spec(resolve_spec_path(a.spec), a.set)
        m, tree = generate(spec, a.outdir, parse_cpulist(a.offline),
                           a.schedstat, a.force, a.damage)
    except (SpecError, OSError) as e:
        print(f"gen-sysroot: {e}", file=sys.stderr)
        return 2
    if not a.quiet:
        print(f"{a.outdir}: {spec['name']}: {m.ncpus} CPUs "
              f"({len(m.online)} online), {m.P} packages, "
              f"{len(m.nodes)} nodes, {tree.nfiles} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
