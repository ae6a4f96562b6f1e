/*
 * Deferred work queues of the gba provider (fi_trigger(3), fi_control
 * FI_QUEUE_WORK / FI_CANCEL_WORK / FI_FLUSH_WORK on the domain) through
 * the stock libfabric, on one endpoint targeting itself: every
 * fi_op_type fires exactly at its threshold (value + error value of the
 * triggering counter) and bumps its completion counter, reporting to the
 * endpoint only with FI_COMPLETION; chains through counters run in
 * threshold order; errors reach the completion counter's error value;
 * cancel and flush; work refused for room is retried in order; argument
 * errors; closing objects with work queued (counters it completes to
 * stay open until it ends); threshold order kept when two threads bump
 * the triggering counter at once.  The progress thread
 * (FI_PROGRESS_AUTO) completes a deferred message with no call into
 * libfabric, which manual progress never does.
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>

#include "ep_common.h"

TestSuite(deferred, .init = prov_setup, .fini = prov_teardown, .timeout = 60);

#define REGION 4096

/* An endpoint, its registered region, a triggering and a completion
 * counter (neither bound to the endpoint). */
struct denv {
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_mr *mr;
	struct fid_cntr *trig, *comp;
	fi_addr_t self;
	uint8_t *region;
	uint64_t key;
};

static struct fid_cntr *cntr_open(void)
{
	struct fi_cntr_attr attr = {.events = FI_CNTR_EVENTS_COMP,
				    .wait_obj = FI_WAIT_UNSPEC};
	struct fid_cntr *c;

	cr_assert_eq(fi_cntr_open(t_domain, &attr, &c, NULL), 0);
	return c;
}

/* Open @e on @domain with a tx/rx CQ of @cq_size entries. */
static void denv_open_on(struct denv *e, struct fid_domain *domain,
			 struct fi_info *info, size_t cq_size)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA,
				     .size = cq_size};
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = FI_WAIT_UNSPEC};

	memset(e, 0, sizeof(*e));
	cr_assert_eq(fi_endpoint(domain, info, &e->ep, NULL), 0);
	cr_assert_eq(fi_av_open(domain, &av_attr, &e->av, NULL), 0);
	cr_assert_eq(fi_cq_open(domain, &cq_attr, &e->cq, NULL), 0);
	cr_assert_eq(fi_cntr_open(domain, &cattr, &e->trig, NULL), 0);
	cr_assert_eq(fi_cntr_open(domain, &cattr, &e->comp, NULL), 0);
	cr_assert_eq(fi_ep_bind(e->ep, &e->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_enable(e->ep), 0);
	e->self = insert_name(e->av, e->ep);
	e->region = calloc(1, REGION);
	cr_assert_not_null(e->region);
	cr_assert_eq(fi_mr_reg(domain, e->region, REGION,
			       FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ |
				       FI_WRITE | FI_SEND | FI_RECV,
			       0, 0, 0, &e->mr, NULL),
		     0);
	e->key = fi_mr_key(e->mr);
}

static void denv_open(struct denv *e, size_t cq_size)
{
	denv_open_on(e, t_domain, t_info, cq_size);
}

static void denv_close(struct denv *e)
{
	cr_expect_eq(fi_close(&e->ep->fid), 0);
	cr_expect_eq(fi_close(&e->mr->fid), 0);
	cr_expect_eq(fi_close(&e->cq->fid), 0);
	cr_expect_eq(fi_close(&e->av->fid), 0);
	cr_expect_eq(fi_close(&e->trig->fid), 0);
	cr_expect_eq(fi_close(&e->comp->fid), 0);
	free(e->region);
}

/* Remote address of byte @off of the region (FI_MR_VIRT_ADDR here). */
static uint64_t raddr(struct denv *e, size_t off)
{
	return (uint64_t)(uintptr_t)(e->region + off);
}

/* A work request on @e: threshold @thr of e->trig, completion e->comp. */
static void work_init(struct fi_deferred_work *w, struct denv *e,
		      enum fi_op_type type, uint64_t thr)
{
	memset(w, 0, sizeof(*w));
	w->threshold = thr;
	w->triggering_cntr = e->trig;
	w->completion_cntr = e->comp;
	w->op_type = type;
}

