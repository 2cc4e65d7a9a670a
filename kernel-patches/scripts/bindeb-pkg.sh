#!/bin/bash
# Build Debian kernel packages (linux-image, linux-headers) of one base
# (TOPOTUNE_KSERIES: 7.3, the default, or 6.12) with its topotune series,
# for real servers. Not run in CI (a full distribution
# config takes an hour or more on a small machine).
#
#   bindeb-pkg.sh [CONFIG]
#     CONFIG  the kernel config to start from (default: /boot/config-$(uname -r),
#             the running Debian kernel's)
#
# Environment: TOPOTUNE_KCACHE (source cache; default /var/cache/topotune/kernel,
# use e.g. $HOME/.cache/topotune/kernel as an ordinary user), TOPOTUNE_JOBS,
# TOPOTUNE_LOCALVERSION (default -topotune). Needs build-essential bc bison flex
# libelf-dev libssl-dev dwarves rsync debhelper python3 cpio kmod.
# The packages land in $TOPOTUNE_KCACHE/deb-<version>/; the script prints
# their paths.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

config=${1:-/boot/config-$(uname -r)}
[ -r "$config" ] || die "no kernel config at $config (pass one as the first argument)"

"$KP_DIR/scripts/fetch.sh" >&2
tree=$("$KP_DIR/scripts/apply.sh")
# Out of tree, like build.sh: an in-tree build would leave the shared
# patched worktree unusable for build.sh's O= builds. dpkg-buildpackage
# puts the packages next to the build directory, in $pkgdir.
pkgdir="$KCACHE/deb-$(kernel_version)"
out="$pkgdir/build"
mkdir -p "$out"
log "building $tree in $out from $config"
cp "$config" "$out/.config"
# Debian's signing keys are not in the tree; the result is unsigned (sign it
# with your own MOK for Secure Boot, or build through Debian's linux package).
"$tree/scripts/config" --file "$out/.config" \
	--disable SYSTEM_TRUSTED_KEYS --disable SYSTEM_REVOCATION_KEYS \
	--set-str LOCALVERSION "${TOPOTUNE_LOCALVERSION:--topotune}"
make -C "$tree" O="$out" olddefconfig >&2
krel=$(make -s -C "$tree" O="$out" kernelrelease)
make -C "$tree" O="$out" -j"$JOBS" bindeb-pkg >&2
ls -1 "$pkgdir/linux-image-${krel}_"*.deb "$pkgdir/linux-headers-${krel}_"*.deb
