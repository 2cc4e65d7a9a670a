#!/bin/bash
# topotune kernel tier: fetch the base's Debian kernel source (if not
# cached), apply the series, checkpatch every patch, compile every patch on
# its own, build the baseline and patched bzImages (cached by the code of the
# series, see series_hash in kernel-patches/scripts/lib.sh), boot both under
# qemu TCG on three topologies and check the results.  "git am" and
# checkpatch read the full patch files and run on every run, also when
# everything is cached.
#
#   run-kernel-tier.sh [--series S] [--quick] [--no-deps] [--save-expected]
#                      [--race] [--if-changed] [--record] [--proofs]
#                      [--decide] [--inputs-hash VERSION]
#     --series S       the base: kernel-patches/S (7.3, the default, or 6.12;
#                      also TOPOTUNE_KSERIES)
#     --quick          skip the per-patch compile check
#     --no-deps        do not apt-get install missing host packages
#     --save-expected  rewrite tests/vm/expected/ (7.3) or
#                      tests/vm/expected/S/ from this run
#     --race           also boot the patched kernel once with parallel TCG
#                      vCPUs (thread=multi) for the guest's "race" step and
#                      print its counts as INFO lines (not counted: whether
#                      the race is hit is chance, see tests/vm/README.md)
#     --if-changed     run only if the tier's inputs for this base differ
#                      from the last recorded full pass, and only a reduced
#                      run if nothing but Debian's version changed (below)
#     --record         after a full run (not --quick) with no failure, write
#                      that record
#     --decide         print what the other options would run - "skip",
#                      "reduced" or "full" - and exit (no fetch, no build;
#                      the apt update of --candidate unless
#                      TOPOTUNE_KVERSION pins the version)
#     --inputs-hash V  print the content hash of the inputs with Debian
#                      version V (a record's "inputs") and exit
#     --proofs         instead of the tier: the proofs that the
#                      tier's behavioural checks can fail, and the lock
#                      checking boot.  Kernels, each booted on hygon3 with
#                      the step that checks it:
#                       - the base with seed 001's fix reverted
#                         (update_sg_wakeup_stats() counting every CPU of a
#                         group again; build.sh --base-with): the placement
#                         check must fail there;
#                       - the patched tree with one guard undone
#                         (check.py NEGATIVES; build.sh --with, an
#                         incremental build): the delayed-sleeper check must
#                         fail without the delayed-dequeue filter, the
#                         busy-sibling check without the idle tests, and
#                         the re-check under the target's lock must keep the
#                         busy sibling busy on its own, and the idle-core
#                         check must fail without the push's idle-core step;
#                       - the patched kernel with PROVE_LOCKING, PROVE_RCU
#                         and DEBUG_ATOMIC_SLEEP (build.sh --lockdep) running
#                         the push, spread, softirq, delayed, busy-target
#                         and relax steps: no splat, debug_locks still 1.
#                      Its record is expected/proofs-last-pass (6.12:
#                      expected/6.12/proofs-last-pass; the edits there are
#                      NEGATIVES' "edits-6.12" where the backport differs);
#                      tools/test.sh runs both with --if-changed.
#     --seed001-negative the same as --proofs (its old name)
#
# The record: a full run with --record that ends with no failure writes
# tests/vm/expected/S/last-pass (7.3: tests/vm/expected/last-pass): the
# content hash of the tier's inputs - the Debian version fetch.sh would take
# now, kernel-patches/S/, kernel-patches/scripts/, the qemu config fragment,
# this script, check.py, guest/, mkinitramfs.sh, the private bus config and
# the expected layouts - the version and the result. Commit it with the
# change that was tested. With --if-changed a run whose inputs hash to the
# recorded value prints "SKIP" and "0 passed, 0 failed" instead of building
# and booting; the agent binaries are not among the inputs (the planner is
# checked against the expected layouts by the meson test guest-layouts,
# every run).
#
# The reduced run: when the inputs hashed with the record's own version
# still give the recorded value, no file changed and only the version
# fetch.sh would take moved (Debian published a new point release). Then
# --if-changed neither skips nor runs the whole tier (two kernel builds and
# the boots, 25 min cold): it fetches the new version, "git am"s the
# series onto it, runs checkpatch (seconds; checkpatch.pl comes with the
# new tree) and compiles the objects each patch touches after each patch
# (build.sh --check-each-only; not for --proofs: the 7.3 tier compiles the
# series on every run). --proofs instead writes the seed 001 revert and
# each negative kernel's edit against the new trees (negative-patch-NAME
# fails when the guarded code moved) and builds and boots none of them.
# Either ends with a SKIP line saying that the kernels' behaviour was last
# proven on the recorded version (and when), and that
# "TOPOTUNE_RECORD=1 tools/test.sh" re-proves it at the new one. A reduced
# run never writes the record. No record, or a file changed: the full run.
#
# Environment: TOPOTUNE_KCACHE (cache, default /var/cache/topotune/kernel),
# TOPOTUNE_KVERSION (pin a fetched Debian version), TOPOTUNE_JOBS,
# TOPOTUNE_BUILDDIR (meson build dir with the agent, for the agent checks in
# the guest; default build-ci, else build, in the repository).
#
# Prints one "PASS name" / "FAIL name: why" line per check and finally
# "N passed, M failed"; exits non-zero if any check failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kp="$here/../../kernel-patches"
quick=0 deps=1 save=0 race=0 ifchanged=0 recordpass=0 proofs=0 decideonly=0 hashof=""
reduced=0
series=${TOPOTUNE_KSERIES:-7.3}
while [ $# -gt 0 ]; do
	case "$1" in
	--series) series=${2:?}; shift ;;
	--quick) quick=1 ;;
	--no-deps) deps=0 ;;
	--save-expected) save=1 ;;
	--race) race=1 ;;
	--if-changed) ifchanged=1 ;;
	--record) recordpass=1 ;;
	--proofs|--seed001-negative) proofs=1 ;;
	--decide) decideonly=1 ;;
	--inputs-hash) hashof=${2:?}; shift ;;
	*) echo "usage: $0 [--series S] [--quick] [--no-deps] [--save-expected] [--race] [--if-changed] [--record] [--proofs] [--decide] [--inputs-hash VERSION]" >&2; exit 2 ;;
	esac
	shift
