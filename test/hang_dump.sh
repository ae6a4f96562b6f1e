#!/bin/sh
# Print the stacks of every thread of the processes running PROGRAM (a
# path to an executable), for a test about to be killed for a hang: the
# one record of where it stood.
#
#   test/hang_dump.sh PROGRAM
#
# Uses gdb when installed (scripts/deps.sh installs it); without gdb it
# prints each thread's kernel wait channel, which /proc gives to the
# same user.
prog=$1
[ -n "$prog" ] || { echo "usage: $0 PROGRAM" >&2; exit 2; }
exe=$(readlink -f -- "$prog") || exit 2
for pid in $(pgrep -f -- "$prog"); do
	[ "$(readlink /proc/$pid/exe 2>/dev/null)" = "$exe" ] || continue
	echo "== hang: stacks of $prog, pid $pid"
	if command -v gdb >/dev/null 2>&1; then
		timeout 20 gdb -p "$pid" -batch -nx \
			-ex 'thread apply all bt 25' 2>/dev/null |
			grep -E '^(#|Thread )'
	else
		for t in /proc/$pid/task/*; do
			echo "-- thread ${t##*/}: $(cat $t/wchan 2>/dev/null)"
		done
	fi
done
