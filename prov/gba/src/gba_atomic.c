/*
 * libfabric "gba" provider: atomics on the direct path (fi_atomic(3)).
 *
 * Like RMA (gba_rma.c), atomics aimed at the endpoint's own address or at
 * another endpoint of this process are executed by the CPU and complete
 * before the call returns.  Each element is updated with one
 * compare-and-swap loop (or a single atomic load / exchange) on its 1, 2,
 * 4 or 8 bytes, so it is atomic with respect to every other atomic of the
 * provider, in any thread; there is no lock.
 *
 * Supported (fi_query_atomic reports exactly this, and the verbs accept
 * nothing else):
 *   integers FI_INT8..FI_UINT64: every operation;
 *   FI_FLOAT, FI_DOUBLE: all but the bitwise FI_BOR, FI_BAND, FI_BXOR and
 *   FI_MSWAP;
 *   complex and long double types: none (-FI_EOPNOTSUPP).
 * Basic atomics (fi_atomic): FI_MIN..FI_BXOR and FI_ATOMIC_WRITE; fetch
 * atomics (fi_fetch_atomic): those plus FI_ATOMIC_READ; compare atomics
 * (fi_compare_atomic): FI_CSWAP..FI_MSWAP.  At most GBA_ATOMIC_MAX_BYTES
 * of elements per operation.
 *
 * Access the target's registration must grant (fi_mr(3)): FI_REMOTE_WRITE
 * for basic atomics, FI_REMOTE_READ | FI_REMOTE_WRITE for fetch and
 * compare atomics, FI_REMOTE_READ for FI_ATOMIC_READ; otherwise the
 * operation completes in error (FI_EACCES).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_ep.h"

/* Bytes of elements one atomic operation may carry (attr->count). */
/* (operands and compare values travel inline in one engine slot) */
#define GBA_ATOMIC_MAX_BYTES 2000

/* Flags the *msg atomic verbs accept. */
#define GBA_ATOMIC_MSG_FLAGS                                                   \
	(FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_TRIGGER |          \
	 FI_FENCE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE |              \
	 FI_INJECT_COMPLETE | FI_COMMIT_COMPLETE | FI_MORE)

/* Walks the elements of an fi_ioc array. */
struct gba_ioc_iter {
	const struct fi_ioc *ioc;
	size_t count, i, j;
	size_t size;
};

static void *gba_ioc_next(struct gba_ioc_iter *it)
{
	while (it->i < it->count && it->j >= it->ioc[it->i].count) {
		it->i++;
		it->j = 0;
	}
	if (it->i >= it->count)
		return NULL;
	return (uint8_t *)it->ioc[it->i].addr + it->size * it->j++;
}

/*
 * Elements of @ioc[@count]; -1 if malformed (more than GBA_IOV_LIMIT
 * entries, a NULL entry with a count) or if an entry has more elements
 * than any operation may carry (so that the sum cannot wrap around).
 */
static ssize_t gba_ioc_elems(const struct fi_ioc *ioc, size_t count)
{
	size_t i, n = 0;

	if (count > GBA_IOV_LIMIT || (count && !ioc))
		return -1;
	for (i = 0; i < count; i++) {
		if ((!ioc[i].addr && ioc[i].count) ||
		    ioc[i].count > GBA_ATOMIC_MAX_BYTES)
			return -1;
		n += ioc[i].count;
	}
	return (ssize_t)n;
}

/* An atomic operation, as the verbs describe it. */
struct gba_atomic_op {
	enum gba_atomic_kind kind;
	const struct fi_ioc *iov;
	size_t iov_count;
	const struct fi_ioc *cmp;
	size_t cmp_count;
	const struct fi_ioc *res;
	size_t res_count;
	fi_addr_t dest;
	struct fi_rma_ioc rma;
	enum fi_datatype dt;
	enum fi_op op;
	uint64_t flags;
	void *context;
	uint64_t data;
};

