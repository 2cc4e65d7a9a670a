#!/bin/sh
# Install the Debian packages topotune builds and tests with, if missing.
# Sourced by demo.sh and test.sh; run as root on Debian 12 (bookworm).
# Usage: deps.sh [EXTRA-PACKAGE...]
set -eu

pkgs="gcc meson ninja-build pkg-config python3 xz-utils bzip2
	libcpuid-dev libinih-dev libsystemd-dev $*"

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages:$missing (run as root, or install them)" >&2
	exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
