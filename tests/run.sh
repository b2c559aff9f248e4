#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/run.sh [DIR [ARGS...]]: run every DIR/*.t (default: build/ next to
# this script) kselftest-runner style: each program's own TAP is indented
# as "# " lines, then one "ok N selftests: dtimerfd: NAME" per program
# (exit 4 is a SKIP).  ARGS go to every program, e.g. -b native.
# TESTS="a b" runs only those programs.  Exit 0 when no program failed.
dir=${1:-$(dirname "$0")/build}
[ $# -gt 0 ] && shift
st=${TMPDIR:-/tmp}/dtfd-run.$$
n=0 pass=0 fail=0 skip=0
total=0
if [ -n "${TESTS:-}" ]; then
	list=
	for name in $TESTS; do list="$list $dir/$name.t"; done
else
	list=$(ls "$dir"/*.t)
fi
for t in $list; do [ -x "$t" ] && total=$((total + 1)); done
echo "TAP version 13"
echo "1..$total"
for t in $list; do
	[ -x "$t" ] || continue
	n=$((n + 1))
	name=$(basename "$t" .t)
	echo "# selftests: dtimerfd: $name"
	{ "$t" "$@" 2>&1; echo $? > "$st"; } | sed 's/^/# /'
	rc=$(cat "$st")
	case $rc in
	0) pass=$((pass + 1)); echo "ok $n selftests: dtimerfd: $name" ;;
	4) skip=$((skip + 1)); echo "ok $n selftests: dtimerfd: $name # SKIP" ;;
	*) fail=$((fail + 1)); echo "not ok $n selftests: dtimerfd: $name # exit=$rc" ;;
	esac
done
rm -f "$st"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail -eq 0 ]
