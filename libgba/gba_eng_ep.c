/*
 * GBA core library: fabric engine endpoints, peers, the operation table,
 * progress and dead-peer detection (include/gba/gba_eng.h).
 *
 * The operation table is preallocated at open (no allocation on the hot
 * path); an operation's wire id carries a generation so that an answer
 * to a record already failed and reused is ignored.  Answers that find
 * the initiator's queue full wait in a backlog, retried by progress:
 * executing a request never blocks on a peer, so two endpoints whose
 * queues are full of each other's requests cannot deadlock.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gba_backend.h"
#include "gba_eng_priv.h"

/*
 * Check dead peers and dead claimers of our queue's slots at most this
 * often, while operations are outstanding or the queue holds claimed
 * slots, once every GBA_ENG_CHECK_POLLS idle progress calls.
 */
#define GBA_ENG_CHECK_NS (20ULL * 1000 * 1000)
#define GBA_ENG_CHECK_POLLS 1024
/*
 * The same once oversubscribed: every 4th yield (a yield may give the CPU
 * away for a time slice: 1024 idle calls could then last seconds).
 */
#define GBA_ENG_CHECK_POLLS_YIELDING 64
/*
 * Idle progress calls between two sched_yield once the endpoint talks to
 * more processes than there are online CPUs (they cannot all run at once;
 * this process's own endpoints do not count); none before.
 */
#define GBA_ENG_YIELD_POLLS 16
/* Entries one progress call handles at most (bounded latency). */
#define GBA_ENG_PROGRESS_BUDGET 64

int gba_eng_ep_open(const struct gba_eng_ep_attr *attr,
		    struct gba_eng_ep **epp)
{
	struct gba_eng_ep *ep;
	uint32_t nslots, i;
	int ret;

	gba_err_clear();
	gba_fault_init();
	if (!attr || !epp || !attr->ops || !attr->ops->recv ||
	    !attr->ops->complete || !attr->ops->mr_lookup)
		return -EINVAL;
	nslots = attr->rx_slots ? attr->rx_slots : GBA_ENG_RX_SLOTS_DEF;
	if (nslots & (nslots - 1) || nslots > GBA_ENG_RX_SLOTS_MAX)
		return -EINVAL;
	if (attr->max_ops > GBA_ENG_MAX_OPS_MAX ||
	    attr->eager_max > GBA_ENG_EAGER_MAX ||
	    (attr->flags & ~(GBA_ENG_EP_SERVICE | GBA_ENG_EP_SHARED_GET)) ||
	    ((attr->flags & GBA_ENG_EP_SERVICE) && !attr->addr))
		return -EINVAL;
	if (attr->addr && (!gba_addr_valid(attr->addr, sizeof(*attr->addr)) ||
			   attr->addr->pid != (uint32_t)getpid() ||
			   attr->addr->host_id != gba_host_id()))
		return -EINVAL;

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	if (attr->addr)
		ep->addr = *attr->addr;
	else
		gba_addr_init_local(&ep->addr);
	/* the network address is the engine's to fill in */
	memset(ep->addr.net, 0, sizeof(ep->addr.net));
	ep->addr.port = 0;
	ep->ops = *attr->ops;
	ep->ctx = attr->ctx;
	ep->max_ops = attr->max_ops ? attr->max_ops : GBA_ENG_MAX_OPS_DEF;
	ep->eager_max = attr->eager_max;
	ep->shared_get = attr->flags & GBA_ENG_EP_SHARED_GET;
	ep->optab = calloc(ep->max_ops, sizeof(*ep->optab));
	if (!ep->optab) {
		ret = -ENOMEM;
		goto err;
	}
	for (i = 0; i < ep->max_ops; i++)
		ep->optab[i].next_free = i + 1 < ep->max_ops ? i + 1
							     : GBA_ENG_OP_NONE;
	ep->free_op = 0;
	ep->backlog_tail = &ep->backlog;
	ep->ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (!ep->ncpus)
		ep->ncpus = 1;

	ret = gba_eng_net_open(ep, attr->net_addr,
			       attr->flags & GBA_ENG_EP_SERVICE ? ep->addr.ep_id
								: 0);
	if (ret)
		goto err;
	gba_eng_ring_reap();
	ret = gba_eng_ring_create(&ep->addr, nslots, &ep->rx, &ep->rx_len,
				  &ep->rx_fd);
	if (ret)
		goto err;
	if (attr->flags & GBA_ENG_EP_SERVICE) {
		ret = gba_eng_ring_claim_service(ep->rx_fd, ep->addr.ep_id);
		if (ret) {
			gba_eng_ring_destroy(ep->rx, ep->rx_len, &ep->addr,
					     ep->rx_fd);
			goto err;
		}
		ep->service = true;
	}
	ep->rx_mask = nslots - 1;
	*epp = ep;
	return 0;
err:
	gba_eng_net_close(ep);
	free(ep->optab);
	free(ep);
	return ret;
}

