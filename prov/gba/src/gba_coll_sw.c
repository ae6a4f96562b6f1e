/*
 * libfabric "gba" provider: collectives in software over the fabric
 * engine (fi_collective(3)).
 *
 * Every joined collective (struct gba_mc, gba_coll.c) has a software
 * side (struct gba_swc) that runs fi_broadcast, fi_allreduce,
 * fi_allgather, fi_alltoall, fi_reduce, fi_reduce_scatter, fi_scatter,
 * fi_gather, and fi_barrier when the device cannot take the collective
 * (no device, FI_GBA_OFFLOAD=0, all 32 groups in use, more than 708
 * members).  Members post collectives on a collective in the same order
 * (fi_collective(3)), so the n-th operation of each member is the same
 * operation: its sequence number identifies it on the wire.
 *
 * Algorithm (correctness over speed; the device does the fast barrier):
 * a root (the root_addr member, else member 0) collects the members'
 * contributions (phase 0), combines them in member order, so that
 * floating-point reductions give the same result on every run, and sends
 * each member its part (phase 1).  fi_alltoall sends each block directly
 * to its member.  Messages are engine messages flagged GBA_WIRE_COLL
 * (they never meet the application's receives): data = the collective's
 * join key, tag = sequence << 32 | phase << 31 | sender's member index.
 * A message that arrives before its operation is posted, or before this
 * member joined, is kept until then.
 *
 * Everything runs under the endpoint lock from the verbs and from the
 * endpoint's progress (gba_ep_progress); completions go to the tx CQ
 * (FI_COLLECTIVE) and the FI_SEND counter.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_ep.h"


struct gba_swc_op {
	TAILQ_ENTRY(gba_swc_op) entry;
	struct gba_swc *swc;
	struct gba_swc_args a;
	uint64_t seq;
	size_t esize;	  /* element bytes */
	size_t block;	  /* bytes a member contributes or receives */
	uint8_t *acc;	  /* root: the members' contributions */
	int phase;	  /* 0: gather to root, 1: root's results out */
	size_t need[2];	  /* messages to receive per phase */
	size_t got[2];
	size_t send_next; /* next member to send to in this phase */
	size_t sends;	  /* sends in flight (large messages) */
	int err;	  /* positive FI_E* */
	bool cut_off;	  /* a member could not be reached: no waiting */
};

struct gba_swc {
	LIST_ENTRY(gba_swc) entry; /* ep->swcs */
	struct gba_ep *ep;
	uint64_t key;
	fi_addr_t *members;
	size_t count;
	uint32_t me;
	uint64_t next_seq;
	TAILQ_HEAD(, gba_swc_op) ops;	     /* posted, in order */
	struct gba_swc_msg_list early; /* arrived before their op */
};

#define GBA_SWC_TAG(seq, phase, idx)                                           \
	(((uint64_t)(seq) << 32) | ((uint64_t)(phase) << 31) | (idx))
#define GBA_SWC_TAG_SEQ(tag) ((uint32_t)((tag) >> 32))
#define GBA_SWC_TAG_PHASE(tag) ((int)(((tag) >> 31) & 1))
#define GBA_SWC_TAG_IDX(tag) ((uint32_t)((tag) & 0x7fffffffu))

/* Collectives that gather to the root, and that send results from it. */
static bool gba_swc_gathers(enum fi_collective_op c)
{
	return c == FI_BARRIER || c == FI_REDUCE || c == FI_ALLREDUCE ||
	       c == FI_GATHER || c == FI_ALLGATHER || c == FI_REDUCE_SCATTER;
}

static bool gba_swc_scatters(enum fi_collective_op c)
{
	return c == FI_BARRIER || c == FI_BROADCAST || c == FI_ALLREDUCE ||
	       c == FI_ALLGATHER || c == FI_SCATTER ||
	       c == FI_REDUCE_SCATTER;
}

static bool gba_swc_reduces(enum fi_collective_op c)
{
	return c == FI_REDUCE || c == FI_ALLREDUCE || c == FI_REDUCE_SCATTER;
}

