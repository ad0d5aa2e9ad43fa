#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "build": configure the VM kernel from config/vm.config, build it,
# build what the series touches with KVM_WERROR=y W=1, and build the KVM
# selftests statically.  "build.sh config" stops after the config check,
# "build.sh kernel" after the kernel and its modules; "build.sh selftests"
# builds only the selftests, against the headers of the configured BUILD.  FRAGMENT may name
# several fragments, merged in order (the debug kernel: vm.config, then
# debug.config, in work/build-debug).
. "$(dirname "$0")/lib.sh"

BUILD=${BUILD:-$WORK/build-vm}
# The VM kernel: vm.config, and the series' KUnit suites with objtool's
# noinstr validation (kunit.config), where the tree has the series' symbols
# (a base tree without the series, as "make check-wide" builds, has not).
if [ -z "${FRAGMENT:-}" ]; then
	FRAGMENT=$HARNESS/config/vm.config
	! grep -rqs '^config KVM_HALT_POLL_KUNIT_TEST' "$TREE/arch/x86/kvm/Kconfig" ||
		FRAGMENT+=" $HARNESS/config/kunit.config"
fi
SELFTESTS_OUT=${SELFTESTS_OUT:-$WORK/build-selftests}
GUEST_OUT=${GUEST_OUT:-$WORK/build-guest}
mk() { make -C "$TREE" O="$BUILD" -j"$JOBS" "${KMAKE_ARGS[@]}" "$@"; }
mode=${1:-all}

# "build.sh bench-tools" (make bench-host KTREE=DIR): only what the bench
# needs, against the patched tree at KTREE, in work/bench-tools: the tree's
# exported headers, the KVM selftests' library with halt_poll_bench, and
# pingpong.  No Debian package, no kernel build; KTREE is only read, but
# for the headers of a tree configured in place (its own "make headers").
if [ "$mode" = bench-tools ]; then
	[ -n "${KTREE:-}" ] && [ -d "$KTREE/tools/testing/selftests/kvm/x86" ] ||
		die "KTREE='${KTREE:-}' has no tools/testing/selftests/kvm/x86: a Linux tree (6.14 or later) with the series"
	grep -rqs halt_poll_tpause_ns "$KTREE/arch/x86/kvm" ||
		die "KTREE=$KTREE has no halt_poll_tpause_ns: apply patches/upstream/kvm to it first"
	out=$WORK/bench-tools
	rm -rf "${out:?}/usr"
	mkdir -p "$out/selftests" "$out/guest" "$out/kbuild"
	# A source tree built in place cannot take O=.
	if [ -f "$KTREE/.config" ]; then
		run "$LOGS/bench-tools-headers.log" make -C "$KTREE" headers_install INSTALL_HDR_PATH="$out/usr"
	else
		run "$LOGS/bench-tools-headers.log" make -C "$KTREE" O="$out/kbuild" headers_install \
			INSTALL_HDR_PATH="$out/usr"
	fi
	run "$LOGS/bench-tools-selftests.log" make -C "$KTREE/tools/testing/selftests/kvm" -j"$JOBS" \
		OUTPUT="$out/selftests" KHDR_INCLUDES="-isystem $out/usr/include" \
		VPATH="$HARNESS/scripts/guest/kvm" TEST_GEN_PROGS_EXTENDED_x86=x86/halt_poll_bench \
		"$out/selftests/x86/halt_poll_bench"
	run "$LOGS/bench-tools-pingpong.log" gcc -O2 -Wall -Wextra -Werror \
		-o "$out/guest/pingpong" "$HARNESS/scripts/guest/pingpong.c"
	say "built halt_poll_bench and pingpong against $KTREE in $out"
	exit 0
fi

[ -f "$TREE/Makefile" ] || die "no kernel tree at $TREE (run 'make tree')"
mkdir -p "$BUILD"
if [ "$mode" != selftests ]; then

