#!/bin/bash
# Build the test initramfs from host binaries: busybox-static (all applets
# but taskset), util-linux taskset plus the shared libraries ldd reports,
# and guest/init.  With TOPOTUNE_AGENT_BUILDDIR set (run-kernel-tier.sh sets
# it when the meson build dir holds the agent), also topotuned, topotunectl,
# dbus-daemon and busctl with their libraries, a private bus config
# (/etc/tt-bus.conf, listening on /run/tt-bus) and the shipped conf/ under
# /usr/lib/topotune and /etc/topotune.  Usage: mkinitramfs.sh OUTPUT.cpio.gz
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,lib,lib64,etc}
cp /bin/busybox "$root/bin/busybox"
for a in $("$root/bin/busybox" --list); do
	case "$a" in busybox|taskset|init) continue ;; esac
	ln -sf busybox "$root/bin/$a"
done

copy_with_libs() {
	local bin=$1 lib
	install -D -m 0755 "$bin" "$root$bin"
	for lib in $(ldd "$bin" | awk '/=>/ { print $3 } /^\s*\/lib/ { print $1 }'); do
		[ -f "$lib" ] || continue
		install -D -m 0755 "$lib" "$root$lib"
	done
}
copy_with_libs /usr/bin/taskset

if [ -n "${TOPOTUNE_AGENT_BUILDDIR:-}" ]; then
	repo=$(cd "$here/../.." && pwd)
	install -D -m 0755 "$TOPOTUNE_AGENT_BUILDDIR/agent/service/topotuned" "$root/usr/bin/topotuned"
	install -D -m 0755 "$TOPOTUNE_AGENT_BUILDDIR/agent/cli/topotunectl" "$root/usr/bin/topotunectl"
	for b in "$TOPOTUNE_AGENT_BUILDDIR/agent/service/topotuned" "$TOPOTUNE_AGENT_BUILDDIR/agent/cli/topotunectl"; do
		for lib in $(ldd "$b" | awk '/=>/ { print $3 } /^\s*\/lib/ { print $1 }'); do
			if [ -f "$lib" ]; then install -D -m 0755 "$lib" "$root$lib"; fi
		done
	done
	for b in dbus-daemon busctl; do
		p=$(command -v "$b" 2>/dev/null) && copy_with_libs "$(readlink -f "$p")" ||
			echo "mkinitramfs: $b not found on the host; the guest runs the agent offline only" >&2
	done
	[ -e "$root/usr/bin/dbus-daemon" ] || rm -f "$root/usr/bin/busctl"
	mkdir -p "$root/usr/lib/topotune" "$root/etc/topotune/topotune.conf.d" "$root/run" "$root/var/lib/dbus"
	cp -r "$repo/conf/profiles" "$repo/conf/hardware.d" "$root/usr/lib/topotune/"
	cp "$repo/conf/topotune.conf" "$root/etc/topotune/"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
	echo 0123456789abcdef0123456789abcdef >"$root/etc/machine-id"
	cp "$root/etc/machine-id" "$root/var/lib/dbus/machine-id"
	cat >"$root/etc/tt-bus.conf" <<'BUS'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/tt-bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow send_type="method_call"/>
  </policy>
</busconfig>
BUS
fi

install -m 0755 "$here/guest/init" "$root/init"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet | gzip -9) >"$out.tmp"
mv "$out.tmp" "$out"
