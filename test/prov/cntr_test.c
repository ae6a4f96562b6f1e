/*
 * Counters of the gba provider through the stock libfabric: read, add,
 * set, error values, wait with threshold/timeout, wait objects, close
 * while bound.
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "prov_common.h"

TestSuite(cntr, .init = prov_setup, .fini = prov_teardown, .timeout = 60);

static struct fid_cntr *open_cntr(enum fi_wait_obj wait_obj)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP,
		.wait_obj = wait_obj,
	};
	struct fid_cntr *cntr;
	int ret = fi_cntr_open(t_domain, &attr, &cntr, NULL);

	cr_assert_eq(ret, 0, "fi_cntr_open: %s", fi_strerror(-ret));
	return cntr;
}

Test(cntr, values)
{
	struct fid_cntr *c = open_cntr(FI_WAIT_NONE);
	struct gba_cntr *g = container_of(c, struct gba_cntr, cntr_fid);

	cr_expect_eq(fi_cntr_read(c), 0);
	cr_expect_eq(fi_cntr_readerr(c), 0);
	cr_expect_eq(fi_cntr_add(c, 5), 0);
	cr_expect_eq(fi_cntr_read(c), 5);
	cr_expect_eq(fi_cntr_set(c, 100), 0);
	cr_expect_eq(fi_cntr_read(c), 100);
	cr_expect_eq(fi_cntr_adderr(c, 3), 0);
	cr_expect_eq(fi_cntr_readerr(c), 3);
	cr_expect_eq(fi_cntr_seterr(c, 1), 0);
	cr_expect_eq(fi_cntr_readerr(c), 1);
	cr_expect_eq(fi_cntr_read(c), 100, "error value is separate");
	/* the provider's increments */
	gba_cntr_inc(g);
	gba_cntr_inc_err(g);
	cr_expect_eq(fi_cntr_read(c), 101);
	cr_expect_eq(fi_cntr_readerr(c), 2);
	cr_expect_eq(fi_cntr_set(c, UINT64_MAX), 0);
	gba_cntr_inc(g);
	cr_expect_eq(fi_cntr_read(c), 0, "64-bit wrap");
	cr_expect_eq(fi_close(&c->fid), 0);
}

Test(cntr, null_attr_defaults)
{
	struct fid_cntr *c;
	enum fi_wait_obj w;

	cr_assert_eq(fi_cntr_open(t_domain, NULL, &c, NULL), 0);
	cr_expect_eq(fi_control(&c->fid, FI_GETWAITOBJ, &w), 0);
	cr_expect_eq(w, FI_WAIT_NONE);
	cr_expect_eq(fi_close(&c->fid), 0);
}

Test(cntr, bad_open)
{
	struct fi_cntr_attr attr = {.events = FI_CNTR_EVENTS_COMP};
	struct fid_cntr *c;

	cr_expect_eq(fi_cntr_open(t_domain, &attr, NULL, NULL), -FI_EINVAL);
	attr.events = (enum fi_cntr_events)3;
	cr_expect_eq(fi_cntr_open(t_domain, &attr, &c, NULL), -FI_ENOSYS);
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.flags = 1;
	cr_expect_eq(fi_cntr_open(t_domain, &attr, &c, NULL), -FI_EINVAL);
	attr.flags = 0;
	attr.wait_obj = FI_WAIT_POLLFD;
	cr_expect_eq(fi_cntr_open(t_domain, &attr, &c, NULL), -FI_ENOSYS);
	attr.wait_obj = FI_WAIT_SET;
	cr_expect_eq(fi_cntr_open(t_domain, &attr, &c, NULL), -FI_EINVAL);
}

Test(cntr, limit)
{
	struct fid_cntr *c[GBA_CNTR_CNT];
	struct fid_cntr *extra;
	int i;

	for (i = 0; i < GBA_CNTR_CNT; i++)
		cr_assert_eq(fi_cntr_open(t_domain, NULL, &c[i], NULL), 0);
	cr_expect_eq(fi_cntr_open(t_domain, NULL, &extra, NULL), -FI_ENOSPC);
	for (i = 0; i < GBA_CNTR_CNT; i++)
		cr_assert_eq(fi_close(&c[i]->fid), 0);
}

