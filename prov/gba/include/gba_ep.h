/*
 * libfabric "gba" provider: the endpoint and its operations (layers 2
 * and 3, see gba_prov.h), and the constructors of the containers (layer
 * 4).
 */
#ifndef GBA_EP_H
#define GBA_EP_H

#include "gba_obj.h"

/* ---- Endpoint (gba_ep.c) ----------------------------------------------- */

enum gba_cntr_slot {
	GBA_CNTR_SEND,
	GBA_CNTR_RECV,
	GBA_CNTR_READ,
	GBA_CNTR_WRITE,
	GBA_CNTR_REMOTE_READ,
	GBA_CNTR_REMOTE_WRITE,
	GBA_CNTR_MAX
};

struct gba_mc;
struct gba_trigger;
struct gba_join_count;
struct gba_swc;
struct gba_swc_op;

/* A collective message kept until its operation (or join) exists. */
struct gba_swc_msg {
	TAILQ_ENTRY(gba_swc_msg) entry;
	uint64_t key;
	struct gba_eng_rx *rx; /* held */
};
TAILQ_HEAD(gba_swc_msg_list, gba_swc_msg);

/*
 * What an endpoint fid leads to: the endpoint, and the default op flags
 * of the verbs called through that fid.  An endpoint's own view (its
 * op flags: fi_info tx_attr/rx_attr->op_flags, FI_SETOPSFLAG) is its
 * first member; an alias (fi_ep_alias(3)) is a view of its own on the
 * same endpoint with other flags.
 */
struct gba_ep_view {
	struct fid_ep ep_fid;
	struct gba_ep *ep;
	uint64_t tx_op_flags;
	uint64_t rx_op_flags;
};

struct gba_ep {
	struct gba_ep_view view; /* first; view.ep is the endpoint itself */
	/*
	 * gba_ep_progress, for the operations that progress their endpoint
	 * before returning -FI_EAGAIN (the progress sits above them).
	 */
	int (*progress)(struct gba_ep *ep);
	struct gba_domain *domain;
	atomic_int ref;
	uint64_t caps;
	struct gba_addr addr;
	bool addr_service; /* addr.ep_id is a service (fi_getinfo's) */
	bool enabled;
	struct gba_av *av;
	struct gba_eq *eq;
	struct gba_cq *tx_cq;
	struct gba_cq *rx_cq;
	bool tx_selective; /* FI_SELECTIVE_COMPLETION on tx bind */
	bool rx_selective;
	struct gba_cntr *cntrs[GBA_CNTR_MAX];
	/*
	 * The counter bound to the region a peer's RMA or atomic being
	 * executed accesses (from the engine's region lookup to its remote
	 * event; gba_eng.c), or NULL.
	 */
	struct gba_cntr *rma_event_cntr;
	struct gba_lock lock;	  /* collective state, trigger list */
	TAILQ_HEAD(, gba_mc) mcs; /* joined collectives */
	TAILQ_HEAD(gba_ep_trigger_list, gba_trigger)
	triggers;	    /* queued FI_TRIGGER ops */
	atomic_int pending; /* barriers in flight: progress needed */
	struct gba_join_count *join_counts; /* uthash: joins per member list */
	LIST_ENTRY(gba_ep) registry;	    /* process-wide list (gba_ep.c) */
	/* Data path to peers (gba_peer.c, gba_msg.c), under @lock. */
	struct gba_eng_ep *eng;		      /* the engine endpoint */
	struct gba_tx_req *tx_reqs, *tx_free; /* outstanding transmits */
	struct gba_rx_entry *rx_entries, *rx_free; /* posted receives */
	TAILQ_HEAD(gba_rx_list, gba_rx_entry) posted[2]; /* [tagged] */
	TAILQ_HEAD(gba_unexp_list, gba_unexp) unexp[2];	 /* [tagged] */
	size_t min_multi_recv;				 /* FI_OPT_MIN_MULTI_RECV */
	fi_addr_t peer_cache_dest; /* last destination resolved */
	struct gba_eng_peer *peer_cache;
	uint64_t peer_cache_gen;
	uint64_t src_cache_key; /* last source resolved (pid << 32 | ep) */
	fi_addr_t src_cache_addr;
	uint64_t src_cache_gen;
	/* Software collectives (gba_coll_sw.c), under @lock. */
	LIST_HEAD(, gba_swc) swcs;	       /* one per joined collective */
	atomic_int swc_ops; /* in flight: progress retries their sends */
	struct gba_swc_msg_list swc_orphans; /* for collectives not joined yet */
};

