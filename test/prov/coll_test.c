/*
 * Collectives of the gba provider through the stock libfabric:
 * fi_query_collective, fi_join_collective (arguments, limits: 32 groups,
 * 708 members), fi_barrier / fi_barrier2 between two endpoints of one
 * process (nobody is released before everybody arrived), queued
 * barriers, triggered barriers and chains of them, fi_cancel, closing a
 * busy collective, FI_GBA_BARRIER_TIMEOUT, and a member process that dies.
 *
 * Each test uses a private emulated device image (coll_setup).  The
 * test with a forked member process is in coll_mp_test.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "ep_common.h"

TestSuite(coll, .init = coll_setup, .fini = coll_teardown, .timeout = 60);

Test(coll, query)
{
	struct fi_collective_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.op = FI_NOOP;
	cr_expect_eq(fi_query_collective(t_domain, FI_BARRIER, &attr, 0), 0);
	cr_expect_eq(attr.max_members, GBA_AV_MAX_SIZE,
		     "beyond 708 members the barrier runs in software");
	attr.op = FI_SUM;
	attr.datatype = FI_DOUBLE;
	cr_expect_eq(fi_query_collective(t_domain, FI_ALLREDUCE, &attr, 0), 0);
	cr_expect_eq(attr.datatype_attr.size, sizeof(double));
	attr.op = FI_BXOR;
	cr_expect_eq(fi_query_collective(t_domain, FI_ALLREDUCE, &attr, 0),
		     -FI_EOPNOTSUPP, "no bitwise operations on doubles");
	attr.op = FI_NOOP;
	attr.datatype = FI_UINT8;
	cr_expect_eq(fi_query_collective(t_domain, FI_ALLTOALL, &attr, 0), 0);
	cr_expect_eq(fi_query_collective(t_domain, FI_ALLREDUCE, &attr, 0),
		     -FI_EOPNOTSUPP, "a reduction needs an operation");
	attr.op = FI_NOOP;
	cr_expect_eq(fi_query_collective(t_domain, FI_BARRIER, NULL, 0),
		     -FI_EINVAL);
	attr.op = FI_SUM;
	cr_expect_eq(fi_query_collective(t_domain, FI_BARRIER, &attr, 0),
		     -FI_EOPNOTSUPP);
}

Test(coll, join_arguments)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fid_av_set *set, *other_set;
	struct fi_collective_addr caddr;
	struct fid_ep *bare;
	struct fid_av *av2;
	struct fid_mc *mc;
	struct tep a, b;
	fi_addr_t self, peer;

	tep_open(&a, NULL);
	tep_open(&b, NULL);
	self = insert_name(a.av, a.ep);
	peer = insert_name(a.av, b.ep);
	set = make_set(a.av, &self, 1);

	cr_expect_eq(
		fi_join_collective(a.ep, FI_ADDR_NOTAVAIL, set, 0, NULL, NULL),
		-FI_EINVAL);
	cr_expect_eq(fi_join_collective(a.ep, FI_ADDR_NOTAVAIL, set, FI_SEND,
					&mc, NULL),
		     -FI_EBADFLAGS);
	caddr.set = set;
	caddr.coll_addr = FI_ADDR_NOTAVAIL;
	cr_expect_eq(fi_join(a.ep, &caddr, 0, &mc, NULL), -FI_ENOSYS,
		     "multicast join");
	/* the endpoint must be a member */
	other_set = make_set(a.av, &peer, 1);
	cr_expect_eq(fi_join_collective(a.ep, FI_ADDR_NOTAVAIL, other_set, 0,
					&mc, NULL),
		     -FI_EINVAL);
	/* the set must be on the endpoint's AV */
	cr_expect_eq(
		fi_join_collective(b.ep, FI_ADDR_NOTAVAIL, set, 0, &mc, NULL),
		-FI_EINVAL);
	/* no EQ bound: the join cannot complete */
	cr_assert_eq(fi_endpoint(t_domain, t_info, &bare, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &av2, NULL), 0);
	cr_assert_eq(fi_ep_bind(bare, &av2->fid, 0), 0);
	cr_expect_eq(
		fi_join_collective(bare, FI_ADDR_NOTAVAIL, set, 0, &mc, NULL),
		-FI_EOPBADSTATE, "not enabled");
	cr_assert_eq(fi_enable(bare), 0);
	cr_expect_eq(
		fi_join_collective(bare, FI_ADDR_NOTAVAIL, set, 0, &mc, NULL),
		-FI_ENOEQ);
	/* a coll_addr that is no AV set: refused, not dereferenced */
	caddr.set = NULL;
	caddr.coll_addr = 0x1234568;
	cr_expect_eq(fi_join(a.ep, &caddr, FI_COLLECTIVE, &mc, NULL),
		     -FI_EINVAL);
	/* the coll_addr of fi_av_set_addr works without the set pointer */
	cr_assert_eq(fi_av_set_addr(set, &caddr.coll_addr), 0);
	cr_assert_eq(fi_join(a.ep, &caddr, FI_COLLECTIVE, &mc, NULL), 0);
	{
		struct fi_eq_entry entry;
		uint32_t event;

		cr_assert_eq(fi_eq_read(a.eq, &event, &entry, sizeof(entry), 0),
			     sizeof(entry));
		cr_expect_eq(event, FI_JOIN_COMPLETE);
	}
	cr_expect_eq(fi_close(&mc->fid), 0);
	/* barrier on something that is not a joined collective */
	cr_expect_eq(fi_barrier(a.ep, 12345, NULL), -FI_EINVAL);
	cr_expect_eq(fi_barrier2(a.ep, 12345, FI_SEND, NULL), -FI_EBADFLAGS);
	/* the set is held while joined */
	mc = join(&a, set, NULL);
	cr_expect_eq(fi_close(&set->fid), -FI_EBUSY);
	cr_expect_eq(fi_close(&mc->fid), 0);

	cr_expect_eq(fi_close(&bare->fid), 0);
	cr_expect_eq(fi_close(&av2->fid), 0);
	cr_expect_eq(fi_close(&other_set->fid), 0);
	cr_expect_eq(fi_close(&set->fid), 0);
	tep_close(&b, true);
	tep_close(&a, true);
}

