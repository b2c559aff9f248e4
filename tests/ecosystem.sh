#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The ecosystem around the module, in the guest (TAP): the examples, the
# LD_PRELOAD shim on a program built against plain glibc timerfd, the
# library's opt-in fallback to native timerfd, and a program built with
# `cc $(pkg-config --cflags --libs libdtimerfd)` against a
# `make install DESTDIR=` tree.  The dynamic programs run through the
# glibc loader and libraries staged next to this script (build/eco/).
eco=$(cd "$(dirname "$0")" && pwd)/eco
# the loader the programs ask for, whatever the architecture names it
ld="$(echo "$eco"/lib/ld-linux-*) --library-path $eco/lib"
n=0 failed=0 out=/tmp/eco.$$

ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1"; sed 's/^/# /' "$out"; }
# check NAME PATTERN...: every grep pattern must match the output in $out
check() {
	name=$1
	shift
	for p in "$@"; do
		if ! grep -q -- "$p" "$out"; then
			echo "# $name: no line matching '$p'"
			not_ok "$name"
			return
		fi
	done
	ok "$name"
}

echo "TAP version 13"
echo "1..30"

"$eco/timer-demo" 1 1 2 >"$out" 2>&1
check "examples: timer-demo, strict" "^0\.0[0-9][0-9]: timer started$" \
	"^1\.[0-9]*: read: 1; total=1$" "^2\.[0-9]*: read: 1; total=2$"

# An idle CPU may defer the ticks past the next period (seen: 1.8 s), so
# the last read may bring the total past 2; never below, never early.
"$eco/timer-demo" --deferrable 1 1 2 >"$out" 2>&1
check "examples: timer-demo --deferrable" "timer started (deferrable)" \
	"^[2-9][0-9]*\.[0-9]*: read: [1-9][0-9]*; total=[2-9][0-9]*$"

"$eco/epoll-timers" 100 10 2 >"$out" 2>&1
check "examples: epoll-timers, 100 strict timers" "100 strict timers" "none lost"

"$eco/epoll-timers" --deferrable 100 10 2 >"$out" 2>&1
check "examples: epoll-timers, 100 deferrable timers" "100 deferrable" "none lost"

# The example sleeps on its timers alone: a timeout of its own in
# epoll_wait() would wake the CPU ten times a second, and deferrable
# timers would save nothing.  One timer, next due in 10 s: over 2 s of
# its run the program is woken at most twice (its first expiry, a stray
# signal), where a 100 ms timeout wakes it 20 times.
"$eco/epoll-timers" --deferrable 1 10000 4 >/dev/null 2>&1 &
pid=$!
sleep 1
a=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$pid/status")
sleep 2
b=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$pid/status")
wait "$pid"
echo "woken $((b - a)) times in 2 s" >"$out"
check "examples: epoll-timers waits on its timers, with no timeout of its own" \
	"^woken [0-2] times in 2 s$"

$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: without the shim, a plain timerfd" "fd: anon_inode:\[timerfd\]" \
	"number: the lowest free" "read: ok" "stdin: -1 Invalid argument" "badfd: -1 Bad file descriptor"

LD_PRELOAD=$eco/lib/libdtimerfd-preload.so $ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: default policy, a 20 ms timer deferrable by 2 ms at most" \
	"fd: anon_inode:\[dtimerfd\]" "number: the lowest free" "dtimerfd-mode: deferrable" \
	"dtimerfd-max-defer-ns: 2000000$" "read: ok" "interval: 20000000" \
	"stdin: -1 Invalid argument" "badfd: -1 Bad file descriptor"

# The default bound: 10 % of the timer's own duration, at most 1 s; an
# absolute time counts from now on the timer's clock; a timer told of
# clock steps stays exact.  The bound is 10 % of what is left of the 5 s
# when the shim reads the clock: 0.5 s less a tenth of the time since the
# program's read, up to 20 ms of it (an emulated arm64 guest takes 5 ms).
LD_PRELOAD=$eco/lib/libdtimerfd-preload.so $ld "$eco/plain-timerfd" 5 0 abs >"$out" 2>&1
check "preload: default policy, absolute 5 s ahead: bound 0.5 s" "settime: 0" \
	"dtimerfd-mode: deferrable" "dtimerfd-max-defer-ns: 49[89][0-9]\{6\}$"
LD_PRELOAD=$eco/lib/libdtimerfd-preload.so $ld "$eco/plain-timerfd" 3600 60 >"$out" 2>&1
check "preload: default policy, 60 s period: bound capped at 1 s" "settime: 0" \
	"dtimerfd-mode: deferrable" "dtimerfd-max-defer-ns: 1000000000$"
LD_PRELOAD=$eco/lib/libdtimerfd-preload.so $ld "$eco/plain-timerfd" 5 0 cancel >"$out" 2>&1
check "preload: default policy, TFD_TIMER_CANCEL_ON_SET stays strict" "settime: 0" \
	"dtimerfd-mode: strict"
DTIMERFD_POLICY=bound=10%,exclude=plain-timerfd LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" 3600 60 >"$out" 2>&1
check "preload: an excluded program's timers stay strict" "settime: 0" \
	"dtimerfd-mode: strict"
# Without DTIMERFD_POLICY, the configuration file's first policy line.
mkdir -p /etc/dtimerfd
printf '# system-wide policy\n\n  none   # for now\n' >/etc/dtimerfd/preload.conf
LD_PRELOAD=$eco/lib/libdtimerfd-preload.so $ld "$eco/plain-timerfd" 3600 60 >"$out" 2>&1
check "preload: /etc/dtimerfd/preload.conf says none: strict" "settime: 0" \
	"dtimerfd-mode: strict"
