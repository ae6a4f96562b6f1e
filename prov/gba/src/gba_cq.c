/*
 * libfabric "gba" provider: completion queues (fi_cq(3)).
 *
 * The CQ is a ring of preallocated entries, sized at open.  An error
 * completion takes one ring slot (a marker, so it keeps its place in the
 * completion order) and one slot of a smaller ring of error details.
 * Writes (gba_cq_write, hot path) allocate nothing and lock only when the
 * domain's threading model needs it.  Reads progress the endpoints bound
 * to the CQ first (manual progress of barriers in flight).
 *
 * A completion is never lost: one that finds the ring full (an operation
 * started while there was room completes after other completions filled
 * it, or receives arrive faster than the application reads) goes to an
 * overflow list, allocated, in order; while the list is not empty every
 * new completion joins it, and reads move its entries into the ring as
 * they make room (libfabric's util CQ does the same).  Endpoints still
 * check gba_cq_has_space, which counts the list, before starting an
 * operation (FI_RM_ENABLED), so the list only absorbs such bursts.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gba_obj.h"

struct gba_cq_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	fi_addr_t src;
	bool is_err; /* marker: details in the error ring */
};

struct gba_cq_err {
	struct fi_cq_err_entry e; /* err_data/err_data_size unused */
	size_t err_data_size;
	uint8_t err_data[GBA_MAX_ERR_DATA];
};

/* Error details kept at once: min(CQ size, this). */
#define GBA_CQ_ERR_MAX 256

/* A completion that found the CQ full (gba_cq_over_add). */
struct gba_cq_over {
	struct gba_cq_over *next;
	struct gba_cq_entry e;
	struct gba_cq_err err; /* e.is_err: the details */
};

/* Ring slot of a monotonically increasing position. */
static inline struct gba_cq_entry *gba_cq_slot(struct gba_cq *cq, uint64_t pos)
{
	return &cq->ring[pos & cq->mask];
}

/* Entries (completions and error markers) in @cq's ring. */
static inline size_t gba_cq_ring_used(struct gba_cq *cq)
{
	return (size_t)(atomic_load_explicit(&cq->tail, memory_order_acquire) -
			atomic_load_explicit(&cq->head, memory_order_relaxed));
}

/* Entries queued in @cq: the ring and the overflow list. */
static inline size_t gba_cq_used(struct gba_cq *cq)
{
	return gba_cq_ring_used(cq) +
	       atomic_load_explicit(&cq->nover, memory_order_acquire);
}

/*
 * Run the progress of every source (endpoint) bound to @cq, once each (an
 * endpoint bound for both directions is listed twice, adjacent); *pending
 * if busy.
 */
static void gba_cq_progress(struct gba_cq *cq, bool *pending)
{
	gba_lock_acquire(&cq->ep_lock);
	gba_progress_srcs_run(&cq->srcs, pending);
	gba_lock_release(&cq->ep_lock);
}

/*
 * gba_cq_has_space - true if @n more completions (successful or not)
 * fit.  Endpoints check it before starting an operation so that its
 * completion can always be written (FI_RM_ENABLED).
 */
bool gba_cq_has_space(struct gba_cq *cq, size_t n)
{
	uint64_t err_used = __atomic_load_n(&cq->err_tail, __ATOMIC_RELAXED) -
			    __atomic_load_n(&cq->err_head, __ATOMIC_RELAXED);

	/*
	 * No lock: as with one, another writer may take the room before
	 * the caller completes; a reader only frees room meanwhile.
	 */
	return gba_cq_used(cq) + n <= cq->size &&
	       (size_t)err_used + n <= cq->err_size;
}

/* Room in the ring for @e (and its details); cq->lock held. */
static inline bool gba_cq_ring_fits(struct gba_cq *cq,
				    const struct gba_cq_entry *e)
{
	return atomic_load_explicit(&cq->tail, memory_order_relaxed) -
			       atomic_load_explicit(&cq->head,
						    memory_order_acquire) <
		       cq->size &&
	       (!e->is_err || cq->err_tail - cq->err_head < cq->err_size);
}

