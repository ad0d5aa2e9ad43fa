#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "bench": the numbers reviewers asked for (scripts/guest/bench
# measures them), as a CSV, a summary table and plots in work/bench/.
#   bench.sh vm      boot the production-config VM kernel on BENCH_BACKEND and
#                    run the bench in the guest: bochs (WAITPKG, emulated
#                    time, no RAPL); a QEMU guest never waits (the postings
#                    refuse under the hypervisor flag), and is refused
#   bench.sh host    run the bench on this machine, booted with the series
#   bench.sh report CSV   the table and the plots of a CSV
#   bench.sh test    the bench's own tests: the RAPL arithmetic against a
#                    fake powercap tree (with a counter wrap), and the table
#                    and plots of a known CSV
# BENCH_REPS (default 3 on a host, 1 in a VM), BENCH_KNOBS (default
# "0 2000 5000 20000 50000") and BENCH_POLL_WAIT_NS (20000) set the runs.
SUITE=bench
. "$(dirname "$0")/lib.sh"
stop_all_on_signal

OUT=${BENCH_OUT:-$WORK/bench}
KNOBS=${BENCH_KNOBS:-0 2000 5000 20000 50000}
mkdir -p "$OUT"

# meta FILE: the machine a bench ran on, one "key: value" a line: the CPU,
# its microcode, the kernel and its command line, the cpufreq governor,
# turbo, SMT, the kvm and kvm_intel parameters that decide the paths, and
# IA32_UMWAIT_CONTROL as the kernel set it.
meta() {
	local p f
	{
		echo "date: $(date -u +%FT%TZ)"
		# awk stops reading at the first match: no reader that exits
		# early under pipefail on a machine with many CPUs.
		echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
		echo "family/model/stepping: $(awk -F': ' '/^cpu family/ { f = $2 } /^model[[:space:]]*:/ { m = $2 } /^stepping/ { s = $2; exit } END { print f "/" m "/" s }' /proc/cpuinfo)"
		echo "microcode: $(awk -F': ' '/^microcode/ { print $2; exit }' /proc/cpuinfo)"
		echo "cpus: $(nproc)"
		echo "kernel: $(uname -r) $(uname -v)"
		echo "cmdline: $(cat /proc/cmdline)"
		echo "governor: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo none)"
		echo "intel_pstate no_turbo: $(cat /sys/devices/system/cpu/intel_pstate/no_turbo 2>/dev/null || echo n/a)"
		echo "smt: $(cat /sys/devices/system/cpu/smt/control 2>/dev/null || echo n/a)"
		echo "cpuidle driver: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
		echo "umwait_control: max_time $(cat /sys/devices/system/cpu/umwait_control/max_time 2>/dev/null || echo n/a), enable_c02 $(cat /sys/devices/system/cpu/umwait_control/enable_c02 2>/dev/null || echo n/a)"
		for p in kvm/parameters/halt_poll_ns kvm/parameters/halt_poll_tpause_ns kvm_intel/parameters/enable_apicv \
			kvm_intel/parameters/enable_ipiv kvm_intel/parameters/posted_intr umwait/parameters/poll_wait_ns; do
			f=/sys/module/$p
			echo "$p: $(cat "$f" 2>/dev/null || echo n/a)"
		done
	} >"$1"
}

