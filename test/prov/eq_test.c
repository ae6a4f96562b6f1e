/*
 * Event queues of the gba provider through the stock libfabric: write,
 * read (FI_PEEK, short buffers), sread timeout and wakeup, readerr with
 * err_data, strerror, FI_GETWAIT, bad arguments.
 */
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "prov_common.h"

TestSuite(eq, .init = prov_setup, .fini = prov_teardown, .timeout = 60);

static struct fid_eq *open_eq(size_t size, uint64_t flags,
			      enum fi_wait_obj wait_obj)
{
	struct fi_eq_attr attr = {
		.size = size,
		.flags = flags,
		.wait_obj = wait_obj,
	};
	struct fid_eq *eq;
	int ret = fi_eq_open(t_fabric, &attr, &eq, NULL);

	cr_assert_eq(ret, 0, "fi_eq_open: %s", fi_strerror(-ret));
	return eq;
}

Test(eq, write_read_peek)
{
	struct fid_eq *eq = open_eq(4, FI_WRITE, FI_WAIT_NONE);
	struct fi_eq_entry in = {.fid = &eq->fid, .context = eq, .data = 7};
	struct fi_eq_entry out;
	uint32_t event = 0;
	int i;

	for (i = 0; i < 4; i++) {
		in.data = (uint64_t)i;
		cr_assert_eq(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
			     sizeof(in));
	}
	cr_expect_eq(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0), -FI_EAGAIN,
		     "EQ of size 4 is full");
	cr_assert_eq(fi_eq_read(eq, &event, &out, sizeof(out), FI_PEEK),
		     sizeof(out));
	cr_expect_eq(out.data, 0);
	cr_assert_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0), sizeof(out));
	cr_expect_eq(event, FI_NOTIFY);
	cr_expect_eq(out.data, 0, "peek left the event queued");
	cr_expect_eq(out.fid, &eq->fid);
	cr_expect_eq(out.context, eq);
	for (i = 1; i < 4; i++) {
		cr_assert_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			     sizeof(out));
		cr_expect_eq(out.data, (uint64_t)i, "FIFO");
	}
	cr_expect_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0), -FI_EAGAIN);
	cr_expect_eq(fi_close(&eq->fid), 0);
}

Test(eq, short_buffer_and_bad_args)
{
	struct fid_eq *eq = open_eq(4, FI_WRITE, FI_WAIT_NONE);
	struct fi_eq_entry in = {.data = 1}, out;
	uint32_t event;
	char small[4];

	cr_assert_eq(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
		     sizeof(in));
	cr_expect_eq(fi_eq_read(eq, &event, small, sizeof(small), 0),
		     -FI_ETOOSMALL, "no silent truncation");
	cr_expect_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0), sizeof(out),
		     "event still there");
	cr_expect_eq(fi_eq_read(eq, NULL, &out, sizeof(out), 0), -FI_EINVAL);
	cr_expect_eq(fi_eq_read(eq, &event, NULL, sizeof(out), 0), -FI_EINVAL);
	cr_expect_eq(fi_eq_read(eq, &event, &out, sizeof(out), FI_MORE),
		     -FI_EINVAL);
	cr_expect_eq(fi_eq_write(eq, FI_NOTIFY, NULL, 8, 0), -FI_EINVAL);
	cr_expect_eq(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), FI_PEEK),
		     -FI_EINVAL);
	{
		static char big[GBA_EQ_MAX_DATA + 1];

		cr_expect_eq(fi_eq_write(eq, FI_NOTIFY, big, sizeof(big), 0),
			     -FI_EINVAL);
	}
	cr_expect_eq(fi_eq_write(eq, FI_NOTIFY, NULL, 0, 0), 0,
		     "an event without data");
	cr_expect_eq(fi_eq_read(eq, &event, NULL, 0, 0), 0);
	cr_expect_eq(fi_close(&eq->fid), 0);
}