/* Put @e (details @err when an error) into the ring; cq->lock held. */
static inline void gba_cq_ring_put(struct gba_cq *cq,
				   const struct gba_cq_entry *e,
				   const struct gba_cq_err *err)
{
	uint64_t tail = atomic_load_explicit(&cq->tail, memory_order_relaxed);

	if (e->is_err) {
		struct gba_cq_err *ee = &cq->errs[cq->err_tail % cq->err_size];

		ee->e = err->e;
		ee->err_data_size = err->err_data_size;
		memcpy(ee->err_data, err->err_data, err->err_data_size);
		__atomic_store_n(&cq->err_tail, cq->err_tail + 1,
				 __ATOMIC_RELAXED);
	}
	*gba_cq_slot(cq, tail) = *e;
	atomic_store_explicit(&cq->tail, tail + 1, memory_order_release);
}

/*
 * Append @e to the overflow list; cq->lock held.  Returns 0, or
 * -FI_ENOMEM (logged): the completion is lost.
 */
static int gba_cq_over_add(struct gba_cq *cq, const struct gba_cq_entry *e,
			   const struct gba_cq_err *err)
{
	struct gba_cq_over *o = malloc(sizeof(*o));

	if (!o) {
		cq->overflows++;
		FI_WARN(&gba_prov, FI_LOG_CQ,
			"CQ %p full and no memory for an overflow entry: "
			"completion of context %p lost\n",
			(void *)cq, e->op_context);
		return -FI_ENOMEM;
	}
	o->next = NULL;
	o->e = *e;
	if (e->is_err) {
		o->err.e = err->e;
		o->err.err_data_size = err->err_data_size;
		memcpy(o->err.err_data, err->err_data, err->err_data_size);
	}
	*cq->over_tail = o;
	cq->over_tail = &o->next;
	if (!atomic_fetch_add_explicit(&cq->nover, 1, memory_order_release) &&
	    !cq->over_logged++)
		FI_INFO(&gba_prov, FI_LOG_CQ,
			"CQ %p full (%zu entries): completions wait in an "
			"overflow list until reads make room\n",
			(void *)cq, cq->size);
	return 0;
}

/* gba_cq_over_drain's loop. */
static void gba_cq_over_move(struct gba_cq *cq)
{
	struct gba_cq_over *o;

	while ((o = cq->over_head) && gba_cq_ring_fits(cq, &o->e)) {
		gba_cq_ring_put(cq, &o->e, &o->err);
		cq->over_head = o->next;
		if (!cq->over_head)
			cq->over_tail = &cq->over_head;
		atomic_fetch_sub_explicit(&cq->nover, 1, memory_order_release);
		free(o);
	}
}

/* Move overflow entries into the ring while they fit; cq->lock held. */
static inline void gba_cq_over_drain(struct gba_cq *cq)
{
	if (cq->over_head)
		gba_cq_over_move(cq);
}

/*
 * Queue @e in completion order: into the ring, or the overflow list when
 * the ring is full or the list already holds entries.  Returns 0 or
 * -FI_ENOMEM (lost, logged).
 */
static inline int gba_cq_enqueue(struct gba_cq *cq,
				 const struct gba_cq_entry *e,
				 const struct gba_cq_err *err)
{
	int ret = 0;

	gba_lock_acquire(&cq->lock);
	if (!cq->over_head && gba_cq_ring_fits(cq, e))
		gba_cq_ring_put(cq, e, err);
	else
		ret = gba_cq_over_add(cq, e, err);
	gba_lock_release(&cq->lock);
	gba_wait_signal(&cq->wait);
	return ret;
}

/*
 * gba_cq_write - queue a successful completion (see gba_prov.h).
 * Returns 0, or -FI_ENOMEM when the CQ is full and no overflow entry can
 * be allocated (the completion is lost, logged).
 */
int gba_cq_write(struct gba_cq *cq, void *context, uint64_t flags, size_t len,
		 void *buf, uint64_t data, uint64_t tag, fi_addr_t src)
{
	struct gba_cq_entry e = {
		.op_context = context,
		.flags = flags,
		.len = len,
		.buf = buf,
		.data = data,
		.tag = tag,
		.src = src,
		.is_err = false,
	};

	return gba_cq_enqueue(cq, &e, NULL);
}

/*
 * gba_cq_write_error_data - queue an error completion with provider error
 * data (see gba_prov.h).  Returns 0, -FI_EINVAL (@err_data_size >
 * GBA_MAX_ERR_DATA or NULL data with a size), -FI_ENOMEM (as
 * gba_cq_write).
 */
