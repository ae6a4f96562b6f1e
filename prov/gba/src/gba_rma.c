/*
 * libfabric "gba" provider: RMA on the direct path (fi_rma(3)).
 *
 * Open MPI's btl/self model: a write or read aimed at
 * the endpoint's own address, or at another endpoint of this process, is
 * a memcpy between the local buffers and the registered region, and
 * completes before the call returns; no queue, no allocation, no lock
 * beyond the MR table's (taken only when the domain's threading model
 * needs it).  Destinations in other processes go through the fabric
 * engine (gba_rma_peer): the target executes them in its progress and
 * the operation completes when it answered (delivery complete).
 *
 * Argument errors return at once (-FI_EINVAL, -FI_EOPBADSTATE, ...);
 * target-side errors (unknown key, access not granted, range outside the
 * region) complete with an error entry, as a remote error would.
 * FI_TRIGGER defers the operation to its counter's threshold
 * (gba_trigger.c); the record keeps copies of the iov arrays (and of the
 * payload for FI_INJECT).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_ep.h"

/* Flags fi_writemsg / fi_readmsg accept. */
#define GBA_RMA_MSG_FLAGS                                                      \
	(FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_TRIGGER |          \
	 FI_FENCE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE |              \
	 FI_INJECT_COMPLETE | FI_COMMIT_COMPLETE | FI_MORE)

/*
 * gba_rma_resolve - target endpoint and local address of a direct access
 * (see gba_prov.h).  Returns 0, negative -FI_E* (verb fails), positive
 * FI_E* (error completion).
 */
int gba_rma_resolve(struct gba_ep *ep, fi_addr_t dest, uint64_t addr,
		    uint64_t key, size_t len, uint64_t access,
		    struct gba_ep **peer, void **ptr, struct gba_cntr **mr_cntr)
{
	int ret;

	ret = gba_ep_target(ep, dest, peer);
	if (ret)
		return ret;
	ret = gba_mr_lookup((*peer)->domain, key, addr, len, access, ptr,
			    mr_cntr);
	if (ret) {
		FI_INFO(&gba_prov, FI_LOG_EP_DATA,
			"access of %zu bytes at 0x%llx key 0x%llx refused: "
			"%s\n",
			len, (unsigned long long)addr, (unsigned long long)key,
			fi_strerror(-ret));
		return -ret;
	}
	return 0;
}

/* gba_rma_target_event - count a finished remote access (gba_ep.h). */
void gba_rma_target_event(struct gba_ep *target, enum gba_cntr_slot slot,
			  struct gba_cntr *mr_cntr)
{
	if ((target->caps & FI_RMA_EVENT) && target->cntrs[slot])
		gba_cntr_inc(target->cntrs[slot]);
	if (mr_cntr)
		gba_cntr_inc(mr_cntr);
}

/* gba_rma_report - complete a direct operation (see gba_ep.h). */
void gba_rma_report(struct gba_ep *ep, struct gba_ep *peer, int err,
		    enum gba_cntr_slot slot, uint64_t flags, void *context,
		    size_t len, uint64_t data, struct gba_cntr *mr_cntr)
{
	if (err) {
		gba_ep_tx_error(ep, slot, flags, context, err, 0, NULL, 0);
		return;
	}
	if (peer)
		gba_rma_target_event(peer,
				     flags & (FI_WRITE | FI_ATOMIC)
					     ? GBA_CNTR_REMOTE_WRITE
					     : GBA_CNTR_REMOTE_READ,
				     mr_cntr);
	if ((flags & FI_REMOTE_CQ_DATA) && peer && peer->rx_cq)
		gba_cq_write(peer->rx_cq, NULL,
			     (flags & FI_ATOMIC ? FI_ATOMIC : FI_RMA) |
				     FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
			     len, NULL, data, 0, FI_ADDR_NOTAVAIL);
	if (flags & GBA_FLAG_NO_CQ) {
		if (ep->cntrs[slot])
			gba_cntr_inc(ep->cntrs[slot]);
		return;
	}
	gba_ep_tx_complete(ep, slot, flags, context, len);
}

/*
 * Total length of @iov (the core's gba_eng_iov_len: at most GBA_IOV_LIMIT
 * entries, no NULL entry with a length, at most GBA_MAX_MSG_SIZE bytes),
 * or a negative errno: -E2BIG or -EINVAL for the array, -EFAULT or
 * -EMSGSIZE for an entry.
 */