# Configure: tinyconfig plus the fragment, then check every option survived.
say "configuring $(basename "$BUILD") from $(for f in $FRAGMENT; do basename "$f"; done | tr '\n' ' ')"
# The logs of the build directory: build-vm-config.log, build-vm-kernel.log...
blog=$LOGS/$(basename "$BUILD")
cfg_log=$blog-config.log
# shellcheck disable=SC2086 # FRAGMENT is a list
(
	cd "$TREE"
	KCONFIG_CONFIG=$BUILD/.config.new make O="$BUILD" "${KMAKE_ARGS[@]}" tinyconfig &&
		KCONFIG_CONFIG=$BUILD/.config.new scripts/kconfig/merge_config.sh \
			-m -O "$BUILD" "$BUILD/.config.new" $FRAGMENT &&
		make O="$BUILD" "${KMAKE_ARGS[@]}" KCONFIG_CONFIG=$BUILD/.config.new olddefconfig
) >"$cfg_log" 2>&1 || die "configuring the kernel failed" "$cfg_log"
# shellcheck disable=SC2086 # FRAGMENT is a list
missing=$(config_missing "$BUILD/.config.new" $FRAGMENT) || true
[ -z "$missing" ] || { echo "$missing" >&2; die "$(wc -l <<<"$missing") option(s) of $FRAGMENT did not survive olddefconfig"; }
# Only replace .config when it changed, so that an unchanged rerun is a no-op.
if ! cmp -s "$BUILD/.config.new" "$BUILD/.config"; then
	mv "$BUILD/.config.new" "$BUILD/.config"
else
	rm -f "$BUILD/.config.new"
fi
[ "$mode" = config ] && exit 0

say "building bzImage and modules (-j$JOBS)"
run_progress "$blog-kernel.log" "$BUILD/.harness-objects" mk bzImage modules
rm -rf "$BUILD/modroot"
run "$blog-modules-install.log" mk INSTALL_MOD_PATH="$BUILD/modroot" INSTALL_MOD_STRIP=1 modules_install

# The VM kernel runs the series' KUnit suites (scripts/vm.sh): every option
# of the .kunitconfig files the series adds must be in it, but for KVM=y,
# which the KVM suite's own file asks for and the VM kernel has as a module
# (the suite is linked into kvm.ko either way).
if [[ " $FRAGMENT " == *" $HARNESS/config/kunit.config"* ]]; then
	for c in $(git -C "$TREE" diff --name-only base HEAD -- '*.kunitconfig'); do
		while IFS= read -r opt; do
			case $opt in CONFIG_KVM=y | CONFIG_KVM_INTEL=y | CONFIG_KVM_AMD=y)
				grep -qx "${opt%=y}=[ym]" "$BUILD/.config" && continue ;;
			esac
			grep -qxF -- "$opt" "$BUILD/.config" || die "$opt of $c is not in the VM kernel ($BUILD/.config)"
		done < <(grep -E '^CONFIG_' "$TREE/$c")
	done
	# objtool's noinstr validation of vmlinux.o (lib.sh).
	why=$(objtool_noinstr "$BUILD" "$blog-objtool.log") || die "$why" "$blog-objtool.log"
	say "objtool: noinstr code of the VM kernel validated"
fi
[ "$mode" = kernel ] && exit 0

# Everything the series touches, built with W=1 and CONFIG_KVM_WERROR=y (and
# the KUnit tests), in build directories of their own so that the extra
# flags do not churn the VM kernel's objects (check-each reuses it).  The
# same config is also built for i386, where 64-bit arithmetic on unsigned
# long or a u64 division shows (the build matrix links and boots i386).
# w1 DIR ARCH: that build in DIR for ARCH, of $dirs with $tests enabled;
# any warning fails the stage.
w1() {
	local dir=$1 arch=$2 log
	log=$LOGS/$(basename "$1")
	local mkw=(make -C "$TREE" O="$dir" ARCH="$arch" "${KMAKE_ARGS[@]}")
	mkdir -p "$dir"
	cp "$BUILD/.config" "$dir/.config.new"
	"$TREE/scripts/config" --file "$dir/.config.new" -e EXPERT -e KVM_WERROR -e KUNIT $tests
	# Always from the source config: check-each runs olddefconfig in the
	# same directory on earlier commits, which drops the symbols those lack
	# (the KUnit tests) from .config.  An unchanged config rebuilds nothing.
	cp "$dir/.config.new" "$dir/.config.src"
	cp "$dir/.config.new" "$dir/.config"
	run "$log-config.log" "${mkw[@]}" olddefconfig
	grep -q '^CONFIG_KVM_WERROR=y' "$dir/.config" ||
		die "CONFIG_KVM_WERROR=y did not survive olddefconfig for $arch"
	local t
	for t in $tests; do
		[ "$t" = -e ] || grep -q "^CONFIG_$t=y" "$dir/.config" || {
			# The UMWAIT cpu_poll_relax(), and so its test, is 64-bit only.
			if [ "$arch" = i386 ] && [ "$t" = X86_UMWAIT_KUNIT_TEST ] &&
				! grep -q '^CONFIG_X86_64=y' "$dir/.config"; then
				say "  $t: no UMWAIT cpu_poll_relax() on i386"
				continue
			fi
			die "CONFIG_$t=y did not survive olddefconfig for $arch: the W=1 build would skip the test"
		}
	done
	run "$log.log" "${mkw[@]}" -j"$JOBS" W=1 $dirs
	if grep -E 'warning:' "$log.log" >&2; then
		die "W=1 warnings ($arch) in code the series touches" "$log.log"
	fi
}
dirs=$(touched_dirs HEAD)
if [ -n "$dirs" ]; then
	# and the KUnit tests the series adds, built in (the KVM one is a bool,
	# linked into kvm.ko)
	tests=$(git -C "$TREE" diff base HEAD -- '*Kconfig*' |
		sed -n 's/^+config \(.*_KUNIT_TEST\)$/-e \1/p')
	say "W=1 CONFIG_KVM_WERROR=y build of $dirs"
	w1 "${W1:-$WORK/build-w1}" x86
	say "the same for i386"
	w1 "$WORK/build-w1-i386" i386