int gba_cq_write_error_data(struct gba_cq *cq, void *context, uint64_t flags,
			    int err, int prov_errno, size_t len, size_t olen,
			    const void *err_data, size_t err_data_size)
{
	struct gba_cq_entry e = {
		.op_context = context,
		.flags = flags,
		.is_err = true,
	};
	struct gba_cq_err ee;

	if (err_data_size > GBA_MAX_ERR_DATA || (err_data_size && !err_data))
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "CQ error data of %zu bytes (max %d)\n",
				    err_data_size, GBA_MAX_ERR_DATA);
	memset(&ee.e, 0, sizeof(ee.e));
	ee.e.op_context = context;
	ee.e.flags = flags;
	ee.e.len = len;
	ee.e.olen = olen;
	ee.e.err = err < 0 ? -err : err;
	ee.e.prov_errno = prov_errno;
	ee.err_data_size = err_data_size;
	if (err_data_size)
		memcpy(ee.err_data, err_data, err_data_size);
	return gba_cq_enqueue(cq, &e, &ee);
}

/* gba_cq_write_error - gba_cq_write_error_data without error data. */
int gba_cq_write_error(struct gba_cq *cq, void *context, uint64_t flags,
		       int err, int prov_errno, size_t len, size_t olen)
{
	return gba_cq_write_error_data(cq, context, flags, err, prov_errno, len,
				       olen, NULL, 0);
}

/* Copy one entry out in the CQ's format. */
static inline void gba_cq_copy(struct gba_cq *cq, void *dst,
			       const struct gba_cq_entry *e)
{
	switch (cq->format) {
	case FI_CQ_FORMAT_CONTEXT: {
		struct fi_cq_entry *d = dst;

		d->op_context = e->op_context;
		break;
	}
	case FI_CQ_FORMAT_MSG: {
		struct fi_cq_msg_entry *d = dst;

		d->op_context = e->op_context;
		d->flags = e->flags;
		d->len = e->len;
		break;
	}
	case FI_CQ_FORMAT_DATA: {
		struct fi_cq_data_entry *d = dst;

		d->op_context = e->op_context;
		d->flags = e->flags;
		d->len = e->len;
		d->buf = e->buf;
		d->data = e->data;
		break;
	}
	default: {
		struct fi_cq_tagged_entry *d = dst;

		d->op_context = e->op_context;
		d->flags = e->flags;
		d->len = e->len;
		d->buf = e->buf;
		d->data = e->data;
		d->tag = e->tag;
		break;
	}
	}
}

/*
 * Copy up to @count entries; stop at an error marker.  Returns the number
 * copied, -FI_EAVAIL (error at the head) or -FI_EAGAIN (empty).
 */
static ssize_t gba_cq_dequeue(struct gba_cq *cq, void *buf, size_t count,
			      fi_addr_t *src_addr)
{
	uint8_t *out = buf;
	uint64_t head, tail;
	size_t n = 0;
	ssize_t ret;

	/* empty: answer without the lock (the common poll) */
	if (!gba_cq_used(cq))
		return -FI_EAGAIN;
	gba_lock_acquire(&cq->lock);
	gba_cq_over_drain(cq);
	head = atomic_load_explicit(&cq->head, memory_order_relaxed);
	tail = atomic_load_explicit(&cq->tail, memory_order_acquire);
	while (n < count && head != tail) {
		const struct gba_cq_entry *e = gba_cq_slot(cq, head);

		if (e->is_err)
			break;
		gba_cq_copy(cq, out, e);
		if (src_addr)
			src_addr[n] = e->src;
		out += cq->entry_size;
		head++;
		n++;
		if (head == tail && cq->over_head) {
			/* the ring is read: refill it from the overflow */
			atomic_store_explicit(&cq->head, head,
					      memory_order_release);
			gba_cq_over_drain(cq);
			tail = atomic_load_explicit(&cq->tail,
						    memory_order_relaxed);
		}
	}
	atomic_store_explicit(&cq->head, head, memory_order_release);
	gba_cq_over_drain(cq);
	if (n)
		ret = (ssize_t)n;
	else if (head != tail)
		ret = gba_cq_slot(cq, head)->is_err ? -FI_EAVAIL : 0;
	else
		ret = -FI_EAGAIN;
	gba_lock_release(&cq->lock);
	return ret;
}

