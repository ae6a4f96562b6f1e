/*
 * gba_bench_shmem_barrier: time of shmem_barrier_all, for oshrun
 * (run_ucx_bench.sh runs it with UCX_TLS=gba,self and posix,self;
 * run_offload_bench.sh with the barrier-offload library preloaded).
 * pshmem_barrier_all, the OpenSHMEM library's own barrier, is timed in
 * alternating rounds of the same run: with libgba_barrier.so preloaded it
 * is the anchor, without it both figures are the same barrier.
 * Usage: gba_bench_shmem_barrier [iterations [rounds]]  (20000, 5)
 * PE 0 prints "shmem_barrier np=<n> iters=<i> pshmem_us=<us> us=<us>",
 * medians of the rounds, each round's figure the mean of PE 0.
 */
#include <pshmem.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gba_bench_stats.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Mean time of @iters calls of @barrier, in microseconds. */
static double time_round(long iters, void (*barrier)(void))
{
	double t0;
	long i;

	pshmem_barrier_all();
	t0 = now_us();
	for (i = 0; i < iters; i++)
		barrier();
	return (now_us() - t0) / iters;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 20000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, r;
	double *us, *pus;

	shmem_init();
	if (iters < 1 || rounds < 1) {
		if (shmem_my_pe() == 0)
			fprintf(stderr, "usage: %s [iterations [rounds]]\n",
				argv[0]);
		shmem_finalize();
		return 2;
	}
	us = calloc(rounds, sizeof(*us));
	pus = calloc(rounds, sizeof(*pus));
	time_round(iters / 10 + 1, shmem_barrier_all); /* warm up */
	time_round(iters / 10 + 1, pshmem_barrier_all);
	for (r = 0; r < rounds; r++) {
		us[r] = time_round(iters, shmem_barrier_all);
		pus[r] = time_round(iters, pshmem_barrier_all);
	}
	if (shmem_my_pe() == 0)
		printf("shmem_barrier np=%d iters=%ld pshmem_us=%.3f us=%.3f\n",
		       shmem_n_pes(), iters, gba_bench_median(pus, rounds),
		       gba_bench_median(us, rounds));
	free(us);
	free(pus);
	shmem_finalize();
	return 0;
}