/* Check the shape of @a: 0 or -FI_E* (logged); *@elems the count. */
static int gba_atomic_check(const struct gba_atomic_op *a, size_t *elems)
{
	ssize_t n, m;

	if (!gba_atomic_valid(a->dt, a->op, a->kind))
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EOPNOTSUPP,
				    "atomic %s on %s not supported (see "
				    "fi_query_atomic)\n",
				    fi_tostr(&a->op, FI_TYPE_ATOMIC_OP),
				    fi_tostr(&a->dt, FI_TYPE_ATOMIC_TYPE));
	n = gba_ioc_elems(a->iov, a->iov_count);
	if (n < 0 || (a->op != FI_ATOMIC_READ && n != (ssize_t)a->rma.count))
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "atomic: bad operand ioc (%zd elements, "
				    "target %zu)\n",
				    n, a->rma.count);
	if (!a->rma.count ||
	    a->rma.count > GBA_ATOMIC_MAX_BYTES / gba_atomic_dt_size(a->dt))
		return GBA_WARN_RET(
			FI_LOG_EP_DATA, -FI_EINVAL,
			"atomic: %zu elements (1..%zu)\n", a->rma.count,
			GBA_ATOMIC_MAX_BYTES / gba_atomic_dt_size(a->dt));
	if (a->kind != GBA_ATOMIC_WRITE) {
		m = gba_ioc_elems(a->res, a->res_count);
		if (m != (ssize_t)a->rma.count)
			return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
					    "atomic: %zd result elements for "
					    "%zu\n",
					    m, a->rma.count);
	}
	if (a->kind == GBA_ATOMIC_CMP) {
		m = gba_ioc_elems(a->cmp, a->cmp_count);
		if (m != (ssize_t)a->rma.count)
			return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
					    "atomic: %zd compare elements for "
					    "%zu\n",
					    m, a->rma.count);
	}
	*elems = a->rma.count;
	return 0;
}

/* Completion flags of @a: its op flags, FI_ATOMIC, FI_WRITE or FI_READ. */
static inline uint64_t gba_atomic_cflags(const struct gba_atomic_op *a)
{
	return a->flags | FI_ATOMIC |
	       (a->kind == GBA_ATOMIC_WRITE ? FI_WRITE : FI_READ);
}

/*
 * Remote access @a needs (fi_mr(3), and libfabric's util providers):
 * FI_REMOTE_WRITE to update the target, FI_REMOTE_READ as well to return
 * its previous value; FI_ATOMIC_READ only reads.
 */
static inline uint64_t gba_atomic_access(const struct gba_atomic_op *a)
{
	if (a->op == FI_ATOMIC_READ)
		return FI_REMOTE_READ;
	if (a->kind == GBA_ATOMIC_WRITE)
		return FI_REMOTE_WRITE;
	return FI_REMOTE_READ | FI_REMOTE_WRITE;
}

/* Gather the elements of @ioc[@count] (@size bytes each) into @dst. */
static void gba_ioc_gather(uint8_t *dst, const struct fi_ioc *ioc,
			   size_t count, size_t size)
{
	size_t i, n;

	for (i = 0; i < count; i++) {
		n = ioc[i].count * size;
		if (n)
			memcpy(dst, ioc[i].addr, n);
		dst += n;
	}
}

/*
 * Start atomic @a towards another process through the engine: the
 * target executes it (gba_atomic_exec) and answers with the old values.
 * Returns 0 or a negative -FI_E* (nothing started).
 */
