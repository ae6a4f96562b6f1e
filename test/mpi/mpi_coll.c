/*
 * MPI collectives over the provider (Open MPI's coll components on top of
 * pml cm / mtl ofi, FI_PROVIDER=gba), every result checked, for several
 * counts (1, a few, one just above the provider's inline size, large):
 * MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce (int and double),
 * MPI_Allgather, MPI_Alltoall, MPI_Gather, MPI_Scatter,
 * MPI_Reduce_scatter and MPI_Reduce_scatter_block, from every root.
 * The doubles hold small integers, so their sums are exact.
 */
#include "mpi_check.h"

#include <time.h>

static const int counts[] = {1, 7, 1009, 16384, 262144};
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

static int rank, np;

/* the value rank r contributes at index i (for op tests) */
static int ival(int r, int i, int salt)
{
	return (r + 1) * 3 + (i % 101) * 7 + salt;
}

static double dval(int r, int i, int salt)
{
	return (double)((r + 1) * 5 - (i % 53) * 3 + salt) / 4.0;
}

static int imin(int a, int b)
{
	return a < b ? a : b;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_barrier(void)
{
	phase("MPI_Barrier");
	for (int i = 0; i < 100; i++)
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	/* nobody leaves before the last one arrived: each rank in turn
	 * arrives 20 ms late; the ranks share the host's monotonic clock */
	for (int late = 0; late < np; late++) {
		double t_in = 0, t_out;

		if (rank == late) {
			struct timespec d = {0, 20 * 1000 * 1000};

			nanosleep(&d, NULL);
			t_in = now();
		}
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		t_out = now();
		MPI_OK(MPI_Bcast(&t_in, 1, MPI_DOUBLE, late, MPI_COMM_WORLD));
		CHECK(t_out >= t_in,
		      "left the barrier %.6f s before rank %d entered it",
		      t_in - t_out, late);
	}
}

static void test_bcast(void)
{
	phase("MPI_Bcast (every root, int and bytes)");
	for (size_t c = 0; c < NCOUNTS; c++) {
		int n = counts[c];
		int *buf = xmalloc(n * sizeof(int));
		unsigned char *b = xmalloc(n);

		for (int root = 0; root < np; root++) {
			for (int i = 0; i < n; i++)
				buf[i] = rank == root ? ival(root, i, n) : -1;
			MPI_OK(MPI_Bcast(buf, n, MPI_INT, root,
					 MPI_COMM_WORLD));
			for (int i = 0; i < n; i++)
				CHECK(buf[i] == ival(root, i, n),
				      "bcast count %d root %d: [%d] = %d", n,
				      root, i, buf[i]);
			if (rank == root)
				fill(b, n, seed_of(root, 0, n, 1));
			else
				memset(b, 0, n);
			MPI_OK(MPI_Bcast(b, n, MPI_BYTE, root, MPI_COMM_WORLD));
			CHECK(verify(b, n, seed_of(root, 0, n, 1)) < 0,
			      "byte bcast count %d root %d", n, root);
		}
		free(buf);
		free(b);
	}
}

static void test_reduce(void)
{
	phase("MPI_Reduce (every root; int SUM/MAX/MIN, double SUM)");
	for (size_t c = 0; c < NCOUNTS; c++) {
		int n = counts[c];
		int *in = xmalloc(n * sizeof(int)),
		    *out = xmalloc(n * sizeof(int));
		double *din = xmalloc(n * sizeof(double));
		double *dout = xmalloc(n * sizeof(double));

		for (int i = 0; i < n; i++) {
			in[i] = ival(rank, i, 0);
			din[i] = dval(rank, i, 0);
		}
		for (int root = 0; root < np; root++) {
			static const MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN};

			for (int o = 0; o < 3; o++) {
				for (int i = 0; i < n; i++)
					out[i] = -7;
				MPI_OK(MPI_Reduce(in, out, n, MPI_INT, ops[o],
						  root, MPI_COMM_WORLD));
				if (rank != root)
					continue;
				for (int i = 0; i < n; i++) {
					long e = 0;

					for (int r = 0; r < np; r++) {
						int v = ival(r, i, 0);

						if (o == 0)
							e += v;
						else if (r == 0)
							e = v;
						else if (o == 1)
							e = v > e ? v : e;
						else
							e = v < e ? v : e;
					}
					CHECK(out[i] == e,
					      "reduce op %d count %d root %d: "
					      "[%d] = %d, expected %ld",
					      o, n, root, i, out[i], e);
				}
			}
			MPI_OK(MPI_Reduce(din, dout, n, MPI_DOUBLE, MPI_SUM,
					  root, MPI_COMM_WORLD));
			if (rank == root)
				for (int i = 0; i < n; i++) {
					double e = 0;

					for (int r = 0; r < np; r++)
						e += dval(r, i, 0);
					CHECK(dout[i] == e,
					      "double reduce count %d root %d: "
					      "[%d] = %g, expected %g",
					      n, root, i, dout[i], e);
				}
		}
		free(in);
		free(out);
		free(din);
		free(dout);
	}
}

