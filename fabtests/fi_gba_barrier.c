/*
 * fi_gba_barrier - barrier conformance across processes.
 *
 * -n processes (forked) join one collective over all of them and run -I
 * barriers (fi_barrier, or with -t triggered barriers fi_barrier2 with
 * FI_TRIGGER on a counter the program bumps).  Checked for every barrier:
 *   - nobody is released before everybody arrived: before barrier k each
 *     process stores k in its slot of a shared array; after barrier k
 *     completes every slot must be >= k;
 *   - the completion is an FI_COLLECTIVE one with the right context;
 *   - with -t, a triggered barrier does not arrive before its counter
 *     reaches the threshold (a peer released early would see a slot
 *     below k);
 *   - the FI_SEND counter counts the barriers.
 * -r R adds a random delay of 0..R us before one arrival in four.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gba_ft_common.h"

struct barrier_shared {
	struct ft_shared hdr;
	atomic_long slot[FT_MAX_PROCS];
};

/* Every slot must have reached @k. */
static int check_slots(struct barrier_shared *sh, int n, long k)
{
	int i;

	for (i = 0; i < n; i++) {
		long v = atomic_load(&sh->slot[i]);

		if (v < k) {
			fprintf(stderr,
				"fi_gba_barrier: released from barrier %ld "
				"while process %d had only reached %ld\n",
				k, i, v);
			return -FI_EOTHER;
		}
	}
	return 0;
}

/* Arrive at barrier @k (plain or triggered) and wait for its release. */
static int one_barrier(struct ft_res *r, fi_addr_t coll,
		       struct barrier_shared *sh, int rank,
		       const struct ft_opts *o, long k)
{
	struct fi_triggered_context tctx = {0};
	struct fi_cq_data_entry comp;
	void *ctx = &sh->slot[rank];
	int ret, i;

	if (o->delay_us && !(rand() & 3))
		usleep((useconds_t)(rand() % (o->delay_us + 1)));
	if (o->triggered) {
		tctx.event_type = FI_TRIGGER_THRESHOLD;
		tctx.trigger.threshold.cntr = r->cntr;
		/*
		 * The counter has seen k - 1 barriers and k - 1 bumps: the
		 * bump below brings it to the threshold 2k - 1.
		 */
		tctx.trigger.threshold.threshold = 2 * (uint64_t)k - 1;
		ctx = &tctx;
		FT_CHECK(fi_barrier2(r->ep, coll, FI_TRIGGER, &tctx));
		for (i = 0; i < 100; i++)
			if (fi_cq_read(r->cq, &comp, 1) != -FI_EAGAIN)
				return ft_err("triggered barrier completed "
					      "before its threshold",
					      -FI_EOTHER);
		atomic_store(&sh->slot[rank], k);
		FT_CHECK(fi_cntr_add(r->cntr, 1)); /* fires it */
	} else {
		atomic_store(&sh->slot[rank], k);
		FT_CHECK(fi_barrier(r->ep, coll, ctx));
	}
	ret = ft_wait_comp(r, &comp, o->timeout_s * 1000);
	if (ret)
		return ret;
	if (comp.op_context != ctx || !(comp.flags & FI_COLLECTIVE))
		return ft_err("barrier completion context/flags", -FI_EOTHER);
	return check_slots(sh, o->nprocs, k);
}

static int barrier_child(int rank, void *shared, const struct ft_opts *o)
{
	struct barrier_shared *sh = shared;
	struct fid_av_set *set;
	struct fid_mc *mc;
	struct ft_res r;
	double t0, us;
	long k;
	int ret;

	srand((unsigned)getpid());
	ret = ft_open(&r, o->prov, FI_COLLECTIVE | FI_TRIGGER);
	if (ret)
		return ret;
	ret = ft_exchange(&r, &sh->hdr, rank, o->nprocs, o->timeout_s);
	if (ret)
		return ret;
	ret = ft_join_all(&r, o->nprocs, &set, &mc);
	if (ret)
		return ret;

	t0 = ft_now_us();
	for (k = 1; k <= o->iters; k++) {
		ret = one_barrier(&r, fi_mc_addr(mc), sh, rank, o, k);
		if (ret) {
			fprintf(stderr,
				"fi_gba_barrier[%d]: barrier %ld "
				"failed\n",
				rank, k);
			return ret;
		}
	}
	us = (ft_now_us() - t0) / (o->iters ? (double)o->iters : 1.0);
	if (fi_cntr_read(r.cntr) != (uint64_t)o->iters * (o->triggered ? 2 : 1))
		return ft_err("FI_SEND counter", -FI_EOTHER);
	FT_CHECK(fi_close(&mc->fid));
	FT_CHECK(fi_close(&set->fid));
	ft_close(&r);
	if (rank == 0)
		printf("fi_gba_barrier: %d processes, %ld %sbarriers, no early "
		       "release, %.3f us per barrier\n",
		       o->nprocs, o->iters, o->triggered ? "triggered " : "",
		       us);
	return 0;
}

int main(int argc, char **argv)
{
	struct ft_opts o = {
		.prov = "gba", .iters = 1000, .nprocs = 2, .timeout_s = 120};

	ft_parse(argc, argv, &o, "fi_gba_barrier",
		 "  -r <us>         random delay bound before arrivals\n"
		 "  -t              triggered barriers (fi_barrier2 + "
		 "FI_TRIGGER)\n");
	return ft_fork_run(&o, sizeof(struct barrier_shared), barrier_child);
}