static ssize_t gba_atomic_peer(struct gba_ep *ep, const struct gba_atomic_op *a,
			       size_t elems)
{
	uint8_t operand[GBA_ATOMIC_MAX_BYTES], compare[GBA_ATOMIC_MAX_BYTES];
	uint32_t wire = a->flags & FI_REMOTE_CQ_DATA ? GBA_WIRE_CQ_DATA : 0;
	size_t size = gba_atomic_dt_size(a->dt), bytes = elems * size;
	bool fetch = a->kind != GBA_ATOMIC_WRITE;
	struct gba_eng_peer *peer;
	struct gba_tx_req *req;
	void *result = NULL;
	bool token;
	int ret;

	if (a->op != FI_ATOMIC_READ)
		gba_ioc_gather(operand, a->iov, a->iov_count, size);
	else
		memset(operand, 0, bytes);
	if (a->kind == GBA_ATOMIC_CMP)
		gba_ioc_gather(compare, a->cmp, a->cmp_count, size);
	token = gba_ep_data_lock(ep);
	ret = gba_peer_get(ep, a->dest, &peer);
	if (ret)
		goto out;
	req = gba_tx_req_get(ep);
	if (!req) {
		ret = -FI_EAGAIN;
		goto out;
	}
	req->context = a->context;
	req->flags = gba_atomic_cflags(a);
	req->len = 0;
	req->slot = fetch ? GBA_CNTR_READ : GBA_CNTR_WRITE;
	if (fetch && a->res_count == 1) {
		result = a->res[0].addr;
	} else if (fetch) {
		req->bounce = malloc(bytes);
		if (!req->bounce) {
			gba_tx_req_put(ep, req);
			ret = -FI_ENOMEM;
			goto out;
		}
		memcpy(req->res, a->res, a->res_count * sizeof(*a->res));
		req->res_count = a->res_count;
		req->elem_size = size;
		result = req->bounce;
	}
	ret = gba_eng_atomic(ep->eng, peer, a->op, a->dt, size, elems, operand,
			     a->kind == GBA_ATOMIC_CMP ? compare : NULL, result,
			     a->rma.addr, a->rma.key, wire, a->data,
			     (uintptr_t)req);
	if (ret) {
		free(req->bounce);
		req->bounce = NULL;
		gba_tx_req_put(ep, req);
		ret = ret == -EAGAIN ? -FI_EAGAIN : gba_xfer_errno_to_fi(ret);
	}
out:
	gba_ep_data_unlock(ep, token);
	if (ret == -FI_EAGAIN)
		ep->progress(ep);
	return ret;
}

/*
 * Perform @a (shape checked by gba_atomic_check) and report it.  Shared
 * by the immediate verbs and triggered operations.  Returns 0 (performed
 * or completed in error) or a negative -FI_E* (nothing performed,
 * nothing reported).
 */
static ssize_t gba_atomic_do(struct gba_ep *ep, const struct gba_atomic_op *a,
			     size_t elems)
{
	struct gba_ioc_iter opnd = {a->iov, a->iov_count, 0, 0, 0};
	struct gba_ioc_iter cmp = {a->cmp, a->cmp_count, 0, 0, 0};
	struct gba_ioc_iter res = {a->res, a->res_count, 0, 0, 0};
	size_t size = gba_atomic_dt_size(a->dt), i;
	struct gba_cntr *mr_cntr = NULL;
	struct gba_ep *peer = NULL;
	bool write = a->kind == GBA_ATOMIC_WRITE;
	uint8_t *target;
	int ret;

	if (!(a->flags & GBA_FLAG_NO_CQ) && !gba_ep_tx_has_space(ep))
		return -FI_EAGAIN;
	ret = gba_rma_resolve(ep, a->dest, a->rma.addr, a->rma.key,
			      elems * size, gba_atomic_access(a), &peer,
			      (void **)&target, &mr_cntr);
	if (ret == -FI_EHOSTUNREACH)
		return gba_atomic_peer(ep, a, elems);
	if (ret < 0)
		return ret;
	if (!ret && ((uintptr_t)target & (size - 1))) {
		FI_INFO(&gba_prov, FI_LOG_EP_DATA,
			"atomic target %p not aligned to %zu bytes\n",
			(void *)target, size);
		ret = FI_EINVAL;
	}
	if (!ret) {
		opnd.size = cmp.size = res.size = size;
		for (i = 0; i < elems; i++, target += size)
			gba_atomic_elem(
				a->dt, a->op, target,
				a->op == FI_ATOMIC_READ ? NULL
							: gba_ioc_next(&opnd),
				a->kind == GBA_ATOMIC_CMP ? gba_ioc_next(&cmp)
							  : NULL,
				write ? NULL : gba_ioc_next(&res));
	}
	gba_rma_report(ep, peer, ret, write ? GBA_CNTR_WRITE : GBA_CNTR_READ,
		       gba_atomic_cflags(a), a->context, 0, a->data, mr_cntr);
	return 0;
}

