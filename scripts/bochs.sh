#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "bochs": the Bochs emulator, for a guest CPU with WAITPKG and VMX
# on hosts that have neither.  Bochs 3.0 from Debian's source (trixie), with
# the fixes in bochs/ (see bochs/README.md), built into work/bochs.
#   bochs.sh build   fetch (pinned sha256), patch, configure, build; an
#                    unchanged recipe reuses work/bochs/bin/bochs
#   bochs.sh boot KERNEL INITRD APPEND CONSOLE_LOG TAP_LOG TIMEOUT_S
#                    boot KERNEL with INITRD and the command line APPEND
#                    (plus what Bochs needs, below) from a syslinux disk;
#                    ttyS0 goes to CONSOLE_LOG, ttyS1 to TAP_LOG.  Exits 0
#                    when the guest powers off (or resets: Bochs is stopped
#                    then, as QEMU does with -no-reboot), 124 on a timeout,
#                    else Bochs' exit status.  BOCHS_CPU_OPTS: more options
#                    of the cpu line, "name=N, ..." (make model sets
#                    bochs/0009's pause_ticks and umwait_exit_ticks).
STAGE=bochs
. "$(dirname "$0")/lib.sh"

BOCHS_SRC_PKG=bochs
BOCHS_VER=3.0+dfsg-1
BOCHS_SUITE=trixie
BOCHS_ORIG=bochs_3.0+dfsg.orig.tar.xz
BOCHS_ORIG_SHA256=78f6c73d4a6472d5130a87ab9dc306d02c7c71ed8e25b3a8ef642e2a7acd282b
BOCHS_DEBIAN=bochs_3.0+dfsg-1.debian.tar.xz
BOCHS_DEBIAN_SHA256=c68fe1162aa485249467ec93707ccbf5d039b00d12815899fc2c819ec16d00df
# Headless, x86-64 SMP with VMX (and EPT), WAITPKG and the rest of a
# Sapphire Rapids model.  No plugins: one self-contained binary.
# --disable-show-ips: the "ips = ..." line comes from a SIGALRM handler that
# writes the log with stdio; a signal that lands while the emulator itself
# writes the log (a guest that halts with IF=0 logs a line per HLT) leaves
# Bochs waiting forever on its own FILE lock (a boot hangs in futex_wait,
# single-threaded).
BOCHS_CONFIGURE=(--with-nogui --enable-x86-64 --enable-smp --enable-vmx=2 --enable-avx
	--enable-evex --enable-amx --enable-cpu-level=6 --enable-all-optimizations
	--enable-monitor-mwait --enable-pci --enable-cet --enable-protection-keys
	--enable-uintr --enable-repeat-speedups --enable-fpu --enable-a20-pin
	--disable-docbook --disable-show-ips)
BOCHS_CFLAGS="-O2 -pipe"
# Debian's own patches (debian/patches/series in the .debian.tar.xz) change
# the sample bochsrc, the man page, the docbook build and bios/Makefile.in
# (QEMU BIOS, iasl, build date): none touches the emulator, so none is
# applied.  The BIOS comes from Debian's bochsbios package.
BOCHS_BIOS=/usr/share/bochs/BIOS-bochs-latest
BOCHS_VGABIOS=/usr/share/vgabios/vgabios.bin
# The boot disk: a FAT file system on a flat 64 MiB image, this geometry.
DISK_CHS=(130 16 63)
# clearcpuid=amx_tile: XSETBV with the AMX tile state takes a #GP.
# no5lvl: with LA57, Bochs panics "SMM restore: CR4 consistency check failed".
# KVM in the guest runs with APICv (bochs/0006), as on production hosts;
# vm.sh adds kvm_intel.enable_apicv=0 for the boots that test without it.
BOCHS_APPEND=${BOCHS_APPEND:-"clearcpuid=amx_tile no5lvl"}

BX=$BOCHS_DIR
BX_BIN=$BX/bin/bochs
BX_PATCHES=$HARNESS/bochs

# The hash of everything the binary is made from.
recipe_hash() {
	{
		echo "$BOCHS_VER $BOCHS_ORIG_SHA256 $BOCHS_DEBIAN $BOCHS_DEBIAN_SHA256"
		echo "${BOCHS_CONFIGURE[*]} CFLAGS=$BOCHS_CFLAGS"
		list_file "$BX_PATCHES/series"
		for p in $(list_file "$BX_PATCHES/series"); do
			[ -f "$BX_PATCHES/$p" ] || die "bochs/series lists $p, which is not in bochs/"
			sha256sum <"$BX_PATCHES/$p"
		done
	} | sha256sum | cut -d' ' -f1
}

