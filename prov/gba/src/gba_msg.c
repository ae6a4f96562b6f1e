/*
 * libfabric "gba" provider: messages and tagged messages (fi_msg(3),
 * fi_tagged(3)) over the fabric engine (gba_eng.c).
 *
 * Sends: up to GBA_INJECT_SIZE bytes are copied into the peer's receive
 * queue and complete before the call returns (FI_INJECT included);
 * larger messages stay in the caller's buffer until the receiver has
 * copied them (single copy, cross-memory attach) and complete then.
 *
 * Receives: the engine delivers arrivals in order (gba_msg_arrived); each
 * is matched against the posted receives of its kind in posting order
 * (source with FI_DIRECTED_RECV, tag under the ignore mask), or kept as
 * unexpected, in arrival order.  A new receive is matched against the
 * unexpected messages first.  Truncation completes in error (FI_ETRUNC,
 * olen = bytes cut); the sender's send completes normally.
 *
 * Tagged receives also take FI_PEEK, FI_CLAIM and FI_DISCARD
 * (fi_tagged(3)); untagged receives take FI_MULTI_RECV (one buffer
 * filled by successive messages, released with FI_MULTI_RECV when less
 * than FI_OPT_MIN_MULTI_RECV bytes remain).  fi_cancel removes a posted
 * receive (FI_ECANCELED).  FI_TRIGGER defers a send or receive to its
 * counter's threshold.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_ep.h"

/* Flags the send and receive *msg verbs accept. */
#define GBA_MSG_TX_FLAGS                                                       \
	(FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_TRIGGER |          \
	 FI_FENCE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE |              \
	 FI_INJECT_COMPLETE | FI_MATCH_COMPLETE | FI_COMMIT_COMPLETE |         \
	 FI_MORE)
#define GBA_MSG_RX_FLAGS (FI_COMPLETION | FI_MULTI_RECV | FI_TRIGGER | FI_MORE)
#define GBA_TAGGED_RX_FLAGS                                                    \
	(FI_COMPLETION | FI_TRIGGER | FI_MORE | FI_PEEK | FI_CLAIM | FI_DISCARD)

/* Default FI_OPT_MIN_MULTI_RECV (bytes). */
#define GBA_MIN_MULTI_RECV 64

/* A posted receive (pool of GBA_RX_SIZE per endpoint). */
struct gba_rx_entry {
	TAILQ_ENTRY(gba_rx_entry) entry;
	struct gba_rx_entry *next_free;
	struct iovec iov[GBA_IOV_LIMIT];
	size_t count;
	size_t total;  /* bytes of iov */
	size_t offset; /* FI_MULTI_RECV: bytes filled */
	fi_addr_t src; /* FI_ADDR_UNSPEC: any source */
	uint64_t tag;
	uint64_t ignore;
	uint64_t flags; /* op flags and FI_RECV | FI_MSG / FI_TAGGED */
	void *context;
};

/* A message that arrived before its receive. */
struct gba_unexp {
	TAILQ_ENTRY(gba_unexp) entry;
	struct gba_eng_rx *rx; /* held copy */
	fi_addr_t src;
	bool claimed; /* FI_PEEK | FI_CLAIM: reserved for a claim */
};

int gba_msg_init(struct gba_ep *ep)
{
	size_t i;

	ep->rx_entries = calloc(GBA_RX_SIZE, sizeof(*ep->rx_entries));
	if (!ep->rx_entries)
		return -FI_ENOMEM;
	for (i = 0; i + 1 < GBA_RX_SIZE; i++)
		ep->rx_entries[i].next_free = &ep->rx_entries[i + 1];
	ep->rx_free = ep->rx_entries;
	for (i = 0; i < 2; i++) {
		TAILQ_INIT(&ep->posted[i]);
		TAILQ_INIT(&ep->unexp[i]);
	}
	ep->min_multi_recv = GBA_MIN_MULTI_RECV;
	return 0;
}

void gba_msg_fini(struct gba_ep *ep)
{
	struct gba_rx_entry *re;
	struct gba_unexp *u;
	size_t i;

	for (i = 0; ep->rx_entries && i < 2; i++) {
		while ((u = TAILQ_FIRST(&ep->unexp[i]))) {
			TAILQ_REMOVE(&ep->unexp[i], u, entry);
			gba_eng_rx_done(ep->eng, u->rx, -ECANCELED);
			free(u);
		}
		TAILQ_FOREACH(re, &ep->posted[i], entry)
			if (re->flags & GBA_FLAG_DEFERRED)
				gba_work_drop(re->context);
		TAILQ_INIT(&ep->posted[i]);
	}
	free(ep->rx_entries);
	ep->rx_entries = NULL;
	ep->rx_free = NULL;
}

