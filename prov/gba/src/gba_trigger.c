/*
 * libfabric "gba" provider: triggered operations (fi_trigger(3)).
 *
 * A verb called with FI_TRIGGER and a struct fi_triggered_context of type
 * FI_TRIGGER_THRESHOLD does not run: it is recorded (struct gba_trigger,
 * see gba_prov.h) on the threshold counter's list, kept sorted by
 * threshold, and runs when the counter's value reaches the threshold.
 * Counter changes call gba_trigger_fire (gba_cntr.c, through the
 * trigger_ops gba_trigger_queue installs on the counter), so triggers fire
 * from whatever changed the counter: a completion, fi_cntr_add/set, or
 * the provider's progress (CQ and counter reads and waits) completing a
 * barrier.  No helper thread.
 *
 * Deferred work (gba_deferred.c) shares the lists: its records manage
 * their own memory (trig->discard), may have no endpoint (counter
 * operations) and count the error value towards the threshold.
 *
 * Ownership (see gba_prov.h): @queued, under the counter's lock, says
 * who owns a trigger.  Lock order: endpoint lock, then counter lock.
 *
 * Chains: a trigger's completion bumps its endpoint's counter, which may
 * make further triggers due.  Each thread keeps a work list of counters
 * to examine; a fire that happens while the thread is already firing only
 * adds to that list, so a chain of any length runs iteratively, in order,
 * on a bounded stack.
 */
#include "config.h"

#include <sched.h>
#include <stdlib.h>

#include "gba_ep.h"

/*
 * This thread's list of counters to examine, linked through
 * gba_cntr.fire_next; a counter is on at most one list (fire_listed),
 * and stays owned by that thread while its triggers run.
 *
 * Every endpoint lock reads and writes these (gba_ep_data_lock), so they
 * use the initial-exec TLS model: a %fs-relative access instead of a call
 * to __tls_get_addr per access, which the default model of a shared
 * object makes (5-6 calls, about 100 instructions, per message).  The
 * 17 bytes come from the static TLS surplus glibc reserves for
 * dlopen()ed libraries such as libfabric's DSO providers.
 */
#define GBA_TLS_IE __attribute__((tls_model("initial-exec")))
static __thread struct gba_cntr *gba_fire_head GBA_TLS_IE;
static __thread struct gba_cntr *gba_fire_tail GBA_TLS_IE;
static __thread bool gba_fire_active GBA_TLS_IE;

static void gba_trigger_fire(struct gba_cntr *cntr);
static void gba_trigger_drain(struct gba_cntr *cntr);

/*
 * A counter's trigger_ops, installed by gba_trigger_queue: fire runs
 * every trigger whose threshold is reached (on every change while
 * triggers are queued; reentrant: a trigger whose completion bumps
 * another counter queues that counter's due triggers on the same
 * thread's work list instead of recursing), drain discards them all
 * (counter close).
 */
static const struct gba_cntr_trigger_ops gba_trigger_cntr_ops = {
	.fire = gba_trigger_fire,
	.drain = gba_trigger_drain,
};

/*
 * gba_trigger_parse - validate the context of an FI_TRIGGER operation (see
 * gba_prov.h).  Returns 0, -FI_EINVAL, -FI_ENOSYS.
 */
int gba_trigger_parse(struct gba_ep *ep, void *context, struct gba_cntr **cntr,
		      uint64_t *threshold)
{
	struct fi_triggered_context *tctx = context;
	struct gba_cntr *c;

	if (!tctx)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "FI_TRIGGER without a struct "
				    "fi_triggered_context\n");
	if (tctx->event_type != FI_TRIGGER_THRESHOLD)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_ENOSYS,
				    "FI_TRIGGER: event type %d not supported "
				    "(FI_TRIGGER_THRESHOLD only)\n",
				    (int)tctx->event_type);
	if (!tctx->trigger.threshold.cntr ||
	    tctx->trigger.threshold.cntr->fid.fclass != FI_CLASS_CNTR)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "FI_TRIGGER: threshold.cntr is not a "
				    "counter\n");
	c = container_of(tctx->trigger.threshold.cntr, struct gba_cntr,
			 cntr_fid);
	if (c->domain != ep->domain)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "FI_TRIGGER: counter belongs to another "
				    "domain\n");
	*cntr = c;
	*threshold = tctx->trigger.threshold.threshold;
	return 0;
}

