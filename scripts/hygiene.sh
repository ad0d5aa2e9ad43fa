#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "hygiene": the stored series is complete, well formed, regenerates
# byte for byte from the tree, and is checkpatch --strict clean.
SUITE=hygiene
. "$(dirname "$0")/lib.sh"
rm -f "$RESULTS/$SUITE.count" "$RESULTS/$SUITE.red"

# Each problem, on stderr and in hygiene.red for the summary.
errors=0
bad() { echo "  $*" >&2; echo "$*" >>"$RESULTS/$SUITE.red"; errors=$((errors + 1)); }

# 1. Each posting's series and directory agree; every patch is a single
# mbox message.
listed=$(series_list)
for p in $listed; do
	[ -f "$PATCHES/$p" ] || bad "series lists $p, which does not exist"
done
for posting in $POSTINGS; do
	for f in "$PATCHES/$posting"/*.patch; do
		[ -e "$f" ] || continue
		p=$posting/$(basename "$f")
		grep -qxF -- "$p" <<<"$listed" || bad "$p is in $PATCHES but not in $posting/series"
		n=$(grep -c '^From [0-9a-f]\{40\} ' "$f" || true)
		head -n1 "$f" | grep -q '^From [0-9a-f]\{40\} ' && [ "$n" = 1 ] ||
			bad "$p is not a single mbox message ($n 'From ' lines)"
		grep -q '^Subject: ' "$f" || bad "$p has no Subject: header"
	done
	grep -qxF "$posting/0000-cover-letter.patch" <<<"$listed" || bad "$posting has no cover letter"
	! grep -qE '\*\*\* (SUBJECT|BLURB) HERE \*\*\*' "$PATCHES/$posting/0000-cover-letter.patch" 2>/dev/null ||
		bad "$posting/0000-cover-letter.patch has no subject or text of its own (*** ... HERE ***)"
	# Short cover letters, headers included: 6 KB for KVM, 5 KB for cpuidle.
	case $posting in kvm) limit=6144 ;; *) limit=5120 ;; esac
	size=$(wc -c <"$PATCHES/$posting/0000-cover-letter.patch" 2>/dev/null || echo 0)
	[ "$size" -le $limit ] || bad "$posting/0000-cover-letter.patch is $size bytes, over $limit"
done
[ "$(echo "$listed" | sort | uniq -d)" = "" ] || bad "a series lists a patch twice"
say "series: $(echo "$listed" | grep -c . || true) file(s) listed in $(wc -w <<<"$POSTINGS") postings"

# 1b. Each posting applies on its own to base (tree.sh applied it so), and
# the postings apply one after the other in either order, a patch that the
# other already brought being skipped (as "git am -3" does), without fuzz.
idx=$(mktemp)
order_check() {
	local seen='' p id
	GIT_INDEX_FILE=$idx git -C "$TREE" read-tree base
	for p in $(series_list "$1"); do
		case $p in */0000-cover-letter.patch) continue ;; esac
		id=$(git -C "$TREE" patch-id --stable <"$PATCHES/$p" | cut -d' ' -f1)
		if grep -qw -- "$id" <<<"$seen"; then
			continue
		fi
		seen+=" $id"
		GIT_INDEX_FILE=$idx git -C "$TREE" apply --cached "$PATCHES/$p" 2>"$LOGS/hygiene-order.log" ||
			{ bad "in the order $1, $p does not apply: $(head -n1 "$LOGS/hygiene-order.log")"; return; }
	done
}
order_check "$POSTINGS"
order_check "$(tr ' ' '\n' <<<"$POSTINGS" | tac | tr '\n' ' ')"
rm -f "$idx"
say "postings apply in either order"

# 2. Round trip: the tree's commits export to exactly the stored files.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if "$HARNESS/scripts/export-series.sh" "$tmp/out" >"$LOGS/hygiene-export.log" 2>&1; then
	if ! diff -ru "$PATCHES" "$tmp/out" -x series >"$LOGS/hygiene-roundtrip.diff"; then
		head -n 40 "$LOGS/hygiene-roundtrip.diff" >&2
		bad "round trip: the postings regenerated from $TREE differ from $PATCHES (see $LOGS/hygiene-roundtrip.diff)"
	fi
else
	cat "$LOGS/hygiene-export.log" >&2
	bad "round trip: could not regenerate the series from $TREE"
fi
say "round trip checked"