void gba_eng_ep_close(struct gba_eng_ep *ep)
{
	struct gba_eng_peer *peer, *tmp;
	struct gba_eng_backlog *bl;

	if (!ep)
		return;
	gba_eng_net_close(ep);
	if (ep->service)
		gba_eng_ring_release_service(ep->rx_fd, ep->addr.ep_id);
	gba_eng_ring_destroy(ep->rx, ep->rx_len, &ep->addr, ep->rx_fd);
	HASH_ITER(hh, ep->peers, peer, tmp)
	{
		HASH_DEL(ep->peers, peer);
		if (peer->map_len)
			gba_eng_ring_unmap(peer->ring, peer->map_len);
		free(peer);
	}
	while ((bl = ep->backlog)) {
		ep->backlog = bl->next;
		free(bl);
	}
	free(ep->optab);
	free(ep);
}

const struct gba_addr *gba_eng_ep_addr(const struct gba_eng_ep *ep)
{
	return &ep->addr;
}

const struct gba_addr *gba_eng_peer_addr(const struct gba_eng_peer *peer)
{
	return &peer->addr;
}

/* Whether a peer of @ep lives in process @pid */
static bool gba_eng_knows_pid(struct gba_eng_ep *ep, uint32_t pid)
{
	struct gba_eng_peer *peer, *tmp;

	HASH_ITER(hh, ep->peers, peer, tmp) {
		if (peer->addr.pid == pid)
			return true;
	}
	return false;
}

/*
 * Can this process read @peer's memory with cross-memory attach (the
 * kernel's ptrace access check: same user, the peer dumpable)?  Read
 * its ring's magic where its owner maps it.  A ring of an older build
 * does not say where (owner_va 0): no.
 */
static bool can_attach(const struct gba_eng_peer *peer)
{
	uint64_t magic = 0, va = peer->ring->owner_va;
	struct iovec local = {&magic, sizeof(magic)};
	struct iovec remote = {(void *)(uintptr_t)va, sizeof(magic)};

	if (!va || va % sizeof(magic))
		return false;
	return process_vm_readv((pid_t)peer->addr.pid, &local, 1, &remote, 1,
				0) == (ssize_t)sizeof(magic) &&
	       magic == GBA_ENG_RING_MAGIC;
}

int gba_eng_peer_get(struct gba_eng_ep *ep, const struct gba_addr *addr,
		     struct gba_eng_peer **peerp)
{
	struct gba_eng_peer_key key;
	struct gba_eng_peer *peer;
	int ret;

	gba_err_clear();
	if (!ep || !peerp || !addr || !gba_addr_valid(addr, sizeof(*addr)))
		return -EINVAL;
	if (addr->host_id != ep->addr.host_id)
		return gba_eng_net_peer_get(ep, addr, peerp);
	key = gba_eng_peer_key(addr);
	HASH_FIND(hh, ep->peers, &key, sizeof(key), peer);
	if (peer) {
		*peerp = peer;
		return peer->dead ? -EPIPE : 0;
	}
	peer = calloc(1, sizeof(*peer));
	if (!peer)
		return -ENOMEM;
	peer->addr = *addr;
	peer->key = key;
	if (gba_addr_equal(addr, &ep->addr)) {
		peer->ring = ep->rx;
		peer->nslots = ep->rx_mask + 1;
	} else {
		ret = gba_eng_ring_map(addr, &peer->ring, &peer->map_len);
		if (ret) {
			free(peer);
			return ret;
		}
		/* gba_eng_ring_map checked the size against the count */
		peer->nslots = (uint32_t)((peer->map_len - GBA_ENG_RING_HDR) /
					  sizeof(struct gba_eng_slot));
		peer->share = can_attach(peer);
	}
	if (peer->addr.pid != ep->addr.pid && !gba_eng_knows_pid(ep, addr->pid))
		ep->nprocs++;
	HASH_ADD(hh, ep->peers, key, sizeof(peer->key), peer);
	/* read by gba_eng_poll's lock-free callers */
	if (ep->nprocs + 1 > ep->ncpus)
		__atomic_store_n(&ep->oversubscribed, true, __ATOMIC_RELAXED);
	*peerp = peer;
	return 0;
}

