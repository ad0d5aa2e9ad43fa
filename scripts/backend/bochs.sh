# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The Bochs backend (scripts/backend/README.md has the interface).  Sourced
# by lib.sh's load_backend, never executed.
#
# Bochs 3.0, Sapphire Rapids model (WAITPKG, VMX, APICv), built from
# Debian's source with the fixes in bochs/ (scripts/bochs.sh), in emulated
# time: every WAITPKG path runs, a skipped check is a failure, and a boot
# is one host thread whose numbers do not depend on what else runs.

be_describe() { echo "Bochs (sapphire_rapids, emulated time)"; }

be_deps() {
	[ -x "$BOCHS" ] || die "Bochs not found at $BOCHS (run 'make build', which builds it)"
}

be_build() {
	"$HARNESS/scripts/bochs.sh" build
}

be_waitpkg() { echo yes; }
# Its guest can wait: WAITPKG, no "hypervisor" flag (it is L1 on emulated
# hardware), no X86_BUG_MONITOR (bochs/0001).
be_can_wait() { echo yes; }

# The boots of "vm.sh check": the selftests with APICv (as production
# hosts run KVM), the APICv-off list again without it, and the cpuidle
# checks; all at once.  A skip is a failure: Bochs exists to run the
# WAITPKG paths.  Its clock is emulated, and checked (bochs/0005).  The
# demo's halting guest: the series' timer-woken halt_poll_tpause_test, as
# a second of xapic_ipi_test takes long here.
be_modes() { echo "check apicv-off cpuidle"; }
# The selftests of a boot (be_selftests MODE): the WAITPKG paths, and the
# APICv-off boot's own list.
be_selftests() {
	case ${1:-check} in
	apicv-off) echo "$HARNESS/config/selftests-bochs-apicv-off.list" ;;
	*) echo "${SELFTESTS_LIST_BOCHS:-$HARNESS/config/selftests-bochs.list}" ;;
	esac
}
# The guest seconds of knob writes under load (check-debug): Bochs' guest
# clock runs about 11 times slower than its emulated time, and the debug
# kernel emulates at about 24M instructions a second there.
be_load_s() { echo "${LOAD_S_BOCHS:-3}"; }
be_parallel() { echo yes; }
be_strict() { echo yes; }
be_clock() { echo emulated; }
be_demo() { echo timer; }

# be_append MODE: KVM's APICv as the boot wants it, and what the guest
# checks it reads (harness.apicv).
be_append() {
	case $1 in
	apicv-off) echo "kvm_intel.enable_apicv=0 harness.apicv=N" ;;
	check) echo "harness.apicv=Y" ;;
	esac
}

# be_boot MODE CONSOLE OUT APPEND TIMEOUT: as in qemu.sh, through
# scripts/bochs.sh boot (a disk image, a bochsrc and the emulator);
# BOCHS_TTY puts the console on a terminal ("make shell").
be_boot() {
	local mode=$1 console=$2 out=$3 append=$4 tmo=$5 log=$LOGS/$VM_SUITE-bochs-$1.log tty='' pid
	local cmd=("$HARNESS/scripts/bochs.sh" boot "$kernel" "$initrd" "$append" "$console" "$out" "$tmo")
	if [ "$mode" = shell ]; then
		tty=$(tty) || [ -n "${DRY_RUN:-}" ] || die "make shell needs a terminal on its standard input"
	fi
	if [ -n "${DRY_RUN:-}" ]; then
		BOCHS_TTY=$tty "${cmd[@]}"
		return 0
	fi
	case $mode in
	shell) BOCHS_TTY=$tty "${cmd[@]}" ;;
	run)
		: >"$out"
		"${cmd[@]}" </dev/null >"$log" 2>&1 &
		pid=$!
		tail -n +1 -f --pid=$pid "$out" | guest_display
		wait $pid
		;;
	*) "${cmd[@]}" </dev/null >"$log" 2>&1 ;;
	esac
}

# be_failure MODE: the cause of a failed boot, if bochs.sh named one.
be_failure() {
	sed -n 's/^\[.*\] FAILED: //p' "$LOGS/$VM_SUITE-bochs-$1.log" 2>/dev/null | head -n 1
}
