/*
 * GBA core library: the data plane (arrive, test, wait) and diagnostics.
 *
 * Hot path: no allocation, no lock, no syscall.  Arriving is one indirect
 * call to the backend's doorbell; testing is one acquire load of the
 * member's release flag.  STATUS.ERROR is looked at on the first poll of a
 * barrier and every 16th after; dead peers are looked for only after a few
 * milliseconds of waiting (the check costs syscalls).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "gba_backend.h"

/* Interval between dead-peer checks while waiting. */
#define GBA_LIVENESS_NS (5 * 1000000ULL)
/* Members examined per dead-peer check (bounds its cost). */
#define GBA_LIVENESS_BUDGET 64
/* After this long in the yield phase, wait sleeps between polls. */
#define GBA_YIELD_NS (1 * 1000000ULL)
#define GBA_SLEEP_NS 50000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * Arrival of a member of an oversubscribed group: note where it arrives
 * (for gba_group_should_yield), then ring.  Out of line, so that the
 * common arrival needs no registers saved around the note.
 */
static __attribute__((noinline)) uint32_t group_arrive_noted(
	struct gba_group *grp, uint32_t seq)
{
	atomic_store_explicit(grp->where, GBA_WHERE(sched_getcpu(), seq),
			      memory_order_relaxed);
	grp->doorbell(grp->dev, grp->index,
		      GBA_ARRIVAL_VALUE(grp->member_id, seq));
	return seq;
}

uint32_t gba_group_arrive(struct gba_group *grp)
{
	uint32_t seq;

	if (!grp || !grp->dev)
		return 0;
	seq = ++grp->seq;	/* wraps from 2^32-1 to 0 */
	if (grp->where)
		return group_arrive_noted(grp, seq);
	grp->doorbell(grp->dev, grp->index,
		      GBA_ARRIVAL_VALUE(grp->member_id, seq));
	return seq;
}

/* Polls between two clock reads of a waiter that keeps its CPU. */
#define GBA_IDLE_CLOCK_POLLS 16

/* Member @m's where word (GBA_WHERE), word 1 of its flag line. */
static inline _Atomic uint64_t *group_where(struct gba_group *grp, uint32_t m)
{
	return (_Atomic uint64_t *)(grp->board + m * GBA_FLAG_STRIDE) + 1;
}

/*
 * Keep the CPU (0) or give it away (1)?  Members that cannot all run at
 * once (see gba_group_should_yield in gba.h) keep it when every member
 * that has not arrived at @seq last arrived on another CPU: their turns
 * are elsewhere, and this one sees the release without a context switch.
 * The decision holds for idle_max_ns; then the waiter yields and decides
 * again (a member may have moved to this CPU since it last arrived).
 */
int gba_group_should_yield(struct gba_group *grp, uint32_t seq)
{
	uint32_t m, cpu;
	uint64_t where;

	if (!grp || !grp->dev || !grp->where)
		return 1;
	if (grp->idle_ns && grp->idle_seq == seq) {
		if (++grp->idle_polls % GBA_IDLE_CLOCK_POLLS ||
		    gba_now_ns() - grp->idle_ns < grp->idle_max_ns)
			return 0;
		grp->idle_ns = 0;
		return 1;
	}
	cpu = (uint32_t)sched_getcpu();
	for (m = 0; m < grp->member_count; m++) {
		where = atomic_load_explicit(group_where(grp, m),
					     memory_order_relaxed);
		if (GBA_WHERE_SEQ(where) != seq && GBA_WHERE_CPU(where) == cpu)
			return 1; /* its turn may be on this CPU */
	}
	grp->idle_ns = gba_now_ns();
	grp->idle_seq = seq;
	grp->idle_polls = 0;
	return 0;
}

void gba_group_ring(struct gba_group *grp, uint64_t doorbell)
{
	if (grp && grp->dev)
		grp->doorbell(grp->dev, grp->index, doorbell);
}

