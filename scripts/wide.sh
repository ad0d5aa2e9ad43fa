#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "wide": upstream KVM selftests beyond the curated lists
# (config/selftests-wide.list), each run on the base kernel (the tree at tag
# base, in a git worktree) and on the series, with the same binaries (the
# series changes no upstream test).  A test that passes on the base must
# pass with the series; the table of both sides goes to
# work/results/wide.md.
#   WIDE_BACKENDS  the backends (default qemu)
SUITE=wide
. "$(dirname "$0")/lib.sh"

rm -f "$RESULTS/$SUITE.count" "$RESULTS"/wide-base-*.count "$RESULTS"/wide-series-*.count
LIST=$HARNESS/config/selftests-wide.list
OUT=$WORK/build-selftests-wide
[ -f "$WORK/build-vm/arch/x86/boot/bzImage" ] || die "no VM kernel of the series (run 'make build')"
base_kernel wide

say "building the wide selftests"
# vm.sh packs the demo's workloads too.
tests=$(kvm_selftests "$LIST" "$HARNESS/config/demo.list" | awk '{ print $1 }' | sort -u)
mkdir -p "$OUT"
# shellcheck disable=SC2046 # one word per test
run "$LOGS/wide-selftests.log" make -C "$TREE/tools/testing/selftests/kvm" -j"$JOBS" OUTPUT="$OUT" \
	KHDR_INCLUDES="-isystem $WORK/build-vm/usr/include" EXTRA_CFLAGS=-static \
	$(for t in $tests; do echo "$OUT/$t"; done)

# The two runs: the same list and binaries, the base kernel, then the series.
for side in base series; do
	build=$WORK/build-vm
	[ $side = series ] || build=$BASE_BUILD
	for b in ${WIDE_BACKENDS:-qemu}; do
		say "$side kernel on $b"
		BUILD=$build BACKENDS=$b VM_SUITE=wide-$side VM_MODES=check SELFTESTS_LIST=$LIST \
			SELFTESTS_LIST_BOCHS=$LIST SELFTESTS_OUT=$OUT GUEST_TIMEOUT=240 VM_TIMEOUT=3600 \
			"$HARNESS/scripts/vm.sh" check >"$LOGS/wide-$side-$b.log" 2>&1 ||
			grep -q 'test(s) failed in the' "$LOGS/wide-$side-$b.log" ||
			die "the $side kernel's run on $b did not complete" "$LOGS/wide-$side-$b.log"
	done
done

# status TAP TEST: pass, skip, fail or "-" for TEST in a TAP file (the
# host's one parser, ktap.sh).
status() {
	"$HARNESS/scripts/ktap.sh" results "$1" | awk -F '\t' -v t="$2" '$2 == t { s = $1 } END { print s ? s : "-" }'
}
pass=0 fail=0 skip=0
md=$RESULTS/wide.md
for b in ${WIDE_BACKENDS:-qemu}; do
	{
		echo "| test ($b) | base | series |"
		echo "| --- | --- | --- |"
	} >"$md.$b"
	while read -r t _; do
		sb=$(status "$RESULTS/wide-base-$b-check.tap" "$t")
		ss=$(status "$RESULTS/wide-series-$b-check.tap" "$t")
		echo "| $t | $sb | $ss |" >>"$md.$b"
		if [ "$sb" = pass ] && [ "$ss" != pass ]; then
			echo "not ok $t on $b: passes on the base, $ss with the series"
			fail=$((fail + 1))
		elif [ "$ss" = fail ] && [ "$sb" != fail ]; then
			echo "not ok $t on $b: fails with the series, $sb on the base"
			fail=$((fail + 1))
		elif [ "$ss" = "-" ]; then
			echo "not ok $t on $b: no result with the series"
			fail=$((fail + 1))
		elif [ "$ss" = pass ]; then
			pass=$((pass + 1))
		else
			echo "# $t on $b: $ss with the series, $sb on the base"
			skip=$((skip + 1))
		fi
	done < <(kvm_selftests "$LIST")
	# The harness's own checks of that boot (the VM's CPU, the modules and
	# their parameters) must pass with the series: only the list's tests
	# are compared.
	while IFS= read -r l; do
		echo "$l (the harness's own check, with the series on $b)"
		fail=$((fail + 1))
	done < <(grep '^not ok ' "$RESULTS/wide-series-$b-check.tap" |
		grep -vFf <(kvm_selftests "$LIST" | awk '{ print " " $1 }') || true)
	cat "$md.$b"
done
cat "$md".* >"$md"
rm -f "$md".*
# Only the comparison counts: a test that fails on both sides is no
# regression, so the two sides' own counts go.
mkdir -p "$RESULTS/wide"
mv "$RESULTS"/wide-base-*.count "$RESULTS"/wide-series-*.count "$RESULTS/wide/" 2>/dev/null || true
record wide "$pass" "$fail" "$skip"
[ "$fail" = 0 ] || die "$fail regression(s) against the base kernel"
say "wide: $pass pass on both sides or only with the series, $skip skip or fail on both, no regression"
