#!/bin/sh
# The stock UCX stack over the transport (libuct_gba.so preloaded):
#   1. ucx_perftest UCT-level tests between two processes on device gba:
#      am_lat, put_lat, add_lat, get (bcopy and zcopy), am_bw (bcopy in the
#      queue and in chunks, zcopy; both also without chunks,
#      UCX_GBA_TX_CHUNKS=0), put_bw (zcopy, 1 MiB); the one-sided ones on memory the md
#      allocated (direct access) and on heap memory (UCX_GBA_ALLOC=heap:
#      through the target's queue);
#   2. ucx_perftest UCP-level tests with UCX_TLS=gba,self: tag_lat,
#      ucp_put_lat, ucp_get, ucp_add (also on heap memory, UCX_ALLOC_PRIO=
#      heap, without and with UCX_GBA_ASYNC_INTERVAL), stream_bw, tag_bw
#      (1 MiB; also without chunks);
#   3. bad UCX_GBA_* values: the interface refuses to open with a message
#      naming the parameter (ucx_info -d), nothing crashes;
#   4. Open MPI (pml ucx, UCX_TLS=gba,self): test/mpi/mpi_p2p with 2 and 4
#      ranks and mpi_coll with 4 (with gba,self only "self" cannot reach
#      the other ranks: the runs need gba);
#   5. OpenSHMEM (oshrun, SPML-UCX, UCX_TLS=gba,self): test/ucx/shmem_check
#      (built here with oshcc) with 2, 4 and 8 PEs.
# Skipped (77) without the module or ucx_perftest; the MPI and OpenSHMEM
# parts are skipped without mpirun/oshrun/oshcc, the OpenSHMEM part also
# under the sanitizers (see there).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
mod=$top_builddir/ucx/uct_gba/.libs/libuct_gba.so
PERFTEST=${PERFTEST:-ucx_perftest}
if [ ! -f "$mod" ] || ! command -v "$PERFTEST" >/dev/null 2>&1; then
	echo "SKIP: libuct_gba.so not built or ucx_perftest not found"
	exit 77
fi
# LD_PRELOAD list (colon-separated, so that mpirun -x carries it whole):
# the sanitizer runtimes first, if any
pre=$mod
[ -n "$GBA_SAN_PRELOAD" ] && pre="$(echo $GBA_SAN_PRELOAD | tr ' ' ':'):$mod"
# ThreadSanitizer (make check-tsan): UCX's memory hooks (UCM patches
# mmap, munmap, brk...) and ThreadSanitizer's interceptors of the same
# calls do not mix: the stock ucx_perftest dies of SIGSEGV at the UCP
# level with libtsan preloaded, with UCX_TLS=posix,self alike.  Without
# memory events UCX only does without its registration cache.  Open MPI's
# memory patcher does the same to pml ucx (posix,self too; ob1 runs).
# Each ucx_perftest iteration is also much slower there (a loaded 2-CPU
# machine took 3 ms per am_lat round trip, over the 90 s timeout): a
# tenth of the iterations.
mpi_tsan=
perf_div=1
case "$GBA_SAN_PRELOAD" in
*libtsan*)
	export UCX_MEM_EVENTS=no
	mpi_tsan="--mca memory ^patcher"
	perf_div=10
	;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gba-ucx.XXXXXX") || exit 99
