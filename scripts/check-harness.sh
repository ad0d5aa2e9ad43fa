#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "harness": the harness's own tests.  Each case injects one fault and
# runs the stage that must catch it; the stage must fail, name the cause,
# and leave patches/ as it was (HARNESS_CASES=REGEX picks cases by name).
# Every case runs in a private mount namespace where the repository is an
# overlay, so the faults land in a scratch copy and the real checkout, tree
# and build stay untouched.
SUITE=harness
. "$(dirname "$0")/lib.sh"

command -v unshare >/dev/null || die "unshare (util-linux) is needed for the scratch copies"
upper=$(mktemp -d /var/tmp/harness-scratch.XXXXXX)
trap 'rm -rf "$upper"' EXIT
patches_sum() { (cd "$HARNESS" && find patches -type f | sort | xargs sha256sum | sha256sum); }
before=$(patches_sum)

export KERNEL_SRC_PKG KERNEL_SRC_VER KERNEL_SRC_SUITE=${KERNEL_SRC_SUITE:-}
# The stored postings of this base, relative to the repository.
P=patches/$KBASE
pass=0 fail=0 n=0
# case_ NAME REGEX SCRIPT [pass]: run SCRIPT in a scratch copy; expect it to
# fail with output matching REGEX, and patches/ unchanged by the stage.
# With "pass" (green), the stage must pass instead, with output matching
# REGEX: a situation the harness must take as it is.
case_() {
	local name=$1 regex=$2 script=$3 want=${4:-fail} out ok=no t0=$SECONDS
	# HARNESS_CASES=REGEX runs only the cases whose names match.
	[[ "$name" =~ ${HARNESS_CASES:-.} ]] || return 0
	n=$((n + 1))
	rm -rf "${upper:?}"/*
	mkdir -p "$upper"/{h,hw,w,ww}
	out=$(unshare -m bash -c '
		set -e
		mount -t overlay overlay -o "lowerdir=$1,upperdir=$3/h,workdir=$3/hw" "$1"
		case "$2/" in "$1"/*) ;; *)
			mount -t overlay overlay -o "lowerdir=$2,upperdir=$3/w,workdir=$3/ww" "$2" ;; esac
		cd "$1"
		set +e
		inject() { :; }
		stage() { :; }
		eval "$4"
		inject || { echo "INJECTION FAILED"; exit 0; }
		s1=$(find patches -type f | sort | xargs sha256sum | sha256sum)
		stage
		rc=$?
		s2=$(find patches -type f | sort | xargs sha256sum | sha256sum)
		[ "$s1" = "$s2" ] || echo "PATCHES MODIFIED"
		echo "STAGE EXIT $rc"
	' harness "$HARNESS" "$WORK" "$upper" "$script" 2>&1)
	echo "$out" >"$LOGS/harness-$n.log"
	if grep -qE -- "$regex" <<<"$out" && ! grep -qE '^(PATCHES MODIFIED|INJECTION FAILED)' <<<"$out"; then
		case $want in
		fail) grep -q '^STAGE EXIT [1-9]' <<<"$out" && ok=yes ;;
		pass) grep -q '^STAGE EXIT 0$' <<<"$out" && ok=yes ;;
		esac
	fi
	if [ "$ok" = yes ]; then
		echo "ok $n - $name ($((SECONDS - t0)) s)"
		pass=$((pass + 1))
	else
		echo "not ok $n - $name ($((SECONDS - t0)) s, log: $LOGS/harness-$n.log)"
		tail -n 15 <<<"$out" | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
}

# green NAME REGEX SCRIPT: case_, with a stage that must pass.
green() { case_ "$1" "$2" "$3" pass; }

first=$(series_list | grep -v '/0000-' | head -n1)
second=$(series_list | grep -v '/0000-' | sed -n 2p)
[ -n "$second" ] || die "the harness tests need a series of at least two patches"

# deps on a machine where nothing is installed: stubs first in PATH report
# no package and record what apt-get is asked for, so nothing touches the
# network; the stub install fails, and every listed package and the pinned
# kernel source must have been requested in one install.
case_ "deps on a machine with nothing installed" "apt-get was asked for all [0-9]+ packages.*|FAILED: 'apt-get install" '
	stage() {
		local d=/tmp/deps-stub.$$ want
		mkdir -p $d
		printf "#!/bin/sh\nexit 1\n" >$d/dpkg-query
		printf "#!/bin/sh\necho \"\$*\" >>$d/apt-get.args\n[ \"\$1\" = install ] && { echo \"E: harness stub: no network\"; exit 100; }\nexit 0\n" >$d/apt-get
		printf "#!/bin/sh\n[ \"\$1 \$2\" = \"madison $KERNEL_SRC_PKG\" ] && echo \" \$2 | $KERNEL_SRC_VER | http://stub bookworm-security/main amd64 Packages\"\nexit 0\n" >$d/apt-cache
		chmod +x $d/*
		PATH=$d:$PATH scripts/deps.sh
		rc=$?
		want=$( { sed -e "s/#.*//" config/deps.list | awk "{ print \$1 }"
			[ -n "$KERNEL_SRC_SUITE" ] || echo "$KERNEL_SRC_PKG=$KERNEL_SRC_VER"; } | sed "/^$/d")
		[ "$(grep -c "^install " $d/apt-get.args)" = 1 ] || { echo "not one apt-get install"; return 0; }
		for p in $want; do
			grep "^install " $d/apt-get.args | tr " " "\n" | grep -qxF -- "$p" ||
				{ echo "apt-get was not asked for $p"; return 0; }
		done
		echo "apt-get was asked for all $(echo $want | wc -w) packages"
		return $rc
	}'

