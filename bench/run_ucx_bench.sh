#!/bin/sh
# The UCX transport next to UCX's own shared-memory transport posix,
# measured in the same run (figures printed, never checked):
#   - ucx_perftest latency at 8 B, half round trip, median of each test:
#     UCT level am_lat, put_lat, add_lat (-d gba -x gba vs -d memory
#     -x posix); UCP level tag_lat, ucp_put_lat (UCX_TLS=gba,self vs
#     posix,self);
#   - UCP tag_lat at the medium sizes 4, 8 and 16 KiB (either side of the
#     queue's inline limit), same pairs;
#   - bandwidth at 1 MiB: UCP tag_bw, stream_bw and ucp_put_bw, and tag_bw
#     at 64 KiB, same pairs;
#   - rendezvous from heap memory: UCP tag_lat and tag_bw at 64 KiB and
#     1 MiB with UCX_MEM_ALLOC_METHODS=heap on both sides (ucx_perftest's
#     buffers from malloc, not from the md: gba cannot reach them with
#     loads and stores), same pairs;
#   - MPI over PML-UCX (mpirun --mca pml ucx, 2 ranks), gba,self vs
#     posix,self: an 8-byte ping-pong, HPCC's ring step, a rank's
#     exchange with itself and an MPI_Test that finds nothing
#     (bench/gba_bench_mpi_pingpong -m 8 -b 0, of the build tree);
#   - shmem_barrier_all (oshrun, SPML-UCX) with 2, 4 and 8 PEs, gba,self vs
#     posix,self (bench/gba_bench_shmem_barrier.c, built here with oshcc);
#   - every PE adding to counters of random PEs at once (shmem_atomic_add,
#     shmem_atomic_fetch_add; HPCC RandomAccess's pattern) with 2 and 4
#     PEs, same pairs (bench/gba_bench_shmem_atomic.c, built here).
# Runs alternate between the two sides; the tables show medians of REPS
# runs (default 3) and the ratio gba/posix.
# Usage: bench/run_ucx_bench.sh [MODULE]   (default: the build tree's
#   ucx/uct_gba/.libs/libuct_gba.so under $top_builddir, else .)
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
mod=${1:-$top_builddir/ucx/uct_gba/.libs/libuct_gba.so}
reps=${REPS:-3}
if [ ! -f "$mod" ] || ! command -v ucx_perftest >/dev/null 2>&1; then
	echo "skipped: no $mod or no ucx_perftest"
	exit 0
fi
mod=$(cd "$(dirname "$mod")" && pwd)/$(basename "$mod")
. "$top_srcdir/bench/bench_csv.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((30000 + $$ % 20000))
status=0

# perf <field> <env assignment> <ucx_perftest args>: the field of the
# client's Final line (3: median latency in us; 7: average MB/s)
perf() {
	field=$1 tls=$2
	shift 2
	port=$((port + 1))
	env LD_PRELOAD="$mod" $tls timeout 120 ucx_perftest -p $port "$@" \
		>/dev/null 2>&1 &
	sleep 1
	env LD_PRELOAD="$mod" $tls timeout 120 ucx_perftest localhost \
		-p $port "$@" >"$tmp/c" 2>&1
	wait
	v=$(awk -v f="$field" '/^Final:/ { print $f }' "$tmp/c")
	[ -n "$v" ] || { status=1; v=-; echo "FAILED: ucx_perftest $*" >&2; }
	echo "$v"
}

# show <name> <gba values> <posix values>: medians and ratio
# show NAME GBA_LIST POSIX_LIST: a table row of the medians (and a row of
# $BENCH_CSV/$csv_name.csv)
show() {
	echo "$2|$3" | awk -v n="$1" -v csv="$(csv_file "$csv_name")" '
	function med(s, a, k, i, j, t) {
		k = split(s, a)
		for (i = 2; i <= k; i++) {
			t = a[i]
			for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--)
				a[j + 1] = a[j]
			a[j + 1] = t
		}
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	{
		split($0, h, "|")
		g = med(h[1]); p = med(h[2])
		printf "%-24s %12s %12s %8.2fx\n", n, g, p, (p > 0 ? g / p : 0)
		if (csv != "")
			printf "%s,%s,%s\n", n, g, p >>csv
	}'
}

