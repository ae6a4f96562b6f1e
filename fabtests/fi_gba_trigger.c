/*
 * fi_gba_trigger - schedules of triggered and deferred work across
 * processes, the host out of the loop once they are queued.
 *
 * -n processes (forked) register a region each and run two schedules,
 * queued whole before anything starts (fi_control FI_QUEUE_WORK on the
 * domain, fi_barrier2 with FI_TRIGGER):
 *
 * 1. Triggered broadcast: -I broadcasts of BCAST_LEN bytes from rank 0
 *    down a binomial tree.  Rank 0's puts of broadcast i fire when its
 *    "go" counter reaches i; every other rank forwards broadcast i to
 *    its children when its FI_REMOTE_WRITE counter (FI_RMA_EVENT)
 *    reaches i, i.e. when its parent's put of broadcast i has landed.
 *    Checked: every byte of every broadcast at every rank, and no error
 *    on the completion counters.  A forward that fired early would pass
 *    on stale bytes.
 *
 * 2. Barrier-pipelined exchange: STEPS steps of a ring shift.  In step
 *    s, each rank writes PUTS puts (one block) to its right neighbour:
 *    step 0 its own block, step s the block it received in step s - 1;
 *    then it arrives at a GBA barrier triggered by the puts' completion
 *    counter; step s + 1 fires on the barrier's completion (the
 *    endpoint's FI_SEND counter).  Checked: slot s of rank r holds rank
 *    (r - s - 1) mod n's block, so a step that started before the
 *    previous barrier released, or a barrier that arrived before its
 *    puts were delivered, forwards stale bytes; and the barrier
 *    completions come in order with their contexts.
 *
 * Progress is the provider's (manual: the counter waits; with
 * FI_GBA_PROGRESS=auto its progress thread).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gba_ft_common.h"

#define BCAST_LEN 8192 /* above the inline size: single-copy transfers */
#define PUTS 4	       /* puts per pipeline step */
#define CHUNK 1024     /* bytes per put */
#define BLOCK (PUTS * CHUNK)
#define STEPS 16

struct trig_shared {
	struct ft_shared hdr;
	uint64_t key[FT_MAX_PROCS];
	uint64_t addr[FT_MAX_PROCS];
};

/* One process's state. */
struct trig {
	struct ft_res r;
	struct trig_shared *sh;
	const struct ft_opts *o;
	int rank, n;
	uint8_t *region;
	size_t len;
	struct fid_mr *mr;
	struct fid_cntr *go, *done;
	struct fid_mc *mc;
	struct fid_av_set *set;
	/* work requests and their operations: valid until completion */
	struct fi_deferred_work *works;
	struct fi_op_rma *ops;
	struct iovec *iovs;
	struct fi_rma_iov *rmas;
	size_t nworks;
	struct fi_triggered_context tctx[STEPS];
};

/* Byte @j of broadcast @i. */
static uint8_t bcast_byte(long i, size_t j)
{
	return (uint8_t)((i * 31 + (long)j) ^ 0x5a);
}

/* Byte @j of rank @r's pipeline block. */
static uint8_t block_byte(int r, size_t j)
{
	return (uint8_t)(r * 17 + (int)(j / 7) + 1);
}

static size_t bcast_off(long i)
{
	return (size_t)(i - 1) * BCAST_LEN;
}

/* Pipeline area: own block, then one slot per step. */
static size_t pipe_off(const struct trig *t, int slot)
{
	return (size_t)t->o->iters * BCAST_LEN + (size_t)(slot + 1) * BLOCK;
}

/*
 * Queue a deferred write of @len bytes from local offset @loff to
 * offset @roff of rank @dest, when @trig reaches @thr; completion
 * counter t->done (or @comp when not NULL).
 */
static int queue_put(struct trig *t, size_t loff, int dest, size_t roff,
		     size_t len, struct fid_cntr *trig, uint64_t thr,
		     struct fid_cntr *comp)
{
	size_t k = t->nworks++;
	struct fi_deferred_work *w = &t->works[k];

	t->iovs[k] = (struct iovec){t->region + loff, len};
	t->rmas[k] = (struct fi_rma_iov){t->sh->addr[dest] + roff, len,
					 t->sh->key[dest]};
	t->ops[k] = (struct fi_op_rma){
		.ep = t->r.ep,
		.msg = {.msg_iov = &t->iovs[k],
			.iov_count = 1,
			.addr = (fi_addr_t)dest,
			.rma_iov = &t->rmas[k],
			.rma_iov_count = 1},
	};
	w->threshold = thr;
	w->triggering_cntr = trig;
	w->completion_cntr = comp ? comp : t->done;
	w->op_type = FI_OP_WRITE;
	w->op.rma = &t->ops[k];
	FT_CHECK(fi_control(&t->r.domain->fid, FI_QUEUE_WORK, w));
	return 0;
}

