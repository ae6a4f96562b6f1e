/*
 * libfabric "gba" provider: deferred work queues (fi_trigger(3), "DEFERRED
 * WORK QUEUES"), fi_control(3) on a domain with FI_QUEUE_WORK,
 * FI_CANCEL_WORK and FI_FLUSH_WORK.
 *
 * A work request (struct fi_deferred_work) is copied at FI_QUEUE_WORK
 * into a record (struct gba_work): the operation's message, its iov /
 * ioc arrays and flags.  Data buffers are not touched until it fires
 * (FI_INJECT data is read then).  The record is a struct gba_trigger on
 * the triggering counter's threshold list (gba_trigger.c), counting the
 * counter's value plus its error value, so deferred work and FI_TRIGGER
 * operations fire in one threshold order from the same counter changes.
 *
 * When it fires, the operation is issued through the verbs' entry
 * points (gba_rma_submit, gba_atomic_submit, gba_msg_*_submit) with
 * GBA_FLAG_DEFERRED and the record as its context: its completion, on
 * whatever path it happens (direct, engine, matching), reaches
 * gba_work_end, which bumps the completion counter (its error value on
 * failure) and reports to the endpoint only with FI_COMPLETION.  An
 * operation refused for room (-FI_EAGAIN) waits on the domain's retry
 * list, resubmitted in order from endpoint progress: never lost.
 * Counter operations (FI_OP_CNTR_SET, FI_OP_CNTR_ADD) run at once.
 *
 * A record holds a reference on its completion counter and on the
 * target of a counter operation (fi_close of them: -FI_EBUSY) until it
 * ends, is canceled or is discarded.
 *
 * Locks: domain->work_lock (lists of the domain) may be held while
 * taking an endpoint's and a counter's lock (gba_trigger_unqueue), never
 * the other way round: records unlink themselves from the domain's list
 * with no other provider lock held.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gba_ep.h"

/* Flags a deferred transmit (send, RMA, atomic) accepts. */
#define GBA_WORK_TX_FLAGS                                                      \
	(FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_FENCE |            \
	 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_INJECT_COMPLETE |    \
	 FI_MATCH_COMPLETE | FI_COMMIT_COMPLETE | FI_MORE)
/* Flags a deferred receive accepts. */
#define GBA_WORK_RX_FLAGS (FI_COMPLETION | FI_MORE)

/* The gba counter behind @fid of @domain, or NULL (logged as @what). */
static struct gba_cntr *gba_work_cntr(struct gba_domain *domain,
				      struct fid_cntr *fid, const char *what)
{
	struct gba_cntr *cntr;

	if (!fid || fid->fid.fclass != FI_CLASS_CNTR) {
		FI_WARN(&gba_prov, FI_LOG_DOMAIN,
			"FI_QUEUE_WORK: %s is not a counter\n", what);
		return NULL;
	}
	cntr = container_of(fid, struct gba_cntr, cntr_fid);
	if (cntr->domain != domain) {
		FI_WARN(&gba_prov, FI_LOG_DOMAIN,
			"FI_QUEUE_WORK: %s belongs to another domain\n", what);
		return NULL;
	}
	return cntr;
}

/*
 * Copy @count entries of @src (@size bytes each) into @dst (room for
 * GBA_IOV_LIMIT).  0 or -FI_EINVAL (too many, NULL array) logged as
 * @what.
 */
static int gba_work_copy(void *dst, const void *src, size_t count, size_t size,
			 const char *what)
{
	if (count > GBA_IOV_LIMIT || (count && !src))
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "FI_QUEUE_WORK: %zu %s entries (limit "
				    "%d) or a NULL array\n",
				    count, what, GBA_IOV_LIMIT);
	if (count)
		memcpy(dst, src, count * size);
	return 0;
}

/*
 * The endpoint and flags of an endpoint operation: a gba endpoint of
 * @domain, enabled, @flags within @allowed.  0, -FI_EINVAL,
 * -FI_EOPBADSTATE, -FI_EBADFLAGS, -FI_ENOSYS (FI_MULTI_RECV).  Logged.
 */
