/*
 * MPI one-sided communication over the provider, every result checked:
 * windows from MPI_Win_create (and one from MPI_Win_allocate), MPI_Put,
 * MPI_Get and MPI_Accumulate (int and double SUM, MPI_REPLACE) in fence
 * epochs, 1 MiB puts and gets, MPI_Win_lock / MPI_Win_unlock epochs
 * (exclusive read-modify-write, shared accumulates, MPI_Win_lock_all),
 * MPI_Fetch_and_op and MPI_Compare_and_swap.
 *
 * Which osc component carries the windows is up to the driver
 * (test/mpi/mpi_osc.sh).
 *
 * Option -S: the owner of the compare-and-swap slot (rank 0) does not
 * take part in the compare-and-swap race.  Open MPI 4.1.4's osc/rdma
 * crashes on a compare-and-swap a process aims at its own MPI_Win_create
 * window when all ranks share a node: it tries the BTL atomic first, with
 * the NULL registration handle it keeps for its own (directly addressed)
 * memory, and btl/ofi dereferences it (mca_btl_ofi_acswap).  The driver
 * passes -S only for the osc/rdma run.
 */
#include "mpi_check.h"

#define NINT 1024     /* ints per section */
#define BIG (1 << 20) /* bytes of the large section */
#define ITERS 20

static int rank, np;
static int no_self_cas;

/* window layout (bytes; displacement unit 1):
 *   [0, 4 NINT)            put section: written by rank - 1
 *   [4 NINT, 8 NINT)       get section: read by rank + 1
 *   [8 NINT, 12 NINT)      int accumulate section
 *   [12 NINT, 20 NINT)     double accumulate section
 *   [20 NINT, +8)          counter (exclusive lock read-modify-write)
 *   [20 NINT + 8, +8)      counter (fetch and op)
 *   [20 NINT + 16, +8)     compare and swap slot
 *   [20 NINT + 64, +BIG)   large section
 */
#define OFF_PUT 0
#define OFF_GET (4 * NINT)
#define OFF_IACC (8 * NINT)
#define OFF_DACC (12 * NINT)
#define OFF_CNT (20 * NINT)
#define OFF_FOP (20 * NINT + 8)
#define OFF_CAS (20 * NINT + 16)
#define OFF_BIG (20 * NINT + 64)
#define WINSZ (OFF_BIG + BIG)

static int putval(int r, int i)
{
	return r * 100000 + i;
}

static double accd(int r, int i)
{
	return (double)(r + 1) * 0.5 + (double)(i % 17);
}

