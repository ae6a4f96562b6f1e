/*
 * libfabric "gba" provider: the endpoint's engine endpoint (the data path
 * to other processes; include/gba/gba_eng.h, doc/design.md section 4),
 * opened and closed with the endpoint, and the engine's callbacks, which
 * its progress runs:
 *
 *   recv         gba_msg_arrived (gba_msg.c): matching
 *   complete     a transmit request ends: CQ entry / counter, or error
 *   mr_lookup    gba_mr_lookup against the domain's registrations
 *   atomic       gba_atomic_exec (gba_atomic.c), every type of the table
 *   remote_event remote CQ data to the rx CQ, FI_RMA_EVENT counters
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gba/gba_job.h>

#include "gba_ep.h"

static void gba_eng_recv_cb(void *ctx, struct gba_eng_rx *rx)
{
	gba_msg_arrived(ctx, rx);
}

/* Scatter the old values of a fetching atomic from its bounce buffer. */
static void gba_tx_req_scatter(struct gba_tx_req *req)
{
	const uint8_t *p = req->bounce;
	size_t i, n;

	for (i = 0; i < req->res_count; i++) {
		n = req->res[i].count * req->elem_size;
		if (n)
			memcpy(req->res[i].addr, p, n);
		p += n;
	}
}

static void gba_eng_complete_cb(void *ctx, uint64_t cookie, int status)
{
	struct gba_ep *ep = ctx;
	struct gba_tx_req *req = (struct gba_tx_req *)(uintptr_t)cookie;
	struct gba_swc_op *coll_op = req->coll_op;
	void *context = req->context;
	uint64_t flags = req->flags;
	enum gba_cntr_slot slot = req->slot;
	size_t len = req->len;

	if (coll_op) {
		gba_tx_req_put(ep, req);
		gba_swc_send_done(ep, coll_op, status);
		return;
	}
	if (req->bounce) {
		if (!status)
			gba_tx_req_scatter(req);
		free(req->bounce);
		req->bounce = NULL;
	}
	gba_tx_req_put(ep, req);
	if (status) {
		gba_ep_tx_error(ep, slot, flags, context,
				-gba_xfer_errno_to_fi(status), -status, NULL,
				0);
		return;
	}
	if (flags & GBA_FLAG_NO_CQ) {
		if (ep->cntrs[slot])
			gba_cntr_inc(ep->cntrs[slot]);
		return;
	}
	gba_ep_tx_complete(ep, slot, flags, context, len);
}

static int gba_eng_mr_lookup_cb(void *ctx, uint64_t key, uint64_t addr,
				size_t len, uint32_t access, void **ptr)
{
	struct gba_ep *ep = ctx;
	struct gba_cntr *cntr = NULL;
	uint64_t fi_access = 0;
	int ret;

	if (access & GBA_ENG_ACCESS_READ)
		fi_access |= FI_REMOTE_READ;
	if (access & GBA_ENG_ACCESS_WRITE)
		fi_access |= FI_REMOTE_WRITE;
	ret = gba_mr_lookup(ep->domain, key, addr, len, fi_access, ptr, &cntr);
	/* counted by the remote event that follows a successful access */
	ep->rma_event_cntr = ret ? NULL : cntr;
	switch (ret) {
	case 0:
		return 0;
	case -FI_EKEYREJECTED:
		return -ENOKEY;
	case -FI_EACCES:
		return -EACCES;
	default:
		return -ERANGE;
	}
}

static void gba_eng_remote_event_cb(void *ctx, enum gba_eng_event event,
				    const struct gba_addr *src, uint32_t flags,
				    uint64_t data, size_t len)
{
	struct gba_ep *ep = ctx;
	enum gba_cntr_slot slot = event == GBA_ENG_EV_GET
					  ? GBA_CNTR_REMOTE_READ
					  : GBA_CNTR_REMOTE_WRITE;

	if ((flags & GBA_WIRE_CQ_DATA) && ep->rx_cq)
		gba_cq_write(ep->rx_cq, NULL,
			     (event == GBA_ENG_EV_ATOMIC ? FI_ATOMIC : FI_RMA) |
				     FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
			     len, NULL, data, 0, gba_peer_src(ep, src));
	gba_rma_target_event(ep, slot, ep->rma_event_cntr);
	ep->rma_event_cntr = NULL;
}

