#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Install test: build the .deb, install it into a fresh Debian 12 chroot that
# this test creates (debootstrap, minbase), run topotunectl there against a
# generated sysroot, reinstall it (the upgrade path of the maintainer
# scripts), purge it, and check that nothing of it is left behind. The
# packaged topotuned also runs there once, on a private bus (--no-systemd).
#
# Usage: tests/install/run.sh            (as root; needs the Debian mirror)
#   TOPOTUNE_DEB=FILE        test this .deb instead of building one
#   TOPOTUNE_WORKTREE=1      build from the working tree, not from HEAD
#   TOPOTUNE_CACHE_DIR=DIR   debootstrap tarball cache (/var/cache/topotune);
#                            the package built from HEAD is kept there too
#   TOPOTUNE_MIRROR=URI      Debian mirror (default: from this machine's apt sources)
#   TOPOTUNE_SPEC=NAME       sysroot spec (default hygon-7447v-2s-nps6)
#   TOPOTUNE_KEEP=1          keep the work directory
#   DEB_BUILD_OPTIONS        passed on (default "nocheck": the unit tests run elsewhere)
#
# Prints PASS/FAIL per check and ends with "N passed, M failed"; exit 0 only
# when every check passed. The host is not changed apart from the cache.
#
# Time on the 2-core build machine (shared with kernel builds): cold (no
# cached tarball; debootstrap from the mirror) about 3.5 min, warm 25-60 s.
# tests/install/rpm.sh is the rpmbuild check of topotune.spec (about 15 s);
# tests/install/systemd-vm.sh installs the .deb in a qemu guest with systemd
# as PID 1 and runs an operator's session there. Shared code: lib.sh.
set -eu

SRC=$(cd "$(dirname "$0")/../.." && pwd)
SUITE=bookworm
CACHE_DIR=${TOPOTUNE_CACHE_DIR:-/var/cache/topotune}
SPEC=${TOPOTUNE_SPEC:-hygon-7447v-2s-nps6}
# shellcheck source=tests/install/lib.sh
. "$SRC/tests/install/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: tests/install/run.sh needs root (debootstrap, chroot)"
	exit 77
fi
for tool in debootstrap dpkg-buildpackage dh python3 git; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool missing (apt-get install debootstrap dpkg-dev debhelper python3 git)"
		exit 77
	fi
done

