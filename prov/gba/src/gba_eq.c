/*
 * libfabric "gba" provider: event queues (fi_eq(3)).
 *
 * Events (FI_NOTIFY, FI_AV_COMPLETE, FI_JOIN_COMPLETE, ...) and error
 * entries share one FIFO.  fi_eq_read returns -FI_EAVAIL when an error is
 * at the head; fi_eq_readerr returns the oldest error.  EQs are a control
 * path: entries are allocated per event.
 *
 * attr->size bounds what the application writes (fi_eq_write is refused
 * with -FI_EAGAIN once that many entries are queued).  Entries of the
 * provider (AV insert results, join completions, errors) and of the
 * FI_GBA_EQ_OPS_1 extension are never refused for lack of room: like a
 * full CQ's completions (gba_cq.c), they queue beyond the size, in order,
 * until reads take them; only an allocation failure loses one (logged).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gba_obj.h"

struct gba_eq_event {
	struct gba_eq_event *next;
	uint32_t event;
	bool is_err;
	size_t len;		    /* event data length */
	struct fi_eq_err_entry err; /* is_err: err_data unused */
	size_t err_data_size;
	uint8_t err_data[GBA_MAX_ERR_DATA];
	uint8_t data[]; /* len bytes */
};

#define GBA_EQ_ERR_FLAGS 0 /* no flags are defined for fi_eq_readerr */

static void gba_eq_append(struct gba_eq *eq, struct gba_eq_event *ev)
{
	ev->next = NULL;
	if (eq->tail)
		eq->tail->next = ev;
	else
		eq->head = ev;
	eq->tail = ev;
	eq->count++;
	if (ev->is_err)
		eq->nerr++;
}

/*
 * Remove @ev (preceded by @prev, NULL at the head) from the FIFO.
 * Called with the EQ lock held.
 */
static void gba_eq_unlink(struct gba_eq *eq, struct gba_eq_event *prev,
			  struct gba_eq_event *ev)
{
	if (prev)
		prev->next = ev->next;
	else
		eq->head = ev->next;
	if (eq->tail == ev)
		eq->tail = prev;
	eq->count--;
	if (ev->is_err)
		eq->nerr--;
	if (eq->count < eq->size)
		eq->over = false;
}

/*
 * Queue @ev.  @bounded (fi_eq_write): refused with -FI_EAGAIN (and @ev
 * freed) when eq->size entries are queued; otherwise the entry goes in
 * even beyond the size (logged once per episode).  Returns 0 or
 * -FI_EAGAIN.
 */
static int gba_eq_enqueue(struct gba_eq *eq, struct gba_eq_event *ev,
			  bool bounded)
{
	bool full, first_over = false;

	gba_lock_acquire(&eq->lock);
	full = eq->count >= eq->size;
	if (!full || !bounded) {
		if (full && !eq->over) {
			eq->over = true;
			first_over = true;
		}
		gba_eq_append(eq, ev);
		ev = NULL;
	}
	gba_lock_release(&eq->lock);
	if (ev) {
		free(ev);
		FI_INFO(&gba_prov, FI_LOG_EQ,
			"fi_eq_write: EQ full (%zu entries)\n", eq->size);
		return -FI_EAGAIN;
	}
	if (first_over)
		FI_INFO(&gba_prov, FI_LOG_EQ,
			"EQ %p full (%zu entries): provider entries queue "
			"beyond its size until reads take them\n",
			(void *)eq, eq->size);
	gba_wait_signal(&eq->wait);
	return 0;
}

/*
 * Queue event @event with @len bytes of data @buf; @bounded as
 * gba_eq_enqueue.  Returns 0, -FI_EAGAIN (@bounded and full), -FI_EINVAL
 * (bad arguments or data longer than GBA_EQ_MAX_DATA), -FI_ENOMEM (the
 * event is lost, logged).
 */
static int gba_eq_put_event(struct gba_eq *eq, uint32_t event,
			    const void *buf, size_t len, bool bounded)
{
	struct gba_eq_event *ev;

	if (!eq || (len && !buf) || len > GBA_EQ_MAX_DATA)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "EQ write: bad arguments (len %zu)\n", len);
	ev = malloc(sizeof(*ev) + len);
	if (!ev)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_ENOMEM,
				    "EQ %p: no memory for event %u: lost\n",
				    (void *)eq, event);
	ev->event = event;
	ev->is_err = false;
	ev->len = len;
	if (len)
		memcpy(ev->data, buf, len);
	return gba_eq_enqueue(eq, ev, bounded);
}