/* Insert @trig in @cntr's list after every trigger with threshold <= its. */
static void gba_trigger_insert(struct gba_cntr *cntr, struct gba_trigger *trig)
{
	struct gba_trigger *t;

	TAILQ_FOREACH_REVERSE(t, &cntr->triggers, gba_trigger_list,
			      cntr_entry) {
		if (t->threshold <= trig->threshold) {
			TAILQ_INSERT_AFTER(&cntr->triggers, t, trig,
					   cntr_entry);
			return;
		}
	}
	TAILQ_INSERT_HEAD(&cntr->triggers, trig, cntr_entry);
}

/*
 * gba_trigger_queue - queue @trig on @cntr for @threshold (gba_prov.h).
 * The trigger joins its endpoint's list too, so that closing the
 * endpoint discards it.  Returns 0.
 */
int gba_trigger_queue(struct gba_cntr *cntr, uint64_t threshold,
		      struct gba_trigger *trig)
{
	struct gba_ep *ep = trig->ep;

	trig->cntr = cntr;
	trig->threshold = threshold;
	if (ep)
		gba_lock_acquire(&ep->lock);
	gba_lock_acquire(&cntr->lock);
	if (ep)
		TAILQ_INSERT_TAIL(&ep->triggers, trig, ep_entry);
	gba_trigger_insert(cntr, trig);
	trig->queued = true;
	if (!cntr->trigger_ops)
		cntr->trigger_ops = &gba_trigger_cntr_ops;
	atomic_fetch_add_explicit(&cntr->ntriggers, 1, memory_order_seq_cst);
	gba_lock_release(&cntr->lock);
	if (ep)
		gba_lock_release(&ep->lock);

	FI_DBG(&gba_prov, FI_LOG_EP_DATA,
	       "trigger %p queued on counter %p at threshold %llu\n",
	       (void *)trig, (void *)cntr, (unsigned long long)threshold);
	gba_trigger_fire(cntr); /* the threshold may already be reached */
	return 0;
}

/* Unlink @trig from its counter's list (cntr->lock held): it is owned. */
static void gba_trigger_claim(struct gba_trigger *trig)
{
	TAILQ_REMOVE(&trig->cntr->triggers, trig, cntr_entry);
	trig->queued = false;
	atomic_fetch_sub_explicit(&trig->cntr->ntriggers, 1,
				  memory_order_relaxed);
}

/* Unlink an owned @trig from its endpoint's list, if it has one. */
static void gba_trigger_unlink_ep(struct gba_trigger *trig)
{
	struct gba_ep *ep = trig->ep;

	if (!ep)
		return;
	gba_lock_acquire(&ep->lock);
	TAILQ_REMOVE(&ep->triggers, trig, ep_entry);
	gba_lock_release(&ep->lock);
}

/* Dispose of an owned trigger that does not run. */
static void gba_trigger_dispose(struct gba_trigger *trig)
{
	if (trig->discard)
		trig->discard(trig);
	else
		free(trig);
}

/*
 * Detach and return the first due trigger of @cntr, or NULL.  The list
 * is sorted by threshold; a trigger counting the error value may be due
 * before an earlier one that does not.
 */
static struct gba_trigger *gba_trigger_take(struct gba_cntr *cntr)
{
	struct gba_trigger *trig;
	uint64_t value, err;

