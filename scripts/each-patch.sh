#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "each": every patch of each posting builds on its own.  Checks out
# each commit of each posting branch (kvm, cpuidle; the patch both carry
# once) in turn and builds the kernel code the series
# touches up to it with W=1 and CONFIG_KVM_WERROR=y (work/build-w1, set up
# by build.sh), and the selftests it touches.
. "$(dirname "$0")/lib.sh"

W1=${W1:-$WORK/build-w1}
[ -f "$W1/.config.src" ] || die "no $W1 (run 'make build' first)"
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted changes"
branch=$(git -C "$TREE" symbolic-ref -q --short HEAD) || die "$TREE is not on a branch"
# Back on the branch, the files the series touches get their old mtimes
# back: their content is what the VM kernel was built from, so the stages
# that follow (check-harness) need not recompile what includes them.
stamps=$(mktemp)
git -C "$TREE" diff --name-only base "$branch" | (cd "$TREE" && xargs -r stat -c '%.9Y %n' 2>/dev/null) >"$stamps"
restore() {
	git -C "$TREE" checkout -q "$branch"
	while read -r t f; do touch -m -d "@$t" "$TREE/$f"; done <"$stamps"
	rm -f "$stamps"
}
trap restore EXIT
# What the whole series touches: built for a patch that changes only headers
# (no C file of its own yet), since those directories include them.
all_dirs=$(touched_dirs "$branch")

n=0
for c in $(for b in $POSTINGS; do git -C "$TREE" rev-list --reverse base.."$b" | sed "s/\$/ $b/"; done |
	awk '!seen[$1]++ { print $2 ":" $1 }'); do
	posting=${c%%:*} c=${c#*:}
	n=$((n + 1))
	i=$(git -C "$TREE" rev-list --count base.."$c")
	subject=$(git -C "$TREE" log -1 --format=%s "$c")
	git -C "$TREE" checkout -q --detach "$c"
	dirs=$(touched_dirs "$c")
	if [ -z "$dirs" ] && git -C "$TREE" diff --name-only "$c~1" "$c" |
		grep -qvE '^(tools|Documentation)/'; then
		dirs=$all_dirs
	fi
	log=$LOGS/each-$n.log
	: >"$log"
	if [ -n "$dirs" ]; then
		cp "$W1/.config.src" "$W1/.config"
		make -C "$TREE" O="$W1" "${KMAKE_ARGS[@]}" olddefconfig >>"$log" 2>&1 &&
			make -C "$TREE" O="$W1" -j"$JOBS" "${KMAKE_ARGS[@]}" W=1 $dirs >>"$log" 2>&1 ||
			die "$posting patch $i ($subject) does not build" "$log"
		! grep -E 'warning:' "$log" >&2 || die "$posting patch $i ($subject) builds with warnings" "$log"
	fi
	for t in $(git -C "$TREE" diff --name-only "$c~1" "$c" -- 'tools/testing/selftests/kvm/*.c' |
		sed -n 's|^tools/testing/selftests/kvm/\(.*\)\.c$|\1|p' | grep -v '^lib/'); do
		make -C "$TREE/tools/testing/selftests/kvm" -j"$JOBS" OUTPUT="$WORK/build-each-selftests" \
			KHDR_INCLUDES="-isystem $WORK/build-vm/usr/include" EXTRA_CFLAGS=-static \
			"$WORK/build-each-selftests/$t" >>"$log" 2>&1 ||
			die "$posting patch $i ($subject): selftest $t does not build" "$log"
	done
	say "$posting patch $i builds: $subject"
done