/* ---- Matching ------------------------------------------------------------ */

static inline bool gba_msg_match(const struct gba_rx_entry *re, fi_addr_t src,
				 uint64_t tag)
{
	if (re->src != FI_ADDR_UNSPEC && re->src != src)
		return false;
	return !(re->flags & FI_TAGGED) || !((re->tag ^ tag) & ~re->ignore);
}

/* The iovs of @re from its fill offset on, into @out; returns the count. */
static size_t gba_msg_slice(const struct gba_rx_entry *re, struct iovec *out)
{
	size_t i, n = 0, off = re->offset;

	for (i = 0; i < re->count; i++) {
		if (off >= re->iov[i].iov_len) {
			off -= re->iov[i].iov_len;
			continue;
		}
		out[n].iov_base = (char *)re->iov[i].iov_base + off;
		out[n].iov_len = re->iov[i].iov_len - off;
		off = 0;
		n++;
	}
	return n;
}

/*
 * Copy message @rx from @src into receive @re and complete it.  Returns
 * true when @re is used up (always, except for a multi-recv buffer with
 * room left).  @rx is finished (the sender answered).
 */
static bool gba_msg_deliver(struct gba_ep *ep, struct gba_rx_entry *re,
			    struct gba_eng_rx *rx, fi_addr_t src)
{
	struct iovec slice[GBA_IOV_LIMIT];
	size_t n = gba_msg_slice(re, slice), room = re->total - re->offset;
	uint64_t flags = re->flags;
	size_t olen = 0, len;
	void *buf = n ? slice[0].iov_base : NULL;
	bool done = true;
	ssize_t got;
	int err = 0;

	if (rx->flags & GBA_WIRE_CQ_DATA)
		flags |= FI_REMOTE_CQ_DATA;
	got = gba_eng_rx_copy(ep->eng, rx, slice, n, 0);
	if (got < 0) {
		FI_WARN(&gba_prov, FI_LOG_EP_DATA,
			"receive of %llu bytes failed: %s\n",
			(unsigned long long)rx->len, strerror((int)-got));
		err = -gba_xfer_errno_to_fi((int)got);
		len = 0;
	} else {
		len = (size_t)got;
		if (rx->len > room) {
			err = FI_ETRUNC;
			olen = rx->len - len;
			FI_INFO(&gba_prov, FI_LOG_EP_DATA,
				"message of %llu bytes truncated to %zu\n",
				(unsigned long long)rx->len, len);
		}
	}
	if (re->flags & FI_MULTI_RECV) {
		re->offset += len;
		done = err || re->total - re->offset < ep->min_multi_recv ||
		       re->total == re->offset;
		if (!done)
			flags &= ~FI_MULTI_RECV;
	}
	gba_ep_rx_complete(ep, err, re->context, flags, len, buf, rx->data,
			   rx->tag, src, olen);
	gba_eng_rx_done(ep->eng, rx, 0);
	return done;
}

static void gba_rx_entry_put(struct gba_ep *ep, struct gba_rx_entry *re)
{
	re->next_free = ep->rx_free;
	ep->rx_free = re;
}

void gba_msg_arrived(struct gba_ep *ep, struct gba_eng_rx *rx)
{
	bool tagged = rx->flags & GBA_WIRE_TAGGED;
	fi_addr_t src;
	struct gba_rx_entry *re;
	struct gba_unexp *u;

	if (rx->flags & GBA_WIRE_COLL) {
		gba_swc_arrived(ep, rx);
		return;
	}
	src = gba_peer_src(ep, &rx->src);
	TAILQ_FOREACH(re, &ep->posted[tagged], entry) {
		if (!gba_msg_match(re, src, rx->tag))
			continue;
		if (gba_msg_deliver(ep, re, rx, src)) {
			TAILQ_REMOVE(&ep->posted[tagged], re, entry);
			gba_rx_entry_put(ep, re);
		}
		return;
	}
	u = malloc(sizeof(*u));
	if (u)
		u->rx = gba_eng_rx_hold(rx);
	if (!u || !u->rx) {
		FI_WARN(&gba_prov, FI_LOG_EP_DATA,
			"out of memory for an unexpected message of %llu "
			"bytes: dropped, its sender is told\n",
			(unsigned long long)rx->len);
		free(u);
		gba_eng_rx_done(ep->eng, rx, -ENOMEM);
		return;
	}
	u->src = src;
	u->claimed = false;
	TAILQ_INSERT_TAIL(&ep->unexp[tagged], u, entry);
}

