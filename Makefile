# SPDX-License-Identifier: GPL-2.0
#
# dtimerfd: the user-facing driver around kbuild, the library, the guest
# tests and the QEMU harness.  The module is never loaded on this machine:
# `make check` and `make demo` boot a QEMU guest (vm/) and load it there.
#
#   make                 module/dtimerfd.ko, userlib/libdtimerfd.{a,so}, tests
#   make deps            install what is missing with apt-get (needs root)
#   make check           deps, build, lint, a smoke run of the benchmark,
#                        the runner's self-test, the test suite in the guest
#   make check-suite     the same without the smoke run and the self-test
#   make demo            deps, build, boot, strict vs deferrable side by side
#   make KVER=6.12.117+deb12-amd64 check   the same on another kernel
#   make ARCH=arm64 check   the same for arm64: module and programs
#                        cross-built, the guest an emulated arm64 (vm/arch.sh)
#   make kernels         what KVER= can name: installed, in the host's suite,
#                        in other suites (built and booted from a cached root)
#   make install         module (updates/), library, headers, pkg-config,
#                        man pages, udev rule, modules-load.d; DESTDIR, PREFIX
#   make dkms-install    the module's sources under /usr/src for DKMS
#   make check-install   install, use as README says (guest), uninstall,
#                        nothing left (root; scripts/install-test)
#   make check-dkms      dkms add/build/install/remove on each kernel (root)
#   make check-dracut    boot with a dracut initramfs, module from install (root)
#   make check-system    a real Debian 12 (systemd, udev) booted with dtimerfd
#                        installed, without and with the shim in ld.so.preload:
#                        checks and idle wake-ups (root; vm/system/)
#   make demo-system     the same boots, only the wake-ups side by side (bars)
#   make compare-system  the shim against systemd's TimerSlackNSec= there:
#                        5 boots per arm, bounds 10/33/100 %, a plot (root)
#   make check-system-suites  CPython's own tests there: without the shim,
#                        under policy none and the default (root; ~20 min)
#   make check-host-trixie  make deps && make check in a Debian 13 root (root)
#   make check-debug     suite, 10M fuzz calls, 10 min stress, 1,000 load/unload
#                        cycles on the KASAN/lockdep/kmemleak kernel, then
#                        the four lanes below (~2.5 h; --quick: see vm/check-debug)
#   make check-faults    every call under fail-nth (failslab, fail_page_alloc,
#                        fail_usercopy): timerfd's errnos, no leak (debug kernel)
#   make check-kcsan     races, stress and deferrable on a KCSAN kernel: no
#                        data race in the module (the kernel's own listed)
#   make check-lockstat  the scale benchmark on a CONFIG_LOCK_STAT kernel, 4
#                        vCPUs: contentions per acquisition of each lock
#   make check-coverage  gcov of module/ over the suite, stress, races, faults:
#                        >= 95 % of lines, the rest in vm/coverage-exempt
#   make check-nohz      stress, then timers on CPU 0 must not interrupt a
#                        nohz_full CPU 1 (Debian's kernel, nohz_full=1)
#   make check-intree    patches/ on Linux 7.2 (each patch built on its own,
#                        checkpatch), booted: the suite's in-tree backend
#                        and the kselftests, KASAN/lockdep (~45 min; root)
#   make check-stress    10 min of races and stress (clock steps, hotplug,
#                        race_delay_us) on KVER, module built with -DDTFD_DEBUG
#   make check-all       make check and check-stress on every installed and
#                        prepared kernel and on unstable's newest (and -rt),
#                        then check-host-trixie and check-debug
#   make check-all-kernels  the kernels check-all runs on, one a line

# The kbuild part lives in ./Kbuild and module/Kbuild.  DKMS runs
# `make KERNELRELEASE=<kernel> module ...`: a KERNELRELEASE from the
# command line is a request for that kernel, not kbuild reading this file.
ifneq ($(filter-out undefined command line,$(origin KERNELRELEASE)),)
include $(src)/Kbuild
else

