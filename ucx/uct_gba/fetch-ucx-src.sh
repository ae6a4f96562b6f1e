#!/bin/sh
# Obtain the internal headers of the installed UCX for building libuct_gba.so.
#
# Usage: fetch-ucx-src.sh DESTDIR
#
# UCX installs only its public headers; a transport loaded into the stock
# libuct needs the internal ones (uct/base/*.h, ucs/...) and UCX's config.h,
# exactly as the installed libraries were built.  This script
#   1. reads the installed version (dpkg-query libucx0; it must agree with
#      libucx-dev, `ucx_info -v` and pkg-config),
#   2. downloads the Debian source package of exactly that version
#      (`apt-get source --download-only ucx=<version>`; needs a deb-src entry,
#      which scripts/deps.sh adds) or takes the .dsc named by $UCX_SRC_DSC
#      (offline builds: a .dsc with its tarballs beside it),
#   3. unpacks it with the Debian patches applied (dpkg-source -x),
#   4. regenerates UCX's configure (autoreconf) and runs it with the flags
#      `ucx_info -v` prints, creating only config.h and the version headers
#      (configure --no-create; nothing of UCX is compiled).
# Result: DESTDIR/src (the source), DESTDIR/build (config.h, src/uct/api/
# version.h, src/ucp/api/ucp_version.h), DESTDIR/version (the Debian version,
# written last: its presence means the tree is complete).  Run again, it does
# nothing while the installed version is unchanged.
set -e

die() {
	echo "fetch-ucx-src: error: $*" >&2
	exit 1
}

showlog() {	# showlog <file>: the end of a step's log, for the error message
	[ -f "$1" ] && tail -n 15 "$1" | sed 's/^/  | /' >&2
	return 0
}

[ $# = 1 ] || die "usage: $0 DESTDIR"
dest=$1
case $dest in
/*) ;;
*) dest=$(pwd)/$dest ;;
esac

command -v dpkg-query >/dev/null 2>&1 ||
	die "dpkg-query not found: the UCX headers are taken from the Debian source package (Debian 12)"
ver=$(dpkg-query -W -f='${Version}' libucx0 2>/dev/null) && [ -n "$ver" ] ||
	die "libucx0 is not installed (scripts/deps.sh installs libucx-dev and ucx-utils)"
devver=$(dpkg-query -W -f='${Version}' libucx-dev 2>/dev/null) ||
	die "libucx-dev is not installed (scripts/deps.sh installs it)"
[ "$devver" = "$ver" ] ||
	die "libucx0 is version $ver but libucx-dev is $devver: install matching versions"
upstream=${ver#*:}		# drop an epoch
upstream=${upstream%-*}		# drop the Debian revision
dscname=ucx_${ver#*:}.dsc

command -v ucx_info >/dev/null 2>&1 ||
	die "ucx_info not found (install ucx-utils): it tells how the installed UCX was configured"
infover=$(ucx_info -v | sed -n 's/^# Version //p')
[ "$infover" = "$upstream" ] ||
	die "ucx_info reports UCX '$infover' but the installed libucx0 is $ver: the running UCX is not the installed package"
pcver=$(pkg-config --modversion ucx 2>/dev/null || true)
[ -z "$pcver" ] || [ "$pcver" = "$upstream" ] ||
	die "pkg-config finds UCX $pcver (PKG_CONFIG_PATH?) but the installed libucx0 is $ver"
flags=$(ucx_info -v | sed -n 's/^# Configured with: //p')

if [ -f "$dest/version" ] && [ "$(cat "$dest/version")" = "$ver" ]; then
	exit 0
fi

start=$(date +%s)
rm -rf "$dest"
mkdir -p "$dest/dl" "$dest/build"

# 2. the source package
if [ -n "$UCX_SRC_DSC" ]; then
	[ -f "$UCX_SRC_DSC" ] || die "UCX_SRC_DSC=$UCX_SRC_DSC: no such file"
	dsc=$UCX_SRC_DSC
else
	if ! (cd "$dest/dl" && apt-get source -q --download-only "ucx=$ver") \
		>"$dest/dl/apt-get.log" 2>&1; then
		showlog "$dest/dl/apt-get.log"
		die "could not download the UCX source package ucx=$ver with apt-get source.
  It needs a deb-src entry for the Debian archive (scripts/deps.sh adds one and
  runs apt-get update) and access to the archive; offline, put ucx_${ver#*:}.dsc
  and its tarballs in a directory and set UCX_SRC_DSC=<that dir>/$dscname."
	fi
	dsc=$dest/dl/$dscname
fi
dscver=$(sed -n 's/^Version: //p' "$dsc")
[ "$dscver" = "$ver" ] ||
	die "$dsc is UCX $dscver, the installed UCX is $ver: the headers must come from the installed version"

# 3. unpack, Debian patches applied
if ! dpkg-source --no-copy -x "$dsc" "$dest/src" >"$dest/dl/dpkg-source.log" 2>&1; then
	showlog "$dest/dl/dpkg-source.log"
	die "dpkg-source -x $dsc failed"
fi

# 4. configure as the installed UCX was configured (as its autogen.sh does)
mkdir -p "$dest/src/config/m4" "$dest/src/config/aux"
if ! (cd "$dest/src" && autoreconf -i) >"$dest/build/autoreconf.log" 2>&1; then
	showlog "$dest/build/autoreconf.log"
	die "autoreconf in the UCX source failed"
fi
# The flags contain literal ${prefix}: split them without expanding anything.
set -f
# shellcheck disable=SC2086
if ! (cd "$dest/build" && ../src/configure $flags --no-create) \
	>"$dest/build/configure.log" 2>&1; then
	set +f
	showlog "$dest/build/configure.log"
	die "UCX's configure failed (log: $dest/build/config.log)"
fi
set +f
if ! (cd "$dest/build" && ./config.status config.h src/uct/api/version.h \
	src/ucp/api/ucp_version.h) >>"$dest/build/configure.log" 2>&1; then
	showlog "$dest/build/configure.log"
	die "UCX's config.status failed"
fi
# config.h records the flags: as the installed UCX's, without --no-create
sed -i 's/ --no-create"$/"/' "$dest/build/config.h"
grep -q "UCT_VERNO_STRING *\"$upstream\"" "$dest/build/src/uct/api/version.h" ||
	die "the configured UCX source is not version $upstream"

echo "$ver" >"$dest/version"
echo "fetch-ucx-src: UCX $ver internal headers configured in $dest ($(($(date +%s) - start)) s)"
