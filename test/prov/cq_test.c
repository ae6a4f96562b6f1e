/*
 * Completion queues of the gba provider through the stock libfabric.
 * Completions are injected with the CQ's extension ops
 * (fi_open_ops(FI_GBA_CQ_OPS_1)), the same entry points the
 * endpoint code uses (gba_cq_write / gba_cq_write_error_data).
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "prov_common.h"

TestSuite(cq, .init = prov_setup, .fini = prov_teardown, .timeout = 60);
TestSuite(cq_nolock, .timeout = 60);

static struct fi_gba_cq_ops *ext;

static struct fid_cq *open_cq(size_t size, enum fi_cq_format format,
			      enum fi_wait_obj wait_obj)
{
	struct fi_cq_attr attr = {
		.size = size,
		.format = format,
		.wait_obj = wait_obj,
	};
	struct fid_cq *cq;
	int ret;

	ret = fi_cq_open(t_domain, &attr, &cq, NULL);
	cr_assert_eq(ret, 0, "fi_cq_open: %s", fi_strerror(-ret));
	ret = fi_open_ops(&cq->fid, FI_GBA_CQ_OPS_1, 0, (void **)&ext,
			  NULL);
	cr_assert_eq(ret, 0, "fi_open_ops: %s", fi_strerror(-ret));
	return cq;
}

static int ctxs[64];

static void write_n(struct fid_cq *cq, int n)
{
	int i;

	for (i = 0; i < n; i++)
		cr_assert_eq(ext->write(cq, &ctxs[i], FI_RMA | FI_WRITE,
					100 + (size_t)i, &ctxs[i],
					1000 + (uint64_t)i, 2000 + (uint64_t)i,
					FI_ADDR_NOTAVAIL),
			     0);
}

/* FI_GBA_CQ_OPS_1 refuses bad arguments and queues nothing. */
Test(cq, ext_ops_bad_arguments)
{
	struct fid_cq *cq = open_cq(4, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	struct fi_cq_entry e;

	cr_expect_eq(ext->write(NULL, &ctxs[0], FI_SEND, 0, NULL, 0, 0,
				FI_ADDR_NOTAVAIL),
		     -FI_EINVAL);
	cr_expect_eq(ext->write_error(NULL, &ctxs[0], FI_SEND, FI_EIO, 0, 0, 0,
				      NULL, 0),
		     -FI_EINVAL);
	cr_expect_eq(ext->write_error(cq, &ctxs[0], FI_SEND, 0, 0, 0, 0, NULL,
				      0),
		     -FI_EINVAL, "err must be a positive FI_E* code");
	cr_expect_eq(ext->write_error(cq, &ctxs[0], FI_SEND, -FI_EIO, 0, 0, 0,
				      NULL, 0),
		     -FI_EINVAL);
	cr_expect_eq(fi_cq_read(cq, &e, 1), -FI_EAGAIN, "nothing queued");
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, format_context)
{
	struct fid_cq *cq = open_cq(8, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	struct fi_cq_entry e[4];

	write_n(cq, 3);
	cr_assert_eq(fi_cq_read(cq, e, 4), 3);
	cr_expect_eq(e[0].op_context, &ctxs[0]);
	cr_expect_eq(e[2].op_context, &ctxs[2]);
	cr_expect_eq(fi_cq_read(cq, e, 4), -FI_EAGAIN);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, format_unspec_is_context)
{
	struct fid_cq *cq = open_cq(8, FI_CQ_FORMAT_UNSPEC, FI_WAIT_NONE);
	struct fi_cq_entry e[2] = {{0}, {(void *)1}};

	write_n(cq, 1);
	cr_assert_eq(fi_cq_read(cq, e, 2), 1);
	cr_expect_eq(e[0].op_context, &ctxs[0]);
	cr_expect_eq(e[1].op_context, (void *)1, "only one entry written");
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, format_msg)
{
	struct fid_cq *cq = open_cq(8, FI_CQ_FORMAT_MSG, FI_WAIT_NONE);
	struct fi_cq_msg_entry e[2];

	write_n(cq, 2);
	cr_assert_eq(fi_cq_read(cq, e, 2), 2);
	cr_expect_eq(e[1].op_context, &ctxs[1]);
	cr_expect_eq(e[1].flags, FI_RMA | FI_WRITE);
	cr_expect_eq(e[1].len, 101);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, format_data)
{
	struct fid_cq *cq = open_cq(8, FI_CQ_FORMAT_DATA, FI_WAIT_NONE);
	struct fi_cq_data_entry e[2];

	write_n(cq, 2);
	cr_assert_eq(fi_cq_read(cq, e, 2), 2);
	cr_expect_eq(e[1].buf, &ctxs[1]);
	cr_expect_eq(e[1].data, 1001);
	cr_expect_eq(e[0].len, 100);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, format_tagged_and_readfrom)
{
	struct fid_cq *cq = open_cq(8, FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE);
	struct fi_cq_tagged_entry e[3];
	fi_addr_t src[3];

	write_n(cq, 2);
	cr_assert_eq(ext->write(cq, NULL, 0, 0, NULL, 0, 0, 42), 0);
	cr_assert_eq(fi_cq_readfrom(cq, e, 3, src), 3);
	cr_expect_eq(e[0].tag, 2000);
	cr_expect_eq(e[1].tag, 2001);
	cr_expect_eq(e[1].data, 1001);
	cr_expect_eq(src[0], FI_ADDR_NOTAVAIL);
	cr_expect_eq(src[2], 42);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, bad_open)
{
	struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_CONTEXT};
	struct fid_cq *cq;

	cr_expect_eq(fi_cq_open(t_domain, NULL, &cq, NULL), -FI_EINVAL);
	attr.format = (enum fi_cq_format)42;
	cr_expect_eq(fi_cq_open(t_domain, &attr, &cq, NULL), -FI_ENOSYS);
	attr.format = FI_CQ_FORMAT_CONTEXT;
	attr.wait_obj = FI_WAIT_MUTEX_COND;
	cr_expect_eq(fi_cq_open(t_domain, &attr, &cq, NULL), -FI_ENOSYS);
	attr.wait_obj = (enum fi_wait_obj)77;
	cr_expect_eq(fi_cq_open(t_domain, &attr, &cq, NULL), -FI_EINVAL);
	attr.wait_obj = FI_WAIT_SET;
	cr_expect_eq(fi_cq_open(t_domain, &attr, &cq, NULL), -FI_EINVAL,
		     "FI_WAIT_SET without a set");
	attr.wait_obj = FI_WAIT_NONE;
	attr.size = GBA_CQ_MAX_SIZE + 1;
	cr_expect_eq(fi_cq_open(t_domain, &attr, &cq, NULL), -FI_EINVAL);
	attr.size = 0;
	attr.flags = FI_WRITE;
	cr_expect_eq(fi_cq_open(t_domain, &attr, &cq, NULL), -FI_EINVAL);
	attr.flags = 0;
	attr.wait_cond = (enum fi_cq_wait_cond)5;
	cr_expect_eq(fi_cq_open(t_domain, &attr, &cq, NULL), -FI_EINVAL);
}

Test(cq, default_size_and_limit)
{
	struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_CONTEXT};
	struct fid_cq *cq[GBA_CQ_CNT + 1];
	struct gba_cq *g;
	int i, ret;

	cr_assert_eq(fi_cq_open(t_domain, &attr, &cq[0], NULL), 0);
	g = container_of(cq[0], struct gba_cq, cq_fid);
	cr_expect_eq(g->size, (size_t)GBA_CQ_DEF_SIZE,
		     "FI_GBA_CQ_SIZE default");
	attr.size = 1;
	for (i = 1; i < GBA_CQ_CNT; i++) {
		ret = fi_cq_open(t_domain, &attr, &cq[i], NULL);
		cr_assert_eq(ret, 0, "CQ %d: %s", i, fi_strerror(-ret));
	}
	cr_expect_eq(fi_cq_open(t_domain, &attr, &cq[i], NULL), -FI_ENOSPC,
		     "cq_cnt is a real limit");
	for (i = 0; i < GBA_CQ_CNT; i++)
		cr_assert_eq(fi_close(&cq[i]->fid), 0);
}

