#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Kernel workload harness: runs the seeds' workloads under scheduler
# variants (SMT_BUDDY_ASSIST off/on, relax_domain_level) and prints, per
# variant, the seeds' table shape: base / variant / change.
#
#   bench/kernel/workloads.sh [options]
#     --variants "base buddy relax=3 buddy+relax=3"   (default "base buddy relax=3")
#         base: SMT_BUDDY_ASSIST off, no relax level (-1); buddy: feature on;
#         relax=N: kernel.sched_relax_domain_level=N; buddy+relax=N: both
#     --workloads "hackbench schbench stream stressng"  (default: all four)
#     --runs N            repetitions, variants interleaved (default 5; median)
#     --groups "1 2 4"    hackbench groups (default 1 2 4 8 16 32 64 128)
#     --loops N           hackbench loops (default 1000)
#     --seconds N         schbench and stress-ng run time (default 30)
#     --taskset-max N     stress-ng --taskset 0-N --cpu N+1 (default: node 0 and
#                         half of node 1, the seed's "some nodes fully, one partly")
#     --stream-elements N (default: 4x all L3 caches, at least 10M)
#     --out DIR           keep results.tsv and the raw outputs (default: a temp dir)
#     --smoke             seconds-long version of everything (CI, in the qemu guest)
#     --force             run even if topotuned is running (it would fight the variants)
#
# Workloads: hackbench (rt-tests), schbench (the real one if on PATH, else
# tt-wakeup, its pattern re-implemented here), STREAM (tt-stream, Copy/Triad),
# and the stress-ng taskset reproducer of seed 001
# (stress-ng --taskset 0-N --cpu N+1 --cpu-method float128 --metrics).
# For stress-ng it also reports on how many distinct CPUs the N+1 hogs run
# at the last of its once-a-second samples (N+1 when spread; fewer when stacked).
#
# Switches the variants through kernel.sched_smt_buddy_assist and
# kernel.sched_relax_domain_level (the topotune kernel series), falling back
# to debugfs sched/features for the feature; a variant the kernel cannot do
# is reported as "n/a" with the reason, and the others still run. The
# original values are restored on exit, also on Ctrl-C. Needs root for any
# variant but base. POSIX sh + awk: runs under busybox (the qemu guest) too.
#
# Prints figures only; it asserts nothing about them. Exit status: 0 when
# every workload that was asked for ran (n/a variants do not count), 1
# otherwise, 2 on a usage error.
set -u

here=$(cd "$(dirname "$0")" && pwd)
variants="base buddy relax=3"
workloads="hackbench schbench stream stressng"
runs=5
groups="1 2 4 8 16 32 64 128"
loops=1000
seconds=30
tmax=""
elements=""
out=""
smoke=0
force=0

usage() {
	sed -n '/^#   bench/,/^# Workloads/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--variants) variants=$2; shift ;;
	--workloads) workloads=$2; shift ;;
	--runs) runs=$2; shift ;;
	--groups) groups=$2; shift ;;
	--loops) loops=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--taskset-max) tmax=$2; shift ;;
	--stream-elements) elements=$2; shift ;;
	--out) out=$2; shift ;;
	--smoke) smoke=1 ;;
	--force) force=1 ;;
	-h|--help) usage ;;
	*) echo "workloads.sh: unknown option '$1'" >&2; usage ;;
	esac
	shift
done
for n in "$runs" "$loops" "$seconds" ${tmax:+"$tmax"} ${elements:+"$elements"}; do
	case "$n" in ''|*[!0-9]*) echo "workloads.sh: '$n' is not a number" >&2; exit 2 ;; esac
done
for w in $workloads; do
	case "$w" in hackbench|schbench|stream|stressng) ;;
	*) echo "workloads.sh: unknown workload '$w' (hackbench schbench stream stressng)" >&2; exit 2 ;;
	esac
done
for v in $variants; do
	case "$v" in base|buddy|relax=[0-9]*|buddy+relax=[0-9]*) ;;
	*) echo "workloads.sh: unknown variant '$v' (base buddy relax=N buddy+relax=N)" >&2; exit 2 ;;
	esac
done
if [ "$smoke" = 1 ]; then
	runs=1 groups="1 2" loops=20 seconds=3
	[ -n "$elements" ] || elements=200000
fi

# --- the machine ------------------------------------------------------------
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)
nodes=$(find /sys/devices/system/node -maxdepth 1 -name 'node[0-9]*' 2>/dev/null | wc -l)
smt=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null)
model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)

