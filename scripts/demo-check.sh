#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "demo": run "make run" on each backend and check that it shows what
# it promises.  QEMU (no WAITPKG): the knobs, a refused write, halt-poll
# stats that moved, and POLL in use.  Bochs (WAITPKG): both knobs taken,
# wait stats that moved, the halt-poll wakeup latency at knob 0 and 20000
# within bounds, the POLL wakeup latency at knob 0 and 20000, and a subset
# of the bench whose rows make its table and plots.
. "$(dirname "$0")/lib.sh"

st=0
for b in $BACKENDS; do
	SUITE=demo-$b
	out=$LOGS/demo-$b.log
	pass=0 fail=0
	rm -f "$RESULTS/$SUITE.count"
	BACKENDS=$b "$HARNESS/scripts/vm.sh" run >"$out" 2>&1 || die "make run failed on $b" "$out"
	check() {
		if grep -qE -- "$2" "$out"; then
			pass=$((pass + 1))
		else
			echo "  not shown on $b: $1" >&2
			fail=$((fail + 1))
		fi
	}
	check "the knob read back" '^\$ cat /sys/module/kvm/parameters/halt_poll_tpause_ns'
	check "the cpuidle knob read back" '^\$ cat /sys/module/umwait/parameters/poll_wait_ns'
	check "the POLL state in use" '^  POLL usage, both CPUs: [0-9]+ -> [0-9]+ \(\+[1-9][0-9]*\)$'
	# What the guest sees, as the host expects it (lib.sh: guest_waitpkg).
	want=$(guest_waitpkg "$b")
	check "WAITPKG as the host expects ($want)" "^WAITPKG \(UMONITOR/UMWAIT\): $want\$"
	if [ "$b" = qemu ]; then
		if [ "$want" = no ]; then
			check "a refused write" 'write error: (Operation not supported|Invalid argument|Numerical result out of range)'
		else
			check "halt_poll_tpause_ns taken at load" '^=> Each poll iteration waits for up to 20000 ns, with UMWAIT on$'
		fi
		check "a guest that ran" '^  halt_exits +[0-9]+ +[0-9]+ +[1-9][0-9]*$'
		check "halt polling in the stats" '^  halt_attempted_poll +[0-9]+ +[0-9]+ +[1-9][0-9]*$'
		check "the wait stats" '^  halt_poll_wait +[0-9]+ +[0-9]+ +[0-9]+$'
	else
		check "halt_poll_tpause_ns taken at load" '^=> Each poll iteration waits for up to 20000 ns, with UMWAIT on$'
		check "bad input refused" 'write error: (Invalid argument|Numerical result out of range)'
		check "wait stats that moved" '^  halt_poll_wait +0 +[1-9][0-9]*$'
		check "the wakeup latency at 20000, within bounds" '^=> At 20000, the wakeup.s store ends the UMWAIT'
		check "UMWAITs counted at 20000, none at 0" '^=> poll_idle\(\) waited in UMWAIT [1-9][0-9]* times at 20000, none at 0\.$'
		check "no UMWAIT under QoS 0" '^  UMWAITs of cpu_poll_relax\(\) \(/sys/kernel/debug/x86/cpu_poll_relax/waits\): ([0-9]+) -> \1$'
		check "the POLL wakeup latency at 0" '^  0 +[0-9]+ +[0-9]+ +[0-9]+ +0$'
		check "the POLL wakeup latency at 20000" '^  20000 +[0-9]+ +[0-9]+ +[0-9]+ +[1-9][0-9]*$'
		check "the bench subset, to its end" '^\(bench exit status 0\)$'
		# Its rows make the bench's table and plots, as "make bench" does.
		csv=$WORK/bench/bench-demo-$b.csv
		mkdir -p "$WORK/bench"
		grep -aE '^(bench|kvm|poll_idle),' "$out" | tr -d '\r' >"$csv"
		if "$HARNESS/scripts/bench.sh" report "$csv" >>"$out" 2>&1 &&
			grep -qE '^kvm +tpause:20000 +msi +1 ' "${csv%.csv}.txt"; then
			pass=$((pass + 1))
		else
			echo "  not shown on $b: the bench's table and plots of the subset ($csv)" >&2
			fail=$((fail + 1))
		fi
	fi
	record "$SUITE" "$pass" "$fail" 0
	if [ "$fail" = 0 ]; then
		say "make run on $b shows what it promises ($pass checks)"
	else
		echo "---- $out ----" >&2
		tail -n 40 "$out" >&2
		say "FAILED: make run on $b did not show $fail thing(s)"
		st=1
	fi
done
exit $st
