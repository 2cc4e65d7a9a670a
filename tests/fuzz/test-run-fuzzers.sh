#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-fuzzers.sh's verdicts, with a fake compiler whose "fuzzers" leave the
# artifacts libFuzzer would: slow units pass (a loaded machine is not a
# bug), crashes, leaks, timeouts and OOMs fail and are counted apart, and a
# fuzzer that exits non-zero without an artifact fails. Scratch trees are on
# tmpfs.
#
#   tests/fuzz/test-run-fuzzers.sh
set -u

src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

check() {  # name condition-status detail
	if [ "$2" -eq 0 ]; then
		echo "PASS $1"
		passed=$((passed + 1))
	else
		echo "FAIL $1: $3"
		failed=$((failed + 1))
	fi
}

# The fake clang: objects are empty files; a linked fuzzer is a script that
# writes FAKE_<TARGET> artifacts ("crash leak slow-unit ...") where
# -artifact_prefix says, prints libFuzzer's final stats and exits FAKE_RC_<TARGET>.
cat >"$work/cc" <<'CC'
#!/bin/bash
out=""
while [ $# -gt 0 ]; do
	[ "$1" = -o ] && out=$2
	shift
done
case "$out" in
*.o) : >"$out" ;;
*)
	cat >"$out" <<'FUZZ'
#!/bin/bash
t=$(basename "$0"); t=${t#fuzz-}
prefix="" args="$*"
for a in "$@"; do
	case "$a" in -artifact_prefix=*) prefix=${a#-artifact_prefix=} ;; esac
done
kinds=FAKE_${t}; rc=FAKE_RC_${t}
for k in ${!kinds:-}; do
	echo "fake input" >"${prefix}${k}-$RANDOM$RANDOM"
done
echo "args: $args"
echo "scratch fs: $(stat -f -c %T "$TOPOTUNE_FUZZ_TMPDIR")"
echo "stat::number_of_executed_units: 1234"
exit ${!rc:-0}
FUZZ
	chmod +x "$out"
	;;
esac
CC
chmod +x "$work/cc"

run() {  # targets...
	CC="$work/cc" FUZZ_BUILD_DIR="$work/build" FUZZ_JOBS=1 "$src/tests/fuzz/run-fuzzers.sh" 1 "$@" 2>&1
}

out=$(FAKE_cpulist="slow-unit slow-unit" run cpulist)
rc=$?
echo "$out" | grep -q '^PASS: fuzz-cpulist (1234 executions in .*2 slow unit(s))' && [ $rc -eq 0 ]
check "slow units only: the target passes and says how many" $? "$out"

out=$(FAKE_cpuinfo="crash" FAKE_profile="leak slow-unit" FAKE_kernel="timeout timeout" FAKE_planner="oom" \
	run cpuinfo profile kernel planner schedstat)
rc=$?
line() { echo "$out" | grep "^$1 " | head -1; }
[ $rc -ne 0 ] && echo "$out" | grep -q '^1 passed, 4 failed$' &&
	line cpuinfo | grep -qE '^cpuinfo +1234 +[0-9]+ +1 +0 +0 +0 +0 ' &&
	line profile | grep -qE '^profile +1234 +[0-9]+ +0 +1 +0 +0 +1 ' &&
	line kernel | grep -qE '^kernel +1234 +[0-9]+ +0 +0 +2 +0 +0 ' &&
	line planner | grep -qE '^planner +1234 +[0-9]+ +0 +0 +0 +1 +0 ' &&
	echo "$out" | grep -q '^FAIL: fuzz-kernel (0 crash(es), 0 leak(s), 2 timeout(s), 0 OOM(s)' &&
	echo "$out" | grep -q '^PASS: fuzz-schedstat'
check "crashes, leaks, timeouts and OOMs: counted apart, each fails its target" $? "$out"

out=$(FAKE_RC_cpulist=1 run cpulist)
rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q '^FAIL: fuzz-cpulist' && echo "$out" | grep -q 'exit 1 without an artifact'
check "a fuzzer that exits non-zero without an artifact fails" $? "$out"

out=$(run cpulist)
grep -q "^scratch fs: tmpfs" "$work/build/logs/cpulist.log" && grep -q -- "-timeout=25 " "$work/build/logs/cpulist.log" &&
	echo "$out" | grep -q '^scratch trees: .*(tmpfs); -timeout=25 s'
check "scratch trees on tmpfs, the documented -timeout" $? "$out $(cat "$work/build/logs/cpulist.log")"

# Not on tmpfs: as root a tmpfs is mounted there for the run.
if [ "$(id -u)" = 0 ] && [ "$(stat -f -c %T "$work")" != tmpfs ]; then
	out=$(TMPDIR_FUZZ="$work" run cpulist)
	grep -q "^scratch fs: tmpfs" "$work/build/logs/cpulist.log" && ! grep -qs topotune-fuzz /proc/self/mounts
	check "a scratch directory on disk gets a tmpfs for the run, unmounted after" $? "$out"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
