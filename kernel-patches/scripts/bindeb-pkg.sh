#!/bin/bash
# Build Debian kernel packages (linux-image, linux-headers) of 7.3 with the
# topotune series, for real servers. Not run in CI (a full distribution
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
# The packages land next to the source tree; the script prints their paths.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

config=${1:-/boot/config-$(uname -r)}
[ -r "$config" ] || die "no kernel config at $config (pass one as the first argument)"

"$KP_DIR/scripts/fetch.sh" >&2
tree=$("$KP_DIR/scripts/apply.sh")
log "building in $tree from $config"
cd "$tree"
cp "$config" .config
# Debian's signing keys are not in the tree; the result is unsigned (sign it
# with your own MOK for Secure Boot, or build through Debian's linux package).
scripts/config --disable SYSTEM_TRUSTED_KEYS --disable SYSTEM_REVOCATION_KEYS \
	--set-str LOCALVERSION "${TOPOTUNE_LOCALVERSION:--topotune}"
make olddefconfig >&2
make -j"$JOBS" bindeb-pkg >&2
ls -1 "$(dirname "$tree")"/linux-image-*"${TOPOTUNE_LOCALVERSION:--topotune}"*.deb \
	"$(dirname "$tree")"/linux-headers-*"${TOPOTUNE_LOCALVERSION:--topotune}"*.deb
