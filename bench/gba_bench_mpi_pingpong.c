/*
 * gba_bench_mpi_pingpong - MPI_Send/MPI_Recv ping-pong between ranks 0 and
 * 1 for sizes 8 B .. 1 MiB, and the streaming bandwidth of 1 MiB messages.
 * Plain MPI: bench/run_bench.sh runs it twice in the same run, over the gba
 * provider (--mca pml cm --mca mtl ofi -x FI_PROVIDER=gba) and over Open
 * MPI's own shared memory (--mca pml ob1 --mca btl self,vader), and prints
 * the two columns side by side.
 *
 *   mpi  half the round-trip time of a ping-pong; after a warm-up, -r
 *        rounds of -I iterations (fewer above 4 KiB); the median round.
 *   ring one step of HPCC's ring latency test between ranks 0 and 1
 *        (each other's left and right neighbour): each posts two
 *        MPI_Irecv and two MPI_Isend of -e bytes (tags 1 and 2), then
 *        MPI_Waitall; the time of one step.
 *   self rank 0 alone exchanges -e bytes with itself (MPI_Irecv,
 *        MPI_Isend, MPI_Waitall), rank 1 sleeping meanwhile: what the
 *        MPI layers and the transport's own loopback path cost per
 *        message pair, no cache line crossing CPUs.
 *   test an MPI_Test that finds nothing (an MPI_ANY_SOURCE receive no
 *        one sends to), both ranks at once: what a program polling for
 *        messages (HPCC's MPIRandomAccess) pays per poll; nanoseconds.
 *   bw   rank 1 pre-posts -W MPI_Irecv, sends a zero-byte go message,
 *        rank 0 sends -W MPI_Isend and MPI_Waitall; MB/s (10^6 bytes),
 *        median of -r rounds.
 *
 * Options: -m max size (default 1048576), -f size factor (default 2),
 *          -I iterations (default 10000), -r rounds (default 3),
 *          -W window (default 64), -b bandwidth size (default 1048576),
 *          -e ring and self exchange size (default 8; 0: none).
 * Output (rank 0):
 *   # pml=cm mtl=ofi btl=- FI_PROVIDER=gba np=2
 *   mpi size=8 iters=10000 us=1.234
 *   ...
 *   mpi_ring size=8 iters=10000 us=0.500
 *   mpi_self size=8 iters=10000 us=0.200
 *   mpi_test size=0 iters=1000000 ns=20.0
 *   mpi_bw size=1048576 window=64 MBps=5000.0
 * Ranks other than 0 and 1 only take part in the barriers.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "gba_bench_stats.h"

#define TAG_DATA 1
#define TAG_GO 2
#define TAG_RING 3 /* and TAG_RING + 1 */

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : "-";
}

static int check(const char *buf, size_t size, char want, const char *what)
{
	size_t i;

	for (i = 0; i < size; i++)
		if (buf[i] != want) {
			fprintf(stderr, "%s size %zu: byte %zu is 0x%02x, not "
					"0x%02x\n", what, size, i,
				(unsigned char)buf[i], (unsigned char)want);
			return 1;
		}
	return 0;
}

/*
 * -r rounds (after a warm-up) of @iters ring steps between ranks 0 and
 * 1 of @size bytes; rank 0 prints the median step.
 */
static void ring(int rank, char *sbuf, char *rbuf, size_t size, long iters,
		 int rounds)
{
	int peer = 1 - rank, r;
	MPI_Request req[4];
	double us[64], t0;
	long i, it;

	memset(rbuf, 0, 2 * size);
	MPI_Barrier(MPI_COMM_WORLD);
	for (r = -1; r < rounds && rank < 2; r++) {
		it = r < 0 ? iters / 10 + 1 : iters; /* r -1: warm-up */
		t0 = MPI_Wtime();
		for (i = 0; i < it; i++) {
			MPI_Irecv(rbuf, (int)size, MPI_BYTE, peer, TAG_RING,
				  MPI_COMM_WORLD, &req[0]);
			MPI_Irecv(rbuf + size, (int)size, MPI_BYTE, peer,
				  TAG_RING + 1, MPI_COMM_WORLD, &req[1]);
			MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, TAG_RING,
				  MPI_COMM_WORLD, &req[2]);
			MPI_Isend(sbuf, (int)size, MPI_BYTE, peer,
				  TAG_RING + 1, MPI_COMM_WORLD, &req[3]);
			MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
		}
		if (r >= 0)
			us[r] = (MPI_Wtime() - t0) * 1e6 / it;
	}
	if (rank < 2 && check(rbuf, 2 * size, (char)(0xa0 | peer), "ring"))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (rank == 0)
		printf("mpi_ring size=%zu iters=%ld us=%.3f\n", size, iters,
		       gba_bench_median(us, rounds));
}

