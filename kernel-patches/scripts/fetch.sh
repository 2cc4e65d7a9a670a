#!/bin/bash
# Fetch the Debian kernel source of one base (TOPOTUNE_KSERIES, default
# 7.3: linux-source-7.3 from trixie-backports; 6.12: linux-source-6.12 from
# bookworm-security; see kernel-patches/<series>/base) with apt-get
# download, without touching the system's apt configuration, and unpack
# it to $TOPOTUNE_KCACHE/src-<version>/ (default /var/cache/topotune/kernel).
#
# The mirror is taken from the machine's own apt sources (deb822 .sources
# files first, then one-line sources.list entries) for the base's archive
# (".../debian" or ".../debian-security"), so no host name is hard-coded here.
#
#   fetch.sh [--candidate]   (--candidate: print the version a fetch would
#                             take, after the apt update, and download nothing;
#                             with TOPOTUNE_KVERSION set, print that at once:
#                             a fetch takes it whatever the archive says)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mirror_uri() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# Only the base's Debian archive, not the other one or third parties.
		uri=$(awk 'tolower($1)=="uris:" { for (i = 2; i <= NF; i++) print $i }' "$f" |
			grep -E "/$KARCHIVE/?\$" | head -n1 || true)
		[ -n "$uri" ] && { echo "${uri%/}"; return; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		uri=$(awk '$1=="deb" { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file|ftp):/) { print $i; break } }' "$f" |
			grep -E "/$KARCHIVE/?\$" | head -n1 || true)
		[ -n "$uri" ] && { echo "${uri%/}"; return; }
	done
	return 1
}

keyring() {
	local k
	for k in /usr/share/keyrings/debian-archive-keyring.gpg \
		 /usr/share/keyrings/debian-archive-trixie-stable.gpg; do
		[ -f "$k" ] && { echo "$k"; return; }
	done
	return 1
}

main() {
	local uri key apt_dir ver deb
	# A pinned version needs no archive to be named: tests/unit's decision
	# test of run-kernel-tier.sh --if-changed runs offline.
	if [ "${1:-}" = --candidate ] && [ -n "${TOPOTUNE_KVERSION:-}" ]; then
		echo "$TOPOTUNE_KVERSION"
		return
	fi
	uri=${TOPOTUNE_MIRROR:-$(mirror_uri)} || die "no $KARCHIVE archive URI in /etc/apt sources"
	key=$(keyring) || die "debian-archive-keyring is not installed"
	mkdir -p "$KCACHE"
	apt_dir="$KCACHE/apt"
	mkdir -p "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
	cat >"$apt_dir/etc/sources.list" <<-EOS
	deb [signed-by=$key] $uri $KSUITE main
	EOS
	local -a opts=(
		-o "Dir::State=$apt_dir/state"
		-o "Dir::State::status=/dev/null"
		-o "Dir::Cache=$apt_dir/cache"
		-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list"
		-o "Dir::Etc::SourceParts=/dev/null"
		-o "Dir::Etc::Preferences=/dev/null"
		-o "Dir::Etc::PreferencesParts=/dev/null"
		-o "APT::Architecture=amd64"
		-o "Debug::NoLocking=1"
	)
	log "mirror $uri suite $KSUITE keyring $key"
	apt-get "${opts[@]}" -q update >&2
	ver=${TOPOTUNE_KVERSION:-$(apt-cache "${opts[@]}" policy "$KPKG" |
		awk '/Candidate:/ { print $2 }')}
	[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "$KPKG not found in $KSUITE"
	# --candidate: only say which version a fetch would take.
	if [ "${1:-}" = --candidate ]; then
		echo "$ver"
		return
	fi
	local src="$KCACHE/src-$ver"
	if [ -f "$src/.unpacked" ]; then
		log "$KPKG $ver already unpacked in $src"
	else
		(cd "$apt_dir/cache/archives" && apt-get "${opts[@]}" -q download "$KPKG=$ver" >&2)
		deb=$(ls "$apt_dir/cache/archives/${KPKG}_"*.deb | grep -F "_${ver//:/%3a}_" | head -n1)
		[ -f "$deb" ] || die "download of $KPKG $ver failed"
		rm -rf "$src" "$src.tmp"
		mkdir -p "$src.tmp"
		dpkg-deb -x "$deb" "$src.tmp/deb"
		local tarball
		tarball=$(ls "$src.tmp"/deb/usr/src/linux-source-*.tar.* | head -n1)
		log "unpacking $tarball"
		tar -C "$src.tmp" -xf "$tarball"
		mv "$src.tmp"/linux-source-*/ "$src.tmp/linux"
		rm -rf "$src.tmp/deb"
		echo "$ver" >"$src.tmp/version"
		mv "$src.tmp" "$src"
		touch "$src/.unpacked"
	fi
	echo "$ver" >"$(version_file)"
	echo "$ver"
}

main "$@"
