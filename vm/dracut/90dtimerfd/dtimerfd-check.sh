#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The dracut lane's check, run as root by dtimerfd-check.service once the
# initramfs's systemd has reached basic.target.  One "ok <what>" or
# "fail <what>: <why>" line per check on the verdict port (ttyS1, which
# nothing else writes), the same on the console, then "success 0" only when
# every check passed.  The host trusts nothing but that last line.
#
#   installed  modinfo finds dtimerfd under /lib/modules/KVER/updates
#   loaded     by systemd-modules-load, from the modules-load.d entry (its
#              journal says so; nothing on the kernel command line loads it)
#   udev       /dev/dtimerfd is a character device of mode 0666 that udev
#              has processed (its database has the node), and udevd
#              applies 60-dtimerfd.rules's MODE to it: with udevd logging at
#              debug, the node chmod'ed to 0600, a "change" uevent gets the
#              rule's line in udevd's log and the node back to 0666
#   user       dtfd-user, as the unprivileged user dtfd (runas): timers
#              strict and deferrable, alarm clocks refused with EPERM
#   kernel     no BUG/WARNING/Oops/... in the kernel log, no taint but O, E

set -u
PATH=/usr/bin:/usr/sbin:/bin:/sbin
libexec=/usr/libexec/dtimerfd-check

exec 3>/dev/ttyS1
fails=0
ok() { printf 'ok %s\n' "$*"; printf 'ok %s\n' "$*" >&3; }
fail() { printf 'fail %s\n' "$*"; printf 'fail %s\n' "$*" >&3; fails=$((fails + 1)); }

kver=$(uname -r)
echo "dtimerfd-check: kernel $kver, $(nproc 2>/dev/null || echo '?') CPUs"

# udev has handled the coldplug events (systemd-udev-trigger) by now.
if timeout 120 udevadm settle --timeout=110; then
	ok "udev settled"
else
	fail "udev settled: udevadm settle timed out"
fi

# --- installed and loaded ---------------------------------------------------
f=$(modinfo -n dtimerfd 2>&1)
case $f in
"/lib/modules/$kver/updates/"*dtimerfd.ko*|"/usr/lib/modules/$kver/updates/"*dtimerfd.ko*)
	ok "installed: $f" ;;
*)	fail "installed: modinfo -n dtimerfd: $f" ;;
esac

conf=$(grep -lx dtimerfd /etc/modules-load.d/*.conf /run/modules-load.d/*.conf \
	/usr/lib/modules-load.d/*.conf 2>/dev/null | head -n 1)
if [ -n "$conf" ]; then
	ok "modules-load.d entry: $conf"
else
	fail "modules-load.d entry: no modules-load.d file names dtimerfd"
fi

state=$(cat /sys/module/dtimerfd/initstate 2>/dev/null)
if [ "$state" = live ]; then
	ok "loaded: /sys/module/dtimerfd is live, version $(cat /sys/module/dtimerfd/version 2>/dev/null)"
else
	fail "loaded: /sys/module/dtimerfd/initstate is '${state:-missing}'"
fi

if grep -Eq '(^| )(modules[-_]load|rd\.modules[-_]load|rd\.driver\.pre)=' /proc/cmdline; then
	fail "loaded by systemd-modules-load: the kernel command line loads modules: $(cat /proc/cmdline)"
else
	# It runs before journald and udevd: its messages reach the journal
	# under its identifier, not its (by then finished) unit.
	said=$(journalctl -b -q -o cat -t systemd-modules-load | grep -x "Inserted module 'dtimerfd'")
	if [ -n "$said" ]; then
		ok "loaded by systemd-modules-load: it logged \"$said\", unit $(systemctl is-active systemd-modules-load.service)"
	else
		fail "loaded by systemd-modules-load: it did not log inserting dtimerfd:" \
			"$(journalctl -b -q -o cat -t systemd-modules-load | tr '\n' '|')"
	fi
fi

# --- /dev/dtimerfd and udev -------------------------------------------------
dev=/dev/dtimerfd
if [ -c $dev ]; then
	ok "$dev: character device $(stat -c '%t:%T, mode %a, %U:%G' $dev)"
else
	fail "$dev: missing or not a character device"
fi
mode=$(stat -c %a $dev 2>/dev/null)
if [ "$mode" = 666 ]; then
	ok "$dev: mode 0666"
else
	fail "$dev: mode ${mode:-?}, not 0666"
fi

# udevd records every device node it has handled in its database (an
# empty record for one without properties or tags, as this one).
syspath=/sys/class/misc/dtimerfd
db=/run/udev/data/c$(cat $syspath/dev 2>/dev/null)
if [ -e "$db" ]; then
	ok "udev processed $dev: $db ($(udevadm info -q path -n $dev 2>&1))"
else
	fail "udev processed $dev: no $db: $(udevadm info -n $dev 2>&1 | tr '\n' ' ')"
fi

# The rule itself, applied by the running udevd to a real event.
udevadm control --log-level=debug
chmod 0600 $dev
udevadm trigger --action=change --settle $syspath
udevadm control --log-level=info
mode=$(stat -c %a $dev 2>/dev/null)
rule=
for _ in 1 2 3 4 5 6 7 8 9 10; do
	rule=$(journalctl -b -q -o cat -u systemd-udevd.service | grep -E '60-dtimerfd\.rules:[0-9]+ MODE' | tail -n 1)
	[ -n "$rule" ] && break
	sleep 0.5
done
if [ -n "$rule" ] && [ "$mode" = 666 ]; then
	ok "udev rule applied: '$rule', mode 0600 -> 0$mode on a change event"
else
	fail "udev rule applied: udevd logged '${rule:-no MODE from 60-dtimerfd.rules}', mode 0600 -> 0${mode:-?}"
fi
chmod 0666 $dev

# --- the unprivileged user ----------------------------------------------------
out=$("$libexec/runas" dtfd "$libexec/dtfd-user" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/dtfd-user: /'
while IFS= read -r line; do
	case $line in
	ok\ *) ok "user: ${line#ok }" ;;
	fail\ *) fail "user: ${line#fail }" ;;
	esac
done <<<"$out"
if [ $rc -eq 0 ] && grep -q '^ok ' <<<"$out"; then
	ok "dtfd-user as $(grep '^dtfd:' /etc/passwd | cut -d: -f1,3,4): exit 0"
else
	fail "dtfd-user as dtfd: exit $rc"
fi

# --- the kernel ---------------------------------------------------------------
# vm/splat.txt as one grep -E pattern, written by vm/dracut/run
splat=$(dmesg | grep -E -m1 -f /usr/libexec/dtimerfd-check/splat.ere)
if [ -n "$splat" ]; then
	fail "kernel log: $splat"
else
	ok "kernel log: clean"
fi
taint=$(cat /proc/sys/kernel/tainted)
# O (out-of-tree, 4096) and E (unsigned, 8192) are expected.
if [ $((taint & ~(4096 | 8192))) -eq 0 ]; then
	ok "taint: $taint (O/E at most)"
else
	fail "taint: $taint has more than O and E"
fi

if [ $fails -eq 0 ]; then
	echo "success 0" >&3
	echo "dtimerfd-check: all passed"
else
	echo "dtimerfd-check: $fails failed"
fi
exec 3>&-
exit $fails
