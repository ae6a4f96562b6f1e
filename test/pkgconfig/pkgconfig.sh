#!/bin/sh
# The installed pkg-config files, used as a program outside the tree uses
# them: install into a staging directory (make install DESTDIR=...; the
# libraries, headers and .pc files), then build test/pkgconfig/gba_pc.c
# with `pkg-config --cflags --libs gba` and, when the UCX transport is
# built, test/pkgconfig/uct_gba_pc.c with `pkg-config --cflags --libs
# uct-gba`, and run them.  PKG_CONFIG_SYSROOT_DIR maps the installed
# paths into the staging directory (UCX's own paths too, which then name
# nothing: the compiler's default directories still find UCX's headers).
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
CC=${PC_CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

if ! command -v "$PKG_CONFIG" >/dev/null 2>&1; then
	echo "SKIP: $PKG_CONFIG not found"
	exit 77
fi
stage=$(mktemp -d "${TMPDIR:-/tmp}/gba-pc.XXXXXX") || exit 1
export GBA_DEVICE="emu:/gba-pc-test-$$"
trap 'rm -rf "$stage"; rm -f "/dev/shm/${GBA_DEVICE#emu:/}"' EXIT

# the files pkg-config and the programs need, staged as installed
if ! make -s -C "$top_builddir" DESTDIR="$stage" install-libLTLIBRARIES \
	install-gbaincludeHEADERS install-pkgconfigDATA \
	install-ucxmoduleLTLIBRARIES >"$stage/install.log" 2>&1; then
	echo "FAIL: make install into $stage:"
	tail -n 20 "$stage/install.log"
	exit 1
fi
pcdir=$(find "$stage" -name gba.pc -printf '%h\n' | head -n 1)
if [ -z "$pcdir" ]; then
	echo "FAIL: no gba.pc installed under $stage"
	exit 1
fi
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_SYSROOT_DIR="$stage"
fail=0

# build_run <module> <source> <expected output prefix>
build_run() {
	flags=$("$PKG_CONFIG" --cflags --libs "$1") || {
		echo "FAIL: $PKG_CONFIG --cflags --libs $1"
		fail=1
		return
	}
	echo "$1: $flags"
	# the run path names the installed directory, not the staging one
	libpath=$(echo "$flags" | tr ' ' '\n' | sed -n 's/^-L//p' |
		tr '\n' ':')
	if ! $CC ${PC_CFLAGS:-} -o "$stage/$1" "$top_srcdir/$2" $flags \
		${PC_LDFLAGS:-}; then
		echo "FAIL: $CC $2 with pkg-config $1"
		fail=1
		return
	fi
	out=$(LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:-}" "$stage/$1" 2>&1)
	echo "$out"
	case $out in
	"$3"*) ;;
	*)
		echo "FAIL: $1 program: $out"
		fail=1
		;;
	esac
}

build_run gba test/pkgconfig/gba_pc.c "gba_pc: ok emu"
if [ -f "$pcdir/uct-gba.pc" ]; then
	build_run uct-gba test/pkgconfig/uct_gba_pc.c "uct_gba_pc: ok"
else
	echo "uct-gba.pc not installed (built without UCX): not tried"
fi
exit $fail