Test(coll, members_limit)
{
	struct fid_av_set *set;
	struct gba_addr addr;
	fi_addr_t a[709];
	struct fid_mc *mc;
	struct tep t;
	size_t i;

	tep_open(&t, NULL);
	a[0] = insert_name(t.av, t.ep);
	for (i = 1; i < 709; i++) {
		addr = prov_addr(getpid(), 100000 + (uint32_t)i);
		cr_assert_eq(fi_av_insert(t.av, &addr, 1, &a[i], 0, NULL), 1);
	}
	set = make_set(t.av, a, 709);
	mc = join(&t, set, NULL); /* 709: the barrier runs in software */
	cr_expect_eq(fi_close(&mc->fid), 0);
	cr_expect_eq(fi_av_set_remove(set, a[708]), 0);
	mc = join(&t, set, NULL); /* 708: fits */
	cr_expect_eq(fi_close(&mc->fid), 0);
	cr_expect_eq(fi_close(&set->fid), 0);
	tep_close(&t, true);
}

Test(coll, group_exhaustion)
{
	struct fi_cq_data_entry e;
	struct fid_av_set *set;
	struct fid_mc *mc[33];
	struct tep t;
	int i;

	tep_open(&t, NULL);
	t.self = insert_name(t.av, t.ep);
	set = make_set(t.av, &t.self, 1);
	for (i = 0; i < 32; i++)
		mc[i] = join(&t, set, &mc[i]);
	/* the 33rd: no hardware group left, its barrier runs in software */
	mc[32] = join(&t, set, &mc[32]);
	cr_assert_eq(fi_barrier(t.ep, fi_mc_addr(mc[32]), &mc[32]), 0);
	cr_assert_eq(poll_cq(t.cq, 1000, &e), 1);
	cr_expect_eq(e.op_context, &mc[32]);
	cr_expect_eq(fi_close(&mc[32]->fid), 0);
	for (i = 0; i < 32; i++) {
		cr_assert_eq(fi_barrier(t.ep, fi_mc_addr(mc[i]), &mc[i]), 0);
		cr_assert_eq(poll_cq(t.cq, 1000, &e), 1);
		cr_expect_eq(e.op_context, &mc[i]);
	}
	cr_expect_eq(fi_close(&mc[7]->fid), 0);
	mc[7] = join(&t, set, NULL);
	cr_assert_eq(fi_barrier(t.ep, fi_mc_addr(mc[7]), NULL), 0);
	cr_assert_eq(poll_cq(t.cq, 1000, &e), 1);
	for (i = 0; i < 32; i++)
		cr_expect_eq(fi_close(&mc[i]->fid), 0);
	cr_expect_eq(fi_close(&set->fid), 0);
	tep_close(&t, true);
}

