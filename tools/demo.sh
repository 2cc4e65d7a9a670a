#!/bin/sh
# The main job on the embedded default: build topotune, generate a dual-socket
# Hygon C86 7447v (family 0x18 model 7, 384 CPUs, 6 NUMA nodes per socket)
# sysroot running a kernel with the topotune series, install the shipped
# configuration into it, and show what topotune makes of that machine:
# identity, topology, the profiles, the plan of the selected profile
# (balanced: kernel defaults on this machine), the plan and predicted
# scheduler-domain layout of throughput (SMT_BUDDY_ASSIST on), and where that
# value comes from. Nothing on this machine is changed.
#
# Usage: tools/demo.sh [SPEC]   (SPEC: a name from tests/sysroot/specs)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
spec=${1:-hygon-7447v-2s-nps6}
build=${BUILD_DIR:-$top/build}

"$top/tools/deps.sh"
[ -f "$build/build.ninja" ] || meson setup "$build" "$top" >/dev/null
ninja -C "$build" >/dev/null

tree=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$tree"' EXIT
python3 "$top/tests/sysroot/gen-sysroot.py" -q "$spec" "$tree/root"
mkdir -p "$tree/root/usr/lib/topotune" "$tree/root/etc/topotune"
cp -r "$top/conf/profiles" "$top/conf/hardware.d" "$tree/root/usr/lib/topotune/"
cp "$top/conf/topotune.conf" "$tree/root/etc/topotune/"

ctl="$build/agent/cli/topotunectl --root $tree/root"
echo "## topotunectl topology   (generated $spec tree)"
$ctl topology
echo
echo "## topotunectl profiles"
$ctl profiles
echo
echo "## topotunectl plan"
$ctl plan
echo
echo "## topotunectl plan --profile throughput"
$ctl plan --profile throughput
echo
echo "## topotunectl explain smt_buddy_assist   (with [daemon] profile = throughput)"
mkdir -p "$tree/root/etc/topotune/topotune.conf.d"
printf '[daemon]\nprofile = throughput\n' >"$tree/root/etc/topotune/topotune.conf.d/50-demo.conf"
$ctl explain smt_buddy_assist
