/*
 * Self (loopback) RMA of the gba provider through the stock libfabric:
 * every verb with every byte checked, CQ entries and counters, selective
 * completion, inject, remote CQ data, another endpoint of the process as
 * target, target-side errors as error completions, argument errors,
 * another process's address, a full CQ (-FI_EAGAIN, nothing performed),
 * and triggered writes and reads firing at their threshold (the caller's
 * arrays gone by then), refused when posted where the verb would be.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <rdma/fi_rma.h>

#include "ep_common.h"

TestSuite(rma, .init = prov_setup, .fini = prov_teardown, .timeout = 60);

#define REGION (1 << 20)

/* An endpoint with a registered region and counters for write/read. */
struct rma_env {
	struct tep t;
	struct fid_cntr *wcntr, *rcntr;
	struct fid_mr *mr;
	uint8_t *region;
	uint64_t key;
};

static void rma_open_flags(struct rma_env *e, uint64_t access,
			   uint64_t cq_flags)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA};

	memset(e, 0, sizeof(*e));
	cr_assert_eq(fi_endpoint(t_domain, t_info, &e->t.ep, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &e->t.av, NULL), 0);
	cr_assert_eq(fi_cq_open(t_domain, &cq_attr, &e->t.cq, NULL), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &e->wcntr, NULL), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &e->rcntr, NULL), 0);
	cr_assert_eq(fi_ep_bind(e->t.ep, &e->t.av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(e->t.ep, &e->t.cq->fid,
				FI_TRANSMIT | FI_RECV | cq_flags),
		     0);
	cr_assert_eq(fi_ep_bind(e->t.ep, &e->wcntr->fid, FI_WRITE), 0);
	cr_assert_eq(fi_ep_bind(e->t.ep, &e->rcntr->fid, FI_READ), 0);
	cr_assert_eq(fi_enable(e->t.ep), 0);
	e->t.self = insert_name(e->t.av, e->t.ep);
	e->region = calloc(1, REGION);
	cr_assert_not_null(e->region);
	cr_assert_eq(fi_mr_reg(t_domain, e->region, REGION, access, 0, 0, 0,
			       &e->mr, NULL),
		     0);
	e->key = fi_mr_key(e->mr);
}

static void rma_open(struct rma_env *e)
{
	rma_open_flags(e, FI_REMOTE_READ | FI_REMOTE_WRITE, 0);
}

static void rma_close(struct rma_env *e)
{
	cr_expect_eq(fi_close(&e->t.ep->fid), 0);
	cr_expect_eq(fi_close(&e->mr->fid), 0);
	cr_expect_eq(fi_close(&e->wcntr->fid), 0);
	cr_expect_eq(fi_close(&e->rcntr->fid), 0);
	cr_expect_eq(fi_close(&e->t.cq->fid), 0);
	cr_expect_eq(fi_close(&e->t.av->fid), 0);
	free(e->region);
}

static uint64_t raddr(struct rma_env *e, size_t off)
{
	return (uint64_t)(uintptr_t)(e->region + off);
}

/* The next CQ entry must be a success for @ctx with @flags and @len. */
static void expect_comp(struct rma_env *e, void *ctx, uint64_t flags,
			size_t len)
{
	struct fi_cq_data_entry c;

	cr_assert_eq(fi_cq_read(e->t.cq, &c, 1), 1);
	cr_expect_eq(c.op_context, ctx);
	cr_expect_eq(c.flags, flags, "flags 0x%llx",
		     (unsigned long long)c.flags);
	cr_expect_eq(c.len, len);
}

/* The next CQ entry must be an error @err for @ctx. */
static void expect_err(struct rma_env *e, void *ctx, int err)
{
	struct fi_cq_data_entry c;
	struct fi_cq_err_entry ee;

	cr_assert_eq(fi_cq_read(e->t.cq, &c, 1), -FI_EAVAIL);
	memset(&ee, 0, sizeof(ee));
	cr_assert_eq(fi_cq_readerr(e->t.cq, &ee, 0), 1);
	cr_expect_eq(ee.op_context, ctx);
	cr_expect_eq(ee.err, err, "err %d (%s)", ee.err, fi_strerror(ee.err));
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

Test(rma, write_read_sizes)
{
	static const size_t sizes[] = {1, 7, 8, 64, 4096, 65537, REGION};
	struct rma_env e;
	uint8_t *src = malloc(REGION), *dst = malloc(REGION);
	size_t k, n;
	int ctx;

	rma_open(&e);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		n = sizes[k];
		fill(src, n, (unsigned)k);
		cr_assert_eq(fi_write(e.t.ep, src, n, NULL, e.t.self,
				      raddr(&e, REGION - n), e.key, &ctx),
			     0);
		expect_comp(&e, &ctx, FI_RMA | FI_WRITE, n);
		cr_assert_eq(memcmp(e.region + REGION - n, src, n), 0,
			     "write of %zu bytes", n);
		memset(dst, 0, n);
		cr_assert_eq(fi_read(e.t.ep, dst, n, NULL, e.t.self,
				     raddr(&e, REGION - n), e.key, &ctx),
			     0);
		expect_comp(&e, &ctx, FI_RMA | FI_READ, n);
		cr_assert_eq(memcmp(dst, src, n), 0, "read of %zu bytes", n);
	}
	cr_expect_eq(fi_cntr_read(e.wcntr), k);
	cr_expect_eq(fi_cntr_read(e.rcntr), k);
	rma_close(&e);
	free(src);
	free(dst);
}

