/*
 * gba_bench_mpi_barrier - MPI_Barrier next to PMPI_Barrier, timed by the
 * same processes in alternating rounds of the same run.
 *
 * Run under mpirun / mpiexec.mpich with the barrier-offload library
 * preloaded (LD_PRELOAD=libgba_barrier.so): MPI_Barrier is then the
 * library's barrier on a GBA group and PMPI_Barrier the MPI library's own
 * (the anchor).  Without the preload both are the MPI library's.  Each
 * round's figure is the slowest rank's mean; the reported figures are the
 * median rounds.
 *
 * Options: -I iterations per round (default 20000), -r rounds (default 5).
 * Output (rank 0): one line
 *   mpi_barrier np=N iters=I mpi_us=X pmpi_us=Y speedup=Y/X
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gba_bench_stats.h"

/* Mean barrier time of the slowest rank, in microseconds. */
static double time_round(int iters, int (*barrier)(MPI_Comm))
{
	double t0, mine, slowest;
	int i;

	PMPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (i = 0; i < iters; i++)
		barrier(MPI_COMM_WORLD);
	mine = (MPI_Wtime() - t0) * 1e6 / iters;
	PMPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX,
		       MPI_COMM_WORLD);
	return slowest;
}

int main(int argc, char **argv)
{
	int iters = 20000, rounds = 5, rank, size, op, r;
	double *mpi_us, *pmpi_us, m, p;

	MPI_Init(&argc, &argv);
	while ((op = getopt(argc, argv, "I:r:h")) != -1) {
		switch (op) {
		case 'I':
			iters = atoi(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-I iters] [-r rounds]\n",
				argv[0]);
			MPI_Finalize();
			return op == 'h' ? 0 : 2;
		}
	}
	if (iters <= 0 || rounds <= 0) {
		fprintf(stderr, "-I and -r must be positive\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	mpi_us = calloc(rounds, sizeof(*mpi_us));
	pmpi_us = calloc(rounds, sizeof(*pmpi_us));
	time_round(iters / 10 + 1, MPI_Barrier); /* warm-up, and the join */
	time_round(iters / 10 + 1, PMPI_Barrier);
	for (r = 0; r < rounds; r++) {
		mpi_us[r] = time_round(iters, MPI_Barrier);
		pmpi_us[r] = time_round(iters, PMPI_Barrier);
	}
	m = gba_bench_median(mpi_us, rounds);
	p = gba_bench_median(pmpi_us, rounds);
	if (rank == 0)
		printf("mpi_barrier np=%d iters=%d mpi_us=%.3f pmpi_us=%.3f "
		       "speedup=%.2f\n",
		       size, iters, m, p, p / m);
	free(mpi_us);
	free(pmpi_us);
	MPI_Finalize();
	return 0;
}
