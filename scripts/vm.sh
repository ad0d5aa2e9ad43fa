#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "vm": pack a busybox initramfs with the KVM modules and selftests,
# boot the VM kernel on each backend and collect the results.
#   vm.sh check   run the backend's selftest list, then the cpuidle checks
#                 in a second boot; TAP on the second serial port
#   vm.sh load    knob writes under load (scripts/guest/load), one boot
#   vm.sh run     the demo of "make run", shown as it happens
#   vm.sh bench   scripts/guest/bench (HARNESS_BENCH: its options), one boot
#                 per backend; its output in results/VM_SUITE-BACKEND.out
#   vm.sh count   halt_poll_wake_test per seed of harness.count, and the
#                 kernel's kvm-stamps lines (scripts/count.sh), the same way
#   vm.sh model   halt_poll_wake_test per seed of harness.model, and the
#                 poll_idle ping-pong (scripts/model.sh), the same way
#   vm.sh shell   a busybox shell in the guest of the first of BACKENDS, on
#                 this terminal ("make shell BACKEND=qemu|bochs")
# TESTS: an extended regular expression; only the selftests and guest
# checks whose names match it run (the plan follows).  DRY_RUN=1: print
# each boot's emulator command line (and Bochs' configuration) instead of
# booting; nothing is built, packed or counted.
# VM_MODES picks the boots of "check" (default "check cpuidle", and on Bochs
# "apicv-off" too: config/selftests-bochs-apicv-off.list with APICv off),
# GUEST_TIMEOUT the time each selftest gets in the guest (default 120 s),
# VM_APPEND more kernel command line.
# VM_SUITE names the results (default "vm": vm-qemu, vm-bochs), so that
# another kernel's run (BUILD=..., "make check-debug") keeps its own.
# BACKENDS picks the backends, in order (default "qemu bochs"): each is a
# file of scripts/backend/ (its README has the interface), which says how
# to boot it and what its guest can do.
# A failure before the backends' own suites counts under "vm".
VM_SUITE=${VM_SUITE:-vm}
SUITE=$VM_SUITE
. "$(dirname "$0")/lib.sh"
stop_all_on_signal

mode=${1:-check}
BUILD=${BUILD:-$WORK/build-vm}
SELFTESTS_OUT=${SELFTESTS_OUT:-$WORK/build-selftests}
GUEST_OUT=${GUEST_OUT:-$WORK/build-guest}
VM_TIMEOUT=${VM_TIMEOUT:-900}
kernel=$BUILD/arch/x86/boot/bzImage

for b in $BACKENDS; do
	load_backend "$b"
	[ -n "${DRY_RUN:-}" ] || be_deps
done
command -v busybox >/dev/null || die "busybox not found (install busybox-static, or run 'make deps')"
[ -f "$kernel" ] || [ -n "${DRY_RUN:-}" ] || die "no kernel at $kernel (run 'make build')"
ktap_helpers=$TREE/tools/testing/selftests/kselftest/ktap_helpers.sh
[ -f "$ktap_helpers" ] || [ -n "${DRY_RUN:-}" ] || die "no $ktap_helpers in the tree (run 'make tree')"

