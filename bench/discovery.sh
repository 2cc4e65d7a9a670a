#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Discovery benchmark: how long a whole `topotunectl --root DIR topology --json`
# takes, against `lscpu --sysroot DIR`, `HWLOC_FSROOT=DIR lstopo-no-graphics`
# and the floor (bench/floor: read the very files topotunectl opened, once,
# nothing else), on generated trees of 16, 128, 384 and 640 CPUs and on the
# largest real dumps in ../shared/realdata/sysfs. Prints figures, asserts nothing.
#
#   bench/discovery.sh [TOPOTUNECTL [LABEL=OTHER-TOPOTUNECTL...]]
#
# TOPOTUNECTL defaults to build/agent/cli/topotunectl. Each LABEL=PATH is
# another topotunectl (the build before a change, a variant) timed in the
# same loop, so that before/after ratios share the machine's load.
# Environment: RUNS (timed runs per command, default 10, at least 5),
# WARMUP (default 2), WORK (default /dev/shm/topotune-bench, removed unless
# KEEP=1), REAL_MAX (largest real dumps to use, default 4), TREES (the
# generated trees to use, default all: "gen-16 gen-128 gen-384 gen-640"), FLOOR (path of
# the floor program; default BUILD/bench/floor next to topotunectl, else it is
# compiled with cc into WORK).
# Needs python3, strace, lscpu; installs hwloc-nox (and strace) with apt-get
# when missing and run as root. Timing is a python timer (posix_spawn +
# wait4) that runs the commands in turn, run after run, rather than
# hyperfine's one-command-at-a-time: on a shared machine a burst of
# background load then hits every tool alike, and the ratios stay honest.
# Besides wall time it reports each process's CPU time (user + system from
# wait4(), which Linux accounts to the nanosecond in total even where the
# user/system split is tick-sampled): it leaves out the time spent waiting
# for a CPU that other work holds.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
ctl=${1:-$src/build/agent/cli/topotunectl}
runs=${RUNS:-10}
[ "$runs" -ge 5 ] || runs=5
warmup=${WARMUP:-2}
work=${WORK:-/dev/shm/topotune-bench}
real_max=${REAL_MAX:-4}
realdata=$src/../shared/realdata/sysfs
gen=$src/tests/sysroot/gen-sysroot.py

die() { echo "discovery: $*" >&2; exit 2; }

ctl=$(readlink -f "$ctl") || die "no topotunectl at ${1:-build/agent/cli/topotunectl} (build first: meson setup build && ninja -C build)"
[ -x "$ctl" ] || die "$ctl is not executable"
[ $# -gt 0 ] && shift
alts=()    # "label=path" of other topotunectl builds
for a in "$@"; do
	case $a in
	*=*) p=$(readlink -f "${a#*=}") && [ -x "$p" ] || die "${a#*=} is not executable"
	     alts+=("${a%%=*}=$p") ;;
	*) die "expected LABEL=PATH, got $a" ;;
	esac
done

apt_install() {  # command package
	command -v "$1" >/dev/null && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "discovery: installing $2" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null 2>&1 ||
			{ apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null 2>&1; }
	fi
	command -v "$1" >/dev/null
}
apt_install strace strace || die "strace is needed to list the files topotunectl reads"
apt_install lscpu util-linux || echo "discovery: lscpu not available, its column stays empty" >&2
apt_install lstopo-no-graphics hwloc-nox || echo "discovery: lstopo-no-graphics not available, its column stays empty" >&2

mkdir -p "$work" || die "cannot create $work"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

floor=${FLOOR:-$(dirname "$(dirname "$(dirname "$ctl")")")/bench/floor}
if [ ! -x "$floor" ]; then
	floor=$work/floor
	${CC:-cc} -O2 -o "$floor" "$src/bench/floor.c" || die "cannot build bench/floor.c"
fi

# --- trees -------------------------------------------------------------------
trees=()   # "label|dir"
gen_tree() {  # label spec [gen-sysroot options...]
	local label=$1 spec=$2
	shift 2
	case " ${TREES:-$label} " in *" $label "*) ;; *) return ;; esac
	if python3 "$gen" -q --force "$@" "$spec" "$work/$label" >/dev/null 2>"$work/gen.err"; then
		trees+=("$label|$work/$label")
	else
		echo "discovery: cannot generate $label: $(cat "$work/gen.err")" >&2
	fi
}
gen_tree gen-16 vm-2cpu --set topology.cores_per_package=8 --set topology.threads_per_core=2
gen_tree gen-128 siena-8534-nps2-llc
gen_tree gen-384 hygon-7447v-2s-nps6
gen_tree gen-640 turin-9845-2s-nps10

