#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# units/update-bootloader with fake update-grub and grubby: which tool runs,
# with which arguments, for a request that is there, gone or not one
# topotuned writes (shell, garbage, a link, a FIFO: refused, nothing changes).
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
	PATH="$T/bin:/usr/bin:/bin" TOPOTUNE_REQUEST="$T/request" TOPOTUNE_DROPIN="$T/grub.d/topotune.cfg" \
		"$SCRIPT" >"$T/out" 2>&1
	rc=$?
	calls=$(paste -sd'|' "$T/calls")
}
dropin() { cat "$T/grub.d/topotune.cfg" 2>/dev/null || echo "(absent)"; }
mkdir -p "$T/bin"
# shellcheck disable=SC2016
WANT='GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT relax_domain_level=2"'
printf '2\n' >"$T/request"

fake update-grub
fake grubby
run
check "Debian: update-grub runs, grubby does not" "$rc $calls" "0 update-grub "
check "the helper renders the drop-in from the request" "$(grep -v '^#' "$T/grub.d/topotune.cfg")" "$WANT"

# A profile switch while update-grub runs: the request changes, a second round takes it.
printf '#!/bin/sh\necho "update-grub $*" >>"%s/calls"\n[ -f "%s/once" ] || { touch "%s/once"; echo 3 >"%s/request"; }\n' \
	"$T" "$T" "$T" "$T" >"$T/bin/update-grub"
run
check "the request changed during update-grub: it runs again" "$rc $calls" "0 update-grub |update-grub "
check "... and the drop-in has the new level" "$(grep -c 'relax_domain_level=3"$' "$T/grub.d/topotune.cfg")" 1
fake update-grub

# Shell, garbage, a link or a FIFO where the level belongs: refused, the drop-in and GRUB untouched.
printf '2\n' >"$T/request"
run
before=$(dropin)
for bad in '2; touch /tmp/pwned' '$(id)' '16' '-1' '02' '' 'relax_domain_level=2' '1 2' '2
3'; do
	printf '%s\n' "$bad" >"$T/request"
	run
	check "request '$bad': refused, nothing run" "$rc $calls" "1 "
	check "request '$bad': the drop-in stays" "$(dropin)" "$before"
done
printf '2' >"$T/request"
run
check "request without its newline: refused" "$rc $calls" "1 "
rm -f "$T/request"
ln -s /etc/passwd "$T/request"
run
check "request is a symlink: refused, nothing run" "$rc $calls $(grep -c 'not a regular file' "$T/out")" "1  1"
check "... and the drop-in stays" "$(dropin)" "$before"
rm -f "$T/request"
mkfifo "$T/request"
run
check "request is a FIFO: refused without blocking" "$rc $calls" "1 "
rm -f "$T/request"
printf '2\n' >"$T/request"

rm "$T/bin/update-grub"
run
check "BLS: grubby drops the managed parameters, then adds the request's" "$rc $calls" \
	"0 grubby --update-kernel=ALL --remove-args=relax_domain_level|grubby --update-kernel=ALL --args=relax_domain_level=2"

rm "$T/request"
run
check "BLS, request removed (revert): grubby only drops them" "$rc $calls" \
	"0 grubby --update-kernel=ALL --remove-args=relax_domain_level"
check "... and the drop-in is gone" "$(dropin)" "(absent)"

rm "$T/bin/grubby"
run
check "neither tool: exit 1 with what to do" "$rc $(grep -c 'neither update-grub nor grubby' "$T/out")" "1 1"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