/* A triggered atomic: copies of the caller's arrays (and inject data). */
struct gba_atomic_trigger {
	struct gba_trigger base; /* first: freed with free() */
	struct gba_atomic_op a;
	size_t elems;
	struct fi_ioc iov[GBA_IOV_LIMIT];
	struct fi_ioc cmp[GBA_IOV_LIMIT];
	struct fi_ioc res[GBA_IOV_LIMIT];
	uint8_t payload[GBA_ATOMIC_MAX_BYTES]; /* FI_INJECT operands */
};

static void gba_atomic_trigger_run(struct gba_trigger *trig)
{
	struct gba_atomic_trigger *at = (struct gba_atomic_trigger *)trig;
	ssize_t ret;

	ret = gba_atomic_do(trig->ep, &at->a, at->elems);
	if (ret)
		gba_ep_tx_error(trig->ep,
				at->a.kind == GBA_ATOMIC_WRITE ? GBA_CNTR_WRITE
							       : GBA_CNTR_READ,
				gba_atomic_cflags(&at->a), at->a.context,
				(int)-ret, 0, NULL, 0);
}

/*
 * Queue @a (@elems elements, shape checked) as a triggered atomic.  What
 * the immediate verb would refuse at once (endpoint not enabled,
 * destination unknown or in another process) is refused now; target-side
 * errors complete in error when it fires.  0 or -FI_E*.
 */
static ssize_t gba_atomic_trigger(struct gba_ep *ep,
				  const struct gba_atomic_op *a, size_t elems)
{
	struct gba_atomic_trigger *at;
	struct gba_ep *peer;
	struct gba_cntr *cntr;
	uint64_t threshold;
	size_t size = gba_atomic_dt_size(a->dt), i;
	int ret;

	ret = gba_trigger_parse(ep, a->context, &cntr, &threshold);
	if (ret)
		return ret;
	ret = gba_ep_target(ep, a->dest, &peer);
	if (ret == -FI_EHOSTUNREACH) /* another process: the engine's */
		ret = gba_peer_check(ep, a->dest);
	if (ret)
		return ret;
	at = calloc(1, sizeof(*at));
	if (!at)
		return -FI_ENOMEM;
	at->base.ep = ep;
	at->base.run = gba_atomic_trigger_run;
	at->base.context = a->context;
	at->a = *a;
	at->a.flags &= ~FI_TRIGGER;
	at->elems = elems;
	at->base.flags = gba_atomic_cflags(&at->a);
	at->base.slot =
		a->kind == GBA_ATOMIC_WRITE ? GBA_CNTR_WRITE : GBA_CNTR_READ;
	/* the arrays not used by this kind of atomic may be NULL */
	if (a->iov_count)
		memcpy(at->iov, a->iov, a->iov_count * sizeof(at->iov[0]));
	if (a->cmp_count)
		memcpy(at->cmp, a->cmp, a->cmp_count * sizeof(at->cmp[0]));
	if (a->res_count)
		memcpy(at->res, a->res, a->res_count * sizeof(at->res[0]));
	at->a.iov = at->iov;
	at->a.cmp = at->cmp;
	at->a.res = at->res;
	if ((a->flags & FI_INJECT) && a->op != FI_ATOMIC_READ) {
		struct gba_ioc_iter it = {a->iov, a->iov_count, 0, 0, size};

		for (i = 0; i < elems; i++)
			memcpy(at->payload + i * size, gba_ioc_next(&it), size);
		at->iov[0].addr = at->payload;
		at->iov[0].count = elems;
		at->a.iov_count = 1;
	}
	return gba_trigger_queue(cntr, threshold, &at->base);
}

