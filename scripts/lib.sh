# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared helpers for the harness stages.  Sourced, never executed.

set -Eeuo pipefail

HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${WORK:-$HARNESS/work}
# The kernel base (KBASE).  "upstream", the default: the base of the
# posting, Linux 7.3 (Debian trixie-backports' linux-source-7.3), fetched by
# deps.sh with a private apt configuration and pinned by its hash, with the
# postings in patches/upstream/.  "6.12": the backport to Debian 12's
# linux-source-6.12, in patches/6.12/, with a work directory of its own,
# work/6.12.  Each patch directory holds one directory per posting
# (POSTINGS), each with its own series file and cover letter.
KBASE=${KBASE:-upstream}
POSTINGS="kvm cpuidle"
# The KERNEL_SRC_* variables are for the scripts that source this file.
# shellcheck disable=SC2034
case $KBASE in
upstream)
	KERNEL_SRC_PKG=linux-source-7.3
	KERNEL_SRC_VER=7.3.4-1~bpo13+1
	# Fetched from this suite, checked against this hash, unpacked here.
	KERNEL_SRC_SUITE=trixie-backports
	KERNEL_SRC_SHA256=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
	KERNEL_TARBALL=${KERNEL_TARBALL:-$WORK/src/usr/src/linux-source-7.3.tar.xz}
	;;
6.12)
	[ "${WORK##*/}" = 6.12 ] || WORK=$WORK/6.12
	KERNEL_SRC_PKG=linux-source-6.12
	KERNEL_SRC_VER=6.12.117-1~deb12u1
	# One Bochs for both bases.
	BOCHS_DIR=${BOCHS_DIR:-${WORK%/6.12}/bochs}
	;;
*)
	echo "KBASE=$KBASE: the kernel base is upstream (Linux 7.3, the default) or 6.12" >&2
	exit 1
	;;
esac
export KBASE WORK
PATCHES=${PATCHES:-$HARNESS/patches/$KBASE}
TREE=${TREE:-$WORK/linux}
RESULTS=${RESULTS:-$WORK/results}
LOGS=${LOGS:-$WORK/logs}
JOBS=${JOBS:-$(($(nproc) + 1))}
BOCHS_DIR=${BOCHS_DIR:-$WORK/bochs}
export BOCHS_DIR
BOCHS=${BOCHS:-$BOCHS_DIR/bin/bochs}
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
# stage fails with its cause, not silently, inside functions too (set -E,
# review H5).  Only the script's own process acts on it: a subshell (a
# command or process substitution, a pipeline's part) fails as set -e has
# it there, and its caller, seeing the status, names itself.
err_trap() {
	trap 'err_die $? "$LINENO" "$BASH_COMMAND"' ERR
}
err_die() {
	[ "$BASHPID" != "$$" ] || die "unexpected error (status $1) at ${BASH_SOURCE[1]##*/}:$2: $3"
}
err_trap

# stop_all_on_signal: Ctrl-C or a kill stops everything this stage started.
# A non-interactive bash starts background jobs (the parallel boots) with
# SIGINT ignored, so send the whole process group SIGTERM instead, which
# they do not ignore; bochs.sh then stops its emulator (review H6).
stop_all_on_signal() {
	trap 'trap - INT TERM; kill -TERM 0 2>/dev/null; exit 130' INT TERM
}

# show LOG CMD...: with V=1, the command and where its output goes.
show() {
	[ "${V:-0}" = 0 ] || say "+ $(printf '%q ' "${@:2}")> $1"
}

# run LOG CMD...: run CMD with its output in LOG; fail the stage on error.
run() {
	local log=$1
	show "$@"
	shift
	if ! "$@" >"$log" 2>&1; then
		die "'$*' failed" "$log"
	fi
}

# progress LOG COUNTFILE CMD...: run CMD with its output appended to LOG,
# and once a minute say how far it is: the objects built so far (lines of
# LOG that kbuild prints per object: CC, AS, LD, AR...), as a share of the
# largest count of a complete run, kept in COUNTFILE (a full build's, not an
# incremental one's), and the time elapsed.  Returns CMD's status.
progress() {
	local log=$1 countfile=$2 t0=$SECONDS pid last n0 n of rc=0
	show "$log" "${@:3}"
	shift 2
	last=$(cat "$countfile" 2>/dev/null || true)
	n0=$(grep -cE '^  [A-Z]' "$log" 2>/dev/null || true)
	"$@" >>"$log" 2>&1 &
	pid=$!
	while ! wait_tick "$pid"; do
		n=$(($(grep -cE '^  [A-Z]' "$log" || true) - ${n0:-0}))
		of=
		[ "${last:-0}" -le 0 ] || of=" ($((n * 100 / last))% of a full build's $last)"
		say "  ... $n objects$of, $(((SECONDS - t0) / 60))m$(((SECONDS - t0) % 60))s"
	done
	wait "$pid" || rc=$?
	n=$(($(grep -cE '^  [A-Z]' "$log" || true) - ${n0:-0}))
	[ "$rc" != 0 ] || [ "$n" -le "${last:-0}" ] || echo "$n" >"$countfile"
	return "$rc"
}

