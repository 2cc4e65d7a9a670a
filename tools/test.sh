#!/bin/sh
# Build topotune and run every test tier, as CI does:
#   0. the fast gate (tools/fast-gate.sh, a minute or two): the format and the
#      commit subjects of what is new, the -Werror build, the unit suite; when
#      it fails, nothing else runs
#   1. -Werror build, all other meson tests (sysroot trees, real-machine dumps)
#   2. ASan+UBSan build, the same tests
#   3. packaging: rpm build, the Ansible role, the .deb in a debootstrap
#      chroot (unless TOPOTUNE_SKIP_PACKAGING=1)
#   4. the kernel tier in qemu (tests/vm) for 7.3, its kernels built in the
#      background since tier 1 (tests/vm/prepare-kernels.sh); the proofs (negative
#      kernels, lockdep) on both bases and the 6.12 tier when their inputs
#      changed since the recorded pass (when only Debian's version did, a reduced run:
#      git am, checkpatch, per-patch compile, no boot; a SKIP line says
#      where the boots were last proven); then the .deb under a real systemd
#      in a Debian 12 guest on the stock and the patched kernel
#      (tests/install/systemd-vm.sh), unless TOPOTUNE_SKIP_VM=1
# Ends with one line "N passed, M failed" (N counts test programs and tiers).
# Each tier ends with "# took N s" (wall time, for the CI budget).
# Usage: tools/test.sh
#   TOPOTUNE_RECORD=1   run the proofs and the 6.12 tier even when their
#                       inputs are as recorded, and write their records
#                       (run-kernel-tier.sh --record) for the commit: what a
#                       maintainer does after changing the series, and how the
#                       cold time with every kernel tier is measured
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${TOPOTUNE_TEST_DIR:-$top}
passed=0
failed=0
t_all=$(date +%s)
werror_options="-Dwerror=true -Dbuildtype=debugoptimized"