Test(eq, write_needs_fi_write)
{
	struct fid_eq *eq = open_eq(4, 0, FI_WAIT_NONE);
	struct fi_eq_entry in = {0};

	cr_expect_eq(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
		     -FI_EINVAL);
	cr_expect_eq(fi_close(&eq->fid), 0);
}

Test(eq, bad_open)
{
	struct fi_eq_attr attr = {.wait_obj = FI_WAIT_NONE};
	struct fid_eq *eq;

	cr_expect_eq(fi_eq_open(t_fabric, NULL, &eq, NULL), -FI_EINVAL);
	attr.flags = FI_READ;
	cr_expect_eq(fi_eq_open(t_fabric, &attr, &eq, NULL), -FI_EINVAL);
	attr.flags = 0;
	attr.size = GBA_EQ_MAX_SIZE + 1;
	cr_expect_eq(fi_eq_open(t_fabric, &attr, &eq, NULL), -FI_EINVAL);
	attr.size = 0;
	attr.wait_obj = FI_WAIT_MUTEX_COND;
	cr_expect_eq(fi_eq_open(t_fabric, &attr, &eq, NULL), -FI_ENOSYS);
	attr.wait_obj = FI_WAIT_NONE;
	cr_assert_eq(fi_eq_open(t_fabric, &attr, &eq, NULL), 0);
	cr_expect_eq(container_of(eq, struct gba_eq, eq_fid)->size,
		     (size_t)GBA_EQ_DEF_SIZE, "FI_GBA_EQ_SIZE default");
	cr_expect_eq(fi_close(&eq->fid), 0);
}

Test(eq, sread_timeout_and_none)
{
	enum fi_wait_obj w[] = {FI_WAIT_UNSPEC, FI_WAIT_FD, FI_WAIT_YIELD};
	struct fi_eq_entry out;
	uint32_t event;
	uint64_t t0, dt;
	size_t i;
	struct fid_eq *eq;

	for (i = 0; i < 3; i++) {
		eq = open_eq(4, FI_WRITE, w[i]);
		t0 = prov_now_ms();
		cr_expect_eq(fi_eq_sread(eq, &event, &out, sizeof(out), 100, 0),
			     -FI_EAGAIN);
		dt = prov_now_ms() - t0;
		cr_expect(dt >= 95 && dt < 1000, "%s: %llu ms",
			  gba_wait_obj_str(w[i]), (unsigned long long)dt);
		cr_expect_eq(fi_close(&eq->fid), 0);
	}
	eq = open_eq(4, FI_WRITE, FI_WAIT_NONE);
	cr_expect_eq(fi_eq_sread(eq, &event, &out, sizeof(out), 10, 0),
		     -FI_ENOSYS);
	cr_expect_eq(fi_close(&eq->fid), 0);
}

static void *eq_writer(void *arg)
{
	struct fid_eq *eq = arg;
	struct fi_eq_entry in = {.data = 99};

	usleep(50000);
	fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	return NULL;
}

Test(eq, sread_wakes)
{
	enum fi_wait_obj w[] = {FI_WAIT_UNSPEC, FI_WAIT_FD};
	struct fi_eq_entry out;
	uint32_t event;
	pthread_t th;
	size_t i;

	for (i = 0; i < 2; i++) {
		struct fid_eq *eq = open_eq(4, FI_WRITE, w[i]);
		uint64_t t0 = prov_now_ms();

		pthread_create(&th, NULL, eq_writer, eq);
		cr_expect_eq(
			fi_eq_sread(eq, &event, &out, sizeof(out), 5000, 0),
			sizeof(out));
		cr_expect_eq(out.data, 99);
		cr_expect(prov_now_ms() - t0 < 2000);
		pthread_join(th, NULL);
		cr_expect_eq(fi_close(&eq->fid), 0);
	}
}

