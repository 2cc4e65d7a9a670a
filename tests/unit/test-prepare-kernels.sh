#!/bin/bash
# tests/vm/prepare-kernels.sh (tools/test.sh runs it in the background):
# it makes the fetch.sh, apply.sh and build.sh calls the kernel tiers will
# make - 7.3 in full with --systemd, 6.12 as its --decide says (nothing,
# the reduced run's per-patch compile on the new version, or the full set)
# - and run-kernel-tier.sh still makes those calls, so the tiers find what
# it built. In a copy of the tier's inputs with fake fetch/apply/build
# scripts that log their calls; offline. Prints "N passed, M failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/unit/check.sh
. "$top/tests/unit/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TOPOTUNE_KCACHE="$tmp/kcache" CALLS="$tmp/calls"
unset TOPOTUNE_KSERIES TOPOTUNE_KVERSION TOPOTUNE_KTREE_LOCKED
mkdir -p "$tmp/repo/tests" "$TOPOTUNE_KCACHE"
cp -a "$top/kernel-patches" "$tmp/repo/"
cp -a "$top/tests/vm" "$top/tests/private-bus.conf" "$tmp/repo/tests/"
tier="$tmp/repo/tests/vm/run-kernel-tier.sh"
prep="$tmp/repo/tests/vm/prepare-kernels.sh"
s="$tmp/repo/kernel-patches/scripts"

# The calls run-kernel-tier.sh makes, as prepare-kernels.sh repeats them
# (the text of the tier, unexpanded).
# shellcheck disable=SC2016
for want in '"$kp/scripts/build.sh" --base "${flavour[@]}"' \
	    '"$kp/scripts/build.sh" --check-each "${flavour[@]}"' \
	    '"$kp/scripts/build.sh" "${flavour[@]}"' \
	    '"$kp/scripts/build.sh" --check-each-only "${flavour[@]}"' \
	    'flavour=(--systemd)'; do
	if grep -qF -- "$want" "$top/tests/vm/run-kernel-tier.sh"; then
		check "run-kernel-tier.sh still runs $want" ok ok
	else
		check "run-kernel-tier.sh still runs $want" missing present
	fi
done

# Fakes: each logs "name series version args"; fetch.sh records the
# version it fetched where the real one does; FAIL_<name> makes one fail.
cat >"$s/fetch.sh" <<'EOF'
#!/bin/bash
ser=${TOPOTUNE_KSERIES:-7.3}
echo "fetch $ser ${TOPOTUNE_KVERSION:--} $*" >>"$CALLS"
if [ "$ser" = 7.3 ]; then v=${TOPOTUNE_KVERSION:-$CAND_73} f=current-version
else v=${TOPOTUNE_KVERSION:-$CAND_612} f=current-version-$ser; fi
[ "${1:-}" = --candidate ] && { echo "$v"; exit 0; }
mkdir -p "$TOPOTUNE_KCACHE/src-$v" && touch "$TOPOTUNE_KCACHE/src-$v/.unpacked"
echo "$v" >"$TOPOTUNE_KCACHE/$f"
EOF
for n in apply build; do
	cat >"$s/$n.sh" <<EOF
#!/bin/bash
echo "$n \${TOPOTUNE_KSERIES:-7.3} \${TOPOTUNE_KVERSION:--} \$*" >>"\$CALLS"
[ "\${FAIL_$n-@none}" != "\$*" ]
EOF
done
chmod +x "$s"/*.sh
export CAND_73=7.3.4-1~bpo13+1
old=6.12.118-1~deb12u1 new=6.12.119-1~deb12u1
record() {	# VERSION: a passing 6.12 record at VERSION
	printf 'inputs %s\nversion %s\nresult 9 passed, 0 failed\ndate 2026-12-01\nelapsed 1s\n' \
		"$("$tier" --series 6.12 --inputs-hash "$1")" "$1" >"$tmp/repo/tests/vm/expected/6.12/last-pass"
}
run() {	# CANDIDATE-6.12 ARGS...: the calls prepare-kernels.sh made (candidate checks left out)
	: >"$CALLS"
	CAND_612=$1 "$prep" "${@:2}" >"$tmp/out" 2>&1 || echo "exit $?"
	grep -v -- ' --candidate$' "$CALLS"
}
full73="fetch 7.3 - 
apply 7.3 $CAND_73 
build 7.3 $CAND_73 --base --systemd
build 7.3 $CAND_73 --check-each --systemd
build 7.3 $CAND_73 --systemd"
cached73=$(echo "$full73" | sed 1d)

record "$old"
check "6.12 as recorded: 7.3 only" "$(run "$old" --if-changed)" "$full73"
check "7.3 source fetched already: no fetch" "$(run "$old" --if-changed)" "$cached73"
check "a new 6.12.y: its reduced run's compile check" "$(run "$new" --if-changed)" "$cached73
fetch 6.12 $new 
apply 6.12 $new 
build 6.12 $new --check-each-only"
rm -rf "${TOPOTUNE_KCACHE:?}"/*
rm "$tmp/repo/tests/vm/expected/6.12/last-pass"
check "no 6.12 record: the full 6.12 set, no systemd fragment" "$(run "$new" --if-changed)" "$full73
fetch 6.12 - 
apply 6.12 $new 
build 6.12 $new --base
build 6.12 $new --check-each
build 6.12 $new "
record "$old"
check "TOPOTUNE_RECORD=1: the full 6.12 set" "$(run "$old" --record | tail -n 4)" "apply 6.12 $new 
build 6.12 $new --base
build 6.12 $new --check-each
build 6.12 $new "
check "a failed build: the next ones still run, the tier redoes it" \
	"$(FAIL_build="--base --systemd" run "$old" --if-changed)" "$cached73"
if grep -q '^# 7.3 baseline bzImage: failed' "$tmp/out"; then
	check "the failure is logged" ok ok
else
	check "the failure is logged" "$(cat "$tmp/out")" "# 7.3 baseline bzImage: failed ..."
fi
check "a failed apply: no build" "$(FAIL_apply="" run "$old" --if-changed)" "apply 7.3 $CAND_73 "
check "bad option" "$("$prep" --bogus 2>/dev/null; echo $?)" 2

check_end
