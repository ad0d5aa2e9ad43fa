#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "deps": install what the harness needs from Debian, idempotently.
. "$(dirname "$0")/lib.sh"

pkgs=(qemu-system-x86 busybox-static acpica-tools ccache build-essential flex bison bc
	libelf-dev libssl-dev cpio xz-utils kmod python3 python3-ply python3-git
	git perl util-linux)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
have_src=$(dpkg-query -W -f '${Version}' "$KERNEL_SRC_PKG" 2>/dev/null || true)
if [ -z "$have_src" ]; then
	missing+=("$KERNEL_SRC_PKG")
elif [ "$have_src" != "$KERNEL_SRC_VER" ]; then
	warn "$KERNEL_SRC_PKG $have_src is installed, the series was made against $KERNEL_SRC_VER"
fi
if [ ${#missing[@]} = 0 ]; then
	say "all dependencies present ($KERNEL_SRC_PKG ${have_src})"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}) and not root: install them with apt-get"
export DEBIAN_FRONTEND=noninteractive
say "apt-get update"
run "$LOGS/deps-update.log" apt-get update -q
src=()
for p in "${missing[@]}"; do
	if [ "$p" = "$KERNEL_SRC_PKG" ]; then
		if apt-cache madison "$p" | grep -qF " $KERNEL_SRC_VER "; then
			src=("$p=$KERNEL_SRC_VER")
		else
			newest=$(apt-cache madison "$p" | awk 'NR == 1 { print $3 }')
			[ -n "$newest" ] || die "$p is not available from apt"
			warn "**************************************************************"
			warn "$p $KERNEL_SRC_VER is gone from apt: using $newest."
			warn "The series was made against $KERNEL_SRC_VER and may not apply."
			warn "**************************************************************"
			src=("$p=$newest")
		fi
	else
		src+=("$p")
	fi
done
say "apt-get install ${src[*]}"
run "$LOGS/deps-install.log" apt-get install -y -q --no-install-recommends "${src[@]}"
say "dependencies installed"
