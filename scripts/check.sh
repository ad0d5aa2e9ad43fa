#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The composite targets: each runs its stages in order and ends with the
# summary of the suites it ran.  The Makefile calls this, one line a
# target; each stage is its own script, which this only sequences.
#   check.sh check    all tests: tree and hygiene (Bochs built alongside),
#                     build, the bench's self-test, the VM stage with the
#                     demo alongside, the summary
#   check.sh run      the demo: what it needs built (no W=1 builds), then
#                     the demo on BACKENDS
#   check.sh quick    the tree as it is (no re-apply): build, VM stage,
#                     summary
#   check.sh 6.12     the 6.12 backport: hygiene, its VM kernel and
#                     selftests, its boots on CHECK612_BACKENDS (default
#                     bochs), its counts copied in as 6.12-*
#   check.sh debug    the debug kernel's checks and knob writes under load
#                     on each of DEBUG_BACKENDS
#   check.sh fresh    make run and make check in a fresh Debian 12 root:
#                     the packages that needs (config/fresh.list), then
#                     fresh.sh, whose counts are this run's
# Test stages run even after one failed; the exit status is 1 if any did,
# or if the summary finds a suite missing (SUMMARY_REQUIRE).
SUITE=
. "$(dirname "$0")/lib.sh"
stop_all_on_signal
S=$HARNESS/scripts

# stage SCRIPT ARGS...: run one stage, showing it first with V=1.
stage() {
	[ "${V:-0}" = 0 ] || say "+ ${*#"$S/"}"
	"$@"
}

# The stages up to a built tree: deps, then tree and hygiene (or tree
# alone, WHAT=tree) with the backends built alongside: those use one core,
# a cold Bochs build the other.  Bochs' own make runs -j$JOBS, outside any
# jobserver.  Returns 2 if there is no tree to build (deps or tree failed),
# 1 if only hygiene or a backend's build did: the build and the tests can
# still run.
prepare() {
	local what=${1:-hygiene} st=0 pid='' b
	stage "$S/deps.sh" || return 2
	(
		export MAKEFLAGS=
		for b in $BACKENDS; do
			load_backend "$b"
			be_build
		done
	) &
	pid=$!
	stage "$S/tree.sh" || st=2
	[ "$st" = 2 ] || [ "$what" != hygiene ] || stage "$S/hygiene.sh" || st=1
	if [ -n "$pid" ] && ! wait "$pid" && [ "$st" = 0 ]; then
		st=1
	fi
	return "$st"
}

# not_run WHY STAGES...: say which stages cannot run, and why; the summary
# then reports their suites as not run, and fails.
not_run() {
	local why=$1
	shift
	say "not run: $* ($why)"
}

# summary SUITES...: the summary, which fails if one of SUITES is missing.
summary() {
	SUMMARY_REQUIRE="$*" stage "$S/summary.sh"
}