Test(cq, overflow)
{
	struct fid_cq *cq = open_cq(4, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	struct fi_cq_entry e[8];

	cr_expect(ext->has_space(cq, 4));
	cr_expect_not(ext->has_space(cq, 5));
	write_n(cq, 4);
	cr_expect_not(ext->has_space(cq, 1));
	cr_assert_eq(fi_cq_read(cq, e, 2), 2);
	cr_expect(ext->has_space(cq, 2));
	write_n(cq, 2);
	cr_assert_eq(fi_cq_read(cq, e, 8), 4);
	cr_expect_eq(e[0].op_context, &ctxs[2], "FIFO across the wrap");
	cr_expect_eq(e[2].op_context, &ctxs[0]);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

/*
 * A completion that finds the CQ full (an operation's completion after
 * others filled it, a burst of receives) is kept, in order, errors
 * included: a lost completion would hang its owner.
 */
Test(cq, full_keeps_completions_in_order)
{
	struct fid_cq *cq = open_cq(4, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	struct fi_cq_err_entry err;
	struct fi_cq_entry e[8];
	uint64_t info = 7;
	int i;

	write_n(cq, 8); /* ctxs[0..7]: four of them overflow */
	cr_assert_eq(ext->write_error(cq, &ctxs[8], FI_RMA, FI_EIO, 5, 0, 0,
				      &info, sizeof(info)),
		     0);
	cr_assert_eq(ext->write(cq, &ctxs[9], 0, 0, NULL, 0, 0, 0), 0);
	cr_expect_not(ext->has_space(cq, 1), "the overflow counts as used");
	cr_assert_eq(fi_cq_read(cq, e, 3), 3);
	for (i = 0; i < 3; i++)
		cr_expect_eq(e[i].op_context, &ctxs[i]);
	cr_expect_not(ext->has_space(cq, 1), "refilled from the overflow");
	cr_assert_eq(fi_cq_read(cq, e, 8), 5, "the rest, up to the error");
	for (i = 0; i < 5; i++)
		cr_expect_eq(e[i].op_context, &ctxs[3 + i]);
	cr_assert_eq(fi_cq_read(cq, e, 8), -FI_EAVAIL);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	cr_expect_eq(err.op_context, &ctxs[8]);
	cr_expect_eq(err.err, FI_EIO);
	cr_expect_eq(err.prov_errno, 5);
	cr_expect_eq(err.err_data_size, sizeof(info));
	cr_expect_eq(*(const uint64_t *)err.err_data, 7);
	cr_assert_eq(fi_cq_read(cq, e, 8), 1);
	cr_expect_eq(e[0].op_context, &ctxs[9]);
	cr_expect_eq(fi_cq_read(cq, e, 8), -FI_EAGAIN);
	cr_expect(ext->has_space(cq, 4));
	write_n(cq, 6); /* left in the overflow at close: freed */
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, errors_keep_their_place)
{
	struct fid_cq *cq = open_cq(8, FI_CQ_FORMAT_DATA, FI_WAIT_NONE);
	struct fi_cq_data_entry e[8];
	struct fi_cq_err_entry err;
	uint64_t info = 0x0102030405060708ULL;
	uint8_t small[4];
	char buf[64];
	const char *s;

	write_n(cq, 2);
	cr_assert_eq(ext->write_error(cq, &ctxs[9], FI_RMA, FI_EIO, 71, 10, 3,
				      &info, sizeof(info)),
		     0);
	write_n(cq, 1);
	memset(&err, 0, sizeof(err));
	cr_expect_eq(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN,
		     "error not at the head yet");
	cr_assert_eq(fi_cq_read(cq, e, 8), 2, "read stops at the error");
	cr_expect_eq(fi_cq_read(cq, e, 8), -FI_EAVAIL);
	cr_expect_eq(fi_cq_read(cq, NULL, 0), -FI_EAVAIL);

	/* err_data copied into the caller's buffer */
	memset(&err, 0, sizeof(err));
	memset(small, 0, sizeof(small));
	err.err_data = small;
	err.err_data_size = sizeof(small);
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	cr_expect_eq(err.op_context, &ctxs[9]);
	cr_expect_eq(err.err, FI_EIO);
	cr_expect_eq(err.prov_errno, 71);
	cr_expect_eq(err.len, 10);
	cr_expect_eq(err.olen, 3);
	cr_expect_eq(err.flags, FI_RMA);
	cr_expect_eq(err.err_data_size, sizeof(small), "truncated to 4");
	cr_expect_eq(memcmp(small, &info, sizeof(small)), 0);
	s = fi_cq_strerror(cq, err.prov_errno, err.err_data, buf, sizeof(buf));
	cr_expect_eq(s, buf);
	cr_expect_neq(strstr(buf, "71"), NULL);
	s = fi_cq_strerror(cq, 71, NULL, NULL, 0);
	cr_expect_not_null(s);
	cr_expect_eq(fi_cq_strerror(cq, 5, NULL, buf, 3), buf);
	cr_expect_eq(strlen(buf), 2, "strerror truncates and terminates");

	cr_assert_eq(fi_cq_read(cq, e, 8), 1, "entries after the error");
	cr_expect_eq(e[0].op_context, &ctxs[0]);

	/* err_data_size 0: pointer to the provider's copy */
	cr_assert_eq(ext->write_error(cq, NULL, 0, FI_ECANCELED, 0, 0, 0, &info,
				      sizeof(info)),
		     0);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), 1);
	cr_expect_eq(err.err, FI_ECANCELED);
	cr_expect_eq(err.err_data_size, sizeof(info));
	cr_assert_not_null(err.err_data);
	cr_expect_eq(memcmp(err.err_data, &info, sizeof(info)), 0);

	cr_expect_eq(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
	cr_expect_eq(fi_cq_readerr(cq, NULL, 0), -FI_EINVAL);
	cr_expect_eq(fi_cq_readerr(cq, &err, 1), -FI_EINVAL);
	err.err_data = NULL;
	err.err_data_size = 8;
	cr_expect_eq(fi_cq_readerr(cq, &err, 0), -FI_EINVAL);
	cr_expect_eq(ext->write_error(cq, NULL, 0, FI_EIO, 0, 0, 0, &info,
				      GBA_MAX_ERR_DATA + 1),
		     -FI_EINVAL, "err_data larger than max_err_data");
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, read_bad_args)
{
	struct fid_cq *cq = open_cq(4, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	struct fi_cq_entry e;

	cr_expect_eq(fi_cq_read(cq, NULL, 1), -FI_EINVAL);
	cr_expect_eq(fi_cq_read(cq, NULL, 0), -FI_EAGAIN, "progress only");
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 10), -FI_ENOSYS,
		     "FI_WAIT_NONE has no sread");
	cr_expect_eq(fi_control(&cq->fid, FI_GETWAIT, NULL), -FI_EINVAL);
	{
		int fd;

		cr_expect_eq(fi_control(&cq->fid, FI_GETWAIT, &fd),
			     -FI_ENODATA);
	}
	cr_expect_eq(fi_control(&cq->fid, 9999, &e), -FI_ENOSYS);
	cr_expect_eq(fi_open_ops(&cq->fid, "nope", 0, (void **)&ext, NULL),
		     -FI_ENOSYS);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, sread_timeout)
{
	enum fi_wait_obj w[] = {FI_WAIT_UNSPEC, FI_WAIT_FD, FI_WAIT_YIELD};
	struct fi_cq_entry e;
	uint64_t t0, dt;
	size_t i;

	for (i = 0; i < 3; i++) {
		struct fid_cq *cq = open_cq(4, FI_CQ_FORMAT_CONTEXT, w[i]);
		enum fi_wait_obj got;

		cr_assert_eq(fi_control(&cq->fid, FI_GETWAITOBJ, &got), 0);
		cr_expect_eq(got, w[i]);
		t0 = prov_now_ms();
		cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 100), -FI_EAGAIN);
		dt = prov_now_ms() - t0;
		cr_expect(dt >= 95 && dt < 1000, "timeout took %llu ms",
			  (unsigned long long)dt);
		/* an entry already there returns at once */
		write_n(cq, 1);
		t0 = prov_now_ms();
		cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 5000), 1);
		cr_expect(prov_now_ms() - t0 < 100);
		cr_expect_eq(fi_close(&cq->fid), 0);
	}
}