/* True while @ep has work that completes without a wait-object signal. */
static inline bool gba_ep_pending(struct gba_ep *ep)
{
	return ep->eng ||
	       atomic_load_explicit(&ep->pending, memory_order_relaxed);
}

/*
 * Drive the endpoint's asynchronous work (engine queues, outstanding
 * barriers, joins, deferred work waiting for room).  Called from CQ
 * reads and counter reads/waits.  Cheap when idle.  Returns the engine
 * entries handled (0: nothing arrived).
 */
int gba_ep_progress(struct gba_ep *ep);

/*
 * Report a successful tx-side operation per the endpoint's binds: a CQ
 * entry unless the tx CQ was bound with FI_SELECTIVE_COMPLETION and
 * @flags lacks FI_COMPLETION (fi_cq(3)), and the counter of @slot is
 * incremented.  @flags are the operation's flags; the CQ entry carries
 * the completion bits among them (FI_RMA, FI_ATOMIC, FI_READ, FI_WRITE,
 * FI_COLLECTIVE, ...).  @len is the entry's len (bytes).  Returns 0 or
 * -FI_EAGAIN (CQ full: the completion is lost and counted; callers check
 * gba_ep_tx_has_space before performing an operation).
 */
int gba_ep_tx_complete(struct gba_ep *ep, enum gba_cntr_slot slot,
		       uint64_t flags, void *context, size_t len);
/*
 * Report a failed tx-side operation: an error CQ entry (always, selective
 * completion or not) with positive FI_E* @err, core @prov_errno and
 * optional @err_data (at most GBA_MAX_ERR_DATA bytes), and the error
 * value of the counter of @slot is incremented.  Returns 0 or -FI_EAGAIN.
 */
int gba_ep_tx_error(struct gba_ep *ep, enum gba_cntr_slot slot, uint64_t flags,
		    void *context, int err, int prov_errno,
		    const void *err_data, size_t err_data_size);
/* True if the tx CQ (if any) has room for one more completion. */
bool gba_ep_tx_has_space(struct gba_ep *ep);

/*
 * Resolve @dest (an fi_addr of @ep's AV) to the target endpoint for the
 * direct (self / same-process) path: @ep itself when @dest is its own
 * address (no lock), else another live endpoint of this process (the
 * application keeps it open while it targets it).  Returns 0,
 * -FI_EOPBADSTATE (not enabled), -FI_EINVAL (unknown @dest),
 * -FI_EHOSTUNREACH (another process or host: needs the data path).
 */
int gba_ep_target(struct gba_ep *ep, fi_addr_t dest, struct gba_ep **target);

/* fi_ops.ops_open of the provider's endpoint fids (gba_fid.c). */
int gba_ep_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		       void **ops, void *context);

/*
 * The gba endpoint behind @ep_fid (an endpoint or an alias of one), or
 * NULL (logged) if it is not one: the fi_ops of every endpoint fid of
 * the provider (an endpoint or an alias, both views: struct
 * gba_ep_view) have gba_ep_no_ops_open.
 */
static inline struct gba_ep *gba_ep_of(struct fid_ep *ep_fid)
{
	if (!ep_fid || ep_fid->fid.fclass != FI_CLASS_EP || !ep_fid->fid.ops ||
	    ep_fid->fid.ops->ops_open != gba_ep_no_ops_open) {
		FI_WARN(&gba_prov, FI_LOG_EP_DATA, "not a gba endpoint: %p\n",
			(void *)ep_fid);
		return NULL;
	}
	return container_of(ep_fid, struct gba_ep_view, ep_fid)->ep;
}

/* Default transmit (@tx) or receive op flags of @ep_fid (alias or ep). */
static inline uint64_t gba_ep_op_flags(struct fid_ep *ep_fid, bool tx)
{
	struct gba_ep_view *view;

	if (!gba_ep_of(ep_fid))
		return 0;
	view = container_of(ep_fid, struct gba_ep_view, ep_fid);
	return tx ? view->tx_op_flags : view->rx_op_flags;
}
/* Default op flags the non-msg verbs honour. */
#define GBA_EP_TX_OPFLAGS (FI_COMPLETION | FI_TRIGGER)