Test(rma, vector_and_msg_forms)
{
	uint8_t a[10], b[300], c[5], r[315];
	struct iovec iov[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
	struct fi_rma_iov rma = {0, sizeof(r), 0};
	struct fi_msg_rma msg = {0};
	struct rma_env e;
	int ctx;

	rma_open(&e);
	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	fill(c, sizeof(c), 3);
	cr_assert_eq(fi_writev(e.t.ep, iov, NULL, 3, e.t.self, raddr(&e, 100),
			       e.key, &ctx),
		     0);
	expect_comp(&e, &ctx, FI_RMA | FI_WRITE, sizeof(r));
	cr_expect_eq(memcmp(e.region + 100, a, sizeof(a)), 0);
	cr_expect_eq(memcmp(e.region + 110, b, sizeof(b)), 0);
	cr_expect_eq(memcmp(e.region + 410, c, sizeof(c)), 0);

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memset(c, 0, sizeof(c));
	cr_assert_eq(fi_readv(e.t.ep, iov, NULL, 3, e.t.self, raddr(&e, 100),
			      e.key, &ctx),
		     0);
	expect_comp(&e, &ctx, FI_RMA | FI_READ, sizeof(r));
	memcpy(r, a, sizeof(a));
	memcpy(r + 10, b, sizeof(b));
	memcpy(r + 310, c, sizeof(c));
	cr_expect_eq(memcmp(r, e.region + 100, sizeof(r)), 0);

	rma.addr = raddr(&e, 5000);
	rma.key = e.key;
	msg.msg_iov = iov;
	msg.iov_count = 3;
	msg.addr = e.t.self;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 1;
	msg.context = &ctx;
	cr_assert_eq(fi_writemsg(e.t.ep, &msg, FI_COMPLETION), 0);
	expect_comp(&e, &ctx, FI_RMA | FI_WRITE, sizeof(r));
	cr_expect_eq(memcmp(e.region + 5000, r, sizeof(r)), 0);
	memset(a, 0, sizeof(a));
	cr_assert_eq(fi_readmsg(e.t.ep, &msg, FI_COMPLETION), 0);
	expect_comp(&e, &ctx, FI_RMA | FI_READ, sizeof(r));
	cr_expect_eq(memcmp(a, r, sizeof(a)), 0);

	/* shape errors: nothing performed */
	rma.len = sizeof(r) - 1;
	cr_expect_eq(fi_writemsg(e.t.ep, &msg, 0), -FI_EINVAL, "truncation");
	rma.len = sizeof(r);
	msg.rma_iov_count = 2;
	cr_expect_eq(fi_writemsg(e.t.ep, &msg, 0), -FI_EINVAL);
	msg.rma_iov_count = 1;
	msg.iov_count = 9;
	cr_expect_eq(fi_writemsg(e.t.ep, &msg, 0), -FI_EINVAL, "iov limit");
	msg.iov_count = 3;
	cr_expect_eq(fi_writemsg(e.t.ep, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
	cr_expect_eq(fi_readmsg(e.t.ep, &msg, FI_INJECT), -FI_EINVAL);
	cr_expect_eq(fi_writemsg(e.t.ep, NULL, 0), -FI_EINVAL);
	cr_expect_eq(fi_cq_read(e.t.cq, r, 1), -FI_EAGAIN, "no completion");
	rma_close(&e);
}

Test(rma, inject_and_remote_cq_data)
{
	struct fi_cq_data_entry c;
	uint64_t v = 0x1122334455667788ULL;
	uint8_t big[GBA_INJECT_SIZE + 1];
	struct rma_env e;
	int ctx;

	rma_open(&e);
	cr_assert_eq(fi_inject_write(e.t.ep, &v, sizeof(v), e.t.self,
				     raddr(&e, 8), e.key),
		     0);
	cr_expect_eq(memcmp(e.region + 8, &v, sizeof(v)), 0);
	cr_expect_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAGAIN, "inject: no CQE");
	cr_expect_eq(fi_cntr_read(e.wcntr), 1);
	cr_expect_eq(fi_inject_write(e.t.ep, big, sizeof(big), e.t.self,
				     raddr(&e, 0), e.key),
		     -FI_EINVAL);

	/* writedata: the target endpoint (itself) gets the data */
	v = 42;
	cr_assert_eq(fi_writedata(e.t.ep, &v, sizeof(v), NULL, 0xdead, e.t.self,
				  raddr(&e, 16), e.key, &ctx),
		     0);
	cr_assert_eq(fi_cq_read(e.t.cq, &c, 1), 1);
	cr_expect_eq(c.flags, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
	cr_expect_eq(c.data, 0xdead);
	expect_comp(&e, &ctx, FI_RMA | FI_WRITE, sizeof(v));
	cr_assert_eq(fi_inject_writedata(e.t.ep, &v, sizeof(v), 0xbeef,
					 e.t.self, raddr(&e, 24), e.key),
		     0);
	cr_assert_eq(fi_cq_read(e.t.cq, &c, 1), 1);
	cr_expect_eq(c.data, 0xbeef);
	cr_expect_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAGAIN);
	rma_close(&e);
}

Test(rma, selective_completion)
{
	struct fi_msg_rma msg = {0};
	struct fi_rma_iov rma;
	struct fi_cq_data_entry c;
	struct rma_env e;
	struct iovec iov;
	uint64_t v = 5;
	int ctx;

	rma_open_flags(&e, FI_REMOTE_READ | FI_REMOTE_WRITE,
		       FI_SELECTIVE_COMPLETION);
	cr_assert_eq(fi_write(e.t.ep, &v, sizeof(v), NULL, e.t.self,
			      raddr(&e, 0), e.key, &ctx),
		     0);
	cr_expect_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAGAIN);
	cr_expect_eq(fi_cntr_read(e.wcntr), 1, "counted all the same");
	iov.iov_base = &v;
	iov.iov_len = sizeof(v);
	rma.addr = raddr(&e, 0);
	rma.len = sizeof(v);
	rma.key = e.key;
	msg.msg_iov = &iov;
	msg.iov_count = 1;
	msg.addr = e.t.self;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 1;
	msg.context = &ctx;
	cr_assert_eq(fi_writemsg(e.t.ep, &msg, FI_COMPLETION), 0);
	expect_comp(&e, &ctx, FI_RMA | FI_WRITE, sizeof(v));
	/* errors are always reported */
	rma.key = e.key + 1000;
	cr_assert_eq(fi_writemsg(e.t.ep, &msg, 0), 0);
	expect_err(&e, &ctx, FI_EKEYREJECTED);
	rma_close(&e);
}

Test(rma, target_errors_complete_in_error)
{
	struct rma_env e, ro;
	uint64_t v = 1;
	int ctx;

	rma_open(&e);
	cr_assert_eq(fi_write(e.t.ep, &v, sizeof(v), NULL, e.t.self,
			      raddr(&e, 0), e.key ^ 0x5555, &ctx),
		     0);
	expect_err(&e, &ctx, FI_EKEYREJECTED);
	cr_assert_eq(fi_write(e.t.ep, &v, sizeof(v), NULL, e.t.self,
			      raddr(&e, REGION - 4), e.key, &ctx),
		     0);
	expect_err(&e, &ctx, FI_EINVAL);
	cr_assert_eq(fi_read(e.t.ep, &v, sizeof(v), NULL, e.t.self,
			     raddr(&e, 0) - 8, e.key, &ctx),
		     0);
	expect_err(&e, &ctx, FI_EINVAL);
	cr_expect_eq(fi_cntr_readerr(e.wcntr), 2);
	cr_expect_eq(fi_cntr_readerr(e.rcntr), 1);
	cr_expect_eq(fi_cntr_read(e.wcntr), 0);

	/* a region registered for remote reads only */
	rma_open_flags(&ro, FI_REMOTE_READ, 0);
	cr_assert_eq(fi_write(ro.t.ep, &v, sizeof(v), NULL, ro.t.self,
			      raddr(&ro, 0), ro.key, &ctx),
		     0);
	expect_err(&ro, &ctx, FI_EACCES);
	cr_assert_eq(fi_read(ro.t.ep, &v, sizeof(v), NULL, ro.t.self,
			     raddr(&ro, 0), ro.key, &ctx),
		     0);
	expect_comp(&ro, &ctx, FI_RMA | FI_READ, sizeof(v));
	rma_close(&ro);
	rma_close(&e);
}

Test(rma, destinations)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct gba_addr other = prov_absent_addr();
	struct fid_ep *bare;
	struct fid_av *av;
	struct rma_env e, peer;
	fi_addr_t a, p;
	uint64_t v = 77;
	int ctx;

	rma_open(&e);
	rma_open(&peer);
	/* another endpoint of this process: reached directly */
	p = insert_name(e.t.av, peer.t.ep);
	cr_assert_eq(fi_write(e.t.ep, &v, sizeof(v), NULL, p, raddr(&peer, 64),
			      peer.key, &ctx),
		     0);
	expect_comp(&e, &ctx, FI_RMA | FI_WRITE, sizeof(v));
	cr_expect_eq(memcmp(peer.region + 64, &v, sizeof(v)), 0);
	/* another process: not in this release */
	cr_assert_eq(fi_av_insert(e.t.av, &other, 1, &a, 0, NULL), 1);
	cr_expect_eq(fi_write(e.t.ep, &v, sizeof(v), NULL, a, 0, e.key, &ctx),
		     -FI_EHOSTUNREACH);
	cr_expect_eq(
		fi_read(e.t.ep, &v, sizeof(v), NULL, 12345, 0, e.key, &ctx),
		-FI_EINVAL, "not in the AV");
	/* not enabled */
	cr_assert_eq(fi_endpoint(t_domain, t_info, &bare, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &av, NULL), 0);
	cr_assert_eq(fi_ep_bind(bare, &av->fid, 0), 0);
	cr_expect_eq(fi_write(bare, &v, sizeof(v), NULL, 0, 0, e.key, &ctx),
		     -FI_EOPBADSTATE);
	cr_expect_eq(fi_close(&bare->fid), 0);
	cr_expect_eq(fi_close(&av->fid), 0);
	cr_expect_eq(fi_cq_read(e.t.cq, &v, 1), -FI_EAGAIN);
	rma_close(&peer);
	rma_close(&e);
}

