/*
 * libfabric "gba" provider: the endpoint's fabric engine (the data path
 * to other processes; include/gba/gba_fab.h, DESIGN.md section 4).
 *
 * Every endpoint owns an engine endpoint with its own address, opened
 * with the endpoint.  This file resolves destinations to engine peers
 * (with a one-entry cache invalidated by AV removals), keeps the pool of
 * transmit requests (the engine's cookies; preallocated, no allocation
 * per operation), and implements the engine's callbacks:
 *
 *   recv         gba_msg_arrived (gba_msg.c): matching
 *   complete     a transmit request ends: CQ entry / counter, or error
 *   mr_lookup    gba_mr_lookup against the domain's registrations
 *   atomic       gba_atomic_exec (gba_atomic.c), every type of the table
 *   remote_event remote CQ data to the rx CQ, FI_RMA_EVENT counters
 *
 * Locking: every engine call runs under ep->lock (gba_ep_data_lock),
 * which also defers trigger firing to the unlock, since a trigger may
 * post to this endpoint.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gba_prov.h"

bool gba_ep_data_lock(struct gba_ep *ep)
{
	bool token = gba_trigger_defer_begin();

	gba_lock_acquire(&ep->lock);
	return token;
}

void gba_ep_data_unlock(struct gba_ep *ep, bool token)
{
	gba_lock_release(&ep->lock);
	gba_trigger_defer_end(token);
}

/* ---- Engine callbacks ---------------------------------------------------- */

static void gba_peer_recv_cb(void *ctx, struct gba_fab_rx *rx)
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

static void gba_peer_complete_cb(void *ctx, uint64_t cookie, int status)
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
		gba_ep_tx_error(ep, slot, flags, context, gba_fab_err(status),
				-status, NULL, 0);
		return;
	}
	if (flags & GBA_FLAG_NO_CQ) {
		if (ep->cntrs[slot])
			gba_cntr_inc(ep->cntrs[slot]);
		return;
	}
	gba_ep_tx_complete(ep, slot, flags, context, len);
}