int gba_swc_open(struct gba_ep *ep, uint64_t key, struct gba_av_set *set,
		 uint32_t me, struct gba_swc **swcp)
{
	struct gba_swc_msg *m, *tmp;
	struct gba_swc *swc;
	bool token;

	swc = calloc(1, sizeof(*swc));
	if (!swc)
		return -FI_ENOMEM;
	swc->members = calloc(set->count, sizeof(*swc->members));
	if (!swc->members) {
		free(swc);
		return -FI_ENOMEM;
	}
	memcpy(swc->members, set->members, set->count * sizeof(fi_addr_t));
	swc->count = set->count;
	swc->me = me;
	swc->key = key;
	swc->ep = ep;
	TAILQ_INIT(&swc->ops);
	TAILQ_INIT(&swc->early);

	token = gba_ep_data_lock(ep);
	LIST_INSERT_HEAD(&ep->swcs, swc, entry);
	/* adopt what members that joined before us sent already */
	for (m = TAILQ_FIRST(&ep->swc_orphans); m; m = tmp) {
		tmp = TAILQ_NEXT(m, entry);
		if (m->key != key)
			continue;
		TAILQ_REMOVE(&ep->swc_orphans, m, entry);
		TAILQ_INSERT_TAIL(&swc->early, m, entry);
	}
	gba_ep_data_unlock(ep, token);
	*swcp = swc;
	return 0;
}

/*
 * ep->swc_ops changes only under the endpoint lock: a plain
 * read-modify-write; progress reads it without the lock (a hint).
 */
static inline void gba_swc_ops_add(struct gba_ep *ep, int n)
{
	atomic_store_explicit(
		&ep->swc_ops,
		atomic_load_explicit(&ep->swc_ops, memory_order_relaxed) + n,
		memory_order_relaxed);
}

bool gba_swc_busy(struct gba_swc *swc)
{
	return !TAILQ_EMPTY(&swc->ops);
}

static void gba_swc_msg_free(struct gba_ep *ep, struct gba_swc_msg *m)
{
	gba_eng_rx_done(ep->eng, m->rx, 0);
	free(m);
}

void gba_swc_close(struct gba_swc *swc)
{
	struct gba_ep *ep = swc->ep;
	struct gba_swc_msg *m;
	struct gba_swc_op *op;
	bool token;

	token = gba_ep_data_lock(ep);
	LIST_REMOVE(swc, entry);
	while ((op = TAILQ_FIRST(&swc->ops))) {
		TAILQ_REMOVE(&swc->ops, op, entry);
		gba_swc_ops_add(ep, -1);
		free(op->acc);
		free(op);
	}
	while ((m = TAILQ_FIRST(&swc->early))) {
		TAILQ_REMOVE(&swc->early, m, entry);
		gba_swc_msg_free(ep, m);
	}
	gba_ep_data_unlock(ep, token);
	free(swc->members);
	free(swc);
}

void gba_swc_fini(struct gba_ep *ep)
{
	struct gba_swc_msg *m;

	while ((m = TAILQ_FIRST(&ep->swc_orphans))) {
		TAILQ_REMOVE(&ep->swc_orphans, m, entry);
		gba_swc_msg_free(ep, m);
	}
}

/* ---- Sending ---------------------------------------------------------------- */

/* Bytes @op sends to member @to in its current phase, at *@buf. */
static size_t gba_swc_payload(struct gba_swc_op *op, size_t to,
			      const void **buf)
{
	const struct gba_swc_args *a = &op->a;
	size_t n = op->swc->count;

	if (op->err && op->phase == 1) {
		/*
		 * Failed (members disagree on the call): an empty message
		 * still goes out, so that the members waiting for it fail
		 * too (a length they do not expect) instead of waiting for
		 * ever.
		 */
		*buf = NULL;
		return 0;
	}
	if (op->phase == 0) { /* contribution to the root */
		*buf = a->buf;
		switch (a->coll) {
		case FI_BARRIER:
			return 0;
		case FI_REDUCE_SCATTER:
			return op->block * n;
		default:
			return op->block;
		}
	}
	switch (a->coll) {
	case FI_BARRIER:
		*buf = NULL;
		return 0;
	case FI_BROADCAST:
		*buf = a->buf;
		return op->block;
	case FI_ALLREDUCE:
		*buf = a->result;
		return op->block;
	case FI_ALLGATHER:
		*buf = a->result;
		return op->block * n;
	case FI_SCATTER:
		*buf = (const uint8_t *)a->buf + to * op->block;
		return op->block;
	case FI_REDUCE_SCATTER:
	case FI_ALLTOALL:
		*buf = (const uint8_t *)(a->coll == FI_ALLTOALL ? a->buf
								: op->acc) +
		       to * op->block;
		return op->block;
	default:
		*buf = NULL;
		return 0;
	}
}