# report CSV: the summary table (stdout and CSV.txt) and the plots.
report() {
	local csv=$1 base=${1%.csv}
	[ "$(wc -l <"$csv")" -gt 1 ] || die "$csv has no rows"
	# Per bench, setting and path: the median of each measure over the
	# repetitions, its spread (min-max of p50), and the change of p50,
	# p99, watts and CPU time against tpause:0 (and poll:0 for kvm).
	awk -F, '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{
			k = $col["bench"] SUBSEP $col["setting"] SUBSEP $col["path"]
			if (!(k in n)) order[++nk] = k
			n[k]++
			for (m = 1; m <= nm; m++) v[k, M[m], n[k]] = $col[M[m]]
			# The share of halt-poll time spent in UMWAIT (C0.1), per run.
			t = ("halt_poll_time_ns" in col) ? $col["halt_poll_time_ns"] : ""
			v[k, "wait_share", n[k]] = t > 0 ? 100 * $col["halt_poll_wait_ns"] / t : "NA"
			# poll_idle: the UMWAITs of cpu_poll_relax() per wakeup.
			w = ("wakes" in col) ? $col["wakes"] : ""
			v[k, "per_wake", n[k]] = w > 0 && $col["umwaits"] != "" ? $col["umwaits"] / w : "NA"
		}
		function median(k, m,   a, i, j, t, c) {
			c = 0
			for (i = 1; i <= n[k]; i++) if (v[k, m, i] != "" && v[k, m, i] != "NA") a[++c] = v[k, m, i] + 0
			if (!c) return "NA"
			for (i = 2; i <= c; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
		}
		function spread(k, m,   i, lo, hi, x) {
			lo = ""; hi = ""
			for (i = 1; i <= n[k]; i++) {
				x = v[k, m, i]
				if (x == "" || x == "NA") continue
				x += 0
				if (lo == "" || x < lo) lo = x
				if (hi == "" || x > hi) hi = x
			}
			return lo == "" ? "NA" : lo "-" hi
		}
		function pct(x, b) { return (x == "NA" || b == "NA" || b == 0) ? "NA" : sprintf("%+.1f%%", 100 * (x - b) / b) }
		BEGIN { nm = split("p50 p99 mean halt_poll_wait pkg_w cpu_busy_s poll_usage", M, " ") }
		END {
			printf "%-9s %-16s %-9s %4s %8s %13s %8s %8s %10s %7s %7s %9s %9s %9s %7s %8s\n",
				"bench", "setting", "path", "runs", "p50", "p50 spread", "p99", "mean", "waits", "pkg W", "CPU s",
				"p50 vs 0", "W vs 0", "W vs poll0", "wait %", "UMW/wake"
			for (i = 1; i <= nk; i++) {
				k = order[i]; split(k, f, SUBSEP)
				base = f[1] SUBSEP (f[1] == "kvm" ? "tpause:0" : "poll_idle:0") SUBSEP f[3]
				nopoll = f[1] SUBSEP "poll:0" SUBSEP f[3]
				# Round trips have a mean only (perf, the IPI ping-pong).
				lat = f[3] == "perf-pipe" || f[3] == "ipi-rr" ? "mean" : "p50"
				ws = median(k, "wait_share"); pw = median(k, "per_wake")
				printf "%-9s %-16s %-9s %4d %8s %13s %8s %8s %10s %7s %7s %9s %9s %9s %7s %8s\n",
					f[1], f[2], f[3], n[k], median(k, "p50"), spread(k, "p50"), median(k, "p99"),
					median(k, "mean"), median(k, "halt_poll_wait"), median(k, "pkg_w"),
					median(k, "cpu_busy_s"), pct(median(k, lat), median(base, lat)),
					pct(median(k, "pkg_w"), median(base, "pkg_w")),
					f[1] == "kvm" ? pct(median(k, "pkg_w"), median(nopoll, "pkg_w")) : "-",
					ws == "NA" ? "NA" : sprintf("%.1f", ws), pw == "NA" ? "NA" : sprintf("%.2f", pw)
			}
		}' "$csv" | tee "$base.txt"
	command -v gnuplot >/dev/null || die "gnuplot not found (install gnuplot-nox, or run 'make deps')"
	# The plots: latency against the knob, per path (p50 and p99 of every
	# run); and what a wait buys: the share of halt-poll time spent waiting
	# in UMWAIT (C0.1), halt_poll_wait_ns over halt_poll_success_ns +
	# halt_poll_fail_ns, per run, next to RAPL's package watts where RAPL
	# exists.  CPU time is not plotted: a CPU in UMWAIT counts as busy.
	local dat=$base.plot.dat rapl=yes
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == "kvm" && $3 ~ /^tpause:/ {
			t = ("halt_poll_time_ns" in col) ? $col["halt_poll_time_ns"] : ""
			print $0 "," (t > 0 ? 100 * $col["halt_poll_wait_ns"] / t : "NA")
		}' "$csv" >"$dat"
	[ -s "$dat" ] || die "$csv has no tpause rows to plot"
	grep -qvE '^([^,]*,){18}NA,' "$dat" || rapl=no
	local share="halt-poll time in UMWAIT (%)" power="package power (W, RAPL)"
	local why="wait share: how much of the polling slept in C0.1 (emulated or real time), not watts"
	if [ "$rapl" = yes ]; then
		why+="\\nW: RAPL, what the waits saved"
	else
		why+="\\nno RAPL here, so no power axis (CPU time would count UMWAIT as busy)"
	fi
	local plot2="plot \"$dat\" using (\$4 > 0 ? \$4 : 500):(strcol(6) eq \"ipi\" ? \$25 : 1/0) axes x1y1 with points pt 7 title \"wait share\""
	if [ "$rapl" = yes ]; then
		plot2+=", \"$dat\" using (\$4 > 0 ? \$4 : 500):(strcol(6) eq \"ipi\" ? \$19 : 1/0) axes x1y2 with points pt 5 title \"package W\""
	fi
	gnuplot <<-EOF || die "gnuplot failed"
		set terminal pngcairo size 900,500 noenhanced
		set datafile separator ","
		set logscale x 10
		set xlabel "halt_poll_tpause_ns (0 plotted at 500)"
		set xrange [300:150000]
		set key outside right
		set grid
		set output "$base-latency.png"
		set ylabel "wake latency (ns)"
		set title "halt_poll_bench: wake latency against the knob ($(basename "$csv"))"
		plot "$dat" using (\$4 > 0 ? \$4 : 500):(strcol(6) eq "ipi" ? \$7 : 1/0) with points pt 7 title "ipi p50", \
		     "$dat" using (\$4 > 0 ? \$4 : 500):(strcol(6) eq "ipi" ? \$9 : 1/0) with points pt 6 title "ipi p99", \
		     "$dat" using (\$4 > 0 ? \$4 : 500):(strcol(6) eq "msi" ? \$7 : 1/0) with points pt 5 title "msi p50", \
		     "$dat" using (\$4 > 0 ? \$4 : 500):(strcol(6) eq "msi" ? \$9 : 1/0) with points pt 4 title "msi p99"
		set output "$base-wait.png"
		set ylabel "$share"
		set yrange [0:100]
		$([ "$rapl" = yes ] && printf 'set y2label "%s"\nset y2tics' "$power")
		set title "What a wait buys, per run (ipi path)\\n$why"
		$plot2
	EOF
	say "table: $base.txt; plots: $base-latency.png, $base-wait.png"
}

