#!/bin/sh
# The barrier-offload library preloaded into an unmodified OpenSHMEM
# program (offload_shmem.c) under oshrun, SPML-UCX: shmem_barrier_all with
# data visibility (puts into the symmetric heap and into a global
# variable), shmem_sync_all, shmem_barrier and shmem_sync on active sets
# (halves, even PEs), with 2, 4 and 8 PEs over UCX_TLS=gba,self and 2 and
# 4 over posix,self; every process's barriers accounted for in the
# library's finalize line and confirmed by the device; a broken offload
# that the check catches.
prog=$top_builddir/test/offload/offload_shmem
. "${top_srcdir:-$(dirname "$0")/../..}/test/offload/offload_env.sh"
oshrun=${OSHRUN-oshrun}
if [ -z "$oshrun" ] || ! command -v "$oshrun" >/dev/null 2>&1 ||
   [ ! -x "$prog" ]; then
	echo "SKIP: no Open MPI OpenSHMEM (configure found none)"
	exit 77
fi
if [ -n "$GBA_SAN_PRELOAD" ]; then
	# test/ucx/ucx_stack.sh: a preloaded libasan crashes Debian's Open
	# MPI 4.1.4 in shmem_init, whatever the transport
	echo "SKIP: OpenSHMEM crashes with libasan preloaded"
	exit 77
fi
lib=$libdir/libgba_barrier.so
pre=$lib
[ -f "$uctmod" ] && pre=$uctmod:$lib
# --mca osc ^rdma: Debian's Open MPI 4.1.4 crashes in shmem_finalize
# without it (doc/design.md section 6)
osh="$oshrun --allow-run-as-root --oversubscribe --bind-to none --mca osc ^rdma
	-x FI_PROVIDER_PATH -x LD_LIBRARY_PATH -x GBA_DEVICE
	-x GBA_BARRIER_VERBOSE=1"

run() {	# run TLS NP [ARGS...]
	tls=$1 np=$2
	shift 2
	launch "$tls np=$np" $osh -np "$np" -x UCX_TLS="$tls" \
		-x LD_PRELOAD="$pre" "$prog" "$@" || bad "$tls np=$np: exit $rc"
	check_counts "offload_shmem" pe atleast
}

tlss="posix,self"
[ -f "$uctmod" ] && tlss="gba,self $tlss"
for tls in $tlss; do
	for np in 2 4 8; do
		[ "$tls" = posix,self ] && [ "$np" = 8 ] && continue
		run "$tls" "$np" -I 30
	done
done

echo "== negative control: a broken offload releases early; the check must fail"
launch "broken" $osh -np 4 -x UCX_TLS=posix,self \
	-x LD_PRELOAD="$top_builddir/test/offload/.libs/libbroken_barrier.so:$lib" \
	"$prog" -I 30 -D 200
if [ "$rc" != 0 ] && grep -q "^FAIL pe .* row 0 " "$out"; then
	echo "  caught, as it must be"
else
	bad "the broken offload went unnoticed"
fi

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