static void test_fence(MPI_Win win, unsigned char *base)
{
	int next = (rank + 1) % np, prev = (rank - 1 + np) % np;
	int *put = (int *)(base + OFF_PUT), *get = (int *)(base + OFF_GET);
	int *iacc = (int *)(base + OFF_IACC);
	double *dacc = (double *)(base + OFF_DACC);
	int *src = xmalloc(NINT * sizeof(int));
	int *dst = xmalloc(NINT * sizeof(int));
	double *dsrc = xmalloc(NINT * sizeof(double));

	phase("fence: MPI_Put / MPI_Get");
	for (int i = 0; i < NINT; i++) {
		src[i] = putval(rank, i);
		put[i] = -1;
		get[i] = putval(rank, NINT + i);
		iacc[i] = 0;
		dacc[i] = 0;
		dst[i] = -1;
	}
	MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
	/* put my values into next's put section, in pieces of various sizes:
	 * one int, a few, a big chunk */
	MPI_OK(MPI_Put(src, 1, MPI_INT, next, OFF_PUT, 1, MPI_INT, win));
	MPI_OK(MPI_Put(src + 1, 9, MPI_INT, next, OFF_PUT + sizeof(int), 9,
		       MPI_INT, win));
	MPI_OK(MPI_Put(src + 10, NINT - 10, MPI_INT, next,
		       OFF_PUT + 10 * sizeof(int), NINT - 10, MPI_INT, win));
	/* and read prev's get section (written before the fence) */
	MPI_OK(MPI_Get(dst, NINT, MPI_INT, prev, OFF_GET, NINT, MPI_INT, win));
	MPI_OK(MPI_Win_fence(0, win));
	for (int i = 0; i < NINT; i++) {
		CHECK(put[i] == putval(prev, i), "put from %d: [%d] = %d", prev,
		      i, put[i]);
		CHECK(dst[i] == putval(prev, NINT + i),
		      "get from %d: [%d] = %d", prev, i, dst[i]);
	}

	phase("fence: MPI_Accumulate (int SUM, double SUM, REPLACE)");
	for (int i = 0; i < NINT; i++) {
		src[i] = putval(rank, i) % 1000;
		dsrc[i] = accd(rank, i);
	}
	/* everybody accumulates into everybody */
	for (int t = 0; t < np; t++) {
		MPI_OK(MPI_Accumulate(src, NINT, MPI_INT, t, OFF_IACC, NINT,
				      MPI_INT, MPI_SUM, win));
		MPI_OK(MPI_Accumulate(dsrc, NINT, MPI_DOUBLE, t, OFF_DACC, NINT,
				      MPI_DOUBLE, MPI_SUM, win));
	}
	MPI_OK(MPI_Win_fence(0, win));
	for (int i = 0; i < NINT; i++) {
		long e = 0;
		double de = 0;

		for (int r = 0; r < np; r++) {
			e += putval(r, i) % 1000;
			de += accd(r, i);
		}
		CHECK(iacc[i] == e, "int accumulate [%d] = %d, expected %ld", i,
		      iacc[i], e);
		CHECK(dacc[i] == de, "double accumulate [%d] = %g, expected %g",
		      i, dacc[i], de);
	}
	/* MPI_REPLACE into next's put section */
	for (int i = 0; i < NINT; i++)
		src[i] = -putval(rank, i);
	MPI_OK(MPI_Accumulate(src, NINT, MPI_INT, next, OFF_PUT, NINT, MPI_INT,
			      MPI_REPLACE, win));
	MPI_OK(MPI_Win_fence(0, win));
	for (int i = 0; i < NINT; i++)
		CHECK(put[i] == -putval(prev, i), "replace from %d: [%d] = %d",
		      prev, i, put[i]);
	free(src);
	free(dst);
	free(dsrc);
}

static void test_big(MPI_Win win, unsigned char *base)
{
	int next = (rank + 1) % np, prev = (rank - 1 + np) % np;
	unsigned char *big = base + OFF_BIG, *buf = xmalloc(BIG);
	size_t lens[] = {4032, 4033, 65536, BIG};

	phase("fence: large MPI_Put / MPI_Get (4032 B .. 1 MiB)");
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t len = lens[k];

		memset(big, 0, BIG);
		fill(buf, len, seed_of(rank, next, len, 1));
		MPI_OK(MPI_Win_fence(0, win));
		MPI_OK(MPI_Put(buf, (int)len, MPI_BYTE, next, OFF_BIG, (int)len,
			       MPI_BYTE, win));
		MPI_OK(MPI_Win_fence(0, win));
		CHECK(verify(big, len, seed_of(prev, rank, len, 1)) < 0,
		      "%zu-byte put from %d corrupt at %ld", len, prev,
		      verify(big, len, seed_of(prev, rank, len, 1)));
		CHECK(len == BIG || big[len] == 0, "put past its end");
		/* get back what prev put into me, from next's view: next got
		 * mine, so get it from next and compare with what I sent */
		memset(buf, 0, len);
		MPI_OK(MPI_Get(buf, (int)len, MPI_BYTE, next, OFF_BIG, (int)len,
			       MPI_BYTE, win));
		MPI_OK(MPI_Win_fence(0, win));
		CHECK(verify(buf, len, seed_of(rank, next, len, 1)) < 0,
		      "%zu-byte get from %d corrupt", len, next);
	}
	free(buf);
}

