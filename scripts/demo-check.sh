#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "demo": run "make run" on each backend and check that it shows what
# it promises, on the facts the demo prints beside its prose ("fact:
# KEY=VALUE" lines, scripts/guest/demo), not on its sentences.  Without
# WAITPKG (QEMU under TCG): the knobs given at load ignored and a non-zero
# write refused, halt-poll stats that moved, POLL in use.  With WAITPKG
# (Bochs; QEMU with KVM on a WAITPKG host): both knobs taken, no UMWAIT
# under QoS 0.  On Bochs: wait stats that moved at 15000 and not at 0, the
# halt-poll wakeup latency at 20000 within its bounds, the POLL ping-pong's
# UMWAITs and latency, and a subset of the bench whose rows make its table
# and plots.
. "$(dirname "$0")/lib.sh"

st=0
for b in $BACKENDS; do
	SUITE=demo-$b
	out=$LOGS/demo-$b.log
	pass=0 fail=0
	rm -f "$RESULTS/$SUITE.count"
	# A demo that failed on one backend: counted, and the next one runs.
	if ! BACKENDS=$b "$HARNESS/scripts/vm.sh" run >"$out" 2>&1; then
		record "$SUITE" 0 1 0
		echo "make run failed on $b" >"$RESULTS/$SUITE.red"
		echo "---- last 40 lines of $out ----" >&2
		tail -n 40 "$out" >&2
		say "FAILED: make run failed on $b"
		st=1
		continue
	fi
	rm -f "$RESULTS/$SUITE.red"
	# expect WHAT KEY OP [VALUE]: the demo's fact KEY ("fact: KEY=VALUE"
	# lines, printed beside its prose) is VALUE (OP "="), at least VALUE
	# ("-ge"), or a number (OP "number").
	expect() {
		local v ok=no
		v=$(sed -n "s/^fact: $2=//p" "$RESULTS/demo-$b.out" | tr -d '\r' | tail -n 1)
		case $3 in
		=) [ "$v" != "$4" ] || ok=yes ;;
		-ge) [[ $v =~ ^[0-9]+$ ]] && [ "$v" -ge "$4" ] && ok=yes ;;
		number) [[ $v =~ ^[0-9]+$ ]] && ok=yes ;;
		esac
		if [ "$ok" = yes ]; then
			pass=$((pass + 1))
		else
			echo "  not shown on $b: $1 (fact $2 is '${v:-missing}', want $3 ${4:-})" >&2
			echo "not shown: $1 (fact $2 is '${v:-missing}', want $3 ${4:-})" >>"$RESULTS/$SUITE.red"
			fail=$((fail + 1))
		fi
	}
	# What the guest sees, as the host expects it (lib.sh: guest_waitpkg,
	# guest_can_wait); the knobs follow whether it can wait.
	expect "WAITPKG as the host expects" waitpkg = "$(guest_waitpkg "$b")"
	want=$(guest_can_wait "$b")
	expect "whether it can wait, as the host expects" can_wait = "$want"
	expect "the POLL state in use" poll_usage_delta -ge 1
	if [ "$want" = no ]; then
		expect "halt_poll_tpause_ns given at load ignored" kvm_knob_load = 0
		expect "a non-zero halt_poll_tpause_ns refused" kvm_write_20000 = refused
		expect "umwait.poll_wait_ns given at boot ignored" cpuidle_knob = 0
	else
		expect "halt_poll_tpause_ns taken at load" kvm_knob_load = 20000
		expect "umwait.poll_wait_ns taken" cpuidle_knob = 20000
		expect "no UMWAIT under QoS 0" qos0_umwait_delta = 0
	fi
	expect "bad input refused (a word)" kvm_write_fast = refused
	expect "bad input refused (over the cap)" kvm_write_500000 = refused
	expect "the knob kept after the refused writes" kvm_knob = "$([ "$want" = yes ] && echo 20000 || echo 0)"
	load_backend "$b"
	if [ "$(be_demo)" = ipi ]; then
		expect "a guest that ran" halt_exits_delta -ge 1
		expect "halt polling in the stats" halt_attempted_poll_delta -ge 1
		expect "the wait stats" halt_poll_wait_delta number
	else
		expect "the halting guests ran" tpause_test_rc = 0
		expect "no wait at knob 0" tpause_wait_at_0 = 0
		expect "waits at knob 15000" tpause_wait_at_15000 -ge 1
		expect "the wake latency test passed" wake_test_rc = 0
		expect "the wakeup latency at 20000, within bounds" wake_ipi_at_20000 = ok
		expect "no UMWAIT at 0 in the POLL ping-pong" pp_umwaits_at_0 = 0
		expect "UMWAITs at 20000 in the POLL ping-pong" pp_umwaits_at_20000 -ge 1000
		expect "the POLL wakeup latency at 0" pp_p50_at_0 number
		expect "the POLL wakeup latency at 20000" pp_p50_at_20000 number
		expect "the bench subset, to its end" bench_rc = 0
		# Its rows make the bench's table and plots, as "make bench" does.
		csv=$WORK/bench/bench-demo-$b.csv
		if "$HARNESS/scripts/bench.sh" demo "$RESULTS/demo-$b.out" "$b" >>"$out" 2>&1 &&
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
