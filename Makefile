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

# Bad values of the variables below are refused here, before any target
# runs (scripts/vars.sh).
VARS_ERR := $(shell KBASE='$(KBASE)' DRY_RUN='$(DRY_RUN)' TESTS='$(TESTS)' \
	GUEST_TIMEOUT='$(GUEST_TIMEOUT)' VM_TIMEOUT='$(VM_TIMEOUT)' BENCH_REPS='$(BENCH_REPS)' \
	BACKENDS='$(BACKENDS)' BENCH_BACKEND='$(BENCH_BACKEND)' BACKEND='$(BACKEND)' \
	MODEL_PAUSE='$(MODEL_PAUSE)' MODEL_EXIT_NS='$(MODEL_EXIT_NS)' \
	$(S)/vars.sh $(MAKECMDGOALS))
ifneq ($(VARS_ERR),)
$(error $(VARS_ERR))
endif

.PHONY: all help check run deps tree hygiene build bochs kunit vm shell summary series quick check-each check-harness check-parsers lint bench bench-host count model \
	check-fresh check-6.12 check-matrix check-debug debug-kernel check-wide tcg-hangs clean

# A bare "make" prints the help, as the kernel's does: nothing installs or
# runs without a target.
.DEFAULT_GOAL := help
all: check

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
	@echo '  shell          - a busybox shell in the VM kernel'"'"'s guest on BACKEND, on this terminal'
	@echo '  kunit          - KUnit with kunit.py on kernels of their own (KUNIT_ARCHES="x86_64 i386")'
	@echo 'Benchmarks (docs/bench.md):'
	@echo '  bench          - the bench in the VM kernel on BENCH_BACKEND (bochs; qemu with KVM on a WAITPKG host)'
	@echo '  bench-host     - the same bench on this machine, booted with the series (as root)'
	@echo '  count          - the halt-poll path in instructions: TSC stamps in Bochs (COUNT_SEEDS)'
	@echo '  model          - where the wait breaks even: PAUSE cost x C0.1 exit in Bochs (MODEL_PAUSE, MODEL_EXIT_NS)'
	@echo 'Developer workflow:'
	@echo '  series         - export the posting branches of work/linux back to patches/$$KBASE/'
	@echo '  quick          - rebuild and boot the tree as it is, reusing every cache'
	@echo 'Wider checks:'
	@echo '  check-each     - every patch of both postings builds on its own (W=1, KVM_WERROR)'
	@echo '  check-matrix   - the build matrix of config/matrix.list (MATRIX=regex picks entries)'
	@echo '  check-6.12     - the 6.12 backport: hygiene, VM kernel, Bochs boots (CI runs it)'
	@echo '  check-fresh    - make check in a fresh debootstrap root, as on a new machine'
	@echo '  check-harness  - the harness'"'"'s own tests: injected faults must turn it red'
	@echo '  check-parsers  - the harness'"'"'s parsers against golden inputs (seconds; CI runs it)'
	@echo '  lint           - shellcheck of the harness'"'"'s scripts, relative links of its documents (CI runs it)'
	@echo '  debug-kernel   - build the debug kernel (config/debug.config) alone'
	@echo '  check-debug    - the debug kernel (KASAN, lockdep...) on DEBUG_BACKENDS'
	@echo '  check-wide     - upstream KVM selftests beyond the curated lists, base against series'
	@echo '  tcg-hangs      - hang rates of the series'"'"' selftests under nested QEMU TCG, base against series'
	@echo '  summary        - the per-suite counts and closing line of the last results'
	@echo '  clean          - remove the build directories, initramfs, results and logs'
	@echo 'Variables (docs/harness.md has the rest):'
	@echo '  KBASE=upstream|6.12  - the kernel base: Linux 7.3 (default) or Debian 12'"'"'s 6.12, in work/6.12'
	@echo '  BACKENDS="qemu bochs" - the VM backends of vm, check, quick and run, in order'
	@echo '  BACKEND=qemu|bochs   - the backend of make shell (default qemu)'
	@echo '  TESTS=regex          - only the selftests and guest checks whose names match (vm, quick, check)'
	@echo '  V=1                  - show each stage'"'"'s and each logged command as it runs'
	@echo '  DRY_RUN=1            - vm, shell: print each VM command line, build and boot nothing'
	@echo '  JOBS=N               - parallel jobs of the kernel builds (default: cores + 1)'
	@echo '  WORK=dir             - the work directory (default work/; KBASE=6.12 uses WORK/6.12)'
	@echo '  BENCH_BACKEND=bochs|qemu - the backend of make bench'
	@echo '  MATRIX=regex         - the entries of config/matrix.list that check-matrix builds'

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