/* First unclaimed unexpected message matching @re, or NULL. */
static struct gba_unexp *gba_msg_find_unexp(struct gba_ep *ep,
					    const struct gba_rx_entry *re)
{
	bool tagged = re->flags & FI_TAGGED;
	struct gba_unexp *u;

	TAILQ_FOREACH(u, &ep->unexp[tagged], entry)
		if (!u->claimed && gba_msg_match(re, u->src, u->rx->tag))
			return u;
	return NULL;
}

/* Deliver unexpected @u into @re and free it; true if @re is used up. */
static bool gba_msg_take_unexp(struct gba_ep *ep, struct gba_rx_entry *re,
			       struct gba_unexp *u)
{
	bool done;

	TAILQ_REMOVE(&ep->unexp[!!(re->flags & FI_TAGGED)], u, entry);
	done = gba_msg_deliver(ep, re, u->rx, u->src);
	free(u);
	return done;
}

/* ---- Receive verbs --------------------------------------------------------- */

/*
 * Validate @iov (the core's gba_eng_iov_len): 0 and the total in *@len,
 * or -FI_EINVAL (logged).
 */
static int gba_msg_iov_check(const struct iovec *iov, size_t count,
			     size_t *len)
{
	ssize_t total;
	size_t i;

	/* the common shape: one buffer */
	if (count == 1 && iov && (iov->iov_base || !iov->iov_len) &&
	    iov->iov_len <= GBA_MAX_MSG_SIZE) {
		*len = iov->iov_len;
		return 0;
	}
	total = gba_eng_iov_len(iov, count, GBA_IOV_LIMIT, GBA_MAX_MSG_SIZE,
				&i);
	if (total == -E2BIG || total == -EINVAL)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "%zu iovs (limit %d)\n", count,
				    GBA_IOV_LIMIT);
	if (total < 0)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "bad iov entry %zu (NULL buffer "
				    "or more than %zu bytes)\n",
				    i, GBA_MAX_MSG_SIZE);
	*len = (size_t)total;
	return 0;
}

/* A receive, as the verbs describe it. */
struct gba_msg_rx_args {
	const struct iovec *iov;
	size_t count;
	fi_addr_t src;
	uint64_t tag;
	uint64_t ignore;
	uint64_t flags;
	void *context;
	bool tagged;
};

/* Fill receive entry @re from @a (@total bytes of buffers). */
static void gba_rx_entry_fill(const struct gba_ep *ep, struct gba_rx_entry *re,
			      const struct gba_msg_rx_args *a, size_t total)
{
	if (a->count) /* iov may be NULL without entries (MPI_Probe) */
		memcpy(re->iov, a->iov, a->count * sizeof(*a->iov));
	re->count = a->count;
	re->total = total;
	re->offset = 0;
	re->src = (ep->caps & FI_DIRECTED_RECV) ? a->src : FI_ADDR_UNSPEC;
	re->tag = a->tag;
	re->ignore = a->ignore;
	re->flags = (a->flags &
		     (FI_COMPLETION | FI_MULTI_RECV | GBA_FLAG_DEFERRED)) |
		    FI_RECV | (a->tagged ? FI_TAGGED : FI_MSG);
	re->context = a->context;
}

/*
 * Post (or match at once) receive @a; shape already checked.  The entry
 * is filled in place: taken from the free list first, or, when the list
 * is empty, built on the stack in case an unexpected message takes it.
 */
static ssize_t gba_msg_post(struct gba_ep *ep, const struct gba_msg_rx_args *a,
			    size_t total)
{
	struct gba_rx_entry tmp, *re;
	struct gba_unexp *u;
	ssize_t ret = 0;
	bool token;

	token = gba_ep_data_lock(ep);
	re = ep->rx_free;
	/*
	 * A multi-recv buffer may stay posted after taking unexpected
	 * messages: make sure of its entry before it takes any, or an
	 * -FI_EAGAIN would come after completions into the buffer.
	 */
	if (!re && (a->flags & FI_MULTI_RECV)) {
		ret = -FI_EAGAIN;
		goto out;
	}
	if (re)
		ep->rx_free = re->next_free;
	else
		re = &tmp;
	gba_rx_entry_fill(ep, re, a, total);
	if (!TAILQ_EMPTY(&ep->unexp[a->tagged])) {
		while ((u = gba_msg_find_unexp(ep, re)))
			if (gba_msg_take_unexp(ep, re, u))
				goto used;
	}
	if (re == &tmp) {
		ret = -FI_EAGAIN;
		goto out;
	}
	TAILQ_INSERT_TAIL(&ep->posted[a->tagged], re, entry);
	goto out;
used:
	if (re != &tmp)
		gba_rx_entry_put(ep, re);
out:
	gba_ep_data_unlock(ep, token);
	return ret;
}