/* ---- Data path to peers (gba_peer.c) ----------------------------------- */

/* Front-end flags carried by the engine (struct gba_eng_rx.flags). */
#define GBA_WIRE_TAGGED 1u  /* a tagged message */
#define GBA_WIRE_CQ_DATA 2u /* immediate data is remote CQ data */
#define GBA_WIRE_COLL 4u    /* a software collective's message */

/*
 * A transmit operation in flight through the engine (its cookie); taken
 * from the endpoint's preallocated pool of GBA_TX_SIZE.
 */
struct gba_tx_req {
	struct gba_tx_req *next_free;
	void *context;
	uint64_t flags; /* op flags and completion flags */
	size_t len;	/* bytes, reported in the CQ entry */
	enum gba_cntr_slot slot;
	struct gba_swc_op *coll_op; /* a software collective's send */
	/* fetching atomic into several fi_ioc: old values land here */
	void *bounce;
	struct fi_ioc res[GBA_IOV_LIMIT];
	size_t res_count;
	size_t elem_size;
};

/* Open/close @ep's engine endpoint and pools (fi_endpoint, fi_close). */
/*
 * Give @ep its address (a specific one from @info's source address, else
 * a fresh one) and register it with the process's endpoints (the direct
 * path's targets).  0, -FI_EADDRINUSE, -FI_EINVAL.  Undone by
 * gba_peer_unregister.
 */
int gba_peer_register(struct gba_ep *ep, const struct fi_info *info);
void gba_peer_unregister(struct gba_ep *ep);
int gba_eng_open(struct gba_ep *ep);
void gba_eng_close(struct gba_ep *ep);
/*
 * The engine peer of @dest.  ep->lock held.  Returns 0, -FI_EINVAL (not
 * in the AV), -FI_EHOSTUNREACH (another host, endpoint closed),
 * -FI_ENOMEM.  Logged.
 */
int gba_peer_get(struct gba_ep *ep, fi_addr_t dest,
		 struct gba_eng_peer **peer);
/* gba_peer_get without the lock held: 0 if @dest is reachable now. */
int gba_peer_check(struct gba_ep *ep, fi_addr_t dest);
/* fi_addr of message source @src in @ep's AV (FI_ADDR_NOTAVAIL). */
fi_addr_t gba_peer_src(struct gba_ep *ep, const struct gba_addr *src);
/* Take / return a transmit request (ep->lock held); NULL if none left. */
struct gba_tx_req *gba_tx_req_get(struct gba_ep *ep);
void gba_tx_req_put(struct gba_ep *ep, struct gba_tx_req *req);
/*
 * Take @ep's lock for data-path work.  Counter changes made while it is
 * held fire their triggers only at gba_ep_data_unlock (a trigger may
 * post to this endpoint).  Returns the token for unlock.
 */
bool gba_ep_data_lock(struct gba_ep *ep);
void gba_ep_data_unlock(struct gba_ep *ep, bool token);
/*
 * Report a receive-side completion per @ep's binds (selective
 * completion honoured unless @flags has FI_COMPLETION), counter
 * GBA_CNTR_RECV; @err nonzero: an error entry (FI_E*, @olen bytes cut).
 */
void gba_ep_rx_complete(struct gba_ep *ep, int err, void *context,
			uint64_t flags, size_t len, void *buf, uint64_t data,
			uint64_t tag, fi_addr_t src, size_t olen);

/* ---- Messages (gba_msg.c) ----------------------------------------------- */

extern struct fi_ops_msg gba_ep_msg_ops;
extern struct fi_ops_tagged gba_ep_tagged_ops;
/* Allocate the posted-receive pool (gba_eng_open).  0 or -FI_ENOMEM. */
int gba_msg_init(struct gba_ep *ep);
/* The engine's recv callback: match @rx or keep it as unexpected. */
void gba_msg_arrived(struct gba_ep *ep, struct gba_eng_rx *rx);
/* fi_cancel of a posted receive: 0 (FI_ECANCELED entry) or -FI_ENOENT. */
ssize_t gba_msg_cancel(struct gba_ep *ep, void *context);
/*
 * Drop posted receives and unexpected messages (an unexpected large
 * message's sender completes with an error), free the pool.
 */
