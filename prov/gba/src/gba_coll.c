/*
 * libfabric "gba" provider: collectives on the GBA device
 * (fi_collective(3)).
 *
 * fi_join_collective maps an AV set onto one hardware group of the device
 * (doc/design.md section 3, protocol step 1, done by the core library's
 * gba_group_join): every member passes the same rendezvous key, a hash of
 * the set's member addresses in set order and of how many times this
 * endpoint joined that same list before, so that members that join the
 * same sets in the same order meet in the same groups.  The member id is
 * the endpoint's position in the set.  The join completes at once: the
 * FI_JOIN_COMPLETE event is queued on the endpoint's EQ before
 * fi_join_collective returns.
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gba_prov.h"
#include "rdma/fi_gba_ext.h"

/* One queued barrier. */
struct gba_barrier_op {
	void *context;
	uint64_t flags;
};

/* Barriers one collective queues (GBA_TX_SIZE, the tx_attr->size). */
#define GBA_MC_QUEUE GBA_TX_SIZE
/*
 * Progress reads the head's release flag itself; gba_group_test (the
 * switch's error flags, lost peers) runs on the first unreleased poll of
 * a barrier and on every GBA_TEST_POLLS-th after.
 */
#define GBA_TEST_POLLS 16
/* Polls of an unreleased barrier between clock reads (timeout). */
#define GBA_TIMEOUT_POLLS 1024
/*
 * Polls of an unreleased barrier before progress starts yielding the CPU
 * (sched_yield once per progress call), so that more processes than
 * cores make progress (doc/design.md section 3, "Waiting").  A barrier on
 * idle cores is released well within this budget: no syscall.  A group
 * with more members than this host has online CPUs is oversubscribed on
 * the emulated device: its members stop spinning at once (as Open MPI's
 * mpi_yield_when_idle does when it detects oversubscription), and the
 * core library's gba_group_should_yield decides each time whether a
 * yield can help: it cannot when every member still to arrive runs on
 * another CPU, and then the member keeps polling.
 */
#define GBA_SPIN_POLLS 128

/* A joined collective (fi_join_collective's struct fid_mc). */
struct gba_mc {
	struct fid_mc mc_fid; /* mc_fid.fi_addr: the coll_addr */
	struct gba_ep *ep;
	struct gba_av_set *set;
	struct gba_group *grp; /* NULL: barriers in software */
	enum fi_gba_barrier_path path; /* why (fi_gba_mc_attr.barrier) */
	struct gba_swc *swc;   /* the other collectives (gba_coll_sw.c) */
	uint32_t member_id;
	uint32_t member_count;
	TAILQ_ENTRY(gba_mc) entry; /* ep->mcs */
	/* Queue of barriers; the one at @head has arrived if in_flight. */
	struct gba_barrier_op ops[GBA_MC_QUEUE];
	uint64_t head, tail;
	bool in_flight;
	uint32_t seq;	     /* sequence of the head's arrival */
	const volatile uint64_t *flag; /* our release flag (gba_group_flag) */
	uint64_t arrive_ms;  /* when it arrived (timeout) */
	uint32_t polls;	     /* since the last clock read */
	uint32_t waits;	     /* unreleased polls of the head */
	uint32_t spin_polls; /* waits before yielding */
	int error;	     /* sticky: positive FI_E* or 0 */
	int prov_errno;	     /* positive core errno */
	uint64_t error_info; /* ERROR_INFO when it failed */
};

/* How many times this endpoint joined a given member list. */
struct gba_join_count {
	uint64_t list_hash;
	uint64_t joins;
	UT_hash_handle hh;
};

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

static struct fi_ops gba_mc_fi_ops;

/* The collective of @ep whose coll_addr is @coll_addr, or NULL.  Locked. */
static struct gba_mc *gba_mc_find(struct gba_ep *ep, fi_addr_t coll_addr)
{
	struct gba_mc *mc;

	TAILQ_FOREACH(mc, &ep->mcs, entry)
		if (mc->mc_fid.fi_addr == coll_addr)
			return mc;
	return NULL;
}

/*
 * ep->pending changes only under the endpoint lock (or in the single
 * thread FI_THREAD_DOMAIN allows): a plain read-modify-write, no locked
 * instruction.  Progress reads it without the lock (a hint).
 */