/*
 * Entry of every verb (flags already checked): the endpoint, the shape
 * of the operation, then run or queue.
 */
static ssize_t gba_atomic_post(struct fid_ep *ep_fid, struct gba_atomic_op *a)
{
	struct gba_ep *ep = gba_ep_of(ep_fid);
	size_t elems;
	int ret;

	if (!ep)
		return -FI_EINVAL;
	ret = gba_atomic_check(a, &elems);
	if (ret)
		return ret;
	if (a->flags & FI_TRIGGER)
		return gba_atomic_trigger(ep, a, elems);
	return gba_atomic_do(ep, a, elems);
}

/*
 * Flags of the non-msg verbs: FI_COMPLETION and FI_TRIGGER of the
 * endpoint's (or alias's) default op flags.
 */
static inline uint64_t gba_atomic_opflags(struct fid_ep *ep_fid)
{
	return gba_ep_op_flags(ep_fid, true) & GBA_EP_TX_OPFLAGS;
}

/*
 * fi_atomic(3): apply @op with @count operands of @buf to the elements at
 * remote @addr (key @key) of @dest_addr.  Completes before returning
 * (FI_ATOMIC | FI_WRITE, FI_WRITE counter).  Returns 0, -FI_EOPNOTSUPP
 * (op/datatype not in fi_query_atomic's table), -FI_EINVAL,
 * -FI_EOPBADSTATE, -FI_EAGAIN, -FI_EHOSTUNREACH.  Target errors complete
 * in error (FI_EKEYREJECTED, FI_EACCES, FI_EINVAL out of range or
 * misaligned).
 */
static ssize_t gba_atomic_write(struct fid_ep *ep, const void *buf,
				size_t count, void *desc, fi_addr_t dest_addr,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct fi_ioc ioc = {(void *)buf, count};
	struct gba_atomic_op a = {
		.kind = GBA_ATOMIC_WRITE,
		.iov = &ioc,
		.iov_count = 1,
		.dest = dest_addr,
		.rma = {addr, count, key},
		.dt = datatype,
		.op = op,
		.flags = gba_atomic_opflags(ep),
		.context = context,
	};

	return gba_atomic_post(ep, &a);
}

/* fi_atomicv(3): operands from @count fi_ioc entries. */
static ssize_t gba_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov,
				 void **desc, size_t count, fi_addr_t dest_addr,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	ssize_t n = gba_ioc_elems(iov, count);
	struct gba_atomic_op a = {
		.kind = GBA_ATOMIC_WRITE,
		.iov = iov,
		.iov_count = count,
		.dest = dest_addr,
		.rma = {addr, n < 0 ? 0 : (size_t)n, key},
		.dt = datatype,
		.op = op,
		.flags = gba_atomic_opflags(ep),
		.context = context,
	};

	return gba_atomic_post(ep, &a);
}

/*
 * A msg verb's @msg: one remote ioc (the provider's rma_iov_limit).
 * 0 or -FI_EINVAL (logged).
 */
static int gba_atomic_msg_shape(const struct fi_msg_atomic *msg)
{
	if (!msg)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "atomic msg: NULL msg\n");
	if (msg->rma_iov_count != GBA_RMA_IOV_LIMIT || !msg->rma_iov)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "atomic msg: %zu remote iocs (exactly "
				    "%d)\n",
				    msg->rma_iov_count, GBA_RMA_IOV_LIMIT);
	return 0;
}

/*
 * A msg verb's @flags: only those of GBA_ATOMIC_MSG_FLAGS
 * (provider-private bits are refused); the shape of @msg is checked by
 * gba_atomic_submit.  0 or -FI_EBADFLAGS (logged).
 */
static int gba_atomic_msg_flags(uint64_t flags)
{
	if (flags & ~GBA_ATOMIC_MSG_FLAGS)
		return GBA_WARN_RET(
			FI_LOG_EP_DATA, -FI_EBADFLAGS,
			"atomic msg: flags 0x%llx not supported\n",
			(unsigned long long)(flags & ~GBA_ATOMIC_MSG_FLAGS));
	return 0;
}

