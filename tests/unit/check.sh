# shellcheck shell=bash
# The shell tests' checks, sourced: "check NAME GOT WANT" counts a pass when
# GOT equals WANT and prints "FAIL NAME: ..." with both otherwise (values of
# several lines as blocks); "check_end" prints "N passed, M failed" and
# fails when any check did.
passed=0 failed=0
check() {	# NAME GOT WANT
	if [ "$2" = "$3" ]; then
		passed=$((passed + 1))
		return
	fi
	failed=$((failed + 1))
	case "$2$3" in
	*'
'*) printf 'FAIL %s:\n--- got\n%s\n--- want\n%s\n' "$1" "$2" "$3" ;;
	*) echo "FAIL $1: got '$2', want '$3'" ;;
	esac
}
check_end() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