void gba_msg_fini(struct gba_ep *ep);

/* ---- Collectives (gba_coll.c) ------------------------------------------ */

/*
 * The domain's GBA device, opened on first use by the first join
 * (gba_coll_join.c).  Returns 0 or a negative -FI_E*.
 */
int gba_domain_dev(struct gba_domain *domain, struct gba_dev **devp);
extern struct fi_ops_collective gba_ep_collective_ops;
/* fi_join(3) / fi_join_collective(3) on an endpoint (fi_ops_cm.join). */
int gba_ep_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		struct fid_mc **mc, void *context);
/* Leave every collective @ep joined; barriers in flight are dropped. */
void gba_ep_close_mcs(struct gba_ep *ep);
/*
 * Poll the barriers in flight on @ep's collectives; report completions
 * (outside the endpoint lock) and arrive at the next queued barriers.
 */
void gba_coll_progress(struct gba_ep *ep);
/*
 * fi_cancel(3) of a barrier (or triggered barrier) that has not arrived
 * yet: it completes with FI_ECANCELED.  Returns 0 or -FI_ENOENT.
 */
ssize_t gba_coll_cancel(struct gba_ep *ep, void *context);
/* Free the endpoint's collective bookkeeping (join counts). */
void gba_coll_fini(struct gba_ep *ep);

/* ---- Software collectives (gba_coll_sw.c) ------------------------------- */

/* One collective call, as the verbs describe it. */
struct gba_swc_args {
	enum fi_collective_op coll;
	void *buf;    /* contribution (broadcast: in/out) */
	void *result; /* where results land */
	size_t count; /* elements (see fi_gba(7) per collective) */
	enum fi_datatype datatype;
	enum fi_op op;
	fi_addr_t root_addr; /* FI_ADDR_NOTAVAIL: member 0 */
	uint32_t root;	     /* member index (filled by gba_swc_post) */
	uint64_t flags;
	void *context;
};

/*
 * Software side of a joined collective identified by join @key, over
 * the members of @set, this endpoint being member @me.  0 or -FI_ENOMEM.
 */
int gba_swc_open(struct gba_ep *ep, uint64_t key, struct gba_av_set *set,
		 uint32_t me, struct gba_swc **swc);
void gba_swc_close(struct gba_swc *swc);
/* True while operations are posted and not complete. */
bool gba_swc_busy(struct gba_swc *swc);
/*
 * Post a collective (shape checked by the caller).  Returns 0,
 * -FI_EINVAL (root not a member, count not divisible), -FI_EAGAIN (CQ
 * full), -FI_ENOMEM.
 */
ssize_t gba_swc_post(struct gba_swc *swc, const struct gba_swc_args *args);
/* Engine messages flagged GBA_WIRE_COLL (ep lock held). */
void gba_swc_arrived(struct gba_ep *ep, struct gba_eng_rx *rx);
/* A large send of a collective completed (ep lock held). */
void gba_swc_send_done(struct gba_ep *ep, struct gba_swc_op *op, int status);
/* Retry blocked sends, finish operations (ep lock held). */
void gba_swc_progress(struct gba_ep *ep);
/* Free messages kept for collectives never joined (endpoint close). */
void gba_swc_fini(struct gba_ep *ep);
/* ---- Atomic executor (gba_atomic_exec.c) ------------------------------ */

/* The three shapes of atomic verbs (fi_atomic(3)). */
enum gba_atomic_kind { GBA_ATOMIC_WRITE, GBA_ATOMIC_FETCH, GBA_ATOMIC_CMP };

/* Bytes of an element of @dt (0: not supported). */
size_t gba_atomic_dt_size(enum fi_datatype dt);
/* True if @op on @dt is supported for @kind. */
bool gba_atomic_valid(enum fi_datatype dt, enum fi_op op,
		      enum gba_atomic_kind kind);
/*
 * Update one element of @dt at @target with @op: operand @opnd (NULL for
 * FI_ATOMIC_READ), compare value @cmp (compare atomics), the old value
 * into @result (NULL: not wanted).  @target is aligned to the element.
 */
void gba_atomic_elem(enum fi_datatype dt, enum fi_op op, void *target,
		     const void *opnd, const void *cmp, void *result);