static void *writer(void *arg)
{
	struct fid_cq *cq = arg;

	usleep(50000);
	ext->write(cq, &ctxs[5], 0, 0, NULL, 0, 0, 0);
	return NULL;
}

Test(cq, sread_wakes_on_write)
{
	enum fi_wait_obj w[] = {FI_WAIT_UNSPEC, FI_WAIT_FD};
	struct fi_cq_entry e;
	pthread_t th;
	uint64_t t0;
	size_t i;

	for (i = 0; i < 2; i++) {
		struct fid_cq *cq = open_cq(4, FI_CQ_FORMAT_CONTEXT, w[i]);

		t0 = prov_now_ms();
		pthread_create(&th, NULL, writer, cq);
		cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 5000), 1);
		cr_expect(prov_now_ms() - t0 < 2000, "woken by the write");
		cr_expect_eq(e.op_context, &ctxs[5]);
		pthread_join(th, NULL);
		cr_expect_eq(fi_close(&cq->fid), 0);
	}
}

Test(cq, sread_threshold)
{
	struct fi_cq_attr attr = {.size = 8,
				  .format = FI_CQ_FORMAT_CONTEXT,
				  .wait_obj = FI_WAIT_UNSPEC,
				  .wait_cond = FI_CQ_COND_THRESHOLD};
	struct fi_cq_entry e[4];
	size_t threshold = 3;
	struct fid_cq *cq;

	cr_assert_eq(fi_cq_open(t_domain, &attr, &cq, NULL), 0);
	cr_assert_eq(fi_open_ops(&cq->fid, FI_GBA_CQ_OPS_1, 0,
				 (void **)&ext, NULL),
		     0);
	write_n(cq, 2);
	/* below the threshold: waits the full timeout, then returns what
	 * is there */
	cr_expect_eq(fi_cq_sread(cq, e, 4, &threshold, 50), 2);
	write_n(cq, 3);
	cr_expect_eq(fi_cq_sread(cq, e, 4, &threshold, 5000), 3);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, signal)
{
	struct fid_cq *cq = open_cq(1, FI_CQ_FORMAT_UNSPEC, FI_WAIT_UNSPEC);
	struct fi_cq_entry e;
	uint64_t t0 = prov_now_ms();

	cr_assert_eq(fi_cq_signal(cq), 0);
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 2000), -FI_EAGAIN);
	cr_expect(prov_now_ms() - t0 < 1000, "signal not ignored");
	/* consumed: the next sread waits again */
	t0 = prov_now_ms();
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 50), -FI_EAGAIN);
	cr_expect(prov_now_ms() - t0 >= 45);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, wait_fd_and_trywait)
{
	struct fid_cq *cq = open_cq(4, FI_CQ_FORMAT_CONTEXT, FI_WAIT_FD);
	struct fi_cq_entry e;
	struct pollfd pfd;
	struct fid *fids[1] = {&cq->fid};
	int fd = -1;

	cr_assert_eq(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), 0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	cr_expect_eq(poll(&pfd, 1, 0), 0, "nothing signalled");
	write_n(cq, 1);
	cr_expect_eq(poll(&pfd, 1, 0), 1, "fd readable after a completion");
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), -FI_EAGAIN);
	cr_expect_eq(fi_cq_read(cq, &e, 1), 1);
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), 0);
	cr_expect_eq(poll(&pfd, 1, 0), 0, "trywait reset the fd");
	cr_expect_eq(fi_trywait(t_fabric, NULL, 1), -FI_EINVAL);
	fids[0] = &t_domain->fid;
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), -FI_EINVAL);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, trywait_rejects_wait_none)
{
	struct fid_cq *cq = open_cq(4, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	struct fid *fids[1] = {&cq->fid};

	cr_expect_eq(fi_trywait(t_fabric, fids, 1), -FI_EINVAL);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

/* Stand-in progress source: counts its calls, busy if asked to be. */
struct t_src {
	int calls;
	bool busy;
};

static int t_src_progress(void *ctx, bool *pending)
{
	struct t_src *src = ctx;

	src->calls++;
	if (pending && src->busy)
		*pending = true;
	return 0;
}

Test(cq, close_busy_while_bound)
{
	struct fid_cq *cq = open_cq(4, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	struct fid_ep *ep;

	cr_assert_eq(fi_endpoint(t_domain, t_info, &ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_expect_eq(fi_close(&cq->fid), -FI_EBUSY);
	cr_expect_eq(fi_close(&t_domain->fid), -FI_EBUSY, "CQ still open");
	cr_expect_eq(fi_close(&ep->fid), 0);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, bound_progress_once_per_read)
{
	struct fid_cq *cq = open_cq(4, FI_CQ_FORMAT_CONTEXT, FI_WAIT_FD);
	struct gba_cq *g = container_of(cq, struct gba_cq, cq_fid);
	struct t_src a = {0}, b = {.busy = true};
	struct fid *fids[1] = {&cq->fid};
	struct fi_cq_entry e;

	cr_expect_eq(gba_cq_bind_progress(g, NULL, t_src_progress),
		     -FI_EINVAL);
	cr_expect_eq(gba_cq_bind_progress(g, &a, NULL), -FI_EINVAL);
	/* a for both directions, b between: a is still progressed once */
	cr_assert_eq(gba_cq_bind_progress(g, &a, t_src_progress), 0);
	cr_assert_eq(gba_cq_bind_progress(g, &b, t_src_progress), 0);
	cr_assert_eq(gba_cq_bind_progress(g, &a, t_src_progress), 0);
	cr_expect_eq(fi_cq_read(cq, &e, 1), -FI_EAGAIN);
	cr_expect_eq(a.calls, 1);
	cr_expect_eq(b.calls, 1);
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), -FI_EAGAIN,
		     "a busy source makes trywait fail");
	gba_cq_unbind_progress(g, &b);
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), 0);
	gba_cq_unbind_progress(g, &a);
	cr_expect_eq(fi_close(&cq->fid), -FI_EBUSY, "one binding left");
	gba_cq_unbind_progress(g, &a);
	cr_expect_eq(a.calls, 3);
	cr_expect_eq(b.calls, 2);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

/* ---- Wait sets ---------------------------------------------------------- */

Test(cq, wait_set)
{
	struct fi_wait_attr wattr = {.wait_obj = FI_WAIT_UNSPEC};
	struct fi_cq_attr attr = {.size = 4,
				  .format = FI_CQ_FORMAT_CONTEXT,
				  .wait_obj = FI_WAIT_SET};
	struct fi_cq_entry e;
	struct fid_wait *ws;
	struct fid_cq *cq;
	pthread_t th;
	uint64_t t0;

	cr_assert_eq(fi_wait_open(t_fabric, &wattr, &ws), 0);
	attr.wait_set = ws;
	cr_assert_eq(fi_cq_open(t_domain, &attr, &cq, NULL), 0);
	cr_assert_eq(fi_open_ops(&cq->fid, FI_GBA_CQ_OPS_1, 0,
				 (void **)&ext, NULL),
		     0);
	t0 = prov_now_ms();
	cr_expect_eq(fi_wait(ws, 50), -FI_ETIMEDOUT);
	cr_expect(prov_now_ms() - t0 >= 45);
	cr_expect_eq(fi_cq_sread(cq, &e, 1, NULL, 10), -FI_ENOSYS,
		     "members are waited on through the set");
	pthread_create(&th, NULL, writer, cq);
	cr_expect_eq(fi_wait(ws, 5000), 0);
	pthread_join(th, NULL);
	cr_expect_eq(fi_cq_read(cq, &e, 1), 1);
	cr_expect_eq(fi_close(&ws->fid), -FI_EBUSY, "CQ still in the set");
	cr_expect_eq(fi_close(&cq->fid), 0);
	cr_expect_eq(fi_close(&ws->fid), 0);
	wattr.wait_obj = FI_WAIT_MUTEX_COND;
	cr_expect_eq(fi_wait_open(t_fabric, &wattr, &ws), -FI_ENOSYS);
	wattr.wait_obj = FI_WAIT_FD;
	wattr.flags = 1;
	cr_expect_eq(fi_wait_open(t_fabric, &wattr, &ws), -FI_EINVAL);
}

/* ---- Lock-free domain (FI_THREAD_DOMAIN) ------------------------------- */

Test(cq_nolock, thread_domain_works, .init = NULL, .fini = prov_teardown)
{
	struct fid_cq *cq;
	struct fi_cq_entry e[2];

	prov_setup_threading(FI_THREAD_DOMAIN);
	cr_expect_not(
		container_of(t_domain, struct gba_domain, domain_fid)->locking);
	cq = open_cq(2, FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	cr_expect_not(container_of(cq, struct gba_cq, cq_fid)->lock.enabled);
	write_n(cq, 2);
	cr_expect_eq(fi_cq_read(cq, e, 2), 2);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

/* ---- FI_THREAD_SAFE: concurrent writers and a blocking reader --------- */

#define MT_PER_WRITER 5000

struct mt_writer {
	struct fid_cq *cq;
	uintptr_t base;
};

static void *mt_write(void *arg)
{
	struct mt_writer *w = arg;
	uintptr_t i;
	int ret;

	for (i = 0; i < MT_PER_WRITER; i++) {
		do {
			ret = ext->write(w->cq, (void *)(w->base + i), 0, 0,
					 NULL, 0, 0, 0);
		} while (ret == -FI_EAGAIN);
		if (ret)
			return (void *)1;
	}
	return NULL;
}

Test(cq, threads_safe)
{
	struct fid_cq *cq = open_cq(64, FI_CQ_FORMAT_CONTEXT, FI_WAIT_UNSPEC);
	struct mt_writer w[2] = {{cq, 1}, {cq, 1000001}};
	uintptr_t next[2] = {1, 1000001};
	struct fi_cq_entry e[16];
	pthread_t th[2];
	void *res;
	size_t got = 0;
	ssize_t n, i;

	cr_assert(container_of(cq, struct gba_cq, cq_fid)->lock.enabled);
	pthread_create(&th[0], NULL, mt_write, &w[0]);
	pthread_create(&th[1], NULL, mt_write, &w[1]);
	while (got < 2 * MT_PER_WRITER) {
		n = fi_cq_sread(cq, e, 16, NULL, 10000);
		cr_assert_gt(n, 0, "sread: %zd", n);
		for (i = 0; i < n; i++) {
			uintptr_t v = (uintptr_t)e[i].op_context;
			int k = v >= 1000001;

			/* per writer, entries arrive in order, exactly once */
			cr_assert_eq(v, next[k], "got %lu expected %lu",
				     (unsigned long)v, (unsigned long)next[k]);
			next[k]++;
		}
		got += (size_t)n;
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], &res);
		cr_expect_null(res);
	}
	cr_expect_eq(fi_cq_read(cq, e, 16), -FI_EAGAIN);
	cr_expect_eq(fi_close(&cq->fid), 0);
}

Test(cq, null_outputs)
{
	struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_CONTEXT};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cntr_attr cntr_attr = {.events = FI_CNTR_EVENTS_COMP};

	cr_expect_eq(fi_cq_open(t_domain, &attr, NULL, NULL), -FI_EINVAL);
	cr_expect_eq(fi_av_open(t_domain, &av_attr, NULL, NULL), -FI_EINVAL);
	cr_expect_eq(fi_cntr_open(t_domain, &cntr_attr, NULL, NULL),
		     -FI_EINVAL);
	cr_expect_eq(fi_domain(t_fabric, t_info, NULL, NULL), -FI_EINVAL);
}

/* ---- A full CQ on the data path ------------------------------------------ */

/* Room for one more completion in @cq (the CQ's extension ops). */
static bool ext_has_space(struct fid_cq *cq)
{
	struct fi_gba_cq_ops *ops;

	cr_assert_eq(fi_open_ops(&cq->fid, FI_GBA_CQ_OPS_1, 0,
				 (void **)&ops, NULL),
		     0);
	cr_expect(!ops->has_space(NULL, 1), "NULL CQ");
	return ops->has_space(cq, 1);
}

/* An endpoint whose transmit and receive completions go to one CQ. */
struct small_ep {
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_cq *cq;
	fi_addr_t peer;
};

/* An endpoint of @info (t_info: the domain's) with a CQ of @cq_size. */
static void small_ep_open_info(struct small_ep *s, struct fi_info *info,
			       size_t cq_size)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.size = cq_size,
				     .format = FI_CQ_FORMAT_TAGGED};

	cr_assert_eq(fi_endpoint(t_domain, info, &s->ep, NULL), 0);
	cr_assert_eq(fi_av_open(t_domain, &av_attr, &s->av, NULL), 0);
	cr_assert_eq(fi_cq_open(t_domain, &cq_attr, &s->cq, NULL), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_enable(s->ep), 0);
}