	gba_lock_acquire(&cntr->lock);
	value = atomic_load_explicit(&cntr->value, memory_order_seq_cst);
	err = atomic_load_explicit(&cntr->err, memory_order_seq_cst);
	TAILQ_FOREACH(trig, &cntr->triggers, cntr_entry) {
		if (trig->threshold > value + err)
			trig = NULL; /* nothing further can be due */
		if (!trig ||
		    trig->threshold <= value + (trig->count_err ? err : 0))
			break;
	}
	if (trig)
		gba_trigger_claim(trig);
	gba_lock_release(&cntr->lock);
	return trig;
}

/* Run the due triggers of @cntr, one at a time, in threshold order. */
static void gba_trigger_run_due(struct gba_cntr *cntr)
{
	struct gba_trigger *trig;
	bool own_memory;

	while ((trig = gba_trigger_take(cntr))) {
		gba_trigger_unlink_ep(trig);
		FI_DBG(&gba_prov, FI_LOG_EP_DATA,
		       "trigger %p fires (threshold %llu)\n", (void *)trig,
		       (unsigned long long)trig->threshold);
		own_memory = trig->discard != NULL; /* run owns it */
		trig->run(trig);
		if (!own_memory)
			free(trig);
	}
}

/*
 * Put @c on this thread's list unless a thread (this one or another)
 * has it listed.  Returns true if this call listed it.
 */
static bool gba_trigger_list(struct gba_cntr *c)
{
	if (atomic_exchange(&c->fire_listed, true))
		return false;
	c->fire_next = NULL;
	if (gba_fire_tail)
		gba_fire_tail->fire_next = c;
	else
		gba_fire_head = c;
	gba_fire_tail = c;
	return true;
}

/*
 * Examine the counters on this thread's list until it is empty.  The
 * thread that listed a counter is the only one running its triggers
 * until it unlists it, so they are issued in threshold order even when
 * several threads (the application's, the progress thread) change the
 * counter: the others only set fire_again, and the owner examines the
 * counter again before letting go of it.
 */
static void gba_trigger_run_list(void)
{
	struct gba_cntr *c;

	while ((c = gba_fire_head)) {
		gba_fire_head = c->fire_next;
		if (!gba_fire_head)
			gba_fire_tail = NULL;
		do {
			atomic_store(&c->fire_again, false);
			gba_trigger_run_due(c);
		} while (atomic_load(&c->fire_again));
		atomic_store(&c->fire_listed, false);
		/* changed between the last look and the unlisting */
		if (atomic_load(&c->fire_again))
			gba_trigger_list(c);
	}
}

/*
 * gba_trigger_fire - run the due triggers of @cntr (its trigger_ops->fire).  @cntr is
 * appended to this thread's list unless it is listed already (by this or
 * another thread, which will examine it again after this change); the
 * outermost call on the thread runs the list until it is empty.
 */
static void gba_trigger_fire(struct gba_cntr *cntr)
{
	atomic_store(&cntr->fire_again, true);
	if (!gba_trigger_list(cntr) || gba_fire_active)
		return;

	gba_fire_active = true;
	gba_trigger_run_list();
	gba_fire_active = false;
}

/*
 * gba_trigger_defer_begin - counters changed on this thread from now on
 * only join its list (as within a firing); the outermost
 * gba_trigger_defer_end runs them.  Used while an endpoint lock is held.
 */
bool gba_trigger_defer_begin(void)
{
	bool outer = !gba_fire_active;

	gba_fire_active = true;
	return outer;
}

void gba_trigger_defer_end(bool outer)
{
	if (!outer)
		return;
	if (gba_fire_head)
		gba_trigger_run_list();
	gba_fire_active = false;
}

/*
 * gba_trigger_drain - discard every trigger queued on @cntr (counter
 * close).  Each is unlinked from its endpoint too.
 */