static int gba_work_ep(struct gba_work *w, struct fid_ep *ep_fid,
		       uint64_t flags, uint64_t allowed)
{
	struct gba_ep *ep = ep_fid ? gba_ep_of(ep_fid) : NULL;

	if (!ep)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "FI_QUEUE_WORK: no gba endpoint\n");
	if (ep->domain != w->domain)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "FI_QUEUE_WORK: endpoint of another "
				    "domain\n");
	if (!ep->enabled)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EOPBADSTATE,
				    "FI_QUEUE_WORK: endpoint not enabled\n");
	if (flags & FI_MULTI_RECV)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_ENOSYS,
				    "FI_QUEUE_WORK: FI_MULTI_RECV receives "
				    "cannot be deferred\n");
	if (flags & ~allowed)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EBADFLAGS,
				    "FI_QUEUE_WORK: op flags 0x%llx not "
				    "supported (FI_TRIGGER included: the "
				    "work queue triggers it)\n",
				    (unsigned long long)(flags & ~allowed));
	w->ep = ep;
	w->flags = flags;
	return 0;
}

/* Copy a message (send/receive, tagged or not) of @w's type. */
static int gba_work_msg(struct gba_work *w, struct fid_ep *ep,
			const struct fi_msg_tagged *msg, uint64_t flags,
			bool recv)
{
	int ret;

	ret = gba_work_ep(w, ep, flags,
			  recv ? GBA_WORK_RX_FLAGS : GBA_WORK_TX_FLAGS);
	if (ret)
		return ret;
	ret = gba_work_copy(w->iov, msg->msg_iov, msg->iov_count,
			    sizeof(w->iov[0]), "iov");
	if (ret)
		return ret;
	w->m.msg = *msg;
	w->m.msg.msg_iov = w->iov;
	w->m.msg.desc = NULL;
	w->m.msg.context = w;
	w->op_context = msg->context;
	return 0;
}

/* Copy an RMA message. */
static int gba_work_rma(struct gba_work *w, const struct fi_op_rma *op)
{
	int ret;

	ret = gba_work_ep(w, op->ep, op->flags, GBA_WORK_TX_FLAGS);
	if (ret)
		return ret;
	ret = gba_work_copy(w->iov, op->msg.msg_iov, op->msg.iov_count,
			    sizeof(w->iov[0]), "iov");
	if (ret)
		return ret;
	if (op->msg.rma_iov_count != GBA_RMA_IOV_LIMIT || !op->msg.rma_iov)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "FI_QUEUE_WORK: %zu remote iovs (exactly "
				    "%d)\n",
				    op->msg.rma_iov_count, GBA_RMA_IOV_LIMIT);
	w->rma_iov = op->msg.rma_iov[0];
	w->m.rma = op->msg;
	w->m.rma.msg_iov = w->iov;
	w->m.rma.desc = NULL;
	w->m.rma.rma_iov = &w->rma_iov;
	w->m.rma.context = w;
	w->op_context = op->msg.context;
	return 0;
}

/*
 * Copy an atomic message and, for the fetching kinds, @fetch (results)
 * and @compare (compare values) when not NULL.
 */
static int gba_work_atomic(struct gba_work *w, struct fid_ep *ep,
			   const struct fi_msg_atomic *msg,
			   const struct fi_msg_fetch *fetch,
			   const struct fi_msg_compare *compare, uint64_t flags)
{
	int ret;

	ret = gba_work_ep(w, ep, flags, GBA_WORK_TX_FLAGS);
	if (ret)
		return ret;
	ret = gba_work_copy(w->ioc, msg->msg_iov, msg->iov_count,
			    sizeof(w->ioc[0]), "ioc");
	if (!ret && fetch)
		ret = gba_work_copy(w->res, fetch->msg_iov, fetch->iov_count,
				    sizeof(w->res[0]), "result ioc");
	if (!ret && compare)
		ret = gba_work_copy(w->cmp, compare->msg_iov,
				    compare->iov_count, sizeof(w->cmp[0]),
				    "compare ioc");
	if (ret)
		return ret;
	if (msg->rma_iov_count != GBA_RMA_IOV_LIMIT || !msg->rma_iov)
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "FI_QUEUE_WORK: %zu remote iocs (exactly "
				    "%d)\n",
				    msg->rma_iov_count, GBA_RMA_IOV_LIMIT);
	w->rma_ioc = msg->rma_iov[0];
	w->m.atomic = *msg;
	w->m.atomic.msg_iov = w->ioc;
	w->m.atomic.desc = NULL;
	w->m.atomic.rma_iov = &w->rma_ioc;
	w->res_count = fetch ? fetch->iov_count : 0;
	w->cmp_count = compare ? compare->iov_count : 0;
	w->m.atomic.context = w;
	w->op_context = msg->context;
	return 0;
}

