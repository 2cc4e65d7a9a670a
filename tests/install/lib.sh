# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
#
# Shared by the install tests (tests/install/run.sh, systemd-vm.sh); sourced,
# POSIX sh. The caller sets SRC (source tree), SUITE (Debian suite),
# CACHE_DIR (persistent cache) and WORK (scratch directory) first.
#
#   pass/fail/note/summary   the PASS:/FAIL: lines and "N passed, M failed"
#   mirror                   the Debian mirror of this machine's apt sources
#   minbase_tarball          TARBALL: a debootstrap --variant=minbase tree,
#                            cached per suite and day
#   build_deb fresh|reuse    DEB: dpkg-buildpackage of HEAD (or the working
#                            tree); with "reuse", a .deb already built from
#                            the same HEAD tree is taken from the cache
# minbase_tarball and build_deb report their own PASS/FAIL and exit on failure.

passed=0
failed=0

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
note() { echo "# $*"; }
summary() { echo "$passed passed, $failed failed"; }

# The first URIs: of the first deb stanza in the machine's apt sources, or the
# first "deb URI bookworm" line of sources.list; never a hard-coded host.
mirror() {
	if [ -n "${TOPOTUNE_MIRROR:-}" ]; then
		echo "$TOPOTUNE_MIRROR"
		return
	fi
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$SUITE" '
			/^[[:space:]]*$/ { if (uri != "" && ok) { print uri; exit } uri = ""; ok = 0; next }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
			END { if (uri != "" && ok) print uri }' "$f" | head -n1
	done | head -n1 | grep . && return
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v suite="$SUITE" '$1 == "deb" && $0 ~ " " suite " " {
			for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; exit } }' "$f"
	done | head -n1
}

minbase_tarball() {
	MIRROR=$(mirror)
	if [ -z "$MIRROR" ]; then
		fail "no Debian mirror found in /etc/apt/sources.list* (set TOPOTUNE_MIRROR)"
		summary
		exit 1
	fi
	mkdir -p "$CACHE_DIR"
	TARBALL="$CACHE_DIR/debootstrap-$SUITE-minbase-$(date +%Y%m%d).tgz"
	if [ ! -s "$TARBALL" ]; then
		note "debootstrap $SUITE from $MIRROR into the cache (cold run)"
		if nice debootstrap --variant=minbase "$SUITE" "$WORK/boot" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
			rm -rf "$WORK/boot/var/cache/apt/archives/"*.deb
			# A private temporary name: two tests may fill the cache at once.
			tar -C "$WORK/boot" -czf "$TARBALL.$$.tmp" . && mv "$TARBALL.$$.tmp" "$TARBALL"
			rm -rf "${WORK:?}/boot"
			# Older days' tarballs of this suite are stale now.
			find "$CACHE_DIR" -maxdepth 1 -name "debootstrap-$SUITE-minbase-*.tgz" ! -path "$TARBALL" -delete
		else
			tail -n 20 "$WORK/debootstrap.log"
			fail "debootstrap $SUITE $MIRROR"
			summary
			exit 1
		fi
	fi
	pass "debootstrap tarball $TARBALL"
}

# The package, built from a copy of the tree (never in the clone: dpkg writes
# its results to the parent directory). A build of HEAD is kept in
# $CACHE_DIR/deb/TREE-ID/ (only the newest) so that a later test of the same
# tree can take it with "reuse".
build_deb() {
	if [ -n "${TOPOTUNE_DEB:-}" ]; then
		DEB=$TOPOTUNE_DEB
		return
	fi
	tree=""
	if [ "${TOPOTUNE_WORKTREE:-0}" != 1 ]; then
		tree=$(git -C "$SRC" rev-parse 'HEAD^{tree}')
		if [ "$1" = reuse ] && [ -d "$CACHE_DIR/deb/$tree" ]; then
			for DEB in "$CACHE_DIR/deb/$tree"/topotune_*.deb; do break; done
			if [ -f "$DEB" ]; then
				pass "package of tree $(echo "$tree" | cut -c1-12) from the cache ($(basename "$DEB"))"
				return
			fi
		fi
	fi
	mkdir -p "$WORK/src/topotune"
	# The committed tree (HEAD), not whatever is half-written in the clone;
	# TOPOTUNE_WORKTREE=1 takes the working tree (tracked and untracked files).
	if [ -z "$tree" ]; then
		(cd "$SRC" && git ls-files -z --cached --others --exclude-standard -- . |
			tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
			tar -C "$WORK/src/topotune" -xf -
	else
		git -C "$SRC" archive HEAD | tar -C "$WORK/src/topotune" -xf -
	fi
	if (cd "$WORK/src/topotune" &&
	    DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-nocheck}" \
	    nice dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1; then
		for DEB in "$WORK"/src/topotune_*.deb; do break; done
		pass "dpkg-buildpackage -us -uc -b ($(basename "$DEB"))"
	else
		tail -n 30 "$WORK/build.log"
		fail "dpkg-buildpackage -us -uc -b (log above)"
		summary
		exit 1
	fi
	if [ -n "$tree" ]; then
		d="$CACHE_DIR/deb"
		if mkdir -p "$d/.$tree.$$" && cp "$DEB" "$d/.$tree.$$/" && [ ! -d "$d/$tree" ]; then
			mv "$d/.$tree.$$" "$d/$tree"
		fi
		rm -rf "$d/.$tree.$$"
		# Only the newest tree's package is kept (dot names: builds in flight).
		for old in "$d"/*; do
			[ "$old" = "$d/$tree" ] || rm -rf "$old"
		done
	fi
}