# run_progress LOG COUNTFILE CMD...: "progress" with LOG emptied first;
# fails the stage on error, as "run" does.
run_progress() {
	local log=$1
	: >"$log"
	progress "$@" || die "'${*:3}' failed" "$log"
}

# wait_tick PID: wait up to 60 s for PID to end; true once it has.
wait_tick() {
	local _
	for _ in $(seq 60); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 1
	done
	return 1
}

# objtool_noinstr BUILD LOG: objtool's noinstr validation of BUILD's
# vmlinux.o, rerun because the build shows its warnings without failing
# (objtool is 64-bit only).  Prints the cause and fails if the kernel lacks
# NOINSTR_VALIDATION, objtool is missing or fails, or it warns.
objtool_noinstr() {
	local build=$1 log=$2 tmp=$WORK/objtool-vmlinux.o orc=0
	grep -q '^CONFIG_NOINSTR_VALIDATION=y' "$build/.config" ||
		{ echo "CONFIG_NOINSTR_VALIDATION is not set in $build"; return 1; }
	[ -x "$build/tools/objtool/objtool" ] ||
		{ echo "no objtool in $build: the noinstr validation cannot run"; return 1; }
	cp "$build/vmlinux.o" "$tmp"
	"$build/tools/objtool/objtool" --noinstr --link "$tmp" >"$log" 2>&1 || orc=$?
	rm -f "$tmp"
	! grep -q 'warning: objtool' "$log" || { echo "objtool: noinstr violations in $build"; return 1; }
	# A status other than 0 without a warning: objtool itself failed.
	[ "$orc" = 0 ] || { echo "objtool failed (status $orc) on $build/vmlinux.o"; return 1; }
}

# config_missing CONFIG FRAGMENT...: each "CONFIG_X=v" line of the
# FRAGMENTs that CONFIG lacks, as "  CONFIG_X=v requested, got: WHAT"
# (its line in CONFIG, "# CONFIG_X is not set", or "absent"); false if
# there is any.
config_missing() {
	local config=$1 opt name n=0
	shift
	while IFS= read -r opt; do
		grep -qxF -- "$opt" "$config" && continue
		name=${opt%%=*}
		echo "  $opt requested, got: $(grep -E "^$name=|^# $name is not set" "$config" || echo "absent")"
		n=$((n + 1))
	done < <(cat "$@" | grep -E '^CONFIG_[A-Za-z0-9_]+=')
	[ "$n" = 0 ]
}

# dead_links MD...: "FILE: LINK" for each relative link of the Markdown
# files that does not resolve from the file's directory (anchors dropped;
# URLs and same-file anchors skipped).  A file without links is fine.
dead_links() {
	local md l
	for md in "$@"; do
		{ grep -oE '\]\([^)#][^)]*\)' "$md" || true; } | sed -E 's/^\]\(//; s/\)$//; s/#.*//' |
			{ grep -vE '^[a-z]+:' || true; } | while read -r l; do
				[ -e "$(dirname "$md")/$l" ] || echo "$md: $l"
			done
	done
}

# list_file FILE...: the lines of list files, without comments and blank
# lines.
list_file() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$@"
}

# The patches of one posting (POSTING/NNNN-....patch), in order, or of all
# of them, as paths relative to $PATCHES.
# shellcheck disable=SC2120 # most callers want all the postings
series_list() {
	local p
	for p in ${1:-$POSTINGS}; do
		[ -f "$PATCHES/$p/series" ] || die "no series file in $PATCHES/$p"
		list_file "$PATCHES/$p/series" | sed "s|^|$p/|"
	done
}

# The hash of the stored postings: their series files and patches.
series_stamp() {
	(cd "$PATCHES" && for p in $POSTINGS; do cat "$p/series"; done && series_list | xargs cat) |
		sha256sum | cut -c1-16
}

# The heads of the tree's posting branches and of the merge of them all.
tree_heads() {
	local b
	for b in $POSTINGS master; do
		git -C "$TREE" rev-parse -q --verify "refs/heads/$b" || echo none
	done | tr '\n' ' ' | sed 's/ $//'
}