SHELL := /bin/bash
TOP := $(CURDIR)

# ARCH (amd64, arm64; the machine's own by default) and its facts.
include $(TOP)/vm/arch.mk

# Newest installed Debian kernel headers of ARCH's flavour (amd64: in
# /usr/src; another architecture's: prepared by vm/kernel), unless KVER=
# says otherwise.
ifeq ($(strip $(KVER)),)
KVER := $(shell ARCH=$(ARCH) vm/kver)
endif
# Another architecture's headers are never installed here: vm/kernel
# unpacked them into its cache (the same path in the build root).
ifeq ($(origin KDIR),undefined)
KDIR := $(if $(ARCH_NATIVE),/lib/modules/$(KVER)/build,$(shell $(TOP)/vm/kernel headers $(KVER)))
endif
# A kernel the host's suite does not carry (7.2 from unstable on Debian 12)
# is built for in a cached root of the suite that does, with the compiler
# its headers name (vm/kernel); there KDIR is the root's path.
KROOT := $(if $(KVER),$(if $(wildcard $(TOP)/vm/kernel),$(shell $(TOP)/vm/kernel root $(KVER))))
KMAKE := $(if $(KROOT),$(TOP)/vm/kernel exec $(KVER) -- make,$(MAKE))
KDIR_HOST := $(if $(and $(KROOT),$(ARCH_NATIVE)),$(KROOT)/usr/src/linux-headers-$(KVER),$(KDIR))
# Exported only once known: on a bare machine the sub-makes of check and
# demo must look again after `deps` has installed the headers.
ifneq ($(KVER),)
export KVER KDIR
endif

VERSION := $(shell cat $(TOP)/VERSION)
DTIMERFD_VERSION ?= $(VERSION)$(shell g=$$(git -C $(TOP) describe --always --dirty 2>/dev/null) && echo +$$g)
# BTF for modules needs the kernel's vmlinux, which headers packages lack.
# ARCH_KBUILD: kbuild's ARCH (and CROSS_COMPILE), never ours.
# The tools (vm/, scripts/, bench/) read ARCH from their environment,
# where make leaves it out (kbuild would take it): each recipe that runs
# one of ARCH's passes it so.
TOOL_ARCH := ARCH=$(ARCH)

KBUILD_ARGS := -C $(KDIR) M=$(TOP) DTIMERFD_VERSION=$(DTIMERFD_VERSION) \
	CONFIG_DEBUG_INFO_BTF_MODULES= $(ARCH_KBUILD)

.PHONY: all module userlib tests examples utils guest deps kernels check check-suite check-suite-guest check-quick demo lint optimum-test \
	checkpatch sparse uapi-check warnings man-check version-check kdir-check bench bench-smoke \
	debug-kernel install install-module install-lib install-man install-tools \
	install-data uninstall check-install dkms-install check-dkms check-dracut check-host-trixie check-debug check-stress \
	check-faults check-kcsan check-lockstat check-coverage check-nohz check-intree \
	check-all check-all-kernels clean clean-module help

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
SBINDIR ?= $(PREFIX)/sbin
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
UDEVRULESDIR ?= /usr/lib/udev/rules.d
MODULESLOADDIR ?= /usr/lib/modules-load.d
DKMSDIR ?= /usr/src/dtimerfd-$(VERSION)
INSTALL ?= install
# the live system's loader cache knows the new library (no DESTDIR only)
LDCONFIG ?= ldconfig

all: module userlib tests examples utils guest

module: kdir-check
	$(KMAKE) $(KBUILD_ARGS) modules

userlib:
	$(MAKE) -C userlib

tests: userlib
	$(MAKE) -C tests

examples: userlib
	$(MAKE) -C examples

utils:
	$(MAKE) -C utils

