#!/bin/bash
# Fill the kernel cache ahead of the kernel tiers: the same fetch.sh,
# apply.sh and build.sh calls run-kernel-tier.sh will make, so that its
# build steps then find every bzImage cached.  tools/test.sh runs this in
# the background at the lowest priority while the agent's tiers run: those
# leave a core idle much of the time (tests waiting on a bus or a timer,
# Ansible, debootstrap), and on a fresh machine the kernel builds are the
# largest part of the run.
#
#   prepare-kernels.sh [--if-changed | --record]   (tools/test.sh's mode)
#
# What is prepared:
#   - 7.3 (the tier always runs in full): the baseline, the per-patch
#     compile check and the patched kernel, each with --systemd, as the
#     tier builds them;
#   - 6.12: what "run-kernel-tier.sh --series 6.12 --decide" says the tier
#     will run: nothing (skip), the per-patch compile check on the new
#     version (reduced), or the 7.3 set without the systemd fragment (full).
# The proofs are left to their own tier: their kernels are built from
# patches that run is the one to write, and a day's CI skips them or runs
# them reduced (no build).
#
# Nothing here is a check. A step that fails is logged and left to the
# tier, which runs it again and reports it. Keep the build.sh options in
# step with run-kernel-tier.sh: a kernel built with other options has
# another cache key, and the tier would build its own (slower, not wrong).
# Needs the host packages to build a kernel (run-kernel-tier.sh --no-deps
# does not install them; tools/test.sh does, before starting this).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kp="$here/../../kernel-patches"
mode=${1:-}
case "$mode" in
''|--if-changed|--record) ;;
*) echo "usage: $0 [--if-changed | --record]" >&2; exit 2 ;;
esac
export TOPOTUNE_KCACHE=${TOPOTUNE_KCACHE:-/var/cache/topotune/kernel}
export TOPOTUNE_JOBS=${TOPOTUNE_JOBS:-$(nproc)}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
start=$(date +%s)

step() {	# what cmd...: run, print what it took or how it failed
	local what=$1 t rc
	shift
	t=$(date +%s)
	"$@" >/dev/null
	rc=$?
	if [ $rc = 0 ]; then
		echo "# $what: $(($(date +%s) - t)) s"
	else
		echo "# $what: failed (exit $rc, after $(($(date +%s) - t)) s); the tier will redo it"
	fi
	return $rc
}

prepare() {	# series decision
	local series=$1 decision=$2 vfile
	local -a flavour=()
	export TOPOTUNE_KSERIES=$series
	unset TOPOTUNE_KVERSION
	[ "$series" != 7.3 ] || flavour=(--systemd)
	echo "# $series: $decision"
	case "$decision" in
	skip) return 0 ;;
	reduced)
		# As run-kernel-tier.sh: the version its decision was made on.
		TOPOTUNE_KVERSION=$("$kp/scripts/fetch.sh" --candidate 2>/dev/null) || return
		export TOPOTUNE_KVERSION
		step "$series fetch $TOPOTUNE_KVERSION" "$kp/scripts/fetch.sh" &&
			step "$series apply" "$kp/scripts/apply.sh" &&
			step "$series per-patch compile check" "$kp/scripts/build.sh" --check-each-only
		return
		;;
	esac
	vfile="$TOPOTUNE_KCACHE/current-version"
	[ "$series" = 7.3 ] || vfile="$TOPOTUNE_KCACHE/current-version-$series"
	# As run-kernel-tier.sh: a fetched source is used as it is.
	if [ ! -f "$vfile" ] || [ ! -f "$TOPOTUNE_KCACHE/src-$(cat "$vfile")/.unpacked" ]; then
		step "$series fetch" "$kp/scripts/fetch.sh" || return
	fi
	export TOPOTUNE_KVERSION
	TOPOTUNE_KVERSION=$(cat "$vfile")
	step "$series apply" "$kp/scripts/apply.sh" || return
	step "$series baseline bzImage" "$kp/scripts/build.sh" --base "${flavour[@]}"
	step "$series per-patch compile check, then the patched bzImage" \
		"$kp/scripts/build.sh" --check-each "${flavour[@]}"
	# Built by the step before unless a patch failed to compile on its own.
	step "$series patched bzImage" "$kp/scripts/build.sh" "${flavour[@]}"
}

prepare 7.3 full
d=$(TOPOTUNE_KVERSION='' "$here/run-kernel-tier.sh" --series 6.12 --decide ${mode:+"$mode"} 2>/dev/null) || d=""
case "$d" in
skip|reduced|full) prepare 6.12 "$d" ;;
*) echo "# 6.12: run-kernel-tier.sh --decide gave '$d'; left to the tier" ;;
esac
echo "# took $(($(date +%s) - start)) s"