/* fi_tagged(3) FI_PEEK / FI_CLAIM / FI_DISCARD; ep unlocked. */
static ssize_t gba_msg_peek_claim(struct gba_ep *ep,
				  const struct gba_msg_rx_args *a, size_t total)
{
	struct fi_context *fctx = a->context;
	uint64_t flags = FI_RECV | FI_TAGGED | FI_COMPLETION;
	struct gba_rx_entry tmp;
	struct gba_unexp *u = NULL, *v;
	ssize_t ret = 0;
	bool token;

	if ((a->flags & FI_CLAIM) && !fctx)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "FI_CLAIM needs a struct fi_context\n");
	memset(&tmp, 0, sizeof(tmp));
	if (a->count) /* iov may be NULL without entries (MPI_Probe) */
		memcpy(tmp.iov, a->iov, a->count * sizeof(*a->iov));
	tmp.count = a->count;
	tmp.total = total;
	tmp.src = (ep->caps & FI_DIRECTED_RECV) ? a->src : FI_ADDR_UNSPEC;
	tmp.tag = a->tag;
	tmp.ignore = a->ignore;
	tmp.flags = (a->flags & FI_COMPLETION) | FI_RECV | FI_TAGGED;
	tmp.context = a->context;

	token = gba_ep_data_lock(ep);
	if (!(a->flags & FI_PEEK)) {
		/* a claim of the message an earlier FI_PEEK | FI_CLAIM found */
		TAILQ_FOREACH(v, &ep->unexp[1], entry)
			if (v->claimed && v == fctx->internal[0])
				u = v;
		if (!u) {
			ret = GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
					   "FI_CLAIM: no message claimed "
					   "with this context\n");
			goto out;
		}
		if (a->flags & FI_DISCARD)
			goto discard;
		gba_msg_take_unexp(ep, &tmp, u);
		goto out;
	}
	u = gba_msg_find_unexp(ep, &tmp);
	if (!u) {
		if (ep->rx_cq)
			gba_cq_write_error(ep->rx_cq, a->context,
					   FI_RECV | FI_TAGGED, FI_ENOMSG, 0, 0,
					   0);
		goto out;
	}
	if (u->rx->flags & GBA_WIRE_CQ_DATA)
		flags |= FI_REMOTE_CQ_DATA;
	if (a->flags & FI_DISCARD)
		goto discard;
	if (a->flags & FI_CLAIM) {
		u->claimed = true;
		fctx->internal[0] = u;
	}
	if (ep->rx_cq)
		gba_cq_write(ep->rx_cq, a->context, flags, u->rx->len, NULL,
			     u->rx->data, u->rx->tag, u->src);
	goto out;
discard:
	TAILQ_REMOVE(&ep->unexp[1], u, entry);
	gba_ep_rx_complete(ep, 0, a->context, flags, 0, NULL, u->rx->data,
			   u->rx->tag, u->src, 0);
	gba_eng_rx_done(ep->eng, u->rx, 0);
	free(u);
out:
	gba_ep_data_unlock(ep, token);
	return ret;
}

/* A triggered send or receive: copies of everything the caller passed. */
struct gba_msg_trigger {
	struct gba_trigger base; /* first: freed with free() */
	bool recv;
	bool tagged;
	struct iovec iov[GBA_IOV_LIMIT];
	size_t count;
	fi_addr_t addr;
	uint64_t tag;
	uint64_t ignore;
	uint64_t data;
	uint64_t flags;
	void *context;
	uint8_t payload[]; /* FI_INJECT: the data itself */
};

static ssize_t gba_msg_send_do(struct gba_ep *ep, const struct iovec *iov,
			       size_t count, size_t len, fi_addr_t dest,
			       uint64_t tag, uint64_t data, uint64_t flags,
			       void *context, bool tagged);

static void gba_msg_trigger_run(struct gba_trigger *trig)
{
	struct gba_msg_trigger *mt = (struct gba_msg_trigger *)trig;
	struct gba_msg_rx_args a = {mt->iov,   mt->count, mt->addr,
				    mt->tag,   mt->ignore, mt->flags,
				    mt->context, mt->tagged};
	size_t len = 0, i;
	ssize_t ret;

	for (i = 0; i < mt->count; i++)
		len += mt->iov[i].iov_len;
	if (mt->recv)
		ret = gba_msg_post(trig->ep, &a, len);
	else
		ret = gba_msg_send_do(trig->ep, mt->iov, mt->count, len,
				      mt->addr, mt->tag, mt->data, mt->flags,
				      mt->context, mt->tagged);
	if (!ret)
		return;
	if (mt->recv)
		gba_ep_rx_complete(trig->ep, (int)-ret, mt->context,
				   FI_RECV | (mt->tagged ? FI_TAGGED : FI_MSG),
				   0, NULL, 0, 0, FI_ADDR_NOTAVAIL, 0);
	else
		gba_ep_tx_error(trig->ep, GBA_CNTR_SEND,
				FI_SEND | (mt->tagged ? FI_TAGGED : FI_MSG),
				mt->context, (int)-ret, 0, NULL, 0);
}

