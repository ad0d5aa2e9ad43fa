# SPDX-License-Identifier: GPL-2.0
# Harness for the KVM halt-poll TPAUSE series.  Targets name the stages;
# each stage is one script in scripts/.  See README.md.

SHELL := /bin/bash
S := scripts
WORK ?= $(CURDIR)/work
export WORK

.PHONY: all check run deps tree hygiene build kunit vm summary series quick check-each check-harness \
	check-fresh check-7.2 clean

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

# The other base, Linux 7.2 (patches-7.2/, the upstream posting), as CI runs
# it: tree, hygiene, the builds (VM kernel, W=1 for x86_64 and i386, the
# selftests), KUnit for x86_64 (i386 is compiled by the W=1 build; its KUnit
# kernel would add about 12 minutes to a cold CI), and the QEMU VM's
# selftests and checks.  Its counts are
# also copied into work/results as 7.2-*, for the summary of the primary
# base.  "KBASE=7.2 make check" runs all of make check on 7.2 instead.
check-7.2:
	@rm -f $(WORK)/7.2/results/*.count $(WORK)/results/7.2-*.count
	@mkdir -p $(WORK)/7.2/results
	@st=0; KBASE=7.2 $(MAKE) --no-print-directory hygiene build || \
		{ st=1; echo "0 1 0" >$(WORK)/7.2/results/tree-hygiene-build.count; }; \
		if [ $$st = 0 ]; then KBASE=7.2 KUNIT_ARCHES=x86_64 $(S)/kunit.sh || st=1; \
		KBASE=7.2 BACKENDS=qemu $(S)/vm.sh check || st=1; fi; \
		for f in $(WORK)/7.2/results/*.count; do [ ! -e "$$f" ] || \
			cp "$$f" "$(WORK)/results/7.2-$$(basename "$$f")"; done; \
		KBASE=7.2 $(S)/summary.sh && exit $$st

clean:
	rm -rf $(WORK)/build-* $(WORK)/initramfs* $(WORK)/results $(WORK)/logs