/*
 * gba_cq_readfrom - fi_cq_readfrom(3): progress the bound endpoints, then
 * copy up to @count completions in the CQ's format into @buf and their
 * source addresses into @src_addr (FI_ADDR_NOTAVAIL: the provider has no
 * FI_SOURCE).  @count 0 only drives progress.  Returns the number of
 * entries, -FI_EAGAIN (none), -FI_EAVAIL (an error is next: use
 * fi_cq_readerr), -FI_EINVAL (NULL buffer with @count > 0).
 */
static ssize_t gba_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			       fi_addr_t *src_addr)
{
	struct gba_cq *cq = container_of(cq_fid, struct gba_cq, cq_fid);
	ssize_t ret;

	if (count && !buf)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "fi_cq_read: NULL buffer, count %zu\n",
				    count);
	gba_cq_progress(cq, NULL);
	ret = gba_cq_dequeue(cq, buf, count, src_addr);
	if (!count && ret == 0)
		return 0;
	return ret;
}

/* gba_cq_read - fi_cq_read(3): fi_cq_readfrom without addresses. */
static ssize_t gba_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return gba_cq_readfrom(cq_fid, buf, count, NULL);
}

/*
 * gba_cq_readerr - fi_cq_readerr(3): dequeue the error completion at the
 * head of the CQ.  @flags must be 0.  err_data: for API >= 1.5 with
 * buf->err_data_size > 0 the data is copied into buf->err_data
 * (err_data_size set to the bytes copied; a truncation is logged);
 * otherwise buf->err_data points to a CQ buffer valid until the next
 * readerr and (API >= 1.5) err_data_size is its length.  For API < 1.5
 * only the 1.0 part of the entry is written.  Returns 1, -FI_EAGAIN (no
 * error at the head), -FI_EINVAL.
 */
static ssize_t gba_cq_readerr(struct fid_cq *cq_fid,
			      struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct gba_cq *cq = container_of(cq_fid, struct gba_cq, cq_fid);
	uint32_t api = cq->domain->api_version;
	bool v15 = !api || FI_VERSION_GE(api, FI_VERSION(1, 5));
	struct gba_cq_err *ee;
	void *user_data = NULL;
	size_t user_size = 0;
	uint64_t head;

	if (!buf)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "fi_cq_readerr: NULL buffer\n");
	if (flags)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "fi_cq_readerr: flags 0x%llx not "
				    "supported\n",
				    (unsigned long long)flags);
	if (v15) {
		user_data = buf->err_data;
		user_size = buf->err_data_size;
		if (user_size && !user_data)
			return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
					    "fi_cq_readerr: err_data_size %zu "
					    "with NULL err_data\n",
					    user_size);
	}

	gba_lock_acquire(&cq->lock);
	gba_cq_over_drain(cq);
	head = atomic_load_explicit(&cq->head, memory_order_relaxed);
	if (head == atomic_load_explicit(&cq->tail, memory_order_acquire) ||
	    !gba_cq_slot(cq, head)->is_err) {
		gba_lock_release(&cq->lock);
		return -FI_EAGAIN;
	}
	ee = &cq->errs[cq->err_head % cq->err_size];
	if (v15) {
		buf->op_context = ee->e.op_context;
		buf->flags = ee->e.flags;
		buf->len = ee->e.len;
		buf->buf = ee->e.buf;
		buf->data = ee->e.data;
		buf->tag = ee->e.tag;
		buf->olen = ee->e.olen;
		buf->err = ee->e.err;
		buf->prov_errno = ee->e.prov_errno;
		if (user_size) {
			size_t n = ee->err_data_size < user_size
					   ? ee->err_data_size
					   : user_size;

			if (n < ee->err_data_size)
				FI_WARN(&gba_prov, FI_LOG_CQ,
					"fi_cq_readerr: err_data truncated to "
					"%zu of %zu bytes\n",
					n, ee->err_data_size);
			memcpy(user_data, ee->err_data, n);
			buf->err_data_size = n;
		} else {
			memcpy(cq->err_data, ee->err_data, ee->err_data_size);
			buf->err_data = ee->err_data_size ? cq->err_data : NULL;
			buf->err_data_size = ee->err_data_size;
		}
	} else {
		/* 1.0 layout: everything up to err_data, then the pointer */
		struct fi_cq_err_entry tmp = ee->e;

		memcpy(cq->err_data, ee->err_data, ee->err_data_size);
		tmp.err_data = ee->err_data_size ? cq->err_data : NULL;
		memcpy(buf, &tmp,
		       offsetof(struct fi_cq_err_entry, err_data) +
			       sizeof(tmp.err_data));
	}
	__atomic_store_n(&cq->err_head, cq->err_head + 1, __ATOMIC_RELAXED);
	atomic_store_explicit(&cq->head, head + 1, memory_order_release);
	gba_cq_over_drain(cq);
	gba_lock_release(&cq->lock);
	return 1;
}

