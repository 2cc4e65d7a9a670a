#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# units/update-bootloader with fake update-grub and grubby: which tool runs,
# with which arguments, for a drop-in that is there, gone or not ours.
# Usage: test-update-bootloader.sh SCRIPT
set -u
SCRIPT=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
check() {	# NAME GOT WANT
	if [ "$2" = "$3" ]; then
		echo "PASS: $1"
		passed=$((passed + 1))
	else
		printf 'FAIL: %s\n  got:  %s\n  want: %s\n' "$1" "$2" "$3"
		failed=$((failed + 1))
	fi
}
fake() {	# NAME: a tool that logs its arguments
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$1" "$T" >"$T/bin/$1"
	chmod 755 "$T/bin/$1"
}
run() {	# run the script with only the fakes (and the shell's tools) on PATH
	: >"$T/calls"
	PATH="$T/bin:/usr/bin:/bin" TOPOTUNE_DROPIN="$T/topotune.cfg" "$SCRIPT" >"$T/out" 2>&1
	rc=$?
	calls=$(paste -sd'|' "$T/calls")
}
mkdir -p "$T/bin"
# shellcheck disable=SC2016
printf 'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT relax_domain_level=2"\n' >"$T/topotune.cfg"

fake update-grub
fake grubby
run
check "Debian: update-grub runs, grubby does not" "$rc $calls" "0 update-grub "

# A profile switch while update-grub runs: the drop-in changes, a second round takes it.
printf '#!/bin/sh\necho "update-grub $*" >>"%s/calls"\n[ -f "%s/once" ] || { touch "%s/once"; echo changed >>"%s/topotune.cfg"; }\n' \
	"$T" "$T" "$T" "$T" >"$T/bin/update-grub"
run
check "the drop-in changed during update-grub: it runs again" "$rc $calls" "0 update-grub |update-grub "
# shellcheck disable=SC2016
printf 'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT relax_domain_level=2"\n' >"$T/topotune.cfg"

rm "$T/bin/update-grub"
run
check "BLS: grubby drops the managed parameters, then adds the drop-in's" "$rc $calls" \
	"0 grubby --update-kernel=ALL --remove-args=relax_domain_level|grubby --update-kernel=ALL --args=relax_domain_level=2"

rm "$T/topotune.cfg"
run
check "BLS, drop-in removed (revert): grubby only drops them" "$rc $calls" \
	"0 grubby --update-kernel=ALL --remove-args=relax_domain_level"

echo 'GRUB_CMDLINE_LINUX="quiet"' >"$T/topotune.cfg"
run
check "BLS, a drop-in topotune did not write: exit 1, grubby not run" "$rc $calls" "1 "
check "... and it says so" "$(grep -c 'no GRUB_CMDLINE_LINUX_DEFAULT line it wrote' "$T/out")" 1

rm "$T/bin/grubby"
run
check "neither tool: exit 1 with what to do" "$rc $(grep -c 'neither update-grub nor grubby' "$T/out")" "1 1"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