static ssize_t gba_iov_len(const struct iovec *iov, size_t count)
{
	return gba_eng_iov_len(iov, count, GBA_IOV_LIMIT, GBA_MAX_MSG_SIZE,
			       NULL);
}

/*
 * Check a message's shape: 0 or -FI_EINVAL (logged).  The local total
 * must equal the remote length (nothing is silently truncated).
 */
static int gba_rma_check(const struct iovec *iov, size_t count,
			 const struct fi_rma_iov *rma_iov, size_t rma_count,
			 size_t *len)
{
	ssize_t total = gba_iov_len(iov, count);

	if (total == -E2BIG || total == -EINVAL)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "RMA: %zu local iovs (limit %d)\n", count,
				    GBA_IOV_LIMIT);
	if (rma_count != GBA_RMA_IOV_LIMIT || !rma_iov)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "RMA: %zu remote iovs (exactly %d)\n",
				    rma_count, GBA_RMA_IOV_LIMIT);
	if (total < 0)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "RMA: bad local iov (NULL buffer or more "
				    "than %zu bytes)\n",
				    GBA_MAX_MSG_SIZE);
	if ((size_t)total != rma_iov[0].len)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "RMA: local length %zd != remote length "
				    "%zu\n",
				    total, rma_iov[0].len);
	*len = (size_t)total;
	return 0;
}

/*
 * Start a write or read to another process through the engine; it
 * completes when the target has executed it (delivery complete).
 * Returns 0 or a negative -FI_E* (nothing started).
 */