/* Queue a send (@recv false) or receive as a triggered operation. */
static ssize_t gba_msg_trigger(struct gba_ep *ep, bool recv, bool tagged,
			       const struct iovec *iov, size_t count,
			       size_t len, fi_addr_t addr, uint64_t tag,
			       uint64_t ignore, uint64_t data, uint64_t flags,
			       void *context)
{
	bool inject = !recv && (flags & FI_INJECT);
	struct gba_msg_trigger *mt;
	struct gba_cntr *cntr;
	uint64_t threshold;
	size_t i, off = 0;
	int ret;

	ret = gba_trigger_parse(ep, context, &cntr, &threshold);
	if (ret)
		return ret;
	if (!ep->enabled)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EOPBADSTATE,
				    "endpoint not enabled\n");
	if (!recv && !gba_av_addr(ep->av, addr))
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "fi_addr %llu is not in the AV\n",
				    (unsigned long long)addr);
	mt = calloc(1, sizeof(*mt) + (inject ? len : 0));
	if (!mt)
		return -FI_ENOMEM;
	mt->recv = recv;
	mt->tagged = tagged;
	mt->count = count;
	for (i = 0; i < count; i++) {
		mt->iov[i] = iov[i];
		if (inject && iov[i].iov_len) {
			memcpy(mt->payload + off, iov[i].iov_base,
			       iov[i].iov_len);
			mt->iov[i].iov_base = mt->payload + off;
			off += iov[i].iov_len;
		}
	}
	mt->addr = addr;
	mt->tag = tag;
	mt->ignore = ignore;
	mt->data = data;
	mt->flags = flags & ~FI_TRIGGER;
	mt->context = context;
	mt->base.ep = ep;
	mt->base.run = gba_msg_trigger_run;
	mt->base.context = context;
	mt->base.flags = recv ? FI_RECV | (tagged ? FI_TAGGED : FI_MSG)
			      : FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
	mt->base.slot = recv ? GBA_CNTR_RECV : GBA_CNTR_SEND;
	return gba_trigger_queue(cntr, threshold, &mt->base);
}

/* Common entry of every receive verb. */
static ssize_t gba_msg_recv(struct fid_ep *ep_fid,
			    const struct gba_msg_rx_args *a)
{
	struct gba_ep *ep = gba_ep_of(ep_fid);
	size_t total;
	int ret;

	if (!ep)
		return -FI_EINVAL;
	if (!ep->enabled)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EOPBADSTATE,
				    "receive: endpoint not enabled\n");
	ret = gba_msg_iov_check(a->iov, a->count, &total);
	if (ret)
		return ret;
	if ((a->flags & FI_MULTI_RECV) && !(ep->caps & FI_MULTI_RECV))
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "FI_MULTI_RECV without the capability\n");
	if (a->flags & FI_TRIGGER)
		return gba_msg_trigger(ep, true, a->tagged, a->iov, a->count,
				       total, a->src, a->tag, a->ignore, 0,
				       a->flags, a->context);
	if (a->flags & (FI_PEEK | FI_CLAIM))
		return gba_msg_peek_claim(ep, a, total);
	if (a->flags & FI_DISCARD)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "FI_DISCARD needs FI_PEEK or FI_CLAIM\n");
	return gba_msg_post(ep, a, total);
}

static inline uint64_t gba_msg_rx_opflags(struct fid_ep *ep_fid)
{
	return gba_ep_op_flags(ep_fid, false) &
	       (FI_COMPLETION | FI_MULTI_RECV | FI_TRIGGER);
}

/* fi_recv(3): one buffer, any tag-less message from @src. */
static ssize_t gba_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src, void *context)
{
	struct iovec iov = {buf, len};
	struct gba_msg_rx_args a = {&iov, 1, src, 0, 0,
				    gba_msg_rx_opflags(ep), context, false};

	return gba_msg_recv(ep, &a);
}

/* fi_recvv(3): at most GBA_IOV_LIMIT buffers. */
static ssize_t gba_recvv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 void *context)
{
	struct gba_msg_rx_args a = {iov, count, src, 0, 0,
				    gba_msg_rx_opflags(ep), context, false};

	return gba_msg_recv(ep, &a);
}

