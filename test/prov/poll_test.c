/*
 * Poll sets through the stock libfabric (fi_poll(3)): argument errors,
 * CQs reported while not empty, counters reported once per change (and
 * not for fi_cntr_set/add), the count limit and its fairness, and that
 * members cannot close while in a set.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "ep_common.h"

TestSuite(poll, .init = prov_setup, .fini = prov_teardown, .timeout = 60);

/* An endpoint with separate tx/rx CQs and counters, each with its own
 * context (as fabtests' fi_poll opens them), sending to itself. */
struct pep {
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_cq *txcq, *rxcq;
	struct fid_cntr *txcntr, *rxcntr;
	struct fid_poll *ps;
	fi_addr_t self;
	char buf[64];
};

static void pep_open(struct pep *p)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT};
	struct fi_cntr_attr cntr_attr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_poll_attr poll_attr = {0};

	memset(p, 0, sizeof(*p));
	cr_assert_eq(fi_endpoint(t_domain, t_info, &p->ep, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &p->av, NULL), 0);
	cr_assert_eq(fi_cq_open(t_domain, &cq_attr, &p->txcq, &p->txcq), 0);
	cr_assert_eq(fi_cq_open(t_domain, &cq_attr, &p->rxcq, &p->rxcq), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cntr_attr, &p->txcntr,
				  &p->txcntr), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cntr_attr, &p->rxcntr,
				  &p->rxcntr), 0);
	cr_assert_eq(fi_ep_bind(p->ep, &p->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(p->ep, &p->txcq->fid, FI_TRANSMIT), 0);
	cr_assert_eq(fi_ep_bind(p->ep, &p->rxcq->fid, FI_RECV), 0);
	cr_assert_eq(fi_ep_bind(p->ep, &p->txcntr->fid, FI_SEND), 0);
	cr_assert_eq(fi_ep_bind(p->ep, &p->rxcntr->fid, FI_RECV), 0);
	cr_assert_eq(fi_enable(p->ep), 0);
	p->self = insert_name(p->av, p->ep);
	cr_assert_eq(fi_poll_open(t_domain, &poll_attr, &p->ps), 0);
}

static void pep_close(struct pep *p)
{
	if (p->ps)
		cr_expect_eq(fi_close(&p->ps->fid), 0);
	cr_expect_eq(fi_close(&p->ep->fid), 0);
	cr_expect_eq(fi_close(&p->txcq->fid), 0);
	cr_expect_eq(fi_close(&p->rxcq->fid), 0);
	cr_expect_eq(fi_close(&p->txcntr->fid), 0);
	cr_expect_eq(fi_close(&p->rxcntr->fid), 0);
	cr_expect_eq(fi_close(&p->av->fid), 0);
}

/* One message to self: a receive posted, then the send. */
static void pep_send(struct pep *p)
{
	cr_assert_eq(fi_recv(p->ep, p->buf, sizeof(p->buf), NULL, p->self,
			     NULL), 0);
	cr_assert_eq(fi_send(p->ep, "ping", 5, NULL, p->self, NULL), 0);
}

/* fi_poll until it reports something (or 100000 tries); the count. */
static int poll_some(struct fid_poll *ps, void **ctx, int count)
{
	int i, n = 0;

	for (i = 0; i < 100000 && !n; i++)
		n = fi_poll(ps, ctx, count);
	return n;
}

/* Is @c among the @n contexts @ctx? */
static bool has(void **ctx, int n, void *c)
{
	while (n--)
		if (ctx[n] == c)
			return true;
	return false;
}

Test(poll, arguments)
{
	struct fi_poll_attr attr = {.flags = 1};
	struct fi_eq_attr eq_attr = {.size = 8};
	struct fid_poll *ps;
	struct fid_eq *eq;
	struct pep p;
	void *ctx[2];

	cr_expect_eq(fi_poll_open(t_domain, NULL, NULL), -FI_EINVAL);
	cr_expect_eq(fi_poll_open(t_domain, &attr, &ps), -FI_EINVAL);
	cr_assert_eq(fi_poll_open(t_domain, NULL, &ps), 0, "NULL attr");
	cr_expect_eq(fi_close(&ps->fid), 0);

	pep_open(&p);
	cr_assert_eq(fi_eq_open(t_fabric, &eq_attr, &eq, NULL), 0);
	cr_expect_eq(fi_poll_add(p.ps, NULL, 0), -FI_EINVAL);
	cr_expect_eq(fi_poll_add(p.ps, &p.txcq->fid, 1), -FI_EINVAL);
	cr_expect_eq(fi_poll_add(p.ps, &eq->fid, 0), -FI_EINVAL, "an EQ");
	cr_expect_eq(fi_poll_add(p.ps, &p.ep->fid, 0), -FI_EINVAL, "an ep");
	cr_expect_eq(fi_poll_del(p.ps, &p.txcq->fid, 0), -FI_ENOENT);
	cr_expect_eq(fi_poll_del(p.ps, NULL, 0), -FI_EINVAL);
	cr_expect_eq(fi_poll(p.ps, ctx, -1), -FI_EINVAL);
	cr_expect_eq(fi_poll(p.ps, NULL, 2), -FI_EINVAL);
	cr_expect_eq(fi_poll(p.ps, NULL, 0), 0);
	cr_expect_eq(fi_poll(p.ps, ctx, 2), 0, "empty set");
	cr_expect_eq(fi_poll_add(p.ps, &p.txcq->fid, 0), 0);
	cr_expect_eq(fi_poll_add(p.ps, &p.txcq->fid, 0), 0, "again");
	cr_expect_eq(fi_poll_del(p.ps, &p.txcq->fid, 0), 0);
	cr_expect_eq(fi_poll_del(p.ps, &p.txcq->fid, 0), -FI_ENOENT,
		     "added twice, one member");
	cr_expect_eq(fi_close(&eq->fid), 0);
	pep_close(&p);
}

