/*
 * Self (loopback) atomics of the gba provider through the stock
 * libfabric.  For every datatype x operation x kind (atomic, fetch,
 * compare): fi_query_atomic and the *valid calls must agree with the
 * documented table (integers: everything; float/double: no bitwise ops
 * or FI_MSWAP; complex and long double: nothing), and every supported
 * combination is executed on two elements and its target and result
 * checked against an independent reference model; unsupported ones must
 * be refused with -FI_EOPNOTSUPP and leave memory untouched.  Also:
 * concurrent atomic sums from threads, the v and msg forms with their
 * counters, inject, access rights, argument and target errors, remote CQ
 * data, destinations, and triggered atomics firing at their threshold.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <rdma/fi_atomic.h>

#include "ep_common.h"

TestSuite(atomic, .init = prov_setup, .fini = prov_teardown, .timeout = 60);

enum kind { K_WRITE, K_FETCH, K_CMP };
static const uint64_t kind_flags[] = {0, FI_FETCH_ATOMIC, FI_COMPARE_ATOMIC};

/* The documented support table, written independently of the provider. */
static bool expected_support(enum fi_datatype dt, enum fi_op op, enum kind k)
{
	bool is_int = dt <= FI_UINT64;
	bool is_float = dt == FI_FLOAT || dt == FI_DOUBLE;
	bool bitwise = op == FI_BOR || op == FI_BAND || op == FI_BXOR ||
		       op == FI_MSWAP;

	if (!is_int && !is_float)
		return false;
	if (bitwise && !is_int)
		return false;
	switch (k) {
	case K_WRITE:
		return op <= FI_BXOR || op == FI_ATOMIC_WRITE;
	case K_FETCH:
		return op <= FI_BXOR || op == FI_ATOMIC_WRITE ||
		       op == FI_ATOMIC_READ;
	case K_CMP:
		return op >= FI_CSWAP && op <= FI_MSWAP;
	}
	return false;
}

static size_t dt_size(enum fi_datatype dt)
{
	static const size_t s[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};

	return dt <= FI_DOUBLE ? s[dt] : 0;
}

static bool dt_signed(enum fi_datatype dt)
{
	return dt == FI_INT8 || dt == FI_INT16 || dt == FI_INT32 ||
	       dt == FI_INT64;
}

/* Store @v (integer types: wrapped to width; floats: converted). */
static void put(enum fi_datatype dt, void *p, long double v)
{
	if (dt == FI_FLOAT) {
		float f = (float)v;

		memcpy(p, &f, 4);
	} else if (dt == FI_DOUBLE) {
		double d = (double)v;

		memcpy(p, &d, 8);
	} else {
		uint64_t u = v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v;

		memcpy(p, &u, dt_size(dt)); /* little endian */
	}
}

/* Compare the elements @x and @y of type @dt: -1, 0, 1 (exact). */
static int cmp3(enum fi_datatype dt, const void *x, const void *y)
{
	uint64_t ux = 0, uy = 0;
	int64_t sx, sy;
	size_t n = dt_size(dt);
	double dx, dy;
	float fx, fy;

	if (dt == FI_FLOAT) {
		memcpy(&fx, x, 4);
		memcpy(&fy, y, 4);
		return (fx > fy) - (fx < fy);
	}
	if (dt == FI_DOUBLE) {
		memcpy(&dx, x, 8);
		memcpy(&dy, y, 8);
		return (dx > dy) - (dx < dy);
	}
	memcpy(&ux, x, n);
	memcpy(&uy, y, n);
	if (!dt_signed(dt))
		return (ux > uy) - (ux < uy);
	/* sign-extend */
	sx = (int64_t)(ux << (64 - 8 * n)) >> (64 - 8 * n);
	sy = (int64_t)(uy << (64 - 8 * n)) >> (64 - 8 * n);
	return (sx > sy) - (sx < sy);
}

/* Logical truth of an element. */
static bool truth(enum fi_datatype dt, const void *x)
{
	uint8_t zero[8] = {0};

	return cmp3(dt, x, zero) != 0;
}

/* Reference model: the new target value (returns false: unchanged). */
static bool model_op(enum fi_datatype dt, enum fi_op op, const void *tb,
		     const void *ab, const void *cb, void *out)
{
	uint64_t ut = 0, ua = 0, uc = 0, r;
	size_t n = dt_size(dt);
	bool is_int = dt <= FI_UINT64;
	float ft, fa;
	double dt_, da;

	memcpy(&ut, tb, n);
	memcpy(&ua, ab, n);
	memcpy(&uc, cb, n);
	switch (op) {
	case FI_MIN:
		memcpy(out, cmp3(dt, ab, tb) < 0 ? ab : tb, n);
		return true;
	case FI_MAX:
		memcpy(out, cmp3(dt, ab, tb) > 0 ? ab : tb, n);
		return true;
	case FI_SUM:
	case FI_PROD:
		if (is_int) {
			r = op == FI_SUM ? ut + ua : ut * ua;
			memcpy(out, &r, n);
		} else if (dt == FI_FLOAT) {
			memcpy(&ft, tb, 4);
			memcpy(&fa, ab, 4);
			ft = op == FI_SUM ? ft + fa : ft * fa;
			memcpy(out, &ft, 4);
		} else {
			memcpy(&dt_, tb, 8);
			memcpy(&da, ab, 8);
			dt_ = op == FI_SUM ? dt_ + da : dt_ * da;
			memcpy(out, &dt_, 8);
		}
		return true;
	case FI_LOR:
		put(dt, out, truth(dt, tb) || truth(dt, ab));
		return true;
	case FI_LAND:
		put(dt, out, truth(dt, tb) && truth(dt, ab));
		return true;
	case FI_LXOR:
		put(dt, out, truth(dt, tb) != truth(dt, ab));
		return true;
	case FI_BOR:
		r = ut | ua;
		memcpy(out, &r, n);
		return true;
	case FI_BAND:
		r = ut & ua;
		memcpy(out, &r, n);
		return true;
	case FI_BXOR:
		r = ut ^ ua;
		memcpy(out, &r, n);
		return true;
	case FI_ATOMIC_WRITE:
		memcpy(out, ab, n);
		return true;
	case FI_CSWAP:
		memcpy(out, ab, n);
		return cmp3(dt, cb, tb) == 0;
	case FI_CSWAP_NE:
		memcpy(out, ab, n);
		return cmp3(dt, cb, tb) != 0;
	case FI_CSWAP_LE:
		memcpy(out, ab, n);
		return cmp3(dt, cb, tb) <= 0;
	case FI_CSWAP_LT:
		memcpy(out, ab, n);
		return cmp3(dt, cb, tb) < 0;
	case FI_CSWAP_GE:
		memcpy(out, ab, n);
		return cmp3(dt, cb, tb) >= 0;
	case FI_CSWAP_GT:
		memcpy(out, ab, n);
		return cmp3(dt, cb, tb) > 0;
	case FI_MSWAP:
		r = (uc & ua) | (~uc & ut);
		memcpy(out, &r, n);
		return true;
	default:
		return false; /* FI_ATOMIC_READ */
	}
}