/* fi_recvmsg(3): flags FI_COMPLETION, FI_MULTI_RECV, FI_TRIGGER. */
static ssize_t gba_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags)
{
	struct gba_msg_rx_args a;

	if (!msg)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "fi_recvmsg: NULL msg\n");
	if (flags & ~GBA_MSG_RX_FLAGS)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EBADFLAGS,
				    "fi_recvmsg: flags 0x%llx not supported\n",
				    (unsigned long long)(flags &
							 ~GBA_MSG_RX_FLAGS));
	a = (struct gba_msg_rx_args){msg->msg_iov, msg->iov_count, msg->addr,
				     0,		   0,		   flags,
				     msg->context, false};
	return gba_msg_recv(ep, &a);
}

/* fi_trecv(3): tag @tag, bits of @ignore ignored. */
static ssize_t gba_trecv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			 fi_addr_t src, uint64_t tag, uint64_t ignore,
			 void *context)
{
	struct iovec iov = {buf, len};
	struct gba_msg_rx_args a = {&iov,   1,
				    src,    tag,
				    ignore, gba_msg_rx_opflags(ep) & ~FI_MULTI_RECV,
				    context, true};

	return gba_msg_recv(ep, &a);
}

static ssize_t gba_trecvv(struct fid_ep *ep, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t src,
			  uint64_t tag, uint64_t ignore, void *context)
{
	struct gba_msg_rx_args a = {iov,    count,
				    src,    tag,
				    ignore, gba_msg_rx_opflags(ep) & ~FI_MULTI_RECV,
				    context, true};

	return gba_msg_recv(ep, &a);
}

/* fi_trecvmsg(3): flags FI_COMPLETION, FI_TRIGGER, FI_PEEK, FI_CLAIM,
 * FI_DISCARD. */
static ssize_t gba_trecvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			    uint64_t flags)
{
	struct gba_msg_rx_args a;

	if (!msg)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "fi_trecvmsg: NULL msg\n");
	if (flags & ~GBA_TAGGED_RX_FLAGS)
		return GBA_WARN_RET(
			FI_LOG_EP_DATA, -FI_EBADFLAGS,
			"fi_trecvmsg: flags 0x%llx not supported\n",
			(unsigned long long)(flags & ~GBA_TAGGED_RX_FLAGS));
	a = (struct gba_msg_rx_args){
		msg->msg_iov, msg->iov_count, msg->addr,    msg->tag,
		msg->ignore,  flags,	      msg->context, true};
	return gba_msg_recv(ep, &a);
}

/*
 * gba_msg_recv_submit - post the receive @msg (tag and ignore used when
 * @tagged) with @flags, already checked by the caller (deferred work).
 * Returns as fi_trecvmsg(3).
 */
ssize_t gba_msg_recv_submit(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			    uint64_t flags, bool tagged)
{
	struct gba_msg_rx_args a = {msg->msg_iov,
				    msg->iov_count,
				    msg->addr,
				    tagged ? msg->tag : 0,
				    tagged ? msg->ignore : 0,
				    flags,
				    msg->context,
				    tagged};

	return gba_msg_recv(ep, &a);
}

/* ---- Send verbs ------------------------------------------------------------- */

/*
 * Send @len bytes of @iov (checked) to @dest and report it.  Returns 0
 * (sent; completion now or when the receiver has copied it) or a
 * negative -FI_E* (nothing sent, nothing reported).
 */
