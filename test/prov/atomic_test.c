/*
 * Self (loopback) atomics of the gba provider through the stock
 * libfabric.  For every datatype x operation x kind (atomic, fetch,
 * compare): fi_query_atomic and the *valid calls must agree with the
 * documented table (integers: everything; float/double: no bitwise ops
 * or FI_MSWAP; complex and long double: nothing), and every supported
 * combination is executed on two elements and its target and result
 * checked against an independent reference model; unsupported ones must
 * be refused with -FI_EOPNOTSUPP and leave memory untouched.  Also:
 * concurrent atomic sums from threads, inject, errors, triggered atomics.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
