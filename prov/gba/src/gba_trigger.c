/*
 * libfabric "gba" provider: triggered operations (fi_trigger(3)).
 *
 * A verb called with FI_TRIGGER and a struct fi_triggered_context of type
 * FI_TRIGGER_THRESHOLD does not run: it is recorded (struct gba_trigger,
 * see gba_prov.h) on the threshold counter's list, kept sorted by
 * threshold, and runs when the counter's value reaches the threshold.
 * Counter changes call gba_trigger_fire (gba_cntr.c), so triggers fire
 * from whatever changed the counter: a completion, fi_cntr_add/set, or
 * the provider's progress (CQ and counter reads and waits) completing a
 * barrier.  No helper thread.
 *
 * Chains: a trigger's completion bumps its endpoint's counter, which may
 * make further triggers due.  Each thread keeps a work list of counters
 * to examine; a fire that happens while the thread is already firing only
 * adds to that list, so a chain of any length runs iteratively, in order,
 * on a bounded stack.
 */
#include "config.h"

#include <stdlib.h>

#include "gba_prov.h"

/*
 * This thread's list of counters to examine, linked through
 * gba_cntr.fire_next; a counter is on at most one list (fire_listed).
 */
static __thread struct gba_cntr *gba_fire_head, *gba_fire_tail;
static __thread bool gba_fire_active;

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
	gba_lock_acquire(&ep->lock);
	TAILQ_INSERT_TAIL(&ep->triggers, trig, ep_entry);
	gba_lock_release(&ep->lock);

	gba_lock_acquire(&cntr->lock);
	gba_trigger_insert(cntr, trig);
	atomic_fetch_add_explicit(&cntr->ntriggers, 1, memory_order_seq_cst);
	gba_lock_release(&cntr->lock);

	FI_DBG(&gba_prov, FI_LOG_EP_DATA,
	       "trigger %p queued on counter %p at threshold %llu\n",
	       (void *)trig, (void *)cntr, (unsigned long long)threshold);
	gba_trigger_fire(cntr); /* the threshold may already be reached */
	return 0;
}

/* Detach and return the first due trigger of @cntr, or NULL. */
static struct gba_trigger *gba_trigger_take(struct gba_cntr *cntr)
{
	struct gba_trigger *trig;
	uint64_t value;

	gba_lock_acquire(&cntr->lock);
	value = atomic_load_explicit(&cntr->value, memory_order_seq_cst);
	trig = TAILQ_FIRST(&cntr->triggers);
	if (trig && trig->threshold <= value) {
		TAILQ_REMOVE(&cntr->triggers, trig, cntr_entry);
		atomic_fetch_sub_explicit(&cntr->ntriggers, 1,
					  memory_order_relaxed);
	} else {
		trig = NULL;
	}
	gba_lock_release(&cntr->lock);
	return trig;
}

/* Run the due triggers of @cntr, one at a time, in threshold order. */
static void gba_trigger_run_due(struct gba_cntr *cntr)
{
	struct gba_trigger *trig;
	struct gba_ep *ep;

	while ((trig = gba_trigger_take(cntr))) {
		ep = trig->ep;
		gba_lock_acquire(&ep->lock);
		TAILQ_REMOVE(&ep->triggers, trig, ep_entry);
		gba_lock_release(&ep->lock);
		FI_DBG(&gba_prov, FI_LOG_EP_DATA,
		       "trigger %p fires (threshold %llu)\n", (void *)trig,
		       (unsigned long long)trig->threshold);
		trig->run(trig);
		free(trig);
	}
}

/* Examine the counters on this thread's list until it is empty. */
static void gba_trigger_run_list(void)
{
	struct gba_cntr *c;

	while ((c = gba_fire_head)) {
		gba_fire_head = c->fire_next;
		if (!gba_fire_head)
			gba_fire_tail = NULL;
		atomic_store(&c->fire_listed, false);
		gba_trigger_run_due(c);
	}
}

/*
 * gba_trigger_fire - run the due triggers of @cntr (gba_prov.h).  @cntr is
 * appended to this thread's list unless it is listed already (by this or
 * another thread, which will examine it after this change); the
 * outermost call on the thread runs the list until it is empty.
 */
void gba_trigger_fire(struct gba_cntr *cntr)
{
	if (atomic_exchange(&cntr->fire_listed, true))
		return;
	cntr->fire_next = NULL;
	if (gba_fire_tail)
		gba_fire_tail->fire_next = cntr;
	else
		gba_fire_head = cntr;
	gba_fire_tail = cntr;
	if (gba_fire_active)
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
	gba_trigger_run_list();
	gba_fire_active = false;
}

/*
 * gba_trigger_drain - discard every trigger queued on @cntr (counter
 * close).  Each is unlinked from its endpoint too.
 */
void gba_trigger_drain(struct gba_cntr *cntr)
{
	struct gba_trigger *trig;
	struct gba_ep *ep;

	for (;;) {
		gba_lock_acquire(&cntr->lock);
		trig = TAILQ_FIRST(&cntr->triggers);
		if (trig) {
			TAILQ_REMOVE(&cntr->triggers, trig, cntr_entry);
			atomic_fetch_sub(&cntr->ntriggers, 1);
		}
		gba_lock_release(&cntr->lock);
		if (!trig)
			break;
		ep = trig->ep;
		gba_lock_acquire(&ep->lock);
		TAILQ_REMOVE(&ep->triggers, trig, ep_entry);
		gba_lock_release(&ep->lock);
		FI_INFO(&gba_prov, FI_LOG_CNTR,
			"counter closed: triggered operation %p (threshold "
			"%llu) discarded\n",
			(void *)trig, (unsigned long long)trig->threshold);
		free(trig);
	}
}

/*
 * gba_trigger_drain_ep - discard every trigger @ep queued (endpoint
 * close).  Each is unlinked from its counter too.
 */
void gba_trigger_drain_ep(struct gba_ep *ep)
{
	struct gba_trigger *trig;
	struct gba_cntr *cntr;

	for (;;) {
		gba_lock_acquire(&ep->lock);
		trig = TAILQ_FIRST(&ep->triggers);
		if (trig)
			TAILQ_REMOVE(&ep->triggers, trig, ep_entry);
		gba_lock_release(&ep->lock);
		if (!trig)
			break;
		cntr = trig->cntr;
		gba_lock_acquire(&cntr->lock);
		TAILQ_REMOVE(&cntr->triggers, trig, cntr_entry);
		atomic_fetch_sub(&cntr->ntriggers, 1);
		gba_lock_release(&cntr->lock);
		FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
			"endpoint closed: triggered operation %p (threshold "
			"%llu) discarded\n",
			(void *)trig, (unsigned long long)trig->threshold);
		free(trig);
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
	struct gba_cntr *cntr;

	gba_lock_acquire(&ep->lock);
	TAILQ_FOREACH(trig, &ep->triggers, ep_entry)
		if (trig->context == context)
			break;
	if (trig)
		TAILQ_REMOVE(&ep->triggers, trig, ep_entry);
	gba_lock_release(&ep->lock);
	if (!trig)
		return -FI_ENOENT;
	cntr = trig->cntr;
	gba_lock_acquire(&cntr->lock);
	TAILQ_REMOVE(&cntr->triggers, trig, cntr_entry);
	atomic_fetch_sub(&cntr->ntriggers, 1);
	gba_lock_release(&cntr->lock);
	gba_ep_tx_error(ep, trig->slot, trig->flags, trig->context,
			FI_ECANCELED, 0, NULL, 0);
	free(trig);
	return 0;
}