# CPUs in a cpulist ("0-3,8")
count_list() {
	echo "$1" | tr ',' '\n' | awk -F- 'NF == 2 { n += $2 - $1 + 1; next } NF == 1 && $1 != "" { n++ } END { print n + 0 }'
}

if [ -z "$tmax" ]; then
	n0=$(count_list "$(cat /sys/devices/system/node/node0/cpulist 2>/dev/null)")
	n1=$(count_list "$(cat /sys/devices/system/node/node1/cpulist 2>/dev/null)")
	if [ "$nodes" -ge 2 ] && [ "$n0" -gt 0 ] && [ "$n1" -gt 1 ]; then
		tmax=$((n0 + n1 / 2 - 1))
	else
		tmax=$((ncpu * 3 / 4 - 1))
	fi
	[ "$tmax" -ge 1 ] || tmax=1
fi
if [ -z "$elements" ]; then
	# STREAM's rule: each array at least 4x the sum of the last-level caches
	elements=$(for c in /sys/devices/system/cpu/cpu[0-9]*/cache/index3; do
		[ -r "$c/size" ] && echo "$(cat "$c/shared_cpu_list") $(cat "$c/size")"
	done | sort -u | awk '{ s = $2; m = 1
		if (s ~ /K$/) m = 1024; else if (s ~ /M$/) m = 1048576
		sub(/[KM]$/, "", s); b += s * m }
		END { n = int(4 * b / 8); print (n < 10000000 ? 10000000 : n) }')
fi
# schbench: 2 message threads, ncpu/4, ncpu/2 and ncpu workers in all
wthreads=$(for d in 8 4 2; do t=$((ncpu / d)); [ $t -ge 1 ] && echo $t; done | sort -nu | tr '\n' ' ')
[ "$smoke" = 1 ] && wthreads=$(echo "$wthreads" | awk '{ print $1 }')

findbin() {	# our helper programs: next to this script, or in a meson build dir, or PATH
	for d in "${TT_BINDIR:-}" "$here" "$here/../../build/bench/kernel" "$here/../../build-ci/bench/kernel"; do
		[ -n "$d" ] && [ -x "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	command -v "$1"
}

# --- the controls -------------------------------------------------------------
BUDDY=/proc/sys/kernel/sched_smt_buddy_assist
RELAX=/proc/sys/kernel/sched_relax_domain_level
FEAT=/sys/kernel/debug/sched/features

buddy_how() {
	if [ -f $BUDDY ]; then echo sysctl
	elif [ -r $FEAT ] && grep -qw 'N\{0,1\}O\{0,1\}_\{0,1\}SMT_BUDDY_ASSIST' $FEAT; then echo debugfs
	else echo none
	fi
}

buddy_get() {
	case $(buddy_how) in
	sysctl) cat $BUDDY ;;
	debugfs) if grep -qw SMT_BUDDY_ASSIST $FEAT; then echo 1; else echo 0; fi ;;
	*) echo none ;;
	esac
}

buddy_set() {	# 0|1; a message on stdout when it cannot
	[ "$(buddy_get)" = "$1" ] && return 0
	case $(buddy_how) in
	sysctl) echo "$1" 2>/dev/null >$BUDDY || { echo "cannot write $BUDDY"; return 1; } ;;
	debugfs)
		f=SMT_BUDDY_ASSIST; [ "$1" = 0 ] && f=NO_SMT_BUDDY_ASSIST
		echo $f 2>/dev/null >$FEAT || { echo "cannot write $FEAT (read-only debugfs?)"; return 1; } ;;
	*) echo "kernel has no SMT_BUDDY_ASSIST (neither $BUDDY nor $FEAT lists it)"; return 1 ;;
	esac
}

relax_get() { if [ -f $RELAX ]; then cat $RELAX; else echo none; fi; }

relax_set() {
	[ "$(relax_get)" = "$1" ] && return 0
	[ -f $RELAX ] || { echo "kernel has no $RELAX"; return 1; }
	echo "$1" 2>/dev/null >$RELAX || { echo "cannot write $1 to $RELAX"; return 1; }
}

variant_apply() {	# variant -> applied, or a reason on stdout and status 1
	b=0 r=-1
	case "$1" in
	buddy) b=1 ;;
	relax=*) r=${1#relax=} ;;
	buddy+relax=*) b=1 r=${1#buddy+relax=} ;;
	esac
	if [ "$b" = 1 ] || [ "$(buddy_how)" != none ]; then
		buddy_set $b || return 1
	fi
	if [ "$r" != -1 ] || [ -f $RELAX ]; then
		relax_set "$r" || return 1
	fi
	return 0
}

