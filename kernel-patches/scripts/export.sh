#!/bin/bash
# Export the series from a development git tree whose branch is based on
# the "base" tag that apply.sh creates:
#   export.sh TREE [REV-RANGE]     (default range: base..HEAD)
# Writes kernel-patches/<series>/NNNN-*.patch, 0000-cover-letter.patch
# (subject and text from cover-letter.txt) and the series file.
# Environment: TOPOTUNE_SUBJECT_PREFIX (default: subject_prefix from
# kernel-patches/<series>/base, else "PATCH v4").
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$1
range=${2:-base..HEAD}
dir="$KP_DIR/$KSERIES"
prefix=${TOPOTUNE_SUBJECT_PREFIX:-${subject_prefix:-PATCH v4}}

# From: is the exporting developer, from git's own identity (git config
# user.name/user.email, or GIT_COMMITTER_*), never a placeholder: a
# series that goes out must name a person who can answer for it.
name=$(git -C "$KP_DIR" var GIT_COMMITTER_IDENT 2>/dev/null | sed 's/ <.*//') || true
email=$(git -C "$KP_DIR" var GIT_COMMITTER_IDENT 2>/dev/null | sed -n 's/.*<\(.*\)>.*/\1/p') || true
case "$email" in
''|*.invalid|*@topotune.invalid|*@localhost|*@localhost.*|*@*.local|*@\(none\))
	die "refusing to export with the placeholder address '$email'; set git config user.email" ;;
*@*) ;;
*) die "refusing to export: '$email' is not an e-mail address" ;;
esac
case "$name" in
''|'topotune developers'|root|'Your Name')
	die "refusing to export as '$name'; set git config user.name" ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git -C "$tree" format-patch -q --cover-letter --subject-prefix="$prefix" \
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
