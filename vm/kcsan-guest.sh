#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of vm/check-kcsan, run by vm/check --after once the tests
# are done: KCSAN's own state and counters (/sys/kernel/debug/kcsan) as
# "# kcsan: NAME: VALUE" lines, which the host cuts out of vm/check's raw
# TAP.  Fails unless KCSAN is enabled: a KCSAN kernel that never turned it
# on reports nothing, and the lane must not take that for a clean run.

f=/sys/kernel/debug/kcsan
echo "TAP version 13"
echo "1..1"
if [ ! -r $f ]; then
	echo "not ok 1 KCSAN enabled # no $f: not a KCSAN kernel, or no debugfs"
	exit 1
fi
sed -n '/^[a-z_]*: [0-9-]*$/s/^/# kcsan: /p' $f
if grep -qx 'enabled: 1' $f; then
	echo "ok 1 KCSAN enabled"
else
	echo "not ok 1 KCSAN enabled # $f: $(head -n 1 $f)"
	exit 1
fi