else
	say "the series touches no kernel C code yet: no W=1 build"
fi
fi # mode != selftests

say "building KVM selftests (static)"
run "$LOGS/build-headers.log" mk headers_install INSTALL_HDR_PATH="$BUILD/usr"
mkdir -p "$SELFTESTS_OUT"
# The selftests of every boot of every backend, and the demo's.
lists=$(for f in "$HARNESS"/scripts/backend/*.sh; do
	load_backend "$(basename "$f" .sh)"
	for m in $(be_modes); do be_selftests "$m"; done
done | sort -u)
# shellcheck disable=SC2086 # one list file a word
tests=$(kvm_selftests $lists "$HARNESS/config/demo.list" | awk '{print $1}' | sort -u)
# A wrapper script (NAME.sh, a TEST_PROGS entry, as nx_huge_pages_test.sh)
# is copied next to the binary NAME that it runs.
targets=$(for t in $tests; do echo "$SELFTESTS_OUT/${t%.sh}"; done)
run "$LOGS/build-selftests.log" make -C "$TREE/tools/testing/selftests/kvm" \
	-j"$JOBS" OUTPUT="$SELFTESTS_OUT" KHDR_INCLUDES="-isystem $BUILD/usr/include" \
	EXTRA_CFLAGS=-static $targets
for t in $tests; do
	[ "$t" = "${t%.sh}" ] || install -m 755 "$TREE/tools/testing/selftests/kvm/$t" "$SELFTESTS_OUT/$t"
done
say "built $(echo "$tests" | wc -w) selftest(s)"
# The bench's wake-latency tool (scripts/guest/kvm/x86/halt_poll_bench.c),
# built by the selftests' own rules: make finds the source through VPATH.
# Its source follows the upstream library (x86/, since 6.14).
if [ -d "$TREE/tools/testing/selftests/kvm/x86" ]; then
	run "$LOGS/build-bench-tool.log" make -C "$TREE/tools/testing/selftests/kvm" \
		OUTPUT="$SELFTESTS_OUT" KHDR_INCLUDES="-isystem $BUILD/usr/include" \
		EXTRA_CFLAGS=-static VPATH="$HARNESS/scripts/guest/kvm" \
		TEST_GEN_PROGS_EXTENDED_x86=x86/halt_poll_bench "$SELFTESTS_OUT/x86/halt_poll_bench"
	say "built the bench's halt_poll_bench"
fi

# The guest's own tools (the cross-CPU wakeup latency probe, the emulated
# clock's and monitor's checks), static.
mkdir -p "$GUEST_OUT"
for t in pingpong clock monitor; do
	run "$LOGS/build-guest-$t.log" gcc -O2 -Wall -Wextra -Werror -static \
		-o "$GUEST_OUT/$t" "$HARNESS/scripts/guest/$t.c"
done

# What each backend needs besides the kernel (Bochs itself, cached under
# work/bochs; QEMU's SSDT).
for b in $BACKENDS; do
	load_backend "$b"
	be_build
done