# The guest's own programs, static (the guest has no libc): vm/init.c,
# PID 1 of every vm/run boot, tests/lifecycle.c (vm/check-debug's load and
# unload cycles), the dracut lane's check programs and its copy of the
# kernel-report list; examples/demo.c (make demo) is one of the examples.
# Those that scan the kernel log compile in build/vm/splat.h, made from
# vm/splat.txt, the one list of kernel reports.  Each is written under a
# temporary name and renamed: lanes running side by side may build at
# once.  userlib comes first: dtfd-user links its static library.  Another
# ARCH's go to build/ARCH/vm/, with the ports that guest has (vm/arch.sh).
GUEST_CC ?= $(if $(ARCH_NATIVE),gcc,$(CC))
GUEST_CFLAGS := -static -O2 -Wall -Wextra -Werror -Ibuild/vm -Iinclude/uapi \
	$(ARCH_CFLAGS) $(ARCH_GUEST_CFLAGS)
GV := build/$(ARCH_OUT)vm
ULIB := userlib/$(ARCH_OUT)
GUEST := $(GV)/init $(GV)/lifecycle.d/lifecycle \
	$(GV)/dracut/dtfd-user $(GV)/dracut/runas build/vm/dracut/splat.ere
guest-tmp = $@.$$$$

guest: userlib $(GUEST)

build/vm/splat.h: vm/splat.txt vm/lib.sh
	@mkdir -p $(@D)
	$(SHELL) -c '. vm/lib.sh && splat_header' >$(guest-tmp) && mv -f $(guest-tmp) $@

build/vm/dracut/splat.ere: vm/splat.txt vm/lib.sh
	@mkdir -p $(@D)
	$(SHELL) -c '. vm/lib.sh && splat_ere' >$(guest-tmp) && mv -f $(guest-tmp) $@

$(GV)/init: vm/init.c tests/util.c tests/util.h examples/irqs.h build/vm/splat.h
	@mkdir -p $(@D)
	$(GUEST_CC) $(GUEST_CFLAGS) -Itests -o $(guest-tmp) $< tests/util.c -lpthread && mv -f $(guest-tmp) $@

$(GV)/lifecycle.d/lifecycle: tests/lifecycle.c build/vm/splat.h include/uapi/linux/dtimerfd.h
	@mkdir -p $(@D)
	$(GUEST_CC) $(GUEST_CFLAGS) -o $(guest-tmp) $< -lpthread && mv -f $(guest-tmp) $@

# userlib's own make builds the library: make -j waits for it here
$(ULIB)libdtimerfd.a: | userlib
	@:

$(GV)/dracut/dtfd-user: vm/dracut/dtfd-user.c $(ULIB)libdtimerfd.a userlib/dtimerfd.h
	@mkdir -p $(@D)
	$(GUEST_CC) $(GUEST_CFLAGS) -Iuserlib -o $(guest-tmp) $< $(ULIB)libdtimerfd.a && mv -f $(guest-tmp) $@

$(GV)/dracut/runas: vm/dracut/runas.c
	@mkdir -p $(@D)
	$(GUEST_CC) $(GUEST_CFLAGS) -o $(guest-tmp) $< && mv -f $(guest-tmp) $@

kdir-check:
	@if [ -z "$(KVER)" ] || [ ! -d "$(KDIR_HOST)" ]; then \
		echo "dtimerfd: no kernel headers for '$(KVER)' in $(KDIR_HOST); run 'make deps' (as root)" >&2; \
		exit 1; fi

deps:
	$(TOOL_ARCH) vm/deps

kernels:
	@$(TOOL_ARCH) vm/kernel list

# check-suite: the build, lint and the suite at 2 vCPUs, then the
# deferrable promises again at 4 (riding whichever CPU is awake must hold
# with more than one other CPU).  check adds the benchmark's smoke run and
# the runner's self-test, which say nothing new on a second kernel: CI
# runs check once and check-suite on every other kernel.
check: deps
	$(MAKE) all
	$(MAKE) lint
	$(MAKE) bench-smoke
	$(TOOL_ARCH) vm/selftest --kernel $(KVER)
	$(MAKE) check-suite-guest

