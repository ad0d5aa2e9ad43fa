#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "build": configure the VM kernel from config/vm.config, build it,
# build what the series touches with KVM_WERROR=y W=1, and build the KVM
# selftests statically.  "build.sh config" stops after the config check.
. "$(dirname "$0")/lib.sh"

BUILD=${BUILD:-$WORK/build-vm}
FRAGMENT=${FRAGMENT:-$HARNESS/config/vm.config}
SELFTESTS_OUT=${SELFTESTS_OUT:-$WORK/build-selftests}
mk() { make -C "$TREE" O="$BUILD" -j"$JOBS" "${KMAKE_ARGS[@]}" "$@"; }

[ -f "$TREE/Makefile" ] || die "no kernel tree at $TREE (run 'make tree')"
mkdir -p "$BUILD"

# Configure: tinyconfig plus the fragment, then check every option survived.
say "configuring from $(basename "$FRAGMENT")"
cfg_log=$LOGS/build-config.log
(
	cd "$TREE"
	KCONFIG_CONFIG=$BUILD/.config.new make O="$BUILD" "${KMAKE_ARGS[@]}" tinyconfig &&
		KCONFIG_CONFIG=$BUILD/.config.new scripts/kconfig/merge_config.sh \
			-m -O "$BUILD" "$BUILD/.config.new" "$FRAGMENT" &&
		make O="$BUILD" "${KMAKE_ARGS[@]}" KCONFIG_CONFIG=$BUILD/.config.new olddefconfig
) >"$cfg_log" 2>&1 || die "configuring the kernel failed" "$cfg_log"
missing=0
while IFS= read -r opt; do
	if ! grep -qxF -- "$opt" "$BUILD/.config.new"; then
		name=${opt%%=*}
		echo "  $opt requested, got: $(grep -E "^$name=|^# $name is not set" "$BUILD/.config.new" || echo "absent")" >&2
		missing=$((missing + 1))
	fi
done < <(grep -E '^CONFIG_[A-Za-z0-9_]+=' "$FRAGMENT")
[ "$missing" = 0 ] || die "$missing option(s) of $(basename "$FRAGMENT") did not survive olddefconfig"
# Only replace .config when it changed, so that an unchanged rerun is a no-op.
if ! cmp -s "$BUILD/.config.new" "$BUILD/.config"; then
	mv "$BUILD/.config.new" "$BUILD/.config"
else
	rm -f "$BUILD/.config.new"
fi
[ "${1:-}" = config ] && exit 0

say "building bzImage and modules (-j$JOBS)"
run "$LOGS/build-kernel.log" mk bzImage modules
rm -rf "$BUILD/modroot"
run "$LOGS/build-modules-install.log" mk INSTALL_MOD_PATH="$BUILD/modroot" INSTALL_MOD_STRIP=1 modules_install

# Everything the series touches, built with W=1 and CONFIG_KVM_WERROR=y (and
# the KUnit tests), in a build directory of its own so that the extra flags
# do not churn the VM kernel's objects.
W1=${W1:-$WORK/build-w1}
dirs=$(touched_dirs HEAD)
if [ -n "$dirs" ]; then
	say "W=1 CONFIG_KVM_WERROR=y build of $dirs"
	mkdir -p "$W1"
	cp "$BUILD/.config" "$W1/.config.new"
	# and, as modules, the KUnit tests the series adds
	tests=$(git -C "$TREE" diff base HEAD -- '*Kconfig*' |
		sed -n 's/^+config \(.*_KUNIT_TEST\)$/-m \1/p')
	"$TREE/scripts/config" --file "$W1/.config.new" -e EXPERT -e KVM_WERROR -e KUNIT $tests
	cmp -s "$W1/.config.new" "$W1/.config.src" || {
		cp "$W1/.config.new" "$W1/.config.src"
		cp "$W1/.config.new" "$W1/.config"
	}
	run "$LOGS/build-w1-config.log" make -C "$TREE" O="$W1" "${KMAKE_ARGS[@]}" olddefconfig
	grep -q '^CONFIG_KVM_WERROR=y' "$W1/.config" || die "CONFIG_KVM_WERROR=y did not survive olddefconfig"
	run "$LOGS/build-w1.log" make -C "$TREE" O="$W1" -j"$JOBS" "${KMAKE_ARGS[@]}" W=1 $dirs
	if grep -E 'warning:' "$LOGS/build-w1.log" >&2; then
		die "W=1 warnings in code the series touches" "$LOGS/build-w1.log"
	fi
else
	say "the series touches no kernel C code yet: no W=1 build"
fi

say "building KVM selftests (static)"
run "$LOGS/build-headers.log" mk headers_install INSTALL_HDR_PATH="$BUILD/usr"
mkdir -p "$SELFTESTS_OUT"
tests=$(list_file "${SELFTESTS_LIST:-$HARNESS/config/selftests.list}" "$HARNESS/config/demo.list" | awk '{print $1}' | sort -u)
targets=$(for t in $tests; do echo "$SELFTESTS_OUT/$t"; done)
run "$LOGS/build-selftests.log" make -C "$TREE/tools/testing/selftests/kvm" \
	-j"$JOBS" OUTPUT="$SELFTESTS_OUT" KHDR_INCLUDES="-isystem $BUILD/usr/include" \
	EXTRA_CFLAGS=-static $targets
say "built $(echo "$tests" | wc -w) selftest(s)"
