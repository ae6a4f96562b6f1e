/*
 * libfabric "gba" provider: the record of a deferred operation
 * (struct gba_work, FI_QUEUE_WORK in fi_trigger(3)), ended when the
 * operation it issued completes or its endpoint drops it.  Queueing,
 * firing and retrying the work is gba_deferred.c.
 */
#include "config.h"

#include <stdlib.h>

#include "gba_ep.h"

/*
 * Free @w and drop its references on its completion and target counters
 * (taken at FI_QUEUE_WORK so that they cannot close under it).
 */
void gba_work_free(struct gba_work *w)
{
	if (w->comp)
		atomic_fetch_sub(&w->comp->ref, 1);
	if (w->target)
		atomic_fetch_sub(&w->target->ref, 1);
	free(w);
}

/*
 * gba_work_end - a deferred operation completes (see gba_prov.h).
 * Returns true if the endpoint reports it (FI_COMPLETION).
 */
bool gba_work_end(void *context, uint64_t *flags, void **op_context,
		  struct gba_cntr **comp)
{
	struct gba_work *w = context;
	bool report = w->flags & FI_COMPLETION;

	*op_context = w->op_context;
	*comp = w->comp; /* its reference goes to the caller */
	*flags &= ~GBA_FLAG_DEFERRED;
	if (report)
		*flags |= FI_COMPLETION;
	free(w);
	return report;
}

/* gba_work_drop - the endpoint of an issued operation closed. */
void gba_work_drop(void *context)
{
	struct gba_work *w = context;

	FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
		"endpoint closed: deferred %s %p in flight dropped\n",
		fi_tostr(&w->type, FI_TYPE_OP_TYPE), (void *)w->user);
	gba_work_free(w);
}