static inline void gba_ep_pending_add(struct gba_ep *ep, int n)
{
	atomic_store_explicit(
		&ep->pending,
		atomic_load_explicit(&ep->pending, memory_order_relaxed) + n,
		memory_order_relaxed);
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

	mc->error = -gba_errno_to_fi(err);
	mc->prov_errno = -err;
	if (!gba_group_diag(mc->grp, &diag))
		mc->error_info = diag.error_info;
	FI_WARN(&gba_prov, FI_LOG_EP_DATA,
		"barrier on group %u (member %u of %u, sequence %u) failed: "
		"%s; ERROR_INFO 0x%llx (%s); the collective is unusable, "
		"close it and join again\n",
		diag.index, mc->member_id, mc->member_count, mc->seq,
		strerror(-err), (unsigned long long)mc->error_info,
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
	if (mc->waits % GBA_TEST_POLLS)
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

/* ---- join, leave ------------------------------------------------------ */

/* Leave @mc's group and free it (already off the endpoint's list). */
static void gba_mc_free(struct gba_mc *mc)
{
	if (mc->grp)
		gba_group_leave(mc->grp);
	if (mc->swc)
		gba_swc_close(mc->swc);
	atomic_fetch_sub(&mc->set->ref, 1);
	free(mc);
}

/*
 * fi_close(3) on a joined collective: -FI_EBUSY while barriers are queued
 * or in flight (the device holds this member's arrival); otherwise the
 * group is left (the last member resets and frees it).  Returns 0 or
 * -FI_EBUSY.
 */
static int gba_mc_close(struct fid *fid)
{
	struct gba_mc *mc = container_of(fid, struct gba_mc, mc_fid.fid);
	struct gba_ep *ep = mc->ep;

	gba_lock_acquire(&ep->lock);
	if (mc->head != mc->tail || gba_swc_busy(mc->swc)) {
		gba_lock_release(&ep->lock);
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EBUSY,
				    "collective has operations in flight: "
				    "progress the CQ until they complete\n");
	}
	TAILQ_REMOVE(&ep->mcs, mc, entry);
	gba_lock_release(&ep->lock);
	FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
		"left collective (member %u of %u)\n", mc->member_id,
		mc->member_count);
	gba_mc_free(mc);
	return 0;
}

/*
 * gba_mc_query - fi_gba_mc_ops.query (<rdma/fi_gba_ext.h>): where @mc_fid's
 * barriers run and, on the device, its group's RELEASE_SEQ.  Returns 0 or
 * -FI_EINVAL.
 */
static int gba_mc_query(struct fid_mc *mc_fid, struct fi_gba_mc_attr *attr)
{
	struct gba_group_diag diag;
	struct gba_mc *mc;

	if (!mc_fid || !attr || mc_fid->fid.fclass != FI_CLASS_MC)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_gba_mc_ops query: bad arguments\n");
	mc = container_of(mc_fid, struct gba_mc, mc_fid);
	memset(attr, 0, sizeof(*attr));
	attr->member_id = mc->member_id;
	attr->member_count = mc->member_count;
	attr->barrier = mc->path;
	if (!mc->grp || gba_group_diag(mc->grp, &diag))
		return 0;
	attr->group_index = diag.index;
	attr->release_seq = diag.release_seq;
	gba_lock_acquire(&mc->ep->lock);
	attr->barriers = mc->head;
	gba_lock_release(&mc->ep->lock);
	return 0;
}

static struct fi_gba_mc_ops gba_mc_ext_ops = {
	.size = sizeof(struct fi_gba_mc_ops),
	.query = gba_mc_query,
};

/*
 * gba_mc_ops_open - fi_open_ops(3) on a joined collective:
 * FI_GBA_MC_OPS_1 returns struct fi_gba_mc_ops.  Returns 0, -FI_EINVAL,
 * -FI_ENOSYS (other names).
 */
static int gba_mc_ops_open(struct fid *fid, const char *name, uint64_t flags,
			   void **ops, void *context)
{
	if (!name || !ops)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_open_ops: bad arguments\n");
	if (strcmp(name, FI_GBA_MC_OPS_1))
		return gba_no_ops_open(fid, name, flags, ops, context);
	*ops = &gba_mc_ext_ops;
	return 0;
}

static struct fi_ops gba_mc_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_mc_close,
	.bind = gba_no_bind,
	.control = gba_no_control,
	.ops_open = gba_mc_ops_open,
};

/*
 * gba_ep_close_mcs - endpoint close: leave every collective.  Barriers
 * still queued are dropped without completions (the endpoint is going).
 */