Test(cntr, wait_timeout_all_wait_objects)
{
	enum fi_wait_obj w[] = {FI_WAIT_NONE, FI_WAIT_UNSPEC, FI_WAIT_FD,
				FI_WAIT_YIELD};
	uint64_t t0, dt;
	size_t i;

	for (i = 0; i < 4; i++) {
		struct fid_cntr *c = open_cntr(w[i]);

		cr_expect_eq(fi_cntr_add(c, 2), 0);
		cr_expect_eq(fi_cntr_wait(c, 2, 1000), 0, "reached at once");
		t0 = prov_now_ms();
		cr_expect_eq(fi_cntr_wait(c, 3, 100), -FI_ETIMEDOUT);
		dt = prov_now_ms() - t0;
		cr_expect(dt >= 95 && dt < 1000, "%s: timeout took %llu ms",
			  gba_wait_obj_str(w[i]), (unsigned long long)dt);
		cr_expect_eq(fi_cntr_readerr(c), 0,
			     "timeout leaves the error value alone");
		cr_expect_eq(fi_close(&c->fid), 0);
	}
}

struct bump {
	struct fid_cntr *c;
	int err;
};

static void *bumper(void *arg)
{
	struct bump *b = arg;
	int i;

	for (i = 0; i < 3; i++) {
		usleep(20000);
		if (b->err)
			fi_cntr_adderr(b->c, 1);
		else
			gba_cntr_inc(
				container_of(b->c, struct gba_cntr, cntr_fid));
	}
	return NULL;
}

Test(cntr, wait_wakes_on_change)
{
	enum fi_wait_obj w[] = {FI_WAIT_UNSPEC, FI_WAIT_FD, FI_WAIT_NONE};
	pthread_t th;
	size_t i;

	for (i = 0; i < 3; i++) {
		struct bump b = {.c = open_cntr(w[i])};
		uint64_t t0 = prov_now_ms();

		pthread_create(&th, NULL, bumper, &b);
		cr_expect_eq(fi_cntr_wait(b.c, 3, 5000), 0);
		cr_expect(prov_now_ms() - t0 < 2000);
		cr_expect_geq(fi_cntr_read(b.c), 3);
		pthread_join(th, NULL);
		cr_expect_eq(fi_close(&b.c->fid), 0);
	}
}

Test(cntr, wait_error_returns_eavail)
{
	struct bump b = {.c = open_cntr(FI_WAIT_UNSPEC), .err = 1};
	pthread_t th;

	pthread_create(&th, NULL, bumper, &b);
	cr_expect_eq(fi_cntr_wait(b.c, 1, 5000), -FI_EAVAIL);
	pthread_join(th, NULL);
	cr_expect_eq(fi_cntr_readerr(b.c), 3);
	cr_expect_eq(fi_close(&b.c->fid), 0);
}