# uct <name> <field> <args>: gba vs posix at UCT level
uct() {
	name=$1 field=$2
	shift 2
	g= p= r=1
	while [ $r -le "$reps" ]; do
		g="$g $(perf "$field" "UCX_GBA_X=" -d gba -x gba "$@")"
		p="$p $(perf "$field" "UCX_GBA_X=" -d memory -x posix "$@")"
		r=$((r + 1))
	done
	show "$name" "$g" "$p"
}

# ucp <name> <field> <args>: UCX_TLS=gba,self vs posix,self
ucp() {
	name=$1 field=$2
	shift 2
	g= p= r=1
	while [ $r -le "$reps" ]; do
		g="$g $(perf "$field" UCX_TLS=gba,self "$@")"
		p="$p $(perf "$field" UCX_TLS=posix,self "$@")"
		r=$((r + 1))
	done
	show "$name" "$g" "$p"
}

# ucp_heap <name> <field> <args>: the same with buffers from the heap
ucp_heap() {
	name=$1 field=$2
	shift 2
	g= p= r=1
	while [ $r -le "$reps" ]; do
		g="$g $(perf "$field" "UCX_TLS=gba,self UCX_MEM_ALLOC_METHODS=heap" "$@")"
		p="$p $(perf "$field" "UCX_TLS=posix,self UCX_MEM_ALLOC_METHODS=heap" "$@")"
		r=$((r + 1))
	done
	show "$name" "$g" "$p"
}

csv_name=ucx
csv_open ucx "test,gba,posix"
echo "== ucx_perftest, 2 processes: gba vs posix, medians of $reps runs"
echo "latency, us, half round trip (target at 8 B: gba/posix <= 1.10)"
printf "%-24s %12s %12s %9s\n" test gba posix gba/posix
uct "uct am_lat 8 B" 3 -t am_lat -n 100000
uct "uct put_lat 8 B" 3 -t put_lat -n 100000
uct "uct add_lat" 3 -t add_lat -n 100000
ucp "ucp tag_lat 8 B" 3 -t tag_lat -n 100000
ucp "ucp ucp_put_lat 8 B" 3 -t ucp_put_lat -n 100000
ucp "ucp tag_lat 4 KiB" 3 -t tag_lat -s 4096 -n 20000
ucp "ucp tag_lat 8 KiB" 3 -t tag_lat -s 8192 -n 20000
ucp "ucp tag_lat 16 KiB" 3 -t tag_lat -s 16384 -n 20000
ucp_heap "ucp tag_lat 64 KiB heap" 3 -t tag_lat -s 65536 -n 5000
ucp_heap "ucp tag_lat 1 MiB heap" 3 -t tag_lat -s 1048576 -n 500
echo "bandwidth, MB/s (target at 1 MiB: gba/posix >= 1.00)"
printf "%-24s %12s %12s %9s\n" test gba posix gba/posix
ucp "ucp tag_bw 1 MiB" 7 -t tag_bw -s 1048576 -n 2000
ucp "ucp stream_bw 1 MiB" 7 -t stream_bw -s 1048576 -n 500
ucp "ucp ucp_put_bw 1 MiB" 7 -t ucp_put_bw -s 1048576 -n 2000
ucp "ucp tag_bw 64 KiB" 7 -t tag_bw -s 65536 -n 20000
ucp_heap "ucp tag_bw 64 KiB heap" 7 -t tag_bw -s 65536 -n 20000
ucp_heap "ucp tag_bw 1 MiB heap" 7 -t tag_bw -s 1048576 -n 2000

echo
echo "== MPI over PML-UCX, 2 ranks: UCX_TLS=gba,self vs posix,self," \
	"medians of $reps runs"