if [ -d "$realdata" ]; then
	mkdir -p "$work/real"
	for f in "$realdata"/*/*.tar.* "$realdata"/*/*.tgz; do
		[ -f "$f" ] || continue
		d=$work/real/$(basename "$f" | sed 's/\.tar\..*$//; s/\.tgz$//')
		mkdir -p "$d" && tar -xf "$f" -C "$d" 2>/dev/null
	done
	# Every directory that holds sys/devices/system/cpu is a root; largest first.
	while read -r n root; do
		[ "$real_max" -gt 0 ] || break
		if "$ctl" --root "$root" topology --json >/dev/null 2>"$work/ctl.err"; then
			trees+=("real:$(basename "$root")|$root")
			real_max=$((real_max - 1))
		else
			echo "discovery: skipping $root: topotunectl fails: $(head -1 "$work/ctl.err")" >&2
		fi
	done < <(find "$work/real" -type d -path '*/sys/devices/system/cpu' | while read -r c; do
			echo "$(ls "$c" | grep -c '^cpu[0-9][0-9]*$') ${c%/sys/devices/system/cpu}"
		done | sort -rn)
else
	echo "discovery: $realdata absent, real dumps skipped" >&2
fi

# --- measure -----------------------------------------------------------------
results=$work/results.tsv
: >"$results"
for t in "${trees[@]}"; do
	label=${t%%|*}
	dir=${t#*|}
	cpus=$(ls "$dir/sys/devices/system/cpu" | grep -c '^cpu[0-9][0-9]*$')

	# The files topotunectl reads: its successful openat()s and openat2()s
	# (fileio's resolution beneath the root fd) of regular files below the
	# root, in order, as the floor will read them (relative to the root;
	# strace -y names the file an fd was opened on, whichever directory fd
	# the path was relative to). Tracing openat alone finds no file at all
	# since the reads went through openat2().
	real=$(readlink -f "$dir")
	strace -f -y -e trace=openat,openat2 -o "$work/strace.txt" "$ctl" --root "$dir" topology --json >/dev/null 2>&1
	sed -n 's/^[0-9]* *openat2\{0,1\}(.*) = [0-9][0-9]*<\(.*\)>$/\1/p' "$work/strace.txt" |
		while read -r p; do
			case $p in "$real"/*) p=${p#"$real"/}; [ -f "$dir/$p" ] && echo "$p" ;; esac
		done >"$work/files.txt"
	cp "$work/files.txt" "$work/$(echo "$label" | tr ':/' '__').files"
	files=$(wc -l <"$work/files.txt")
	[ "$files" -gt 0 ] || die "no file read by topotunectl found in its strace on $label"
	misses=$(grep -c 'openat2\{0,1\}(.*ENOENT' "$work/strace.txt")
	bytes=$("$floor" "$dir" "$work/files.txt" | awk '{print $3}')

	altcmds=()
	for a in ${alts[@]+"${alts[@]}"}; do
		altcmds+=("${a#*=} --root $dir topology --json")
	done
	HWLOC_FSROOT=$dir python3 - "$label" "$cpus" "$files" "$misses" "$bytes" "$runs" "$warmup" "$work" \
		"$ctl --root $dir topology --json" \
		"$(command -v lscpu >/dev/null && echo "lscpu --sysroot $dir")" \
		"$(command -v lstopo-no-graphics >/dev/null && echo "lstopo-no-graphics --of console")" \
		"$floor -1 $dir $work/files.txt" ${altcmds[@]+"${altcmds[@]}"} >>"$results" <<'PY' || die "timing failed on $label"
import os, statistics, subprocess, sys, time
label, cpus, files, misses, nbytes, runs, warmup, work = sys.argv[1:9]
runs, warmup = int(runs), int(warmup)
# topotune, lscpu, lstopo, floor, then the other topotunectl builds
cmds = [c.split() if c else None for c in sys.argv[9:]]
out = [label, cpus, files, misses, nbytes]
devnull = os.open(os.devnull, os.O_WRONLY)
fa = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]

def run(argv):
    """Wall time (ms) of one whole-process run, its exit code and its CPU time (ms)."""
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0] if "/" in argv[0] else shutil_which(argv[0]), argv, os.environ, file_actions=fa)
    _, status, ru = os.wait4(pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    return wall, os.waitstatus_to_exitcode(status), (ru.ru_utime + ru.ru_stime) * 1000

def shutil_which(name):
    import shutil
    return shutil.which(name)

# Each tool must succeed on the tree, or its time means nothing.
ok = [c is not None and run(c)[1] == 0 for c in cmds]
times = [[] for _ in cmds]
cputimes = [[] for _ in cmds]
# Round robin: one run of each tool in turn, so that the load of a shared
# machine falls on all of them alike.
for i in range(warmup + runs):
    for j, c in enumerate(cmds):
        if not ok[j]:
            continue
        wall, _, cpu = run(c)
        if i >= warmup:
            times[j].append(wall)
            cputimes[j].append(cpu)
for j, c in enumerate(cmds):
    if c is None:
        out.append("-")
    elif not ok[j]:
        out.append("fail")
    else:
        t, u = times[j], cputimes[j]
        # Each run against topotune's run of the same round: the load of
        # the moment cancels out of the ratio.
        paired = [a / b for a, b in zip(t, times[0])] if ok[0] else [0]
        out.append("%.2f/%.2f/%.2f/%.2f/%.3f" % (statistics.median(t), min(t), max(t), statistics.median(u),
                                                 statistics.median(paired)))
print("\t".join(out))
PY
	echo "discovery: measured $label" >&2
done

# --- report ------------------------------------------------------------------
python3 - "$results" "$runs" "$ctl" ${alts[@]+"${alts[@]}"} <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
runs, ctl = sys.argv[2], sys.argv[3]
alts = [a.split("=", 1) for a in sys.argv[4:]]
TT, LS, LT, FL = 5, 6, 7, 8   # columns of a row; the other builds follow

def med(c, cpu=False):
    return float(c.split("/")[3 if cpu else 0]) if "/" in c else None

def paired(c):
    """Median over the rounds of this tool's time / topotune's time."""
    return float(c.split("/")[4]) if "/" in c else None

def cell(c, base=None, inverse=False, cpu=False):
    """"median (min-max)" of the wall time with the median per-round ratio
    to topotune, or the median CPU time with the ratio of the medians."""
    if "/" not in c:
        return c
    m, lo, hi, u, pr = (float(x) for x in c.split("/"))
    if cpu:
        s = "%.1f" % u
        ratio = (base / u if inverse else u / base) if base else None
    else:
        s = "%.1f (%.1f-%.1f)" % (m, lo, hi)
        ratio = (1 / pr if inverse else pr) if base else None
    if ratio:
        s += " %.1fx" % ratio
    return s

def table(cpu):
    hdr = ["tree", "CPUs", "files read", "ENOENT", "KiB", "topotune ms"]
    hdr += ["%s ms (x)" % name for name, _ in alts]
    hdr += ["lscpu ms (x)", "lstopo ms (x)", "floor ms (topotune/floor)"]
    out = []
    for r in rows:
        label, cpus, files, misses, nbytes = r[:5]
        t = med(r[TT], cpu)
        out.append([label, cpus, files, misses, "%.0f" % (int(nbytes or 0) / 1024), cell(r[TT], cpu=cpu)]
                   + [cell(c, t, cpu=cpu) for c in r[FL + 1:]]
                   + [cell(r[LS], t, cpu=cpu), cell(r[LT], t, cpu=cpu), cell(r[FL], t, inverse=True, cpu=cpu)])
    w = [max(len(str(x[i])) for x in out + [hdr]) for i in range(len(hdr))]
    fmt = "  ".join("%%-%ds" % n for n in w)
    print(fmt % tuple(hdr))
    for x in out:
        print((fmt % tuple(x)).rstrip())

print("Discovery: whole-process runs, %s runs each, the tools taking turns" % runs)
print("topotune = %s --root DIR topology --json" % ctl)
for name, path in alts:
    print("%s = %s --root DIR topology --json" % (name, path))
print("ratios: lscpu, lstopo%s as multiples of topotune's time; topotune as a multiple of the floor's;"
      % "".join(", " + name for name, _ in alts))
print("for wall time the median over the rounds of the two runs' ratio in each round, for CPU time the"
      " ratio of the medians")
print()
print("Wall time, median (min-max) ms:")
table(False)
print()
print("CPU time (user + system of the process), median ms:")
table(True)

gen = {int(r[1]): r for r in rows if r[0].startswith("gen-")}
if 640 in gen:
    r = gen[640]
    print()
    print("Goals at 640 CPUs (ratio of wall-time medians; median of the per-round ratios; CPU time):")
    t, l, f = med(r[TT]), med(r[LS]), med(r[FL])
    tc, lc, fc = med(r[TT], True), med(r[LS], True), med(r[FL], True)
    if l:
        print("  >= 15x faster than lscpu: %.1fx (per round %.1fx, CPU time %.1fx)  %s" %
              (l / t, paired(r[LS]), lc / tc, "met" if l / t >= 15 else "NOT met"))
    if f:
        print("  <= 1.3x the floor:        %.2fx (per round %.2fx, CPU time %.2fx)  %s" %
              (t / f, 1 / paired(r[FL]), tc / fc, "met" if t / f <= 1.3 else "NOT met"))
if 16 in gen and 640 in gen:
    a, b = gen[16], gen[640]
    print()
    print("Growth 16 -> 640 CPUs (40x the CPUs), wall time:")
    for name, i in [("topotune", TT)] + [(n, FL + 1 + k) for k, (n, _) in enumerate(alts)] + \
                   [("lscpu", LS), ("lstopo", LT), ("floor", FL)]:
        x, y = med(a[i]), med(b[i])
        if x and y:
            print("  %-14s %7.1f -> %7.1f ms  (x%.1f, %.3f ms per added CPU)" % (name, x, y, y / x, (y - x) / 624))
    print("  %-14s %7s -> %7s" % ("files", a[2], b[2]))
PY

# --- where the time goes: the floor per class of file, on the largest generated tree
big=$(ls "$work"/gen-*.files 2>/dev/null | sort -V | tail -1)
if [ -n "$big" ]; then
	label=$(basename "$big" .files)
	python3 - "$work/$label" "$big" "$floor" "$runs" "$warmup" "$work" <<'PY'
import os, shutil, statistics, subprocess, sys, time
root, listfile, floor, runs, warmup, work = sys.argv[1:7]
runs, warmup = int(runs), int(warmup)
paths = [l.strip() for l in open(listfile) if l.strip()]
levels = {}

def cls(p):
    if "/cache/index" in p:
        d = os.path.dirname(p)
        if d not in levels:
            try:
                levels[d] = open(os.path.join(root, d, "level")).read().strip()
            except OSError:
                levels[d] = "?"
        leaf = os.path.basename(p)
        if levels[d] == "1":
            return "cache L1 index (level, type, shared_cpu_list, id)"
        return "cache L2/L3 %s" % ("type" if leaf == "type" else "level, shared_cpu_list, id")
    if "/topology/" in p:
        return "cpuN/topology/*"
    if p.startswith("sys/devices/system/node"):
        return "node/*"
    if p == "proc/cpuinfo":
        return "proc/cpuinfo (whole file)"
    return "other (cpu/online etc., kernel probe)"

groups = {}
for p in paths:
    groups.setdefault(cls(p), []).append(p)

def loop_ms(args):
    # The open/read/close loop timed inside the floor (-t): no process noise.
    t = []
    for i in range(warmup + runs):
        out = subprocess.run([floor, "-t"] + args, stdout=subprocess.PIPE, text=True).stdout
        if i >= warmup:
            t.append(int(out.split(" in ")[1].split()[0]) / 1000)
    return statistics.median(t)

print()
print("Where the floor's time goes on %s: the floor's open/read/close loop per class of file," % os.path.basename(root))
print("timed inside the process (median of %d), to rank what topotune could stop reading:" % runs)
print("  %-52s %6s %9s" % ("files", "count", "loop ms"))
lf = os.path.join(work, "class.list")
for name, ps in sorted(groups.items(), key=lambda kv: -len(kv[1])):
    open(lf, "w").write("\n".join(ps) + "\n")
    print("  %-52s %6d %9.2f" % (name, len(ps), loop_ms(["-1", root, lf])))
print("  %-52s %6d %9.2f" % ("all, read() until EOF (2 reads per file)", len(paths), loop_ms([root, listfile])))
print("  %-52s %6d %9.2f" % ("all, one read() per file (floor -1)", len(paths), loop_ms(["-1", root, listfile])))
PY
fi

# --- the system calls of one run of each topotunectl, on the largest generated tree
if [ -n "$big" ]; then
	label=$(basename "$big" .files)
	profiles=()
	for a in "topotune=$ctl" ${alts[@]+"${alts[@]}"}; do
		out=$work/syscalls.${a%%=*}
		strace -f -c -o "$out" ${a#*=} --root "$work/$label" topology --json >/dev/null 2>&1
		profiles+=("${a%%=*}=$out")
	done
	python3 - "$label" "${profiles[@]}" <<'PY'
import sys
label, profiles = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
counts = []
for name, path in profiles:
    c = {}
    for line in open(path):
        w = line.split()
        # "% time seconds usecs/call calls [errors] syscall"
        if len(w) >= 5 and w[0][0].isdigit() and w[-1] != "total":
            c[w[-1]] = (int(w[3]), int(w[4]) if len(w) == 6 else 0)
    counts.append(c)
names = sorted(set().union(*counts), key=lambda n: -max(c.get(n, (0, 0))[0] for c in counts))
print()
print("System calls of one run on %s (strace -f -c; calls, failed in brackets; libraries included):" % label)
print("  %-16s" % "syscall" + "".join("%16s" % n for n, _ in profiles))
for n in names + ["total"]:
    row = []
    for c in counts:
        if n == "total":
            calls, err = sum(v[0] for v in c.values()), sum(v[1] for v in c.values())
        else:
            calls, err = c.get(n, (0, 0))
        row.append("%d" % calls + (" (%d)" % err if err else ""))
    print("  %-16s" % n + "".join("%16s" % x for x in row))
PY
fi