/* Wait until @c reaches @v (errors are failures). */
static int wait_cntr(struct trig *t, struct fid_cntr *c, uint64_t v,
		     const char *what)
{
	int ret = fi_cntr_wait(c, v, t->o->timeout_s * 1000);

	if (ret || fi_cntr_readerr(c)) {
		fprintf(stderr,
			"fi_gba_trigger[%d]: %s: %llu of %llu, %llu errors "
			"(%s)\n",
			t->rank, what, (unsigned long long)fi_cntr_read(c),
			(unsigned long long)v,
			(unsigned long long)fi_cntr_readerr(c),
			fi_strerror(ret < 0 ? -ret : ret));
		return ret ? ret : -FI_EIO;
	}
	return 0;
}

/* Children of @r in the binomial tree rooted at 0: r + 2^k > 2r. */
static int children(int r, int n, int *child)
{
	int m, k = 0;

	for (m = 1; m < n; m <<= 1)
		if (m > r && r + m < n)
			child[k++] = r + m;
	return k;
}

/*
 * Schedule 1: the triggered broadcast.  The FI_REMOTE_WRITE counter
 * counts this schedule's puts only (the parent may start before this
 * process queued its forwards: those already due fire when queued).
 */
static int bcast(struct trig *t)
{
	int child[32], nc = children(t->rank, t->n, child), c;
	long i, iters = t->o->iters;
	size_t j;

	for (i = 1; i <= iters; i++)
		for (c = 0; c < nc; c++) {
			int ret = queue_put(
				t, bcast_off(i), child[c], bcast_off(i),
				BCAST_LEN, t->rank ? t->r.rcntr : t->go,
				(uint64_t)i, NULL);
			if (ret)
				return ret;
		}
	if (t->rank == 0) {
		for (i = 1; i <= iters; i++) {
			for (j = 0; j < BCAST_LEN; j++)
				t->region[bcast_off(i) + j] = bcast_byte(i, j);
			FT_CHECK(fi_cntr_add(t->go, 1));
		}
	} else if (wait_cntr(t, t->r.rcntr, (uint64_t)iters,
			     "broadcasts received")) {
		return -FI_EIO;
	}
	if (wait_cntr(t, t->done, (uint64_t)(nc * iters), "forwards"))
		return -FI_EIO;
	for (i = 1; i <= iters; i++)
		for (j = 0; j < BCAST_LEN; j++)
			if (t->region[bcast_off(i) + j] != bcast_byte(i, j)) {
				fprintf(stderr,
					"fi_gba_trigger[%d]: broadcast %ld "
					"byte %zu is %u, not %u\n",
					t->rank, i, j,
					t->region[bcast_off(i) + j],
					bcast_byte(i, j));
				return -FI_EIO;
			}
	return 0;
}

/* A plain barrier over all processes, waited for on the CQ. */
static int barrier(struct trig *t)
{
	struct fi_cq_data_entry comp;

	FT_CHECK(fi_barrier(t->r.ep, fi_mc_addr(t->mc), NULL));
	return ft_wait_comp(&t->r, &comp, t->o->timeout_s * 1000);
}

/* Schedule 2: the barrier-pipelined ring exchange. */
static int pipeline(struct trig *t)
{
	int right = (t->rank + 1) % t->n, s, p, from;
	uint64_t bar0, go0, done0;
	struct fi_cq_data_entry comp;
	struct fid_cntr *put_done;
	struct fi_cntr_attr attr = {.events = FI_CNTR_EVENTS_COMP};
	size_t j;
	int ret;

	/*
	 * Everybody is done with the broadcast: the pipeline's puts must
	 * not count on a FI_REMOTE_WRITE counter that still fires forwards.
	 */
	ret = barrier(t);
	if (ret)
		return ret;
	bar0 = fi_cntr_read(t->r.cntr); /* barriers completed so far */
	go0 = fi_cntr_read(t->go);
	FT_CHECK(fi_cntr_open(t->r.domain, &attr, &put_done, NULL));
	done0 = fi_cntr_read(put_done);
	for (j = 0; j < BLOCK; j++)
		t->region[pipe_off(t, -1) + j] = block_byte(t->rank, j);
	for (s = 0; s < STEPS; s++) {
		/* the puts of step s: after barrier s - 1 (go for s = 0) */
		for (p = 0; p < PUTS; p++) {
			ret = queue_put(t, pipe_off(t, s - 1) + p * CHUNK,
					right, pipe_off(t, s) + p * CHUNK,
					CHUNK, s ? t->r.cntr : t->go,
					s ? bar0 + (uint64_t)s : go0 + 1,
					put_done);
			if (ret)
				return ret;
		}
		/* barrier s: when this step's puts are delivered */
		t->tctx[s].event_type = FI_TRIGGER_THRESHOLD;
		t->tctx[s].trigger.threshold.cntr = put_done;
		t->tctx[s].trigger.threshold.threshold =
			done0 + (uint64_t)PUTS * (s + 1);
		FT_CHECK(fi_barrier2(t->r.ep, fi_mc_addr(t->mc), FI_TRIGGER,
				     &t->tctx[s]));
	}
	FT_CHECK(fi_cntr_add(t->go, 1)); /* the whole schedule runs */
	if (wait_cntr(t, t->r.cntr, bar0 + STEPS, "pipeline barriers"))
		return -FI_EIO;
	for (s = 0; s < STEPS; s++) {
		ret = ft_wait_comp(&t->r, &comp, t->o->timeout_s * 1000);
		if (ret)
			return ret;
		if (comp.op_context != &t->tctx[s] ||
		    !(comp.flags & FI_COLLECTIVE))
			return ft_err("barrier completion out of order",
				      -FI_EOTHER);
	}
	for (s = 0; s < STEPS; s++) {
		from = ((t->rank - s - 1) % t->n + t->n) % t->n;
		for (j = 0; j < BLOCK; j++)
			if (t->region[pipe_off(t, s) + j] !=
			    block_byte(from, j)) {
				fprintf(stderr,
					"fi_gba_trigger[%d]: step %d byte %zu "
					"is %u, not rank %d's %u\n",
					t->rank, s, j,
					t->region[pipe_off(t, s) + j], from,
					block_byte(from, j));
				return -FI_EIO;
			}
	}
	FT_CHECK(fi_cntr_readerr(put_done) ? -FI_EIO : 0);
	FT_CHECK(fi_close(&put_done->fid));
	return 0;
}

