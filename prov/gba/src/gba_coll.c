/*
 * libfabric "gba" provider: collectives on the GBA device
 * (fi_collective(3)); joining them is gba_coll_join.c.
 *
 * fi_barrier / fi_barrier2 queue the barrier on the collective (struct
 * gba_mc).  The device accepts one outstanding arrival per member (an
 * arrival ahead of the group's epoch is an error, protocol step 3), so the
 * head of the queue arrives (one doorbell store) and the rest wait for its
 * release.  Progress (CQ and counter reads and waits, gba_ep_progress)
 * polls the release flag of the head, reports its completion on the tx CQ
 * (FI_COLLECTIVE) and the FI_SEND counter and arrives at the next.
 * Triggered barriers (FI_TRIGGER) are queued on their counter and posted
 * when it reaches the threshold (gba_trigger.c).
 *
 * Errors of the device (an arrival the switch rejected, a member that
 * died, FI_GBA_BARRIER_TIMEOUT) complete the barrier with an error entry
 * whose err_data is the group's 64-bit ERROR_INFO; the collective is
 * unusable afterwards and every later barrier on it completes with the
 * same error.  fi_close the multicast group and join again.
 *
 * The barrier runs in software over the fabric engine instead (a log
 * line says why) when FI_GBA_OFFLOAD=0, when no device opens, when every
 * hardware group is in use or beyond 708 members (gba_join_device).  The
 * other collectives always run in software (gba_coll_sw.c, which also
 * owns the software barrier): this file checks their arguments.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gba_coll.h"

/* A triggered barrier waiting for its counter (gba_trigger.c). */
struct gba_barrier_trigger {
	struct gba_trigger base; /* first: freed with free() */
	fi_addr_t coll_addr;
	uint64_t flags;
	void *context; /* the struct fi_triggered_context */
};

/* A completion collected under the endpoint lock, reported after it. */
struct gba_coll_done {
	void *context;
	uint64_t flags;
	int err; /* positive FI_E* or 0 */
	int prov_errno;
	uint64_t error_info;
};

#define GBA_COLL_BATCH 16
/* Bytes of the absent-member list in a failed barrier's log line. */
#define GBA_ABSENT_LOG_LEN 512

/* The collective of @ep whose coll_addr is @coll_addr, or NULL.  Locked. */
static struct gba_mc *gba_mc_find(struct gba_ep *ep, fi_addr_t coll_addr)
{
	struct gba_mc *mc;

	TAILQ_FOREACH(mc, &ep->mcs, entry)
		if (mc->mc_fid.fi_addr == coll_addr)
			return mc;
	return NULL;
}

/* Arrive at the barrier at the head of @mc's queue.  Locked. */
static void gba_mc_arrive(struct gba_mc *mc)
{
	mc->seq = gba_group_arrive(mc->grp);
	mc->in_flight = true;
	mc->polls = 0;
	mc->waits = 0;
	if (gba_params.barrier_timeout_ms >= 0)
		mc->arrive_ms = gba_now_ms();
}

/* Record a device error on @mc; later barriers fail with it.  Locked. */
static void gba_mc_fail(struct gba_mc *mc, int err)
{
	struct gba_group_diag diag = {0};
	char absent[GBA_ABSENT_LOG_LEN];

	mc->error = -gba_errno_to_fi(err);
	mc->prov_errno = -err;
	if (!gba_group_diag(mc->grp, &diag))
		mc->error_info = diag.error_info;
	/* who the barrier waits for: member ids and pids (gba_stat(1)) */
	if (gba_group_absent(mc->grp, absent, sizeof(absent)) < 0)
		snprintf(absent, sizeof(absent), "unknown");
	FI_WARN(&gba_prov, FI_LOG_EP_DATA,
		"barrier on group %u (member %u of %u, sequence %u) failed: "
		"%s; absent: %s; ERROR_INFO 0x%llx (%s); the collective is "
		"unusable, close it and join again\n",
		diag.index, mc->member_id, mc->member_count, mc->seq,
		strerror(-err), absent, (unsigned long long)mc->error_info,
		gba_strerror_info(mc->error_info));
}