static ssize_t gba_msg_send_do(struct gba_ep *ep, const struct iovec *iov,
			       size_t count, size_t len, fi_addr_t dest,
			       uint64_t tag, uint64_t data, uint64_t flags,
			       void *context, bool tagged)
{
	uint32_t wire = (tagged ? GBA_WIRE_TAGGED : 0) |
			(flags & FI_REMOTE_CQ_DATA ? GBA_WIRE_CQ_DATA : 0);
	struct gba_eng_peer *peer;
	struct gba_tx_req *req = NULL;
	bool token;
	int ret;

	flags |= FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
	if (!(flags & GBA_FLAG_NO_CQ) && !gba_ep_tx_has_space(ep))
		return -FI_EAGAIN;
	token = gba_ep_data_lock(ep);
	ret = gba_peer_get(ep, dest, &peer);
	if (ret)
		goto out;
	if (len > GBA_INJECT_SIZE) {
		req = gba_tx_req_get(ep);
		if (!req) {
			ret = -FI_EAGAIN;
			goto out;
		}
		req->context = context;
		req->flags = flags;
		req->len = len;
		req->slot = GBA_CNTR_SEND;
	}
	ret = gba_eng_send(ep->eng, peer, iov, count, tag, data, wire,
			   (uintptr_t)req);
	if (ret && req) /* not sent, or copied (up to FI_GBA_EAGER_SIZE) */
		gba_tx_req_put(ep, req);
out:
	gba_ep_data_unlock(ep, token);
	if (ret == 1) {
		if (flags & GBA_FLAG_NO_CQ) {
			if (ep->cntrs[GBA_CNTR_SEND])
				gba_cntr_inc(ep->cntrs[GBA_CNTR_SEND]);
		} else {
			gba_ep_tx_complete(ep, GBA_CNTR_SEND, flags, context,
					   len);
		}
		return 0;
	}
	if (ret == -EAGAIN || ret == -FI_EAGAIN) {
		ep->progress(ep);
		return -FI_EAGAIN;
	}
	if (ret < 0 && ret > -FI_ERRNO_OFFSET && ret != -FI_EINVAL &&
	    ret != -FI_EHOSTUNREACH && ret != -FI_ENOMEM)
		ret = gba_xfer_errno_to_fi(ret);
	return ret;
}

/* Common entry of every send verb. */
static ssize_t gba_msg_send(struct fid_ep *ep_fid, const struct iovec *iov,
			    size_t count, fi_addr_t dest, uint64_t tag,
			    uint64_t data, uint64_t flags, void *context,
			    bool tagged)
{
	struct gba_ep *ep = gba_ep_of(ep_fid);
	size_t len;
	int ret;

	if (!ep)
		return -FI_EINVAL;
	if (!ep->enabled)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EOPBADSTATE,
				    "send: endpoint not enabled\n");
	ret = gba_msg_iov_check(iov, count, &len);
	if (ret)
		return ret;
	if ((flags & FI_INJECT) && len > GBA_INJECT_SIZE)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "inject of %zu bytes (limit %d)\n", len,
				    GBA_INJECT_SIZE);
	if (flags & FI_TRIGGER)
		return gba_msg_trigger(ep, false, tagged, iov, count, len,
				       dest, tag, 0, data, flags, context);
	return gba_msg_send_do(ep, iov, count, len, dest, tag, data, flags,
			       context, tagged);
}

/*
 * gba_msg_send_submit - send @msg (its tag when @tagged) with @flags,
 * already checked by the caller (deferred work).  Returns as
 * fi_tsendmsg(3).
 */
ssize_t gba_msg_send_submit(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			    uint64_t flags, bool tagged)
{
	return gba_msg_send(ep, msg->msg_iov, msg->iov_count, msg->addr,
			    tagged ? msg->tag : 0, msg->data, flags,
			    msg->context, tagged);
}

static inline uint64_t gba_msg_tx_opflags(struct fid_ep *ep_fid)
{
	return gba_ep_op_flags(ep_fid, true) & GBA_EP_TX_OPFLAGS;
}

/* Check the flags of fi_sendmsg / fi_tsendmsg: 0 or -FI_EBADFLAGS. */
static int gba_msg_tx_flags_check(uint64_t flags)
{
	if (flags & ~GBA_MSG_TX_FLAGS)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EBADFLAGS,
				    "send msg: flags 0x%llx not supported\n",
				    (unsigned long long)(flags &
							 ~GBA_MSG_TX_FLAGS));
	return 0;
}

/*
 * fi_send(3): send @len bytes of @buf to @dest.  Returns 0, -FI_EAGAIN
 * (queue full: progress and retry), -FI_EINVAL, -FI_EOPBADSTATE,
 * -FI_EHOSTUNREACH.
 */
static ssize_t gba_send(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest, void *context)
{
	struct iovec iov = {(void *)buf, len};

	return gba_msg_send(ep, &iov, 1, dest, 0, 0, gba_msg_tx_opflags(ep),
			    context, false);
}

static ssize_t gba_sendv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest,
			 void *context)
{
	return gba_msg_send(ep, iov, count, dest, 0, 0, gba_msg_tx_opflags(ep),
			    context, false);
}

static ssize_t gba_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags)
{
	int ret;

	if (!msg)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "fi_sendmsg: NULL msg\n");
	ret = gba_msg_tx_flags_check(flags);
	if (ret)
		return ret;
	return gba_msg_send(ep, msg->msg_iov, msg->iov_count, msg->addr, 0,
			    msg->data, flags, msg->context, false);
}

