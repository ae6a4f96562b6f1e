#!/bin/sh
# No test-only symbol in the shipped libraries: `nm -D --defined-only` of
# libgba.so, libgba-fi.so, the UCX module and the barrier-offload
# libraries (those built) must show no symbol whose name contains "test",
# "hook" or "internal", except the public API functions listed below.
# Test hooks belong in the test programs (test/core, test/prov).
top_builddir=${top_builddir:-.}
NM=${NM:-nm}
# public functions whose names match: gba(7) and uct_gba.h
allowed='^(gba_group_test|uct_gba_group_test)$'

if ! command -v "$NM" >/dev/null 2>&1; then
	echo "SKIP: $NM not found"
	exit 77
fi

fail=0
checked=0
for lib in "$top_builddir"/libgba/.libs/libgba.so \
	"$top_builddir"/prov/gba/.libs/libgba-fi.so \
	"$top_builddir"/ucx/uct_gba/.libs/*.so \
	"$top_builddir"/barrier_offload/.libs/*.so; do
	case $lib in
	*/libgba.so | */libgba-fi.so) ;; # always built
	*) [ -f "$lib" ] || continue ;;
	esac
	if [ ! -f "$lib" ]; then
		echo "FAIL: $lib not built"
		fail=1
		continue
	fi
	syms=$("$NM" -D --defined-only "$lib") || {
		echo "FAIL: $NM -D $lib"
		fail=1
		continue
	}
	bad=$(echo "$syms" | awk '{ print $NF }' |
		grep -Ei 'test|hook|internal' | grep -Ev "$allowed")
	if [ -n "$bad" ]; then
		echo "FAIL: $lib exports test-only symbols:"
		echo "$bad" | sed 's/^/	/'
		fail=1
	else
		echo "ok: $lib ($(echo "$syms" | wc -l) symbols)"
	fi
	checked=$((checked + 1))
done
echo "$checked libraries checked"
exit $fail
