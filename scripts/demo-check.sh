#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "demo": run "make run" and check that it shows what it promises:
# the knobs, a refused write, halt-poll stats that moved, and POLL in use.
SUITE=demo
. "$(dirname "$0")/lib.sh"

out=$LOGS/demo.log
"$HARNESS/scripts/vm.sh" run >"$out" 2>&1 || die "make run failed" "$out"
pass=0 fail=0
check() {
	if grep -qE -- "$2" "$out"; then
		pass=$((pass + 1))
	else
		echo "  not shown: $1" >&2
		fail=$((fail + 1))
	fi
}
check "the knob read back" '^\$ cat /sys/module/kvm/parameters/halt_poll_tpause_ns'
check "a refused write" 'write error: (Operation not supported|Invalid argument|Numerical result out of range)'
check "a guest that ran" '^  halt_exits +[0-9]+ +[0-9]+ +[1-9][0-9]*$'
check "halt polling in the stats" '^  halt_attempted_poll +[0-9]+ +[0-9]+ +[1-9][0-9]*$'
check "the TPAUSE stats" '^  halt_poll_tpause +[0-9]+ +[0-9]+ +[0-9]+$'
check "the cpuidle knob read back" '^\$ cat /sys/module/cpuidle/parameters/poll_umwait_ns'
check "the POLL state in use" '^  POLL usage, both CPUs: [0-9]+ -> [0-9]+ \(\+[1-9][0-9]*\)$'
record demo "$pass" "$fail" 0
[ "$fail" = 0 ] || die "make run did not show $fail thing(s)" "$out"
say "make run shows the knobs, a refused write, moving stats and POLL in use"
