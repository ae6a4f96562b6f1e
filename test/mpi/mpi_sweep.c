/*
 * Latency / bandwidth sweep over the provider: ping-pong of 1 B .. 4 MiB
 * (powers of two, plus the provider's inline size 4032 and 4033) and a
 * streaming bandwidth (a window of nonblocking sends, one acknowledgement
 * per window).  Ranks r and r + np/2 form a pair; all pairs run at once,
 * rank 0 prints the figures of its pair.  No timing is asserted (the
 * figures of an oversubscribed machine mean little): after the timed part
 * of every size one more message is sent each way with a fresh pattern
 * into a cleared buffer, and its data are checked.
 *
 * Options: -m MAX (largest size, default 4194304), -s SCALE (iterations
 * in percent of the default, default 100).
 */
#include "mpi_check.h"

#include <unistd.h>

/* up to 16 sends in flight, into distinct receive buffers of at most
 * 8 MiB together (overlapping pending receives are not allowed) */
#define WINDOW 16
#define WINBYTES (8 << 20)

static int rank, np;

static int clampi(long v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : (int)v;
}

static void last_message(unsigned char *sb, unsigned char *rb, size_t len,
			 int peer, int initiator)
{
	MPI_Status st;
	int count;

	if (initiator) {
		fill(sb, len, seed_of(rank, peer, len, 77));
		MPI_OK(MPI_Send(sb, (int)len, MPI_BYTE, peer, 77,
				MPI_COMM_WORLD));
		memset(rb, 0, len);
		MPI_OK(MPI_Recv(rb, (int)len, MPI_BYTE, peer, 78,
				MPI_COMM_WORLD, &st));
		CHECK(verify(rb, len, seed_of(peer, rank, len, 78)) < 0,
		      "last %zu-byte message from %d corrupt", len, peer);
	} else {
		memset(rb, 0, len);
		MPI_OK(MPI_Recv(rb, (int)len, MPI_BYTE, peer, 77,
				MPI_COMM_WORLD, &st));
		CHECK(verify(rb, len, seed_of(peer, rank, len, 77)) < 0,
		      "last %zu-byte message from %d corrupt", len, peer);
		fill(sb, len, seed_of(rank, peer, len, 78));
		MPI_OK(MPI_Send(sb, (int)len, MPI_BYTE, peer, 78,
				MPI_COMM_WORLD));
	}
	MPI_Get_count(&st, MPI_BYTE, &count);
	CHECK(count == (int)len, "last message: count %d, expected %zu", count,
	      len);
}

int main(int argc, char **argv)
{
	size_t max = 4 << 20, nsz = 0, sizes[64];
	int scale = 100, half, peer, initiator, c;
	unsigned char *sb, *rb, *rwin;

	chk_init(&argc, &argv);
	rank = chk_rank;
	np = chk_size;
	while ((c = getopt(argc, argv, "m:s:")) != -1) {
		if (c == 'm')
			max = strtoul(optarg, NULL, 0);
		else if (c == 's')
			scale = atoi(optarg);
	}
	CHECK(np >= 2, "needs at least 2 ranks");
	CHECK(scale > 0 && max >= 1, "bad options");
	for (size_t s = 1; s <= max; s *= 2) {
		if (s == 4096) {
			sizes[nsz++] = 4032;
			sizes[nsz++] = 4033;
		}
		sizes[nsz++] = s;
	}

	half = np / 2;
	if (rank < half) {
		peer = rank + half;
		initiator = 1;
	} else if (rank < 2 * half) {
		peer = rank - half;
		initiator = 0;
	} else {
		peer = -1; /* odd rank count: the last rank watches */
		initiator = 0;
	}
	sb = xmalloc(max);
	rb = xmalloc(max);
	rwin = xmalloc(max * WINDOW < WINBYTES ? max * WINDOW : WINBYTES);
	fill(sb, max, seed_of(rank, peer, max, 0));

	phase("sweep");
	if (rank == 0) {
		printf("# ranks %d, %d pair(s) running at once; figures of "
		       "ranks 0 <-> %d\n",
		       np, half, half);
		printf("%10s %7s %12s %12s %7s %12s\n", "bytes", "iters",
		       "lat_us", "pp_MB/s", "sends", "stream_MB/s");
		fflush(stdout);
	}
	for (size_t k = 0; k < nsz; k++) {
		size_t len = sizes[k];
		int iters = clampi((long)((8 << 20) / len) * scale / 100, 3,
				   clampi(10L * scale, 3, 1 << 30));
		int win = clampi((long)(WINBYTES / len), 1, WINDOW);
		int reps =
			clampi((long)((32 << 20) / (len * win)) * scale / 100,
			       2, clampi(scale, 2, 1 << 30));
		double t0 = 0, lat = 0, bw_pp = 0, bw_st = 0;
		MPI_Request req[WINDOW];
		char ack = 0;

		MPI_Barrier(MPI_COMM_WORLD);
		if (peer >= 0) {
			/* ping-pong (one warm-up round trip) */
			for (int i = -1; i < iters; i++) {
				if (i == 0)
					t0 = MPI_Wtime();
				if (initiator) {
					MPI_OK(MPI_Send(sb, (int)len, MPI_BYTE,
							peer, 1,
							MPI_COMM_WORLD));
					MPI_OK(MPI_Recv(rb, (int)len, MPI_BYTE,
							peer, 1, MPI_COMM_WORLD,
							MPI_STATUS_IGNORE));
				} else {
					MPI_OK(MPI_Recv(rb, (int)len, MPI_BYTE,
							peer, 1, MPI_COMM_WORLD,
							MPI_STATUS_IGNORE));
					MPI_OK(MPI_Send(sb, (int)len, MPI_BYTE,
							peer, 1,
							MPI_COMM_WORLD));
				}
			}
			lat = (MPI_Wtime() - t0) / iters / 2;
			bw_pp = (double)len / lat / 1e6;

			/* streaming: initiator sends windows, peer acks */
			t0 = MPI_Wtime();
			for (int r = 0; r < reps; r++) {
				for (int w = 0; w < win; w++) {
					if (initiator)
						MPI_OK(MPI_Isend(
							sb, (int)len, MPI_BYTE,
							peer, 2, MPI_COMM_WORLD,
							&req[w]));
					else
						MPI_OK(MPI_Irecv(
							rwin + w * len,
							(int)len, MPI_BYTE,
							peer, 2, MPI_COMM_WORLD,
							&req[w]));
				}
				MPI_OK(MPI_Waitall(win, req,
						   MPI_STATUSES_IGNORE));
				if (initiator)
					MPI_OK(MPI_Recv(&ack, 1, MPI_CHAR, peer,
							3, MPI_COMM_WORLD,
							MPI_STATUS_IGNORE));
				else
					MPI_OK(MPI_Send(&ack, 1, MPI_CHAR, peer,
							3, MPI_COMM_WORLD));
			}
			bw_st = (double)len * win * reps / (MPI_Wtime() - t0) /
				1e6;

			last_message(sb, rb, len, peer, initiator);
		}
		if (rank == 0) {
			printf("%10zu %7d %12.2f %12.1f %7d %12.1f\n", len,
			       iters, lat * 1e6, bw_pp, reps * win, bw_st);
			fflush(stdout);
		}
	}
	free(sb);
	free(rb);
	free(rwin);
	phase("done");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_sweep: PASS (%d ranks, last message of every size "
		       "verified)\n",
		       np);
	MPI_Finalize();
	return 0;
}