static ssize_t gba_rma_peer(struct gba_ep *ep, bool write,
			    const struct iovec *iov, size_t count,
			    fi_addr_t dest, const struct fi_rma_iov *rma_iov,
			    size_t len, uint64_t flags, void *context,
			    uint64_t data)
{
	uint32_t wire = flags & FI_REMOTE_CQ_DATA ? GBA_WIRE_CQ_DATA : 0;
	struct gba_eng_peer *peer;
	struct gba_tx_req *req;
	bool token;
	int ret;

	token = gba_ep_data_lock(ep);
	ret = gba_peer_get(ep, dest, &peer);
	if (ret)
		goto out;
	req = gba_tx_req_get(ep);
	if (!req) {
		ret = -FI_EAGAIN;
		goto out;
	}
	req->context = context;
	req->flags = flags | FI_RMA | (write ? FI_WRITE : FI_READ);
	req->len = len;
	req->slot = write ? GBA_CNTR_WRITE : GBA_CNTR_READ;
	if (write)
		ret = gba_eng_put(ep->eng, peer, iov, count, rma_iov[0].addr,
				  rma_iov[0].key, wire, data, (uintptr_t)req);
	else
		ret = gba_eng_get(ep->eng, peer, iov, count, rma_iov[0].addr,
				  rma_iov[0].key, wire, (uintptr_t)req);
	if (ret) {
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
 * Perform a write (@write) or read of @len bytes between @iov (@count
 * entries, already checked by gba_rma_check) and the region at
 * @rma_iov of @dest, and report it.  Shared by the immediate verbs and
 * triggered operations.  Returns 0 (performed or completed in error) or
 * a negative -FI_E* (nothing performed, nothing reported).
 */
static ssize_t gba_rma_do(struct gba_ep *ep, bool write,
			  const struct iovec *iov, size_t count, fi_addr_t dest,
			  const struct fi_rma_iov *rma_iov, size_t len,
			  uint64_t flags, void *context, uint64_t data)
{
	struct gba_cntr *mr_cntr = NULL;
	struct gba_ep *peer = NULL;
	uint8_t *region;
	size_t i;
	int ret;

	/* an inject needs CQ room only if it fails: not checked up front */
	if (!(flags & GBA_FLAG_NO_CQ) && !gba_ep_tx_has_space(ep))
		return -FI_EAGAIN;
	ret = gba_rma_resolve(ep, dest, rma_iov[0].addr, rma_iov[0].key, len,
			      write ? FI_REMOTE_WRITE : FI_REMOTE_READ, &peer,
			      (void **)&region, &mr_cntr);
	if (ret == -FI_EHOSTUNREACH)
		return gba_rma_peer(ep, write, iov, count, dest, rma_iov, len,
				    flags, context, data);
	if (ret < 0)
		return ret;
	if (!ret) {
		for (i = 0; i < count; i++) {
			if (!iov[i].iov_len) /* its base may be NULL */
				continue;
			if (write)
				memmove(region, iov[i].iov_base,
					iov[i].iov_len);
			else
				memmove(iov[i].iov_base, region,
					iov[i].iov_len);
			region += iov[i].iov_len;
		}
	}
	gba_rma_report(ep, peer, ret, write ? GBA_CNTR_WRITE : GBA_CNTR_READ,
		       flags | FI_RMA | (write ? FI_WRITE : FI_READ), context,
		       len, data, mr_cntr);
	return 0;
}

/* A triggered RMA (FI_TRIGGER): copies of everything the caller passed. */
struct gba_rma_trigger {
	struct gba_trigger base; /* first: freed with free() */
	bool write;
	struct iovec iov[GBA_IOV_LIMIT];
	size_t count;
	struct fi_rma_iov rma_iov;
	fi_addr_t dest;
	uint64_t flags;
	void *context; /* the struct fi_triggered_context */
	uint64_t data;
	uint8_t payload[]; /* FI_INJECT: the data itself */
};

/* Run a triggered RMA; a failure to start completes it in error. */
static void gba_rma_trigger_run(struct gba_trigger *trig)
{
	struct gba_rma_trigger *rt = (struct gba_rma_trigger *)trig;
	ssize_t ret;

	ret = gba_rma_do(trig->ep, rt->write, rt->iov, rt->count, rt->dest,
			 &rt->rma_iov, rt->rma_iov.len, rt->flags, rt->context,
			 rt->data);
	if (ret)
		gba_ep_tx_error(
			trig->ep, rt->write ? GBA_CNTR_WRITE : GBA_CNTR_READ,
			rt->flags | FI_RMA | (rt->write ? FI_WRITE : FI_READ),
			rt->context, (int)-ret, 0, NULL, 0);
}

/*
 * Queue @msg (of @len bytes, shape already checked) as a triggered
 * write/read.  What the immediate verb would refuse at once (endpoint
 * not enabled, destination unknown or in another process) is refused
 * now; target-side errors complete in error when it fires.  0 or -FI_E*.
 */
static ssize_t gba_rma_trigger(struct gba_ep *ep, bool write,
			       const struct fi_msg_rma *msg, size_t len,
			       uint64_t flags)
{
	struct gba_rma_trigger *rt;
	struct gba_ep *peer;
	struct gba_cntr *cntr;
	uint64_t threshold;
	size_t extra = 0, i;
	uint8_t *p;
	int ret;

	ret = gba_trigger_parse(ep, msg->context, &cntr, &threshold);
	if (ret)
		return ret;
	ret = gba_ep_target(ep, msg->addr, &peer);
	if (ret == -FI_EHOSTUNREACH) /* another process: the engine's */
		ret = gba_peer_check(ep, msg->addr);
	if (ret)
		return ret;
	if (write && (flags & FI_INJECT))
		extra = len; /* at most GBA_INJECT_SIZE (gba_rma_msg) */
	rt = calloc(1, sizeof(*rt) + extra);
	if (!rt)
		return -FI_ENOMEM;
	rt->base.ep = ep;
	rt->base.run = gba_rma_trigger_run;
	rt->base.context = msg->context;
	rt->base.flags =
		(flags & ~FI_TRIGGER) | FI_RMA | (write ? FI_WRITE : FI_READ);
	rt->base.slot = write ? GBA_CNTR_WRITE : GBA_CNTR_READ;
	rt->write = write;
	rt->count = msg->iov_count;
	if (msg->iov_count) /* msg_iov may be NULL without entries */
		memcpy(rt->iov, msg->msg_iov,
		       msg->iov_count * sizeof(rt->iov[0]));
	if (extra) {
		for (i = 0, p = rt->payload; i < msg->iov_count; i++) {
			if (!msg->msg_iov[i].iov_len)
				continue;
			memcpy(p, msg->msg_iov[i].iov_base,
			       msg->msg_iov[i].iov_len);
			p += msg->msg_iov[i].iov_len;
		}
		rt->iov[0].iov_base = rt->payload;
		rt->iov[0].iov_len = len;
		rt->count = 1;
	}
	rt->rma_iov = msg->rma_iov[0];
	rt->dest = msg->addr;
	rt->flags = flags & ~FI_TRIGGER;
	rt->context = msg->context;
	rt->data = msg->data;
	return gba_trigger_queue(cntr, threshold, &rt->base);
}

/* The endpoint of a verb, NULL (logged) if @ep_fid is not a gba one. */
static inline struct gba_ep *gba_rma_ep(struct fid_ep *ep_fid)
{
	return gba_ep_of(ep_fid);
}

/*
 * gba_rma_submit - fi_writemsg / fi_readmsg with @flags already checked
 * (see gba_prov.h): the message's shape, then run or queue.
 */
ssize_t gba_rma_submit(struct fid_ep *ep_fid, bool write,
		       const struct fi_msg_rma *msg, uint64_t flags)
{
	struct gba_ep *ep = gba_rma_ep(ep_fid);
	size_t len;
	int ret;

	if (!ep || !msg)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "RMA msg: NULL argument\n");
	if (!write && (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "fi_readmsg: FI_INJECT / "
				    "FI_REMOTE_CQ_DATA apply to writes\n");
	ret = gba_rma_check(msg->msg_iov, msg->iov_count, msg->rma_iov,
			    msg->rma_iov_count, &len);
	if (ret)
		return ret;
	if ((flags & FI_INJECT) && len > GBA_INJECT_SIZE)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "FI_INJECT of %zu bytes (limit %d)\n", len,
				    GBA_INJECT_SIZE);
	if (flags & FI_TRIGGER)
		return gba_rma_trigger(ep, write, msg, len, flags);
	return gba_rma_do(ep, write, msg->msg_iov, msg->iov_count, msg->addr,
			  msg->rma_iov, len, flags, msg->context, msg->data);
}

/* fi_writemsg / fi_readmsg: validate flags, then run or queue. */
static ssize_t gba_rma_msg(struct fid_ep *ep_fid, bool write,
			   const struct fi_msg_rma *msg, uint64_t flags)
{
	if (flags & ~GBA_RMA_MSG_FLAGS)
		return GBA_WARN_RET(
			FI_LOG_EP_DATA, -FI_EBADFLAGS,
			"RMA msg: flags 0x%llx not supported\n",
			(unsigned long long)(flags & ~GBA_RMA_MSG_FLAGS));
	return gba_rma_submit(ep_fid, write, msg, flags);
}

/* Build the one-element iov / rma_iov of a contiguous verb and run it. */
static inline ssize_t gba_rma_contig(struct fid_ep *ep_fid, bool write,
				     void *buf, size_t len, fi_addr_t dest,
				     uint64_t addr, uint64_t key,
				     uint64_t flags, void *context,
				     uint64_t data)
{
	struct gba_ep *ep = gba_rma_ep(ep_fid);
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct fi_rma_iov rma_iov = {.addr = addr, .len = len, .key = key};
	int ret;

	if (!ep)
		return -FI_EINVAL;
	ret = gba_rma_check(&iov, 1, &rma_iov, 1, &len);
	if (ret)
		return ret;
	flags |= gba_ep_op_flags(ep_fid, true) & GBA_EP_TX_OPFLAGS;
	if (flags & FI_TRIGGER) /* an alias with FI_TRIGGER (fi_ep_alias) */
		return gba_rma_msg(ep_fid, write,
				   &(struct fi_msg_rma){
					   .msg_iov = &iov,
					   .iov_count = 1,
					   .addr = dest,
					   .rma_iov = &rma_iov,
					   .rma_iov_count = 1,
					   .context = context,
					   .data = data},
				   flags & ~GBA_FLAG_NO_CQ);
	return gba_rma_do(ep, write, &iov, 1, dest, &rma_iov, len, flags,
			  context, data);
}

/* Same for the vector verbs. */
static ssize_t gba_rma_vec(struct fid_ep *ep_fid, bool write,
			   const struct iovec *iov, size_t count,
			   fi_addr_t dest, uint64_t addr, uint64_t key,
			   void *context)
{
	struct gba_ep *ep = gba_rma_ep(ep_fid);
	struct fi_rma_iov rma_iov = {.addr = addr, .key = key};
	ssize_t len;

	if (!ep)
		return -FI_EINVAL;
	len = gba_iov_len(iov, count);
	if (len == -E2BIG || len == -EINVAL)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "RMA: %zu local iovs (limit %d)\n", count,
				    GBA_IOV_LIMIT);
	if (len < 0)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "RMA: bad local iov\n");
	rma_iov.len = (size_t)len;
	if (gba_ep_op_flags(ep_fid, true) & FI_TRIGGER)
		return gba_rma_msg(ep_fid, write,
				   &(struct fi_msg_rma){
					   .msg_iov = iov,
					   .iov_count = count,
					   .addr = dest,
					   .rma_iov = &rma_iov,
					   .rma_iov_count = 1,
					   .context = context},
				   gba_ep_op_flags(ep_fid, true) &
					   GBA_EP_TX_OPFLAGS);
	return gba_rma_do(ep, write, iov, count, dest, &rma_iov, (size_t)len,
			  gba_ep_op_flags(ep_fid, true) & FI_COMPLETION,
			  context, 0);
}

