#!/bin/bash
# kernel-patches/scripts/export.sh adds a Signed-off-by only for a person:
# personal_identity() (lib.sh) on the identities it must accept and refuse.
# Prints "N passed, M failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=/dev/null
. "$top/kernel-patches/scripts/lib.sh"
passed=0 failed=0
expect() {	# yes|no NAME EMAIL
	local got=no
	personal_identity "$2" "$3" && got=yes
	if [ "$got" = "$1" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL personal_identity '$2' <$3>: got $got, want $1"
	fi
}
expect yes "Jane Doe" "jane.doe@kernel.org"
expect yes "Li kunyu" "likunyu@open-hieco.net"
# the project's own identity, groups, placeholders, tools, local addresses
expect no "Seed d2c10513 maintainers" "maintainers@users.noreply.a-seed-d2c10513.example"
expect no "topotune developers" "dev@topotune.invalid"
expect no "Jane Doe" "jane@example.com"
expect no "Jane Doe" "jane@build.example"
expect no "Jane Doe" "12345+jane@users.noreply.github.com"
expect no "Jane Doe" "jane@localhost"
expect no "Jane Doe" "jane@host.local"
expect no "Jane Doe" "jane"
expect no "root" "root@kernel.org"
expect no "CI Bot" "ci@kernel.org"
expect no "Kernel Team" "team@kernel.org"
expect no "" "jane@kernel.org"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