Test(rma, triggered_write_fires_at_threshold)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_triggered_context tctx = {0}, tctx2;
	struct fi_msg_rma msg = {0};
	struct fi_rma_iov rma;
	struct iovec iov;
	struct fid_cntr *trig;
	struct rma_env e;
	uint8_t src[64], inj[16];
	struct fi_cq_data_entry c;

	rma_open(&e);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &trig, NULL), 0);
	fill(src, sizeof(src), 9);
	iov.iov_base = src;
	iov.iov_len = sizeof(src);
	rma.addr = raddr(&e, 1024);
	rma.len = sizeof(src);
	rma.key = e.key;
	msg.msg_iov = &iov;
	msg.iov_count = 1;
	msg.addr = e.t.self;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 1;
	msg.context = &tctx;
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = trig;
	tctx.trigger.threshold.threshold = 3;
	cr_assert_eq(fi_writemsg(e.t.ep, &msg, FI_TRIGGER | FI_COMPLETION), 0);
	/* a triggered inject: the payload is copied at post time */
	memset(inj, 0xab, sizeof(inj));
	iov.iov_base = inj;
	iov.iov_len = sizeof(inj);
	rma.addr = raddr(&e, 2048);
	rma.len = sizeof(inj);
	tctx2 = tctx;
	tctx2.trigger.threshold.threshold = 4;
	msg.context = &tctx2;
	cr_assert_eq(fi_writemsg(e.t.ep, &msg, FI_TRIGGER | FI_INJECT), 0);
	memset(inj, 0, sizeof(inj));

	cr_assert_eq(fi_cntr_add(trig, 2), 0);
	cr_expect_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAGAIN);
	cr_expect_neq(memcmp(e.region + 1024, src, sizeof(src)), 0,
		      "written before the threshold");
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	cr_expect_eq(memcmp(e.region + 1024, src, sizeof(src)), 0);
	expect_comp(&e, &tctx, FI_RMA | FI_WRITE, sizeof(src));
	cr_expect_eq(e.region[2048], 0, "inject fired early");
	cr_assert_eq(fi_cntr_set(trig, 10), 0);
	cr_expect_eq(e.region[2048], 0xab, "inject payload copied");
	expect_comp(&e, &tctx2, FI_RMA | FI_WRITE, sizeof(inj));

	/* a triggered write whose target is bad completes in error */
	rma.key = e.key + 99;
	tctx.trigger.threshold.threshold = 11;
	msg.context = &tctx;
	cr_assert_eq(fi_writemsg(e.t.ep, &msg, FI_TRIGGER), 0);
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	expect_err(&e, &tctx, FI_EKEYREJECTED);
	cr_expect_eq(fi_close(&trig->fid), 0);
	rma_close(&e);
}