WORK=$(mktemp -d /var/tmp/topotune-install.XXXXXX)
CH="$WORK/chroot"
BUS_PID=""
D_PID=""
cleanup() {
	# Our processes in the chroot first, then the mount, then the tree.
	for p in $D_PID $BUS_PID; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	for m in "$CH/proc"; do
		if mountpoint -q "$m" 2>/dev/null; then umount "$m" || umount -l "$m"; fi
	done
	if [ "${TOPOTUNE_KEEP:-0}" = 1 ]; then
		echo "# kept $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$(date +%s)

# 1. the debootstrap tarball, cached per suite and day
minbase_tarball

# 2. the package
build_deb fresh

# 3. the chroot
mkdir -p "$CH"
tar -C "$CH" -xzf "$TARBALL"
cp -L /etc/resolv.conf "$CH/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$CH/proc"
run() { chroot "$CH" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

# The package's dependencies first, so that the snapshots differ only by
# what topotune itself adds.
deps=$(dpkg-deb -f "$DEB" Depends)
if run apt-get -qq update >"$WORK/apt.log" 2>&1 &&
   run apt-get -y -qq --no-install-recommends satisfy "$deps, dbus-daemon" >>"$WORK/apt.log" 2>&1; then
	pass "dependencies installed: $deps (and dbus-daemon for the daemon check)"
else
	tail -n 20 "$WORK/apt.log"
	fail "apt-get satisfy '$deps'"
fi

# What may differ between the snapshots: logs, caches, dpkg/apt bookkeeping.
snapshot() {
	(cd "$CH" && find . -xdev \
		\( -path ./proc -o -path ./dev -o -path ./tmp -o -path ./run \
		   -o -path ./var/log -o -path ./var/cache/apt -o -path ./var/cache/debconf \
		   -o -path ./var/cache/ldconfig -o -path ./var/lib/apt \
		   -o -path ./var/lib/dpkg -o -path ./srv/sysroot \
		   -o -path ./var/cache/man -o -path ./etc/ld.so.cache \
		   -o -path ./root/.ansible \) -prune -o -print | LC_ALL=C sort)
}
snapshot >"$WORK/before.txt"

# 4. install, use, reinstall
cp "$DEB" "$CH/tmp/topotune.deb"
if run dpkg -i /tmp/topotune.deb >"$WORK/dpkg-i.log" 2>&1; then
	pass "dpkg -i $(basename "$DEB")"
else
	cat "$WORK/dpkg-i.log"
	fail "dpkg -i $(basename "$DEB")"
fi

for f in /usr/bin/topotunectl /etc/topotune/topotune.conf \
	 /usr/lib/topotune/profiles/balanced.ini /usr/lib/topotune/hardware.d \
	 /etc/topotune/profiles /etc/topotune/hardware.d /etc/topotune/topotune.conf.d \
	 /usr/share/man/man1/topotunectl.1.gz /usr/share/man/man5/topotune.conf.5.gz \
	 /usr/share/man/man5/topotune.profile.5.gz /usr/share/man/man5/org.topotune1.5.gz \
	 /usr/share/man/man8/topotuned.8.gz /usr/share/bash-completion/completions/topotunectl; do
	if [ -e "$CH$f" ]; then pass "installed $f"; else fail "installed $f"; fi
done
# Every shipped profile and hardware rule of the tree the package came from
# (conf/meson.build lists them one by one).
CONF="$SRC/conf"
[ -d "$WORK/src/topotune/conf" ] && CONF="$WORK/src/topotune/conf"
missing=""
for f in "$CONF"/profiles/*.ini "$CONF"/hardware.d/*.ini; do
	rel=${f#"$CONF"/}
	cmp -s "$f" "$CH/usr/lib/topotune/$rel" || missing="$missing $rel"
done
if [ -z "$missing" ]; then pass "every conf/profiles and conf/hardware.d file installed unchanged"; else
	fail "not installed (or different):$missing"; fi
# dh_installsystemd enabled the unit (and its D-Bus alias) without a running systemd.
for f in /etc/systemd/system/multi-user.target.wants/topotuned.service \
	 /etc/systemd/system/dbus-org.topotune1.service; do
	if [ -L "$CH$f" ]; then pass "enabled: $f"; else fail "enabled: $f"; fi
done
if run dpkg-query -W -f='${Conffiles}\n' topotune | grep -q ' /etc/topotune/topotune.conf '; then
	pass "/etc/topotune/topotune.conf is a conffile"
else
	fail "/etc/topotune/topotune.conf is a conffile"
fi

python3 "$SRC/tests/sysroot/gen-sysroot.py" -q "$SPEC" "$CH/srv/sysroot"
if run topotunectl --root /srv/sysroot topology >"$WORK/topology.txt" 2>&1 &&
   grep -q '^CPU' "$WORK/topology.txt"; then
	pass "topotunectl --root /srv/sysroot topology ($SPEC)"
	sed 's/^/    /' "$WORK/topology.txt" | head -n 12
else
	cat "$WORK/topology.txt"
	fail "topotunectl --root /srv/sysroot topology ($SPEC)"
fi
# The installed configuration (--config-root /) against the fake machine.
if run topotunectl --root /srv/sysroot --config-root / profiles >"$WORK/profiles.txt" 2>&1 &&
   grep -q 'balanced' "$WORK/profiles.txt" && grep -q 'throughput' "$WORK/profiles.txt"; then
	pass "topotunectl --config-root / profiles lists the installed profiles"
else
	cat "$WORK/profiles.txt"
	fail "topotunectl --config-root / profiles"
fi
# throughput: balanced keeps the kernel's defaults on this machine (the Hygon
# rule sets nothing), so its steps name no file; throughput's name its profile.
if run topotunectl --root /srv/sysroot --config-root / --kernel patched plan --profile throughput \
	>"$WORK/plan.txt" 2>&1 &&
   grep -q '/usr/lib/topotune/profiles/throughput.ini' "$WORK/plan.txt"; then
	pass "topotunectl plan uses /usr/lib/topotune"
else
	cat "$WORK/plan.txt"
	fail "topotunectl plan uses /usr/lib/topotune"
fi

# The packaged daemon on the fake machine, with the packaged configuration,
# on a private bus inside the chroot (no systemd there: --no-systemd).
mkdir -p "$CH/srv/sysroot/usr/lib" "$CH/srv/sysroot/etc/topotune"
cp -r "$CH/usr/lib/topotune" "$CH/srv/sysroot/usr/lib/"
mkdir -p "$CH/srv/sysroot/etc/topotune"
sed "s|@ADDRESS@|unix:path=/tmp/topotune-test-bus|" "$SRC/tests/private-bus.conf" >"$CH/tmp/bus.conf"
BUSADDR=unix:path=/tmp/topotune-test-bus
# Not through run(): a function in the background is a subshell, and $! must
# be the process itself to signal and wait for it.
chroot "$CH" /usr/bin/env -i PATH=/usr/bin:/bin dbus-daemon --nofork --nopidfile --config-file=/tmp/bus.conf \
	>"$WORK/bus.log" 2>&1 &
BUS_PID=$!
i=0
while [ ! -S "$CH/tmp/topotune-test-bus" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
chroot "$CH" /usr/libexec/topotune/topotuned --root /srv/sysroot --bus-address "$BUSADDR" --no-systemd \
	>"$WORK/topotuned.log" 2>&1 &
D_PID=$!
i=0
until run topotunectl --bus-address "$BUSADDR" status >"$WORK/status.txt" 2>&1; do
	i=$((i + 1))
	if [ $i -ge 100 ] || ! kill -0 "$D_PID" 2>/dev/null; then break; fi
	sleep 0.1
done
if grep -q 'State: applied' "$WORK/status.txt"; then
	pass "packaged topotuned serves org.topotune1 (topotunectl status: applied)"
	sed 's/^/    /' "$WORK/status.txt" | head -n 8
else
	cat "$WORK/status.txt" "$WORK/topotuned.log"
	fail "packaged topotuned serves org.topotune1"
fi
if run topotunectl --bus-address "$BUSADDR" verify --json >"$WORK/verify.txt" 2>&1; then
	pass "topotunectl verify: exit 0 (in sync)"
else
	cat "$WORK/verify.txt"
	fail "topotunectl verify"
fi
kill "$D_PID" 2>/dev/null || true
SMTFILE="$CH/srv/sysroot/proc/sys/kernel/sched_smt_buddy_assist"
if wait "$D_PID" && [ "$(cat "$SMTFILE")" = 0 ]; then
	pass "topotuned stops with exit 0 and reverts (sched_smt_buddy_assist back to 0)"
else
	tail -n 5 "$WORK/topotuned.log"; fail "topotuned stop: exit or revert (smt=$(cat "$SMTFILE"))"; fi
D_PID=""
kill "$BUS_PID" 2>/dev/null || true
wait "$BUS_PID" 2>/dev/null || true
BUS_PID=""
rm -f "$CH/tmp/bus.conf" "$CH/tmp/topotune-test-bus"

# An administrator's edit of the conffile survives a reinstall.
echo "# admin edit" >>"$CH/etc/topotune/topotune.conf"
if run dpkg -i /tmp/topotune.deb >"$WORK/dpkg-i2.log" 2>&1 &&
   tail -n1 "$CH/etc/topotune/topotune.conf" | grep -q 'admin edit'; then
	pass "reinstall keeps the edited conffile"
else
	cat "$WORK/dpkg-i2.log"
	fail "reinstall keeps the edited conffile"
fi

# 5. purge, and compare
rm -f "$CH/tmp/topotune.deb"
if run dpkg --purge topotune >"$WORK/purge.log" 2>&1; then
	pass "dpkg --purge topotune"
else
	cat "$WORK/purge.log"
	fail "dpkg --purge topotune"
fi
if run dpkg-query -W -f='${db:Status-Abbrev}' topotune 2>/dev/null | grep -q '^.[^n]'; then
	fail "dpkg still knows topotune: $(run dpkg-query -W -f='${db:Status-Abbrev}' topotune)"
else
	pass "dpkg has no record of topotune"
fi
rm -rf "$CH/srv/sysroot"
snapshot >"$WORK/after.txt"
if diff -u "$WORK/before.txt" "$WORK/after.txt" >"$WORK/leftover.diff"; then
	pass "nothing left behind after purge ($(wc -l <"$WORK/before.txt") paths compared)"
else
	sed -n '3,$p' "$WORK/leftover.diff" | grep '^[-+]' | head -n 40
	fail "files differ after purge (above: - missing, + left behind)"
fi

note "took $(($(date +%s) - t0)) s"
summary
[ "$failed" = 0 ]