# A fake powercap tree: two packages, each with a core domain, and one
# DRAM domain that must not count; package 1's counter wraps.
fake_powercap() {
	local d=$1 phase=$2
	mkdir -p "$d"/intel-rapl:{0,0:0,1,1:0,0:1}
	echo package-0 >"$d/intel-rapl:0/name"
	echo core >"$d/intel-rapl:0:0/name"
	echo package-1 >"$d/intel-rapl:1/name"
	echo core >"$d/intel-rapl:1:0/name"
	echo dram >"$d/intel-rapl:0:1/name"
	for x in 0 0:0 1 1:0 0:1; do echo 262143328850 >"$d/intel-rapl:$x/max_energy_range_uj"; done
	if [ "$phase" = before ]; then
		echo 1000000 >"$d/intel-rapl:0/energy_uj"
		echo 500000 >"$d/intel-rapl:0:0/energy_uj"
		echo 262142328850 >"$d/intel-rapl:1/energy_uj"
		echo 100 >"$d/intel-rapl:1:0/energy_uj"
		echo 5 >"$d/intel-rapl:0:1/energy_uj"
	else
		# Over 2 s: package 0 +30 J, package 1 +10 J across the wrap
		# (1 J before it, 9 J after), cores +8 J and +2 J, DRAM +100 J.
		echo 31000000 >"$d/intel-rapl:0/energy_uj"
		echo 8500000 >"$d/intel-rapl:0:0/energy_uj"
		echo 9000000 >"$d/intel-rapl:1/energy_uj"
		echo 2000100 >"$d/intel-rapl:1:0/energy_uj"
		echo 100000005 >"$d/intel-rapl:0:1/energy_uj"
	fi
}

