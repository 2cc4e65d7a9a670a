#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Test of the Ansible role against this machine, touching only a fake root
# the test creates: a generated sysroot (tests/sysroot/gen-sysroot.py) with
# the shipped configuration installed as the package would, a private
# dbus-daemon, and topotuned --root FAKEROOT --bus-address on it. The play
# runs with topotune_root=FAKEROOT (no package install, no systemd) and
# topotunectl --bus-address.
#
# Checks: check mode writes nothing and reports changes; the first run
# changes, the second reports 0 changed; drift is repaired (changed) and
# reported in check mode without repairing; pruning; a bad profile is
# refused by topotunectl check (copy's validate, and in check mode) and
# never written; a dead daemon fails; variables of the wrong type are refused
# by meta/argument_specs.yml before the first task; the package step goes to
# dnf on the RedHat family; ansible-lint (with
# contrib/ansible/.ansible-lint) finds nothing in the role.
#
# Usage: contrib/ansible/tests/run.sh   (root not needed; ansible-playbook,
#   ansible-lint, dbus-daemon, meson, ninja)
#   TOPOTUNE_BUILDDIR=DIR  use topotunectl/topotuned of this meson build
#                          (default: build HEAD's working tree into the work dir)
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

WORK=$(mktemp -d /var/tmp/topotune-ansible.XXXXXX)
ROOT="$WORK/root"
SOCK="$WORK/bus.sock"
ADDR="unix:path=$SOCK"
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

# 0. ansible-lint: every rule of the production profile, none skipped
if ! command -v ansible-lint >/dev/null; then
	fail "ansible-lint missing (apt-get install ansible-lint; tools/test.sh installs it)"
elif (cd "$SRC/contrib/ansible" && ansible-lint --nocolor -c .ansible-lint roles/topotune) >"$WORK/lint.log" 2>&1; then
	pass "ansible-lint: $(grep -o 'Passed with [a-z]* profile.*' "$WORK/lint.log")"
else
	cat "$WORK/lint.log"
	fail "ansible-lint roles/topotune"
fi

# 1. binaries
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
[ -x "$CTL" ] && [ -x "$DAEMON" ] || { fail "no $CTL or $DAEMON"; echo "$passed passed, $failed failed"; exit 1; }

# 2. the fake root: a patched-kernel Hygon 7447v and the shipped configuration
python3 "$SRC/tests/sysroot/gen-sysroot.py" -q --set kernel.patched=yes hygon-7447v-2s-nps6 "$ROOT"
mkdir -p "$ROOT/usr/lib/topotune" "$ROOT/etc/topotune/profiles" "$ROOT/etc/topotune/hardware.d" \
	"$ROOT/etc/topotune/topotune.conf.d" "$ROOT/sys/fs/cgroup/topotune.slice"
cp -r "$SRC/conf/profiles" "$SRC/conf/hardware.d" "$ROOT/usr/lib/topotune/"
cp "$SRC/conf/topotune.conf" "$ROOT/etc/topotune/"
echo >"$ROOT/sys/fs/cgroup/topotune.slice/cpuset.cpus"
echo member >"$ROOT/sys/fs/cgroup/topotune.slice/cpuset.cpus.partition"
# Written by hand, not by the role: the role's pruning must leave it alone.
# No periodic verify: drift is for the play to find, not for the daemon.
printf '[daemon]\nverify_interval = 0\n' >"$ROOT/etc/topotune/topotune.conf.d/10-test.conf"
SMT="$ROOT/proc/sys/kernel/sched_smt_buddy_assist"
RELAX="$ROOT/proc/sys/kernel/sched_relax_domain_level"

# 3. a private bus and the daemon on the fake root
sed "s|@ADDRESS@|$ADDR|" "$SRC/tests/private-bus.conf" >"$WORK/bus.conf"
dbus-daemon --nofork --nopidfile --config-file "$WORK/bus.conf" >"$WORK/bus.log" 2>&1 &
BUS_PID=$!
start_daemon() {
	"$DAEMON" --root "$ROOT" --bus-address "$ADDR" --no-systemd >>"$WORK/topotuned.log" 2>&1 &
	D_PID=$!
	i=0
	while [ $i -lt 100 ]; do
		"$CTL" --bus-address "$ADDR" status >/dev/null 2>&1 && return 0
		kill -0 "$D_PID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	tail -n 20 "$WORK/topotuned.log"
	return 1
}
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
if start_daemon; then pass "topotuned --root FAKEROOT on a private bus"; else
	fail "topotuned did not start"; echo "$passed passed, $failed failed"; exit 1; fi