/*
 * Fill @w from the operation of @work (its op_type's member of the op
 * union).  0 or a logged -FI_E*.
 */
static int gba_work_fill(struct gba_work *w, struct fi_deferred_work *work)
{
	struct fi_op_msg *m = work->op.msg;
	struct fi_op_tagged *t = work->op.tagged;
	struct fi_op_atomic *a = work->op.atomic;
	struct fi_op_fetch_atomic *f = work->op.fetch_atomic;
	struct fi_op_compare_atomic *c = work->op.compare_atomic;
	struct fi_msg_tagged msg;

	if (!work->op.msg) /* every member is a pointer */
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "FI_QUEUE_WORK: NULL operation\n");
	switch (work->op_type) {
	case FI_OP_RECV:
	case FI_OP_SEND:
		msg = (struct fi_msg_tagged){
			.msg_iov = m->msg.msg_iov,
			.iov_count = m->msg.iov_count,
			.addr = m->msg.addr,
			.context = m->msg.context,
			.data = m->msg.data,
		};
		return gba_work_msg(w, m->ep, &msg, m->flags,
				    work->op_type == FI_OP_RECV);
	case FI_OP_TRECV:
	case FI_OP_TSEND:
		return gba_work_msg(w, t->ep, &t->msg, t->flags,
				    work->op_type == FI_OP_TRECV);
	case FI_OP_READ:
	case FI_OP_WRITE:
		return gba_work_rma(w, work->op.rma);
	case FI_OP_ATOMIC:
		return gba_work_atomic(w, a->ep, &a->msg, NULL, NULL, a->flags);
	case FI_OP_FETCH_ATOMIC:
		return gba_work_atomic(w, f->ep, &f->msg, &f->fetch, NULL,
				       f->flags);
	case FI_OP_COMPARE_ATOMIC:
		return gba_work_atomic(w, c->ep, &c->msg, &c->fetch,
				       &c->compare, c->flags);
	case FI_OP_CNTR_SET:
	case FI_OP_CNTR_ADD:
		if (work->completion_cntr)
			return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
					    "FI_QUEUE_WORK: counter "
					    "operations take no "
					    "completion_cntr\n");
		w->target = gba_work_cntr(w->domain, work->op.cntr->cntr,
					  "fi_op_cntr.cntr");
		if (!w->target)
			return -FI_EINVAL;
		w->value = work->op.cntr->value;
		return 0;
	default:
		return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
				    "FI_QUEUE_WORK: unknown op_type %d\n",
				    (int)work->op_type);
	}
}

/* Counter event of a transmit of @type (an error's counter slot). */
static enum gba_cntr_slot gba_work_slot(enum fi_op_type type)
{
	switch (type) {
	case FI_OP_READ:
	case FI_OP_FETCH_ATOMIC:
	case FI_OP_COMPARE_ATOMIC:
		return GBA_CNTR_READ;
	case FI_OP_WRITE:
	case FI_OP_ATOMIC:
		return GBA_CNTR_WRITE;
	default:
		return GBA_CNTR_SEND;
	}
}

/*
 * Issue @w's operation (context: the record).  Returns as the verbs: 0
 * (issued: it completes through gba_work_end), -FI_EAGAIN, or another
 * -FI_E* (nothing issued).
 */