mode=${1:-}
case $mode in
check)
	# Every stage that can still run runs after a red one; one whose
	# inputs are missing is reported as not run, and the summary lists it
	# and every red suite and test.
	rm -f "$RESULTS"/*.count
	st=0
	prepare || st=$?
	req="hygiene bench-test"
	for b in $BACKENDS; do req+=" vm-$b vm-$b-kunit demo-$b"; done
	if [ "$st" = 2 ]; then
		not_run "no tree" hygiene build bench vm demo
	elif ! stage "$S/build.sh"; then
		st=1
		not_run "the build failed" bench vm demo
	else
		stage "$S/bench.sh" test || st=1
		# The demo runs alongside the VM stage: a Bochs boot is one host
		# thread, and its time is emulated, so the demo's boot and the
		# check's share the host's cores without changing what any of
		# them measures.
		stage "$S/vm.sh" check &
		vm=$!
		stage "$S/demo-check.sh" || st=1
		wait "$vm" || st=1
	fi
	summary "$req" || st=1
	[ "$st" = 0 ] || exit 1
	;;
run)
	prepare tree || [ $? = 1 ] || exit 1
	stage "$S/build.sh" kernel || exit 1
	stage "$S/build.sh" selftests || exit 1
	stage "$S/vm.sh" run
	# The bench subset that a demo ran (a backend whose demo is the timer
	# guest's: Bochs): its table and plots.
	for b in $BACKENDS; do
		load_backend "$b"
		[ "$(be_demo)" != timer ] || stage "$S/bench.sh" demo "$RESULTS/demo-$b.out" "$b" || exit 1
	done
	;;
quick)
	rm -f "$RESULTS"/*.count
	st=0
	req=
	for b in $BACKENDS; do req+=" vm-$b vm-$b-kunit"; done
	if stage "$S/build.sh"; then
		stage "$S/vm.sh" check || st=1
	else
		st=1
		not_run "the build failed" vm
	fi
	summary "$req" || st=1
	exit "$st"
	;;
6.12)
	[ "$KBASE" != 6.12 ] || die "check-6.12 tests the 6.12 backport itself: run it without KBASE (KBASE=6.12 make check runs make check on 6.12)"
	top=$RESULTS
	b612=${CHECK612_BACKENDS:-bochs}
	export KBASE=6.12 WORK=$WORK/6.12
	RESULTS=$WORK/results
	rm -f "$RESULTS"/*.count "$top"/6.12-*.count
	mkdir -p "$RESULTS"
	st=0
	if ! stage "$S/deps.sh" || ! stage "$S/tree.sh"; then
		st=1
		record tree 0 1 0
		not_run "no 6.12 tree" hygiene build vm
	else
		stage "$S/hygiene.sh" || st=1
		if BACKENDS=$b612 stage "$S/build.sh" kernel &&
			BACKENDS=$b612 stage "$S/build.sh" selftests; then
			BACKENDS=$b612 stage "$S/vm.sh" check || st=1
		else
			st=1
			not_run "the build failed" vm
		fi
	fi
	for f in "$RESULTS"/*.count; do
		[ ! -e "$f" ] || cp "$f" "$top/6.12-$(basename "$f")"
	done
	req=hygiene
	for b in $b612; do req+=" vm-$b vm-$b-kunit"; done
	summary "$req" || st=1
	exit "$st"
	;;
fresh)
	stage "$S/deps.sh" "$HARNESS/config/fresh.list" || exit 1
	rm -f "$RESULTS"/*.count
	stage "$S/fresh.sh"
	;;
debug)
	# no5lvl: with QEMU's -cpu max (LA57), KASAN reports a
	# wild-memory-access in rcu_is_watching() from an interrupt during
	# cpu_detect(), at boot, before any code of the series runs
	# (docs/history.md, "Reliability"); 4-level paging avoids it.
	# LOAD_S_*: the seconds of knob writes under load, by the guest's
	# clock.  Bochs' guest clock runs about 11 times slower than its
	# emulated time (docs/backends.md), and the debug kernel emulates at
	# about 24M instructions a second there: 30 guest seconds would take
	# about 45 minutes.
	rm -f "$RESULTS"/debug*.count
	st=0
	for b in ${DEBUG_BACKENDS:-qemu bochs}; do
		load_backend "$b"
		load_s=$(be_load_s)
		export VM_SUITE=debug VM_APPEND=${DEBUG_APPEND-no5lvl} BUILD=$WORK/build-debug
		BACKENDS=$b SELFTESTS_LIST=$HARNESS/config/selftests-debug.list \
			SELFTESTS_LIST_BOCHS=$HARNESS/config/selftests-debug-bochs.list \
			stage "$S/vm.sh" check || st=1
		BACKENDS=$b LOAD_S=$load_s stage "$S/vm.sh" load || st=1
	done
	req=
	for b in ${DEBUG_BACKENDS:-qemu bochs}; do req+=" debug-$b debug-load-$b"; done
	SUMMARY_GLOB='debug*' summary "$req" || st=1
	exit "$st"
	;;
*)
	die "usage: check.sh check|run|quick|6.12|debug|fresh (the Makefile's check, run, quick, check-6.12, check-debug, check-fresh)"
	;;
esac