/*
 * Poll the barrier at the head of @mc: 1 if released, 0 if not, or a
 * negative error of gba_group_test.  Locked.
 */
static inline int gba_mc_test(struct gba_mc *mc)
{
	if (gba_seq_reached((uint32_t)__atomic_load_n(mc->flag,
						       __ATOMIC_ACQUIRE),
			    mc->seq))
		return 1;
	/* past the spin, each poll may yield: then test every one */
	if (mc->waits % GBA_TEST_POLLS && mc->waits < mc->spin_polls)
		return 0;
	return gba_group_test(mc->grp, mc->seq);
}

/*
 * Advance @mc by at most one barrier: 1 and *@done filled if the head
 * completed (released or failed), 0 if nothing to report.  Locked.
 */
static int gba_mc_poll(struct gba_mc *mc, struct gba_coll_done *done)
{
	struct gba_barrier_op *op;
	int ret;

	if (mc->head == mc->tail)
		return 0;
	if (!mc->error && mc->in_flight) {
		ret = gba_mc_test(mc);
		if (ret == 0 && gba_params.barrier_timeout_ms >= 0 &&
		    ++mc->polls >= GBA_TIMEOUT_POLLS) {
			mc->polls = 0;
			if (gba_now_ms() - mc->arrive_ms >
			    (uint64_t)gba_params.barrier_timeout_ms)
				ret = -ETIMEDOUT;
		}
		if (ret == 0) {
			mc->waits++;
			return 0;
		}
		if (ret < 0)
			gba_mc_fail(mc, ret);
	}
	op = &mc->ops[mc->head % GBA_MC_QUEUE];
	done->context = op->context;
	done->flags = op->flags;
	done->err = mc->error;
	done->prov_errno = mc->prov_errno;
	done->error_info = mc->error_info;
	gba_ep_pending_add(mc->ep, -1);
	mc->head++;
	mc->in_flight = false;
	if (mc->head != mc->tail && !mc->error)
		gba_mc_arrive(mc);
	return 1;
}

/* Report the completions collected by progress or cancel (unlocked). */
static void gba_coll_report(struct gba_ep *ep, struct gba_coll_done *done,
			    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (done[i].err)
			gba_ep_tx_error(
				ep, GBA_CNTR_SEND, done[i].flags,
				done[i].context, done[i].err,
				done[i].prov_errno,
				done[i].error_info ? &done[i].error_info : NULL,
				done[i].error_info ? sizeof(done[i].error_info)
						   : 0);
		else
			gba_ep_tx_complete(ep, GBA_CNTR_SEND, done[i].flags,
					   done[i].context, 0);
	}
}

/*
 * gba_coll_progress - poll every collective of @ep (see gba_prov.h).
 * Completions are reported without the endpoint lock held: a completion
 * may fire a triggered barrier that posts on this endpoint.
 */
void gba_coll_progress(struct gba_ep *ep)
{
	struct gba_coll_done done[GBA_COLL_BATCH];
	bool yield = false;
	struct gba_mc *mc;
	size_t n;

	do {
		n = 0;
		gba_lock_acquire(&ep->lock);
		TAILQ_FOREACH(mc, &ep->mcs, entry) {
			while (n < GBA_COLL_BATCH && gba_mc_poll(mc, &done[n]))
				n++;
			if (mc->in_flight && mc->waits >= mc->spin_polls &&
			    gba_group_should_yield(mc->grp, mc->seq))
				yield = true;
		}
		gba_lock_release(&ep->lock);
		gba_coll_report(ep, done, n);
	} while (n == GBA_COLL_BATCH);
	if (yield && !n)
		sched_yield();
}