static ssize_t gba_work_issue(struct gba_work *w)
{
	struct fid_ep *ep = &w->ep->view.ep_fid;
	uint64_t flags = w->flags | GBA_FLAG_DEFERRED;
	bool tagged = w->type == FI_OP_TRECV || w->type == FI_OP_TSEND;

	switch (w->type) {
	case FI_OP_RECV:
	case FI_OP_TRECV:
		return gba_msg_recv_submit(ep, &w->m.msg, flags, tagged);
	case FI_OP_SEND:
	case FI_OP_TSEND:
		return gba_msg_send_submit(ep, &w->m.msg, flags, tagged);
	case FI_OP_READ:
	case FI_OP_WRITE:
		return gba_rma_submit(ep, w->type == FI_OP_WRITE, &w->m.rma,
				      flags);
	default: /* the atomics (counter operations never get here) */
		return gba_atomic_submit(ep, w->type, &w->m.atomic, w->cmp,
					 w->cmp_count, w->res, w->res_count,
					 flags);
	}
}

/*
 * Issue @w; an operation refused for another reason than room completes
 * in error (the completion counter's error value).  Returns false if
 * it got -FI_EAGAIN (@w is untouched and must wait).
 */
static bool gba_work_start(struct gba_work *w)
{
	ssize_t ret = gba_work_issue(w);
	uint64_t flags = w->flags | GBA_FLAG_DEFERRED;

	if (ret == -FI_EAGAIN)
		return false;
	if (!ret)
		return true;
	FI_INFO(&gba_prov, FI_LOG_EP_DATA,
		"deferred %s refused when it fired: %s\n",
		fi_tostr(&w->type, FI_TYPE_OP_TYPE), fi_strerror((int)-ret));
	if (w->type == FI_OP_RECV || w->type == FI_OP_TRECV)
		gba_ep_rx_complete(
			w->ep, (int)-ret, w,
			flags | FI_RECV |
				(w->type == FI_OP_TRECV ? FI_TAGGED : FI_MSG),
			0, NULL, 0, 0, FI_ADDR_NOTAVAIL, 0);
	else
		gba_ep_tx_error(w->ep, gba_work_slot(w->type), flags, w,
				(int)-ret, 0, NULL, 0);
	return true;
}

/* Unlink @w from the domain's queued list if it is still there. */
static void gba_work_unlist(struct gba_work *w)
{
	struct gba_domain *domain = w->domain;

	pthread_mutex_lock(&domain->work_lock);
	if (w->listed) {
		TAILQ_REMOVE(&domain->works, w, entry);
		w->listed = false;
	}
	pthread_mutex_unlock(&domain->work_lock);
}

/*
 * The trigger's run: the threshold is reached.  Counter operations
 * happen now; other operations are issued behind any work already
 * waiting for room, so that issue order follows threshold order.
 */
static void gba_work_run(struct gba_trigger *trig)
{
	struct gba_work *w = (struct gba_work *)trig;
	struct gba_domain *domain = w->domain;

	gba_work_unlist(w);
	FI_DBG(&gba_prov, FI_LOG_EP_DATA, "deferred %s %p fires\n",
	       fi_tostr(&w->type, FI_TYPE_OP_TYPE), (void *)w);
	if (w->type == FI_OP_CNTR_SET || w->type == FI_OP_CNTR_ADD) {
		if (w->type == FI_OP_CNTR_SET)
			fi_cntr_set(&w->target->cntr_fid, w->value);
		else
			fi_cntr_add(&w->target->cntr_fid, w->value);
		gba_work_free(w);
		return;
	}
	if (!atomic_load(&domain->nretry) && gba_work_start(w))
		return;
	pthread_mutex_lock(&domain->work_lock);
	TAILQ_INSERT_TAIL(&domain->retry, w, entry);
	atomic_fetch_add(&domain->nretry, 1);
	pthread_mutex_unlock(&domain->work_lock);
	gba_work_retry(domain);
}

/*
 * Resubmit the retry list in order until it is empty or its first entry
 * is refused again.  Returns true in the second case.
 */