done
[ -f "$kp/$series/series" ] || { echo "no kernel-patches/$series/series" >&2; exit 2; }
export TOPOTUNE_KSERIES=$series

export TOPOTUNE_KCACHE=${TOPOTUNE_KCACHE:-/var/cache/topotune/kernel}
export TOPOTUNE_JOBS=${TOPOTUNE_JOBS:-$(nproc)}
# Debian's python3 (python3-ply, python3-git) for checkpatch's spdxcheck.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
start=$(date +%s)
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
note() { echo "# $*" >&2; }
finish() {
	note "elapsed $(( $(date +%s) - start ))s"
	echo "$passed passed, $failed failed"
	if [ "$recordpass" = 1 ] && [ "$failed" = 0 ] && [ "$quick" = 0 ] && [ "$save" = 0 ] &&
	   [ "$reduced" = 0 ] && [ -n "${ver:-}" ]; then
		printf 'inputs %s\nversion %s\nresult %s passed, 0 failed\ndate %s\nelapsed %ss\n' \
			"$(inputs_hash "$ver")" "$ver" "$passed" "$(date -u +%Y-%m-%d)" \
			"$(( $(date +%s) - start ))" >"$record"
		note "recorded the pass in $record (commit it)"
	fi
	[ "$failed" = 0 ]
	exit
}

run_logged() {	# name logfile cmd...: run, keep output in logfile
	local name=$1 logf=$2
	shift 2
	if "$@" >"$logf.out" 2>"$logf"; then
		return 0
	fi
	tail -n 20 "$logf" | sed 's/^/#   /' >&2
	return 1
}

# --- inputs unchanged since the recorded pass? -------------------------------
repo=$(cd "$here/../.." && pwd)
expected="$here/expected"
[ "$series" = 7.3 ] || expected="$here/expected/$series"
record="$expected/last-pass"
[ "$proofs" = 0 ] || record="$expected/proofs-last-pass"
inputs_hash() {	# VERSION: the content hash of what this tier run depends on
	{
		echo "version $1"
		cd "$repo" && find "kernel-patches/$series" kernel-patches/scripts \
			kernel-patches/config/topotune-qemu.config kernel-patches/config/lockdep.config \
			kernel-patches/config/systemd.config \
			tests/vm/run-kernel-tier.sh \
			tests/vm/check.py tests/vm/guest tests/vm/mkinitramfs.sh tests/private-bus.conf \
			-type f | sort | xargs sha256sum
		find "$expected" -maxdepth 1 -name '*.txt' -type f | sort | xargs -r cat
	} | sha256sum | cut -c1-16
}
if [ -n "$hashof" ]; then
	inputs_hash "$hashof"
	exit 0
