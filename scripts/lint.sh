#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage "lint": the harness's own scripts and documents.
#  - shellcheck, at severity warning: the host scripts (bash, with lib.sh
#    followed), the guest's scripts (POSIX sh, for busybox) and .ci/run;
#    an exception is a "shellcheck disable" line with its reason;
#  - every relative link of every Markdown file points at a file or
#    directory that exists.
SUITE=lint
. "$(dirname "$0")/lib.sh"

command -v shellcheck >/dev/null || die "shellcheck not found (apt-get install shellcheck; config/deps.list)"
pass=0 fail=0
cd "$HARNESS"

if shellcheck -x -P SCRIPTDIR -S warning -f gcc scripts/*.sh scripts/backend/*.sh .ci/run >"$LOGS/lint-shellcheck.log" 2>&1 &&
	shellcheck -s sh -S warning -f gcc scripts/guest/init scripts/guest/demo scripts/guest/load \
		scripts/guest/bench scripts/guest/can_wait >>"$LOGS/lint-shellcheck.log" 2>&1; then
	pass=$((pass + 1))
	say "shellcheck: clean"
else
	fail=$((fail + 1))
	sed 's/^/  /' "$LOGS/lint-shellcheck.log" | head -n 20 >&2
	say "shellcheck: findings above ($LOGS/lint-shellcheck.log)"
fi

# Relative links: [text](path) and [text](path#anchor), not URLs, not
# anchors alone.
# shellcheck disable=SC2046 # one argument per file
bad=$(dead_links $(git ls-files '*.md' ':!scripts/testdata/'))
if [ -z "$bad" ]; then
	pass=$((pass + 1))
	say "links: every relative link of the Markdown files resolves"
else
	fail=$((fail + 1))
	sed 's/^/  dead link: /' <<<"$bad" >&2
	say "links: $(wc -l <<<"$bad") dead link(s), above"
fi

record lint "$pass" "$fail" 0
[ "$fail" = 0 ] || die "lint found problems (above)"
