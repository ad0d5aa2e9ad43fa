#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the commits base..HEAD of the kernel tree as a patch series.
#   export-series.sh OUTDIR   write the series into OUTDIR (used by hygiene)
#   export-series.sh          replace patches/ with it ("make series")
# The cover letter keeps the author, subject, date and text of the stored
# one (so that the output does not depend on the git identity); its
# shortlog and diffstat are regenerated.  Stable output: --zero-commit and
# --no-signature, so an unchanged tree exports byte-identical files.
. "$(dirname "$0")/lib.sh"

out=${1:-}
git -C "$TREE" rev-parse -q --verify refs/tags/base >/dev/null || die "no tree at $TREE (run 'make tree')"
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted changes: commit them first"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stored=$PATCHES/0000-cover-letter.patch

if [ "$(git -C "$TREE" rev-list --count base..HEAD)" = 0 ]; then
	[ -f "$stored" ] && cp "$stored" "$tmp/"
else
	# RFC until there are numbers from WAITPKG hardware; To/Cc from
	# config/recipients.
	rcpt=()
	while IFS= read -r l; do
		case $l in
		"To: "*) rcpt+=(--to="${l#To: }") ;;
		"Cc: "*) rcpt+=(--cc="${l#Cc: }") ;;
		esac
	done <"$HARNESS/config/recipients"
	git -C "$TREE" -c core.abbrev=12 format-patch -q --cover-letter --zero-commit \
		--no-signature --subject-prefix="RFC PATCH v2" "${rcpt[@]}" -o "$tmp" base..HEAD ||
		die "git format-patch failed"
	if [ -f "$stored" ]; then
		# Stored author, subject, date and blurb; generated shortlog and
		# diffstat.
		awk -v stored="$stored" '
			BEGIN {
				hdr = 1
				while ((getline l < stored) > 0) {
					if (hdr && l ~ /^From: /) { from = l; infrom = 1; continue }
					if (hdr && infrom && l ~ /^[ \t]/) { from = from "\n" l; continue }
					infrom = 0
					if (hdr && l ~ /^Date: /) date = l
					else if (hdr && l ~ /^Subject: /) { sub(/^Subject: \[[^]]*\] /, "", l); subj = l }
					else if (hdr && l == "") hdr = 0
					else if (!hdr && l ~ /^[^ ].* \([0-9]+\):$/) break
					else if (!hdr) blurb = blurb l "\n"
				}
				sub(/\n+$/, "\n", blurb)
			}
			skip && /^[ \t]/ { next }
			{ skip = 0 }
			/^Date: / && date != "" { print date; next }
			/^From: / && from != "" { print from; skip = 1; next }
			/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) }
			/^\*\*\* BLURB HERE \*\*\*$/ { printf "%s", blurb; next }
			{ print }' "$tmp/0000-cover-letter.patch" >"$tmp/cover" &&
			mv "$tmp/cover" "$tmp/0000-cover-letter.patch"
	fi
fi

if [ -n "$out" ]; then
	mkdir -p "$out"
	cp "$tmp"/*.patch "$out"/ 2>/dev/null || true
	exit 0
fi

# "make series": replace the stored patches, keep series comments and order.
rm -f "$PATCHES"/[0-9][0-9][0-9][0-9]-*.patch
cp "$tmp"/*.patch "$PATCHES"/
new=$(cd "$PATCHES" && ls [0-9][0-9][0-9][0-9]-*.patch)
awk -v new="$new" '
	BEGIN { n = split(new, f, "\n"); for (i = 1; i <= n; i++) have[f[i]] = 1 }
	{ name = $0; sub(/[ \t]*#.*/, "", name) }
	name == "" { print; next }
	{ num = substr(name, 1, 4) }
	num in bynum { next }
	{ for (i = 1; i <= n; i++) if (substr(f[i], 1, 4) == num) { print f[i]; bynum[num] = 1; done[f[i]] = 1 } }
	END { for (i = 1; i <= n; i++) if (!(f[i] in done)) print f[i] }' "$PATCHES/series" >"$tmp/series"
mv "$tmp/series" "$PATCHES/series"
stamp=$(cd "$PATCHES" && cat series $(series_list) | sha256sum | cut -c1-16)
echo "$stamp $(git -C "$TREE" rev-parse HEAD)" >"$TREE/.git/harness-series"
say "exported $(git -C "$TREE" rev-list --count base..HEAD) patch(es) to $PATCHES"
