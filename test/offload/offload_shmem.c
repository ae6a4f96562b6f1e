/*
 * offload_shmem - an ordinary OpenSHMEM program whose barriers the
 * barrier-offload library takes over when preloaded (offload_shmem.sh
 * runs it under oshrun with SPML-UCX).  Each barrier is checked:
 *
 *   shmem_barrier_all  every PE puts the barrier's number into its slot on
 *                      every PE (symmetric heap and a global variable),
 *                      after a random delay, then barriers; afterwards all
 *                      slots must hold the number (the barrier's quiet and
 *                      its release both count)
 *   shmem_sync_all     the same with an explicit shmem_quiet before it
 *   shmem_barrier      the same within active sets: halves (stride 1)
 *                      and even PEs (logPE_stride 1)
 *   shmem_sync         the same within the halves, with shmem_quiet
 *
 * Usage: offload_shmem [-I iterations] [-D max delay us]
 * Each PE prints "offload_shmem np=N pe=P barriers=B failures=F" (B: the
 * barrier calls it made, all on sets of more than one PE; F: failed
 * checks of this PE) and "FAIL ..." lines; the exit status is 1 on
 * failure.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_PES 64
enum { ROW_ALL, ROW_SYNC_ALL, ROW_HALF, ROW_EVEN, ROW_SYNC_HALF, ROWS };

static long gdata[ROWS][MAX_PES]; /* global: registered, not heap */
static long psync_half[SHMEM_BARRIER_SYNC_SIZE];
static long psync_even[SHMEM_BARRIER_SYNC_SIZE];
static long psync_shalf[SHMEM_BARRIER_SYNC_SIZE];
static long *hdata; /* symmetric heap: [ROWS][MAX_PES] */
static int me, npes, iters = 50, max_delay = 50, failures;
static long barriers;

/* Put @v into slot @me of row @row on PEs start, start + stride, ... */
static void put_all(int row, long v, int start, int stride, int size)
{
	int k, pe;

	if (max_delay)
		usleep(rand() % (max_delay + 1));
	for (k = 0; k < size; k++) {
		pe = start + k * stride;
		shmem_long_p(&hdata[row * MAX_PES + me], v, pe);
		shmem_long_p(&gdata[row][me], v, pe);
	}
}

/* After the barrier: every member's slot of @row holds @v. */
static void check_all(int row, long v, int start, int stride, int size)
{
	int k, pe;

	if (size > 1)
		barriers++;
	for (k = 0; k < size; k++) {
		pe = start + k * stride;
		if (hdata[row * MAX_PES + pe] == v && gdata[row][pe] == v)
			continue;
		if (failures++ < 10)
			printf("FAIL pe %d: row %d barrier %ld: PE %d's slot "
			       "holds %ld (heap) / %ld (global)\n",
			       me, row, v, pe, hdata[row * MAX_PES + pe],
			       gdata[row][pe]);
	}
}

int main(int argc, char **argv)
{
	int op, i, k, half, start;

	shmem_init();
	me = shmem_my_pe();
	npes = shmem_n_pes();
	while ((op = getopt(argc, argv, "I:D:")) != -1) {
		if (op == 'I')
			iters = atoi(optarg);
		else if (op == 'D')
			max_delay = atoi(optarg);
	}
	if (npes > MAX_PES || npes % 2 || iters < 1) {
		if (!me)
			printf("usage: offload_shmem [-I iters >= 1] [-D us]; "
			       "an even number of PEs up to %d\n", MAX_PES);
		shmem_finalize();
		return 2;
	}
	for (k = 0; k < SHMEM_BARRIER_SYNC_SIZE; k++)
		psync_half[k] = psync_even[k] = psync_shalf[k] =
			SHMEM_SYNC_VALUE;
	hdata = shmem_calloc(ROWS * MAX_PES, sizeof(long));
	srand(4321 + me);
	half = npes / 2;
	start = me < half ? 0 : half;
	shmem_barrier_all();
	barriers++;

	for (i = 1; i <= iters; i++) {
		put_all(ROW_ALL, i, 0, 1, npes);
		shmem_barrier_all();
		check_all(ROW_ALL, i, 0, 1, npes);

		put_all(ROW_SYNC_ALL, i, 0, 1, npes);
		shmem_quiet();
		shmem_sync_all();
		check_all(ROW_SYNC_ALL, i, 0, 1, npes);

		put_all(ROW_HALF, i, start, 1, half);
		shmem_barrier(start, 0, half, psync_half);
		check_all(ROW_HALF, i, start, 1, half);

		if (me % 2 == 0) {
			put_all(ROW_EVEN, i, 0, 2, half);
			shmem_barrier(0, 1, half, psync_even);
			check_all(ROW_EVEN, i, 0, 2, half);
		}

		put_all(ROW_SYNC_HALF, i, start, 1, half);
		shmem_quiet();
		shmem_sync(start, 0, half, psync_shalf);
		check_all(ROW_SYNC_HALF, i, start, 1, half);
		/* nobody overwrites a slot before everyone checked it */
		shmem_barrier_all();
		barriers++;
	}
	printf("offload_shmem np=%d pe=%d barriers=%ld failures=%d\n", npes,
	       me, barriers, failures);
	shmem_free(hdata);
	shmem_finalize();
	return failures ? 1 : 0;
}