/*
 * -r rounds of @iters exchanges of @size bytes of rank 0 with itself;
 * the others wait without spinning (MPI_Test, then a sleep), so that on
 * a machine whose CPUs are hyperthreads of one core rank 0 has the core.
 */
static void self_exchange(int rank, char *sbuf, char *rbuf, size_t size,
			  long iters, int rounds)
{
	MPI_Request req[2];
	double us[64], t0;
	int r, done = 0;
	long i, it;

	memset(rbuf, 0, size);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank) {
		MPI_Ibarrier(MPI_COMM_WORLD, &req[0]);
		while (!done) {
			MPI_Test(&req[0], &done, MPI_STATUS_IGNORE);
			if (!done)
				usleep(1000);
		}
		return;
	}
	for (r = -1; r < rounds; r++) {
		it = r < 0 ? iters / 10 + 1 : iters; /* r -1: warm-up */
		t0 = MPI_Wtime();
		for (i = 0; i < it; i++) {
			MPI_Irecv(rbuf, (int)size, MPI_BYTE, 0, TAG_DATA,
				  MPI_COMM_WORLD, &req[0]);
			MPI_Isend(sbuf, (int)size, MPI_BYTE, 0, TAG_DATA,
				  MPI_COMM_WORLD, &req[1]);
			MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
		}
		if (r >= 0)
			us[r] = (MPI_Wtime() - t0) * 1e6 / it;
	}
	if (check(rbuf, size, (char)0xa0, "self"))
		MPI_Abort(MPI_COMM_WORLD, 1);
	printf("mpi_self size=%zu iters=%ld us=%.3f\n", size, iters,
	       gba_bench_median(us, rounds));
	MPI_Ibarrier(MPI_COMM_WORLD, &req[0]);
	MPI_Wait(&req[0], MPI_STATUS_IGNORE);
}

/*
 * -r rounds of @iters MPI_Test on a receive nobody matches, on every
 * rank at once; rank 0 prints the median time per call.
 */