void gba_ep_close_mcs(struct gba_ep *ep)
{
	struct gba_mc *mc;

	for (;;) {
		gba_lock_acquire(&ep->lock);
		mc = TAILQ_FIRST(&ep->mcs);
		if (mc) {
			TAILQ_REMOVE(&ep->mcs, mc, entry);
			gba_ep_pending_add(ep, -(int)(mc->tail - mc->head));
		}
		gba_lock_release(&ep->lock);
		if (!mc)
			break;
		if (mc->head != mc->tail)
			FI_WARN(&gba_prov, FI_LOG_EP_CTRL,
				"endpoint closed with %llu barriers in "
				"flight: dropped\n",
				(unsigned long long)(mc->tail - mc->head));
		gba_mc_free(mc);
	}
}

/* gba_coll_fini - free the join counts (endpoint close). */
void gba_coll_fini(struct gba_ep *ep)
{
	struct gba_join_count *jc, *tmp;

	HASH_ITER(hh, ep->join_counts, jc, tmp) {
		HASH_DEL(ep->join_counts, jc);
		free(jc);
	}
}

/*
 * Rendezvous key of the next join of the member list @addrs (@count
 * addresses) by @ep: the list's hash, salted with the number of earlier
 * joins of the same list.  Never 0.  *@jcp is the list's count, to be
 * taken back if the join fails.  Locked.  Returns 0 or -FI_ENOMEM.
 */
static int gba_join_key(struct gba_ep *ep, const struct gba_addr *addrs,
			size_t count, uint64_t *key,
			struct gba_join_count **jcp)
{
	uint64_t list_hash = gba_addr_hash(addrs, count, 0);
	struct gba_join_count *jc;

	HASH_FIND(hh, ep->join_counts, &list_hash, sizeof(list_hash), jc);
	if (!jc) {
		jc = calloc(1, sizeof(*jc));
		if (!jc)
			return -FI_ENOMEM;
		jc->list_hash = list_hash;
		HASH_ADD(hh, ep->join_counts, list_hash, sizeof(list_hash), jc);
	}
	jc->joins++;
	*jcp = jc;
	*key = gba_addr_hash(addrs, count, jc->joins);
	if (!*key)
		*key = 1;
	return 0;
}

/*
 * The member addresses of @set in set order and @ep's position among them.
 * Returns 0, -FI_EINVAL (a member not in the AV, @ep not a member),
 * -FI_ENOMEM.  *@addrs is freed by the caller.
 */
static int gba_join_members(struct gba_ep *ep, struct gba_av_set *set,
			    struct gba_addr **addrs, uint32_t *member_id)
{
	const struct gba_addr *a;
	bool found = false;
	size_t i;

	*addrs = calloc(set->count, sizeof(**addrs));
	if (!*addrs)
		return -FI_ENOMEM;
	for (i = 0; i < set->count; i++) {
		a = gba_av_addr(set->av, set->members[i]);
		if (!a) {
			free(*addrs);
			return GBA_WARN_RET(
				FI_LOG_EP_CTRL, -FI_EINVAL,
				"join: set member fi_addr %llu "
				"was removed from the AV\n",
				(unsigned long long)set->members[i]);
		}
		(*addrs)[i] = *a;
		if (!found && gba_addr_equal(a, &ep->addr)) {
			*member_id = (uint32_t)i;
			found = true;
		}
	}
	if (!found) {
		free(*addrs);
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "join: this endpoint is not a member of "
				    "the AV set\n");
	}
	return 0;
}

/* Check the arguments of a join; the set to join in *@setp. */
static int gba_join_check(struct gba_ep *ep, const void *addr, uint64_t flags,
			  struct fid_mc **mc, struct gba_av_set **setp)
{
	const struct fi_collective_addr *caddr = addr;
	struct gba_av_set *set;

	if (!addr || !mc)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_join: NULL argument\n");
	if (!(flags & FI_COLLECTIVE))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_ENOSYS,
				    "fi_join: multicast groups are not "
				    "supported (use fi_join_collective)\n");
	if (flags & ~FI_COLLECTIVE)
		return GBA_WARN_RET(
			FI_LOG_EP_CTRL, -FI_EBADFLAGS,
			"fi_join_collective: flags 0x%llx not "
			"supported\n",
			(unsigned long long)(flags & ~FI_COLLECTIVE));
	if (!(ep->caps & FI_COLLECTIVE))
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EOPNOTSUPP,
				    "fi_join_collective: endpoint opened "
				    "without FI_COLLECTIVE\n");
	if (!ep->enabled)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EOPBADSTATE,
				    "fi_join_collective: endpoint not "
				    "enabled\n");
	if (!ep->eq)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_ENOEQ,
				    "fi_join_collective: no EQ bound (the "
				    "join completes on the EQ)\n");
	set = caddr->set
		      ? gba_av_set_from_addr((fi_addr_t)(uintptr_t)caddr->set)
		      : gba_av_set_from_addr(caddr->coll_addr);
	if (!set)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_join_collective: no gba AV set\n");
	if (set->av != ep->av)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_join_collective: the set's AV is not "
				    "the endpoint's\n");
	if (!set->count)
		return GBA_WARN_RET(FI_LOG_EP_CTRL, -FI_EINVAL,
				    "fi_join_collective: empty AV set\n");
	*setp = set;
	return 0;
}