static void small_ep_open(struct small_ep *s, size_t cq_size)
{
	small_ep_open_info(s, t_info, cq_size);
}

/* Make @a and @b know each other (s->peer). */
static void small_ep_connect(struct small_ep *a, struct small_ep *b)
{
	char name[64];
	size_t len;

	len = sizeof(name);
	cr_assert_eq(fi_getname(&b->ep->fid, name, &len), 0);
	cr_assert_eq(fi_av_insert(a->av, name, 1, &a->peer, 0, NULL), 1);
	len = sizeof(name);
	cr_assert_eq(fi_getname(&a->ep->fid, name, &len), 0);
	cr_assert_eq(fi_av_insert(b->av, name, 1, &b->peer, 0, NULL), 1);
}

static void small_ep_close(struct small_ep *s)
{
	cr_expect_eq(fi_close(&s->ep->fid), 0);
	cr_expect_eq(fi_close(&s->cq->fid), 0);
	cr_expect_eq(fi_close(&s->av->fid), 0);
}

/*
 * Read up to @n completions of @s into @e (reading @other's CQ too, to
 * progress it), for at most 5 s.  Returns the number read.
 */
static int drain(struct small_ep *s, struct small_ep *other,
		 struct fi_cq_tagged_entry *e, int n)
{
	struct fi_cq_tagged_entry scratch;
	uint64_t end = prov_now_ms() + 5000;
	ssize_t ret;
	int got = 0;