pp=$top_builddir/bench/gba_bench_mpi_pingpong
if [ -x "$pp" ] && command -v "${MPIRUN:-mpirun}" >/dev/null 2>&1; then
	printf "%-24s %12s %12s %9s\n" test gba_us posix_us gba/posix
	csv_name=ucx_mpi
	csv_open ucx_mpi "test,gba_us,posix_us"
	: >"$tmp/mpi.gba"
	: >"$tmp/mpi.posix"
	r=1
	while [ $r -le "$reps" ]; do
		for tls in gba posix; do
			# Open MPI 4.1's PML-UCX declines shared-memory-only
			# transports unless told to take any
			timeout 120 "${MPIRUN:-mpirun}" --allow-run-as-root \
				--oversubscribe --bind-to none -np 2 \
				--mca pml ucx --mca pml_ucx_tls any \
				--mca pml_ucx_devices any -x LD_PRELOAD="$mod" \
				-x UCX_TLS=$tls,self "$pp" -m 8 -b 0 \
				>>"$tmp/mpi.$tls" 2>/dev/null ||
				{ status=1; echo "FAILED: MPI over $tls,self"; }
		done
		r=$((r + 1))
	done
	for kind in mpi mpi_ring mpi_self mpi_test; do
		g=$(sed -n "s/^$kind size=[08] .* [nu]s=//p" "$tmp/mpi.gba" |
			tr '\n' ' ')
		p=$(sed -n "s/^$kind size=[08] .* [nu]s=//p" "$tmp/mpi.posix" |
			tr '\n' ' ')
		case $kind in
		mpi) name="mpi ping-pong 8 B" ;;
		mpi_ring) name="mpi ring step 8 B" ;;
		mpi_self) name="mpi self exchange 8 B" ;;
		*) name="empty MPI_Test (ns)" ;;
		esac
		show "$name" "$g" "$p"
	done
else
	echo "skipped: no $pp or no mpirun"
fi

echo
echo "== shmem_barrier_all (oshrun, SPML-UCX): gba,self vs posix,self"
if command -v oshcc >/dev/null 2>&1 && command -v oshrun >/dev/null 2>&1 &&
   oshcc -O2 -I"$top_srcdir/bench" -o "$tmp/shb" \
	   "$top_srcdir/bench/gba_bench_shmem_barrier.c"; then
	printf "%-24s %12s %12s %9s\n" "PEs" gba_us posix_us gba/posix
	csv_name=shmem_barrier
	csv_open shmem_barrier "np,gba_us,posix_us"
	for np in 2 4 8; do
		g= p= r=1
		while [ $r -le "$reps" ]; do
			for tls in gba,self posix,self; do
				v=$(timeout 120 oshrun --allow-run-as-root \
					--oversubscribe --bind-to none -np $np \
					--mca osc ^rdma -x LD_PRELOAD="$mod" \
					-x UCX_TLS=$tls "$tmp/shb" 5000 1 2>/dev/null |
					sed -n 's/.* us=//p')
				[ -n "$v" ] || { status=1; v=-; }
				if [ $tls = gba,self ]; then g="$g $v"; else p="$p $v"; fi
			done
			r=$((r + 1))
		done
		show "$np" "$g" "$p"
	done
else
	echo "skipped: no oshcc/oshrun"
fi
echo
echo "== random-peer atomics (oshrun, SPML-UCX): gba,self vs posix,self," \
	"ns per update of the slowest PE"
if command -v oshcc >/dev/null 2>&1 && command -v oshrun >/dev/null 2>&1 &&
   oshcc -O2 -I"$top_srcdir/bench" -o "$tmp/sha" \
	   "$top_srcdir/bench/gba_bench_shmem_atomic.c"; then
	printf "%-24s %12s %12s %9s\n" "PEs, operation" gba_ns posix_ns \
		gba/posix
	csv_name=shmem_atomic
	csv_open shmem_atomic "np_op,gba_ns,posix_ns"
	for np in 2 4; do
		: >"$tmp/sha.gba"
		: >"$tmp/sha.posix"
		r=1
		while [ $r -le "$reps" ]; do
			for tls in gba posix; do
				timeout 120 oshrun --allow-run-as-root \
					--oversubscribe --bind-to none -np $np \
					--mca osc ^rdma -x LD_PRELOAD="$mod" \
					-x UCX_TLS=$tls,self "$tmp/sha" 50000 3 \
					>>"$tmp/sha.$tls" 2>/dev/null ||
					{ status=1; echo "FAILED: $np PEs, $tls"; }
			done
			r=$((r + 1))
		done
		for op in add fadd; do
			g=$(sed -n "s/^shmem_atomic .* op=$op .* ns=//p" \
				"$tmp/sha.gba" | tr '\n' ' ')
			p=$(sed -n "s/^shmem_atomic .* op=$op .* ns=//p" \
				"$tmp/sha.posix" | tr '\n' ' ')
			show "$np $op" "$g" "$p"
		done
	done
else
	echo "skipped: no oshcc/oshrun"
fi
exit $status
