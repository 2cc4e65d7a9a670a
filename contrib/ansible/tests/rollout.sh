#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Test of the rollout playbook (contrib/ansible/rollout.yml) on a fleet of
# four hosts on this one machine. This is the test harness, not a model of
# an inventory: each "host" is a generated sysroot with its own private
# dbus-daemon and its own topotuned --root TREE --bus-address ADDR, and the
# inventory reaches it with ansible_connection=local, topotune_root and
# topotune_ctl_args=[--bus-address, ADDR]. A real inventory names real
# machines and leaves those variables unset (the system bus, /).
#
# The rollout: balanced -> throughput, batches 1, 50 %, the rest (h1 | h2
# h3 | h4), the trial gate on a workload that sleeps 0.2 s (4 rounds each,
# tolerance 25 %). Checks: ansible-lint (production profile); all hosts
# promoted when every gate passes, with a report; a second run changes
# nothing and runs no trial; with h3's workload slowed down under the new
# profile (it sleeps 0.6 s while the kernel's sched_smt_buddy_assist, which
# throughput turns on, is 1) the rollout stops at h3's batch, h2 and h3
# are back on balanced through the role's drop-in (and stay there when
# their topotuned restarts), h1 keeps throughput, h4 is never touched, and
# the report names h3 and the trial's interval.
#
# Usage: contrib/ansible/tests/rollout.sh   (ansible-playbook, ansible-lint,
#   dbus-daemon, python3, meson, ninja)
#   TOPOTUNE_BUILDDIR=DIR  use topotunectl/topotuned of this meson build
#   TOPOTUNE_KEEP=1        keep the work directory
# Ends with "N passed, M failed"; exit 0 only when all passed.
set -eu

SRC=$(cd "$(dirname "$0")/../../.." && pwd)
passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

for tool in ansible-playbook dbus-daemon python3; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool missing (apt-get install ansible-core dbus python3)"
		exit 77
	fi
done

HOSTS="h1 h2 h3 h4"
WORK=$(mktemp -d /var/tmp/topotune-rollout.XXXXXX)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	if [ "${TOPOTUNE_KEEP:-0}" = 1 ]; then echo "# kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)

if ! command -v ansible-lint >/dev/null; then
	fail "ansible-lint missing (apt-get install ansible-lint)"
elif (cd "$SRC/contrib/ansible" && ansible-lint --nocolor -c .ansible-lint rollout.yml roles/topotune_rollout) \
	>"$WORK/lint.log" 2>&1; then
	pass "ansible-lint rollout.yml roles/topotune_rollout: $(grep -o 'Passed with [a-z]* profile.*' "$WORK/lint.log")"
else
	cat "$WORK/lint.log"
	fail "ansible-lint rollout.yml roles/topotune_rollout"
fi

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

