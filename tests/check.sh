# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
#
# The PASS:/FAIL: lines of the shell tests that compare values; sourced,
# POSIX sh (units/test-update-bootloader.sh, tests/install/real-grubby.sh).
#   check NAME GOT WANT   PASS: NAME, or FAIL: NAME with both values
#   summary               "N passed, M failed"; false when one failed

passed=0
failed=0

check() {
	if [ "$2" = "$3" ]; then
		echo "PASS: $1"
		passed=$((passed + 1))
	else
		printf 'FAIL: %s\n  got:  %s\n  want: %s\n' "$1" "$2" "$3"
		failed=$((failed + 1))
	fi
}

summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