static void test_lock(MPI_Win win, unsigned char *base)
{
	int64_t *cnt = (int64_t *)(base + OFF_CNT);
	int64_t *fop = (int64_t *)(base + OFF_FOP);
	int64_t *cas = (int64_t *)(base + OFF_CAS);
	int64_t v, one = 1, *got;
	int *iacc = (int *)(base + OFF_IACC);
	int *src = xmalloc(NINT * sizeof(int));

	phase("lock/unlock: exclusive read-modify-write on rank 0");
	/* local stores by the owner inside an exclusive self-lock */
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
	*cnt = 0;
	*fop = 0;
	*cas = -1;
	for (int i = 0; i < NINT; i++)
		iacc[i] = 0;
	MPI_OK(MPI_Win_unlock(rank, win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	for (int i = 0; i < ITERS; i++) {
		MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
		MPI_OK(MPI_Get(&v, 1, MPI_INT64_T, 0, OFF_CNT, 1, MPI_INT64_T,
			       win));
		MPI_OK(MPI_Win_flush(0, win));
		v++;
		MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, 0, OFF_CNT, 1, MPI_INT64_T,
			       win));
		MPI_OK(MPI_Win_unlock(0, win));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
		v = *cnt;
		MPI_OK(MPI_Win_unlock(0, win));
		CHECK(v == (int64_t)np * ITERS,
		      "counter %ld after %d x %d exclusive increments "
		      "(lost updates: mutual exclusion broken)",
		      (long)v, np, ITERS);
	}

	phase("lock/unlock: shared MPI_Accumulate, MPI_Win_lock_all");
	for (int i = 0; i < NINT; i++)
		src[i] = rank + i;
	for (int t = 0; t < np; t++) {
		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
		MPI_OK(MPI_Accumulate(src, NINT, MPI_INT, t, OFF_IACC, NINT,
				      MPI_INT, MPI_SUM, win));
		MPI_OK(MPI_Win_unlock(t, win));
	}
	MPI_OK(MPI_Win_lock_all(0, win));
	for (int t = 0; t < np; t++)
		MPI_OK(MPI_Accumulate(src, NINT, MPI_INT, t, OFF_IACC, NINT,
				      MPI_INT, MPI_SUM, win));
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
	for (int i = 0; i < NINT; i++) {
		long e = 0;

		for (int r = 0; r < np; r++)
			e += 2 * (r + i);
		CHECK(iacc[i] == e, "shared accumulate [%d] = %d, expected %ld",
		      i, iacc[i], e);
	}
	MPI_OK(MPI_Win_unlock(rank, win));

	phase("MPI_Fetch_and_op / MPI_Compare_and_swap");
	got = xmalloc(ITERS * sizeof(*got));
	MPI_OK(MPI_Win_lock_all(0, win));
	for (int i = 0; i < ITERS; i++) {
		MPI_OK(MPI_Fetch_and_op(&one, &got[i], MPI_INT64_T, 0, OFF_FOP,
					MPI_SUM, win));
		MPI_OK(MPI_Win_flush(0, win));
	}
	/* everybody tries to swap -1 for its rank: exactly one wins
	 * (-S: rank 0 stays out, it reports -3) */
	{
		int64_t mine = rank, cmp = -1, old = -2;

		if (no_self_cas && rank == 0) {
			old = -3;
		} else {
			MPI_OK(MPI_Compare_and_swap(&mine, &cmp, &old,
						    MPI_INT64_T, 0, OFF_CAS,
						    win));
			MPI_OK(MPI_Win_flush(0, win));
		}
		v = old;
	}
	MPI_OK(MPI_Win_unlock_all(win));
	{
		int64_t *all = NULL, *olds = NULL;

		if (rank == 0) {
			all = xmalloc((size_t)np * ITERS * sizeof(*all));
			olds = xmalloc((size_t)np * sizeof(*olds));
		}
		MPI_OK(MPI_Gather(got, ITERS, MPI_INT64_T, all, ITERS,
				  MPI_INT64_T, 0, MPI_COMM_WORLD));
		MPI_OK(MPI_Gather(&v, 1, MPI_INT64_T, olds, 1, MPI_INT64_T, 0,
				  MPI_COMM_WORLD));
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		if (rank == 0) {
			char *seen = calloc((size_t)np * ITERS, 1);
			int winners = 0, winner = -1;

			for (int i = 0; i < np * ITERS; i++) {
				CHECK(all[i] >= 0 && all[i] < np * ITERS &&
					      !seen[all[i]],
				      "fetch_and_op returned %ld (twice or out "
				      "of range)",
				      (long)all[i]);
				seen[all[i]] = 1;
			}
			for (int r = 0; r < np; r++) {
				if (no_self_cas && r == 0) {
					CHECK(olds[r] == -3, "rank 0 ran");
					continue;
				}
				if (olds[r] == -1) {
					winners++;
					winner = r;
				} else {
					CHECK(olds[r] >= 0 && olds[r] < np,
					      "compare_and_swap of rank %d saw "
					      "%ld",
					      r, (long)olds[r]);
				}
			}
			CHECK(winners == 1, "%d compare_and_swap winners",
			      winners);
			MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
			CHECK(*fop == (int64_t)np * ITERS,
			      "fetch_and_op counter %ld", (long)*fop);
			CHECK(*cas == winner,
			      "compare_and_swap slot %ld, "
			      "winner %d",
			      (long)*cas, winner);
			for (int r = no_self_cas; r < np; r++)
				CHECK(olds[r] == -1 || olds[r] == winner,
				      "rank %d saw %ld, not the winner %d", r,
				      (long)olds[r], winner);
			MPI_OK(MPI_Win_unlock(0, win));
			free(seen);
			free(all);
			free(olds);
		}
	}
	free(got);
	free(src);
}