static int gba_peer_mr_lookup_cb(void *ctx, uint64_t key, uint64_t addr,
				 size_t len, uint32_t access, void **ptr)
{
	struct gba_ep *ep = ctx;
	uint64_t fi_access = 0;
	int ret;

	if (access & GBA_FAB_ACCESS_READ)
		fi_access |= FI_REMOTE_READ;
	if (access & GBA_FAB_ACCESS_WRITE)
		fi_access |= FI_REMOTE_WRITE;
	ret = gba_mr_lookup(ep->domain, key, addr, len, fi_access, ptr);
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

static void gba_peer_remote_event_cb(void *ctx, enum gba_fab_event event,
				     const struct gba_addr *src,
				     uint32_t flags, uint64_t data, size_t len)
{
	struct gba_ep *ep = ctx;
	enum gba_cntr_slot slot = event == GBA_FAB_EV_GET
					  ? GBA_CNTR_REMOTE_READ
					  : GBA_CNTR_REMOTE_WRITE;

	if ((flags & GBA_WIRE_CQ_DATA) && ep->rx_cq)
		gba_cq_write(ep->rx_cq, NULL,
			     (event == GBA_FAB_EV_ATOMIC ? FI_ATOMIC : FI_RMA) |
				     FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
			     len, NULL, data, 0, gba_peer_src(ep, src));
	if ((ep->caps & FI_RMA_EVENT) && ep->cntrs[slot])
		gba_cntr_inc(ep->cntrs[slot]);
}

static const struct gba_fab_ops gba_peer_ops = {
	.recv = gba_peer_recv_cb,
	.complete = gba_peer_complete_cb,
	.mr_lookup = gba_peer_mr_lookup_cb,
	.atomic = gba_atomic_exec,
	.remote_event = gba_peer_remote_event_cb,
};

/* ---- Open / close ----------------------------------------------------------- */

int gba_peer_open(struct gba_ep *ep)
{
	struct gba_fab_ep_attr attr = {
		.addr = &ep->addr,
		.max_ops = GBA_TX_SIZE,
		.ops = &gba_peer_ops,
		.ctx = ep,
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

	ret = gba_fab_ep_open(&attr, &ep->fab);
	if (ret) {
		FI_WARN(&gba_prov, FI_LOG_EP_CTRL,
			"cannot open the engine endpoint: %s\n",
			strerror(-ret));
		ret = ret == -EADDRINUSE ? -FI_EADDRINUSE
					 : gba_errno_to_fi(ret);
		goto err_msg;
	}
	return 0;
err_msg:
	gba_msg_fini(ep);
err:
	free(ep->tx_reqs);
	ep->tx_reqs = NULL;
	return ret;
}

void gba_peer_close(struct gba_ep *ep)
{
	size_t i;

	if (!ep->fab)
		return;
	gba_msg_fini(ep);
	gba_swc_fini(ep);
	gba_fab_ep_close(ep->fab);
	ep->fab = NULL;
	for (i = 0; i < GBA_TX_SIZE; i++) {
		free(ep->tx_reqs[i].bounce);
		/* in flight when the endpoint closed: never completes */
		if (ep->tx_reqs[i].flags & GBA_FLAG_DEFERRED)
			gba_work_drop(ep->tx_reqs[i].context);
	}
	free(ep->tx_reqs);
}

/* ---- Peers and requests ------------------------------------------------------ */

int gba_peer_get(struct gba_ep *ep, fi_addr_t dest, struct gba_fab_peer **peer)
{
	uint64_t gen = atomic_load_explicit(&ep->av->gen, memory_order_acquire);
	const struct gba_addr *addr;
	char str[GBA_ADDR_STRLEN];
	int ret;

	if (dest == ep->peer_cache_dest && gen == ep->peer_cache_gen) {
		*peer = ep->peer_cache;
		return 0;
	}
	addr = gba_av_addr(ep->av, dest);
	if (!addr)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "fi_addr %llu is not in the AV\n",
				    (unsigned long long)dest);
	ret = gba_fab_peer_get(ep->fab, addr, peer);
	if (ret) {
		gba_addr_str(addr, str, sizeof(str));
		FI_WARN(&gba_prov, FI_LOG_EP_DATA, "%s unreachable: %s\n", str,
			strerror(-ret));
		return ret == -ENOMEM ? -FI_ENOMEM : -FI_EHOSTUNREACH;
	}
	ep->peer_cache_dest = dest;
	ep->peer_cache_gen = gen;
	ep->peer_cache = *peer;
	return 0;
}

int gba_peer_check(struct gba_ep *ep, fi_addr_t dest)
{
	struct gba_fab_peer *peer;
	bool token;
	int ret;

	token = gba_ep_data_lock(ep);
	ret = gba_peer_get(ep, dest, &peer);
	gba_ep_data_unlock(ep, token);
	return ret;
}

fi_addr_t gba_peer_src(struct gba_ep *ep, const struct gba_addr *src)
{
	uint64_t key = ((uint64_t)src->pid << 32) | src->ep_id;
	uint64_t gen;

	if (!ep->av)
		return FI_ADDR_NOTAVAIL;
	gen = atomic_load_explicit(&ep->av->gen, memory_order_acquire);
	if (key == ep->src_cache_key && gen == ep->src_cache_gen &&
	    ep->src_cache_addr != FI_ADDR_NOTAVAIL)
		return ep->src_cache_addr;
	ep->src_cache_key = key;
	ep->src_cache_gen = gen;
	ep->src_cache_addr = gba_av_find(ep->av, src);
	return ep->src_cache_addr;
}

struct gba_tx_req *gba_tx_req_get(struct gba_ep *ep)
{
	struct gba_tx_req *req = ep->tx_free;

	if (req)
		ep->tx_free = req->next_free;
	return req;
}

void gba_tx_req_put(struct gba_ep *ep, struct gba_tx_req *req)
{
	req->coll_op = NULL;
	req->flags = 0; /* free: gba_peer_close skips it */
	req->next_free = ep->tx_free;
	ep->tx_free = req;
}

/* ---- Receive-side completions ---------------------------------------------- */
