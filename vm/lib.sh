# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# vm/lib.sh: what the guest lanes share, sourced by each (never run):
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"      (vm/dracut/run: ../lib.sh)
#
# Sets top (the work tree) and me (the script's path under it).  Each fact
# the lanes used to copy lives here once: the kernel-report patterns
# (vm/splat.txt, read by splat_*), the --kernel option and how a release
# resolves to a kernel, the help text, the early-panic retry of a boot,
# and the module's build for a kernel.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
me=$(cd "$(dirname "$0")" && pwd)/${0##*/}
me=${me#"$top/"}

# --- messages -----------------------------------------------------------------

log() { echo "$me: $*" >&2; }
# die MESSAGE: exit with $rc (2, bad usage or a missing tool, unless set)
die() { log "$*"; exit "${rc:-2}"; }

# --- kernel reports (vm/splat.txt) ----------------------------------------------

splat_list=$top/vm/splat.txt

# The entries, one a line: comments, blank lines and trailing blanks gone.
splat_entries() {
	sed -e 's/[[:space:]]*$//' -e '/^#/d' -e '/^$/d' "$splat_list"
}

# One grep -E pattern for them all.  An entry's ^ (start of the message)
# becomes: line start, after the "[ time] " stamp, or after dmesg -r's <N>.
splat_ere() {
	splat_entries |
		sed -e 's/[][\.*+?(){}|$]/\\&/g' -e 's/^\^\(.*\)/(^|\\] |>)\1 /' |
		paste -sd'|'
}

# The same for C: splat_words[] (anywhere), splat_starts[] (at the start).
splat_header() {
	local e
	echo "/* Generated from vm/splat.txt by vm/lib.sh's splat_header: do not edit. */"
	echo "static const char *const splat_words[] = {"
	splat_entries | grep -v '^\^' | while IFS= read -r e; do c_string "$e"; done
	echo "};"
	echo "static const char *const splat_starts[] = {"
	splat_entries | sed -n 's/^\^\(.*\)/\1 /p' | while IFS= read -r e; do c_string "$e"; done
	echo "};"
}
c_string() {
	local s=${1//\\/\\\\}
	printf '\t"%s",\n' "${s//\"/\\\"}"
}

# splat_first FILE: the first report in a console log, its time stamp and
# the serial \r gone; empty when there is none.
splat_first() {
	grep -a -m1 -E "$(splat_ere)" "$1" | tr -d '\r' | sed 's/^\[[^]]*\] *//'
}