/* MPI_Win_allocate: the same put/get ring on memory MPI allocated */
static void test_allocate(void)
{
	int next = (rank + 1) % np, prev = (rank - 1 + np) % np;
	int *mem, *in = xmalloc(NINT * sizeof(int));
	MPI_Win win;

	phase("MPI_Win_allocate: put / get / accumulate");
	MPI_OK(MPI_Win_allocate(2 * NINT * sizeof(int), sizeof(int),
				MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
	for (int i = 0; i < 2 * NINT; i++)
		mem[i] = 0;
	for (int i = 0; i < NINT; i++)
		in[i] = putval(rank, 3 * i);
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Put(in, NINT, MPI_INT, next, 0, NINT, MPI_INT, win));
	MPI_OK(MPI_Accumulate(in, NINT, MPI_INT, next, NINT, NINT, MPI_INT,
			      MPI_SUM, win));
	MPI_OK(MPI_Accumulate(in, NINT, MPI_INT, prev, NINT, NINT, MPI_INT,
			      MPI_SUM, win));
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	for (int i = 0; i < NINT; i++) {
		long e = putval(prev, 3 * i) + (long)putval(next, 3 * i);

		if (np == 2)
			e = 2L * putval(prev, 3 * i);
		CHECK(mem[i] == putval(prev, 3 * i), "allocate put [%d] = %d",
		      i, mem[i]);
		CHECK(mem[NINT + i] == e,
		      "allocate accumulate [%d] = %d, "
		      "expected %ld",
		      i, mem[NINT + i], e);
	}
	for (int i = 0; i < NINT; i++)
		in[i] = -1;
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win));
	MPI_OK(MPI_Get(in, NINT, MPI_INT, next, 0, NINT, MPI_INT, win));
	MPI_OK(MPI_Win_unlock(next, win));
	for (int i = 0; i < NINT; i++)
		CHECK(in[i] == putval(rank, 3 * i), "allocate get [%d] = %d", i,
		      in[i]);
	MPI_OK(MPI_Win_free(&win));
	free(in);
}

int main(int argc, char **argv)
{
	unsigned char *base;
	MPI_Win win;

	chk_init(&argc, &argv);
	rank = chk_rank;
	np = chk_size;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-S"))
			no_self_cas = 1;

	phase(no_self_cas ? "MPI_Win_create (-S: no compare-and-swap on "
			    "the own window)"
			  : "MPI_Win_create");
	base = xmalloc(WINSZ);
	memset(base, 0, WINSZ);
	MPI_OK(MPI_Win_create(base, WINSZ, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
			      &win));
	test_fence(win, base);
	test_big(win, base);
	/* end the fence epochs: lock epochs follow */
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	test_lock(win, base);
	MPI_OK(MPI_Win_free(&win));
	free(base);
	test_allocate();

	phase("done");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_osc: PASS (%d ranks)\n", np);
	MPI_Finalize();
	return 0;
}