# kvm_selftests FILE...: the selftests named in list files, with the x86
# directory as the tree has it (x86_64/ in 6.12, x86/ since 6.14).
kvm_selftests() {
	if [ -d "$TREE/tools/testing/selftests/kvm/x86_64" ]; then
		list_file "$@"
	else
		list_file "$@" | sed 's|^x86_64/|x86/|'
	fi
}

# The kernel directories whose C files the series changes up to REV, as make
# targets ("arch/x86/kvm/ ..."); virt/kvm is built as part of arch/x86/kvm.
touched_dirs() {
	git -C "$TREE" diff --name-only base "$1" -- '*.c' |
		{ grep -vE '^(tools|Documentation)/' || true; } | xargs -r -n1 dirname |
		sed 's|^virt/kvm$|arch/x86/kvm|' | sort -u | sed 's|$|/|' | tr '\n' ' '
}

# base_kernel STAGE: the base tree, a worktree of $TREE at tag base in
# $BASE_WORK/linux (kept while it is the tree's base, made anew after "make
# tree" remade it), and its VM kernel in $BASE_WORK/build-vm, built as the
# series' is (same relative layout, so that ccache serves both).  Sets
# BASE_WORK, BASE_TREE and BASE_BUILD.  For "make check-wide" and "make
# tcg-hangs", which compare the series with the base.
base_kernel() {
	BASE_WORK=$WORK/base
	[ "$KBASE" != 6.12 ] || BASE_WORK=$WORK/base/6.12
	BASE_TREE=$BASE_WORK/linux
	BASE_BUILD=$BASE_WORK/build-vm
	local want
	want=$(git -C "$TREE" rev-parse base)
	if [ "$(git -C "$BASE_TREE" rev-parse HEAD 2>/dev/null)" != "$want" ]; then
		rm -rf "$BASE_TREE"
		git -C "$TREE" worktree prune
		run "$LOGS/$1-worktree.log" git -C "$TREE" worktree add --detach "$BASE_TREE" base
	fi
	say "building the base kernel in $BASE_WORK"
	WORK=$BASE_WORK TREE=$BASE_TREE BUILD=$BASE_BUILD STAGE=$1-base \
		"$HARNESS/scripts/build.sh" kernel || die "the base kernel did not build (logs: $BASE_WORK/logs)"
}

# load_backend NAME: the functions of VM backend NAME (be_boot, be_waitpkg
# ...: scripts/backend/README.md), replacing those of any other.
load_backend() {
	local f=$HARNESS/scripts/backend/$1.sh
	[ -f "$f" ] || die "unknown backend '$1' in BACKENDS ($(cd "$HARNESS/scripts/backend" && ls -- *.sh | sed 's/\.sh$//' | tr '\n' ' ' | sed 's/ $//'))"
	# shellcheck source=/dev/null # one of scripts/backend/*.sh
	. "$f"
}

# guest_waitpkg BACKEND: "yes" if that backend's guest sees WAITPKG, else
# "no" (its be_waitpkg: Bochs' sapphire_rapids model has it; QEMU passes
# the host's CPU through with KVM and has none under TCG).  The guest
# checks and the demo's expectations follow this, not the backend's name.
# HARNESS_GUEST_WAITPKG overrides it (check-harness).
guest_waitpkg() {
	if [ -n "${HARNESS_GUEST_WAITPKG:-}" ]; then
		echo "$HARNESS_GUEST_WAITPKG"
	else
		(load_backend "$1" && be_waitpkg)
	fi
}

# guest_can_wait BACKEND: "yes" if that backend's guest can wait (its
# be_can_wait; the guest computes the same with scripts/guest/can_wait and
# checks one against the other), else "no".  HARNESS_GUEST_CAN_WAIT
# overrides it (check-harness).
guest_can_wait() {
	if [ -n "${HARNESS_GUEST_CAN_WAIT:-}" ]; then
		echo "$HARNESS_GUEST_CAN_WAIT"
	else
		(load_backend "$1" && be_can_wait)
	fi
}

# apicv_boots MODE PREFIX [APPEND]: "vm.sh MODE" on Bochs twice at once,
# APICv on (VM_SUITE=PREFIX-apicv-on, as production hosts run KVM) and off
# (PREFIX-apicv-off, kvm_intel.enable_apicv=0, where KVM's requests share
# the wake word's cache line), APPEND on both kernel command lines; a Bochs
# boot is one host thread, its time emulated.  BUILD, VM_TIMEOUT and the
# like come from the caller's environment.  Fails if either boot failed.
apicv_boots() {
	local mode=$1 prefix=$2 append=${3:-} c a pids=() failed=0 p
	for c in apicv-on apicv-off; do
		a=$append
		[ "$c" != apicv-off ] || a+=" kvm_intel.enable_apicv=0"
		BACKENDS=bochs VM_SUITE=$prefix-$c VM_APPEND="${a# }" "$HARNESS/scripts/vm.sh" "$mode" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
	[ "$failed" = 0 ] || die "$failed of the $prefix boots on Bochs failed (above)"
}

