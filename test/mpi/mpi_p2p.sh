#!/bin/sh
# MPI point-to-point over the provider (pml cm, mtl ofi, FI_PROVIDER=gba)
# with 2, 4 and 8 ranks: send/recv of 0 B .. 4 MiB between all pairs,
# wildcards, probe/mprobe (FI_PEEK, FI_CLAIM), ssend, unexpected messages,
# truncation (test/mpi/mpi_p2p.c).
prog=mpi_p2p
. "$(dirname "$0")/mpi_env.sh"
for np in 2 4 8; do
	mpi_run $np
done