# 4. the play
cat >"$WORK/play.yml" <<'EOF'
- name: topotune role test
  hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - topotune
EOF
# Variables of a run: the base, then one scenario file.
python3 - "$WORK" "$ROOT" "$CTL" "$ADDR" <<'EOF'
import json, sys
work, root, ctl, addr = sys.argv[1:]
base = {
    "topotune_root": root,
    "topotune_ctl": ctl,
    "topotune_ctl_args": ["--bus-address", addr],
}
site = dict(base,
    topotune_profiles={
        "site-latency": "[profile]\ndescription = Site: latency, wider balancing\ninclude = latency\n"
                        "[scheduler]\nrelax_domain_level = 4\n",
        "site-batch": "[profile]\ndescription = Site: batch\ninclude = throughput\n",
    },
    topotune_dropins={"60-site": "[daemon]\nrollback = on-exit\n"},
    topotune_profile="site-latency")
bare = dict(base, topotune_profiles={}, topotune_dropins={}, topotune_profile="")
# Wrong types: a list of profiles, a word for a bool (without the specs
# "sometimes" | bool is false: pruning would be silently off).
badtype = dict(site, topotune_profiles=["site-latency"], topotune_prune="sometimes")
# The package step on other families (facts given, --check, no root: it
# fails at the package manager, before any file): RedHat is dnf's or yum's.
pkg = dict(base, topotune_root="", topotune_install_package=True, topotune_manage_service=False)
rpm = dict(pkg, ansible_facts={"os_family": "RedHat", "pkg_mgr": "dnf"})
suse = dict(pkg, ansible_facts={"os_family": "Suse", "pkg_mgr": "zypper"})
sitereport = dict(site, topotune_local_override="report")
for name, v in (("site", site), ("bare", bare), ("badtype", badtype), ("rpm", rpm), ("suse", suse),
                ("sitereport", sitereport)):
    with open(f"{work}/{name}.json", "w") as f:
        json.dump(v, f)
EOF

run=0
# play VARS [--check]: runs the play; sets $rc, $changed, $failedn; log in $WORK/play-N.log
play() {
	run=$((run + 1))
	log="$WORK/play-$run.log"
	set +e
	ANSIBLE_ROLES_PATH="$SRC/contrib/ansible/roles" ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 \
		ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0 \
		ansible-playbook -i localhost, "$WORK/play.yml" -e "@$WORK/$1.json" ${2:-} >"$log" 2>&1
	rc=$?
	set -e
	recap=$(grep -E '^localhost +:' "$log" || true)
	changed=$(echo "$recap" | sed -n 's/.*changed=\([0-9]*\).*/\1/p')
	failedn=$(echo "$recap" | sed -n 's/.*failed=\([0-9]*\).*/\1/p')
	echo "# run $run ($1${2:+ $2}): rc=$rc changed=${changed:-?} failed=${failedn:-?}"
}
show() { sed -n '/TASK \[topotune : State\]/,/PLAY RECAP/p' "$log" | grep '"msg"' || tail -n 30 "$log"; }
tree_sum() { (cd "$ROOT" && find etc proc/sys/kernel -type f -exec md5sum {} + | LC_ALL=C sort); }

# variables of the wrong type: refused by meta/argument_specs.yml before any task
before=$(tree_sum)
play badtype
if [ "$rc" != 0 ] && grep -q 'Validating arguments against arg spec' "$log" &&
   grep -q "argument 'topotune_profiles' is of type .*list" "$log" &&
   grep -q "argument 'topotune_prune' is of type .*str" "$log" &&
   ! grep -q 'TASK \[topotune : Profiles\]' "$log" && [ "$(tree_sum)" = "$before" ]; then
	pass "argument_specs: a list for topotune_profiles and 'sometimes' for topotune_prune refused before any task"
