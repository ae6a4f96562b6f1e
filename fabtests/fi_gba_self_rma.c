/*
 * fi_gba_self_rma - loopback ("self") RMA and atomics conformance.
 *
 * One process registers a buffer (FI_REMOTE_READ | FI_REMOTE_WRITE),
 * inserts its own address and, for sizes 1 B .. 1 MiB, runs fi_write,
 * fi_writev, fi_writemsg, fi_inject_write (up to the inject size),
 * fi_read, fi_readv and fi_readmsg against itself, then fi_atomic (sum),
 * fi_fetch_atomic and fi_compare_atomic, and a triggered fi_writemsg that
 * must not land before its counter's threshold.  Every byte, every
 * result, every completion and the counter are checked.  -I repeats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gba_ft_common.h"

#define MAX_SIZE (1 << 20)

struct self_env {
	struct ft_res r;
	struct fid_mr *mr;
	uint8_t *region, *src, *dst;
	uint64_t key;
	uint64_t ops; /* completions the counter must have seen */
	int timeout_ms;
};

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 13 + (i >> 9));
}

/* One completion with @ctx and @flags. */
static int comp_ok(struct self_env *e, void *ctx, uint64_t flags)
{
	struct fi_cq_data_entry c;

	FT_CHECK(ft_wait_comp(&e->r, &c, e->timeout_ms));
	if (c.op_context != ctx || c.flags != flags)
		return ft_err("completion context/flags", -FI_EOTHER);
	e->ops++;
	return 0;
}

static int bytes_ok(const void *a, const void *b, size_t n, const char *what,
		    size_t size)
{
	if (memcmp(a, b, n)) {
		fprintf(stderr,
			"fi_gba_self_rma: %s of %zu bytes: data "
			"mismatch\n",
			what, size);
		return -FI_EOTHER;
	}
	return 0;
}

/* Every RMA verb at one size. */
static int rma_size(struct self_env *e, size_t n, unsigned seed)
{
	uint64_t base = (uint64_t)(uintptr_t)e->region;
	struct iovec iov[2] = {{e->src, n / 2}, {e->src + n / 2, n - n / 2}};
	struct fi_rma_iov rma = {base, n, e->key};
	struct fi_msg_rma msg = {.msg_iov = iov,
				 .iov_count = 2,
				 .addr = 0,
				 .rma_iov = &rma,
				 .rma_iov_count = 1};
	int ctx;

	fill(e->src, n, seed);
	FT_CHECK(fi_write(e->r.ep, e->src, n, NULL, 0, base, e->key, &ctx));
	FT_CHECK(comp_ok(e, &ctx, FI_RMA | FI_WRITE));
	FT_CHECK(bytes_ok(e->region, e->src, n, "fi_write", n));
	memset(e->dst, 0, n);
	FT_CHECK(fi_read(e->r.ep, e->dst, n, NULL, 0, base, e->key, &ctx));
	FT_CHECK(comp_ok(e, &ctx, FI_RMA | FI_READ));
	FT_CHECK(bytes_ok(e->dst, e->src, n, "fi_read", n));

	fill(e->src, n, seed + 1);
	FT_CHECK(fi_writev(e->r.ep, iov, NULL, 2, 0, base, e->key, &ctx));
	FT_CHECK(comp_ok(e, &ctx, FI_RMA | FI_WRITE));
	FT_CHECK(bytes_ok(e->region, e->src, n, "fi_writev", n));
	fill(e->src, n, seed + 2);
	msg.context = &ctx;
	FT_CHECK(fi_writemsg(e->r.ep, &msg, FI_COMPLETION));
	FT_CHECK(comp_ok(e, &ctx, FI_RMA | FI_WRITE));
	FT_CHECK(bytes_ok(e->region, e->src, n, "fi_writemsg", n));

	iov[0].iov_base = e->dst;
	iov[1].iov_base = e->dst + n / 2;
	memset(e->dst, 0, n);
	FT_CHECK(fi_readv(e->r.ep, iov, NULL, 2, 0, base, e->key, &ctx));
	FT_CHECK(comp_ok(e, &ctx, FI_RMA | FI_READ));
	FT_CHECK(bytes_ok(e->dst, e->src, n, "fi_readv", n));
	memset(e->dst, 0, n);
	FT_CHECK(fi_readmsg(e->r.ep, &msg, FI_COMPLETION));
	FT_CHECK(comp_ok(e, &ctx, FI_RMA | FI_READ));
	FT_CHECK(bytes_ok(e->dst, e->src, n, "fi_readmsg", n));

	if (n <= e->r.info->tx_attr->inject_size) {
		fill(e->src, n, seed + 3);
		FT_CHECK(fi_inject_write(e->r.ep, e->src, n, 0, base, e->key));
		e->ops++; /* counted, no CQ entry */
		FT_CHECK(bytes_ok(e->region, e->src, n, "fi_inject_write", n));
	}
	return 0;
}