/* Two endpoints of one process in one collective. */
struct pair {
	struct tep a, b;
	struct fid_av_set *set_a, *set_b;
	struct fid_mc *mc_a, *mc_b;
};

static void pair_open(struct pair *p)
{
	fi_addr_t addrs[2];

	tep_open(&p->a, NULL);
	tep_open(&p->b, NULL);
	addrs[0] = insert_name(p->a.av, p->a.ep);
	addrs[1] = insert_name(p->a.av, p->b.ep);
	p->set_a = make_set(p->a.av, addrs, 2);
	addrs[0] = insert_name(p->b.av, p->a.ep);
	addrs[1] = insert_name(p->b.av, p->b.ep);
	p->set_b = make_set(p->b.av, addrs, 2);
	p->mc_a = join(&p->a, p->set_a, NULL);
	p->mc_b = join(&p->b, p->set_b, NULL);
}

static void pair_close(struct pair *p)
{
	cr_expect_eq(fi_close(&p->mc_a->fid), 0);
	cr_expect_eq(fi_close(&p->mc_b->fid), 0);
	cr_expect_eq(fi_close(&p->set_a->fid), 0);
	cr_expect_eq(fi_close(&p->set_b->fid), 0);
	tep_close(&p->a, true);
	tep_close(&p->b, true);
}

Test(coll, nobody_released_early)
{
	struct fi_cq_data_entry e;
	struct pair p;
	int ctx_a, ctx_b, k;

	pair_open(&p);
	for (k = 0; k < 1000; k++) {
		cr_assert_eq(fi_barrier(p.a.ep, fi_mc_addr(p.mc_a), &ctx_a), 0);
		cr_assert_eq(poll_cq(p.a.cq, k % 50 + 1, &e), 0,
			     "released before the other member arrived");
		cr_assert_eq(fi_barrier(p.b.ep, fi_mc_addr(p.mc_b), &ctx_b), 0);
		cr_assert_eq(poll_cq(p.a.cq, 100000, &e), 1);
		cr_expect_eq(e.op_context, &ctx_a);
		cr_expect_eq(e.flags, FI_COLLECTIVE);
		cr_assert_eq(poll_cq(p.b.cq, 100000, &e), 1);
		cr_expect_eq(e.op_context, &ctx_b);
	}
	cr_expect_eq(fi_cntr_read(p.a.cntr), 1000);
	cr_expect_eq(fi_cntr_read(p.b.cntr), 1000);
	pair_close(&p);
}