/*
 * Execute @count elements of atomic @op on @dt at @dst (the target side
 * of a peer's atomic, struct gba_eng_ops.atomic).  Returns 0 or -EINVAL
 * (unsupported pair, misaligned target).
 */
int gba_atomic_exec(void *ctx, uint32_t op, uint32_t dt, void *dst,
		    const void *operand, const void *compare, void *result,
		    size_t count);

/* ---- RMA and atomics (gba_rma.c, gba_atomic.c) ------------------------- */

/*
 * Resolve the target of a direct-path RMA or atomic of @len bytes at
 * remote @addr under @key, needing @access (FI_REMOTE_READ or
 * FI_REMOTE_WRITE): *@peer is the target endpoint and *@ptr the local
 * address.  Returns 0; a negative -FI_E* the verb returns at once
 * (-FI_EINVAL, -FI_EOPBADSTATE, -FI_EHOSTUNREACH, logged); or a positive
 * FI_E* for a target-side error (FI_EKEYREJECTED, FI_EACCES, FI_EINVAL
 * out of range) that the verb reports as an error completion.
 */
int gba_rma_resolve(struct gba_ep *ep, fi_addr_t dest, uint64_t addr,
		    uint64_t key, size_t len, uint64_t access,
		    struct gba_ep **peer, void **ptr, struct gba_cntr **mr_cntr);
/* Provider-specific op flag (FI_PROV_SPECIFIC bits): no CQ entry (inject). */
#define GBA_FLAG_NO_CQ (1ULL << 60)

/*
 * Report a direct operation: @err 0 is a success (gba_ep_tx_complete: a
 * CQ entry per selective completion, none with GBA_FLAG_NO_CQ; the
 * counter of @slot), a positive FI_E* an error completion
 * (gba_ep_tx_error).  On success with FI_REMOTE_CQ_DATA in @flags, @data
 * is delivered to @peer's rx CQ (FI_RMA | FI_REMOTE_WRITE |
 * FI_REMOTE_CQ_DATA, @len); on success the access is counted at @peer
 * (gba_rma_target_event, with @mr_cntr from gba_rma_resolve).
 */
void gba_rma_report(struct gba_ep *ep, struct gba_ep *peer, int err,
		    enum gba_cntr_slot slot, uint64_t flags, void *context,
		    size_t len, uint64_t data, struct gba_cntr *mr_cntr);
/*
 * A remote access of @target's memory is done: count it on @target's
 * counter @slot (GBA_CNTR_REMOTE_WRITE for writes and atomics,
 * GBA_CNTR_REMOTE_READ for reads) if @target has FI_RMA_EVENT, and on
 * @mr_cntr, the counter bound to the region (NULL: none).
 */
void gba_rma_target_event(struct gba_ep *target, enum gba_cntr_slot slot,
			  struct gba_cntr *mr_cntr);

extern struct fi_ops_rma gba_ep_rma_ops;
extern struct fi_ops_atomic gba_ep_atomic_ops;
int gba_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr,
		     uint64_t flags);
int gba_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			 struct fi_collective_attr *attr, uint64_t flags);

/* ---- Triggered operations (gba_trigger.c) ------------------------------ */

/*
 * A triggered operation (fi_trigger(3), FI_TRIGGER_THRESHOLD): the verb
 * that received FI_TRIGGER allocates its own record with struct
 * gba_trigger as the FIRST member (it is released with free()), fills
 * @run and @ep, copies whatever the operation needs (iovs, operands:
 * the caller's arrays may be gone when it fires) and queues it with
 * gba_trigger_queue; @context, @flags and @slot describe the completion
 * fi_cancel reports.  When the counter reaches @threshold, @run performs
 * the operation exactly as the immediate verb would and reports its
 * completion or error through gba_ep_tx_complete / gba_ep_tx_error
 * (op_context is the struct fi_triggered_context, as fi_trigger(3)
 * says).  A trigger that is discarded (its endpoint or counter closed)
 * never runs.
 *
 * Deferred work (gba_deferred.c) uses the same records with @discard
 * set: the record manages its own memory (@run owns it from the call
 * on; @discard disposes of it when it is dropped without running),
 * @ep may be NULL (counter operations) and @count_err compares the
 * threshold with value + error value, as fi_trigger(3) says of work
 * queues.
 *
 * Ownership: a trigger belongs to its counter's list while @queued;
 * whoever clears @queued under the counter's lock (the firing, a
 * drain, a cancel) owns it and unlinks it from its endpoint's list.
 */
