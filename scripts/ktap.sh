#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The host's one parser of the guest's KTAP (scripts/guest/init, through
# the kernel's ktap_helpers.sh; kselftest's runner format: a selftest's
# own results are "# ok N ..." lines before its own result line).  KUnit's
# KTAP goes through kunit.py instead (scripts/kunit.sh).  A document may
# nest documents, indented by four spaces, before the result they belong
# to (vm.sh's file of a backend: one subtest per boot).
#   ktap.sh counts FILE   "PASSED FAILED SKIPPED RESULTS PLANNED": a
#                         result with subtests (nested results, or else
#                         its "# ok" lines) counts its subtests, one
#                         without counts itself, and a failing one whose
#                         subtests all passed counts one failure more,
#                         and a skipped one counts one skip (and its
#                         subtests' failures), not its subtests' passes;
#                         RESULTS the results without a nested document,
#                         PLANNED the sum of the plans ("1..N") less the
#                         results with one ("none" without any plan):
#                         the two differ when a document is cut
#   ktap.sh results FILE  "STATUS<tab>NAME<tab>DIRECTIVE" per result
#                         without a nested document, STATUS pass, fail or
#                         skip, NAME up to its directive ("# SKIP",
#                         "# exit=N"), which follows
# Lines that are not KTAP (the console's, "KTAP-BOOT: ...") are ignored.
set -euo pipefail

usage() {
	echo "usage: ktap.sh counts|results FILE" >&2
	exit 2
}
[ $# = 2 ] || usage
[ -r "$2" ] || { echo "ktap.sh: cannot read $2" >&2; exit 1; }

case $1 in
counts | results)
	awk -v what="$1" '
		# The indentation of a line, which is then cut off: s.
		{ match($0, /^ */); d = RLENGTH; s = substr($0, d + 1) }
		s ~ /^# (not )?ok [0-9]+/ {
			sub(/^# /, "", s)
			ks_ok[d] += s ~ /^ok/ && s !~ /# SKIP/; ks_skip[d] += s ~ /# SKIP/
			ks_fail[d] += s ~ /^not ok/
			next
		}
		s ~ /^1\.\.[0-9]+/ {
			split(s, w, /[^0-9.]/); plan += substr(w[1], 4); planned = 1; nested_plan[d] = 1
			next
		}
		s !~ /^(not )?ok [0-9]+/ { next }
		{
			bad = s ~ /^not ok/; skipped = !bad && s ~ /# SKIP/
			# The nested documents before this one, deeper than it: its
			# subtests, already counted up (an empty one has none).
			np = nf = ns = nn = 0
			for (k in nested_plan)
				if (k + 0 > d) { nn = -1; delete nested_plan[k] }
			for (k in pend_n) {
				if (k + 0 <= d)
					continue
				np += pend_p[k]; nf += pend_f[k]; ns += pend_s[k]; nn = 1
				delete pend_p[k]; delete pend_f[k]; delete pend_s[k]; delete pend_n[k]
			}
			if (nn) {
				parents++
			} else {
				leaves++
				np = ks_ok[d]; nf = ks_fail[d]; ns = ks_skip[d]
				if (what == "results") {
					name = s; sub(/^(not )?ok [0-9]+ /, "", name)
					dir = ""
					if (match(name, / *# */)) { dir = substr(name, RSTART + RLENGTH); name = substr(name, 1, RSTART - 1) }
					print (bad ? "fail" : skipped ? "skip" : "pass") "\t" name "\t" dir
				}
			}
			ks_ok[d] = ks_fail[d] = ks_skip[d] = 0
			if (!nn && np + nf + ns == 0) {
				p = !bad && !skipped; f = bad; q = skipped
			} else if (skipped) {
				# Skipped as a whole: one skip, whatever its subtests
				# passed before it gave up (their failures still count).
				p = 0; f = nf; q = 1
			} else {
				p = np; f = nf + (bad && !nf); q = ns
			}
			pend_p[d] += p; pend_f[d] += f; pend_s[d] += q; pend_n[d]++
		}
		END {
			if (what != "counts")
				exit
			for (k in pend_n) { pass += pend_p[k]; fail += pend_f[k]; skip += pend_s[k] }
			print pass + 0, fail + 0, skip + 0, leaves + 0, planned ? plan - parents : "none"
		}' "$2"
	;;
*) usage ;;
esac
