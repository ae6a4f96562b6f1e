/*
 * gba_bench_barrier - barrier latency of the libfabric gba provider
 * (fi_join_collective + fi_barrier on the emulated or hardware GBA) next to
 * Open MPI's MPI_Barrier measured by the same processes in the same run.
 *
 * Launched by mpirun (bench/run_bench.sh does it with --mca pml ob1
 * --mca btl self,vader); MPI only bootstraps (address exchange) and
 * provides the anchor.  Both barriers are timed in alternating rounds; each
 * round's figure is the slowest rank's mean, the reported figure is the
 * median round.  With -P the processes also run pinned rounds (rank i on
 * the i-th CPU it may use, modulo their number: sched_setaffinity),
 * alternating with the unpinned ones, and a second line reports them.
 *
 * Options: -I iterations per round (default 20000), -r rounds (default 5),
 *          -p provider (default gba), -P pinned rounds too.
 * Output (rank 0): one line, two with -P
 *   barrier np=N iters=I gba_us=X mpi_us=Y speedup=Y/X
 *   barrier_pinned np=N iters=I gba_us=X mpi_us=Y speedup=Y/X
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "gba_ft_common.h"

#define CHECK(call)                                                          \
	do {                                                                 \
		int ret_ = (int)(call);                                      \
		if (ret_) {                                                  \
			fprintf(stderr, "%s:%d: %s: %d (%s)\n", __FILE__,     \
				__LINE__, #call, ret_, fi_strerror(-ret_));  \
			MPI_Abort(MPI_COMM_WORLD, 1);                        \
		}                                                            \
	} while (0)

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct gba_bench {
	struct ft_res r; /* fabric, domain, EQ, CQ, AV, endpoint */
	struct fid_av_set *set;
	struct fid_mc *mc;
	fi_addr_t coll_addr;
};

static void bench_open(struct gba_bench *b, const char *prov, int rank,
		       int size)
{
	struct ft_open_attr attr = {
		.prov = prov,
		.caps = FI_COLLECTIVE,
		.threading = getenv("BENCH_THREAD_DOMAIN") ? FI_THREAD_DOMAIN
							   : FI_THREAD_UNSPEC,
		.eq_size = 64,
		.cq_attr = {.format = FI_CQ_FORMAT_CONTEXT,
			    .wait_obj = FI_WAIT_NONE},
	};
	char *addrs, name[256];
	size_t len = sizeof(name);

	ft_set_prog("gba_bench_barrier");
	CHECK(ft_open_attr(&b->r, &attr));
	CHECK(fi_getname(&b->r.ep->fid, name, &len));

	addrs = malloc(len * size);
	MPI_Allgather(name, (int)len, MPI_BYTE, addrs, (int)len, MPI_BYTE,
		      MPI_COMM_WORLD);
	if (fi_av_insert(b->r.av, addrs, size, NULL, 0, NULL) != size) {
		fprintf(stderr, "rank %d: fi_av_insert failed\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	free(addrs);

	CHECK(ft_join_all(&b->r, size, &b->set, &b->mc));
	b->coll_addr = fi_mc_addr(b->mc);
}

static void bench_close(struct gba_bench *b)
{
	CHECK(fi_close(&b->mc->fid));
	CHECK(fi_close(&b->set->fid));
	CHECK(ft_close(&b->r));
}

static void gba_barrier(struct gba_bench *b)
{
	struct fi_cq_entry c;
	ssize_t n;

	CHECK(fi_barrier(b->r.ep, b->coll_addr, NULL));
	while ((n = fi_cq_read(b->r.cq, &c, 1)) == -FI_EAGAIN)
		;
	if (n != 1) {
		fprintf(stderr, "fi_barrier completion: %zd\n", n);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

/*
 * Pin the caller to the @rank-th CPU of @all (modulo their number) if @pin,
 * else let it run on all of @all.
 */
static void bench_pin(const cpu_set_t *all, int rank, int pin)
{
	int cpu, k = 0, index = rank % CPU_COUNT(all);
	cpu_set_t one;

	CPU_ZERO(&one);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, all) && k++ == index)
			break;
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(cpu_set_t), pin ? &one : all))
		perror("sched_setaffinity");
}

/* Mean barrier time of the slowest rank, in microseconds. */
static double time_round(struct gba_bench *b, int iters, int use_gba)
{
	double t0, mine, slowest;
	int i;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_us();
	for (i = 0; i < iters; i++) {
		if (use_gba)
			gba_barrier(b);
		else
			MPI_Barrier(MPI_COMM_WORLD);
	}
	mine = (now_us() - t0) / iters;
	MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return slowest;
}

/* Rank 0 prints the medians of @rounds rounds (sorts the arrays). */
static void bench_report(const char *name, int size, int iters, int rounds,
			 double *gba_us, double *mpi_us)
{
	double g, m;

	qsort(gba_us, rounds, sizeof(*gba_us), cmp_double);
	qsort(mpi_us, rounds, sizeof(*mpi_us), cmp_double);
	g = gba_us[rounds / 2];
	m = mpi_us[rounds / 2];
	printf("%s np=%d iters=%d gba_us=%.3f mpi_us=%.3f speedup=%.2f\n", name,
	       size, iters, g, m, m / g);
}

int main(int argc, char **argv)
{
	struct gba_bench b = {0};
	const char *prov = "gba";
	int iters = 20000, rounds = 5, pinned = 0, rank, size, op, r, pin;
	double *gba_us[2], *mpi_us[2];
	cpu_set_t all;

	MPI_Init(&argc, &argv);
	while ((op = getopt(argc, argv, "I:r:p:Ph")) != -1) {
		switch (op) {
		case 'I':
			iters = atoi(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'p':
			prov = optarg;
			break;
		case 'P':
			pinned = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-I iters] [-r rounds] "
				"[-p provider] [-P]\n", argv[0]);
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
	sched_getaffinity(0, sizeof(all), &all);
	bench_open(&b, prov, rank, size);

	for (pin = 0; pin < 2; pin++) {
		gba_us[pin] = calloc(rounds, sizeof(double));
		mpi_us[pin] = calloc(rounds, sizeof(double));
	}
	time_round(&b, iters / 10 + 1, 1);	/* warm-up */
	time_round(&b, iters / 10 + 1, 0);
	for (r = 0; r < rounds; r++) {
		for (pin = 0; pin <= pinned; pin++) {
			if (pinned)
				bench_pin(&all, rank, pin);
			gba_us[pin][r] = time_round(&b, iters, 1);
			mpi_us[pin][r] = time_round(&b, iters, 0);
		}
	}
	if (rank == 0) {
		bench_report("barrier", size, iters, rounds, gba_us[0],
			     mpi_us[0]);
		if (pinned)
			bench_report("barrier_pinned", size, iters, rounds,
				     gba_us[1], mpi_us[1]);
	}
	for (pin = 0; pin < 2; pin++) {
		free(gba_us[pin]);
		free(mpi_us[pin]);
	}
	bench_close(&b);
	MPI_Finalize();
	return 0;
}