else tail -n 30 "$log"; fail "bad variable types run"; fi

# the package step: the RedHat family goes to dnf (this Debian host has no
# python3-dnf, so the dnf module says so), an unknown family fails with a message
play rpm --check
if [ "$rc" != 0 ] &&
   sed -n '/TASK \[topotune : Install the topotune package (apt)\]/,/TASK/p' "$log" | grep -q '^skipping:' &&
   sed -n '/TASK \[topotune : Install the topotune package (dnf or yum)\]/,$p' "$log" | grep -q 'fatal: .*dnf python module'; then
	pass "RedHat family: the package step runs dnf (ansible.builtin.package), not apt"
else tail -n 30 "$log"; fail "RedHat family: package step"; fi
play suse --check
if [ "$rc" != 0 ] && grep -q 'no package for the OS family Suse' "$log" && ! grep -q 'TASK \[topotune : Install the' "$log"; then
	pass "another family: the play fails with a message before any package step"
else tail -n 30 "$log"; fail "another family: package step"; fi

# check mode first: nothing written, changes reported
play site --check
if [ "$rc" = 0 ] && [ "${changed:-0}" -gt 0 ] && [ "$(tree_sum)" = "$before" ]; then
	pass "check mode: $changed changed reported, fake root untouched"
else tail -n 30 "$log"; fail "check mode run"; fi

play site
if [ "$rc" = 0 ] && [ "${changed:-0}" -gt 0 ] &&
   [ -f "$ROOT/etc/topotune/profiles/site-latency.ini" ] &&
   grep -q '^profile = site-latency' "$ROOT/etc/topotune/topotune.conf.d/50-ansible-profile.conf" &&
   [ "$(cat "$SMT")" = 0 ] && [ "$(cat "$RELAX")" = 4 ] &&
   grep -q 'RUNNING HANDLER \[topotune : Reload topotuned\]' "$log"; then
	pass "first run: $changed changed, reload handler ran, site-latency applied (smt_buddy_assist 0, relax 4)"
else tail -n 40 "$log"; fail "first run (smt=$(cat "$SMT") relax=$(cat "$RELAX"))"; fi
if "$CTL" --bus-address "$ADDR" status | grep -q 'site-latency'; then
	pass "topotuned reports profile site-latency"
else fail "topotuned reports profile site-latency"; fi

play site
if [ "$rc" = 0 ] && [ "$changed" = 0 ]; then pass "second run: 0 changed"; else
	tail -n 40 "$log"; fail "second run: changed=$changed rc=$rc"; fi

# drift: someone turns SMT buddy assist back on behind the daemon's back
echo 1 >"$SMT"
play site --check
if [ "$rc" = 0 ] && [ "$changed" = 1 ] && [ "$(cat "$SMT")" = 1 ]; then
	pass "check mode on drift: 1 changed reported, nothing applied"; show
else tail -n 40 "$log"; fail "check mode on drift: changed=$changed smt=$(cat "$SMT")"; fi
play site
if [ "$rc" = 0 ] && [ "$changed" = 1 ] && [ "$(cat "$SMT")" = 0 ]; then
	pass "drift: verify exit 1 -> apply, 1 changed, value restored"; show
else tail -n 40 "$log"; fail "drift run: changed=$changed smt=$(cat "$SMT")"; fi
play site
if [ "$rc" = 0 ] && [ "$changed" = 0 ]; then pass "after drift: 0 changed"; else
	tail -n 40 "$log"; fail "after drift: changed=$changed"; fi

# a host-local choice overrides the inventory's profile: the role converges back to it
LOCAL="$ROOT/etc/topotune/topotune.conf.d/99-set-profile.conf"
active() { "$CTL" --bus-address "$ADDR" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["profile"])'; }
"$CTL" --bus-address "$ADDR" set-profile --persistent latency >/dev/null
play site
if [ "$rc" = 0 ] && [ "${changed:-0}" -gt 0 ] && [ ! -e "$LOCAL" ] && [ "$(active)" = site-latency ] &&
   [ "$(cat "$RELAX")" = 4 ]; then
	pass "set-profile --persistent latency on the host: the role removes 99-set-profile.conf, site-latency again ($changed changed)"
