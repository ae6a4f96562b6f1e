/*
 * GBA core library: fabric engine transfers (include/gba/gba_eng.h).
 *
 * Initiator side: a send, put, get or atomic claims one slot of the
 * peer's receive queue, writes a header and either the payload (inline,
 * up to GBA_ENG_INLINE bytes) or the initiator's iov array (large: the
 * data stays in place), and publishes the slot.  A message up to the
 * endpoint's eager_max claims several consecutive slots at once and is
 * copied across them (the first slot's payload, then each further slot
 * but its sequence word); the first slot's publication publishes them
 * all.  Target side: the
 * target's progress executes the slot (gba_eng_execute): a message goes
 * to the front end; a put or get is validated by the front end
 * (ops->mr_lookup), copied with memcpy (inline) or cross-memory attach
 * (large, one copy), and answered; an atomic runs in the front end's
 * executor (or the built-in one) and is answered with the old values.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "gba_eng_priv.h"

/* ---- Cross-memory attach -------------------------------------------------- */

/*
 * Cut [@off, @off + @len) out of @iov into @out (at most
 * GBA_ENG_MAX_IOV entries).  Returns the entry count, -1 if @iov is
 * shorter than that.
 */
static int iov_slice(const struct iovec *iov, size_t count, size_t off,
		     size_t len, struct iovec *out)
{
	size_t i, n = 0, take;

	for (i = 0; i < count && len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = iov[i].iov_len - off;
		if (take > len)
			take = len;
		/* addresses of another process: integer arithmetic */
		out[n].iov_base = (void *)((uintptr_t)iov[i].iov_base + off);
		out[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return len ? -1 : (int)n;
}

int gba_eng_cma(pid_t pid, bool write, const struct iovec *liov,
		size_t lcount, const struct iovec *riov, size_t rcount,
		size_t roff, size_t len)
{
	struct iovec l[GBA_ENG_MAX_IOV], r[GBA_ENG_MAX_IOV];
	size_t done = 0;
	ssize_t n;
	int nl, nr;

	while (done < len) {
		nl = iov_slice(liov, lcount, done, len - done, l);
		nr = iov_slice(riov, rcount, roff + done, len - done, r);
		if (nl < 0 || nr < 0)
			return -EFAULT;
		if (write)
			n = process_vm_writev(pid, l, (unsigned long)nl, r,
					      (unsigned long)nr, 0);
		else
			n = process_vm_readv(pid, l, (unsigned long)nl, r,
					     (unsigned long)nr, 0);
		if (n < 0)
			return errno == ESRCH ? -EPIPE : -errno;
		if (n == 0)
			return -EFAULT;
		done += (size_t)n;
	}
	return 0;
}

/* Total length of @iov, or a negative errno (see gba_eng_iov_len). */
static ssize_t iov_total(const struct iovec *iov, size_t count)
{
	return gba_eng_iov_len(iov, count, GBA_ENG_MAX_IOV, SSIZE_MAX, NULL);
}

static void iov_gather(void *dst, const struct iovec *iov, size_t count)
{
	char *p = dst;
	size_t i;

	for (i = 0; i < count; i++) {
		if (!iov[i].iov_len)
			continue;
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
}

/* A position in an I/O vector (bytes consumed so far). */
struct iov_cur {
	const struct iovec *iov;
	size_t count, i, off;
};

/* Skip @len bytes of @c (at most what is left). */
static void iov_cur_skip(struct iov_cur *c, size_t len)
{
	size_t take;

	while (len && c->i < c->count) {
		take = c->iov[c->i].iov_len - c->off;
		if (take > len) {
			c->off += len;
			return;
		}
		len -= take;
		c->i++;
		c->off = 0;
	}
}

/* Copy the next @len bytes of @c to @dst (@c holds at least @len). */
static void iov_cur_read(struct iov_cur *c, void *dst, size_t len)
{
	char *p = dst;
	size_t take;

	while (len && c->i < c->count) {
		take = c->iov[c->i].iov_len - c->off;
		if (take > len)
			take = len;
		if (take)
			memcpy(p, (const char *)c->iov[c->i].iov_base + c->off,
			       take);
		p += take;
		len -= take;
		c->off += take;
		if (c->off == c->iov[c->i].iov_len) {
			c->i++;
			c->off = 0;
		}
	}
}

static void iov_scatter(const struct iovec *iov, size_t count,
			const void *src, size_t len)
{
	const char *p = src;
	size_t i, take;

	for (i = 0; i < count && len; i++) {
		take = iov[i].iov_len < len ? iov[i].iov_len : len;
		if (take)
			memcpy(iov[i].iov_base, p, take);
		p += take;
		len -= take;
	}
}

/* ---- Initiator ------------------------------------------------------------ */

static int peer_check(struct gba_eng_peer *peer)
{
	if (peer->dead)
		return -EPIPE;
	if (!atomic_load_explicit(&peer->ring->open, memory_order_relaxed)) {
		peer->dead = true;
		return -EHOSTUNREACH;
	}
	/*
	 * A shared get there whose tail we have not copied yet: nothing
	 * else may reach the target before (the order of operations), so
	 * progress until the notice or the answer comes.
	 */
	if (peer->share_wait)
		return -EAGAIN;
	return 0;
}

static struct gba_eng_slot *claim(struct gba_eng_ep *ep,
				  struct gba_eng_peer *peer, uint8_t type,
				  uint64_t *pos)
{
	struct gba_eng_slot *slot =
		gba_eng_ring_claim(peer->ring, peer->nslots, pos);

	if (!slot)
		return NULL;
	gba_eng_hdr_init(ep, &slot->hdr, type);
	slot->hdr.xflags = 0;
	slot->hdr.status = 0;
	slot->hdr.op = 0;
	return slot;
}

/*
 * A message of @len (GBA_ENG_INLINE < @len <= GBA_ENG_EAGER_MAX) bytes
 * into consecutive slots of @peer's queue.  Returns 1 (sent, complete),
 * or 0: not that many slots free (or the queue too short), send it
 * another way.
 */
static int send_slots(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		      const struct iovec *iov, size_t count, size_t len,
		      uint64_t tag, uint64_t data, uint32_t flags)
{
	uint32_t n =
		1 + (uint32_t)((len - GBA_ENG_INLINE + GBA_ENG_EAGER_SLOT - 1) /
			       GBA_ENG_EAGER_SLOT);
	struct gba_eng_ring *ring = peer->ring;
	struct iov_cur cur = {iov, count, 0, 0};
	struct gba_eng_slot *slot;
	size_t left, take;
	uint64_t pos;
	uint32_t i;

	if (n > peer->nslots / 2)
		return 0;
	slot = gba_eng_ring_claim_n(ring, peer->nslots, n, &pos);
	if (!slot)
		return 0;
	/* the slot count before the claimer's name (gba_eng_ring_skip_dead) */
	slot->hdr.xflags = GBA_ENG_X_NOANS | GBA_ENG_X_SLOTS;
	slot->hdr.iov_count = (uint8_t)n;
	atomic_signal_fence(memory_order_seq_cst);
	gba_eng_hdr_init(ep, &slot->hdr, GBA_ENG_T_MSG);
	slot->hdr.status = 0;
	slot->hdr.op = 0;
	slot->hdr.flags = flags;
	slot->hdr.len = len;
	slot->hdr.tag = tag;
	slot->hdr.data = data;
	iov_cur_read(&cur, slot->payload, GBA_ENG_INLINE);
	gba_fault(GBA_FAULT_CHUNK);
	left = len - GBA_ENG_INLINE;
	for (i = 1; i < n; i++, left -= take) {
		take = left < GBA_ENG_EAGER_SLOT ? left : GBA_ENG_EAGER_SLOT;
		iov_cur_read(
			&cur,
			(char *)&ring->slots[(pos + i) & (peer->nslots - 1)] +
				GBA_ENG_CONT_OFF,
			take);
	}
	gba_eng_ring_publish(slot, pos);
	return 1;
}

int gba_eng_send(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		 const struct iovec *iov, size_t count, uint64_t tag,
		 uint64_t data, uint32_t flags, uint64_t cookie)
{
	struct gba_eng_slot *slot;
	struct gba_eng_op *op = NULL;
	ssize_t len = iov_total(iov, count);
	uint64_t pos;
	int ret;

	if (!ep || !peer || len < 0)
		return -EINVAL;
	if (!peer->ring) /* another host */
		return gba_eng_net_send(ep, peer, iov, count, tag, data, flags);
	ret = peer_check(peer);
	if (ret)
		return ret;
	if ((size_t)len > GBA_ENG_INLINE && (size_t)len <= ep->eager_max &&
	    send_slots(ep, peer, iov, count, (size_t)len, tag, data, flags))
		return 1;
	if ((size_t)len > GBA_ENG_INLINE) {
		op = gba_eng_op_alloc(ep, peer, GBA_ENG_T_MSG, cookie);
		if (!op)
			return -EAGAIN;
	}
	slot = claim(ep, peer, GBA_ENG_T_MSG, &pos);
	if (!slot) {
		if (op)
			gba_eng_op_free(ep, op);
		return gba_eng_peer_full(ep, peer);
	}
	slot->hdr.tag = tag;
	slot->hdr.data = data;
	if ((size_t)len <= GBA_ENG_HDR_INLINE &&
	    flags <= GBA_ENG_HDR_FLAGS_MAX) {
		/* the whole message in the header's line */
		slot->hdr.xflags = GBA_ENG_X_NOANS | GBA_ENG_X_HDR;
		slot->hdr.small_len = (uint8_t)len;
		slot->hdr.small_flags = (uint8_t)flags;
		iov_gather(slot->hdr.small, iov, count);
		gba_eng_ring_publish(slot, pos);
		return 1;
	}
	slot->hdr.flags = flags;
	slot->hdr.len = (uint64_t)len;
	if (op) {
		slot->hdr.xflags = GBA_ENG_X_LARGE;
		slot->hdr.op = gba_eng_op_id(ep, op);
		slot->hdr.iov_count = (uint8_t)count;
		memcpy(slot->payload, iov, count * sizeof(*iov));
	} else if ((size_t)len <= GBA_ENG_INLINE - GBA_ENG_SKIP) {
		/* past the header's neighbour line (GBA_ENG_X_SKIP) */
		slot->hdr.xflags = GBA_ENG_X_NOANS | GBA_ENG_X_SKIP;
		slot->hdr.iov_count = 0;
		iov_gather(slot->payload + GBA_ENG_SKIP, iov, count);
	} else {
		slot->hdr.xflags = GBA_ENG_X_NOANS;
		slot->hdr.iov_count = 0;
		iov_gather(slot->payload, iov, count);
	}
	gba_eng_ring_publish(slot, pos);
	return op ? 0 : 1;
}

/* Common part of put and get. */
static int rma(struct gba_eng_ep *ep, struct gba_eng_peer *peer, bool put,
	       const struct iovec *iov, size_t count, uint64_t addr,
	       uint64_t key, uint32_t flags, uint64_t data, uint64_t cookie)
{
	uint8_t type = put ? GBA_ENG_T_PUT : GBA_ENG_T_GET;
	ssize_t len = iov_total(iov, count);
	struct gba_eng_slot *slot;
	struct gba_eng_op *op;
	uint64_t pos;
	int ret;

	if (!ep || !peer || len < 0)
		return -EINVAL;
	if (!peer->ring) /* another host */
		return gba_eng_net_rma(ep, peer, put, iov, count, addr, key,
				       flags, data, cookie);
	ret = peer_check(peer);
	if (ret)
		return ret;
	op = gba_eng_op_alloc(ep, peer, type, cookie);
	if (!op)
		return -EAGAIN;
	slot = claim(ep, peer, type, &pos);
	if (!slot) {
		gba_eng_op_free(ep, op);
		return gba_eng_peer_full(ep, peer);
	}
	slot->hdr.op = gba_eng_op_id(ep, op);
	slot->hdr.flags = flags;
	slot->hdr.len = (uint64_t)len;
	slot->hdr.tag = key;
	slot->hdr.data = data;
	slot->hdr.addr = addr;
	if (put && (size_t)len <= GBA_ENG_INLINE) {
		slot->hdr.iov_count = 0;
		iov_gather(slot->payload, iov, count);
	} else {
		if ((size_t)len > GBA_ENG_INLINE)
			slot->hdr.xflags = GBA_ENG_X_LARGE;
		if (!put && peer->share && (size_t)len >= GBA_ENG_SHARE_MIN) {
			slot->hdr.xflags |= GBA_ENG_X_SHARE;
			op->share_wait = true;
			peer->share_wait++;
		}
		slot->hdr.iov_count = (uint8_t)count;
		if (count) /* a zero-length get may have no iov at all */
			memcpy(slot->payload, iov, count * sizeof(*iov));
		if (!put && count) {
			op->iov_count = (uint8_t)count;
			memcpy(op->iov, iov, count * sizeof(*iov));
		}
	}
	gba_eng_ring_publish(slot, pos);
	return 0;
}

int gba_eng_put(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		const struct iovec *iov, size_t count, uint64_t addr,
		uint64_t key, uint32_t flags, uint64_t data, uint64_t cookie)
{
	return rma(ep, peer, true, iov, count, addr, key, flags, data, cookie);
}

int gba_eng_get(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		const struct iovec *iov, size_t count, uint64_t addr,
		uint64_t key, uint32_t flags, uint64_t cookie)
{
	return rma(ep, peer, false, iov, count, addr, key, flags, 0, cookie);
}

size_t gba_eng_atomic_max_count(size_t elem_size, int compare)
{
	size_t room = GBA_ENG_INLINE - sizeof(struct gba_eng_atomic_req);

	if (!elem_size)
		return 0;
	return room / (elem_size * (compare ? 2 : 1));
}

int gba_eng_atomic(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		   uint32_t aop, uint32_t datatype, size_t elem_size,
		   size_t count, const void *operand, const void *compare,
		   void *result, uint64_t addr, uint64_t key, uint32_t flags,
		   uint64_t data, uint64_t cookie)
{
	struct gba_eng_atomic_req *req;
	struct gba_eng_slot *slot;
	struct gba_eng_op *op;
	size_t bytes;
	uint64_t pos;
	int ret;

	if (!ep || !peer || !count || !elem_size ||
	    count > gba_eng_atomic_max_count(elem_size, compare != NULL))
		return -EINVAL;
	if (!peer->ring) /* another host */
		return gba_eng_net_atomic(ep, peer, aop, datatype, elem_size,
					  count, operand, compare, result,
					  addr, key, flags, data, cookie);
	ret = peer_check(peer);
	if (ret)
		return ret;
	bytes = count * elem_size;
	op = gba_eng_op_alloc(ep, peer, GBA_ENG_T_ATOMIC, cookie);
	if (!op)
		return -EAGAIN;
	slot = claim(ep, peer, GBA_ENG_T_ATOMIC, &pos);
	if (!slot) {
		gba_eng_op_free(ep, op);
		return gba_eng_peer_full(ep, peer);
	}
	op->result = result;
	op->result_len = result ? bytes : 0;
	slot->hdr.op = gba_eng_op_id(ep, op);
	slot->hdr.flags = flags;
	slot->hdr.len = bytes;
	slot->hdr.tag = key;
	slot->hdr.data = data;
	slot->hdr.addr = addr;
	slot->hdr.iov_count = 0;
	slot->hdr.xflags = (result ? GBA_ENG_X_FETCH : 0) |
			   (compare ? GBA_ENG_X_CMP : 0);
	req = (struct gba_eng_atomic_req *)slot->payload;
	req->op = aop;
	req->datatype = datatype;
	req->elem_size = (uint32_t)elem_size;
	req->count = (uint32_t)count;
	if (operand)
		memcpy(req->operands, operand, bytes);
	else
		memset(req->operands, 0, bytes);
	if (compare)
		memcpy(req->operands + bytes, compare, bytes);
	gba_eng_ring_publish(slot, pos);
	return 0;
}

/* ---- Target ---------------------------------------------------------------- */

/*
 * Slots are written by other processes: what is wrong with the request in
 * @slot, or NULL.  The header's type, flags, lengths and counts must
 * describe bytes inside the slot (or the slots gba_eng_slot_span checked)
 * and at most GBA_ENG_MAX_IOV iov entries; an atomic's operands must fit
 * the payload.  The addresses and keys are the front end's to check
 * (ops->mr_lookup), the initiator's iovs the kernel's (cross-memory
 * attach).
 */
static const char *slot_bad(const struct gba_eng_slot *slot)
{
	const struct gba_eng_hdr *hdr = &slot->hdr;
	const struct gba_eng_atomic_req *req = (const void *)slot->payload;
	uint64_t bytes, sets = hdr->xflags & GBA_ENG_X_CMP ? 2 : 1;

	if (hdr->type == GBA_ENG_T_MSG &&
	    (hdr->xflags & (GBA_ENG_X_SLOTS | GBA_ENG_X_HDR)))
		return NULL; /* gba_eng_slot_span checked it */
	if (hdr->xflags & (GBA_ENG_X_SLOTS | GBA_ENG_X_HDR | GBA_ENG_X_SKIP) &&
	    (hdr->type != GBA_ENG_T_MSG || (hdr->xflags & GBA_ENG_X_LARGE)))
		return "slot flags of an inline message on another entry";
	if (hdr->xflags & GBA_ENG_X_SKIP)
		return hdr->len > GBA_ENG_INLINE - GBA_ENG_SKIP
			       ? "inline length beyond the slot"
			       : NULL;
	switch (hdr->type) {
	case GBA_ENG_T_MSG:
	case GBA_ENG_T_PUT:
	case GBA_ENG_T_GET:
		if (hdr->xflags & GBA_ENG_X_LARGE)
			return hdr->iov_count > GBA_ENG_MAX_IOV
				       ? "more iov entries than the engine's"
				       : NULL;
		return hdr->len > GBA_ENG_INLINE
			       ? "inline length beyond the slot"
			       : NULL;
	case GBA_ENG_T_ATOMIC:
		bytes = (uint64_t)req->count * req->elem_size;
		/* the operands, and as many compare values */
		if (!req->count || bytes != hdr->len ||
		    sizeof(*req) + bytes * sets > GBA_ENG_INLINE)
			return "atomic operands beyond the slot";
		return NULL;
	default:
		return "unknown type";
	}
}

void gba_eng_bad_slot(struct gba_eng_ep *ep, const struct gba_eng_hdr *hdr,
		      const char *why)
{
	if (ep->nbad++ < GBA_ENG_BAD_LOG_MAX)
		fprintf(stderr,
			"gba: endpoint %" PRIu32 ": dropped a slot from "
			"process %" PRIu32 " endpoint %" PRIu32 " (type %u, "
			"flags 0x%x, %u iovs, %" PRIu64 " bytes): %s%s\n",
			ep->addr.ep_id, hdr->src_pid, hdr->src_ep_id, hdr->type,
			hdr->xflags, hdr->iov_count,
			hdr->xflags & GBA_ENG_X_HDR ? hdr->small_len
						    : hdr->len,
			why,
			ep->nbad == GBA_ENG_BAD_LOG_MAX ? " (no more reported)"
							: "");
}

static void rx_from_slot(struct gba_eng_ep *ep, const struct gba_eng_slot *slot,
			 struct gba_eng_rx *rx)
{
	const struct gba_eng_hdr *hdr = &slot->hdr;

	memset(&rx->src, 0, sizeof(rx->src));
	rx->src.magic = GBA_ADDR_MAGIC;
	rx->src.version = GBA_ADDR_VERSION;
	rx->src.pid = hdr->src_pid;
	rx->src.ep_id = hdr->src_ep_id;
	rx->src.host_id = ep->addr.host_id;
	rx->tag = hdr->tag;
	rx->data = hdr->data;
	rx->held = 0;
	rx->local = 0;
	if (hdr->xflags & GBA_ENG_X_HDR) {
		/* gba_eng_slot_span checked the length */
		rx->len = hdr->small_len;
		rx->flags = hdr->small_flags;
		rx->payload = hdr->small;
		rx->iov_count = 0;
		rx->src_op = 0;
		return;
	}
	rx->len = hdr->len;
	rx->flags = hdr->flags;
	rx->src_op = hdr->op;
	if (hdr->xflags & GBA_ENG_X_SLOTS) {
		/* gba_eng_slot_span checked the count against the length */
		uint32_t n = hdr->iov_count, i;
		size_t idx = (size_t)(slot - ep->rx->slots), left = hdr->len;

		rx->payload = NULL;
		rx->local = 1;
		rx->iov_count = (uint16_t)n;
		rx->iov[0].iov_base = (void *)slot->payload;
		rx->iov[0].iov_len = GBA_ENG_INLINE;
		left -= GBA_ENG_INLINE;
		for (i = 1; i < n; i++) {
			rx->iov[i].iov_base =
				(char *)&ep->rx
					->slots[(idx + i) & ep->rx_mask] +
				GBA_ENG_CONT_OFF;
			rx->iov[i].iov_len = left < GBA_ENG_EAGER_SLOT
						     ? left
						     : GBA_ENG_EAGER_SLOT;
			left -= rx->iov[i].iov_len;
		}
	} else if (hdr->xflags & GBA_ENG_X_LARGE) {
		rx->payload = NULL;
		rx->iov_count = hdr->iov_count;
		memcpy(rx->iov, slot->payload,
		       hdr->iov_count * sizeof(struct iovec));
	} else {
		/* slot_bad checked the length */
		rx->payload = slot->payload +
			      (hdr->xflags & GBA_ENG_X_SKIP ? GBA_ENG_SKIP : 0);
		rx->iov_count = 0;
	}
}

static void exec_msg(struct gba_eng_ep *ep, struct gba_eng_slot *slot)
{
	struct gba_eng_rx rx;

	rx_from_slot(ep, slot, &rx);
	ep->ops.recv(ep->ctx, &rx);
}

static void remote_event(struct gba_eng_ep *ep, enum gba_eng_event event,
			 const struct gba_eng_hdr *hdr)
{
	struct gba_addr src;

	if (!ep->ops.remote_event)
		return;
	memset(&src, 0, sizeof(src));
	src.magic = GBA_ADDR_MAGIC;
	src.version = GBA_ADDR_VERSION;
	src.pid = hdr->src_pid;
	src.ep_id = hdr->src_ep_id;
	src.host_id = ep->addr.host_id;
	ep->ops.remote_event(ep->ctx, event, &src, hdr->flags, hdr->data,
			     hdr->len);
}

/*
 * Does @hdr, a large get, get shared: asked for by the initiator, large
 * enough, and allowed by this endpoint (GBA_ENG_EP_SHARED_GET)?
 */
static bool share_get(const struct gba_eng_ep *ep,
		      const struct gba_eng_hdr *hdr)
{
	return hdr->type == GBA_ENG_T_GET && (hdr->xflags & GBA_ENG_X_SHARE) &&
	       ep->shared_get && hdr->len >= GBA_ENG_SHARE_MIN;
}

static void exec_rma(struct gba_eng_ep *ep, struct gba_eng_slot *slot)
{
	const struct gba_eng_hdr *hdr = &slot->hdr;
	bool put = hdr->type == GBA_ENG_T_PUT;
	struct gba_eng_peer *peer = gba_eng_src_peer(ep, hdr);
	const void *answer = NULL;
	struct iovec local;
	size_t alen = 0;
	void *ptr;
	int ret;

	ret = ep->ops.mr_lookup(ep->ctx, hdr->tag, hdr->addr, hdr->len,
				put ? GBA_ENG_ACCESS_WRITE
				    : GBA_ENG_ACCESS_READ,
				&ptr);
	if (ret)
		goto out;
	gba_fault(GBA_FAULT_RMA);
	if (!hdr->len)
		goto done;
	if (put && !(hdr->xflags & GBA_ENG_X_LARGE)) {
		memcpy(ptr, slot->payload, hdr->len);
	} else if (!put && !(hdr->xflags & GBA_ENG_X_LARGE)) {
		answer = ptr;
		alen = hdr->len;
	} else {
		local.iov_base = ptr;
		local.iov_len = hdr->len;
		if (share_get(ep, hdr)) {
			/* the initiator copies the tail meanwhile */
			local.iov_len = gba_eng_share_head(hdr->len);
			gba_eng_notice(ep, peer, hdr->op,
				       (uintptr_t)ptr + local.iov_len);
		}
		ret = gba_eng_cma((pid_t)hdr->src_pid, !put, &local, 1,
				  (const struct iovec *)slot->payload,
				  hdr->iov_count, 0, local.iov_len);
		if (ret)
			goto out;
	}
done:
	remote_event(ep, put ? GBA_ENG_EV_PUT : GBA_ENG_EV_GET, hdr);
out:
	gba_eng_answer(ep, peer, hdr->op, ret, ret ? NULL : answer,
		       ret ? 0 : alen);
}

static void exec_atomic(struct gba_eng_ep *ep, struct gba_eng_slot *slot)
{
	const struct gba_eng_hdr *hdr = &slot->hdr;
	struct gba_eng_peer *peer = gba_eng_src_peer(ep, hdr);
	struct gba_eng_atomic_req *req = (void *)slot->payload;
	uint8_t result[GBA_ENG_INLINE];
	bool fetch = hdr->xflags & GBA_ENG_X_FETCH;
	size_t bytes = hdr->len;
	void *ptr;
	int ret;

	if ((size_t)req->count * req->elem_size != bytes ||
	    bytes > sizeof(result)) {
		ret = -EINVAL;
		goto out;
	}
	ret = ep->ops.mr_lookup(ep->ctx, hdr->tag, hdr->addr, bytes,
				GBA_ENG_ACCESS_WRITE |
					(fetch ? GBA_ENG_ACCESS_READ : 0),
				&ptr);
	if (ret)
		goto out;
	if (ep->ops.atomic)
		ret = ep->ops.atomic(ep->ctx, req->op, req->datatype, ptr,
				     req->operands,
				     hdr->xflags & GBA_ENG_X_CMP
					     ? req->operands + bytes
					     : NULL,
				     fetch ? result : NULL, req->count);
	else
		ret = gba_eng_atomic_builtin(
			req->op, req->elem_size, ptr, req->operands,
			hdr->xflags & GBA_ENG_X_CMP ? req->operands + bytes
						    : NULL,
			fetch ? result : NULL, req->count);
	if (!ret)
		remote_event(ep, GBA_ENG_EV_ATOMIC, hdr);
out:
	gba_eng_answer(ep, peer, hdr->op, ret, result,
		       !ret && fetch ? bytes : 0);
}

void gba_eng_execute(struct gba_eng_ep *ep, struct gba_eng_slot *slot)
{
	const struct gba_eng_hdr *hdr = &slot->hdr;
	const char *why = slot_bad(slot);

	if (why) {
		gba_eng_bad_slot(ep, hdr, why);
		/* an initiator waiting for an answer gets an error */
		if (hdr->type != GBA_ENG_T_MSG ||
		    ((hdr->xflags & GBA_ENG_X_LARGE) &&
		     !(hdr->xflags & GBA_ENG_X_NOANS)))
			gba_eng_answer(ep, gba_eng_src_peer(ep, hdr), hdr->op,
				       -EPROTO, NULL, 0);
		return;
	}
	switch (slot->hdr.type) {
	case GBA_ENG_T_MSG:
		exec_msg(ep, slot);
		break;
	case GBA_ENG_T_PUT:
	case GBA_ENG_T_GET:
		exec_rma(ep, slot);
		break;
	case GBA_ENG_T_ATOMIC:
		exec_atomic(ep, slot);
		break;
	default: /* a corrupt slot: nothing sane to answer */
		break;
	}
}

/*
 * The notice @hdr of the target of @op, a shared get: copy the tail of
 * the get, from the address the notice gives, ourselves while the target
 * copies the head.  Its error, if any, is the operation's when the
 * target's answer comes.
 */
static void copy_tail(struct gba_eng_ep *ep, struct gba_eng_op *op,
		      const struct gba_eng_hdr *hdr)
{
	struct iovec l[GBA_ENG_MAX_IOV], r;
	ssize_t len = iov_total(op->iov, op->iov_count);
	uint64_t head;
	int n;

	/* one notice per shared get (share_wait drops at the first) */
	if (!op->share_wait || len < 0) {
		gba_eng_bad_slot(ep, hdr, "a notice no shared get asked for");
		op->share_status = -EPROTO;
		return;
	}
	head = gba_eng_share_head((uint64_t)len);
	n = iov_slice(op->iov, op->iov_count, head, (size_t)len - head, l);
	r.iov_base = (void *)(uintptr_t)hdr->addr;
	r.iov_len = (size_t)len - head;
	op->share_status = n < 0 ? -EPROTO
				 : gba_eng_cma((pid_t)op->peer->addr.pid, false,
					       l, (size_t)n, &r, 1, 0,
					       r.iov_len);
	if (!op->share_status)
		__atomic_store_n(&ep->nshared, ep->nshared + 1,
				 __ATOMIC_RELAXED);
}

void gba_eng_resp(struct gba_eng_ep *ep, const struct gba_eng_slot *slot)
{
	const struct gba_eng_hdr *hdr = &slot->hdr;
	struct gba_eng_op *op = gba_eng_op_find(ep, hdr->op);
	size_t len = hdr->len;
	int status = hdr->status;

	if (!op)
		return; /* already failed (peer thought dead) */
	/* only the target of an operation answers it */
	if (hdr->src_pid != op->peer->addr.pid ||
	    hdr->src_ep_id != op->peer->addr.ep_id) {
		gba_eng_bad_slot(ep, hdr, "an answer to another's operation");
		return;
	}
	if (hdr->xflags & GBA_ENG_X_SHARE) {
		copy_tail(ep, op, hdr);
		gba_eng_op_share_done(op);
		return;
	}
	if (!status)
		status = op->share_status; /* our half of a shared get */
	if (len > GBA_ENG_INLINE || status > 0 || status < -GBA_ENG_ERRNO_MAX) {
		gba_eng_bad_slot(ep, hdr,
				 "answer beyond the slot or not an errno");
		status = -EPROTO;
		len = 0;
	}
	if (!status && len) {
		if (op->type == GBA_ENG_T_GET)
			iov_scatter(op->iov, op->iov_count, slot->payload, len);
		else if (op->type == GBA_ENG_T_ATOMIC && op->result)
			memcpy(op->result, slot->payload,
			       len < op->result_len ? len : op->result_len);
	}
	gba_eng_op_finish(ep, op, status);
}

/* ---- Received messages -------------------------------------------------- */

ssize_t gba_eng_rx_copy(struct gba_eng_ep *ep, const struct gba_eng_rx *rx,
			const struct iovec *iov, size_t count, size_t offset)
{
	ssize_t room;
	size_t len;
	int ret;

	/* the common case: a payload in the queue into one buffer */
	if (count == 1 && iov && rx && rx->payload && !offset) {
		len = rx->len < iov->iov_len ? rx->len : iov->iov_len;
		if (len && !iov->iov_base)
			return -EINVAL;
		if (len)
			memcpy(iov->iov_base, rx->payload, len);
		return (ssize_t)len;
	}
	room = iov_total(iov, count);
	if (!rx || room < 0)
		return -EINVAL;
	if (offset >= rx->len)
		return 0;
	len = rx->len - offset;
	if ((size_t)room < len)
		len = (size_t)room;
	if (!len)
		return 0;
	if (rx->payload) {
		iov_scatter(iov, count, (const char *)rx->payload + offset,
			    len);
		return (ssize_t)len;
	}
	/*
	 * In this endpoint's queue, or a large message from this process
	 * (an endpoint sending to itself or to another of its process's):
	 * either way in this address space, no cross-memory attach.
	 */
	if (rx->local || (ep && rx->src.pid == ep->addr.pid &&
			  rx->src.host_id == ep->addr.host_id)) {
		struct iov_cur src = {rx->iov, rx->iov_count, 0, 0};
		size_t i, left = len, take;

		iov_cur_skip(&src, offset);
		for (i = 0; i < count && left; i++) {
			take = iov[i].iov_len < left ? iov[i].iov_len : left;
			iov_cur_read(&src, iov[i].iov_base, take);
			left -= take;
		}
		return (ssize_t)len;
	}
	ret = gba_eng_cma((pid_t)rx->src.pid, false, iov, count, rx->iov,
			  rx->iov_count, offset, len);
	return ret ? ret : (ssize_t)len;
}

struct gba_eng_rx *gba_eng_rx_hold(const struct gba_eng_rx *rx)
{
	size_t extra = rx->payload || rx->local ? rx->len : 0;
	struct gba_eng_rx *copy = malloc(sizeof(*copy) + extra);
	struct iov_cur src = {rx->iov, rx->iov_count, 0, 0};

	if (!copy)
		return NULL;
	*copy = *rx;
	copy->held = 1;
	if (rx->payload) {
		memcpy(copy + 1, rx->payload, extra);
		copy->payload = copy + 1;
	} else if (rx->local) {
		/* out of the queue's slots, into one piece */
		iov_cur_read(&src, copy + 1, extra);
		copy->payload = copy + 1;
		copy->local = 0;
		copy->iov_count = 0;
	}
	return copy;
}

void gba_eng_rx_done(struct gba_eng_ep *ep, struct gba_eng_rx *rx,
		     int status)
{
	if (!rx->payload && !rx->local)
		gba_eng_answer(ep, gba_eng_src_peer(ep, &(struct gba_eng_hdr){
					       .src_pid = rx->src.pid,
					       .src_ep_id = rx->src.ep_id }),
			       rx->src_op, status, NULL, 0);
	if (rx->held)
		free(rx);
}
