#!/bin/sh
# The GBA barrier through UCT (uct_gba.h), test/ucx/uct_gba_barrier.c:
#   1. the API is exported by libuct_gba.so (nm -D);
#   2. one process: parameters, the switch endpoint, errors, limits;
#   3. 2, 4 and 8 member processes: many barriers with the early-release
#      check, arrivals through uct_gba_group_arrive and the switch
#      endpoint's put_short and atomics (prints us/barrier, not checked);
#   4. a member killed before it arrives: the others get
#      UCS_ERR_CONNECTION_RESET within 10 s (4 processes);
#   5. the negative control: an early leave is caught (exit status 3);
#   6. the one-process run's barrier that times out (a 708-member group
#      with one member attached) logged the members it waited for.
# Each run uses its own emulated device image.  Skipped (77) when the
# program is not built (no UCX).
top_builddir=${top_builddir:-.}
prog=$top_builddir/test/ucx/uct_gba_barrier
mod=$top_builddir/ucx/uct_gba/.libs/libuct_gba.so
if [ ! -x "$prog" ] || [ ! -f "$mod" ]; then
	echo "SKIP: uct_gba_barrier not built (no UCX)"
	exit 77
fi
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 5 300"
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# run <expected exit status> <what> <arguments>; its output stays in $out
run() {
	expect=$1 what=$2
	shift 2
	$tmo "$prog" "$@" > "$out" 2>&1
	rc=$?
	cat "$out"
	if [ $rc = "$expect" ]; then
		echo "ok: $what"
	else
		echo "FAIL: $what (uct_gba_barrier $*: exit status $rc, expected $expect)"
		fail=1
	fi
}

if command -v nm >/dev/null 2>&1; then
	for f in create destroy query arrive test wait; do
		if nm -D --defined-only "$mod" | grep -q " T uct_gba_group_$f\$"; then
			:
		else
			echo "FAIL: libuct_gba.so does not export uct_gba_group_$f"
			fail=1
		fi
	done
	[ $fail = 0 ] && echo "ok: libuct_gba.so exports the uct_gba_group_* API"
fi

run 0 "API checks and errors, one process"
if grep -q "timed out after 50 ms; absent: member 0 (not attached), member 1 (not attached), .*, \.\.\. (707 absent)" "$out"; then
	echo "ok: a barrier that timed out logged its absent members"
else
	echo "FAIL: no 'timed out ...; absent: member 0 (not attached), ...' warning"
	fail=1
fi
run 0 "2 processes, 2000 barriers" -n 2 -i 2000
run 0 "4 processes, 1000 barriers" -n 4 -i 1000
run 0 "8 processes, 500 barriers" -n 8 -i 500
run 0 "a killed member is reported (4 processes)" -n 4 -k
run 3 "negative control: an early leave is caught" -n 2 -x
exit $fail
