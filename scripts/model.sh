#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "model": where the wait breaks even against the spin, in Bochs
# with the two costs it leaves out (bochs/0009): the time a PAUSE takes,
# which delays a spin's notice of a wake, and the C0.1 exit, which delays
# a wait's.  For each PAUSE cost of MODEL_PAUSE (ticks of the emulated
# clock, i.e. cycles at L1's 2.2 GHz TSC; default "1 40 140": Bochs' own
# one instruction, a pre-Skylake PAUSE, Skylake's) and each C0.1 exit
# delay of MODEL_EXIT_NS (ns, default "0 100 250 500 1000"), one Bochs
# boot, APICv on, of the production-config kernel (guest mode "model")
# runs halt_poll_wake_test once per seed of MODEL_SEEDS (its wake
# schedule, default 1 to 10), knob 0 against 20000 on each wake path, then
# the poll_idle ping-pong at umwait.poll_wait_ns 0 and 20000.  Two boots
# at a time (each is one host thread).
# Prints, per PAUSE cost and path (ipi, msi, signal, pingpong), the p50 difference
# (20000 - 0, the mean over the seeds, with its spread) at each exit delay,
# the least-squares line through them, and the break-even exit delay,
# where that line crosses 0; plots the differences against the exit
# delay, a line per PAUSE cost and path.  Results in work/model/:
# model.csv (a row per boot, seed and path), model.txt, model.png and
# model-zoom.png (exit delays up to 250 ns).
#   model.sh          measure, then report, then check
#   model.sh report   the table and plot of the boots already run
# A measurement, with one check of the rig: it fails when a boot failed,
# and when the exit delay did not reach the woken waits (see check()).
SUITE=model
. "$(dirname "$0")/lib.sh"
stop_all_on_signal

PAUSES=${MODEL_PAUSE:-1 40 140}
EXITS=${MODEL_EXIT_NS:-0 100 250 500 1000}
SEEDS=${MODEL_SEEDS:-1 2 3 4 5 6 7 8 9 10}
for v in $PAUSES; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || die "MODEL_PAUSE='$PAUSES': each PAUSE cost is a number of ticks, at least 1"
done
for v in $EXITS; do
	[[ "$v" =~ ^[0-9]+$ ]] || die "MODEL_EXIT_NS='$EXITS': each exit delay is a number of ns"
done
for v in $SEEDS; do
	[[ "$v" =~ ^[0-9]+$ ]] || die "MODEL_SEEDS='$SEEDS': each seed is a number"
done
OUT=$WORK/model
# L1's TSC under Bochs' sapphire_rapids (CPUID leaf 0x15): 2.2 ticks a ns.
TICKS_PER_NS=2.2
mkdir -p "$OUT"

# point P E: the suite name of that boot.
point() { echo "model-p$1-e$2"; }