/* Members @op sends to in its current phase: [first, last), skipping me. */
static void gba_swc_targets(struct gba_swc_op *op, size_t *first, size_t *last)
{
	struct gba_swc *swc = op->swc;
	bool root = swc->me == op->a.root;

	*first = *last = 0;
	if (op->phase == 0) {
		if (gba_swc_gathers(op->a.coll) && !root) {
			*first = op->a.root;
			*last = op->a.root + 1;
		}
	} else if (op->a.coll == FI_ALLTOALL ||
		   (root && gba_swc_scatters(op->a.coll))) {
		*last = swc->count;
	}
}

/*
 * Push the sends of @op's current phase as far as the peers' queues
 * allow.  A member that cannot be sent to fails the operation (op->err)
 * and is skipped: the others still get their message.  One that cannot
 * be reached at all (op->cut_off: gone, or a local limit such as no file
 * descriptor to map its queue) may be unable to reach this process either,
 * so the operation does not wait for messages (gba_swc_advance).
 */
static void gba_swc_push(struct gba_swc_op *op)
{
	struct gba_swc *swc = op->swc;
	struct gba_ep *ep = swc->ep;
	struct gba_eng_peer *peer;
	struct gba_tx_req *req;
	size_t first, last, len;
	struct iovec iov;
	const void *buf;
	int ret;

	gba_swc_targets(op, &first, &last);
	if (op->send_next < first)
		op->send_next = first;
	for (; op->send_next < last; op->send_next++) {
		if (op->send_next == swc->me)
			continue;
		ret = gba_peer_get(ep, swc->members[op->send_next], &peer);
		if (ret) {
			if (!op->err)
				op->err = -ret;
			op->cut_off = true;
			continue;
		}
		len = gba_swc_payload(op, op->send_next, &buf);
		iov.iov_base = (void *)buf;
		iov.iov_len = len;
		req = NULL;
		if (len > GBA_INJECT_SIZE) {
			req = gba_tx_req_get(ep);
			if (!req)
				return; /* retried by progress */
			memset(req, 0, sizeof(*req));
			req->coll_op = op;
		}
		ret = gba_eng_send(ep->eng, peer, &iov, 1,
				   GBA_SWC_TAG(op->seq, op->phase, swc->me),
				   swc->key, GBA_WIRE_COLL, (uintptr_t)req);
		if (ret == -EAGAIN) {
			if (req)
				gba_tx_req_put(ep, req);
			return;
		}
		if (ret < 0) {
			if (req)
				gba_tx_req_put(ep, req);
			if (!op->err)
				op->err = -gba_xfer_errno_to_fi(ret);
			continue;
		}
		if (ret == 0)
			op->sends++;
		else if (req) /* copied into the peer's queue */
			gba_tx_req_put(ep, req);
	}
}

/* ---- Receiving --------------------------------------------------------------- */

