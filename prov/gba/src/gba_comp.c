/*
 * libfabric "gba" provider: completion reporting.  Every operation
 * module reports the end of a transmit or receive here: a CQ entry
 * (successful or in error, fi_cq(3)) and the bound counter's increment
 * (fi_cntr(3)); an operation issued by deferred work (FI_QUEUE_WORK)
 * first gives back the work's own context and completion counter
 * (gba_work_end).
 */
#include "config.h"

#include "gba_ep.h"

/* Completion flags a transmit CQ entry may carry (fi_cq(3)). */
#define GBA_CQ_FLAGS                                                           \
	(FI_SEND | FI_RMA | FI_ATOMIC | FI_MSG | FI_TAGGED | FI_READ |         \
	 FI_WRITE | FI_COLLECTIVE)

/* gba_ep_tx_has_space - room for one more tx completion (gba_prov.h). */
bool gba_ep_tx_has_space(struct gba_ep *ep)
{
	return !ep->tx_cq || gba_cq_has_space(ep->tx_cq, 1);
}

/*
 * gba_ep_tx_complete - report a successful tx operation (gba_prov.h).
 * Returns 0 or -FI_EAGAIN (CQ full).
 */
int gba_ep_tx_complete(struct gba_ep *ep, enum gba_cntr_slot slot,
		       uint64_t flags, void *context, size_t len)
{
	struct gba_cntr *comp;
	int ret = 0;

	if (flags & GBA_FLAG_DEFERRED) {
		if (gba_work_end(context, &flags, &context, &comp))
			ret = gba_ep_tx_complete(ep, slot, flags, context, len);
		if (comp)
			gba_cntr_inc_release(comp, false);
		return ret;
	}
	if (ep->tx_cq && (!ep->tx_selective || (flags & FI_COMPLETION)))
		ret = gba_cq_write(ep->tx_cq, context, flags & GBA_CQ_FLAGS,
				   len, NULL, 0, 0, FI_ADDR_NOTAVAIL);
	if (ep->cntrs[slot])
		gba_cntr_inc(ep->cntrs[slot]);
	return ret;
}

/*
 * gba_ep_tx_error - report a failed tx operation (gba_prov.h).
 * Returns 0 or -FI_EAGAIN (CQ full).
 */
int gba_ep_tx_error(struct gba_ep *ep, enum gba_cntr_slot slot, uint64_t flags,
		    void *context, int err, int prov_errno,
		    const void *err_data, size_t err_data_size)
{
	struct gba_cntr *comp;
	int ret = 0;

	if (flags & GBA_FLAG_DEFERRED) {
		if (gba_work_end(context, &flags, &context, &comp))
			ret = gba_ep_tx_error(ep, slot, flags, context, err,
					      prov_errno, err_data,
					      err_data_size);
		else
			FI_INFO(&gba_prov, FI_LOG_EP_DATA,
				"deferred operation %p completes in error: "
				"%s\n",
				context, fi_strerror(err));
		if (comp)
			gba_cntr_inc_release(comp, true);
		return ret;
	}
	FI_INFO(&gba_prov, FI_LOG_EP_DATA,
		"operation %p completes in error: %s\n", context,
		fi_strerror(err));
	if (ep->tx_cq)
		ret = gba_cq_write_error_data(
			ep->tx_cq, context, flags & GBA_CQ_FLAGS, err,
			prov_errno, 0, 0, err_data, err_data_size);
	if (ep->cntrs[slot])
		gba_cntr_inc_err(ep->cntrs[slot]);
	return ret;
}

void gba_ep_rx_complete(struct gba_ep *ep, int err, void *context,
			uint64_t flags, size_t len, void *buf, uint64_t data,
			uint64_t tag, fi_addr_t src, size_t olen)
{
	struct gba_cntr *comp;

	if (flags & GBA_FLAG_DEFERRED) {
		if (gba_work_end(context, &flags, &context, &comp))
			gba_ep_rx_complete(ep, err, context, flags, len, buf,
					   data, tag, src, olen);
		if (comp)
			gba_cntr_inc_release(comp, err != 0);
		return;
	}
	if (err) {
		if (ep->rx_cq)
			gba_cq_write_error(
				ep->rx_cq, context,
				flags & (FI_RECV | FI_MSG | FI_TAGGED |
					 FI_REMOTE_CQ_DATA | FI_MULTI_RECV),
				err, 0, len, olen);
		if (ep->cntrs[GBA_CNTR_RECV])
			gba_cntr_inc_err(ep->cntrs[GBA_CNTR_RECV]);
		return;
	}
	if (ep->rx_cq && (!ep->rx_selective || (flags & FI_COMPLETION)))
		gba_cq_write(ep->rx_cq, context,
			     flags & (FI_RECV | FI_MSG | FI_TAGGED |
				      FI_REMOTE_CQ_DATA | FI_MULTI_RECV),
			     len, buf, data, tag, src);
	if (ep->cntrs[GBA_CNTR_RECV])
		gba_cntr_inc(ep->cntrs[GBA_CNTR_RECV]);
}
