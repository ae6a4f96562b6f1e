#!/bin/sh
# The barrier-offload library (libgba_barrier(7)) against the stacks' own
# barriers, measured by the same processes in the same run:
#   MPI_Barrier (the library, preloaded) vs PMPI_Barrier (Open MPI's own)
#   with 2, 4 and 8 ranks under --mca pml ob1 --mca btl self,vader and
#   --mca pml cm --mca mtl ofi -x FI_PROVIDER=gba; MPICH (mpiexec.mpich,
#   ch4:ucx) with 2, 4 and 8 ranks;
#   shmem_barrier_all (the library) vs pshmem_barrier_all (Open MPI's
#   OpenSHMEM, SPML-UCX, UCX_TLS=posix,self) with 2, 4 and 8 PEs.
# Launched as users launch: not pinned (--bind-to none), oversubscribed
# beyond the machine's cores.  Figures are printed, never checked.
#
# Usage: bench/run_offload_bench.sh
#   from a build tree (make bench sets top_builddir, top_srcdir and the
#   provider/library paths).
# Environment: NPS (default "2 4 8"), REPS (runs per configuration; the
#   table shows the median run; default 3), ITERS (barriers per round
#   while there are no more processes than cores; a tenth beyond, where a
#   stock barrier costs 100 times more).
set -e
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
nps=${NPS:-"2 4 8"}
reps=${REPS:-3}
iters=${ITERS:-20000}
mpirun=${MPIRUN:-mpirun}
lib=$top_builddir/barrier_offload/.libs/libgba_barrier.so
mlib=$top_builddir/barrier_offload/.libs/libgba_barrier_mpich.so
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
status=0
. "$top_srcdir/bench/bench_csv.sh"
csv_open offload "stack,np,gba_us,stock_us"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tmo=
command -v timeout >/dev/null && tmo="timeout -k 5 120"
xenv=
for v in FI_PROVIDER_PATH LD_LIBRARY_PATH GBA_DEVICE FI_GBA_DEVICE; do
	eval "[ -n \"\${$v+x}\" ]" && xenv="$xenv -x $v"
done

# iters_for NP: barriers per round for NP processes
iters_for() {
	if [ "$1" -le "$cores" ]; then echo "$iters"; else echo $((iters / 10 + 1)); fi
}

# median WORDS...: the median of the numbers
median() {
	echo "$@" | tr ' ' '\n' | grep -v '^$' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# row LABEL NP GBA_LIST STOCK_LIST: a table row of the medians (and a
# row of $BENCH_CSV/offload.csv)
row() {
	g=$(median $3)
	s=$(median $4)
	awk -v l="$1" -v n="$2" -v g="$g" -v s="$s" 'BEGIN {
		if (g == "" || s == "" || g <= 0)
			printf "%-14s %4s %10s %10s %9s\n", l, n, "-", "-", "-"
		else
			printf "%-14s %4s %10.3f %10.3f %8.2fx\n", l, n, g, s, s / g
	}'
	csv_row offload "$1" "$2" "$g" "$s"
}

if [ -r /proc/loadavg ]; then
	echo "machine: $(getconf _NPROCESSORS_ONLN) CPUs, load average" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
fi
echo
echo "== MPI_Barrier with the barrier-offload library (GBA) vs without" \
	"(PMPI_Barrier: the MPI's own), same processes, alternating rounds;" \
	"medians of $reps runs"
printf "%-14s %4s %10s %10s %9s\n" stack np gba_us stock_us speedup
# bench_row LABEL NP KIND GBA_FIELD STOCK_FIELD LAUNCH...: $reps runs of
# LAUNCH, each printing a line "KIND ... GBA_FIELD=x ... STOCK_FIELD=y";
# one table row of the medians
bench_row() {
	label=$1 np=$2 kind=$3 gf=$4 sf=$5
	shift 5
	g= s= r=1
	while [ "$r" -le "$reps" ]; do
		if line=$($tmo "$@" 2>"$tmp/err" | grep "^$kind "); then
			g="$g $(echo "$line" | sed "s/.* $gf=\([0-9.]*\).*/\1/")"
			s="$s $(echo "$line" | sed "s/.* $sf=\([0-9.]*\).*/\1/")"
		else
			echo "FAILED: $*"
			cat "$tmp/err"
			status=1
		fi
		r=$((r + 1))
	done
	row "$label" "$np" "$g" "$s"
}
prog=$top_builddir/bench/gba_bench_mpi_barrier
if [ -x "$prog" ] && [ -f "$lib" ]; then
	for pml in ob1 cm; do
		if [ $pml = ob1 ]; then
			mca="--mca pml ob1 --mca btl self,vader"
			label="ompi ob1/vader"
		else
			mca="--mca pml cm --mca mtl ofi -x FI_PROVIDER=gba"
			label="ompi cm/gba"
		fi
		for np in $nps; do
			bench_row "$label" "$np" mpi_barrier mpi_us pmpi_us \
				"$mpirun" --allow-run-as-root \
				--oversubscribe --bind-to none -np "$np" $mca \
				$xenv -x LD_PRELOAD="$lib" "$prog" \
				-I "$(iters_for "$np")"
		done
	done
else
	echo "skipped: no $prog or $lib (built with Open MPI)"
fi
mprog=$top_builddir/bench/gba_bench_mpi_barrier_mpich
if [ -x "$mprog" ] && [ -f "$mlib" ] && [ -n "$MPIEXEC_MPICH" ]; then
	for np in $nps; do
		# MPICH's own barrier spins without yielding: oversubscribed,
		# one costs milliseconds (8 ms with 4 ranks on 2 CPUs)
		mi=$(iters_for "$np")
		[ "$np" -gt "$cores" ] && mi=50
		bench_row "mpich ch4:ucx" "$np" mpi_barrier mpi_us pmpi_us \
			"$MPIEXEC_MPICH" -n "$np" \
			-genv LD_PRELOAD "$mlib" "$mprog" -I "$mi" -r 3
	done
else
	echo "MPICH skipped: not built (configure found no MPICH)"
fi

echo
echo "== shmem_barrier_all with the library (GBA) vs pshmem_barrier_all" \
	"(Open MPI's own), SPML-UCX, UCX_TLS=posix,self; medians of $reps runs"
printf "%-14s %4s %10s %10s %9s\n" stack np gba_us stock_us speedup
sprog=$top_builddir/bench/gba_bench_shmem_barrier
if [ -x "$sprog" ] && [ -f "$lib" ]; then
	for np in $nps; do
		bench_row "oshmem posix" "$np" shmem_barrier us pshmem_us \
			oshrun --allow-run-as-root --oversubscribe --bind-to none \
			-np "$np" --mca osc ^rdma $xenv -x UCX_TLS=posix,self \
			-x LD_PRELOAD="$lib" "$sprog" "$(iters_for "$np")"
	done
else
	echo "skipped: no $sprog (built with Open MPI's OpenSHMEM)"
fi
exit $status