/* Atomics on the first words of the region. */
static int atomics(struct self_env *e)
{
	uint64_t *t = (uint64_t *)e->region, base = (uint64_t)(uintptr_t)t;
	uint64_t v = 5, res = 0, cmp;
	int ctx;

	t[0] = 10;
	FT_CHECK(fi_atomic(e->r.ep, &v, 1, NULL, 0, base, e->key, FI_UINT64,
			   FI_SUM, &ctx));
	FT_CHECK(comp_ok(e, &ctx, FI_ATOMIC | FI_WRITE));
	if (t[0] != 15)
		return ft_err("fi_atomic FI_SUM", -FI_EOTHER);
	FT_CHECK(fi_fetch_atomic(e->r.ep, &v, 1, NULL, &res, NULL, 0, base,
				 e->key, FI_UINT64, FI_SUM, &ctx));
	FT_CHECK(comp_ok(e, &ctx, FI_ATOMIC | FI_READ));
	if (res != 15 || t[0] != 20)
		return ft_err("fi_fetch_atomic FI_SUM", -FI_EOTHER);
	cmp = 20;
	v = 99;
	FT_CHECK(fi_compare_atomic(e->r.ep, &v, 1, NULL, &cmp, NULL, &res, NULL,
				   0, base, e->key, FI_UINT64, FI_CSWAP, &ctx));
	FT_CHECK(comp_ok(e, &ctx, FI_ATOMIC | FI_READ));
	if (res != 20 || t[0] != 99)
		return ft_err("fi_compare_atomic FI_CSWAP", -FI_EOTHER);
	cmp = 1; /* no match: unchanged */
	FT_CHECK(fi_compare_atomic(e->r.ep, &v, 1, NULL, &cmp, NULL, &res, NULL,
				   0, base, e->key, FI_UINT64, FI_CSWAP, &ctx));
	FT_CHECK(comp_ok(e, &ctx, FI_ATOMIC | FI_READ));
	if (res != 99 || t[0] != 99)
		return ft_err("fi_compare_atomic no match", -FI_EOTHER);
	return 0;
}

/* A triggered write lands exactly when its counter reaches 2. */
static int triggered(struct self_env *e, struct fid_cntr *trig)
{
	struct fi_triggered_context tctx = {.event_type = FI_TRIGGER_THRESHOLD};
	struct iovec iov = {e->src, 256};
	struct fi_rma_iov rma = {(uint64_t)(uintptr_t)e->region + 4096, 256,
				 e->key};
	struct fi_msg_rma msg = {.msg_iov = &iov,
				 .iov_count = 1,
				 .addr = 0,
				 .rma_iov = &rma,
				 .rma_iov_count = 1,
				 .context = &tctx};

	tctx.trigger.threshold.cntr = trig;
	tctx.trigger.threshold.threshold = fi_cntr_read(trig) + 2;
	fill(e->src, 256, 77);
	memset(e->region + 4096, 0, 256);
	FT_CHECK(fi_writemsg(e->r.ep, &msg, FI_TRIGGER | FI_COMPLETION));
	FT_CHECK(fi_cntr_add(trig, 1));
	if (!memcmp(e->region + 4096, e->src, 256))
		return ft_err("triggered write landed early", -FI_EOTHER);
	FT_CHECK(fi_cntr_add(trig, 1));
	FT_CHECK(bytes_ok(e->region + 4096, e->src, 256, "triggered write",
			  256));
	return comp_ok(e, &tctx, FI_RMA | FI_WRITE);
}

static int self_run(const struct ft_opts *o)
{
	struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP};
	struct self_env e = {.timeout_ms = o->timeout_s * 1000};
	struct fid_cntr *trig;
	size_t len = FT_NAME_LEN, n, sizes = 0;
	char name[FT_NAME_LEN];
	fi_addr_t self;
	long it;
	int ret;

	ret = ft_open(&e.r, o->prov, FI_RMA | FI_ATOMIC | FI_TRIGGER);
	if (ret)
		return ret;
	e.region = calloc(1, MAX_SIZE);
	e.src = malloc(MAX_SIZE);
	e.dst = malloc(MAX_SIZE);
	if (!e.region || !e.src || !e.dst)
		return ft_err("malloc", -FI_ENOMEM);
	FT_CHECK(fi_mr_reg(e.r.domain, e.region, MAX_SIZE,
			   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &e.mr,
			   NULL));
	e.key = fi_mr_key(e.mr);
	FT_CHECK(fi_getname(&e.r.ep->fid, name, &len));
	if (fi_av_insert(e.r.av, name, 1, &self, 0, NULL) != 1 || self != 0)
		return ft_err("fi_av_insert", -FI_EINVAL);
	FT_CHECK(fi_cntr_open(e.r.domain, &cattr, &trig, NULL));

	for (it = 0; it < o->iters; it++) {
		for (n = 1, sizes = 0; n <= MAX_SIZE; n *= 2, sizes++) {
			ret = rma_size(&e, n, (unsigned)(n + it));
			if (ret)
				return ret;
		}
		FT_CHECK(atomics(&e));
		FT_CHECK(triggered(&e, trig));
	}
	if (fi_cntr_read(e.r.cntr) != e.ops)
		return ft_err("counter", -FI_EOTHER);
	FT_CHECK(fi_close(&trig->fid));
	FT_CHECK(fi_close(&e.mr->fid));
	ft_close(&e.r);
	free(e.region);
	free(e.src);
	free(e.dst);
	printf("fi_gba_self_rma: %ld x (%zu sizes 1 B..1 MiB x 7 RMA verbs, "
	       "3 atomics, 1 triggered write): %llu operations verified\n",
	       o->iters, sizes, (unsigned long long)e.ops);
	return 0;
}

int main(int argc, char **argv)
{
	struct ft_opts o = {
		.prov = "gba", .iters = 1, .nprocs = 1, .timeout_s = 60};

	ft_parse(argc, argv, &o, "fi_gba_self_rma", NULL);
	return self_run(&o) ? 1 : 0;
}
