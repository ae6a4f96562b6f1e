#!/bin/sh
# Run the benchmarks and print each figure next to its anchor, measured in
# the same run: barrier latency vs Open MPI 4.1.4 MPI_Barrier (btl
# self,vader) for 2, 4 and 8 processes, and self RMA vs memcpy.
#
# Usage: bench/run_bench.sh [BENCHDIR]
#   BENCHDIR holds gba_bench_barrier and gba_bench_self_rma (default: the
#   directory of this script, i.e. an in-tree build).  The provider is found
#   through FI_PROVIDER_PATH as usual (`make bench` sets it to the build
#   tree; after `make install`, point it at $prefix/lib/libfabric).
# Environment: NPS (default "2 4 8"), ITERS (barriers per round).
set -e
dir=${1:-$(dirname "$0")}
nps=${NPS:-"2 4 8"}
iters=${ITERS:-20000}
mpirun=${MPIRUN:-mpirun}

echo "== self RMA (8-byte), single process"
"$dir/gba_bench_self_rma" -S 8

echo
echo "== barrier: gba (emulated device) vs MPI_Barrier (--mca btl self,vader)"
printf "%4s %12s %12s %9s\n" np gba_us mpi_us speedup
# forward the variables that are set (mpirun warns about unset ones)
xenv=
for v in FI_PROVIDER_PATH LD_LIBRARY_PATH GBA_DEVICE FI_GBA_DEVICE; do
	eval "[ -n \"\${$v+x}\" ]" && xenv="$xenv -x $v"
done
for np in $nps; do
	line=$($mpirun --allow-run-as-root --oversubscribe -np "$np" \
		--mca pml ob1 --mca btl self,vader --bind-to none $xenv \
		"$dir/gba_bench_barrier" -I "$iters" | grep '^barrier ')
	echo "$line" | sed 's/.*np=\([0-9]*\).*gba_us=\([0-9.]*\) mpi_us=\([0-9.]*\) speedup=\([0-9.]*\)/\1 \2 \3 \4/' |
		awk '{ printf "%4s %12s %12s %8sx\n", $1, $2, $3, $4 }'
done
