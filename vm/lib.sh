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

# The architecture's facts (arch_*, vm/arch.sh), for ARCH; a kernel
# release of another architecture's flavour switches to that one
# (kernel_release).
# shellcheck source=vm/arch.sh
. "$top/vm/arch.sh" || exit 2

# --- messages -----------------------------------------------------------------

log() { echo "$me: $*" >&2; }
# die MESSAGE: exit with $rc (2, bad usage or a missing tool, unless set)
die() { log "$*"; exit "${rc:-2}"; }

# --- the steps of a lane with a summary ----------------------------------------
#
# vm/check-debug and vm/check-intree run their steps so; the caller sets
# logs (a folder), summary (a file) and failed=0 first.  (vm/check
# defines a step of its own, for its verdict lines, after sourcing this.)

say() { echo "$me: $*"; }
note() { printf '%s\n' "$*" | tee -a "${summary:?}"; }
fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
# step NAME COMMAND...: run, log to $logs/NAME.log, time (step_time),
# record PASS or FAIL in the summary (a FAIL counts in failed); its status
step() {
	local name=$1 t0 rc
	shift
	say "--- $name: $*"
	t0=$(date +%s)
	"$@" 2>&1 | tee "${logs:?}/$name.log"
	rc=${PIPESTATUS[0]}
	step_time=$(( $(date +%s) - t0 ))
	if [ "$rc" -eq 0 ]; then
		note "PASS $name ($(fmt_time "$step_time"))"
	else
		note "FAIL $name: exit $rc ($(fmt_time "$step_time")); log: ${logs#"$top/"}/$name.log"
		failed=$((failed + 1))
	fi
	return "$rc"
}

# --- help: the script's own header comment --------------------------------------

# The comment block after the SPDX line, without its "# ": the text that
# --help prints.  One place reads it, so no line range can go stale.
help_text() {
	awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"
}
show_help() { help_text; exit 0; }
# usage: the synopsis (the header's first paragraph) on stderr, exit 2
usage() {
	help_text | awk 'NF { p = 1 } p && !NF { exit } p' | sed '1s/^/usage: /' >&2
	exit 2
}

# --- the kernel: --kernel VERSION and what it resolves to --------------------------

kver=${KVER:-}
# kernel_opt "$@": an option loop's --kernel VERSION or --kernel=VERSION,
# into kver; kernel_shift says how many words it took.
#   --kernel|--kernel=*) kernel_opt "$@"; shift "$kernel_shift" ;;
# shellcheck disable=SC2034 # kernel_shift is the caller's to read
kernel_opt() {
	case $1 in
	--kernel=*) kver=${1#--kernel=}; kernel_shift=1 ;;
	*) [ $# -ge 2 ] || { log "--kernel needs a VERSION"; usage; }
		kver=$2; kernel_shift=2 ;;
	esac
	[ -n "$kver" ] || { log "--kernel needs a VERSION"; usage; }
}
# kernel_args: --kernel VERSION for a lane run below, when one was named
kernel_args() { [ -z "$kver" ] || printf '%s\n' --kernel "$kver"; }
# kernel_release: kver, or the default (the newest Debian kernel of ARCH's
# flavour with headers, vm/kver); dies when there is none.  A release of
# the other architecture's flavour (6.1.0-57-arm64) sets the arch_* facts
# to that architecture's.
kernel_release() {
	[ -n "$kver" ] || kver=$("$top/vm/kver")
	[ -n "$kver" ] || {
		if [ -n "$arch_native" ]; then
			die "no kernel found (no /usr/src/linux-headers-*-$arch); run 'make deps' as root"
		fi
		die "no $arch kernel prepared ('ARCH=$arch make deps' as root prepares one)"
	}
	case $kver in
	*-amd64) [ "$arch" = amd64 ] || arch_set amd64 ;;
	*-arm64) [ "$arch" = arm64 ] || arch_set arm64 ;;
	esac
}