	while (got < n && prov_now_ms() < end) {
		ret = fi_cq_read(s->cq, &e[got], 1);
		if (ret == 1)
			got++;
		else
			cr_assert_eq(ret, -FI_EAGAIN, "fi_cq_read: %zd", ret);
		if (other)
			(void)fi_cq_read(other->cq, &scratch, 0);
	}
	return got;
}

/*
 * Receives completing in one progress call overrun a CQ of 4 entries
 * (nothing on the receive side reserves room): all eight completions
 * arrive, in order.  Open MPI's MTL-OFI opens its CQ with 100 entries.
 */
Test(cq, receives_overrunning_a_small_cq)
{
	struct small_ep a, b;
	struct fi_cq_tagged_entry e[8];
	uint64_t sbuf[8], rbuf[8];
	int i;

	small_ep_open(&a, 64);
	small_ep_open(&b, 4);
	small_ep_connect(&a, &b);
	for (i = 0; i < 8; i++)
		cr_assert_eq(fi_trecv(b.ep, &rbuf[i], sizeof(rbuf[i]), NULL,
				      b.peer, (uint64_t)i, 0, &rbuf[i]),
			     0);
	for (i = 0; i < 8; i++) {
		sbuf[i] = 1000 + (uint64_t)i;
		cr_assert_eq(fi_tinject(a.ep, &sbuf[i], sizeof(sbuf[i]), a.peer,
					(uint64_t)i),
			     0);
	}
	cr_assert_eq(drain(&b, NULL, e, 8), 8, "a receive completion lost");
	for (i = 0; i < 8; i++) {
		cr_expect_eq(e[i].op_context, &rbuf[i], "completion %d", i);
		cr_expect_eq(e[i].tag, (uint64_t)i);
		cr_expect_eq(rbuf[i], 1000 + (uint64_t)i);
	}
	small_ep_close(&a);
	small_ep_close(&b);
}