static inline int flag_reached(struct gba_group *grp, uint32_t seq)
{
	uint64_t flag = atomic_load_explicit(grp->flag, memory_order_acquire);

	return gba_seq_reached((uint32_t)flag, seq);
}

/*
 * Did the switch flag an error on barrier @seq that concerns us?  Only an
 * ERROR_INFO naming this member and this sequence number counts (STATUS.ERROR
 * is sticky until RESET and ERROR_INFO holds the last error of any member),
 * or a lost peer reported for this sequence number by any waiter.
 */
static int group_check_error(struct gba_group *grp, uint32_t seq)
{
	uint64_t info;

	if (!(gba_reg_load(grp->regs, GBA_STATUS) & GBA_STATUS_ERROR))
		return 0;
	info = gba_reg_load(grp->regs, GBA_ERROR_INFO);
	if (GBA_ERROR_INFO_SEQ(info) != seq)
		return 0;
	switch (GBA_ERROR_INFO_CAUSE(info)) {
	case GBA_ERR_PEER_LOST:
		return -EPIPE;
	case GBA_ERR_NOT_MEMBER:
	case GBA_ERR_BAD_SEQ:
	case GBA_ERR_NOT_ENABLED:
		if (GBA_ERROR_INFO_MEMBER(info) == (grp->member_id & 0xffffff))
			return -EPROTO;
		return 0;
	default:
		return 0;
	}
}

static int group_lost(struct gba_group *grp, uint32_t seq, uint32_t member)
{
	grp->lost = 1;
	grp->lost_seq = seq;
	grp->dev->ops->report_error(
		grp->dev, grp->index,
		GBA_ERROR_INFO_VALUE(GBA_ERR_PEER_LOST, member, seq));
	return -EPIPE;
}

/*
 * Register @off of the group's window through the backend (slow path):
 * the emulated device derives the epoch registers (ARRIVAL_COUNT,
 * RELEASE_SEQ, ARRIVED_MASK) from its switch state.
 */
static uint64_t group_reg(struct gba_group *grp, uint64_t off)
{
	return grp->dev->ops->read64(grp->dev,
				     GBA_GROUP_REG_BASE(grp->index) + off);
}

static int release_seq_reached(struct gba_group *grp, uint32_t seq)
{
	return gba_seq_reached((uint32_t)group_reg(grp, GBA_RELEASE_SEQ), seq);
}

/*
 * Has every member arrived in this epoch, by ARRIVAL_COUNT or by
 * ARRIVED_MASK?  The two differ while an arrival is between its member's
 * word and the count in the emulated switch, for good if it died there.
 */
static int group_all_arrived(struct gba_group *grp)
{
	unsigned w, n = grp->member_count;
	uint64_t word, want;

	if (group_reg(grp, GBA_ARRIVAL_COUNT) >= n)
		return 1;
	for (w = 0; w * 64 < n; w++) {
		word = group_reg(grp, GBA_ARRIVED_MASK(w));
		want = n - w * 64 >= 64 ? ~0ULL : (1ULL << (n - w * 64)) - 1;
		if ((word & want) != want)
			return 0;
	}
	return 1;
}

/*
 * Look for an attached member that has not arrived in this epoch and whose
 * process is gone.  Returns 1 if the barrier turns out to be released, 0
 * if nothing is wrong, -EPIPE if a peer is lost.
 *
 * A member that was released and then exited must not be reported: its
 * ARRIVED_MASK bit is cleared by the release, which sets RELEASE_SEQ
 * first, so when we read a clear bit (acquire) and then find the member
 * dead, re-reading RELEASE_SEQ tells whether it was cleared by a release.
 * Our own flag may still be in flight (the completer stores flags one by
 * one, and may even have died doing so); RELEASE_SEQ covers that too.
 */