static bool gba_work_drain(struct gba_domain *domain)
{
	struct gba_work *w;

	for (;;) {
		pthread_mutex_lock(&domain->work_lock);
		w = TAILQ_FIRST(&domain->retry);
		if (w)
			TAILQ_REMOVE(&domain->retry, w, entry);
		pthread_mutex_unlock(&domain->work_lock);
		if (!w)
			return false;
		if (!gba_work_start(w)) {
			pthread_mutex_lock(&domain->work_lock);
			TAILQ_INSERT_HEAD(&domain->retry, w, entry);
			pthread_mutex_unlock(&domain->work_lock);
			return true;
		}
		atomic_fetch_sub(&domain->nretry, 1);
	}
}

/*
 * gba_work_retry - resubmit the retry list in order (see gba_prov.h).
 * One thread at a time; work another thread appends while this one
 * finishes is drained too (nretry is read again after the flag drops).
 */
void gba_work_retry(struct gba_domain *domain)
{
	bool blocked = false;

	while (!blocked && atomic_load(&domain->nretry)) {
		if (atomic_exchange(&domain->retrying, true))
			return; /* the other thread drains it */
		blocked = gba_work_drain(domain);
		atomic_store(&domain->retrying, false);
	}
}

/* The trigger's discard: dropped without running (counter or ep closed). */
static void gba_work_discard(struct gba_trigger *trig)
{
	struct gba_work *w = (struct gba_work *)trig;

	gba_work_unlist(w);
	FI_INFO(&gba_prov, FI_LOG_DOMAIN,
		"deferred %s %p discarded (its counter or endpoint "
		"closed)\n",
		fi_tostr(&w->type, FI_TYPE_OP_TYPE), (void *)w->user);
	gba_work_free(w);
}

/*
 * Drop the work of @ep waiting for room (endpoint close): it can no
 * longer be issued.
 */
void gba_work_close_ep(struct gba_ep *ep)
{
	struct gba_domain *domain = ep->domain;
	struct gba_work *w, *next;

	pthread_mutex_lock(&domain->work_lock);
	for (w = TAILQ_FIRST(&domain->retry); w; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->ep != ep)
			continue;
		TAILQ_REMOVE(&domain->retry, w, entry);
		atomic_fetch_sub(&domain->nretry, 1);
		gba_work_drop(w);
	}
	pthread_mutex_unlock(&domain->work_lock);
}

/*
 * FI_QUEUE_WORK: validate and copy @work, then queue it on its
 * triggering counter (it runs at once if the threshold is reached).
 * Returns 0, -FI_EINVAL, -FI_EBADFLAGS, -FI_EOPBADSTATE, -FI_ENOSYS,
 * -FI_ENOMEM (logged).
 */
static int gba_work_queue(struct gba_domain *domain,
			  struct fi_deferred_work *work)
{
	struct gba_cntr *trig_cntr;
	struct gba_work *w;
	int ret;

	trig_cntr =
		gba_work_cntr(domain, work->triggering_cntr, "triggering_cntr");
	if (!trig_cntr)
		return -FI_EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -FI_ENOMEM;
	w->domain = domain;
	w->user = work;
	w->type = work->op_type;
	if (work->completion_cntr) {
		w->comp = gba_work_cntr(domain, work->completion_cntr,
					"completion_cntr");
		if (!w->comp) {
			ret = -FI_EINVAL;
			goto err;
		}
	}
	ret = gba_work_fill(w, work);
	if (ret)
		goto err;
	w->base.ep = w->ep;
	w->base.run = gba_work_run;
	w->base.discard = gba_work_discard;
	w->base.count_err = true;
	w->base.cntr = trig_cntr;
	w->base.context = w; /* no application context matches fi_cancel */
	w->base.flags = w->flags | GBA_FLAG_DEFERRED;
	w->base.slot = gba_work_slot(w->type);

	/* the counters it completes to cannot close before it ends */
	if (w->comp)
		atomic_fetch_add(&w->comp->ref, 1);
	if (w->target)
		atomic_fetch_add(&w->target->ref, 1);
	/* any endpoint may change these now: waits progress them all */
	atomic_store(&trig_cntr->domain_progress, true);
	if (w->comp)
		atomic_store(&w->comp->domain_progress, true);
	if (w->target)
		atomic_store(&w->target->domain_progress, true);

