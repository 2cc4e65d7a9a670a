#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# units/update-bootloader with fake update-grub and grubby: which tool runs,
# with which arguments, for a request that is there, gone or not one
# topotuned writes (shell, garbage, a link, a FIFO: refused, nothing changes);
# with grubby, what it leaves undone and an /etc/default/grub it would damage.
# Usage: test-update-bootloader.sh SCRIPT
set -u
SCRIPT=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=tests/check.sh
. "$(dirname "$0")/../tests/check.sh"
fake() {	# NAME: a tool that logs its arguments
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$1" "$T" >"$T/bin/$1"
	chmod 755 "$T/bin/$1"
}
run() {	# [ARG]: run the script with only the fakes (and the shell's tools) on PATH
	: >"$T/calls"
	PATH="$T/bin:/usr/bin:/bin" TOPOTUNE_REQUEST="$T/request" TOPOTUNE_DROPIN="$T/grub.d/topotune.cfg" \
		TOPOTUNE_SYSTEMD_RUN="$T/systemd" "$SCRIPT" "$@" >"$T/out" 2>&1
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

# --removal (the package's prerm) after the units stopped. A fake
# systemctl: ActiveState from $T/state, list-jobs from $T/jobs; "start"
# finishes the run under way ($T/finish: what the service still does).
cat >"$T/bin/systemctl" <<FAKE
#!/bin/sh
case "\$*" in
"show -P ActiveState topotune-bootloader.service") cat "$T/state" ;;
"list-jobs --no-legend") cat "$T/jobs" ;;
"start topotune-bootloader.service")
	echo "systemctl \$*" >>"$T/calls"
	[ ! -f "$T/finish" ] || sh "$T/finish"
	echo inactive >"$T/state"
	exit "\$(cat "$T/start_rc")" ;;
*) echo "systemctl: unexpected: \$*" >&2; exit 2 ;;
esac
FAKE
chmod 755 "$T/bin/systemctl"
# removal SYSTEMD STATE JOBS DROPIN REQUEST FINISH: the machine as the prerm
# leaves it to the helper; runs it with --removal (START_RC: systemctl
# start's exit).
removal() {
	rm -rf "$T/systemd" "$T/finish" "$T/grub.d/topotune.cfg" "$T/request"
	[ "$1" = no ] || mkdir "$T/systemd"
	echo "$2" >"$T/state"
	printf '%s' "$3" >"$T/jobs"
	[ "$4" = no ] || { mkdir -p "$T/grub.d"; echo '# relax_domain_level=2' >"$T/grub.d/topotune.cfg"; }
	[ "$5" = no ] || printf '2\n' >"$T/request"
	[ "$6" = no ] || echo "echo 'service: update-grub' >>'$T/calls'; rm -f '$T/grub.d/topotune.cfg'" >"$T/finish"
	echo "${START_RC:-0}" >"$T/start_rc"
	run --removal
	if [ -e "$T/grub.d/topotune.cfg" ]; then left=kept; else left=gone; fi
}
removal yes activating '' no no yes
check "--removal: the service is in update-grub (the drop-in already gone): waits for it" \
	"$rc $calls" "0 systemctl start topotune-bootloader.service|service: update-grub"
removal yes activating '' yes no yes
check "--removal: the service has not removed the drop-in yet: waits, no second update-grub" \
	"$rc $calls $left" "0 systemctl start topotune-bootloader.service|service: update-grub gone"
removal yes inactive '  42 topotune-bootloader.service start waiting
' yes no yes
check "--removal: a start job queued: waits for it" \
	"$rc $calls $left" "0 systemctl start topotune-bootloader.service|service: update-grub gone"
removal yes inactive '  7 apt-daily.service start running
' yes no no
check "--removal: the path unit stopped first, the drop-in left: removed, update-grub runs" \
	"$rc $calls $left" "0 update-grub  gone"