Test(coll, queued_barriers_complete_in_order)
{
	struct fi_cq_data_entry e;
	int ctx_a[8], ctx_b[8];
	struct pair p;
	int i;

	pair_open(&p);
	for (i = 0; i < 8; i++)
		cr_assert_eq(fi_barrier(p.a.ep, fi_mc_addr(p.mc_a), &ctx_a[i]),
			     0);
	cr_assert_eq(poll_cq(p.a.cq, 1000, &e), 0);
	cr_expect_eq(fi_close(&p.mc_a->fid), -FI_EBUSY, "barriers in flight");
	for (i = 0; i < 8; i++)
		cr_assert_eq(fi_barrier(p.b.ep, fi_mc_addr(p.mc_b), &ctx_b[i]),
			     0);
	for (i = 0; i < 8; i++) {
		/* b's progress is needed for a's later barriers */
		cr_assert_eq(poll_cq(p.b.cq, 100000, &e), 1);
		cr_expect_eq(e.op_context, &ctx_b[i]);
		cr_assert_eq(poll_cq(p.a.cq, 100000, &e), 1);
		cr_expect_eq(e.op_context, &ctx_a[i], "barrier %d order", i);
	}
	pair_close(&p);
}

Test(coll, cancel_queued_barrier)
{
	struct fi_cq_err_entry err;
	struct fi_cq_data_entry e;
	int x, y;
	struct pair p;

	pair_open(&p);
	cr_assert_eq(fi_barrier(p.a.ep, fi_mc_addr(p.mc_a), &x), 0);
	cr_assert_eq(fi_barrier(p.a.ep, fi_mc_addr(p.mc_a), &y), 0);
	cr_expect_eq(fi_cancel(&p.a.ep->fid, &x), -FI_ENOENT, "has arrived");
	cr_expect_eq(fi_cancel(&p.a.ep->fid, &y), 0);
	cr_assert_eq(poll_cq(p.a.cq, 10, &e), -FI_EAVAIL);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_cq_readerr(p.a.cq, &err, 0), 1);
	cr_expect_eq(err.op_context, &y);
	cr_expect_eq(err.err, FI_ECANCELED);
	cr_expect_eq(fi_cntr_readerr(p.a.cntr), 1);
	cr_assert_eq(fi_barrier(p.b.ep, fi_mc_addr(p.mc_b), NULL), 0);
	cr_assert_eq(poll_cq(p.a.cq, 100000, &e), 1);
	cr_expect_eq(e.op_context, &x);
	cr_assert_eq(poll_cq(p.b.cq, 100000, &e), 1);
	pair_close(&p);
}