Test(rma, argument_errors_perform_nothing)
{
	struct fi_msg_rma msg = {0};
	struct fi_rma_iov rma;
	struct iovec iov[GBA_IOV_LIMIT + 1];
	struct fi_cq_data_entry c;
	struct rma_env e;
	uint8_t src[32];
	size_t i;
	int ctx;

	rma_open(&e);
	fill(src, sizeof(src), 4);
	for (i = 0; i < GBA_IOV_LIMIT + 1; i++) {
		iov[i].iov_base = src;
		iov[i].iov_len = 1;
	}
	/* the vector verbs */
	cr_expect_eq(fi_writev(e.t.ep, NULL, NULL, 2, e.t.self, raddr(&e, 0),
			       e.key, &ctx),
		     -FI_EINVAL, "NULL iov with a count");
	cr_expect_eq(fi_readv(e.t.ep, iov, NULL, GBA_IOV_LIMIT + 1, e.t.self,
			      raddr(&e, 0), e.key, &ctx),
		     -FI_EINVAL, "iov_limit + 1");
	iov[1].iov_base = NULL;
	cr_expect_eq(fi_writev(e.t.ep, iov, NULL, 2, e.t.self, raddr(&e, 0),
			       e.key, &ctx),
		     -FI_EINVAL, "NULL buffer with a length");
	iov[1].iov_base = src;
	iov[0].iov_len = 10;
	iov[1].iov_len = SIZE_MAX; /* 10 + SIZE_MAX wraps to 9 */
	cr_expect_eq(fi_writev(e.t.ep, iov, NULL, 2, e.t.self, raddr(&e, 0),
			       e.key, &ctx),
		     -FI_EINVAL, "iov lengths whose sum wraps around");
	iov[0].iov_len = iov[1].iov_len = 1;
	cr_expect_eq(fi_inject_writedata(e.t.ep, src, GBA_INJECT_SIZE + 1, 1,
					 e.t.self, raddr(&e, 0), e.key),
		     -FI_EINVAL);

	/* the msg verbs: the shape is checked before anything reads it */
	rma.addr = raddr(&e, 0);
	rma.len = 3;
	rma.key = e.key;
	msg.msg_iov = NULL;
	msg.iov_count = 3;
	msg.addr = e.t.self;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 1;
	msg.context = &ctx;
	cr_expect_eq(fi_writemsg(e.t.ep, &msg, FI_INJECT), -FI_EINVAL,
		     "FI_INJECT with a NULL msg_iov");
	cr_expect_eq(fi_writemsg(e.t.ep, &msg, 0), -FI_EINVAL);
	cr_expect_eq(fi_readmsg(e.t.ep, &msg, 0), -FI_EINVAL);
	msg.msg_iov = iov;
	msg.iov_count = GBA_IOV_LIMIT + 1;
	rma.len = GBA_IOV_LIMIT + 1;
	cr_expect_eq(fi_writemsg(e.t.ep, &msg, FI_INJECT), -FI_EINVAL,
		     "FI_INJECT beyond iov_limit");
	msg.iov_count = 3;
	rma.len = 3;
	msg.rma_iov = NULL;
	cr_expect_eq(fi_writemsg(e.t.ep, &msg, 0), -FI_EINVAL, "NULL rma_iov");
	msg.rma_iov = &rma;
	msg.rma_iov_count = 0;
	cr_expect_eq(fi_readmsg(e.t.ep, &msg, 0), -FI_EINVAL, "no rma_iov");
	msg.rma_iov_count = 1;
	cr_expect_eq(fi_readmsg(e.t.ep, &msg, FI_REMOTE_CQ_DATA), -FI_EINVAL);
	cr_expect_eq(fi_writemsg(e.t.ep, &msg, GBA_FLAG_NO_CQ), -FI_EBADFLAGS,
		     "provider-private flag from the user");
	/* an endpoint fid that is not the provider's (its fi_ops differ) */
	{
		static struct fi_ops other_ops = {.size = sizeof(other_ops)};
		struct fid_ep fake = *e.t.ep;

		fake.fid.ops = &other_ops;
		cr_expect_eq(fi_write(&fake, src, 1, NULL, e.t.self,
				      raddr(&e, 0), e.key, &ctx),
			     -FI_EINVAL, "not a gba endpoint");
	}

	for (i = 0; i < 64; i++)
		cr_assert_eq(e.region[i], 0, "byte %zu written", i);
	cr_expect_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAGAIN, "no completion");
	cr_expect_eq(fi_cntr_read(e.wcntr), 0);
	cr_expect_eq(fi_cntr_read(e.rcntr), 0);
	cr_expect_eq(fi_cntr_readerr(e.wcntr), 0);
	cr_expect_eq(fi_cntr_readerr(e.rcntr), 0);
	rma_close(&e);
}

