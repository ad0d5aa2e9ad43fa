# SPDX-License-Identifier: GPL-2.0
# Harness for the KVM halt-poll TPAUSE series.  Targets name the stages;
# each stage is one script in scripts/.  See README.md.

SHELL := /bin/bash
S := scripts
WORK ?= $(CURDIR)/work
# KBASE=6.12: every target works in work/6.12, as scripts/lib.sh does, so
# that the recipes' $(WORK) and the scripts' agree (make clean cleans 6.12's
# builds, check-debug builds into 6.12's work directory).
ifeq ($(KBASE),6.12)
ifneq ($(notdir $(WORK)),6.12)
WORK := $(WORK)/6.12
endif
endif
export WORK

.PHONY: all help check run deps tree hygiene build bochs kunit vm summary series quick check-each check-harness lint bench bench-host \
	check-fresh check-6.12 check-matrix check-debug debug-kernel check-wide tcg-hangs clean

# A bare "make" prints the help, as the kernel's does: nothing installs or
# runs without a target.
.DEFAULT_GOAL := help
all: check

# The suites that each summary needs (scripts/summary.sh): one missing is a
# failure.
# BACKENDS is set below.
CHECK_SUITES = bench-test $(foreach b,$(BACKENDS),vm-$(b) vm-$(b)-kunit demo-$(b))
QUICK_SUITES = $(foreach b,$(BACKENDS),vm-$(b) vm-$(b)-kunit)

help:
	@echo 'The two commands (README.md):'
	@echo '  run            - the demo: boot the patched kernel on both VM backends, show the knobs at work'
	@echo '  check          - all tests: hygiene, build, KUnit and selftests in both VMs, the demo'
	@echo 'Stages (each is one script in scripts/):'
	@echo '  deps           - install the Debian packages and fetch the pinned kernel source'
	@echo '  tree           - work/linux: tag base, a branch per posting (kvm, cpuidle), master merging them'
	@echo '  hygiene        - series files, either application order, round trip, checkpatch --strict'
	@echo '  build          - VM kernel (with the KUnit suites), W=1 x86_64 and i386, selftests, Bochs'
	@echo '  bochs          - Bochs alone, from Debian source with the fixes in bochs/'
	@echo '  vm             - boot the VM kernel on BACKENDS and run KUnit, the selftests and checks'
	@echo '  kunit          - KUnit with kunit.py on kernels of their own (KUNIT_ARCHES="x86_64 i386")'
	@echo 'Benchmarks (docs/bench.md):'
	@echo '  bench          - the bench in the VM kernel on BENCH_BACKEND (bochs; qemu with KVM on a WAITPKG host)'
	@echo '  bench-host     - the same bench on this machine, booted with the series (as root)'
	@echo 'Developer workflow:'
	@echo '  series         - export the posting branches of work/linux back to patches/$$KBASE/'
	@echo '  quick          - rebuild and boot the tree as it is, reusing every cache'
	@echo 'Wider checks:'
	@echo '  check-each     - every patch of both postings builds on its own (W=1, KVM_WERROR)'
	@echo '  check-matrix   - the build matrix of config/matrix.list (MATRIX=regex picks entries)'
	@echo '  check-6.12     - the 6.12 backport: hygiene, VM kernel, Bochs boots (CI runs it)'
	@echo '  check-fresh    - make check in a fresh debootstrap root, as on a new machine'
	@echo '  check-harness  - the harness'"'"'s own tests: injected faults must turn it red'
	@echo '  lint           - shellcheck of the harness'"'"'s scripts, relative links of its documents (CI runs it)'
	@echo '  debug-kernel   - build the debug kernel (config/debug.config) alone'
	@echo '  check-debug    - the debug kernel (KASAN, lockdep...) on DEBUG_BACKENDS'
	@echo '  check-wide     - upstream KVM selftests beyond the curated lists, base against series'
	@echo '  tcg-hangs      - hang rates of the series'"'"' selftests under nested QEMU TCG, base against series'
	@echo '  summary        - the per-suite counts and closing line of the last results'
	@echo '  clean          - remove the build directories, initramfs, results and logs'
	@echo 'Variables: KBASE=upstream|6.12 (default upstream, Linux 7.3), BACKENDS="qemu bochs".'

deps:
	@$(S)/deps.sh

tree: deps
	@$(S)/tree.sh

hygiene: tree
	@$(S)/hygiene.sh

build: tree
	@$(S)/build.sh

# Bochs alone (build.sh builds it last when it is a backend).  make check
# and make run build it while tree and hygiene run: those use one core,
# and a cold Bochs build takes the other (make -j2 of the two).  MAKEFLAGS
# is emptied: Bochs' own make runs -j$$JOBS, outside this jobserver.
BACKENDS ?= qemu bochs
export BACKENDS
bochs: deps
	@MAKEFLAGS= $(S)/bochs.sh build

# KUnit with kunit.py on kernels of their own (the build matrix's kvm-y,
# and i386 with KUNIT_ARCHES="x86_64 i386"); make check runs the same
# suites in the VM kernel instead.
kunit: tree
	@$(S)/kunit.sh

vm: build
	@$(S)/vm.sh check

