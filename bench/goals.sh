#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Issue 33's figures in one run, each with its anchor: the benchmark
# scripts one after the other on one build, their whole output kept in
# OUT, and a summary of the lines that carry a goal's figure at the end.
# Prints figures, asserts nothing; "NOT met" in the summary is a reading.
#
#   bench/goals.sh [BUILD [LABEL=OTHER-BUILD...]]
#
# BUILD is a meson build dir (default build); each LABEL=OTHER-BUILD (the
# build before a change, say) is measured beside it by the scripts that take
# other builds, in the same loop, so that the machine's load falls on both.
#
#   discovery.sh          topotunectl topology --json vs lscpu --sysroot and
#                         the read floor, 16-640 CPUs (goal 1)
#   daemon-start.sh       spawn -> READY=1 and RSS at 640 CPUs, lscpu as the
#                         anchor, where the start-up time goes (goal 2)
#   workload-switch.sh    exec -> Applied under churn, CPU per SetProfile at
#                         640 CPUs (goal 3)
#   scaling.sh            discovery and plan, 16-2,048 CPUs, per CPU, with
#                         lscpu's (goal 4)
#   diagnose-overhead.sh  diagnose's sampling at 640 CPUs (goal 5)
#
# Environment: OUT (default /dev/shm/topotune-goals), and each script's own
# (RUNS, SAMPLES, ...), passed through. A release build is what the figures
# in bench/README.md come from: meson setup build-rel -Dbuildtype=release.
# Needs root, as the scripts do. Takes 5-10 minutes on a 2-CPU machine.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(readlink -f "${1:-$src/build}")
shift || true
ctls=() daemons=()
for a in "$@"; do
	case "$a" in
	*=*) ctls+=("${a%%=*}=$(readlink -f "${a#*=}")/agent/cli/topotunectl")
	     daemons+=("${a%%=*}=$(readlink -f "${a#*=}")/agent/service/topotuned") ;;
	*) echo "goals.sh: expected LABEL=BUILD, got '$a'" >&2; exit 2 ;;
	esac
done
out=${OUT:-/dev/shm/topotune-goals}
ctl="$build/agent/cli/topotunectl"
daemon="$build/agent/service/topotuned"
for b in "$ctl" "$daemon"; do
	[ -x "$b" ] || { echo "goals.sh: no $b (meson setup $build && ninja -C $build)" >&2; exit 2; }
done
mkdir -p "$out"

run() {	# NAME CMD...: run, keep the output, say what it took
	local name=$1 t rc
	shift
	t=$(date +%s)
	echo "### $name: $*"
	"$@" >"$out/$name.txt" 2>&1
	rc=$?
	echo "# exit $rc, $(($(date +%s) - t)) s, output in $out/$name.txt"
}

echo "bench/goals.sh on $(uname -r), $(nproc) CPUs, build $build ($(git -C "$src" describe --always --dirty 2>/dev/null))"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run discovery "$src/bench/discovery.sh" "$ctl" "${ctls[@]}"
run daemon-start "$src/bench/daemon-start.sh" "$daemon" "${daemons[@]}"
run workload-switch "$src/bench/workload-switch.sh" "$daemon" "${daemons[@]}"
run scaling "$src/bench/scaling.sh" "$ctl" "${ctls[@]}"
run diagnose-overhead "$src/bench/diagnose-overhead.sh" "$ctl"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "== 1. discovery at 640 CPUs (goal: >= 15x faster than lscpu --sysroot, <= 1.3x the read floor)"
grep -A2 '^Goals at 640 CPUs' "$out/discovery.txt" | sed 1d
echo "== 2. start-up at 640 CPUs (goal: READY=1 <= 10 ms, steady RSS <= 4 MiB; anchor lscpu)"
grep -E '^  (build|topotuned|lscpu \(anchor\)|[a-z0-9_-]+ +[0-9])' "$out/daemon-start.txt"
sed -n '/where the time goes/,/spawn -> READY=1/p' "$out/daemon-start.txt"
echo "== 3. workload switch (goal: exec -> Applied p99 <= 5 ms under churn; <= 3 ms CPU per switch at 640 CPUs)"
grep -E '^  [a-z0-9_-]+ +(client|wl-probe|python|CPU)' "$out/workload-switch.txt"
echo "== 4. scaling (goal: plan linear; lscpu as the anchor)"
sed -n '/^ *CPUs/,/^$/p' "$out/scaling.txt"
echo "== 5. diagnose sampling at 640 CPUs (goal: < 1 % of one CPU)"
grep -E 'the sampling itself' "$out/diagnose-overhead.txt"