# First what a submission most often gets wrong, so that it fails in a minute
# or two, not after every tier: the gate builds build-ci as the -Werror tier
# does and runs the unit suite there (the tier below runs the rest).
echo "### fast gate"
# shellcheck disable=SC2086
"$top/tools/fast-gate.sh" "$out/build-ci" $werror_options >"$out/gate.log" 2>&1
gate=$?
echo "# took $(($(date +%s) - t_all)) s"
grep -v -E "^[0-9]+ passed, [0-9]+ failed" "$out/gate.log"
line=$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$out/gate.log" | tail -n 1)
gate_failed=0
if [ -n "$line" ]; then
	passed=$((passed + ${line%% passed*}))
	gate_failed=${line#*passed, }
	gate_failed=${gate_failed%% failed*}
fi
[ $gate -ne 0 ] && [ "$gate_failed" -eq 0 ] && gate_failed=1
if [ "$gate_failed" -gt 0 ]; then
	echo "### the fast gate failed: no other tier ran"
	echo "$passed passed, $((failed + gate_failed)) failed"
	exit 1
fi

# The dbus tier needs a dbus-daemon, busctl, python3-dbus, dbusmock (polkit)
# and prometheus_client's parser (metrics); the --json contract jsonschema; the
# stats-scipy unit test checks agent/basic/stats against scipy (/usr/bin/python3).
"$top/tools/deps.sh" dbus systemd util-linux python3-dbus python3-gi python3-dbusmock \
	python3-prometheus-client python3-jsonschema python3-scipy || exit 2
# The fuzz tier: clang 14 and its libFuzzer and sanitizer runtimes.
"$top/tools/deps.sh" clang libclang-rt-14-dev || exit 2
# The packaging tier: rpm build, Ansible role and rollout (and ansible-lint), .deb in a
# debootstrap chroot, the Prometheus rules (promtool) and the Grafana dashboard.
if [ "${TOPOTUNE_SKIP_PACKAGING:-0}" != 1 ]; then
	"$top/tools/deps.sh" rpm ansible-core ansible-lint debootstrap dpkg-dev debhelper scdoc git \
		prometheus python3-yaml || exit 2
fi

# The kernels the qemu tiers boot are most of a cold run (fetch, git tree, two
# 7.3 builds: 13 to 35 minutes of both cores on the machines measured so far,
# kernel-patches/README.md). tests/vm/prepare-kernels.sh
# builds them in the background, at the lowest priority, while the tiers below
# run; those leave a core idle much of the time (tests waiting on a bus or a
# timer, Ansible, debootstrap). The kernel tiers wait for it before they start,
# so no guest boots beside a build, and find the kernels cached. Its log:
# kernel-prepare.log. A warm cache makes it a few seconds of hashing.
when="when their inputs changed" kmode=--if-changed
[ "${TOPOTUNE_RECORD:-0}" != 1 ] || when="TOPOTUNE_RECORD=1: always, recorded" kmode=--record
prep_pid=""
if [ "${TOPOTUNE_SKIP_VM:-0}" != 1 ]; then
	# What building a kernel needs (the tier installs what booting one needs).
	"$top/tools/deps.sh" build-essential bc bison flex cpio git xz-utils libelf-dev libssl-dev \
		debian-archive-keyring || exit 2
	# Its own process group, so that an early exit stops the whole build.
	setsid nice -n 19 "$top/tests/vm/prepare-kernels.sh" $kmode >"$out/kernel-prepare.log" 2>&1 &
	prep_pid=$!
	trap '[ -z "$prep_pid" ] || kill -TERM -- "-$prep_pid" 2>/dev/null' EXIT
fi

# meson test prints "Ok: N" and "Fail: M"; add them up.
run_meson() {
	name=$1
	dir=$2
	shift 2
	echo "### $name"
	t=$(date +%s)
	run_meson_in "$dir" "$@"
	echo "# took $(($(date +%s) - t)) s"
}
run_meson_in() {
	dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$top" "$@" >"$dir.setup.log" 2>&1 || {
			cat "$dir.setup.log"
			failed=$((failed + 1))
			return
		}
	fi
	if ! ninja -C "$dir" >"$dir.build.log" 2>&1; then
		cat "$dir.build.log"
		echo "FAIL $name: build"
		failed=$((failed + 1))
		return
	fi
	# shellcheck disable=SC2086
	meson test -C "$dir" --print-errorlogs --num-processes 2 $test_options >"$dir.test.log" 2>&1
	grep -E "^ *[0-9]+/[0-9]+ " "$dir.test.log" | sed 's/^ *//'
	ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$dir.test.log")
	ko=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$dir.test.log")
	to=$(sed -n 's/^Timeout: *\([0-9]*\).*/\1/p' "$dir.test.log")
	if [ -z "$ok" ]; then
		cat "$dir.test.log"
		failed=$((failed + 1))
		return
	fi
	[ "${ko:-0}" -gt 0 ] || [ "${to:-0}" -gt 0 ] && grep -B2 -A40 "Summary of Failures\|stderr:" "$dir.test.log" | head -200
	passed=$((passed + ok))
	failed=$((failed + ${ko:-0} + ${to:-0}))
}

# The gate ran the unit suite in this build.
test_options="--no-suite unit"
# shellcheck disable=SC2086
run_meson "werror build" "$out/build-ci" $werror_options
test_options=

UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	run_meson "asan+ubsan build" "$out/build-asan" -Dwerror=true -Db_sanitize=address,undefined \
	-Db_lundef=false -Dbuildtype=debug

