#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "tree": unpack the kernel source into a git tree, commit it as the
# tag "base", and apply each posting of $PATCHES with git am (no fuzz) on a
# branch of its own, from base: "kvm" and "cpuidle".  A patch that both
# postings carry (the UMONITOR/UMWAIT wrappers) is one commit, shared by
# both branches.  "master", the branch checked out and built, merges them.
# An unchanged series reuses the tree as it is.
. "$(dirname "$0")/lib.sh"

tarball=${KERNEL_TARBALL:-/usr/src/$KERNEL_SRC_PKG.tar.xz}
stamp_file=$TREE/.git/harness-series

stamp=$(series_stamp) || die "cannot read the postings in $PATCHES"

if ! git -C "$TREE" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
	[ -f "$tarball" ] || die "$tarball is missing (run 'make deps')"
	say "unpacking $(basename "$tarball")"
	rm -rf "$TREE" "$TREE.tmp"
	mkdir -p "$TREE.tmp"
	tar -C "$TREE.tmp" --strip-components=1 -xf "$tarball" ||
		die "cannot unpack $tarball"
	# Debian's packaging block ends the top-level .gitignore with "/*",
	# which would hide every new file from git.
	line=$(grep -n '^# Debian packaging' "$TREE.tmp/.gitignore" | cut -d: -f1 || true)
	if [ -n "$line" ]; then
		sed -i "$((line - 1)),\$d" "$TREE.tmp/.gitignore"
	fi
	say "committing the unpacked source as tag 'base'"
	(
		cd "$TREE.tmp"
		git init -q -b master
		git config gc.auto 0
		git config maintenance.auto false
		# git am needs a committer; the patches keep their own authors.
		git config user.name "$(git -C "$HARNESS" config user.name || echo harness)"
		git config user.email "$(git -C "$HARNESS" config user.email || echo harness@localhost)"
		git add -A
		GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z' \
			git commit -q -m "$(basename "$tarball" .tar.xz) $KERNEL_SRC_VER"
		git tag base
	) >"$LOGS/tree-base.log" 2>&1 || die "cannot commit the base tree" "$LOGS/tree-base.log"
	mv "$TREE.tmp" "$TREE"
fi

# No automatic gc: a background repack of the whole tree would outlive the
# stage and take the cores that the build needs.
git -C "$TREE" config gc.auto 0
git -C "$TREE" config maintenance.auto false

heads=$(tree_heads)
if [ -f "$stamp_file" ]; then
	read -r old_stamp old_heads <"$stamp_file"
else
	old_stamp='' old_heads=
fi

# merge_postings: master, the merge of the posting branches (fixed dates,
# so that the same branches give the same commit).
merge_postings() {
	git -C "$TREE" checkout -q -B master "${POSTINGS%% *}"
	GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z' \
		git -C "$TREE" merge -q --no-edit -m "Merge the postings: $POSTINGS" ${POSTINGS#* } \
		>"$LOGS/tree-merge.log" 2>&1 || {
		git -C "$TREE" merge --abort >/dev/null 2>&1 || true
		die "the postings do not merge: $POSTINGS" "$LOGS/tree-merge.log"
	}
}

# posting_heads HEADS: the posting branches' part of tree_heads' output.
posting_heads() { awk -v n="$(wc -w <<<"$POSTINGS")" '{ NF = n; print }' <<<"$1"; }
# merged: master contains every posting branch.
merged() {
	local b
	for b in $POSTINGS; do
		git -C "$TREE" merge-base --is-ancestor "$b" master 2>/dev/null || return 1
	done
}

if [ "$stamp" = "$old_stamp" ] && [ "$(posting_heads "$heads")" = "$(posting_heads "$old_heads")" ]; then
	# Commits on master itself belong to no posting.
	# (those after the merge that tree.sh made last, the last of old_heads).
	own=$(git -C "$TREE" rev-list --count master "^${old_heads##* }" 2>/dev/null || echo 1)
	if [ "$own" != 0 ] && [ "${FORCE:-0}" != 1 ]; then
		die "master in $TREE has $own commit(s) of its own: commit on a posting branch ($POSTINGS), or FORCE=1 to drop them"
	fi
	if [ "$own" = 0 ] && merged; then
		say "series unchanged, reusing $TREE"
		exit 0
	fi
	if [ "$own" = 0 ]; then
		# "make series" exported new commits of a posting branch.
		merge_postings
		echo "$stamp $(tree_heads)" >"$stamp_file"
		say "postings as exported: master merged again"
		exit 0
	fi
elif [ -n "$old_heads" ] && [ "$(posting_heads "$heads")" != "$(posting_heads "$old_heads")" ] &&
	[ "${FORCE:-0}" != 1 ]; then
	die "$TREE has commits that are not in $PATCHES (run 'make series' to keep them, or FORCE=1 to drop them)"
fi

git -C "$TREE" am --abort >/dev/null 2>&1 || true
git -C "$TREE" checkout -q -f --detach base
git -C "$TREE" clean -qfdx

# am_posting NAME: the branch NAME, from base, with the posting's patches.
am_posting() {
	local name=$1 p n=0 first=1
	git -C "$TREE" checkout -q -B "$name" base
	for p in $(series_list "$name"); do
		[ -f "$PATCHES/$p" ] || die "$name/series lists ${p#*/}, which does not exist"
		case "$p" in */0000-cover-letter.patch) continue ;; esac
		# A patch another posting also starts with: the same commit.
		if [ "$first" = 1 ]; then
			first=0
			local b c id
			id=$(git -C "$TREE" patch-id --stable <"$PATCHES/$p" | cut -d' ' -f1)
			for b in $POSTINGS; do
				[ "$b" != "$name" ] || break
				c=$(git -C "$TREE" rev-list --reverse base.."$b" | sed -n 1p)
				[ -n "$c" ] || continue
				if [ "$(git -C "$TREE" show "$c" | git -C "$TREE" patch-id --stable | cut -d' ' -f1)" = "$id" ]; then
					git -C "$TREE" reset -q --hard "$c"
					n=$((n + 1))
					continue 2
				fi
			done
		fi
		if ! git -C "$TREE" am -q --no-3way "$PATCHES/$p" >"$LOGS/tree-am.log" 2>&1; then
			git -C "$TREE" am --show-current-patch=diff >"$LOGS/tree-failed.diff" 2>/dev/null || true
			git -C "$TREE" am --abort >/dev/null 2>&1 || true
			git -C "$TREE" checkout -q -f --detach base
			rm -f "$stamp_file"
			cat "$LOGS/tree-am.log" >&2
			failed=$(sed -n 's/^error: patch failed: //p' "$LOGS/tree-am.log" | sed -n 1p)
			if [ -n "$failed" ]; then
				file=${failed%:*} at=${failed##*:}
				echo "---- the hunk of $p that does not apply to $file:$at ----" >&2
				awk -v f="$file" -v at="$at" '
					/^diff --git / { infile = ($3 == "a/" f) }
					infile && /^@@/ { split($2, a, ","); show = (-a[1] == at) }
					infile && show' "$PATCHES/$p" >&2
			fi
			die "patch $p does not apply to $(git -C "$TREE" log -1 --format=%s base)"
		fi
		n=$((n + 1))
	done
	say "$name: applied $n patch(es) on top of base"
}

for posting in $POSTINGS; do
	am_posting "$posting"
done
merge_postings
echo "$stamp $(tree_heads)" >"$stamp_file"
