#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# units/update-bootloader against the real grubby: Fedora's grubby-bls,
# which is not shipped here, given as $1 (a copy of the grubby-bls of
# Fedora's rpms/grubby, e.g. its mirror fedora-riscv/grubby), with grub's
# own grub-editenv (Debian: apt-get install grub-common) as grub2-editenv.
# Runs as root in a private mount namespace: tmpfs over /boot, /etc/kernel
# and /etc/default holds a fake BLS system; / is remounted read-only but for
# the ReadWritePaths= of units/topotune-bootloader.service, as
# ProtectSystem=strict does. Nothing outside the namespace's tmpfs and a
# directory under /tmp is written.
# Two layouts: Fedora 39 (options in every entry, /etc/kernel/cmdline,
# GRUB_CMDLINE_LINUX) and RHEL 8 (options $kernelopts, kernelopts in
# grubenv). Each: request 3, then none (revert): the parameters are there,
# then gone, and every file is as before (but for blanks grubby joins).
# Then a Fedora 39 /etc/default/grub with GRUB_CMDLINE_LINUX_DEFAULT=: grubby
# run by hand makes it a second GRUB_CMDLINE_LINUX=; the helper refuses and
# changes nothing.
# Prints PASS/FAIL per check and "N passed, M failed"; exit 77 to skip.
#   TOPOTUNE_RW="..."  other ReadWritePaths= (e.g. the unit's before a change)
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
GRUBBY=${1:-}
if [ -z "$GRUBBY" ] || [ ! -f "$GRUBBY" ]; then
	echo "SKIP: usage: $0 GRUBBY-BLS (the script, from Fedora's rpms/grubby)"
	exit 77
fi
command -v grub-editenv >/dev/null || { echo "SKIP: grub-editenv missing (apt-get install grub-common)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (mount namespace)"; exit 77; }

if [ "${TOPOTUNE_IN_NS:-}" != 1 ]; then
	W=$(mktemp -d /tmp/topotune-grubby.XXXXXX)
	trap 'rm -rf "$W"' EXIT
	mkdir -p "$W/bin"
	cp "$GRUBBY" "$W/bin/grubby"
	chmod 755 "$W/bin/grubby"
	ln -s "$(command -v grub-editenv)" "$W/bin/grub2-editenv"
	rc=0
	export W
	TOPOTUNE_IN_NS=1 unshare --mount --propagation private "$0" "$W/bin/grubby" || rc=$?
	exit $rc
fi

# shellcheck source=tests/check.sh
. "$SRC/tests/check.sh"
RW=${TOPOTUNE_RW:-$(sed -n 's/^ReadWritePaths=//p' "$SRC/units/topotune-bootloader.service")}
echo "# grubby: $(sha256sum "$GRUBBY" | cut -c1-16); ReadWritePaths=$RW"
for m in /boot /etc/kernel /etc/default; do
	mkdir -p "$m" # /etc/kernel may be missing: made inside the namespace's root mount only when it is
	mount -t tmpfs tmpfs "$m"
	# A second view, outside the sandbox's reach, to lay out each system.
	mkdir -p "$W/rw$m"
	mount --bind "$m" "$W/rw$m"
done
R=$W/rw
mkdir /etc/default/grub.d
MID=$(cat /etc/machine-id)