Test(coll, triggered_barrier_waits_for_threshold)
{
	struct fi_triggered_context tctx;
	struct fi_cntr_attr attr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_cq_data_entry e;
	struct fid_av_set *set;
	struct fid_cntr *trig;
	struct fid_mc *mc;
	struct tep t;

	tep_open(&t, NULL);
	t.self = insert_name(t.av, t.ep);
	set = make_set(t.av, &t.self, 1);
	mc = join(&t, set, NULL);
	cr_assert_eq(fi_cntr_open(t_domain, &attr, &trig, NULL), 0);

	memset(&tctx, 0, sizeof(tctx));
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = trig;
	tctx.trigger.threshold.threshold = 2;
	cr_assert_eq(fi_barrier2(t.ep, fi_mc_addr(mc), FI_TRIGGER, &tctx), 0);
	cr_expect_eq(poll_cq(t.cq, 1000, &e), 0, "fired before threshold");
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	cr_expect_eq(poll_cq(t.cq, 1000, &e), 0, "fired at threshold - 1");
	cr_expect_eq(fi_cntr_read(t.cntr), 0);
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	cr_assert_eq(poll_cq(t.cq, 100000, &e), 1);
	cr_expect_eq(e.op_context, &tctx, "op_context is the trigger context");
	cr_expect_eq(fi_cntr_read(t.cntr), 1);

	/* bad trigger contexts */
	tctx.event_type = FI_TRIGGER_XPU;
	cr_expect_eq(fi_barrier2(t.ep, fi_mc_addr(mc), FI_TRIGGER, &tctx),
		     -FI_ENOSYS);
	cr_expect_eq(fi_barrier2(t.ep, fi_mc_addr(mc), FI_TRIGGER, NULL),
		     -FI_EINVAL);
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = NULL;
	cr_expect_eq(fi_barrier2(t.ep, fi_mc_addr(mc), FI_TRIGGER, &tctx),
		     -FI_EINVAL);

	/* fi_cancel of a waiting triggered barrier: FI_ECANCELED, never runs */
	{
		struct fi_cq_err_entry err;

		tctx.trigger.threshold.cntr = trig;
		tctx.trigger.threshold.threshold = 50;
		cr_assert_eq(
			fi_barrier2(t.ep, fi_mc_addr(mc), FI_TRIGGER, &tctx),
			0);
		cr_assert_eq(fi_cancel(&t.ep->fid, &tctx), 0);
		cr_assert_eq(poll_cq(t.cq, 10, &e), -FI_EAVAIL);
		memset(&err, 0, sizeof(err));
		cr_assert_eq(fi_cq_readerr(t.cq, &err, 0), 1);
		cr_expect_eq(err.op_context, &tctx);
		cr_expect_eq(err.err, FI_ECANCELED);
		cr_expect_eq(fi_cancel(&t.ep->fid, &tctx), -FI_ENOENT);
		cr_assert_eq(fi_cntr_set(trig, 60), 0);
		cr_expect_eq(poll_cq(t.cq, 1000, &e), 0, "cancelled, yet ran");
	}

	/* a trigger left queued is discarded when its counter closes */
	tctx.trigger.threshold.cntr = trig;
	tctx.trigger.threshold.threshold = 100;
	cr_assert_eq(fi_barrier2(t.ep, fi_mc_addr(mc), FI_TRIGGER, &tctx), 0);
	cr_expect_eq(fi_close(&trig->fid), 0);
	cr_expect_eq(poll_cq(t.cq, 1000, &e), 0);

	cr_expect_eq(fi_close(&mc->fid), 0);
	cr_expect_eq(fi_close(&set->fid), 0);
	tep_close(&t, true);
}

#define CHAIN 200

/*
 * A chain of triggered barriers between two endpoints: barrier k of each
 * endpoint fires when that endpoint's send counter (its completed
 * barriers) reaches k.  Only barrier 0 is posted by hand.
 */
Test(coll, triggered_barrier_chain)
{
	static struct fi_triggered_context ta[CHAIN], tb[CHAIN];
	struct fi_cq_data_entry e;
	struct pair p;
	int k, done_a = 0, done_b = 0;

	pair_open(&p);
	for (k = 1; k < CHAIN; k++) {
		ta[k].event_type = FI_TRIGGER_THRESHOLD;
		ta[k].trigger.threshold.cntr = p.a.cntr;
		ta[k].trigger.threshold.threshold = k;
		tb[k] = ta[k];
		tb[k].trigger.threshold.cntr = p.b.cntr;
		cr_assert_eq(fi_barrier2(p.a.ep, fi_mc_addr(p.mc_a), FI_TRIGGER,
					 &ta[k]),
			     0);
		cr_assert_eq(fi_barrier2(p.b.ep, fi_mc_addr(p.mc_b), FI_TRIGGER,
					 &tb[k]),
			     0);
	}
	cr_expect_eq(poll_cq(p.a.cq, 100, &e), 0, "chain started early");
	cr_assert_eq(fi_barrier(p.a.ep, fi_mc_addr(p.mc_a), &ta[0]), 0);
	cr_assert_eq(fi_barrier(p.b.ep, fi_mc_addr(p.mc_b), &tb[0]), 0);
	while (done_a < CHAIN || done_b < CHAIN) {
		if (poll_cq(p.a.cq, 1, &e) == 1) {
			cr_assert_eq(e.op_context, &ta[done_a], "a: %d",
				     done_a);
			done_a++;
		}
		if (poll_cq(p.b.cq, 1, &e) == 1) {
			cr_assert_eq(e.op_context, &tb[done_b], "b: %d",
				     done_b);
			done_b++;
		}
	}
	cr_expect_eq(fi_cntr_read(p.a.cntr), CHAIN);
	cr_expect_eq(fi_cntr_read(p.b.cntr), CHAIN);
	pair_close(&p);
}