rm -rf /etc/dtimerfd
DTIMERFD_POLICY=all LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" 3600 60 >"$out" 2>&1
check "preload: DTIMERFD_POLICY=all defers without bound" "settime: 0" \
	"dtimerfd-mode: deferrable" "dtimerfd-max-defer-ns: 0$"

DTIMERFD_POLICY=none LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: DTIMERFD_POLICY=none keeps timers strict" "fd: anon_inode:\[dtimerfd\]" \
	"dtimerfd-mode: strict" "read: ok"

DTIMERFD_POLICY=min-interval=1s LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: min-interval=1s leaves a 20 ms timer strict" "dtimerfd-mode: strict"

DTIMERFD_POLICY=min-interval=10ms LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: min-interval=10ms defers a 20 ms timer" "dtimerfd-mode: deferrable"

# A DTIMERFD_POLICY the shim does not understand is a typo: one line on
# stderr, once, and strict timers, never "all deferrable" (a watchdog's
# timer must not be deferred by a misspelt variable).
# policy_typo NAME POLICY: strict, and exactly one stderr line naming it
policy_typo() {
	DTIMERFD_POLICY=$2 LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
		$ld "$eco/plain-timerfd" >"$out" 2>"$out.err"
	lines=$(wc -l <"$out.err")
	cat "$out.err" >>"$out"
	if [ "$lines" -ne 1 ] || ! grep -q "DTIMERFD_POLICY" "$out.err"; then
		echo "# $1: want one line on stderr naming DTIMERFD_POLICY, got $lines"
		not_ok "$1"
		return
	fi
	check "$1" "fd: anon_inode:\[dtimerfd\]" "dtimerfd-mode: strict" "read: ok"
}
policy_typo "preload: unknown DTIMERFD_POLICY=al: one warning, strict" al
policy_typo "preload: DTIMERFD_POLICY=min-interval=1x (bad unit): one warning, strict" \
	min-interval=1x
policy_typo "preload: DTIMERFD_POLICY=bound=10 (no %): one warning, strict" bound=10
policy_typo "preload: DTIMERFD_POLICY=min-value= (no duration): one warning, strict" \
	min-value=

DTIMERFD_POLICY=none LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" >"$out" 2>"$out.err"
if [ -s "$out.err" ]; then
	cat "$out.err" >>"$out"
	not_ok "preload: a valid DTIMERFD_POLICY prints nothing on stderr"
else
	ok "preload: a valid DTIMERFD_POLICY prints nothing on stderr"
fi

# Huge times must compare as huge, not wrap negative (ts_ns() overflow):
# 9223372037 s is the first whole second past 2^63 ns, then max time_t.
for v in 9223372037 9223372036854775807; do
	DTIMERFD_POLICY=min-interval=1s LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
		$ld "$eco/plain-timerfd" 3600 $v >"$out" 2>&1
	check "preload: min-interval=1s defers an interval of $v s" \
		"settime: 0" "dtimerfd-mode: deferrable"
done
DTIMERFD_POLICY=min-value=1s LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" 9223372036854775807 0 >"$out" 2>&1
check "preload: min-value=1s defers a timer due in max time_t s" \
	"settime: 0" "dtimerfd-mode: deferrable"

DTIMERFD_DEVICE=/nonexistent LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: without the device, the real timerfd" "fd: anon_inode:\[timerfd\]" \
	"read: ok"

# A device the program may not open (a service's DeviceAllow= gives EPERM;
# here a directory gives EISDIR): the real timerfd all the same.
DTIMERFD_DEVICE=/ LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: a device that cannot be opened (EISDIR), the real timerfd" \
	"fd: anon_inode:\[timerfd\]" "read: ok"

DTIMERFD_DEVICE=/nonexistent "$eco/dtfd-probe" >"$out" 2>&1
check "fallback: off by default, ENODEV without the device" "create: No such device"

DTIMERFD_DEVICE=/nonexistent DTIMERFD_FALLBACK=1 "$eco/dtfd-probe" >"$out" 2>&1
check "fallback: DTIMERFD_FALLBACK=1 gives a native timerfd, deferrable as strict" \
	"fd: anon_inode:\[timerfd\]" "read: 1"

$ld "$eco/pkgconfig-prog" >"$out" 2>&1
check "install: a program built with pkg-config against make install DESTDIR=" \
	"fd: anon_inode:\[dtimerfd\]" "number: the lowest free" "read: [0-9]"

# The tool for users: every exit from idle by kind, the timer callbacks
# and the woken tasks from tracefs, and the dtimerfd timers of a process
# (epoll-timers: its 10 deferrable ones and the strict one that ends it).
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
"$eco/epoll-timers" --deferrable 10 10 3 >/dev/null 2>&1 &
sleep 1
"$eco/dtimerfd-wakeups" -t 1 -n 8 >"$out" 2>&1
wait
if [ -d /sys/kernel/tracing/events/power/cpu_idle ]; then
	check "tools: dtimerfd-wakeups, idle exits by kind, causes, a process's dtimerfd timers" \
		"exits from idle (power:cpu_idle)" "resched" "hrtimer callbacks" \
		"tasks woken" "epoll-timers  *11 "
else	# a kernel without tracing (the debug lane's): interrupts only
	check "tools: dtimerfd-wakeups, idle exits by kind, a process's dtimerfd timers (no tracing)" \
		"exits from idle (every interrupt)" "resched" "need root and tracefs" \
		"epoll-timers  *11 "
fi

rm -f "$out" "$out.err"
echo "# Totals: pass:$((n - failed)) fail:$failed xfail:0 xpass:0 skip:0 error:0"
[ "$failed" -eq 0 ]