static int queue(struct fi_deferred_work *w)
{
	return fi_control(&t_domain->fid, FI_QUEUE_WORK, w);
}

/* A deferred write of @len bytes of @src to region offset @off. */
struct wr {
	struct fi_deferred_work w;
	struct fi_op_rma op;
	struct iovec iov;
	struct fi_rma_iov rma;
};

static void wr_init(struct wr *r, struct denv *e, const void *src,
		    size_t len, size_t off, uint64_t thr, uint64_t flags,
		    void *ctx)
{
	work_init(&r->w, e, FI_OP_WRITE, thr);
	r->iov = (struct iovec){(void *)src, len};
	r->rma = (struct fi_rma_iov){raddr(e, off), len, e->key};
	r->op = (struct fi_op_rma){
		.ep = e->ep,
		.msg = {.msg_iov = &r->iov,
			.iov_count = 1,
			.addr = e->self,
			.rma_iov = &r->rma,
			.rma_iov_count = 1,
			.context = ctx},
		.flags = flags,
	};
	r->w.op.rma = &r->op;
}

Test(deferred, write_fires_exactly_at_threshold)
{
	struct fi_cq_data_entry ent;
	static const char msg[] = "deferred";
	char ctx;
	struct denv e;
	struct wr r;

	denv_open(&e, 0);
	wr_init(&r, &e, msg, sizeof(msg), 100, 3, 0, &ctx);
	cr_assert_eq(queue(&r.w), 0);
	/* the descriptors may go: they were copied */
	memset(&r, 0xa5, sizeof(r));
	cr_assert_eq(fi_cntr_add(e.trig, 2), 0);
	cr_expect_eq(fi_cntr_read(e.comp), 0, "fired before its threshold");
	cr_expect_eq(e.region[100], 0);
	cr_assert_eq(fi_cntr_add(e.trig, 1), 0);
	cr_assert_eq(fi_cntr_wait(e.comp, 1, 5000), 0);
	cr_expect_str_eq((char *)e.region + 100, msg);
	cr_expect_eq(fi_cntr_readerr(e.comp), 0);
	/* no FI_COMPLETION: nothing reaches the endpoint's CQ */
	cr_expect_eq(fi_cq_read(e.cq, &ent, 1), -FI_EAGAIN);
	/* a request whose threshold is already reached runs at once */
	wr_init(&r, &e, "x", 1, 200, 1, FI_COMPLETION, &ctx);
	cr_assert_eq(queue(&r.w), 0);
	cr_assert_eq(fi_cntr_wait(e.comp, 2, 5000), 0);
	cr_expect_eq(e.region[200], 'x');
	cr_assert_eq(poll_cq(e.cq, 1000, &ent), 1, "FI_COMPLETION reports");
	cr_expect_eq(ent.op_context, &ctx, "the operation's own context");
	cr_expect(ent.flags & FI_RMA && ent.flags & FI_WRITE);
	denv_close(&e);
}

Test(deferred, error_value_counts_towards_threshold)
{
	struct denv e;
	struct wr r;

	denv_open(&e, 0);
	wr_init(&r, &e, "e", 1, 0, 2, 0, NULL);
	cr_assert_eq(queue(&r.w), 0);
	cr_assert_eq(fi_cntr_add(e.trig, 1), 0);
	cr_expect_eq(fi_cntr_read(e.comp), 0);
	cr_assert_eq(fi_cntr_adderr(e.trig, 1), 0);
	cr_assert_eq(fi_cntr_wait(e.comp, 1, 5000), 0,
		     "success + error values reach the threshold");
	cr_expect_eq(e.region[0], 'e');
	denv_close(&e);
}

