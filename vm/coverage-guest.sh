#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of vm/check-coverage, run by vm/check --after once the
# tests are done and the module is still loaded: the module's gcov
# counters (/sys/kernel/debug/gcov/<its build directory>/*.gcda) as a
# base64 gzip'd tar between "# gcov-begin" and "# gcov-end" lines, which
# the host cuts out of vm/check's raw TAP.  debugfs reports the files
# with size 0, so each is copied with cat before tar sees it.
#
# First the module is unloaded and loaded again, which no test does: its
# exit path runs, and gcov keeps an unloaded module's counters
# (gcov_persist, on by default) and adds those of the next load to them.
# vm/init.c's unload at the end of the boot finds it loaded as before.

gcov=/sys/kernel/debug/gcov
echo "TAP version 13"
echo "1..2"
# files may be on their way to their last fput(): retry for 5 s
i=0
while ! rmmod dtimerfd 2>/dev/null; do
	i=$((i + 1))
	if [ $i -ge 100 ]; then
		echo "not ok 1 module unloaded and loaded again # rmmod: $(rmmod dtimerfd 2>&1)"
		exit 1
	fi
	sleep 0.05
done
if ! out=$(insmod /dtimerfd.ko 2>&1); then
	echo "not ok 1 module unloaded and loaded again # insmod: $out"
	exit 1
fi
echo "ok 1 module unloaded and loaded again"
if [ ! -d $gcov ]; then
	echo "not ok 2 gcov counters collected # no $gcov: not a GCOV_KERNEL kernel"
	exit 1
fi
out=/tmp/gcov-out
rm -rf $out
n=0
for f in $(cd $gcov && find . -name '*.gcda'); do
	mkdir -p "$out/${f%/*}"
	cat "$gcov/$f" >"$out/$f" || exit 1
	n=$((n + 1))
done
if [ "$n" = 0 ]; then
	echo "not ok 2 gcov counters collected # no .gcda under $gcov: module not built with GCOV_PROFILE=y?"
	exit 1
fi
echo "# gcov-begin"
tar -C $out -czf - . | base64
echo "# gcov-end"
echo "ok 2 gcov counters collected ($n files)"
