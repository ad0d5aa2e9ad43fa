#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "tree": unpack Debian's linux-source into a git tree, commit it as
# the tag "base", and apply patches/series on top with git am (no fuzz).
# An unchanged series reuses the tree as it is.
. "$(dirname "$0")/lib.sh"

tarball=${KERNEL_TARBALL:-/usr/src/$KERNEL_SRC_PKG.tar.xz}
stamp_file=$TREE/.git/harness-series

[ -f "$PATCHES/series" ] || die "no series file in $PATCHES"
stamp=$(cd "$PATCHES" && cat series $(series_list) 2>/dev/null | sha256sum | cut -c1-16) || true

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
			git commit -q -m "$(basename "$tarball" .tar.xz) $(dpkg-query -W -f '${Version}' "$KERNEL_SRC_PKG" 2>/dev/null || echo "$KERNEL_SRC_VER")"
		git tag base
	) >"$LOGS/tree-base.log" 2>&1 || die "cannot commit the base tree" "$LOGS/tree-base.log"
	mv "$TREE.tmp" "$TREE"
fi

# No automatic gc: a background repack of the whole tree would outlive the
# stage and take the cores that the build needs.
git -C "$TREE" config gc.auto 0
git -C "$TREE" config maintenance.auto false

head=$(git -C "$TREE" rev-parse HEAD)
if [ -f "$stamp_file" ]; then
	read -r old_stamp old_head <"$stamp_file"
else
	old_stamp='' old_head=$(git -C "$TREE" rev-parse base)
fi

if [ "$stamp" = "$old_stamp" ] && [ "$head" = "$old_head" ]; then
	say "series unchanged, reusing $TREE"
	exit 0
fi
if [ "$head" != "$old_head" ] && [ "${FORCE:-0}" != 1 ]; then
	die "$TREE has commits that are not in patches/ (run 'make series' to keep them, or FORCE=1 to drop them)"
fi

git -C "$TREE" am --abort >/dev/null 2>&1 || true
git -C "$TREE" reset -q --hard base
git -C "$TREE" clean -qfdx

n=0
for p in $(series_list); do
	[ -f "$PATCHES/$p" ] || die "series lists $p, which does not exist"
	case "$p" in 0000-cover-letter.patch) continue ;; esac
	if ! git -C "$TREE" am -q --no-3way "$PATCHES/$p" >"$LOGS/tree-am.log" 2>&1; then
		git -C "$TREE" am --show-current-patch=diff >"$LOGS/tree-failed.diff" 2>/dev/null || true
		git -C "$TREE" am --abort >/dev/null 2>&1 || true
		git -C "$TREE" reset -q --hard base
		rm -f "$stamp_file"
		cat "$LOGS/tree-am.log" >&2
		failed=$(sed -n 's/^error: patch failed: //p' "$LOGS/tree-am.log" | head -n1)
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
echo "$stamp $(git -C "$TREE" rev-parse HEAD)" >"$stamp_file"
say "applied $n patch(es) on top of base"
