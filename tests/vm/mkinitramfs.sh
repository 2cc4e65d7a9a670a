#!/bin/bash
# Build the test initramfs from host binaries: busybox-static (all applets
# but taskset), util-linux taskset plus the shared libraries ldd reports,
# guest/init, and guest/tt-sleeper.c and tt-execplace.c compiled here (static).  With
# TOPOTUNE_AGENT_BUILDDIR set (run-kernel-tier.sh sets
# it when the meson build dir holds the agent), also topotuned, topotunectl,
# dbus-daemon and busctl with their libraries, a private bus config
# (/etc/tt-bus.conf, listening on /run/tt-bus) and the shipped conf/ under
# /usr/lib/topotune and /etc/topotune; and the kernel workload harness
# (bench/kernel: workloads.sh, tt-stream, tt-wakeup from the build dir, the
# host's hackbench and stress-ng).  Usage: mkinitramfs.sh OUTPUT.cpio.gz
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

copy_libs() {
	local lib
	for lib in $(ldd "$1" | awk '/=>/ { print $3 } /^[ \t]*\/lib/ { print $1 }'); do
		[ -f "$lib" ] || continue
		install -D -m 0755 "$lib" "$root$lib"
	done
}

copy_with_libs() {
	install -D -m 0755 "$1" "$root$1"
	copy_libs "$1"
}
copy_with_libs /usr/bin/taskset
# the sleeping task of the delayed-dequeue check (guest/init t_delayed);
# static, so it needs no libraries
gcc -O2 -Wall -static -o "$root/usr/bin/tt-sleeper" "$here/guest/tt-sleeper.c"
# where exec balancing places a task (guest/init t_seed001), and the hog it
# places for the stacking workload of t_diag (--spin)
gcc -O2 -Wall -static -o "$root/usr/bin/tt-execplace" "$here/guest/tt-execplace.c"
# the time-to-spread measurement (guest/init t_spread)
gcc -O2 -Wall -static -o "$root/usr/bin/tt-spread" "$here/guest/tt-spread.c"

if [ -n "${TOPOTUNE_AGENT_BUILDDIR:-}" ]; then
	repo=$(cd "$here/../.." && pwd)
	install -D -m 0755 "$TOPOTUNE_AGENT_BUILDDIR/agent/service/topotuned" "$root/usr/bin/topotuned"
	install -D -m 0755 "$TOPOTUNE_AGENT_BUILDDIR/agent/cli/topotunectl" "$root/usr/bin/topotunectl"
	copy_libs "$TOPOTUNE_AGENT_BUILDDIR/agent/service/topotuned"
	copy_libs "$TOPOTUNE_AGENT_BUILDDIR/agent/cli/topotunectl"
	for b in dbus-daemon busctl; do
		p=$(command -v "$b" 2>/dev/null) && copy_with_libs "$(readlink -f "$p")" ||
			echo "mkinitramfs: $b not found on the host; the guest runs the agent offline only" >&2
	done
	[ -e "$root/usr/bin/dbus-daemon" ] || rm -f "$root/usr/bin/busctl"
	# the kernel workload harness (guest/init t_bench), when the host has the workloads
	if [ -x "$TOPOTUNE_AGENT_BUILDDIR/bench/kernel/tt-stream" ]; then
		install -D -m 0755 "$repo/bench/kernel/workloads.sh" "$root/usr/lib/tt-bench/workloads.sh"
		for b in tt-stream tt-wakeup; do
			install -m 0755 "$TOPOTUNE_AGENT_BUILDDIR/bench/kernel/$b" "$root/usr/lib/tt-bench/$b"
			copy_libs "$TOPOTUNE_AGENT_BUILDDIR/bench/kernel/$b"
		done
		for b in hackbench stress-ng; do
			p=$(command -v "$b" 2>/dev/null) && copy_with_libs "$(readlink -f "$p")" ||
				echo "mkinitramfs: $b not found on the host; the guest's harness reports it missing" >&2
		done
	fi
	mkdir -p "$root/usr/lib/topotune" "$root/etc/topotune/topotune.conf.d" "$root/run" "$root/var/lib/dbus"
	cp -r "$repo/conf/profiles" "$repo/conf/hardware.d" "$root/usr/lib/topotune/"
	cp "$repo/conf/topotune.conf" "$root/etc/topotune/"
	# The agent checks drive SMT_BUDDY_ASSIST: throughput switches it on; balanced
	# keeps the kernel's default, also under the Hygon rule.
	printf '[daemon]\nprofile = throughput\n' >"$root/etc/topotune/topotune.conf.d/50-vm.conf"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
	echo 0123456789abcdef0123456789abcdef >"$root/etc/machine-id"
	cp "$root/etc/machine-id" "$root/var/lib/dbus/machine-id"
	sed "s|@ADDRESS@|unix:path=/run/tt-bus|" "$repo/tests/private-bus.conf" >"$root/etc/tt-bus.conf"
fi

install -m 0755 "$here/guest/init" "$root/init"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet | gzip -9) >"$out.tmp"
mv "$out.tmp" "$out"