Test(deferred, errors_reach_completion_error_value)
{
	struct fi_cq_err_entry err = {0};
	struct fi_cq_data_entry ent;
	char ctx;
	struct denv e;
	struct wr r, next;

	denv_open(&e, 0);
	/* a write outside the region, then one chained on its completion
	 * counter: the error counts towards the chain's threshold */
	wr_init(&r, &e, "bad", 3, REGION - 1, 1, 0, NULL);
	wr_init(&next, &e, "ok", 2, 8, 1, FI_COMPLETION, &ctx);
	next.w.triggering_cntr = e.comp;
	next.w.completion_cntr = e.trig;
	cr_assert_eq(queue(&r.w), 0);
	cr_assert_eq(queue(&next.w), 0);
	cr_assert_eq(fi_cntr_add(e.trig, 1), 0);
	cr_assert_eq(fi_cntr_wait(e.trig, 2, 5000), 0);
	cr_expect_eq(fi_cntr_readerr(e.comp), 1, "the failed write");
	cr_expect_eq(fi_cntr_read(e.comp), 0);
	cr_expect_str_eq((char *)e.region + 8, "ok");
	/* without FI_COMPLETION the error is not on the CQ; the chained
	 * write asked for its completion */
	cr_assert_eq(poll_cq(e.cq, 1000, &ent), 1);
	cr_expect_eq(ent.op_context, &ctx);
	cr_expect_eq(fi_cq_readerr(e.cq, &err, 0), -FI_EAGAIN);

	/* with FI_COMPLETION the error entry carries the context */
	wr_init(&r, &e, "bad", 3, REGION - 1, 3, FI_COMPLETION, &ctx);
	cr_assert_eq(queue(&r.w), 0);
	cr_expect_eq(fi_cntr_readerr(e.comp), 1, "waits for 3");
	cr_assert_eq(fi_cntr_add(e.trig, 1), 0);
	cr_expect_eq(poll_cq(e.cq, 1000, &ent), -FI_EAVAIL);
	cr_assert_eq(fi_cq_readerr(e.cq, &err, 0), 1);
	cr_expect_eq(err.op_context, &ctx);
	cr_expect_eq(err.err, FI_EINVAL);
	cr_expect_eq(fi_cntr_readerr(e.comp), 2);
	denv_close(&e);
}

/* Counter operations: set/add of another counter, in threshold order. */
Test(deferred, counter_ops_chain_in_threshold_order)
{
	struct fi_deferred_work set, add, add2;
	struct fi_op_cntr op_set, op_add, op_add2;
	struct fid_cntr *x;
	struct denv e;

	denv_open(&e, 0);
	x = cntr_open();
	op_set = (struct fi_op_cntr){x, 10};
	op_add = (struct fi_op_cntr){x, 5};
	op_add2 = (struct fi_op_cntr){e.comp, 7};
	/* queued out of order: add at 2, set at 1, add2 on x's value 15 */
	work_init(&add, &e, FI_OP_CNTR_ADD, 2);
	add.completion_cntr = NULL;
	add.op.cntr = &op_add;
	work_init(&set, &e, FI_OP_CNTR_SET, 1);
	set.completion_cntr = NULL;
	set.op.cntr = &op_set;
	work_init(&add2, &e, FI_OP_CNTR_ADD, 15);
	add2.triggering_cntr = x;
	add2.completion_cntr = NULL;
	add2.op.cntr = &op_add2;
	cr_assert_eq(queue(&add), 0);
	cr_assert_eq(queue(&set), 0);
	cr_assert_eq(queue(&add2), 0);
	cr_expect_eq(fi_close(&x->fid), -FI_EBUSY, "target of queued work");
	cr_assert_eq(fi_cntr_add(e.trig, 1), 0);
	cr_expect_eq(fi_cntr_read(x), 10, "only the threshold-1 set ran");
	cr_expect_eq(fi_cntr_read(e.comp), 0);
	cr_assert_eq(fi_cntr_add(e.trig, 1), 0);
	cr_expect_eq(fi_cntr_read(x), 15);
	cr_expect_eq(fi_cntr_read(e.comp), 7, "chained on x reaching 15");
	/* both at once: still threshold order (set, then add) */
	cr_assert_eq(fi_cntr_set(x, 0), 0);
	cr_assert_eq(fi_cntr_set(e.trig, 0), 0);
	cr_assert_eq(queue(&add), 0);
	cr_assert_eq(queue(&set), 0);
	cr_assert_eq(fi_cntr_add(e.trig, 5), 0);
	cr_expect_eq(fi_cntr_read(x), 15);
	cr_expect_eq(fi_close(&x->fid), 0);
	denv_close(&e);
}