static const struct gba_eng_ops gba_eng_ops = {
	.recv = gba_eng_recv_cb,
	.complete = gba_eng_complete_cb,
	.mr_lookup = gba_eng_mr_lookup_cb,
	.atomic = gba_atomic_exec,
	.remote_event = gba_eng_remote_event_cb,
};

/*
 * gba_eng_open - open @ep's engine endpoint at its address, with the
 * transmit request pool and the receive state.  Returns 0, -FI_ENOMEM,
 * -FI_EADDRINUSE, -FI_ENOSPC (/dev/shm cannot hold the receive queue),
 * -FI_EMFILE, or the engine's error mapped (gba_errno_to_fi); logged with
 * the file concerned.
 */
int gba_eng_open(struct gba_ep *ep)
{
	struct gba_eng_ep_attr attr = {
		.addr = &ep->addr,
		.max_ops = GBA_TX_SIZE,
		.eager_max = (uint32_t)gba_params.eager_size,
		/*
		 * a service others find by number: one endpoint holds it;
		 * large reads of our memory shared with the reader, unless
		 * FI_REMOTE_READ counters must count finished reads
		 */
		.flags = (ep->addr_service ? GBA_ENG_EP_SERVICE : 0) |
			 (ep->caps & FI_RMA_EVENT ? 0 : GBA_ENG_EP_SHARED_GET),
		.ops = &gba_eng_ops,
		.ctx = ep,
		.net_addr = gba_params.net_addr,
	};
	size_t i;
	int ret;

	ep->tx_reqs = calloc(GBA_TX_SIZE, sizeof(*ep->tx_reqs));
	if (!ep->tx_reqs)
		return -FI_ENOMEM;
	for (i = 0; i + 1 < GBA_TX_SIZE; i++)
		ep->tx_reqs[i].next_free = &ep->tx_reqs[i + 1];
	ep->tx_free = ep->tx_reqs;
	ret = gba_msg_init(ep);
	if (ret)
		goto err;
	ep->peer_cache_dest = FI_ADDR_NOTAVAIL;
	ep->src_cache_key = 0;
	LIST_INIT(&ep->swcs);
	TAILQ_INIT(&ep->swc_orphans);

	ret = gba_eng_ep_open(&attr, &ep->eng);
	if (ret) {
		FI_WARN(&gba_prov, FI_LOG_EP_CTRL,
			"cannot open the engine endpoint %u (job %s): %s\n",
			ep->addr.ep_id, gba_job_key(),
			ret == -EADDRINUSE && ep->addr_service
				? "the service is held by another endpoint "
				  "of this job"
				: gba_last_error(ret));
		ret = ret == -EADDRINUSE ? -FI_EADDRINUSE
					 : gba_errno_to_fi(ret);
		goto err_msg;
	}
	/* the engine adds the network address (fi_getname's) */
	ep->addr = *gba_eng_ep_addr(ep->eng);
	return 0;
err_msg:
	gba_msg_fini(ep);
err:
	free(ep->tx_reqs);
	ep->tx_reqs = NULL;
	return ret;
}

/*
 * gba_eng_close - close @ep's engine endpoint; operations in flight
 * never complete (deferred work they carry is dropped).
 */
void gba_eng_close(struct gba_ep *ep)
{
	size_t i;

	if (!ep->eng)
		return;
	gba_msg_fini(ep);
	gba_swc_fini(ep);
	gba_eng_ep_close(ep->eng);
	ep->eng = NULL;
	for (i = 0; i < GBA_TX_SIZE; i++) {
		free(ep->tx_reqs[i].bounce);
		/* in flight when the endpoint closed: never completes */
		if (ep->tx_reqs[i].flags & GBA_FLAG_DEFERRED)
			gba_work_drop(ep->tx_reqs[i].context);
	}
	free(ep->tx_reqs);
}
