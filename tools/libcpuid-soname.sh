#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Print the SONAME of the libcpuid that pkg-config finds (libcpuid.so.16 on
# Debian 12): the name agent/cpuid loads with dlopen(). Read from the
# library's dynamic section, for meson.build and tests/fuzz/run-fuzzers.sh.
# Exits 1, saying why, when there is none.
set -eu
libdir=$(pkg-config --variable=libdir libcpuid) || {
	echo "libcpuid-soname.sh: pkg-config does not know libcpuid" >&2
	exit 1
}
so="$libdir/libcpuid.so"
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ -z "$soname" ]; then
	echo "libcpuid-soname.sh: no SONAME in the dynamic section of $so" >&2
	exit 1
fi
echo "$soname"