/* Fill @a from @msg. */
static void gba_atomic_from_msg(struct gba_atomic_op *a,
				enum gba_atomic_kind kind,
				const struct fi_msg_atomic *msg, uint64_t flags)
{
	a->kind = kind;
	a->iov = msg->msg_iov;
	a->iov_count = msg->iov_count;
	a->dest = msg->addr;
	a->rma = msg->rma_iov[0];
	a->dt = msg->datatype;
	a->op = msg->op;
	a->flags = flags;
	a->context = msg->context;
	a->data = msg->data;
}

/*
 * gba_atomic_submit - fi_atomicmsg, fi_fetch_atomicmsg (@kind
 * FI_OP_FETCH_ATOMIC: @res) or fi_compare_atomicmsg (FI_OP_COMPARE_ATOMIC:
 * @cmp and @res) with @flags already checked (see gba_prov.h).  Returns
 * as the verbs.
 */
ssize_t gba_atomic_submit(struct fid_ep *ep, enum fi_op_type kind,
			  const struct fi_msg_atomic *msg,
			  const struct fi_ioc *cmp, size_t cmp_count,
			  struct fi_ioc *res, size_t res_count, uint64_t flags)
{
	struct gba_atomic_op a = {0};
	int ret = gba_atomic_msg_shape(msg);

	if (ret)
		return ret;
	gba_atomic_from_msg(&a,
			    kind == FI_OP_COMPARE_ATOMIC ? GBA_ATOMIC_CMP
			    : kind == FI_OP_FETCH_ATOMIC ? GBA_ATOMIC_FETCH
							 : GBA_ATOMIC_WRITE,
			    msg, flags);
	if (kind != FI_OP_ATOMIC) {
		a.res = res;
		a.res_count = res_count;
	}
	if (kind == FI_OP_COMPARE_ATOMIC) {
		a.cmp = cmp;
		a.cmp_count = cmp_count;
	}
	return gba_atomic_post(ep, &a);
}

/*
 * fi_atomicmsg(3): flags FI_COMPLETION, FI_INJECT, FI_REMOTE_CQ_DATA,
 * FI_TRIGGER (msg->context is the struct fi_triggered_context) and the
 * completion-level flags.
 */
static ssize_t gba_atomic_writemsg(struct fid_ep *ep,
				   const struct fi_msg_atomic *msg,
				   uint64_t flags)
{
	int ret = gba_atomic_msg_flags(flags);

	if (ret)
		return ret;
	return gba_atomic_submit(ep, FI_OP_ATOMIC, msg, NULL, 0, NULL, 0,
				 flags);
}

/* fi_inject_atomic(3): no CQ entry; the FI_WRITE counter counts it. */
static ssize_t gba_atomic_inject(struct fid_ep *ep, const void *buf,
				 size_t count, fi_addr_t dest_addr,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op)
{
	struct fi_ioc ioc = {(void *)buf, count};
	struct gba_atomic_op a = {
		.kind = GBA_ATOMIC_WRITE,
		.iov = &ioc,
		.iov_count = 1,
		.dest = dest_addr,
		.rma = {addr, count, key},
		.dt = datatype,
		.op = op,
		.flags = FI_INJECT | GBA_FLAG_NO_CQ,
	};

	return gba_atomic_post(ep, &a);
}

/*
 * fi_fetch_atomic(3): as fi_atomic; the elements' previous values go to
 * @result (FI_ATOMIC | FI_READ, FI_READ counter).  FI_ATOMIC_READ ignores
 * @buf.
 */