/*
 * fi_read(3): read @len bytes at remote @addr (key @key) of @src_addr
 * into @buf.  Completes before returning (FI_RMA | FI_READ, FI_READ
 * counter).  Returns 0, -FI_EINVAL, -FI_EOPBADSTATE, -FI_EAGAIN (CQ
 * full), -FI_EHOSTUNREACH (another process).  Target errors complete in
 * error (FI_EKEYREJECTED, FI_EACCES, FI_EINVAL).
 */
static ssize_t gba_read(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, uint64_t addr, uint64_t key,
			void *context)
{
	return gba_rma_contig(ep, false, buf, len, src_addr, addr, key, 0,
			      context, 0);
}

/* fi_readv(3): fi_read into @count iovs (at most GBA_IOV_LIMIT). */
static ssize_t gba_readv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src_addr,
			 uint64_t addr, uint64_t key, void *context)
{
	return gba_rma_vec(ep, false, iov, count, src_addr, addr, key, context);
}

/*
 * fi_readmsg(3): flags FI_COMPLETION, FI_TRIGGER (msg->context is the
 * struct fi_triggered_context) and completion-level flags.
 */
static ssize_t gba_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			   uint64_t flags)
{
	return gba_rma_msg(ep, false, msg, flags);
}

/* fi_write(3): the counterpart of fi_read (FI_RMA | FI_WRITE). */
static ssize_t gba_write(struct fid_ep *ep, const void *buf, size_t len,
			 void *desc, fi_addr_t dest_addr, uint64_t addr,
			 uint64_t key, void *context)
{
	return gba_rma_contig(ep, true, (void *)buf, len, dest_addr, addr, key,
			      0, context, 0);
}