check-suite: deps
	$(MAKE) all
	$(MAKE) lint
	$(MAKE) check-suite-guest

check-suite-guest:
	$(TOOL_ARCH) vm/check
	$(TOOL_ARCH) SMP=4 vm/check deferrable-m64

demo: deps
	$(MAKE) all
	$(TOOL_ARCH) vm/demo

# Not part of `make check` (it takes a while); bench-smoke, the same
# pipeline with fewer samples, is, and keeps its output out of bench/.
bench: deps
	$(MAKE) all
	$(TOOL_ARCH) bench/run

bench-smoke:
	$(TOOL_ARCH) bench/run --quick --out build/bench-smoke

# A small KASAN + lockdep + kmemleak kernel from linux-source-6.1, cached
# under /var/cache/dtimerfd.
debug-kernel: deps
	vm/build-debug-kernel

# The stress lane on KVER (vm/check-stress): a debug build of the module in
# build/stress/KVER, tests/races and STRESS_SECONDS of tests/stress.
STRESS_SECONDS ?= 600
check-stress: deps
	$(MAKE) userlib tests
	$(TOOL_ARCH) vm/check-stress --kernel $(KVER) --seconds $(STRESS_SECONDS)

# The in-tree lane (vm/check-intree): the TFD_TIMER_DEFERRABLE series of
# patches/ on Debian's linux-source-7.2, built patch by patch and booted.
check-intree: deps
	$(MAKE) userlib tests
	vm/check-intree

# The debug lane on that kernel (vm/check-debug): the suite, then fuzz,
# stress and lifecycle runs long enough to count; about 1.5 hours.
check-debug: deps
	$(MAKE) userlib tests
	vm/check-debug

# The lanes of issue 25, each on its own (vm/check-debug runs them too).
check-faults: deps
	$(MAKE) userlib tests
	vm/check-faults

check-kcsan: deps
	$(MAKE) userlib tests
	vm/check-kcsan

check-lockstat: deps
	$(MAKE) userlib
	vm/check-lockstat

check-coverage: deps
	$(MAKE) userlib tests
	vm/check-coverage

check-nohz: deps
	$(MAKE) userlib tests
	$(TOOL_ARCH) vm/check-nohz --kernel $(KVER)

# `make check` on each installed Debian kernel with headers (6.1, 6.12,
# 6.12-rt...; not -cloud), on each kernel prepared in a root of another
# suite, and on the newest of the development suite in both flavours
# (7.2, 7.2-rt), with the stress lane on each, then the Debian 13 host
# lane and check-debug.  Runs them
# all, fails if any failed.  ARCH=arm64: its kernels the same way (none
# installed: the newest of each series of the host's suite and its newest
# -rt, the prepared ones, unstable's newest in both flavours: 6.1, 6.12,
# 6.12-rt, 7.2, 7.2-rt, and trixie's 6.12 once prepared); the Debian 13
# host lane and check-debug are amd64's.
check-all: deps
	@rc=0; failed=; \
	for k in $$($(MAKE) -s --no-print-directory check-all-kernels); do \
		echo "check-all: === make check check-stress KVER=$$k"; \
		$(MAKE) check KVER=$$k || { rc=1; failed="$$failed $$k"; }; \
		$(MAKE) check-stress KVER=$$k || { rc=1; failed="$$failed stress:$$k"; }; \
	done; \
	for t in $(if $(ARCH_NATIVE),check-host-trixie check-debug); do \
		echo "check-all: === make $$t"; \
		$(MAKE) $$t || { rc=1; failed="$$failed $$t"; }; \
	done; \
	echo "check-all: $${failed:+failed:$$failed}$${failed:-all passed}"; \
	exit $$rc