/*
 * gba_eq_write_event - queue an event from inside the provider (see
 * gba_obj.h); a full EQ keeps it beyond its size.  Returns 0, -FI_EINVAL
 * (bad arguments or data longer than GBA_EQ_MAX_DATA), -FI_ENOMEM (lost,
 * logged).
 */
int gba_eq_write_event(struct gba_eq *eq, uint32_t event, const void *buf,
		       size_t len, uint64_t flags)
{
	return gba_eq_put_event(eq, event, buf, len, false);
}

/*
 * gba_eq_write_error - queue an error entry (see gba_obj.h); @err is a
 * positive FI_E* value.  A full EQ keeps it beyond its size.  Returns 0,
 * -FI_EINVAL (NULL @eq), -FI_ENOMEM (lost, logged).
 */
int gba_eq_write_error(struct gba_eq *eq, fid_t fid, void *context,
		       uint64_t data, int err, int prov_errno)
{
	struct gba_eq_event *ev;

	if (!eq)
		return -FI_EINVAL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_ENOMEM,
				    "EQ %p: no memory for error %d of context "
				    "%p: lost\n",
				    (void *)eq, err, context);
	ev->is_err = true;
	ev->err.fid = fid;
	ev->err.context = context;
	ev->err.data = data;
	ev->err.err = err < 0 ? -err : err;
	ev->err.prov_errno = prov_errno;
	return gba_eq_enqueue(eq, ev, false);
}

/*
 * gba_eq_read - fi_eq_read(3).
 * @event: receives the event type; @buf/@len: receives the event data
 * (@buf NULL and @len 0: the event type only, its data is dropped).
 * @flags: 0 or FI_PEEK (leave the event queued).
 * Returns the number of bytes written to @buf, -FI_EAGAIN (empty),
 * -FI_EAVAIL (an error is at the head: use fi_eq_readerr), -FI_ETOOSMALL
 * (@len shorter than the event; the event stays queued), -FI_EINVAL.
 */
static ssize_t gba_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			   size_t len, uint64_t flags)
{
	struct gba_eq *eq = container_of(eq_fid, struct gba_eq, eq_fid);
	struct gba_eq_event *ev;
	ssize_t ret;

	if (!event || (len && !buf))
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "fi_eq_read: NULL event or buffer\n");
	if (flags & ~FI_PEEK)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "fi_eq_read: flags 0x%llx not supported\n",
				    (unsigned long long)flags);

	gba_lock_acquire(&eq->lock);
	ev = eq->head;
	if (!ev) {
		ret = -FI_EAGAIN;
	} else if (ev->is_err) {
		ret = -FI_EAVAIL;
	} else if (!buf && !len) {
		/* event only (libfabric's util EQs allow it): data dropped */
		*event = ev->event;
		ret = 0;
		if (!(flags & FI_PEEK))
			gba_eq_unlink(eq, NULL, ev);
		else
			ev = NULL;
	} else if (len < ev->len) {
		FI_WARN(&gba_prov, FI_LOG_EQ,
			"fi_eq_read: buffer of %zu bytes, event %u needs %zu\n",
			len, ev->event, ev->len);
		ret = -FI_ETOOSMALL;
	} else {
		*event = ev->event;
		if (ev->len)
			memcpy(buf, ev->data, ev->len);
		ret = (ssize_t)ev->len;
		if (!(flags & FI_PEEK))
			gba_eq_unlink(eq, NULL, ev);
		else
			ev = NULL;
	}
	gba_lock_release(&eq->lock);
	if (ret >= 0)
		free(ev);
	return ret;
}

/*
 * gba_eq_readerr - fi_eq_readerr(3): dequeue the oldest error entry.
 * @flags must be 0.  err_data follows the API version of the fabric: for
 * API >= 1.5 with buf->err_data_size > 0 the data is copied into
 * buf->err_data (err_data_size set to the bytes copied, the rest is
 * truncated and logged); otherwise buf->err_data points to a buffer of
 * the EQ valid until the next readerr.  Returns sizeof(*buf), -FI_EAGAIN
 * (no error queued), -FI_EINVAL.
 */
