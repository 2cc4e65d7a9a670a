#!/bin/bash
# Build the test initramfs from host binaries: busybox-static (all applets
# but taskset), util-linux taskset plus the shared libraries ldd reports,
# and guest/init.  Usage: mkinitramfs.sh OUTPUT.cpio.gz
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

install -m 0755 "$here/guest/init" "$root/init"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet | gzip -9) >"$out.tmp"
mv "$out.tmp" "$out"
