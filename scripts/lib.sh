# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the harness stages.  Sourced, never executed.

set -euo pipefail

HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${WORK:-$HARNESS/work}
PATCHES=${PATCHES:-$HARNESS/patches}
TREE=${TREE:-$WORK/linux}
RESULTS=${RESULTS:-$WORK/results}
LOGS=${LOGS:-$WORK/logs}
JOBS=${JOBS:-$(($(nproc) + 1))}
KERNEL_SRC_PKG=${KERNEL_SRC_PKG:-linux-source-6.12}
KERNEL_SRC_VER=${KERNEL_SRC_VER:-6.12.117-1~deb12u1}
BOCHS=${BOCHS:-$WORK/bochs/bin/bochs}
# The VM backends, in order (scripts/vm.sh): QEMU and Bochs.
BACKENDS=${BACKENDS:-qemu bochs}

mkdir -p "$WORK" "$RESULTS" "$LOGS"

STAGE=${STAGE:-$(basename "$0" .sh)}
STAGE_T0=$(date +%s)

elapsed() { echo "$(($(date +%s) - STAGE_T0))s"; }

# One progress line per stage step, with the time since the stage started.
say() { printf '[%-8s %5s] %s\n' "$STAGE" "$(elapsed)" "$*"; }

warn() { printf '[%-8s %5s] WARNING: %s\n' "$STAGE" "$(elapsed)" "$*" >&2; }

# die CAUSE [LOG]: name the stage and the cause, show the tail of LOG.
# A test stage (SUITE set) that dies before counting counts as one failure.
die() {
	if [ -n "${SUITE:-}" ] && [ ! -e "$RESULTS/$SUITE.count" ]; then
		echo "0 1 0" >"$RESULTS/$SUITE.count"
	fi
	printf '[%-8s %5s] FAILED: %s\n' "$STAGE" "$(elapsed)" "$1" >&2
	if [ $# -gt 1 ] && [ -s "$2" ]; then
		echo "---- last 40 lines of $2 ----" >&2
		tail -n 40 "$2" >&2
		echo "----" >&2
	fi
	exit 1
}

# A command that fails outside any check (set -e) still names itself: the
# stage fails with its cause, not silently.
trap 'die "unexpected error (status $?) at ${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND"' ERR

# run LOG CMD...: run CMD with its output in LOG; fail the stage on error.
run() {
	local log=$1
	shift
	if ! "$@" >"$log" 2>&1; then
		die "'$*' failed" "$log"
	fi
}

# list_file FILE...: the lines of list files, without comments and blank
# lines.
list_file() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$@"
}

# The patches listed in series, in order.
series_list() {
	list_file "$PATCHES/series"
}

# The kernel directories whose C files the series changes up to REV, as make
# targets ("arch/x86/kvm/ ..."); virt/kvm is built as part of arch/x86/kvm.
touched_dirs() {
	git -C "$TREE" diff --name-only base "$1" -- '*.c' |
		{ grep -vE '^(tools|Documentation)/' || true; } | xargs -r -n1 dirname |
		sed 's|^virt/kvm$|arch/x86/kvm|' | sort -u | sed 's|$|/|' | tr '\n' ' '
}

# Record "SUITE PASSED FAILED SKIPPED" for the summary stage.
record() {
	echo "$2 $3 $4" >"$RESULTS/$1.count"
}

# Kernel make arguments: ccache when it is installed.
KMAKE_ARGS=()
if command -v ccache >/dev/null; then
	export CCACHE_BASEDIR=$TREE CCACHE_NOHASHDIR=1
	KMAKE_ARGS=("CC=ccache gcc")
fi