Test(rma, full_cq_returns_eagain)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA, .size = 2};
	struct fi_cq_data_entry c[2];
	struct fid_cntr *wcntr;
	struct fid_mr *mr;
	struct tep t = {0};
	uint8_t region[64] = {0};
	uint64_t v = 0x0102030405060708ULL, key;
	int ctx;

	cr_assert_eq(fi_endpoint(t_domain, t_info, &t.ep, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &t.av, NULL), 0);
	cr_assert_eq(fi_cq_open(t_domain, &cq_attr, &t.cq, NULL), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &wcntr, NULL), 0);
	cr_assert_eq(fi_ep_bind(t.ep, &t.av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(t.ep, &t.cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_ep_bind(t.ep, &wcntr->fid, FI_WRITE), 0);
	cr_assert_eq(fi_enable(t.ep), 0);
	t.self = insert_name(t.av, t.ep);
	cr_assert_eq(fi_mr_reg(t_domain, region, sizeof(region),
			       FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
			       NULL),
		     0);
	key = fi_mr_key(mr);

	cr_assert_eq(fi_write(t.ep, &v, 8, NULL, t.self,
			      (uint64_t)(uintptr_t)region, key, &ctx),
		     0);
	cr_assert_eq(fi_write(t.ep, &v, 8, NULL, t.self,
			      (uint64_t)(uintptr_t)(region + 8), key, &ctx),
		     0);
	cr_expect_eq(fi_write(t.ep, &v, 8, NULL, t.self,
			      (uint64_t)(uintptr_t)(region + 16), key, &ctx),
		     -FI_EAGAIN, "CQ full");
	cr_expect_eq(region[16], 0, "written although refused");
	cr_expect_eq(fi_cntr_read(wcntr), 2);
	/* an inject needs no CQ entry: it proceeds */
	cr_expect_eq(fi_inject_write(t.ep, &v, 8, t.self,
				     (uint64_t)(uintptr_t)(region + 24), key),
		     0);
	cr_expect_eq(memcmp(region + 24, &v, 8), 0);
	cr_expect_eq(fi_cntr_read(wcntr), 3);
	cr_assert_eq(fi_cq_read(t.cq, c, 2), 2);
	cr_expect_eq(fi_write(t.ep, &v, 8, NULL, t.self,
			      (uint64_t)(uintptr_t)(region + 16), key, &ctx),
		     0, "room again");
	cr_expect_eq(memcmp(region + 16, &v, 8), 0);
	cr_assert_eq(fi_cq_read(t.cq, c, 2), 1);
	cr_expect_eq(fi_cq_read(t.cq, c, 1), -FI_EAGAIN);

	cr_expect_eq(fi_close(&t.ep->fid), 0);
	cr_expect_eq(fi_close(&mr->fid), 0);
	cr_expect_eq(fi_close(&wcntr->fid), 0);
	cr_expect_eq(fi_close(&t.cq->fid), 0);
	cr_expect_eq(fi_close(&t.av->fid), 0);
}

/* Post a triggered read of @len bytes at @off into @buf; arrays on the
 * stack of this function are gone when it fires. */
static ssize_t post_triggered_read(struct rma_env *e, void *buf, size_t len,
				   size_t off, fi_addr_t dest,
				   struct fi_triggered_context *tctx)
{
	struct iovec iov[2] = {{buf, len / 2},
			       {(uint8_t *)buf + len / 2, len - len / 2}};
	struct fi_rma_iov rma = {raddr(e, off), len, e->key};
	struct fi_msg_rma msg = {
		.msg_iov = iov,
		.iov_count = 2,
		.addr = dest,
		.rma_iov = &rma,
		.rma_iov_count = 1,
		.context = tctx,
	};
	ssize_t ret;

	ret = fi_readmsg(e->t.ep, &msg, FI_TRIGGER | FI_COMPLETION);
	memset(iov, 0, sizeof(iov));
	memset(&rma, 0xff, sizeof(rma));
	return ret;
}

Test(rma, triggered_read_and_post_time_errors)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct gba_addr other = prov_absent_addr();
	struct fi_triggered_context tctx = {0};
	struct fi_cq_data_entry c;
	struct fid_cntr *trig;
	struct fid_ep *bare;
	struct fid_av *av;
	struct rma_env e;
	uint8_t dst[100] = {0};
	fi_addr_t far;

	rma_open(&e);
	fill(e.region + 300, sizeof(dst), 6);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &trig, NULL), 0);
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = trig;
	tctx.trigger.threshold.threshold = 5;
	cr_assert_eq(
		post_triggered_read(&e, dst, sizeof(dst), 300, e.t.self, &tctx),
		0);
	cr_assert_eq(fi_cntr_set(trig, 4), 0);
	cr_expect_eq(dst[0], 0, "read before the threshold");
	cr_expect_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAGAIN);
	cr_expect_eq(fi_cntr_read(e.rcntr), 0);
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	cr_expect_eq(memcmp(dst, e.region + 300, sizeof(dst)), 0);
	expect_comp(&e, &tctx, FI_RMA | FI_READ, sizeof(dst));
	cr_expect_eq(fi_cntr_read(e.rcntr), 1);
	/* a threshold already reached: runs at once */
	memset(dst, 0, sizeof(dst));
	cr_assert_eq(
		post_triggered_read(&e, dst, sizeof(dst), 300, e.t.self, &tctx),
		0);
	cr_expect_eq(memcmp(dst, e.region + 300, sizeof(dst)), 0);
	expect_comp(&e, &tctx, FI_RMA | FI_READ, sizeof(dst));

	/* refused when posted, as the immediate verb would be */
	tctx.trigger.threshold.threshold = 100;
	cr_assert_eq(fi_av_insert(e.t.av, &other, 1, &far, 0, NULL), 1);
	cr_expect_eq(post_triggered_read(&e, dst, sizeof(dst), 300, far, &tctx),
		     -FI_EHOSTUNREACH);
	cr_expect_eq(
		post_triggered_read(&e, dst, sizeof(dst), 300, 4242, &tctx),
		-FI_EINVAL, "not in the AV");
	cr_assert_eq(fi_endpoint(t_domain, t_info, &bare, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &av, NULL), 0);
	cr_assert_eq(fi_ep_bind(bare, &av->fid, 0), 0);
	{
		struct iovec iov = {dst, 8};
		struct fi_rma_iov rma = {raddr(&e, 0), 8, e.key};
		struct fi_msg_rma msg = {.msg_iov = &iov,
					 .iov_count = 1,
					 .addr = 0,
					 .rma_iov = &rma,
					 .rma_iov_count = 1,
					 .context = &tctx};

		cr_expect_eq(fi_writemsg(bare, &msg, FI_TRIGGER),
			     -FI_EOPBADSTATE, "endpoint not enabled");
		msg.context = NULL;
		cr_expect_eq(fi_writemsg(e.t.ep, &msg, FI_TRIGGER), -FI_EINVAL,
			     "FI_TRIGGER without a triggered context");
	}
	cr_expect_eq(fi_close(&bare->fid), 0);
	cr_expect_eq(fi_close(&av->fid), 0);
	/* nothing of the refused ones fires later */
	cr_assert_eq(fi_cntr_set(trig, 1000), 0);
	cr_expect_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAGAIN);
	cr_expect_eq(fi_cntr_read(e.rcntr), 2);
	cr_expect_eq(fi_cntr_readerr(e.rcntr), 0);
	cr_expect_eq(fi_cntr_readerr(e.wcntr), 0);
	cr_expect_eq(fi_close(&trig->fid), 0);
	rma_close(&e);
}