fi
# decide: sets decision (skip, reduced or full), why, cand (the version
# fetch.sh would take) and recver (the recorded version).
decide() {
	local rin
	decision=full cand="" recver=""
	if [ "$ifchanged" = 0 ]; then
		why="no --if-changed"
		return
	fi
	cand=$(TOPOTUNE_KSERIES=$series "$kp/scripts/fetch.sh" --candidate 2>/dev/null) || cand=""
	if [ -z "$cand" ]; then
		why="no candidate version (fetch.sh --candidate failed)"
		return
	fi
	if [ ! -f "$record" ]; then
		why="no record $record"
		return
	fi
	rin=$(sed -n 's/^inputs //p' "$record")
	recver=$(sed -n 's/^version //p' "$record")
	if [ -n "$rin" ] && [ "$rin" = "$(inputs_hash "$cand")" ]; then
		decision=skip why="inputs unchanged since the recorded pass"
	elif [ -n "$rin" ] && [ -n "$recver" ] && [ "$recver" != "$cand" ] &&
	     [ "$rin" = "$(inputs_hash "$recver")" ]; then
		decision=reduced why="only Debian's version changed since the recorded pass ($recver -> $cand)"
	else
		why="inputs changed since the recorded pass"
	fi
}
decide
if [ "$decideonly" = 1 ]; then
	note "$why"
	echo "$decision"
	exit 0
fi
case "$decision" in
skip)
	echo "SKIP kernel-tier-$series: inputs unchanged since the recorded pass ($(sed -n 's/^result //p' "$record"), $(sed -n 's/^date //p' "$record"); $cand; $record)"
	echo "0 passed, 0 failed"
	exit 0
	;;
reduced)
	# The version the decision was made on, not the newest one in the cache.
	note "$why: the reduced run (no kernel build, no boot)"
	reduced=1
	export TOPOTUNE_KVERSION=$cand
	;;
*)
	[ "$ifchanged" = 0 ] || note "$why (or no record, or no candidate version): running"
	;;
esac

