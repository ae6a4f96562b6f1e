/*
 * gba_bench_trigger - a chained schedule issued by the host next to the
 * same schedule issued as triggered work, time to completion, in the same
 * processes and run.
 *
 * -n processes (forked, fabtests launcher of fabtests/) each run the
 * schedule "PUTS puts of SIZE bytes to the right neighbour, then a GBA
 * barrier, then PUTS puts again", -I times each way, alternating:
 *
 *   host       fi_write x PUTS, wait for their completions (counter),
 *              fi_barrier, wait for it (CQ), fi_write x PUTS, wait;
 *   triggered  the whole chain queued first (fi_control FI_QUEUE_WORK
 *              puts on a "go" counter, fi_barrier2 FI_TRIGGER on the
 *              puts' completion counter, FI_QUEUE_WORK puts on the
 *              barrier's completion), then one fi_cntr_add(go) and one
 *              wait for the last puts' completion counter.
 *
 * Each process times its schedule; a repetition's figure is the slowest
 * process's.  Printed (rank 0): medians over the repetitions of host,
 * triggered (queueing included) and triggered from "go" (the schedule
 * already offloaded), and the ratios host / triggered.  Progress is the
 * provider's (FI_GBA_PROGRESS=auto: its progress thread).  Figures only:
 * nothing is asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gba_bench_stats.h"
#include "gba_ft_common.h"

#define PUTS 16
#define SIZE 1024
#define MAX_REPS 1000

struct bench_shared {
	struct ft_shared hdr;
	uint64_t key[FT_MAX_PROCS];
	uint64_t addr[FT_MAX_PROCS];
	/* per repetition and process: host, triggered, triggered from go */
	double t[3][MAX_REPS][FT_MAX_PROCS];
};

struct bench {
	struct ft_res r;
	struct bench_shared *sh;
	const struct ft_opts *o;
	int rank, right;
	uint8_t *buf;
	struct fid_mr *mr;
	struct fid_mc *mc;
	struct fid_av_set *set;
	struct fid_cntr *go, *put_done;
	struct fi_deferred_work work[2 * PUTS];
	struct fi_op_rma op[2 * PUTS];
	struct iovec iov[2 * PUTS];
	struct fi_rma_iov rma[2 * PUTS];
	struct fi_triggered_context tctx;
};

/* Wait for @c to reach @v; errors fail the run. */
static int wait_cntr(struct bench *b, struct fid_cntr *c, uint64_t v)
{
	int ret = fi_cntr_wait(c, v, b->o->timeout_s * 1000);

	if (ret)
		return ft_err("fi_cntr_wait", ret);
	return 0;
}

/*
 * Wait for the next barrier completion on the CQ; the completions of the
 * host's puts before it are consumed on the way.
 */
static int wait_barrier(struct bench *b)
{
	struct fi_cq_data_entry comp;
	int ret;

	do {
		ret = ft_wait_comp(&b->r, &comp, b->o->timeout_s * 1000);
	} while (!ret && !(comp.flags & FI_COLLECTIVE));
	return ret;
}

/* A plain barrier. */
static int barrier(struct bench *b)
{
	FT_CHECK(fi_barrier(b->r.ep, fi_mc_addr(b->mc), NULL));
	return wait_barrier(b);
}

/* Put @k (0 .. 2 PUTS - 1) by the host; retried while -FI_EAGAIN. */
static int host_put(struct bench *b, int k)
{
	ssize_t ret;

	do {
		ret = fi_write(b->r.ep, b->buf + (size_t)k * SIZE, SIZE, NULL,
			       (fi_addr_t)b->right,
			       b->sh->addr[b->right] + (uint64_t)k * SIZE,
			       b->sh->key[b->right], NULL);
		if (ret == -FI_EAGAIN)
			fi_cntr_read(b->r.cntr); /* progress */
	} while (ret == -FI_EAGAIN);
	FT_CHECK(ret);
	return 0;
}

/* The schedule issued by the host.  r.cntr counts puts and barriers. */
static int run_host(struct bench *b)
{
	uint64_t c0 = fi_cntr_read(b->r.cntr);
	int k, ret;

	for (k = 0; k < PUTS; k++)
		if ((ret = host_put(b, k)))
			return ret;
	if ((ret = wait_cntr(b, b->r.cntr, c0 + PUTS)) || (ret = barrier(b)))
		return ret;
	for (k = PUTS; k < 2 * PUTS; k++)
		if ((ret = host_put(b, k)))
			return ret;
	return wait_cntr(b, b->r.cntr, c0 + 2 * PUTS + 1);
}

/* Queue put @k as deferred work when @trig reaches @thr. */
static int queue_put(struct bench *b, int k, struct fid_cntr *trig,
		     uint64_t thr)
{
	b->iov[k] = (struct iovec){b->buf + (size_t)k * SIZE, SIZE};
	b->rma[k] = (struct fi_rma_iov){
		b->sh->addr[b->right] + (uint64_t)k * SIZE, SIZE,
		b->sh->key[b->right]};
	b->op[k] = (struct fi_op_rma){
		.ep = b->r.ep,
		.msg = {.msg_iov = &b->iov[k],
			.iov_count = 1,
			.addr = (fi_addr_t)b->right,
			.rma_iov = &b->rma[k],
			.rma_iov_count = 1},
	};
	b->work[k] = (struct fi_deferred_work){
		.threshold = thr,
		.triggering_cntr = trig,
		.completion_cntr = b->put_done,
		.op_type = FI_OP_WRITE,
		.op.rma = &b->op[k],
	};
	FT_CHECK(fi_control(&b->r.domain->fid, FI_QUEUE_WORK, &b->work[k]));
	return 0;
}