Test(rma, triggered_destination_removed_before_firing)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_triggered_context tctx = {0};
	struct fi_cq_data_entry c;
	struct fi_cq_err_entry ee;
	struct fid_cntr *trig;
	struct rma_env e, peer;
	uint8_t dst[16] = {0};
	fi_addr_t p;

	rma_open(&e);
	rma_open(&peer);
	p = insert_name(e.t.av, peer.t.ep);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &trig, NULL), 0);
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = trig;
	tctx.trigger.threshold.threshold = 1;
	cr_assert_eq(post_triggered_read(&e, dst, sizeof(dst), 0, p, &tctx), 0);
	cr_assert_eq(fi_av_remove(e.t.av, &p, 1, 0), 0);
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	/* it cannot start: an error completion, nothing read */
	cr_assert_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAVAIL);
	memset(&ee, 0, sizeof(ee));
	cr_assert_eq(fi_cq_readerr(e.t.cq, &ee, 0), 1);
	cr_expect_eq(ee.op_context, &tctx);
	cr_expect_eq(ee.flags, FI_RMA | FI_READ, "flags 0x%llx",
		     (unsigned long long)ee.flags);
	cr_expect_eq(ee.err, FI_EINVAL, "err %d", ee.err);
	cr_expect_eq(fi_cntr_readerr(e.rcntr), 1);
	cr_expect_eq(fi_cntr_read(e.rcntr), 0);
	cr_expect_eq(fi_close(&trig->fid), 0);
	rma_close(&peer);
	rma_close(&e);
}