/* Unreleased polls before yielding for a group of @members (see above). */
static uint32_t gba_mc_spin_polls(uint32_t members)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus > 0 && members > (uint32_t)cpus ? 1 : GBA_SPIN_POLLS;
}

/*
 * Attach to the device group of @gattr, or decide that the barrier runs
 * in software (*@grp NULL, logged): FI_GBA_OFFLOAD=0, more members than
 * the device takes, no device, or every hardware group in use.  Every
 * member of a set meets the same conditions (same parameters, same
 * device), so all of them decide alike.  Returns 0 or a negative -FI_E*
 * for other device errors (-FI_EADDRINUSE: that member is attached).
 */
static int gba_join_device(struct gba_ep *ep, struct gba_group_attr *gattr,
			   struct gba_group **grp,
			   enum fi_gba_barrier_path *path)
{
	struct gba_dev *dev;
	int ret;

	*grp = NULL;
	*path = FI_GBA_BARRIER_DEVICE;
	if (!gba_params.offload) {
		*path = FI_GBA_BARRIER_SW_DISABLED;
		FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
			"barrier in software: FI_GBA_OFFLOAD=0\n");
		return 0;
	}
	if (gattr->member_count > GBA_MAX_MEMBERS) {
		*path = FI_GBA_BARRIER_SW_MEMBERS;
		FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
			"barrier in software: %u members (the device takes "
			"%d)\n",
			gattr->member_count, GBA_MAX_MEMBERS);
		return 0;
	}
	ret = gba_domain_dev(ep->domain, &dev);
	if (ret) {
		*path = FI_GBA_BARRIER_SW_NO_DEVICE;
		FI_WARN(&gba_prov, FI_LOG_EP_CTRL,
			"barrier in software: no GBA device (%s)\n",
			fi_strerror(-ret));
		return 0;
	}
	ret = gba_group_join(dev, gattr, grp);
	if (ret == -ENOSPC) {
		*grp = NULL;
		*path = FI_GBA_BARRIER_SW_NO_GROUP;
		FI_WARN(&gba_prov, FI_LOG_EP_CTRL,
			"barrier in software: all hardware groups in use\n");
		return 0;
	}
	if (ret) {
		*grp = NULL;
		return GBA_WARN_RET(FI_LOG_EP_CTRL, gba_errno_to_fi(ret),
				    "fi_join_collective: device group for %u "
				    "members: %s\n",
				    gattr->member_count, strerror(-ret));
	}
	return 0;
}

/* Queue FI_JOIN_COMPLETE for @mc on the endpoint's EQ. */
static int gba_join_complete(struct gba_mc *mc, void *context)
{
	struct fi_eq_entry entry = {
		.fid = &mc->mc_fid.fid,
		.context = context,
	};

	return gba_eq_write_event(mc->ep->eq, FI_JOIN_COMPLETE, &entry,
				  sizeof(entry), 0);
}

/*
 * gba_ep_join - fi_join_collective(3) (fi_join with FI_COLLECTIVE).
 * @addr: struct fi_collective_addr: the AV set to join (set, or coll_addr
 *        from fi_av_set_addr when set is NULL).  The endpoint must be a
 *        member; the set must be on the endpoint's AV.
 * @flags: FI_COLLECTIVE (added by fi_join_collective), nothing else.
 * @mc: receives the collective; fi_mc_addr() of it is the coll_addr of
 *      fi_barrier.  FI_JOIN_COMPLETE (fid = the mc, @context) is queued on
 *      the endpoint's EQ before this returns.
 * Returns 0, -FI_EINVAL (arguments, not a member, more than 708 members),
 * -FI_EBADFLAGS, -FI_ENOEQ, -FI_EOPBADSTATE (not enabled), -FI_ENOSPC
 * (every device group in use), -FI_EADDRINUSE (that member is attached
 * already), -FI_EOPNOTSUPP (FI_GBA_OFFLOAD=0), -FI_EAGAIN (EQ full),
 * -FI_ENODEV (no device), -FI_ENOMEM, -FI_ENOSYS (multicast join).
 */