orig_buddy=$(buddy_get)
orig_relax=$(relax_get)
restore() {
	[ "$orig_buddy" = none ] || buddy_set "$orig_buddy" >/dev/null
	[ "$orig_relax" = none ] || relax_set "$orig_relax" >/dev/null
	echo "# restored: smt_buddy_assist=$(buddy_get) relax_domain_level=$(relax_get)"
	[ -n "${tmpout:-}" ] && rm -rf "$tmpout"
}

if [ "$force" = 0 ] && pidof topotuned >/dev/null 2>&1; then
	echo "workloads.sh: topotuned is running and would correct the variants; stop it or use --force" >&2
	exit 2
fi
if [ "$(id -u)" != 0 ] && [ "$variants" != base ]; then
	echo "workloads.sh: switching variants needs root" >&2
	exit 2
fi

tmpout=""
if [ -z "$out" ]; then
	tmpout=$(mktemp -d /tmp/tt-workloads.XXXXXX) || exit 1
	out=$tmpout
fi
mkdir -p "$out/raw" || exit 1
res=$out/results.tsv
: >"$res"
trap 'restore' EXIT
trap 'exit 130' INT TERM

echo "# kernel $(uname -r); $model; $ncpu CPUs, $nodes nodes, cpu0 SMT siblings $smt"
echo "# controls: SMT_BUDDY_ASSIST via $(buddy_how) (now $orig_buddy), relax_domain_level via $([ -f $RELAX ] && echo sysctl || echo none) (now $orig_relax)"
echo "# schbench: $(command -v schbench || findbin tt-wakeup || echo none); stream: $(findbin tt-stream || echo none)"
echo "# runs $runs; hackbench groups $groups, loops $loops; schbench workers $wthreads(x2 message threads); stream $elements elements; stress-ng --taskset 0-$tmax --cpu $((tmax + 1)); ${seconds}s runs"

record() {	# variant workload case metric lower|higher value
	echo "$1	$2	$3	$4	$5	$6" >>"$res"
}

missing=0
run_hackbench() {
	hb=$(command -v hackbench) || { echo "# hackbench: not installed (apt-get install rt-tests)"; missing=1; return; }
	for g in $groups; do
		f=$out/raw/hackbench-$1-g$g-r$2.txt
		"$hb" -g "$g" -l "$loops" >"$f" 2>&1
		t=$(awk '/^Time:/ { print $2 }' "$f")
		if [ -n "$t" ]; then record "$1" hackbench "g=$g" time_s lower "$t"
		else echo "# hackbench -g $g failed: $(tail -n 1 "$f")"; missing=1
		fi
	done
}

run_schbench() {
	sb=$(command -v schbench) || sb=$(findbin tt-wakeup) ||
		{ echo "# schbench: neither schbench nor tt-wakeup found (meson builds tt-wakeup)"; missing=1; return; }
	for t in $wthreads; do
		f=$out/raw/schbench-$1-t$t-r$2.txt
		"$sb" -m 2 -t "$t" -r "$seconds" >"$f" 2>&1
		# the first "*99.0th" is the wakeup latency table in schbench and in tt-wakeup
		p99=$(awk '{ for (i = 1; i < NF; i++) if ($i == "*99.0th:") { print $(i + 1); exit } }' "$f")
		rps=$(awk '/^Requests:/ { print $2; exit } /^average rps:/ { print $3; exit }' "$f")
		if [ -n "$p99" ]; then
			record "$1" schbench "workers=$((2 * t))" p99_wakeup_us lower "$p99"
			[ -n "$rps" ] && record "$1" schbench "workers=$((2 * t))" requests_per_s higher "$rps"
		else
			echo "# $sb -m 2 -t $t failed: $(tail -n 1 "$f")"; missing=1
		fi
	done
}

run_stream() {
	st=$(findbin tt-stream) || { echo "# stream: tt-stream not found (meson builds it)"; missing=1; return; }
	f=$out/raw/stream-$1-r$2.txt
	"$st" -n "$elements" -r "$([ "$smoke" = 1 ] && echo 3 || echo 10)" >"$f" 2>&1
	if grep -q '^Check: ok' "$f"; then
		record "$1" stream "threads=$ncpu" copy_MBps higher "$(awk '/^Copy:/ { print $2 }' "$f")"
		record "$1" stream "threads=$ncpu" triad_MBps higher "$(awk '/^Triad:/ { print $2 }' "$f")"
	else
		echo "# tt-stream failed: $(tail -n 1 "$f")"; missing=1
	fi
}

