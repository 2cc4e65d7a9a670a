#!/bin/bash
# tests/vm/run-kernel-tier.sh --if-changed: what it runs, against a record
# written here - skip when nothing changed, the reduced run (git am,
# checkpatch, per-patch compile, no boots) when only Debian's version
# moved, the full tier when a file changed or there is no record, and the
# full tier without --if-changed (TOPOTUNE_RECORD=1 tools/test.sh).
# Runs --decide in a copy of the tier's inputs, offline: TOPOTUNE_KVERSION
# stands for the version Debian publishes (fetch.sh --candidate prints it).
# Prints "N passed, M failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/unit/check.sh
. "$top/tests/unit/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TOPOTUNE_KCACHE="$tmp/kcache"
unset TOPOTUNE_KSERIES TOPOTUNE_KTREE_LOCKED
mkdir -p "$tmp/repo/tests" "$TOPOTUNE_KCACHE"
cp -a "$top/kernel-patches" "$tmp/repo/"
cp -a "$top/tests/vm" "$top/tests/private-bus.conf" "$tmp/repo/tests/"
tier="$tmp/repo/tests/vm/run-kernel-tier.sh"
old=6.12.118-1~deb12u1 new=6.12.119-1~deb12u1

decide() {	# VERSION ARGS...: what the tier would run with VERSION published
	local v=$1
	shift
	TOPOTUNE_KVERSION=$v "$tier" "$@" --decide 2>"$tmp/err" || echo "exit $? $(cat "$tmp/err")"
}
record() {	# FILE VERSION ARGS...: a passing record at VERSION
	local f=$1 v=$2
	shift 2
	printf 'inputs %s\nversion %s\nresult 9 passed, 0 failed\ndate 2026-12-01\nelapsed 1s\n' \
		"$("$tier" "$@" --inputs-hash "$v")" "$v" >"$f"
}

for args in "--series 6.12" "--proofs"; do
	read -ra a <<<"$args"
	case "$args" in
	--proofs) rec="$tmp/repo/tests/vm/expected/proofs-last-pass" o=7.3.4-1~bpo13+1 n=7.3.5-1~bpo13+1 ;;
	*) rec="$tmp/repo/tests/vm/expected/6.12/last-pass" o=$old n=$new ;;
	esac
	record "$rec" "$o" "${a[@]}"
	check "$args: same version, same files" "$(decide "$o" "${a[@]}" --if-changed)" skip
	check "$args: new version, same files" "$(decide "$n" "${a[@]}" --if-changed)" reduced
	check "$args: new version, no --if-changed (TOPOTUNE_RECORD=1)" "$(decide "$n" "${a[@]}" --record)" full
	check "$args: same version, no --if-changed" "$(decide "$o" "${a[@]}")" full
	# A record that names no version, or whose inputs match no version.
	sed -i '/^version /d' "$rec"
	check "$args: record without a version, new version" "$(decide "$n" "${a[@]}" --if-changed)" full
	record "$rec" "$o" "${a[@]}"
	sed -i 's/^inputs .*/inputs 0123456789abcdef/' "$rec"
	check "$args: recorded inputs match no version" "$(decide "$n" "${a[@]}" --if-changed)" full
	rm "$rec"
	check "$args: no record" "$(decide "$n" "${a[@]}" --if-changed)" full
	record "$rec" "$o" "${a[@]}"
done

# A file input changed: a patch of the series, the tier script itself, an
# expected layout.
for f in kernel-patches/6.12/0007-sched-fair-Add-SMT_BUDDY_ASSIST-to-push-tasks-to-an-.patch \
	 tests/vm/run-kernel-tier.sh tests/vm/expected/6.12/hygon3-patched.txt; do
	cp -a "$tmp/repo/$f" "$tmp/saved"
	echo "# changed" >>"$tmp/repo/$f"
	check "$f changed, same version" "$(decide "$old" --series 6.12 --if-changed)" full
	check "$f changed, new version" "$(decide "$new" --series 6.12 --if-changed)" full
	mv "$tmp/saved" "$tmp/repo/$f"
	check "$f restored" "$(decide "$new" --series 6.12 --if-changed)" reduced
done
# The proofs' record covers the 7.3 series, not 6.12's.
echo "# changed" >>"$tmp/repo/kernel-patches/7.3/series"
check "7.3 series changed: proofs" "$(decide 7.3.5-1~bpo13+1 --proofs --if-changed)" full
check "7.3 series changed: 6.12 tier" "$(decide "$new" --series 6.12 --if-changed)" reduced

check_end
