#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Stand-in for the kernel's scripts/checker-valid.sh, which newer kernel
# Makefiles run before C=1/C=2 and Debian's linux-headers do not ship: print
# 1 when the checker (sparse, with its flags) parses what current kernel
# headers use (__typeof_unqual__) without an error, else 0.  vm/kernel
# prepare puts it in the headers of a build root that lacks it.
command -v "$1" >/dev/null 2>&1 || { echo 0; exit 0; }
f=$(mktemp --suffix=.c) || { echo 0; exit 0; }
trap 'rm -f "$f"' EXIT
printf 'int f(const int *p);\nint f(const int *p)\n{\n\t__typeof_unqual__(*p) v = *p;\n\n\treturn v;\n}\n' >"$f"
if "$@" "$f" 2>&1 | grep -q error; then echo 0; else echo 1; fi