static ssize_t gba_atomic_readwrite(struct fid_ep *ep, const void *buf,
				    size_t count, void *desc, void *result,
				    void *result_desc, fi_addr_t dest_addr,
				    uint64_t addr, uint64_t key,
				    enum fi_datatype datatype, enum fi_op op,
				    void *context)
{
	struct fi_ioc ioc = {(void *)buf, buf ? count : 0};
	struct fi_ioc res = {result, count};
	struct gba_atomic_op a = {
		.kind = GBA_ATOMIC_FETCH,
		.iov = &ioc,
		.iov_count = 1,
		.res = &res,
		.res_count = 1,
		.dest = dest_addr,
		.rma = {addr, count, key},
		.dt = datatype,
		.op = op,
		.flags = gba_atomic_opflags(ep),
		.context = context,
	};

	return gba_atomic_post(ep, &a);
}

/* fi_fetch_atomicv(3). */
static ssize_t gba_atomic_readwritev(struct fid_ep *ep,
				     const struct fi_ioc *iov, void **desc,
				     size_t count, struct fi_ioc *resultv,
				     void **result_desc, size_t result_count,
				     fi_addr_t dest_addr, uint64_t addr,
				     uint64_t key, enum fi_datatype datatype,
				     enum fi_op op, void *context)
{
	ssize_t n = gba_ioc_elems(resultv, result_count);
	struct gba_atomic_op a = {
		.kind = GBA_ATOMIC_FETCH,
		.iov = iov,
		.iov_count = count,
		.res = resultv,
		.res_count = result_count,
		.dest = dest_addr,
		.rma = {addr, n < 0 ? 0 : (size_t)n, key},
		.dt = datatype,
		.op = op,
		.flags = gba_atomic_opflags(ep),
		.context = context,
	};

	return gba_atomic_post(ep, &a);
}

/* fi_fetch_atomicmsg(3): flags as fi_atomicmsg. */
static ssize_t gba_atomic_readwritemsg(struct fid_ep *ep,
				       const struct fi_msg_atomic *msg,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	int ret = gba_atomic_msg_flags(flags);

	if (ret)
		return ret;
	return gba_atomic_submit(ep, FI_OP_FETCH_ATOMIC, msg, NULL, 0, resultv,
				 result_count, flags);
}

/*
 * fi_compare_atomic(3): FI_CSWAP..FI_CSWAP_GT store the operand where
 * the condition between @compare and the target holds; FI_MSWAP stores
 * the operand's bits selected by the @compare mask.  Previous values go
 * to @result (FI_ATOMIC | FI_READ, FI_READ counter).
 */
static ssize_t gba_atomic_compwrite(struct fid_ep *ep, const void *buf,
				    size_t count, void *desc,
				    const void *compare, void *compare_desc,
				    void *result, void *result_desc,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key, enum fi_datatype datatype,
				    enum fi_op op, void *context)
{
	struct fi_ioc ioc = {(void *)buf, count};
	struct fi_ioc cmp = {(void *)compare, count};
	struct fi_ioc res = {result, count};
	struct gba_atomic_op a = {
		.kind = GBA_ATOMIC_CMP,
		.iov = &ioc,
		.iov_count = 1,
		.cmp = &cmp,
		.cmp_count = 1,
		.res = &res,
		.res_count = 1,
		.dest = dest_addr,
		.rma = {addr, count, key},
		.dt = datatype,
		.op = op,
		.flags = gba_atomic_opflags(ep),
		.context = context,
	};

	return gba_atomic_post(ep, &a);
}

/* fi_compare_atomicv(3). */
static ssize_t gba_atomic_compwritev(
	struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
	const struct fi_ioc *comparev, void **compare_desc,
	size_t compare_count, struct fi_ioc *resultv, void **result_desc,
	size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
	enum fi_datatype datatype, enum fi_op op, void *context)
{
	ssize_t n = gba_ioc_elems(iov, count);
	struct gba_atomic_op a = {
		.kind = GBA_ATOMIC_CMP,
		.iov = iov,
		.iov_count = count,
		.cmp = comparev,
		.cmp_count = compare_count,
		.res = resultv,
		.res_count = result_count,
		.dest = dest_addr,
		.rma = {addr, n < 0 ? 0 : (size_t)n, key},
		.dt = datatype,
		.op = op,
		.flags = gba_atomic_opflags(ep),
		.context = context,
	};