# The pinned kernel source gone from its suite: apt's index (a stub) lists
# other versions only; the stage names the suite, the version it wanted and
# the versions it found.
if [ -n "${KERNEL_SRC_SUITE:-}" ]; then
	case_ "a pinned kernel source gone from the archive" "$KERNEL_SRC_PKG .* is gone from $KERNEL_SRC_SUITE .*versions found there: 7.3.5-1~bpo13.1 7.3.10-1~bpo13.1" '
		stage() {
			local d=/tmp/src-stub.$$
			mkdir -p $d
			printf "#!/bin/sh\nexit 0\n" >$d/apt-get
			printf "#!/bin/sh\nfor v in 7.3.10-1~bpo13+1 7.3.5-1~bpo13+1; do echo \" $KERNEL_SRC_PKG | \$v | http://stub $KERNEL_SRC_SUITE/main amd64 Packages\"; done\n" >$d/apt-cache
			chmod +x $d/*
			PATH=$d:$PATH WORK=$d/work KERNEL_TARBALL=$d/none.tar.xz DEBIAN_MIRROR=http://stub scripts/deps.sh
		}'
fi

case_ "a crashing checkpatch helper" "its helper scripts/spdxcheck.py\) could not run: ImportError: harness" '
	inject() {
		mkdir -p /tmp/ply.$$/ply && : >/tmp/ply.$$/ply/__init__.py &&
			echo "raise ImportError(\"harness: a crashing helper\")" >/tmp/ply.$$/ply/lex.py
	}
	stage() { PYTHONPATH=/tmp/ply.$$ scripts/hygiene.sh; }'

case_ "a patch that does not apply" "patch $second does not apply" "
	inject() { awk 'f == 0 && /^@@/ { h = 1 } h && /^ / && f == 0 { \$0 = \" broken\" substr(\$0, 2); f = 1 } 1' \
		$P/$second >/tmp/p.\$\$ && cat /tmp/p.\$\$ >$P/$second; }
	stage() { FORCE=1 scripts/tree.sh; }"

case_ "a patch missing from its series" "$first is in .* but not in ${first%%/*}/series" "
	inject() { sed -i '/^${first#*/}/d' $P/${first%%/*}/series; }
	stage() { scripts/hygiene.sh; }"