/* Where a phase-@phase message from member @from lands, and its size. */
static size_t gba_swc_dest(struct gba_swc_op *op, int phase, size_t from,
			   void **dest)
{
	const struct gba_swc_args *a = &op->a;
	size_t n = op->swc->count;

	if (phase == 0) {
		switch (a->coll) {
		case FI_BARRIER:
			*dest = NULL;
			return 0;
		case FI_GATHER:
		case FI_ALLGATHER:
			*dest = (uint8_t *)a->result + from * op->block;
			return op->block;
		case FI_REDUCE_SCATTER:
			*dest = op->acc + from * op->block * n;
			return op->block * n;
		default: /* reductions */
			*dest = op->acc + from * op->block;
			return op->block;
		}
	}
	switch (a->coll) {
	case FI_BARRIER:
		*dest = NULL;
		return 0;
	case FI_BROADCAST:
		*dest = a->buf;
		return op->block;
	case FI_ALLGATHER:
		*dest = a->result;
		return op->block * n;
	case FI_ALLTOALL:
		*dest = (uint8_t *)a->result + from * op->block;
		return op->block;
	default: /* allreduce, scatter, reduce_scatter */
		*dest = a->result;
		return op->block;
	}
}

/* Consume message @rx (tag checked) for @op; frees @rx. */
static void gba_swc_take(struct gba_swc_op *op, struct gba_eng_rx *rx)
{
	int phase = GBA_SWC_TAG_PHASE(rx->tag);
	size_t from = GBA_SWC_TAG_IDX(rx->tag);
	struct iovec iov;
	void *dest;
	ssize_t got;

	iov.iov_len = gba_swc_dest(op, phase, from, &dest);
	iov.iov_base = dest;
	if (from >= op->swc->count || rx->len != iov.iov_len) {
		FI_WARN(&gba_prov, FI_LOG_EP_DATA,
			"collective %llu: member %zu sent %llu bytes, %zu "
			"expected (members disagree on the call)\n",
			(unsigned long long)op->seq, from,
			(unsigned long long)rx->len, iov.iov_len);
		op->err = FI_EINVAL;
	} else if (iov.iov_len) {
		got = gba_eng_rx_copy(op->swc->ep->eng, rx, &iov, 1, 0);
		if (got < 0)
			op->err = -gba_xfer_errno_to_fi((int)got);
	}
	gba_eng_rx_done(op->swc->ep->eng, rx, 0);
	op->got[phase]++;
}

/* The posted operation with sequence @seq (low 32 bits), or NULL. */
static struct gba_swc_op *gba_swc_find(struct gba_swc *swc, uint32_t seq)
{
	struct gba_swc_op *op;

	TAILQ_FOREACH(op, &swc->ops, entry)
		if ((uint32_t)op->seq == seq)
			return op;
	return NULL;
}

/* Keep @rx (held copy) on @list for later. */
static void gba_swc_keep(struct gba_ep *ep, struct gba_eng_rx *rx,
			 uint64_t key, struct gba_swc_msg_list *list)
{
	struct gba_swc_msg *m = malloc(sizeof(*m));

	if (m)
		m->rx = gba_eng_rx_hold(rx);
	if (!m || !m->rx) {
		FI_WARN(&gba_prov, FI_LOG_EP_DATA,
			"out of memory for an early collective message: "
			"dropped (the collective will not complete)\n");
		free(m);
		gba_eng_rx_done(ep->eng, rx, -ENOMEM);
		return;
	}
	m->key = key;
	TAILQ_INSERT_TAIL(list, m, entry);
}

static void gba_swc_advance(struct gba_swc_op *op);

void gba_swc_arrived(struct gba_ep *ep, struct gba_eng_rx *rx)
{
	struct gba_swc_op *op;
	struct gba_swc *swc;

	LIST_FOREACH(swc, &ep->swcs, entry)
		if (swc->key == rx->data)
			break;
	if (!swc) {
		gba_swc_keep(ep, rx, rx->data, &ep->swc_orphans);
		return;
	}
	op = gba_swc_find(swc, GBA_SWC_TAG_SEQ(rx->tag));
	if (!op) {
		gba_swc_keep(ep, rx, rx->data, &swc->early);
		return;
	}
	gba_swc_take(op, rx);
	gba_swc_advance(op);
}

/* ---- Operation life ---------------------------------------------------------- */

