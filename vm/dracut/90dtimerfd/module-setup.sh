#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dracut module "dtimerfd" for the dracut boot lane (vm/dracut/run).
#
# Puts into the initramfs what `make install` puts on a system, at the
# same paths: the module under /lib/modules/KVER/updates (found by depmod,
# which dracut runs on the image), the modules-load.d entry that has
# systemd-modules-load load it, and the udev rule for /dev/dtimerfd.  They
# come from a staging root, DTFD_STAGE, filled by vm/dracut/run with
# `make install-module install-data DESTDIR=$DTFD_STAGE`.
#
# Then the check: dtimerfd-check.target (the boot's goal, by
# rd.systemd.unit= on the kernel command line: this initramfs has no root
# file system to switch to) runs dtimerfd-check.service once udev has
# settled, which runs dtimerfd-check.sh as root and, from it, dtfd-user as
# the unprivileged user "dtfd" (uid 4242) through runas.  Both programs are
# static and come from DTFD_BIN.  The service powers the guest off when it
# ends, whatever the result.
#
# dracut sources this file and provides kernel, initdir, moddir,
# systemdsystemunitdir and the inst_* functions.
# shellcheck disable=SC2154

check() {
	[[ -d $DTFD_STAGE && -x $DTFD_BIN/runas && -x $DTFD_BIN/dtfd-user && -s $DTFD_BIN/splat.ere ]] || {
		derror "dtimerfd: DTFD_STAGE and DTFD_BIN must name vm/dracut/run's staging root and programs"
		return 1
	}
	return 0
}

depends() {
	echo systemd systemd-modules-load udev-rules kernel-modules
}

installkernel() {
	local ko n=0

	while IFS= read -r -d '' ko; do
		inst_simple "$ko" "${ko#"$DTFD_STAGE"}" || return 1
		n=$((n + 1))
	done < <(find "$DTFD_STAGE/lib/modules/$kernel" -name 'dtimerfd.ko*' -print0 2>/dev/null)
	if [[ $n -ne 1 ]]; then
		derror "dtimerfd: expected one dtimerfd.ko for $kernel under $DTFD_STAGE/lib/modules, found $n"
		return 1
	fi
}

install() {
	local f

	# Everything else `make install-data` staged (udev rule, modules-load.d).
	while IFS= read -r -d '' f; do
		inst_simple "$f" "${f#"$DTFD_STAGE"}"
	done < <(find "$DTFD_STAGE" -path "$DTFD_STAGE/lib/modules" -prune -o -type f -print0)

	inst_simple "$DTFD_BIN/runas" /usr/libexec/dtimerfd-check/runas
	inst_simple "$DTFD_BIN/dtfd-user" /usr/libexec/dtimerfd-check/dtfd-user
	inst_simple "$DTFD_BIN/splat.ere" /usr/libexec/dtimerfd-check/splat.ere
	inst_script "$moddir/dtimerfd-check.sh" /usr/libexec/dtimerfd-check/dtimerfd-check.sh
	inst_simple "$moddir/dtimerfd-check.service" "$systemdsystemunitdir/dtimerfd-check.service"
	inst_simple "$moddir/dtimerfd-check.target" "$systemdsystemunitdir/dtimerfd-check.target"
	inst_multiple cat cut grep sed stat chmod tr head tail timeout uname dmesg sleep nproc

	# The unprivileged user of the test.
	echo 'dtfd:x:4242:4242:dtimerfd test user:/:/usr/sbin/nologin' >>"$initdir/etc/passwd"
	echo 'dtfd:x:4242:' >>"$initdir/etc/group"
}
