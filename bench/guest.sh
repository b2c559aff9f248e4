#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (vm/run --add bench/build): the whole benchmark in
# one boot.  Arguments go to dtbench (--quick, --reps N, test names).
here=$(dirname "$0")
# tracefs for anyone who wants to look (perf/ftrace while investigating)
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
echo "@@ I guest_start $(cat /proc/uptime)"
"$here/dtbench" "$@"
rc=$?
echo "@@ I guest_end $(cat /proc/uptime)"
exit $rc