/* Every endpoint operation type, each chained on the previous one. */
Test(deferred, every_op_type_in_a_chain)
{
	uint64_t *words, operand = 5, cmpv = 12, res[2] = {0, 0};
	struct fi_deferred_work w[8];
	struct fi_op_msg send, recv;
	struct fi_op_tagged tsend, trecv;
	struct fi_op_rma rd;
	struct fi_op_atomic at;
	struct fi_op_fetch_atomic fat;
	struct fi_op_compare_atomic cat;
	struct iovec siov, riov, tsiov, triov, rdiov;
	struct fi_rma_iov rdrma;
	struct fi_ioc opnd, fres, cres, cmp;
	struct fi_rma_ioc aioc;
	char sbuf[] = "message", rbuf[16] = "", tbuf[16] = "", rdbuf[8];
	struct fid_cntr *c[9];
	struct denv e;
	int i;

	denv_open(&e, 0);
	words = (uint64_t *)e.region;
	words[0] = 7;
	memcpy(e.region + 64, "readme!", 8);
	for (i = 0; i < 9; i++)
		c[i] = cntr_open();
	siov = (struct iovec){sbuf, sizeof(sbuf)};
	riov = (struct iovec){rbuf, sizeof(rbuf)};
	tsiov = siov;
	triov = (struct iovec){tbuf, sizeof(tbuf)};
	rdiov = (struct iovec){rdbuf, sizeof(rdbuf)};
	rdrma = (struct fi_rma_iov){raddr(&e, 64), 8, e.key};
	opnd = (struct fi_ioc){&operand, 1};
	fres = (struct fi_ioc){&res[0], 1};
	cres = (struct fi_ioc){&res[1], 1};
	cmp = (struct fi_ioc){&cmpv, 1};
	aioc = (struct fi_rma_ioc){raddr(&e, 0), 1, e.key};
	recv = (struct fi_op_msg){e.ep, {&riov, NULL, 1, e.self, NULL, 0}, 0};
	send = (struct fi_op_msg){e.ep, {&siov, NULL, 1, e.self, NULL, 0}, 0};
	trecv = (struct fi_op_tagged){
		e.ep, {&triov, NULL, 1, e.self, 0x77, 0, NULL, 0}, 0};
	tsend = (struct fi_op_tagged){
		e.ep, {&tsiov, NULL, 1, e.self, 0x77, 0, NULL, 0}, 0};
	rd = (struct fi_op_rma){
		e.ep, {&rdiov, NULL, 1, e.self, &rdrma, 1, NULL, 0}, 0};
	at = (struct fi_op_atomic){e.ep,
				   {.msg_iov = &opnd,
				    .iov_count = 1,
				    .addr = e.self,
				    .rma_iov = &aioc,
				    .rma_iov_count = 1,
				    .datatype = FI_UINT64,
				    .op = FI_SUM},
				   0};
	fat = (struct fi_op_fetch_atomic){e.ep, at.msg, {&fres, NULL, 1}, 0};
	cat = (struct fi_op_compare_atomic){
		e.ep, at.msg, {&cres, NULL, 1}, {&cmp, NULL, 1}, 0};
	cat.msg.op = FI_CSWAP;

	/* recv and send on c0, then trecv and tsend on the send's
	 * completion, then read -> atomic -> fetch -> compare, each on the
	 * previous one's completion counter */
	memset(w, 0, sizeof(w));
	w[0].op_type = FI_OP_RECV, w[0].op.msg = &recv;
	w[1].op_type = FI_OP_SEND, w[1].op.msg = &send;
	w[2].op_type = FI_OP_TRECV, w[2].op.tagged = &trecv;
	w[3].op_type = FI_OP_TSEND, w[3].op.tagged = &tsend;
	w[4].op_type = FI_OP_READ, w[4].op.rma = &rd;
	w[5].op_type = FI_OP_ATOMIC, w[5].op.atomic = &at;
	w[6].op_type = FI_OP_FETCH_ATOMIC, w[6].op.fetch_atomic = &fat;
	w[7].op_type = FI_OP_COMPARE_ATOMIC, w[7].op.compare_atomic = &cat;
	for (i = 0; i < 8; i++) {
		w[i].threshold = 1;
		w[i].triggering_cntr = c[i < 2 ? 0 : i < 4 ? 2 : i];
		w[i].completion_cntr = c[i + 1];
	}
	for (i = 7; i >= 0; i--)
		cr_assert_eq(queue(&w[i]), 0, "op type %d", i);
	cr_assert_eq(fi_cntr_add(c[0], 1), 0);
	cr_assert_eq(fi_cntr_wait(c[8], 1, 10000), 0);
	for (i = 1; i <= 8; i++)
		cr_expect_eq(fi_cntr_read(c[i]), 1, "completion counter %d",
			     i);
	cr_expect_str_eq(rbuf, "message");
	cr_expect_str_eq(tbuf, "message");
	cr_expect_str_eq(rdbuf, "readme!");
	/* 7 + 5 (atomic) = 12, fetch-add 5 -> 17 (fetched 12), cswap
	 * 12 == 17 fails: stays 17 (fetched 17) */
	cr_expect_eq(res[0], 12);
	cr_expect_eq(res[1], 17);
	cr_expect_eq(words[0], 17);
	for (i = 0; i < 9; i++)
		cr_expect_eq(fi_close(&c[i]->fid), 0);
	denv_close(&e);
}