# pvh_image IMAGE CONFIG CACHE: Debian's 6.1 image is XZ-compressed, and
# unpacking it under TCG takes about 4 s of every boot.  QEMU can boot
# the ELF vmlinux itself (the PVH entry point): unpack it once into CACHE.
# Fails when the kernel cannot boot that way (CACHE is then not written).
pvh_image() {
	local img=$1 config=$2 cache=$3 off tmp
	grep -qs '^CONFIG_KERNEL_XZ=y' "$config" || return 1
	grep -qs '^CONFIG_PVH=y' "$config" || return 1
	command -v xz >/dev/null || return 1
	if [ -s "$cache" ] && [ "$cache" -nt "$img" ]; then return 0; fi
	tmp=$cache.$$
	# The XZ stream's magic, then an ELF header once unpacked.
	while IFS=: read -r off _; do
		tail -c +$((off + 1)) "$img" | xz -dcq >"$tmp" 2>/dev/null
		if [ "$(head -c 4 "$tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
			mv -f "$tmp" "$cache"
			return 0
		fi
	done < <(LC_ALL=C grep -abo $'\xfd7zXZ' "$img")
	rm -f "$tmp"
	return 1
}

# --- the module, built for a kernel -------------------------------------------------

# module_build KVER DIR [MAKE-ARG]...: build dtimerfd.ko for KVER in DIR
# (build/kmod/KVER for a plain build), never in module/: lanes building
# for other kernels at the same time do not collide, and switching
# kernels back and forth rebuilds nothing.  DIR holds the sources `make
# dkms-install` ships (the one list of what building the module needs)
# plus vm/kernel, which builds for another suite's kernel in its root;
# only files whose content changed are copied, so kbuild rebuilds only
# what changed.  KDIR: the caller's for a kernel of our own (KIMAGE),
# else the kernel's (never a KDIR make exported for another kernel).
# Prints the module's path.
module_build() {
	local kv=$1 dir=$2 stage f kdir=/lib/modules/$1/build
	shift 2
	[ -n "$arch_native" ] || kdir=$("$top/vm/kernel" headers "$kv")
	[ -z "${KIMAGE:-}" ] || kdir=${KDIR:?KIMAGE needs KDIR}
	mkdir -p "$dir"
	(
		flock 8	# one build per DIR at a time
		stage=$(mktemp -d "$dir.XXXXXX")
		trap 'rm -rf "$stage"' EXIT
		make -s --no-print-directory -C "$top" dkms-install DKMSDIR="$stage" >&2 || exit 1
		install -m 755 "$top/vm/kernel" "$top/vm/checker-valid.sh" "$stage/vm/"
		(cd "$stage" && find . -type f) | while IFS= read -r f; do
			cmp -s "$stage/$f" "$dir/$f" ||
				{ mkdir -p "$(dirname "$dir/$f")" && cp -p "$stage/$f" "$dir/$f"; }
		done
		make -s --no-print-directory -C "$dir" module ARCH="$arch" KVER="$kv" KDIR="$kdir" "$@" >&2
	) 8>>"$dir.lock" || return 1
	printf '%s\n' "$dir/module/dtimerfd.ko"
}

# --- booting -------------------------------------------------------------------

# guest_lock: one guest at a time on this machine (two TCG guests on two
# CPUs distort every timing figure): fd 9 holds VM_LOCK until exit.
guest_lock() {
	local lock=${VM_LOCK:-/tmp/dtimerfd-guest.lock}
	exec 9>>"$lock"
	if ! flock -n 9; then
		log "waiting for another guest to finish ($lock)"
		flock 9
	fi
}

# boot_retry CONSOLE KEEP EARLY COMMAND...: boot (COMMAND: one QEMU run,
# its kernel console in CONSOLE), and boot again while the kernel
# panicked early, up to VM_BOOTS (3) boots in all.  Early: before the
# lane's first sign of the module, which the command EARLY says is still
# missing (each lane has its own sign).  A kernel that crashes then
# crashed on its own: under TCG, Debian's 6.12 now and then hits an int3
# of its own jump-label patching at boot ("Oops: int3" in
# sched_clock_cpu, CPU 0, PID 1, 2 s into boot: QEMU executing code
# another vCPU is rewriting).  Any report once the module is in stays
# fatal on the first boot.  A retried boot's console is kept as
# KEEP.bootN.log.  Sets qrc to the last boot's status.
# shellcheck disable=SC2034 # qrc is the caller's to read
boot_retry() {
	local console=$1 keep=$2 early=$3 boot boots=${VM_BOOTS:-3}
	shift 3
	[[ $boots =~ ^[1-9][0-9]*$ ]] || die "VM_BOOTS must be a number of boots, not '$boots'"
	for ((boot = 1; ; boot++)); do
		qrc=0
		"$@" || qrc=$?
		if [ "$boot" -ge "$boots" ] || ! grep -aq 'Kernel panic' "$console" ||
			! "$early"; then
			return 0
		fi
		cp "$console" "$keep.boot$boot.log"
		log "the guest kernel crashed before the module was loaded (boot $boot of $boots: $(splat_first "$console"); console in ${keep#"$top/"}.boot$boot.log); booting again"
	done
}

# no_module_line CONSOLE: the module has not logged yet (the kernel's
# "dtimerfd: loading out-of-tree module taints kernel." is its first line:
# a warning, shown unless the console's log level hides those)
no_module_line() { ! grep -aq '\] dtimerfd: ' "$1"; }

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

# The same for C: splat_words[] (anywhere), splat_starts[] (at the start)
# and splat_match(), the one matcher of both (the includer has <string.h>).
splat_header() {
	local e
	echo "/* Generated from vm/splat.txt by vm/lib.sh's splat_header: do not edit. */"
	echo "static const char *const splat_words[] = {"
	splat_entries | grep -v '^\^' | while IFS= read -r e; do c_string "$e"; done
	echo "};"
	echo "static const char *const splat_starts[] = {"
	splat_entries | sed -n 's/^\^\(.*\)/\1 /p' | while IFS= read -r e; do c_string "$e"; done
	echo "};"
	cat <<'EOF'

/* Is @msg, a kernel message without its time stamp, a report? */
static inline int splat_match(const char *msg)
{
	unsigned int i;

	for (i = 0; i < sizeof(splat_starts) / sizeof(splat_starts[0]); i++)
		if (!strncmp(msg, splat_starts[i], strlen(splat_starts[i])))
			return 1;
	for (i = 0; i < sizeof(splat_words) / sizeof(splat_words[0]); i++)
		if (strstr(msg, splat_words[i]))
			return 1;
	return 0;
}
EOF
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