# initramfs BACKEND: the initramfs for BACKEND's selftest list, in $initrd,
# named by the suite and the mode: "make check" runs the demo's boots while
# the check's boot on Bochs.
initramfs() {
	local root=$WORK/initramfs-$VM_SUITE-$mode list
	initrd=$WORK/initramfs-$VM_SUITE-$mode-$1.cpio.gz
	[ -z "${DRY_RUN:-}" ] || return 0
	list=$(be_selftests "$mode")
	rm -rf "$root"
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,selftests,harness}
	cp "$(command -v busybox)" "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	cp -a "$BUILD/modroot/lib" "$root/lib"
	cp "$HARNESS/scripts/guest/init" "$root/init"
	cp "$HARNESS/scripts/guest/demo" "$HARNESS/scripts/guest/load" "$HARNESS/scripts/guest/bench" \
		"$HARNESS/scripts/guest/can_wait" \
		"$ktap_helpers" "$root/harness/"
	for t in pingpong clock monitor; do
		[ -x "$GUEST_OUT/$t" ] || die "$GUEST_OUT/$t was not built (run 'make build')"
		cp "$GUEST_OUT/$t" "$root/harness/$t"
	done
	# The bench's tool, for "make bench" and the demo's subset of it.
	if [ "$mode" = bench ] || [ "$mode" = count ] || [ "$mode" = model ] || { [ "$mode" = run ] && [ "$(be_demo)" = timer ]; }; then
		[ -x "$SELFTESTS_OUT/x86/halt_poll_bench" ] ||
			die "$SELFTESTS_OUT/x86/halt_poll_bench was not built (run 'make build' on the upstream base)"
		mkdir -p "$root/selftests/x86"
		cp "$SELFTESTS_OUT/x86/halt_poll_bench" "$root/selftests/x86/"
	fi
	kvm_selftests "$list" >"$root/harness/tests"
	: >"$root/harness/tests-apicv-off"
	[[ " $(be_modes) " != *" apicv-off "* ]] ||
		kvm_selftests "$(be_selftests apicv-off)" >"$root/harness/tests-apicv-off"
	# The tests to run, and the demo's workloads.
	while read -r t _; do
		[ -x "$SELFTESTS_OUT/$t" ] || die "selftest $t was not built (run 'make build')"
		mkdir -p "$root/selftests/$(dirname "$t")"
		cp "$SELFTESTS_OUT/$t" "$root/selftests/$t"
		[ "$t" = "${t%.sh}" ] || cp "$SELFTESTS_OUT/${t%.sh}" "$root/selftests/${t%.sh}"
	done < <(cat "$root/harness/tests" "$root/harness/tests-apicv-off"; kvm_selftests "$HARNESS/config/demo.list")
	# The demo names the x86 tests by their 6.12 directory.
	[ -e "$root/selftests/x86_64" ] || ln -s x86 "$root/selftests/x86_64"
	# The same files make the same bytes (no dates, inode numbers or
	# order of the directory): two boots start from the same initramfs.
	(cd "$root" && find . -exec touch -h -d @0 {} + && find . | LC_ALL=C sort |
		cpio -o -H newc --quiet --reproducible | gzip -1 -n) >"$initrd"
	say "initramfs for $1: $(du -h "$initrd" | cut -f1), $(wc -l <"$root/harness/tests") selftest(s) from $(basename "$list")"
	rm -rf "$root"
}

# What each backend needs besides the emulator (QEMU's SSDT).
if [ -z "${DRY_RUN:-}" ]; then
	for b in $BACKENDS; do
		load_backend "$b"
		be_build
	done
fi

# watch_guest PID CONSOLE TAP NAME: wait for the emulator PID, saying once
# a minute where guest NAME is: its last test line, or its console's last
# line while it boots.  Returns the emulator's status.
watch_guest() {
	local pid=$1 phase
	while ! wait_tick "$pid"; do
		phase=$(grep -aE '^(not )?ok [0-9]+|^# selftest: |^bench: ' "$3" 2>/dev/null | tail -n1 | tr -d '\r' | cut -c1-100)
		[ -n "$phase" ] || phase="booting: $(tail -n1 "$2" 2>/dev/null | tr -d '\r' | cut -c1-80)"
		say "  ... $4 guest: $phase"
	done
	wait "$pid"
}

