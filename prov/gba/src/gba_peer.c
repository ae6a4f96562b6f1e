/*
 * libfabric "gba" provider: peers, the targets of an endpoint's
 * operations.
 *
 * Every endpoint of the process is on a registry, so that the direct
 * path (RMA and atomics to this process) reaches it (gba_ep_target) and
 * endpoint numbers stay unique.  Other processes are engine peers
 * (include/gba/gba_eng.h, doc/design.md section 4), resolved from the AV
 * with a one-entry cache invalidated by AV removals.  The pool of
 * transmit requests (the engine's cookies; preallocated, no allocation
 * per operation) and the data lock are here too.
 *
 * Locking: every engine call runs under ep->lock (gba_ep_data_lock),
 * which also defers trigger firing to the unlock, since a trigger may
 * post to this endpoint.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gba_ep.h"

/* Every live endpoint of the process (gba_ep_target, unique ep ids). */
static pthread_mutex_t gba_ep_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(, gba_ep)
	gba_ep_registry = LIST_HEAD_INITIALIZER(gba_ep_registry);

/* True if @a and @b name the same endpoint (fields of a canonical copy). */
static inline bool gba_ep_addr_same(const struct gba_addr *a,
				    const struct gba_addr *b)
{
	return a->ep_id == b->ep_id && a->pid == b->pid &&
	       a->host_id == b->host_id;
}

/* Registry entry with address @addr, or NULL.  Registry lock held. */
static struct gba_ep *gba_ep_registry_find(const struct gba_addr *addr)
{
	struct gba_ep *ep;

	LIST_FOREACH(ep, &gba_ep_registry, registry)
		if (gba_ep_addr_same(&ep->addr, addr))
			return ep;
	return NULL;
}

/*
 * Choose the endpoint's address: the source address of @info if it names
 * a specific endpoint number (fi_getinfo with a service), else a fresh
 * one.  Registry lock held.  Returns 0, -FI_EADDRINUSE, -FI_EINVAL.
 */
static int gba_ep_pick_addr(struct gba_ep *ep, const struct fi_info *info)
{
	const struct gba_addr *src = info ? info->src_addr : NULL;
	int ret;

	if (src && info->src_addrlen == sizeof(*src) && src->ep_id) {
		ep->addr = *src;
		ep->addr.reserved = 0;
		ep->addr_service = true;
		if (gba_ep_registry_find(&ep->addr))
			return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EADDRINUSE,
					    "source address endpoint %u is in "
					    "use\n",
					    src->ep_id);
		return 0;
	}
	do {
		ret = gba_addr_init_local(&ep->addr);
		if (ret)
			return gba_errno_to_fi(ret);
	} while (gba_ep_registry_find(&ep->addr));
	return 0;
}

/*
 * gba_peer_register - give @ep its address (gba_ep_pick_addr) and put it
 * on the registry of the process's endpoints.  Returns 0,
 * -FI_EADDRINUSE, -FI_EINVAL.
 */
int gba_peer_register(struct gba_ep *ep, const struct fi_info *info)
{
	int ret;

	pthread_mutex_lock(&gba_ep_registry_lock);
	ret = gba_ep_pick_addr(ep, info);
	if (!ret)
		LIST_INSERT_HEAD(&gba_ep_registry, ep, registry);
	pthread_mutex_unlock(&gba_ep_registry_lock);
	return ret;
}

/* gba_peer_unregister - take @ep off the registry (close). */
void gba_peer_unregister(struct gba_ep *ep)
{
	pthread_mutex_lock(&gba_ep_registry_lock);
	LIST_REMOVE(ep, registry);
	pthread_mutex_unlock(&gba_ep_registry_lock);
}

/*
 * gba_ep_target - resolve @dest to the target endpoint for the direct
 * path (see gba_prov.h).  Returns 0, -FI_EOPBADSTATE (not enabled),
 * -FI_EINVAL (unknown @dest), -FI_EHOSTUNREACH.
 */
int gba_ep_target(struct gba_ep *ep, fi_addr_t dest, struct gba_ep **target)
{
	const struct gba_addr *addr;
	struct gba_ep *peer;

	if (!ep->enabled)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EOPBADSTATE,
				    "endpoint not enabled\n");
	addr = gba_av_addr(ep->av, dest);
	if (!addr)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "fi_addr %llu is not in the AV\n",
				    (unsigned long long)dest);
	if (gba_ep_addr_same(addr, &ep->addr)) {
		*target = ep;
		return 0;
	}
	if (gba_addr_reach(&ep->addr, addr) != GBA_REACH_PROCESS)
		return -FI_EHOSTUNREACH; /* the engine's path (gba_rma.c) */
	pthread_mutex_lock(&gba_ep_registry_lock);
	peer = gba_ep_registry_find(addr);
	pthread_mutex_unlock(&gba_ep_registry_lock);
	if (!peer)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EHOSTUNREACH,
				    "fi_addr %llu: no such endpoint in this "
				    "process (closed?)\n",
				    (unsigned long long)dest);
	*target = peer;
	return 0;
}

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

/* ---- Peers and requests ----------------------------------------------- */

int gba_peer_get(struct gba_ep *ep, fi_addr_t dest, struct gba_eng_peer **peer)
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
	ret = gba_eng_peer_get(ep->eng, addr, peer);
	if (ret) {
		gba_addr_str(addr, str, sizeof(str));
		FI_WARN(&gba_prov, FI_LOG_EP_DATA, "%s unreachable: %s\n", str,
			gba_last_error(ret));
		return ret == -ENOMEM ? -FI_ENOMEM : -FI_EHOSTUNREACH;
	}
	ep->peer_cache_dest = dest;
	ep->peer_cache_gen = gen;
	ep->peer_cache = *peer;
	return 0;
}

int gba_peer_check(struct gba_ep *ep, fi_addr_t dest)
{
	struct gba_eng_peer *peer;
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
	req->flags = 0; /* free: gba_eng_close skips it */
	req->next_free = ep->tx_free;
	ep->tx_free = req;
}
