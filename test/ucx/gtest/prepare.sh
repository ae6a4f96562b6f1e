#!/bin/sh
# Copy UCX's own UCT test suites (gtest) out of the UCX source the build
# fetched for libuct_gba.so, with transport gba added to those they are
# instantiated for.
#
# Usage: prepare.sh UCXSRC DESTDIR
#   UCXSRC   the tree ucx/uct_gba/fetch-ucx-src.sh made (UCXSRC/src is the
#            unpacked UCX source, UCXSRC/version its Debian version)
#   DESTDIR  receives UCX's test/gtest/common and test/gtest/uct as
#            DESTDIR/gtest/common and DESTDIR/gtest/uct (DESTDIR mirrors
#            UCX's test/ directory: the sources include <common/...>,
#            <gtest/uct/...> and their own headers by "..."), then
#            DESTDIR/version, written last
#
# Two lists name the transports and components the suites are instantiated
# for, and gba is added right after posix in both:
#   gtest/uct/uct_test.h   UCT_TEST_NO_SELF_TLS (UCT_INSTANTIATE_TEST_CASE and
#                          UCT_INSTANTIATE_NO_SELF_TEST_CASE expand it)
#   gtest/uct/test_md.cc   UCT_MD_INSTANTIATE_TEST_CASE (memory domains by
#                          component name)
# Nothing else is changed.  A list that is not where this UCX version had it
# is an error: the copy would silently test nothing for gba.
set -e

die() {
	echo "prepare.sh: error: $*" >&2
	exit 1
}

[ $# = 2 ] || die "usage: $0 UCXSRC DESTDIR"
src=$1/src/test/gtest
dest=$2
[ -f "$1/version" ] ||
	die "$1/version not found: the UCX source is not fetched (make runs ucx/uct_gba/fetch-ucx-src.sh first)"
if [ ! -d "$src/common" ] || [ ! -d "$src/uct" ]; then
	die "$src has no common/ and uct/: not a UCX source tree with its gtest suites"
fi

mkdir -p "$dest/gtest"
rm -f "$dest/version"
# Into the existing directories: the build's dependency files stay
cp -R "$src/common" "$src/uct" "$dest/gtest/"

# add_after_posix FILE PATTERN LINE: insert LINE after the one line of FILE
# that matches PATTERN (grep -E), which must exist exactly once
add_after_posix() {
	n=$(grep -cE "$2" "$1" || true)
	[ "$n" = 1 ] ||
		die "$1: expected one line matching '$2' (the posix entry of the instantiation list), found $n"
	sed -E "/$2/a\\
$3" "$1" >"$1.tmp"
	mv "$1.tmp" "$1"
}
# (the lines added end in a backslash, as the list's lines do)
# shellcheck disable=SC1003
add_after_posix "$dest/gtest/uct/uct_test.h" '^ +posix, +\\$' \
	'    gba,                     \\'
# shellcheck disable=SC1003
add_after_posix "$dest/gtest/uct/test_md.cc" '^ +posix, \\$' \
	'                   gba, \\'

cp "$1/version" "$dest/version"