# The kernels check-all runs on, one a line.
check-all-kernels:
	@export $(TOOL_ARCH); \
	{ ls -d /usr/src/linux-headers-*-$(ARCH) 2>/dev/null | sed 's|.*/linux-headers-||'; \
	  $(if $(ARCH_NATIVE),,vm/kernel series; vm/kernel newest host rt-$(ARCH);) \
	  vm/kernel prepared; vm/kernel newest unstable; vm/kernel newest unstable rt-$(ARCH); } | \
	grep -v -- '-cloud-$(ARCH)$$' | sort -uV

lint: uapi-check checkpatch sparse warnings module-circles man-check version-check optimum-test

# bench/optimum, the wake-ups set against the fewest possible, on hand-made records
optimum-test:
	@bench/optimum-test 2>&1 | tail -n 1 | grep -qx OK || bench/optimum-test
	@echo "  OPTIMUM bench/optimum: its tests pass"

man-check:
	scripts/man-check

# VERSION against everything made from it or stating it (userlib/version-check)
version-check: userlib
	userlib/version-check

# W=1 adds kernel-doc and extra warnings: the module must stay silent.
warnings: kdir-check
	@out=$$($(KMAKE) $(KBUILD_ARGS) W=1 -B modules 2>&1 | grep -E 'warning|error' || true); \
	if [ -n "$$out" ]; then echo "$$out"; echo "W=1: warnings" >&2; exit 1; fi; \
	echo "  W=1     module/: no warnings ($(KVER))"

# module/'s files call each other in no circle (read from the objects
# warnings just built)
module-circles: warnings
	scripts/module-circles module
	@echo "  CIRCLES module/: none"

uapi-check:
	@echo '#include <linux/dtimerfd.h>' | $(CC) -std=c90 -Wall -Werror \
		-Iinclude/uapi -fsyntax-only -x c - && echo "  UAPI    include/uapi/linux/dtimerfd.h: compiles alone (c90)"

checkpatch:
	scripts/checkpatch

sparse: kdir-check
	@out=$$($(KMAKE) $(KBUILD_ARGS) C=2 modules 2>&1 | grep -vE '^(make|  (CC|CHECK|LD|MODPOST|BTF)|Skipping BTF)' | grep -v 'Entering directory\|Leaving directory'); \
	if [ -n "$$out" ]; then echo "$$out"; echo "sparse: not silent" >&2; exit 1; fi; \
	echo "  SPARSE  module/: silent"

# --- installation ----------------------------------------------------------

install: install-module install-lib install-man install-tools install-data

# kbuild's modules_install puts it in /lib/modules/KVER/updates/module/.
# Unsigned: Debian signs its own modules with a key that is not shipped;
# sign ours with your MOK (kbuild's sign-file) on Secure Boot machines.
# depmod runs for the live system; a DESTDIR (package) build leaves it to
# the package's postinst.
install-module: module
	$(KMAKE) $(KBUILD_ARGS) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=updates \
		CONFIG_MODULE_SIG_ALL= DEPMOD=true modules_install
	$(if $(DESTDIR),@echo "  DEPMOD  skipped for DESTDIR=$(DESTDIR)",depmod $(KVER))

# The shared object under the names userlib/Makefile gave it (from VERSION).
install-lib: userlib
	$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 644 $(ULIB)libdtimerfd.a $(DESTDIR)$(LIBDIR)/
	soname=$$(readlink $(ULIB)libdtimerfd.so) && real=$$(readlink $(ULIB)$$soname) && \
	$(INSTALL) -m 755 $(ULIB)$$real $(DESTDIR)$(LIBDIR)/ && \
	ln -sf $$real $(DESTDIR)$(LIBDIR)/$$soname && \
	ln -sf $$soname $(DESTDIR)$(LIBDIR)/libdtimerfd.so
	$(INSTALL) -m 755 $(ULIB)libdtimerfd-preload.so $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 userlib/dtimerfd.h $(DESTDIR)$(INCLUDEDIR)/dtimerfd.h
	$(INSTALL) -m 644 include/uapi/linux/dtimerfd.h $(DESTDIR)$(INCLUDEDIR)/linux/dtimerfd.h
	sed -e 's|@prefix@|$(PREFIX)|' -e 's|@libdir@|$(LIBDIR)|' \
	    -e 's|@includedir@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    userlib/libdtimerfd.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libdtimerfd.pc
	$(if $(DESTDIR),,$(LDCONFIG))

