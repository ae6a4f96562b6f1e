/*
 * gba_bench_shmem_atomic: every PE updates counters of random PEs at
 * once, for oshrun (run_ucx_bench.sh runs it with UCX_TLS=gba,self and
 * posix,self): the random-peer small-atomic pattern of HPCC's
 * RandomAccess, in OpenSHMEM.
 *
 *   add    shmem_atomic_add (no result) of 1 to a random counter of a
 *          random PE, then shmem_quiet every 64 updates;
 *   fadd   shmem_atomic_fetch_add (the old value returns) likewise.
 *
 * After each round the counters are summed over all PEs and checked
 * against the updates issued (a lost or doubled update fails the run).
 * Usage: gba_bench_shmem_atomic [updates per PE per round [rounds]]
 *        (100000, 5)
 * PE 0 prints "shmem_atomic np=<n> op=add|fadd updates=<u> ns=<ns>",
 * the median over the rounds of the time per update of the slowest PE.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gba_bench_stats.h"

#define NCTR 1024 /* counters per PE (a power of two) */
#define QUIET_EVERY 64

static long long ctr[NCTR]; /* symmetric */
static double slowest;      /* symmetric: the round's largest time */
static double mine;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* A 64-bit xorshift step: the next random number after *@s. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One round of @n updates (@fetch: fetch-add); the slowest PE's ns each. */
static double round_ns(long n, int fetch, uint64_t *seed)
{
	int np = shmem_n_pes();
	long long old = 0, sum = 0;
	double t0;
	uint64_t r;
	long i;

	shmem_barrier_all();
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		r = next(seed);
		if (fetch)
			old += shmem_atomic_fetch_add(&ctr[r % NCTR], 1,
						      (int)((r >> 32) % np));
		else
			shmem_atomic_add(&ctr[r % NCTR], 1,
					 (int)((r >> 32) % np));
		if (i % QUIET_EVERY == QUIET_EVERY - 1)
			shmem_quiet();
	}
	shmem_quiet();
	mine = (now_ns() - t0) / n;
	(void)old;
	shmem_barrier_all();
	/* the slowest PE's time, and every update landed exactly once */
	if (shmem_my_pe() == 0) {
		slowest = mine;
		for (i = 1; i < np; i++) {
			double t = shmem_double_g(&mine, (int)i);

			if (t > slowest)
				slowest = t;
		}
	}
	shmem_barrier_all();
	if (shmem_my_pe() == 0) {
		for (i = 0; i < np; i++) {
			long long c[NCTR];
			int k;

			shmem_getmem(c, ctr, sizeof(c), (int)i);
			for (k = 0; k < NCTR; k++)
				sum += c[k];
		}
		if (sum != (long long)n * np) {
			fprintf(stderr, "shmem_atomic: %lld updates landed, "
					"%lld issued\n",
				sum, (long long)n * np);
			shmem_global_exit(1);
		}
	}
	shmem_barrier_all();
	for (i = 0; i < NCTR; i++)
		ctr[i] = 0;
	shmem_barrier_all();
	return slowest;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, r, fetch;
	uint64_t seed;
	double *ns;

	shmem_init();
	if (n < 1 || rounds < 1) {
		if (shmem_my_pe() == 0)
			fprintf(stderr, "usage: %s [updates [rounds]]\n",
				argv[0]);
		shmem_finalize();
		return 2;
	}
	seed = 0x9e3779b97f4a7c15ull * (uint64_t)(shmem_my_pe() + 1);
	ns = calloc(rounds, sizeof(*ns));
	for (fetch = 0; fetch < 2; fetch++) {
		round_ns(n / 10 + 1, fetch, &seed); /* warm up */
		for (r = 0; r < rounds; r++)
			ns[r] = round_ns(n, fetch, &seed);
		if (shmem_my_pe() == 0)
			printf("shmem_atomic np=%d op=%s updates=%ld ns=%.1f\n",
			       shmem_n_pes(), fetch ? "fadd" : "add", n,
			       gba_bench_median(ns, rounds));
	}
	free(ns);
	shmem_finalize();
	return 0;
}
