/*
 * libfabric "gba" provider: wait objects shared by EQs, CQs, counters and
 * wait sets (fi_eq(3), fi_cq(3), fi_cntr(3), fi_wait(3)).
 *
 * The writer side (gba_wait_signal) is on the hot path: with nobody
 * waiting it is one fence and one load.  Waiters announce themselves in
 * @waiters before re-checking their condition, so a signal is never lost:
 *
 *   waiter:  waiters++ ; token = seq ; check ; sleep(seq == token) ; waiters--
 *   writer:  publish ; fence ; if (waiters || exported) { seq++ ; wake }
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gba_prov.h"

/* gba_now_ms - CLOCK_MONOTONIC in milliseconds. */
uint64_t gba_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * gba_wait_poll - the first part of a blocking read (fi_cq_sread,
 * fi_cntr_wait) whose bound endpoints have work that completes without a
 * signal (*pending: a peer's message lands in the endpoint's receive
 * ring, a barrier is released by the device): true while the read has
 * waited less than GBA_WAIT_POLL_NS since @start_ns (0: not started; set
 * here), after yielding the CPU once, so that the caller progresses again
 * instead of sleeping.  Beyond it, false: the caller sleeps at most 1 ms
 * per pass.  A reply that comes within the poll phase is seen at once,
 * as a polling reader would see it.
 */
bool gba_wait_poll(uint64_t *start_ns)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
	if (!*start_ns)
		*start_ns = now;
	if (now - *start_ns >= GBA_WAIT_POLL_NS)
		return false;
	sched_yield();
	return true;
}

/*
 * gba_wait_init - set up a wait object of @type.  FI_WAIT_SET leaves
 * @set NULL for the caller to fill.  Returns 0, -FI_ENOSYS for wait
 * objects the provider does not implement (FI_WAIT_MUTEX_COND,
 * FI_WAIT_POLLFD), -FI_EINVAL for unknown values, or the eventfd error
 * (-FI_EMFILE, -FI_ENOMEM).
 */
int gba_wait_init(struct gba_wait *wait, enum fi_wait_obj type)
{
	memset(wait, 0, sizeof(*wait));
	wait->fd = -1;
	atomic_init(&wait->waiters, 0);
	atomic_init(&wait->seq, 0);
	atomic_init(&wait->exported, false);
	wait->set = NULL;

	switch (type) {
	case FI_WAIT_NONE:
	case FI_WAIT_YIELD:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_SET:
		break;
	case FI_WAIT_FD:
		wait->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (wait->fd < 0) {
			int err = errno;

			FI_WARN(&gba_prov, FI_LOG_CORE, "eventfd: %s\n",
				strerror(err));
			return gba_errno_to_fi(-err);
		}
		break;
	case FI_WAIT_MUTEX_COND:
	case FI_WAIT_POLLFD:
		FI_WARN(&gba_prov, FI_LOG_CORE,
			"wait object %s not supported (use FI_WAIT_FD, "
			"FI_WAIT_UNSPEC, FI_WAIT_YIELD, FI_WAIT_SET or "
			"FI_WAIT_NONE)\n",
			gba_wait_obj_str(type));
		return -FI_ENOSYS;
	default:
		FI_WARN(&gba_prov, FI_LOG_CORE, "invalid wait object %d\n",
			(int)type);
		return -FI_EINVAL;
	}
	wait->type = type;
	return 0;
}

/* gba_wait_fini - release the eventfd, if any. */
void gba_wait_fini(struct gba_wait *wait)
{
	if (wait->fd >= 0)
		close(wait->fd);
	wait->fd = -1;
}

/* Wake every thread in FUTEX_WAIT on @addr. */
static void gba_futex_wake(atomic_uint *addr)
{
	syscall(SYS_futex, (unsigned *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
		NULL, 0);
}

/*
 * gba_wait_wake - gba_wait_signal of a wait object that may have
 * sleepers (see gba_prov.h).  Cheap when nobody waits and the fd was not
 * handed out.
 */
void gba_wait_wake(struct gba_wait *wait)
{
	uint64_t one = 1;
	ssize_t n;

	if (wait->set)
		gba_wait_signal(wait->set);
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&wait->waiters, memory_order_relaxed) &&
	    !atomic_load_explicit(&wait->exported, memory_order_relaxed))
		return;
	atomic_fetch_add(&wait->seq, 1);
	switch (wait->type) {
	case FI_WAIT_FD:
		n = write(wait->fd, &one, sizeof(one));
		(void)n; /* EAGAIN: counter saturated, still readable */
		break;
	case FI_WAIT_UNSPEC:
	case FI_WAIT_SET:
		gba_futex_wake(&wait->seq);
		break;
	default:
		break;
	}
}