struct gba_eng_peer *gba_eng_src_peer(struct gba_eng_ep *ep,
				      const struct gba_eng_hdr *hdr)
{
	struct gba_eng_peer *peer;
	struct gba_addr addr;

	memset(&addr, 0, sizeof(addr));
	addr.magic = GBA_ADDR_MAGIC;
	addr.version = GBA_ADDR_VERSION;
	addr.pid = hdr->src_pid;
	addr.ep_id = hdr->src_ep_id;
	addr.host_id = ep->addr.host_id;
	if (gba_eng_peer_get(ep, &addr, &peer))
		return NULL;
	return peer;
}

void gba_eng_hdr_init(struct gba_eng_ep *ep, struct gba_eng_hdr *hdr,
		      uint8_t type)
{
	hdr->type = type;
	hdr->src_pid = ep->addr.pid;
	hdr->src_ep_id = ep->addr.ep_id;
}

/* ---- Operation table ---------------------------------------------------- */

struct gba_eng_op *gba_eng_op_alloc(struct gba_eng_ep *ep,
				    struct gba_eng_peer *peer, uint8_t type,
				    uint64_t cookie)
{
	struct gba_eng_op *op;

	if (ep->free_op == GBA_ENG_OP_NONE)
		return NULL;
	op = &ep->optab[ep->free_op];
	ep->free_op = op->next_free;
	op->cookie = cookie;
	op->peer = peer;
	op->type = type;
	op->iov_count = 0;
	op->result = NULL;
	op->result_len = 0;
	op->share_status = 0;
	op->share_wait = false;
	peer->nops++;
	__atomic_store_n(&ep->nops, ep->nops + 1, __ATOMIC_RELAXED);
	return op;
}

uint32_t gba_eng_op_id(const struct gba_eng_ep *ep, const struct gba_eng_op *op)
{
	return (uint32_t)(op - ep->optab) | ((uint32_t)op->gen << 16);
}

struct gba_eng_op *gba_eng_op_find(struct gba_eng_ep *ep, uint32_t id)
{
	uint32_t index = id & 0xffff;
	struct gba_eng_op *op;

	if (index >= ep->max_ops)
		return NULL;
	op = &ep->optab[index];
	if (!op->peer || op->gen != (uint16_t)(id >> 16))
		return NULL;
	return op;
}

void gba_eng_op_free(struct gba_eng_ep *ep, struct gba_eng_op *op)
{
	gba_eng_op_share_done(op);
	op->peer->nops--;
	__atomic_store_n(&ep->nops, ep->nops - 1, __ATOMIC_RELAXED);
	op->peer = NULL;
	op->gen++;
	op->next_free = ep->free_op;
	ep->free_op = (uint32_t)(op - ep->optab);
}

void gba_eng_op_finish(struct gba_eng_ep *ep, struct gba_eng_op *op,
		       int status)
{
	uint64_t cookie = op->cookie;

	gba_eng_op_free(ep, op);
	ep->ops.complete(ep->ctx, cookie, status);
}

/* ---- Answers ------------------------------------------------------------ */

/* Try to put an answer into @peer's queue: 0 or -EAGAIN. */
static int answer_try(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		      const struct gba_eng_hdr *hdr, const void *payload,
		      size_t len)
{
	struct gba_eng_slot *slot;
	uint64_t pos;

	slot = gba_eng_ring_claim(peer->ring, peer->nslots, &pos);
	if (!slot)
		return -EAGAIN;
	memcpy((char *)&slot->hdr + sizeof(slot->hdr.seq),
	       (const char *)hdr + sizeof(hdr->seq),
	       sizeof(*hdr) - sizeof(hdr->seq));
	if (len)
		memcpy(slot->payload, payload, len);
	gba_eng_ring_publish(slot, pos);
	return 0;
}

/* Send @hdr (an answer or notice) and @len bytes of @payload, in order. */
static void answer_send(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
			const struct gba_eng_hdr *hdr, const void *payload,
			size_t len)
{
	struct gba_eng_backlog *bl;

	if (!ep->backlog && !answer_try(ep, peer, hdr, payload, len))
		return;
	bl = malloc(sizeof(*bl) + len);
	if (!bl) {
		/* cannot queue: the initiator learns of it as a dead peer */
		peer->dead = true;
		return;
	}
	bl->next = NULL;
	bl->peer = peer;
	bl->hdr = *hdr;
	bl->len = len;
	if (len)
		memcpy(bl->payload, payload, len);
	/* ep->backlog when empty: gba_eng_poll reads it without the lock */
	__atomic_store_n(ep->backlog_tail, bl, __ATOMIC_RELAXED);
	ep->backlog_tail = &bl->next;
	__atomic_store_n(&ep->nbacklog, ep->nbacklog + 1, __ATOMIC_RELAXED);
}

