/*
 * libfabric "gba" provider: counters (fi_cntr(3)).
 *
 * Value and error value are 64-bit atomics: increments take no lock.
 * Every change fires due triggered operations (through the trigger_ops
 * the trigger module installed, only when some are queued) and wakes
 * waiters.  Reads and waits progress the
 * progress sources (endpoints) bound to the counter.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_obj.h"

/*
 * Counter changed: run triggers, wake fi_cntr_wait / wait sets.  The
 * value (or error value: deferred work counts it) was updated with a
 * seq_cst operation and ntriggers is read seq_cst, pairing with
 * gba_trigger_queue (ntriggers += 1, then read the values): one of the
 * two always sees the other, so no trigger is missed.
 */
static inline void gba_cntr_changed(struct gba_cntr *cntr)
{
	if (atomic_load_explicit(&cntr->ntriggers, memory_order_seq_cst))
		cntr->trigger_ops->fire(cntr);
	gba_wait_signal(&cntr->wait);
}

/* gba_cntr_inc - value += 1 (an operation completed). */
void gba_cntr_inc(struct gba_cntr *cntr)
{
	atomic_fetch_add_explicit(&cntr->value, 1, memory_order_seq_cst);
	gba_cntr_changed(cntr);
}

/* gba_cntr_inc_err - error value += 1 (an operation failed). */
void gba_cntr_inc_err(struct gba_cntr *cntr)
{
	atomic_fetch_add_explicit(&cntr->err, 1, memory_order_seq_cst);
	gba_cntr_changed(cntr);
}

/*
 * gba_cntr_inc_release - value (or, with @err, error value) += 1, then
 * drop the reference deferred work held so that the counter could not
 * close before this completion (gba_work_end).
 */
void gba_cntr_inc_release(struct gba_cntr *cntr, bool err)
{
	if (err)
		gba_cntr_inc_err(cntr);
	else
		gba_cntr_inc(cntr);
	atomic_fetch_sub(&cntr->ref, 1);
}

/*
 * Progress every source (endpoint) bound to @cntr once (and every
 * endpoint of the domain, through domain->progress_all, if deferred work
 * names the counter); *@pending (if not NULL) is set when one has work
 * in flight.
 */
static void gba_cntr_progress(struct gba_cntr *cntr, bool *pending)
{
	if (atomic_load_explicit(&cntr->domain_progress,
				 memory_order_relaxed)) {
		struct gba_progress_src *all = &cntr->domain->progress_all;

		all->progress(all->ctx, NULL);
		if (pending)
			*pending = true;
	}

	gba_lock_acquire(&cntr->ep_lock);
	gba_progress_srcs_run(&cntr->srcs, pending);
	gba_lock_release(&cntr->ep_lock);
}

/*
 * gba_cntr_read - fi_cntr_read(3): progress the bound endpoints and
 * return the value.
 */
static uint64_t gba_cntr_read(struct fid_cntr *cntr_fid)
{
	struct gba_cntr *cntr =
		container_of(cntr_fid, struct gba_cntr, cntr_fid);
	uint64_t v;

	gba_cntr_progress(cntr, NULL);
	v = atomic_load_explicit(&cntr->value, memory_order_acquire);
	cntr->last_value = v;
	return v;
}

/* gba_cntr_readerr - fi_cntr_readerr(3): the error value. */
static uint64_t gba_cntr_readerr(struct fid_cntr *cntr_fid)
{
	struct gba_cntr *cntr =
		container_of(cntr_fid, struct gba_cntr, cntr_fid);
	uint64_t v;

	gba_cntr_progress(cntr, NULL);
	v = atomic_load_explicit(&cntr->err, memory_order_acquire);
	cntr->last_err = v;
	return v;
}

/* gba_cntr_add - fi_cntr_add(3): value += @value.  Returns 0. */
static int gba_cntr_add(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct gba_cntr *cntr =
		container_of(cntr_fid, struct gba_cntr, cntr_fid);

	atomic_store(&cntr->poll_value,
		     atomic_fetch_add_explicit(&cntr->value, value,
					       memory_order_seq_cst) +
			     value);
	gba_cntr_changed(cntr);
	return 0;
}

