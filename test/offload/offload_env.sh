# Sourced by the test/offload drivers.  Finds the build tree's libraries,
# removes the test's private emulated device image on exit, and provides:
#
# launch NAME CMD...   run a launcher command line (timeout, output in
#                      $out, printed without MCA chatter); returns its
#                      exit status; a hang prints the stacks of PROG
#                      (test/hang_dump.sh) before the kill
# check_counts PREFIX KEY [MODE]
#                      compare each process's line "PREFIX ... KEY=R ...
#                      barriers=B failures=0" with the library's finalize
#                      line for the same rank: MODE "all" (default): B
#                      barriers on the GBA, every one confirmed by the
#                      device; "atleast": at least B on the GBA (the
#                      OpenSHMEM library's own barriers add to them), all
#                      confirmed; "alive": B in all, 32 groups offloaded
#                      and at most 32 held, the rest "no free hardware
#                      group"; "none": 0 on the GBA, B "disabled"
# Environment: MPI_TIMEOUT (seconds per run, default 120).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
libdir=$top_builddir/barrier_offload/.libs
uctmod=$top_builddir/ucx/uct_gba/.libs/libuct_gba.so
broken=$top_builddir/test/offload/.libs/libbroken_barrier.so
# the sanitizer runtimes go first in LD_PRELOAD, if any
san=
[ -n "$GBA_SAN_PRELOAD" ] && san="$(echo $GBA_SAN_PRELOAD | tr ' ' ':'):"
out=$(mktemp "${TMPDIR:-/tmp}/gba-offload.XXXXXX") || exit 99
case "$GBA_DEVICE" in
emu:/*) trap 'rm -f "/dev/shm/${GBA_DEVICE#emu:/}" "$out" "$out.stacks"' EXIT ;;
*) trap 'rm -f "$out" "$out.stacks"' EXIT ;;
esac
hang_dump=$top_srcdir/test/hang_dump.sh
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 10 ${MPI_TIMEOUT:-120}"
fails=0

launch() {
	name=$1
	shift
	echo "+ $*"
	watchdog=
	if [ -n "$tmo" ]; then
		(sleep $((${MPI_TIMEOUT:-120} - 30)) &&
			sh "$hang_dump" "$(cd "$(dirname "$prog")" && pwd)/$(basename "$prog")" \
				>"$out.stacks" 2>&1) &
		watchdog=$!
	fi
	$tmo "$@" >"$out" 2>&1
	rc=$?
	if [ -n "$watchdog" ]; then
		kill "$watchdog" 2>/dev/null
		wait "$watchdog" 2>/dev/null
	fi
	grep -v -e '\] mca: *base' -e '\] mca:base:' -e '\] select: ' "$out"
	[ "$rc" = 124 ] && cat "$out.stacks" 2>/dev/null
	echo "  ($name: exit $rc)"
	return $rc
}

bad() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

check_counts() {
	prefix=$1 key=$2 mode=${3:-all}
	lines=$(grep "^$prefix .* $key=" "$out")
	[ -n "$lines" ] || { bad "no \"$prefix\" line"; return; }
	echo "$lines" | while read -r line; do
		r=$(echo "$line" | sed "s/.* $key=\([0-9]*\).*/\1/")
		b=$(echo "$line" | sed 's/.* barriers=\([0-9]*\).*/\1/')
		f=$(echo "$line" | sed 's/.* failures=\([0-9]*\).*/\1/')
		lib=$(grep "libgba_barrier: rank $r (.*finalize:" "$out")
		gba=$(echo "$lib" | sed -n 's/.*finalize: \([0-9]*\) barriers on the GBA.*/\1/p')
		conf=$(echo "$lib" | sed -n 's/.*(\([0-9]*\) confirmed by the device).*/\1/p')
		if [ "$f" != 0 ]; then
			echo "FAIL: $key $r: $f failed checks"
		elif [ -z "$gba" ]; then
			echo "FAIL: $key $r: no finalize line of the library"
		elif [ "$gba" != "$conf" ]; then
			echo "FAIL: $key $r: $gba barriers on the GBA, $conf confirmed by the device"
		else
			case $mode in
			all) [ "$gba" = "$b" ] ||
				echo "FAIL: $key $r: $b barriers called, $gba on the GBA" ;;
			atleast) [ "$gba" -ge "$b" ] ||
				echo "FAIL: $key $r: $b barriers called, $gba on the GBA" ;;
			alive)
				sw=$(echo "$lib" | sed -n 's/.*no free hardware group: \([0-9]*\).*/\1/p')
				[ $((gba + ${sw:-0})) = "$b" ] &&
				echo "$lib" | grep -q '32 groups offloaded, at most 32 held' ||
				echo "FAIL: $key $r: $b barriers called; library: $lib" ;;
			none)
				dis=$(echo "$lib" | sed -n 's/.*disabled (GBA_BARRIER_ENABLE=0): \([0-9]*\).*/\1/p')
				[ "$gba" = 0 ] && [ "${dis:-0}" = "$b" ] ||
				echo "FAIL: $key $r: $b barriers called; library: $lib" ;;
			esac
		fi
	done >"$out.check"
	if [ -s "$out.check" ]; then
		cat "$out.check"
		fails=$((fails + $(wc -l <"$out.check")))
	else
		echo "  counts: every process's barriers accounted for ($mode)"
	fi
	rm -f "$out.check"
}
