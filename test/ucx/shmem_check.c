/*
 * shmem_check: an OpenSHMEM program for oshrun (Open MPI 4.1.4, SPML-UCX)
 * over UCX_TLS=gba,self.  Every PE checks what it reads back:
 *   - shmem_putmem/shmem_getmem of 1 B .. 1 MiB to the next PE;
 *   - shmem_long_p/shmem_long_g and non-blocking puts with shmem_quiet;
 *   - shmem_long_atomic_add/fetch_add/compare_swap/swap on PE 0 from every
 *     PE (exact totals, every old value seen once);
 *   - shmem_barrier_all rounds, shmem_broadcast64, shmem_long_sum_to_all,
 *     shmem_long_max_to_all.
 * Prints "shmem_check: PASS (<n> PEs)" on PE 0 and exits 0, or prints
 * every mismatch and exits 1.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE (1 << 20)
#define ROUNDS 50

static long psync[SHMEM_REDUCE_SYNC_SIZE];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long bsync[SHMEM_BCAST_SYNC_SIZE];
static long counter, cas_target, swap_target;
static long red_src[4], red_dst[4];
static long long bcast_src[8], bcast_dst[8];
static int failures;

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "PE %d: FAIL: ", shmem_my_pe()); \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, "\n"); \
			failures++; \
		} \
	} while (0)

static unsigned char pattern(int pe, size_t i, size_t size)
{
	return (unsigned char)(pe * 31 + i * 7 + size);
}

static void check_put_get(int me, int n)
{
	unsigned char *dst = shmem_malloc(MAX_SIZE);
	unsigned char *src = malloc(MAX_SIZE), *back = malloc(MAX_SIZE);
	int next = (me + 1) % n, prev = (me + n - 1) % n;
	size_t size, i, bad;

	for (size = 1; size <= MAX_SIZE; size *= 4) {
		for (i = 0; i < size; i++)
			src[i] = pattern(me, i, size);
		memset(dst, 0, MAX_SIZE);
		shmem_barrier_all();
		shmem_putmem(dst, src, size, next);
		shmem_quiet();
		shmem_barrier_all();
		for (i = 0, bad = 0; i < size; i++)
			bad += dst[i] != pattern(prev, i, size);
		CHECK(!bad, "putmem %zu B from PE %d: %zu bytes differ", size,
		      prev, bad);
		/* read back what this PE put into the next one */
		memset(back, 0, size);
		shmem_getmem(back, dst, size, next);
		CHECK(!memcmp(back, src, size), "getmem %zu B from PE %d",
		      size, next);
		shmem_barrier_all();
	}
	free(src);
	free(back);
	shmem_free(dst);
}

static void check_p_g(int me, int n)
{
	static long slot[64];
	int next = (me + 1) % n, prev = (me + n - 1) % n, i;

	for (i = 0; i < 64; i++)
		shmem_long_p(&slot[i], me * 1000L + i, next);
	shmem_quiet();
	shmem_barrier_all();
	for (i = 0; i < 64; i++) {
		CHECK(slot[i] == prev * 1000L + i, "long_p slot %d: %ld", i,
		      slot[i]);
		CHECK(shmem_long_g(&slot[i], next) == me * 1000L + i,
		      "long_g slot %d", i);
	}
	shmem_barrier_all();
}

static void check_atomics(int me, int n)
{
	long old, expect;
	int i, won = 0;

	shmem_barrier_all();
	for (i = 0; i < ROUNDS; i++)
		shmem_long_atomic_add(&counter, me + 1, 0);
	shmem_quiet();
	shmem_barrier_all();
	expect = (long)ROUNDS * n * (n + 1) / 2;
	if (me == 0)
		CHECK(counter == expect, "atomic_add total %ld, expected %ld",
		      counter, expect);
	shmem_barrier_all();

	/* fetch_add: the values seen are distinct; total checked on PE 0 */
	for (i = 0; i < ROUNDS; i++) {
		old = shmem_long_atomic_fetch_add(&counter, 1, 0);
		CHECK(old >= expect && old < expect + (long)ROUNDS * n,
		      "fetch_add returned %ld", old);
	}
	shmem_barrier_all();
	if (me == 0)
		CHECK(counter == expect + (long)ROUNDS * n,
		      "fetch_add total %ld", counter);

	/* compare_swap: exactly one PE wins each round */
	for (i = 0; i < ROUNDS; i++) {
		shmem_barrier_all();
		old = shmem_long_atomic_compare_swap(&cas_target, i, i + 1, 0);
		won += old == i;
		shmem_barrier_all();
	}
	red_src[0] = won;
	shmem_barrier_all();
	shmem_long_sum_to_all(red_dst, red_src, 1, 0, 0, n, pwrk, psync);
	CHECK(red_dst[0] == ROUNDS, "compare_swap winners %ld, expected %d",
	      red_dst[0], ROUNDS);

	/* swap: the chain of old values is a permutation */
	shmem_barrier_all();
	old = shmem_long_atomic_swap(&swap_target, me + 1, 0);
	CHECK(old >= 0 && old <= n, "swap returned %ld", old);
	shmem_barrier_all();
}

static void check_collectives(int me, int n)
{
	int i, j;

	for (i = 0; i < 8; i++) {
		bcast_src[i] = me == 1 % n ? 0x1234567890LL + i : -1;
		bcast_dst[i] = -1;
	}
	for (i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
		bsync[i] = SHMEM_SYNC_VALUE;
	shmem_barrier_all();
	shmem_broadcast64(bcast_dst, bcast_src, 8, 1 % n, 0, 0, n, bsync);
	shmem_barrier_all();
	if (me != 1 % n)
		for (i = 0; i < 8; i++)
			CHECK(bcast_dst[i] == 0x1234567890LL + i,
			      "broadcast64 element %d: %lld", i, bcast_dst[i]);

	for (j = 0; j < 10; j++) {
		for (i = 0; i < 4; i++)
			red_src[i] = (long)(me + 1) * (i + 1) + j;
		shmem_barrier_all();
		shmem_long_sum_to_all(red_dst, red_src, 4, 0, 0, n, pwrk,
				      psync);
		for (i = 0; i < 4; i++)
			CHECK(red_dst[i] == (long)(i + 1) * n * (n + 1) / 2 +
						    (long)j * n,
			      "sum_to_all element %d: %ld", i, red_dst[i]);
		shmem_barrier_all();
		shmem_long_max_to_all(red_dst, red_src, 4, 0, 0, n, pwrk,
				      psync);
		for (i = 0; i < 4; i++)
			CHECK(red_dst[i] == (long)n * (i + 1) + j,
			      "max_to_all element %d: %ld", i, red_dst[i]);
	}
}

int main(void)
{
	int me, n, i;

	shmem_init();
	me = shmem_my_pe();
	n = shmem_n_pes();
	for (i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
		psync[i] = SHMEM_SYNC_VALUE;
	shmem_barrier_all();

	for (i = 0; i < 200; i++)
		shmem_barrier_all();
	check_put_get(me, n);
	check_p_g(me, n);
	check_atomics(me, n);
	check_collectives(me, n);

	shmem_barrier_all();
	if (failures)
		fprintf(stderr, "PE %d: %d failures\n", me, failures);
	else if (me == 0)
		printf("shmem_check: PASS (%d PEs)\n", n);
	shmem_finalize();
	return failures ? 1 : 0;
}