/*
 * Room is checked when an operation starts, not reserved: four large
 * sends (completed when the receiver has copied them) then four inline
 * sends (completed at once) fill a CQ of 4; the large sends' completions
 * arrive on top of them and must not be lost.
 */
Test(cq, send_completions_overrunning_a_small_cq)
{
	enum { LARGE = 40000 }; /* above FI_GBA_EAGER_SIZE: read in place */
	struct small_ep a, b;
	struct fi_cq_tagged_entry e[8];
	static uint8_t big[4][LARGE], rbig[4][LARGE];
	uint64_t small[4], rsmall[4];
	int i, nlarge = 0, nsmall = 0;

	small_ep_open(&a, 4);
	small_ep_open(&b, 64);
	small_ep_connect(&a, &b);
	for (i = 0; i < 4; i++) {
		memset(big[i], 'a' + i, LARGE);
		cr_assert_eq(fi_tsend(a.ep, big[i], LARGE, NULL, a.peer,
				      (uint64_t)i, big[i]),
			     0);
	}
	for (i = 0; i < 4; i++)
		cr_assert_eq(fi_tsend(a.ep, &small[i], sizeof(small[i]), NULL,
				      a.peer, 4 + (uint64_t)i, &small[i]),
			     0);
	cr_expect_not(ext_has_space(a.cq), "the inline sends filled the CQ");
	for (i = 0; i < 4; i++)
		cr_assert_eq(fi_trecv(b.ep, rbig[i], LARGE, NULL, b.peer,
				      (uint64_t)i, 0, NULL),
			     0);
	for (i = 0; i < 4; i++)
		cr_assert_eq(fi_trecv(b.ep, &rsmall[i], sizeof(rsmall[i]), NULL,
				      b.peer, 4 + (uint64_t)i, 0, NULL),
			     0);
	cr_assert_eq(drain(&b, NULL, e, 8), 8, "receives");
	for (i = 0; i < 4; i++)
		cr_expect_eq(rbig[i][LARGE - 1], 'a' + i);
	cr_assert_eq(drain(&a, &b, e, 8), 8, "a send completion lost");
	for (i = 0; i < 8; i++) {
		if (e[i].op_context >= (void *)big &&
		    e[i].op_context < (void *)(big + 4))
			nlarge++;
		else
			nsmall++;
	}
	cr_expect_eq(nlarge, 4);
	cr_expect_eq(nsmall, 4);
	small_ep_close(&a);
	small_ep_close(&b);
}

