/*
 * The read-only inspection API (gba(7), INSPECTION): gba_dev_group_info,
 * gba_group_info_absent, gba_group_absent and gba_eng_ep_list, on a
 * private emulated device; bad arguments give -EINVAL, never a crash.
 * The multi-process view (a stuck barrier, a dead member) is
 * test/core/gba_stat.sh's.
 */
#include <stdlib.h>

#include <gba/gba_eng.h>
#include <gba/gba_job.h>

#include "gba_core_util.h"
#include "gba_eng_noop.h"

static struct gba_dev *dev;
static struct gba_group_info *info;

static void setup(void)
{
	cr_assert_eq(gba_dev_open(gba_t_image("info"), &dev), 0);
	info = malloc(sizeof(*info));
	cr_assert_not_null(info);
}

static void teardown(void)
{
	free(info);
	gba_dev_close(dev);
	gba_t_unlink();
}

TestSuite(info, .init = setup, .fini = teardown, .timeout = 30);

/* Join members 0..n-1 of group @key in this process. */
static void join(uint64_t key, unsigned n, struct gba_group **g)
{
	struct gba_group_attr attr = {.key = key, .member_count = n};
	unsigned m;

	for (m = 0; m < n; m++) {
		attr.member_id = m;
		cr_assert_eq(gba_group_join(dev, &attr, &g[m]), 0);
	}
}

Test(info, args)
{
	char buf[64];

	cr_expect_eq(gba_dev_group_info(NULL, 0, info), -EINVAL);
	cr_expect_eq(gba_dev_group_info(dev, 0, NULL), -EINVAL);
	cr_expect_eq(gba_dev_group_info(dev, GBA_MAX_GROUPS, info), -EINVAL);
	cr_expect_eq(gba_dev_group_info(dev, -1u, info), -EINVAL);
	cr_expect_eq(gba_group_info_absent(NULL, buf, sizeof(buf)), -EINVAL);
	cr_expect_eq(gba_group_info_absent(info, NULL, 1), -EINVAL);
	cr_expect_eq(gba_group_info_absent(info, buf, 0), -EINVAL);
	cr_expect_eq(gba_group_absent(NULL, buf, sizeof(buf)), -EINVAL);
	cr_expect_eq(gba_eng_ep_list(NULL, NULL), -EINVAL);
}

