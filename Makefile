# SPDX-License-Identifier: GPL-2.0
#
# dtimerfd: the user-facing driver around kbuild, the library, the guest
# tests and the QEMU harness.  The module is never loaded on this machine:
# `make check` and `make demo` boot a QEMU guest (vm/) and load it there.
#
#   make                 module/dtimerfd.ko, userlib/libdtimerfd.{a,so}, tests
#   make deps            install what is missing with apt-get (needs root)
#   make check           deps, build, lint, the test suite in the guest
#   make demo            deps, build, boot, strict vs deferrable side by side
#   make KVER=6.12.117+deb12-amd64 check   the same on another kernel

# The kbuild part lives in ./Kbuild and module/Kbuild.
ifneq ($(KERNELRELEASE),)
include $(src)/Kbuild
else

SHELL := /bin/bash
TOP := $(CURDIR)

# Newest installed Debian amd64 kernel headers, unless KVER= says otherwise.
KVER ?= $(shell vm/kver)
KDIR ?= /lib/modules/$(KVER)/build
export KVER KDIR

DTIMERFD_VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo 0.1)
# BTF for modules needs the kernel's vmlinux, which headers packages lack.
KBUILD_ARGS := -C $(KDIR) M=$(TOP) DTIMERFD_VERSION=$(DTIMERFD_VERSION) \
	CONFIG_DEBUG_INFO_BTF_MODULES=

.PHONY: all module userlib tests examples deps check check-quick demo lint \
	checkpatch sparse uapi-check warnings kdir-check bench bench-smoke \
	debug-kernel clean help

all: module userlib tests

module: kdir-check
	$(MAKE) $(KBUILD_ARGS) modules

userlib:
	$(MAKE) -C userlib

tests: userlib
	$(MAKE) -C tests

kdir-check:
	@if [ -z "$(KVER)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "dtimerfd: no kernel headers for '$(KVER)' in $(KDIR); run 'make deps' (as root)" >&2; \
		exit 1; fi

deps:
	vm/deps

check: deps
	$(MAKE) all
	$(MAKE) lint
	vm/check

demo: deps
	$(MAKE) all
	vm/demo

# Not part of `make check` (it takes a while); bench-smoke is.
bench: deps
	$(MAKE) all
	bench/run

bench-smoke:
	bench/run --quick

# A small KASAN + lockdep + kmemleak kernel from linux-source-6.1, cached
# under /var/cache/dtimerfd.
debug-kernel: deps
	vm/build-debug-kernel

lint: uapi-check checkpatch sparse warnings

# W=1 adds kernel-doc and extra warnings: the module must stay silent.
warnings: kdir-check
	@out=$$($(MAKE) $(KBUILD_ARGS) W=1 -B modules 2>&1 | grep -E 'warning|error' || true); \
	if [ -n "$$out" ]; then echo "$$out"; echo "W=1: warnings" >&2; exit 1; fi; \
	echo "  W=1     module/: no warnings ($(KVER))"

uapi-check:
	@echo '#include <linux/dtimerfd.h>' | $(CC) -std=c90 -Wall -Werror \
		-Iinclude/uapi -fsyntax-only -x c - && echo "  UAPI    include/uapi/linux/dtimerfd.h: compiles alone (c90)"

checkpatch:
	scripts/checkpatch

sparse: kdir-check
	@out=$$($(MAKE) $(KBUILD_ARGS) C=2 modules 2>&1 | grep -vE '^(make|  (CC|CHECK|LD|MODPOST|BTF)|Skipping BTF)' | grep -v 'Entering directory\|Leaving directory'); \
	if [ -n "$$out" ]; then echo "$$out"; echo "sparse: not silent" >&2; exit 1; fi; \
	echo "  SPARSE  module/: silent"

clean:
	-[ -d "$(KDIR)" ] && $(MAKE) $(KBUILD_ARGS) clean
	$(MAKE) -C userlib clean
	$(MAKE) -C tests clean
	rm -rf build

help:
	@sed -n '3,12p' Makefile

endif