/*
 * A message that arrives before the receiver inserted its sender into
 * its AV (taken by progress as unexpected, from an unknown source) still
 * matches a directed receive posted after the insertion.  The progress
 * thread takes messages as soon as they land, so a peer that inserted
 * and sent first would otherwise never be received from (the soak hung).
 */
Test(cq, directed_receive_of_a_message_before_av_insert)
{
	struct fi_info *info = fi_dupinfo(t_info);
	struct small_ep a, b;
	struct fi_cq_tagged_entry e;
	uint64_t sbuf = 42, rbuf = 0;
	char name[64];
	size_t len = sizeof(name);
	int i;

	cr_assert_not_null(info);
	info->caps |= FI_TAGGED | FI_DIRECTED_RECV;
	small_ep_open(&a, 64);
	small_ep_open_info(&b, info, 64);
	fi_freeinfo(info);
	cr_assert_eq(fi_getname(&b.ep->fid, name, &len), 0);
	cr_assert_eq(fi_av_insert(a.av, name, 1, &a.peer, 0, NULL), 1);
	cr_assert_eq(fi_tinject(a.ep, &sbuf, sizeof(sbuf), a.peer, 7), 0);
	/* b's progress takes the message, its sender not in b's AV yet */
	for (i = 0; i < 100; i++)
		cr_assert_eq(fi_cq_read(b.cq, &e, 1), -FI_EAGAIN);
	len = sizeof(name);
	cr_assert_eq(fi_getname(&a.ep->fid, name, &len), 0);
	cr_assert_eq(fi_av_insert(b.av, name, 1, &b.peer, 0, NULL), 1);
	cr_assert_eq(fi_trecv(b.ep, &rbuf, sizeof(rbuf), NULL, b.peer, 7, 0,
			      &rbuf),
		     0);
	cr_assert_eq(drain(&b, NULL, &e, 1), 1,
		     "the directed receive did not match the message");
	cr_expect_eq(e.op_context, &rbuf);
	cr_expect_eq(rbuf, 42);
	small_ep_close(&a);
	small_ep_close(&b);
}