static ssize_t gba_eq_readerr(struct fid_eq *eq_fid,
			      struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct gba_eq *eq = container_of(eq_fid, struct gba_eq, eq_fid);
	struct gba_eq_event *ev, *prev = NULL;
	uint32_t api = eq->fabric->fabric_fid.api_version;
	void *user_data = NULL;
	size_t user_size = 0;
	bool v15 = !api || FI_VERSION_GE(api, FI_VERSION(1, 5));

	if (!buf)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "fi_eq_readerr: NULL buffer\n");
	if (flags & ~(uint64_t)GBA_EQ_ERR_FLAGS)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "fi_eq_readerr: flags 0x%llx not "
				    "supported\n",
				    (unsigned long long)flags);
	if (v15) {
		user_data = buf->err_data;
		user_size = buf->err_data_size;
		if (user_size && !user_data)
			return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
					    "fi_eq_readerr: err_data_size %zu "
					    "with NULL err_data\n",
					    user_size);
	}

	gba_lock_acquire(&eq->lock);
	for (ev = eq->head; ev && !ev->is_err; ev = ev->next)
		prev = ev;
	if (!ev) {
		gba_lock_release(&eq->lock);
		return -FI_EAGAIN;
	}
	gba_eq_unlink(eq, prev, ev);
	gba_lock_release(&eq->lock);

	buf->fid = ev->err.fid;
	buf->context = ev->err.context;
	buf->data = ev->err.data;
	buf->err = ev->err.err;
	buf->prov_errno = ev->err.prov_errno;
	if (v15 && user_size) {
		size_t n = ev->err_data_size < user_size ? ev->err_data_size
							 : user_size;

		if (n < ev->err_data_size)
			FI_WARN(&gba_prov, FI_LOG_EQ,
				"fi_eq_readerr: err_data truncated to %zu of "
				"%zu bytes\n",
				n, ev->err_data_size);
		memcpy(user_data, ev->err_data, n);
		buf->err_data_size = n;
	} else {
		memcpy(eq->err_data, ev->err_data, ev->err_data_size);
		buf->err_data = ev->err_data_size ? eq->err_data : NULL;
		if (v15)
			buf->err_data_size = ev->err_data_size;
	}
	free(ev);
	return sizeof(*buf);
}

/*
 * gba_eq_write - fi_eq_write(3): queue a user event.  The EQ must have
 * been opened with FI_WRITE in attr->flags.  @flags must be 0.
 * Returns @len, -FI_EAGAIN (attr->size entries queued), -FI_EINVAL,
 * -FI_ENOMEM.
 */
static ssize_t gba_eq_write(struct fid_eq *eq_fid, uint32_t event,
			    const void *buf, size_t len, uint64_t flags)
{
	struct gba_eq *eq = container_of(eq_fid, struct gba_eq, eq_fid);
	int ret;

	if (!(eq->flags & FI_WRITE))
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "fi_eq_write: EQ not opened with "
				    "FI_WRITE\n");
	if (flags)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "fi_eq_write: flags 0x%llx not supported\n",
				    (unsigned long long)flags);
	ret = gba_eq_put_event(eq, event, buf, len, true);
	return ret ? ret : (ssize_t)len;
}

/* gba_eq_ready - true if something can be read (event or error). */
bool gba_eq_ready(struct gba_eq *eq)
{
	bool ready;

	gba_lock_acquire(&eq->lock);
	ready = eq->head != NULL;
	gba_lock_release(&eq->lock);
	return ready;
}

/* Readiness callback of an EQ in a wait set (gba_wait_set_add). */
static bool gba_eq_fid_ready(struct fid *fid, bool *pending)
{
	return gba_eq_ready(container_of(fid, struct gba_eq, eq_fid.fid));
}

/*
 * gba_eq_sread - fi_eq_sread(3): fi_eq_read that blocks up to @timeout
 * ms (<0: forever).  Returns as fi_eq_read, -FI_EAGAIN on timeout,
 * -FI_ENOSYS if the EQ has no wait object (FI_WAIT_NONE, FI_WAIT_SET:
 * use fi_wait on the set).
 */