# counts_of CMD...: run CMD, which prints "PASSED FAILED SKIPPED" (and
# maybe more fields, as ktap.sh's), and print that; if CMD fails or prints
# anything else, say so on stderr and print "0 1 0", so that a helper that
# dies is a failure, not an empty count.
counts_of() {
	local out rc=0
	out=$("$@") || rc=$?
	if [ "$rc" = 0 ] && [[ $out =~ ^[0-9]+\ [0-9]+\ [0-9]+(\ [0-9a-z]+)*$ ]]; then
		echo "$out"
	else
		echo "counting with '$*' failed (exit status $rc, output '${out:0:200}'), counted as a failure" >&2
		echo "0 1 0"
	fi
}

# backend_tap PREFIX BAD MODE...: on stdout, one KTAP document for a
# backend's boots, a subtest per MODE: the boot's document in PREFIX-MODE.tap
# (its kernel log, the "KTAP-" lines, left out), indented, then its result,
# "not ok" if MODE is one of the words of BAD (the boots that failed), if a
# test in it failed, or if it reported other than it planned.
backend_tap() {
	local prefix=$1 bad=$2 i=0 m f bf bt bp
	shift 2
	echo "TAP version 13"
	echo "1..$#"
	for m in "$@"; do
		i=$((i + 1)) f=$prefix-$m.tap
		[ ! -e "$f" ] || awk -v m="$m" '
			/^TAP version 13/ && !n { n = 1; print "    " $0; print "    # Subtest: " m; next }
			n && !/^KTAP-/ { print "    " $0 }' "$f"
		if [[ " $bad " == *" $m "* ]]; then
			echo "not ok $i $m # the boot failed ($(basename "$f"))"
			continue
		fi
		read -r _ bf _ bt bp < <(counts_of "$HARNESS/scripts/ktap.sh" counts "$f")
		if [ "$bf" = 0 ] && [ "$bt" = "$bp" ]; then echo "ok $i $m"; else echo "not ok $i $m"; fi
	done
}

# guest_display: a guest's results as shown on the terminal while they come
# ("make run"): without carriage returns, the end marker and the demo's
# machine-readable facts.  Never fails, so that a pipeline's status is the
# emulator's.
guest_display() {
	stdbuf -oL tr -d '\r' | { grep --line-buffered -vE '^(HARNESS-DONE|fact: )' || true; }
}

# Record "SUITE PASSED FAILED SKIPPED" for the summary stage.
record() {
	echo "$2 $3 $4" >"$RESULTS/$1.count"
}

# apt_site SUITE_REGEX: the site of the first suite of the system's apt
# sources that matches SUITE_REGEX (apt-get indextargets), or nothing.
apt_site() {
	# shellcheck disable=SC2016 # apt's own $(FIELD) syntax
	apt-get indextargets --format '$(SITE) $(RELEASE)' 'Created-By: Packages' 2>/dev/null |
		awk -v re="$1" '$2 ~ re { print $1; exit }'
}

# debian_mirror: the Debian mirror the system's apt sources use (its first
# suite without a "-": bookworm, not bookworm-updates), or DEBIAN_MIRROR.
debian_mirror() {
	local m=${DEBIAN_MIRROR:-$(apt_site '^[^-]+$')}
	[ -n "$m" ] || die "no Debian mirror in the apt sources (set DEBIAN_MIRROR)"
	echo "$m"
}

# debian_security_mirror: where the system's apt sources take the security
# suite from (bookworm-security), or DEBIAN_SECURITY_MIRROR.
debian_security_mirror() {
	local m=${DEBIAN_SECURITY_MIRROR:-$(apt_site '-security$')}
	[ -n "$m" ] || die "no security suite in the apt sources (set DEBIAN_SECURITY_MIRROR)"
	echo "$m"
}

# private_apt DIR TYPE SUITE: an apt configuration of its own under DIR,
# with the one source "TYPE MIRROR SUITE main" (TYPE deb or deb-src), and
# its index fetched; sets APT_OPTS for apt-get and apt-cache.  The system's
# apt sources, lists and cache are left alone.
private_apt() {
	local dir=$1 type=$2 suite=$3 mirror
	mirror=$(debian_mirror)
	rm -rf "$dir"
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	echo "$type $mirror $suite main" >"$dir/sources.list"
	APT_OPTS=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o APT::Sandbox::User=root)
	run "$LOGS/apt-$suite-update.log" apt-get "${APT_OPTS[@]}" update
}