# boot BACKEND MODE TAP: boot the guest in harness.mode MODE, with its
# results in TAP; a hang, an emulator error, an oops or missing results
# fail.  umwait.poll_wait_ns=20000: a guest without WAITPKG must take it as
# 0 with one log line, one with WAITPKG must take it.
boot() {
	local backend=$1 bmode=$2 out=$3 rc=0 tmo=$VM_TIMEOUT
	local console=$LOGS/$VM_SUITE-$backend-$bmode-console.log
	load_backend "$backend"
	local append="console=ttyS0,115200 loglevel=5 panic=-1 oops=panic harness.mode=$bmode"
	append+=" harness.backend=$backend umwait.poll_wait_ns=20000"
	# What the guest must see and can check, from the backend (and, for
	# QEMU, the host's CPU): lib.sh's guest_waitpkg.
	append+=" harness.waitpkg=$(guest_waitpkg "$backend") harness.can_wait=$(guest_can_wait "$backend")"
	append+=" harness.clock=$(be_clock) harness.demo=$(be_demo)"
	[ -z "${HARNESS_INJECT:-}" ] || append+=" harness.inject=$HARNESS_INJECT"
	[ -z "${LOAD_S:-}" ] || append+=" harness.load_s=$LOAD_S"
	[ -z "${HARNESS_BENCH:-}" ] || append+=" harness.bench=$HARNESS_BENCH"
	[ -z "${GUEST_TIMEOUT:-}" ] || append+=" harness.timeout=$GUEST_TIMEOUT"
	[ -z "${TESTS:-}" ] || append+=" harness.tests=$TESTS"
	local extra
	extra=$(be_append "$bmode")
	[ -z "$extra" ] || append+=" $extra"
	[ -z "${VM_APPEND:-}" ] || append+=" $VM_APPEND"
	say "booting $(basename "$kernel") under $(be_describe), mode $bmode"
	# The shell: no time limit.
	[ "$bmode" != shell ] || tmo=0
	if [ -n "${DRY_RUN:-}" ]; then
		be_boot "$bmode" "$console" "$out" "$append" "$tmo"
		return 0
	fi
	rm -f "$console" "$out"
	if [ "$bmode" = shell ]; then
		be_boot "$bmode" "$console" "$out" "$append" "$tmo" || true
		return 0
	elif [ "$bmode" = run ]; then
		be_boot "$bmode" "$console" "$out" "$append" "$tmo" || rc=$?
	else
		be_boot "$bmode" "$console" "$out" "$append" "$tmo" &
		watch_guest $! "$console" "$out" "$backend $bmode" || rc=$?
	fi
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		# What ran when it hung: the selftest that started last, or the
		# last result.
		local at
		at=$({ grep -aE '^# selftest: |^(not )?ok [0-9]+' "$out" 2>/dev/null || true; } | tail -n1 | tr -d '\r' | cut -c1-100)
		die "the $backend guest hung: no poweroff within ${VM_TIMEOUT}s${at:+, in or after: $at}" "$console"
	fi
	# A backend may name its own failures (Bochs: a lock, a disk image).
	local why=
	[ "$rc" = 0 ] || why=$(be_failure "$bmode")
	[ "$rc" = 0 ] || die "$backend exited with status $rc${why:+: $why}" "$console"
	sed -i 's/\r$//' "$out" "$console"

	# Any splat fails the boot: panics and oopses, WARN()s and lockdep's
	# reports ("WARNING: possible ..."), KASAN, KFENCE and "sleeping
	# function called" ("BUG: ..."), UBSAN, RCU stalls and hung tasks.
	local oops
	oops=$(grep -E 'Kernel panic|Oops|BUG:|WARNING:|UBSAN:|INFO: (task .* blocked|rcu_.* stall|possible|inconsistent|suspicious|trying to register)|rcu: INFO:|general protection fault|Call Trace' "$console" || true)
	[ -z "$oops" ] || die "the $backend guest kernel reported: $(head -n1 <<<"$oops")" "$console"
	local err
	err=$(grep -m1 '^HARNESS-ERROR: ' "$out" || true)
	[ -z "$err" ] || die "${err#HARNESS-ERROR: }" "$out"
	grep -q '^HARNESS-DONE' "$out" || die "the guest stopped before its tests finished" "$console"
}

if [ "$mode" = shell ]; then
	b=${BACKENDS%% *}
	load_backend "$b"
	initramfs "$b"
	boot "$b" shell "$RESULTS/shell-$b.out"
	exit 0
fi

if [ "$mode" = run ] || [ "$mode" = bench ] || [ "$mode" = count ] || [ "$mode" = model ]; then
	for b in $BACKENDS; do
		load_backend "$b"
		initramfs "$b"
		if [ "$mode" = run ]; then
			boot "$b" run "$RESULTS/demo-$b.out"
		else
			boot "$b" "$mode" "$RESULTS/$VM_SUITE-$b.out"
		fi
	done
	exit 0
fi

