#!/bin/bash
# Build a bzImage for the pristine tree (--base) or the patched tree,
# out of tree, and cache it by content hash outside the clone:
#   $KCACHE/images/<kind>-<hash>/bzImage
# where the hash covers the source version, the config fragment(s) and (for
# the patched kind) the code of the series: series_hash in lib.sh, the
# series file and each patch from its first "diff --git" to git's "-- "
# signature line, so a changelog-only edit keeps every cached image and the
# per-patch compile stamp.  Prints the path of the cached bzImage.
#
#   build.sh [--base] [--base-with PATCH] [--systemd] [--check-each]
#     --base-with PATCH  the pristine tree plus one test-only patch that is
#                   not part of the series (tests/vm: the kernel with seed
#                   001's fix reverted), in its own worktree and build
#                   directory, cached as base-<name>-<hash> (name: the
#                   patch's file name without .patch, hash also over its text)
#     --systemd     also merge config/systemd.config: a kernel that boots a
#                   Debian root with systemd as PID 1 from a virtio disk,
#                   without modules or initrd (tests/install/systemd-vm.sh);
#                   built in its own directory, cached as <kind>-systemd-<hash>
#     --check-each  compile the objects each patch touches after each patch
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kind=patched
check_each=0
with=""
flavour=""
fragments=("$KP_DIR/config/topotune-qemu.config")
# What one base needs on top (symbols renamed between kernel versions).
[ ! -f "$KP_DIR/$KSERIES/qemu.config" ] || fragments+=("$KP_DIR/$KSERIES/qemu.config")
for a in "$@"; do
	case "$a" in
	--base) kind=base ;;
	--base-with) with=1 ;;
	*.patch) [ "$with" = 1 ] || die "unknown argument $a"; with=$a ;;
	--systemd) flavour=-systemd; fragments+=("$KP_DIR/config/systemd.config") ;;
	--check-each) check_each=1 ;;
	*) die "unknown argument $a" ;;
	esac
done

ver=$(kernel_version)
chash=$(config_hash)
[ ${#fragments[@]} = 1 ] || chash=$(cat "${fragments[@]}" | sha256sum | cut -c1-16)
if [ -n "$with" ]; then
	[ -f "$with" ] || die "--base-with needs a .patch file"
	kind=base-$(basename "$with" .patch)
	hash=$( { printf '%s\n%s\n' "$ver" "$chash"; cat "$with"; } | sha256sum | cut -c1-16)
elif [ "$kind" = base ]; then
	hash=$(printf '%s\n%s\n' "$ver" "$chash" | sha256sum | cut -c1-16)
else
	hash=$(printf '%s\n%s\n' "$(series_hash "$ver")" "$chash" | sha256sum | cut -c1-16)
fi
img="$KCACHE/images/$kind$flavour-$hash"
out="$KCACHE/build-$ver-$kind$flavour"

configure() {
	local tree=$1
	mkdir -p "$out"
	if [ ! -f "$out/.config" ] || ! cat "${fragments[@]}" | cmp -s "$out/.fragment" -; then
		nice make -s -C "$tree" O="$out" ARCH=x86_64 tinyconfig >&2
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
			"${fragments[@]}" >&2
		nice make -s -C "$tree" O="$out" ARCH=x86_64 olddefconfig >&2
		cat "${fragments[@]}" >"$out/.fragment"
		local missing
		missing=$(cat "${fragments[@]}" | grep -E '^CONFIG_[A-Z0-9_]+=y' |
			while read -r l; do grep -qxF "$l" "$out/.config" || echo "${l%%=*}"; done)
		[ -z "$missing" ] || log "note: not set in final config: $(echo $missing)"
	fi
}

# Objects a patch touches: each changed .c file's .o.  kernel/sched/ is
# compiled as a whole (its .c files are #included by build_*.c and do not
# build on their own), which also covers the scheduler headers.
objects_of() {
	local tree=$1 rev=$2
	git -C "$tree" diff --name-only "$rev^" "$rev" |
		awk '/\.c$/ && !/^kernel\/sched\// { sub(/\.c$/, ".o"); print }'
}

if [ "$check_each" = 1 ] && [ "$kind" = patched ]; then
	stamp="$KCACHE/percommit-ok-$hash"
	if [ -f "$stamp" ]; then
		log "per-patch compile check cached ($stamp)"
	else
		tree=$("$KP_DIR/scripts/apply.sh")
		configure "$tree"
		for rev in $(git -C "$tree" rev-list --reverse base..topotune); do
			subj=$(git -C "$tree" log -1 --format=%s "$rev")
			git -C "$tree" checkout -q "$rev"
			objs=$(objects_of "$tree" "$rev" | tr '\n' ' ')
			log "compile check: $subj: $objs kernel/sched/ arch/x86/kernel/smpboot.o"
			nice make -s -C "$tree" O="$out" ARCH=x86_64 -j"$JOBS" \
				$objs kernel/sched/ arch/x86/kernel/smpboot.o >&2 ||
				die "patch does not build on its own: $subj"
		done
		git -C "$tree" checkout -q topotune
		touch "$stamp"
	fi
fi

if [ -f "$img/bzImage" ]; then
	log "cached $kind image $img/bzImage"
	echo "$img/bzImage"
	exit 0
fi

if [ -n "$with" ]; then
	# a detached worktree at the pristine commit with the patch on top,
	# re-made when the patch changes
	repo="$KCACHE/git-$ver"
	"$KP_DIR/scripts/apply.sh" --base >/dev/null
	tree="$KCACHE/tree-$ver-$kind"
	if [ ! -d "$tree" ]; then
		git -C "$repo" worktree add -q --detach "$tree" base >&2
	fi
	if ! cmp -s "$with" "$tree/.topotune-with"; then
		git -C "$tree" checkout -q -f base >&2
		git -C "$tree" apply "$with" >&2 || die "$with does not apply to $ver"
		cp "$with" "$tree/.topotune-with"
	fi
elif [ "$kind" = base ]; then
	tree=$("$KP_DIR/scripts/apply.sh" --base)
else
	tree=$("$KP_DIR/scripts/apply.sh")
fi
configure "$tree"
log "building $kind bzImage for $ver in $out"
start=$(date +%s)
nice make -s -C "$tree" O="$out" ARCH=x86_64 -j"$JOBS" bzImage >&2
mkdir -p "$img"
cp "$out/arch/x86/boot/bzImage" "$img/bzImage.tmp"
cp "$out/.config" "$img/config"
mv "$img/bzImage.tmp" "$img/bzImage"
log "built $kind in $(( $(date +%s) - start ))s"
echo "$img/bzImage"