Test(eq, readerr)
{
	struct fid_eq *eq = open_eq(8, FI_WRITE, FI_WAIT_UNSPEC);
	struct fi_gba_eq_ops *ext;
	struct fi_eq_err_entry err;
	struct fi_eq_entry in = {.data = 1}, out;
	uint32_t event;
	char buf[64];
	int ctx;

	cr_assert_eq(fi_open_ops(&eq->fid, FI_GBA_EQ_OPS_1, 0,
				 (void **)&ext, NULL),
		     0);
	memset(&err, 0, sizeof(err));
	cr_expect_eq(fi_eq_readerr(eq, &err, 0), -FI_EAGAIN);
	cr_expect_eq(ext->write_error(NULL, NULL, NULL, 0, FI_EIO, 0),
		     -FI_EINVAL, "NULL EQ");
	cr_expect_eq(ext->write_error(eq, NULL, NULL, 0, 0, 0), -FI_EINVAL,
		     "err must be a positive FI_E* code");
	cr_expect_eq(fi_eq_readerr(eq, &err, 0), -FI_EAGAIN, "nothing queued");
	cr_assert_eq(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
		     sizeof(in));
	cr_assert_eq(ext->write_error(eq, &eq->fid, &ctx, 5, FI_ETIMEDOUT, 110),
		     0);
	/* the event before the error reads normally, then EAVAIL */
	cr_expect_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0), sizeof(out));
	cr_expect_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0), -FI_EAVAIL);
	cr_expect_eq(fi_eq_sread(eq, &event, &out, sizeof(out), 100, 0),
		     -FI_EAVAIL);
	cr_expect_eq(fi_eq_readerr(eq, &err, FI_PEEK), -FI_EINVAL);
	cr_expect_eq(fi_eq_readerr(eq, NULL, 0), -FI_EINVAL);
	cr_assert_eq(fi_eq_readerr(eq, &err, 0), sizeof(err));
	cr_expect_eq(err.fid, &eq->fid);
	cr_expect_eq(err.context, &ctx);
	cr_expect_eq(err.data, 5);
	cr_expect_eq(err.err, FI_ETIMEDOUT);
	cr_expect_eq(err.prov_errno, 110);
	cr_expect_eq(err.err_data_size, 0);
	cr_expect_eq(fi_eq_strerror(eq, err.prov_errno, err.err_data, buf,
				    sizeof(buf)),
		     buf);
	cr_expect_neq(strstr(buf, "110"), NULL);
	cr_expect_not_null(fi_eq_strerror(eq, 110, NULL, NULL, 0));
	cr_expect_eq(fi_eq_readerr(eq, &err, 0), -FI_EAGAIN);
	cr_expect_eq(fi_close(&eq->fid), 0);
}

Test(eq, getwait_and_trywait)
{
	struct fid_eq *eq = open_eq(4, FI_WRITE, FI_WAIT_FD);
	struct fi_eq_entry in = {0}, out;
	struct fid *fids[1] = {&eq->fid};
	struct pollfd pfd = {.events = POLLIN};
	uint32_t event;
	int fd;

	cr_assert_eq(fi_control(&eq->fid, FI_GETWAIT, &fd), 0);
	pfd.fd = fd;
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), 0);
	cr_expect_eq(poll(&pfd, 1, 0), 0);
	cr_assert_eq(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
		     sizeof(in));
	cr_expect_eq(poll(&pfd, 1, 0), 1);
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), -FI_EAGAIN);
	cr_expect_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0), sizeof(out));
	cr_expect_eq(fi_trywait(t_fabric, fids, 1), 0);
	cr_expect_eq(fi_control(&eq->fid, FI_GETWAIT, NULL), -FI_EINVAL);
	cr_expect_eq(fi_close(&eq->fid), 0);

	eq = open_eq(4, FI_WRITE, FI_WAIT_UNSPEC);
	cr_expect_eq(fi_control(&eq->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	cr_expect_eq(fi_close(&eq->fid), 0);
}

Test(eq, provider_events)
{
	struct fid_eq *eq = open_eq(2, 0, FI_WAIT_NONE);
	struct gba_eq *g = container_of(eq, struct gba_eq, eq_fid);
	struct fi_eq_entry in = {.data = 3}, out;
	uint32_t event;

	/* the provider writes even without FI_WRITE */
	cr_assert_eq(
		gba_eq_write_event(g, FI_JOIN_COMPLETE, &in, sizeof(in), 0), 0);
	cr_assert_eq(gba_eq_write_error(g, NULL, NULL, 0, FI_EIO, 0), 0);
	cr_expect_eq(gba_eq_write_event(g, FI_NOTIFY, &in, sizeof(in), 0), 0,
		     "a full EQ keeps the provider's events");
	cr_expect_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0), sizeof(out));
	cr_expect_eq(event, FI_JOIN_COMPLETE);
	cr_expect_eq(out.data, 3);
	cr_expect_eq(fi_close(&eq->fid), 0, "queued entries are freed");
}