selftest() {
	local t pass=0 fail=0 got
	t=$(mktemp -d)
	trap 'rm -rf "$t"' RETURN
	check() {
		if [ "$2" = "$3" ]; then pass=$((pass + 1)); echo "ok - $1"
		else fail=$((fail + 1)); echo "not ok - $1: got '$2', want '$3'"; fi
	}
	# The snapshot code of the guest script, on the fake tree.
	fake_powercap "$t/pc" before
	POWERCAP=$t/pc sh -c '. /dev/stdin' <<<"$(sed -n '/^rapl_snapshot()/,/^}/p' "$HARNESS/scripts/guest/bench"); rapl_snapshot" >"$t/r0"
	fake_powercap "$t/pc" after
	POWERCAP=$t/pc sh -c '. /dev/stdin' <<<"$(sed -n '/^rapl_snapshot()/,/^}/p' "$HARNESS/scripts/guest/bench"); rapl_snapshot" >"$t/r1"
	check "RAPL: four package and core domains read, DRAM left out" "$(wc -l <"$t/r0")" 4
	got=$(sh "$HARNESS/scripts/guest/bench" rapl-watts "$t/r0" "$t/r1" 2)
	check "RAPL: 40 J of packages (one across a wrap) and 10 J of cores in 2 s" "$got" "20.000 5.000"
	check "RAPL: no domain is NA, not 0 W" "$(sh "$HARNESS/scripts/guest/bench" rapl-watts /dev/null /dev/null 2)" "NA NA"
	# A known CSV: medians, the change against knob 0, and the plots.
	{
		echo "bench,rep,setting,knob,poll_ns,path,p50,p90,p99,max,mean,halt_exits,halt_successful_poll,halt_poll_wait,halt_poll_wait_ns,resent,seconds,cpu_busy_s,pkg_w,core_w,c01_pct,poll_usage,poll_time_us,halt_poll_time_ns,umwaits,wakes"
		for r in 1 2 3; do
			echo "kvm,$r,tpause:0,0,1000000,ipi,$((1000 + r * 10)),1100,1200,1300,,1000,990,0,0,0,2.0,2.0,$((100 + r)),50,NA,,,2000000"
			echo "kvm,$r,tpause:20000,20000,1000000,ipi,$((1050 + r * 10)),1100,1200,1300,,1000,990,4000,900000,0,2.0,1.5,$((80 + r)),40,NA,,,$((900000 + r * 50000))"
			echo "kvm,$r,poll:0,0,0,ipi,$((5000 + r)),6000,7000,8000,,1000,0,0,0,0,2.0,0.5,$((60 + r)),30,NA,,,0"
			echo "kvm,$r,tpause:0,0,1000000,ipi-rr,,,,,$((2000 + r * 100)),,,,,,1.0,2.0,NA,NA,NA,,,"
			echo "kvm,$r,tpause:20000,20000,1000000,ipi-rr,,,,,$((2100 + r * 100)),,,,,,1.0,1.5,NA,NA,NA,,,"
			echo "poll_idle,$r,poll_idle:0,0,,pingpong,2200,2210,2220,2300,,,,,,,1.0,1.0,NA,NA,NA,1100,900,,0,1100"
			echo "poll_idle,$r,poll_idle:20000,20000,,pingpong,2200,2210,2220,2300,,,,,,,1.0,1.0,NA,NA,NA,1100,900,,$((2200 + r * 10)),1100"
		done
	} >"$t/known.csv"
	BENCH_OUT=$t report "$t/known.csv" >"$t/report.out" 2>&1 || cat "$t/report.out"
	got=$(awk '$2 == "tpause:20000" && $3 == "ipi" { print $5, $12, $13, $14 }' "$t/known.txt" 2>/dev/null)
	check "report: median p50, +4.9% latency, -19.6% W against knob 0, +32.3% against poll:0" \
		"$got" "1070 +4.9% -19.6% +32.3%"
	got=$(awk '$2 == "tpause:20000" && $3 == "ipi-rr" { print $8, $12 }' "$t/known.txt" 2>/dev/null)
	check "report: the ping-pong's mean round trip, +4.5% against knob 0" "$got" "2300 +4.5%"
	check "report: the latency plot" "$(head -c 4 "$t/known-latency.png" 2>/dev/null | tail -c 3)" PNG
	got=$(awk '$2 == "tpause:20000" && $3 == "ipi" { print $15 } $2 == "tpause:0" && $3 == "ipi" { print $15 } $2 == "poll:0" { print $15 }' "$t/known.txt" 2>/dev/null | tr '\n' ' ')
	check "report: the wait share, 0 % at knob 0, 90 % at 20000 (median of 900000 ns over 0.95, 1 and 1.05 ms of polling), none without polling" "$got" "0.0 90.0 NA "
	got=$(awk '$3 == "pingpong" { print $2, $16 }' "$t/known.txt" 2>/dev/null | tr '\n' ' ')
	check "report: poll_idle's UMWAITs per wakeup, the median of 2210, 2220 and 2230 per 1100" "$got" "poll_idle:0 0.00 poll_idle:20000 2.02 "
	check "report: the wait-share plot" "$(head -c 4 "$t/known-wait.png" 2>/dev/null | tail -c 3)" PNG
	record bench-test "$pass" "$fail" 0
	[ "$fail" = 0 ] || die "$fail bench test(s) failed"
	say "bench: $pass tests of the RAPL reader and the report pass"
}

