#!/bin/sh
# Build the Debian packages of this tree and try them as a site would
# (README, "Debian packages"):
#   scripts/deb.sh build    dpkg-buildpackage -us -uc -b in a clean copy
#                           of the committed tree (git archive HEAD); the
#                           .deb files land in ./debs, lintian's report in
#                           ./debs/lintian.txt
#   scripts/deb.sh test     install ./debs/*.deb (apt-get, dependencies
#                           resolved), then with no variable set but the
#                           UCX preload: fi_info -p gba (the provider found
#                           in libfabric's own directory), ucx_info -d (the
#                           gba transport), gba_demo -n 2 and
#                           man -w fi_gba; then remove the packages
#   scripts/deb.sh          both
# Needs root (or sudo) to install; the build dependencies come from
# scripts/deps.sh plus debhelper, fakeroot and lintian (installed here).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/debs
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

build() {
	"$top/scripts/deps.sh"
	missing=
	for p in debhelper fakeroot lintian; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] || $SUDO env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends $missing
	work=$(mktemp -d "${TMPDIR:-/tmp}/gba-deb.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	mkdir "$work/gba-fabric"
	git -C "$top" archive HEAD | tar -x -C "$work/gba-fabric"
	(cd "$work/gba-fabric" && dpkg-buildpackage -us -uc -b) \
		>"$work/build.log" 2>&1 || {
		tail -n 40 "$work/build.log"
		echo "deb.sh: dpkg-buildpackage failed" >&2
		exit 1
	}
	rm -rf "$out"
	mkdir -p "$out"
	mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
	lintian "$out"/*.changes >"$out/lintian.txt" 2>&1 || true
	ls -1 "$out"/*.deb
	echo "lintian: $(grep -c '^[EW]:' "$out/lintian.txt" || true)" \
		"errors and warnings ($out/lintian.txt)"
}

try() {
	ls "$out"/*.deb >/dev/null 2>&1 || {
		echo "deb.sh: no packages in $out: run 'scripts/deb.sh build'" >&2
		exit 1
	}
	pkgs=$(for f in "$out"/*.deb; do dpkg-deb -f "$f" Package; done)
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "$out"/*.deb
	fail=0
	# what a user's environment has: none of the project's variables
	clean="env -u FI_PROVIDER_PATH -u LD_LIBRARY_PATH -u LD_PRELOAD -u GBA_DEVICE"
	dev="emu:/gba-deb-$$"
	if $clean fi_info -p gba | grep -m 1 "provider: gba"; then :; else
		echo "FAIL: fi_info -p gba"; fail=1
	fi
	mod=$(dpkg -L ucx-gba | grep '/libuct_gba.so$')
	if $clean LD_PRELOAD="$mod" ucx_info -d | grep -m 1 "Transport: gba"; then :; else
		echo "FAIL: ucx_info -d with LD_PRELOAD=$mod"; fail=1
	fi
	if $clean GBA_DEVICE="$dev" gba_demo -n 2; then :; else
		echo "FAIL: gba_demo -n 2"; fail=1
	fi
	rm -f "/dev/shm/${dev#emu:/}"
	man -w fi_gba >/dev/null || { echo "FAIL: man -w fi_gba"; fail=1; }
	pkg-config --modversion gba || { echo "FAIL: pkg-config gba"; fail=1; }
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q $pkgs
	for p in $pkgs; do
		if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "installed"; then
			echo "FAIL: $p still installed"; fail=1
		fi
	done
	[ $fail = 0 ] && echo "deb.sh: packages installed, used and removed"
	return $fail
}

case ${1:-all} in
build) build ;;
test) try ;;
all) build && try ;;
*) echo "usage: $0 [build|test]" >&2; exit 2 ;;
esac