static int group_check_peers(struct gba_group *grp, uint32_t seq)
{
	struct gba_book_group *bg;
	unsigned i, n = grp->member_count;
	int stuck;

	if (release_seq_reached(grp, seq))
		return 1;
	if (!grp->dev->book)
		return 0;
	bg = &grp->dev->book->group[grp->index];

	/*
	 * Everyone arrived but nobody released, for two checks in a row:
	 * the completer may have died inside the switch logic (between its
	 * count increment and the release), or a member between its arrival
	 * and its count (emulated switch).  Then any dead member counts,
	 * arrived or not.  (If the completer is merely descheduled, a dead
	 * member still dooms the group at the next barrier.)
	 */
	stuck = group_all_arrived(grp);
	if (stuck && !grp->stuck) {
		grp->stuck = 1;
		return 0;
	}
	grp->stuck = stuck;

	for (i = 0; i < n && i < GBA_LIVENESS_BUDGET; i++) {
		uint32_t m = grp->peer_cursor;
		uint64_t word, slot;

		grp->peer_cursor = (m + 1) % n;
		if (m == grp->member_id)
			continue;
		word = group_reg(grp, GBA_ARRIVED_MASK(m / 64));
		if (((word >> (m % 64)) & 1) && !stuck)
			continue;
		slot = atomic_load_explicit(&bg->slot[m],
					    memory_order_acquire);
		if (!slot || gba_proc_slot_alive(slot))
			continue;	/* not attached (yet), or alive */
		if (release_seq_reached(grp, seq) || flag_reached(grp, seq))
			return 1;
		return group_lost(grp, seq, m);
	}
	return 0;
}

/*
 * One poll.  @clock_mask: read the clock (for the dead-peer check) on
 * polls whose count has none of these bits set; gba_group_test reads it
 * rarely, the sleeping phases of gba_group_wait on every poll.
 */
static inline int group_poll(struct gba_group *grp, uint32_t seq,
			     uint32_t clock_mask)
{
	uint64_t now;
	int ret;

	if (flag_reached(grp, seq))
		return 1;

	if (grp->poll_seq != seq || !grp->polls) {
		grp->poll_seq = seq;
		grp->polls = 0;
		grp->check_ns = 0;
		grp->stuck = 0;
	}
	grp->polls++;
	if (grp->lost && grp->lost_seq == seq)
		return -EPIPE;
	if (grp->polls == 1 || !(grp->polls & 15)) {
		ret = group_check_error(grp, seq);
		/*
		 * A stale duplicate of our own doorbell, rung after the
		 * epoch advanced, is rejected as BAD_SEQ with our member id
		 * and seq although barrier @seq was released (our flag may
		 * still be in flight).  The switch stored RELEASE_SEQ before
		 * advancing the epoch, so it is visible here.
		 */
		if (ret == -EPROTO && release_seq_reached(grp, seq))
			return 1;
		if (ret == -EPIPE) {
			/* reported by another waiter: latch it, as if ours */
			grp->lost = 1;
			grp->lost_seq = seq;
		}
		if (ret)
			return ret;
	}
	if (grp->polls & clock_mask)
		return 0;
	now = gba_now_ns();
	if (!grp->check_ns) {
		grp->check_ns = now;
	} else if (now - grp->check_ns >= GBA_LIVENESS_NS) {
		grp->check_ns = now;
		return group_check_peers(grp, seq);
	}
	return 0;
}

int gba_group_test(struct gba_group *grp, uint32_t seq)
{
	if (!grp || !grp->dev)
		return -EINVAL;
	return group_poll(grp, seq, grp->test_clock_mask);
}

