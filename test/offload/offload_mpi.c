/*
 * offload_mpi - an ordinary MPI program whose MPI_Barrier calls the
 * barrier-offload library takes over when preloaded (offload_mpi.sh runs
 * it under Open MPI's three PMLs and MPICH).  It checks every barrier for
 * early release and prints what it did; the driver compares that with
 * the library's finalize line (GBA_BARRIER_VERBOSE=1).
 *
 * Early-release check: the ranks share one MPI-3 shared-memory window
 * (MPI_Win_allocate_shared; the ranks of one host).  Before each barrier
 * a member sleeps a random 0..D us and stores the barrier's number into
 * its own slot (release store); after the barrier it reads the slots of
 * every member of the communicator (acquire loads): a slot behind the
 * barrier's number means a member had not arrived when this one was
 * released.  Each communicator has its own row of slots.
 *
 * Usage: offload_mpi MODE [-I iterations] [-D max delay us]
 *   comms     MPI_COMM_WORLD, a dup, halves (split), odd/even (split)
 *   churn     200 communicators made, barriered, freed (dup, halves,
 *             odd/even in turn)
 *   alive     40 dups of MPI_COMM_WORLD alive at once, all barriered
 *   held      like comms, but MPI_Finalize with every communicator alive
 * Each rank prints "offload_mpi MODE np=N rank=R barriers=B failures=F"
 * (B: the MPI_Barrier calls it made on communicators of more than one
 * member; F: failed checks of all ranks) and "FAIL ..." lines; the exit
 * status is 1 on failure.
 */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_COMMS 48	/* rows of the window */
#define MAX_RANKS 64

static int world_rank, world_size, iters = 50, max_delay = 50;
static long barriers;	/* on communicators of more than one member */
static int failures;
static _Atomic long *slots; /* [MAX_COMMS][MAX_RANKS] */
static MPI_Win win;

static void fail(const char *what, int row, long i, int member)
{
	if (failures++ < 10)
		printf("FAIL rank %d: %s (row %d, barrier %ld, member %d)\n",
		       world_rank, what, row, i, member);
}

/* The world ranks of @comm's members, in its rank order. */
static void members(MPI_Comm comm, int *ranks, int *n)
{
	MPI_Group g, wg;
	int i, in[MAX_RANKS];

	MPI_Comm_size(comm, n);
	MPI_Comm_group(comm, &g);
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	for (i = 0; i < *n; i++)
		in[i] = i;
	MPI_Group_translate_ranks(g, *n, in, wg, ranks);
	MPI_Group_free(&g);
	MPI_Group_free(&wg);
}

/* @count barriers on @comm, each checked for early release (row @row). */
static void check_barriers(MPI_Comm comm, int row, int count)
{
	_Atomic long *mine = &slots[row * MAX_RANKS + world_rank];
	int ranks[MAX_RANKS], n, i, m;
	long base = atomic_load(mine), v;

	members(comm, ranks, &n);
	for (i = 1; i <= count; i++) {
		if (max_delay)
			usleep(rand() % (max_delay + 1));
		atomic_store_explicit(mine, base + i, memory_order_release);
		if (MPI_Barrier(comm) != MPI_SUCCESS)
			fail("MPI_Barrier returned an error", row, i, -1);
		if (n > 1)
			barriers++;
		for (m = 0; m < n; m++) {
			v = atomic_load_explicit(
				&slots[row * MAX_RANKS + ranks[m]],
				memory_order_acquire);
			if (v < base + i)
				fail("released before a member arrived", row,
				     base + i, ranks[m]);
		}
	}
}

/* Communicator @k of the churn / comms cycle: dup, halves, odd/even. */
static void make_comm(int k, MPI_Comm *comm)
{
	switch (k % 3) {
	case 0:
		MPI_Comm_dup(MPI_COMM_WORLD, comm);
		break;
	case 1:
		MPI_Comm_split(MPI_COMM_WORLD, world_rank < world_size / 2, 0,
			       comm);
		break;
	default:
		MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank,
			       comm);
		break;
	}
}

int main(int argc, char **argv)
{
	MPI_Comm comms[MAX_COMMS];
	const char *mode;
	MPI_Aint size;
	int disp, op, k, ncomms = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &world_size);
	mode = argc > 1 ? argv[1] : "";
	optind = argc > 1 ? 2 : 1; /* getopt past argc reads past argv */
	while ((op = getopt(argc, argv, "I:D:")) != -1) {
		if (op == 'I')
			iters = atoi(optarg);
		else if (op == 'D')
			max_delay = atoi(optarg);
	}
	if (world_size > MAX_RANKS || iters < 1 || !*mode) {
		if (!world_rank)
			printf("usage: offload_mpi comms|churn|alive|held "
			       "[-I iters >= 1] [-D us]; at most %d ranks\n",
			       MAX_RANKS);
		MPI_Finalize();
		return 2;
	}
	srand(1234 + world_rank);

	/* the window: one node, rank 0 allocates the rows */
	MPI_Win_allocate_shared(world_rank ? 0 : sizeof(long) * MAX_COMMS *
							 MAX_RANKS,
				sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
				(void *)&slots, &win);
	MPI_Win_shared_query(win, 0, &size, &disp, (void *)&slots);
	if (!world_rank)
		memset((void *)slots, 0, size);
	PMPI_Barrier(MPI_COMM_WORLD);

	if (!strcmp(mode, "comms") || !strcmp(mode, "held")) {
		check_barriers(MPI_COMM_WORLD, 0, iters);
		for (k = 0; k < 3; k++) {
			make_comm(k, &comms[ncomms]);
			check_barriers(comms[ncomms], 1 + k, iters);
			ncomms++;
		}
		check_barriers(MPI_COMM_WORLD, 0, iters);
	} else if (!strcmp(mode, "churn")) {
		for (k = 0; k < 200; k++) {
			MPI_Comm c;

			make_comm(k, &c);
			check_barriers(c, 1 + k % 3, 2);
			MPI_Comm_free(&c);
		}
	} else if (!strcmp(mode, "alive")) {
		for (k = 0; k < 40; k++)
			MPI_Comm_dup(MPI_COMM_WORLD, &comms[ncomms++]);
		for (k = 0; k < 40; k++)
			check_barriers(comms[k], 1 + k, iters);
		for (k = 39; k >= 0; k--)
			check_barriers(comms[k], 1 + k, 2);
	} else {
		if (!world_rank)
			printf("unknown mode \"%s\"\n", mode);
		MPI_Finalize();
		return 2;
	}

	if (strcmp(mode, "held"))
		for (k = 0; k < ncomms; k++)
			MPI_Comm_free(&comms[k]);
	PMPI_Allreduce(&failures, &op, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	failures = op;
	printf("offload_mpi %s np=%d rank=%d barriers=%ld failures=%d\n",
	       mode, world_size, world_rank, barriers, failures);
	MPI_Win_free(&win);
	MPI_Finalize();
	return failures ? 1 : 0;
}