/* model_op into a scratch value; @out is written only if it changes. */
static void model(enum fi_datatype dt, enum fi_op op, const void *tb,
		  const void *ab, const void *cb, void *out)
{
	uint8_t tmp[16];

	if (model_op(dt, op, tb, ab, cb, tmp))
		memcpy(out, tmp, dt_size(dt));
}

struct atom_env {
	struct tep t;
	struct fid_mr *mr;
	uint64_t region[64];
	uint64_t key;
};

static void atom_open(struct atom_env *e, uint64_t access)
{
	tep_open(&e->t, NULL);
	e->t.self = insert_name(e->t.av, e->t.ep);
	memset(e->region, 0, sizeof(e->region));
	cr_assert_eq(fi_mr_reg(t_domain, e->region, sizeof(e->region), access,
			       0, 0, 0, &e->mr, NULL),
		     0);
	e->key = fi_mr_key(e->mr);
}

static void atom_close(struct atom_env *e)
{
	cr_expect_eq(fi_close(&e->mr->fid), 0);
	tep_close(&e->t, true);
}

#define NELEM 2

/* Run one combination through the verb of @k and check it. */
static void check_combo(struct atom_env *e, enum fi_datatype dt, enum fi_op op,
			enum kind k)
{
	static const long double tv[NELEM] = {5, -3}, av[NELEM] = {7, 2},
				 cv[NELEM] = {5, 9};
	uint8_t opnd[16], cmp[16], res[16], before[16], want[16];
	size_t n = dt_size(dt), i;
	struct fi_cq_data_entry c;
	uint8_t *tgt = (uint8_t *)e->region;
	ssize_t ret;
	int ctx;

	for (i = 0; i < NELEM; i++) {
		put(dt, tgt + i * n, tv[i]);
		put(dt, opnd + i * n, av[i]);
		put(dt, cmp + i * n,
		    dt <= FI_UINT64 && op == FI_MSWAP ? 0x0f : cv[i]);
	}
	memcpy(before, tgt, NELEM * n);
	memcpy(want, before, NELEM * n);
	for (i = 0; i < NELEM; i++)
		model(dt, op, before + i * n, opnd + i * n, cmp + i * n,
		      want + i * n);
	memset(res, 0xee, sizeof(res));
	switch (k) {
	case K_WRITE:
		ret = fi_atomic(e->t.ep, opnd, NELEM, NULL, e->t.self,
				(uint64_t)(uintptr_t)tgt, e->key, dt, op, &ctx);
		break;
	case K_FETCH:
		ret = fi_fetch_atomic(e->t.ep, opnd, NELEM, NULL, res, NULL,
				      e->t.self, (uint64_t)(uintptr_t)tgt,
				      e->key, dt, op, &ctx);
		break;
	default:
		ret = fi_compare_atomic(e->t.ep, opnd, NELEM, NULL, cmp, NULL,
					res, NULL, e->t.self,
					(uint64_t)(uintptr_t)tgt, e->key, dt,
					op, &ctx);
		break;
	}
	cr_assert_eq(ret, 0, "op %d datatype %d kind %d: %zd", op, dt, k, ret);
	cr_assert_eq(fi_cq_read(e->t.cq, &c, 1), 1);
	cr_expect_eq(c.op_context, &ctx);
	cr_expect_eq(c.flags, FI_ATOMIC | (k == K_WRITE ? FI_WRITE : FI_READ));
	cr_expect_eq(memcmp(tgt, want, NELEM * n), 0,
		     "op %d datatype %d kind %d: target", op, dt, k);
	if (k != K_WRITE)
		cr_expect_eq(memcmp(res, before, NELEM * n), 0,
			     "op %d datatype %d kind %d: result", op, dt, k);
}

Test(atomic, every_datatype_op_and_kind)
{
	struct fi_atomic_attr attr;
	struct atom_env e;
	size_t count, checked = 0;
	int dt, op, k, ret;
	uint8_t buf[16] = {0};

	atom_open(&e, FI_REMOTE_READ | FI_REMOTE_WRITE);
	for (dt = FI_INT8; dt <= FI_LONG_DOUBLE_COMPLEX; dt++) {
		for (op = FI_MIN; op < FI_ATOMIC_OP_LAST; op++) {
			for (k = K_WRITE; k <= K_CMP; k++) {
				bool want = expected_support(dt, op, k);

				ret = fi_query_atomic(t_domain, dt, op, &attr,
						      kind_flags[k]);
				cr_assert_eq(ret, want ? 0 : -FI_EOPNOTSUPP,
					     "query %d/%d/%d: %d", dt, op, k,
					     ret);
				ret = k == K_WRITE ? fi_atomicvalid(e.t.ep, dt,
								    op, &count)
				      : k == K_FETCH
					      ? fi_fetch_atomicvalid(e.t.ep, dt,
								     op, &count)
					      : fi_compare_atomicvalid(
							e.t.ep, dt, op, &count);
				cr_assert_eq(ret, want ? 0 : -FI_EOPNOTSUPP);
				if (!want) {
					/* refused, memory untouched */
					memset(e.region, 0x5a, 16);
					if (k == K_WRITE)
						ret = fi_atomic(
							e.t.ep, buf, 1, NULL,
							e.t.self,
							(uint64_t)(uintptr_t)
								e.region,
							e.key, dt, op, NULL);
					else if (k == K_FETCH)
						ret = fi_fetch_atomic(
							e.t.ep, buf, 1, NULL,
							buf, NULL, e.t.self,
							(uint64_t)(uintptr_t)
								e.region,
							e.key, dt, op, NULL);
					else
						ret = fi_compare_atomic(
							e.t.ep, buf, 1, NULL,
							buf, NULL, buf, NULL,
							e.t.self,
							(uint64_t)(uintptr_t)
								e.region,
							e.key, dt, op, NULL);
					cr_assert_eq(ret, -FI_EOPNOTSUPP);
					cr_assert_eq(((uint8_t *)e.region)[0],
						     0x5a);
					continue;
				}
				cr_expect_eq(attr.size, dt_size(dt));
				cr_expect_geq(attr.count, NELEM);
				cr_expect_eq(count, attr.count);
				check_combo(&e, dt, op, k);
				checked++;
			}
		}
	}
	cr_expect_gt(checked, 150, "only %zu combinations ran", checked);
	cr_expect_eq(fi_query_atomic(t_domain, FI_INT32, FI_SUM, NULL, 0),
		     -FI_EINVAL);
	cr_expect_eq(
		fi_query_atomic(t_domain, FI_INT32, FI_SUM, &attr, FI_TAGGED),
		-FI_EINVAL);
	atom_close(&e);
}

