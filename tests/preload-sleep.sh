#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The preload shim's sleeps and waits against libc's own (sleep-shim.c),
# in the guest (TAP): under the default policy they must go through a
# dtimerfd, under none, all, an excluded program's name and a policy the
# shim does not understand, and without the device (with or without
# DTIMERFD_FALLBACK) they must stay libc's; in every case each
# call's results must equal libc's.  One TAP stream, renumbered.
eco=$(cd "$(dirname "$0")" && pwd)/eco
# the loader the programs ask for, whatever the architecture names it
ld="$(echo "$eco"/lib/ld-linux-*) --library-path $eco/lib"
shim=$eco/lib/libdtimerfd-preload.so

# run LABEL EXPECT [VAR=VALUE...]: sleep-shim's lines, labelled
run() {
	label=$1 expect=$2
	shift 2
	# shellcheck disable=SC2086 # $ld is a command line
	env "$@" $ld "$eco/sleep-shim" "$expect" 2>"/tmp/sleep-shim.err" |
		sed -n "s/^\(not \)\{0,1\}ok [0-9]* /&[$label] /p"
	if [ -s /tmp/sleep-shim.err ]; then
		sed "s/^/# [$label] stderr: /" /tmp/sleep-shim.err
	fi
}

echo "TAP version 13"
{
	run "no shim" exact
	run "default policy" deferred LD_PRELOAD="$shim"
	run "bound=100%,max=50ms" deferred LD_PRELOAD="$shim" DTIMERFD_POLICY=bound=100%,max=50ms
	run "none" exact LD_PRELOAD="$shim" DTIMERFD_POLICY=none
	run "all" exact LD_PRELOAD="$shim" DTIMERFD_POLICY=all
	run "excluded" exact LD_PRELOAD="$shim" DTIMERFD_POLICY=bound=10%,exclude=cron:sleep-shim
	run "typo" exact LD_PRELOAD="$shim" DTIMERFD_POLICY=bound=10
	run "no device" exact LD_PRELOAD="$shim" DTIMERFD_DEVICE=/nonexistent
	run "no device, fallback" exact LD_PRELOAD="$shim" DTIMERFD_DEVICE=/nonexistent DTIMERFD_FALLBACK=1
} | awk '/^(not )?ok / { n++; sub(/ok [0-9]+ /, "ok " n " ") } { print } END { print "1.." n }'
