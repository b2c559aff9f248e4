#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of vm/check-coverage, run by vm/check --after once the
# tests are done and the module is still loaded: the module's gcov
# counters (/sys/kernel/debug/gcov/<its build directory>/*.gcda) as a
# base64 gzip'd tar between "# gcov-begin" and "# gcov-end" lines, which
# the host cuts out of vm/check's raw TAP.  debugfs reports the files
# with size 0, so each is copied with cat before tar sees it.

gcov=/sys/kernel/debug/gcov
echo "TAP version 13"
echo "1..1"
if [ ! -d $gcov ]; then
	echo "not ok 1 gcov counters collected # no $gcov: not a GCOV_KERNEL kernel"
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
	echo "not ok 1 gcov counters collected # no .gcda under $gcov: module not built with GCOV_PROFILE=y?"
	exit 1
fi
echo "# gcov-begin"
tar -C $out -czf - . | base64
echo "# gcov-end"
echo "ok 1 gcov counters collected ($n files)"