	return gba_atomic_post(ep, &a);
}

/* fi_compare_atomicmsg(3): flags as fi_atomicmsg. */
static ssize_t
gba_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			const struct fi_ioc *comparev, void **compare_desc,
			size_t compare_count, struct fi_ioc *resultv,
			void **result_desc, size_t result_count, uint64_t flags)
{
	int ret = gba_atomic_msg_flags(flags);

	if (ret)
		return ret;
	return gba_atomic_submit(ep, FI_OP_COMPARE_ATOMIC, msg, comparev,
				 compare_count, resultv, result_count, flags);
}

/* *valid: 0 with *@count the element limit, or -FI_EOPNOTSUPP. */
static int gba_atomic_validate(enum fi_datatype dt, enum fi_op op,
			       enum gba_atomic_kind kind, size_t *count)
{
	if (!count)
		return -FI_EINVAL;
	if (!gba_atomic_valid(dt, op, kind))
		return -FI_EOPNOTSUPP;
	*count = GBA_ATOMIC_MAX_BYTES / gba_atomic_dt_size(dt);
	return 0;
}

/* fi_atomicvalid(3). */
static int gba_atomic_writevalid(struct fid_ep *ep, enum fi_datatype dt,
				 enum fi_op op, size_t *count)
{
	return gba_atomic_validate(dt, op, GBA_ATOMIC_WRITE, count);
}

/* fi_fetch_atomicvalid(3). */
static int gba_atomic_readwritevalid(struct fid_ep *ep, enum fi_datatype dt,
				     enum fi_op op, size_t *count)
{
	return gba_atomic_validate(dt, op, GBA_ATOMIC_FETCH, count);
}

/* fi_compare_atomicvalid(3). */
static int gba_atomic_compwritevalid(struct fid_ep *ep, enum fi_datatype dt,
				     enum fi_op op, size_t *count)
{
	return gba_atomic_validate(dt, op, GBA_ATOMIC_CMP, count);
}

struct fi_ops_atomic gba_ep_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = gba_atomic_write,
	.writev = gba_atomic_writev,
	.writemsg = gba_atomic_writemsg,
	.inject = gba_atomic_inject,
	.readwrite = gba_atomic_readwrite,
	.readwritev = gba_atomic_readwritev,
	.readwritemsg = gba_atomic_readwritemsg,
	.compwrite = gba_atomic_compwrite,
	.compwritev = gba_atomic_compwritev,
	.compwritemsg = gba_atomic_compwritemsg,
	.writevalid = gba_atomic_writevalid,
	.readwritevalid = gba_atomic_readwritevalid,
	.compwritevalid = gba_atomic_compwritevalid,
};

/*
 * gba_query_atomic - fi_query_atomic(3).
 * @flags: 0 (basic), FI_FETCH_ATOMIC or FI_COMPARE_ATOMIC; FI_TAGGED and
 *         other bits are refused.
 * @attr: size (bytes per element) and count (elements per operation).
 * Returns 0, -FI_EINVAL (NULL attr, bad flags), -FI_EOPNOTSUPP (not in
 * the table at the top of this file).
 */
int gba_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
	enum gba_atomic_kind kind;
	size_t count;
	int ret;

	if (!attr)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_query_atomic: NULL attr\n");
	if (flags == 0)
		kind = GBA_ATOMIC_WRITE;
	else if (flags == FI_FETCH_ATOMIC)
		kind = GBA_ATOMIC_FETCH;
	else if (flags == FI_COMPARE_ATOMIC)
		kind = GBA_ATOMIC_CMP;
	else
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_query_atomic: flags 0x%llx\n",
				    (unsigned long long)flags);
	ret = gba_atomic_validate(datatype, op, kind, &count);
	if (ret)
		return ret;
	attr->size = gba_atomic_dt_size(datatype);
	attr->count = count;
	return 0;
}