/*
 * Queue a barrier on the collective @coll_addr of @ep and arrive if none
 * is in flight.  Returns 0, -FI_EOPBADSTATE (endpoint not enabled),
 * -FI_EINVAL (not a collective joined by @ep), -FI_EAGAIN (queue or CQ
 * full: progress and retry).
 */
static ssize_t gba_barrier_post(struct gba_ep *ep, fi_addr_t coll_addr,
				uint64_t flags, void *context)
{
	struct gba_barrier_op *op;
	struct gba_mc *mc;

	if (!ep->enabled)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EOPBADSTATE,
				    "barrier: endpoint not enabled\n");
	gba_lock_acquire(&ep->lock);
	mc = gba_mc_find(ep, coll_addr);
	if (!mc) {
		gba_lock_release(&ep->lock);
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "barrier: coll_addr 0x%llx is not a "
				    "collective this endpoint joined (use "
				    "fi_mc_addr of the joined fid_mc)\n",
				    (unsigned long long)coll_addr);
	}
	if (!mc->grp) {
		struct gba_swc_args a = {
			.coll = FI_BARRIER,
			.root_addr = FI_ADDR_NOTAVAIL,
			.flags = flags,
			.context = context,
		};
		struct gba_swc *swc = mc->swc;

		gba_lock_release(&ep->lock);
		return gba_swc_post(swc, &a);
	}
	if (mc->tail - mc->head >= GBA_MC_QUEUE || !gba_ep_tx_has_space(ep)) {
		gba_lock_release(&ep->lock);
		return -FI_EAGAIN;
	}
	op = &mc->ops[mc->tail++ % GBA_MC_QUEUE];
	op->context = context;
	op->flags = flags | FI_COLLECTIVE;
	gba_ep_pending_add(ep, 1);
	if (!mc->in_flight && !mc->error)
		gba_mc_arrive(mc);
	gba_lock_release(&ep->lock);
	return 0;
}

/* Run a triggered barrier: post it; a failure completes it in error. */
static void gba_barrier_trigger_run(struct gba_trigger *trig)
{
	struct gba_barrier_trigger *bt = (struct gba_barrier_trigger *)trig;
	ssize_t ret;

	ret = gba_barrier_post(trig->ep, bt->coll_addr, bt->flags, bt->context);
	if (ret)
		gba_ep_tx_error(trig->ep, GBA_CNTR_SEND,
				bt->flags | FI_COLLECTIVE, bt->context,
				(int)-ret, 0, NULL, 0);
}

/* Barrier flags fi_barrier2 accepts. */
#define GBA_BARRIER_FLAGS (FI_TRIGGER | FI_COMPLETION)

/*
 * gba_barrier2 - fi_barrier2(3).
 * @coll_addr: fi_mc_addr() of a collective joined by @ep_fid.
 * @flags: 0, FI_COMPLETION (selective completion), FI_TRIGGER (@context
 *         is a struct fi_triggered_context: the barrier arrives when its
 *         counter reaches the threshold).
 * Completes on the tx CQ (FI_COLLECTIVE) and the FI_SEND counter once
 * every member arrived.  Returns 0, -FI_EINVAL, -FI_EBADFLAGS,
 * -FI_EOPBADSTATE, -FI_EAGAIN, -FI_ENOSYS (trigger event not supported),
 * -FI_ENOMEM.
 */