Test(info, free_group)
{
	char buf[64];

	cr_assert_eq(gba_dev_group_info(dev, 5, info), 0);
	cr_expect_eq(info->index, 5);
	cr_expect_eq(info->in_use, 0);
	cr_expect_eq(info->job, 0);
	cr_expect_eq(info->absent, 0);
	cr_expect_eq(gba_group_info_absent(info, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "none");
}

Test(info, stuck_barrier)
{
	struct gba_group *g[3];
	char buf[256], want[256];
	uint32_t seq;
	unsigned m;
	int pid = (int)getpid();

	join(0x1f0, 3, g);
	cr_assert_eq(gba_dev_group_info(dev, 0, info), 0);
	cr_expect_eq(info->in_use, 1);
	cr_expect_eq(info->member_count, 3);
	cr_expect_eq(info->attached, 3);
	cr_expect_eq(info->job, gba_job_id(), "the owner job is recorded");
	cr_expect_neq(info->key, 0);
	cr_expect_eq(info->arrival_count, 0);
	cr_expect_eq(info->absent, 0, "no barrier in progress");
	cr_expect(info->control & GBA_CTRL_ENABLE);
	for (m = 0; m < 3; m++) {
		cr_expect_eq(info->member[m].pid, pid);
		cr_expect_eq(info->member[m].alive, 1);
	}

	seq = gba_group_arrive(g[0]);
	gba_group_arrive(g[1]);
	cr_assert_eq(gba_dev_group_info(dev, 0, info), 0);
	cr_expect_eq(info->arrival_count, 2);
	cr_expect_eq(info->release_seq, 0);
	cr_expect_eq(info->member[0].arrived, 1);
	cr_expect_eq(info->member[1].arrived, 1);
	cr_expect_eq(info->member[2].arrived, 0);
	cr_expect_eq(info->absent, 1);
	snprintf(want, sizeof(want), "member 2 (pid %d)", pid);
	cr_expect_eq(gba_group_info_absent(info, buf, sizeof(buf)), 1);
	cr_expect_str_eq(buf, want);
	cr_expect_eq(gba_group_absent(g[0], buf, sizeof(buf)), 1);
	cr_expect_str_eq(buf, want);
	/* too short for the member: the count only, always terminated */
	cr_expect_eq(gba_group_absent(g[0], buf, 20), 1);
	cr_expect_str_eq(buf, "... (1 absent)");
	cr_expect_eq(gba_group_absent(g[0], buf, 4), 1);
	cr_expect_eq(strlen(buf), 3);
	cr_expect_eq(gba_group_wait(g[0], seq, 20), -ETIMEDOUT);

	/* a member that left is "not attached" */
	cr_assert_eq(gba_group_leave(g[2]), 0);
	cr_assert_eq(gba_dev_group_info(dev, 0, info), 0);
	cr_expect_eq(info->attached, 2);
	cr_expect_eq(info->member[2].pid, 0);
	gba_group_info_absent(info, buf, sizeof(buf));
	cr_expect_str_eq(buf, "member 2 (not attached)");

	for (m = 0; m < 2; m++)
		gba_group_leave(g[m]);
	cr_assert_eq(gba_dev_group_info(dev, 0, info), 0);
	cr_expect_eq(info->in_use, 0, "the last leave frees the group");
	cr_expect_eq(info->job, 0, "and forgets its job");
}

Test(info, released)
{
	struct gba_group *g[2];
	char buf[64];
	uint32_t seq;

	join(0x2f0, 2, g);
	seq = gba_group_arrive(g[0]);
	gba_group_arrive(g[1]);
	cr_assert_eq(gba_group_wait(g[0], seq, 1000), 0);
	cr_assert_eq(gba_dev_group_info(dev, 0, info), 0);
	cr_expect_eq(info->release_seq, 1);
	cr_expect_eq(info->arrival_count, 0);
	cr_expect_eq(info->absent, 0);
	cr_expect_eq(gba_group_absent(g[0], buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "none");
	gba_group_leave(g[0]);
	gba_group_leave(g[1]);
}

Test(info, long_list_is_cut)
{
	struct gba_group_attr attr = {.key = 0x3f0,
				      .member_count = GBA_MAX_MEMBERS,
				      .member_id = GBA_MAX_MEMBERS - 1};
	struct gba_group *g;
	char buf[128];
	size_t n;

	cr_assert_eq(gba_group_join(dev, &attr, &g), 0);
	gba_group_arrive(g);
	cr_expect_eq(gba_group_absent(g, buf, sizeof(buf)),
		     GBA_MAX_MEMBERS - 1);
	n = strlen(buf);
	cr_expect_lt(n, sizeof(buf));
	cr_expect(!strncmp(buf, "member 0 (not attached), member 1 ", 34), "%s",
		  buf);
	cr_expect(n > 18 && !strcmp(buf + n - 18, ", ... (707 absent)"), "%s",
		  buf);
	gba_group_leave(g);
}

/* gba_eng_ep_list: the endpoint with an unconsumed message */
struct ep_find {
	uint32_t pid, ep_id;
	int found;
	struct gba_eng_ep_info info;
};

static int ep_find(const struct gba_eng_ep_info *i, void *arg)
{
	struct ep_find *f = arg;

	if (i->pid == f->pid && i->ep_id == f->ep_id) {
		f->found++;
		f->info = *i;
	}
	return 0;
}

static int ep_stop(const struct gba_eng_ep_info *i, void *arg)
{
	(void)i;
	++*(int *)arg;
	return 7;
}

Test(info, endpoints)
{
	struct gba_eng_ep_attr attr = {.ops = &gba_eng_noop_ops,
				       .rx_slots = 64};
	struct gba_eng_peer *peer;
	struct gba_eng_ep *ep;
	struct ep_find f = {0};
	char msg[8] = "x";
	struct iovec iov = {msg, sizeof(msg)};
	char name[64];
	int calls = 0;

	cr_assert_eq(gba_eng_ep_open(&attr, &ep), 0);
	f.pid = gba_eng_ep_addr(ep)->pid;
	f.ep_id = gba_eng_ep_addr(ep)->ep_id;
	cr_assert_eq(gba_eng_ep_list(ep_find, &f), 0);
	cr_assert_eq(f.found, 1);
	cr_expect_eq(f.info.alive, 1);
	cr_expect_eq(f.info.valid, 1);
	cr_expect_eq(f.info.slots, 64);
	cr_expect_eq(f.info.pending, 0);
	cr_expect_eq(f.info.job, gba_job_id());
	snprintf(name, sizeof(name), "gba-fab-%u-%016llx-%u-%u",
		 (unsigned)getuid(), (unsigned long long)gba_job_id(), f.pid,
		 f.ep_id);
	cr_expect_str_eq(f.info.name, name);

	cr_assert_eq(gba_eng_peer_get(ep, gba_eng_ep_addr(ep), &peer), 0);
	cr_assert_eq(gba_eng_send(ep, peer, &iov, 1, 0, 0, 0, 0), 1);
	cr_assert_eq(gba_eng_send(ep, peer, &iov, 1, 0, 0, 0, 0), 1);
	f.found = 0;
	cr_assert_eq(gba_eng_ep_list(ep_find, &f), 0);
	cr_expect_eq(f.info.pending, 2, "two messages not consumed");
	while (gba_eng_progress(ep) > 0)
		;
	f.found = 0;
	cr_assert_eq(gba_eng_ep_list(ep_find, &f), 0);
	cr_expect_eq(f.info.pending, 0, "consumed");

	cr_expect_eq(gba_eng_ep_list(ep_stop, &calls), 7);
	cr_expect_eq(calls, 1, "a non-zero return stops the walk");
	gba_eng_ep_close(ep);
	f.found = 0;
	cr_assert_eq(gba_eng_ep_list(ep_find, &f), 0);
	cr_expect_eq(f.found, 0, "a closed endpoint's queue is gone");
}
