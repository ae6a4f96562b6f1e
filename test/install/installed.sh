#!/bin/sh
# The installed tree, used as a program or a user outside the source tree
# uses it: `make install DESTDIR=<staging directory>`, then
#   - pkg-config: test/install/gba_pc.c built with `pkg-config --cflags
#     --libs gba` and, when the UCX transport is built,
#     test/install/uct_gba_pc.c with `pkg-config --cflags --libs uct-gba`,
#     and run (PKG_CONFIG_SYSROOT_DIR maps the installed paths into the
#     staging directory; UCX's own paths too, which then name nothing: the
#     compiler's default directories still find UCX's headers);
#   - the modulefile, with Environment Modules or Lmod, whichever is
#     installed (else not tried): `module load gba` in a shell (a copy of the staged
#     modulefile pointed at the staging directory), then fi_info -p gba,
#     ucx_info -d (the gba transport), man -w fi_gba and gba_demo from
#     PATH; `module unload gba` restores the environment.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
CC=${PC_CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

if ! command -v "$PKG_CONFIG" >/dev/null 2>&1; then
	echo "SKIP: $PKG_CONFIG not found"
	exit 77
fi
stage=$(mktemp -d "${TMPDIR:-/tmp}/gba-inst.XXXXXX") || exit 1
export GBA_DEVICE="emu:/gba-inst-test-$$"
trap 'rm -rf "$stage"; rm -f "/dev/shm/${GBA_DEVICE#emu:/}"' EXIT

# the whole install, staged
if ! make -s -C "$top_builddir" DESTDIR="$stage" install \
	>"$stage/install.log" 2>&1; then
	echo "FAIL: make install DESTDIR=$stage:"
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

build_run gba test/install/gba_pc.c "gba_pc: ok emu"
if [ -f "$pcdir/uct-gba.pc" ]; then
	build_run uct-gba test/install/uct_gba_pc.c "uct_gba_pc: ok"
else
	echo "uct-gba.pc not installed (built without UCX): not tried"
fi

# module_check: load the modulefile in a shell and use what it sets
module_check() {
	# Environment Modules, or Lmod (Debian's packages conflict: one of them)
	minit=
	for f in /usr/share/modules/init/sh /usr/share/lmod/lmod/init/sh; do
		[ -r "$f" ] && minit=$f && break
	done
	if [ -z "$minit" ]; then
		echo "neither Environment Modules nor Lmod installed: modulefile not tried"
		return
	fi
	echo "modules: $minit"
	mf=$(find "$stage" -path '*/modulefiles/gba/*' -type f | head -n 1)
	if [ -z "$mf" ]; then
		echo "FAIL: no modulefile installed under $stage"
		fail=1
		return
	fi
	prefix=$(sed -n 's/^prepend-path LD_LIBRARY_PATH *//p' "$mf")
	prefix=${prefix%/*}
	mkdir -p "$stage/mods/gba"
	sed "s|$prefix|$stage$prefix|g" "$mf" >"$stage/mods/gba/${mf##*/}"
	out=$(env -u LD_PRELOAD -u FI_PROVIDER_PATH -u LD_LIBRARY_PATH \
		sh -c '
		. "$1"
		module use "$2/mods" && module load gba || exit 1
		echo "LD_PRELOAD=$LD_PRELOAD"
		# a sanitizer build: its runtimes first, or no program starts
		export LD_PRELOAD="${GBA_SAN_PRELOAD:+$GBA_SAN_PRELOAD:}$LD_PRELOAD"
		fi_info -p gba | grep -m 1 "provider: gba" || exit 2
		ucx_info -d | grep -q "Transport: gba" || exit 3
		man -w fi_gba || exit 4
		command -v gba_demo || exit 5
		module unload gba
		case ${LD_PRELOAD:-} in *libuct_gba*) ;; *) LD_PRELOAD= ;; esac
		echo "after unload: LD_PRELOAD=${LD_PRELOAD:-} FI_PROVIDER_PATH=${FI_PROVIDER_PATH:-}"
		' sh "$minit" "$stage" 2>&1)
	rc=$?
	echo "$out"
	if [ $rc != 0 ]; then
		echo "FAIL: module load gba, then step $rc"
		fail=1
	elif ! echo "$out" | grep -q "^after unload: LD_PRELOAD= FI_PROVIDER_PATH=$"; then
		echo "FAIL: module unload gba left the environment changed"
		fail=1
	fi
}

module_check
exit $fail