void gba_eng_answer(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		    uint32_t op, int status, const void *payload, size_t len)
{
	struct gba_eng_hdr hdr;

	if (!peer || peer->dead)
		return; /* nobody left to tell */
	memset(&hdr, 0, sizeof(hdr));
	gba_eng_hdr_init(ep, &hdr, GBA_ENG_T_RESP);
	hdr.op = op;
	hdr.status = status;
	hdr.len = len;
	answer_send(ep, peer, &hdr, payload, len);
}

void gba_eng_notice(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		    uint32_t op, uint64_t tail_va)
{
	struct gba_eng_hdr hdr;

	if (!peer || peer->dead)
		return;
	memset(&hdr, 0, sizeof(hdr));
	gba_eng_hdr_init(ep, &hdr, GBA_ENG_T_RESP);
	hdr.xflags = GBA_ENG_X_SHARE;
	hdr.op = op;
	hdr.addr = tail_va;
	answer_send(ep, peer, &hdr, NULL, 0);
}

/* Retry the backlog in order; stop at the first that still does not fit. */
static void backlog_flush(struct gba_eng_ep *ep)
{
	struct gba_eng_backlog *bl;

	while ((bl = ep->backlog)) {
		if (!bl->peer->dead &&
		    answer_try(ep, bl->peer, &bl->hdr, bl->payload, bl->len))
			break;
		__atomic_store_n(&ep->backlog, bl->next, __ATOMIC_RELAXED);
		if (!ep->backlog)
			ep->backlog_tail = &ep->backlog;
		__atomic_store_n(&ep->nbacklog, ep->nbacklog - 1,
				 __ATOMIC_RELAXED);
		free(bl);
	}
}

/* ---- Dead peers ---------------------------------------------------------- */

/* 1 if @peer's endpoint closed or its process died. */
static int peer_gone(const struct gba_eng_peer *peer)
{
	if (!peer->map_len)
		return 0; /* ourselves */
	return !atomic_load_explicit(&peer->ring->open, memory_order_acquire) ||
	       !gba_proc_slot_alive(peer->ring->owner_slot);
}

int gba_eng_peer_gone(const struct gba_eng_peer *peer)
{
	return peer && (peer->dead || peer_gone(peer));
}

void gba_eng_dead_peer(struct gba_eng_ep *ep, struct gba_eng_peer *peer)
{
	uint32_t i;

	peer->dead = true;
	for (i = 0; i < ep->max_ops && peer->nops; i++)
		if (ep->optab[i].peer == peer)
			gba_eng_op_finish(ep, &ep->optab[i], -EPIPE);
}

int gba_eng_peer_full(struct gba_eng_ep *ep, struct gba_eng_peer *peer)
{
	uint64_t now = gba_now_ns();

	if (now - peer->full_check_ns < GBA_ENG_CHECK_NS)
		return -EAGAIN;
	peer->full_check_ns = now;
	if (!peer_gone(peer))
		return -EAGAIN;
	gba_eng_dead_peer(ep, peer);
	return -EPIPE;
}

/*
 * Fail every operation outstanding at a peer that died or closed, and
 * drop the answers waiting for such a peer's queue (it will never make
 * room, and the backlog is retried in order: it would hold up the
 * answers to everybody else).
 */
static void check_peers(struct gba_eng_ep *ep)
{
	struct gba_eng_peer *peer, *tmp;
	struct gba_eng_backlog *bl;

	HASH_ITER(hh, ep->peers, peer, tmp)
	{
		if (!peer->nops || peer->dead || !peer_gone(peer))
			continue;
		gba_eng_dead_peer(ep, peer);
	}
	for (bl = ep->backlog; bl; bl = bl->next)
		if (!bl->peer->dead && peer_gone(bl->peer))
			gba_eng_dead_peer(ep, bl->peer);
}

/* ---- Progress ------------------------------------------------------------ */

/*
 * Idle progress calls between two looks at the clock, minus one.
 * oversubscribed is written under the endpoint's lock and read here by
 * gba_eng_poll's lock-free callers (a progress thread): relaxed load.
 */
static inline uint32_t check_mask(const struct gba_eng_ep *ep)
{
	return __atomic_load_n(&ep->oversubscribed, __ATOMIC_RELAXED)
		       ? GBA_ENG_CHECK_POLLS_YIELDING - 1
		       : GBA_ENG_CHECK_POLLS - 1;
}

/*
 * An idle progress call: count it, and yield every GBA_ENG_YIELD_POLLS
 * idle calls in a row when oversubscribed.  Returns the count.  The
 * counter is a hint shared by gba_eng_poll's lock-free callers: relaxed
 * loads and stores, no locked instruction.
 */