/* Objects, region, keys; join the collective of all processes. */
static int setup(struct trig *t)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	size_t nworks = (size_t)t->o->iters * 8 + STEPS * PUTS;
	int ret;

	ret = ft_open(&t->r, t->o->prov,
		      FI_RMA | FI_RMA_EVENT | FI_COLLECTIVE | FI_TRIGGER);
	if (ret)
		return ret;
	if (!t->r.rcntr)
		return ft_err("FI_RMA_EVENT not granted", -FI_ENODATA);
	t->len = pipe_off(t, STEPS);
	t->region = calloc(1, t->len);
	t->works = calloc(nworks, sizeof(*t->works));
	t->ops = calloc(nworks, sizeof(*t->ops));
	t->iovs = calloc(nworks, sizeof(*t->iovs));
	t->rmas = calloc(nworks, sizeof(*t->rmas));
	if (!t->region || !t->works || !t->ops || !t->iovs || !t->rmas)
		return ft_err("calloc", -FI_ENOMEM);
	FT_CHECK(fi_mr_reg(t->r.domain, t->region, t->len,
			   FI_REMOTE_WRITE | FI_REMOTE_READ | FI_WRITE |
				   FI_READ,
			   0, 0, 0, &t->mr, NULL));
	FT_CHECK(fi_cntr_open(t->r.domain, &cattr, &t->go, NULL));
	FT_CHECK(fi_cntr_open(t->r.domain, &cattr, &t->done, NULL));
	t->sh->key[t->rank] = fi_mr_key(t->mr);
	t->sh->addr[t->rank] = ft_rma_addr(&t->r, t->region, t->region);
	ret = ft_exchange(&t->r, &t->sh->hdr, t->rank, t->n, t->o->timeout_s);
	if (ret)
		return ret;
	return ft_join_all(&t->r, t->n, &t->set, &t->mc);
}

/* A last barrier, so that no process leaves while others progress. */
static int teardown(struct trig *t)
{
	int ret = barrier(t);

	if (ret)
		return ret;
	FT_CHECK(fi_close(&t->mc->fid));
	FT_CHECK(fi_close(&t->set->fid));
	FT_CHECK(fi_close(&t->mr->fid));
	ft_close(&t->r);
	return 0;
}

static int trig_child(int rank, void *shared, const struct ft_opts *o)
{
	struct trig t = {.sh = shared, .o = o, .rank = rank, .n = o->nprocs};
	double t0, t1, t2;
	int ret;

	ret = setup(&t);
	if (ret)
		return ret;
	t0 = ft_now_us();
	ret = bcast(&t);
	if (ret)
		return ret;
	t1 = ft_now_us();
	ret = pipeline(&t);
	if (ret)
		return ret;
	t2 = ft_now_us();
	FT_CHECK(fi_close(&t.go->fid));
	FT_CHECK(fi_close(&t.done->fid));
	t.go = t.done = NULL;
	ret = teardown(&t);
	if (ret)
		return ret;
	if (rank == 0)
		printf("fi_gba_trigger: %d processes: %ld triggered broadcasts "
		       "of %d bytes (binomial tree) in %.0f us, a %d-step "
		       "exchange of %d puts + triggered barrier per step in "
		       "%.0f us; every byte checked\n",
		       t.n, o->iters, BCAST_LEN, t1 - t0, STEPS, PUTS,
		       t2 - t1);
	free(t.region);
	free(t.works);
	free(t.ops);
	free(t.iovs);
	free(t.rmas);
	return 0;
}

int main(int argc, char **argv)
{
	struct ft_opts o = {
		.prov = "gba", .iters = 20, .nprocs = 4, .timeout_s = 120};

	ft_parse(argc, argv, &o, "fi_gba_trigger", NULL);
	if (o.iters < 1) {
		fprintf(stderr, "fi_gba_trigger: -I must be at least 1\n");
		return 2;
	}
	return ft_fork_run(&o, sizeof(struct trig_shared), trig_child);
}
