#!/bin/sh
# Main job on a new Debian 12 machine: install the packages, build and
# install into ./_install, then show the stock fi_info listing provider gba
# and run a multi-process GBA barrier plus self-RMA demonstration on the
# emulated device (no configuration, no daemon).
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
./scripts/deps.sh
prefix="$top/_install"
[ -x configure ] || ./autogen.sh
mkdir -p _build
cd _build
# (re)configure unless this build tree already installs into $prefix; a
# tree configured otherwise (the test job's _build has the default prefix)
# is rebuilt, as libtool links for the prefix
if ! grep -qx "prefix = $prefix" Makefile 2>/dev/null; then
	[ ! -f Makefile ] || make clean >/dev/null
	../configure --prefix="$prefix" --quiet
fi
make -j"$(nproc)" --quiet
make install --quiet >/dev/null
cd "$top"

export FI_PROVIDER_PATH="$prefix/lib/libfabric"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$prefix/bin:$PATH"

echo "== fi_info -p gba (stock libfabric $(fi_info --version | sed -n 's/^libfabric: //p'), provider from $FI_PROVIDER_PATH)"
fi_info -p gba
echo
echo "== gba_demo: 4 processes, GBA barriers and self RMA on the emulated device"
gba_demo -n 4