removal yes inactive '' no no no
check "--removal: nothing under way, no drop-in: nothing runs" "$rc $calls $left" "0  gone"
START_RC=1 removal yes activating '' yes no no
check "--removal: the service failed: said so, then the drop-in removed" \
	"$rc $calls $(grep -c 'topotune-bootloader.service failed' "$T/out")" \
	"0 systemctl start topotune-bootloader.service|update-grub  1"
removal yes inactive '' yes yes no
check "--removal: a request still there (topotuned did not revert): the drop-in stays" "$rc $calls $left" "0  kept"
removal no inactive '' yes no no
check "--removal without systemd (a chroot): systemctl not asked, the drop-in removed" "$rc $calls $left" "0 update-grub  gone"
run --bogus
check "an unknown argument: usage, exit 2, nothing run" "$rc $calls" "2 "
rm -rf "$T/systemd"
printf '2\n' >"$T/request"
mkdir -p "$T/grub.d"
run

rm "$T/bin/update-grub"
# grubby as Fedora's grubby-bls does it (rpms/grubby, mirrored at
# fedora-riscv/grubby 68f872a; update_bls_fragment(), update_args(),
# display_info_values()), on $R rather than /: --update-kernel=ALL edits the
# options of every $R/boot/loader/entries/*.conf, GRUB_CMDLINE_LINUX in
# $R/etc/default/grub (when the file sourced sets it; every line beginning
# with GRUB_CMDLINE_LINUX, GRUB_CMDLINE_LINUX_DEFAULT= too, becomes
# GRUB_CMDLINE_LINUX="the value, changed") and $R/etc/kernel/cmdline
# (created when $R/etc/kernel exists); --info=ALL lists each entry's args.
# Like the real one it exits 0 when there is no entry or a write fails (a
# directory listed in $T/ro is read-only, as in a sandbox that does not open
# it): it prints sed's complaint and changes nothing there.
R=$T/root
printf '#!/bin/sh\necho "grubby $*" >>"%s/calls"\nR="%s" RO="%s/ro"\n' "$T" "$R" "$T" >"$T/bin/grubby"
cat >>"$T/bin/grubby" <<'GRUBBY'
add= remove= info=
for a; do
	case $a in
	--update-kernel=ALL) ;;
	--args=*) add=${a#--args=} ;;
	--remove-args=*) remove=${a#--remove-args=} ;;
	--info=ALL) info=1 ;;
	*)
		echo "grubby: invalid option \"$a\"" >&2
		exit 1
		;;
	esac
done
args() {	# ARGS: update_args(): drop the removed (NAME, NAME=*) and the added names, add them last
	printf '%s\n' "$1" | tr -s ' \t' '\n\n' | awk -v rm="$remove" -v add="$add" '
		BEGIN { n = split(rm " " add, d, " "); for (i = 1; i <= n; i++) { sub(/=.*/, "", d[i]); if (d[i] != "") drop[d[i]] = 1 } }
		$0 != "" { k = $0; sub(/=.*/, "", k); if (!(k in drop)) o = o (o == "" ? "" : " ") $0 }
		END { if (add != "") o = o (o == "" ? "" : " ") add; print o }'
}
ro() {	# FILE: its directory is read-only, sed -i cannot make its temporary file
	d=$(dirname "$1")
	[ -f "$RO" ] && grep -qxF "${d#"$R"}" "$RO" || return 1
	echo "sed: couldn't open temporary file $d/sedXXXXXX: Read-only file system" >&2
}
if [ -n "$info" ]; then
	i=0
	for f in "$R"/boot/loader/entries/*.conf; do
		[ -f "$f" ] || continue
		echo "index=$i"
		echo "args=\"$(sed -n 's/^options[ \t]*//p' "$f")\""
		i=$((i + 1))
	done
	exit 0
fi
g=$R/etc/default/grub
# As grubby-bls: the value the file sourced gives, and every line that
# begins with GRUB_CMDLINE_LINUX (GRUB_CMDLINE_LINUX_DEFAULT too) replaced.
if [ -f "$g" ] && old=$(. "$g"; echo ${GRUB_CMDLINE_LINUX:-}) && [ -n "$old" ] && ! ro "$g"; then
	new=$(args "$old")
	sed -i "s|^GRUB_CMDLINE_LINUX.*|GRUB_CMDLINE_LINUX=\"$new\"|" "$g"
