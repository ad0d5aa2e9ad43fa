#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "matrix": the series in every configuration of config/matrix.list,
# as the kernel test robot would build it.  Each entry: tinyconfig, then
# config/matrix.config and the entry's options merged with merge_config.sh,
# olddefconfig, every option checked; then a full build (vmlinux and
# modules, so that modpost sees every undefined symbol) with W=1, where a
# warning in a file the series touches fails the entry.  Each entry has a
# build directory of its own, work/matrix-NAME, so that a rebuild is
# incremental: almost every option of the matrix reaches most files.
#   MATRIX=REGEX  build only the entries whose names match
SUITE=${MATRIX_SUITE:-matrix}
. "$(dirname "$0")/lib.sh"

[ -f "$TREE/Makefile" ] || die "no kernel tree at $TREE (run 'make tree')"
LIST=${MATRIX_LIST:-$HARNESS/config/matrix.list}
COMMON=$HARNESS/config/matrix.config
# The files the series changes, as compiler messages name them.
mapfile -t touched < <(git -C "$TREE" diff --name-only base HEAD | grep -vE '^(tools|Documentation)/')
[ ${#touched[@]} != 0 ] || die "the series touches no kernel file: nothing to build"

rm -f "$RESULTS/$SUITE.count"
# Every Kconfig symbol of the tree, for the check that each option asked
# for exists (a misspelt "=n" would otherwise check nothing).
symbols=$(git -C "$TREE" grep -hE '^[[:space:]]*(menu)?config [A-Za-z0-9_]+' -- '*Kconfig*' |
	awk '{ print $2 }' | sort -u)
pass=0 fail=0
failed=()
# entry NAME ARCH OPTIONS...: configure, verify and build one entry.
entry() {
	local name=$1 arch=$2 dir=$WORK/matrix-$1 log=$LOGS/matrix-$1.log cross=() cc=gcc
	shift 2
	case $arch in
	x86_64 | i386) ;;
	arm64)
		cross=(CROSS_COMPILE=aarch64-linux-gnu-) cc=aarch64-linux-gnu-gcc
		command -v $cc >/dev/null || { echo "$cc not found (make check-matrix installs it)" >"$log"; return 1; }
		;;
	*) echo "unknown ARCH $arch" >"$log"; return 1 ;;
	esac
	local mk=(make -C "$TREE" O="$dir" ARCH="$arch" "${cross[@]}")
	command -v ccache >/dev/null && mk+=("CC=ccache $cc")
	mkdir -p "$dir"
	: >"$log"
	# The entry's fragment: OPT=n is "not set".
	local frag=$dir/matrix-$name.config o
	for o in "$@"; do
		case $o in
		*=n) echo "# CONFIG_${o%=n} is not set" ;;
		*) echo "CONFIG_$o" ;;
		esac
	done >"$frag"
	{
		KCONFIG_CONFIG=$dir/.config.new "${mk[@]}" tinyconfig &&
			(cd "$TREE" && KCONFIG_CONFIG=$dir/.config.new \
				scripts/kconfig/merge_config.sh -m -O "$dir" "$dir/.config.new" "$COMMON" "$frag") &&
			KCONFIG_CONFIG=$dir/.config.new "${mk[@]}" olddefconfig
	} >>"$log" 2>&1 || { echo "configuring failed" >>"$log"; return 1; }
	# Every option asked for, the entry's over the common ones, as asked.
	local want bad=0 name_ got
	want=$(sed -n 's/^CONFIG_\([A-Za-z0-9_]*\)=\(.*\)/\1 \2/p; s/^# CONFIG_\([A-Za-z0-9_]*\) is not set/\1 n/p' \
		"$COMMON" "$frag" | awk '{ v[$1] = $2; if (!($1 in o)) { o[$1] = ++n; k[n] = $1 } }
			END { for (i = 1; i <= n; i++) print k[i], v[k[i]] }')
	while read -r name_ val; do
		if ! grep -qxF -- "$name_" <<<"$symbols"; then
			echo "CONFIG_$name_: no such Kconfig symbol in the tree" | tee -a "$log" >&2
			bad=$((bad + 1))
			continue
		fi
		got=$(sed -n "s/^CONFIG_$name_=\(.*\)/\1/p" "$dir/.config.new")
		[ -n "$got" ] || got=n
		if [ "$got" != "$val" ]; then
			echo "CONFIG_$name_=$val requested, got $got" | tee -a "$log" >&2
			bad=$((bad + 1))
		fi
	done <<<"$want"
	[ "$bad" = 0 ] || { echo "$bad option(s) did not come out as asked" >>"$log"; return 1; }
	cmp -s "$dir/.config.new" "$dir/.config" || cp "$dir/.config.new" "$dir/.config"
	rm -f "$dir/.config.new"
	# The series' C files are compiled anew for every entry (ccache replays
	# their warnings), so that each entry reports its own.
	# So are the objects that include a header of the series (from their
	# kbuild .cmd files), so that a rebuilt entry reports a header's
	# warnings as a fresh one does.
	for f in "${touched[@]}"; do
		case $f in
		*.c) rm -f "$dir/${f%.c}.o" ;;
		*.h) grep -rlF --include='.*.o.cmd' -- "/$f" "$dir" 2>/dev/null |
			sed 's|/\.\([^/]*\)\.cmd$|/\1|' | xargs -r rm -f ;;
		esac
	done
	local image=()
	[ "$arch" = arm64 ] || image=(bzImage)
	progress "$log" "$dir/.harness-objects" "${mk[@]}" -j"$JOBS" W=1 vmlinux "${image[@]}" modules ||
		{ echo "the build failed" >>"$log"; return 1; }
	# W=1 warnings in the series' files (the rest of the tree is not ours).
	local f o w=0
	# Compiler and kernel-doc warnings name the source file, objtool's the
	# object.
	for f in "${touched[@]}"; do
		o=${f%.c}.o
		if grep -E "(^|/)(${f//./\\.}:[0-9]+:([0-9]+:)? warning:|${o//./\\.}: warning: objtool:)" "$log" >&2; then
			w=$((w + 1))
		fi
	done
	[ "$w" = 0 ] || { echo "W=1 warnings in $w file(s) of the series" >>"$log"; return 1; }
	return 0
}

while read -r name arch opts; do
	[[ "$name" =~ ${MATRIX:-.} ]] || continue
	say "$name ($arch): $opts"
	t0=$(date +%s)
	# shellcheck disable=SC2086 # the options are words
	if entry "$name" "$arch" $opts; then
		pass=$((pass + 1))
		say "ok $name ($(($(date +%s) - t0)) s)"
	else
		fail=$((fail + 1))
		failed+=("$name")
		printf '[%-8s %5s] FAILED: matrix %s (%s): %s\n' "$STAGE" "$(elapsed)" "$name" "$arch" \
			"$(tail -n1 "$LOGS/matrix-$name.log")" >&2
		# The errors first: the rest of the tree has W=1 warnings of its own.
		{ grep -E 'error:|undefined|requested|no such' "$LOGS/matrix-$name.log" | head -n 20
			grep -E 'warning:' "$LOGS/matrix-$name.log" | head -n 10; } >&2 || true
	fi
done < <(list_file "$LIST")
record "$SUITE" "$pass" "$fail" 0
[ $((pass + fail)) != 0 ] || die "no matrix entry matched ${MATRIX:-anything}"
[ "$fail" = 0 ] || die "$fail matrix configuration(s) failed: ${failed[*]} (logs: $LOGS/matrix-*.log)"
say "matrix: $pass configuration(s) built"