static ssize_t gba_barrier2(struct fid_ep *ep_fid, fi_addr_t coll_addr,
			    uint64_t flags, void *context)
{
	struct gba_ep *ep = gba_ep_of(ep_fid);
	struct gba_barrier_trigger *bt;
	struct gba_cntr *cntr;
	uint64_t threshold;
	int ret;

	if (!ep)
		return -FI_EINVAL;
	if (flags & ~GBA_BARRIER_FLAGS)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EBADFLAGS,
				    "fi_barrier2: flags 0x%llx not "
				    "supported\n",
				    (unsigned long long)flags);
	if (!(flags & FI_TRIGGER))
		return gba_barrier_post(ep, coll_addr, flags, context);

	ret = gba_trigger_parse(ep, context, &cntr, &threshold);
	if (ret)
		return ret;
	if (!ep->enabled)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EOPBADSTATE,
				    "barrier: endpoint not enabled\n");
	gba_lock_acquire(&ep->lock);
	ret = gba_mc_find(ep, coll_addr) ? 0 : -FI_EINVAL;
	gba_lock_release(&ep->lock);
	if (ret)
		return GBA_WARN_RET(FI_LOG_EP_DATA, ret,
				    "triggered barrier: coll_addr 0x%llx is "
				    "not a collective this endpoint joined\n",
				    (unsigned long long)coll_addr);
	bt = calloc(1, sizeof(*bt));
	if (!bt)
		return -FI_ENOMEM;
	bt->base.ep = ep;
	bt->base.run = gba_barrier_trigger_run;
	bt->base.context = context;
	bt->base.flags = (flags & ~FI_TRIGGER) | FI_COLLECTIVE;
	bt->base.slot = GBA_CNTR_SEND;
	bt->coll_addr = coll_addr;
	bt->flags = flags & ~FI_TRIGGER;
	bt->context = context;
	return gba_trigger_queue(cntr, threshold, &bt->base);
}

/*
 * gba_barrier - fi_barrier(3): fi_barrier2 with the endpoint's flags
 * (without FI_TRIGGER among them, straight to the queue).
 */
static ssize_t gba_barrier(struct fid_ep *ep_fid, fi_addr_t coll_addr,
			   void *context)
{
	struct gba_ep *ep = gba_ep_of(ep_fid);
	uint64_t flags;

	if (!ep)
		return -FI_EINVAL;
	/* an alias carries its own flags */
	flags = (ep_fid == &ep->view.ep_fid ? ep->view.tx_op_flags
				       : gba_ep_op_flags(ep_fid, true)) &
		GBA_EP_TX_OPFLAGS;
	if (flags & FI_TRIGGER)
		return gba_barrier2(ep_fid, coll_addr, flags, context);
	return gba_barrier_post(ep, coll_addr, flags, context);
}

/*
 * gba_coll_cancel - fi_cancel(3) of a queued barrier that has not arrived
 * (see gba_prov.h).  Returns 0 or -FI_ENOENT.
 */
ssize_t gba_coll_cancel(struct gba_ep *ep, void *context)
{
	struct gba_coll_done done;
	struct gba_mc *mc;
	uint64_t i, first;
	bool found = false;

	gba_lock_acquire(&ep->lock);
	TAILQ_FOREACH(mc, &ep->mcs, entry) {
		first = mc->head + (mc->in_flight ? 1 : 0);
		for (i = first; i != mc->tail; i++)
			if (mc->ops[i % GBA_MC_QUEUE].context == context)
				break;
		if (i == mc->tail)
			continue;
		done.context = context;
		done.flags = mc->ops[i % GBA_MC_QUEUE].flags;
		for (; i + 1 != mc->tail; i++)
			mc->ops[i % GBA_MC_QUEUE] =
				mc->ops[(i + 1) % GBA_MC_QUEUE];
		mc->tail--;
		gba_ep_pending_add(ep, -1);
		found = true;
		break;
	}
	gba_lock_release(&ep->lock);
	if (!found)
		return -FI_ENOENT;
	done.err = FI_ECANCELED;
	done.prov_errno = 0;
	done.error_info = 0;
	gba_coll_report(ep, &done, 1);
	return 0;
}

/* ---- data collectives (software, gba_coll_sw.c) ----------------------- */

