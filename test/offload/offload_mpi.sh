#!/bin/sh
# The barrier-offload library preloaded into an unmodified MPI program
# (offload_mpi.c): every MPI_Barrier checked for early release, and each
# rank's count of barriers compared with the library's finalize line,
# whose figures the device confirms (RELEASE_SEQ of each group).
#
#   Open MPI, pml ob1 (btl vader), cm (MTL-OFI, FI_PROVIDER=gba) and ucx
#   (UCX_TLS=gba,self): communicators (world, dup, halves, odd/even) with
#   2, 4 and 8 ranks (8 oversubscribed); churn (200 communicators made and
#   freed); 40 communicators alive (32 offloaded, 8 in software);
#   MPI_Finalize with groups held (the next run finds all 32 groups
#   free); the library disabled; a broken offload that the check catches
#   Fortran (use mpi, use mpi_f08; Open MPI's bindings call PMPI_Barrier)
#   MPICH (mpiexec.mpich, ch4:ucx): communicators with 2, 4 and 8 ranks
prog=$top_builddir/test/offload/offload_mpi
. "${top_srcdir:-$(dirname "$0")/../..}/test/offload/offload_env.sh"
mpirun=${MPIRUN-mpirun}
if [ -z "$mpirun" ] || ! command -v "$mpirun" >/dev/null 2>&1 ||
   [ ! -x "$prog" ]; then
	echo "SKIP: no Open MPI (configure found none)"
	exit 77
fi
lib=$libdir/libgba_barrier.so
xenv="-x FI_PROVIDER_PATH -x LD_LIBRARY_PATH -x GBA_DEVICE -x GBA_BARRIER_VERBOSE=1"

ompi() {	# ompi PML NP MODE [ARGS...]: one run, its counts checked
	pml=$1 np=$2 mode=$3
	shift 3
	pre=$san$lib
	case $pml in
	ob1) mca="--mca pml ob1 --mca btl self,vader" ;;
	cm) mca="--mca pml cm --mca mtl ofi -x FI_PROVIDER=gba" ;;
	ucx)
		[ -f "$uctmod" ] || { echo "  (no libuct_gba.so: pml ucx skipped)"; return; }
		pre=$san$uctmod:$lib
		mca="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x UCX_TLS=gba,self" ;;
	esac
	launch "$pml np=$np $mode" "$mpirun" --allow-run-as-root --oversubscribe \
		--bind-to none -np "$np" $mca $xenv -x LD_PRELOAD="$pre" \
		"$prog" "$mode" "$@" || bad "$pml np=$np $mode: exit $rc"
}

for np in 2 4 8; do
	for pml in ob1 cm ucx; do
		ompi $pml $np comms -I 30
		check_counts "offload_mpi comms" rank
	done
done

ompi ob1 4 churn
check_counts "offload_mpi churn" rank
ompi cm 2 alive -I 5
check_counts "offload_mpi alive" rank alive
ompi ob1 2 held -I 10
check_counts "offload_mpi held" rank
# the groups held at MPI_Finalize were released: 32 are free again
ompi ucx 2 alive -I 5
check_counts "offload_mpi alive" rank alive

echo "== Fortran (use mpi, use mpi_f08): Open MPI's bindings call PMPI_Barrier"
mpifort=${MPIFORT:-mpifort}
if command -v "$mpifort" >/dev/null 2>&1; then
	for f in mpi f08; do
		fdef=
		[ $f = f08 ] && fdef=-DF08
		if ! "$mpifort" -cpp $fdef -o "$out.$f" \
			"$top_srcdir/test/offload/offload_fortran.f90"; then
			bad "mpifort $fdef offload_fortran.f90"
			continue
		fi
		prog=$out.$f
		launch "fortran $f" "$mpirun" --allow-run-as-root --oversubscribe \
			--bind-to none -np 2 --mca pml ob1 --mca btl self,vader \
			$xenv -x LD_PRELOAD="$san$lib" "$out.$f" ||
			bad "fortran $f: exit $rc"
		check_counts "offload_fortran" rank
		rm -f "$out.$f"
	done
	prog=$top_builddir/test/offload/offload_mpi
else
	echo "  skipped: no mpifort"
fi

echo "== disabled (GBA_BARRIER_ENABLE=0): every barrier in PMPI_Barrier"
xenv="$xenv -x GBA_BARRIER_ENABLE=0"
ompi ob1 2 comms -I 10
check_counts "offload_mpi comms" rank none
xenv=${xenv% -x GBA_BARRIER_ENABLE=0}

echo "== negative control: a broken offload releases early; the check must fail"
launch "broken" "$mpirun" --allow-run-as-root --oversubscribe --bind-to none \
	-np 4 --mca pml ob1 --mca btl self,vader $xenv \
	-x LD_PRELOAD="$san$top_builddir/test/offload/.libs/libbroken_barrier.so:$lib" \
	"$prog" comms -I 30 -D 200
if [ "$rc" != 0 ] && grep -q 'released before a member arrived' "$out"; then
	echo "  caught, as it must be"
else
	bad "the broken offload went unnoticed"
fi

echo "== MPICH (mpiexec.mpich, ch4:ucx)"
mprog=$top_builddir/test/offload/offload_mpi_mpich
mlib=$libdir/libgba_barrier_mpich.so
if [ -n "$MPIEXEC_MPICH" ] && [ -x "$mprog" ] && [ -f "$mlib" ]; then
	for np in 2 4 8; do
		launch "mpich np=$np" "$MPIEXEC_MPICH" -n "$np" \
			-genv LD_PRELOAD "$san$mlib" -genv GBA_BARRIER_VERBOSE 1 \
			"$mprog" comms -I 30 || bad "mpich np=$np: exit $rc"
		check_counts "offload_mpi comms" rank
	done
else
	echo "  skipped: MPICH not found by configure"
fi

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