/*
 * A full EQ refuses fi_eq_write but keeps every entry of the provider and
 * of FI_GBA_EQ_OPS_1, in order, beyond its size (as a full CQ does).
 */
Test(eq, full_keeps_provider_entries)
{
	struct fid_eq *eq = open_eq(4, FI_WRITE, FI_WAIT_NONE);
	struct gba_eq *g = container_of(eq, struct gba_eq, eq_fid);
	struct fi_eq_entry in = {0}, out;
	struct fi_eq_err_entry err;
	struct fi_gba_eq_ops *ext;
	uint32_t event;
	int i, n = 64;

	cr_assert_eq(fi_open_ops(&eq->fid, FI_GBA_EQ_OPS_1, 0,
				 (void **)&ext, NULL),
		     0);
	for (i = 0; i < 4; i++) {
		in.data = (uint64_t)i;
		cr_assert_eq(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
			     sizeof(in));
	}
	cr_expect_eq(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
		     -FI_EAGAIN, "the application's writes are bounded");
	for (i = 4; i < n; i++) {
		in.data = (uint64_t)i;
		if (i % 3)
			cr_assert_eq(gba_eq_write_event(g, FI_NOTIFY, &in,
							sizeof(in), 0),
				     0, "event %d", i);
		else if (i % 2)
			cr_assert_eq(ext->write_error(eq, NULL, NULL, i,
						      FI_EIO, 0),
				     0, "error %d (extension)", i);
		else
			cr_assert_eq(gba_eq_write_error(g, NULL, NULL, i,
							FI_EIO, 0),
				     0, "error %d", i);
	}
	for (i = 0; i < n; i++) {
		if (i >= 4 && !(i % 3)) {
			cr_assert_eq(fi_eq_read(eq, &event, &out, sizeof(out),
						0),
				     -FI_EAVAIL, "entry %d", i);
			memset(&err, 0, sizeof(err));
			cr_assert_eq(fi_eq_readerr(eq, &err, 0), sizeof(err));
			cr_expect_eq(err.data, (uint64_t)i);
			cr_expect_eq(err.err, FI_EIO);
			continue;
		}
		cr_assert_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			     sizeof(out), "entry %d", i);
		cr_expect_eq(event, FI_NOTIFY);
		cr_expect_eq(out.data, (uint64_t)i, "in order");
	}
	cr_expect_eq(fi_eq_read(eq, &event, &out, sizeof(out), 0), -FI_EAGAIN);
	cr_expect_eq(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
		     sizeof(in), "room again once read");
	cr_expect_eq(fi_close(&eq->fid), 0);
}

Test(eq, null_outputs)
{
	struct fi_eq_attr attr = {.wait_obj = FI_WAIT_NONE};
	struct fi_wait_attr wattr = {.wait_obj = FI_WAIT_UNSPEC};
	struct fid_wait *ws;

	cr_expect_eq(fi_eq_open(t_fabric, &attr, NULL, NULL), -FI_EINVAL);
	cr_expect_eq(fi_wait_open(t_fabric, NULL, &ws), -FI_EINVAL);
	cr_expect_eq(fi_wait_open(t_fabric, &wattr, NULL), -FI_EINVAL);
}