/*
 * The schedule as triggered work: queued, then started by one counter
 * bump.  *@t_go is set to the time of the bump.
 */
static int run_triggered(struct bench *b, double *t_go)
{
	uint64_t c0 = fi_cntr_read(b->r.cntr), p0 = fi_cntr_read(b->put_done);
	uint64_t g0 = fi_cntr_read(b->go);
	int k, ret;

	for (k = 0; k < PUTS; k++)
		if ((ret = queue_put(b, k, b->go, g0 + 1)))
			return ret;
	b->tctx.event_type = FI_TRIGGER_THRESHOLD;
	b->tctx.trigger.threshold.cntr = b->put_done;
	b->tctx.trigger.threshold.threshold = p0 + PUTS;
	FT_CHECK(fi_barrier2(b->r.ep, fi_mc_addr(b->mc), FI_TRIGGER, &b->tctx));
	for (k = PUTS; k < 2 * PUTS; k++)
		if ((ret = queue_put(b, k, b->r.cntr, c0 + 1)))
			return ret;
	*t_go = ft_now_us();
	FT_CHECK(fi_cntr_add(b->go, 1));
	if ((ret = wait_cntr(b, b->put_done, p0 + 2 * PUTS)))
		return ret;
	return wait_barrier(b);
}

static int setup(struct bench *b)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	int n = b->o->nprocs, ret;

	ret = ft_open(&b->r, b->o->prov, FI_RMA | FI_COLLECTIVE | FI_TRIGGER);
	if (ret)
		return ret;
	b->buf = calloc(2 * PUTS, SIZE);
	if (!b->buf)
		return ft_err("calloc", -FI_ENOMEM);
	FT_CHECK(fi_mr_reg(b->r.domain, b->buf, 2 * PUTS * SIZE,
			   FI_REMOTE_WRITE | FI_WRITE, 0, 0, 0, &b->mr, NULL));
	FT_CHECK(fi_cntr_open(b->r.domain, &cattr, &b->go, NULL));
	FT_CHECK(fi_cntr_open(b->r.domain, &cattr, &b->put_done, NULL));
	b->sh->key[b->rank] = fi_mr_key(b->mr);
	b->sh->addr[b->rank] = ft_rma_addr(&b->r, b->buf, b->buf);
	ret = ft_exchange(&b->r, &b->sh->hdr, b->rank, n, b->o->timeout_s);
	if (ret)
		return ret;
	return ft_join_all(&b->r, n, &b->set, &b->mc);
}

/* Median over the repetitions of the slowest process's time of @v. */
static double slowest_median(struct bench_shared *sh, int v, long reps,
			     int n)
{
	double m[MAX_REPS];
	long i;
	int p;

	for (i = 0; i < reps; i++) {
		m[i] = 0;
		for (p = 0; p < n; p++)
			if (sh->t[v][i][p] > m[i])
				m[i] = sh->t[v][i][p];
	}
	return gba_bench_median(m, (int)reps);
}

static int bench_child(int rank, void *shared, const struct ft_opts *o)
{
	struct bench b = {.sh = shared, .o = o, .rank = rank};
	double t0, tgo = 0, host, trig, run;
	long i;
	int ret, way;

	b.right = (rank + 1) % o->nprocs;
	if ((ret = setup(&b)))
		return ret;
	for (i = 0; i < o->iters; i++) {
		for (way = 0; way < 2; way++) {
			bool trig_way = (way + i) % 2; /* alternate the order */

			if ((ret = barrier(&b)))
				return ret;
			t0 = ft_now_us();
			ret = trig_way ? run_triggered(&b, &tgo) : run_host(&b);
			if (ret)
				return ret;
			if (trig_way) {
				b.sh->t[1][i][rank] = ft_now_us() - t0;
				b.sh->t[2][i][rank] = ft_now_us() - tgo;
			} else {
				b.sh->t[0][i][rank] = ft_now_us() - t0;
			}
		}
	}
	if ((ret = barrier(&b)))
		return ret;
	if (rank == 0) {
		host = slowest_median(b.sh, 0, o->iters, o->nprocs);
		trig = slowest_median(b.sh, 1, o->iters, o->nprocs);
		run = slowest_median(b.sh, 2, o->iters, o->nprocs);
		printf("trigger np=%d puts=%d size=%d reps=%ld host_us=%.1f "
		       "trig_us=%.1f trig_go_us=%.1f host/trig=%.2f "
		       "host/trig_go=%.2f\n",
		       o->nprocs, PUTS, SIZE, o->iters, host, trig, run,
		       host / trig, host / run);
	}
	FT_CHECK(fi_close(&b.mc->fid));
	FT_CHECK(fi_close(&b.set->fid));
	FT_CHECK(fi_close(&b.mr->fid));
	FT_CHECK(fi_close(&b.go->fid));
	FT_CHECK(fi_close(&b.put_done->fid));
	ft_close(&b.r);
	free(b.buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct ft_opts o = {
		.prov = "gba", .iters = 50, .nprocs = 4, .timeout_s = 120};

	ft_parse(argc, argv, &o, "gba_bench_trigger", NULL);
	if (o.iters < 1 || o.iters > MAX_REPS || o.nprocs < 2) {
		fprintf(stderr, "gba_bench_trigger: -I 1..%d, -n >= 2\n",
			MAX_REPS);
		return 2;
	}
	return ft_fork_run(&o, sizeof(struct bench_shared), bench_child);
}