Test(deferred, cancel_and_flush)
{
	struct fid_cntr *other;
	struct wr a, b, c;
	struct fi_deferred_work sel;
	struct denv e;

	denv_open(&e, 0);
	other = cntr_open();
	wr_init(&a, &e, "a", 1, 0, 1, 0, NULL);
	wr_init(&b, &e, "b", 1, 1, 1, 0, NULL);
	wr_init(&c, &e, "c", 1, 2, 1, 0, NULL);
	c.w.triggering_cntr = other;
	cr_assert_eq(queue(&a.w), 0);
	cr_assert_eq(queue(&b.w), 0);
	cr_assert_eq(queue(&c.w), 0);
	cr_expect_eq(fi_close(&e.comp->fid), -FI_EBUSY,
		     "the completion counter of queued work stays open");
	cr_expect_eq(fi_control(&t_domain->fid, FI_CANCEL_WORK, &a.w), 0);
	cr_expect_eq(fi_control(&t_domain->fid, FI_CANCEL_WORK, &a.w),
		     -FI_ENOENT, "canceled once");
	/* flush what waits on e.trig only */
	memset(&sel, 0, sizeof(sel));
	sel.triggering_cntr = e.trig;
	cr_expect_eq(fi_control(&t_domain->fid, FI_FLUSH_WORK, &sel), 0);
	cr_assert_eq(fi_cntr_add(e.trig, 5), 0);
	cr_assert_eq(fi_cntr_add(other, 1), 0);
	cr_assert_eq(fi_cntr_wait(e.comp, 1, 5000), 0);
	cr_expect_eq(e.region[0], 0, "canceled");
	cr_expect_eq(e.region[1], 0, "flushed");
	cr_expect_eq(e.region[2], 'c', "another counter's work stays");
	cr_expect_eq(fi_control(&t_domain->fid, FI_CANCEL_WORK, &c.w),
		     -FI_ENOENT, "fired: nothing to cancel");
	/* flush everything */
	wr_init(&a, &e, "A", 1, 0, 100, 0, NULL);
	wr_init(&c, &e, "C", 1, 2, 100, 0, NULL);
	c.w.triggering_cntr = other;
	cr_assert_eq(queue(&a.w), 0);
	cr_assert_eq(queue(&c.w), 0);
	cr_expect_eq(fi_control(&t_domain->fid, FI_FLUSH_WORK, NULL), 0);
	cr_assert_eq(fi_cntr_add(e.trig, 100), 0);
	cr_assert_eq(fi_cntr_add(other, 100), 0);
	cr_expect_eq(fi_cntr_read(e.comp), 1);
	cr_expect_eq(e.region[0], 0);
	cr_expect_eq(e.region[2], 'c');
	cr_expect_eq(fi_close(&other->fid), 0);
	denv_close(&e);
}