/*
 * gba_cq_ready - progress the bound endpoints; true if a read would
 * return an entry or an error (see gba_prov.h for @pending).
 */
bool gba_cq_ready(struct gba_cq *cq, bool *pending)
{
	gba_cq_progress(cq, pending);
	return gba_cq_used(cq) != 0;
}

/* Readiness callback of a CQ in a wait set (gba_wait_set_add). */
static bool gba_cq_fid_ready(struct fid *fid, bool *pending)
{
	return gba_cq_ready(container_of(fid, struct gba_cq, cq_fid.fid),
			    pending);
}

/*
 * gba_cq_sreadfrom - fi_cq_sreadfrom(3): like fi_cq_readfrom, blocking up
 * to @timeout ms (<0: forever) until at least one entry (or, with
 * wait_cond FI_CQ_COND_THRESHOLD, *(size_t *)@cond entries, capped at
 * @count) is available.  Endpoints are progressed while waiting; with a
 * barrier in flight the wait polls every millisecond (release flags
 * arrive without a signal).  Returns as fi_cq_readfrom, -FI_EAGAIN on
 * timeout or after fi_cq_signal, -FI_ENOSYS when the CQ was opened with
 * FI_WAIT_NONE or FI_WAIT_SET.
 */
static ssize_t gba_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				fi_addr_t *src_addr, const void *cond,
				int timeout)
{
	struct gba_cq *cq = container_of(cq_fid, struct gba_cq, cq_fid);
	size_t threshold = 1;
	uint64_t deadline, now, poll_ns = 0;
	unsigned token;
	bool pending;
	int left;

	if (cq->wait.type == FI_WAIT_NONE || cq->wait.type == FI_WAIT_SET)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_ENOSYS,
				    "fi_cq_sread: CQ opened with %s\n",
				    gba_wait_obj_str(cq->wait.type));
	if (count && !buf)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "fi_cq_sread: NULL buffer, count %zu\n",
				    count);
	if (cq->wait_cond == FI_CQ_COND_THRESHOLD && cond) {
		threshold = *(const size_t *)cond;
		if (threshold > count)
			threshold = count;
		if (!threshold)
			threshold = 1;
	}
	deadline = timeout < 0 ? UINT64_MAX : gba_now_ms() + (uint64_t)timeout;
	for (;;) {
		pending = false;
		gba_cq_progress(cq, &pending);
		if (gba_cq_used(cq) >= threshold ||
		    (gba_cq_used(cq) &&
		     gba_cq_slot(cq, atomic_load(&cq->head))->is_err))
			return gba_cq_dequeue(cq, buf, count, src_addr);
		if (atomic_exchange(&cq->signaled, false))
			return gba_cq_used(cq) ? gba_cq_dequeue(cq, buf, count,
								src_addr)
					       : -FI_EAGAIN;
		now = gba_now_ms();
		if (now >= deadline) {
			if (gba_cq_used(cq))
				return gba_cq_dequeue(cq, buf, count, src_addr);
			return -FI_EAGAIN;
		}
		if (pending && gba_wait_poll(&poll_ns))
			continue;
		left = deadline == UINT64_MAX ? -1 : (int)(deadline - now);
		if (pending && (left < 0 || left > 1))
			left = 1;
		token = gba_wait_enter(&cq->wait);
		if (gba_cq_used(cq) < threshold && !atomic_load(&cq->signaled))
			gba_wait_sleep(&cq->wait, token, left);
		gba_wait_leave(&cq->wait);
	}
}