Test(rma, zero_length_entries)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_triggered_context tctx = {0};
	struct fi_msg_rma msg = {0};
	struct fi_rma_iov rma;
	struct fid_cntr *trig;
	struct rma_env e;
	uint8_t src[8];
	struct iovec iov[3] = {{src, 4}, {NULL, 0}, {src + 4, 4}};
	int ctx;

	rma_open(&e);
	fill(src, sizeof(src), 8);
	/* zero-length operations complete like any other */
	cr_assert_eq(fi_write(e.t.ep, NULL, 0, NULL, e.t.self, raddr(&e, 0),
			      e.key, &ctx),
		     0);
	expect_comp(&e, &ctx, FI_RMA | FI_WRITE, 0);
	cr_assert_eq(fi_read(e.t.ep, NULL, 0, NULL, e.t.self, raddr(&e, 0),
			     e.key, &ctx),
		     0);
	expect_comp(&e, &ctx, FI_RMA | FI_READ, 0);
	/* an empty entry with no buffer between two others */
	cr_assert_eq(fi_writev(e.t.ep, iov, NULL, 3, e.t.self, raddr(&e, 32),
			       e.key, &ctx),
		     0);
	expect_comp(&e, &ctx, FI_RMA | FI_WRITE, sizeof(src));
	cr_expect_eq(memcmp(e.region + 32, src, sizeof(src)), 0);

	/* triggered: an FI_INJECT copy skipping the empty entry, and an
	 * operation with no local iov at all */
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &trig, NULL), 0);
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = trig;
	tctx.trigger.threshold.threshold = 1;
	rma.addr = raddr(&e, 64);
	rma.len = sizeof(src);
	rma.key = e.key;
	msg.msg_iov = iov;
	msg.iov_count = 3;
	msg.addr = e.t.self;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 1;
	msg.context = &tctx;
	cr_assert_eq(fi_writemsg(e.t.ep, &msg, FI_TRIGGER | FI_INJECT), 0);
	memset(src, 0, sizeof(src));
	msg.msg_iov = NULL;
	msg.iov_count = 0;
	rma.len = 0;
	cr_assert_eq(fi_writemsg(e.t.ep, &msg, FI_TRIGGER), 0);
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	cr_expect_eq(memcmp(e.region + 64, e.region + 32, 8), 0,
		     "inject payload");
	expect_comp(&e, &tctx, FI_RMA | FI_WRITE, 8);
	expect_comp(&e, &tctx, FI_RMA | FI_WRITE, 0);
	cr_expect_eq(fi_cntr_read(e.wcntr), 4);
	cr_expect_eq(fi_close(&trig->fid), 0);
	rma_close(&e);
}