Test(poll, queues)
{
	struct fi_cq_entry e;
	struct pep p;
	void *ctx[4];
	int n;

	pep_open(&p);
	cr_assert_eq(fi_poll_add(p.ps, &p.txcq->fid, 0), 0);
	cr_assert_eq(fi_poll_add(p.ps, &p.rxcq->fid, 0), 0);
	cr_expect_eq(fi_poll(p.ps, ctx, 4), 0, "nothing sent");
	pep_send(&p);
	n = poll_some(p.ps, ctx, 4);
	cr_assert_gt(n, 0);
	/* both complete; the second may need another poll */
	if (n == 1)
		n += poll_some(p.ps, ctx + 1, 3);
	cr_expect(has(ctx, n, &p.txcq) && has(ctx, n, &p.rxcq));
	/* a CQ is reported for as long as it is not empty */
	cr_expect_eq(fi_poll(p.ps, ctx, 4), 2);
	cr_expect_eq(fi_cq_read(p.txcq, &e, 1), 1);
	cr_expect_eq(fi_cq_read(p.rxcq, &e, 1), 1);
	cr_expect_eq(fi_poll(p.ps, ctx, 4), 0, "read: empty again");
	cr_expect_str_eq(p.buf, "ping");
	pep_close(&p);
}

Test(poll, counters)
{
	struct pep p;
	void *ctx[4];
	int n;

	pep_open(&p);
	cr_assert_eq(fi_poll_add(p.ps, &p.txcntr->fid, 0), 0);
	cr_assert_eq(fi_poll_add(p.ps, &p.rxcntr->fid, 0), 0);
	cr_expect_eq(fi_poll(p.ps, ctx, 4), 0);
	pep_send(&p);
	n = poll_some(p.ps, ctx, 4);
	if (n == 1)
		n += poll_some(p.ps, ctx + 1, 3);
	cr_expect_eq(n, 2);
	cr_expect(has(ctx, n, &p.txcntr) && has(ctx, n, &p.rxcntr));
	cr_expect_eq(fi_cntr_read(p.txcntr), 1);
	/* reported once per change */
	cr_expect_eq(fi_poll(p.ps, ctx, 4), 0, "no change since");
	/* the user's own changes move the checkpoint */
	cr_expect_eq(fi_cntr_add(p.txcntr, 5), 0);
	cr_expect_eq(fi_cntr_set(p.rxcntr, 9), 0);
	cr_expect_eq(fi_cntr_adderr(p.txcntr, 1), 0);
	cr_expect_eq(fi_cntr_seterr(p.rxcntr, 2), 0);
	cr_expect_eq(fi_poll(p.ps, ctx, 4), 0, "set/add are not events");
	/* an event after them is */
	pep_send(&p);
	n = poll_some(p.ps, ctx, 4);
	if (n == 1)
		n += poll_some(p.ps, ctx + 1, 3);
	cr_expect_eq(n, 2);
	cr_expect_eq(fi_cntr_read(p.txcntr), 7);
	cr_expect_eq(fi_cntr_read(p.rxcntr), 10);
	pep_close(&p);
}

Test(poll, count_limit_is_fair)
{
	struct fi_cq_entry e[2];
	struct pep p;
	void *ctx[2];
	int i, n;

	pep_open(&p);
	cr_assert_eq(fi_poll_add(p.ps, &p.txcq->fid, 0), 0);
	cr_assert_eq(fi_poll_add(p.ps, &p.rxcq->fid, 0), 0);
	pep_send(&p);
	for (i = 0; i < 100000 && fi_poll(p.ps, ctx, 2) < 2; i++)
		;
	/* two ready members, room for one: each call reports the other */
	cr_assert_eq(fi_poll(p.ps, ctx, 1), 1);
	cr_assert_eq(fi_poll(p.ps, ctx + 1, 1), 1);
	cr_expect_neq(ctx[0], ctx[1]);
	cr_expect(has(ctx, 2, &p.txcq) && has(ctx, 2, &p.rxcq));
	n = (int)fi_cq_read(p.txcq, e, 2) + (int)fi_cq_read(p.rxcq, e, 2);
	cr_expect_eq(n, 2);
	pep_close(&p);
}

Test(poll, members_cannot_close)
{
	struct pep p;

	pep_open(&p);
	cr_assert_eq(fi_poll_add(p.ps, &p.rxcq->fid, 0), 0);
	cr_assert_eq(fi_poll_add(p.ps, &p.rxcntr->fid, 0), 0);
	cr_expect_eq(fi_close(&p.rxcq->fid), -FI_EBUSY);
	cr_expect_eq(fi_close(&p.rxcntr->fid), -FI_EBUSY);
	cr_expect_eq(fi_poll_del(p.ps, &p.rxcq->fid, 0), 0);
	/* closing the set releases the members it still holds */
	cr_expect_eq(fi_close(&p.ps->fid), 0);
	p.ps = NULL;
	pep_close(&p);
}
