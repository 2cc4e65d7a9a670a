#!/bin/bash
# Export the series from a development git tree whose branch is based on
# the "base" tag that apply.sh creates:
#   export.sh TREE [REV-RANGE]     (default range: base..HEAD)
# Writes kernel-patches/<series>/NNNN-*.patch, 0000-cover-letter.patch
# (subject and text from cover-letter.txt) and the series file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$1
range=${2:-base..HEAD}
dir="$KP_DIR/$KSERIES"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git -C "$tree" format-patch -q --cover-letter --subject-prefix="PATCH v3" \
	--no-signature -o "$tmp" "$range"
python3 - "$tmp/0000-cover-letter.patch" "$dir/cover-letter.txt" <<'PY'
import sys
cover, text = sys.argv[1], open(sys.argv[2]).read()
subject, _, body = text.partition("\n")
s = open(cover).read()
s = s.replace("*** SUBJECT HERE ***", subject.strip())
s = s.replace("*** BLURB HERE ***", body.strip("\n") +
	"\n\nSigned-off-by: topotune developers <dev@topotune.invalid>")
open(cover, "w").write(s)
PY
rm -f "$dir"/[0-9][0-9][0-9][0-9]-*.patch
cp "$tmp"/*.patch "$dir/"
(cd "$dir" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v '^0000-') >"$dir/series"
log "exported $(wc -l <"$dir/series") patches to $dir"
