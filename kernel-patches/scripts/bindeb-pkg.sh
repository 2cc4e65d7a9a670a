#!/bin/bash
# Build Debian kernel packages (linux-image, linux-headers) of one base
# (TOPOTUNE_KSERIES: 7.3, the default, or 6.12) with its topotune series,
# for real servers. Not run in CI (a full distribution config takes hours
# on a small machine; --minimal about as long as the tier's kernels).
#
#   bindeb-pkg.sh [CONFIG | --minimal]
#     CONFIG     the kernel config to start from (default: /boot/config-$(uname -r),
#                the running Debian kernel's)
#     --minimal  tinyconfig + config/topotune-qemu.config (+ <series>/qemu.config)
#                + config/systemd.config + config/deb-minimal.config: a small
#                kernel that boots a Debian root from a virtio disk without an
#                initrd, for trying the packages in a VM; built in
#                deb-<version>/build-minimal
#
# Environment: TOPOTUNE_KCACHE (source cache; default /var/cache/topotune/kernel,
# use e.g. $HOME/.cache/topotune/kernel as an ordinary user), TOPOTUNE_JOBS,
# TOPOTUNE_LOCALVERSION (default -topotune, with --minimal -topotune-minimal). Needs build-essential bc bison flex
# libelf-dev libssl-dev dwarves rsync debhelper python3 cpio kmod, and for
# 7.3 libdw-dev (dpkg-checkbuilddeps stops the build without them).
# The packages land in $TOPOTUNE_KCACHE/deb-<version>/; the script prints
# their paths.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

minimal=0 config="" localversion=-topotune
case "${1:-}" in
--minimal) minimal=1 localversion=-topotune-minimal ;;
*) config=${1:-/boot/config-$(uname -r)}
   [ -r "$config" ] || die "no kernel config at $config (pass one as the first argument, or --minimal)" ;;
esac

"$KP_DIR/scripts/fetch.sh" >&2
# The worktree is build.sh's too: hold its lock until the packages are built.
tree_lock
tree=$("$KP_DIR/scripts/apply.sh")
# Out of tree, like build.sh: an in-tree build would leave the shared
# patched worktree unusable for build.sh's O= builds. dpkg-buildpackage
# puts the packages next to the build directory, in $pkgdir.
pkgdir="$KCACHE/deb-$(kernel_version)"
out="$pkgdir/build"
[ "$minimal" = 0 ] || out="$pkgdir/build-minimal"
mkdir -p "$out"
if [ "$minimal" = 1 ]; then
	fragments=("$KP_DIR/config/topotune-qemu.config")
	[ ! -f "$KP_DIR/$KSERIES/qemu.config" ] || fragments+=("$KP_DIR/$KSERIES/qemu.config")
	fragments+=("$KP_DIR/config/systemd.config" "$KP_DIR/config/deb-minimal.config")
	log "building $tree in $out from tinyconfig + ${fragments[*]##*/}"
	make -s -C "$tree" O="$out" ARCH=x86_64 tinyconfig >&2
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${fragments[@]}" >&2
else
	log "building $tree in $out from $config"
	cp "$config" "$out/.config"
fi
# Debian's signing keys are not in the tree; the result is unsigned (sign it
# with your own MOK for Secure Boot, or build through Debian's linux package).
"$tree/scripts/config" --file "$out/.config" \
	--disable SYSTEM_TRUSTED_KEYS --disable SYSTEM_REVOCATION_KEYS \
	--set-str LOCALVERSION "${TOPOTUNE_LOCALVERSION:-$localversion}"
# LOCALVERSION set (empty): otherwise setlocalversion appends "+" to the
# release because the tree is a git checkout (6.12.118-topotune+).
export LOCALVERSION=
make -C "$tree" O="$out" olddefconfig >&2
krel=$(make -s -C "$tree" O="$out" kernelrelease)
make -C "$tree" O="$out" -j"$JOBS" bindeb-pkg >&2
ls -1 "$pkgdir/linux-image-${krel}_"*.deb "$pkgdir/linux-headers-${krel}_"*.deb
