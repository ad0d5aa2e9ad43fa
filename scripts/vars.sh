#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The make variables that the harness reads, checked before any target
# runs (Makefile): a bad value is refused with its cause, and nothing is
# built, booted or removed.  Prints nothing when every value is good.
# Usage: vars.sh GOAL... (the goals of this make), with the variables in
# the environment.
bad() { echo "$*"; exit 1; }
uint() { [ -z "${2:-}" ] || [[ "$2" =~ ^[0-9]+$ && "$2" -gt 0 ]] || bad "$1='$2': a number of seconds (or runs) above 0"; }

case ${KBASE:-} in '' | upstream | 6.12) ;; *) bad "KBASE='$KBASE': upstream (the default) or 6.12" ;; esac
case ${DRY_RUN:-} in '' | 1) ;; *) bad "DRY_RUN='$DRY_RUN': 1 for a dry run, or unset" ;; esac
if [ -n "${TESTS:-}" ]; then
	[[ ! "$TESTS" =~ [[:space:]] ]] || bad "TESTS='$TESTS': one extended regular expression, without spaces (use [[:space:]] or |)"
	echo | grep -qE -- "$TESTS" 2>/dev/null
	[ $? != 2 ] || bad "TESTS='$TESTS' is not a valid extended regular expression"
fi
uint GUEST_TIMEOUT "${GUEST_TIMEOUT:-}"
uint VM_TIMEOUT "${VM_TIMEOUT:-}"
uint BENCH_REPS "${BENCH_REPS:-}"
for b in ${BACKENDS:-}; do
	case $b in qemu | bochs) ;; *) bad "BACKENDS='$BACKENDS': qemu and/or bochs" ;; esac
done
case ${BENCH_BACKEND:-bochs} in qemu | bochs) ;; *) bad "BENCH_BACKEND='$BENCH_BACKEND': bochs (the default) or qemu" ;; esac
case ${BACKEND:-qemu} in qemu | bochs) ;; *) bad "BACKEND='$BACKEND': qemu (the default) or bochs" ;; esac
for v in ${MODEL_PAUSE:-}; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || bad "MODEL_PAUSE='$MODEL_PAUSE': PAUSE costs in ticks, each at least 1"
done
for v in ${MODEL_EXIT_NS:-}; do
	[[ "$v" =~ ^[0-9]+$ ]] || bad "MODEL_EXIT_NS='$MODEL_EXIT_NS': C0.1 exit delays in ns"
done
if [ "${KBASE:-}" = 6.12 ]; then
	for g; do
		case $g in run | bench | bench-host | count | model)
			bad "KBASE=6.12 make $g: the $g target runs on the upstream base only" ;;
		esac
	done
fi
exit 0