/* gba_cq_sread - fi_cq_sread(3): fi_cq_sreadfrom without addresses. */
static ssize_t gba_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			    const void *cond, int timeout)
{
	return gba_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

/*
 * gba_cq_signal - fi_cq_signal(3): make a thread blocked in fi_cq_sread
 * (or the next call) return -FI_EAGAIN.  Returns 0.
 */
static int gba_cq_signal(struct fid_cq *cq_fid)
{
	struct gba_cq *cq = container_of(cq_fid, struct gba_cq, cq_fid);

	atomic_store(&cq->signaled, true);
	atomic_fetch_add(&cq->wait.waiters, 1); /* force the wakeup */
	gba_wait_signal(&cq->wait);
	atomic_fetch_sub(&cq->wait.waiters, 1);
	return 0;
}

/*
 * gba_cq_strerror - fi_cq_strerror(3): text for @prov_errno (a positive
 * errno of the core library) and, when @err_data is given, nothing more
 * (its length is not known here).  Writes into @buf/@len when given
 * (NUL-terminated, truncated to @len), else into a CQ buffer.
 */
static const char *gba_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	struct gba_cq *cq = container_of(cq_fid, struct gba_cq, cq_fid);
	char *out = buf && len ? buf : cq->errstr;
	size_t n = buf && len ? len : sizeof(cq->errstr);

	snprintf(out, n, "gba: %s (prov_errno %d)",
		 fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno),
		 prov_errno);
	return out;
}

/*
 * gba_cq_bind_progress - bind @ctx: CQ reads progress it through
 * @progress and the CQ cannot be closed while it is bound (gba_prov.h).
 * A context bound for both directions is listed twice, next to each
 * other (progress skips the second).  Returns 0, -FI_EINVAL, -FI_ENOMEM.
 */
int gba_cq_bind_progress(struct gba_cq *cq, void *ctx,
			 int (*progress)(void *ctx, bool *pending))
{
	int ret;

	if (!cq || !ctx || !progress)
		return -FI_EINVAL;
	gba_lock_acquire(&cq->ep_lock);
	ret = gba_progress_srcs_add(&cq->srcs, ctx, progress);
	if (!ret)
		atomic_fetch_add(&cq->ref, 1);
	gba_lock_release(&cq->ep_lock);
	return ret;
}

/* gba_cq_unbind_progress - unbind @ctx (once per gba_cq_bind_progress). */
void gba_cq_unbind_progress(struct gba_cq *cq, void *ctx)
{
	if (!cq || !ctx)
		return;
	gba_lock_acquire(&cq->ep_lock);
	if (gba_progress_srcs_del(&cq->srcs, ctx))
		atomic_fetch_sub(&cq->ref, 1);
	gba_lock_release(&cq->ep_lock);
}

/*
 * fi_close(3) on a CQ: -FI_EBUSY while endpoints are bound.
 * Returns 0 or -FI_EBUSY.
 */
static int gba_cq_close(struct fid *fid)
{
	struct gba_cq *cq = container_of(fid, struct gba_cq, cq_fid.fid);
	struct gba_cq_over *o;

	if (atomic_load(&cq->ref)) {
		FI_WARN(&gba_prov, FI_LOG_CQ,
			"CQ still bound to %d endpoints\n",
			atomic_load(&cq->ref));
		return -FI_EBUSY;
	}
	if (cq->wait_set)
		gba_wait_set_del(cq->wait_set, &cq->cq_fid.fid);
	if (cq->overflows)
		FI_INFO(&gba_prov, FI_LOG_CQ,
			"CQ closed after losing %llu completions (full, no "
			"memory)\n",
			(unsigned long long)cq->overflows);
	while ((o = cq->over_head)) {
		cq->over_head = o->next;
		free(o);
	}
	gba_wait_fini(&cq->wait);
	gba_lock_destroy(&cq->lock);
	gba_lock_destroy(&cq->ep_lock);
	free(cq->ring);
	free(cq->errs);
	utarray_done(&cq->srcs);
	atomic_fetch_sub(&cq->domain->ncq, 1);
	atomic_fetch_sub(&cq->domain->ref, 1);
	free(cq);
	return 0;
}

/*
 * gba_cq_control - fi_control(3): FI_GETWAIT (int *, FI_WAIT_FD only) and
 * FI_GETWAITOBJ (enum fi_wait_obj *).  Returns 0, -FI_EINVAL,
 * -FI_ENODATA (no fd), -FI_ENOSYS.
 */
static int gba_cq_control(struct fid *fid, int command, void *arg)
{
	struct gba_cq *cq = container_of(fid, struct gba_cq, cq_fid.fid);

	if (!arg)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "CQ control: NULL argument\n");
	switch (command) {
	case FI_GETWAIT:
		if (cq->wait.type != FI_WAIT_FD)
			return GBA_WARN_RET(FI_LOG_CQ, -FI_ENODATA,
					    "FI_GETWAIT: CQ wait object is "
					    "%s, not FI_WAIT_FD\n",
					    gba_wait_obj_str(cq->wait.type));
		atomic_store(&cq->wait.exported, true);
		*(int *)arg = cq->wait.fd;
		return 0;
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = cq->wait.type;
		return 0;
	default:
		return gba_no_control(fid, command, arg);
	}
}

