#!/bin/sh
# Resource exhaustion as the programs of both stacks see it (gba(7),
# RESOURCE LIMITS).  In a private mount namespace (unshare -m) a small
# tmpfs is mounted over /dev/shm, of 256 KiB and 1 MiB (no receive queue
# fits: every run must fail with "No space left on device"), then 2 MiB
# and 4 MiB (some objects fit: a run may succeed or fail, with a message);
# then, with a roomy /dev/shm, low file-descriptor limits (ulimit -n 4, 5,
# 6) and no lockable memory (ulimit -l 0; nothing in the project locks
# memory).  Programs: gba_demo and fi_gba_xfer (libfabric, 2 processes),
# uct_gba_barrier (UCT, 2 processes) and ucx_perftest am_bw over device gba
# with libuct_gba.so preloaded (the UCX parts when built and installed).
# No run may end by a signal (SIGBUS was the symptom: shared-memory files
# were sized but not allocated, and the first store into a page the full
# tmpfs could not give killed the process), hang, or fail silently.
# Skipped (77) where a private mount namespace or a tmpfs mount is not
# permitted (not root, a container).
top_builddir=${top_builddir:-.}
if [ -z "$GBA_SHM_LIMITS_NS" ]; then
	if ! unshare -m true 2>/dev/null; then
		echo "SKIP: unshare -m not permitted (needs root)"
		exit 77
	fi
	GBA_SHM_LIMITS_NS=1 exec unshare -m sh "$0" "$@"
fi
# from here on, in the private mount namespace
if ! mount -t tmpfs -o size=4m tmpfs /dev/shm 2>/dev/null; then
	echo "SKIP: cannot mount a tmpfs over /dev/shm"
	exit 77
fi

demo=$top_builddir/tools/gba_demo
xfer=$top_builddir/fabtests/fi_gba_xfer
# the real program, not libtool's wrapper script (which needs descriptors
# of its own: it fails first under ulimit -n)
ucxbar=$top_builddir/test/ucx/.libs/uct_gba_barrier
[ -x "$ucxbar" ] || ucxbar=$top_builddir/test/ucx/uct_gba_barrier
mod=$top_builddir/ucx/uct_gba/.libs/libuct_gba.so
[ -f "$mod" ] && export LD_LIBRARY_PATH="$top_builddir/ucx/uct_gba/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pre=$mod
[ -n "$GBA_SAN_PRELOAD" ] && pre="$(echo $GBA_SAN_PRELOAD | tr ' ' ':'):$mod"
perftest=
if [ -f "$mod" ] && command -v ucx_perftest >/dev/null 2>&1; then
	perftest=ucx_perftest
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gba-limits.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 5 120"
port=$((24100 + $$ % 4000)) # test/ucx/perftest_lib.sh
fail=0
. "${top_srcdir:-.}/test/ucx/perftest_lib.sh"

# judge <want> <what> <exit status>: the verdict on the output in
# $tmp/out.  <want> "enospc": a non-zero exit and "No space left on
# device" in the output; "any": exit 0, or non-zero with a message.
# Never a signal, a timeout or a sanitizer report.
judge() {
	want=$1 what=$2 rc=$3
	why=
	if [ "$rc" -ge 124 ] && [ "$rc" -le 128 ]; then
		why="exit status $rc (timeout)"
	elif [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
		why="killed by signal $((rc - 128))"
	elif grep -qiE 'signal|sigbus|bus error|core dumped|sanitizer|runtime error' \
		"$tmp/out"; then
		why="a signal or a sanitizer report"
	elif [ "$want" = enospc ] && [ "$rc" = 0 ]; then
		why="exit status 0, expected an error"
	elif [ "$want" = enospc ] &&
		! grep -q 'No space left on device' "$tmp/out"; then
		why="no \"No space left on device\" in the output"
	elif [ "$rc" != 0 ] && [ ! -s "$tmp/out" ]; then
		why="exit status $rc without a message"
	fi
	if [ -z "$why" ]; then
		if [ "$rc" = 0 ]; then
			echo "ok: $what: success"
		else
			echo "ok: $what: exit status $rc: $(grep -m1 -iE \
				'no space|too many|error|fail' "$tmp/out" |
				cut -c1-160)"
		fi
	else
		echo "FAIL: $what: $why"
		tail -n 8 "$tmp/out" | sed 's/^/  | /'
		fail=1
	fi
}

# run <want> <what> <limit command or :> <program and arguments>: run the
# program (after the ulimit, in a subshell) and judge it; /dev/shm is
# emptied after each run
run() {
	want=$1 what=$2 lim=$3
	shift 3
	(
		$lim || exit 99
		exec $tmo "$@"
	) >"$tmp/out" 2>&1
	judge "$want" "$what" $?
	rm -f /dev/shm/* 2>/dev/null
}

# limited_perftest <arguments>: ucx_perftest under the limit $lim
limited_perftest() {
	(
		$lim || exit 99
		LD_PRELOAD=$pre exec $tmo $perftest "$@"
	)
}

# perf <want> <what> <limit command or :>: ucx_perftest am_bw between a
# server and a client, outputs judged together
perf() {
	want=$1 what=$2 lim=$3
	[ -n "$perftest" ] || return 0
	args="-t am_bw -d gba -x gba -s 4000 -n 2000"
	perftest_serve "$tmp/s" limited_perftest $args
	(
		$lim || exit 99
		LD_PRELOAD=$pre exec $tmo $perftest localhost $args -p $port
	) >"$tmp/c" 2>&1
	crc=$?
	wait $spid
	src=$?
	cat "$tmp/s" "$tmp/c" >"$tmp/out"
	[ $src -gt $crc ] && crc=$src
	judge "$want" "$what" $crc
	rm -f /dev/shm/* 2>/dev/null
}

# all <want> <label> <limit command or :>: every program once
all() {
	run "$1" "gba_demo, $2" "$3" "$demo" -n 2 -I 20
	run "$1" "fi_gba_xfer, $2" "$3" "$xfer" -n 2 -I 1 -T 60
	[ -x "$ucxbar" ] &&
		run "$1" "uct_gba_barrier, $2" "$3" "$ucxbar" -n 2 -i 20
	perf "$1" "ucx_perftest am_bw, $2" "$3"
}

for size in 256k 1m 2m 4m; do
	umount /dev/shm
	mount -t tmpfs -o size=$size tmpfs /dev/shm || exit 99
	case $size in
	256k | 1m) want=enospc ;;
	*) want=any ;;
	esac
	echo "== /dev/shm of $size"
	all $want "/dev/shm $size" :
done

umount /dev/shm
mount -t tmpfs -o size=64m tmpfs /dev/shm || exit 99
for n in 4 5 6; do
	echo "== ulimit -n $n"
	all any "ulimit -n $n" "ulimit -n $n"
done
echo "== ulimit -l 0"
all any "ulimit -l 0" "ulimit -l 0"
[ -z "$perftest" ] && echo "note: ucx_perftest or libuct_gba.so missing: its runs skipped"
exit $fail