Test(cntr, getwait_fd)
{
	struct fid_cntr *c = open_cntr(FI_WAIT_FD);
	struct fid *fids[1] = {&c->fid};
	struct pollfd pfd = {.events = POLLIN};
	int fd = -1;

	cr_assert_eq(fi_control(&c->fid, FI_GETWAIT, &fd), 0);
	pfd.fd = fd;
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), 0);
	cr_expect_eq(poll(&pfd, 1, 0), 0);
	cr_expect_eq(fi_cntr_add(c, 1), 0);
	cr_expect_eq(poll(&pfd, 1, 0), 1);
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), -FI_EAGAIN,
		     "value changed since the last read");
	cr_expect_eq(fi_cntr_read(c), 1);
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), 0);
	cr_expect_eq(fi_control(&c->fid, FI_GETWAIT, NULL), -FI_EINVAL);
	cr_expect_eq(fi_close(&c->fid), 0);

	c = open_cntr(FI_WAIT_UNSPEC);
	cr_expect_eq(fi_control(&c->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	cr_expect_eq(fi_close(&c->fid), 0);
}

/* Stand-in progress source: counts its calls. */
static int t_src_progress(void *ctx, bool *pending)
{
	(*(int *)ctx)++;
	return 0;
}

Test(cntr, close_busy_while_bound)
{
	struct fid_cntr *c = open_cntr(FI_WAIT_NONE);
	struct fid_ep *ep[2];
	int i;

	for (i = 0; i < 2; i++)
		cr_assert_eq(fi_endpoint(t_domain, t_info, &ep[i], NULL), 0);
	/* ep[0] bound for two events (two bindings), ep[1] for one */
	cr_assert_eq(fi_ep_bind(ep[0], &c->fid, FI_SEND | FI_RECV), 0);
	cr_assert_eq(fi_ep_bind(ep[1], &c->fid, FI_READ), 0);
	cr_expect_eq(fi_close(&c->fid), -FI_EBUSY);
	cr_expect_eq(fi_close(&ep[0]->fid), 0);
	cr_expect_eq(fi_close(&c->fid), -FI_EBUSY, "one binding left");
	cr_expect_eq(fi_close(&ep[1]->fid), 0);
	cr_expect_eq(fi_close(&c->fid), 0);
}

/* Bindings of one context are progressed once per read. */
Test(cntr, bound_progress_once_per_read)
{
	struct fid_cntr *c = open_cntr(FI_WAIT_NONE);
	struct gba_cntr *g = container_of(c, struct gba_cntr, cntr_fid);
	int calls = 0, other = 0;

	/* One endpoint bound for two events: two bindings. */
	cr_assert_eq(gba_cntr_bind_progress(g, &calls, t_src_progress), 0);
	cr_assert_eq(gba_cntr_bind_progress(g, &other, t_src_progress), 0);
	cr_assert_eq(gba_cntr_bind_progress(g, &calls, t_src_progress), 0);
	cr_expect_eq(fi_cntr_read(c), 0);
	cr_expect_eq(calls, 1, "progressed once per read");
	cr_expect_eq(other, 1);
	gba_cntr_unbind_progress(g, &other);
	cr_expect_eq(fi_close(&c->fid), -FI_EBUSY);
	gba_cntr_unbind_progress(g, &calls);
	cr_expect_eq(fi_close(&c->fid), -FI_EBUSY, "one binding left");
	gba_cntr_unbind_progress(g, &calls);
	cr_expect_eq(fi_close(&c->fid), 0);
}

Test(cntr, wait_set_member)
{
	struct fi_wait_attr wattr = {.wait_obj = FI_WAIT_FD};
	struct fi_cntr_attr attr = {.events = FI_CNTR_EVENTS_COMP,
				    .wait_obj = FI_WAIT_SET};
	struct fid_wait *ws;
	struct fid_cntr *c;
	struct pollfd pfd = {.events = POLLIN};
	int fd;

	cr_assert_eq(fi_wait_open(t_fabric, &wattr, &ws), 0);
	cr_assert_eq(fi_control(&ws->fid, FI_GETWAIT, &fd), 0);
	attr.wait_set = ws;
	cr_assert_eq(fi_cntr_open(t_domain, &attr, &c, NULL), 0);
	cr_expect_eq(fi_wait(ws, 10), -FI_ETIMEDOUT);
	cr_expect_eq(fi_cntr_add(c, 1), 0);
	pfd.fd = fd;
	cr_expect_eq(poll(&pfd, 1, 0), 1, "set fd signalled by its member");
	cr_expect_eq(fi_wait(ws, 1000), 0);
	cr_expect_eq(fi_cntr_read(c), 1);
	cr_expect_eq(fi_close(&c->fid), 0);
	cr_expect_eq(fi_close(&ws->fid), 0);
}

static void *inc_many(void *arg)
{
	struct gba_cntr *g = arg;
	int i;

	for (i = 0; i < 100000; i++)
		gba_cntr_inc(g);
	return NULL;
}

Test(cntr, concurrent_increments)
{
	struct fid_cntr *c = open_cntr(FI_WAIT_UNSPEC);
	struct gba_cntr *g = container_of(c, struct gba_cntr, cntr_fid);
	pthread_t th[3];
	int i;

	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, inc_many, g);
	cr_expect_eq(fi_cntr_wait(c, 300000, 20000), 0);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	cr_expect_eq(fi_cntr_read(c), 300000, "no lost increments");
	cr_expect_eq(fi_close(&c->fid), 0);
}