static ssize_t gba_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			    size_t len, int timeout, uint64_t flags)
{
	struct gba_eq *eq = container_of(eq_fid, struct gba_eq, eq_fid);
	uint64_t deadline, now;
	unsigned token;
	ssize_t ret;

	if (eq->wait.type == FI_WAIT_NONE || eq->wait.type == FI_WAIT_SET)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_ENOSYS,
				    "fi_eq_sread: EQ opened with %s\n",
				    gba_wait_obj_str(eq->wait.type));
	deadline = timeout < 0 ? UINT64_MAX : gba_now_ms() + (uint64_t)timeout;
	for (;;) {
		ret = gba_eq_read(eq_fid, event, buf, len, flags);
		if (ret != -FI_EAGAIN)
			return ret;
		now = gba_now_ms();
		if (now >= deadline)
			return -FI_EAGAIN;
		token = gba_wait_enter(&eq->wait);
		if (!gba_eq_ready(eq))
			gba_wait_sleep(&eq->wait, token,
				       deadline == UINT64_MAX
					       ? -1
					       : (int)(deadline - now));
		gba_wait_leave(&eq->wait);
	}
}

/*
 * gba_eq_strerror - fi_eq_strerror(3): text for @prov_errno (a positive
 * errno of the core library).  Writes into @buf/@len when given (always
 * NUL-terminated), else into a buffer of the EQ.  Returns the text.
 */
static const char *gba_eq_strerror(struct fid_eq *eq_fid, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	struct gba_eq *eq = container_of(eq_fid, struct gba_eq, eq_fid);
	char *out = buf && len ? buf : eq->errstr;
	size_t n = buf && len ? len : sizeof(eq->errstr);

	snprintf(out, n, "gba: %s (prov_errno %d)",
		 fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno),
		 prov_errno);
	return out;
}

/*
 * fi_close(3) on an EQ: -FI_EBUSY while bound to a domain, AV or
 * endpoint; frees queued entries.  Returns 0 or -FI_EBUSY.
 */
static int gba_eq_close(struct fid *fid)
{
	struct gba_eq *eq = container_of(fid, struct gba_eq, eq_fid.fid);
	struct gba_eq_event *ev, *next;

	if (atomic_load(&eq->ref)) {
		FI_WARN(&gba_prov, FI_LOG_EQ,
			"EQ still bound to %d domains/AVs/endpoints\n",
			atomic_load(&eq->ref));
		return -FI_EBUSY;
	}
	if (eq->wait_set)
		gba_wait_set_del(eq->wait_set, &eq->eq_fid.fid);
	for (ev = eq->head; ev; ev = next) {
		next = ev->next;
		free(ev);
	}
	gba_wait_fini(&eq->wait);
	gba_lock_destroy(&eq->lock);
	atomic_fetch_sub(&eq->fabric->ref, 1);
	free(eq);
	return 0;
}

/*
 * gba_eq_control - fi_control(3): FI_GETWAIT (int *, FI_WAIT_FD only),
 * FI_GETWAITOBJ (enum fi_wait_obj *).  Returns 0, -FI_EINVAL,
 * -FI_ENODATA (no fd), -FI_ENOSYS.
 */
static int gba_eq_control(struct fid *fid, int command, void *arg)
{
	struct gba_eq *eq = container_of(fid, struct gba_eq, eq_fid.fid);

	if (!arg)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "EQ control: NULL argument\n");
	switch (command) {
	case FI_GETWAIT:
		if (eq->wait.type != FI_WAIT_FD)
			return GBA_WARN_RET(FI_LOG_EQ, -FI_ENODATA,
					    "FI_GETWAIT: EQ wait object is "
					    "%s, not FI_WAIT_FD\n",
					    gba_wait_obj_str(eq->wait.type));
		atomic_store(&eq->wait.exported, true);
		*(int *)arg = eq->wait.fd;
		return 0;
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = eq->wait.type;
		return 0;
	default:
		return gba_no_control(fid, command, arg);
	}
}

/*
 * FI_GBA_EQ_OPS_1 write_error: gba_eq_write_error on an EQ fid
 * (fi_ext_gba.h); a full EQ keeps the entry beyond its size.
 */
