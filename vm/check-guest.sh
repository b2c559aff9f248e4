#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of vm/check, run by busybox sh inside the guest:
#
#   check-guest.sh -s SPLAT [-t SECONDS] [-e VAR=VALUE]... [-a SCRIPT] [PROGRAM]...
#
# PROGRAM is a path under /tests (build/create.t, build32/create.t); SCRIPT
# (-a) a shell script run after them as one more, reported under its base
# name (vm/check --after: what a lane collects before the guest ends).  Each
# runs in /tmp with a timeout (-t, default 300 s) after a marker has been
# written to /dev/kmsg; afterwards the kernel log since that marker is
# scanned for splats and stray processes are killed.  Output, parsed by
# vm/check:
#
#   ## begin NAME
#   ...the program's TAP...
#   # splat: LINE            one per kernel report logged while NAME ran
#   ## end NAME status=N time=SECONDS [timeout]
#
# NAME "device" is this script's own check of /dev/dtimerfd.  The exit
# status is 1 when anything failed.

# shellcheck disable=SC2016 # check() evals its single-quoted tests

limit=300
SPLAT=
after=
while [ $# -gt 0 ]; do
	case $1 in
	-s) SPLAT=$2; shift 2 ;;
	-a) after=$2; shift 2 ;;
	-t) limit=$2; shift 2 ;;
	-e) export "${2?}"; shift 2 ;;
	*) break ;;
	esac
done
# SPLAT (-s): the kernel reports, vm/splat.txt as one grep -E pattern
# (vm/lib.sh's splat_ere); only kernel lines (<0>..<7>) count, so user
# writes to /dev/kmsg cannot.
[ -n "$SPLAT" ] || { echo "check-guest.sh: -s SPLAT is required" >&2; exit 2; }

failed=0
seq=0

# splats MARKER: the kernel's reports logged after MARKER
splats() {
	dmesg -r | sed -n "/$1\$/,\$p" | grep '^<[0-7]>' | grep -E "$SPLAT" |
		head -n 20 | sed 's/^/# splat: /'
}

# --- the device itself --------------------------------------------------
echo "## begin device"
echo "TAP version 13"
echo "1..4"
n=0
check() {
	n=$((n + 1))
	if eval "$2"; then
		echo "ok $n $1"
	else
		[ -z "$3" ] || echo "# $3"
		echo "not ok $n $1"
		failed=1
	fi
}
dev=/dev/dtimerfd
check "dtimerfd is loaded (/proc/modules)" 'grep -q "^dtimerfd " /proc/modules' \
	"modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
check "$dev is a character device" '[ -c $dev ]' "$(ls -l $dev 2>&1)"
check "$dev has mode 0666" '[ "$(stat -c %a $dev 2>/dev/null)" = 666 ]' \
	"mode is $(stat -c %a $dev 2>&1)"
check "$dev opens O_RDWR and closes" '(exec 3<>$dev) 2>/dev/null' \
	"$( (exec 3<>$dev) 2>&1)"
echo "## end device status=$failed time=0"

# --- the test programs --------------------------------------------------
for prog in "$@" ${after:+"after:$after"}; do
	seq=$((seq + 1))
	cmd="/tests/$prog"
	case $prog in
	after:*) cmd="sh ${prog#after:}"; name=${prog##*/}; name=${name%.sh} ;;
	build32/*) name=${prog#build32/}; name=${name%.t}-m32 ;;
	*) name=${prog##*/}; name=${name%.t} ;;
	esac
	marker="dtimerfd-check: test $seq $name"
	echo "$marker" >/dev/kmsg
	echo "## begin $name"
	start=$(date +%s)
	# shellcheck disable=SC2086 # cmd: "sh SCRIPT" or one path
	(cd /tmp && exec timeout -k 5 "$limit" $cmd)
	rc=$?
	end=$(date +%s)
	kill -9 -1 2>/dev/null		# strays: everything but us and init
	extra=
	if [ $((end - start)) -ge "$limit" ] && { [ $rc = 143 ] || [ $rc = 137 ]; }; then
		extra=" timeout"
	fi
	out=$(splats "$marker")
	[ -z "$out" ] || { echo "$out"; failed=1; }
	[ "$rc" = 0 ] || [ "$rc" = 4 ] || failed=1
	echo "## end $name status=$rc time=$((end - start))$extra"
done
exit $failed