# apt_versions PKG [src]: the versions of PKG (of source package PKG) in
# the private index of private_apt, oldest first, on one line.
apt_versions() {
	apt-cache "${APT_OPTS[@]}" madison "$1" 2>/dev/null |
		awk -F' [|] ' -v t="${2:-}" '(t == "src") == ($3 ~ /Sources/) { print $2 }' |
		sort -uV | tr '\n' ' ' | sed 's/ $//'
}

# apt_need PKG VER SUITE: fail, naming the suite, the version wanted and the
# versions found, unless the private index has PKG VER.
apt_need() {
	local found
	found=$(apt_versions "$1")
	grep -qF -- " $2 " <<<" $found " && return 0
	die "$1 $2 is gone from $3 ($(debian_mirror)); versions found there: ${found:-none}"
}

# Kernel make arguments: ccache when it is installed.  The base directory
# is all of $WORK, tree and build directories alike, so that a build of the
# same sources in another directory (a re-applied tree, a fresh clone, the
# fresh root) hits.  Depend mode (CCACHE_DEPEND): ccache hashes the headers
# the compiler's own -MMD output lists, instead of running the preprocessor
# once more for each object; a miss then costs a plain compile, not a
# preprocessed one on top, which is most of a cold build (docs/harness.md
# has the times).  It hits only where a configuration was built before,
# not where another one preprocesses the same.  Five kernels per base do
# not fit ccache's default 5 GB.  No kernel here has Rust: RUSTC=false
# keeps whether a rustc is on PATH out of the configs' toolchain symbols
# (CONFIG_RUSTC_VERSION...), so that a config, and what it rebuilds, is the
# same on every machine (this one has rustc in ~/.cargo).
# The harness's V=1 reaches kbuild through MAKEFLAGS; kbuild stays quiet
# (its object lines are what "progress" counts) unless KBUILD_VERBOSE says
# otherwise.
KMAKE_ARGS=(RUSTC=false "V=${KBUILD_VERBOSE:-0}")
if command -v ccache >/dev/null; then
	export CCACHE_BASEDIR=$WORK CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G} CCACHE_DEPEND=1
	KMAKE_ARGS+=("CC=ccache gcc")
fi

# add_headers FILE LINES: put the To:/Cc: LINES into FILE's header, before
# the blank line that ends it, one header of each with folded addresses
# (export-series.sh).
add_headers() {
	awk -v lines="$2" '
		BEGIN {
			n = split(lines, l, "\n")
			for (i = 1; i <= n; i++) {
				k = substr(l[i], 1, 2); v = substr(l[i], 5)
				if (v == "" || (k, v) in seen) continue
				seen[k, v] = 1
				if (k == "To") to = to (to == "" ? "" : ",\n    ") v
				else cc = cc (cc == "" ? "" : ",\n    ") v
			}
		}
		hdr && /^$/ {
			if (to != "") print "To: " to
			if (cc != "") print "Cc: " cc
			hdr = 0
		}
		NR == 1 { hdr = 1 }
		{ print }' "$1" >"$1.new" && mv "$1.new" "$1"
}

# splice_cover STORED NEW: the cover letter NEW (git format-patch's) with
# the author, date, subject and text of the cover letter STORED, and its
# own shortlog and diffstat (export-series.sh).
splice_cover() {
	awk -v stored="$1" '
		BEGIN {
			hdr = 1
			while ((getline l < stored) > 0) {
				if (hdr && l ~ /^From: /) { from = l; infrom = 1; continue }
				if (hdr && infrom && l ~ /^[ \t]/) { from = from "\n" l; continue }
				infrom = 0
				if (hdr && l ~ /^Date: /) date = l
				else if (hdr && l ~ /^Subject: /) { sub(/^Subject: \[[^]]*\] /, "", l); subj = l }
				else if (hdr && l == "") hdr = 0
				else if (!hdr && l ~ /^[^ ].* \([0-9]+\):$/) break
				else if (!hdr) blurb = blurb l "\n"
			}
			sub(/\n+$/, "\n", blurb)
		}
		skip && /^[ \t]/ { next }
		{ skip = 0 }
		/^Date: / && date != "" { print date; next }
		/^From: / && from != "" { print from; skip = 1; next }
		/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) }
		/^\*\*\* BLURB HERE \*\*\*$/ { printf "%s", blurb; next }
		{ print }' "$2" >"$2.new" && mv "$2.new" "$2"
}
