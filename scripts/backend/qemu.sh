# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The QEMU backend (scripts/backend/README.md has the interface).  Sourced
# by lib.sh's load_backend, never executed.
#
# QEMU TCG -cpu max (nested SVM), or KVM -cpu host where the host really
# has VMX or SVM: its guest has WAITPKG only with KVM on a WAITPKG host.
# TCG runs a thread per vCPU on the host's clock, so its boots run one
# after the other; no check on QEMU is a measurement.

QEMU=${QEMU:-qemu-system-x86_64}

# qemu_uses_kvm: whether QEMU runs with KVM (-accel kvm -cpu host): only
# where the host really has VMX or SVM, as a /dev/kvm without them (e.g. a
# PVM-style host) hangs the guest.
qemu_uses_kvm() {
	[ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo
}

be_describe() {
	if qemu_uses_kvm; then echo "QEMU, KVM, -cpu host"; else echo "QEMU, TCG, -cpu max (nested SVM)"; fi
}

be_deps() {
	command -v "$QEMU" >/dev/null || die "$QEMU not found (install qemu-system-x86, or run 'make deps')"
	command -v iasl >/dev/null || die "iasl not found (install acpica-tools, or run 'make deps')"
}

# The SSDT with a _CST per CPU (config/cst.asl), so that acpi_idle gives
# the guest a cpuidle driver whose state 0 is POLL.
be_build() {
	local cst=$WORK/cst.aml
	[ "$HARNESS/config/cst.asl" -ot "$cst" ] ||
		run "$LOGS/iasl.log" iasl -p "${cst%.aml}" "$HARNESS/config/cst.asl"
}

be_waitpkg() {
	if qemu_uses_kvm && grep -qw waitpkg /proc/cpuinfo; then echo yes; else echo no; fi
}

# Whether its guest can wait (scripts/guest/can_wait): never.  Under TCG it
# has no WAITPKG; with KVM it has the "hypervisor" flag, under which both
# postings refuse to wait, WAITPKG or not.
be_can_wait() { echo no; }

# The boots of "vm.sh check"; whether they may run at once; whether a
# skipped check fails (no: without WAITPKG the WAITPKG checks skip); the
# guest's TSC is the host's (no emulated clock to check); the demo's
# halting guest: xapic_ipi_test, fast enough here.
be_modes() { echo "check cpuidle"; }
# The selftests of its "check" boot: those that pass without WAITPKG under
# nested TCG in seconds.
be_selftests() { echo "${SELFTESTS_LIST:-$HARNESS/config/selftests.list}"; }
# The guest seconds of knob writes under load (check-debug).
be_load_s() { echo "${LOAD_S_QEMU:-30}"; }
be_parallel() { echo no; }
be_strict() { echo no; }
be_clock() { echo host; }
be_demo() { echo ipi; }

# be_append MODE: the backend's own kernel command line for a boot.
be_append() { :; }

# be_boot MODE CONSOLE OUT APPEND TIMEOUT: boot the VM kernel with $initrd,
# the console in CONSOLE and the results (the second serial port) in OUT;
# in "run" mode the results also go to this terminal, in "shell" mode the
# console is this terminal.  DRY_RUN: print the command line instead.
be_boot() {
	local mode=$1 console=$2 out=$3 append=$4 tmo=$5 accel cmd
	if qemu_uses_kvm; then accel=(-accel kvm -cpu host); else accel=(-accel tcg -cpu max); fi
	cmd=(timeout --foreground -k 10 "$tmo" "$QEMU" "${accel[@]}" -M pc -smp 2 -m 2G
		-kernel "$kernel" -initrd "$initrd" -append "$append" -display none -vga none
		-monitor none -no-reboot)
	# acpi_idle's POLL for the boots that use cpuidle; the selftests run on
	# the default idle loop (polling on every idle CPU slows nested guests
	# under TCG for seconds after it ends).
	[ "$mode" = check ] || [ "$mode" = apicv-off ] || cmd+=(-acpitable "file=$WORK/cst.aml")
	case $mode in
	shell) cmd+=(-serial mon:stdio) ;;
	run) cmd+=(-serial "file:$console" -serial stdio) ;;
	*) cmd+=(-serial "file:$console" -serial "file:$out") ;;
	esac
	if [ -n "${DRY_RUN:-}" ]; then
		printf '%q ' "${cmd[@]}"
		echo
		return 0
	fi
	case $mode in
	shell) "${cmd[@]}" ;;
	run) "${cmd[@]}" </dev/null | tee "$out" | guest_display ;;
	*) "${cmd[@]}" </dev/null ;;
	esac
}

# be_failure MODE: the cause of a failed boot, where the backend names one.
be_failure() { :; }
