#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "kunit": run the series' KUnit suites with kunit.py, the standard
# way, using every .kunitconfig the series adds.
#   kunit.sh            build and run
#   kunit.sh count F    count the results in kunit.py's JSON file F
SUITE=kunit
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
	exit 0
fi

rm -f "$RESULTS/kunit.count"
configs=$(git -C "$TREE" diff --name-only base HEAD -- '*.kunitconfig')
if [ -z "$configs" ]; then
	say "the series adds no KUnit suite yet: nothing to run"
	exit 0
fi
args=()
for c in $configs; do args+=(--kunitconfig="$TREE/$c"); done
# poll_idle() and the hooks it calls are noinstr, and their KUnit seams sit
# there: with DEBUG_ENTRY, objtool validates noinstr code (checked below).
args+=(--kconfig_add=CONFIG_DEBUG_KERNEL=y --kconfig_add=CONFIG_DEBUG_ENTRY=y)
[ ${#KMAKE_ARGS[@]} = 0 ] || args+=(--make_options="${KMAKE_ARGS[0]}")

say "kunit.py run --arch=x86_64 $(echo $configs)"
json=$RESULTS/kunit.json
rm -f "$json"
(cd "$TREE" && ./tools/testing/kunit/kunit.py run --arch=x86_64 \
	--build_dir="$WORK/build-kunit" --jobs="$JOBS" --timeout=600 \
	--json="$json" "${args[@]}") >"$LOGS/kunit.log" 2>&1 || true
[ -s "$json" ] || die "kunit.py produced no results (config, build or boot failed)" "$LOGS/kunit.log"

read -r pass fail skip < <(count "$json")
record kunit "$pass" "$fail" "$skip"
grep -E '^\[..:..:..\] (Testing complete|Ran |====)' "$LOGS/kunit.log" | tail -n 12 || true
[ "$pass$fail$skip" != 000 ] || die "kunit.py ran no test" "$LOGS/kunit.log"

# objtool's noinstr validation of the KUnit kernel (vmlinux.o), repeated
# here because kunit.py does not show build warnings.
grep -q '^CONFIG_NOINSTR_VALIDATION=y' "$WORK/build-kunit/.config" ||
	die "CONFIG_NOINSTR_VALIDATION is not set in the KUnit kernel" "$WORK/build-kunit/.config"
cp "$WORK/build-kunit/vmlinux.o" "$WORK/kunit-vmlinux.o"
"$WORK/build-kunit/tools/objtool/objtool" --noinstr --link "$WORK/kunit-vmlinux.o" \
	>"$LOGS/kunit-objtool.log" 2>&1 || true
rm -f "$WORK/kunit-vmlinux.o"
! grep -q 'warning: objtool' "$LOGS/kunit-objtool.log" ||
	die "objtool: noinstr violations in the KUnit kernel" "$LOGS/kunit-objtool.log"
say "objtool: noinstr code of the KUnit kernel validated"

[ "$fail" = 0 ] || die "$fail KUnit case(s) failed" "$LOGS/kunit.log"

say "KUnit: $pass passed, $fail failed, $skip skipped"