/* True if @op reduces @dt (the allreduce table of fi_query_collective). */
static bool gba_coll_reduce_valid(enum fi_datatype dt, enum fi_op op)
{
	bool is_float = dt == FI_FLOAT || dt == FI_DOUBLE;

	if (!gba_atomic_dt_size(dt))
		return false;
	switch (op) {
	case FI_MIN:
	case FI_MAX:
	case FI_SUM:
	case FI_PROD:
	case FI_LOR:
	case FI_LAND:
	case FI_LXOR:
		return true;
	case FI_BOR:
	case FI_BAND:
	case FI_BXOR:
		return !is_float;
	default:
		return false;
	}
}

/*
 * Check and post collective @a on @coll_addr of @ep_fid.  Returns 0,
 * -FI_EINVAL (not joined, NULL buffers, count 0 or too large),
 * -FI_EOPNOTSUPP (datatype or operation), -FI_EOPBADSTATE, -FI_EAGAIN,
 * -FI_ENOMEM, -FI_EBADFLAGS.
 */
static ssize_t gba_coll_post(struct fid_ep *ep_fid, fi_addr_t coll_addr,
			     struct gba_swc_args *a)
{
	struct gba_ep *ep = gba_ep_of(ep_fid);
	bool reduce = a->coll == FI_REDUCE || a->coll == FI_ALLREDUCE ||
		      a->coll == FI_REDUCE_SCATTER;
	size_t size = gba_atomic_dt_size(a->datatype);
	struct gba_swc *swc;
	struct gba_mc *mc;

	if (!ep)
		return -FI_EINVAL;
	if (!ep->enabled)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EOPBADSTATE,
				    "collective: endpoint not enabled\n");
	if (a->flags & ~FI_COMPLETION)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EBADFLAGS,
				    "collective: flags 0x%llx not supported\n",
				    (unsigned long long)a->flags);
	if (!size)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EOPNOTSUPP,
				    "collective: datatype %s not supported\n",
				    fi_tostr(&a->datatype, FI_TYPE_ATOMIC_TYPE));
	if (reduce && !gba_coll_reduce_valid(a->datatype, a->op))
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EOPNOTSUPP,
				    "collective: %s on %s not supported\n",
				    fi_tostr(&a->op, FI_TYPE_ATOMIC_OP),
				    fi_tostr(&a->datatype, FI_TYPE_ATOMIC_TYPE));
	if (!a->count || a->count > GBA_MAX_MSG_SIZE / size)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "collective: count %zu (1..%zu)\n",
				    a->count, GBA_MAX_MSG_SIZE / size);
	gba_lock_acquire(&ep->lock);
	mc = gba_mc_find(ep, coll_addr);
	swc = mc ? mc->swc : NULL;
	gba_lock_release(&ep->lock);
	if (!swc)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "collective: coll_addr 0x%llx is not a "
				    "collective this endpoint joined\n",
				    (unsigned long long)coll_addr);
	if (a->count > GBA_MAX_MSG_SIZE / size / mc->member_count)
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "collective: count %zu too large for %u "
				    "members\n",
				    a->count, mc->member_count);
	if ((!a->buf && (a->coll != FI_SCATTER || a->root_addr == FI_ADDR_NOTAVAIL)) ||
	    (!a->result && a->coll != FI_BROADCAST && a->coll != FI_REDUCE &&
	     a->coll != FI_GATHER))
		return GBA_WARN_RET(FI_LOG_EP_DATA, -FI_EINVAL,
				    "collective: NULL buffer\n");
	return gba_swc_post(swc, a);
}

/*
 * fi_broadcast(3): @count elements of @buf at member @root_addr are
 * copied into @buf of every member.
 */
static ssize_t gba_broadcast(struct fid_ep *ep, void *buf, size_t count,
			     void *desc, fi_addr_t coll_addr,
			     fi_addr_t root_addr, enum fi_datatype datatype,
			     uint64_t flags, void *context)
{
	struct gba_swc_args a = {FI_BROADCAST, buf,	    buf,   count,
				 datatype,     FI_NOOP,	    root_addr, 0,
				 flags,	       context};

	return gba_coll_post(ep, coll_addr, &a);
}