struct sum_arg {
	struct atom_env *e;
	int iters;
};

static void *sum_thread(void *p)
{
	struct sum_arg *a = p;
	uint64_t one = 1;
	int i;

	for (i = 0; i < a->iters; i++)
		while (fi_inject_atomic(a->e->t.ep, &one, 1, a->e->t.self,
					(uint64_t)(uintptr_t)a->e->region,
					a->e->key, FI_UINT64,
					FI_SUM) == -FI_EAGAIN)
			;
	return NULL;
}

Test(atomic, concurrent_sums_are_atomic)
{
	struct atom_env e;
	struct sum_arg arg = {&e, 100000};
	pthread_t th[4];
	int i;

	atom_open(&e, FI_REMOTE_READ | FI_REMOTE_WRITE);
	for (i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, sum_thread, &arg), 0);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	cr_expect_eq(e.region[0], 400000);
	atom_close(&e);
}

Test(atomic, errors)
{
	struct fi_cq_err_entry ee;
	struct fi_cq_data_entry c;
	struct atom_env e, ro;
	uint64_t v = 1, r;
	int ctx;

	atom_open(&e, FI_REMOTE_READ | FI_REMOTE_WRITE);
	cr_expect_eq(fi_atomic(e.t.ep, &v, 0, NULL, e.t.self,
			       (uint64_t)(uintptr_t)e.region, e.key, FI_UINT64,
			       FI_SUM, &ctx),
		     -FI_EINVAL, "count 0");
	cr_expect_eq(fi_atomic(e.t.ep, &v, 1, NULL, e.t.self,
			       (uint64_t)(uintptr_t)e.region, e.key, FI_UINT64,
			       FI_CSWAP, &ctx),
		     -FI_EOPNOTSUPP, "compare op through fi_atomic");
	cr_expect_eq(fi_atomic(e.t.ep, &v, 1, NULL, e.t.self,
			       (uint64_t)(uintptr_t)e.region, e.key,
			       FI_DOUBLE_COMPLEX, FI_SUM, &ctx),
		     -FI_EOPNOTSUPP);
	/* misaligned target and bad key complete in error */
	cr_assert_eq(fi_atomic(e.t.ep, &v, 1, NULL, e.t.self,
			       (uint64_t)(uintptr_t)e.region + 1, e.key,
			       FI_UINT64, FI_SUM, &ctx),
		     0);
	cr_assert_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAVAIL);
	memset(&ee, 0, sizeof(ee));
	cr_assert_eq(fi_cq_readerr(e.t.cq, &ee, 0), 1);
	cr_expect_eq(ee.err, FI_EINVAL);
	cr_assert_eq(fi_fetch_atomic(e.t.ep, &v, 1, NULL, &r, NULL, e.t.self,
				     (uint64_t)(uintptr_t)e.region, e.key + 7,
				     FI_UINT64, FI_SUM, &ctx),
		     0);
	cr_assert_eq(fi_cq_readerr(e.t.cq, &ee, 0), 1);
	cr_expect_eq(ee.err, FI_EKEYREJECTED);
	/* an atomic needs write access even to fetch */
	atom_open(&ro, FI_REMOTE_READ);
	cr_assert_eq(fi_fetch_atomic(ro.t.ep, &v, 1, NULL, &r, NULL, ro.t.self,
				     (uint64_t)(uintptr_t)ro.region, ro.key,
				     FI_UINT64, FI_SUM, &ctx),
		     0);
	cr_assert_eq(fi_cq_readerr(ro.t.cq, &ee, 0), 1);
	cr_expect_eq(ee.err, FI_EACCES);
	cr_assert_eq(fi_fetch_atomic(ro.t.ep, NULL, 1, NULL, &r, NULL,
				     ro.t.self, (uint64_t)(uintptr_t)ro.region,
				     ro.key, FI_UINT64, FI_ATOMIC_READ, &ctx),
		     0);
	cr_assert_eq(fi_cq_read(ro.t.cq, &c, 1), 1, "atomic read allowed");
	atom_close(&ro);
	atom_close(&e);
}

