# shellcheck shell=bash
# Shared helpers for the topotune kernel tooling.  Sourced, not executed.

KP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KCACHE=${TOPOTUNE_KCACHE:-/var/cache/topotune/kernel}
# The base: kernel-patches/<series>/ holds the series and a "base" file
# naming the Debian package, suite and archive it applies to.
KSERIES=${TOPOTUNE_KSERIES:-7.3}
[ -f "$KP_DIR/$KSERIES/base" ] || { echo "no kernel-patches/$KSERIES/base" >&2; exit 1; }
# shellcheck source=/dev/null
. "$KP_DIR/$KSERIES/base"
KPKG=${TOPOTUNE_KPKG:-$package}
KSUITE=${TOPOTUNE_KSUITE:-$suite}
KARCHIVE=${TOPOTUNE_KARCHIVE:-$archive}
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
	[ -f "$(version_file)" ] || die "no fetched source for $KSERIES; run fetch.sh"
	cat "$(version_file)"
}

# Where fetch.sh records the fetched version of this base: 7.3 keeps the
# name it had before there was a second base (existing caches stay valid).
version_file() {
	if [ "$KSERIES" = 7.3 ]; then
		echo "$KCACHE/current-version"
	else
		echo "$KCACHE/current-version-$KSERIES"
	fi
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
