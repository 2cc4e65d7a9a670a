# shellcheck shell=bash
# Shared helpers for the topotune kernel tooling.  Sourced, not executed.

KP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KCACHE=${TOPOTUNE_KCACHE:-/var/cache/topotune/kernel}
KSERIES=${TOPOTUNE_KSERIES:-7.3}
KPKG=${TOPOTUNE_KPKG:-linux-source-7.3}
KSUITE=${TOPOTUNE_KSUITE:-trixie-backports}
JOBS=${TOPOTUNE_JOBS:-$(nproc)}

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The version of the unpacked source tree that apply/build use: the
# newest src-* directory in the cache unless TOPOTUNE_KVERSION pins one.
kernel_version() {
	if [ -n "${TOPOTUNE_KVERSION:-}" ]; then
		echo "$TOPOTUNE_KVERSION"
		return
	fi
	[ -f "$KCACHE/current-version" ] || die "no fetched source; run fetch.sh"
	cat "$KCACHE/current-version"
}

# Content hash of what goes into a patched build: version + series + config.
series_hash() {
	local v=$1
	{
		echo "$v"
		cat "$KP_DIR/$KSERIES/series"
		while read -r p; do
			case "$p" in ''|'#'*) continue ;; esac
			cat "$KP_DIR/$KSERIES/$p"
		done <"$KP_DIR/$KSERIES/series"
	} | sha256sum | cut -c1-16
}

config_hash() {
	cat "$KP_DIR/config/topotune-qemu.config" | sha256sum | cut -c1-16
}