/* A CQ of 2 entries: fired work that finds it full waits, in order. */
Test(deferred, work_refused_for_room_is_retried_in_order)
{
	struct fi_cq_data_entry ent[4];
	uint8_t v[6] = {1, 2, 3, 4, 5, 6};
	struct wr r[6];
	struct denv e;
	int i, got = 0;

	denv_open(&e, 2);
	for (i = 0; i < 6; i++) {
		wr_init(&r[i], &e, &v[i], 1, 0, 1, FI_COMPLETION, NULL);
		cr_assert_eq(queue(&r[i].w), 0);
	}
	cr_assert_eq(fi_cntr_add(e.trig, 1), 0);
	cr_expect_eq(e.region[0], 2, "two fit; the rest wait for room");
	cr_expect_eq(fi_cntr_read(e.comp), 2);
	while (got < 6) {
		ssize_t n = fi_cq_read(e.cq, ent, 4);

		if (n > 0)
			got += (int)n;
		else
			cr_assert_eq(n, -FI_EAGAIN);
	}
	cr_expect_eq(e.region[0], 6, "issued in threshold/queue order");
	cr_expect_eq(fi_cntr_read(e.comp), 6);
	denv_close(&e);
}

/* Bump @arg's counter by one, ORDER_BUMPS times. */
#define ORDER_WORK 2000
#define ORDER_BUMPS (ORDER_WORK / 2)
static void *bump_thread(void *arg)
{
	int i;

	for (i = 0; i < ORDER_BUMPS; i++)
		fi_cntr_add(arg, 1);
	return NULL;
}

/*
 * Deferred fetch-adds of 1 on one word, thresholds 1 .. ORDER_WORK: the
 * k-th must fetch k - 1 even when two threads make them due at once
 * (one thread at a time runs a counter's triggers, in threshold order).
 */
Test(deferred, threshold_order_with_two_threads)
{
	static struct fi_deferred_work w[ORDER_WORK];
	static struct fi_op_fetch_atomic op[ORDER_WORK];
	static struct fi_ioc opnd[ORDER_WORK], res[ORDER_WORK];
	static uint64_t one = 1, got[ORDER_WORK];
	struct fi_rma_ioc aioc;
	pthread_t th[2];
	struct denv e;
	int k, bad = 0;

	prov_teardown();
	prov_setup_threading(FI_THREAD_SAFE);
	denv_open(&e, 0);
	aioc = (struct fi_rma_ioc){raddr(&e, 0), 1, e.key};
	for (k = 0; k < ORDER_WORK; k++) {
		opnd[k] = (struct fi_ioc){&one, 1};
		res[k] = (struct fi_ioc){&got[k], 1};
		op[k] = (struct fi_op_fetch_atomic){
			e.ep,
			{.msg_iov = &opnd[k],
			 .iov_count = 1,
			 .addr = e.self,
			 .rma_iov = &aioc,
			 .rma_iov_count = 1,
			 .datatype = FI_UINT64,
			 .op = FI_SUM},
			{&res[k], NULL, 1},
			0};
		work_init(&w[k], &e, FI_OP_FETCH_ATOMIC, (uint64_t)k + 1);
		w[k].op.fetch_atomic = &op[k];
		cr_assert_eq(queue(&w[k]), 0);
	}
	for (k = 0; k < 2; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, bump_thread, e.trig),
			     0);
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	cr_assert_eq(fi_cntr_wait(e.comp, ORDER_WORK, 10000), 0);
	for (k = 0; k < ORDER_WORK; k++)
		bad += got[k] != (uint64_t)k;
	cr_expect_eq(bad, 0, "%d deferred atomics issued out of order", bad);
	denv_close(&e);
}