csv=$OUT/bench-$(date +%Y%m%d-%H%M%S)
case ${1:-} in
test)
	selftest
	;;
report)
	# Not a test stage of its own: a failure here is its caller's.
	SUITE=
	[ -f "${2:-}" ] || die "usage: bench.sh report CSV"
	report "$2"
	;;
demo)
	# The demo's subset of the bench (scripts/guest/demo, on Bochs): its
	# rows from the demo's output OUT, as work/bench/bench-demo-BACKEND.csv,
	# with the table and plots of the full bench.
	SUITE=
	[ -f "${2:-}" ] && [ -n "${3:-}" ] || die "usage: bench.sh demo OUT BACKEND"
	mkdir -p "$OUT"
	grep -aE '^(bench|kvm|poll_idle),' "$2" | tr -d '\r' >"$OUT/bench-demo-$3.csv" || true
	report "$OUT/bench-demo-$3.csv"
	;;
host)
	# Up front: a machine that cannot wait measures nothing.  Both postings
	# refuse to wait in a guest (X86_FEATURE_HYPERVISOR), so this must be
	# bare metal with WAITPKG and without X86_BUG_MONITOR.  CPUINFO: another
	# /proc/cpuinfo, for the harness's own tests.
	cpuinfo=${CPUINFO:-/proc/cpuinfo}
	if [ "$(sh "$HARNESS/scripts/guest/can_wait" "$cpuinfo")" != yes ]; then
		why="no WAITPKG"
		grep -qw waitpkg "$cpuinfo" && why="the monitor bug (X86_BUG_MONITOR)"
		grep -qw hypervisor "$cpuinfo" &&
			why="a guest (the hypervisor flag): both postings refuse to wait under X86_FEATURE_HYPERVISOR"
		die "this machine cannot wait with UMWAIT: $why; make bench-host measures on bare metal with WAITPKG"
	fi
	# The tools, built only once the machine can measure: against KTREE
	# (make bench-host KTREE=DIR: the headers, halt_poll_bench and the
	# ping-pong, nothing else), or against this repository's tree (its
	# selftests, as the QEMU backend's).
	if [ -n "${KTREE:-}" ]; then
		[ -d "$KTREE" ] || die "KTREE='$KTREE' is not a directory"
		KTREE=$(cd "$KTREE" && pwd) "$HARNESS/scripts/build.sh" bench-tools
	else
		"$HARNESS/scripts/deps.sh"
		"$HARNESS/scripts/tree.sh"
		"$HARNESS/scripts/build.sh" config
		BACKENDS=qemu "$HARNESS/scripts/build.sh" selftests
	fi
	tests=$WORK/build-selftests/x86 pingpong=$WORK/build-guest/pingpong
	[ -d "$tests" ] || tests=$WORK/build-selftests/x86_64
	[ -z "${KTREE:-}" ] || tests=$WORK/bench-tools/selftests/x86 pingpong=$WORK/bench-tools/guest/pingpong
	[ -x "$tests/halt_poll_bench" ] || die "no halt_poll_bench in $tests (run 'make bench-host', which builds it)"
	say "bench on this machine ($(uname -r)): the table comes at the end; progress on stderr"
	# What a reader of the numbers needs to know of the machine, saved
	# beside them; the notes (the compare step's goal lines among them) in
	# $csv-host.log.
	meta "$csv-host.meta"
	rc=0
	PINGPONG=$pingpong sh "$HARNESS/scripts/guest/bench" -r "${BENCH_REPS:-3}" \
		-k "$KNOBS" -c "${BENCH_POLL_WAIT_NS:-20000}" -t "$tests" >"$csv-host.csv" \
		2> >(tee "$csv-host.log" >&2) || rc=$?
	# The table of what was measured, even when a run measured nothing.
	[ "$(wc -l <"$csv-host.csv")" -le 1 ] || report "$csv-host.csv"
	[ "$rc" = 0 ] || die "the bench measured nothing, or not everything (rows: $csv-host.csv, notes: $csv-host.log)"
	say "saved: $csv-host.csv, its table, $csv-host.log and $csv-host.meta"
	;;