/*
 * fi_alltoall(3): @buf holds @count elements, n blocks of count / n
 * (count must be a multiple of the n members); block j goes to member
 * j, whose @result receives it as its block i (i: the sender).
 */
static ssize_t gba_alltoall(struct fid_ep *ep, const void *buf, size_t count,
			    void *desc, void *result, void *result_desc,
			    fi_addr_t coll_addr, enum fi_datatype datatype,
			    uint64_t flags, void *context)
{
	struct gba_swc_args a = {FI_ALLTOALL, (void *)buf, result,
				 count,	      datatype,	   FI_NOOP,
				 FI_ADDR_NOTAVAIL, 0,	   flags,
				 context};

	return gba_coll_post(ep, coll_addr, &a);
}

/*
 * fi_allreduce(3): @count elements of every member's @buf combined with
 * @op (in member order) into every member's @result.
 */
static ssize_t gba_allreduce(struct fid_ep *ep, const void *buf, size_t count,
			     void *desc, void *result, void *result_desc,
			     fi_addr_t coll_addr, enum fi_datatype datatype,
			     enum fi_op op, uint64_t flags, void *context)
{
	struct gba_swc_args a = {FI_ALLREDUCE, (void *)buf, result,
				 count,	       datatype,    op,
				 FI_ADDR_NOTAVAIL, 0,	    flags,
				 context};

	return gba_coll_post(ep, coll_addr, &a);
}

/*
 * fi_allgather(3): @count elements of each member's @buf land at block
 * i (member i) of every member's @result (n * count elements).
 */
static ssize_t gba_allgather(struct fid_ep *ep, const void *buf, size_t count,
			     void *desc, void *result, void *result_desc,
			     fi_addr_t coll_addr, enum fi_datatype datatype,
			     uint64_t flags, void *context)
{
	struct gba_swc_args a = {FI_ALLGATHER, (void *)buf, result,
				 count,	       datatype,    FI_NOOP,
				 FI_ADDR_NOTAVAIL, 0,	    flags,
				 context};

	return gba_coll_post(ep, coll_addr, &a);
}

/*
 * fi_reduce_scatter(3): @count elements (a multiple of n) of every
 * member's @buf combined with @op; member i receives block i (count / n
 * elements) in @result.
 */
static ssize_t gba_reduce_scatter(struct fid_ep *ep, const void *buf,
				  size_t count, void *desc, void *result,
				  void *result_desc, fi_addr_t coll_addr,
				  enum fi_datatype datatype, enum fi_op op,
				  uint64_t flags, void *context)
{
	struct gba_swc_args a = {FI_REDUCE_SCATTER, (void *)buf, result,
				 count,		    datatype,	 op,
				 FI_ADDR_NOTAVAIL,  0,		 flags,
				 context};

	return gba_coll_post(ep, coll_addr, &a);
}

/* fi_reduce(3): fi_allreduce whose result only @root_addr receives. */
static ssize_t gba_reduce(struct fid_ep *ep, const void *buf, size_t count,
			  void *desc, void *result, void *result_desc,
			  fi_addr_t coll_addr, fi_addr_t root_addr,
			  enum fi_datatype datatype, enum fi_op op,
			  uint64_t flags, void *context)
{
	struct gba_swc_args a = {FI_REDUCE, (void *)buf, result, count,
				 datatype,  op,		 root_addr, 0,
				 flags,	    context};

	return gba_coll_post(ep, coll_addr, &a);
}

/*
 * fi_scatter(3): block i (@count elements) of @buf at @root_addr goes to
 * member i's @result (@buf is ignored elsewhere).
 */
static ssize_t gba_scatter(struct fid_ep *ep, const void *buf, size_t count,
			   void *desc, void *result, void *result_desc,
			   fi_addr_t coll_addr, fi_addr_t root_addr,
			   enum fi_datatype datatype, uint64_t flags,
			   void *context)
{
	struct gba_swc_args a = {FI_SCATTER, (void *)buf, result, count,
				 datatype,   FI_NOOP,	  root_addr, 0,
				 flags,	     context};

	return gba_coll_post(ep, coll_addr, &a);
}