static void gba_trigger_drain(struct gba_cntr *cntr)
{
	struct gba_trigger *trig;

	for (;;) {
		gba_lock_acquire(&cntr->lock);
		trig = TAILQ_FIRST(&cntr->triggers);
		if (trig)
			gba_trigger_claim(trig);
		gba_lock_release(&cntr->lock);
		if (!trig)
			break;
		gba_trigger_unlink_ep(trig);
		FI_INFO(&gba_prov, FI_LOG_CNTR,
			"counter closed: triggered operation %p (threshold "
			"%llu) discarded\n",
			(void *)trig, (unsigned long long)trig->threshold);
		gba_trigger_dispose(trig);
	}
}

/*
 * Find and claim the first trigger of @ep's list that is still queued
 * and matches @context (any if @any).  *@busy is set when a trigger
 * being run by another thread is still on the list.  Unlinked from both
 * lists; NULL if none.
 */
static struct gba_trigger *gba_trigger_claim_ep(struct gba_ep *ep, bool any,
						void *context, bool *busy)
{
	struct gba_trigger *trig;
	bool claimed = false;

	gba_lock_acquire(&ep->lock);
	TAILQ_FOREACH(trig, &ep->triggers, ep_entry) {
		if (!any && trig->context != context)
			continue;
		gba_lock_acquire(&trig->cntr->lock);
		claimed = trig->queued;
		if (claimed)
			gba_trigger_claim(trig);
		gba_lock_release(&trig->cntr->lock);
		if (claimed)
			break;
		*busy = true;
	}
	if (claimed)
		TAILQ_REMOVE(&ep->triggers, trig, ep_entry);
	gba_lock_release(&ep->lock);
	return claimed ? trig : NULL;
}

/*
 * gba_trigger_drain_ep - discard every trigger @ep queued (endpoint
 * close).  Each is unlinked from its counter too; one being run by
 * another thread is waited for (it leaves the list when it starts).
 */
void gba_trigger_drain_ep(struct gba_ep *ep)
{
	struct gba_trigger *trig;
	bool busy;

	for (;;) {
		busy = false;
		trig = gba_trigger_claim_ep(ep, true, NULL, &busy);
		if (!trig) {
			if (!busy)
				break;
			sched_yield();
			continue;
		}
		FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
			"endpoint closed: triggered operation %p (threshold "
			"%llu) discarded\n",
			(void *)trig, (unsigned long long)trig->threshold);
		gba_trigger_dispose(trig);
	}
}

/*
 * gba_trigger_cancel - fi_cancel of a waiting triggered operation (see
 * gba_prov.h).  The first of @ep's triggers with @context is unlinked
 * from both lists and completes with FI_ECANCELED.  0 or -FI_ENOENT.
 */
ssize_t gba_trigger_cancel(struct gba_ep *ep, void *context)
{
	struct gba_trigger *trig;
	bool busy = false;

	trig = gba_trigger_claim_ep(ep, false, context, &busy);
	if (!trig)
		return -FI_ENOENT;
	gba_ep_tx_error(ep, trig->slot, trig->flags, trig->context,
			FI_ECANCELED, 0, NULL, 0);
	gba_trigger_dispose(trig);
	return 0;
}

/*
 * gba_trigger_unqueue - claim @trig if it still waits (see gba_prov.h).
 * Endpoint lock first, then the counter's, as everywhere.
 */
bool gba_trigger_unqueue(struct gba_trigger *trig)
{
	struct gba_ep *ep = trig->ep;
	bool claimed;

	if (ep)
		gba_lock_acquire(&ep->lock);
	gba_lock_acquire(&trig->cntr->lock);
	claimed = trig->queued;
	if (claimed)
		gba_trigger_claim(trig);
	gba_lock_release(&trig->cntr->lock);
	if (claimed && ep)
		TAILQ_REMOVE(&ep->triggers, trig, ep_entry);
	if (ep)
		gba_lock_release(&ep->lock);
	return claimed;
}
