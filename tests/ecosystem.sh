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
ld="$eco/lib/ld-linux-x86-64.so.2 --library-path $eco/lib"
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
echo "1..13"

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

$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: without the shim, a plain timerfd" "fd: anon_inode:\[timerfd\]" \
	"read: ok" "stdin: -1 Invalid argument" "badfd: -1 Bad file descriptor"

LD_PRELOAD=$eco/lib/libdtimerfd-preload.so $ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: default policy, every timer deferrable" "fd: /dev/dtimerfd" \
	"dtimerfd-mode: deferrable" "read: ok" "interval: 20000000" \
	"stdin: -1 Invalid argument" "badfd: -1 Bad file descriptor"

DTIMERFD_POLICY=none LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: DTIMERFD_POLICY=none keeps timers strict" "fd: /dev/dtimerfd" \
	"dtimerfd-mode: strict" "read: ok"

DTIMERFD_POLICY=min-interval=1s LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: min-interval=1s leaves a 20 ms timer strict" "dtimerfd-mode: strict"

DTIMERFD_POLICY=min-interval=10ms LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: min-interval=10ms defers a 20 ms timer" "dtimerfd-mode: deferrable"

DTIMERFD_DEVICE=/nonexistent LD_PRELOAD=$eco/lib/libdtimerfd-preload.so \
	$ld "$eco/plain-timerfd" >"$out" 2>&1
check "preload: without the device, the real timerfd" "fd: anon_inode:\[timerfd\]" \
	"read: ok"

DTIMERFD_DEVICE=/nonexistent "$eco/dtfd-probe" >"$out" 2>&1
check "fallback: off by default, ENODEV without the device" "create: No such device"

DTIMERFD_DEVICE=/nonexistent DTIMERFD_FALLBACK=1 "$eco/dtfd-probe" >"$out" 2>&1
check "fallback: DTIMERFD_FALLBACK=1 gives a native timerfd, deferrable as strict" \
	"fd: anon_inode:\[timerfd\]" "read: 1"

$ld "$eco/pkgconfig-prog" >"$out" 2>&1
check "install: a program built with pkg-config against make install DESTDIR=" \
	"fd: /dev/dtimerfd" "read: [0-9]"

rm -f "$out"
echo "# Totals: pass:$((n - failed)) fail:$failed xfail:0 xpass:0 skip:0 error:0"
[ "$failed" -eq 0 ]