/*
 * fi_gather(3): @count elements of each member's @buf land at block i
 * of @result at @root_addr.
 */
static ssize_t gba_gather(struct fid_ep *ep, const void *buf, size_t count,
			  void *desc, void *result, void *result_desc,
			  fi_addr_t coll_addr, fi_addr_t root_addr,
			  enum fi_datatype datatype, uint64_t flags,
			  void *context)
{
	struct gba_swc_args a = {FI_GATHER, (void *)buf, result, count,
				 datatype,  FI_NOOP,	 root_addr, 0,
				 flags,	    context};

	return gba_coll_post(ep, coll_addr, &a);
}

/* fi_collective msg form (fi_collective(3) marks it experimental). */
static ssize_t gba_no_msg(struct fid_ep *ep,
			  const struct fi_msg_collective *msg,
			  struct fi_ioc *resultv, void **result_desc,
			  size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

struct fi_ops_collective gba_ep_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = gba_barrier,
	.broadcast = gba_broadcast,
	.alltoall = gba_alltoall,
	.allreduce = gba_allreduce,
	.allgather = gba_allgather,
	.reduce_scatter = gba_reduce_scatter,
	.reduce = gba_reduce,
	.scatter = gba_scatter,
	.gather = gba_gather,
	.msg = gba_no_msg,
	.barrier2 = gba_barrier2,
};

/*
 * gba_query_collective - fi_query_collective(3).
 * @coll: FI_BARRIER (device, else software), FI_BROADCAST, FI_ALLTOALL,
 *        FI_ALLGATHER, FI_SCATTER, FI_GATHER (any datatype of the atomic
 *        table, attr->op FI_NOOP), FI_ALLREDUCE, FI_REDUCE,
 *        FI_REDUCE_SCATTER (attr->op FI_MIN..FI_BXOR as fi_atomic
 *        supports them on the datatype).
 * @attr: in: op and datatype; out: datatype_attr (count: elements one
 *        call takes, size: element bytes), max_members, mode 0.
 * @flags: 0, or FI_SCATTER with FI_REDUCE_SCATTER's table.
 * Returns 0, -FI_EINVAL (NULL attr), -FI_EOPNOTSUPP, -FI_ENOSYS.
 */
int gba_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			 struct fi_collective_attr *attr, uint64_t flags)
{
	size_t size;

	if (!attr)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "fi_query_collective: NULL attr\n");
	if (flags & ~FI_SCATTER)
		return -FI_ENOSYS;
	memset(&attr->datatype_attr, 0, sizeof(attr->datatype_attr));
	attr->mode = 0;
	attr->max_members = GBA_AV_MAX_SIZE;
	switch (coll) {
	case FI_BARRIER:
		if (attr->op != FI_NOOP && attr->op != 0)
			return -FI_EOPNOTSUPP;
		return 0;
	case FI_BROADCAST:
	case FI_ALLTOALL:
	case FI_ALLGATHER:
	case FI_SCATTER:
	case FI_GATHER:
		if (attr->op != FI_NOOP)
			return -FI_EOPNOTSUPP;
		break;
	case FI_ALLREDUCE:
	case FI_REDUCE:
	case FI_REDUCE_SCATTER:
		if (!gba_coll_reduce_valid(attr->datatype, attr->op))
			return -FI_EOPNOTSUPP;
		break;
	default:
		return -FI_ENOSYS;
	}
	size = gba_atomic_dt_size(attr->datatype);
	if (!size)
		return -FI_EOPNOTSUPP;
	attr->datatype_attr.size = size;
	attr->datatype_attr.count = GBA_MAX_MSG_SIZE / size;
	return 0;
}
