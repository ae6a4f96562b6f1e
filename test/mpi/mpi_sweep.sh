#!/bin/sh
# Latency / bandwidth sweep over the provider, 1 B .. 4 MiB, with 2, 4 and
# 8 ranks (pairs run at once).  The figures are printed, never asserted;
# the last message of every size is checked (test/mpi/mpi_sweep.c).
prog=mpi_sweep
. "$(dirname "$0")/mpi_env.sh"
for np in 2 4 8; do
	mpi_run $np
done