# --- host dependencies ----------------------------------------------------
if [ "$deps" = 1 ]; then
	need=()
	command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
	[ -x /bin/busybox ] && file -L /bin/busybox 2>/dev/null | grep -q static || need+=(busybox-static)
	command -v gcc >/dev/null && command -v make >/dev/null || need+=(build-essential)
	for p in bc bison flex cpio git python3 xz-utils file util-linux rt-tests stress-ng \
		 libelf-dev libssl-dev python3-ply python3-git debian-archive-keyring; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
	done
	if [ ${#need[@]} -gt 0 ]; then
		note "installing ${need[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2 ||
			{ apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive \
				apt-get install -y -q --no-install-recommends "${need[@]}" >&2; } ||
			{ fail host-deps "apt-get install ${need[*]} failed"; finish; }
	fi
fi

logs="$TOPOTUNE_KCACHE/logs"
[ "$series" = 7.3 ] || logs="$TOPOTUNE_KCACHE/logs/$series"
mkdir -p "$logs"
# Where fetch.sh records this base's version (kernel-patches/scripts/lib.sh).
vfile="$TOPOTUNE_KCACHE/current-version"
[ "$series" = 7.3 ] || vfile="$TOPOTUNE_KCACHE/current-version-$series"

# --- fetch ------------------------------------------------------------------
if [ -z "${TOPOTUNE_KVERSION:-}" ] && [ -f "$vfile" ] &&
   [ -f "$TOPOTUNE_KCACHE/src-$(cat "$vfile")/.unpacked" ]; then
	pass "fetch (cached $(cat "$vfile"))"
elif run_logged fetch "$logs/fetch.log" "$kp/scripts/fetch.sh"; then
	pass "fetch ($(cat "$vfile"))"
else
	fail fetch "see $logs/fetch.log"; finish
fi
ver=$(cat "$vfile")
export TOPOTUNE_KVERSION=$ver
# The 7.3 kernels (base, patched and the test-only variants of each) are
# built with config/systemd.config as well: tests/install/systemd-vm.sh
# boots the patched one under systemd, so CI builds one patched 7.3 kernel
# for both tiers, not two (a cold build is about ten minutes here). The
# additions (virtio disk, ext4, namespaces, cgroup controllers) do not
# change the domains; with every task in the root cgroup, FAIR_GROUP_SCHED
# does not change what the steps measure either. The lockdep kernel keeps
# the plain fragment: it is a build of its own either way.
flavour=()
[ "$series" != 7.3 ] || flavour=(--systemd)

# --- apply ------------------------------------------------------------------
if run_logged apply "$logs/apply.log" "$kp/scripts/apply.sh"; then
	tree=$(cat "$logs/apply.log.out")
	pass "apply-series-git-am ($(wc -l <"$kp/$series/series") patches on $ver)"
else
	fail apply-series-git-am "see $logs/apply.log"; finish
fi
basetree=$("$kp/scripts/apply.sh" --base 2>/dev/null)

# --- checkpatch -------------------------------------------------------------
# Always, --quick included: it reads the changelogs, which the build cache
# key leaves out, and takes seconds.  The Debian tree has no upstream
# history, so checkpatch cannot look up the commit ids that changelogs cite
# (UNKNOWN_COMMIT_ID; they are copied from the tip-bot2 and stable mails,
# kernel-patches/README.md); everything else counts. A stable-style backport
# ("commit <sha> upstream." first line) is upstream's code unchanged: its
# findings are upstream's and are printed, only errors fail it.
# A patch exported without a person's sign-off (export.sh: the exporting
# identity is not a person, coding-assistants.rst) carries "Assisted-by:"
# and no Signed-off-by; the person who posts it adds theirs. checkpatch runs
# with --no-signoff on those only, and they must say Assisted-by.
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	opts=(--strict -q --ignore UNKNOWN_COMMIT_ID)
	if ! grep -q '^Signed-off-by: ' "$kp/$series/$p"; then
		if ! grep -q '^Assisted-by: ' "$kp/$series/$p"; then
			fail "checkpatch-${p%%-*}" "neither Signed-off-by nor Assisted-by"
			continue
		fi
		opts+=(--no-signoff)
	fi
	out=$(cd "$tree" && ./scripts/checkpatch.pl "${opts[@]}" "$kp/$series/$p" 2>&1)
	if grep -qE '^commit [0-9a-f]{40} upstream\.$' "$kp/$series/$p"; then
		echo "$out" | grep -E '^(WARNING|CHECK)' | sed "s/^/# ${p%%-*} (upstream code): /" >&2
		if echo "$out" | grep -q '^ERROR'; then
			fail "checkpatch-${p%%-*}-backport-no-errors" "$(echo "$out" | grep '^ERROR' | head -3 | tr '\n' ' ')"
		else
			pass "checkpatch-${p%%-*}-backport-no-errors"
		fi
	elif [ -z "$out" ]; then
		pass "checkpatch-${p%%-*}"
	else
		fail "checkpatch-${p%%-*}" "$(echo "$out" | grep -E '^(WARNING|ERROR|CHECK)' | head -3 | tr '\n' ' ')"
	fi
done <"$kp/$series/series"

# --- seed 001 is in the base source -----------------------------------------
if awk '/^static inline void update_sg_wakeup_stats/,/^}/' "$basetree/kernel/sched/fair.c" |
	grep -qF 'for_each_cpu_and(i, sched_group_span(group), p->cpus_ptr)'; then
	pass seed001-fix-present-in-base-source
else
	fail seed001-fix-present-in-base-source "update_sg_wakeup_stats() does not iterate p->cpus_ptr"
fi

# --- the kernel without seed 001's fix (--proofs) ----------------------------
# The base tree with upstream 82d6e01a0699 undone: update_sg_wakeup_stats()
# iterates every CPU of the group again, not only the task's.
if [ "$proofs" = 1 ]; then
	neg=$(mktemp -d)
	mkdir -p "$neg/a/kernel/sched" "$neg/b/kernel/sched"
	cp "$basetree/kernel/sched/fair.c" "$neg/a/kernel/sched/fair.c"
	awk '/^static inline void update_sg_wakeup_stats/ { f = 1 }
	     f && sub(/for_each_cpu_and\(i, sched_group_span\(group\), p->cpus_ptr\)/,
		      "for_each_cpu(i, sched_group_span(group))") { f = 0 }
	     { print }' "$neg/a/kernel/sched/fair.c" >"$neg/b/kernel/sched/fair.c"
	(cd "$neg" && diff -u --label a/kernel/sched/fair.c --label b/kernel/sched/fair.c \
		a/kernel/sched/fair.c b/kernel/sched/fair.c) >"$logs/seed001-revert.patch"
	rm -rf "$neg"
	if [ -s "$logs/seed001-revert.patch" ]; then
		pass seed001-revert-patch
	else
		fail seed001-revert-patch "the fix's loop is not in update_sg_wakeup_stats()"; finish
	fi
	if [ "$reduced" = 1 ]; then
		:
	elif run_logged base-with "$logs/build-seed001-revert.log" "$kp/scripts/build.sh" \
		--base-with "$logs/seed001-revert.patch" "${flavour[@]}"; then
		kseed=$(cat "$logs/build-seed001-revert.log.out"); pass build-seed001-reverted-bzImage
	else
		fail build-seed001-reverted-bzImage "see $logs/build-seed001-revert.log"; finish
	fi
	# The negative kernels: the patched tree with one guard undone
	# (check.py NEGATIVES), each an incremental build.
	declare -A kneg=()
	for name in delayed-filter busy-target recheck-only idle-core-path; do
		neg=$(mktemp -d)
		mkdir -p "$neg/a/kernel/sched" "$neg/b/kernel/sched"
		cp "$tree/kernel/sched/fair.c" "$neg/a/kernel/sched/fair.c"
		if TT_SERIES=$series /usr/bin/python3 "$here/check.py" --negative-source "$name" \
			"$neg/a/kernel/sched/fair.c" "$neg/b/kernel/sched/fair.c" 2>"$logs/negative-$name.err"; then
			(cd "$neg" && diff -u --label a/kernel/sched/fair.c --label b/kernel/sched/fair.c \
				a/kernel/sched/fair.c b/kernel/sched/fair.c) >"$logs/negative-$name.patch"
			pass "negative-patch-$name"
		else
			fail "negative-patch-$name" "$(cat "$logs/negative-$name.err")"
			rm -rf "$neg"
			continue
		fi
		rm -rf "$neg"
		[ "$reduced" = 0 ] || continue
		if run_logged "neg-$name" "$logs/build-negative-$name.log" "$kp/scripts/build.sh" \
			--with "$logs/negative-$name.patch" "${flavour[@]}"; then
			kneg[$name]=$(cat "$logs/build-negative-$name.log.out"); pass "build-negative-$name-bzImage"
		else
			fail "build-negative-$name-bzImage" "see $logs/build-negative-$name.log"
		fi
	done
	if [ "$reduced" = 1 ]; then
		:
	elif run_logged lockdep "$logs/build-lockdep.log" "$kp/scripts/build.sh" --lockdep; then
		klockdep=$(cat "$logs/build-lockdep.log.out"); pass build-lockdep-bzImage
	else
		fail build-lockdep-bzImage "see $logs/build-lockdep.log"
	fi
fi

# --- the reduced run ends here -------------------------------------------------
# Only Debian's version changed since the recorded pass: what is checked
# above on the new version, the per-patch compile check (not for --proofs,
# whose record covers no compile check), and one line saying where the
# kernels' behaviour was last proven.
if [ "$reduced" = 1 ]; then
	if [ "$proofs" = 1 ]; then
		what="git am, checkpatch, the seed 001 revert and each negative kernel's edit on $ver"
		proven="the negative kernels' behaviour and the lockdep boot were"
	else
		what="git am, checkpatch, every patch compiling on its own on $ver"
		proven="the kernels' behaviour (bzImage builds, boots) was"
		if [ "$quick" = 1 ]; then
			echo "SKIP every-patch-compiles: --quick"
			what="git am and checkpatch on $ver"
		elif run_logged percommit "$logs/build-check-each.log" "$kp/scripts/build.sh" --check-each-only "${flavour[@]}"; then
			pass "every-patch-compiles (on $ver, the objects each patch touches)"
		else
			fail every-patch-compiles "see $logs/build-check-each.log"
		fi
	fi
	tier="kernel-tier-$series"
	[ "$proofs" = 0 ] || tier="kernel-tier-proofs"
	[ "$proofs" = 0 ] || [ "$series" = 7.3 ] || tier="kernel-tier-proofs-$series"
	echo "SKIP $tier-boots: only Debian's version changed since the recorded pass ($recver -> $ver); checked: $what; $proven last proven on $recver ($(sed -n 's/^date //p' "$record"), $(sed -n 's/^result //p' "$record")); TOPOTUNE_RECORD=1 tools/test.sh re-proves that at $ver"
	finish
fi

# --- builds -----------------------------------------------------------------
if [ "$proofs" = 1 ]; then
	:
elif run_logged base "$logs/build-base.log" "$kp/scripts/build.sh" --base "${flavour[@]}"; then
	kbase=$(cat "$logs/build-base.log.out"); pass build-baseline-bzImage
else
	fail build-baseline-bzImage "see $logs/build-base.log"; finish
fi
if [ "$quick" = 0 ] && [ "$proofs" = 0 ]; then
	if run_logged percommit "$logs/build-check-each.log" "$kp/scripts/build.sh" --check-each "${flavour[@]}"; then
		pass every-patch-compiles
	else
		fail every-patch-compiles "see $logs/build-check-each.log"
	fi
fi
if [ "$proofs" = 1 ]; then
	:
elif run_logged patched "$logs/build-patched.log" "$kp/scripts/build.sh" "${flavour[@]}"; then
	kpatched=$(cat "$logs/build-patched.log.out"); pass build-patched-bzImage
else
	fail build-patched-bzImage "see $logs/build-patched.log"; finish
fi

# --- initramfs --------------------------------------------------------------
# The agent (topotuned, topotunectl) from the meson build dir, run in the
# guest by the "agent" test; without a build the test is skipped.
bdir=${TOPOTUNE_BUILDDIR:-}
if [ -z "$bdir" ]; then
	bdir=$repo/build
	[ -d "$repo/build-ci" ] && bdir=$repo/build-ci
fi
agent_files=()
if [ -x "$bdir/agent/service/topotuned" ] && [ -x "$bdir/agent/cli/topotunectl" ]; then
	export TOPOTUNE_AGENT_BUILDDIR=$bdir
	agent_files=("$bdir/agent/service/topotuned" "$bdir/agent/cli/topotunectl"
		     $(find "$repo/conf" -type f | sort))
	for b in dbus-daemon busctl hackbench stress-ng; do
		p=$(command -v "$b") && agent_files+=("$(readlink -f "$p")")
	done
	for b in tt-stream tt-wakeup; do
		[ -x "$bdir/bench/kernel/$b" ] && agent_files+=("$bdir/bench/kernel/$b")
	done
	agent_files+=("$repo/bench/kernel/workloads.sh")
else
	unset TOPOTUNE_AGENT_BUILDDIR
	echo "SKIP agent-in-guest: no build (no agent binaries in $bdir)"
fi
ih=$(cat "$here"/guest/* "$here/mkinitramfs.sh" "$repo/tests/private-bus.conf" \
	/bin/busybox /usr/bin/taskset "${agent_files[@]}" |
	sha256sum | cut -c1-16)
initrd="$TOPOTUNE_KCACHE/initramfs-$ih.cpio.gz"
if [ -f "$initrd" ] || "$here/mkinitramfs.sh" "$initrd" 2>"$logs/initramfs.log"; then
	pass initramfs
else
	fail initramfs "see $logs/initramfs.log"; finish
fi

# --- boots ------------------------------------------------------------------
# 12 vCPUs: 2 sockets x 3 cores x 2 threads.  "3" = three nodes per socket
# (one core each) with the SNC-3 SLIT quoted above slit_cluster_distance()
# in arch/x86/kernel/smpboot.c; "1" = one node per socket.
SLIT=("10 15 17 21 28 26" "15 10 15 23 26 23" "17 15 10 26 23 21"
      "21 28 26 10 15 17" "23 26 23 15 10 15" "26 23 21 17 15 10")
HYGON="Dhyana,family=24,model=7,+topoext"
GNR="Icelake-Server,vendor=GenuineIntel,family=6,model=173"

boot() {	# kernel cpu nodes-per-socket tests log: one retry if qemu's timer emulation panics the boot
	boot_once "$@"
	if grep -q "Kernel panic" "$5" && ! grep -q "^TT DONE" "$5"; then
		note "boot panicked ($(grep -m1 -o 'Kernel panic.*' "$5")), retrying once"
		mv "$5" "$5.panic"
		boot_once "$@"
	fi
}

boot_once() {	# kernel cpu nodes-per-socket tests log [tcg-thread [cmdline]]
	local kernel=$1 cpu=$2 nps=$3 tests=$4 log=$5 thread=${6:-single} extra=${7:-} n s d
	local smp="12,sockets=2,cores=3,threads=2" mem=1536
	local -a numa=()
	if [ "$nps" = 3x3 ]; then
		# Three sockets of three nodes (one core each): within a socket
		# the SNC-3 distances above, between sockets the off-package
		# block of the same table, asymmetric per node pair.
		smp="18,sockets=3,cores=3,threads=2" mem=1152
		for n in 0 1 2 3 4 5 6 7 8; do
			numa+=(-object "memory-backend-ram,id=m$n,size=128M"
			       -numa "node,nodeid=$n,cpus=$((2 * n))-$((2 * n + 1)),memdev=m$n")
		done
		for s in 0 1 2 3 4 5 6 7 8; do
			read -ra row <<<"${SLIT[$((s % 3))]}"
			for d in 0 1 2 3 4 5 6 7 8; do
				[ "$s" = "$d" ] && continue
				if [ $((s / 3)) = $((d / 3)) ]; then
					numa+=(-numa "dist,src=$s,dst=$d,val=${row[$((d % 3))]}")
				else
					numa+=(-numa "dist,src=$s,dst=$d,val=${row[$((3 + d % 3))]}")
				fi
			done
		done
	elif [ "$nps" = 3 ]; then
		for n in 0 1 2 3 4 5; do
			numa+=(-object "memory-backend-ram,id=m$n,size=256M"
			       -numa "node,nodeid=$n,cpus=$((2 * n))-$((2 * n + 1)),memdev=m$n")
		done
		for s in 0 1 2 3 4 5; do
			read -ra row <<<"${SLIT[$s]}"
			for d in 0 1 2 3 4 5; do
				[ "$s" = "$d" ] || numa+=(-numa "dist,src=$s,dst=$d,val=${row[$d]}")
			done
		done
	else
		numa+=(-object memory-backend-ram,id=m0,size=768M -numa node,nodeid=0,cpus=0-5,memdev=m0
		       -object memory-backend-ram,id=m1,size=768M -numa node,nodeid=1,cpus=6-11,memdev=m1
		       -numa dist,src=0,dst=1,val=32)
	fi
	# 1200 s: the hygon3 patched boot runs every step and took 8.5 min at
	# load 5 on 2 shared cores (2026-12-03), more than 10 at load 9
	timeout 1200 qemu-system-x86_64 -accel "tcg,thread=$thread" -M pc -m "$mem" \
		-smp "$smp" -cpu "$cpu" "${numa[@]}" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 sched_verbose loglevel=4 panic=-1 tt.tests=$tests${extra:+ $extra}" \
		-display none -monitor none -serial "file:$log" -no-reboot \
		2> >(grep -v "TCG doesn't support requested feature" >&2)
}

# Boots run side by side, one TCG thread each: TOPOTUNE_VM_PARALLEL guests
# at a time (default: the host's CPUs, at most 4; 1 boots them one after
# the other). Only boots overlap, never a build: a guest that shares its
# host CPU with a compiler runs fewer instructions per guest jiffy.
vm_parallel=${TOPOTUNE_VM_PARALLEL:-$(nproc)}
[ "$vm_parallel" -ge 1 ] 2>/dev/null || vm_parallel=1
[ "$vm_parallel" -le 4 ] || vm_parallel=4
boot_bg() {	# the arguments of boot(), started once a slot is free
	while [ "$(jobs -rp | wc -l)" -ge "$vm_parallel" ]; do
		wait -n
	done
	boot "$@" &
}

# check.py ARGS...: its PASS/FAIL lines counted, INFO/SKIP printed; a
# check.py that fails (a traceback) is a FAIL too, never a silent pass.
checkpy() {
	local out line f rc=0
	out=$(mktemp)
	TT_SERIES=$series /usr/bin/python3 "$here/check.py" "$@" >"$out" 2>"$out.err" || rc=$?
	while read -r line; do
		case "$line" in
		PASS\ *) pass "${line#PASS }" ;;
		FAIL\ *) f=${line#FAIL }; fail "${f%%: *}" "$(echo "$f" | sed -n 's/^[^:]*: //p')" ;;
		*) echo "$line" ;;
		esac
	done <"$out"
	[ "$rc" = 0 ] || fail "check.py-${1#--}" "exit $rc: $(tail -n 1 "$out.err")"
	rm -f "$out" "$out.err"
}

run="$logs/run-$(date +%Y%m%d-%H%M%S)"
[ "$series" = 7.3 ] || run="$logs/run-$series-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$run"
if [ "$proofs" = 1 ]; then
	# The longest boot (lockdep, every step) first.
	negs="delayed-filter=delayed:3 busy-target=busytarget:3 recheck-only=busytarget:3 idle-core-path=idlecore:1"
	if [ -n "${klockdep:-}" ]; then
		note "booting the lockdep kernel"
		boot_bg "$klockdep" "$HYGON" 3 topo,buddy,spread,softirq,delayed,busytarget,relax,lockdep \
			"$run/hygon3-lockdep.log" single "tt.spreadtrials=5"
	fi
	note "booting the kernel with seed 001's fix reverted (seed001 placement step, diag)"
	boot_bg "$kseed" "$HYGON" 3 seed001,diag "$run/hygon3-seed001-reverted.log" single \
		"tt.seedtrials=0 tt.seedplace=10"
	# name=steps:nodes-per-socket (check.py NEGATIVES)
	for neg in $negs; do
		name=${neg%%=*} steps=${neg#*=} nps=${neg##*:}
		steps=${steps%%:*}
		[ -n "${kneg[$name]:-}" ] || continue
		note "booting the negative kernel $name ($steps)"
		# oops=panic: a guard's absence can crash the kernel (6.12 without
		# the delayed filter); the boot then ends at once, not at the timeout.
		boot_bg "${kneg[$name]}" "$HYGON" "$nps" "$steps" "$run/hygon$nps-negative-$name.log" single oops=panic
	done
	wait
	checkpy --seed001-negative "$run/hygon3-seed001-reverted.log"
	for neg in $negs; do
		name=${neg%%=*} nps=${neg##*:}
		[ -n "${kneg[$name]:-}" ] && checkpy --negative "$name" "$run/hygon$nps-negative-$name.log"
	done
	[ -n "${klockdep:-}" ] && checkpy --lockdep "$run/hygon3-lockdep.log"
	note "serial logs in $run"
	finish
fi
# The hygon3 boots run every step and take longest: they go first, side by side.
note "booting the base and patched kernels, $vm_parallel at a time"
for kind in base patched; do
	k=$kbase; [ "$kind" = patched ] && k=$kpatched
	boot_bg "$k" "$HYGON" 3 topo,abi,buddy,spread,softirq,delayed,busytarget,relax,seed001,agent,bench,diag "$run/hygon3-$kind.log"
done
for kind in base patched; do
	k=$kbase; [ "$kind" = patched ] && k=$kpatched
	boot_bg "$k" "$GNR" 3 topo,abi,layout "$run/gnr3-$kind.log"
	boot_bg "$k" "$HYGON" 1 topo,abi,layout,idlecore "$run/hygon1-$kind.log"
	# 6.12 only: the >2-package case of upstream's 528d89a4707e (the series'
	# patch 4 there); 7.3 has that commit in its base.
	[ "$series" = 6.12 ] && boot_bg "$k" "$GNR" 3x3 topo "$run/gnr9-$kind.log"
done
wait
if [ "$race" = 1 ]; then
	note "booting the patched kernel with parallel vCPUs (race step)"
	boot_once "$kpatched" "$HYGON" 3 race "$run/race-patched.log" multi
	grep -a '^TT RACE ' "$run/race-patched.log" | tr -d '\r' | sed 's/^TT /INFO /'
fi
note "serial logs in $run"

# --- assertions -------------------------------------------------------------
args=("$run" "$expected")
[ "$save" = 1 ] && { mkdir -p "$expected"; args+=(--save); }
checkpy "${args[@]}"
finish