Test(deferred, argument_errors)
{
	struct fi_op_cntr op_cntr;
	struct fi_op_msg recv;
	struct fi_rma_iov rma2[2];
	struct iovec iov = {NULL, 0};
	struct fi_deferred_work w;
	struct denv e;
	struct wr r;

	denv_open(&e, 0);
	cr_expect_eq(queue(NULL), -FI_EINVAL);
	cr_expect_eq(fi_control(&t_domain->fid, FI_CANCEL_WORK, NULL),
		     -FI_EINVAL);
	cr_expect_eq(fi_control(&t_domain->fid, FI_GETWAIT, &w), -FI_ENOSYS);
	wr_init(&r, &e, "x", 1, 0, 1, 0, NULL);
	r.w.triggering_cntr = NULL;
	cr_expect_eq(queue(&r.w), -FI_EINVAL, "no triggering counter");
	r.w.triggering_cntr = (struct fid_cntr *)e.cq; /* not a counter */
	cr_expect_eq(queue(&r.w), -FI_EINVAL);
	r.w.triggering_cntr = e.trig;
	r.w.completion_cntr = (struct fid_cntr *)e.cq;
	cr_expect_eq(queue(&r.w), -FI_EINVAL, "completion_cntr not a counter");
	r.w.completion_cntr = e.comp;
	r.w.op_type = (enum fi_op_type)99;
	cr_expect_eq(queue(&r.w), -FI_EINVAL, "unknown op_type");
	r.w.op_type = FI_OP_WRITE;
	r.w.op.rma = NULL;
	cr_expect_eq(queue(&r.w), -FI_EINVAL, "no operation");
	r.w.op.rma = &r.op;
	r.op.ep = NULL;
	cr_expect_eq(queue(&r.w), -FI_EINVAL, "no endpoint");
	r.op.ep = e.ep;
	r.op.flags = FI_TRIGGER;
	cr_expect_eq(queue(&r.w), -FI_EBADFLAGS);
	r.op.flags = 0;
	r.op.msg.iov_count = GBA_IOV_LIMIT + 1;
	cr_expect_eq(queue(&r.w), -FI_EINVAL, "too many iovs");
	r.op.msg.iov_count = 1;
	r.op.msg.rma_iov = rma2;
	r.op.msg.rma_iov_count = 2;
	cr_expect_eq(queue(&r.w), -FI_EINVAL, "two remote iovs");
	/* counter operations take no completion counter */
	op_cntr = (struct fi_op_cntr){e.comp, 1};
	work_init(&w, &e, FI_OP_CNTR_ADD, 1);
	w.op.cntr = &op_cntr;
	cr_expect_eq(queue(&w), -FI_EINVAL);
	w.completion_cntr = NULL;
	op_cntr.cntr = NULL;
	cr_expect_eq(queue(&w), -FI_EINVAL, "no target counter");
	/* multi-receive buffers cannot be deferred */
	recv = (struct fi_op_msg){e.ep, {&iov, NULL, 1, e.self, NULL, 0},
				  FI_MULTI_RECV};
	work_init(&w, &e, FI_OP_RECV, 1);
	w.op.msg = &recv;
	cr_expect_eq(queue(&w), -FI_ENOSYS);
	/* nothing was queued: a threshold reached runs nothing */
	cr_assert_eq(fi_cntr_add(e.trig, 10), 0);
	cr_expect_eq(fi_cntr_read(e.comp), 0);
	cr_expect_eq(e.region[0], 0);
	denv_close(&e);
}

/* Queued, never fired: closing the endpoint or a counter discards it. */
Test(deferred, close_with_work_queued)
{
	struct fi_op_msg recv;
	struct iovec iov;
	struct fi_deferred_work w;
	char buf[8];
	struct denv e;
	struct wr r;

	denv_open(&e, 0);
	wr_init(&r, &e, "x", 1, 0, 5, 0, NULL);
	cr_assert_eq(queue(&r.w), 0);
	/* a receive that fires and stays posted when the endpoint closes */
	iov = (struct iovec){buf, sizeof(buf)};
	recv = (struct fi_op_msg){e.ep, {&iov, NULL, 1, e.self, NULL, 0}, 0};
	work_init(&w, &e, FI_OP_RECV, 0);
	w.op.msg = &recv;
	cr_assert_eq(queue(&w), 0);
	denv_close(&e); /* valgrind: no record leaks */
}