static void test_allreduce(void)
{
	phase("MPI_Allreduce (int SUM/MAX/BAND, double SUM/MAX, in place)");
	for (size_t c = 0; c < NCOUNTS; c++) {
		int n = counts[c];
		int *in = xmalloc(n * sizeof(int)),
		    *out = xmalloc(n * sizeof(int));
		double *din = xmalloc(n * sizeof(double));
		double *dout = xmalloc(n * sizeof(double));

		for (int i = 0; i < n; i++) {
			in[i] = ival(rank, i, 1);
			din[i] = dval(rank, i, 1);
		}
		MPI_OK(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM,
				     MPI_COMM_WORLD));
		for (int i = 0; i < n; i++) {
			long e = 0;

			for (int r = 0; r < np; r++)
				e += ival(r, i, 1);
			CHECK(out[i] == e,
			      "allreduce int sum count %d: [%d] = "
			      "%d, expected %ld",
			      n, i, out[i], e);
		}
		MPI_OK(MPI_Allreduce(in, out, n, MPI_INT, MPI_MAX,
				     MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			CHECK(out[i] == ival(np - 1, i, 1),
			      "allreduce int max count %d: [%d] = %d", n, i,
			      out[i]);
		for (int i = 0; i < n; i++)
			in[i] = ~(1 << ((rank + i) % 31));
		MPI_OK(MPI_Allreduce(in, out, n, MPI_INT, MPI_BAND,
				     MPI_COMM_WORLD));
		for (int i = 0; i < n; i++) {
			int e = ~0;

			for (int r = 0; r < np; r++)
				e &= ~(1 << ((r + i) % 31));
			CHECK(out[i] == e, "allreduce band count %d: [%d]", n,
			      i);
		}
		MPI_OK(MPI_Allreduce(din, dout, n, MPI_DOUBLE, MPI_SUM,
				     MPI_COMM_WORLD));
		for (int i = 0; i < n; i++) {
			double e = 0;

			for (int r = 0; r < np; r++)
				e += dval(r, i, 1);
			CHECK(dout[i] == e,
			      "allreduce double sum count %d: "
			      "[%d] = %g, expected %g",
			      n, i, dout[i], e);
		}
		MPI_OK(MPI_Allreduce(din, dout, n, MPI_DOUBLE, MPI_MAX,
				     MPI_COMM_WORLD));
		for (int i = 0; i < n; i++) {
			double e = dval(0, i, 1);

			for (int r = 1; r < np; r++)
				e = dval(r, i, 1) > e ? dval(r, i, 1) : e;
			CHECK(dout[i] == e,
			      "allreduce double max count %d: "
			      "[%d] = %g, expected %g",
			      n, i, dout[i], e);
		}
		/* MPI_IN_PLACE */
		for (int i = 0; i < n; i++)
			din[i] = dval(rank, i, 2);
		MPI_OK(MPI_Allreduce(MPI_IN_PLACE, din, n, MPI_DOUBLE, MPI_SUM,
				     MPI_COMM_WORLD));
		for (int i = 0; i < n; i++) {
			double e = 0;

			for (int r = 0; r < np; r++)
				e += dval(r, i, 2);
			CHECK(din[i] == e, "in-place allreduce count %d: [%d]",
			      n, i);
		}
		free(in);
		free(out);
		free(din);
		free(dout);
	}
}

/* value of element i of the block rank r sends to rank d */
static int blk(int r, int d, int i)
{
	return r * 1000003 + d * 1009 + i;
}

static void test_gathers(void)
{
	phase("MPI_Allgather / MPI_Gather / MPI_Scatter (every root)");
	for (size_t c = 0; c < NCOUNTS; c++) {
		int n = imin(counts[c], 65536);
		int *in = xmalloc(n * sizeof(int));
		int *all = xmalloc((size_t)n * np * sizeof(int));

		for (int i = 0; i < n; i++)
			in[i] = blk(rank, 0, i);
		for (int i = 0; i < n * np; i++)
			all[i] = -1;
		MPI_OK(MPI_Allgather(in, n, MPI_INT, all, n, MPI_INT,
				     MPI_COMM_WORLD));
		for (int r = 0; r < np; r++)
			for (int i = 0; i < n; i++)
				CHECK(all[r * n + i] == blk(r, 0, i),
				      "allgather count %d: block %d [%d] = %d",
				      n, r, i, all[r * n + i]);
		for (int root = 0; root < np; root++) {
			for (int i = 0; i < n * np; i++)
				all[i] = -1;
			MPI_OK(MPI_Gather(in, n, MPI_INT, all, n, MPI_INT, root,
					  MPI_COMM_WORLD));
			if (rank == root)
				for (int r = 0; r < np; r++)
					for (int i = 0; i < n; i++)
						CHECK(all[r * n + i] ==
							      blk(r, 0, i),
						      "gather count %d root "
						      "%d: "
						      "block %d [%d]",
						      n, root, r, i);
			/* scatter: the root's block d goes to rank d */
			if (rank == root)
				for (int d = 0; d < np; d++)
					for (int i = 0; i < n; i++)
						all[d * n + i] =
							blk(root, d, i);
			for (int i = 0; i < n; i++)
				in[i] = -1;
			MPI_OK(MPI_Scatter(all, n, MPI_INT, in, n, MPI_INT,
					   root, MPI_COMM_WORLD));
			for (int i = 0; i < n; i++)
				CHECK(in[i] == blk(root, rank, i),
				      "scatter count %d root %d: [%d] = %d", n,
				      root, i, in[i]);
			for (int i = 0; i < n; i++)
				in[i] = blk(rank, 0, i);
		}
		free(in);
		free(all);
	}
}

static void test_alltoall(void)
{
	phase("MPI_Alltoall");
	for (size_t c = 0; c < NCOUNTS; c++) {
		int n = imin(counts[c], 65536);
		int *in = xmalloc((size_t)n * np * sizeof(int));
		int *out = xmalloc((size_t)n * np * sizeof(int));

		for (int d = 0; d < np; d++)
			for (int i = 0; i < n; i++) {
				in[d * n + i] = blk(rank, d, i);
				out[d * n + i] = -1;
			}
		MPI_OK(MPI_Alltoall(in, n, MPI_INT, out, n, MPI_INT,
				    MPI_COMM_WORLD));
		for (int s = 0; s < np; s++)
			for (int i = 0; i < n; i++)
				CHECK(out[s * n + i] == blk(s, rank, i),
				      "alltoall count %d: from %d [%d] = %d", n,
				      s, i, out[s * n + i]);
		free(in);
		free(out);
	}
}

static void test_reduce_scatter(void)
{
	phase("MPI_Reduce_scatter / MPI_Reduce_scatter_block");
	for (size_t c = 0; c < NCOUNTS; c++) {
		int n = imin(counts[c], 65536);
		int *rc = xmalloc(np * sizeof(int)), total = 0, off = 0;
		int *in, *out;

		/* uneven blocks: rank r gets n + r elements */
		for (int r = 0; r < np; r++) {
			rc[r] = n + r;
			if (r < rank)
				off += rc[r];
			total += rc[r];
		}
		in = xmalloc(total * sizeof(int));
		out = xmalloc((n + np) * sizeof(int));
		for (int i = 0; i < total; i++)
			in[i] = ival(rank, i, 3);
		MPI_OK(MPI_Reduce_scatter(in, out, rc, MPI_INT, MPI_SUM,
					  MPI_COMM_WORLD));
		for (int i = 0; i < rc[rank]; i++) {
			long e = 0;

			for (int r = 0; r < np; r++)
				e += ival(r, off + i, 3);
			CHECK(out[i] == e,
			      "reduce_scatter count %d: [%d] = %d, "
			      "expected %ld",
			      n, i, out[i], e);
		}
		/* equal blocks of n */
		MPI_OK(MPI_Reduce_scatter_block(in, out, n, MPI_INT, MPI_SUM,
						MPI_COMM_WORLD));
		for (int i = 0; i < n; i++) {
			long e = 0;

			for (int r = 0; r < np; r++)
				e += ival(r, rank * n + i, 3);
			CHECK(out[i] == e,
			      "reduce_scatter_block count %d: [%d]"
			      " = %d, expected %ld",
			      n, i, out[i], e);
		}
		free(rc);
		free(in);
		free(out);
	}
}

int main(int argc, char **argv)
{
	chk_init(&argc, &argv);
	rank = chk_rank;
	np = chk_size;

	test_barrier();
	test_bcast();
	test_reduce();
	test_allreduce();
	test_gathers();
	test_alltoall();
	test_reduce_scatter();
	/* a sub-communicator: the same over the even ranks */
	{
		MPI_Comm sub;
		int sr, sn, v, sum;

		phase("MPI_Comm_split + MPI_Allreduce");
		MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub));
		MPI_Comm_rank(sub, &sr);
		MPI_Comm_size(sub, &sn);
		v = rank;
		MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, sub));
		{
			int e = 0;

			for (int r = rank % 2; r < np; r += 2)
				e += r;
			CHECK(sum == e, "split allreduce %d, expected %d", sum,
			      e);
		}
		MPI_Comm_free(&sub);
	}
	phase("done");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_coll: PASS (%d ranks)\n", np);
	MPI_Finalize();
	return 0;
}
