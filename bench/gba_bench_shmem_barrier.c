/*
 * gba_bench_shmem_barrier: time of shmem_barrier_all, for oshrun
 * (run_ucx_bench.sh runs it with UCX_TLS=gba,self and posix,self).
 * Usage: gba_bench_shmem_barrier [iterations]   (default 20000)
 * PE 0 prints "shmem_barrier np=<n> iters=<i> us=<microseconds per barrier>".
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 20000;
	double t0, t1;
	long i;

	shmem_init();
	for (i = 0; i < iters / 10 + 1; i++) /* warm up */
		shmem_barrier_all();
	t0 = now_us();
	for (i = 0; i < iters; i++)
		shmem_barrier_all();
	t1 = now_us();
	if (shmem_my_pe() == 0)
		printf("shmem_barrier np=%d iters=%ld us=%.3f\n", shmem_n_pes(),
		       iters, (t1 - t0) / iters);
	shmem_finalize();
	return 0;
}