static void empty_test(int rank, long iters, int rounds)
{
	MPI_Request req;
	double ns[64], t0;
	int r, done = 0;
	char b[8];
	long i;

	MPI_Irecv(b, (int)sizeof(b), MPI_BYTE, MPI_ANY_SOURCE, TAG_RING + 2,
		  MPI_COMM_WORLD, &req);
	MPI_Barrier(MPI_COMM_WORLD);
	for (r = -1; r < rounds; r++) {
		t0 = MPI_Wtime();
		for (i = 0; i < iters; i++)
			MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (r >= 0)
			ns[r] = (MPI_Wtime() - t0) * 1e9 / iters;
	}
	MPI_Cancel(&req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	if (done && rank == 0)
		fprintf(stderr, "empty MPI_Test: a message matched\n");
	if (rank == 0)
		printf("mpi_test size=0 iters=%ld ns=%.1f\n", iters,
		       gba_bench_median(ns, rounds));
}

int main(int argc, char **argv)
{
	size_t max = 1 << 20, bw_size = 1 << 20, xsize = 8, size;
	long iters = 10000, n, i;
	int factor = 2, rounds = 3, window = 64, rank, np, op, r, k, peer;
	char *sbuf, *rbuf;
	double us[64], t0;
	MPI_Request *req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	while ((op = getopt(argc, argv, "m:f:I:r:W:b:e:h")) != -1) {
		switch (op) {
		case 'm':
			max = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			factor = atoi(optarg);
			break;
		case 'I':
			iters = atol(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'W':
			window = atoi(optarg);
			break;
		case 'b':
			bw_size = strtoul(optarg, NULL, 0);
			break;
		case 'e':
			xsize = strtoul(optarg, NULL, 0);
			break;
		default:
			if (rank == 0)
				fprintf(stderr,
					"usage: %s [-m max] [-f factor] "
					"[-I iters] [-r rounds] [-W window] "
					"[-b bw_size (0: none)] "
					"[-e exchange size (0: none)]\n",
					argv[0]);
			MPI_Finalize();
			return op == 'h' ? 0 : 2;
		}
	}
	if (np < 2 || factor < 2 || iters < 1 || rounds < 1 || rounds > 64 ||
	    window < 1 || max < 8) {
		if (rank == 0)
			fprintf(stderr, "need 2 ranks and positive options\n");
		MPI_Finalize();
		return 2;
	}
	if (bw_size > max)
		max = bw_size;
	sbuf = malloc(max > 2 * xsize ? max : 2 * xsize);
	rbuf = malloc(max > 2 * xsize ? max : 2 * xsize);
	req = calloc(window, sizeof(*req));
	if (!sbuf || !rbuf || !req)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(sbuf, 0xa0 | rank, max > 2 * xsize ? max : 2 * xsize);
	peer = 1 - rank;
	if (rank == 0)
		printf("# pml=%s mtl=%s btl=%s FI_PROVIDER=%s np=%d\n",
		       env("OMPI_MCA_pml"), env("OMPI_MCA_mtl"),
		       env("OMPI_MCA_btl"), env("FI_PROVIDER"), np);

	for (size = 8; size <= max; size *= factor) {
		n = iters;
		if (size > 4096) {
			n = (long)((double)iters * 4096 / size);
			if (n < 50)
				n = 50;
		}
		memset(rbuf, 0, size);
		MPI_Barrier(MPI_COMM_WORLD);
		for (r = -1; r < rounds; r++) {
			long it = r < 0 ? n / 10 + 1 : n; /* r -1: warm-up */

			t0 = MPI_Wtime();
			for (i = 0; i < it && rank < 2; i++) {
				if (rank == 0) {
					MPI_Send(sbuf, (int)size, MPI_BYTE, peer,
						 TAG_DATA, MPI_COMM_WORLD);
					MPI_Recv(rbuf, (int)size, MPI_BYTE, peer,
						 TAG_DATA, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
				} else {
					MPI_Recv(rbuf, (int)size, MPI_BYTE, peer,
						 TAG_DATA, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
					MPI_Send(sbuf, (int)size, MPI_BYTE, peer,
						 TAG_DATA, MPI_COMM_WORLD);
				}
			}
			if (r >= 0)
				us[r] = (MPI_Wtime() - t0) * 1e6 / it / 2;
		}
		if (rank < 2 && check(rbuf, size, (char)(0xa0 | peer),
				      "ping-pong"))
			MPI_Abort(MPI_COMM_WORLD, 1);
		if (rank == 0) {
			printf("mpi size=%zu iters=%ld us=%.3f\n", size, n,
			       gba_bench_median(us, rounds));
			fflush(stdout);
		}
		if (size > max / factor)
			break;
	}

	if (xsize) {
		ring(rank, sbuf, rbuf, xsize, iters, rounds);
		self_exchange(rank, sbuf, rbuf, xsize, iters, rounds);
		empty_test(rank, iters * 100, rounds);
	}

	if (bw_size) {
		long per_round = (long)(256e6 / ((double)bw_size * window));

		if (per_round < 2)
			per_round = 2;
		memset(rbuf, 0, bw_size);
		MPI_Barrier(MPI_COMM_WORLD);
		for (r = -1; r < rounds && rank < 2; r++) {
			long it = r < 0 ? 2 : per_round;

			t0 = MPI_Wtime();
			for (i = 0; i < it; i++) {
				if (rank == 1) {
					for (k = 0; k < window; k++)
						MPI_Irecv(rbuf, (int)bw_size,
							  MPI_BYTE, peer,
							  TAG_DATA,
							  MPI_COMM_WORLD,
							  &req[k]);
					MPI_Send(NULL, 0, MPI_BYTE, peer,
						 TAG_GO, MPI_COMM_WORLD);
				} else {
					MPI_Recv(NULL, 0, MPI_BYTE, peer,
						 TAG_GO, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
					for (k = 0; k < window; k++)
						MPI_Isend(sbuf, (int)bw_size,
							  MPI_BYTE, peer,
							  TAG_DATA,
							  MPI_COMM_WORLD,
							  &req[k]);
				}
				MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
			}
			/* the receiver's last window is in: one more go */
			if (rank == 1)
				MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO,
					 MPI_COMM_WORLD);
			else
				MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (r >= 0)
				us[r] = (double)bw_size * window * it /
					((MPI_Wtime() - t0) * 1e6);
		}
		if (rank == 1 && check(rbuf, bw_size, (char)(0xa0 | peer),
				       "bandwidth"))
			MPI_Abort(MPI_COMM_WORLD, 1);
		if (rank == 0)
			printf("mpi_bw size=%zu window=%d MBps=%.1f\n", bw_size,
			       window, gba_bench_median(us, rounds));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	free(sbuf);
	free(rbuf);
	free(req);
	MPI_Finalize();
	return 0;
}