# check_sha FILE SHA256: FILE is there and has that hash.
check_sha() {
	[ -f "$1" ] && [ "$(sha256sum <"$1" | cut -d' ' -f1)" = "$2" ]
}

# Fetch the source tarballs into $BX/dl with apt, from trixie's Sources
# index, through a private apt configuration under $BX/apt: the system's
# apt sources are left alone.  The mirror is the one the system uses for
# Debian (DEBIAN_MIRROR overrides it).
fetch() {
	local dl=$BX/dl apt=$BX/apt
	# Only the upstream tarball is built from (none of Debian's patches is
	# applied), and it is the same for every Debian revision of 3.0.
	if check_sha "$dl/$BOCHS_ORIG" "$BOCHS_ORIG_SHA256"; then
		return 0
	fi
	local mirror
	mirror=$(debian_mirror)
	rm -rf "$dl"
	mkdir -p "$dl"
	say "fetching $BOCHS_SRC_PKG $BOCHS_VER from $BOCHS_SUITE"
	private_apt "$apt" deb-src "$BOCHS_SUITE"
	local aptopts=("${APT_OPTS[@]}")
	# The .dsc may be missing from the mirror (404): apt-get then fails
	# after it has fetched the tarballs, which is all we need.
	# If trixie has moved on to a later revision of 3.0, that revision
	# brings the same upstream tarball, checked by its sha256 below.
	(cd "$dl" && apt-get "${aptopts[@]}" source --download-only "$BOCHS_SRC_PKG=$BOCHS_VER") \
		>"$LOGS/bochs-fetch.log" 2>&1 || true
	[ -f "$dl/$BOCHS_ORIG" ] ||
		(cd "$dl" && apt-get "${aptopts[@]}" source --download-only "$BOCHS_SRC_PKG") \
			>>"$LOGS/bochs-fetch.log" 2>&1 || true
	local f sha
	# shellcheck disable=SC2066 # a list of FILE:SHA256, of one file today
	for f in "$BOCHS_ORIG:$BOCHS_ORIG_SHA256"; do
		sha=${f#*:} f=${f%%:*}
		if [ ! -f "$dl/$f" ] && command -v curl >/dev/null; then
			curl -fsS -o "$dl/$f" "$mirror/pool/main/b/$BOCHS_SRC_PKG/$f" >>"$LOGS/bochs-fetch.log" 2>&1 ||
				rm -f "$dl/$f"
		fi
		[ -f "$dl/$f" ] || die "could not download $f ($BOCHS_SRC_PKG $BOCHS_VER from $BOCHS_SUITE; versions found there: $(apt_versions "$BOCHS_SRC_PKG" src || true))" "$LOGS/bochs-fetch.log"
		check_sha "$dl/$f" "$sha" ||
			die "$f: sha256 $(sha256sum <"$dl/$f" | cut -d' ' -f1), expected $sha"
	done
}

build() {
	local hash
	hash=$(recipe_hash)
	if [ -x "$BX_BIN" ] && [ "$(cat "$BX/stamp" 2>/dev/null)" = "$hash" ]; then
		say "Bochs $BOCHS_VER cached"
		return 0
	fi
	local c
	for c in g++ make patch tar xz; do
		command -v $c >/dev/null || die "$c not found (install g++, make, patch, xz-utils)"
	done
	say "Bochs $BOCHS_VER building"
	rm -f "$BX/stamp"
	fetch
	local src=$BX/src
	rm -rf "$src"
	mkdir -p "$src"
	run "$LOGS/bochs-unpack.log" tar -xf "$BX/dl/$BOCHS_ORIG" -C "$src" --strip-components=1
	local p n=0
	for p in $(list_file "$BX_PATCHES/series"); do
		patch -d "$src" -p1 -F0 --batch --dry-run <"$BX_PATCHES/$p" >"$LOGS/bochs-patch.log" 2>&1 ||
			die "Bochs patch $p does not apply" "$LOGS/bochs-patch.log"
		run "$LOGS/bochs-patch.log" patch -d "$src" -p1 -F0 --batch -i "$BX_PATCHES/$p"
		n=$((n + 1))
	done
	say "applied $n patch(es) from bochs/series; configuring"
	# Through ccache where there is one, as the kernel builds are: a fresh
	# work/ (CI's) then rebuilds Bochs in about a minute.
	local cc=gcc cxx=g++
	if command -v ccache >/dev/null; then
		cc="ccache gcc" cxx="ccache g++"
		export CCACHE_BASEDIR=$src
	fi
	(cd "$src" && CC=$cc CXX=$cxx CFLAGS=$BOCHS_CFLAGS CXXFLAGS=$BOCHS_CFLAGS \
		./configure "${BOCHS_CONFIGURE[@]}") \
		>"$LOGS/bochs-configure.log" 2>&1 || die "Bochs configure failed" "$LOGS/bochs-configure.log"
	say "make -j$JOBS"
	run "$LOGS/bochs-make.log" make -C "$src" -j"$JOBS"
	install -D -m755 "$src/bochs" "$BX_BIN"
	echo "$hash" >"$BX/stamp"
	say "built $BX_BIN"
}

# make_disk KERNEL INITRD APPEND: the syslinux boot disk, $bdir/disk.img,
# made without a loop mount.
make_disk() {
	local img=$bdir/disk.img cfg=$bdir/syslinux.cfg
	local sectors=$((DISK_CHS[0] * DISK_CHS[1] * DISK_CHS[2]))
	# Bochs leaves its lock file behind when it is killed (timeout, reset).
	rm -f "$img" "$img.lock"
	truncate -s $((sectors * 512)) "$img"
	run "$dlog" mkfs.vfat -n HARNESS -i 48415253 -g "${DISK_CHS[1]}/${DISK_CHS[2]}" "$img"
	run "$dlog" syslinux --install "$img"
	cat >"$cfg" <<-EOF
		SERIAL 0 115200
		DEFAULT linux
		PROMPT 0
		TIMEOUT 0
		LABEL linux
		  LINUX vmlinuz
		  INITRD initrd.img
		  APPEND $3 $BOCHS_APPEND
	EOF
	export MTOOLS_SKIP_CHECK=1
	if ! { mcopy -i "$img" "$1" ::vmlinuz && mcopy -i "$img" "$2" ::initrd.img &&
		mcopy -i "$img" "$cfg" ::syslinux.cfg; } >>"$dlog" 2>&1; then
		die "could not copy the kernel and initrd to the boot disk (C/H/S ${DISK_CHS[*]})" "$dlog"
	fi
}

boot() {
	[ $# = 6 ] || die "usage: bochs.sh boot KERNEL INITRD APPEND CONSOLE_LOG TAP_LOG TIMEOUT_S"
	local kernel=$1 initrd=$2 append=$3 console=$4 tap=$5 tmo=$6 dry=${DRY_RUN:-}
	[ -n "$dry" ] || [ -x "$BX_BIN" ] || die "no Bochs at $BX_BIN (run scripts/bochs.sh build)"
	[ -n "$dry" ] || [ -f "$kernel" ] || die "no kernel at $kernel"
	[ -n "$dry" ] || [ -f "$initrd" ] || die "no initrd at $initrd"
	local c
	for c in mkfs.vfat:dosfstools syslinux:syslinux mcopy:mtools; do
		command -v "${c%:*}" >/dev/null || die "${c%:*} not found (install ${c#*:})"
	done
	[ -f "$BOCHS_BIOS" ] || die "no BIOS at $BOCHS_BIOS (install bochsbios)"
	[ -f "$BOCHS_VGABIOS" ] || die "no VGA BIOS at $BOCHS_VGABIOS (install vgabios)"
	# Each boot has a directory of its own (disk image, bochsrc), named by
	# its console log, so that boots of different names can run at once:
	# Bochs emulates every CPU in one host thread, and its time is
	# emulated, so two boots on two host cores measure what each alone does.
	local name log
	name=$(basename "${console%.log}")
	log=$LOGS/bochs-$name.log
	local bdir=$BX/run/$name dlog=$LOGS/bochs-$name-disk.log
	# BOCHS_TTY: the console on that terminal ("make shell").
	local com1="mode=file, dev=\"$console\""
	[ -z "${BOCHS_TTY:-}" ] || com1="mode=term, dev=$BOCHS_TTY"
	if [ -z "$dry" ]; then
		mkdir -p "$bdir"
		exec {lock}>"$bdir/lock"
		flock -n "$lock" || die "another Bochs boot named $name is running (lock: $bdir/lock)"
		make_disk "$kernel" "$initrd" "$append"
	else
		say "a disk image with syslinux, $kernel, $initrd and this command line: $append"
	fi

	# ips: emulated time follows the instruction count (clock sync=none),
	# 200M instructions a second per CPU.  error: ignore, else each access
	# to an MSR Bochs does not know is logged (tens of MB).  A triple fault
	# ends Bochs instead of resetting the machine.
	local bxrc=$bdir/bochsrc cpuopts=
	if [ -n "${BOCHS_CPU_OPTS:-}" ]; then
		[[ $BOCHS_CPU_OPTS =~ ^[a-z_]+=[0-9]+(,\ ?[a-z_]+=[0-9]+)*$ ]] ||
			die "BOCHS_CPU_OPTS='$BOCHS_CPU_OPTS': want 'name=N, name=N'"
		cpuopts=", $BOCHS_CPU_OPTS"
	fi
	[ -z "$dry" ] || bxrc=/dev/stdout
	[ -z "$dry" ] || say "$bdir/bochsrc:"
	cat >"$bxrc" <<-EOF
		display_library: nogui
		config_interface: textconfig
		memory: guest=2048, host=2048
		cpu: model=sapphire_rapids, count=2, ips=200000000, reset_on_triple_fault=0$cpuopts
		clock: sync=none, time0=local
		romimage: file=$BOCHS_BIOS
		vgaromimage: file=$BOCHS_VGABIOS
		pci: enabled=1, chipset=i440fx
		ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14
		ata0-master: type=disk, mode=flat, path="$bdir/disk.img", cylinders=${DISK_CHS[0]}, heads=${DISK_CHS[1]}, spt=${DISK_CHS[2]}
		boot: disk
		com1: enabled=1, $com1
		com2: enabled=1, mode=file, dev="$tap"
		mouse: enabled=0
		log: "$log"
		panic: action=fatal
		error: action=ignore
		info: action=report
		debug: action=ignore
	EOF
	bxrc=$bdir/bochsrc
	if [ -n "$dry" ]; then
		printf '%q ' timeout -k 10 "$tmo" "$BX_BIN" -q -f "$bxrc"
		echo
		return 0
	fi
	# Emptied in place, not removed: a reader may follow them (tail -f).
	: >"$console"
	: >"$tap"
	rm -f "$log"

	# Bochs has no -no-reboot: watch its log for a second reset (the first
	# is power-on) and stop it there.
	local st=0 resets
	# On a terminal (BOCHS_TTY) Bochs must stay in its foreground process
	# group to set it up, as timeout's own group would stop it (SIGTTOU).
	local fg=()
	[ -z "${BOCHS_TTY:-}" ] || fg=(--foreground)
	timeout "${fg[@]}" -k 10 "$tmo" "$BX_BIN" -q -f "$bxrc" </dev/null >"${log%.log}-stdout.log" 2>&1 &
	local pid=$!
	# Whatever ends this script (a die, a signal) ends Bochs too.
	BX_PID=$pid
	trap 'kill "${BX_PID:-}" 2>/dev/null || true' EXIT
	# bash runs no EXIT trap on a signal it does not trap.
	trap 'exit 143' INT TERM
	while kill -0 "$pid" 2>/dev/null; do
		resets=$(grep -c 'bx_pc_system_c::Reset(' "$log" 2>/dev/null || true)
		if [ "${resets:-0}" -ge 2 ]; then
			kill "$pid" 2>/dev/null || true
			break
		fi
		sleep 1
	done
	wait "$pid" || st=$?
	resets=$(grep -c 'bx_pc_system_c::Reset(' "$log" 2>/dev/null || true)
	# The guest's poweroff, ACPI S5 (or the BIOS shutdown port), ends Bochs
	# through its fatal-error path, with status 1: that is a clean end.  So
	# is a reset (a reboot, or panic=-1), as with QEMU's -no-reboot; the
	# caller reads the console.
	if [ "${resets:-0}" -ge 2 ]; then
		say "the guest reset: Bochs stopped (status $st taken as 0)"
		st=0
	elif [ "$st" = 1 ] && grep -qE 'ACPI control: soft power off|Shutdown port: shutdown requested' "$log"; then
		say "the guest powered off"
		st=0
	elif [ "$st" = 124 ] || [ "$st" = 137 ]; then
		say "timeout: no poweroff within ${tmo}s"
	else
		say "Bochs exited with status $st: $(grep -m1 -A1 'exiting with the following message' "${log%.log}-stdout.log" | tail -n1)"
	fi
	return "$st"
}

case ${1:-} in
build) build ;;
boot)
	shift
	st=0
	boot "$@" || st=$?
	exit "$st"
	;;
*) die "usage: bochs.sh build | boot KERNEL INITRD APPEND CONSOLE_LOG TAP_LOG TIMEOUT_S" ;;
esac
