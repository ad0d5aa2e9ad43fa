#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "summary": per-suite counts and the closing "N passed, N failed" line.
. "$(dirname "$0")/lib.sh"

tp=0 tf=0 ts=0
echo
printf '%-10s %7s %7s %8s\n' suite passed failed skipped
# SUMMARY_GLOB picks the suites (default all, "*").
for f in "$RESULTS"/${SUMMARY_GLOB:-*}.count; do
	[ -e "$f" ] || continue
	read -r p fl s <"$f"
	printf '%-10s %7s %7s %8s\n' "$(basename "$f" .count)" "$p" "$fl" "$s"
	tp=$((tp + p)) tf=$((tf + fl)) ts=$((ts + s))
done
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" = 0 ] || exit 1
[ "$((tp + ts))" -gt 0 ] || { echo "no test ran" >&2; exit 1; }