case_ "a series entry with no file" "series lists ${first%%/*}/0099-missing.patch, which does not exist" "
	inject() { echo 0099-missing.patch >>$P/${first%%/*}/series; }
	stage() { scripts/hygiene.sh; }"

# The debug-only patches of make count: checked by hygiene, as they are not
# in CI's boots (a trailing space on an added line; a hunk for a missing file).
if [ "$KBASE" = upstream ]; then
	case_ "a debug patch that checkpatch flags" "checkpatch --strict reports problems in debug/halt-poll-stamps.patch" "
		inject() { sed -i 's/^+\t\t\tkvm_stamps_pct(s->seg\[2\], s->n_seg, 50),\$/& /' debug/halt-poll-stamps.patch &&
			grep -q 'n_seg, 50), \$' debug/halt-poll-stamps.patch; }
		stage() { scripts/hygiene.sh; }"
	case_ "a debug patch that no longer applies" "debug/halt-poll-stamps.patch does not apply to the tree's master" "
		inject() { printf 'diff --git a/no-such-file b/no-such-file\n--- a/no-such-file\n+++ b/no-such-file\n@@ -1 +1 @@\n-a\n+b\n' >>debug/halt-poll-stamps.patch; }
		stage() { scripts/hygiene.sh; }"
fi

# make check goes on past a red stage that leaves the later ones their
# inputs: with hygiene red (a debug patch that checkpatch flags), the build
# and the VM stage still run (stubs here), and the summary lists hygiene.
if [ "$KBASE" = upstream ]; then
	case_ "a red hygiene stage, and make check still builds and boots" "STUB vm.sh check .*red: hygiene +checkpatch --strict reports problems in debug.*[0-9]+ failed" "
		inject() { sed -i 's/^+\t\t\tkvm_stamps_pct(s->seg\[2\], s->n_seg, 50),\$/& /' debug/halt-poll-stamps.patch &&
			grep -q 'n_seg, 50), \$' debug/halt-poll-stamps.patch; }
		stage() {
			for s in build bench vm demo-check; do
				printf '#!/bin/bash\\necho \"STUB \$(basename \$0) \$*\"\\nfor r in bench-test vm-qemu vm-qemu-kunit demo-qemu vm-bochs vm-bochs-kunit demo-bochs; do echo 1 0 0 >\"\$(dirname \$0)/../work/results/\$r.count\"; done\\n' >scripts/\$s.sh
			done
			scripts/check.sh check 2>&1 | tr '\\n' ' '; rc=\${PIPESTATUS[0]}; echo; return \$rc; }"
fi

case_ "a checkpatch warning" "checkpatch --strict reports errors or warnings in $first" "
	inject() { sed -i '0,/^\$/s//\nThis line of the changelog is far longer than the seventy-five columns that checkpatch allows.\n/' $P/$first; }
	stage() { scripts/hygiene.sh; }"

case_ "a config option that did not survive" "CONFIG_KVM_NO_SUCH_OPTION=y requested.*|did not survive olddefconfig" "
	inject() { echo CONFIG_KVM_NO_SUCH_OPTION=y >>config/vm.config; }
	stage() { scripts/build.sh config; }"

case_ "a build error" "FAILED: 'mk bzImage modules' failed" "
	inject() { echo 'int harness_broken(void) { return }' >>work/linux/virt/kvm/kvm_main.c; }
	stage() { scripts/build.sh; }"

if [ -f "$TREE/arch/x86/kvm/halt_poll.c" ]; then
	case_ "a failing KUnit case in the VM (the wait ignores the time left)" "KUnit case\(s\) failed in the qemu VM" "
		inject() { sed -i 's/min3(slice_ns, remaining_ns, (u64)U32_MAX)/min(slice_ns, (u64)U32_MAX)/' work/linux/arch/x86/kvm/halt_poll.c &&
			grep -q 'mul_u64_u32_shr(min(slice_ns, (u64)U32_MAX),' work/linux/arch/x86/kvm/halt_poll.c; }
		stage() { scripts/build.sh kernel && BACKENDS=qemu VM_MODES=check scripts/vm.sh check; }"
fi

# A red KUnit stage on the first backend: the next backend still boots and
# is counted (its KUnit goes red too), and the stage names both.
case_ "a KUnit suite that did not run, and the next backend still boots" "the VM stage failed on: qemu bochs" "
	stage() { HARNESS_INJECT=nokunit BACKENDS='qemu bochs' VM_MODES=check scripts/vm.sh check; }"

case_ "a failing selftest" "1 test\(s\) failed in the qemu VM" "
	stage() { HARNESS_INJECT=fail BACKENDS=qemu scripts/vm.sh check; }"

# The check boot panics: the cpuidle boot still runs and is counted.
case_ "a guest panic, and the other boot still counted" "the qemu guest kernel reported: .*(panic|sysrq).* ok [0-9]+ .*the qemu boot\\(s\\) check failed" "
	stage() { HARNESS_INJECT=panic BACKENDS=qemu scripts/vm.sh check 2>&1 | tr '\\n' ' '; rc=\${PIPESTATUS[0]}; echo; return \$rc; }"

case_ "a shell error in the guest's script" "the guest's check script stopped with status 2" "
	stage() { HARNESS_INJECT=error BACKENDS=qemu scripts/vm.sh check; }"

case_ "a guest that hangs" "the qemu guest hung" "
	stage() { HARNESS_INJECT=hang VM_TIMEOUT=60 BACKENDS=qemu scripts/vm.sh check; }"

case_ "a missing qemu" "qemu-system-x86_64-missing not found" "
	stage() { QEMU=qemu-system-x86_64-missing scripts/vm.sh check; }"

case_ "a missing Bochs" "Bochs not found at /nonexistent/bochs" "
	stage() { BOCHS=/nonexistent/bochs BACKENDS=bochs scripts/vm.sh check; }"

bochs_first=$(list_file "$HARNESS/bochs/series" | head -n1)
case_ "a Bochs patch that does not apply" "Bochs patch $bochs_first does not apply" "
	inject() { sed -i '0,/^-[^-]/s/^-\([^-]\)/-harness-broken \1/' bochs/$bochs_first; }
	stage() { scripts/bochs.sh build; }"

case_ "a guest that hangs under Bochs" "the bochs guest hung" "
	stage() { HARNESS_INJECT=hang VM_TIMEOUT=120 BACKENDS=bochs scripts/vm.sh check; }"

case_ "a skipped check on the Bochs backend" "skipped on bochs: .*harness_injected_skip" "
	stage() { : >/tmp/none.\$\$; HARNESS_INJECT=skip BACKENDS=bochs VM_MODES=check SELFTESTS_LIST_BOCHS=/tmp/none.\$\$ scripts/vm.sh check; }"

# The build matrix: an option that does not exist (a misspelt "=n" would
# check nothing), an option that cannot be had, and a build error that only
# one configuration (KVM=y without vendor modules: no KVM_X86) hits; each
# must fail naming its entry.  The build error is in asm-offsets.c, which
# kbuild compiles before any directory, so that the case ends in a minute or
# two even where the entry has never been built (CI does not build it).
case_ "matrix options that do not exist or cannot be had" "FAILED: 2 matrix configuration\(s\) failed: harness-nosuch harness-unmet" "
	stage() {
		printf 'harness-nosuch x86_64 KVM_NO_SUCH_OPTION=n\\nharness-unmet x86_64 KVM=n KVM_INTEL=y\\n' >/tmp/matrix.\$\$.list
		out=\$(MATRIX_LIST=/tmp/matrix.\$\$.list scripts/matrix.sh 2>&1)
		rc=\$?
		echo \"\$out\"
		grep -q 'CONFIG_KVM_NO_SUCH_OPTION: no such Kconfig symbol' <<<\"\$out\" &&
			grep -q 'CONFIG_KVM_INTEL=y requested, got n' <<<\"\$out\" || { echo 'not the injected causes'; return 0; }
		return \$rc
	}"

case_ "a build error in one matrix configuration" "FAILED: 1 matrix configuration\(s\) failed: kvm-novendor" "
	inject() { printf '#if !IS_ENABLED(CONFIG_KVM_X86)\\n#error harness: broken without KVM_X86\\n#endif\\n' >>work/linux/arch/x86/kernel/asm-offsets.c; }
	stage() {
		out=\$(MATRIX='^kvm-novendor\$' scripts/matrix.sh 2>&1)
		rc=\$?
		echo \"\$out\"
		grep -q 'error: #error harness: broken without KVM_X86' \"\$WORK/logs/matrix-kvm-novendor.log\" ||
			{ echo 'not the injected cause'; return 0; }
		return \$rc
	}"

# A splat: a real WARNING (LKDTM, harness.inject=splat) on the console of
# a VM run fails it, naming the splat; "make check-debug" relies on the
# same check of every boot (scripts/vm.sh) for lockdep, KASAN, UBSAN...
case_ "a splat on the guest's console" "the qemu guest kernel reported: WARNING: .*lkdtm" "
	stage() { HARNESS_INJECT=splat VM_MODES=cpuidle BACKENDS=qemu scripts/vm.sh check; }"

# make bench-host in a KVM guest with WAITPKG refuses up front, naming the
# hypervisor gate, before it builds or fetches anything.
case_ "make bench-host in a guest builds nothing" "refused in a guest, nothing built" "
	stage() {
		local w o rc=0
		w=\$(mktemp -d)
		o=\$(CPUINFO=scripts/testdata/cpuinfo/kvm-guest-waitpkg WORK=\$w make -s bench-host 2>&1) || rc=\$?
		echo \"\$o\"
		if grep -q 'a guest (the hypervisor flag).*bench-host measures on bare metal' <<<\"\$o\" &&
			[ -z \"\$(ls \$w | grep -vE '^(results|logs|bench)\$')\" ]; then
			echo 'refused in a guest, nothing built'
		fi
		rm -rf \$w
		return \$rc
	}"

# The bench (make bench, make bench-host) must not measure nothing in
# silence: on a fake sysfs, with a fake halt_poll_bench, a knob that
# refuses writes and runs whose halts were not polled must each fail it.
bench_fake() {
	cat <<-'EOF'
	fake=/tmp/bench-fake.$$
	mkdir -p $fake/sys/module/kvm/parameters $fake/t
	printf '#!/bin/sh\nfor p in ipi msi; do echo "# result path=$p knob=$(cat $fake/sys/module/kvm/parameters/halt_poll_tpause_ns) poll_ns=1000000 p50=1000 p90=1100 p99=1200 max=1300 halt_exits=1000 halt_attempted_poll=1000 halt_successful_poll=${SUCC:-990} halt_poll_wait=${WAITS:-4000} halt_poll_wait_ns=900000 resent=0 apicv=Y ipiv=N tsc_moved=${TSCM:-0}"; done\n' >$fake/t/halt_poll_bench
	sed -i "s|\$fake|$fake|g" $fake/t/halt_poll_bench
	chmod +x $fake/t/halt_poll_bench
	bench() { BENCH_SYSFS=$fake/sys POWERCAP=$fake/none sh scripts/guest/bench -r 1 -k "0 20000" -t $fake/t; }
	EOF
}

case_ "a bench whose knob writes are refused" "halt_poll_tpause_ns refuses non-zero values.*nothing to measure" "
	$(bench_fake)
	stage() { mkdir -p \$fake/sys/module/kvm/parameters/halt_poll_tpause_ns; bench; }"

case_ "a bench whose halts were not polled" "tpause:20000 ipi: 0 of 1000 halts woken while polling" "
	$(bench_fake)
	stage() { echo 0 >\$fake/sys/module/kvm/parameters/halt_poll_tpause_ns; SUCC=0 bench; }"

case_ "a bench whose TSC offset moved" "tpause:[0-9]+ (ipi|msi): the TSC offset moved, no latency was measured" "
	$(bench_fake)
	stage() { echo 0 >\$fake/sys/module/kvm/parameters/halt_poll_tpause_ns; TSCM=1 bench; }"

case_ "a bench whose knob made no wait" "tpause:20000 msi: 1000 polls, 0 waits" "
	$(bench_fake)
	stage() { echo 0 >\$fake/sys/module/kvm/parameters/halt_poll_tpause_ns; WAITS=0 bench; }"

case_ "no test at all" "no test ran" "
	stage() { rm -f work/results/*.count; scripts/summary.sh; }"

# The guest's expectations come from the host's facts (lib.sh:
# guest_waitpkg), not from the backend's name: told that its QEMU guest has
# WAITPKG, as on a VMX+WAITPKG host with KVM, the check holds the guest to
# it, and a guest without it fails.
case_ "a QEMU guest expected to see WAITPKG" "not ok [0-9]+ WAITPKG in the qemu guest: no \(want yes\)" "
	stage() { HARNESS_GUEST_WAITPKG=yes BACKENDS=qemu VM_MODES=check scripts/vm.sh check; }"

# The "can wait" predicate (scripts/guest/can_wait): a guest that looks
# like a KVM guest on a WAITPKG host (waitpkg and hypervisor in its
# cpuinfo) cannot wait, as both postings refuse to under the hypervisor
# flag: its checks expect the knobs refused, and pass.
green "a guest with WAITPKG and the hypervisor flag expects the knobs refused" \
	"ok [0-9]+ the qemu guest can wait \(WAITPKG, no hypervisor flag, no monitor bug\): no \(want no\)" "
	stage() { HARNESS_INJECT=kvmguest HARNESS_GUEST_WAITPKG=yes HARNESS_GUEST_CAN_WAIT=no \
		BACKENDS=qemu VM_MODES=check scripts/vm.sh check; }"

# The summary of a target knows its suites: one that left no count (a stage
# that died before recording) fails it, as does a count file that is not
# three numbers.
case_ "a suite that did not run" "not run: vm-bochs" "
	stage() { rm -f work/results/*.count; echo '5 0 0' >work/results/vm-qemu.count
		SUMMARY_REQUIRE='vm-qemu vm-bochs' scripts/summary.sh; }"

# The summary names every red suite and what in it failed: a selftest
# from its TAP, a KUnit case from kunit.py's parse.
case_ "the summary lists each red test" "(red: vm-qemu +not ok 2 harness_red_selftest.*red: vm-qemu-kunit +FAILED harness_red_case|red: vm-qemu-kunit +FAILED harness_red_case.*red: vm-qemu +not ok 2 harness_red_selftest)" "
	stage() { rm -f work/results/*.count; echo '1 1 0' >work/results/vm-qemu.count
		printf 'ok 1 a\\nnot ok 2 harness_red_selftest\\n' >work/results/vm-qemu.tap
		echo '3 1 0' >work/results/vm-qemu-kunit.count
		echo '[10:00:00] [FAILED] harness_red_case' >work/logs/vm-qemu-kunit-boot.log.parse
		scripts/summary.sh 2>&1 | tr '\\n' ' '; rc=\${PIPESTATUS[0]}; echo; return \$rc; }"

case_ "a malformed count file" "vm-qemu: malformed count file" "
	stage() { rm -f work/results/*.count; echo '5 0' >work/results/vm-qemu.count
		echo '7 0 1' >work/results/vm-bochs.count; scripts/summary.sh; }"

# A command that fails inside a function, outside any check: the stage
# names the file, the line and the command (set -E, review H5), as it does
# at the top level, instead of stopping with no word.
case_ "a command that fails inside a function" "unexpected error \(status 1\) at export-series\.sh:[0-9]+: cp /nonexistent/harness-h5" '
	inject() {
		sed -i "s|^\tmkdir -p \"\\\$dir\"\$|&\n\tcp /nonexistent/harness-h5 \"\\\$dir\"|" scripts/export-series.sh &&
			grep -q harness-h5 scripts/export-series.sh
	}
	stage() { scripts/export-series.sh; }'

# The helper that counts the VM's KUnit results dies: a failure, not an
# empty count that adds nothing.
case_ "a KUnit counting helper that dies" "counting with .*kunit.sh count .* failed \(exit status 3" "
	inject() { sed -i 's/^count() {\$/count() { exit 3/' scripts/kunit.sh && grep -q 'count() { exit 3' scripts/kunit.sh; }
	stage() { BACKENDS=qemu VM_MODES=check scripts/vm.sh check; }"

# A guest check that reports no result (or two): the plan is computed from
# the checks that run, so the guest says which check broke it.
case_ "a guest check that reports no result" "the guest check waitpkg reported 0 results, not one" "
	inject() { sed -i 's/^check_waitpkg() {\$/check_waitpkg() { return 0/' scripts/guest/init && grep -q 'check_waitpkg() { return 0' scripts/guest/init; }
	stage() { BACKENDS=qemu VM_MODES=check TESTS=waitpkg scripts/vm.sh check; }"

# The host's one KTAP parser dies: a failure, not an empty count.
case_ "a KTAP parser that dies" "counting with .*ktap.sh counts .* failed \(exit status 3" "
	inject() { sed -i 's/^case \$1 in\$/exit 3; case \$1 in/' scripts/ktap.sh && grep -q '^exit 3; case' scripts/ktap.sh; }
	stage() { BACKENDS=qemu VM_MODES=check TESTS=waitpkg scripts/vm.sh check; }"

# TESTS= that matches nothing is a mistake, said as such, not a green run.
case_ "TESTS that matches nothing" "TESTS='no-such-test' matches no selftest or check" "
	stage() { BACKENDS=qemu VM_MODES=check TESTS=no-such-test scripts/vm.sh check; }"

# Bad values of make variables are refused before any build (vars.sh).
case_ "a make variable with a bad value" "DRY_RUN='0': 1 for a dry run, or unset" "
	stage() { make -s DRY_RUN=0 vm; }"
case_ "a TESTS that is not a regular expression" "TESTS='a\(' is not a valid extended regular expression" "
	stage() { make -s TESTS='a(' vm; }"

# The demo's facts are what demo-check asserts on: a demo that reports the
# cpuidle knob taken where the guest has no WAITPKG fails it, by name.
case_ "a demo fact that is wrong" "not shown on qemu: umwait.poll_wait_ns given at boot ignored \\(fact cpuidle_knob is '20000'" "
	inject() { sed -i 's/^fact cpuidle_knob .*/fact cpuidle_knob 20000/' scripts/guest/demo && grep -q '^fact cpuidle_knob 20000' scripts/guest/demo; }
	stage() { BACKENDS=qemu scripts/demo-check.sh; }"

[ "$(patches_sum)" = "$before" ] || { fail=$((fail + 1)); echo "not ok - patches/ changed during the harness tests"; }
record harness "$pass" "$fail" 0
[ "$fail" = 0 ] || die "$fail harness test(s) did not turn red as they should"
say "harness: $pass injected faults, each caught"