# A script that prints PASS/FAIL lines and "N passed, M failed".
run_script() {
	name=$1
	log=$2
	shift 2
	echo "### $name"
	t=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	echo "# took $(($(date +%s) - t)) s"
	grep -E "^(PASS|FAIL|SKIP|XFAIL|XPASS|INFO):? " "$log"
	line=$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$log" | tail -n 1)
	if [ -n "$line" ]; then
		p=${line%% passed*}
		f=${line#*passed, }
		f=${f%% failed*}
		passed=$((passed + p))
		failed=$((failed + f))
	fi
	if [ $rc -ne 0 ] && { [ -z "$line" ] || [ "${f:-0}" = 0 ]; }; then
		tail -n 60 "$log"
		failed=$((failed + 1))
	fi
}

# Every libFuzzer target for a few seconds (TOPOTUNE_FUZZ_SECONDS, default 10) from the
# committed corpus; the replays of that corpus ran above in both builds.
FUZZ_BUILD_DIR="$out/build-fuzz" run_script "fuzz tier (libFuzzer, ${TOPOTUNE_FUZZ_SECONDS:-10} s per target)" \
	"$out/fuzz.log" "$top/tests/fuzz/run-fuzzers.sh" "${TOPOTUNE_FUZZ_SECONDS:-10}"

if [ "${TOPOTUNE_SKIP_PACKAGING:-0}" = 1 ]; then
	echo "### packaging tier: skipped (TOPOTUNE_SKIP_PACKAGING=1)"
else
	run_script "rpm build" "$out/rpm.log" "$top/tests/install/rpm.sh"
	TOPOTUNE_BUILDDIR="$out/build-ci" run_script "ansible role" "$out/ansible.log" \
		"$top/contrib/ansible/tests/run.sh"
	# Four hosts on private buses, three playbook runs: 3.5 to 8 minutes.
	TOPOTUNE_BUILDDIR="$out/build-ci" run_script "ansible rollout" "$out/ansible-rollout.log" \
		"$top/contrib/ansible/tests/rollout.sh"
	TOPOTUNE_BUILDDIR="$out/build-ci" run_script "prometheus rules and grafana dashboard" \
		"$out/contrib-metrics.log" "$top/contrib/tests/run.sh"
	run_script "deb install in a chroot" "$out/install.log" "$top/tests/install/run.sh"
fi

if [ "${TOPOTUNE_SKIP_VM:-0}" = 1 ]; then
	echo "### kernel tier: skipped (TOPOTUNE_SKIP_VM=1)"
else
	echo "### kernel builds (in the background since the agent's tiers started)"
	t=$(date +%s)
	wait "$prep_pid"
	prep_pid=""
	# Its own last line, "# took N s", is how long it ran in the background.
	echo "# took $(($(date +%s) - t)) s here, waiting for it; in the background:"
	grep '^# ' "$out/kernel-prepare.log"
	run_script "kernel tier (qemu)" "$out/kernel-tier.log" "$top/tests/vm/run-kernel-tier.sh"
	# The 6.12 base: only when its inputs differ from the pass recorded in
	# tests/vm/expected/6.12/last-pass (content hash; kernel-patches/README.md).
	# The proofs that the behavioural checks can fail (kernels with one fix
	# undone each) and the lockdep/PROVE_RCU boot, on each base: only when
	# their inputs differ from tests/vm/expected/proofs-last-pass
	# (tests/vm/expected/6.12/proofs-last-pass).
	run_script "kernel tier proofs (qemu, $when)" "$out/kernel-tier-proofs.log" \
		"$top/tests/vm/run-kernel-tier.sh" --proofs $kmode
	run_script "kernel tier 6.12 (qemu, $when)" "$out/kernel-tier-6.12.log" \
		"$top/tests/vm/run-kernel-tier.sh" --series 6.12 $kmode
	run_script "kernel tier 6.12 proofs (qemu, $when)" "$out/kernel-tier-proofs-6.12.log" \
		"$top/tests/vm/run-kernel-tier.sh" --series 6.12 --proofs $kmode
	# The package under a real systemd: Debian 12 in qemu, on its stock kernel and
	# on the patched one (the kernel tier above fetched the source and its tools).
	"$top/tools/deps.sh" debootstrap dpkg-dev debhelper git qemu-system-x86 qemu-utils e2fsprogs || exit 2
	TOPOTUNE_CACHE_DIR=${TOPOTUNE_CACHE_DIR:-/var/cache/topotune} run_script "systemd VM (qemu)" \
		"$out/systemd-vm.log" "$top/tests/install/systemd-vm.sh" --transcript "$out/systemd-vm-transcript.txt"
fi

echo "# all tiers took $(($(date +%s) - t_all)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
