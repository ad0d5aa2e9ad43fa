# SPDX-License-Identifier: GPL-2.0
# Harness for the KVM halt-poll TPAUSE series.  Targets name the stages;
# each stage is one script in scripts/.  See README.md.

SHELL := /bin/bash
S := scripts
WORK ?= $(CURDIR)/work
export WORK

.PHONY: all check run deps tree hygiene build kunit vm summary series quick check-each check-harness \
	check-fresh check-7.2 check-matrix check-debug debug-kernel check-wide clean

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

# The build matrix of config/matrix.list on this base (KBASE): full W=1
# builds of each configuration, as the kernel test robot would.
check-matrix: tree
	@$(S)/deps.sh config/deps-matrix.list
	@$(S)/matrix.sh

# The debug kernel (config/vm.config + config/debug.config: lockdep, KASAN,
# UBSAN, KFENCE, atomic-sleep and preempt checks): the VM's checks and the
# knob writes under load on each of DEBUG_BACKENDS; any splat fails.
DEBUG_BACKENDS ?= qemu bochs
# no5lvl: with QEMU's -cpu max (LA57), KASAN reports a wild-memory-access in
# rcu_is_watching() from an interrupt during cpu_detect(), at boot, before
# any code of the series runs (README, "Reliability"); 4-level paging avoids
# it.
DEBUG_APPEND ?= no5lvl
# The seconds of knob writes under load, by the guest's clock.  Bochs' guest
# clock runs about 11 times slower than its emulated time (README, "Two VM
# backends"), and the debug kernel emulates at about 24M instructions a
# second there: 30 guest seconds would take about 45 minutes.
LOAD_S_QEMU ?= 30
LOAD_S_BOCHS ?= 3
debug-kernel: build
	@BUILD=$(WORK)/build-debug FRAGMENT="$(CURDIR)/config/vm.config $(CURDIR)/config/debug.config" \
		$(S)/build.sh kernel

check-debug: debug-kernel
	@rm -f $(WORK)/results/debug*.count
	@st=0; for b in $(DEBUG_BACKENDS); do \
		VM_SUITE=debug VM_APPEND="$(DEBUG_APPEND)" BUILD=$(WORK)/build-debug BACKENDS=$$b \
			SELFTESTS_LIST=$(CURDIR)/config/selftests-debug.list \
			SELFTESTS_LIST_BOCHS=$(CURDIR)/config/selftests-debug-bochs.list $(S)/vm.sh check || st=1; \
		VM_SUITE=debug VM_APPEND="$(DEBUG_APPEND)" BUILD=$(WORK)/build-debug BACKENDS=$$b \
			LOAD_S=$$([ $$b = bochs ] && echo $(LOAD_S_BOCHS) || echo $(LOAD_S_QEMU)) \
			$(S)/vm.sh load || st=1; \
		done; SUMMARY_GLOB='debug*' $(S)/summary.sh && exit $$st

# Upstream KVM selftests beyond the curated lists (config/selftests-wide.list)
# on the base kernel and on the series: no test that passes on the base may
# fail with the series.
check-wide: build
	@$(S)/wide.sh

# The README on a fresh system: "make check" in a fresh Debian 12 root.
check-fresh:
	@$(S)/deps.sh config/fresh.list
	@rm -f $(WORK)/results/*.count
	@$(S)/fresh.sh

# The other base, Linux 7.2 (patches-7.2/, the upstream posting), as CI runs
# it: tree, hygiene, KUnit on CHECK72_KUNIT_ARCHES (x86_64 and i386, two
# entries of the build matrix), the build matrix (all of it, or the entries MATRIX picks), and, with CHECK72_VM=1 (the default), the
# VM kernel and one QEMU VM run of the selftests and checks; with
# CHECK72_VM=0 the selftests are only built, against the KUnit kernel.  Its counts
# are also copied into work/results as 7.2-*, for the summary of the primary
# base.  "KBASE=7.2 make check" runs all of make check on 7.2 instead.
CHECK72_VM ?= 1
# The architectures of its KUnit run (each a matrix entry: kvm-y, i386).
CHECK72_KUNIT_ARCHES ?= x86_64 i386
check-7.2:
	@rm -f $(WORK)/7.2/results/*.count $(WORK)/results/7.2-*.count
	@mkdir -p $(WORK)/7.2/results
	@st=0; KBASE=7.2 $(MAKE) --no-print-directory hygiene || \
		{ st=1; echo "0 1 0" >$(WORK)/7.2/results/tree-hygiene.count; }; \
	if [ $$st = 0 ]; then \
		KBASE=7.2 KUNIT_ARCHES="$(CHECK72_KUNIT_ARCHES)" $(S)/kunit.sh || st=1; \
		if [ "$(CHECK72_VM)" = 1 ]; then \
			KBASE=7.2 BACKENDS=qemu $(S)/build.sh && KBASE=7.2 BACKENDS=qemu $(S)/vm.sh check || st=1; \
		else \
			KBASE=7.2 BACKENDS=qemu BUILD=$(WORK)/7.2/matrix-kvm-y $(S)/build.sh selftests || \
				{ st=1; echo "0 1 0" >$(WORK)/7.2/results/selftests-build.count; }; \
		fi; \
		KBASE=7.2 $(S)/deps.sh config/deps-matrix.list && KBASE=7.2 $(S)/matrix.sh || st=1; \
	fi; \
	for f in $(WORK)/7.2/results/*.count; do [ ! -e "$$f" ] || \
		cp "$$f" "$(WORK)/results/7.2-$$(basename "$$f")"; done; \
	KBASE=7.2 $(S)/summary.sh && exit $$st

clean:
	rm -rf $(WORK)/build-* $(WORK)/initramfs* $(WORK)/results $(WORK)/logs
