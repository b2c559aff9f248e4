# SPDX-License-Identifier: GPL-2.0
#
# vm/arch.mk: the architecture's facts for the Makefiles, read from
# vm/arch.sh (the one place that states them), once, and exported to the
# sub-makes.  ARCH=amd64|arm64 (default: the build machine's own):
#
#   ARCH            amd64 | arm64 (x86_64, aarch64 accepted)
#   ARCH_OUT        prefix of the built programs' folders: "" when native,
#                   else "ARCH/" (userlib/arm64/libdtimerfd.a,
#                   tests/arm64/build/, ...): switching ARCH rebuilds nothing
#   ARCH_KBUILD     kbuild's ARCH (x86 | arm64), and its CROSS_COMPILE
#                   when not native: ours must never reach kbuild
#   ARCH_CC32       the 32-bit compat ABI's compiler (i686 | armhf)
#   ARCH_CFLAGS     -DDTFD_TIMER_IRQ="..." for the programs that count
#                   local-timer interrupts (the row of /proc/interrupts)
#   ARCH_GUEST_CFLAGS  the guest's serial ports for vm/init.c
#   CC, AR          the cross tools when not native (a CC from the command
#                   line or the environment stays)
# ARCH itself is not exported (a kernel build below would take it): a
# sub-make has it from the command line, as the lanes' scripts have it in
# their environment; DTFD_ARCH_ASKED says for which ARCH the rest is known.
ifneq ($(DTFD_ARCH_ASKED),asked:$(ARCH))
DTFD_ARCH_ASKED := asked:$(ARCH)
ARCH_SH := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))/arch.sh
arch-fact = $(shell ARCH='$(ARCH)' '$(ARCH_SH)' $(1))
override ARCH := $(call arch-fact,arch)
ifeq ($(ARCH),)
$(error ARCH must be amd64 or arm64)
endif
ARCH_OUT := $(call arch-fact,arch_out)
ARCH_NATIVE := $(call arch-fact,arch_native)
ARCH_CC32 := $(call arch-fact,arch_cc32)
ARCH_KBUILD := ARCH=$(call arch-fact,arch_kernel)$(if $(ARCH_NATIVE),, CROSS_COMPILE=$(call arch-fact,arch_cross))
ARCH_CFLAGS := -DDTFD_TIMER_IRQ='"$(call arch-fact,arch_timer_irq)"'
arch-ports := $(call arch-fact,arch_ports)
ARCH_GUEST_CFLAGS := -DDTFD_VERDICT_PORT='"/dev/$(word 1,$(arch-ports))"' \
	-DDTFD_OUTPUT_PORT='"/dev/$(word 2,$(arch-ports))"'
ifeq ($(ARCH_NATIVE),)
ifeq ($(filter command line environment,$(origin CC)),)
CC := $(call arch-fact,arch_cc)
endif
ifeq ($(filter command line environment,$(origin AR)),)
AR := $(call arch-fact,arch_cross)ar
endif
export CC AR
endif
export ARCH_OUT ARCH_NATIVE ARCH_CC32 ARCH_KBUILD ARCH_CFLAGS ARCH_GUEST_CFLAGS DTFD_ARCH_ASKED
endif
