# SPDX-License-Identifier: GPL-2.0
# Harness for the KVM halt-poll TPAUSE series.  Targets name the stages;
# each stage is one script in scripts/.  See README.md.

SHELL := /bin/bash
S := scripts
WORK ?= $(CURDIR)/work
export WORK

.PHONY: all check run deps tree hygiene build kunit vm summary series quick check-each check-harness \
	check-fresh clean

all: check

deps:
	@$(S)/deps.sh

tree: deps
	@$(S)/tree.sh

hygiene: tree
	@$(S)/hygiene.sh

build: tree
	@$(S)/build.sh

kunit: build
	@$(S)/kunit.sh

vm: build
	@$(S)/vm.sh check

# All tests: the test stages run even if one fails, then the summary.
check: hygiene build
	@rm -f $(WORK)/results/*.count
	@st=0; $(S)/kunit.sh || st=1; $(S)/vm.sh check || st=1; \
		$(S)/demo-check.sh || st=1; $(S)/summary.sh && exit $$st

# The demo: boot the patched kernel and show the knob and the stats.
run: build
	@$(S)/vm.sh run

# Developer workflow: export the tree's commits back to patches/.
series:
	@$(S)/export-series.sh

# Fast iteration on the tree as it is (no re-apply): rebuild, boot, test.
quick:
	@rm -f $(WORK)/results/*.count
	@$(S)/build.sh && { st=0; $(S)/vm.sh check || st=1; $(S)/summary.sh && exit $$st; }

# Every patch of the series builds on its own (W=1, CONFIG_KVM_WERROR=y).
check-each: build
	@$(S)/each-patch.sh

# The harness's own tests: injected faults must turn it red.
check-harness: build
	@$(S)/check-harness.sh

# The README on a fresh system: "make check" in a fresh Debian 12 root.
check-fresh:
	@$(S)/deps.sh config/fresh.list
	@rm -f $(WORK)/results/*.count
	@$(S)/fresh.sh

clean:
	rm -rf $(WORK)/build-* $(WORK)/initramfs* $(WORK)/results $(WORK)/logs
