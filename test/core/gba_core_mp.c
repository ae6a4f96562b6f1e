/*
 * The emulated device with several processes: barrier correctness with 2,
 * 4 and 8 processes (more processes than cores) and random delays, wrap at
 * 2^32 across processes, concurrent creation of the image, reclaim of
 * groups whose processes died, -EPIPE in bounded time when a peer dies,
 * -EADDRINUSE against a live process, use of a device across fork.
 *
 * Children report failures through their exit status (_exit, never return
 * into Criterion); the parent asserts on it.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "gba_core_util.h"

TestSuite(mp, .fini = gba_t_unlink, .timeout = 120);

/* Child exit codes */
enum {
	C_OK = 0,
	C_OPEN = 10,
	C_JOIN,
	C_BARRIER,
	C_EARLY,	/* released before every member arrived */
	C_LATE,		/* counter beyond what the barrier allows */
	C_SEQ,
	C_STATUS,
};

/* Shared between the parent and its children (MAP_SHARED | ANON). */
struct shared {
	_Atomic uint64_t counter;
	_Atomic int ready;
	_Atomic int go;
	_Atomic uint32_t last_seq[16];
};

static struct shared *shared_new(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(sh, MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	return sh;
}

static struct gba_group *child_join(struct gba_dev **devp, uint64_t key,
				    uint32_t n, uint32_t id)
{
	struct gba_group_attr attr = {key, n, id};
	struct gba_group *grp;

	if (gba_dev_open(gba_t_dev, devp))
		_exit(C_OPEN);
	if (gba_group_join(*devp, &attr, &grp))
		_exit(C_JOIN);
	return grp;
}

static void random_delay(unsigned *rs)
{
	unsigned r = rand_r(rs);

	if ((r & 7) == 0) {		/* 1/8: a short busy delay */
		volatile unsigned i, n = (r >> 8) % 3000;

		for (i = 0; i < n; i++)
			;
	} else if ((r & 63) == 1) {	/* 1/64: sleep up to 200 us */
		usleep((r >> 8) % 200);
	} else if ((r & 63) == 2) {
		sched_yield();
	}
}

/*
 * Each process increments the shared counter before arriving at barrier
 * k; once released it must see counter >= n*k (nobody released before all
 * arrived) and counter <= n*k + n-1 (nobody passed barrier k+1 without us).
 */
static void barrier_child(uint32_t n, uint32_t id, int iters,
			  struct shared *sh)
{
	struct gba_dev *dev;
	struct gba_group *grp = child_join(&dev, 0xb00 + n, n, id);
	unsigned rs = (unsigned)getpid() * 2654435761u;
	uint64_t c;
	int k, ret;

	for (k = 1; k <= iters; k++) {
		random_delay(&rs);
		atomic_fetch_add(&sh->counter, 1);
		ret = gba_group_barrier(grp);
		if (ret)
			_exit(C_BARRIER);
		c = atomic_load(&sh->counter);
		if (c < (uint64_t)n * k)
			_exit(C_EARLY);
		if (c > (uint64_t)n * k + n - 1)
			_exit(C_LATE);
	}
	gba_group_leave(grp);
	gba_dev_close(dev);
	_exit(C_OK);
}

static void wait_children(pid_t *pids, int n)
{
	int i, st;

	for (i = 0; i < n; i++) {
		cr_assert_eq(waitpid(pids[i], &st, 0), pids[i]);
		cr_expect(WIFEXITED(st), "child %d died: signal %d", i,
			  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		if (WIFEXITED(st))
			cr_expect_eq(WEXITSTATUS(st), 0, "child %d exit %d", i,
				     WEXITSTATUS(st));
	}
}

static void barrier_test(uint32_t n, int iters)
{
	struct shared *sh = shared_new();
	pid_t pids[16];
	uint32_t i;
	double t0 = gba_t_now_ms();

	gba_t_image("bar");
	for (i = 0; i < n; i++) {
		pids[i] = gba_t_fork();
		cr_assert_geq(pids[i], 0);
		if (pids[i] == 0)
			barrier_child(n, i, iters, sh);
	}
	wait_children(pids, n);
	cr_expect_eq(atomic_load(&sh->counter), (uint64_t)n * iters);
	cr_log_info("%u processes, %d barriers: %.1f ms", n, iters,
		    gba_t_now_ms() - t0);
	munmap(sh, sizeof(*sh));
}

Test(mp, barrier_2_processes)
{
	barrier_test(2, 20000);
}

Test(mp, barrier_4_processes)
{
	barrier_test(4, 5000);
}

Test(mp, barrier_8_processes)
{
	barrier_test(8, 3000);
}

/* Sequence numbers cross 2^32 with several processes. */
Test(mp, wrap_across_processes)
{
	const uint32_t n = 4, start = 0xffffff00u;
	const int iters = 600;
	struct shared *sh = shared_new();
	struct gba_group *grp;
	struct gba_dev *dev;
	pid_t pids[4];
	uint32_t i, s;
	int k;

	cr_assert_eq(gba_dev_open(gba_t_image("wrap"), &dev), 0);
	grp = gba_t_join(dev, 0x3a9, n, 0);
	cr_assert_eq(gba_emu_test_set_seq(grp, start), 0);
	for (i = 1; i < n; i++) {
		pids[i] = gba_t_fork();
		if (pids[i] == 0) {
			struct gba_dev *d;
			struct gba_group *g = child_join(&d, 0x3a9, n, i);

			for (k = 1; k <= iters; k++) {
				atomic_fetch_add(&sh->counter, 1);
				s = gba_group_arrive(g);
				if (s != start + (uint32_t)k)
					_exit(C_SEQ);
				if (gba_group_wait(g, s, 30000))
					_exit(C_BARRIER);
				if (atomic_load(&sh->counter) <
				    (uint64_t)n * k)
					_exit(C_EARLY);
			}
			gba_dev_close(d);
			_exit(C_OK);
		}
	}
	for (k = 1; k <= iters; k++) {
		atomic_fetch_add(&sh->counter, 1);
		s = gba_group_arrive(grp);
		cr_assert_eq(s, start + (uint32_t)k);
		cr_assert_eq(gba_group_wait(grp, s, 30000), 0, "seq %#x", s);
		cr_assert_geq(atomic_load(&sh->counter), (uint64_t)n * k);
	}
	cr_expect_lt(s, start, "sequence wrapped");
	wait_children(pids + 1, n - 1);
	gba_dev_close(dev);
	munmap(sh, sizeof(*sh));
}

/* Many processes create/open a fresh image at the same moment. */
Test(mp, concurrent_first_open)
{
	const uint32_t n = 8;
	struct shared *sh = shared_new();
	pid_t pids[8];
	uint32_t i;
	int k;

	gba_t_image("race");
	for (i = 0; i < n; i++) {
		pids[i] = gba_t_fork();
		if (pids[i] == 0) {
			struct gba_dev *d;
			struct gba_group *g;

			atomic_fetch_add(&sh->ready, 1);
			while (atomic_load(&sh->ready) < (int)n)
				;
			g = child_join(&d, 0xc0, n, i);
			for (k = 0; k < 50; k++)
				if (gba_group_barrier(g))
					_exit(C_BARRIER);
			gba_dev_close(d);
			_exit(C_OK);
		}
	}
	wait_children(pids, n);
	munmap(sh, sizeof(*sh));
}

/* A device opened before fork is usable in the children (the control
 * plane lock is re-acquired on a descriptor of the child's own). */
Test(mp, device_used_across_fork)
{
	const uint32_t n = 3;
	struct gba_dev *dev;
	pid_t pids[3];
	uint32_t i;
	int k;

	cr_assert_eq(gba_dev_open(gba_t_image("fork"), &dev), 0);
	for (i = 0; i < n; i++) {
		pids[i] = gba_t_fork();
		if (pids[i] == 0) {
			struct gba_group_attr attr = {0xf0, n, i};
			struct gba_group *g;

			if (gba_group_join(dev, &attr, &g))
				_exit(C_JOIN);
			for (k = 0; k < 200; k++)
				if (gba_group_barrier(g))
					_exit(C_BARRIER);
			gba_group_leave(g);
			_exit(C_OK);
		}
	}
	wait_children(pids, n);
	gba_dev_close(dev);
}

/*
 * Groups whose processes all died are reclaimed: 32 children each take a
 * group and exit without leaving (half are reaped, half stay zombies); the
 * parent can then allocate 32 groups.
 */
Test(mp, dead_groups_reclaimed)
{
	struct gba_group *g[GBA_MAX_GROUPS];
	struct shared *sh = shared_new();
	pid_t pids[GBA_MAX_GROUPS];
	struct gba_dev *dev;
	unsigned i;
	int st;

	cr_assert_eq(gba_dev_open(gba_t_image("reclaim"), &dev), 0);
	for (i = 0; i < GBA_MAX_GROUPS; i++) {
		pids[i] = gba_t_fork();
		if (pids[i] == 0) {
			struct gba_dev *d;

			/* member 0 of 2: the group stays allocated */
			child_join(&d, 0xdead0000 + i, 2, 0);
			atomic_fetch_add(&sh->ready, 1);
			_exit(C_OK);	/* no leave, no close */
		}
	}
	while (atomic_load(&sh->ready) < GBA_MAX_GROUPS)
		usleep(1000);
	for (i = 0; i < GBA_MAX_GROUPS; i += 2) {
		waitpid(pids[i], &st, 0);
		cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	/* the odd ones may still be running _exit: wait for zombies */
	for (i = 1; i < GBA_MAX_GROUPS; i += 2)
		cr_assert_eq(waitid(P_PID, pids[i], NULL,
				    WEXITED | WNOWAIT),
			     0);
	for (i = 0; i < GBA_MAX_GROUPS; i++)
		g[i] = gba_t_join(dev, 0x1000 + i, 1, 0);
	for (i = 0; i < GBA_MAX_GROUPS; i++) {
		cr_expect_eq(gba_group_barrier(g[i]), 0);
		gba_group_leave(g[i]);
	}
	for (i = 1; i < GBA_MAX_GROUPS; i += 2)
		waitpid(pids[i], &st, 0);
	gba_dev_close(dev);
	munmap(sh, sizeof(*sh));
}

/*
 * A peer dies without arriving: the barrier completes with -EPIPE in
 * bounded time for every survivor, and ERROR_INFO says PEER_LOST.
 */
Test(mp, dead_peer_epipe_bounded)
{
	const uint32_t n = 3;
	struct shared *sh = shared_new();
	struct gba_group_diag d;
	struct gba_group *grp;
	struct gba_dev *dev;
	pid_t victim, other;
	double t0, dt;
	int st, k, ret;

	cr_assert_eq(gba_dev_open(gba_t_image("epipe"), &dev), 0);
	grp = gba_t_join(dev, 0xe9, n, 0);
	victim = gba_t_fork();
	if (victim == 0) {
		struct gba_dev *dv;
		struct gba_group *g = child_join(&dv, 0xe9, n, 1);

		for (k = 0; k < 100; k++)
			if (gba_group_barrier(g))
				_exit(C_BARRIER);
		atomic_store(&sh->ready, 1);
		pause();	/* killed while the others wait */
		_exit(C_OK);
	}
	other = gba_t_fork();
	if (other == 0) {
		struct gba_dev *dv;
		struct gba_group *g = child_join(&dv, 0xe9, n, 2);
		double t;

		for (k = 0; k < 100; k++)
			if (gba_group_barrier(g))
				_exit(C_BARRIER);
		t = gba_t_now_ms();
		ret = gba_group_barrier(g);	/* the victim never comes */
		if (ret != -EPIPE)
			_exit(C_STATUS);
		if (gba_t_now_ms() - t > 2000)
			_exit(C_LATE);
		gba_dev_close(dv);
		_exit(C_OK);
	}
	for (k = 0; k < 100; k++)
		cr_assert_eq(gba_group_barrier(grp), 0);
	while (!atomic_load(&sh->ready))
		usleep(100);
	kill(victim, SIGKILL);	/* not reaped: a zombie is dead too */
	t0 = gba_t_now_ms();
	ret = gba_group_wait(grp, gba_group_arrive(grp), 10000);
	dt = gba_t_now_ms() - t0;
	cr_expect_eq(ret, -EPIPE, "got %d", ret);
	cr_expect_lt(dt, 2000.0, "took %.1f ms", dt);
	cr_log_info("dead peer detected in %.1f ms", dt);
	cr_assert_eq(gba_group_diag(grp, &d), 0);
	cr_expect(d.status & GBA_STATUS_ERROR);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(d.error_info), GBA_ERR_PEER_LOST);
	cr_expect_eq(GBA_ERROR_INFO_MEMBER(d.error_info), 1);
	cr_expect_eq(GBA_ERROR_INFO_SEQ(d.error_info), 101);
	/* test() keeps reporting it */
	cr_expect_eq(gba_group_test(grp, 101), -EPIPE);
	wait_children(&other, 1);
	waitpid(victim, &st, 0);
	gba_group_leave(grp);
	gba_dev_close(dev);
	munmap(sh, sizeof(*sh));
}

/*
 * A member that joined and died before the others joined (so all the
 * group's attached processes were dead when they joined): the others
 * join the same group, not a new one, and their first barrier fails with
 * -EPIPE naming it, in bounded time.  Reclaiming the group there made a
 * new one that did not know the dead member: it was then waited for as a
 * member still to join, for ever (fault_trial, killed at its first pass).
 */
Test(mp, member_dead_before_others_join_is_lost)
{
	const uint32_t n = 2;
	struct gba_group_diag d;
	struct gba_group *grp;
	struct gba_dev *dev;
	pid_t victim;
	double t0, dt;
	int st, ret;

	cr_assert_eq(gba_dev_open(gba_t_image("joindead"), &dev), 0);
	victim = gba_t_fork();
	if (victim == 0) {
		struct gba_dev *dv;

		child_join(&dv, 0xd1e, n, 1);
		_exit(C_OK); /* no leave, no close */
	}
	/* a zombie first (dead, not reaped) */
	cr_assert_eq(waitid(P_PID, victim, NULL, WEXITED | WNOWAIT), 0);
	grp = gba_t_join(dev, 0xd1e, n, 0);
	t0 = gba_t_now_ms();
	ret = gba_group_wait(grp, gba_group_arrive(grp), 10000);
	dt = gba_t_now_ms() - t0;
	cr_expect_eq(ret, -EPIPE, "got %d", ret);
	cr_expect_lt(dt, 2000.0, "took %.1f ms", dt);
	cr_assert_eq(gba_group_diag(grp, &d), 0);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(d.error_info), GBA_ERR_PEER_LOST);
	cr_expect_eq(GBA_ERROR_INFO_MEMBER(d.error_info), 1);
	waitpid(victim, &st, 0);
	gba_group_leave(grp);
	/* reaped now: another collective's join frees what is left */
	gba_dev_close(dev);
}

/*
 * A lost peer found by another waiter (reported through ERROR_INFO) stays
 * reported on every later poll of this member, not only on the polls
 * that look at STATUS (the CI flake of dead_peer_epipe_bounded).
 */
Test(mp, lost_peer_found_by_another_waiter_sticks)
{
	struct gba_group *a, *b;
	struct gba_dev *dev;
	uint32_t sa, sb;
	pid_t victim;
	int k;

	cr_assert_eq(gba_dev_open(gba_t_image("sticky"), &dev), 0);
	a = gba_t_join(dev, 0xea, 3, 0);
	b = gba_t_join(dev, 0xea, 3, 2);
	victim = gba_t_fork();
	if (victim == 0) {
		struct gba_dev *dv;

		child_join(&dv, 0xea, 3, 1);
		_exit(C_OK);	/* dies attached, never arrives */
	}
	wait_children(&victim, 1);
	sa = gba_group_arrive(a);
	sb = gba_group_arrive(b);
	cr_assert_eq(gba_group_wait(b, sb, 10000), -EPIPE);
	for (k = 0; k < 40; k++)
		cr_assert_eq(gba_group_test(a, sa), -EPIPE, "poll %d", k);
	gba_group_leave(a);
	gba_group_leave(b);
	gba_dev_close(dev);
}

/* A peer that was released and exited is not reported as lost. */
Test(mp, released_peer_exit_is_not_lost)
{
	struct gba_group *grp;
	struct gba_dev *dev;
	pid_t pid;
	uint32_t s;
	int k;

	cr_assert_eq(gba_dev_open(gba_t_image("exit"), &dev), 0);
	grp = gba_t_join(dev, 0xe8, 2, 0);
	pid = gba_t_fork();
	if (pid == 0) {
		struct gba_dev *dv;
		struct gba_group *g = child_join(&dv, 0xe8, 2, 1);

		for (k = 0; k < 10; k++)
			if (gba_group_barrier(g))
				_exit(C_BARRIER);
		_exit(C_OK);	/* straight after the last release */
	}
	for (k = 0; k < 9; k++)
		cr_assert_eq(gba_group_barrier(grp), 0);
	s = gba_group_arrive(grp);
	usleep(20000);	/* the child is released and exits meanwhile */
	cr_expect_eq(gba_group_wait(grp, s, 5000), 0);
	wait_children(&pid, 1);
	gba_group_leave(grp);
	gba_dev_close(dev);
}

/* -EADDRINUSE while the holder lives; its slot is taken over once dead. */
Test(mp, member_slot_held_by_live_process)
{
	struct gba_group_attr attr = {.key = 0xa1, .member_count = 2,
				      .member_id = 1};
	struct shared *sh = shared_new();
	struct gba_group *grp, *mine;
	struct gba_dev *dev;
	pid_t pid;
	int st;

	cr_assert_eq(gba_dev_open(gba_t_image("inuse"), &dev), 0);
	grp = gba_t_join(dev, 0xa1, 2, 0);
	pid = gba_t_fork();
	if (pid == 0) {
		struct gba_dev *dv;

		child_join(&dv, 0xa1, 2, 1);
		atomic_store(&sh->ready, 1);
		pause();
		_exit(C_OK);
	}
	while (!atomic_load(&sh->ready))
		usleep(100);
	cr_expect_eq(gba_group_join(dev, &attr, &mine), -EADDRINUSE);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	cr_assert_eq(gba_group_join(dev, &attr, &mine), 0);
	gba_group_arrive(grp);
	cr_expect_eq(gba_group_barrier(mine), 0);
	gba_group_leave(mine);
	gba_group_leave(grp);
	gba_dev_close(dev);
	munmap(sh, sizeof(*sh));
}

/*
 * Stale and duplicate doorbells racing with the epoch advancing never
 * count twice or release early: a "noise" process keeps re-ringing every
 * member's last arrival while the members run barriers.  (A switch that
 * detected duplicates with ARRIVED_MASK alone would count a stale
 * duplicate in the next epoch and release it early.)
 */
Test(mp, stale_duplicates_race_with_release)
{
	const uint32_t n = 3;
	const int iters = 4000;
	struct shared *sh = shared_new();
	pid_t pids[4];
	uint32_t i;
	int k;

	gba_t_image("noise");
	for (i = 0; i < n; i++) {
		pids[i] = gba_t_fork();
		if (pids[i] == 0) {
			struct gba_dev *d;
			struct gba_group *g = child_join(&d, 0x5e, n, i);
			uint64_t c;
			uint32_t s;

			if (i == 0)
				atomic_store(&sh->go, 1 + (int)
					     gba_test_group_index(g));
			for (k = 1; k <= iters; k++) {
				atomic_fetch_add(&sh->counter, 1);
				s = gba_group_arrive(g);
				atomic_store(&sh->last_seq[i], s);
				if (gba_group_wait(g, s, 30000))
					_exit(C_BARRIER);
				c = atomic_load(&sh->counter);
				if (c < (uint64_t)n * k)
					_exit(C_EARLY);
				if (c > (uint64_t)n * k + n - 1)
					_exit(C_LATE);
			}
			atomic_fetch_add(&sh->ready, 1);
			gba_dev_close(d);
			_exit(C_OK);
		}
	}
	pids[n] = gba_t_fork();
	if (pids[n] == 0) {
		struct gba_dev *d;
		uint64_t base;
		uint32_t s;

		if (gba_dev_open(gba_t_dev, &d))
			_exit(C_OPEN);
		while (!atomic_load(&sh->go))
			sched_yield();
		base = GBA_GROUP_REG_BASE(atomic_load(&sh->go) - 1);
		while (atomic_load(&sh->ready) < (int)n) {
			for (i = 0; i < n; i++) {
				s = atomic_load(&sh->last_seq[i]);
				if (s)
					gba_test_reg_write(
						d, base + GBA_ARRIVAL,
						GBA_ARRIVAL_VALUE(i, s));
			}
		}
		gba_dev_close(d);
		_exit(C_OK);
	}
	wait_children(pids, n);
	atomic_store(&sh->ready, (int)n);	/* stops the noise */
	wait_children(pids + n, 1);
	cr_expect_eq(atomic_load(&sh->counter), (uint64_t)n * iters);
	munmap(sh, sizeof(*sh));
}

/*
 * The completer dies inside the switch logic, after counting the last
 * arrival and before releasing (simulated by leaving the switch state of
 * such a crash in the image): the survivors get -EPIPE in bounded time.
 */
Test(mp, completer_died_mid_release)
{
	struct shared *sh = shared_new();
	struct gba_emu_sw *sw;
	struct gba_group *grp;
	struct gba_dev *dev;
	uint8_t *img;
	unsigned g;
	pid_t pid;
	uint32_t s;
	double t0;
	int ret;

	cr_assert_eq(gba_dev_open(gba_t_image("midrel"), &dev), 0);
	grp = gba_t_join(dev, 0xc1, 2, 0);
	g = gba_test_group_index(grp);
	pid = gba_t_fork();
	if (pid == 0) {
		struct gba_dev *dv;

		child_join(&dv, 0xc1, 2, 1);
		atomic_store(&sh->ready, 1);
		pause();
		_exit(C_OK);
	}
	while (!atomic_load(&sh->ready))
		usleep(100);
	s = gba_group_arrive(grp);
	/* member 1's arrival counted, its process killed before release */
	img = gba_t_map_image();
	sw = (struct gba_emu_sw *)(img + GBA_EMU_SW_OFFSET) + g;
	atomic_store(&sw->member[1].last, s);
	atomic_fetch_add(&sw->count, 1);
	kill(pid, SIGKILL);
	t0 = gba_t_now_ms();
	ret = gba_group_wait(grp, s, 10000);
	cr_expect_eq(ret, -EPIPE, "got %d", ret);
	cr_expect_lt(gba_t_now_ms() - t0, 2000.0);
	waitpid(pid, NULL, 0);
	munmap(img, GBA_EMU_IMAGE_SIZE);
	gba_group_leave(grp);
	gba_dev_close(dev);
	munmap(sh, sizeof(*sh));
}
