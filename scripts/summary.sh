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
# run the summary set it): a missing one counts as a failure.
for r in ${SUMMARY_REQUIRE:-}; do
	[ -e "$RESULTS/$r.count" ] && continue
	echo "$r: did not run (no $RESULTS/$r.count), counted as a failure" >&2
	printf '%-10s %7s %7s %8s\n' "$r" 0 1 0
	tf=$((tf + 1))
done
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" = 0 ] || exit 1
[ "$((tp + ts))" -gt 0 ] || { echo "no test ran" >&2; exit 1; }
