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
#   build.sh [--base] [--base-with PATCH] [--with PATCH] [--systemd]
#            [--lockdep] [--check-each | --check-each-only]
#     --base-with PATCH  the pristine tree plus one test-only patch that is
#                   not part of the series (tests/vm: the kernel with seed
#                   001's fix reverted), cached as base-<name>-<hash> (name:
#                   the patch's file name without .patch, hash also over its
#                   text)
#     --with PATCH  the same on top of the series: the patched tree with one
#                   of its fixes undone (tests/vm's negative kernels), cached
#                   as patched-<name>-<hash>
#                   Both build in the kind's own build directory: the patch
#                   is applied to the worktree, only the objects it touches
#                   are recompiled (minutes, not a full build), and it is
#                   taken out again when the build ends, also on failure.
#     --systemd     also merge config/systemd.config: a kernel that boots a
#                   Debian root with systemd as PID 1 from a virtio disk,
#                   without modules or initrd (tests/install/systemd-vm.sh);
#                   built in its own directory, cached as <kind>-systemd-<hash>
#     --lockdep     also merge config/lockdep.config (PROVE_LOCKING,
#                   PROVE_RCU, DEBUG_ATOMIC_SLEEP): its own directory, cached
#                   as <kind>-lockdep-<hash>
#     --check-each  compile the objects each patch touches after each patch
#     --check-each-only  that check alone, no bzImage (run-kernel-tier.sh's
#                   reduced run when only Debian's version changed): the
#                   series' own tree, no other option; prints the path of
#                   the per-patch compile stamp instead of an image
#     --image-path  print where the image of this kind is (or would be)
#                   cached, and nothing else: no lock, no build
#
# One build or apply at a time per version ($KCACHE/.tree-<version>.lock,
# tree_lock in lib.sh): a --with build changes a worktree's files while it
# runs, and apply.sh may re-apply the series under a reader.  A cached image
# is printed without waiting for that lock.
#
# The patched build cannot start from the baseline's objects: the series
# adds fields to struct rq, which moves RQ_nr_pinned in the generated
# rq-offsets.h that <linux/sched.h> includes, so almost every object
# (1,204 of 1,259 on 7.3.4) is compiled again either way.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kind=patched
check_each=0
check_only=0
image_path=0
with=""
flavour=""
fragments=("$KP_DIR/config/topotune-qemu.config")
# What one base needs on top (symbols renamed between kernel versions).
[ ! -f "$KP_DIR/$KSERIES/qemu.config" ] || fragments+=("$KP_DIR/$KSERIES/qemu.config")
for a in "$@"; do
	case "$a" in
	--base) kind=base ;;
	--base-with) with=1 kind=base ;;
	--with) with=1 ;;
	*.patch) [ "$with" = 1 ] || die "unknown argument $a"; with=$a ;;
	--systemd) flavour=-systemd; fragments+=("$KP_DIR/config/systemd.config") ;;
	--lockdep) flavour=-lockdep; fragments+=("$KP_DIR/config/lockdep.config") ;;
	--check-each) check_each=1 ;;
	--check-each-only) check_each=1 check_only=1 ;;
	--image-path) image_path=1 ;;
	*) die "unknown argument $a" ;;
	esac
done

[ "$check_only" = 0 ] || { [ "$kind" = patched ] && [ -z "$with" ] && [ -z "$flavour" ]; } ||
	die "--check-each-only checks the series' own tree: no --base, --with or config flavour"
ver=$(kernel_version)
chash=$(config_hash)
[ ${#fragments[@]} = 1 ] || chash=$(cat "${fragments[@]}" | sha256sum | cut -c1-16)
if [ "$kind" = base ]; then
	hash=$(printf '%s\n%s\n' "$ver" "$chash" | sha256sum | cut -c1-16)
else
	hash=$(printf '%s\n%s\n' "$(series_hash "$ver")" "$chash" | sha256sum | cut -c1-16)
fi
out="$KCACHE/build-$ver-$kind$flavour"
name=$kind
if [ -n "$with" ]; then
	[ -f "$with" ] || die "--with/--base-with needs a .patch file"
	name=$kind-$(basename "$with" .patch)
	hash=$( { echo "$hash"; cat "$with"; } | sha256sum | cut -c1-16)
fi
img="$KCACHE/images/$name$flavour-$hash"
stamp="$KCACHE/percommit-ok-$hash"
[ "$image_path" = 0 ] || { echo "$img/bzImage"; exit 0; }

cached() {
	if [ "$check_only" = 1 ]; then
		[ -f "$stamp" ]
		return
	fi
	[ -f "$img/bzImage" ] && { [ "$check_each" = 0 ] || [ "$kind" = base ] || [ -f "$stamp" ]; }
}
print_cached() {	# [why]
	if [ "$check_only" = 1 ]; then
		log "per-patch compile check cached ($stamp)${1:+ ($1)}"
		echo "$stamp"
	else
		log "cached $name$flavour image $img/bzImage${1:+ ($1)}"
		echo "$img/bzImage"
	fi
}
if cached; then
	print_cached
	exit 0
fi
tree_lock
cached && { print_cached "built while waiting"; exit 0; }

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
[ "$check_only" = 0 ] || { echo "$stamp"; exit 0; }

if [ -f "$img/bzImage" ]; then
	log "cached $name$flavour image $img/bzImage"
	echo "$img/bzImage"
	exit 0
fi

if [ "$kind" = base ]; then
	tree=$("$KP_DIR/scripts/apply.sh" --base)
	# A build killed while a test-only patch was applied left it there.
	if ! git -C "$tree" diff --quiet HEAD; then
		log "note: $tree had local changes (an interrupted --base-with build?); reset"
		git -C "$tree" checkout -q -f HEAD
	fi
else
	# apply.sh re-applies the series to a worktree with local changes.
	tree=$("$KP_DIR/scripts/apply.sh")
fi
if [ -n "$with" ]; then
	git -C "$tree" apply --check "$with" >&2 || die "$with does not apply to the $kind tree of $ver"
	trap 'git -C "$tree" apply -R "$with" >&2 || git -C "$tree" checkout -q -f HEAD' EXIT
	git -C "$tree" apply "$with" >&2
fi
configure "$tree"
log "building $name$flavour bzImage for $ver in $out"
start=$(date +%s)
nice make -s -C "$tree" O="$out" ARCH=x86_64 -j"$JOBS" bzImage >&2
mkdir -p "$img"
cp "$out/arch/x86/boot/bzImage" "$img/bzImage.tmp"
cp "$out/.config" "$img/config"
mv "$img/bzImage.tmp" "$img/bzImage"
log "built $name$flavour in $(( $(date +%s) - start ))s"
echo "$img/bzImage"