# All tests: the test stages run even if one fails, then the summary.  The
# series' KUnit suites run in the VM kernel, on both backends (vm.sh).  The
# demo runs alongside the VM stage: a Bochs boot is one host thread, and
# its time is emulated, so the demo's boot and the check's two share the
# host's cores without changing what any of them measures.
check:
	@$(MAKE) --no-print-directory -j2 hygiene $(filter bochs,$(BACKENDS))
	@$(MAKE) --no-print-directory build
	@rm -f $(WORK)/results/*.count
	@st=0; $(S)/bench.sh test || st=1; \
		$(S)/vm.sh check & vm=$$!; \
		$(S)/demo-check.sh || st=1; wait $$vm || st=1; \
		SUMMARY_REQUIRE="$(CHECK_SUITES)" $(S)/summary.sh && exit $$st

summary:
	@$(S)/summary.sh

lint: deps
	@$(S)/lint.sh

# The demo: boot the patched kernel and show the knob and the stats.
run:
	@$(MAKE) --no-print-directory -j2 tree $(filter bochs,$(BACKENDS))
	@$(MAKE) --no-print-directory build
	@$(S)/vm.sh run

# The numbers reviewers asked for (docs/bench.md): wake latency, power, CPU
# time and the halt-poll stats against the knobs, as a CSV, a table and
# plots in work/bench/.  "bench" boots the VM kernel on BENCH_BACKEND;
# "bench-host" runs on this machine, which must run a kernel with the series.
BENCH_BACKEND ?= bochs
export BENCH_BACKEND
bench: build
	@$(S)/bench.sh vm

bench-host: tree
	@$(S)/build.sh config && BACKENDS=qemu $(S)/build.sh selftests && $(S)/bench.sh host

# Developer workflow: export the tree's commits back to patches/.
series:
	@$(S)/export-series.sh

# Fast iteration on the tree as it is (no re-apply): rebuild, boot, test.
quick:
	@rm -f $(WORK)/results/*.count
	@$(S)/build.sh && { st=0; $(S)/vm.sh check || st=1; \
		SUMMARY_REQUIRE="$(QUICK_SUITES)" $(S)/summary.sh && exit $$st; }

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
# any code of the series runs (docs/v2-harness-notes.md, "Reliability");
# 4-level paging avoids it.
DEBUG_APPEND ?= no5lvl
# The seconds of knob writes under load, by the guest's clock.  Bochs' guest
# clock runs about 11 times slower than its emulated time (docs/backends.md),
# and the debug kernel emulates at about 24M instructions a second there: 30
# guest seconds would take about 45 minutes.
LOAD_S_QEMU ?= 30
LOAD_S_BOCHS ?= 3
debug-kernel: build
	@BUILD=$(WORK)/build-debug FRAGMENT="$(CURDIR)/config/vm.config $(CURDIR)/config/kunit.config $(CURDIR)/config/debug.config" \
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

# The series' selftests under nested QEMU TCG, TCG_BOOTS boots (default 10)
# of the base kernel and of the series, alternating: how often each hangs.
tcg-hangs: build
	@$(S)/tcg-hangs.sh

# The README on a fresh system: "make check" in a fresh Debian 12 root.
check-fresh:
	@$(S)/deps.sh config/fresh.list
	@rm -f $(WORK)/results/*.count
	@$(S)/fresh.sh

# The 6.12 backport (patches/6.12/), as CI runs it: tree and hygiene, the VM
# kernel, and its Bochs boots: KUnit, the KVM selftests and the poll_idle()
# checks, every WAITPKG path of both postings.  Its counts are also copied
# into work/results as 6.12-*, for the summary of the primary base.
# "KBASE=6.12 make check" runs all of make check on 6.12 instead.
CHECK612_BACKENDS ?= bochs
check-6.12:
	@[ "$(KBASE)" != 6.12 ] || { echo "check-6.12 tests the 6.12 backport itself: run it without KBASE (KBASE=6.12 make check runs make check on 6.12)" >&2; exit 2; }
	@rm -f $(WORK)/6.12/results/*.count $(WORK)/results/6.12-*.count
	@mkdir -p $(WORK)/6.12/results
	@st=0; KBASE=6.12 $(MAKE) --no-print-directory hygiene || \
		{ st=1; echo "0 1 0" >$(WORK)/6.12/results/tree-hygiene.count; }; \
	if [ $$st = 0 ]; then \
		KBASE=6.12 BACKENDS="$(CHECK612_BACKENDS)" $(S)/build.sh kernel && \
		KBASE=6.12 BACKENDS="$(CHECK612_BACKENDS)" $(S)/build.sh selftests && \
		KBASE=6.12 BACKENDS="$(CHECK612_BACKENDS)" $(S)/vm.sh check || st=1; \
	fi; \
	for f in $(WORK)/6.12/results/*.count; do [ ! -e "$$f" ] || \
		cp "$$f" "$(WORK)/results/6.12-$$(basename "$$f")"; done; \
	KBASE=6.12 SUMMARY_REQUIRE="$(foreach b,$(CHECK612_BACKENDS),vm-$(b) vm-$(b)-kunit)" \
		$(S)/summary.sh && exit $$st

clean:
	rm -rf $(WORK)/build-* $(WORK)/initramfs* $(WORK)/results $(WORK)/logs
