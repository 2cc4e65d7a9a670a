#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Test of the Prometheus rules (contrib/prometheus) and the Grafana dashboard
# (contrib/grafana) against what topotuned really exports: a daemon on a
# generated tree (tests/sysroot/gen-sysroot.py, with /proc/schedstat v17,
# the series' /proc/sched_smt_buddy_stat and /proc/softirqs written in the
# kernel's formats) on a private bus; "topotunectl metrics" is the reference.
#
# Checks: promtool check rules; promtool test rules (every alert fires and
# does not fire); every metric and label name in the rules and in every
# dashboard query (and its variable) is one topotuned exports
# (check-metric-names.py); the dashboard's queries parse as PromQL (promtool,
# as recording rules); the name check rejects a dashboard with one name
# misspelt (so it can fail).
#
# Usage: contrib/tests/run.sh   (root not needed; promtool from Debian's
#   prometheus, dbus-daemon, python3-yaml, meson, ninja)
#   TOPOTUNE_BUILDDIR=DIR  use topotunectl/topotuned of this meson build
#   TOPOTUNE_KEEP=1        keep the work directory
# Ends with "N passed, M failed"; exit 0 only when all passed.
set -eu

SRC=$(cd "$(dirname "$0")/../.." && pwd)
passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

for tool in promtool dbus-daemon python3; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool missing (apt-get install prometheus dbus python3-yaml)"
		exit 77
	fi
done

