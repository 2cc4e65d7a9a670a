#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The fast gate: what a submission most often gets wrong, in a minute or two
# instead of after the fifty minutes of the tiers. tools/test.sh runs it first
# and stops when it fails.
#   format    the C lines changed since BASE (and not committed yet) as
#             .clang-format wants them: tools/check-format.py, clang-format 14
#   subjects  each commit since BASE: "component: summary", at most 72 characters
#   build     as the -Werror tier builds (BUILDDIR, MESON-SETUP-OPTIONs)
#   unit      meson test --suite unit: one program per agent/ module
# BASE is $TOPOTUNE_GATE_BASE when set (any revision; HEAD checks nothing
# committed); else at a merge its first parent (all the merge brings in);
# else where HEAD left its upstream or main, when it is not on it; else
# HEAD~1. Without one (a single commit, a shallow clone) format and subjects
# are skipped.
# Prints PASS/FAIL/SKIP lines, the places to fix, and "N passed, M failed".
# Usage: tools/fast-gate.sh [BUILDDIR [MESON-SETUP-OPTION...]]
#        (default: build-gate -Dwerror=true)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-$top/build-gate}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- -Dwerror=true
jobs=${TOPOTUNE_JOBS:-$(nproc)}
passed=0
failed=0
start=$(date +%s)
cd "$top" || exit 2

pass() {
	echo "PASS $*"
	passed=$((passed + 1))
}

fail() {
	echo "FAIL $*"
	failed=$((failed + 1))
}

# Sets base (a commit, or empty) and base_why.
find_base() {
	head=$(git rev-parse -q --verify HEAD) || { base=; base_why="no commit"; return; }
	if [ -n "${TOPOTUNE_GATE_BASE:-}" ]; then
		base=$(git rev-parse -q --verify "$TOPOTUNE_GATE_BASE^{commit}") ||
			{ base=; base_why="TOPOTUNE_GATE_BASE=$TOPOTUNE_GATE_BASE is no commit"; return; }
		base_why="TOPOTUNE_GATE_BASE=$TOPOTUNE_GATE_BASE"
		return
	fi
	if git rev-parse -q --verify HEAD^2 >/dev/null; then
		base=$(git rev-parse HEAD^1)
		base_why="the merge's first parent"
		return
	fi
	for ref in '@{upstream}' main origin/main; do
		r=$(git rev-parse -q --verify "$ref^{commit}" 2>/dev/null) || continue
		b=$(git merge-base HEAD "$r" 2>/dev/null) || continue
		if [ "$b" != "$head" ]; then
			base=$b
			base_why="where HEAD left $ref"
			return
		fi
	done
	if base=$(git rev-parse -q --verify HEAD~1); then
		base_why="HEAD~1"
		return
	fi
	base=
	base_why="HEAD has no parent here"
}

check_format() {
	if ! "$top/tools/deps.sh" clang-format >/dev/null; then
		fail "format: clang-format-14 missing (tools/deps.sh clang-format, as root)"
		return
	fi
	out=$("$top/tools/check-format.py" "$base")
	rc=$?
	summary=$(printf '%s\n' "$out" | tail -n 1)
	printf '%s\n' "$out" | sed '$d'
	if [ $rc -eq 0 ]; then
		pass "$summary"
	else
		fail "$summary"
	fi
}

# "component: summary" (components: "tests: vm:", "man, completion:"), at most 72 characters.
check_subjects() {
	out=$(git log --no-merges --format='%h %s' "$base..HEAD" | python3 -c '
import re, sys
shape = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]*(, [A-Za-z0-9][A-Za-z0-9._/+-]*)*: \S")
n = bad = 0
for line in sys.stdin:
    h, _, s = line.rstrip("\n").partition(" ")
    n += 1
    why = []
    if len(s) > 72:
        why.append("%d characters (at most 72)" % len(s))
    if not shape.match(s):
        why.append("not \"component: summary\"")
    if why:
        bad += 1
        print("%s: %s: %s" % (h, ", ".join(why), s))
print("%d commit%s, %d to fix" % (n, "" if n == 1 else "s", bad))
')
	summary=$(printf '%s\n' "$out" | tail -n 1)
	printf '%s\n' "$out" | sed '$d'
	case $summary in
	*", 0 to fix") pass "subjects: $summary" ;;
	*) fail "subjects: $summary" ;;
	esac
}

check_unit() {
	if [ ! -f "$builddir/build.ninja" ]; then
		if ! meson setup "$builddir" "$top" "$@" >"$builddir.setup.log" 2>&1; then
			tail -n 30 "$builddir.setup.log"
			fail "build: meson setup $builddir $*"
			return
		fi
	fi
	t0=$(date +%s)
	if ! ninja -C "$builddir" -j "$jobs" >"$builddir.build.log" 2>&1; then
		grep -E -A5 "error|warning|FAILED" "$builddir.build.log" | head -n 60
		fail "build: $builddir (the whole log: $builddir.build.log)"
		return
	fi
	pass "build: $builddir, $(($(date +%s) - t0)) s"
	rm -f "$builddir/meson-logs/testlog.json"
	meson test -C "$builddir" --no-rebuild --suite unit --num-processes "$jobs" --print-errorlogs \
		>"$builddir.unit.log" 2>&1
	# One line per test from meson's own record: "OK name 0.04".
	results=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    print(t["result"], t["name"].split(" / ")[-1], "%.1f" % t["duration"])
' "$builddir/meson-logs/testlog.json" 2>/dev/null)
	if [ -z "$results" ]; then
		tail -n 30 "$builddir.unit.log"
		fail "unit: meson test --suite unit ran nothing"
		return
	fi
	printf '%s\n' "$results" | {
		while read -r result name secs; do
			case $result in
			OK) echo "PASS unit: $name ($secs s)" ;;
			SKIP) echo "SKIP unit: $name" ;;
			EXPECTEDFAIL) echo "XFAIL unit: $name" ;;
			FAIL) echo "FAIL unit: $name ($secs s)" ;;
			*) echo "FAIL unit: $name: $result ($secs s)" ;;
			esac
		done
	}
	passed=$((passed + $(printf '%s\n' "$results" | grep -c '^OK ')))
	n_failed=$(printf '%s\n' "$results" | grep -c -v -E '^(OK|SKIP|EXPECTEDFAIL) ')
	if [ "$n_failed" -gt 0 ]; then
		# meson's --print-errorlogs: each failed test's command and output.
		sed -n '/^>>> /,/^Summary of Failures/p' "$builddir.unit.log" |
			grep -v -E '^ *[0-9]+/[0-9]+ |^Summary of Failures|^$' | head -n 120
		failed=$((failed + n_failed))
	fi
}

find_base
if [ -n "$base" ]; then
	echo "INFO base: $(git log -1 --format='%h %s' "$base") ($base_why)"
	check_format
	check_subjects
elif [ -n "${TOPOTUNE_GATE_BASE:-}" ]; then
	fail "format and subjects: $base_why"
else
	echo "SKIP format: nothing to compare with ($base_why)"
	echo "SKIP subjects: nothing to compare with ($base_why)"
fi
check_unit "$@"

echo "INFO fast gate: $(($(date +%s) - start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