fi
for f in "$R"/boot/loader/entries/*.conf; do
	[ -f "$f" ] || continue
	ro "$f" && continue
	new=$(args "$(sed -n 's/^options[ \t]*//p' "$f")")
	sed -i "s|^options.*|options $new|" "$f"
done
c=$R/etc/kernel/cmdline
if [ -d "$R/etc/kernel" ] && ! ro "$c"; then
	[ -f "$c" ] || : >"$c"
	new=$(args "$(cat "$c")")
	echo "$new" >"$c"
fi
exit 0
GRUBBY
chmod 755 "$T/bin/grubby"
bls() {	# a Fedora-like BLS system in $R: two entries, /etc/kernel/cmdline, /etc/default/grub
	rm -rf "$R" "$T/ro"
	mkdir -p "$R/boot/loader/entries" "$R/etc/kernel" "$R/etc/default"
	for v in 6.5.6-300.fc39.x86_64 6.6.2-201.fc39.x86_64; do
		printf 'title Fedora Linux (%s)\nversion %s\nlinux /vmlinuz-%s\noptions root=UUID=1234 ro rhgb quiet\n' \
			"$v" "$v" "$v" >"$R/boot/loader/entries/0123-$v.conf"
	done
	echo "root=UUID=1234 ro rhgb quiet" >"$R/etc/kernel/cmdline"
	printf 'GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="rhgb quiet"\nGRUB_ENABLE_BLSCFG=true\n' >"$R/etc/default/grub"
}
state() { (cd "$R" && grep -h '^options' boot/loader/entries/*.conf; cat etc/kernel/cmdline; grep CMDLINE etc/default/grub) 2>/dev/null | paste -sd'|'; }
rung() {	# run with the fake system's /etc/kernel/cmdline and /etc/default/grub
	TOPOTUNE_KERNEL_CMDLINE="$R/etc/kernel/cmdline" TOPOTUNE_GRUB_DEFAULT="$R/etc/default/grub" run
}
SET="grubby --update-kernel=ALL --remove-args=relax_domain_level|grubby --update-kernel=ALL --args=relax_domain_level=2"
REVERT="grubby --update-kernel=ALL --remove-args=relax_domain_level"

bls
fresh=$(state)
rung
check "BLS: grubby drops the managed parameters, adds the request's, lists the entries" "$rc $calls" \
	"0 $SET|grubby --info=ALL"
check "... every entry, /etc/kernel/cmdline and GRUB_CMDLINE_LINUX have it" "$(state)" \
	"options root=UUID=1234 ro rhgb quiet relax_domain_level=2|options root=UUID=1234 ro rhgb quiet relax_domain_level=2|root=UUID=1234 ro rhgb quiet relax_domain_level=2|GRUB_CMDLINE_LINUX=\"rhgb quiet relax_domain_level=2\""

rm "$T/request"
rung
check "BLS, request removed (revert): grubby only drops them" "$rc $calls" "0 $REVERT|grubby --info=ALL"
check "... and the drop-in is gone" "$(dropin)" "(absent)"
check "... and the entries are as before" "$(state)" "$fresh"

# Where the real grubby fails it still exits 0: the helper checks what it did.
printf '2\n' >"$T/request"
bls
rm -rf "$R/boot/loader"
rung
check "BLS without /boot/loader/entries: grubby exits 0, the helper fails" \
	"$rc $(grep -c 'grubby lists no boot entries' "$T/out")" "1 1"
bls
echo /boot/loader/entries >"$T/ro"
rung
check "BLS entries read-only (sandbox): grubby exits 0, the helper fails" \
	"$rc $(grep -c 'an entry: relax_domain_level is not as requested' "$T/out")" "1 1"
bls
echo /etc/default >"$T/ro"
rung
check "/etc/default read-only (sandbox): GRUB_CMDLINE_LINUX unchanged, the helper fails" \
	"$rc $(grep -c "$R/etc/default/grub: relax_domain_level is not as requested" "$T/out")" "1 1"
bls
rung
rm "$T/request"
echo /boot/loader/entries >"$T/ro"
rung
check "revert with the entries read-only: the helper fails" "$rc" 1
rm -f "$T/ro"
rung
check "... and succeeds once they are writable, all as before" "$rc $(state)" "0 $fresh"
bls
rm -rf "$R/etc/kernel"
printf '2\n' >"$T/request"
rung
check "no /etc/kernel (RHEL 8): nothing to check there" "$rc" 0

# grubby-bls rewrites every line of /etc/default/grub that begins with
# GRUB_CMDLINE_LINUX into GRUB_CMDLINE_LINUX="its value as the file sourced
# gives it, changed": what it would damage is refused before it runs.
refused() {	# NAME FILE:LINE-AND-WHY: with /etc/default/grub as it is now
	cp "$R/etc/default/grub" "$T/grub.before"
	kept=$(state)
	rung
	check "$1: refused, grubby not run" "$rc $calls" "1 "
	check "$1: the message names the line and what to do" \
		"$(grep -cF "update-bootloader: $R/etc/default/grub:$2" "$T/out")" 1
	check "$1: /etc/default/grub and the entries unchanged" \
		"$(cmp "$T/grub.before" "$R/etc/default/grub" && echo same)|$(state)" "same|$kept"
}
bls
echo 'GRUB_CMDLINE_LINUX_DEFAULT="mitigations=off"' >>"$R/etc/default/grub"
refused "GRUB_CMDLINE_LINUX_DEFAULT= (grubby makes it a second GRUB_CMDLINE_LINUX=)" \
	"4: GRUB_CMDLINE_LINUX_DEFAULT: grubby would turn this line into a second GRUB_CMDLINE_LINUX= and its parameters would be lost; move them into GRUB_CMDLINE_LINUX and delete the line"
rm "$T/request"
refused "revert, GRUB_CMDLINE_LINUX_DEFAULT=" "4: GRUB_CMDLINE_LINUX_DEFAULT: "
printf '2\n' >"$T/request"
bls
# shellcheck disable=SC2016
echo 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX audit=1"' >>"$R/etc/default/grub"
refused "a second GRUB_CMDLINE_LINUX=" "4: a second GRUB_CMDLINE_LINUX: grubby would write the same value into every one"
bls
sed -i 's/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX="rhgb quiet" # no splash/' "$R/etc/default/grub"
refused "a comment after GRUB_CMDLINE_LINUX" "2: grubby would write its value as the shell expands it"
bls
# shellcheck disable=SC2016
sed -i 's/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX="${EXTRA:-} rhgb quiet"/' "$R/etc/default/grub"
refused "a reference in GRUB_CMDLINE_LINUX" "2: grubby would write its value as the shell expands it"
# What grubby leaves alone is no reason to refuse.
bls
sed -i 's/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX=""/' "$R/etc/default/grub"
printf 'GRUB_CMDLINE_LINUX_DEFAULT="quiet"\n#GRUB_CMDLINE_LINUX_DEFAULT="splash"\n' >>"$R/etc/default/grub"
cp "$R/etc/default/grub" "$T/grub.before"
rung
check "GRUB_CMDLINE_LINUX=\"\" (grubby does not edit the file) beside GRUB_CMDLINE_LINUX_DEFAULT: done" \
	"$rc $(cmp "$T/grub.before" "$R/etc/default/grub" && echo same)" "0 same"
bls
sed -i "s/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX='rhgb quiet'/" "$R/etc/default/grub"
echo '#GRUB_CMDLINE_LINUX_DEFAULT="splash"' >>"$R/etc/default/grub"
rung
check "GRUB_CMDLINE_LINUX='...' and a commented-out line: done" "$rc $(grep -c CMDLINE "$R/etc/default/grub")" "0 2"

rm "$T/bin/grubby"
run
check "neither tool: exit 1 with what to do" "$rc $(grep -c 'neither update-grub nor grubby' "$T/out")" "1 1"

summary