	pthread_mutex_lock(&domain->work_lock);
	TAILQ_INSERT_TAIL(&domain->works, w, entry);
	w->listed = true;
	pthread_mutex_unlock(&domain->work_lock);
	FI_DBG(&gba_prov, FI_LOG_DOMAIN,
	       "deferred %s %p queued at threshold %llu\n",
	       fi_tostr(&w->type, FI_TYPE_OP_TYPE), (void *)work,
	       (unsigned long long)work->threshold);
	return gba_trigger_queue(trig_cntr, work->threshold, &w->base);
err:
	free(w);
	return ret;
}

/*
 * FI_CANCEL_WORK (@work: a queued request) and FI_FLUSH_WORK (@work
 * NULL: every queued request of the domain; else those waiting on
 * work->triggering_cntr, all of them if that is NULL).  Canceled work
 * never runs and reports nothing.  Returns the number removed.
 */
static size_t gba_work_remove(struct gba_domain *domain,
			      struct fi_deferred_work *work, bool flush)
{
	struct gba_work *w, *next;
	size_t n = 0;

	pthread_mutex_lock(&domain->work_lock);
	for (w = TAILQ_FIRST(&domain->works); w; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (flush ? work && work->triggering_cntr &&
				    &w->base.cntr->cntr_fid !=
					    work->triggering_cntr
			  : w->user != work)
			continue;
		if (!gba_trigger_unqueue(&w->base))
			continue; /* firing now: it unlists itself */
		TAILQ_REMOVE(&domain->works, w, entry);
		gba_work_free(w);
		n++;
		if (!flush)
			break;
	}
	pthread_mutex_unlock(&domain->work_lock);
	return n;
}

/*
 * gba_domain_control - fi_control(3) on a domain (see gba_prov.h):
 * FI_QUEUE_WORK and FI_CANCEL_WORK take a struct fi_deferred_work;
 * FI_FLUSH_WORK takes NULL or one naming a triggering_cntr.  Returns
 * 0, -FI_EINVAL, -FI_ENOENT (FI_CANCEL_WORK of work not queued: it has
 * fired or never was), -FI_ENOSYS (other commands), and FI_QUEUE_WORK's
 * errors.
 */
int gba_domain_control(struct fid *fid, int command, void *arg)
{
	struct gba_domain *domain =
		container_of(fid, struct gba_domain, domain_fid.fid);
	struct fi_deferred_work *work = arg;
	size_t n;

	switch (command) {
	case FI_QUEUE_WORK:
		if (!work)
			return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
					    "FI_QUEUE_WORK: NULL work\n");
		return gba_work_queue(domain, work);
	case FI_CANCEL_WORK:
		if (!work)
			return GBA_WARN_RET(FI_LOG_DOMAIN, -FI_EINVAL,
					    "FI_CANCEL_WORK: NULL work\n");
		if (gba_work_remove(domain, work, false))
			return 0;
		FI_INFO(&gba_prov, FI_LOG_DOMAIN,
			"FI_CANCEL_WORK: %p is not queued (fired, canceled or "
			"never queued)\n",
			(void *)work);
		return -FI_ENOENT;
	case FI_FLUSH_WORK:
		n = gba_work_remove(domain, work, true);
		FI_INFO(&gba_prov, FI_LOG_DOMAIN,
			"FI_FLUSH_WORK: %zu queued requests canceled\n", n);
		return 0;
	default:
		return gba_no_control(fid, command, arg);
	}
}

/* gba_work_init - the domain's lists (fi_domain).  0 or -FI_ENOMEM. */
int gba_work_init(struct gba_domain *domain)
{
	TAILQ_INIT(&domain->works);
	TAILQ_INIT(&domain->retry);
	atomic_init(&domain->nretry, 0);
	atomic_init(&domain->retrying, false);
	return pthread_mutex_init(&domain->work_lock, NULL) ? -FI_ENOMEM : 0;
}

/*
 * gba_work_fini - domain close.  Every counter and endpoint is closed
 * by then, and with them every record (drains, gba_work_close_ep).
 */
void gba_work_fini(struct gba_domain *domain)
{
	pthread_mutex_destroy(&domain->work_lock);
}