/* FI_GBA_CQ_OPS_1 write: gba_cq_write on a CQ fid (fi_ext_gba.h). */
static int gba_cq_ext_write(struct fid_cq *cq_fid, void *context,
			    uint64_t flags, size_t len, void *buf,
			    uint64_t data, uint64_t tag, fi_addr_t src)
{
	if (!cq_fid)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "FI_GBA_CQ_OPS_1 write: NULL CQ\n");
	return gba_cq_write(container_of(cq_fid, struct gba_cq, cq_fid),
			    context, flags, len, buf, data, tag, src);
}

/*
 * FI_GBA_CQ_OPS_1 write_error: gba_cq_write_error_data on a CQ fid
 * (fi_ext_gba.h).
 */
static int gba_cq_ext_write_error(struct fid_cq *cq_fid, void *context,
				  uint64_t flags, int err, int prov_errno,
				  size_t len, size_t olen, const void *err_data,
				  size_t err_data_size)
{
	if (!cq_fid || err <= 0)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "FI_GBA_CQ_OPS_1 write_error: %s\n",
				    cq_fid ? "err must be a positive FI_E* code"
					   : "NULL CQ");
	return gba_cq_write_error_data(
		container_of(cq_fid, struct gba_cq, cq_fid), context, flags,
		err, prov_errno, len, olen, err_data, err_data_size);
}

/* FI_GBA_CQ_OPS_1 has_space: gba_cq_has_space on a CQ fid; NULL: false. */
static bool gba_cq_ext_has_space(struct fid_cq *cq_fid, size_t n)
{
	return cq_fid &&
	       gba_cq_has_space(container_of(cq_fid, struct gba_cq, cq_fid), n);
}

static struct fi_gba_cq_ops gba_cq_ext_ops = {
	.size = sizeof(struct fi_gba_cq_ops),
	.write = gba_cq_ext_write,
	.write_error = gba_cq_ext_write_error,
	.has_space = gba_cq_ext_has_space,
};

/*
 * gba_cq_ops_open - fi_open_ops(3) on a CQ: FI_GBA_CQ_OPS_1 returns
 * struct fi_gba_cq_ops (<gba/fi_ext_gba.h>).  @flags must be 0.  Returns 0,
 * -FI_EINVAL, -FI_ENOSYS (unknown name).
 */
static int gba_cq_ops_open(struct fid *fid, const char *name, uint64_t flags,
			   void **ops, void *context)
{
	if (!name || !ops || flags)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "fi_open_ops: bad arguments\n");
	if (strcmp(name, FI_GBA_CQ_OPS_1))
		return gba_no_ops_open(fid, name, flags, ops, context);
	*ops = &gba_cq_ext_ops;
	return 0;
}

static struct fi_ops gba_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_cq_close,
	.bind = gba_no_bind,
	.control = gba_cq_control,
	.ops_open = gba_cq_ops_open,
};

static struct fi_ops_cq gba_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = gba_cq_read,
	.readfrom = gba_cq_readfrom,
	.readerr = gba_cq_readerr,
	.sread = gba_cq_sread,
	.sreadfrom = gba_cq_sreadfrom,
	.signal = gba_cq_signal,
	.strerror = gba_cq_strerror,
};

/* Size of one entry of @format, 0 for unknown formats. */
static size_t gba_cq_format_size(enum fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return 0;
	}
}

/*
 * gba_cq_open - fi_cq_open(3).
 * @attr: size (0: FI_GBA_CQ_SIZE; at most GBA_CQ_MAX_SIZE entries),
 *        flags (0 or FI_AFFINITY, ignored), format (UNSPEC = CONTEXT,
 *        CONTEXT, MSG, DATA, TAGGED), wait_obj (NONE, UNSPEC, FD, YIELD,
 *        SET with wait_set), wait_cond (NONE, THRESHOLD),
 *        signaling_vector (ignored).
 * Returns 0, -FI_EINVAL, -FI_ENOSYS (wait object, format), -FI_ENOSPC
 * (cq_cnt CQs open), -FI_ENOMEM, -FI_EMFILE.
 */