struct gba_trigger {
	TAILQ_ENTRY(gba_trigger) cntr_entry; /* counter's list, by threshold */
	TAILQ_ENTRY(gba_trigger) ep_entry;   /* endpoint's list */
	struct gba_cntr *cntr;
	uint64_t threshold;
	struct gba_ep *ep; /* NULL: not on an endpoint's list */
	void (*run)(struct gba_trigger *trig);
	void (*discard)(struct gba_trigger *trig); /* NULL: free() */
	bool queued;	/* on cntr's list (cntr->lock) */
	bool count_err; /* threshold counts value + err */
	/* for fi_cancel: the operation's context, flags and counter event */
	void *context;
	uint64_t flags;
	enum gba_cntr_slot slot;
};

/*
 * Validate the fi_triggered_context of an FI_TRIGGER operation on @ep:
 * event FI_TRIGGER_THRESHOLD on a gba counter of @ep's domain.  Fills
 * *@cntr and *@threshold.  Returns 0, -FI_EINVAL (NULL context, foreign
 * counter), -FI_ENOSYS (FI_TRIGGER_XPU and other events).  Logged.
 */
int gba_trigger_parse(struct gba_ep *ep, void *context, struct gba_cntr **cntr,
		      uint64_t *threshold);
/*
 * Queue @trig (trig->ep, trig->run set) on @cntr for @threshold; it runs
 * when the counter's value reaches the threshold, at once (before this
 * returns) if it already has.  Triggers with equal thresholds run in
 * queue order.  Returns 0 (the trigger is owned by the provider from
 * then on).
 */
int gba_trigger_queue(struct gba_cntr *cntr, uint64_t threshold,
		      struct gba_trigger *trig);
/*
 * Defer the firing of triggers made due on this thread until the
 * matching gba_trigger_defer_end (returns the token it needs).
 */
bool gba_trigger_defer_begin(void);
void gba_trigger_defer_end(bool token);
/* Discard every trigger @ep queued (endpoint close). */
void gba_trigger_drain_ep(struct gba_ep *ep);
/*
 * fi_cancel(3) of a triggered operation of @ep with @context still waiting
 * for its counter: it is removed and completes with FI_ECANCELED.
 * Returns 0 or -FI_ENOENT.
 */
ssize_t gba_trigger_cancel(struct gba_ep *ep, void *context);
/*
 * Take @trig off its counter's (and endpoint's) list if it is still
 * queued; the caller then owns it.  Returns false if it fired or was
 * taken by another thread meanwhile.  Called without endpoint or counter
 * locks held.
 */
bool gba_trigger_unqueue(struct gba_trigger *trig);

/* ---- Deferred work (gba_deferred.c) ------------------------------------ */

/*
 * Provider op flag of an operation issued by deferred work: its context
 * is the struct gba_work record, and its completion goes to
 * gba_work_end (completion counter; endpoint CQ and counter only with
 * FI_COMPLETION) instead of the endpoint.
 */
#define GBA_FLAG_DEFERRED (1ULL << 61)

/* A queued, fired or in-flight deferred work request (gba_deferred.c). */
struct gba_work {
	struct gba_trigger base;     /* first; base.discard is set */
	TAILQ_ENTRY(gba_work) entry; /* domain->works or domain->retry */
	bool listed;		     /* on domain->works (work_lock) */
	struct gba_domain *domain;
	struct fi_deferred_work *user; /* FI_CANCEL_WORK's key */
	enum fi_op_type type;
	struct gba_ep *ep;	 /* NULL for counter operations */
	struct gba_cntr *comp;	 /* completion counter or NULL */
	uint64_t flags;		 /* the operation's flags */
	void *op_context;	 /* its context (endpoint completions) */
	struct gba_cntr *target; /* counter operations */
	uint64_t value;
	/* copies of the operation's descriptors (context: this record) */
	union {
		struct fi_msg_tagged msg; /* messages (tag unused untagged) */
		struct fi_msg_rma rma;
		struct fi_msg_atomic atomic;
	} m;
	struct iovec iov[GBA_IOV_LIMIT];
	struct fi_rma_iov rma_iov;
	struct fi_ioc ioc[GBA_IOV_LIMIT];
	struct fi_rma_ioc rma_ioc;
	struct fi_ioc cmp[GBA_IOV_LIMIT];
	struct fi_ioc res[GBA_IOV_LIMIT];
	size_t cmp_count, res_count;
};

