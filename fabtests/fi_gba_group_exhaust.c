/*
 * fi_gba_group_exhaust - the device's group and member limits.
 *
 * One process, on a private emulated device image unless GBA_DEVICE or
 * FI_GBA_DEVICE names one:
 *   - 32 collectives join (each join of the same one-member set is a new
 *     hardware group) and each completes a barrier;
 *   - the 33rd join finds no hardware group: its barrier runs in
 *     software over the fabric engine and completes too;
 *   - closing one collective frees its group: the next join takes it;
 *   - sets of 708 and of 709 members join (the latter in software).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gba/gba_addr.h>

#include "gba_ft_common.h"

#define GROUPS 32
#define MEMBERS 708

/* A barrier on @mc completes. */
static int barrier_ok(struct ft_res *r, struct fid_mc *mc, int timeout_ms)
{
	struct fi_cq_data_entry comp;

	FT_CHECK(fi_barrier(r->ep, fi_mc_addr(mc), mc));
	FT_CHECK(ft_wait_comp(r, &comp, timeout_ms));
	return comp.op_context == mc ? 0
				     : ft_err("barrier context", -FI_EOTHER);
}

/* 32 groups, the 33rd refused, one freed and reused. */
static int check_groups(struct ft_res *r, struct fid_av_set *self_set,
			int timeout_ms)
{
	struct fid_mc *mc[GROUPS + 1];
	int i, ret;

	for (i = 0; i < GROUPS; i++) {
		ret = ft_join(r, self_set, &mc[i]);
		if (ret)
			return ft_err("join below the limit", ret);
	}
	ret = ft_join(r, self_set, &mc[GROUPS]);
	if (ret)
		return ft_err("33rd join (software barrier)", ret);
	for (i = 0; i <= GROUPS; i++)
		FT_CHECK(barrier_ok(r, mc[i], timeout_ms));
	FT_CHECK(fi_close(&mc[GROUPS]->fid));
	FT_CHECK(fi_close(&mc[5]->fid));
	FT_CHECK(ft_join(r, self_set, &mc[5]));
	FT_CHECK(barrier_ok(r, mc[5], timeout_ms));
	for (i = 0; i < GROUPS; i++)
		FT_CHECK(fi_close(&mc[i]->fid));
	return 0;
}

/* A set of @n members: this endpoint plus made-up addresses. */
static int make_big_set(struct ft_res *r, size_t n, struct fid_av_set **set)
{
	struct fi_av_set_attr attr = {.start_addr = FI_ADDR_NOTAVAIL,
				      .end_addr = FI_ADDR_NOTAVAIL};
	struct gba_addr self, a;
	size_t len = sizeof(self), i;
	fi_addr_t fa;

	FT_CHECK(fi_getname(&r->ep->fid, &self, &len));
	FT_CHECK(fi_av_set(r->av, &attr, set, NULL));
	FT_CHECK(fi_av_set_insert(*set, 0)); /* this endpoint */
	for (i = 1; i < n; i++) {
		a = self;
		a.ep_id = self.ep_id + 1000000 + (uint32_t)i;
		if (fi_av_insert(r->av, &a, 1, &fa, 0, NULL) != 1)
			return ft_err("fi_av_insert", -FI_EINVAL);
		FT_CHECK(fi_av_set_insert(*set, fa));
	}
	return 0;
}

/* 709 members join (software barrier), 708 too (device). */
static int check_members(struct ft_res *r)
{
	struct fid_av_set *set;
	struct fid_mc *mc;

	FT_CHECK(make_big_set(r, MEMBERS + 1, &set));
	FT_CHECK(ft_join(r, set, &mc));
	FT_CHECK(fi_close(&mc->fid));
	FT_CHECK(fi_av_set_remove(set, (fi_addr_t)MEMBERS));
	FT_CHECK(ft_join(r, set, &mc));
	FT_CHECK(fi_close(&mc->fid));
	FT_CHECK(fi_close(&set->fid));
	return 0;
}

static int exhaust_run(const struct ft_opts *o)
{
	struct fi_collective_attr cattr = {.op = FI_NOOP};
	struct fi_av_set_attr attr = {
		.count = 1, .start_addr = 0, .end_addr = 0, .stride = 1};
	struct fid_av_set *self_set;
	struct ft_res r;
	size_t len = FT_NAME_LEN;
	char name[FT_NAME_LEN];
	fi_addr_t self;
	int ret;

	ret = ft_open(&r, o->prov, FI_COLLECTIVE);
	if (ret)
		return ret;
	FT_CHECK(fi_query_collective(r.domain, FI_BARRIER, &cattr, 0));
	if (cattr.max_members < MEMBERS + 1)
		return ft_err("max_members (software beyond 708)", -FI_EOTHER);
	FT_CHECK(fi_getname(&r.ep->fid, name, &len));
	if (fi_av_insert(r.av, name, 1, &self, 0, NULL) != 1 || self != 0)
		return ft_err("fi_av_insert", -FI_EINVAL);
	FT_CHECK(fi_av_set(r.av, &attr, &self_set, NULL));
	ret = check_groups(&r, self_set, o->timeout_s * 1000);
	if (ret)
		return ret;
	ret = check_members(&r);
	if (ret)
		return ret;
	FT_CHECK(fi_close(&self_set->fid));
	ft_close(&r);
	printf("fi_gba_group_exhaust: %d groups joined, 33rd in software, "
	       "freed group reused, 708 and 709 members joined\n",
	       GROUPS);
	return 0;
}

int main(int argc, char **argv)
{
	struct ft_opts o = {
		.prov = "gba", .iters = 1, .nprocs = 1, .timeout_s = 60};
	char image[64], dev[80];
	int ret;

	ft_parse(argc, argv, &o, "fi_gba_group_exhaust", NULL);
	image[0] = 0;
	if (!getenv("GBA_DEVICE") && !getenv("FI_GBA_DEVICE")) {
		snprintf(image, sizeof(image), "/gba-exhaust-%d",
			 (int)getpid());
		snprintf(dev, sizeof(dev), "emu:%s", image);
		setenv("GBA_DEVICE", dev, 1);
	}
	ret = exhaust_run(&o);
	if (image[0])
		shm_unlink(image);
	return ret ? 1 : 0;
}