# Each host: a tree, a bus, a daemon (pid in $WORK/HOST.pid).
start_daemon() {
	"$DAEMON" --root "$WORK/$1" --bus-address "unix:path=$WORK/$1.sock" --no-systemd >>"$WORK/$1.log" 2>&1 &
	echo $! >"$WORK/$1.pid"
	PIDS="$! $PIDS"
	i=0
	until "$CTL" --bus-address "unix:path=$WORK/$1.sock" status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 150 ] && { tail -n 20 "$WORK/$1.log"; return 1; }
		sleep 0.1
	done
}
up=0
for h in $HOSTS; do
	R="$WORK/$h"
	python3 "$SRC/tests/sysroot/gen-sysroot.py" -q --set kernel.patched=yes small-2s-4n "$R"
	mkdir -p "$R/usr/lib/topotune" "$R/etc/topotune/topotune.conf.d" "$R/sys/fs/cgroup/topotune.slice"
	cp -r "$SRC/conf/profiles" "$SRC/conf/hardware.d" "$R/usr/lib/topotune/"
	cp "$SRC/conf/topotune.conf" "$R/etc/topotune/"
	echo >"$R/sys/fs/cgroup/topotune.slice/cpuset.cpus"
	echo member >"$R/sys/fs/cgroup/topotune.slice/cpuset.cpus.partition"
	printf '[daemon]\nverify_interval = 0\n' >"$R/etc/topotune/topotune.conf.d/10-test.conf"
	sed "s|@ADDRESS@|unix:path=$WORK/$h.sock|" "$SRC/tests/private-bus.conf" >"$WORK/$h.bus.conf"
	dbus-daemon --nofork --nopidfile --config-file "$WORK/$h.bus.conf" >"$WORK/$h.bus.log" 2>&1 &
	PIDS="$! $PIDS"
	i=0
	while [ ! -S "$WORK/$h.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	start_daemon "$h" && up=$((up + 1))
done
if [ "$up" = 4 ]; then pass "four hosts: a generated tree, a private bus and a topotuned each"; else
	fail "only $up of 4 topotuned started"; echo "$passed passed, $failed failed"; exit 1; fi

# The inventory; RIGGED names the host whose workload is slower under throughput.
inventory() {
	python3 - "$WORK" "$CTL" "$1" >"$WORK/inventory.yml" <<'PY'
import json, sys
work, ctl, rigged = sys.argv[1:]
hosts = {}
for h in ("h1", "h2", "h3", "h4"):
    v = {"topotune_root": f"{work}/{h}", "topotune_ctl_args": ["--bus-address", f"unix:path={work}/{h}.sock"]}
    if h == rigged:
        smt = f"{work}/{h}/proc/sys/kernel/sched_smt_buddy_assist"
        v["topotune_rollout_workload"] = ["sh", "-c", f'if [ "$(cat {smt})" = 1 ]; then sleep 0.6; else sleep 0.2; fi']
    hosts[h] = v
print(json.dumps({"all": {"children": {"fleet": {"hosts": hosts, "vars": {
    "ansible_connection": "local",
    "ansible_python_interpreter": sys.executable,
    "topotune_ctl": ctl,
    "topotune_rollout_workload": ["sleep", "0.2"],
    "topotune_rollout_rounds": 4,
    "topotune_rollout_warmup": 0,
    "topotune_rollout_tolerance": 0.25,
    # A generated tree has no live scheduler domains to compare with the plan.
    "topotune_rollout_trial_args": ["--no-layout-check"],
    "topotune_rollout_report_dir": f"{work}/report",
}}}}}, indent=1))
PY
}

run=0
# rollout PROFILE [EXTRA-VARS-JSON]: sets $rc, $log, $recap
rollout() {
	run=$((run + 1))
	log="$WORK/rollout-$run.log"
	set +e
	ANSIBLE_ROLES_PATH="$SRC/contrib/ansible/roles" ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 \
		ansible-playbook -i "$WORK/inventory.yml" "$SRC/contrib/ansible/rollout.yml" \
		-e "{\"topotune_rollout_hosts\": \"fleet\", \"topotune_rollout_serial\": [1, \"50%\", \"100%\"],
		     \"topotune_rollout_become\": false, \"topotune_rollout_profile\": \"$1\" ${2:+, $2}}" >"$log" 2>&1
	rc=$?
	set -e
	recap=$(sed -n '/PLAY RECAP/,$p' "$log")
	echo "# run $run ($1): rc=$rc, $(($(date +%s) - t0)) s so far"
}
changed_of() { echo "$recap" | sed -n "s/^$1 *:.*changed=\([0-9]*\).*/\1/p"; }
active() { "$CTL" --bus-address "unix:path=$WORK/$1.sock" status --json 2>/dev/null |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["profile"])'; }
chosen() { sed -n 's/^profile = //p' "$WORK/$1/etc/topotune/topotune.conf.d/50-ansible-profile.conf" 2>/dev/null; }
smt() { cat "$WORK/$1/proc/sys/kernel/sched_smt_buddy_assist"; }
tree_sum() { (cd "$WORK/$1" && find etc proc/sys/kernel -type f -exec md5sum {} + | LC_ALL=C sort | md5sum); }
# report FIELD...: host:result per host from rollout.json
report() { python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(h["host"] + ":" + h["result"] for h in r["hosts"]), "stopped=%s" % r["stopped"])' "$WORK/report/rollout.json"; }

# 1. every gate passes: all four promoted
inventory none
rollout throughput
if [ "$rc" = 0 ] && [ "$(report)" = "h1:promoted h2:promoted h3:promoted h4:promoted stopped=False" ] &&
   for h in $HOSTS; do [ "$(active $h)" = throughput ] && [ "$(chosen $h)" = throughput ] && [ "$(smt $h)" = 1 ] || exit 1; done &&
   [ "$(ls "$WORK"/report/*.trial.json | wc -l)" = 4 ]; then
	pass "gates pass: throughput promoted on h1, then h2 h3, then h4 (drop-in, active, kernel); 4 trial documents"
else tail -n 40 "$log"; fail "rollout with passing gates: rc=$rc $(report 2>&1)"; fi
if grep -q '^h4 *balanced *promoted *no clear difference' "$WORK/report/rollout.txt" 2>/dev/null; then
	pass "the table: $(sed -n 1p "$WORK/report/rollout.txt")"
else cat "$WORK/report/rollout.txt"; fail "report table"; fi

# 2. again: nothing changes, no trial runs
rm -f "$WORK"/report/*.trial.json
rollout throughput
if [ "$rc" = 0 ] && for h in $HOSTS; do [ "$(changed_of $h)" = 0 ] || exit 1; done &&
   [ "$(report)" = "h1:unchanged h2:unchanged h3:unchanged h4:unchanged stopped=False" ] &&
   ! ls "$WORK"/report/*.trial.json >/dev/null 2>&1; then
	pass "second run: 0 changed on every host, no trial, every host unchanged"
else echo "$recap"; fail "second run: rc=$rc $(report 2>&1)"; fi

# 3. back to balanced by hand (the role's drop-in removed, topotuned reloaded), then h3 rigged
for h in $HOSTS; do
	rm "$WORK/$h/etc/topotune/topotune.conf.d/50-ansible-profile.conf"
	"$CTL" --bus-address "unix:path=$WORK/$h.sock" reload >/dev/null
done
if for h in $HOSTS; do [ "$(active $h)" = balanced ] && [ "$(smt $h)" = 0 ] || exit 1; done; then
	pass "every host back on balanced"
else fail "back to balanced: $(for h in $HOSTS; do active $h; done)"; fi
inventory h3
h4_before=$(tree_sum h4)
h4_log=$(wc -c <"$WORK/h4.log")
rollout throughput
if [ "$rc" != 0 ] &&
   [ "$(report)" = "h1:promoted h2:rolled back h3:regressed, rolled back h4:not reached stopped=True" ]; then
	pass "h3 regresses: the rollout stops at its batch; report: $(report)"
else tail -n 60 "$log"; fail "rigged rollout: rc=$rc $(report 2>&1)"; fi
why=$(python3 -c '
import json, sys
r = {h["host"]: h for h in json.load(open(sys.argv[1]))["hosts"]}
t = r["h3"]["trial"]
print(r["h3"]["reasons"][0], "|", r["h2"]["reasons"][0], "|", t["verdict"],
      "beyond the tolerance" if float(t["lower"]) > 0.25 else "within the tolerance")' \
	"$WORK/report/rollout.json" 2>&1)
case "$why" in
"trial: throughput slower than balanced on wall_time_s: +"*"batch stopped by h3 | slower beyond the tolerance")
	pass "the report says why: $why" ;;
*) fail "the report's reasons: $why" ;;
esac
if [ "$(active h1)" = throughput ] && [ "$(chosen h1)" = throughput ] &&
   for h in h2 h3; do [ "$(active $h)" = balanced ] && [ "$(chosen $h)" = balanced ] && [ "$(smt $h)" = 0 ] || exit 1; done; then
	pass "h1 (earlier batch) keeps throughput; h2 and h3 rolled back to balanced by the role's drop-in"
else fail "after the stop: h1 $(active h1)/$(chosen h1), h2 $(active h2)/$(chosen h2), h3 $(active h3)/$(chosen h3)"; fi
if [ "$(tree_sum h4)" = "$h4_before" ] && [ "$(wc -c <"$WORK/h4.log")" = "$h4_log" ] && [ "$(active h4)" = balanced ] &&
   ! echo "$recap" | grep -q '^h4 '; then
	pass "h4 (later batch) never touched: its files, its daemon's log and the play recap say so"
else echo "$recap"; fail "h4 was touched"; fi
# A reboot keeps the rollback: topotuned starts again from the configuration.
kill "$(cat "$WORK/h3.pid")"
while kill -0 "$(cat "$WORK/h3.pid")" 2>/dev/null; do sleep 0.1; done
if start_daemon h3 && [ "$(active h3)" = balanced ] && [ "$(smt h3)" = 0 ]; then
	pass "h3's topotuned restarted: still balanced (the rollback is persistent)"
else fail "h3 after a restart: $(active h3)"; fi

echo "# took $(($(date +%s) - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