Test(atomic, inject_and_triggered)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_triggered_context tctx = {0};
	struct fi_msg_atomic msg = {0};
	struct fi_rma_ioc rma;
	struct fi_ioc ioc, resv, cmpv;
	struct fi_cq_data_entry c;
	struct fid_cntr *trig;
	struct atom_env e;
	uint64_t v = 3, cmpval, result = 0;

	atom_open(&e, FI_REMOTE_READ | FI_REMOTE_WRITE);
	cr_assert_eq(fi_inject_atomic(e.t.ep, &v, 1, e.t.self,
				      (uint64_t)(uintptr_t)e.region, e.key,
				      FI_UINT64, FI_SUM),
		     0);
	cr_expect_eq(e.region[0], 3);
	cr_expect_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAGAIN, "inject: no CQE");

	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &trig, NULL), 0);
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = trig;
	tctx.trigger.threshold.threshold = 1;
	ioc.addr = &v;
	ioc.count = 1;
	rma.addr = (uint64_t)(uintptr_t)e.region;
	rma.count = 1;
	rma.key = e.key;
	msg.msg_iov = &ioc;
	msg.iov_count = 1;
	msg.addr = e.t.self;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 1;
	msg.datatype = FI_UINT64;
	msg.op = FI_CSWAP;
	msg.context = &tctx;
	v = 100;
	cmpval = 3;
	cmpv.addr = &cmpval;
	cmpv.count = 1;
	resv.addr = &result;
	resv.count = 1;
	cr_assert_eq(fi_compare_atomicmsg(e.t.ep, &msg, &cmpv, NULL, 1, &resv,
					  NULL, 1, FI_TRIGGER),
		     0);
	cr_expect_eq(e.region[0], 3, "fired early");
	cr_expect_eq(fi_cq_read(e.t.cq, &c, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	cr_expect_eq(e.region[0], 100);
	cr_expect_eq(result, 3);
	cr_assert_eq(fi_cq_read(e.t.cq, &c, 1), 1);
	cr_expect_eq(c.op_context, &tctx);
	cr_expect_eq(c.flags, FI_ATOMIC | FI_READ);
	cr_expect_eq(fi_close(&trig->fid), 0);
	atom_close(&e);
}

/* An endpoint with write and read counters and a 64-element region. */
struct catom_env {
	struct atom_env a;
	struct fid_cntr *wcntr, *rcntr;
};

static void catom_open(struct catom_env *e, uint64_t access)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA};
	struct fi_eq_attr eq_attr = {.size = 64};
	struct tep *t = &e->a.t;

	memset(e, 0, sizeof(*e));
	cr_assert_eq(fi_endpoint(t_domain, t_info, &t->ep, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &t->av, NULL), 0);
	cr_assert_eq(fi_eq_open(t_fabric, &eq_attr, &t->eq, NULL), 0);
	cr_assert_eq(fi_cq_open(t_domain, &cq_attr, &t->cq, NULL), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &t->cntr, NULL), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &e->wcntr, NULL), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &e->rcntr, NULL), 0);
	cr_assert_eq(fi_ep_bind(t->ep, &t->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(t->ep, &t->eq->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(t->ep, &t->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_ep_bind(t->ep, &t->cntr->fid, FI_SEND), 0);
	cr_assert_eq(fi_ep_bind(t->ep, &e->wcntr->fid, FI_WRITE), 0);
	cr_assert_eq(fi_ep_bind(t->ep, &e->rcntr->fid, FI_READ), 0);
	cr_assert_eq(fi_enable(t->ep), 0);
	t->self = insert_name(t->av, t->ep);
	cr_assert_eq(fi_mr_reg(t_domain, e->a.region, sizeof(e->a.region),
			       access, 0, 0, 0, &e->a.mr, NULL),
		     0);
	e->a.key = fi_mr_key(e->a.mr);
}

static void catom_close(struct catom_env *e)
{
	atom_close(&e->a);
	cr_expect_eq(fi_close(&e->wcntr->fid), 0);
	cr_expect_eq(fi_close(&e->rcntr->fid), 0);
}

static uint64_t ra(struct catom_env *e, size_t idx)
{
	return (uint64_t)(uintptr_t)&e->a.region[idx];
}

/* The next CQ entry: a success for @ctx with @flags. */
static void expect_acomp(struct catom_env *e, void *ctx, uint64_t flags)
{
	struct fi_cq_data_entry c;

	cr_assert_eq(fi_cq_read(e->a.t.cq, &c, 1), 1);
	cr_expect_eq(c.op_context, ctx);
	cr_expect_eq(c.flags, flags, "flags 0x%llx",
		     (unsigned long long)c.flags);
}

/* The next CQ entry: an error @err for @ctx. */
static void expect_aerr(struct catom_env *e, void *ctx, int err)
{
	struct fi_cq_data_entry c;
	struct fi_cq_err_entry ee;

	cr_assert_eq(fi_cq_read(e->a.t.cq, &c, 1), -FI_EAVAIL);
	memset(&ee, 0, sizeof(ee));
	cr_assert_eq(fi_cq_readerr(e->a.t.cq, &ee, 0), 1);
	cr_expect_eq(ee.op_context, ctx);
	cr_expect_eq(ee.err, err, "err %d (%s)", ee.err, fi_strerror(ee.err));
}

Test(atomic, vector_and_msg_forms_with_counters)
{
	uint64_t a[2] = {1, 2}, b[3] = {10, 20, 30}, r1[4], r2[1];
	uint64_t c1[1] = {100}, c2[4] = {0, 0, 0, 0};
	struct fi_ioc iov[2] = {{a, 2}, {b, 3}};
	struct fi_ioc res[2] = {{r1, 4}, {r2, 1}};
	struct fi_ioc cmp[2] = {{c1, 1}, {c2, 4}};
	struct fi_rma_ioc rma;
	struct fi_msg_atomic msg = {0};
	struct catom_env e;
	size_t i;
	int ctx;

	catom_open(&e, FI_REMOTE_READ | FI_REMOTE_WRITE);
	for (i = 0; i < 5; i++)
		e.a.region[i] = 100 * (i + 1);
	/* fi_atomicv: 5 elements from 2 iocs */
	cr_assert_eq(fi_atomicv(e.a.t.ep, iov, NULL, 2, e.a.t.self, ra(&e, 0),
				e.a.key, FI_UINT64, FI_SUM, &ctx),
		     0);
	expect_acomp(&e, &ctx, FI_ATOMIC | FI_WRITE);
	cr_expect_eq(e.a.region[0], 101);
	cr_expect_eq(e.a.region[1], 202);
	cr_expect_eq(e.a.region[2], 310);
	cr_expect_eq(e.a.region[3], 420);
	cr_expect_eq(e.a.region[4], 530);
	cr_expect_eq(e.a.region[5], 0, "beyond the operation");

	/* fi_fetch_atomicv: results scattered to 2 iocs */
	cr_assert_eq(fi_fetch_atomicv(e.a.t.ep, iov, NULL, 2, res, NULL, 2,
				      e.a.t.self, ra(&e, 0), e.a.key, FI_UINT64,
				      FI_ATOMIC_WRITE, &ctx),
		     0);
	expect_acomp(&e, &ctx, FI_ATOMIC | FI_READ);
	cr_expect(r1[0] == 101 && r1[1] == 202 && r1[2] == 310 &&
		  r1[3] == 420 && r2[0] == 530);
	cr_expect(e.a.region[0] == 1 && e.a.region[1] == 2 &&
		  e.a.region[2] == 10 && e.a.region[3] == 20 &&
		  e.a.region[4] == 30);

	/* fi_compare_atomicv: compare values from 2 iocs; element 0
	 * mismatches (1 != 100), elements 1..4 compare against 0 */
	e.a.region[3] = 0;
	cr_assert_eq(fi_compare_atomicv(e.a.t.ep, iov, NULL, 2, cmp, NULL, 2,
					res, NULL, 2, e.a.t.self, ra(&e, 0),
					e.a.key, FI_UINT64, FI_CSWAP, &ctx),
		     0);
	expect_acomp(&e, &ctx, FI_ATOMIC | FI_READ);
	cr_expect(r1[0] == 1 && r1[1] == 2 && r1[2] == 10 && r1[3] == 0 &&
		  r2[0] == 30);
	cr_expect(e.a.region[0] == 1 && e.a.region[1] == 2 &&
			  e.a.region[2] == 10 && e.a.region[3] == 20 &&
			  e.a.region[4] == 30,
		  "only element 3 swapped");

	/* the msg forms */
	rma.addr = ra(&e, 10);
	rma.count = 5;
	rma.key = e.a.key;
	msg.msg_iov = iov;
	msg.iov_count = 2;
	msg.addr = e.a.t.self;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 1;
	msg.datatype = FI_UINT64;
	msg.op = FI_BOR;
	msg.context = &ctx;
	cr_assert_eq(fi_atomicmsg(e.a.t.ep, &msg, FI_COMPLETION), 0);
	expect_acomp(&e, &ctx, FI_ATOMIC | FI_WRITE);
	cr_expect(e.a.region[10] == 1 && e.a.region[14] == 30);
	msg.op = FI_BXOR;
	cr_assert_eq(
		fi_fetch_atomicmsg(e.a.t.ep, &msg, res, NULL, 2, FI_COMPLETION),
		0);
	expect_acomp(&e, &ctx, FI_ATOMIC | FI_READ);
	cr_expect(r1[0] == 1 && r2[0] == 30);
	for (i = 10; i < 15; i++)
		cr_expect_eq(e.a.region[i], 0, "x ^ x at %zu", i);
	msg.op = FI_CSWAP_NE;
	cr_assert_eq(fi_compare_atomicmsg(e.a.t.ep, &msg, cmp, NULL, 2, res,
					  NULL, 2, FI_COMPLETION),
		     0);
	expect_acomp(&e, &ctx, FI_ATOMIC | FI_READ);
	/* element 0: 100 != 0, swapped; elements 1..4: 0 != 0 false */
	cr_expect(e.a.region[10] == 1 && e.a.region[11] == 0 &&
		  e.a.region[14] == 0);

	/* counters: 2 basic atomics write, 4 fetch/compare read */
	cr_expect_eq(fi_cntr_read(e.wcntr), 2);
	cr_expect_eq(fi_cntr_read(e.rcntr), 4);
	/* inject: counted, no CQ entry */
	cr_assert_eq(fi_inject_atomic(e.a.t.ep, a, 2, e.a.t.self, ra(&e, 20),
				      e.a.key, FI_UINT64, FI_SUM),
		     0);
	cr_expect(e.a.region[20] == 1 && e.a.region[21] == 2);
	cr_expect_eq(fi_cntr_read(e.wcntr), 3);
	cr_expect_eq(fi_cq_read(e.a.t.cq, r1, 1), -FI_EAGAIN);
	/* errors count on the error value of the right counter */
	cr_assert_eq(fi_atomic(e.a.t.ep, a, 1, NULL, e.a.t.self, ra(&e, 0),
			       e.a.key + 1, FI_UINT64, FI_SUM, &ctx),
		     0);
	expect_aerr(&e, &ctx, FI_EKEYREJECTED);
	cr_assert_eq(fi_fetch_atomic(e.a.t.ep, a, 2, NULL, r1, NULL, e.a.t.self,
				     ra(&e, 63), e.a.key, FI_UINT64, FI_SUM,
				     &ctx),
		     0);
	expect_aerr(&e, &ctx, FI_EINVAL);
	cr_expect_eq(e.a.region[63], 0, "partially performed");
	cr_assert_eq(fi_inject_atomic(e.a.t.ep, a, 1, e.a.t.self, ra(&e, 0),
				      e.a.key + 1, FI_UINT64, FI_SUM),
		     0);
	expect_aerr(&e, NULL, FI_EKEYREJECTED);
	cr_expect_eq(fi_cntr_readerr(e.wcntr), 2);
	cr_expect_eq(fi_cntr_readerr(e.rcntr), 1);
	cr_expect_eq(fi_cntr_read(e.wcntr), 3);
	cr_expect_eq(fi_cntr_read(e.rcntr), 4);
	catom_close(&e);
}

Test(atomic, access_rights_follow_fi_mr)
{
	struct catom_env w, r;
	uint64_t v = 5, res = 0, cmp = 0;
	int ctx;

	/* FI_REMOTE_WRITE: target of an atomic (fi_mr(3)) */
	catom_open(&w, FI_REMOTE_WRITE);
	cr_assert_eq(fi_atomic(w.a.t.ep, &v, 1, NULL, w.a.t.self, ra(&w, 0),
			       w.a.key, FI_UINT64, FI_SUM, &ctx),
		     0);
	expect_acomp(&w, &ctx, FI_ATOMIC | FI_WRITE);
	cr_expect_eq(w.a.region[0], 5);
	cr_assert_eq(fi_inject_atomic(w.a.t.ep, &v, 1, w.a.t.self, ra(&w, 0),
				      w.a.key, FI_UINT64, FI_SUM),
		     0);
	cr_expect_eq(w.a.region[0], 10);
	/* returning the old value also reads it: both rights needed */
	cr_assert_eq(fi_fetch_atomic(w.a.t.ep, &v, 1, NULL, &res, NULL,
				     w.a.t.self, ra(&w, 0), w.a.key, FI_UINT64,
				     FI_SUM, &ctx),
		     0);
	expect_aerr(&w, &ctx, FI_EACCES);
	cr_assert_eq(fi_compare_atomic(w.a.t.ep, &v, 1, NULL, &cmp, NULL, &res,
				       NULL, w.a.t.self, ra(&w, 0), w.a.key,
				       FI_UINT64, FI_CSWAP, &ctx),
		     0);
	expect_aerr(&w, &ctx, FI_EACCES);
	cr_assert_eq(fi_fetch_atomic(w.a.t.ep, NULL, 1, NULL, &res, NULL,
				     w.a.t.self, ra(&w, 0), w.a.key, FI_UINT64,
				     FI_ATOMIC_READ, &ctx),
		     0);
	expect_aerr(&w, &ctx, FI_EACCES);
	cr_expect_eq(w.a.region[0], 10);
	catom_close(&w);

	/* FI_REMOTE_READ only: FI_ATOMIC_READ and nothing else */
	catom_open(&r, FI_REMOTE_READ);
	r.a.region[0] = 77;
	cr_assert_eq(fi_atomic(r.a.t.ep, &v, 1, NULL, r.a.t.self, ra(&r, 0),
			       r.a.key, FI_UINT64, FI_SUM, &ctx),
		     0);
	expect_aerr(&r, &ctx, FI_EACCES);
	cr_assert_eq(fi_fetch_atomic(r.a.t.ep, NULL, 1, NULL, &res, NULL,
				     r.a.t.self, ra(&r, 0), r.a.key, FI_UINT64,
				     FI_ATOMIC_READ, &ctx),
		     0);
	expect_acomp(&r, &ctx, FI_ATOMIC | FI_READ);
	cr_expect_eq(res, 77);
	cr_expect_eq(r.a.region[0], 77);
	catom_close(&r);
}

Test(atomic, argument_errors_perform_nothing)
{
	struct fi_atomic_attr attr;
	uint64_t v[GBA_INJECT_SIZE / 8 + 1] = {0}, res[2];
	struct fi_ioc iov[GBA_IOV_LIMIT + 1], resv, big[2];
	struct fi_rma_ioc rma;
	struct fi_msg_atomic msg = {0};
	struct catom_env e;
	size_t i;
	int ctx;

	catom_open(&e, FI_REMOTE_READ | FI_REMOTE_WRITE);
	for (i = 0; i < GBA_IOV_LIMIT + 1; i++) {
		iov[i].addr = &v[i];
		iov[i].count = 1;
	}
	v[0] = 1;
	cr_assert_eq(fi_query_atomic(t_domain, FI_UINT64, FI_SUM, &attr, 0), 0);
	cr_expect_eq(attr.count, 2000 / 8, "operands fit one engine slot");
	cr_expect_eq(fi_atomic(e.a.t.ep, v, attr.count + 1, NULL, e.a.t.self,
			       ra(&e, 0), e.a.key, FI_UINT64, FI_SUM, &ctx),
		     -FI_EINVAL, "more than attr.count elements");
	cr_expect_eq(fi_atomicv(e.a.t.ep, iov, NULL, GBA_IOV_LIMIT + 1,
				e.a.t.self, ra(&e, 0), e.a.key, FI_UINT64,
				FI_SUM, &ctx),
		     -FI_EINVAL, "iov_limit + 1");
	cr_expect_eq(fi_atomicv(e.a.t.ep, NULL, NULL, 2, e.a.t.self, ra(&e, 0),
				e.a.key, FI_UINT64, FI_SUM, &ctx),
		     -FI_EINVAL, "NULL ioc with a count");
	cr_expect_eq(fi_fetch_atomic(e.a.t.ep, v, 1, NULL, NULL, NULL,
				     e.a.t.self, ra(&e, 0), e.a.key, FI_UINT64,
				     FI_SUM, &ctx),
		     -FI_EINVAL, "NULL result");
	cr_expect_eq(fi_compare_atomic(e.a.t.ep, v, 1, NULL, NULL, NULL, res,
				       NULL, e.a.t.self, ra(&e, 0), e.a.key,
				       FI_UINT64, FI_CSWAP, &ctx),
		     -FI_EINVAL, "NULL compare");
	cr_expect_eq(fi_fetch_atomic(e.a.t.ep, v, 1, NULL, res, NULL,
				     e.a.t.self, ra(&e, 0), e.a.key, FI_UINT64,
				     FI_CSWAP, &ctx),
		     -FI_EOPNOTSUPP, "compare op through fetch");
	cr_expect_eq(fi_atomic(e.a.t.ep, v, 1, NULL, e.a.t.self, ra(&e, 0),
			       e.a.key, FI_UINT64, FI_ATOMIC_READ, &ctx),
		     -FI_EOPNOTSUPP, "FI_ATOMIC_READ through fi_atomic");
	cr_expect_eq(fi_atomic(e.a.t.ep, v, 1, NULL, e.a.t.self, ra(&e, 0),
			       e.a.key, FI_DOUBLE, FI_BOR, &ctx),
		     -FI_EOPNOTSUPP, "bitwise on a double");
	cr_expect_eq(fi_atomic(e.a.t.ep, v, 1, NULL, e.a.t.self, ra(&e, 0),
			       e.a.key, FI_UINT64, FI_ATOMIC_OP_LAST, &ctx),
		     -FI_EOPNOTSUPP, "no such op");
	cr_expect_eq(fi_atomic(e.a.t.ep, v, 1, NULL, e.a.t.self, ra(&e, 0),
			       e.a.key, (enum fi_datatype)99, FI_SUM, &ctx),
		     -FI_EOPNOTSUPP, "no such datatype");

	/* an endpoint fid that is not the provider's (its fi_ops differ) */
	{
		static struct fi_ops other_ops = {.size = sizeof(other_ops)};
		struct fid_ep fake = *e.a.t.ep;

		fake.fid.ops = &other_ops;
		cr_expect_eq(fi_atomic(&fake, v, 1, NULL, e.a.t.self, ra(&e, 0),
				       e.a.key, FI_UINT64, FI_SUM, &ctx),
			     -FI_EINVAL, "not a gba endpoint");
	}

	/* msg forms */
	rma.addr = ra(&e, 0);
	rma.count = 1;
	rma.key = e.a.key;
	msg.msg_iov = iov;
	msg.iov_count = 1;
	msg.addr = e.a.t.self;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 2;
	msg.datatype = FI_UINT64;
	msg.op = FI_SUM;
	msg.context = &ctx;
	cr_expect_eq(fi_atomicmsg(e.a.t.ep, &msg, 0), -FI_EINVAL,
		     "rma_iov_limit + 1");
	msg.rma_iov_count = 1;
	cr_expect_eq(fi_atomicmsg(e.a.t.ep, NULL, 0), -FI_EINVAL);
	cr_expect_eq(fi_atomicmsg(e.a.t.ep, &msg, FI_MULTI_RECV),
		     -FI_EBADFLAGS);
	cr_expect_eq(fi_atomicmsg(e.a.t.ep, &msg, GBA_FLAG_NO_CQ),
		     -FI_EBADFLAGS, "provider-private flag from the user");
	rma.count = 2;
	cr_expect_eq(fi_atomicmsg(e.a.t.ep, &msg, 0), -FI_EINVAL,
		     "1 operand for 2 targets");
	/* element counts whose byte size wraps around */
	big[0].addr = v;
	big[0].count = (size_t)1 << 61;
	big[1].addr = v;
	big[1].count = 1;
	msg.msg_iov = big;
	msg.iov_count = 2;
	rma.count = ((size_t)1 << 61) + 1;
	cr_expect_eq(fi_atomicmsg(e.a.t.ep, &msg, 0), -FI_EINVAL,
		     "2^61 + 1 elements of 8 bytes");
	big[0].count = SIZE_MAX;
	rma.count = 0;
	cr_expect_eq(fi_atomicmsg(e.a.t.ep, &msg, 0), -FI_EINVAL,
		     "element count sum wraps to 0");
	msg.msg_iov = iov;
	msg.iov_count = 1;
	rma.count = 1;
	resv.addr = res;
	resv.count = 2;
	cr_expect_eq(fi_fetch_atomicmsg(e.a.t.ep, &msg, &resv, NULL, 1, 0),
		     -FI_EINVAL, "2 results for 1 target");
	resv.count = 1;
	msg.op = FI_CSWAP;
	cr_expect_eq(fi_compare_atomicmsg(e.a.t.ep, &msg, NULL, NULL, 1, &resv,
					  NULL, 1, 0),
		     -FI_EINVAL, "NULL compare ioc");
	cr_expect_eq(e.a.region[0], 0, "performed although refused");
	cr_expect_eq(fi_cq_read(e.a.t.cq, res, 1), -FI_EAGAIN);
	cr_expect_eq(fi_cntr_read(e.wcntr) + fi_cntr_read(e.rcntr), 0);
	cr_expect_eq(fi_cntr_readerr(e.wcntr) + fi_cntr_readerr(e.rcntr), 0);
	catom_close(&e);
}

Test(atomic, destinations)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct gba_addr other = prov_absent_addr();
	struct catom_env e, peer;
	struct fid_ep *bare;
	struct fid_av *av;
	uint64_t v = 9, res = 0;
	fi_addr_t far, p;
	int ctx;

	catom_open(&e, FI_REMOTE_READ | FI_REMOTE_WRITE);
	catom_open(&peer, FI_REMOTE_READ | FI_REMOTE_WRITE);
	/* another endpoint of this process, under its own key */
	p = insert_name(e.a.t.av, peer.a.t.ep);
	peer.a.region[3] = 1;
	cr_assert_eq(fi_fetch_atomic(e.a.t.ep, &v, 1, NULL, &res, NULL, p,
				     ra(&peer, 3), peer.a.key, FI_UINT64,
				     FI_SUM, &ctx),
		     0);
	expect_acomp(&e, &ctx, FI_ATOMIC | FI_READ);
	cr_expect_eq(res, 1);
	cr_expect_eq(peer.a.region[3], 10);
	cr_expect_eq(fi_cntr_read(e.rcntr), 1, "the initiator counts");
	cr_expect_eq(fi_cntr_read(peer.rcntr), 0);
	/* another process */
	cr_assert_eq(fi_av_insert(e.a.t.av, &other, 1, &far, 0, NULL), 1);
	cr_expect_eq(fi_atomic(e.a.t.ep, &v, 1, NULL, far, 0, e.a.key,
			       FI_UINT64, FI_SUM, &ctx),
		     -FI_EHOSTUNREACH);
	cr_expect_eq(fi_inject_atomic(e.a.t.ep, &v, 1, far, 0, e.a.key,
				      FI_UINT64, FI_SUM),
		     -FI_EHOSTUNREACH);
	cr_expect_eq(fi_compare_atomic(e.a.t.ep, &v, 1, NULL, &v, NULL, &res,
				       NULL, far, 0, e.a.key, FI_UINT64,
				       FI_CSWAP, &ctx),
		     -FI_EHOSTUNREACH);
	cr_expect_eq(fi_atomic(e.a.t.ep, &v, 1, NULL, 777, 0, e.a.key,
			       FI_UINT64, FI_SUM, &ctx),
		     -FI_EINVAL, "not in the AV");
	/* not enabled */
	cr_assert_eq(fi_endpoint(t_domain, t_info, &bare, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &av, NULL), 0);
	cr_assert_eq(fi_ep_bind(bare, &av->fid, 0), 0);
	cr_expect_eq(fi_atomic(bare, &v, 1, NULL, 0, ra(&e, 0), e.a.key,
			       FI_UINT64, FI_SUM, &ctx),
		     -FI_EOPBADSTATE);
	cr_expect_eq(fi_close(&bare->fid), 0);
	cr_expect_eq(fi_close(&av->fid), 0);
	cr_expect_eq(fi_cq_read(e.a.t.cq, &res, 1), -FI_EAGAIN);
	cr_expect_eq(fi_cntr_readerr(e.wcntr), 0);
	cr_expect_eq(e.a.region[0], 0);
	catom_close(&peer);
	catom_close(&e);
}

Test(atomic, remote_cq_data)
{
	struct fi_cq_data_entry c;
	struct fi_rma_ioc rma;
	struct fi_ioc ioc;
	struct fi_msg_atomic msg = {0};
	struct catom_env e;
	uint64_t v = 4;
	int ctx;

	catom_open(&e, FI_REMOTE_READ | FI_REMOTE_WRITE);
	ioc.addr = &v;
	ioc.count = 1;
	rma.addr = ra(&e, 1);
	rma.count = 1;
	rma.key = e.a.key;
	msg.msg_iov = &ioc;
	msg.iov_count = 1;
	msg.addr = e.a.t.self;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 1;
	msg.datatype = FI_UINT64;
	msg.op = FI_SUM;
	msg.context = &ctx;
	msg.data = 0xfeed;
	cr_assert_eq(fi_atomicmsg(e.a.t.ep, &msg, FI_REMOTE_CQ_DATA), 0);
	cr_expect_eq(e.a.region[1], 4);
	/* the target's entry (the endpoint is its own target) */
	cr_assert_eq(fi_cq_read(e.a.t.cq, &c, 1), 1);
	cr_expect_eq(c.flags, FI_ATOMIC | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
		     "flags 0x%llx", (unsigned long long)c.flags);
	cr_expect_eq(c.data, 0xfeed);
	expect_acomp(&e, &ctx, FI_ATOMIC | FI_WRITE);
	cr_expect_eq(fi_cq_read(e.a.t.cq, &c, 1), -FI_EAGAIN);
	catom_close(&e);
}

/* Post a triggered fetching FI_SUM of 2 elements at @idx; the arrays
 * of this function are gone (overwritten) before it fires. */
static ssize_t post_triggered_fetch(struct catom_env *e, uint64_t *opnd,
				    uint64_t *res, size_t idx, uint64_t flags,
				    struct fi_triggered_context *tctx)
{
	struct fi_ioc ioc = {opnd, 2}, resv = {res, 2};
	struct fi_rma_ioc rma = {ra(e, idx), 2, e->a.key};
	struct fi_msg_atomic msg = {
		.msg_iov = &ioc,
		.iov_count = 1,
		.addr = e->a.t.self,
		.rma_iov = &rma,
		.rma_iov_count = 1,
		.datatype = FI_UINT64,
		.op = FI_SUM,
		.context = tctx,
	};
	ssize_t ret;

	ret = fi_fetch_atomicmsg(e->a.t.ep, &msg, &resv, NULL, 1,
				 flags | FI_TRIGGER);
	memset(&ioc, 0, sizeof(ioc));
	memset(&resv, 0, sizeof(resv));
	memset(&rma, 0xff, sizeof(rma));
	return ret;
}

Test(atomic, triggered_forms_fire_at_threshold)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct gba_addr other = prov_absent_addr();
	struct fi_triggered_context t1 = {0}, t2, t3;
	struct fi_msg_atomic msg = {0};
	struct fi_rma_ioc rma;
	struct fi_ioc ioc;
	struct fid_cntr *trig;
	struct fid_ep *bare;
	struct fid_av *av;
	struct catom_env e;
	uint64_t opnd[2] = {5, 6}, res[2] = {0, 0}, inj[2] = {1000, 2000};
	fi_addr_t far;

	catom_open(&e, FI_REMOTE_READ | FI_REMOTE_WRITE);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &trig, NULL), 0);
	t1.event_type = FI_TRIGGER_THRESHOLD;
	t1.trigger.threshold.cntr = trig;
	t1.trigger.threshold.threshold = 3;
	t2 = t1;
	t2.trigger.threshold.threshold = 4;
	t3 = t1;
	t3.trigger.threshold.threshold = 5;
	e.a.region[0] = 10;
	e.a.region[1] = 20;
	cr_assert_eq(post_triggered_fetch(&e, opnd, res, 0, FI_COMPLETION, &t1),
		     0);
	/* a triggered FI_INJECT atomic: operands copied when posted */
	ioc.addr = inj;
	ioc.count = 2;
	rma.addr = ra(&e, 8);
	rma.count = 2;
	rma.key = e.a.key;
	msg.msg_iov = &ioc;
	msg.iov_count = 1;
	msg.addr = e.a.t.self;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 1;
	msg.datatype = FI_UINT64;
	msg.op = FI_ATOMIC_WRITE;
	msg.context = &t2;
	cr_assert_eq(fi_atomicmsg(e.a.t.ep, &msg, FI_TRIGGER | FI_INJECT), 0);
	inj[0] = inj[1] = 0;
	/* a triggered one whose target is refused when it fires */
	rma.key = e.a.key + 5;
	msg.context = &t3;
	cr_assert_eq(fi_atomicmsg(e.a.t.ep, &msg, FI_TRIGGER), 0);

	cr_assert_eq(fi_cntr_add(trig, 2), 0);
	cr_expect(e.a.region[0] == 10 && res[0] == 0, "fired at 2 < 3");
	cr_expect_eq(fi_cq_read(e.a.t.cq, res, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	cr_expect(e.a.region[0] == 15 && e.a.region[1] == 26);
	cr_expect(res[0] == 10 && res[1] == 20);
	expect_acomp(&e, &t1, FI_ATOMIC | FI_READ);
	cr_expect_eq(e.a.region[8], 0, "inject fired at 3 < 4");
	cr_expect_eq(fi_cq_read(e.a.t.cq, res, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	cr_expect(e.a.region[8] == 1000 && e.a.region[9] == 2000,
		  "inject operands copied when posted");
	expect_acomp(&e, &t2, FI_ATOMIC | FI_WRITE);
	cr_expect_eq(fi_cq_read(e.a.t.cq, res, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	expect_aerr(&e, &t3, FI_EKEYREJECTED);
	cr_expect_eq(fi_cntr_read(e.rcntr), 1);
	cr_expect_eq(fi_cntr_read(e.wcntr), 1);
	cr_expect_eq(fi_cntr_readerr(e.wcntr), 1);

	/* refused when posted, as the immediate verb would be */
	t1.trigger.threshold.threshold = 100;
	msg.context = &t1;
	rma.key = e.a.key;
	msg.op = FI_BOR;
	msg.datatype = FI_DOUBLE;
	cr_expect_eq(fi_atomicmsg(e.a.t.ep, &msg, FI_TRIGGER), -FI_EOPNOTSUPP);
	msg.datatype = FI_UINT64;
	cr_assert_eq(fi_av_insert(e.a.t.av, &other, 1, &far, 0, NULL), 1);
	msg.addr = far;
	cr_expect_eq(fi_atomicmsg(e.a.t.ep, &msg, FI_TRIGGER),
		     -FI_EHOSTUNREACH);
	msg.addr = 0;
	cr_assert_eq(fi_endpoint(t_domain, t_info, &bare, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &av, NULL), 0);
	cr_assert_eq(fi_ep_bind(bare, &av->fid, 0), 0);
	cr_expect_eq(fi_atomicmsg(bare, &msg, FI_TRIGGER), -FI_EOPBADSTATE);
	cr_expect_eq(fi_close(&bare->fid), 0);
	cr_expect_eq(fi_close(&av->fid), 0);
	cr_assert_eq(fi_cntr_set(trig, 1000), 0);
	cr_expect_eq(fi_cq_read(e.a.t.cq, res, 1), -FI_EAGAIN);
	cr_expect_eq(e.a.region[8], 1000);
	cr_expect_eq(fi_close(&trig->fid), 0);
	catom_close(&e);
}

Test(atomic, triggered_destination_removed_before_firing)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_triggered_context tctx = {0};
	struct fi_msg_atomic msg = {0};
	struct fi_cq_data_entry c;
	struct fi_cq_err_entry ee;
	struct fi_rma_ioc rma;
	struct fi_ioc ioc;
	struct fid_cntr *trig;
	struct catom_env e, peer;
	uint64_t v = 3;
	fi_addr_t p;

	catom_open(&e, FI_REMOTE_READ | FI_REMOTE_WRITE);
	catom_open(&peer, FI_REMOTE_READ | FI_REMOTE_WRITE);
	p = insert_name(e.a.t.av, peer.a.t.ep);
	cr_assert_eq(fi_cntr_open(t_domain, &cattr, &trig, NULL), 0);
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = trig;
	tctx.trigger.threshold.threshold = 1;
	ioc.addr = &v;
	ioc.count = 1;
	rma.addr = ra(&peer, 0);
	rma.count = 1;
	rma.key = peer.a.key;
	msg.msg_iov = &ioc;
	msg.iov_count = 1;
	msg.addr = p;
	msg.rma_iov = &rma;
	msg.rma_iov_count = 1;
	msg.datatype = FI_UINT64;
	msg.op = FI_SUM;
	msg.context = &tctx;
	cr_assert_eq(fi_atomicmsg(e.a.t.ep, &msg, FI_TRIGGER), 0);
	cr_assert_eq(fi_av_remove(e.a.t.av, &p, 1, 0), 0);
	cr_assert_eq(fi_cntr_add(trig, 1), 0);
	cr_assert_eq(fi_cq_read(e.a.t.cq, &c, 1), -FI_EAVAIL);
	memset(&ee, 0, sizeof(ee));
	cr_assert_eq(fi_cq_readerr(e.a.t.cq, &ee, 0), 1);
	cr_expect_eq(ee.op_context, &tctx);
	cr_expect_eq(ee.flags, FI_ATOMIC | FI_WRITE, "flags 0x%llx",
		     (unsigned long long)ee.flags);
	cr_expect_eq(ee.err, FI_EINVAL, "err %d", ee.err);
	cr_expect_eq(fi_cntr_readerr(e.wcntr), 1);
	cr_expect_eq(peer.a.region[0], 0);
	cr_expect_eq(fi_close(&trig->fid), 0);
	catom_close(&peer);
	catom_close(&e);
}