/* Combine the root's contributions in member order into @dst. */
static int gba_swc_reduce(struct gba_swc_op *op, void *dst, size_t bytes)
{
	size_t i, n = op->swc->count, elems = bytes / op->esize;
	int ret;

	memcpy(dst, op->acc, bytes);
	for (i = 1; i < n; i++) {
		ret = gba_atomic_exec(NULL, op->a.op, op->a.datatype, dst,
				      op->acc + i * bytes, NULL, NULL, elems);
		if (ret)
			return FI_EINVAL;
	}
	return 0;
}

/* Root, end of phase 0: combine.  Returns 0 or a positive FI_E*. */
static int gba_swc_combine(struct gba_swc_op *op)
{
	const struct gba_swc_args *a = &op->a;
	size_t n = op->swc->count, me = op->swc->me;
	uint8_t *tmp;
	int ret;

	switch (a->coll) {
	case FI_GATHER:
	case FI_ALLGATHER:
		memcpy((uint8_t *)a->result + me * op->block, a->buf,
		       op->block);
		return 0;
	case FI_REDUCE:
	case FI_ALLREDUCE:
		memcpy(op->acc + me * op->block, a->buf, op->block);
		return gba_swc_reduce(op, a->result, op->block);
	case FI_REDUCE_SCATTER:
		memcpy(op->acc + me * op->block * n, a->buf, op->block * n);
		tmp = malloc(op->block * n);
		if (!tmp)
			return FI_ENOMEM;
		ret = gba_swc_reduce(op, tmp, op->block * n);
		memcpy(op->acc, tmp, op->block * n); /* slices for phase 1 */
		free(tmp);
		return ret;
	default:
		return 0;
	}
}

/* Phase 1 starts: what a member keeps of its own data. */
static void gba_swc_keep_own(struct gba_swc_op *op)
{
	const struct gba_swc_args *a = &op->a;
	size_t me = op->swc->me;
	bool root = me == a->root;

	if (a->coll == FI_ALLTOALL)
		memcpy((uint8_t *)a->result + me * op->block,
		       (const uint8_t *)a->buf + me * op->block, op->block);
	else if (root && a->coll == FI_SCATTER)
		memcpy(a->result, (const uint8_t *)a->buf + me * op->block,
		       op->block);
	else if (root && a->coll == FI_REDUCE_SCATTER)
		memcpy(a->result, op->acc + me * op->block, op->block);
}

static void gba_swc_complete(struct gba_swc_op *op)
{
	struct gba_swc *swc = op->swc;
	struct gba_ep *ep = swc->ep;

	TAILQ_REMOVE(&swc->ops, op, entry);
	gba_swc_ops_add(ep, -1);
	if (op->err)
		gba_ep_tx_error(ep, GBA_CNTR_SEND, op->a.flags | FI_COLLECTIVE,
				op->a.context, op->err, 0, NULL, 0);
	else
		gba_ep_tx_complete(ep, GBA_CNTR_SEND,
				   op->a.flags | FI_COLLECTIVE, op->a.context,
				   0);
	free(op->acc);
	free(op);
}

/* Run @op as far as its messages allow. */
static void gba_swc_advance(struct gba_swc_op *op)
{
	bool root = op->swc->me == op->a.root;
	size_t first, last;
	int ret;

	for (;;) {
		gba_swc_push(op);
		/*
		 * Every send of the phase must be out before the next: a
		 * member's contribution the root's full queue refused
		 * (-EAGAIN, or no request for a large one) is retried by
		 * progress, not dropped when phase 1 resets send_next; and
		 * a failed operation still sends (empty) messages to the
		 * members that wait for them.
		 */
		gba_swc_targets(op, &first, &last);
		if (op->send_next < last)
			return; /* queues full: progress retries */
		if (op->cut_off)
			break; /* failed: complete without the messages */
		if (op->got[op->phase] < op->need[op->phase])
			return;
		if (op->phase == 0) {
			if (root && !op->err && gba_swc_gathers(op->a.coll)) {
				ret = gba_swc_combine(op);
				if (ret)
					op->err = ret;
			}
			op->phase = 1;
			op->send_next = 0;
			gba_swc_keep_own(op);
			continue;
		}
		break;
	}
	if (op->sends)
		return;
	gba_swc_complete(op);
}

