#!/bin/bash
# Turn the unpacked source into a cached pristine git tree (tag "base") and
# apply the series with "git am" onto branch "topotune" in a worktree.
# The worktree is re-applied only when the code of the series changes
# (series_hash in lib.sh); on every other run the full patch files are
# "git am"ed into a throwaway sparse worktree and, if only the changelogs
# changed, the new commits take the old ones' place without touching a file.
#
#   apply.sh            -> prints the path of the patched worktree
#   apply.sh --base     -> prints the path of the pristine worktree
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(kernel_version)
tree_lock
src="$KCACHE/src-$ver/linux"
repo="$KCACHE/git-$ver"
[ -d "$src" ] || die "$src missing; run fetch.sh"

export GIT_AUTHOR_NAME="topotune developers" GIT_AUTHOR_EMAIL="dev@topotune.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"

if ! git -C "$repo" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
	log "creating pristine git tree for $ver in $repo (one-off)"
	rm -rf "$repo"
	git init -q "$repo"
	git -C "$repo" config core.bigFileThreshold 10m
	git -C "$repo" config gc.auto 0
	(cd "$src" && git --git-dir="$repo/.git" --work-tree=. add -f -A . &&
		git --git-dir="$repo/.git" --work-tree=. commit -q -m "Debian $KPKG $ver")
	git -C "$repo" tag base
	git -C "$repo" worktree add -q "$KCACHE/tree-$ver-base" base 2>/dev/null ||
		git -C "$repo" worktree add -q --detach "$KCACHE/tree-$ver-base" base
fi

if [ "${1:-}" = "--base" ]; then
	echo "$KCACHE/tree-$ver-base"
	exit 0
fi

wt="$KCACHE/tree-$ver-patched"
if [ ! -d "$wt" ]; then
	git -C "$repo" worktree add -q -B topotune "$wt" base >&2
fi

patches=()
while read -r p; do
	patches+=("$p")
done < <(series_patches)

# "git am" of the full patch files (changelogs included) into a throwaway
# sparse worktree that holds only the files the series touches: a few
# seconds, and the patched worktree's files are not touched.  Prints the
# resulting commit.
am_check() {
	local tmp files rc=0
	if [ ${#patches[@]} -eq 0 ]; then
		git -C "$repo" rev-parse base
		return
	fi
	tmp=$(mktemp -d "$KCACHE/am-check.XXXXXX")
	files=$(cat "${patches[@]}" | sed -n 's#^diff --git a/\(.*\) b/\(.*\)$#/\1\n/\2#p' | sort -u)
	git -C "$repo" worktree add -q --detach --no-checkout "$tmp/wt" base >&2 &&
	git -C "$tmp/wt" sparse-checkout set --no-cone $files >&2 &&
	git -C "$tmp/wt" checkout -q --detach base >&2 &&
	git -C "$tmp/wt" am -q --committer-date-is-author-date "${patches[@]}" >&2 &&
	git -C "$tmp/wt" rev-parse HEAD || rc=1
	git -C "$repo" worktree remove --force "$tmp/wt" >&2 || true
	rm -rf "$tmp"
	git -C "$repo" worktree prune >&2
	return $rc
}

# The applied tree is keyed by the code of the series (series_hash): a
# changelog-only change must not re-apply, as that would touch every
# patched file and force a rebuild.  The full patches are still "git am"ed
# on every run, in am_check, and the new commits (same tree, new messages)
# replace the old ones with a soft reset.
stamp="$wt/.topotune-series"
fstamp="$wt/.topotune-series-full"
want=$(series_hash "$ver")
full=$(series_full_hash "$ver")
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ "$(git -C "$wt" symbolic-ref -q --short HEAD)" = topotune ] &&
   git -C "$wt" diff --quiet HEAD; then
	head=$(am_check) || die "git am failed on $ver"
	[ "$(git -C "$wt" rev-parse HEAD^{tree})" = "$(git -C "$repo" rev-parse "$head^{tree}")" ] ||
		die "series $want applied to a different tree than in $wt"
	if [ "$(git -C "$wt" rev-parse HEAD)" != "$head" ]; then
		git -C "$wt" reset -q --soft "$head"
		log "changelogs updated in $wt (code unchanged)"
	fi
	echo "$full" >"$fstamp"
	log "series $want (full $full) applied in $wt; git am of the full patches checked"
	echo "$wt"
	exit 0
fi
rm -f "$stamp" "$fstamp"
git -C "$wt" am --abort >/dev/null 2>&1 || true
git -C "$wt" checkout -q -f -B topotune base
if [ ${#patches[@]} -gt 0 ]; then
	git -C "$wt" am -q --committer-date-is-author-date "${patches[@]}" >&2 ||
		die "git am failed on $ver"
fi
echo "$want" >"$stamp"
echo "$full" >"$fstamp"
log "applied ${#patches[@]} patches onto $ver"
echo "$wt"
