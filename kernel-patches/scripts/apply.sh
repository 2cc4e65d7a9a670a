#!/bin/bash
# Turn the unpacked source into a cached pristine git tree (tag "base") and
# apply the series with "git am" onto branch "topotune" in a worktree.
#
#   apply.sh            -> prints the path of the patched worktree
#   apply.sh --base     -> prints the path of the pristine worktree
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(kernel_version)
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
# Re-applying would touch every patched file and force a full rebuild.
stamp="$wt/.topotune-series"
want=$(series_hash "$ver")
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ "$(git -C "$wt" symbolic-ref -q --short HEAD)" = topotune ] &&
   git -C "$wt" diff --quiet HEAD; then
	log "series $want already applied in $wt"
	echo "$wt"
	exit 0
fi
rm -f "$stamp"
git -C "$wt" am --abort >/dev/null 2>&1 || true
git -C "$wt" checkout -q -f -B topotune base
patches=()
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	patches+=("$KP_DIR/$KSERIES/$p")
done <"$KP_DIR/$KSERIES/series"
if [ ${#patches[@]} -gt 0 ]; then
	git -C "$wt" am -q --committer-date-is-author-date "${patches[@]}" >&2 ||
		die "git am failed on $ver"
fi
echo "$want" >"$stamp"
log "applied ${#patches[@]} patches onto $ver"
echo "$wt"