/* gba_cntr_set - fi_cntr_set(3): value = @value.  Returns 0. */
static int gba_cntr_set(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct gba_cntr *cntr =
		container_of(cntr_fid, struct gba_cntr, cntr_fid);

	atomic_store_explicit(&cntr->value, value, memory_order_seq_cst);
	atomic_store(&cntr->poll_value, value);
	gba_cntr_changed(cntr);
	return 0;
}

/* gba_cntr_adderr - fi_cntr_adderr(3): error value += @value.  Returns 0. */
static int gba_cntr_adderr(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct gba_cntr *cntr =
		container_of(cntr_fid, struct gba_cntr, cntr_fid);

	atomic_store(&cntr->poll_err,
		     atomic_fetch_add_explicit(&cntr->err, value,
					       memory_order_seq_cst) +
			     value);
	gba_cntr_changed(cntr);
	return 0;
}

/* gba_cntr_seterr - fi_cntr_seterr(3): error value = @value.  Returns 0. */
static int gba_cntr_seterr(struct fid_cntr *cntr_fid, uint64_t value)
{
	struct gba_cntr *cntr =
		container_of(cntr_fid, struct gba_cntr, cntr_fid);

	atomic_store_explicit(&cntr->err, value, memory_order_seq_cst);
	atomic_store(&cntr->poll_err, value);
	gba_cntr_changed(cntr);
	return 0;
}

/*
 * gba_cntr_ready - progress; true if the value or the error value changed
 * since the last fi_cntr_read / fi_cntr_readerr (fi_trywait, fi_wait).
 */
bool gba_cntr_ready(struct gba_cntr *cntr, bool *pending)
{
	gba_cntr_progress(cntr, pending);
	return atomic_load(&cntr->value) != cntr->last_value ||
	       atomic_load(&cntr->err) != cntr->last_err;
}

/*
 * gba_cntr_poll - progress; true if the value or the error value changed
 * since the checkpoint (the last gba_cntr_poll, or a value the user
 * set or added), which moves to the values seen.  fi_poll(3).
 */
bool gba_cntr_poll(struct gba_cntr *cntr)
{
	uint64_t v, e;
	bool changed;

	gba_cntr_progress(cntr, NULL);
	v = atomic_load_explicit(&cntr->value, memory_order_acquire);
	e = atomic_load_explicit(&cntr->err, memory_order_acquire);
	changed = atomic_exchange(&cntr->poll_value, v) != v;
	return (atomic_exchange(&cntr->poll_err, e) != e) || changed;
}

/* Readiness callback of a counter in a wait set (gba_wait_set_add). */
static bool gba_cntr_fid_ready(struct fid *fid, bool *pending)
{
	return gba_cntr_ready(container_of(fid, struct gba_cntr, cntr_fid.fid),
			      pending);
}

/*
 * gba_cntr_wait - fi_cntr_wait(3): wait until value >= @threshold, for
 * at most @timeout ms (<0: forever).  Bound endpoints are progressed
 * while waiting.  Counters opened with FI_WAIT_NONE are polled (the
 * man page calls that invalid; polling keeps such programs working).
 * Returns 0, -FI_ETIMEDOUT, or -FI_EAVAIL when the error value changes
 * during the wait.
 */
static int gba_cntr_wait(struct fid_cntr *cntr_fid, uint64_t threshold,
			 int timeout)
{
	struct gba_cntr *cntr =
		container_of(cntr_fid, struct gba_cntr, cntr_fid);
	uint64_t err0 = atomic_load(&cntr->err);
	uint64_t deadline, now, poll_ns = 0;
	unsigned token;
	bool pending;
	int left;

	deadline = timeout < 0 ? UINT64_MAX : gba_now_ms() + (uint64_t)timeout;
	for (;;) {
		pending = false;
		gba_cntr_progress(cntr, &pending);
		if (atomic_load_explicit(&cntr->value, memory_order_acquire) >=
		    threshold)
			return 0;
		if (atomic_load(&cntr->err) != err0)
			return -FI_EAVAIL;
		now = gba_now_ms();
		if (now >= deadline)
			return -FI_ETIMEDOUT;
		if (pending && gba_wait_poll(&poll_ns))
			continue;
		left = deadline == UINT64_MAX ? -1 : (int)(deadline - now);
		if (pending && (left < 0 || left > 1))
			left = 1;
		token = gba_wait_enter(&cntr->wait);
		if (atomic_load(&cntr->value) < threshold &&
		    atomic_load(&cntr->err) == err0)
			gba_wait_sleep(&cntr->wait, token, left);
		gba_wait_leave(&cntr->wait);
	}
}

