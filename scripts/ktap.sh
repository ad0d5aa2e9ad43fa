#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The host's one parser of the guest's KTAP (scripts/guest/init, through
# the kernel's ktap_helpers.sh; kselftest's runner format: a selftest's
# own results are "# ok N ..." lines before its own result line).  KUnit's
# KTAP goes through kunit.py instead (scripts/kunit.sh).
#   ktap.sh counts FILE   "PASSED FAILED SKIPPED RESULTS PLANNED": a
#                         result with subtests counts its subtests, one
#                         without counts itself, and a failing one whose
#                         subtests all passed counts one failure more,
#                         and a skipped one counts one skip (and its
#                         subtests' failures), not its subtests' passes;
#                         RESULTS the top-level results, PLANNED the sum of
#                         the plans ("1..N"), "none" without any
#   ktap.sh results FILE  "STATUS<tab>NAME<tab>DIRECTIVE" per top-level
#                         result, STATUS pass, fail or skip, NAME up to its
#                         directive ("# SKIP", "# exit=N"), which follows
# Lines that are not KTAP (the console's, "KTAP-BOOT: ...") are ignored.
set -euo pipefail

usage() {
	echo "usage: ktap.sh counts|results FILE" >&2
	exit 2
}
[ $# = 2 ] || usage
[ -r "$2" ] || { echo "ktap.sh: cannot read $2" >&2; exit 1; }

case $1 in
counts)
	awk '
		/^# (not )?ok [0-9]+/ {
			sub(/^# /, "")
			sub_ok += /^ok/ && !/# SKIP/; sub_skip += /# SKIP/; sub_fail += /^not ok/
			next
		}
		/^(not )?ok [0-9]+/ {
			top++
			bad = /^not ok/
			if (sub_ok + sub_skip + sub_fail == 0) {
				pass += !bad && !/# SKIP/; skip += !bad && /# SKIP/; fail += bad
			} else if (!bad && /# SKIP/) {
				# Skipped as a whole: one skip, whatever its subtests
				# passed before it gave up (their failures still count).
				skip++; fail += sub_fail
			} else {
				pass += sub_ok; skip += sub_skip; fail += sub_fail + (bad && !sub_fail)
			}
			sub_ok = sub_skip = sub_fail = 0
		}
		/^1\.\.[0-9]+/ { plan += substr($1, 4); planned = 1 }
		END { print pass + 0, fail + 0, skip + 0, top + 0, planned ? plan : "none" }' "$2"
	;;
results)
	awk '
		/^(not )?ok [0-9]+ / {
			name = $0; sub(/^(not )?ok [0-9]+ /, "", name)
			dir = ""
			if (match(name, / *# */)) { dir = substr(name, RSTART + RLENGTH); name = substr(name, 1, RSTART - 1) }
			if (/^not ok/) s = "fail"; else if (/# SKIP/) s = "skip"; else s = "pass"
			print s "\t" name "\t" dir
		}' "$2"
	;;
*) usage ;;
esac
