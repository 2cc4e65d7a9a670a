#!/bin/bash
# Export the series from a development git tree whose branch is based on
# the "base" tag that apply.sh creates:
#   export.sh TREE [REV-RANGE]     (default range: base..HEAD)
# Writes kernel-patches/<series>/NNNN-*.patch, 0000-cover-letter.patch
# (subject and text from cover-letter.txt) and the series file.
# Environment: TOPOTUNE_SUBJECT_PREFIX (default: subject_prefix from
# kernel-patches/<series>/base, else "PATCH v5").
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$1
range=${2:-base..HEAD}
dir="$KP_DIR/$KSERIES"
prefix=${TOPOTUNE_SUBJECT_PREFIX:-${subject_prefix:-PATCH v5}}

# From: is the exporting identity, git's own (git config user.name and
# user.email, or GIT_COMMITTER_*). A Signed-off-by is a person's statement
# (the DCO in Documentation/process/submitting-patches.rst), so it is added
# only when that identity is a deliverable personal address: never for a
# group, a placeholder or a tool, which per the base tree's
# Documentation/process/coding-assistants.rst adds "Assisted-by:" and no
# Signed-off-by. The cover letter says who has to sign off before posting.
name=$(git -C "$KP_DIR" var GIT_COMMITTER_IDENT 2>/dev/null | sed 's/ <.*//') || true
email=$(git -C "$KP_DIR" var GIT_COMMITTER_IDENT 2>/dev/null | sed -n 's/.*<\(.*\)>.*/\1/p') || true
case "$email" in
*@*.*) ;;
*) die "refusing to export: '$email' is not an e-mail address; set git config user.email" ;;
esac
[ -n "$name" ] || die "refusing to export without a name; set git config user.name"
signoff=$(personal_identity "$name" "$email" && echo --signoff || true)
[ -n "$signoff" ] || log "'$name <$email>' is not a personal address: exporting without Signed-off-by"

# No commit may carry a Signed-off-by that no person gave.
while read -r sob; do
	sname=$(echo "$sob" | sed 's/^Signed-off-by: *//; s/ *<.*//')
	semail=$(echo "$sob" | sed -n 's/.*<\(.*\)>.*/\1/p')
	personal_identity "$sname" "$semail" || die "refusing to export: '$sob' is not a person's sign-off"
done < <(git -C "$tree" log --format=%B "$range" | grep '^Signed-off-by:' || true)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086
git -C "$tree" format-patch -q --cover-letter --subject-prefix="$prefix" $signoff \
	--from="$name <$email>" --no-signature -o "$tmp" "$range"
python3 - "$tmp/0000-cover-letter.patch" "$dir/cover-letter.txt" <<'PY'
import sys
cover, text = sys.argv[1], open(sys.argv[2]).read()
subject, _, body = text.partition("\n")
s = open(cover).read()
s = s.replace("*** SUBJECT HERE ***", subject.strip())
s = s.replace("*** BLURB HERE ***", body.strip("\n"))
open(cover, "w").write(s)
PY
rm -f "$dir"/[0-9][0-9][0-9][0-9]-*.patch
cp "$tmp"/*.patch "$dir/"
(cd "$dir" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v '^0000-') >"$dir/series"
log "exported $(wc -l <"$dir/series") patches to $dir"