# distinct CPUs the stress-ng-cpu workers are on right now
hog_cpus() {	# one cat and one awk: cheap enough to sample while the hogs run
	cat /proc/[0-9]*/stat 2>/dev/null | awk '$2 == "(stress-ng-cpu)" { print $39 }' | sort -u | wc -l
}

run_stressng() {
	sn=$(command -v stress-ng) || { echo "# stress-ng: not installed (apt-get install stress-ng)"; missing=1; return; }
	f=$out/raw/stressng-$1-r$2.txt
	y=$out/raw/stressng-$1-r$2.yaml
	(cd /tmp && "$sn" --taskset "0-$tmax" --cpu $((tmax + 1)) --cpu-method float128 --metrics \
		--timeout "${seconds}s" --yaml "$y" >"$f" 2>&1) &
	pid=$!
	# sample once a second while it runs; keep the last (most settled) sample
	spread=0
	while kill -0 $pid 2>/dev/null; do
		sleep 1
		n=$(hog_cpus)
		[ "$n" -gt 0 ] && spread=$n
	done
	wait $pid
	ops=$(awk '/bogo-ops-per-second-real-time:/ { print $2; exit }' "$y" 2>/dev/null)
	if [ -n "$ops" ]; then
		record "$1" stressng "taskset=0-$tmax" bogo_ops_per_s higher "$ops"
		record "$1" stressng "taskset=0-$tmax" hog_cpus higher "$spread"
	else
		echo "# stress-ng failed: $(tail -n 1 "$f")"; missing=1
	fi
}

# --- run: each repetition goes through every variant --------------------------
na=""
r=1
while [ $r -le "$runs" ]; do
	for v in $variants; do
		case " $na " in *" $v "*) continue ;; esac
		if ! why=$(variant_apply "$v"); then
			echo "# variant $v: n/a: $why"
			na="$na $v"
			echo "$v	-	-	n/a	-	$why" >>"$res"
			continue
		fi
		for w in $workloads; do
			"run_$w" "$v" "$r"
		done
	done
	r=$((r + 1))
done

# --- tables -------------------------------------------------------------------
awk -F'\t' -v runs="$runs" '
function median(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++)	# insertion sort, n is small
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$4 == "n/a" { na[$1] = $6; if (!($1 in seen)) { seen[$1] = 1; order[++nv] = $1 } next }
{
	if (!($1 in seen)) { seen[$1] = 1; order[++nv] = $1 }
	k = $2 SUBSEP $3 SUBSEP $4
	if (!(k in dir)) { dir[k] = $5; rows[++nr] = k }
	vals[$1, k] = vals[$1, k] " " $6
}
END {
	for (i = 1; i <= nv; i++) {
		v = order[i]
		if (v == "base") continue
		printf "\n## %s vs base (median of %d run%s; change: + is better)\n", v, runs, runs == 1 ? "" : "s"
		if (v in na) { printf "n/a: %s\n", na[v]; continue }
		if ("base" in na) { printf "n/a: the base variant could not run: %s\n", na["base"]; continue }
		compared++
		printf "%-10s %-16s %-16s %12s %12s %8s\n", "workload", "case", "metric", "base", v, "change"
		for (j = 1; j <= nr; j++) {
			k = rows[j]
			if (!(("base", k) in vals) || !((v, k) in vals)) continue
			split(k, p, SUBSEP)
			b = median(vals["base", k]); x = median(vals[v, k])
			c = b == 0 ? "-" : sprintf("%+.1f%%", (dir[k] == "lower" ? b - x : x - b) * 100 / b)
			printf "%-10s %-16s %-16s %12.6g %12.6g %8s\n", p[1], p[2], p[3], b, x, c
		}
	}
	if (compared == 0) {
		printf "\n## base only (median of %d run%s)\n", runs, runs == 1 ? "" : "s"
		for (j = 1; j <= nr; j++) {
			split(rows[j], p, SUBSEP)
			printf "%-10s %-16s %-16s %12.6g\n", p[1], p[2], p[3], median(vals["base", rows[j]])
		}
	}
}' "$res"
[ -z "$tmpout" ] && echo "# results: $res, raw outputs in $out/raw"
[ "$missing" = 0 ]
