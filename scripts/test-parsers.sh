#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The harness's parsers against golden inputs (scripts/testdata/), below
# the end-to-end cases of check-harness: each parser's output on a fixed
# input must be the stored one, byte for byte.
#   ktap.sh counts, ktap.sh results   the host's KTAP parser, on a boot's
#                                     file and on a backend's (nested)
#   backend_tap (lib.sh)              a backend's document from its boots'
#   kunit.sh count                    kunit.py's JSON, counted
#   config_missing (lib.sh)           the config verifier of build.sh
#   add_headers (lib.sh)              To:/Cc: folding of export-series.sh
#   splice_cover (lib.sh)             its cover-letter splice
#   dead_links (lib.sh)               the Markdown link check of lint.sh
#   guest/can_wait                    the "can wait" predicate, on cpuinfo samples
#   guest/bench                       its result lines to CSV columns
#   model.sh report                   the wake test's and ping-pong's lines
#                                     to the model's rows, means and lines
# Needs nothing built: seconds, in "make lint" and so in CI.
SUITE=parsers
. "$(dirname "$0")/lib.sh"
T=$HARNESS/scripts/testdata
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# golden NAME EXPECTED CMD...: CMD's output (stdout, then its exit status if
# not 0) must be the file EXPECTED.
golden() {
	local name=$1 want=$2 rc=0
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 0 ] || echo "exit $rc" >>"$tmp/out"
	if cmp -s "$tmp/out" "$want"; then
		pass=$((pass + 1))
		say "ok $name"
	else
		fail=$((fail + 1))
		say "not ok $name: output differs from $(basename "$(dirname "$want")")/$(basename "$want")"
		diff -u "$want" "$tmp/out" | sed 's/^/    /' | head -n 20 >&2
		sed 's/^/    stderr: /' "$tmp/err" | head -n 5 >&2
	fi
}

# The file FILE after FUNC FILE ARGS... (the series helpers edit in place).
edited() {
	local func=$1 in=$2
	shift 2
	cp "$in" "$tmp/edit"
	"$func" "$tmp/edit" "$@"
	cat "$tmp/edit"
}

golden "ktap counts" "$T/ktap/guest.counts" "$HARNESS/scripts/ktap.sh" counts "$T/ktap/guest.tap"
golden "ktap results" "$T/ktap/guest.results" "$HARNESS/scripts/ktap.sh" results "$T/ktap/guest.tap"
# A backend's file (vm.sh, lib.sh's backend_tap): one document, a subtest
# per boot file of ktap/boot/: one boot red, one green, one that failed
# after one result, one that ran none, one whose document was cut short;
# its counts; Perl's TAP::Parser, which reads it as Test::More's indented
# subtests, must find no error in it.
golden "backend document from boot files" "$T/ktap/backend.tap" \
	backend_tap "$T/ktap/boot/vm-bochs" apicv-off check cpuidle apicv-off load cut
golden "ktap counts, nested" "$T/ktap/backend.counts" "$HARNESS/scripts/ktap.sh" counts "$T/ktap/backend.tap"
golden "ktap results, nested" "$T/ktap/backend.results" "$HARNESS/scripts/ktap.sh" results "$T/ktap/backend.tap"
golden "TAP::Parser on a backend's file" "$T/ktap/backend.tap-parser" perl -MTAP::Parser -e '
	$p = TAP::Parser->new({ source => $ARGV[0] }); 1 while $p->next;
	printf "parse errors: %s; top-level tests %d, failed %d\n", join("; ", $p->parse_errors) || "none", $p->tests_run, scalar $p->failed' \
	"$T/ktap/backend.tap"
golden "kunit.py JSON counts" "$T/kunit/results.counts" "$HARNESS/scripts/kunit.sh" count "$T/kunit/results.json"
golden "config verifier" "$T/config/missing" config_missing "$T/config/config" "$T/config/fragment"
golden "To/Cc folding" "$T/series/patch.expected" edited add_headers "$T/series/patch" "$(cat "$T/series/recipients")"
golden "Markdown link check" "$T/links/dead.expected" \
	bash -c 'cd "$1" && . "$2/scripts/lib.sh" && dead_links links.md none.md' _ "$T/links" "$HARNESS"
golden "can-wait predicate: Bochs SPR, KVM guest with WAITPKG, TCG, monitor bug, bare metal" \
	"$T/cpuinfo/can_wait.expected" bash -c 'cd "$1" && for f in bochs-sapphire-rapids kvm-guest-waitpkg qemu-tcg monitor-bug bare-metal-waitpkg; do echo "$f $(sh "$2" "$f")"; done' _ \
	"$T/cpuinfo" "$HARNESS/scripts/guest/can_wait"
# model.sh's report: "ok"/"not ok" lines of each seed (CRLF too), a path
# missing at one knob, the ping-pong's rows; the least-squares break-even.
golden "model report: rows, means over seeds, break-even lines" "$T/model/report.expected" \
	bash -c 'WORK=$(mktemp -d) && trap "rm -rf \$WORK" EXIT && WORK=$WORK RESULTS=$1 MODEL_PAUSE=140 MODEL_EXIT_NS="0 500" "$2/scripts/model.sh" report 2>/dev/null | grep -v "^\[model"' _ \
	"$T/model" "$HARNESS"
golden "model report: the CSV" "$T/model/model.csv.expected" \
	bash -c 'WORK=$(mktemp -d) && trap "rm -rf \$WORK" EXIT && WORK=$WORK RESULTS=$1 MODEL_PAUSE=140 MODEL_EXIT_NS="0 500" "$2/scripts/model.sh" report >/dev/null 2>&1 && cat "$WORK/model/model.csv"' _ \
	"$T/model" "$HARNESS"
# guest/bench's "# result" line to CSV row: each field in its column (the
# columns that do not depend on time or the machine).
golden "bench: result lines to CSV columns" "$T/bench/csv.expected" bash -c '
	mkdir -p "$1/sys/module/kvm/parameters" "$1/t" && cp "$2/halt_poll_bench" "$1/t/" &&
	echo 0 >"$1/sys/module/kvm/parameters/halt_poll_tpause_ns" &&
	BENCH_SYSFS=$1/sys POWERCAP=$1/none COMPARE=0 RR_S=0 sh "$3" -r 1 -k "0 20000" -t "$1/t" 2>/dev/null |
	awk -F, "NR == 1 { for (i = 1; i <= NF; i++) c[\$i] = i }
		{ n = split(\"bench setting knob poll_ns path p50 p90 p99 max halt_exits halt_successful_poll halt_poll_wait halt_poll_wait_ns resent halt_poll_time_ns apicv ipiv tsc_moved\", f, \" \")
		  for (i = 1; i <= n; i++) printf \"%s%s\", \$c[f[i]], i < n ? \",\" : \"\\n\" }"' _ \
	"$tmp/bench" "$T/bench" "$HARNESS/scripts/guest/bench"
golden "cover-letter splice" "$T/series/cover.expected" \
	bash -c '. "$1/scripts/lib.sh"; cp "$3" "$4"; splice_cover "$2" "$4"; cat "$4"' _ \
	"$HARNESS" "$T/series/cover-stored" "$T/series/cover-new" "$tmp/cover"

record "$SUITE" "$pass" "$fail" 0
[ "$fail" = 0 ] || die "$fail of $((pass + fail)) parser test(s) differ from their golden output"
say "parsers: $pass of $pass match their golden output"
