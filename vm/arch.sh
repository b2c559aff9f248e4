#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vm/arch.sh: the one place that knows the architectures' facts.
#
#   . vm/arch.sh             (vm/lib.sh does) sets the arch_* variables
#                            below for ARCH
#   vm/arch.sh FACT          prints one of them (the Makefiles' way:
#                            vm/arch.mk), e.g. vm/arch.sh qemu
#   vm/arch.sh facts         prints them all, one "name: value" a line
#
# ARCH names the machine the module and the test programs are built for
# and the guest that runs them: amd64 or arm64 (x86_64 and aarch64 say
# the same), by default the build machine's own (dpkg's architecture:
# amd64 on the machines the README names).  Another than the build
# machine's is cross-built: the module with the kernel's CROSS_COMPILE,
# the programs with the cross compiler, into their own directories
# (arch_out), and the guest is emulated (TCG).
#
#   arch           amd64 | arm64: Debian's name, the kernel flavour's
#                  suffix (linux-image-*-arm64) and the packages' arch
#   arch_native    1 when ARCH is the build machine's own, else empty
#   arch_out       where built programs go, relative to their source
#                  folder's usual output: "" when native, "ARCH/" else
#   arch_kernel    kbuild's ARCH: x86 | arm64
#   arch_cross     kbuild's CROSS_COMPILE: "" when native,
#                  aarch64-linux-gnu- (or x86_64-linux-gnu-) else
#   arch_cc        the C compiler for 64-bit programs
#   arch_cc32      the C compiler for the 32-bit compat ABI's programs
#                  (the 32-bit half of the tests): i686-linux-gnu-gcc
#                  (i386) | arm-linux-gnueabihf-gcc (armhf).  Cross
#                  compilers both: Debian's gcc-multilib (gcc -m32)
#                  conflicts with every gcc-*-linux-gnu, so amd64's 32-bit
#                  half and arm64's programs could not be built on one
#                  machine with it
#   arch_compat    that ABI's Debian name: i386 | armhf
#   arch_tools     Debian packages with the compilers, the 32-bit libc
#                  and the emulator (vm/deps installs them)
#   arch_qemu      the emulator: qemu-system-x86_64 | qemu-system-aarch64
#   arch_machine   its machine: "" (pc) | virt
#   arch_cpu       its CPU under TCG: "" (QEMU's default) |
#                  max,pauth-impdef=on (the max CPU's pointer
#                  authentication in QEMU's cheap variant: boots in 2 s,
#                  not 6); with KVM it is always the host's
#   arch_console   the kernel's console in the guest: ttyS0 | ttyAMA0
#   arch_ports     the two more serial ports (the verdict, the command's
#                  output), as the guest names them: "ttyS1 ttyS2" |
#                  "ttyS0 ttyS1" (virt has one UART: the two are a
#                  pci-serial-2x, arch_port_dev)
#   arch_port_dev  how QEMU attaches them: "" (-serial) | pci-serial-2x
#   arch_timer_irq the local (per-CPU) timer interrupt's row in
#                  /proc/interrupts: LOC (its "LOC:" label) | arch_timer
#                  (the row's name, last)
#   arch_image     the kernel image's kind: bzImage | Image (Debian's
#                  arm64 vmlinuz is a gzip-compressed Image)
#   arch_triplet   the GNU triplet: x86_64-linux-gnu | aarch64-linux-gnu

# shellcheck disable=SC2034 # the facts are for whoever sources this file
# The build machine's architecture, in Debian's names.
arch_host() {
	a=$(dpkg --print-architecture 2>/dev/null || uname -m)
	case $a in
	x86_64|amd64) echo amd64 ;;
	aarch64|arm64) echo arm64 ;;
	*) echo "$a" ;;
	esac
}

# arch_set ARCH: set the facts (ARCH empty: the build machine's); 1 with a
# message on stderr when ARCH is none of ours.
arch_set() {
	arch=${1:-$(arch_host)}
	case $arch in
	x86_64|x86) arch=amd64 ;;
	aarch64) arch=arm64 ;;
	esac
	case $arch in
	amd64)
		arch_kernel=x86
		arch_triplet=x86_64-linux-gnu
		arch_cc32=i686-linux-gnu-gcc
		arch_compat=i386
		arch_tools="gcc-i686-linux-gnu libc6-dev-i386-cross qemu-system-x86"
		arch_tools_cross="gcc-x86-64-linux-gnu libc6-dev-amd64-cross $arch_tools"
		arch_qemu=qemu-system-x86_64
		arch_machine=
		arch_cpu=
		arch_console=ttyS0
		arch_ports="ttyS1 ttyS2"
		arch_port_dev=
		arch_timer_irq=LOC
		arch_image=bzImage
		;;
	arm64)
		arch_kernel=arm64
		arch_triplet=aarch64-linux-gnu
		arch_cc32=arm-linux-gnueabihf-gcc
		arch_compat=armhf
		arch_tools="gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-system-arm"
		arch_tools_cross="gcc-aarch64-linux-gnu libc6-dev-arm64-cross $arch_tools"
		arch_qemu=qemu-system-aarch64
		arch_machine=virt
		arch_cpu=max,pauth-impdef=on
		arch_console=ttyAMA0
		arch_ports="ttyS0 ttyS1"
		arch_port_dev=pci-serial-2x
		arch_timer_irq=arch_timer
		arch_image=Image
		;;
	*)
		echo "vm/arch.sh: ARCH must be amd64 or arm64, not '$arch'" >&2
		return 1
		;;
	esac
	if [ "$arch" = "$(arch_host)" ]; then
		arch_native=1 arch_out='' arch_cross='' arch_cc=gcc
	else
		arch_native='' arch_out=$arch/ arch_cross=$arch_triplet-
		arch_cc=${arch_cross}gcc
		arch_tools=$arch_tools_cross
	fi
	unset arch_tools_cross
}

arch_facts() {
	for f in arch arch_native arch_out arch_kernel arch_cross arch_cc arch_cc32 \
		arch_compat arch_tools arch_qemu arch_machine arch_cpu arch_console arch_ports \
		arch_port_dev arch_timer_irq arch_image arch_triplet; do
		eval "printf '%s: %s\n' $f \"\$$f\""
	done
}

# Run (not sourced): print a fact.
case ${0##*/} in
arch.sh)
	arch_set "${ARCH:-}" || exit 2
	case ${1:-} in
	facts) arch_facts ;;
	arch|arch_*) eval "printf '%s\n' \"\${$1:-}\"" ;;
	''|-h|--help) sed -n '4,/^$/s/^# \{0,1\}//p' "$0" ;;
	*) eval "printf '%s\n' \"\${arch_$1-?}\"" | grep -vx '?' ||
		{ echo "vm/arch.sh: no fact '$1' (vm/arch.sh facts lists them)" >&2; exit 2; } ;;
	esac
	;;
*) arch_set "${ARCH:-}" || return 1 ;;
esac
