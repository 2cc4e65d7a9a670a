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

# The series' patch files, in order, as paths.
series_patches() {
	local p
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		echo "$KP_DIR/$KSERIES/$p"
	done <"$KP_DIR/$KSERIES/series"
}

# The code of one patch: from its first "diff --git" line up to git's
# signature separator ("-- " alone on a line), or to the end of the file
# when there is none.  The mail headers, the changelog, the tags and the
# diffstat are left out: they do not change what gets built.
patch_code() {
	awk '/^diff --git / { code = 1 } code && /^-- $/ { exit } code' "$1"
}

# Cache key of a patched build: the source version, the series file (the
# order of the patches) and the code part of each patch (patch_code).  A
# changelog-only edit keeps the key, so the cached bzImages
# (images/patched-*, images/patched-systemd-*), the per-patch compile stamp
# (percommit-ok-*) and the applied tree stay valid.  build.sh adds the
# config fragments.  Whatever is not in the key -- the changelogs -- is
# still checked on every run: apply.sh "git am"s the full patch files, and
# run-kernel-tier.sh runs checkpatch on them.
series_hash() {
	local v=$1 p
	{
		echo "$v"
		cat "$KP_DIR/$KSERIES/series"
		series_patches | while read -r p; do
			patch_code "$p"
		done
	} | sha256sum | cut -c1-16
}

# Hash of the full patch files (changelogs included): tells apply.sh whether
# the commits in the applied tree carry the current changelogs.
series_full_hash() {
	local v=$1 p
	{
		echo "$v"
		cat "$KP_DIR/$KSERIES/series"
		series_patches | while read -r p; do
			cat "$p"
		done
	} | sha256sum | cut -c1-16
}

# Hold the version's tree lock (fd 9) until the script ends: one build.sh,
# apply.sh or bindeb-pkg.sh at a time changes the shared worktree.  A script
# started under the lock (build.sh runs apply.sh) does not take it again.
tree_lock() {
	[ -z "${TOPOTUNE_KTREE_LOCKED:-}" ] || return 0
	mkdir -p "$KCACHE"
	exec 9>"$KCACHE/.tree-$(kernel_version).lock"
	flock 9
	export TOPOTUNE_KTREE_LOCKED=1
}

config_hash() {
	cat "$KP_DIR/config/topotune-qemu.config" | sha256sum | cut -c1-16
}

# Whether NAME <EMAIL> can be a person's sign-off: a deliverable address
# that is not a placeholder, a no-reply or local address, and a name that
# is not a group's, a role's or a tool's.
personal_identity() {
	local name=$1 email=$2
	case "$email" in
	*@*.*) ;;
	*) return 1 ;;
	esac
	case "${email,,}" in
	*.invalid|*.example|*.example.*|*.test|*.local|*.localdomain|*@localhost|*@localhost.*|\
	*noreply*|*no-reply*|*@example.*|*@users.noreply.*) return 1 ;;
	esac
	case "${name,,}" in
	''|root|'your name'|*maintainers*|*developers*|*team*|*bot|*bot\ *|*robot*|*project*|*topotune*)
		return 1 ;;
	esac
	return 0
}