measure() {
	load_backend bochs
	"$HARNESS/scripts/bochs.sh" build
	BUILD=$WORK/build-prod FRAGMENT="$HARNESS/config/vm.config $HARNESS/config/prod.config" \
		"$HARNESS/scripts/build.sh" kernel
	local p e n=0 total pids=() names=() i
	failed=0
	total=$(($(wc -w <<<"$PAUSES") * $(wc -w <<<"$EXITS")))
	say "$total boots, two at a time: PAUSE ${PAUSES// /, } ticks x C0.1 exit ${EXITS// /, } ns"
	for p in $PAUSES; do
		for e in $EXITS; do
			n=$((n + 1))
			local ticks
			ticks=$(awk -v e="$e" -v k="$TICKS_PER_NS" 'BEGIN { printf "%d", e * k + 0.5 }')
			say "boot $n/$total: pause_ticks=$p, umwait_exit_ticks=$ticks ($e ns)"
			BOCHS_CPU_OPTS="pause_ticks=$p, umwait_exit_ticks=$ticks" BACKENDS=bochs \
				VM_SUITE=$(point "$p" "$e") BUILD=$WORK/build-prod VM_TIMEOUT=${VM_TIMEOUT:-$((600 * $(wc -w <<<"$SEEDS")))} \
				VM_APPEND="harness.model=${SEEDS// /:}" \
				"$HARNESS/scripts/vm.sh" model >"$LOGS/$(point "$p" "$e").log" 2>&1 &
			pids+=($!) names+=("$(point "$p" "$e")")
			if [ ${#pids[@]} = 2 ]; then
				for i in 0 1; do
					wait "${pids[$i]}" || { failed=$((failed + 1)); say "${names[$i]} failed: $LOGS/${names[$i]}.log"; }
				done
				pids=() names=()
			fi
		done
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || { failed=$((failed + 1)); say "${names[$i]} failed: $LOGS/${names[$i]}.log"; }
	done
	[ "$failed" = 0 ] || say "$failed of $total boots failed; the report has the others"
}

# check: every IPI or MSI wake at 20000 ends a wait (the wake test's late
# counts see to that), and each woken wait pays the C0.1 exit once, so the
# p50 gap grows by the exit delay: per PAUSE cost with two exit delays or
# more, the slope of report()'s least-squares line ("line A B * exit") must
# be within 0.8 and 1.2.  A delay that bochs/0009 did not apply gives 0.
check() {
	awk '$1 == "pause" && ($3 == "ipi" || $3 == "msi") && $4 == "crossing" {
			for (i = 5; i < NF && $i != "line"; i++)
				;
			b = $(i + 2) + 0
			if (b < 0.8 || b > 1.2) {
				printf "pause %s %s: the gap grows %.2f ns per ns of exit delay, not 1\n", $2, $3, b
				bad++
			}
		}
		END { exit bad > 0 }' "$OUT/model.txt" >"$OUT/model.check" ||
		die "the C0.1 exit delay did not reach the woken waits as it should: $(tr '\n' ';' <"$OUT/model.check")"
}

# The rows: pause_ticks,exit_ns,seed,path,p50_0,p50_20000,diff, from
# each boot's halt_poll_wake_test lines ("ipi: N wakes at 0, ... p50 X",
# "ipi: at 20000, p50 Y") per seed, and its poll_idle rows (pingpong, seed
# "-").
collect() {
	local p e f
	echo "pause_ticks,exit_ns,seed,path,p50_0,p50_20000,diff"
	for p in $PAUSES; do
		for e in $EXITS; do
			f=$RESULTS/$(point "$p" "$e")-bochs.out
			[ -f "$f" ] || continue
			tr -d '\r' <"$f" | awk -v p="$p" -v e="$e" '
				function row(s, k) {
					if (a[s, k] != "" && b[s, k] != "")
						print p "," e "," s "," k "," a[s, k] "," b[s, k] "," b[s, k] - a[s, k]
				}
				/^MODEL-RUN seed=/ { seed = substr($2, 6); seeds[++ns] = seed }
				/^(not )?ok [0-9]+ (ipi|msi|signal): / {
					k = $0; sub(/^(not )?ok [0-9]+ /, "", k); sub(/:.*/, "", k)
					if (!match($0, /p50 [0-9]+/)) next
					v = substr($0, RSTART + 4, RLENGTH - 4)
					if ($0 ~ /: at [0-9]+, p50/) b[seed, k] = v; else a[seed, k] = v
				}
				/^poll_idle,/ {
					split($0, c, ",")
					if (c[4] == 0) a["-", "pingpong"] = c[7]; else b["-", "pingpong"] = c[7]
				}
				END {
					for (i = 1; i <= ns; i++) { row(seeds[i], "ipi"); row(seeds[i], "msi"); row(seeds[i], "signal") }
					row("-", "pingpong")
				}'
		done
	done
}

# report: the table, the lines and break-evens, the plot.
report() {
	local csv=$OUT/model.csv txt=$OUT/model.txt
	collect >"$csv"
	[ "$(wc -l <"$csv")" -gt 1 ] || die "no boot of the model measured anything (work/results/model-*-bochs.out)"
	{
		echo "Bochs, emulated time, APICv on, production-config kernel; p50 in ns;"
		echo "diff = p50 at 20000 - p50 at 0 (halt_poll_tpause_ns, or umwait.poll_wait_ns"
		echo "for the ping-pong); a PAUSE of P ticks is P cycles at 2.2 GHz."
		echo
		echo "Means over the seeds' wake schedules (ipi, msi, signal); the ping-pong runs once."
		printf "%6s %8s %-9s %5s %7s %9s %7s %11s\n" pause exit_ns path runs p50_0 p50_20000 diff "diff spread"
		awk -F, '
			NR > 1 {
				k = $1 SUBSEP $2 SUBSEP $4
				if (!(k in n)) { order[++m] = k; lo[k] = $7; hi[k] = $7 }
				n[k]++; s0[k] += $5; s1[k] += $6; sd[k] += $7
				if ($7 < lo[k]) lo[k] = $7
				if ($7 > hi[k]) hi[k] = $7
			}
			END {
				for (i = 1; i <= m; i++) {
					k = order[i]; split(k, f, SUBSEP)
					printf "%6s %8s %-9s %5d %7.1f %9.1f %+7.1f %5d..%-5d\n", f[1], f[2], f[3], n[k],
						s0[k] / n[k], s1[k] / n[k], sd[k] / n[k], lo[k], hi[k]
				}
			}' "$csv"
		echo
		echo "Break-even C0.1 exit delay, below which the wait is no later than the"
		echo "spin: where the mean diff crosses 0 between two measured exit delays"
		echo "(linear in between), and where the least-squares line of diff against"
		echo "the exit delay (every run) crosses 0:"
		awk -F, '
			NR > 1 {
				k = $1 SUBSEP $4
				if (!(k in n)) order[++m] = k
				n[k]++; sx[k] += $2; sy[k] += $7; sxx[k] += $2 * $2; sxy[k] += $2 * $7
				e = k SUBSEP $2
				if (!(e in en)) { ne[k]++; ex[k, ne[k]] = $2 }
				en[e]++; es[e] += $7
			}
			# The first exit delay, in increasing order, where the mean diff is
			# at least 0, interpolated from the one before.
			function crossing(k,   i, j, t, x0, y0, x1, y1) {
				for (i = 2; i <= ne[k]; i++)
					for (j = i; j > 1 && ex[k, j - 1] > ex[k, j]; j--) {
						t = ex[k, j]; ex[k, j] = ex[k, j - 1]; ex[k, j - 1] = t
					}
				x0 = ex[k, 1]; y0 = es[k SUBSEP x0] / en[k SUBSEP x0]
				if (y0 >= 0)
					return sprintf("none (%+.1f at %d)", y0, x0)
				for (i = 2; i <= ne[k]; i++) {
					x1 = ex[k, i]; y1 = es[k SUBSEP x1] / en[k SUBSEP x1]
					if (y1 >= 0)
						return sprintf("%.0f ns", x0 + (x1 - x0) * -y0 / (y1 - y0))
					x0 = x1; y0 = y1
				}
				return sprintf("above %d ns", x0)
			}
			END {
				for (i = 1; i <= m; i++) {
					k = order[i]; split(k, f, SUBSEP)
					d = n[k] * sxx[k] - sx[k] * sx[k]
					if (n[k] < 2 || d == 0) {
						printf "  pause %4s %-9s one exit delay: no line (mean diff %+.1f ns at %d ns)\n",
							f[1], f[2], sy[k] / n[k], sx[k] / n[k]
						continue
					}
					cr = ne[k] > 1 ? crossing(k) : "-"
					b = (n[k] * sxy[k] - sx[k] * sy[k]) / d
					a = (sy[k] - b * sx[k]) / n[k]
					if (b <= 0)
						be = "none (no growth)"
					else if (a >= 0)
						be = "none"
					else
						be = sprintf("%.0f ns", -a / b)
					printf "  pause %4s %-9s crossing %-17s line %+6.1f %+.2f * exit: %s\n",
						f[1], f[2], cr, a, b, be
				}
			}' "$csv"
	} | tee "$txt"
	if command -v gnuplot >/dev/null; then
		local plots=() p path dat=$OUT/model.dat
		# The mean diff per PAUSE cost, exit delay and path, in blocks that
		# gnuplot draws as lines: one per PAUSE cost and path.
		awk -F, 'NR > 1 { k = $1 "," $4 "," $2; if (!(k in n)) o[++m] = k; n[k]++; s[k] += $7 }
			END { for (i = 1; i <= m; i++) print o[i] "," s[o[i]] / n[o[i]] }' "$csv" |
			sort -t, -k1,1n -k2,2 -k3,3n >"$dat"
		for p in $PAUSES; do
			for path in ipi msi signal pingpong; do
				grep -q "^$p,$path," "$dat" || continue
				plots+=("\"$dat\" using (\$1 == $p && strcol(2) eq \"$path\" ? \$3 : 1/0):4 with linespoints title \"PAUSE $p cycles, $path\"")
			done
		done
		local IFS=,
		gnuplot <<-EOF || die "gnuplot failed"
			set terminal pngcairo size 900,500 noenhanced
			set datafile separator ","
			set key outside right
			set grid
			set xlabel "C0.1 exit delay (ns of emulated time)"
			set ylabel "p50 at 20000 - p50 at 0 (ns)"
			set title "Where the wait breaks even: Bochs, APICv on, PAUSE cost in cycles at 2.2 GHz"
			set xzeroaxis lw 2
			set output "$OUT/model.png"
			plot ${plots[*]}
			set title "The same, near the break-even: exit delays up to 250 ns"
			set xrange [0:260]
			set yrange [-80:300]
			set output "$OUT/model-zoom.png"
			plot ${plots[*]}
		EOF
		say "table: $txt; plots: $OUT/model.png, $OUT/model-zoom.png"
	else
		say "table: $txt; no plot (gnuplot not found: install gnuplot-nox, or run 'make deps')"
	fi
}

case ${1:-} in
'')
	measure
	report
	check
	[ "$failed" = 0 ] || die "$failed boot(s) of the model failed (their logs are named above)"
	;;
report) report ;;
*) die "usage: model.sh [report]" ;;
esac
