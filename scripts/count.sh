#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "count": the halt-poll path counted in instructions.  Under Bochs
# the guest's TSC advances once per instruction, so a TSC difference in L1
# is an instruction count.  debug/halt-poll-stamps.patch (never part of a
# posting) stamps where a wake event is published, where UMWAIT returns and
# where the poll loop's check sees the wake.  This applies it to a worktree
# of the tree's master (work/stamps-tree), builds the production-config
# kernel (vm.config + prod.config) from it in work/build-stamps, boots it
# on Bochs with APICv on and off at once, runs halt_poll_wake_test once per
# seed of COUNT_SEEDS (its wake schedule; default "1"), and prints, per
# APICv setting, wake path and knob, in instructions (medians over the
# blocks and seeds): a knob-0 spin iteration, the post-wake path (UMWAIT's
# return to the check that sees the wake) against half an iteration, and
# publish-to-seen; then the wake test's own p50 in ns, 20000 against 0,
# as the mean gap over the seeds with its spread.  Results:
# work/results/count-*.out, work/count/count.txt.
# No count file of its own: "make count" measures, it tests nothing.
SUITE=
. "$(dirname "$0")/lib.sh"

[ "$KBASE" = upstream ] || die "make count runs on the upstream base only (KBASE=$KBASE)"
SEEDS=${COUNT_SEEDS:-1}
for s in $SEEDS; do
	[[ "$s" =~ ^[0-9]+$ ]] || die "COUNT_SEEDS='$SEEDS': each seed is a number"
done
STREE=$WORK/stamps-tree
SBUILD=$WORK/build-stamps
OUT=$WORK/count
PATCH=$HARNESS/debug/halt-poll-stamps.patch
mkdir -p "$OUT"
# L1's TSC frequency under Bochs' sapphire_rapids model (its CPUID leaf
# 0x15): 2.2 TSC ticks, i.e. instructions, per ns of guest time.
BOCHS_TSC_MHZ=2200

if [ "${1:-}" != report ]; then
	git -C "$TREE" rev-parse -q --verify master >/dev/null || die "no tree (run 'make tree')"
	# A fresh worktree of master, with the stamps applied, every time.
	git -C "$TREE" worktree remove --force "$STREE" >/dev/null 2>&1 || rm -rf "$STREE"
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add -q --detach "$STREE" master >"$LOGS/count-tree.log" 2>&1 ||
		die "cannot make the worktree $STREE" "$LOGS/count-tree.log"
	git -C "$STREE" apply "$PATCH" >>"$LOGS/count-tree.log" 2>&1 ||
		die "$(basename "$PATCH") does not apply to the tree's master" "$LOGS/count-tree.log"
	say "stamps applied to master ($(git -C "$TREE" log -1 --format=%h master)) in $STREE"
	TREE=$STREE BUILD=$SBUILD FRAGMENT="$HARNESS/config/vm.config $HARNESS/config/prod.config" \
		"$HARNESS/scripts/build.sh" kernel
	BUILD=$SBUILD VM_TIMEOUT=${VM_TIMEOUT:-$((900 * $(wc -w <<<"$SEEDS")))} \
		apicv_boots count count "harness.count=${SEEDS// /:}"
fi

