#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "kunit": run the series' KUnit suites with kunit.py, on two kernels
# of the build matrix, checked against every .kunitconfig the series adds.
#   kunit.sh            build and run
#   kunit.sh count F    count the results in kunit.py's JSON file F
# The stage counts as "kunit"; "count", a helper of other stages, counts
# nothing of its own (a failure is its caller's, through counts_of).
SUITE=kunit
[ "${1:-}" != count ] || SUITE=
. "$(dirname "$0")/lib.sh"

# Print "PASSED FAILED SKIPPED" for a kunit.py --json file; list failures.
count() {
	python3 - "$1" <<'PY'
import json, sys
res = {"PASS": 0, "FAIL": 0, "SKIP": 0}
def walk(g, path):
    for c in g.get("test_cases", []):
        st = c.get("status", "FAIL")
        st = st if st in res else "FAIL"       # CRASHED, ERROR, ...
        res[st] += 1
        if st == "FAIL":
            print("  FAIL: %s.%s" % (path, c.get("name")), file=sys.stderr)
    for s in g.get("sub_groups", []):
        walk(s, s.get("name", "?"))
walk(json.load(open(sys.argv[1])), "")
print(res["PASS"], res["FAIL"], res["SKIP"])
PY
}

if [ "${1:-}" = count ]; then
	count "$2"
	exit
fi

rm -f "$RESULTS/kunit.count"
configs=$(git -C "$TREE" diff --name-only base HEAD -- '*.kunitconfig')
if [ -z "$configs" ]; then
	say "the series adds no KUnit suite yet: nothing to run"
	exit 0
fi
args=()
for c in $configs; do args+=(--kunitconfig="$TREE/$c"); done
# The matrix kernels have no ACPI, so no HPET or PM timer to calibrate the
# TSC against, and under a busy TCG host the PIT calibration fails now and
# then: the TSC is then marked unstable with no frequency, and the x86 wait
# cases skip.  Give the frequency instead (any will do: they stub the TSC).
args+=(--kernel_args=tsc_early_khz=2000000)
# Since 7.2, kunit.py asks QEMU for "-accel kvm" before TCG.  On a host without
# VMX or SVM whose /dev/kvm still opens, that guest never prints a line; as
# vm.sh does, use TCG there: kunit.py finds, first in PATH, a QEMU that drops
# "-accel kvm" (no mount namespace: check-fresh runs this in a chroot).
runner=()
if ! grep -qwE 'vmx|svm' /proc/cpuinfo; then
	tcg=$WORK/kunit-qemu-tcg
	mkdir -p "$tcg"
	for q in qemu-system-x86_64 qemu-system-i386; do
		real=$(command -v "$q") || continue
		cat >"$tcg/$q" <<-EOF
		#!/bin/sh
		# $q without "-accel kvm" (scripts/kunit.sh).
		skip=0
		for a; do
			shift
			if [ \$skip = 1 ]; then
				skip=0
				[ "\$a" = kvm ] || set -- "\$@" -accel "\$a"
			elif [ "\$a" = -accel ]; then
				skip=1
			else
				set -- "\$@" "\$a"
			fi
		done
		exec $real "\$@"
		EOF
		chmod +x "$tcg/$q"
	done
	runner=(env PATH="$tcg:$PATH")
fi

# The kernels are two entries of the build matrix (config/matrix.list):
# kvm-y for x86_64 and i386, built by scripts/matrix.sh (merge_config.sh,
# every option checked, W=1), in work/matrix-NAME; kunit.py boots them
# ("kunit.py exec").  KUNIT_ARCHES="x86_64 i386" adds i386,
# which catches what 64-bit code gets for free; make check builds i386 only
# for what the series touches (build.sh), for CI's time.
pass=0 fail=0 skip=0
# A run that cannot be counted is one failure more.
kdie() {
	record kunit "$pass" "$((fail + 1))" "$skip"
	die "$@"
}
for arch in ${KUNIT_ARCHES:-x86_64}; do
	case $arch in
	x86_64) entry=kvm-y ;;
	i386) entry=i386 ;;
	*) kdie "KUNIT_ARCHES: no matrix entry for $arch (x86_64, i386)" ;;
	esac
	build=$WORK/matrix-$entry
	say "building matrix entry $entry ($arch)"
	MATRIX="^$entry\$" MATRIX_SUITE=kunit-build "$HARNESS/scripts/matrix.sh" ||
		kdie "the KUnit kernel ($entry, $arch) did not build"
	rm -f "$RESULTS/kunit-build.count"
	# Every option of the series' .kunitconfig files is in that kernel.
	for c in $configs; do
		# The cpuidle poll hook, and so its suite, is 64-bit only.
		if [ "$arch" = i386 ] && grep -q X86_UMWAIT_KUNIT_TEST "$TREE/$c" &&
			! grep -q '^CONFIG_ARCH_HAS_CPUIDLE_POLL_WAIT=y' "$build/.config"; then
			continue
		fi
		while IFS= read -r opt; do
			grep -qxF -- "$opt" "$build/.config" ||
				kdie "$opt of $c is not in matrix entry $entry ($build/.config)"
		done < <(grep -E '^CONFIG_' "$TREE/$c")
	done
	say "kunit.py exec --arch=$arch --build_dir=${build#"$WORK"/} $(echo $configs)"
	json=$RESULTS/kunit-$arch.json log=$LOGS/kunit-$arch.log
	rm -f "$json"
	(cd "$TREE" && "${runner[@]}" ./tools/testing/kunit/kunit.py exec --arch="$arch" \
		--build_dir="$build" --timeout=600 --json="$json" "${args[@]}") >"$log" 2>&1 || true
	[ -s "$json" ] || kdie "kunit.py produced no results for $arch (boot failed?)" "$log"

	read -r p f s < <(counts_of count "$json")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	grep -E '^\[..:..:..\] (Testing complete|Ran |====)' "$log" | tail -n 12 || true
	[ "$p$f$s" != 000 ] || kdie "kunit.py ran no test on $arch" "$log"

	# objtool's noinstr validation of the KUnit kernel (vmlinux.o), repeated
	# here because the build shows no objtool warning as an error.  objtool
	# is 64-bit only.
	[ "$arch" = x86_64 ] || continue
	why=$(objtool_noinstr "$build" "$LOGS/kunit-objtool.log") || kdie "$why" "$LOGS/kunit-objtool.log"
	say "objtool: noinstr code of the KUnit kernel validated"
done
record kunit "$pass" "$fail" "$skip"

[ "$fail" = 0 ] || die "$fail KUnit case(s) failed (logs: $LOGS/kunit-*.log)"

say "KUnit: $pass passed, $fail failed, $skip skipped"
