#!/bin/bash
# kernel-patches/scripts/build.sh and its cache: a cached image is printed
# at once, also while another build holds the version's tree lock (a
# --if-changed run or a second tier must not wait for an unrelated build).
# Needs no kernel source: the image is put where build.sh --image-path says.
# Prints "N passed, M failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build="$top/kernel-patches/scripts/build.sh"
# shellcheck source=tests/unit/check.sh
. "$top/tests/unit/check.sh"
tmp=$(mktemp -d)
holder=""
trap '[ -z "$holder" ] || kill $holder 2>/dev/null; rm -rf "$tmp"' EXIT
export TOPOTUNE_KCACHE="$tmp/kcache" TOPOTUNE_KVERSION=9.9.9-1 TOPOTUNE_KSERIES=7.3
unset TOPOTUNE_KTREE_LOCKED
mkdir -p "$TOPOTUNE_KCACHE"

for kind in --base "" --systemd; do
	# shellcheck disable=SC2086
	img=$("$build" $kind --image-path 2>"$tmp/err")
	case "$img" in
	"$TOPOTUNE_KCACHE"/images/*/bzImage) check "image path ${kind:-patched}" ok ok ;;
	*) check "image path ${kind:-patched}" "$img $(cat "$tmp/err")" "$TOPOTUNE_KCACHE/images/.../bzImage" ;;
	esac
	mkdir -p "$(dirname "$img")"
	: >"$img"
done
base=$("$build" --base --image-path)
patched=$("$build" --image-path)
systemd=$("$build" --systemd --image-path)
[ "$base" != "$patched" ] && check "base and patched images differ" ok ok ||
	check "base and patched images differ" "$base" "not $patched"

# Another build holds the tree lock for a minute (and the per-kind locks
# that build.sh took before the tree lock, 2026-12-05, for the record).
holder=""
for l in ".tree-$TOPOTUNE_KVERSION" ".build-$TOPOTUNE_KVERSION-base" ".build-$TOPOTUNE_KVERSION-patched"; do
	# The shell that holds the lock becomes the sleep: killing it frees the
	# lock, and no child keeps the test's output open after it ends.
	(
		exec 9>"$TOPOTUNE_KCACHE/$l.lock"
		flock 9
		exec sleep 60
	) </dev/null >/dev/null 2>&1 &
	holder="$holder $!"
done
sleep 0.5
for kind in base patched systemd; do
	case $kind in base) arg=--base want=$base ;; patched) arg="" want=$patched ;; systemd) arg=--systemd want=$systemd ;; esac
	# shellcheck disable=SC2086
	got=$(timeout 10 "$build" $arg 2>/dev/null)
	check "cached $kind image printed while the tree lock is held" "$got" "$want"
done
# Not cached: the build waits for the lock (and here gives up at the timeout).
rm -f "$patched"
timeout 3 "$build" >/dev/null 2>&1
check "an image to build waits for the tree lock" "$?" 124

check_end