int gba_group_wait(struct gba_group *grp, uint32_t seq, int timeout_ms)
{
	uint64_t start = 0, now, deadline = 0;
	struct timespec ts = {0, GBA_SLEEP_NS};
	uint32_t i, spin;
	int ret;

	if (!grp || !grp->dev)
		return -EINVAL;

	/*
	 * Spin.  The budget adapts: it shrinks when spinning did not pay
	 * off (more processes than cores: the peers need our CPU) and grows
	 * back when barriers complete while spinning.  It is 0 in a group
	 * that oversubscribes the emulated device's host (gba_group_join).
	 */
	spin = grp->spin;
	for (i = 0; i < spin; i++) {
		ret = group_poll(grp, seq, 1023);
		if (ret) {
			if (ret > 0 && i < spin / 2 && spin < GBA_SPIN_MAX)
				grp->spin = spin * 2;
			return ret < 0 ? ret : 0;
		}
		if (!start && i == 64) {
			start = gba_now_ns();
			deadline = start + (uint64_t)timeout_ms * 1000000ULL;
		}
		if (timeout_ms >= 0 && start && !(i & 255) &&
		    gba_now_ns() >= deadline)
			return -ETIMEDOUT;
		cpu_relax();
	}
	if (spin > GBA_SPIN_MIN)
		grp->spin = spin / 2;
	if (!start) {
		start = gba_now_ns();
		deadline = start + (uint64_t)timeout_ms * 1000000ULL;
	}

	/* then yield, then sleep: other processes on our core progress */
	for (;;) {
		ret = group_poll(grp, seq, 0);
		if (ret)
			return ret < 0 ? ret : 0;
		now = gba_now_ns();
		if (timeout_ms >= 0 && now >= deadline)
			return -ETIMEDOUT;
		if (now - start >= GBA_YIELD_NS)
			nanosleep(&ts, NULL);
		else if (gba_group_should_yield(grp, seq))
			sched_yield();
	}
}

int gba_group_barrier(struct gba_group *grp)
{
	if (!grp || !grp->dev)
		return -EINVAL;
	return gba_group_wait(grp, gba_group_arrive(grp), -1);
}

int gba_group_diag(const struct gba_group *cgrp, struct gba_group_diag *diag)
{
	struct gba_group *grp = (struct gba_group *)cgrp;
	struct gba_dev *dev;
	uint64_t base;
	unsigned w;

	if (!grp || !grp->dev || !diag)
		return -EINVAL;
	dev = grp->dev;
	base = GBA_GROUP_REG_BASE(grp->index);
	memset(diag, 0, sizeof(*diag));
	diag->index = grp->index;
	diag->group_id = dev->ops->read32(dev, base + GBA_GROUP_ID);
	diag->member_count = dev->ops->read32(dev, base + GBA_MEMBER_COUNT);
	diag->member_id = grp->member_id;
	diag->arrival_count = dev->ops->read64(dev, base + GBA_ARRIVAL_COUNT);
	diag->release_seq = dev->ops->read64(dev, base + GBA_RELEASE_SEQ);
	diag->control = dev->ops->read64(dev, base + GBA_CONTROL);
	diag->status = dev->ops->read64(dev, base + GBA_STATUS);
	diag->error_info = dev->ops->read64(dev, base + GBA_ERROR_INFO);
	diag->local_seq = grp->seq;
	diag->flag = (uint32_t)atomic_load_explicit(grp->flag,
						    memory_order_acquire);
	for (w = 0; w < GBA_MASK_WORDS; w++) {
		diag->member_mask[w] =
			dev->ops->read64(dev, base + GBA_MEMBER_MASK(w));
		diag->arrived_mask[w] =
			dev->ops->read64(dev, base + GBA_ARRIVED_MASK(w));
	}
	return 0;
}

const volatile uint64_t *gba_group_flag(const struct gba_group *cgrp,
					uint64_t *iova)
{
	struct gba_group *grp = (struct gba_group *)cgrp;

	if (!grp || !grp->dev)
		return NULL;
	if (iova)
		*iova = grp->dev->ops->read64(grp->dev,
					      GBA_GROUP_REG_BASE(grp->index) +
					      GBA_RELEASE_ADDR(grp->member_id));
	return (const volatile uint64_t *)grp->flag;
}
