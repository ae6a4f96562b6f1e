#!/bin/sh
# MPI one-sided windows over the provider with 2, 4 and 8 ranks
# (test/mpi/mpi_osc.c), twice:
#
# 1. osc/rdma over btl/ofi (--mca btl ofi,self --mca osc rdma): Open MPI
#    4.1.4 selects it with FI_PROVIDER=gba; puts, gets and accumulates to
#    other ranks' MPI_Win_create windows are then libfabric RMA and atomics
#    of a second gba endpoint per process.  Both components are forced, so
#    a window that osc/rdma cannot build over btl/ofi fails the test.  With
#    -S the owner of the compare-and-swap slot stays out of the
#    compare-and-swap race: osc/rdma 4.1.4 crashes on a compare-and-swap
#    aimed at the caller's own window (ompi_osc_rdma_compare_and_swap tries
#    the BTL atomic before its local path, with the NULL registration handle
#    kept for the own memory; mca_btl_ofi_acswap dereferences it).
#    Reproduce: MPI_OSC_SELF_CAS=1 make check TESTS=test/mpi/mpi_osc.sh
# 2. osc/pt2pt (--mca osc pt2pt; Debian's openmpi-mca-params.conf excludes
#    it by default): the windows over point-to-point messages, i.e. over
#    MTL-OFI and gba, the compare-and-swap on the own window included.
#
# (Without --mca btl, Debian's defaults select osc/rdma over btl/vader,
# shared memory: no gba.)
prog=mpi_osc
. "$(dirname "$0")/mpi_env.sh"
selfcas=-S
[ -n "$MPI_OSC_SELF_CAS" ] && selfcas=
for np in 2 4 8; do
	MPI_EXTRA="--mca btl ofi,self --mca osc rdma" mpi_run $np $selfcas
done
for np in 2 4 8; do
	MPI_EXTRA="--mca osc pt2pt" mpi_run $np
done
