#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (vm/run --add bench/build): the whole benchmark in
# one boot.  Arguments go to dtbench (--quick, --reps N, test names).
here=$(dirname "$0")
# tracefs for anyone who wants to look (perf/ftrace while investigating)
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
echo "@@ I guest_start $(cat /proc/uptime)"
# A lock-statistics kernel (vm/check-lockstat): counts from zero, for the
# run alone, and the locks the module takes or makes others take (its
# queues' and timers', the kernel's timer bases) after it, as "@@ L" lines.
if [ -w /proc/lock_stat ]; then
	echo 1 >/proc/sys/kernel/lock_stat 2>/dev/null
	echo 0 >/proc/lock_stat
fi
"$here/dtbench" "$@"
rc=$?
if [ -r /proc/lock_stat ]; then
	grep -E '^ *(&rq->lock|&ctx->wqh|&ctx->setup_lock|dtfd_[a-z_]*lock|&base->lock|&cpu_base->lock|hrtimer_bases.lock)[^ ]*:' \
		/proc/lock_stat | sed 's/^ */@@ L /'
fi
echo "@@ I guest_end $(cat /proc/uptime)"
exit $rc