/* Manual progress: nothing moves without a call.  FI_PROGRESS_AUTO: a
 * deferred message is delivered while the application only sleeps. */
static bool wait_memory(volatile char *p, char v, int ms)
{
	while (*p != v && ms-- > 0)
		usleep(1000);
	return *p == v;
}

/*
 * Send @rbuf's message to self through deferred work.  Without
 * @expect_delivery (manual progress) nothing moves until fi_cntr_wait.
 * With it (FI_PROGRESS_AUTO) the receive completes on a counter of its
 * own opened with FI_WAIT_FD: the test only poll()s that descriptor (no
 * call into the provider, which would progress by itself), then reads the
 * counter, which orders the progress thread's copy before the check of
 * @rbuf (ThreadSanitizer: no unsynchronised read of the buffer).
 */
static void send_to_self(struct fid_domain *domain, struct fi_info *info,
			 volatile char *rbuf, bool expect_delivery)
{
	struct fi_cntr_attr fd_attr = {.events = FI_CNTR_EVENTS_COMP,
				       .wait_obj = FI_WAIT_FD};
	struct fi_deferred_work rw, sw;
	struct fi_op_msg recv, send;
	struct fid_cntr *rcomp = NULL;
	struct iovec riov, siov;
	static char sbuf[] = "auto";
	struct pollfd pfd = {.events = POLLIN};
	struct denv e;

	denv_open_on(&e, domain, info, 0);
	riov = (struct iovec){(void *)rbuf, 8};
	siov = (struct iovec){sbuf, sizeof(sbuf)};
	recv = (struct fi_op_msg){e.ep, {&riov, NULL, 1, e.self, NULL, 0}, 0};
	send = (struct fi_op_msg){e.ep, {&siov, NULL, 1, e.self, NULL, 0}, 0};
	work_init(&rw, &e, FI_OP_RECV, 1);
	rw.op.msg = &recv;
	if (expect_delivery) {
		cr_assert_eq(fi_cntr_open(domain, &fd_attr, &rcomp, NULL), 0);
		cr_assert_eq(fi_control(&rcomp->fid, FI_GETWAIT, &pfd.fd), 0);
		rw.completion_cntr = rcomp;
	}
	work_init(&sw, &e, FI_OP_SEND, 1);
	sw.op.msg = &send;
	cr_assert_eq(fi_control(&domain->fid, FI_QUEUE_WORK, &rw), 0);
	cr_assert_eq(fi_control(&domain->fid, FI_QUEUE_WORK, &sw), 0);
	cr_assert_eq(fi_cntr_add(e.trig, 1), 0);
	if (expect_delivery) {
		cr_expect_eq(poll(&pfd, 1, 5000), 1,
			     "delivered by the progress thread");
		cr_expect_eq(fi_cntr_read(rcomp), 1);
		cr_expect_eq(rbuf[3], 'o');
		cr_assert_eq(fi_cntr_wait(e.comp, 1, 5000), 0);
	} else {
		cr_expect_not(wait_memory(rbuf + 3, 'o', 100),
			      "manual progress: no helper thread");
		cr_assert_eq(fi_cntr_wait(e.comp, 2, 5000), 0);
		cr_expect_eq(rbuf[3], 'o');
	}
	denv_close(&e);
	if (rcomp)
		cr_expect_eq(fi_close(&rcomp->fid), 0);
}

Test(deferred, progress_manual_and_auto)
{
	static char rbuf1[8], rbuf2[8];
	struct fi_info *hints = prov_hints(), *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;

	cr_expect_eq(t_info->domain_attr->data_progress, FI_PROGRESS_MANUAL);
	send_to_self(t_domain, t_info, rbuf1, false);

	hints->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	cr_assert_eq(fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, &info), 0);
	cr_expect_eq(info->domain_attr->data_progress, FI_PROGRESS_AUTO);
	cr_assert_eq(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	cr_assert_eq(fi_domain(fabric, info, &domain, NULL), 0);
	send_to_self(domain, info, rbuf2, true);
	cr_expect_eq(fi_close(&domain->fid), 0);
	cr_expect_eq(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}