int gba_ep_join(struct fid_ep *ep_fid, const void *addr, uint64_t flags,
		struct fid_mc **mcp, void *context)
{
	struct gba_ep *ep = container_of(ep_fid, struct gba_ep, view.ep_fid);
	struct gba_group_attr gattr = {0};
	struct gba_join_count *jc = NULL;
	struct gba_addr *addrs = NULL;
	struct gba_av_set *set;
	struct gba_mc *mc;
	int ret;

	ret = gba_join_check(ep, addr, flags, mcp, &set);
	if (ret)
		return ret;
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return -FI_ENOMEM;

	gba_lock_acquire(&set->av->lock);
	ret = gba_join_members(ep, set, &addrs, &gattr.member_id);
	gattr.member_count = (uint32_t)set->count;
	gba_lock_release(&set->av->lock);
	if (ret)
		goto err_free;

	gba_lock_acquire(&ep->lock);
	ret = gba_join_key(ep, addrs, gattr.member_count, &gattr.key, &jc);
	gba_lock_release(&ep->lock);
	free(addrs);
	if (ret)
		goto err_free;

	ret = gba_join_device(ep, &gattr, &mc->grp, &mc->path);
	if (!ret)
		ret = gba_swc_open(ep, gattr.key, set, gattr.member_id,
				   &mc->swc);
	if (ret) {
		if (mc->grp)
			gba_group_leave(mc->grp);
		gba_lock_acquire(&ep->lock);
		jc->joins--;
		gba_lock_release(&ep->lock);
		goto err_free;
	}

	mc->mc_fid.fid.fclass = FI_CLASS_MC;
	mc->mc_fid.fid.context = context;
	mc->mc_fid.fid.ops = &gba_mc_fi_ops;
	mc->mc_fid.fi_addr = (fi_addr_t)(uintptr_t)mc;
	mc->ep = ep;
	mc->set = set;
	mc->member_id = gattr.member_id;
	mc->member_count = gattr.member_count;
	mc->spin_polls = gba_mc_spin_polls(mc->member_count);
	if (mc->grp)
		mc->flag = gba_group_flag(mc->grp, NULL);
	atomic_fetch_add(&set->ref, 1);

	gba_lock_acquire(&ep->lock);
	TAILQ_INSERT_TAIL(&ep->mcs, mc, entry);
	gba_lock_release(&ep->lock);

	ret = gba_join_complete(mc, context);
	if (ret) {
		gba_lock_acquire(&ep->lock);
		TAILQ_REMOVE(&ep->mcs, mc, entry);
		gba_lock_release(&ep->lock);
		gba_mc_free(mc);
		return GBA_WARN_RET(FI_LOG_EP_CTRL, ret,
				    "fi_join_collective: EQ full\n");
	}
	FI_INFO(&gba_prov, FI_LOG_EP_CTRL,
		"joined collective: member %u of %u, key 0x%llx, barrier %s\n",
		mc->member_id, mc->member_count, (unsigned long long)gattr.key,
		mc->grp ? "on the device" : "in software");
	*mcp = &mc->mc_fid;
	return 0;

err_free:
	free(mc);
	return ret;
}

/*
 * gba_domain_dev - the domain's GBA device, opened on first use with
 * gba_dev_open(FI_GBA_DEVICE).  Returns 0 or the mapped error
 * (-FI_ENODEV, -FI_EACCES, -FI_EIO, -FI_ENOMEM, -FI_EINVAL).
 */
int gba_domain_dev(struct gba_domain *domain, struct gba_dev **devp)
{
	struct gba_dev_attr attr;
	int ret = 0;

	if (!domain || !devp)
		return -FI_EINVAL;
	gba_lock_acquire(&domain->lock);
	if (!domain->dev) {
		ret = gba_dev_open(gba_params.device, &domain->dev);
		if (ret) {
			domain->dev = NULL;
			FI_WARN(&gba_prov, FI_LOG_DOMAIN,
				"gba_dev_open(%s): %s\n",
				gba_params.device ? gba_params.device
						  : "default",
				fi_strerror(-gba_errno_to_fi(ret)));
			ret = gba_errno_to_fi(ret);
		} else if (!gba_dev_query(domain->dev, &attr)) {
			FI_INFO(&gba_prov, FI_LOG_DOMAIN,
				"GBA device %s (%s): %u groups, %u members\n",
				attr.path ? attr.path : "?",
				attr.backend ? attr.backend : "?",
				attr.num_groups, attr.max_members);
		}
	}
	*devp = domain->dev;
	gba_lock_release(&domain->lock);
	return ret;
}