# The report: each run's blocks ("# PATH at KNOB: block started"), in
# order, zipped with its kvm-stamps lines (one per VM, i.e. per block), and
# its p50 lines.
for c in apicv-on apicv-off; do
	f=$RESULTS/count-$c-bochs.out
	[ -f "$f" ] || die "no results of the $c boot ($f)"
	awk -v conf="$c" '
		function flush(   i) {
			if (nb == 0 && ns == 0) return
			if (nb != ns) { printf "ERROR seed %s: %d blocks but %d stamp lines\n", seed, nb, ns; bad = 1 }
			for (i = 1; i <= nb && i <= ns; i++) print conf, seed, blk[i], st[i]
			nb = ns = 0
		}
		/^COUNT-RUN / { flush(); seed = substr($2, 6); next }
		/^COUNT-STATUS / { if ($2 != 0) { printf "ERROR seed %s: halt_poll_wake_test exited %s\n", seed, $2; bad = 1 } next }
		/block started/ { s = $0; sub(/^# /, "", s); split(s, a, " "); blk[++nb] = a[1] " " a[3] + 0; next }
		/^kvm-stamps: / { s = $0; sub(/^kvm-stamps: /, "", s); st[++ns] = s; next }
		/^kvm-stamps-seg: / { s = $0; sub(/^kvm-stamps-seg: vcpu=[0-9]+ /, "", s); st[ns] = st[ns] " " s; next }
		# "ok 1 ipi: 180 wakes at 0, ... p50 963 p90 ..." and "ok 2 ipi: at 20000, p50 943 ..."
		/^(not )?ok [0-9]+ [a-z]+: .*p50 [0-9]+/ {
			s = $0; sub(/^(not )?ok [0-9]+ /, "", s); p = s; sub(/:.*/, "", p)
			k = (s ~ /: at [0-9]+,/) ? s : ""
			if (k != "") { sub(/.*: at /, "", k); sub(/,.*/, "", k) } else k = 0
			v = s; sub(/.* p50 /, "", v); sub(/ .*/, "", v)
			print conf, seed, p, k, "testp50=" v
			next
		}
		END { flush(); exit bad }' "$f" || die "the $c results do not add up ($f)"
done >"$OUT/count.raw"

awk -v mhz="$BOCHS_TSC_MHZ" '
	function kv(s, key,   n, i, a, b) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) { split(a[i], b, "="); if (b[1] == key) return b[2] }
		return ""
	}
	function med(list,   n, a, i, j, t) {
		n = split(list, a, " ")
		if (!n) return "NA"
		for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	$5 ~ /^testp50=/ {
		k = $1 SUBSEP $3 SUBSEP $2
		v = substr($5, 9)
		if ($4 == 0) p0[k] = v; else pn[k] = v
		seeds[$1 SUBSEP $3] = seeds[$1 SUBSEP $3] " " $2
		next
	}
	{
		k = $1 SUBSEP $3 SUBSEP $4
		if (!(k in seen)) { order[++no] = k; seen[k] = 1 }
		it = kv($0, "iter"); if (it > 0 && kv($0, "spin_polls") >= 20) iter[k] = iter[k] " " it
		if (kv($0, "path_n") > 0) path[k] = path[k] " " kv($0, "path_p50")
		if (kv($0, "p2s_n") > 0) p2s[k] = p2s[k] " " kv($0, "p2s_p50")
		w[k] += kv($0, "waits"); pl[k] += kv($0, "polls")
		if (kv($0, "seg_n") > 0) {
			sg1[k] = sg1[k] " " kv($0, "seg_epilogue"); sg2[k] = sg2[k] " " kv($0, "seg_loop")
			sg3[k] = sg3[k] " " kv($0, "seg_to_on"); sg4[k] = sg4[k] " " kv($0, "seg_on_to_seen")
		}
	}
	END {
		print "Instructions (Bochs: one TSC tick per instruction), production-config kernel, medians over blocks and seeds:"
		print "iter: a knob-0 spin iteration; path: from the return of UMWAIT to the check that sees the wake;"
		print "seen: publish to that check, at 0 and at the knob; the wait is ahead of the spin where seen-diff < 0."
		printf "%-9s %-7s %6s %6s %6s %6s %8s %8s %9s %7s\n", "apicv", "path", "knob", "iter", "iter/2", "path", "seen@0", "seen@N", "seen-diff", "waits"
		for (i = 1; i <= no; i++) {
			split(order[i], a, SUBSEP)
			if (a[3] == 0) continue
			k0 = a[1] SUBSEP a[2] SUBSEP 0
			it = med(iter[k0]); s0 = med(p2s[k0]); sn = med(p2s[order[i]])
			printf "%-9s %-7s %6s %6s %6s %6s %8s %8s %9s %7d\n", a[1], a[2], a[3], it,
				it == "NA" ? "NA" : int(it / 2), med(path[order[i]]), s0, sn,
				(s0 == "NA" || sn == "NA") ? "NA" : sprintf("%+d", sn - s0), w[order[i]]
		}
		print ""
		print "The path in segments, where a posted interrupt (PID.ON) ended the wait: the wait function after"
		print "UMWAIT; the loop to the next check; the check to its PID.ON load; that load to the check return."
		printf "%-9s %-7s %6s %9s %6s %7s %11s\n", "apicv", "path", "knob", "epilogue", "loop", "to-ON", "ON-to-seen"
		for (i = 1; i <= no; i++) {
			if (!(order[i] in sg1)) continue
			split(order[i], a, SUBSEP)
			printf "%-9s %-7s %6s %9s %6s %7s %11s\n", a[1], a[2], a[3], med(sg1[order[i]]),
				med(sg2[order[i]]), med(sg3[order[i]]), med(sg4[order[i]])
		}
		print ""
		print "halt_poll_wake_test p50 (ns of guest time), knob 20000 minus knob 0, per seed; mean and spread."
		print "This kernel carries the stamps, whose bookkeeping after the check that sees a wake costs a woken wait"
		print "more than a spin: the production kernel'"'"'s gap is make model'"'"'s (PAUSE 1, exit 0)."
		for (k in seeds) {
			split(k, a, SUBSEP); n = split(seeds[k], s, " ")
			sum = 0; lo = ""; hi = ""; c = 0; line = ""
			for (j = 1; j <= n; j++) {
				kk = a[1] SUBSEP a[2] SUBSEP s[j]
				if (!(kk in p0) || !(kk in pn) || (kk in done)) continue
				done[kk] = 1
				d = pn[kk] - p0[kk]; c++; sum += d; line = line " " d
				if (lo == "" || d < lo) lo = d
				if (hi == "" || d > hi) hi = d
			}
			if (c) printf "%-9s %-7s seeds %2d: mean %+.1f ns, spread %+d..%+d (%s )\n", a[1], a[2], c, sum / c, lo, hi, line
			if (c) { gap[k] = sum / c; gk[++ng] = k }
		}
		print ""
		print "The break-even C0.1 exit: make model, which measures it in Bochs with a PAUSE cost and an exit delay."
	}' "$OUT/count.raw" | tee "$OUT/count.txt"
# The wakeup latency of host tasks woken on the polling CPU, and of
# signals and PV kicks (halt_poll_bench -w 20000 -P signal,kick,host,lazy), in ns.
{
	echo
	echo "halt_poll_bench: wakeup latency (ns) of a signal, of a PV kick (KVM_HC_KICK_CPU to a vCPU"
	echo "halted with IRQs off), of a SCHED_IDLE host task (host) and of a SCHED_OTHER one (lazy,"
	echo "preempting the vCPU thread lazily) woken on the polling CPU:"
	printf '%-9s %-7s %6s %6s %6s %6s %6s\n' apicv path knob p50 p90 p99 max
	for c in apicv-on apicv-off; do
		sed -n '/^COUNT-TASKS/,$p' "$RESULTS/count-$c-bochs.out" |
			awk -v c="$c" '/^result / {
				for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
				printf "%-9s %-7s %6s %6s %6s %6s %6s\n", c, v["path"], v["knob"], v["p50"], v["p90"], v["p99"], v["max"]
			}'
	done
} | tee -a "$OUT/count.txt"
say "the table: $OUT/count.txt; the raw lines: $OUT/count.raw"
