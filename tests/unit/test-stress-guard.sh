#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/stress.sh must not say OK when its syscall sweep did not run
# (issue 29): on 2026-12-05 the scenario under strace never got ready, the
# script swept the 8 syscalls of a partial trace and printed "stress: OK".
# Here a strace that writes a partial trace and exits makes every traced
# start fail; the other parts are cut to a second. The script must end
# with "stress: FAILED: syscall sweep: ..." and exit 1.
#
#   test-stress-guard.sh TOPOTUNED TOPOTUNECTL
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (bench/stress.sh)"; exit 77; }
command -v dbus-daemon >/dev/null && command -v busctl >/dev/null ||
	{ echo "SKIP: dbus-daemon and busctl needed"; exit 77; }
/usr/bin/python3 -c 'import dbus' 2>/dev/null || { echo "SKIP: python3-dbus needed"; exit 77; }

fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
cat >"$fake/strace" <<'STRACE'
#!/bin/sh
# The traced start never gets ready: a partial trace, then exit 1.
while [ $# -gt 0 ]; do case $1 in -o) o=$2; shift ;; esac; shift; done
[ -n "${o:-}" ] && echo '4242 write(2<pipe:[1]>, "x", 1) = 1' >"$o"
exit 1
STRACE
chmod 755 "$fake/strace"

out=$(PATH="$fake:$PATH" TRIALS=0 CLIENTS=1 CLIENT_SECS=1 VALGRIND=0 ASAN=0 FUZZ_SECS=0 \
	"$src/bench/stress.sh" "$1" "$2" 2>&1)
rc=$?
last=$(printf '%s\n' "$out" | tail -n 1)
case "$rc $last" in
"1 stress: FAILED: syscall sweep: the scenario under strace never ran"*)
	echo "ok: $last"
	exit 0 ;;
esac
printf '%s\n' "$out" | tail -n 20
echo "FAIL: bench/stress.sh exit $rc, last line '$last': wanted exit 1 and the sweep named as failed"
exit 1