/*
 * FI_GBA_BARRIER_TIMEOUT: a lonely barrier completes with FI_ETIMEDOUT,
 * and the provider's warning names the member it waited for (gba_stat(1)
 * shows the same list).
 */
static void timeout_setup(void)
{
	setenv("FI_GBA_BARRIER_TIMEOUT", "200", 1);
	setenv("FI_LOG_LEVEL", "warn", 1);
	coll_setup();
}

/* Send stderr (fd 2) to a temporary file; returns the saved fd 2. */
static int stderr_to(FILE **filep)
{
	int saved;

	fflush(stderr);
	*filep = tmpfile();
	cr_assert_not_null(*filep);
	saved = dup(2);
	cr_assert_geq(saved, 0);
	cr_assert_geq(dup2(fileno(*filep), 2), 0);
	return saved;
}

/* Restore fd 2 and return what was written to @file (malloc'd). */
static char *stderr_back(FILE *file, int saved)
{
	static const size_t max = 64 * 1024;
	char *text = calloc(1, max);
	size_t n;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	cr_assert_not_null(text);
	rewind(file);
	n = fread(text, 1, max - 1, file);
	text[n] = '\0';
	fclose(file);
	fputs(text, stderr); /* still in the test's log */
	return text;
}

Test(coll_timeout, barrier_times_out, .init = timeout_setup,
     .fini = coll_teardown, .timeout = 60)
{
	struct fi_cq_err_entry err;
	struct fi_cq_data_entry e;
	uint64_t t0, info;
	struct pair p;
	int x;

	char absent[64], *log;
	FILE *logf;
	int saved;

	pair_open(&p);
	saved = stderr_to(&logf);
	t0 = prov_now_ms();
	cr_assert_eq(fi_barrier(p.a.ep, fi_mc_addr(p.mc_a), &x), 0);
	while (poll_cq(p.a.cq, 1, &e) == 0)
		cr_assert_lt(prov_now_ms() - t0, 10000, "no timeout");
	cr_expect_geq(prov_now_ms() - t0, 200);
	log = stderr_back(logf, saved);
	/* b, the other member, is this process and never arrived */
	snprintf(absent, sizeof(absent), "(pid %d)", (int)getpid());
	cr_expect(strstr(log, "Connection timed out; absent: member ") &&
			  strstr(log, absent),
		  "the timeout warning names the absent member: %s", log);
	free(log);
	memset(&err, 0, sizeof(err));
	err.err_data = &info;
	err.err_data_size = sizeof(info);
	cr_assert_eq(fi_cq_readerr(p.a.cq, &err, 0), 1);
	cr_expect_eq(err.op_context, &x);
	cr_expect_eq(err.err, FI_ETIMEDOUT);
	cr_expect_eq(err.flags & FI_COLLECTIVE, FI_COLLECTIVE);
	cr_expect_eq(fi_cntr_readerr(p.a.cntr), 1);
	/* the collective is unusable now: later barriers fail too */
	cr_assert_eq(fi_barrier(p.a.ep, fi_mc_addr(p.mc_a), &x), 0);
	cr_assert_eq(poll_cq(p.a.cq, 10, &e), -FI_EAVAIL);
	cr_assert_eq(fi_cq_readerr(p.a.cq, &err, 0), 1);
	cr_expect_eq(err.err, FI_ETIMEDOUT);
	pair_close(&p);
}
