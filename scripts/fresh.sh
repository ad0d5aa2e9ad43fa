#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make check-fresh": prove the README on a fresh system.  Runs "make check"
# as root in a fresh minimal Debian 12 root (debootstrap --variant=minbase
# bookworm, with the apt sources of a standard install), holding nothing
# else but a copy of this repository, at the same path as here.  The only
# step before it is the README's prerequisite, "apt-get install make".
#   FRESH_CCACHE_DIR=DIR  the ccache the root uses (default: the host's)
#   FRESH_ADOPT=1         on success, move the root's kernel tree, build
#                         directories (the matrix's, which KUnit used,
#                         among them) and Bochs into this work/ for the
#                         stages that follow on the host (CI)
STAGE=fresh
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || die "check-fresh needs root (debootstrap, chroot, mounts)"
# The mirrors of the system's own apt sources (lib.sh), as a new machine's.
MIRROR=${FRESH_MIRROR:-$(debian_mirror)}
SECURITY=${FRESH_SECURITY:-$(debian_security_mirror)}
FRESH=$WORK/fresh
tarball=$WORK/fresh-root-bookworm-minbase.tar
ccache_dir=${FRESH_CCACHE_DIR:-$( (ccache -k cache_dir 2>/dev/null) || echo "$HOME/.cache/ccache")}
mkdir -p "$ccache_dir"

# The pristine root, made once and kept as a tarball.
if [ ! -s "$tarball" ]; then
	say "debootstrap --variant=minbase bookworm ($MIRROR)"
	rm -rf "$FRESH"
	mkdir -p "$FRESH/root"
	run "$LOGS/fresh-debootstrap.log" debootstrap --variant=minbase bookworm "$FRESH/root" "$MIRROR"
	# The apt sources of a standard Debian 12 install.
	cat >"$FRESH/root/etc/apt/sources.list" <<-SRC
		deb $MIRROR bookworm main
		deb $SECURITY bookworm-security main
		deb $MIRROR bookworm-updates main
	SRC
	rm -f "$FRESH/root/var/cache/apt/archives/"*.deb
	tar -C "$FRESH/root" -cf "$tarball.tmp" . || die "cannot pack the pristine root"
	mv "$tarball.tmp" "$tarball"
	say "pristine root cached: $tarball ($(du -h "$tarball" | cut -f1))"
fi

say "unpacking the pristine root"
rm -rf "$FRESH"
mkdir -p "$FRESH/root"
tar -C "$FRESH/root" -xf "$tarball" || die "cannot unpack $tarball"
root=$FRESH/root
# A copy of the repository (with its .git, as a clone has), at the same
# path, so that the host's ccache serves both.
mkdir -p "$root$HARNESS"
tar -C "$HARNESS" --exclude=./work -cf - . | tar -C "$root$HARNESS" -xf - ||
	die "cannot copy the repository into the root"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/root/.cache/ccache"

# A private mount and PID namespace: the mounts and every process started
# in the root end with it.
log=$LOGS/fresh-check.log
say "make check in the fresh root (output: $log; ccache: $ccache_dir)"
set +e
trap - ERR	# the status is looked at below
unshare --kill-child --mount --pid --fork --propagation private bash -c '
	set -e
	root=$1 ccache=$2 harness=$3
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --rbind /dev "$root/dev"
	mount --bind "$ccache" "$root/root/.cache/ccache"
	exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		CCACHE_DIR=/root/.cache/ccache \
		bash -c "set -e
			export DEBIAN_FRONTEND=noninteractive
			echo \"\$ apt-get install make   # the README prerequisite\"
			apt-get update -q >/dev/null
			apt-get install -y -q make >/dev/null
			cd $harness
			echo \"\$ make check\"
			make check"
' fresh "$root" "$ccache_dir" "$HARNESS" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
err_trap
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1 || true)
[ "$rc" = 0 ] || die "make check in the fresh root failed (status $rc${line:+: $line})"
grep -qE '^[0-9]+ passed, 0 failed' <<<"$line" || die "make check in the fresh root printed no green summary line"
# The root's results, counted here.
cp "$root$HARNESS/work/results/"*.count "$RESULTS/"
if [ "${FRESH_ADOPT:-0}" = 1 ]; then
	[ "$WORK" = "$HARNESS/work" ] || die "FRESH_ADOPT needs the default WORK"
	rm -rf "$TREE" "$WORK"/build-* "$WORK"/matrix-* "$WORK/bochs"
	mv "$root$TREE" "$TREE"
	for b in "$root$WORK"/build-* "$root$WORK"/matrix-* "$root$WORK/bochs"; do
		[ ! -e "$b" ] || mv "$b" "$WORK/"
	done
	say "adopted the root's tree, build directories and Bochs"
fi
rm -rf "$FRESH"
say "the README's 'make check' passed on a fresh Debian 12 root: $line"