static inline uint32_t idle_poll(struct gba_eng_ep *ep)
{
	uint32_t polls = __atomic_load_n(&ep->idle_polls, __ATOMIC_RELAXED) + 1;

	__atomic_store_n(&ep->idle_polls, polls, __ATOMIC_RELAXED);
	/*
	 * Nothing arrived.  The peers this endpoint waits for need the CPU
	 * to answer: with more processes than cores (doc/design.md section 3,
	 * "Waiting") spinning starves them, so give the CPU away after a
	 * short spin.  With a core each, spin: a yield would hand the core to
	 * whatever else runs on the host, for a whole time slice.
	 */
	if (polls % GBA_ENG_YIELD_POLLS == 0 &&
	    __atomic_load_n(&ep->oversubscribed, __ATOMIC_RELAXED))
		sched_yield();
	return polls;
}

int gba_eng_poll(struct gba_eng_ep *ep)
{
	uint64_t head = __atomic_load_n(&ep->head, __ATOMIC_RELAXED);
	struct gba_eng_slot *slot = &ep->rx->slots[head & ep->rx_mask];
	uint32_t polls;

	if (gba_eng_slot_at(slot, head + 1) ||
	    __atomic_load_n(&ep->nops, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&ep->backlog, __ATOMIC_RELAXED) ||
	    gba_eng_net_busy(ep))
		return 1;
	/*
	 * The next progress call's idle count is a checking one (of dead
	 * peers, or of the TCP listener): make it.
	 */
	polls = idle_poll(ep);
	return (polls & check_mask(ep)) == check_mask(ep) ||
	       (ep->net &&
		polls % GBA_NET_IDLE_POLLS == GBA_NET_IDLE_POLLS - 1);
}

int gba_eng_progress(struct gba_eng_ep *ep)
{
	struct gba_eng_ring *rx = ep->rx;
	struct gba_eng_slot *slot;
	uint32_t polls, span, i;
	uint64_t now;
	int n = 0;

	while (n < GBA_ENG_PROGRESS_BUDGET) {
		slot = &rx->slots[ep->head & ep->rx_mask];
		if (!gba_eng_slot_at(slot, ep->head + 1))
			break;
		span = gba_eng_slot_span(ep, &slot->hdr);
		if (slot->hdr.type == GBA_ENG_T_RESP)
			gba_eng_resp(ep, slot);
		else if (span)
			gba_eng_execute(ep, slot);
		else
			gba_eng_bad_slot(ep, &slot->hdr, "bad slot count");
		/* a message in several slots: hand back all of them */
		for (i = span ? span : 1; i-- > 1;)
			gba_eng_ring_hand_back(
				&rx->slots[(ep->head + i) & ep->rx_mask],
				ep->head + i + ep->rx_mask + 1);
		gba_eng_ring_hand_back(slot, ep->head + ep->rx_mask + 1);
		__atomic_store_n(&ep->head, ep->head + (span ? span : 1),
				 __ATOMIC_RELAXED);
		n++;
	}
	if (ep->backlog)
		backlog_flush(ep);
	if (gba_eng_net_busy(ep)) /* peers on other hosts (TCP) */
		n += gba_eng_net_progress(ep);
	if (n) {
		__atomic_store_n(&ep->idle_polls, 0, __ATOMIC_RELAXED);
		return n;
	}
	polls = idle_poll(ep);
	/* no connection: a look at the listener now and then */
	if (ep->net && !(polls % GBA_NET_IDLE_POLLS) && gba_eng_net_due(ep))
		n = gba_eng_net_progress(ep);
	if ((polls & check_mask(ep)) ||
	    (!ep->nops && !ep->backlog &&
	     atomic_load_explicit(&rx->tail, memory_order_relaxed) == ep->head))
		return n;
	now = gba_now_ns();
	if (now - ep->last_check_ns >= GBA_ENG_CHECK_NS) {
		ep->last_check_ns = now;
		check_peers(ep);
		gba_eng_ring_skip_dead(ep);
	}
	return n;
}

uint64_t gba_eng_shared_gets(const struct gba_eng_ep *ep)
{
	return ep ? __atomic_load_n(&ep->nshared, __ATOMIC_RELAXED) : 0;
}

size_t gba_eng_busy(const struct gba_eng_ep *ep)
{
	/* a hint read without the endpoint's lock (progress thread) */
	return __atomic_load_n(&ep->nops, __ATOMIC_RELAXED) +
	       __atomic_load_n(&ep->nbacklog, __ATOMIC_RELAXED);
}