void gba_swc_send_done(struct gba_ep *ep, struct gba_swc_op *op, int status)
{
	(void)ep;
	op->sends--;
	if (status && !op->err)
		op->err = -gba_xfer_errno_to_fi(status);
	gba_swc_advance(op);
}

void gba_swc_progress(struct gba_ep *ep)
{
	struct gba_swc_op *op, *next;
	struct gba_swc *swc;

	LIST_FOREACH(swc, &ep->swcs, entry)
		for (op = TAILQ_FIRST(&swc->ops); op; op = next) {
			next = TAILQ_NEXT(op, entry);
			gba_swc_advance(op);
		}
}

/* Member index of @addr in @swc, or -1. */
static ssize_t gba_swc_index(struct gba_swc *swc, fi_addr_t addr)
{
	size_t i;

	for (i = 0; i < swc->count; i++)
		if (swc->members[i] == addr)
			return (ssize_t)i;
	return -1;
}

ssize_t gba_swc_post(struct gba_swc *swc, const struct gba_swc_args *args)
{
	struct gba_ep *ep = swc->ep;
	struct gba_swc_msg *m, *tmp;
	struct gba_swc_op *op;
	size_t n = swc->count;
	ssize_t root = 0;
	bool token;

	if (args->root_addr != FI_ADDR_NOTAVAIL) {
		root = gba_swc_index(swc, args->root_addr);
		if (root < 0)
			return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
					    "collective: root fi_addr %llu is "
					    "not a member\n",
					    (unsigned long long)args->root_addr);
	}
	/*
	 * The buffers only the root uses (gba_coll_post lets them be NULL
	 * elsewhere): fi_reduce's and fi_gather's result, fi_scatter's buf.
	 */
	if (swc->me == (uint32_t)root &&
	    (((args->coll == FI_REDUCE || args->coll == FI_GATHER) &&
	      !args->result) ||
	     (args->coll == FI_SCATTER && !args->buf)))
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "collective: NULL %s at the root\n",
				    args->coll == FI_SCATTER ? "buf"
							     : "result");
	if ((args->coll == FI_ALLTOALL || args->coll == FI_REDUCE_SCATTER) &&
	    args->count % n)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "collective: count %zu is not a multiple "
				    "of the %zu members\n",
				    args->count, n);
	if (!gba_ep_tx_has_space(ep))
		return -FI_EAGAIN;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -FI_ENOMEM;
	op->swc = swc;
	op->a = *args;
	op->a.root = (uint32_t)root;
	op->esize = args->coll == FI_BARRIER ? 1 : gba_atomic_dt_size(args->datatype);
	op->block = args->coll == FI_BARRIER ? 0 : args->count * op->esize;
	if (args->coll == FI_ALLTOALL || args->coll == FI_REDUCE_SCATTER)
		op->block /= n;
	if (swc->me == op->a.root && gba_swc_reduces(args->coll)) {
		op->acc = malloc(n * op->block *
				 (args->coll == FI_REDUCE_SCATTER ? n : 1));
		if (!op->acc) {
			free(op);
			return -FI_ENOMEM;
		}
	}
	if (gba_swc_gathers(args->coll) && swc->me == op->a.root)
		op->need[0] = n - 1;
	if (args->coll == FI_ALLTOALL)
		op->need[1] = n - 1;
	else if (gba_swc_scatters(args->coll) && swc->me != op->a.root)
		op->need[1] = 1;

	token = gba_ep_data_lock(ep);
	op->seq = swc->next_seq++;
	TAILQ_INSERT_TAIL(&swc->ops, op, entry);
	gba_swc_ops_add(ep, 1);
	for (m = TAILQ_FIRST(&swc->early); m; m = tmp) {
		tmp = TAILQ_NEXT(m, entry);
		if (GBA_SWC_TAG_SEQ(m->rx->tag) != (uint32_t)op->seq)
			continue;
		TAILQ_REMOVE(&swc->early, m, entry);
		gba_swc_take(op, m->rx);
		free(m);
	}
	gba_swc_advance(op);
	gba_ep_data_unlock(ep, token);
	return 0;
}
