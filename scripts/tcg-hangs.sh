#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "tcg-hangs": how often the series' selftests hang under nested QEMU
# TCG, on the base kernel and with the series.  Boots QEMU TCG_BOOTS times
# (default 10) with each kernel, alternating, with TCG_LIST (default
# config/selftests-tcg.list; on the base kernel the tests run their
# knob-independent cases), and counts per test and kernel: passed, skipped, failed,
# timed out (killed by the guest's timeout, TCG_TIMEOUT s, default 300: a
# hang, or a test too slow for nested TCG) and boots that did not finish.  The
# base kernel is built as "make check-wide" builds it (work/base).  Results in
# results/tcg-hangs-LIST.md, the boots' TAP in results/tcg-*.
SUITE=tcg-hangs
. "$(dirname "$0")/lib.sh"

BOOTS=${TCG_BOOTS:-10}
LIST=${TCG_LIST:-$HARNESS/config/selftests-tcg.list}
[ -f "$WORK/build-vm/arch/x86/boot/bzImage" ] || die "no VM kernel of the series (run 'make build')"
base_kernel tcg

# One boot: the TAP of its selftests, whatever vm.sh says of the rest (the
# base kernel has none of the series' KUnit suites).
declare -A n
for i in $(seq "$BOOTS"); do
	for side in base series; do
		build=$WORK/build-vm
		[ $side = series ] || build=$BASE_BUILD
		say "boot $i/$BOOTS, $side kernel"
		BUILD=$build BACKENDS=qemu VM_SUITE=tcg-$side-$i VM_MODES=check SELFTESTS_LIST=$LIST \
			GUEST_TIMEOUT=${TCG_TIMEOUT:-300} VM_TIMEOUT=3600 \
			"$HARNESS/scripts/vm.sh" check >"$LOGS/tcg-$side-$i.log" 2>&1 || true
		tap=$RESULTS/tcg-$side-$i-qemu-check.tap
		while read -r t _; do
			# The test's result, by the host's one parser (ktap.sh): a
			# timeout's exit status (124, or killed: 137, 143) is a hang.
			r=
			! grep -q '^HARNESS-DONE' "$tap" 2>/dev/null ||
				r=$("$HARNESS/scripts/ktap.sh" results "$tap" | awk -F '\t' -v t="$t" '$2 == t { print $1, $3 }')
			case $r in
			"fail exit=124" | "fail exit=137" | "fail exit=143") s=hung ;;
			fail*) s=failed ;;
			pass*) s=passed ;;
			skip*) s=skipped ;;
			*) s=noboot ;;
			esac
			n[$side,$t,$s]=$((${n[$side,$t,$s]:-0} + 1))
			say "  $t: $s"
		done < <(kvm_selftests "$LIST")
	done
done

md=$RESULTS/tcg-hangs-$(basename "$LIST" .list).md
{
	echo "| test | kernel | boots | passed | skipped | failed | timed out | boot failed |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
	while read -r t _; do
		for side in base series; do
			echo "| $t | $side | $BOOTS | ${n[$side,$t,passed]:-0} | ${n[$side,$t,skipped]:-0} | ${n[$side,$t,failed]:-0} | ${n[$side,$t,hung]:-0} | ${n[$side,$t,noboot]:-0} |"
		done
	done < <(kvm_selftests "$LIST")
} >"$md"
cat "$md"
