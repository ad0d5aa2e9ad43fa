#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "deps": install what the harness needs from Debian, in one apt-get
# install, then check that every command it calls is there.
#   deps.sh [LIST...]   config/deps.list, plus the lists given
. "$(dirname "$0")/lib.sh"

lists=("$HARNESS/config/deps.list" "$@")
mapfile -t pkgs < <(list_file "${lists[@]}" | awk '{ print $1 }')
mapfile -t cmds < <(list_file "${lists[@]}" | awk '{ for (i = 2; i <= NF; i++) print $i " " $1 }')

installed() { dpkg-query -W -f '${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
missing=()
for p in "${pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
# fetch_src: the kernel source of the upstream base, from another suite:
# its .deb, downloaded with a private apt configuration (the system's apt
# sources are left alone), checked against its pinned hash and unpacked
# under $WORK/src.
fetch_src() {
	local dl=$WORK/dl deb=${KERNEL_SRC_PKG}_${KERNEL_SRC_VER}_all.deb
	[ -f "$KERNEL_TARBALL" ] && return 0
	if [ ! -f "$dl/$deb" ] || [ "$(sha256sum <"$dl/$deb" | cut -d' ' -f1)" != "$KERNEL_SRC_SHA256" ]; then
		rm -rf "$dl"
		mkdir -p "$dl"
		say "fetching $KERNEL_SRC_PKG $KERNEL_SRC_VER from $KERNEL_SRC_SUITE ($(debian_mirror))"
		private_apt "$WORK/apt" deb "$KERNEL_SRC_SUITE"
		apt_need "$KERNEL_SRC_PKG" "$KERNEL_SRC_VER" "$KERNEL_SRC_SUITE"
		(cd "$dl" && apt-get "${APT_OPTS[@]}" download "$KERNEL_SRC_PKG=$KERNEL_SRC_VER") \
			>"$LOGS/deps-src-fetch.log" 2>&1 ||
			die "could not download $KERNEL_SRC_PKG $KERNEL_SRC_VER from $KERNEL_SRC_SUITE" "$LOGS/deps-src-fetch.log"
		[ "$(sha256sum <"$dl/$deb" | cut -d' ' -f1)" = "$KERNEL_SRC_SHA256" ] ||
			die "$deb: sha256 $(sha256sum <"$dl/$deb" | cut -d' ' -f1), expected $KERNEL_SRC_SHA256"
	fi
	rm -rf "$WORK/src"
	run "$LOGS/deps-src-unpack.log" dpkg-deb -x "$dl/$deb" "$WORK/src"
	[ -f "$KERNEL_TARBALL" ] || die "$deb has no $KERNEL_TARBALL"
}

if [ -n "${KERNEL_SRC_SUITE:-}" ]; then
	have_src=$KERNEL_SRC_VER	# fetched below, pinned by its hash
else
	have_src=$(dpkg-query -W -f '${Version}' "$KERNEL_SRC_PKG" 2>/dev/null || true)
	installed "$KERNEL_SRC_PKG" || have_src=
	if [ -z "$have_src" ]; then
		missing+=("$KERNEL_SRC_PKG")
	elif [ "$have_src" != "$KERNEL_SRC_VER" ]; then
		warn "$KERNEL_SRC_PKG $have_src is installed, the series was made against $KERNEL_SRC_VER"
	fi
fi

if [ ${#missing[@]} != 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}) and not root: install them with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	say "apt-get update"
	run "$LOGS/deps-update.log" apt-get update -q
	install=()
	for p in "${missing[@]}"; do
		if [ "$p" != "$KERNEL_SRC_PKG" ]; then
			install+=("$p")
			continue
		fi
		# The pinned kernel source, or the newest, loudly.
		madison=$(apt-cache madison "$p" 2>/dev/null || true)
		if grep -qF " $KERNEL_SRC_VER " <<<"$madison"; then
			install+=("$p=$KERNEL_SRC_VER")
			continue
		fi
		newest=$(awk 'NR == 1 { print $3 }' <<<"$madison")
		if [ -z "$newest" ]; then
			suites=$(apt-get indextargets --format '$(SITE) $(RELEASE)/$(COMPONENT)' \
				'Created-By: Packages' 2>/dev/null | sort -u | tr '\n' ',' | sed 's/,$//; s/,/, /g')
			die "$p is not available from apt, which looked in: ${suites:-no suite at all}. $KERNEL_SRC_VER is in bookworm-security, which a standard Debian 12 install has: add that suite to the apt sources"
		fi
		warn "**************************************************************"
		warn "$p $KERNEL_SRC_VER is gone from apt: using $newest."
		warn "The series was made against $KERNEL_SRC_VER and may not apply."
		warn "**************************************************************"
		install+=("$p=$newest")
	done
	say "apt-get install ${install[*]}"
	run "$LOGS/deps-install.log" apt-get install -y -q --no-install-recommends "${install[@]}"
	[ -n "${KERNEL_SRC_SUITE:-}" ] || have_src=$(dpkg-query -W -f '${Version}' "$KERNEL_SRC_PKG")
fi

[ -z "${KERNEL_SRC_SUITE:-}" ] || fetch_src

# Every command a stage calls, from the package that gives it.
absent=()
for c in "${cmds[@]}"; do
	command -v "${c% *}" >/dev/null || absent+=("${c% *} (${c#* })")
done
[ ${#absent[@]} = 0 ] || die "command(s) missing after the install: ${absent[*]}"
if [ ${#missing[@]} = 0 ]; then
	say "all dependencies present ($KERNEL_SRC_PKG $have_src)"
else
	say "dependencies installed ($KERNEL_SRC_PKG $have_src)"
fi