# The boots of "check" mode, and the one of "load" mode.
modes=${VM_MODES:-check cpuidle}
[ "$mode" != load ] || modes=load
# Each backend in a subshell of its own: a failure on one (a red KUnit case,
# a selftest, a hang) is reported, and the next backend still boots.
red=
for b in $BACKENDS; do
(
	SUITE=$VM_SUITE-$b
	[ "$mode" != load ] || SUITE=$VM_SUITE-load-$b
	rm -f "$RESULTS/$SUITE.count"
	load_backend "$b"
	initramfs "$b"
	tap=$RESULTS/$SUITE.tap
	# The boots: the backend's (VM_MODES overrides them), at once where its
	# time is emulated, else one after the other.  Each in a subshell of
	# its own, waited for (set -e stays in force inside): a boot that
	# fails (a hang, a panic, an error) is named, and the other boots'
	# results are still counted.
	pids=() pmodes=() bad=
	bmodes=$modes
	[ -n "${VM_MODES:-}" ] || [ "$mode" != check ] || bmodes=$(be_modes)
	for m in $bmodes; do
		boot "$b" "$m" "$RESULTS/$SUITE-$m.tap" &
		pids+=($!) pmodes+=("$m")
		if [ "$(be_parallel)" != yes ] || [ -n "${DRY_RUN:-}" ]; then
			wait "$!" || bad+=" $m"
			pids=() pmodes=()
		fi
	done
	for i in "${!pids[@]}"; do wait "${pids[$i]}" || bad+=" ${pmodes[$i]}"; done
	[ -z "${DRY_RUN:-}" ] || { [ -z "$bad" ] || die "the $b boot(s)$bad failed (above)"; exit 0; }
	# One KTAP document for the backend, a subtest per boot (lib.sh); each
	# boot's kernel log stays in its own file.
	# shellcheck disable=SC2086 # one word per boot
	backend_tap "$RESULTS/$SUITE" "$bad" $bmodes >"$tap"

	# The series' KUnit suites, in the VM kernel (config/kunit.config):
	# the guest's check boot hands over the kernel log of the built-in
	# suites (boot) and of the KVM suite (kvm.ko's load); kunit.py parses
	# each.  Either one missing, or with no case, is a failure.
	if [ "$mode" = check ] && [[ " $modes " == *" check "* ]] &&
		[ -n "$(git -C "$TREE" diff --name-only base HEAD -- '*.kunitconfig')" ]; then
		grep -q '^CONFIG_KUNIT=y' "$BUILD/.config" ||
			die "the series has KUnit suites, but the kernel of $BUILD has no CONFIG_KUNIT (config/kunit.config)"
		kp=0 kf=0 ks=0
		for part in BOOT KVM; do
			klog=$LOGS/$VM_SUITE-$b-kunit-${part,,}.log kjson=$RESULTS/$VM_SUITE-$b-kunit-${part,,}.json
			: >"$klog"
			[ ! -e "$RESULTS/$SUITE-check.tap" ] || sed -n "s/^KTAP-$part: //p" "$RESULTS/$SUITE-check.tap" >"$klog"
			rm -f "$kjson"
			(cd "$TREE" && ./tools/testing/kunit/kunit.py parse --json="$kjson" "$klog") \
				>"$klog.parse" 2>&1 || true
			p=0 f=1 k=0
			[ ! -s "$kjson" ] || read -r p f k < <(counts_of "$HARNESS/scripts/kunit.sh" count "$kjson")
			[ "$p$f$k" != 000 ] || f=1
			[ "$f" = 0 ] || grep -E 'FAIL|CRASH|ERROR' "$klog.parse" | head -n 10 >&2 || true
			say "KUnit on $b, ${part,,} suites: $p passed, $f failed, $k skipped ($(basename "$klog"))"
			kp=$((kp + p)) kf=$((kf + f)) ks=$((ks + k))
		done
		record "$VM_SUITE-$b-kunit" "$kp" "$kf" "$ks"
		# Counted, and the selftests are counted too before this fails.
		[ "$kf" = 0 ] || kunit_red="$kf KUnit case(s) failed in the $b VM, or a suite did not run (logs: $LOGS/$VM_SUITE-$b-kunit-*.log)"
	fi

	# The counts, by the one parser (ktap.sh): a selftest that reports its
	# own results counts them.
	read -r pass fail skip top planned < <(counts_of "$HARNESS/scripts/ktap.sh" counts "$tap")
	# A backend that exists to run the WAITPKG paths (Bochs): there, a skip
	# is a failure.
	if [ "$(be_strict)" = yes ] && [ "$skip" != 0 ]; then
		grep -E '# SKIP' "$tap" | sed "s/^/  skipped on $b: /" >&2
		fail=$((fail + skip)) skip=0
	fi
	# A failed boot counts as a failure of its own where none of the
	# results it reported failed.
	record "$SUITE" "$pass" "$fail" "$skip"
	{ grep -E '^ *(not )?ok [0-9]+ ' "$tap" || true; } | sed 's/^/  /'
	[ -z "$bad" ] || die "the $b boot(s)$bad failed (above)${kunit_red:+; $kunit_red}"
	[ -z "${TESTS:-}" ] || [ "${top:-0}" != 0 ] ||
		die "TESTS='$TESTS' matches no selftest or check of the $b guest's list" "$tap"
	[ "${top:-0}" = "${planned:-none}" ] ||
		die "the $b guest planned ${planned:-none} tests but reported ${top:-0}" "$tap"
	say "VM on $b: $top selftests and checks, $pass passed, $fail failed, $skip skipped (subtests counted)"
	# Each cause named: a red selftest must not hide a red KUnit case.
	[ "$fail" = 0 ] || die "$fail test(s) failed in the $b VM (output: $tap)${kunit_red:+; $kunit_red}"
	[ -z "${kunit_red:-}" ] || die "$kunit_red"
) &
# Waited for at once: one backend after the other, and set -e stays in force
# inside the subshell (it would not in "( ... ) || ...").
wait $! || red+=" $b"
done
SUITE=
[ -z "$red" ] || die "the VM stage failed on:$red (each cause above)"