# DRY_RUN=1: the VM command lines only, nothing built or booted.
vm: $(if $(DRY_RUN),,build)
	@$(S)/vm.sh check

# A busybox shell in the VM kernel's guest, on this terminal: BACKEND=qemu
# (the default) or bochs.
BACKEND ?= qemu
shell: $(if $(DRY_RUN),,build)
	@BACKENDS=$(BACKEND) $(S)/vm.sh shell

# All tests (scripts/check.sh check): the test stages run even if one
# fails, then the summary.
check:
	@$(S)/check.sh check

summary:
	@$(S)/summary.sh

lint: deps
	@$(S)/lint.sh

# The harness's parsers against golden inputs (scripts/testdata/).
check-parsers:
	@$(S)/test-parsers.sh

# The demo: build what it needs (no W=1 builds) and show the knobs and
# the stats.
run:
	@$(S)/check.sh run

# The numbers reviewers asked for (docs/bench.md): wake latency, power, CPU
# time and the halt-poll stats against the knobs, as a CSV, a table and
# plots in work/bench/.  "bench" boots the VM kernel on BENCH_BACKEND;
# "bench-host" runs on this machine, which must run a kernel with the series.
BENCH_BACKEND ?= bochs
export BENCH_BACKEND
bench: build
	@$(S)/bench.sh vm

# The halt-poll path counted in instructions (scripts/count.sh): a
# production-config kernel with debug/halt-poll-stamps.patch, and
# halt_poll_wake_test in Bochs, APICv on and off, once per seed of
# COUNT_SEEDS (default 1).
count: build
	@$(S)/count.sh

# Where the wait breaks even against the spin (scripts/model.sh): Bochs
# with a PAUSE cost and a C0.1 exit delay (bochs/0009), APICv on, knob 0
# against 20000, per PAUSE cost of MODEL_PAUSE (ticks) and exit delay of
# MODEL_EXIT_NS (ns); a table, the break-even delays and a plot in
# work/model/.  About 25 minutes with the defaults (15 boots of ten seeds).
model: build
	@$(S)/model.sh

# KTREE=DIR: a patched tree of your own; only the bench's tools are built
# against it (work/bench-tools), nothing else is fetched or built.
bench-host:
	@KTREE=$(KTREE) $(S)/bench.sh host

# Developer workflow: export the tree's commits back to patches/.
series:
	@$(S)/export-series.sh

# Fast iteration on the tree as it is (no re-apply): rebuild, boot, test.
quick:
	@$(S)/check.sh quick

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
# knob writes under load on each of DEBUG_BACKENDS (default "qemu bochs");
# any splat fails (scripts/check.sh debug).
debug-kernel: build
	@BUILD=$(WORK)/build-debug FRAGMENT="$(CURDIR)/config/vm.config $(CURDIR)/config/kunit.config $(CURDIR)/config/debug.config" $(S)/build.sh kernel

check-debug: debug-kernel
	@$(S)/check.sh debug

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
	@$(S)/check.sh fresh

# The 6.12 backport (patches/6.12/), as CI runs it: tree and hygiene, the VM
# kernel, and its boots on CHECK612_BACKENDS (default bochs): KUnit, the KVM
# selftests and the poll_idle() checks, every WAITPKG path of both
# postings.  "KBASE=6.12 make check" runs all of make check on 6.12 instead.
check-6.12:
	@$(S)/check.sh 6.12

clean:
	rm -rf $(WORK)/build-* $(WORK)/initramfs* $(WORK)/results $(WORK)/logs
