# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Roots for the Debian packages (sourced by scripts/deb-build and
# scripts/deb-test).  Under $deb_cache/SUITE (/var/cache/dtimerfd/deb):
#
#   base/       `debootstrap --variant=minbase SUITE` (vm/kernel mkroot),
#               never changed after it is made: what a user starts from
#   tools/      base plus what every package build needs (build-essential,
#               debhelper, dh-dkms, lintian), made once from a copy of base
#   archives/   the .debs apt downloaded, shared by every run of SUITE
#
# Nothing runs in base or tools themselves: each build and each test gets
# a fresh overlay of one of them (in_overlay), thrown away when it ends,
# so every run starts from the same clean root, as sbuild's overlays do.

# The sourcing script sets top (the work tree) and me (its name).
: "${top:?}" "${me:?}"
deb_cache=${DTFD_DEB_CACHE:-/var/cache/dtimerfd/deb}
tools_pkgs=(build-essential debhelper dh-dkms lintian)

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'; }

# The minimal root of SUITE, made once.
base_root() {
	local suite=$1 r=$deb_cache/$1/base
	mkdir -p "$deb_cache/$suite"
	"$top/vm/kernel" mkroot "$suite" "$r" || die "cannot make the $suite root in $r"
	echo "$r"
}

# base plus the build tools, made once (a copy of base, then apt-get).
# tools_root SUITE [ARCH]: for another architecture than this machine's
# (vm/arch.sh), the root also has ARCH as a foreign architecture (the
# root's, never this machine's) and crossbuild-essential-ARCH.
tools_root() {
	local suite=$1 cross=${2:-} b t=$deb_cache/$1/tools pkgs=("${tools_pkgs[@]}") pre=:
	if [ -n "$cross" ]; then
		t=$t-$cross
		# libc6:ARCH itself too, for dpkg-shlibdeps (the cross libc is not it)
		pkgs+=("crossbuild-essential-$cross" "libc6-dev:$cross")
		pre="dpkg --add-architecture $cross"
	fi
	if [ -e "$t/.dtimerfd-tools" ]; then
		echo "$t"
		return 0
	fi
	b=$(base_root "$suite")
	echo "$me: making the $suite build root (${pkgs[*]}; a few minutes, once)" >&2
	rm -rf "$t.new"
	cp -a "$b" "$t.new"
	if ! "$top/vm/kernel" chroot "$t.new" -- \
		sh -c 'export DEBIAN_FRONTEND=noninteractive; '"$pre"' && apt-get -qq update &&
			apt-get install -y -qq --no-install-recommends "$@" && apt-get clean' \
		sh "${pkgs[@]}" >"$t.log" 2>&1; then
		tail -n 20 "$t.log" >&2
		die "apt-get install ${pkgs[*]} in $t.new failed (log: $t.log)"
	fi
	touch "$t.new/.dtimerfd-tools"
	rm -rf "$t"
	mv "$t.new" "$t"
	echo "$t"
}

# in_overlay SUITE LOWER SETUP -- CMD...: run CMD chrooted in a fresh
# overlay of LOWER (vm/kernel chroot: /proc, /sys, /dev), with apt's
# archives shared by every run of SUITE.  SETUP is a shell snippet run on
# the host first, with $root the overlay's top (to put files in);
# $DTFD_OUT, when set, is a host directory shown at the same path inside.
# The overlay's upper layer is deleted when CMD ends.
in_overlay() {
	local suite=$1 lower=$2 setup=$3 run rc=0
	shift 4
	mkdir -p "$deb_cache/$suite/archives/partial"
	run=$(mktemp -d "$deb_cache/$suite/run.XXXXXX")
	mkdir -p "$run/upper" "$run/work" "$run/root"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --propagation private -- /bin/bash -c '
		set -e
		run=$1 lower=$2 archives=$3 top=$4 setup=$5; shift 5
		mount -t overlay overlay -o "lowerdir=$lower,upperdir=$run/upper,workdir=$run/work" "$run/root"
		root=$run/root
		mount --bind "$archives" "$root/var/cache/apt/archives"
		eval "$setup"
		DTFD_BIND="${DTFD_OUT:-}" exec "$top/vm/kernel" chroot "$root" -- "$@"
	' in_overlay "$run" "$lower" "$deb_cache/$suite/archives" "$top" "$setup" "$@" || rc=$?
	rm -rf "$run"
	return "$rc"
}
