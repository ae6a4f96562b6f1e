/*
 * gba_demo - show the libfabric gba provider at work, through the stock
 * libfabric: N processes synchronise with GBA barriers (fi_join_collective
 * + fi_barrier on the device; the emulated GBA when no /dev/gbaN exists),
 * then each process does loopback ("self") RMA and atomics on its own
 * memory.  Everything it reports is checked, and it exits non-zero on any
 * mismatch.
 *
 * Usage: gba_demo [-n processes] [-I barriers] [-p provider]
 *
 * The processes are forked by gba_demo itself; they exchange endpoint
 * names (fi_getname) through a shared anonymous mapping.  The barrier check:
 * before each barrier every process increments a shared arrival counter;
 * after release it must see all N arrivals of that round.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "gba_ft_common.h"

#define MAX_PROCS 64
#define NAME_MAX_LEN 256

#define CHECK(call)                                                          \
	do {                                                                 \
		int ret_ = (int)(call);                                      \
		if (ret_) {                                                  \
			fprintf(stderr, "[%d] %s:%d: %s: %d (%s)\n", rank,    \
				__FILE__, __LINE__, #call, ret_,             \
				fi_strerror(-ret_));                         \
			exit(1);                                             \
		}                                                            \
	} while (0)

/* Shared between the forked processes. */
struct demo_shared {
	pthread_barrier_t boot;
	size_t name_len;
	char names[MAX_PROCS][NAME_MAX_LEN];
	atomic_ulong arrivals;
	atomic_int early;	/* releases seen before all had arrived */
	double barrier_us[MAX_PROCS];
};

static int rank;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void demo_open(struct ft_res *d, const char *prov)
{
	struct ft_open_attr attr = {
		.prov = prov,
		.caps = FI_COLLECTIVE | FI_RMA | FI_ATOMIC | FI_LOCAL_COMM,
		.mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY,
		.eq_size = 16,
		.cq_attr = {.format = FI_CQ_FORMAT_DATA},
	};

	CHECK(ft_open_attr(d, &attr));
}

/* Wait for one completion on the CQ; fail loudly on an error entry. */
static void demo_wait_comp(struct ft_res *d, uint64_t *flags)
{
	struct fi_cq_data_entry comp;
	struct fi_cq_err_entry err = {0};
	ssize_t n;

	while ((n = fi_cq_read(d->cq, &comp, 1)) == -FI_EAGAIN)
		;
	if (n == -FI_EAVAIL) {
		fi_cq_readerr(d->cq, &err, 0);
		fprintf(stderr, "[%d] completion error: %s\n", rank,
			fi_strerror(err.err));
		exit(1);
	}
	if (n != 1) {
		fprintf(stderr, "[%d] fi_cq_read: %zd\n", rank, n);
		exit(1);
	}
	if (flags)
		*flags = comp.flags;
}

static void demo_barriers(struct ft_res *d, struct demo_shared *sh,
			  int nprocs, int iters)
{
	struct fid_av_set *set;
	struct fid_mc *mc;
	fi_addr_t coll;
	uint64_t flags;
	double t0;
	int i;

	CHECK(ft_join_all(d, nprocs, &set, &mc));
	coll = fi_mc_addr(mc);

	t0 = now_us();
	for (i = 0; i < iters; i++) {
		unsigned long round_done = (unsigned long)nprocs * (i + 1);

		atomic_fetch_add(&sh->arrivals, 1);
		CHECK(fi_barrier(d->ep, coll, &coll));
		demo_wait_comp(d, &flags);
		if (!(flags & FI_COLLECTIVE)) {
			fprintf(stderr, "[%d] barrier completion lacks "
				"FI_COLLECTIVE\n", rank);
			exit(1);
		}
		if (atomic_load(&sh->arrivals) < round_done)
			atomic_fetch_add(&sh->early, 1);
	}
	sh->barrier_us[rank] = (now_us() - t0) / iters;
	CHECK(fi_close(&mc->fid));
	CHECK(fi_close(&set->fid));
}