case "$GBA_DEVICE" in
emu:/*) trap 'rm -rf "$tmp" "/dev/shm/${GBA_DEVICE#emu:/}"' EXIT ;;
*) trap 'rm -rf "$tmp"' EXIT ;;
esac
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 5 90"
port=$((20000 + $$ % 4000)) # test/ucx/perftest_lib.sh
fail=0
. "$top_srcdir/test/ucx/perftest_lib.sh"

# perf <what> <ucx_perftest arguments>: a server and a client; both must
# exit 0 and the client print its "Final:" line
perf() {
	what=$1
	shift
	# -n N: N / perf_div iterations
	args=
	while [ $# -gt 0 ]; do
		if [ "$1" = -n ] && [ $# -ge 2 ]; then
			args="$args -n $(($2 / perf_div))"
			shift 2
		else
			args="$args $1"
			shift
		fi
	done
	set -- $args
	perftest_serve "$tmp/s" env LD_PRELOAD="$pre" $tmo "$PERFTEST" "$@"
	LD_PRELOAD=$pre $tmo "$PERFTEST" localhost -p "$port" "$@" \
		>"$tmp/c" 2>&1
	crc=$?
	wait $spid
	src=$?
	final=$(grep '^Final:' "$tmp/c")
	if [ $crc = 0 ] && [ $src = 0 ] && [ -n "$final" ]; then
		echo "ok: $what: $final"
	else
		echo "FAIL: $what (ucx_perftest $*: server $src, client $crc)"
		tail -n 5 "$tmp/s" "$tmp/c" | sed 's/^/  | /'
		fail=1
	fi
}

echo "== UCT level, device gba"
uct="-d gba -x gba"
perf "am_lat 8 B" -t am_lat $uct -n 20000
perf "put_lat 8 B" -t put_lat $uct -n 20000
perf "add_lat" -t add_lat $uct -n 20000
perf "get bcopy 8 B" -t get $uct -D bcopy -s 8 -n 2000
perf "get zcopy 64 KiB" -t get $uct -D zcopy -s 65536 -n 2000
perf "am_bw bcopy 4000 B" -t am_bw $uct -D bcopy -s 4000 -n 20000
perf "am_bw bcopy 64 KiB" -t am_bw $uct -D bcopy -s 65536 -n 20000
perf "am_bw zcopy 64 KiB" -t am_bw $uct -D zcopy -s 65536 -n 5000
perf "put_bw zcopy 1 MiB" -t put_bw $uct -D zcopy -s 1048576 -n 500
export UCX_GBA_TX_CHUNKS=0
perf "am_bw bcopy 4000 B, no chunks" -t am_bw $uct -D bcopy -s 4000 -n 20000
perf "am_bw zcopy 64 KiB, no chunks (read in place)" -t am_bw $uct \
	-D zcopy -s 65536 -n 5000
unset UCX_GBA_TX_CHUNKS
export UCX_GBA_ALLOC=heap
perf "put_lat 8 B, heap" -t put_lat $uct -n 20000
perf "add_lat, heap" -t add_lat $uct -n 20000
perf "get zcopy 64 KiB, heap" -t get $uct -D zcopy -s 65536 -n 500
perf "put_bw zcopy 1 MiB, heap" -t put_bw $uct -D zcopy -s 1048576 -n 200
unset UCX_GBA_ALLOC

echo "== UCP level, UCX_TLS=gba,self"
export UCX_TLS=gba,self
perf "tag_lat 8 B" -t tag_lat -n 20000
perf "tag_lat 64 KiB" -t tag_lat -s 65536 -n 2000
perf "ucp_put_lat 8 B" -t ucp_put_lat -n 20000
perf "ucp_get 64 KiB" -t ucp_get -s 65536 -n 500
perf "ucp_add" -t ucp_add -n 5000
export UCX_ALLOC_PRIO=heap
perf "ucp_put_lat 8 B, heap" -t ucp_put_lat -n 20000
perf "ucp_get 64 KiB, heap" -t ucp_get -s 65536 -n 200
export UCX_GBA_ASYNC_INTERVAL=1ms
perf "ucp_get 64 KiB, heap, async progress" -t ucp_get -s 65536 -n 500
perf "ucp_add, heap, async progress" -t ucp_add -n 5000
unset UCX_GBA_ASYNC_INTERVAL UCX_ALLOC_PRIO
perf "stream_bw 1 MiB" -t stream_bw -s 1048576 -n 200
perf "tag_bw 1 MiB" -t tag_bw -s 1048576 -n 200
export UCX_GBA_TX_CHUNKS=0
perf "stream_bw 1 MiB, no chunks" -t stream_bw -s 1048576 -n 200
perf "tag_bw 64 KiB, no chunks" -t tag_bw -s 65536 -n 500
unset UCX_GBA_TX_CHUNKS

echo "== bad parameters"
# bad <VAR=value> <expected message>: ucx_info -d cannot open the gba
# interface and says why; ucx_info itself ends normally (no signal)
UCX_INFO=${UCX_INFO:-ucx_info}
bad() {
	env "$1" LD_PRELOAD="$pre" $tmo "$UCX_INFO" -d >"$tmp/b" 2>&1
	rc=$?
	if [ $rc -lt 124 ] && grep -q -- "$2" "$tmp/b" &&
	   grep -A1 -- "$2" "$tmp/b" | grep -q 'failed to open interface'; then
		echo "ok: $1 refused: $(grep -m1 -- "$2" "$tmp/b" |
			sed 's/.*UCX  ERROR //')"
	else
		echo "FAIL: $1: exit $rc, expected an error naming '$2'"
		grep -e ERROR -e 'Transport: gba' -A3 "$tmp/b" | head -n 10 |
			sed 's/^/  | /'
		fail=1
	fi
}
bad UCX_GBA_RX_QUEUE_LEN=3 "UCX_GBA_RX_QUEUE_LEN=3"
bad UCX_GBA_SEG_SIZE=100 "UCX_GBA_SEG_SIZE=100"
bad UCX_GBA_MAX_OPS=0 "UCX_GBA_MAX_OPS"
bad UCX_GBA_TX_CHUNKS=65 "UCX_GBA_TX_CHUNKS=65"
unset UCX_TLS

# forward the variables that are set (mpirun warns about unset ones)
xenv="-x UCX_TLS=gba,self -x LD_PRELOAD=$pre $mpi_tsan"
for v in LD_LIBRARY_PATH GBA_DEVICE UCX_MEM_EVENTS; do
	eval "[ -n \"\${$v+x}\" ]" && xenv="$xenv -x $v"
done
mpirun=${MPIRUN-mpirun}
# run <what> <launcher> <np> <program>: the program must pass
run() {
	what=$1 launcher=$2 np=$3 prog=$4
	set -- $tmo "$launcher" --allow-run-as-root --oversubscribe \
		--bind-to none -np "$np" --mca osc ^rdma $xenv "$prog"
	if "$@" >"$tmp/m" 2>&1 && grep -q "PASS ($np " "$tmp/m"; then
		echo "ok: $what with $np: $(grep "PASS" "$tmp/m" | head -n 1)"
	else
		echo "FAIL: $what with $np"
		echo "  + $*"
		tail -n 15 "$tmp/m" | sed 's/^/  | /'
		fail=1
	fi
}

echo "== Open MPI, pml ucx, UCX_TLS=gba,self"
if [ -n "$mpirun" ] && command -v "$mpirun" >/dev/null 2>&1 &&
   [ -x "$top_builddir/test/mpi/mpi_p2p" ]; then
	xenv="$xenv --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
	for np in 2 4; do
		run "mpi_p2p (pml ucx)" "$mpirun" $np "$top_builddir/test/mpi/mpi_p2p"
	done
	run "mpi_coll (pml ucx)" "$mpirun" 4 "$top_builddir/test/mpi/mpi_coll"
	xenv=${xenv% --mca pml ucx*}
else
	echo "skipped: no mpirun or test/mpi programs"
fi

echo "== OpenSHMEM, oshrun (SPML-UCX), UCX_TLS=gba,self"
OSHCC=${OSHCC:-oshcc}
OSHRUN=${OSHRUN:-oshrun}
if [ -n "$GBA_SAN_PRELOAD" ]; then
	# ASan's shadow memory and OpenSHMEM's fixed-address symmetric heap
	# do not mix: a preloaded libasan crashes Debian's Open MPI 4.1.4 in
	# shmem_init (mca_atomic_basic_startup), with UCX_TLS=posix,self too
	echo "skipped under the sanitizers (OpenSHMEM crashes with libasan" \
		"preloaded, whatever the transport)"
elif command -v "$OSHCC" >/dev/null 2>&1 &&
   command -v "$OSHRUN" >/dev/null 2>&1; then
	if "$OSHCC" -O2 -o "$tmp/shmem_check" \
		"$top_srcdir/test/ucx/shmem_check.c" >"$tmp/cc" 2>&1; then
		for np in 2 4 8; do
			run "shmem_check" "$OSHRUN" $np "$tmp/shmem_check"
		done
	else
		echo "FAIL: $OSHCC test/ucx/shmem_check.c"
		cat "$tmp/cc"
		fail=1
	fi
else
	echo "skipped: no oshcc/oshrun"
fi

[ $fail = 0 ] && echo "PASS: the UCX stack over gba"
exit $fail
