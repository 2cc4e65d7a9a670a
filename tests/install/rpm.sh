#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# RPM build check: a tarball of HEAD (git archive), rpmbuild -bb --nodeps
# topotune.spec in a private _topdir, and the package's metadata: files,
# %config(noreplace), scriptlets. Runs on Debian with the rpm package.
# Prints PASS/FAIL per check and "N passed, M failed". About 40 s.
#   TOPOTUNE_KEEP=1   keep the work directory
set -eu

SRC=$(cd "$(dirname "$0")/../.." && pwd)
passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

command -v rpmbuild >/dev/null || { echo "SKIP: rpmbuild missing (apt-get install rpm)"; exit 77; }

WORK=$(mktemp -d /var/tmp/topotune-rpm.XXXXXX)
cleanup() { if [ "${TOPOTUNE_KEEP:-0}" = 1 ]; then echo "# kept $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT
t0=$(date +%s)

version=$(sed -n 's/^Version: *//p' "$SRC/topotune.spec")
mkdir -p "$WORK/SOURCES"
git -C "$SRC" archive --prefix="topotune-$version/" -o "$WORK/SOURCES/topotune-$version.tar.gz" HEAD
git -C "$SRC" show HEAD:topotune.spec >"$WORK/topotune.spec"
if nice rpmbuild --define "_topdir $WORK" -bb --nodeps "$WORK/topotune.spec" >"$WORK/rpmbuild.log" 2>&1; then
	pass "rpmbuild -bb --nodeps topotune.spec"
else
	tail -n 30 "$WORK/rpmbuild.log"
	fail "rpmbuild -bb --nodeps topotune.spec"
	echo "$passed passed, $failed failed"
	exit 1
fi
RPM=$(ls "$WORK"/RPMS/*/topotune-"$version"-*.rpm | head -n1)

if grep -q '^Ok: *[1-9]' "$WORK/rpmbuild.log" && grep -q '^Fail: *0' "$WORK/rpmbuild.log"; then
	pass "%check: $(sed -n 's/^Ok: *//p' "$WORK/rpmbuild.log") unit tests ok"
else fail "%check did not run the unit tests"; fi

files=$(rpm -qpl "$RPM")
for f in /usr/bin/topotunectl /usr/libexec/topotune/topotuned /etc/topotune/topotune.conf \
	 /etc/topotune/profiles /etc/topotune/hardware.d /etc/topotune/topotune.conf.d \
	 /usr/lib/topotune/profiles/balanced.ini /usr/lib/topotune/hardware.d \
	 /usr/share/dbus-1/system.d/org.topotune1.conf /usr/share/polkit-1/actions/org.topotune1.policy \
	 /usr/lib/tmpfiles.d/topotune.conf /usr/share/bash-completion/completions/topotunectl; do
	if echo "$files" | grep -qx "$f"; then pass "packaged $f"; else fail "packaged $f"; fi
done
if echo "$files" | grep -q '/systemd/system/topotuned.service$'; then pass "packaged topotuned.service"; else
	fail "packaged topotuned.service"; fi
for m in man1/topotunectl.1 man5/topotune.conf.5 man5/topotune.profile.5 man5/org.topotune1.5 man8/topotuned.8; do
	if echo "$files" | grep -q "/usr/share/man/$m"; then pass "packaged $m"; else fail "packaged $m"; fi
done

# %config(noreplace): fflags shows "c" (config) and "n" (noreplace)
flags=$(rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$RPM" | sed -n 's|^/etc/topotune/topotune.conf ||p')
case $flags in
*c*n*) pass "/etc/topotune/topotune.conf is %config(noreplace) ($flags)" ;;
*) fail "/etc/topotune/topotune.conf flags '$flags', want %config(noreplace)" ;;
esac

# The runtime directory: a ghost with the mode tmpfiles gives it (0700 root).
mode=$(rpm -qp --qf '[%{FILENAMES} %{FILEMODES:perms} %{FILEUSERNAME} %{FILEFLAGS:fflags}\n]' "$RPM" |
	sed -n 's|^/run/topotune ||p')
case $mode in
"drwx------ root "*g*) pass "/run/topotune: %ghost %dir 0700 root ($mode)" ;;
*) fail "/run/topotune: '$mode', want a ghost directory drwx------ root (as units/topotune.tmpfiles)" ;;
esac

scripts=$(rpm -qp --scripts "$RPM")
if echo "$scripts" | grep -q 'preset topotuned.service' &&
   echo "$scripts" | grep -q 'disable --now topotuned.service' &&
   ! echo "$scripts" | grep -q 'try-restart'; then
	pass "scriptlets: preset on install, disable --now on erase, no restart on upgrade"
else
	echo "$scripts"
	fail "scriptlets"
fi

# Erase: the helper waits for a regeneration under way or removes the drop-in.
if echo "$scripts" | sed -n '/^preuninstall/,/^postuninstall/p' | grep -q 'update-bootloader --removal'; then
	pass "%preun: update-bootloader --removal after the units stopped"
else
	echo "$scripts"
	fail "%preun does not run update-bootloader --removal"
fi

echo "# took $(($(date +%s) - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
