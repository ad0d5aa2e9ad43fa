#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "vm": pack a busybox initramfs with the KVM modules and selftests,
# boot the VM kernel in QEMU and collect the results.
#   vm.sh check   run config/selftests.list, then the cpuidle checks in a
#                 second boot; TAP on the second serial port
#   vm.sh run     the demo of "make run", shown as it happens
SUITE=vm
. "$(dirname "$0")/lib.sh"

mode=${1:-check}
BUILD=${BUILD:-$WORK/build-vm}
SELFTESTS_OUT=${SELFTESTS_OUT:-$WORK/build-selftests}
QEMU=${QEMU:-qemu-system-x86_64}
VM_TIMEOUT=${VM_TIMEOUT:-900}
kernel=$BUILD/arch/x86/boot/bzImage

command -v "$QEMU" >/dev/null || die "$QEMU not found (install qemu-system-x86, or run 'make deps')"
command -v busybox >/dev/null || die "busybox not found (install busybox-static, or run 'make deps')"
command -v iasl >/dev/null || die "iasl not found (install acpica-tools, or run 'make deps')"
[ -f "$kernel" ] || die "no kernel at $kernel (run 'make build')"

# The initramfs.
root=$WORK/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,selftests,harness}
cp "$(command -v busybox)" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp -a "$BUILD/modroot/lib" "$root/lib"
cp "$HARNESS/scripts/guest/init" "$root/init"
cp "$HARNESS/scripts/guest/demo" "$root/harness/demo"
list_file "${SELFTESTS_LIST:-$HARNESS/config/selftests.list}" >"$root/harness/tests"
# The tests to run, and the demo's workloads.
while read -r t _; do
	[ -x "$SELFTESTS_OUT/$t" ] || die "selftest $t was not built (run 'make build')"
	mkdir -p "$root/selftests/$(dirname "$t")"
	cp "$SELFTESTS_OUT/$t" "$root/selftests/$t"
done < <(cat "$root/harness/tests"; list_file "$HARNESS/config/demo.list")
initrd=$WORK/initramfs.cpio.gz
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd"
say "initramfs: $(du -h "$initrd" | cut -f1), $(wc -l <"$root/harness/tests") selftest(s)"

# An SSDT with a _CST per CPU, so that acpi_idle gives the guest a cpuidle
# driver whose state 0 is POLL.
cst=$WORK/cst.aml
run "$LOGS/iasl.log" iasl -p "${cst%.aml}" "$HARNESS/config/cst.asl"

# KVM acceleration only where the host really has VMX or SVM: a /dev/kvm
# without them (e.g. a PVM-style host) hangs the guest.
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
	accel=(-accel kvm -cpu host) how="KVM, -cpu host"
else
	accel=(-accel tcg -cpu max) how="TCG, -cpu max (nested SVM)"
fi

# boot MODE TAP [QEMU ARGS...]: boot the guest in harness.mode MODE, with
# its results in TAP; a hang, a QEMU error, an oops or missing results fail.
# cpuidle.poll_umwait_ns=20000: without WAITPKG the guest must refuse it.
boot() {
	local bmode=$1 out=$2 rc=0
	shift 2
	local console=$LOGS/vm-$bmode-console.log
	local append="console=ttyS0 loglevel=5 panic=-1 oops=panic harness.mode=$bmode"
	append+=" cpuidle.poll_umwait_ns=20000"
	[ -z "${HARNESS_INJECT:-}" ] || append+=" harness.inject=$HARNESS_INJECT"
	local qemu=(timeout --foreground -k 10 "$VM_TIMEOUT" "$QEMU" "${accel[@]}" -M pc -smp 2 -m 2G
		-kernel "$kernel" -initrd "$initrd" -append "$append" "$@"
		-display none -vga none -monitor none -no-reboot -serial file:"$console")

	rm -f "$console" "$out"
	say "booting $(basename "$kernel") under $how, mode $bmode"
	if [ "$bmode" = run ]; then
		"${qemu[@]}" -serial stdio </dev/null | tee "$out" | tr -d '\r' | grep -v '^HARNESS-DONE' || rc=$?
	else
		"${qemu[@]}" -serial file:"$out" </dev/null || rc=$?
	fi
	[ "$rc" != 124 ] && [ "$rc" != 137 ] || die "the guest hung: no poweroff within ${VM_TIMEOUT}s" "$console"
	[ "$rc" = 0 ] || die "QEMU exited with status $rc" "$console"
	sed -i 's/\r$//' "$out" "$console"

	local oops
	oops=$(grep -E 'Kernel panic|Oops|BUG:|WARNING: CPU|general protection fault|Call Trace' "$console" || true)
	[ -z "$oops" ] || die "the guest kernel reported: $(head -n1 <<<"$oops")" "$console"
	local err
	err=$(grep -m1 '^HARNESS-ERROR: ' "$out" || true)
	[ -z "$err" ] || die "${err#HARNESS-ERROR: }" "$out"
	grep -q '^HARNESS-DONE' "$out" || die "the guest stopped before its tests finished" "$console"
}

tap=$RESULTS/vm.tap
rm -f "$tap"
if [ "$mode" = run ]; then
	boot run "$tap" -acpitable file="$cst"
	exit 0
fi
# The selftests run without the _CST table, on the default idle loop, as
# before, and the cpuidle checks get a boot of their own: polling on every
# idle CPU slows nested guests under TCG for seconds after it ends.
boot check "$RESULTS/vm-check.tap"
boot cpuidle "$RESULTS/vm-cpuidle.tap" -acpitable file="$cst"
cat "$RESULTS/vm-check.tap" "$RESULTS/vm-cpuidle.tap" >"$tap"

# Count the subtests of a selftest that reports its own TAP ("# ok N ..."),
# else the selftest as one test; a selftest that fails without a failing
# subtest counts as one failure more.
read -r pass fail skip top <<<"$(awk '
	/^# (not )?ok [0-9]+/ { sub(/^# /, ""); sub_ok += /^ok/ && !/# SKIP/; sub_skip += /# SKIP/; sub_fail += /^not ok/; next }
	/^(not )?ok [0-9]+/ {
		top++
		bad = /^not ok/
		if (sub_ok + sub_skip + sub_fail == 0) { pass += !bad && !/# SKIP/; skip += /# SKIP/; fail += bad }
		else { pass += sub_ok; skip += sub_skip; fail += sub_fail + (bad && !sub_fail) }
		sub_ok = sub_skip = sub_fail = 0
	}
	END { print pass + 0, fail + 0, skip + 0, top + 0 }' "$tap")"
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tap" | awk '{ n += $1 } END { print n }')
record vm "$pass" "$fail" "$skip"
grep -E '^(not )?ok [0-9]+ ' "$tap" | sed 's/^/  /'
[ "$top" = "${planned:-x}" ] ||
	die "the guest planned ${planned:-no} tests but reported $top" "$tap"
[ "$fail" = 0 ] || die "$fail test(s) failed in the VM (output: $tap)"
say "VM: $top selftests and checks, $pass passed, $fail failed, $skip skipped (subtests counted)"