/*
 * End a deferred operation whose completion is being reported with
 * @context (its record) and *@flags: frees the record and returns the
 * operation's own context; *@flags loses GBA_FLAG_DEFERRED and keeps
 * FI_COMPLETION if the work asked for endpoint completions; *@comp is
 * the completion counter (or NULL), still referenced: the caller bumps
 * it after the endpoint report with gba_cntr_inc_release.  Returns
 * whether the endpoint reports it too.
 */
bool gba_work_end(void *context, uint64_t *flags, void **op_context,
		  struct gba_cntr **comp);
/* Drop the record of a deferred operation its endpoint discards (close). */
void gba_work_drop(void *context);
/* Free @w and drop its references on its completion and target counters. */
void gba_work_free(struct gba_work *w);
/*
 * Resubmit fired work that got -FI_EAGAIN, in order, until the list is
 * empty or the first refuses again.  Called from endpoint progress when
 * domain->nretry is set.
 */
void gba_work_retry(struct gba_domain *domain);
/* Drop the work of @ep waiting for room (endpoint close). */
void gba_work_close_ep(struct gba_ep *ep);
/* The domain's work lists (fi_domain, fi_close).  0 or -FI_ENOMEM. */
int gba_work_init(struct gba_domain *domain);
void gba_work_fini(struct gba_domain *domain);

/*
 * Entry points of the verbs after their flag checks, for deferred work
 * (which adds GBA_FLAG_DEFERRED): the same validation, then run.  Return
 * as the verbs (gba_rma.c, gba_atomic.c, gba_msg.c).
 */
ssize_t gba_rma_submit(struct fid_ep *ep_fid, bool write,
		       const struct fi_msg_rma *msg, uint64_t flags);
/* @kind: FI_OP_ATOMIC, FI_OP_FETCH_ATOMIC or FI_OP_COMPARE_ATOMIC. */
ssize_t gba_atomic_submit(struct fid_ep *ep_fid, enum fi_op_type kind,
			  const struct fi_msg_atomic *msg,
			  const struct fi_ioc *cmp, size_t cmp_count,
			  struct fi_ioc *res, size_t res_count, uint64_t flags);
ssize_t gba_msg_send_submit(struct fid_ep *ep_fid,
			    const struct fi_msg_tagged *msg, uint64_t flags,
			    bool tagged);
ssize_t gba_msg_recv_submit(struct fid_ep *ep_fid,
			    const struct fi_msg_tagged *msg, uint64_t flags,
			    bool tagged);

/* ---- Domain-wide progress (gba_progress.c) ----------------------------- */

/*
 * Every open endpoint of a domain registers here.  Counters named by
 * deferred work and the optional progress thread progress the whole
 * list; the ordinary CQ and counter paths never touch it.
 */
int gba_progress_init(struct gba_domain *domain);
void gba_progress_fini(struct gba_domain *domain);
/* Add / remove an endpoint (fi_endpoint, fi_close).  0 or -FI_ENOMEM. */
int gba_progress_add_ep(struct gba_domain *domain, struct gba_ep *ep);
void gba_progress_del_ep(struct gba_domain *domain, struct gba_ep *ep);
/*
 * Progress every endpoint of @domain once, unless another thread is
 * doing so right now.  Returns the engine entries handled (0: idle).
 */
int gba_progress_domain(struct gba_domain *domain);

/* ---- Domain and fabric (gba_domain.c, gba_fabric.c) ------------------- */

/*
 * fi_control(3) on a domain: FI_QUEUE_WORK, FI_CANCEL_WORK, FI_FLUSH_WORK
 * (gba_deferred.c).  Returns 0 or -FI_E* (logged).
 */
int gba_domain_control(struct fid *fid, int command, void *arg);

/* Object constructors (fi_ops_* entry points) */
int gba_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
int gba_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
int gba_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);

#endif /* GBA_EP_H */
