#!/bin/sh
# libuct_gba.so in the stock UCX: preloaded, `ucx_info -d` lists the
# component, its memory domain and the transport "gba" on device "gba", and
# `ucx_info -c` the UCX_GBA_* parameters; without the preload none of it.
# With a running UCX that reports another version (a shim overriding
# ucp_get_version, preloaded first), the module refuses to register and
# says why.  Skipped (77) when the module is not built (no UCX).
top_builddir=${top_builddir:-.}
mod=$top_builddir/ucx/uct_gba/.libs/libuct_gba.so
shim=$top_builddir/test/ucx/.libs/libfake_ucp_version.so
UCX_INFO=${UCX_INFO:-ucx_info}
UCX_VERSION=$("$UCX_INFO" -v 2>/dev/null | sed -n "s/^# Version //p")

if [ ! -f "$mod" ] || ! command -v "$UCX_INFO" >/dev/null 2>&1; then
	echo "SKIP: libuct_gba.so not built or ucx_info not found (no UCX)"
	exit 77
fi

fail=0
out=${TMPDIR:-/tmp}/uct_gba_load.$$
trap 'rm -f "$out".*' EXIT

# info <preloads> <ucx_info arguments>: ucx_info with these libraries
# preloaded (after the sanitizer runtimes, if any)
info() {
	pre=$1
	shift
	LD_PRELOAD="${GBA_SAN_PRELOAD:+$GBA_SAN_PRELOAD }$pre" "$UCX_INFO" "$@"
}

expect() {	# expect <file> <grep -E pattern> <what>
	if grep -Eq -- "$2" "$1"; then
		echo "ok: $3"
	else
		echo "FAIL: $3 (no line matching '$2' in:)"
		head -n 20 "$1" | sed 's/^/  | /'
		fail=1
	fi
}

refute() {	# refute <file> <grep -E pattern> <what>
	if grep -Eq -- "$2" "$1"; then
		echo "FAIL: $3 (a line matches '$2':)"
		grep -E -- "$2" "$1" | sed 's/^/  | /'
		fail=1
	else
		echo "ok: $3"
	fi
}

# 1. preloaded: the device listing
info "$mod" -d >"$out.d" 2>"$out.d.err" || {
	echo "FAIL: ucx_info -d exited with $?"; cat "$out.d.err"; fail=1; }
expect "$out.d" '^# Memory domain: gba$' "ucx_info -d lists memory domain gba"
expect "$out.d" '^#     Component: gba$' "... of component gba"
expect "$out.d" '^#      Transport: gba$' "ucx_info -d lists transport gba"
expect "$out.d" '^#         Device: gba$' "... on device gba"
expect "$out.d" '^#           Type: network$' "... of type network"
expect "$out.d" '^#  System device: <unknown>$' "... with no system device"
expect "$out.d" '^#           connection: to iface$' "... connecting to interfaces"
expect "$out.d" '^#           remote key: 24 bytes$' "rkey of 24 bytes (address, length, key id)"
refute "$out.d.err" 'uct_gba|ERROR|WARN' "nothing on stderr"

# 2. preloaded: the parameters
info "$mod" -c >"$out.c" 2>&1
expect "$out.c" '^UCX_GBA_DEVICE=$' "ucx_info -c: UCX_GBA_DEVICE (default empty)"
expect "$out.c" '^UCX_GBA_ALLOC=' "ucx_info -c: the interface's UCX_GBA_* parameters"
UCX_GBA_DEVICE=emu:/x; export UCX_GBA_DEVICE
info "$mod" -c >"$out.c2" 2>&1
unset UCX_GBA_DEVICE
expect "$out.c2" '^UCX_GBA_DEVICE=emu:/x$' "UCX_GBA_DEVICE from the environment"

# 3. UCP with UCX_TLS=gba,self: the worker is created (a transport without a
# connection model would trip an assertion of UCP), loopback goes over self
export UCX_TLS=gba,self
info "$mod" -e -u t >"$out.e" 2>&1 || {
	echo "FAIL: UCX_TLS=gba,self ucx_info -e -u t exited with $?"; fail=1; }
unset UCX_TLS
expect "$out.e" 'lane\[0\]: .*self/' "UCX_TLS=gba,self: a UCP endpoint to itself over self"
refute "$out.e" 'Assertion|ERROR' "UCX_TLS=gba,self: no error"

# 4. not preloaded: stock UCX knows nothing of gba
info "" -d >"$out.n" 2>&1
# (the gba transport's lines: a network interface whose name holds "gba",
# e.g. the emulated hosts' gbah-root of scripts/emu_hosts.sh, may be
# listed under tcp while another test runs)
gba_lines='(Memory domain|Component|Transport|Device): gba$'
refute "$out.n" "$gba_lines" "ucx_info -d without the module: no gba"
info "" -c >"$out.nc" 2>&1
refute "$out.nc" '^UCX_GBA_' "ucx_info -c without the module: no UCX_GBA_*"

# 5. another running UCX version: refusal, nothing registered
if [ -f "$shim" ]; then
	info "$shim $mod" -d >"$out.v" 2>"$out.v.err"
	expect "$out.v.err" "^uct_gba: libuct_gba.so was built for UCX $UCX_VERSION but the running UCX is 1\.99\.0; the gba transport is not registered" \
		"another UCX version: the refusal message"
	refute "$out.v" "$gba_lines" "another UCX version: ucx_info -d lists no gba"
	info "$shim $mod" -c >"$out.vc" 2>/dev/null
	refute "$out.vc" '^UCX_GBA_' "another UCX version: no UCX_GBA_* parameters"
else
	echo "FAIL: $shim not built"
	fail=1
fi

exit $fail