/*
 * gba_cntr_bind_progress - bind @ctx: counter reads and waits progress
 * it through @progress, and the counter cannot be closed while it is
 * bound (gba_prov.h).  A context binding the counter for several events
 * binds once per event, listed next to each other (progressed once).
 * Returns 0, -FI_EINVAL, -FI_ENOMEM.
 */
int gba_cntr_bind_progress(struct gba_cntr *cntr, void *ctx,
			   int (*progress)(void *ctx, bool *pending))
{
	int ret;

	if (!cntr || !ctx || !progress)
		return -FI_EINVAL;
	gba_lock_acquire(&cntr->ep_lock);
	ret = gba_progress_srcs_add(&cntr->srcs, ctx, progress);
	if (!ret)
		atomic_fetch_add(&cntr->ref, 1);
	gba_lock_release(&cntr->ep_lock);
	return ret;
}

/* gba_cntr_unbind_progress - unbind @ctx once (one gba_cntr_bind_progress). */
void gba_cntr_unbind_progress(struct gba_cntr *cntr, void *ctx)
{
	if (!cntr || !ctx)
		return;
	gba_lock_acquire(&cntr->ep_lock);
	if (gba_progress_srcs_del(&cntr->srcs, ctx))
		atomic_fetch_sub(&cntr->ref, 1);
	gba_lock_release(&cntr->ep_lock);
}

/*
 * fi_close(3) on a counter: -FI_EBUSY while endpoints are bound or
 * deferred work names it as its completion or target counter;
 * drains queued triggered operations.  Returns 0 or -FI_EBUSY.
 */
static int gba_cntr_close(struct fid *fid)
{
	struct gba_cntr *cntr =
		container_of(fid, struct gba_cntr, cntr_fid.fid);

	if (atomic_load(&cntr->ref)) {
		FI_WARN(&gba_prov, FI_LOG_CNTR,
			"counter still in use (%d endpoint bindings and "
			"deferred operations naming it)\n",
			atomic_load(&cntr->ref));
		return -FI_EBUSY;
	}
	if (atomic_load(&cntr->ntriggers))
		cntr->trigger_ops->drain(cntr);
	if (cntr->wait_set)
		gba_wait_set_del(cntr->wait_set, &cntr->cntr_fid.fid);
	gba_wait_fini(&cntr->wait);
	gba_lock_destroy(&cntr->lock);
	gba_lock_destroy(&cntr->ep_lock);
	utarray_done(&cntr->srcs);
	atomic_fetch_sub(&cntr->domain->ncntr, 1);
	atomic_fetch_sub(&cntr->domain->ref, 1);
	free(cntr);
	return 0;
}

/*
 * gba_cntr_control - fi_control(3): FI_GETWAIT (int *, FI_WAIT_FD only),
 * FI_GETWAITOBJ (enum fi_wait_obj *).  Returns 0, -FI_EINVAL,
 * -FI_ENODATA, -FI_ENOSYS.
 */
static int gba_cntr_control(struct fid *fid, int command, void *arg)
{
	struct gba_cntr *cntr =
		container_of(fid, struct gba_cntr, cntr_fid.fid);

	if (!arg)
		return GBA_WARN_RET(FI_LOG_CNTR, -FI_EINVAL,
				    "counter control: NULL argument\n");
	switch (command) {
	case FI_GETWAIT:
		if (cntr->wait.type != FI_WAIT_FD)
			return GBA_WARN_RET(FI_LOG_CNTR, -FI_ENODATA,
					    "FI_GETWAIT: counter wait object "
					    "is %s, not FI_WAIT_FD\n",
					    gba_wait_obj_str(cntr->wait.type));
		atomic_store(&cntr->wait.exported, true);
		*(int *)arg = cntr->wait.fd;
		return 0;
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = cntr->wait.type;
		return 0;
	default:
		return gba_no_control(fid, command, arg);
	}
}

static struct fi_ops gba_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_cntr_close,
	.bind = gba_no_bind,
	.control = gba_cntr_control,
	.ops_open = gba_no_ops_open,
};

static struct fi_ops_cntr gba_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = gba_cntr_read,
	.readerr = gba_cntr_readerr,
	.add = gba_cntr_add,
	.set = gba_cntr_set,
	.wait = gba_cntr_wait,
	.adderr = gba_cntr_adderr,
	.seterr = gba_cntr_seterr,
};