vm)
	b=${BENCH_BACKEND:-bochs}
	load_backend "$b"
	[ "$(be_can_wait)" = yes ] ||
		die "the $b guest never waits: both postings refuse to wait under the hypervisor flag (X86_FEATURE_HYPERVISOR), which a QEMU guest has with KVM, and TCG has no WAITPKG; hardware numbers come from 'make bench-host' on bare metal"
	# The kernel: built as distributions build it (vm.config, then
	# prod.config: -O2, jump labels, no KUnit), in work/build-prod; the
	# test kernel (work/build-vm) has KUnit's static stubs in the wait path.
	BUILD=$WORK/build-prod FRAGMENT="$HARNESS/config/vm.config $HARNESS/config/prod.config" \
		"$HARNESS/scripts/build.sh" kernel
	# Bochs, the one backend that can wait: APICv on and off (apicv_boots).
	HARNESS_BENCH="reps=${BENCH_REPS:-1},knobs=${KNOBS// /:},cknob=${BENCH_POLL_WAIT_NS:-20000}" \
		BUILD=$WORK/build-prod VM_TIMEOUT=${VM_TIMEOUT:-3600} apicv_boots bench bench
	for c in apicv-on apicv-off; do
		out=$RESULTS/bench-$c-$b.out
		grep -E '^(bench|kvm|poll_idle),' "$out" >"$csv-$b-$c.csv"
		[ "$(wc -l <"$csv-$b-$c.csv")" -gt 1 ] || die "the $b guest's bench ($c) printed no rows ($out)"
		say "$b, $c, production-config kernel (config/prod.config):"
		report "$csv-$b-$c.csv"
		say "$b, $c: knob 0 against 20000 per wake path (halt_poll_bench's goal):"
		sed -n 's/^compare: \(.*: goal, .*\)$/  \1/p' "$out"
	done
	;;
*)
	die "usage: bench.sh vm|host|test|report CSV|demo OUT BACKEND"
	;;
esac