/* gba_wait_enter - announce a waiter; returns the token for _sleep. */
unsigned gba_wait_enter(struct gba_wait *wait)
{
	atomic_fetch_add(&wait->waiters, 1);
	return atomic_load(&wait->seq);
}

/* gba_wait_leave - undo gba_wait_enter. */
void gba_wait_leave(struct gba_wait *wait)
{
	atomic_fetch_sub(&wait->waiters, 1);
}

/* gba_wait_reset - consume a pending eventfd signal (fi_trywait). */
void gba_wait_reset(struct gba_wait *wait)
{
	uint64_t val;
	ssize_t n;

	if (wait->type == FI_WAIT_FD && wait->fd >= 0) {
		n = read(wait->fd, &val, sizeof(val));
		(void)n; /* EAGAIN: nothing pending */
	}
}

/*
 * gba_wait_sleep - sleep until signalled after @token was taken, or for
 * @timeout_ms (<0: no limit).  FI_WAIT_NONE/YIELD only yield the CPU.
 * Spurious returns are possible; callers loop.
 */
void gba_wait_sleep(struct gba_wait *wait, unsigned token, int timeout_ms)
{
	struct timespec ts, *tsp = NULL;
	struct pollfd pfd;

	if (timeout_ms == 0)
		return;
	if (timeout_ms > 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		tsp = &ts;
	}
	switch (wait->type) {
	case FI_WAIT_FD:
		if (atomic_load(&wait->seq) != token)
			break;
		pfd.fd = wait->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, timeout_ms < 0 ? -1 : timeout_ms) > 0)
			gba_wait_reset(wait);
		break;
	case FI_WAIT_UNSPEC:
	case FI_WAIT_SET:
		syscall(SYS_futex, (unsigned *)&wait->seq, FUTEX_WAIT_PRIVATE,
			token, tsp, NULL, 0);
		break;
	default:
		sched_yield();
		break;
	}
}

/*
 * gba_wait_block - wait for one signal or @timeout_ms (<0: forever).
 * Returns 0 if signalled, -FI_EAGAIN on timeout.  Callers that test a
 * condition should use enter/sleep/leave instead (no lost wakeups).
 */
int gba_wait_block(struct gba_wait *wait, int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0
				    ? UINT64_MAX
				    : gba_now_ms() + (uint64_t)timeout_ms;
	unsigned token = gba_wait_enter(wait);
	int ret = -FI_EAGAIN;

	for (;;) {
		uint64_t now = gba_now_ms();
		int left;

		if (atomic_load(&wait->seq) != token) {
			ret = 0;
			break;
		}
		if (now >= deadline)
			break;
		left = deadline == UINT64_MAX ? -1 : (int)(deadline - now);
		gba_wait_sleep(wait, token, left);
	}
	gba_wait_leave(wait);
	return ret;
}

/* gba_wait_obj_str - "FI_WAIT_FD" etc. (fi_tostr has no such type). */
const char *gba_wait_obj_str(enum fi_wait_obj type)
{
	switch (type) {
	case FI_WAIT_NONE:
		return "FI_WAIT_NONE";
	case FI_WAIT_UNSPEC:
		return "FI_WAIT_UNSPEC";
	case FI_WAIT_SET:
		return "FI_WAIT_SET";
	case FI_WAIT_FD:
		return "FI_WAIT_FD";
	case FI_WAIT_MUTEX_COND:
		return "FI_WAIT_MUTEX_COND";
	case FI_WAIT_YIELD:
		return "FI_WAIT_YIELD";
	case FI_WAIT_POLLFD:
		return "FI_WAIT_POLLFD";
	default:
		return "(invalid wait object)";
	}
}
