#!/bin/sh
# MPI collectives (Open MPI's coll components over pml cm / mtl ofi,
# FI_PROVIDER=gba) with 2, 4 and 8 ranks, results checked
# (test/mpi/mpi_coll.c).
prog=mpi_coll
. "$(dirname "$0")/mpi_env.sh"
for np in 2 4 8; do
	mpi_run $np
done
