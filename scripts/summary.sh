#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "summary": per-suite counts and the closing "N passed, N failed" line.
. "$(dirname "$0")/lib.sh"

tp=0 tf=0 ts=0
echo
printf '%-10s %7s %7s %8s\n' suite passed failed skipped
# SUMMARY_GLOB picks the suites (default all, "*").  A count file that is
# not "PASSED FAILED SKIPPED" counts as one failure.
for f in "$RESULTS"/${SUMMARY_GLOB:-*}.count; do
	[ -e "$f" ] || continue
	line=$(cat "$f")
	if [[ ! $line =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]]; then
		echo "$(basename "$f" .count): malformed count file ($f: '$line'), counted as a failure" >&2
		line="0 1 0"
	fi
	read -r p fl s <<<"$line"
	printf '%-10s %7s %7s %8s\n' "$(basename "$f" .count)" "$p" "$fl" "$s"
	tp=$((tp + p)) tf=$((tf + fl)) ts=$((ts + s))
done
# SUMMARY_REQUIRE lists the suites that must have run (the targets that
# run the summary set it): a missing one is reported as not run (an earlier
# stage failed, or its own stage died before counting) and counts as a
# failure.
notrun=
for r in ${SUMMARY_REQUIRE:-}; do
	[ -e "$RESULTS/$r.count" ] && continue
	printf '%-10s %7s %7s %8s  not run\n' "$r" 0 1 0
	notrun+=" $r"
	tf=$((tf + 1))
done
# Every red suite, and what in it failed: the stage's own list (SUITE.red,
# e.g. hygiene's problems), its TAP's "not ok" lines (the VM's selftests and
# checks, subtests included), its KUnit cases, or the stage's output above.
for f in "$RESULTS"/${SUMMARY_GLOB:-*}.count; do
	[ -e "$f" ] || continue
	r=$(basename "$f" .count)
	read -r _ fl _ <"$f" 2>/dev/null || fl=1
	[[ $fl =~ ^[0-9]+$ ]] || fl=1
	[ "$fl" != 0 ] || continue
	what=
	if [ -s "$RESULTS/$r.red" ]; then
		what=$(cut -c1-110 "$RESULTS/$r.red")
	elif [ -s "$RESULTS/$r.tap" ]; then
		what=$(grep -E '^[[:space:]#]*not ok [0-9]+ ' "$RESULTS/$r.tap" | sed -E 's/^[[:space:]#]*//' | cut -c1-110 || true)
	elif [[ $r == *-kunit ]]; then
		what=$(cat "$LOGS/${r}"-*.log.parse 2>/dev/null | grep -E '\[(FAILED|CRASHED)\]' |
			sed -E 's/^.*\[(FAILED|CRASHED)\] */\1 /' | cut -c1-110 || true)
	fi
	[ -n "$what" ] || what="(the stage's output above says why)"
	echo "red: $r" >&2
	sed -n 's/^/  /; 1,20p' <<<"$what" >&2
done
[ -z "$notrun" ] || echo "not run:$notrun" >&2
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" = 0 ] || exit 1
[ "$((tp + ts))" -gt 0 ] || { echo "no test ran" >&2; exit 1; }