/*
 * gba_cntr_open - fi_cntr_open(3).
 * @attr: events (FI_CNTR_EVENTS_COMP), wait_obj (NONE, UNSPEC, FD, YIELD,
 *        SET with wait_set), flags (0).  NULL @attr: defaults.
 * Returns 0, -FI_EINVAL, -FI_ENOSYS (wait object, events), -FI_ENOSPC
 * (cntr_cnt counters open), -FI_ENOMEM, -FI_EMFILE.
 */
int gba_cntr_open(struct fid_domain *domain_fid, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr_fid, void *context)
{
	struct fi_cntr_attr defaults = {
		.events = FI_CNTR_EVENTS_COMP,
		.wait_obj = FI_WAIT_NONE,
	};
	struct gba_wait_set *set = NULL;
	struct gba_domain *domain;
	struct gba_cntr *cntr;
	int ret;

	if (!domain_fid || !cntr_fid)
		return GBA_WARN_RET(FI_LOG_CNTR, -FI_EINVAL,
				    "fi_cntr_open: NULL domain or cntr\n");
	domain = container_of(domain_fid, struct gba_domain, domain_fid);
	if (!attr)
		attr = &defaults;
	if (attr->events != FI_CNTR_EVENTS_COMP)
		return GBA_WARN_RET(FI_LOG_CNTR, -FI_ENOSYS,
				    "fi_cntr_open: events %d not supported\n",
				    attr->events);
	if (attr->flags)
		return GBA_WARN_RET(FI_LOG_CNTR, -FI_EINVAL,
				    "fi_cntr_open: flags 0x%llx not "
				    "supported\n",
				    (unsigned long long)attr->flags);
	if (attr->wait_obj == FI_WAIT_SET) {
		set = gba_wait_set_get(attr->wait_set);
		if (!set)
			return GBA_WARN_RET(FI_LOG_CNTR, -FI_EINVAL,
					    "fi_cntr_open: FI_WAIT_SET without "
					    "a gba wait set\n");
	}
	if (atomic_fetch_add(&domain->ncntr, 1) >= GBA_CNTR_CNT) {
		atomic_fetch_sub(&domain->ncntr, 1);
		return GBA_WARN_RET(FI_LOG_CNTR, -FI_ENOSPC,
				    "fi_cntr_open: %d counters already open "
				    "(domain cntr_cnt)\n",
				    GBA_CNTR_CNT);
	}
	cntr = calloc(1, sizeof(*cntr));
	if (!cntr) {
		ret = -FI_ENOMEM;
		goto err0;
	}
	ret = gba_wait_init(&cntr->wait, attr->wait_obj);
	if (ret)
		goto err1;
	ret = gba_lock_init(&cntr->lock, true);
	if (ret)
		goto err2;
	ret = gba_lock_init(&cntr->ep_lock, domain->locking);
	if (ret)
		goto err3;
	if (set) {
		ret = gba_wait_set_add(set, &cntr->cntr_fid.fid,
				       gba_cntr_fid_ready);
		if (ret)
			goto err4;
		cntr->wait.set = &set->wait;
		cntr->wait_set = set;
	}
	utarray_init(&cntr->srcs, &gba_progress_src_icd);
	cntr->domain = domain;
	atomic_init(&cntr->ref, 0);
	atomic_init(&cntr->value, 0);
	atomic_init(&cntr->err, 0);
	atomic_init(&cntr->poll_value, 0);
	atomic_init(&cntr->poll_err, 0);
	atomic_init(&cntr->ntriggers, 0);
	atomic_init(&cntr->domain_progress, false);
	atomic_init(&cntr->fire_listed, false);
	atomic_init(&cntr->fire_again, false);
	TAILQ_INIT(&cntr->triggers);
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = &gba_cntr_fi_ops;
	cntr->cntr_fid.ops = &gba_cntr_ops;
	atomic_fetch_add(&domain->ref, 1);
	*cntr_fid = &cntr->cntr_fid;
	return 0;
err4:
	gba_lock_destroy(&cntr->ep_lock);
err3:
	gba_lock_destroy(&cntr->lock);
err2:
	gba_wait_fini(&cntr->wait);
err1:
	free(cntr);
err0:
	atomic_fetch_sub(&domain->ncntr, 1);
	return ret;
}
