/*
 * Endpoint helpers shared by the provider tests that need endpoints
 * (collectives, RMA, atomics); see ep_common.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "ep_common.h"

static char t_image[64];

void coll_setup(void)
{
	char dev[80];

	snprintf(t_image, sizeof(t_image), "/gba-provtest-%d", (int)getpid());
	snprintf(dev, sizeof(dev), "emu:%s", t_image);
	setenv("GBA_DEVICE", dev, 1);
	prov_setup();
}

void coll_teardown(void)
{
	prov_teardown();
	shm_unlink(t_image);
}

int tep_try_open(struct tep *t)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA};
	struct fi_cntr_attr cntr_attr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_eq_attr eq_attr = {.size = 64};
	int ret;

	memset(t, 0, sizeof(*t));
	if ((ret = fi_endpoint(t_domain, t_info, &t->ep, NULL)) ||
	    (ret = fi_av_open(t_domain, &av_attr, &t->av, NULL)) ||
	    (ret = fi_eq_open(t_fabric, &eq_attr, &t->eq, NULL)) ||
	    (ret = fi_cq_open(t_domain, &cq_attr, &t->cq, NULL)) ||
	    (ret = fi_cntr_open(t_domain, &cntr_attr, &t->cntr, NULL)) ||
	    (ret = fi_ep_bind(t->ep, &t->av->fid, 0)) ||
	    (ret = fi_ep_bind(t->ep, &t->eq->fid, 0)) ||
	    (ret = fi_ep_bind(t->ep, &t->cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_ep_bind(t->ep, &t->cntr->fid, FI_SEND)))
		return ret;
	return fi_enable(t->ep);
}

void tep_open(struct tep *t, struct fid_av *shared_av)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA};
	struct fi_cntr_attr cntr_attr = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_eq_attr eq_attr = {.size = 64};

	memset(t, 0, sizeof(*t));
	cr_assert_eq(fi_endpoint(t_domain, t_info, &t->ep, NULL), 0);
	if (shared_av)
		t->av = shared_av;
	else
		cr_assert_eq(fi_av_open(t_domain, &av_attr, &t->av, NULL), 0);
	cr_assert_eq(fi_eq_open(t_fabric, &eq_attr, &t->eq, NULL), 0);
	cr_assert_eq(fi_cq_open(t_domain, &cq_attr, &t->cq, NULL), 0);
	cr_assert_eq(fi_cntr_open(t_domain, &cntr_attr, &t->cntr, NULL), 0);
	cr_assert_eq(fi_ep_bind(t->ep, &t->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(t->ep, &t->eq->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(t->ep, &t->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_ep_bind(t->ep, &t->cntr->fid, FI_SEND), 0);
	cr_assert_eq(fi_enable(t->ep), 0);
}

void tep_close(struct tep *t, bool close_av)
{
	cr_expect_eq(fi_close(&t->ep->fid), 0);
	cr_expect_eq(fi_close(&t->cntr->fid), 0);
	cr_expect_eq(fi_close(&t->cq->fid), 0);
	cr_expect_eq(fi_close(&t->eq->fid), 0);
	if (close_av)
		cr_expect_eq(fi_close(&t->av->fid), 0);
}

/* Insert the name of @ep into @av; returns its fi_addr. */
fi_addr_t insert_name(struct fid_av *av, struct fid_ep *ep)
{
	char name[64];
	size_t len = sizeof(name);
	fi_addr_t a;

	cr_assert_eq(fi_getname(&ep->fid, name, &len), 0);
	cr_assert_eq(fi_av_insert(av, name, 1, &a, 0, NULL), 1);
	return a;
}

/* An AV set of @n addresses of @av. */
struct fid_av_set *make_set(struct fid_av *av, const fi_addr_t *a, size_t n)
{
	struct fi_av_set_attr attr = {
		.count = n,
		.start_addr = FI_ADDR_NOTAVAIL,
		.end_addr = FI_ADDR_NOTAVAIL,
	};
	struct fid_av_set *set;
	size_t i;

	cr_assert_eq(fi_av_set(av, &attr, &set, NULL), 0);
	for (i = 0; i < n; i++)
		cr_assert_eq(fi_av_set_insert(set, a[i]), 0);
	return set;
}

/* Join @set on @t and consume FI_JOIN_COMPLETE; returns the mc. */
struct fid_mc *join(struct tep *t, struct fid_av_set *set, void *ctx)
{
	struct fi_eq_entry entry;
	struct fid_mc *mc;
	uint32_t event;
	ssize_t ret;

	ret = fi_join_collective(t->ep, FI_ADDR_NOTAVAIL, set, 0, &mc, ctx);
	cr_assert_eq(ret, 0, "join: %s", fi_strerror((int)-ret));
	ret = fi_eq_read(t->eq, &event, &entry, sizeof(entry), 0);
	cr_assert_eq(ret, sizeof(entry), "eq read: %zd", ret);
	cr_assert_eq(event, FI_JOIN_COMPLETE);
	cr_assert_eq(entry.fid, &mc->fid);
	cr_assert_eq(entry.context, ctx);
	return mc;
}

/* Poll @cq up to @polls times; 1 with *@e filled, 0, or -FI_EAVAIL. */
int poll_cq(struct fid_cq *cq, int polls, struct fi_cq_data_entry *e)
{
	ssize_t ret;

	while (polls-- > 0) {
		ret = fi_cq_read(cq, e, 1);
		if (ret == 1)
			return 1;
		if (ret == -FI_EAVAIL)
			return -FI_EAVAIL;
		cr_assert_eq(ret, -FI_EAGAIN, "cq read: %zd", ret);
	}
	return 0;
}