# A layout: $1 fedora or rhel8.
layout() {
	# Not grub.d itself: the sandbox may have bound it onto itself.
	find "$R/boot" "$R/etc/kernel" "$R/etc/default" "$R/etc/default/grub.d" -mindepth 1 -maxdepth 1 \
		! -name grub.d -exec rm -rf {} +
	mkdir -p "$R/boot/loader/entries" "$R/boot/grub2"
	if [ "$1" = fedora ]; then
		opts='root=UUID=1234-abcd ro rootflags=subvol=root rhgb quiet'
		echo "$opts" >"$R/etc/kernel/cmdline"
	else
		opts="\$kernelopts"
	fi
	for v in 6.5.6-300.fc39.x86_64 6.6.2-201.fc39.x86_64; do
		cat >"$R/boot/loader/entries/$MID-$v.conf" <<-EOF
			title Linux ($v)
			version $v
			linux /vmlinuz-$v
			initrd /initramfs-$v.img
			options $opts
			grub_users \$grub_users
			grub_arg --unrestricted
			grub_class kernel
		EOF
	done
	grub-editenv "$R/boot/grub2/grubenv" create
	grub-editenv "$R/boot/grub2/grubenv" set "saved_entry=$MID-6.6.2-201.fc39.x86_64"
	[ "$1" = fedora ] || grub-editenv "$R/boot/grub2/grubenv" set \
		"kernelopts=root=/dev/mapper/rhel-root ro crashkernel=auto rhgb quiet"
	cat >"$R/etc/default/grub" <<-'EOF'
		GRUB_TIMEOUT=5
		GRUB_DEFAULT=saved
		GRUB_DISABLE_SUBMENU=true
		GRUB_TERMINAL_OUTPUT="console"
		GRUB_CMDLINE_LINUX="rhgb quiet"
		GRUB_DISABLE_RECOVERY="true"
		GRUB_ENABLE_BLSCFG=true
	EOF
}
snapshot() { (cd / && for f in boot/loader/entries/*.conf boot/grub2/grubenv etc/kernel/cmdline etc/default/grub; do
	[ -f "$f" ] && { echo "== $f"; cat "$f"; }; done) | tr -s ' '; }
# Every place grubby keeps the command line, one line each.
where() {
	grep -h '^options' /boot/loader/entries/*.conf
	grep -a '^kernelopts=' /boot/grub2/grubenv || true
	[ ! -f /etc/kernel/cmdline ] || cat /etc/kernel/cmdline
	grep '^GRUB_CMDLINE_LINUX=' /etc/default/grub
}
# ProtectSystem=strict and the unit's ReadWritePaths= (each bound onto itself).
sandbox() {
	mount -o remount,bind,ro /
	for m in /boot /etc/kernel /etc/default; do
		mount -o remount,bind,ro "$m"
	done
	for p in $RW /tmp /run; do
		p=${p#-}
		[ -e "$p" ] || continue
		mount --rbind "$p" "$p"
		mount -o remount,bind,rw "$p"
	done
}
run() {	# LEVEL: write the request ("" none) and run the helper as the unit does
	if [ -n "$1" ]; then printf '%s\n' "$1" >"$W/request"; else rm -f "$W/request"; fi
	PATH="$W/bin:/usr/sbin:/usr/bin:/sbin:/bin" TOPOTUNE_REQUEST="$W/request" \
		"$SRC/units/update-bootloader" >"$W/out" 2>&1
	rc=$?
	sed 's/^/  | /' "$W/out"
}

sandbox
for l in fedora rhel8; do
	layout $l
	before=$(snapshot)
	echo "# $l, before:"
	where | sed 's/^/  /'
	run 3 || true
	echo "# $l, request 3 (rc $rc):"
	where | sed 's/^/  /'
	check "$l: request 3: update-bootloader exits 0" "$rc" 0
	# "options $kernelopts" takes grubenv's kernelopts (grubby --info=ALL
	# expands it, and the helper checks that).
	check "$l: every place has relax_domain_level=3" \
		"$(where | grep -v '^options [$]kernelopts$' | grep -vc 'relax_domain_level=3\(["]\|$\)')" 0
	run "" || true
	echo "# $l, revert (rc $rc):"
	where | sed 's/^/  /'
	check "$l: revert: update-bootloader exits 0" "$rc" 0
	check "$l: revert: no relax_domain_level left" "$(where | grep -c relax_domain_level)" 0
	if [ $l = rhel8 ]; then
		# update_bls_fragment() creates a missing /etc/kernel/cmdline from
		# the oldest entry's arguments and never removes it.
		check "$l: /etc/kernel/cmdline made by grubby, kept" \
			"$(cat /etc/kernel/cmdline)" "root=/dev/mapper/rhel-root ro crashkernel=auto rhgb quiet"
		rm "$R/etc/kernel/cmdline"
	fi
	check "$l: revert: every file as before (blanks joined)" "$(snapshot)" "$before"
done

# A GRUB_CMDLINE_LINUX_DEFAULT= line: grubby itself makes it a second
# GRUB_CMDLINE_LINUX= (its parameters lost); the helper refuses to run it.
layout fedora
echo 'GRUB_CMDLINE_LINUX_DEFAULT="mitigations=off"' >>"$R/etc/default/grub"
PATH="$W/bin:/usr/sbin:/usr/bin:/sbin:/bin" grubby --update-kernel=ALL --args=relax_domain_level=3 >"$W/out" 2>&1 || true
echo "# fedora + GRUB_CMDLINE_LINUX_DEFAULT, grubby --args=relax_domain_level=3 by hand:"
grep CMDLINE /etc/default/grub | sed 's/^/  /'
check "grubby itself: GRUB_CMDLINE_LINUX_DEFAULT= becomes a second GRUB_CMDLINE_LINUX=" \
	"$(grep -c '^GRUB_CMDLINE_LINUX=' /etc/default/grub) $(grep -c mitigations=off /etc/default/grub)" "2 0"
layout fedora
echo 'GRUB_CMDLINE_LINUX_DEFAULT="mitigations=off"' >>"$R/etc/default/grub"
before=$(snapshot)
run 3 || true
echo "# fedora + GRUB_CMDLINE_LINUX_DEFAULT, request 3 (rc $rc)"
check "GRUB_CMDLINE_LINUX_DEFAULT=: update-bootloader exits 1" "$rc" 1
check "... naming the line" \
	"$(grep -c '^update-bootloader: /etc/default/grub:8: GRUB_CMDLINE_LINUX_DEFAULT: grubby would turn' "$W/out")" 1
check "... and every file as before" "$(snapshot)" "$before"
summary