int gba_cq_open(struct fid_domain *domain_fid, struct fi_cq_attr *attr,
		struct fid_cq **cq_fid, void *context)
{
	struct gba_domain *domain;
	struct gba_wait_set *set = NULL;
	enum fi_cq_format format;
	struct gba_cq *cq;
	size_t size;
	int ret;

	if (!domain_fid || !attr || !cq_fid)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "fi_cq_open: NULL domain, attr or cq\n");
	domain = container_of(domain_fid, struct gba_domain, domain_fid);
	if (attr->size > GBA_CQ_MAX_SIZE)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "fi_cq_open: size %zu > %zu\n", attr->size,
				    GBA_CQ_MAX_SIZE);
	if (attr->flags & ~(uint64_t)FI_AFFINITY)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "fi_cq_open: flags 0x%llx not supported\n",
				    (unsigned long long)attr->flags);
	format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT
						     : attr->format;
	if (!gba_cq_format_size(format))
		return GBA_WARN_RET(FI_LOG_CQ, -FI_ENOSYS,
				    "fi_cq_open: format %s not supported\n",
				    fi_tostr(&attr->format, FI_TYPE_CQ_FORMAT));
	if (attr->wait_cond != FI_CQ_COND_NONE &&
	    attr->wait_cond != FI_CQ_COND_THRESHOLD)
		return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
				    "fi_cq_open: wait_cond %d not supported\n",
				    attr->wait_cond);
	if (attr->wait_obj == FI_WAIT_SET) {
		set = gba_wait_set_get(attr->wait_set);
		if (!set)
			return GBA_WARN_RET(FI_LOG_CQ, -FI_EINVAL,
					    "fi_cq_open: FI_WAIT_SET without a "
					    "gba wait set\n");
	}
	if (atomic_fetch_add(&domain->ncq, 1) >= GBA_CQ_CNT) {
		atomic_fetch_sub(&domain->ncq, 1);
		return GBA_WARN_RET(FI_LOG_CQ, -FI_ENOSPC,
				    "fi_cq_open: %d CQs already open "
				    "(domain cq_cnt)\n",
				    GBA_CQ_CNT);
	}

	size = attr->size ? attr->size : gba_params.cq_size;
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		ret = -FI_ENOMEM;
		goto err0;
	}
	cq->size = size;
	/* slots: the next power of two (a mask, not a division, per access) */
	for (cq->mask = 1; cq->mask < size; cq->mask <<= 1)
		;
	cq->ring = calloc(cq->mask, sizeof(*cq->ring));
	cq->mask--;
	cq->over_tail = &cq->over_head;
	cq->err_size = size < GBA_CQ_ERR_MAX ? size : GBA_CQ_ERR_MAX;
	cq->errs = calloc(cq->err_size, sizeof(*cq->errs));
	if (!cq->ring || !cq->errs) {
		ret = -FI_ENOMEM;
		goto err1;
	}
	ret = gba_wait_init(&cq->wait, attr->wait_obj);
	if (ret)
		goto err1;
	ret = gba_lock_init(&cq->lock, domain->locking);
	if (ret)
		goto err2;
	ret = gba_lock_init(&cq->ep_lock, domain->locking);
	if (ret)
		goto err3;
	if (set) {
		ret = gba_wait_set_add(set, &cq->cq_fid.fid, gba_cq_fid_ready);
		if (ret)
			goto err4;
		cq->wait.set = &set->wait;
		cq->wait_set = set;
	}
	utarray_init(&cq->srcs, &gba_progress_src_icd);
	cq->domain = domain;
	cq->format = format;
	cq->entry_size = gba_cq_format_size(format);
	cq->wait_cond = attr->wait_cond;
	atomic_init(&cq->ref, 0);
	atomic_init(&cq->signaled, false);
	atomic_init(&cq->head, 0);
	atomic_init(&cq->tail, 0);
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &gba_cq_fi_ops;
	cq->cq_fid.ops = &gba_cq_ops;
	atomic_fetch_add(&domain->ref, 1);
	*cq_fid = &cq->cq_fid;
	return 0;
err4:
	gba_lock_destroy(&cq->ep_lock);
err3:
	gba_lock_destroy(&cq->lock);
err2:
	gba_wait_fini(&cq->wait);
err1:
	free(cq->ring);
	free(cq->errs);
	free(cq);
err0:
	atomic_fetch_sub(&domain->ncq, 1);
	return ret;
}
