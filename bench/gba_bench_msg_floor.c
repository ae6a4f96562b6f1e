/*
 * gba_bench_msg_floor - the floor under a small-message ping-pong on one
 * host, layer by layer, in the same two processes:
 *
 *   line  a cache line bounced between the two processes: each stores
 *         the round number into the line the other polls (what any
 *         shared-memory transport pays at least: the line's trip from
 *         one CPU's cache to the other's);
 *   eng   the fabric engine alone: an -s byte message (default 8) each
 *         way with gba_eng_send and gba_eng_progress, no front end
 *         (doc/design.md section 4).
 *
 * Half the round trip, in microseconds; rounds alternate between the two
 * so that both share the machine's conditions; the figure is the median
 * round.  bench/run_bench.sh prints them above the provider's ping-pong
 * (gba_bench_msg), Open MPI's over MTL-OFI and over ob1/vader, so that
 * the cost each layer adds per message is read off one run.
 *
 * Options: -I iterations per round (default 20000), -r rounds (default
 *          7), -s message bytes (default 8).
 * Output (the first process):
 *   floor line iters=I us=X
 *   floor eng size=S iters=I us=X
 */
#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gba/gba_eng.h>

#include "gba_bench_stats.h"
#include "gba_eng_noop.h"

#define MAX_ROUNDS 101
#define MAX_SIZE 4032

struct pp_shm {
	_Atomic uint64_t line[2] __attribute__((aligned(64)));
	_Atomic uint64_t pad __attribute__((aligned(64)));
	_Atomic int sync;
	struct gba_addr addr[2];
	double us[2][MAX_ROUNDS];
};

struct pp {
	struct pp_shm *shm;
	int rank, nsync;
	struct gba_eng_ep *ep;
	struct gba_eng_peer *peer;
	unsigned long got;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Both processes here; the engine kept progressing while waiting. */
static void pp_sync(struct pp *pp)
{
	int want = 2 * ++pp->nsync;

	atomic_fetch_add(&pp->shm->sync, 1);
	while (atomic_load(&pp->shm->sync) < want)
		if (pp->ep)
			gba_eng_progress(pp->ep);
}

static void on_recv(void *ctx, struct gba_eng_rx *rx)
{
	struct pp *pp = ctx;

	(void)rx;
	pp->got++;
}

static double round_line(struct pp *pp, unsigned long iters)
{
	_Atomic uint64_t *mine = &pp->shm->line[pp->rank];
	_Atomic uint64_t *theirs = &pp->shm->line[!pp->rank];
	double t0;
	uint64_t i;

	atomic_store(mine, 0);
	pp_sync(pp);
	t0 = now_us();
	for (i = 1; i <= iters; i++) {
		if (pp->rank == 0) {
			atomic_store_explicit(theirs, i, memory_order_release);
			while (atomic_load_explicit(mine,
						    memory_order_acquire) != i)
				;
		} else {
			while (atomic_load_explicit(mine,
						    memory_order_acquire) != i)
				;
			atomic_store_explicit(theirs, i, memory_order_release);
		}
	}
	return (now_us() - t0) / iters / 2;
}

static int send_one(struct pp *pp, const struct iovec *iov)
{
	int ret;

	while ((ret = gba_eng_send(pp->ep, pp->peer, iov, 1, 1, 0, 0, 0)) ==
	       -EAGAIN)
		gba_eng_progress(pp->ep);
	return ret < 0 ? ret : 0;
}

static double round_eng(struct pp *pp, unsigned long iters, size_t size)
{
	static char buf[MAX_SIZE];
	struct iovec iov = {buf, size};
	unsigned long i, base;
	double t0;

	/*
	 * Counted before the sync: the other side may send its first
	 * message as soon as it leaves the sync, while this one still
	 * progresses in it.
	 */
	base = pp->got;
	pp_sync(pp);
	t0 = now_us();
	for (i = 1; i <= iters; i++) {
		if (pp->rank == 0 && send_one(pp, &iov))
			return -1;
		while (pp->got < base + i)
			gba_eng_progress(pp->ep);
		if (pp->rank == 1 && send_one(pp, &iov))
			return -1;
	}
	return (now_us() - t0) / iters / 2;
}

static int run(struct pp *pp, unsigned long iters, int rounds, size_t size)
{
	static const struct gba_eng_ops ops = {
		.recv = on_recv,
		.complete = gba_eng_noop_complete,
		.mr_lookup = gba_eng_noop_mr_lookup,
	};
	struct gba_eng_ep_attr attr = {.ops = &ops, .ctx = pp};
	int ret, r;

	ret = gba_eng_ep_open(&attr, &pp->ep);
	if (ret) {
		fprintf(stderr, "gba_eng_ep_open: %s\n", strerror(-ret));
		return 1;
	}
	pp->shm->addr[pp->rank] = *gba_eng_ep_addr(pp->ep);
	pp_sync(pp);
	ret = gba_eng_peer_get(pp->ep, &pp->shm->addr[!pp->rank], &pp->peer);
	if (ret) {
		fprintf(stderr, "gba_eng_peer_get: %s\n", strerror(-ret));
		return 1;
	}
	/* warm-up */
	round_line(pp, iters / 10 + 1);
	if (round_eng(pp, iters / 10 + 1, size) < 0)
		return 1;
	for (r = 0; r < rounds; r++) {
		pp->shm->us[0][r] = round_line(pp, iters);
		pp->shm->us[1][r] = round_eng(pp, iters, size);
		if (pp->shm->us[1][r] < 0)
			return 1;
	}
	pp_sync(pp);
	gba_eng_ep_close(pp->ep);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long iters = 20000;
	int rounds = 7, opt, status = 0, ret;
	size_t size = 8;
	struct pp pp = {0};
	pid_t kid;

	while ((opt = getopt(argc, argv, "I:r:s:")) != -1) {
		switch (opt) {
		case 'I':
			iters = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (!iters || rounds < 1 || rounds > MAX_ROUNDS || size > MAX_SIZE)
		goto usage;
	pp.shm = mmap(NULL, sizeof(*pp.shm), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pp.shm == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	fflush(NULL);
	kid = fork();
	if (kid < 0) {
		perror("fork");
		return 1;
	}
	pp.rank = kid == 0;
	ret = run(&pp, iters, rounds, size);
	if (pp.rank == 1)
		_exit(ret);
	if (waitpid(kid, &status, 0) != kid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || ret) {
		fprintf(stderr, "gba_bench_msg_floor: failed\n");
		return 1;
	}
	printf("floor line iters=%lu us=%.3f\n", iters,
	       gba_bench_median(pp.shm->us[0], rounds));
	printf("floor eng size=%zu iters=%lu us=%.3f\n", size, iters,
	       gba_bench_median(pp.shm->us[1], rounds));
	return 0;
usage:
	fprintf(stderr,
		"usage: %s [-I iterations] [-r rounds (1..%d)] "
		"[-s bytes (0..%d)]\n",
		argv[0], MAX_ROUNDS, MAX_SIZE);
	return 2;
}