/* fi_writev(3). */
static ssize_t gba_writev(struct fid_ep *ep, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest_addr,
			  uint64_t addr, uint64_t key, void *context)
{
	return gba_rma_vec(ep, true, iov, count, dest_addr, addr, key, context);
}

/*
 * fi_writemsg(3): flags as fi_readmsg plus FI_INJECT (at most
 * GBA_INJECT_SIZE bytes) and FI_REMOTE_CQ_DATA (msg->data reaches the
 * target endpoint's rx CQ).
 */
static ssize_t gba_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			    uint64_t flags)
{
	return gba_rma_msg(ep, true, msg, flags);
}

/*
 * fi_inject_write(3): at most GBA_INJECT_SIZE bytes; no CQ entry, the
 * FI_WRITE counter counts it; target errors still complete in error.
 */
static ssize_t gba_inject_write(struct fid_ep *ep, const void *buf, size_t len,
				fi_addr_t dest_addr, uint64_t addr,
				uint64_t key)
{
	if (len > GBA_INJECT_SIZE)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "fi_inject_write of %zu bytes (limit "
				    "%d)\n",
				    len, GBA_INJECT_SIZE);
	return gba_rma_contig(ep, true, (void *)buf, len, dest_addr, addr, key,
			      FI_INJECT | GBA_FLAG_NO_CQ, NULL, 0);
}

/* fi_writedata(3): fi_write with remote CQ data @data. */
static ssize_t gba_writedata(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, uint64_t data, fi_addr_t dest_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	return gba_rma_contig(ep, true, (void *)buf, len, dest_addr, addr, key,
			      FI_REMOTE_CQ_DATA, context, data);
}

/* fi_inject_writedata(3): fi_inject_write with remote CQ data. */
static ssize_t gba_inject_writedata(struct fid_ep *ep, const void *buf,
				    size_t len, uint64_t data,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key)
{
	if (len > GBA_INJECT_SIZE)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "fi_inject_writedata of %zu bytes "
				    "(limit %d)\n",
				    len, GBA_INJECT_SIZE);
	return gba_rma_contig(ep, true, (void *)buf, len, dest_addr, addr, key,
			      FI_INJECT | FI_REMOTE_CQ_DATA | GBA_FLAG_NO_CQ,
			      NULL, data);
}

struct fi_ops_rma gba_ep_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = gba_read,
	.readv = gba_readv,
	.readmsg = gba_readmsg,
	.write = gba_write,
	.writev = gba_writev,
	.writemsg = gba_writemsg,
	.inject = gba_inject_write,
	.writedata = gba_writedata,
	.injectdata = gba_inject_writedata,
};