else tail -n 40 "$log"; fail "local persistent override: rc=$rc changed=$changed active=$(active) relax=$(cat "$RELAX")"; fi
play site
if [ "$rc" = 0 ] && [ "$changed" = 0 ]; then pass "after the local override: 0 changed"; else
	tail -n 40 "$log"; fail "after the local override: changed=$changed"; fi
"$CTL" --bus-address "$ADDR" set-profile throughput >/dev/null
play site
if [ "$rc" = 0 ] && [ "${changed:-0}" -gt 0 ] && [ "$(active)" = site-latency ]; then
	pass "runtime set-profile throughput on the host: the role's verify step sees it and reloads, site-latency again"
else tail -n 40 "$log"; fail "local runtime override: rc=$rc changed=$changed active=$(active)"; fi
"$CTL" --bus-address "$ADDR" set-profile --persistent latency >/dev/null
play sitereport
if [ "$rc" != 0 ] && grep -q '99-set-profile.conf (topotunectl set-profile --persistent) overrides topotune_profile=site-latency' "$log" &&
   [ -e "$LOCAL" ]; then
	pass "topotune_local_override=report: the play fails naming the override, which stays"
else tail -n 40 "$log"; fail "report mode: rc=$rc"; fi
play site >/dev/null

# the variables emptied: the role's files go, the hand-written one stays
play bare
if [ "$rc" = 0 ] && [ "${changed:-0}" -gt 0 ] &&
   [ ! -e "$ROOT/etc/topotune/profiles/site-latency.ini" ] &&
   [ ! -e "$ROOT/etc/topotune/topotune.conf.d/50-ansible-profile.conf" ] &&
   [ -e "$ROOT/etc/topotune/topotune.conf.d/10-test.conf" ] &&
   "$CTL" --bus-address "$ADDR" status | grep -q 'balanced'; then
	pass "pruning: managed files removed, hand-written drop-in kept, back to balanced"
else tail -n 40 "$log"; fail "pruning run"; fi
play bare
if [ "$rc" = 0 ] && [ "$changed" = 0 ]; then pass "pruned, second run: 0 changed"; else
	tail -n 40 "$log"; fail "pruned second run: changed=$changed"; fi

# a bad profile is refused with FILE:LINE before topotuned is asked to reload
python3 - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
v = json.load(open(f"{w}/site.json"))
v["topotune_profiles"]["site-latency"] += "[scheduler]\nsmt_buddy_assist = maybe\n"
json.dump(v, open(f"{w}/bad.json", "w"))
EOF
before=$(tree_sum)
play bad --check
if [ "$rc" != 0 ] && grep -q '/etc/topotune/profiles/site-latency.ini:[0-9]*: ' "$log" && [ "$(tree_sum)" = "$before" ]; then
	pass "check mode predicts the bad profile: fails with FILE:LINE, fake root untouched"
else tail -n 30 "$log"; fail "bad profile, check mode run"; fi
play bad
if [ "$rc" != 0 ] && grep -q 'site-latency.ini:[0-9]*: ' "$log" && ! grep -q '\[topotune : Reload topotuned\]' "$log" &&
   [ ! -e "$ROOT/etc/topotune/profiles/site-latency.ini" ]; then
	pass "bad profile: validate (topotunectl check) refuses it with FILE:LINE, never written to /etc, no reload"
else tail -n 30 "$log"; ls -l "$ROOT/etc/topotune/profiles"; fail "bad profile run"; fi
play bare >/dev/null

# verify exit 2 (no daemon) fails the play
kill "$D_PID" && wait "$D_PID" 2>/dev/null || true
D_PID=""
play bare
if [ "$rc" != 0 ] && [ "${failedn:-0}" -ge 1 ] && grep -q 'topotuned is not running' "$log"; then
	pass "verify exit 2 (topotuned not running): the play fails"
else tail -n 30 "$log"; fail "daemon down: rc=$rc failed=$failedn"; fi

echo "# took $(($(date +%s) - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