WORK=$(mktemp -d /var/tmp/topotune-metrics.XXXXXX)
ROOT="$WORK/root"
ADDR="unix:path=$WORK/bus.sock"
BUS_PID=""
D_PID=""
cleanup() {
	[ -n "$D_PID" ] && kill "$D_PID" 2>/dev/null && wait "$D_PID" 2>/dev/null
	[ -n "$BUS_PID" ] && kill "$BUS_PID" 2>/dev/null && wait "$BUS_PID" 2>/dev/null
	if [ "${TOPOTUNE_KEEP:-0}" = 1 ]; then echo "# kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)

BUILD=${TOPOTUNE_BUILDDIR:-}
if [ -z "$BUILD" ]; then
	BUILD="$WORK/build"
	if ! { meson setup "$BUILD" "$SRC" -Drealdata=/nonexistent &&
	       nice ninja -C "$BUILD" agent/cli/topotunectl agent/service/topotuned; } >"$WORK/build.log" 2>&1; then
		tail -n 30 "$WORK/build.log"
		fail "build topotunectl and topotuned"
		echo "$passed passed, $failed failed"
		exit 1
	fi
fi
CTL="$BUILD/agent/cli/topotunectl"
DAEMON="$BUILD/agent/service/topotuned"

# The tree: a patched-kernel Hygon 7447v, profile throughput (numeric desired
# values), the kernel's counters in their formats, schedstats on.
python3 "$SRC/tests/sysroot/gen-sysroot.py" -q --set kernel.patched=yes hygon-7447v-2s-nps3 "$ROOT"
mkdir -p "$ROOT/usr/lib/topotune" "$ROOT/etc/topotune/topotune.conf.d" "$ROOT/sys/fs/cgroup/topotune.slice"
cp -r "$SRC/conf/profiles" "$SRC/conf/hardware.d" "$ROOT/usr/lib/topotune/"
cp "$SRC/conf/topotune.conf" "$ROOT/etc/topotune/"
echo >"$ROOT/sys/fs/cgroup/topotune.slice/cpuset.cpus"
echo member >"$ROOT/sys/fs/cgroup/topotune.slice/cpuset.cpus.partition"
printf '[daemon]\nverify_interval = 0\nprofile = throughput\n' >"$ROOT/etc/topotune/topotune.conf.d/10-test.conf"
echo 1 >"$ROOT/proc/sys/kernel/sched_schedstats"
python3 - "$ROOT" <<'PY'
import sys
root = sys.argv[1]
fields = lambda k: " ".join(str(k * f) for f in range(1, 46))   # noqa: E731
with open(f"{root}/proc/schedstat", "w") as f:
    f.write("version 17\ntimestamp 4294892296\n")
    for c in range(4):
        f.write(f"cpu{c} 0 0 0 0 0 0 0 0 0\ndomain0 SMT {1 << c:x} {fields(1)}\ndomain1 MC f {fields(c + 1)}\n")
with open(f"{root}/proc/sched_smt_buddy_stat", "w") as f:
    f.write("version 2\ntimestamp 4294892296\n" + "".join(f"cpu{c} {c} 1\n" for c in range(4)))
with open(f"{root}/proc/softirqs", "w") as f:
    f.write("                    CPU0       CPU1       CPU2       CPU3\n"
            "          HI:          0          0          0          0\n"
            "       SCHED:        100        200        300        400\n")
PY

sed "s|@ADDRESS@|$ADDR|" "$SRC/tests/private-bus.conf" >"$WORK/bus.conf"
dbus-daemon --nofork --nopidfile --config-file "$WORK/bus.conf" >"$WORK/bus.log" 2>&1 &
BUS_PID=$!
i=0
while [ ! -S "$WORK/bus.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
"$DAEMON" --root "$ROOT" --bus-address "$ADDR" --no-systemd >"$WORK/topotuned.log" 2>&1 &
D_PID=$!
i=0
until "$CTL" --bus-address "$ADDR" status >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 "$D_PID" 2>/dev/null; then
		tail -n 20 "$WORK/topotuned.log"
		fail "topotuned did not start"
		echo "$passed passed, $failed failed"
		exit 1
	fi
	sleep 0.1
done
M="$WORK/metrics.txt"
if "$CTL" --bus-address "$ADDR" metrics >"$M" && grep -q '^topotune_schedstat_lb_count_total{' "$M" &&
   grep -q '^topotune_smt_buddy_pushed_total ' "$M" && grep -q '^topotune_softirqs_sched_total ' "$M"; then
	pass "topotunectl metrics from topotuned on a generated tree: $(grep -c '^# TYPE' "$M") families"
else head -n 40 "$M"; fail "topotunectl metrics: no output with the kernel's counters"; fi

RULES="$SRC/contrib/prometheus/topotune.rules.yml"
DASH="$SRC/contrib/grafana/topotune.json"
if promtool check rules "$RULES" >"$WORK/check.log" 2>&1; then
	pass "promtool check rules: $(grep -o '[0-9]* rules found' "$WORK/check.log")"
else cat "$WORK/check.log"; fail "promtool check rules"; fi
if (cd "$SRC/contrib/prometheus" && promtool test rules tests/topotune.rules.test.yml) >"$WORK/test.log" 2>&1; then
	# Every alert of the rules has a case where it fires and one where it does not.
	if python3 - "$RULES" "$SRC/contrib/prometheus/tests/topotune.rules.test.yml" >"$WORK/cover.log" 2>&1 <<'PY'
import sys, yaml
alerts = {r["alert"] for g in yaml.safe_load(open(sys.argv[1]))["groups"] for r in g["rules"] if "alert" in r}
seen = {}
for t in yaml.safe_load(open(sys.argv[2]))["tests"]:
    for c in t.get("alert_rule_test", []):
        seen.setdefault(c["alertname"], set()).add(bool(c.get("exp_alerts")))
bad = sorted(a for a in alerts if seen.get(a) != {True, False})
print(f"{len(alerts)} alerts" if not bad else "not tested both ways: " + " ".join(bad))
sys.exit(1 if bad else 0)
PY
	then
		pass "promtool test rules: all $(cat "$WORK/cover.log"), each firing and not firing"
	else cat "$WORK/cover.log"; fail "promtool test rules: an alert is not tested both ways"; fi
else cat "$WORK/test.log"; fail "promtool test rules"; fi

if python3 "$SRC/contrib/tests/check-metric-names.py" "$M" --rules "$RULES" >"$WORK/names-rules.log" 2>&1; then
	pass "rules name only exported metrics and labels: $(tail -n 1 "$WORK/names-rules.log")"
else cat "$WORK/names-rules.log"; fail "rules name metrics topotuned does not export"; fi
if python3 "$SRC/contrib/tests/check-metric-names.py" "$M" --dashboard "$DASH" --promql-out "$WORK/dash.rules.yml" \
	>"$WORK/names-dash.log" 2>&1; then
	pass "dashboard queries name only exported metrics and labels: $(tail -n 1 "$WORK/names-dash.log")"
else cat "$WORK/names-dash.log"; fail "dashboard names metrics topotuned does not export"; fi
if promtool check rules "$WORK/dash.rules.yml" >"$WORK/dash-check.log" 2>&1; then
	pass "dashboard queries parse as PromQL: $(grep -o '[0-9]* rules found' "$WORK/dash-check.log")"
else cat "$WORK/dash-check.log"; fail "dashboard queries do not parse"; fi

# The check can fail: one name misspelt, one label that does not exist.
sed 's/topotune_smt_buddy_pushed_total/topotune_smt_buddy_push_total/; s/by (index, domain, idle)/by (index, level, idle)/' \
	"$DASH" >"$WORK/bad.json"
if ! python3 "$SRC/contrib/tests/check-metric-names.py" "$M" --dashboard "$WORK/bad.json" >"$WORK/names-bad.log" 2>&1 &&
   grep -q 'topotune_smt_buddy_push_total is not exported' "$WORK/names-bad.log" &&
   grep -q 'has the label level' "$WORK/names-bad.log"; then
	pass "the name check rejects a misspelt metric and a label the daemon does not export"
else cat "$WORK/names-bad.log"; fail "the name check accepted a misspelt metric or label"; fi

echo "# took $(($(date +%s) - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