static int gba_eq_ext_write_error(struct fid_eq *eq_fid, fid_t fid,
				  void *context, uint64_t data, int err,
				  int prov_errno)
{
	if (!eq_fid || err <= 0)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "FI_GBA_EQ_OPS_1 write_error: %s\n",
				    eq_fid ? "err must be a positive FI_E* code"
					   : "NULL EQ");
	return gba_eq_write_error(container_of(eq_fid, struct gba_eq, eq_fid),
				  fid, context, data, err, prov_errno);
}

static struct fi_gba_eq_ops gba_eq_ext_ops = {
	.size = sizeof(struct fi_gba_eq_ops),
	.write_error = gba_eq_ext_write_error,
};

/*
 * gba_eq_ops_open - fi_open_ops(3) on an EQ: FI_GBA_EQ_OPS_1 returns
 * struct fi_gba_eq_ops (<gba/fi_ext_gba.h>).  @flags must be 0.  Returns 0,
 * -FI_EINVAL, -FI_ENOSYS (unknown name).
 */
static int gba_eq_ops_open(struct fid *fid, const char *name, uint64_t flags,
			   void **ops, void *context)
{
	if (!name || !ops || flags)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "fi_open_ops: bad arguments\n");
	if (strcmp(name, FI_GBA_EQ_OPS_1))
		return gba_no_ops_open(fid, name, flags, ops, context);
	*ops = &gba_eq_ext_ops;
	return 0;
}

static struct fi_ops gba_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gba_eq_close,
	.bind = gba_no_bind,
	.control = gba_eq_control,
	.ops_open = gba_eq_ops_open,
};

static struct fi_ops_eq gba_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = gba_eq_read,
	.readerr = gba_eq_readerr,
	.write = gba_eq_write,
	.sread = gba_eq_sread,
	.strerror = gba_eq_strerror,
};

/*
 * gba_eq_open - fi_eq_open(3).
 * @attr: size (0: FI_GBA_EQ_SIZE; at most GBA_EQ_MAX_SIZE), flags (0 or
 *        FI_WRITE), wait_obj (FI_WAIT_NONE, _UNSPEC, _FD, _YIELD, _SET
 *        with wait_set), signaling_vector (ignored).
 * Returns 0, -FI_EINVAL, -FI_ENOSYS (wait object), -FI_ENOMEM,
 * -FI_EMFILE.
 */
int gba_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq_fid, void *context)
{
	struct gba_fabric *fab;
	struct gba_wait_set *set = NULL;
	struct gba_eq *eq;
	int ret;

	if (!fabric || !attr || !eq_fid)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "fi_eq_open: NULL fabric, attr or eq\n");
	fab = container_of(fabric, struct gba_fabric, fabric_fid);
	if (attr->size > GBA_EQ_MAX_SIZE)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "fi_eq_open: size %zu > %zu\n", attr->size,
				    GBA_EQ_MAX_SIZE);
	if (attr->flags & ~(uint64_t)FI_WRITE)
		return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
				    "fi_eq_open: flags 0x%llx not supported\n",
				    (unsigned long long)attr->flags);
	if (attr->wait_obj == FI_WAIT_SET) {
		set = gba_wait_set_get(attr->wait_set);
		if (!set)
			return GBA_WARN_RET(FI_LOG_EQ, -FI_EINVAL,
					    "fi_eq_open: FI_WAIT_SET without a "
					    "gba wait set\n");
	}

	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	ret = gba_wait_init(&eq->wait, attr->wait_obj);
	if (ret) {
		free(eq);
		return ret;
	}
	ret = gba_lock_init(&eq->lock, true);
	if (ret) {
		gba_wait_fini(&eq->wait);
		free(eq);
		return ret;
	}
	if (set) {
		ret = gba_wait_set_add(set, &eq->eq_fid.fid, gba_eq_fid_ready);
		if (ret) {
			gba_lock_destroy(&eq->lock);
			gba_wait_fini(&eq->wait);
			free(eq);
			return ret;
		}
		eq->wait.set = &set->wait;
		eq->wait_set = set;
	}
	atomic_init(&eq->ref, 0);
	atomic_init(&eq->signaled, false);
	eq->fabric = fab;
	eq->flags = attr->flags;
	eq->size = attr->size ? attr->size : gba_params.eq_size;
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &gba_eq_fi_ops;
	eq->eq_fid.ops = &gba_eq_ops;
	atomic_fetch_add(&fab->ref, 1);
	*eq_fid = &eq->eq_fid;
	return 0;
}
