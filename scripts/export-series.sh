#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export each posting branch of the kernel tree (base..kvm, base..cpuidle)
# as a patch series of its own.
#   export-series.sh OUTDIR   write the postings into OUTDIR/POSTING (hygiene)
#   export-series.sh          replace $PATCHES/POSTING with them ("make series")
# To: and Cc: of each patch come from the tree's get_maintainer.pl, run on
# that patch (maintainers To, lists and reviewers Cc), plus the posting's
# own lines in config/recipients, or from config/recipients alone for a
# patch within the posting's Scope; the cover letter gets all of them.  The
# cover letter keeps the author, subject, date and text of the stored one
# (so that the output does not depend on the git identity); its shortlog
# and diffstat are regenerated.  Stable output: --zero-commit and
# --no-signature, so an unchanged tree exports byte-identical files.
. "$(dirname "$0")/lib.sh"

# Each posting's subject prefix is the "# Prefix:" line of its series file
# (RFC until there are numbers from WAITPKG hardware); PREFIX overrides it.
out=${1:-}
git -C "$TREE" rev-parse -q --verify refs/tags/base >/dev/null || die "no tree at $TREE (run 'make tree')"
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted changes: commit them first"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# recipients PATCH...: "To: x" and "Cc: x" lines for these patch files,
# maintainers first, each address once.
recipients() {
	local a role
	(cd "$TREE" && ./scripts/get_maintainer.pl --no-git --no-git-fallback --roles --no-rolestats "$@") |
		while IFS= read -r a; do
			role=${a#* (}
			a=${a%% (*}
			case $role in
			maintainer*) echo "To: $a" ;;
			*) echo "Cc: $a" ;;
			esac
		done
}

# export_posting NAME DIR: the posting branch NAME, as patch files in DIR.
export_posting() {
	local name=$1 dir=$2 stored=$PATCHES/$1/0000-cover-letter.patch f all=
	git -C "$TREE" rev-parse -q --verify "refs/heads/$name" >/dev/null ||
		die "no branch $name in $TREE (run 'make tree')"
	mkdir -p "$dir"
	[ "$(git -C "$TREE" rev-list --count base.."$name")" != 0 ] || die "branch $name has no commits"
	prefix=${PREFIX:-$(sed -n 's/^# Prefix: //p' "$PATCHES/$name/series" 2>/dev/null)}
	[ -n "$prefix" ] || die "no '# Prefix:' line in $PATCHES/$name/series, and no PREFIX"
	git -C "$TREE" -c core.abbrev=12 format-patch -q --cover-letter --zero-commit \
		--no-signature --subject-prefix="$prefix" -o "$dir" base.."$name" ||
		die "git format-patch of $name failed"
	extra=$(sed -n -E "s/^$name: ((To|Cc): )/\1/p" "$HARNESS/config/recipients")
	# A patch whose files all match the posting's Scope goes to its Scoped
	# recipients only; the cover letter's To: are those of such patches,
	# and it is Cc'd to the other patches' lists and aliases (addresses
	# without a name), not to their maintainers.
	scope=$(sed -n "s/^$name: Scope: //p" "$HARNESS/config/recipients")
	scoped=$(sed -n "s/^$name: Scoped: //p" "$HARNESS/config/recipients")
	for f in "$dir"/[0-9][0-9][0-9][0-9]-*.patch; do
		case $f in */0000-cover-letter.patch) continue ;; esac
		if [ -n "$scope" ] && ! git apply --numstat "$f" | cut -f3 | grep -qvE "$scope"; then
			r=$scoped
			# "NAME: File PATH: Cc: x": also to x where the patch touches PATH.
			while read -r path cc; do
				! git apply --numstat "$f" | cut -f3 | grep -qxF "$path" || r+=$'\n'"$cc"
			done < <(sed -n -E "s/^$name: File ([^:]+): ((To|Cc): .*)/\1 \2/p" "$HARNESS/config/recipients")
		elif [ -n "$scope" ]; then
			r=$(recipients "$f")
			all+=$(sed 's/^To: /Cc: /' <<<"$r" | grep -v '<' || true)$'\n'
			add_headers "$f" "$r"$'\n'"$extra"
			continue
		else
			r=$(recipients "$f")
		fi
		all+=$r$'\n'
		add_headers "$f" "$r"$'\n'"$extra"
	done
	add_headers "$dir/0000-cover-letter.patch" "$(grep '^To: ' <<<"$all")"$'\n'"$(grep '^Cc: ' <<<"$all")"$'\n'"$extra"
	[ -f "$stored" ] || return 0
	# Stored author, subject, date and blurb; generated shortlog and diffstat.
	splice_cover "$stored" "$dir/0000-cover-letter.patch"
}

for posting in $POSTINGS; do
	export_posting "$posting" "$tmp/$posting"
done

if [ -n "$out" ]; then
	for posting in $POSTINGS; do
		mkdir -p "$out/$posting"
		cp "$tmp/$posting"/*.patch "$out/$posting"/
	done
	exit 0
fi

# "make series": replace the stored patches, keep series comments and order.
for posting in $POSTINGS; do
	d=$PATCHES/$posting
	mkdir -p "$d"
	[ -f "$d/series" ] || echo "# The $posting posting, in order, applied with git am." >"$d/series"
	rm -f "$d"/[0-9][0-9][0-9][0-9]-*.patch
	cp "$tmp/$posting"/*.patch "$d"/
	new=$(cd "$d" && ls [0-9][0-9][0-9][0-9]-*.patch)
	awk -v new="$new" '
		BEGIN { n = split(new, f, "\n"); for (i = 1; i <= n; i++) have[f[i]] = 1 }
		{ name = $0; sub(/[ \t]*#.*/, "", name) }
		name == "" { print; next }
		{ num = substr(name, 1, 4) }
		num in bynum { next }
		{ for (i = 1; i <= n; i++) if (substr(f[i], 1, 4) == num) { print f[i]; bynum[num] = 1; done[f[i]] = 1 } }
		END { for (i = 1; i <= n; i++) if (!(f[i] in done)) print f[i] }' "$d/series" >"$tmp/series"
	mv "$tmp/series" "$d/series"
	say "exported $(git -C "$TREE" rev-list --count base.."$posting") patch(es) to $d"
done
echo "$(series_stamp) $(tree_heads)" >"$TREE/.git/harness-series"