/*
 * fi_mr_bind: a counter bound to a region counts the remote writes and
 * atomics (FI_REMOTE_WRITE) and reads (FI_REMOTE_READ) that access it; a
 * region registered with FI_RMA_EVENT takes no access before
 * fi_mr_enable.
 */
Test(rma, region_counters)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fid_cntr *wc, *rc;
	struct fid_mr *mr;
	struct rma_env e;
	uint64_t v = 5, key;
	int ctx;

	rma_open(&e);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &wc, NULL), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &rc, NULL), 0);
	cr_assert_eq(fi_mr_reg(t_domain, e.region + 4096, 4096,
			       FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0,
			       FI_RMA_EVENT, &mr, NULL),
		     0);
	key = fi_mr_key(mr);
	/* bind errors */
	cr_expect_eq(fi_mr_bind(mr, NULL, FI_REMOTE_WRITE), -FI_EINVAL);
	cr_expect_eq(fi_mr_bind(mr, &e.t.cq->fid, FI_REMOTE_WRITE),
		     -FI_EINVAL, "a CQ");
	cr_expect_eq(fi_mr_bind(mr, &wc->fid, 0), -FI_EBADFLAGS);
	cr_expect_eq(fi_mr_bind(mr, &wc->fid, FI_SEND), -FI_EBADFLAGS);
	cr_assert_eq(fi_mr_bind(mr, &wc->fid, FI_REMOTE_WRITE), 0);
	cr_expect_eq(fi_mr_bind(mr, &rc->fid, FI_REMOTE_READ), -FI_EINVAL,
		     "one counter per region");
	cr_expect_eq(fi_close(&wc->fid), -FI_EBUSY, "bound to a region");
	/* FI_RMA_EVENT: no access before fi_mr_enable */
	cr_assert_eq(fi_write(e.t.ep, &v, sizeof(v), NULL, e.t.self,
			      raddr(&e, 4096), key, &ctx),
		     0);
	expect_err(&e, &ctx, FI_EKEYREJECTED);
	cr_assert_eq(fi_mr_enable(mr), 0);
	/* writes and atomics count; reads do not (FI_REMOTE_WRITE only) */
	cr_assert_eq(fi_write(e.t.ep, &v, sizeof(v), NULL, e.t.self,
			      raddr(&e, 4096), key, &ctx),
		     0);
	expect_comp(&e, &ctx, FI_RMA | FI_WRITE, sizeof(v));
	cr_expect_eq(fi_cntr_read(wc), 1);
	cr_assert_eq(fi_atomic(e.t.ep, &v, 1, NULL, e.t.self,
			       raddr(&e, 4096 + 8), key, FI_UINT64, FI_SUM,
			       &ctx),
		     0);
	expect_comp(&e, &ctx, FI_ATOMIC | FI_WRITE, 0);
	cr_expect_eq(fi_cntr_read(wc), 2);
	cr_assert_eq(fi_read(e.t.ep, &v, sizeof(v), NULL, e.t.self,
			     raddr(&e, 4096), key, &ctx),
		     0);
	expect_comp(&e, &ctx, FI_RMA | FI_READ, sizeof(v));
	cr_expect_eq(fi_cntr_read(wc), 2, "a read is not FI_REMOTE_WRITE");
	/* accesses of another region do not count */
	cr_assert_eq(fi_write(e.t.ep, &v, sizeof(v), NULL, e.t.self,
			      raddr(&e, 0), e.key, &ctx),
		     0);
	expect_comp(&e, &ctx, FI_RMA | FI_WRITE, sizeof(v));
	cr_expect_eq(fi_cntr_read(wc), 2);
	cr_expect_eq(fi_cntr_read(rc), 0);
	cr_expect_eq(fi_close(&mr->fid), 0);
	cr_expect_eq(fi_close(&wc->fid), 0, "released by the region");
	cr_expect_eq(fi_close(&rc->fid), 0);
	rma_close(&e);
}