# 3. checkpatch --strict: no error and no warning.  New files draw a
# FILE_PATH_CHANGES warning; it is accepted only where get_maintainer.pl
# shows that an existing MAINTAINERS entry covers every new file.
# A checkpatch that cannot run all of its checks is a failure, not a pass:
# it skips the SPDX check silently without python3, and spdxcheck.py
# crashes without the modules it imports.  Debian's python3 has them
# (python3-ply, python3-git).
export PATH=/usr/bin:/bin:$PATH
# tool_error TOOL OUTPUT STATUS: the cause, if TOOL crashed or could not
# run (a traceback, a Perl error, a missing command, or an exit status that
# is not 0 or 1), else nothing.
tool_error() {
	local helper cause
	helper=$(grep -oE 'scripts/[A-Za-z0-9_]+\.(py|pl|sh)' <<<"$2" | grep -v "$1" | head -n1 || true)
	cause=$(grep -E '^[A-Za-z.]*(Error|Exception): |Traceback \(most recent|Can.t locate |command not found|No such file or directory|at \./scripts/[a-z_]+\.pl line [0-9]+' <<<"$2" |
		grep -v '^Traceback' | tail -n1 || true)
	[ -z "$cause" ] && grep -q '^Traceback (most recent' <<<"$2" && cause="a Python traceback"
	[ -n "$cause" ] || [ "$3" -le 1 ] || cause="exit status $3"
	[ -n "$cause" ] || return 0
	echo "$1${helper:+ (its helper $helper)} could not run: $cause"
}
py=$(python3 -c 'import ply, git' 2>&1 | tail -n1) ||
	die "checkpatch.pl cannot run its SPDX check: python3 ($(command -v python3 || echo none)): ${py:-not found}"
for p in $listed; do
	case $p in */0000-cover-letter.patch) continue ;; esac
	[ -f "$PATCHES/$p" ] || continue
	rc=0
	out=$(cd "$TREE" && ./scripts/checkpatch.pl --strict --terse --no-summary \
		--show-types "$PATCHES/$p" 2>&1) || rc=$?
	terr=$(tool_error checkpatch.pl "$out" "$rc")
	if [ -n "$terr" ]; then
		echo "$out" | tail -n 20 >&2
		bad "$p: $terr"
		continue
	fi
	if grep -q ':FILE_PATH_CHANGES:' <<<"$out"; then
		for f in $(sed -n 's|^+++ b/||p' "$PATCHES/$p" | sort -u); do
			grep -q "^new file mode" <<<"$(grep -A1 "^diff --git a/$f b/$f" "$PATCHES/$p")" || continue
			rc=0
			m=$(cd "$TREE" && ./scripts/get_maintainer.pl --no-git --no-rolestats -f "$f" 2>&1) || rc=$?
			terr=$(tool_error get_maintainer.pl "$m" "$rc")
			[ -z "$terr" ] || { bad "$p: $terr"; continue; }
			m=$(grep -vE 'linux-kernel@vger.kernel.org|torvalds@' <<<"$m" | head -n1 || true)
			[ -n "$m" ] || bad "$p: new file $f is not covered by MAINTAINERS"
		done
		out=$(grep -v ':FILE_PATH_CHANGES:' <<<"$out" || true)
	fi
	if grep -qE ': (ERROR|WARNING):' <<<"$out"; then
		echo "$out" >&2
		bad "checkpatch --strict reports errors or warnings in $p"
	elif [ -n "$out" ]; then
		echo "$out" | sed 's/^/  (kept) /'
	fi
done
say "checkpatch --strict checked"

# 4. The harness's debug-only patches (debug/, applied by "make count" to a
# worktree of master, never posted): they still apply to master, and are
# checkpatch --strict clean too.  The upstream base only.
if [ "$KBASE" = upstream ]; then
	for p in "$HARNESS"/debug/*.patch; do
		[ -f "$p" ] || continue
		git -C "$TREE" apply --check "$p" >/dev/null 2>&1 ||
			bad "debug/$(basename "$p") does not apply to the tree's master"
		rc=0
		out=$(cd "$TREE" && ./scripts/checkpatch.pl --strict --terse --no-summary --no-signoff \
			--show-types "$p" 2>&1) || rc=$?
		terr=$(tool_error checkpatch.pl "$out" "$rc")
		if [ -n "$terr" ]; then
			bad "debug/$(basename "$p"): $terr"
		elif grep -qE ': (ERROR|WARNING|CHECK):' <<<"$out"; then
			echo "$out" >&2
			bad "checkpatch --strict reports problems in debug/$(basename "$p")"
		fi
	done
	say "debug patches apply to master and are checkpatch --strict clean"
fi

[ "$errors" = 0 ] || { record hygiene 0 "$errors" 0; die "$errors series problem(s), listed above"; }
record hygiene 1 0 0
say "series is clean"