install-man:
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man4 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 644 man/*.3 $(DESTDIR)$(MANDIR)/man3/
	$(INSTALL) -m 644 man/dtimerfd.4 $(DESTDIR)$(MANDIR)/man4/
	$(INSTALL) -m 644 man/dtimerfd.7 $(DESTDIR)$(MANDIR)/man7/
	$(INSTALL) -m 644 man/dtimerfd-preload.8 man/dtimerfd-wakeups.8 $(DESTDIR)$(MANDIR)/man8/

install-tools: utils
	$(INSTALL) -D -m 755 utils/$(ARCH_OUT)build/dtimerfd-wakeups $(DESTDIR)$(SBINDIR)/dtimerfd-wakeups

install-data:
	$(INSTALL) -D -m 644 dist/60-dtimerfd.rules $(DESTDIR)$(UDEVRULESDIR)/60-dtimerfd.rules
	$(INSTALL) -D -m 644 dist/dtimerfd.conf $(DESTDIR)$(MODULESLOADDIR)/dtimerfd.conf

# The module under whatever name kbuild gave it: a kernel built with
# CONFIG_MODULE_COMPRESS_* (Debian's 6.12) has modules_install write
# dtimerfd.ko.xz (or .zst, .gz).  Directories go when empty: none of them
# is a system one on Debian.
MODDIR = $(DESTDIR)/lib/modules/$(KVER)/updates/module
rmdir-empty = for d in $(1); do [ ! -d "$$d" ] || rmdir --ignore-fail-on-non-empty "$$d"; done
uninstall:
	rm -f $(addprefix $(MODDIR)/,dtimerfd.ko dtimerfd.ko.xz dtimerfd.ko.zst dtimerfd.ko.gz)
	@$(call rmdir-empty,$(MODDIR) $(patsubst %/,%,$(dir $(MODDIR))))
	$(if $(DESTDIR),,-depmod $(KVER))
	rm -f $(DESTDIR)$(LIBDIR)/libdtimerfd.a $(DESTDIR)$(LIBDIR)/libdtimerfd.so* \
	      $(DESTDIR)$(LIBDIR)/libdtimerfd-preload.so \
	      $(DESTDIR)$(INCLUDEDIR)/dtimerfd.h $(DESTDIR)$(INCLUDEDIR)/linux/dtimerfd.h \
	      $(DESTDIR)$(PKGCONFIGDIR)/libdtimerfd.pc \
	      $(patsubst man/%.3,$(DESTDIR)$(MANDIR)/man3/%.3,$(wildcard man/*.3)) \
	      $(DESTDIR)$(MANDIR)/man4/dtimerfd.4 \
	      $(DESTDIR)$(MANDIR)/man7/dtimerfd.7 \
	      $(DESTDIR)$(MANDIR)/man8/dtimerfd-preload.8 $(DESTDIR)$(MANDIR)/man8/dtimerfd-wakeups.8 \
	      $(DESTDIR)$(SBINDIR)/dtimerfd-wakeups \
	      $(DESTDIR)$(UDEVRULESDIR)/60-dtimerfd.rules $(DESTDIR)$(MODULESLOADDIR)/dtimerfd.conf
	@$(call rmdir-empty,$(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(SBINDIR) \
	       $(addprefix $(DESTDIR)$(MANDIR)/,man3 man4 man7 man8))
	$(if $(DESTDIR),,$(LDCONFIG))

# make install here, README's commands (the module's in a guest), make
# uninstall, and the same files as before (root; never loads the module
# here).  KVER picks the kernel, as everywhere.
check-install:
	scripts/install-test $(KVER)

# What DKMS needs to build the module, and nothing else.
dkms-install:
	$(INSTALL) -d $(DESTDIR)$(DKMSDIR)/module $(DESTDIR)$(DKMSDIR)/include/uapi/linux $(DESTDIR)$(DKMSDIR)/vm
	$(INSTALL) -m 644 Makefile Kbuild VERSION $(DESTDIR)$(DKMSDIR)/
	sed 's|@VERSION@|$(VERSION)|' dkms.conf > $(DESTDIR)$(DKMSDIR)/dkms.conf
	$(INSTALL) -m 644 module/Kbuild $(filter-out %.mod.c,$(wildcard module/*.c)) \
		module/*.h $(DESTDIR)$(DKMSDIR)/module/
	$(INSTALL) -m 644 include/uapi/linux/dtimerfd.h $(DESTDIR)$(DKMSDIR)/include/uapi/linux/
	$(INSTALL) -m 755 vm/kver vm/arch.sh $(DESTDIR)$(DKMSDIR)/vm/
	$(INSTALL) -m 644 vm/arch.mk $(DESTDIR)$(DKMSDIR)/vm/

# dkms add/build/install/remove for every installed kernel's headers (root;
# installs Debian's dkms when missing; never loads the module).
check-dkms:
	$(TOOL_ARCH) scripts/dkms-test

# The README's commands on Debian 13: make deps && make check in a fresh
# clone inside a debootstrapped trixie root (scripts/check-host; root).
# A real Debian 12 system in the guest (vm/system/build, vm/system/check):
# `make install` in its root, module from modules-load.d, node from the
# udev rule, then the shim in /etc/ld.so.preload.
# check-system-suites: CPython's own tests in that system, without the
# shim, under policy none and under the default (about 20 minutes of TCG).
.PHONY: system-image check-system demo-system check-system-suites compare-system
system-image:
	vm/system/build
check-system:
	vm/system/check
demo-system:
	vm/system/check --demo
check-system-suites:
	vm/system/check --suites
compare-system:
	vm/system/compare

check-host-trixie:
	scripts/check-host trixie

# Debian's kernel with a generic dracut initramfs: the module installed,
# loaded by systemd-modules-load, /dev/dtimerfd from udev with the rule,
# timers as an unprivileged user (vm/dracut/run; root, dracut-core).
check-dracut: deps
	vm/dracut/run

clean-module:
	-[ -d "$(KDIR)" ] && $(KMAKE) $(KBUILD_ARGS) clean

clean: clean-module
	$(MAKE) -C userlib clean
	$(MAKE) -C tests clean
	$(MAKE) -C examples clean
	$(MAKE) -C utils clean
	$(MAKE) -C bench clean
	rm -rf build

help:
	@awk 'NR > 2 && !/^#/ { exit } NR > 2' Makefile

# Debian packages (debian/): dtimerfd-dkms, libdtimerfd1, libdtimerfd-dev,
# built with dpkg-buildpackage in a clean root of each suite, lintian clean,
# into build/deb/SUITE/ (scripts/deb-build; root).  DEB_SUITES picks suites.
DEB_SUITES ?= bookworm trixie
.PHONY: deb check-deb
deb:
	$(TOOL_ARCH) scripts/deb-build $(DEB_SUITES)

# What a user does with them, in a fresh root of each suite: apt install,
# DKMS builds, a program built with pkg-config, a second kernel, apt purge
# leaves nothing, then the module and the program in the guest (scripts/deb-test).
check-deb: deb
	$(TOOL_ARCH) scripts/deb-test $(DEB_SUITES)

endif