/* fi_inject(3): at most GBA_INJECT_SIZE bytes, no completion entry. */
static ssize_t gba_inject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest)
{
	struct iovec iov = {(void *)buf, len};

	return gba_msg_send(ep, &iov, 1, dest, 0, 0,
			    FI_INJECT | GBA_FLAG_NO_CQ, NULL, false);
}

/* fi_senddata(3): fi_send with remote CQ data @data. */
static ssize_t gba_senddata(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest,
			    void *context)
{
	struct iovec iov = {(void *)buf, len};

	return gba_msg_send(ep, &iov, 1, dest, 0, data,
			    gba_msg_tx_opflags(ep) | FI_REMOTE_CQ_DATA,
			    context, false);
}

static ssize_t gba_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest)
{
	struct iovec iov = {(void *)buf, len};

	return gba_msg_send(ep, &iov, 1, dest, 0, data,
			    FI_INJECT | FI_REMOTE_CQ_DATA | GBA_FLAG_NO_CQ,
			    NULL, false);
}

static ssize_t gba_tsend(struct fid_ep *ep, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, uint64_t tag,
			 void *context)
{
	struct iovec iov = {(void *)buf, len};

	return gba_msg_send(ep, &iov, 1, dest, tag, 0, gba_msg_tx_opflags(ep),
			    context, true);
}

static ssize_t gba_tsendv(struct fid_ep *ep, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest,
			  uint64_t tag, void *context)
{
	return gba_msg_send(ep, iov, count, dest, tag, 0,
			    gba_msg_tx_opflags(ep), context, true);
}

static ssize_t gba_tsendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			    uint64_t flags)
{
	int ret;

	if (!msg)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "fi_tsendmsg: NULL msg\n");
	ret = gba_msg_tx_flags_check(flags);
	if (ret)
		return ret;
	return gba_msg_send(ep, msg->msg_iov, msg->iov_count, msg->addr,
			    msg->tag, msg->data, flags, msg->context, true);
}

static ssize_t gba_tinject(struct fid_ep *ep, const void *buf, size_t len,
			   fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = {(void *)buf, len};

	return gba_msg_send(ep, &iov, 1, dest, tag, 0,
			    FI_INJECT | GBA_FLAG_NO_CQ, NULL, true);
}

static ssize_t gba_tsenddata(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, uint64_t data, fi_addr_t dest,
			     uint64_t tag, void *context)
{
	struct iovec iov = {(void *)buf, len};

	return gba_msg_send(ep, &iov, 1, dest, tag, data,
			    gba_msg_tx_opflags(ep) | FI_REMOTE_CQ_DATA,
			    context, true);
}

static ssize_t gba_tinjectdata(struct fid_ep *ep, const void *buf, size_t len,
			       uint64_t data, fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = {(void *)buf, len};

	return gba_msg_send(ep, &iov, 1, dest, tag, data,
			    FI_INJECT | FI_REMOTE_CQ_DATA | GBA_FLAG_NO_CQ,
			    NULL, true);
}

/* ---- Cancel ------------------------------------------------------------------ */

ssize_t gba_msg_cancel(struct gba_ep *ep, void *context)
{
	struct gba_rx_entry *re;
	ssize_t ret = -FI_ENOENT;
	bool token;
	int i;

	if (!ep->rx_entries)
		return -FI_ENOENT;
	token = gba_ep_data_lock(ep);
	for (i = 0; i < 2 && ret; i++) {
		TAILQ_FOREACH(re, &ep->posted[i], entry) {
			if (re->context != context)
				continue;
			TAILQ_REMOVE(&ep->posted[i], re, entry);
			if (ep->rx_cq)
				gba_cq_write_error(ep->rx_cq, context,
						   re->flags &
							   (FI_RECV | FI_MSG |
							    FI_TAGGED |
							    FI_MULTI_RECV),
						   FI_ECANCELED, 0, 0, 0);
			gba_rx_entry_put(ep, re);
			ret = 0;
			break;
		}
	}
	gba_ep_data_unlock(ep, token);
	return ret;
}

struct fi_ops_msg gba_ep_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = gba_recv,
	.recvv = gba_recvv,
	.recvmsg = gba_recvmsg,
	.send = gba_send,
	.sendv = gba_sendv,
	.sendmsg = gba_sendmsg,
	.inject = gba_inject,
	.senddata = gba_senddata,
	.injectdata = gba_injectdata,
};

struct fi_ops_tagged gba_ep_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = gba_trecv,
	.recvv = gba_trecvv,
	.recvmsg = gba_trecvmsg,
	.send = gba_tsend,
	.sendv = gba_tsendv,
	.sendmsg = gba_tsendmsg,
	.inject = gba_tinject,
	.senddata = gba_tsenddata,
	.injectdata = gba_tinjectdata,
};