/* Self RMA and atomics against this process's own registered memory. */
static int demo_self_rma(struct ft_res *d, fi_addr_t self)
{
	uint64_t target[4] = {0}, src[4], result = 0, compare, key, base;
	uint64_t operand, flags;
	struct fid_mr *mr;
	int ok = 1;

	CHECK(fi_mr_reg(d->domain, target, sizeof(target),
			FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	key = fi_mr_key(mr);
	base = (d->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
		       (uint64_t)(uintptr_t)target : 0;

	for (int i = 0; i < 4; i++)
		src[i] = 0x1000ULL * (rank + 1) + i;
	CHECK(fi_write(d->ep, src, sizeof(src), NULL, self, base, key, NULL));
	demo_wait_comp(d, &flags);
	ok &= !memcmp(target, src, sizeof(src)) && (flags & FI_WRITE);

	memset(src, 0, sizeof(src));
	CHECK(fi_read(d->ep, src, sizeof(src), NULL, self, base, key, NULL));
	demo_wait_comp(d, &flags);
	ok &= !memcmp(target, src, sizeof(src)) && (flags & FI_READ);

	operand = 42;
	CHECK(fi_fetch_atomic(d->ep, &operand, 1, NULL, &result, NULL, self,
			      base, key, FI_UINT64, FI_SUM, NULL));
	demo_wait_comp(d, NULL);
	ok &= result == 0x1000ULL * (rank + 1) &&
	      target[0] == 0x1000ULL * (rank + 1) + 42;

	compare = target[1];
	operand = 7;
	CHECK(fi_compare_atomic(d->ep, &operand, 1, NULL, &compare, NULL,
				&result, NULL, self, base + 8, key, FI_UINT64,
				FI_CSWAP, NULL));
	demo_wait_comp(d, NULL);
	ok &= target[1] == 7;

	operand = 0xdeadbeef;
	CHECK(fi_inject_write(d->ep, &operand, sizeof(operand), self,
			      base + 24, key));
	ok &= target[3] == 0xdeadbeef;

	CHECK(fi_close(&mr->fid));
	printf("[%d] self RMA: write 32 B, read 32 B, fetch_add, cswap, "
	       "inject_write 8 B: %s\n", rank, ok ? "verified" : "MISMATCH");
	return ok;
}

static int demo_child(struct demo_shared *sh, const char *prov, int nprocs,
		      int iters)
{
	struct ft_res d = {0};
	size_t len = NAME_MAX_LEN;
	fi_addr_t addrs[MAX_PROCS];
	int ok;

	demo_open(&d, prov);
	CHECK(fi_getname(&d.ep->fid, sh->names[rank], &len));
	sh->name_len = len;
	pthread_barrier_wait(&sh->boot);
	for (int i = 0; i < nprocs; i++)
		if (fi_av_insert(d.av, sh->names[i], 1, &addrs[i], 0,
				 NULL) != 1) {
			fprintf(stderr, "[%d] fi_av_insert failed\n", rank);
			return 1;
		}

	demo_barriers(&d, sh, nprocs, iters);
	ok = demo_self_rma(&d, addrs[rank]);
	CHECK(ft_close(&d));
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *prov = "gba";
	int nprocs = 4, iters = 10000, op, status, failed = 0;
	pthread_barrierattr_t battr;
	struct demo_shared *sh;
	pid_t pids[MAX_PROCS];
	double worst = 0;

	ft_set_prog("gba_demo");
	while ((op = getopt(argc, argv, "n:I:p:h")) != -1) {
		switch (op) {
		case 'n':
			nprocs = atoi(optarg);
			break;
		case 'I':
			iters = atoi(optarg);
			break;
		case 'p':
			prov = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-n processes (1..%d)] "
				"[-I barriers] [-p provider]\n", argv[0],
				MAX_PROCS);
			return op == 'h' ? 0 : 2;
		}
	}
	if (nprocs < 1 || nprocs > MAX_PROCS || iters < 1) {
		fprintf(stderr, "bad -n or -I\n");
		return 2;
	}

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pthread_barrierattr_init(&battr);
	pthread_barrierattr_setpshared(&battr, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&sh->boot, &battr, nprocs);

	printf("gba_demo: %d processes, %d GBA barriers each, provider %s\n",
	       nprocs, iters, prov);
	fflush(stdout);
	for (int i = 0; i < nprocs; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (pids[i] == 0) {
			rank = i;
			exit(demo_child(sh, prov, nprocs, iters));
		}
	}
	/*
	 * The first process that fails stops the others: they would wait
	 * for it forever (at the boot barrier, or in the GBA barriers).
	 */
	for (int left = nprocs; left > 0; left--) {
		pid_t pid = wait(&status);
		int i;

		if (pid < 0) {
			perror("wait");
			return 1;
		}
		for (i = 0; i < nprocs && pids[i] != pid; i++)
			;
		if (i == nprocs)
			continue;
		pids[i] = 0;
		if ((WIFEXITED(status) && !WEXITSTATUS(status)) || failed)
			continue; /* fine, or stopped below */
		if (WIFSIGNALED(status))
			fprintf(stderr, "gba_demo: process %d killed by signal "
				"%d: stopping the others\n", i,
				WTERMSIG(status));
		else
			fprintf(stderr, "gba_demo: process %d failed: stopping "
				"the others\n", i);
		for (int j = 0; j < nprocs; j++)
			if (pids[j] > 0)
				kill(pids[j], SIGKILL);
		failed = 1;
	}
	if (failed)
		return 1;
	for (int i = 0; i < nprocs; i++)
		worst = sh->barrier_us[i] > worst ? sh->barrier_us[i] : worst;
	printf("gba_demo: %lu arrivals, %d early releases, slowest process "
	       "%.3f us per barrier\n", (unsigned long)sh->arrivals,
	       sh->early, worst);
	if (sh->early || sh->arrivals != (unsigned long)nprocs * iters) {
		fprintf(stderr, "gba_demo: barrier check FAILED\n");
		return 1;
	}
	printf("gba_demo: OK\n");
	return 0;
}
