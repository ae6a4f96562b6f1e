/*
 * libfabric "gba" provider: the fid classes that hold completions, events
 * and addresses (layer 1, see gba_prov.h): wait sets, EQs, CQs,
 * counters, poll sets, memory registrations, AVs and AV sets, and the
 * domain and fabric structures they hang off.
 */
#ifndef GBA_OBJ_H
#define GBA_OBJ_H

#include "gba_prov.h"
#include <gba/fi_ext_gba.h>

/* ---- Progress sources (bound to CQs and counters) ---------------------- */

/*
 * Something the reads and waits of a CQ or counter progress: a bound
 * endpoint (gba_ep.c sets @progress) or a whole domain (gba_progress.c).
 * @progress(@ctx, pending) drives @ctx once and sets *@pending (if not
 * NULL) when @ctx has work in flight that completes without a wait-object
 * signal; it returns the engine entries handled (0: idle).  CQs and
 * counters call it through the pointer, as libfabric's util CQ calls the
 * progress of its endpoints, so they call no endpoint function by name.
 */
struct gba_progress_src {
	void *ctx;
	int (*progress)(void *ctx, bool *pending);
};

/*
 * A list of progress sources (UT_array of struct gba_progress_src) in a
 * CQ or counter.  A context bound several times (an endpoint bound for
 * both directions, or for several counter events) is listed once per
 * binding, the copies adjacent, and progressed once per pass.  The
 * caller serializes these calls (the object's ep_lock).
 */
static const UT_icd gba_progress_src_icd
	__attribute__((unused)) = {.sz = sizeof(struct gba_progress_src)};

/* Add a binding of @ctx, next to its others.  0 or -FI_ENOMEM. */
static inline int gba_progress_srcs_add(UT_array *srcs, void *ctx,
					int (*progress)(void *ctx,
							bool *pending))
{
	struct gba_progress_src src = {.ctx = ctx, .progress = progress};
	struct gba_progress_src *s = NULL;
	unsigned i = 0;

	while ((s = utarray_next(srcs, s)) && s->ctx != ctx)
		i++;
	return gba_utarray_insert(srcs, &src, i);
}

/* Remove one binding of @ctx.  Returns false if it had none. */
static inline bool gba_progress_srcs_del(UT_array *srcs, void *ctx)
{
	struct gba_progress_src *s = NULL;

	while ((s = utarray_next(srcs, s))) {
		if (s->ctx == ctx) {
			utarray_erase(srcs, utarray_eltidx(srcs, s), 1);
			return true;
		}
	}
	return false;
}

/* Progress every context of @srcs once; *@pending as above. */
static inline void gba_progress_srcs_run(UT_array *srcs, bool *pending)
{
	struct gba_progress_src *s = utarray_front(srcs);
	unsigned i, n = utarray_len(srcs);

	for (i = 0; i < n; i++) {
		if (i && s[i].ctx == s[i - 1].ctx)
			continue; /* bound again: progressed already */
		s[i].progress(s[i].ctx, pending);
	}
}

/* ---- Fabric, domain ---------------------------------------------------- */

struct gba_fabric {
	struct fid_fabric fabric_fid;
	atomic_int ref; /* domains, EQs, wait sets */
};

/* A wait set member (gba_wait_set_add). */
struct gba_wait_set_member {
	struct fid *fid;
	bool (*ready)(struct fid *fid, bool *pending);
};

/* A wait set (fi_wait_open): members signal @wait (gba_wait_set.c). */
struct gba_wait_set {
	struct fid_wait wait_fid;
	struct gba_fabric *fabric;
	struct gba_wait wait;
	atomic_int ref;	      /* member CQs, EQs, counters */
	pthread_mutex_t lock; /* members */
	UT_array members;     /* struct gba_wait_set_member */
};

/*
 * fi_wait_open(3) (fi_ops_fabric.wait_open).  @attr->wait_obj:
 * FI_WAIT_UNSPEC or FI_WAIT_FD (FI_WAIT_YIELD polls); @attr->flags must
 * be 0.  Returns 0, -FI_EINVAL, -FI_ENOSYS, -FI_ENOMEM, -FI_EMFILE.
 */
int gba_wait_set_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		      struct fid_wait **waitset);
/* Resolve attr->wait_set of an EQ/CQ/counter; NULL if not a gba set. */
struct gba_wait_set *gba_wait_set_get(struct fid_wait *wait_set);
/*
 * Make @member (a CQ, EQ or counter opened with FI_WAIT_SET) report to
 * @set: fi_wait asks @ready(@member, pending), which progresses it and
 * returns true if a read would return something (*pending as for
 * gba_wait_set_ready).  The set cannot close while it has members.
 * Returns 0 or -FI_ENOMEM.
 */
int gba_wait_set_add(struct gba_wait_set *set, struct fid *member,
		     bool (*ready)(struct fid *member, bool *pending));
/* Undo gba_wait_set_add (member close). */
void gba_wait_set_del(struct gba_wait_set *set, struct fid *member);
/*
 * Progress and readiness test of a wait set, a CQ, an EQ or a counter:
 * true if a read would return something.  *@pending (if not NULL) is
 * set when a bound endpoint has work in flight that completes without a
 * signal (GBA release flags are polled), so fi_trywait must fail and
 * waits must poll.
 */
bool gba_wait_set_ready(struct gba_wait_set *set, bool *pending);
bool gba_eq_ready(struct gba_eq *eq);
bool gba_cq_ready(struct gba_cq *cq, bool *pending);
bool gba_cntr_ready(struct gba_cntr *cntr, bool *pending);
/*
 * Progress @cntr; true if its value or error value changed since the
 * last call, fi_cntr_set/fi_cntr_add (value) or fi_cntr_seterr/adderr
 * (error value), which move the checkpoint (fi_poll(3)).
 */
bool gba_cntr_poll(struct gba_cntr *cntr);

struct gba_domain {
	struct fid_domain domain_fid;
	struct gba_fabric *fabric;
	atomic_int ref; /* every child object: busy if > 0 */
	enum fi_threading threading;
	uint64_t mr_mode; /* FI_MR_PROV_KEY / FI_MR_VIRT_ADDR */
	enum fi_progress data_progress;
	enum fi_progress control_progress;
	enum fi_av_type av_type; /* FI_AV_UNSPEC: AV picks */
	bool locking;		 /* objects need locks (threading) */
	struct gba_eq *eq;	 /* fi_domain_bind */
	struct gba_lock lock;	 /* MR table, device open, ep list */
	struct gba_mr *mr_map;	 /* uthash, keyed by MR key */
	uint64_t next_key;	 /* FI_MR_PROV_KEY allocator */
	struct gba_dev *dev;	 /* opened at first join (lazily) */
	uint64_t caps;
	uint32_t api_version; /* the fabric's (err_data layout) */
	/* Live objects, checked against the advertised limits. */
	atomic_int ncq;
	atomic_int ncntr;
	atomic_int nmr;
	atomic_int nep; /* maintained by gba_ep.c */
	/* Deferred work (gba_deferred.c) */
	pthread_mutex_t work_lock;		   /* the lists below */
	TAILQ_HEAD(gba_work_list, gba_work) works; /* queued, not yet fired */
	struct gba_work_list retry; /* fired, waiting for room (-FI_EAGAIN) */
	atomic_int nretry;	    /* fast check: retry list not empty */
	atomic_bool retrying;	    /* one thread drains the retry list */
	/* Domain-wide progress (gba_progress.c) */
	struct gba_progress *progress;
	/*
	 * Every endpoint of the domain once (set by gba_progress_init):
	 * what reads of counters named by deferred work progress.
	 */
	struct gba_progress_src progress_all;
};

/* ---- Event queue (gba_eq.c) -------------------------------------------- */

struct gba_eq_event;

struct gba_eq {
	struct fid_eq eq_fid;
	struct gba_fabric *fabric;
	atomic_int ref; /* domain/AV/endpoint binds */
	uint64_t flags; /* attr flags (FI_WRITE) */
	size_t size;	/* entries fi_eq_write fills (provider's: beyond) */
	size_t count;	/* queued entries */
	size_t nerr;	/* queued error entries */
	bool over;	/* count went over size (logged once) */
	struct gba_lock lock;
	struct gba_wait wait;
	struct gba_wait_set *wait_set;
	atomic_bool signaled; /* fi_eq_sread returns early */
	struct gba_eq_event *head, *tail;
	uint8_t err_data[GBA_MAX_ERR_DATA]; /* readerr's returned copy */
	char errstr[128];		    /* fi_eq_strerror without buffer */
};

/*
 * Queue an event.  @buf/@len is the event data (struct fi_eq_entry for
 * FI_JOIN_COMPLETE).  A full EQ keeps it beyond its size (never refused).
 * Returns 0, -FI_EINVAL, -FI_ENOMEM (lost, logged).
 */
int gba_eq_write_event(struct gba_eq *eq, uint32_t event, const void *buf,
		       size_t len, uint64_t flags);
/*
 * Queue an error entry; a full EQ keeps it beyond its size (never
 * refused).  Returns 0, -FI_EINVAL, -FI_ENOMEM (lost, logged).
 */
int gba_eq_write_error(struct gba_eq *eq, fid_t fid, void *context,
		       uint64_t data, int err, int prov_errno);

/* ---- Completion queue (gba_cq.c) --------------------------------------- */

struct gba_ep;
struct gba_cq_entry;
struct gba_cq_err;

/*
 * A completion queue: a ring of preallocated entries (success entries and
 * markers of errors, so that errors keep their place in the order) and a
 * smaller ring of error details.  Owned by gba_cq.c; other files use the
 * functions below (the struct is here for container_of on bind).
 */
struct gba_cq {
	struct fid_cq cq_fid;
	struct gba_domain *domain;
	atomic_int ref; /* bound endpoints, poll sets: close busy */
	enum fi_cq_format format;
	size_t entry_size; /* of the user format */
	enum fi_cq_wait_cond wait_cond;
	struct gba_lock lock;
	struct gba_wait wait;
	struct gba_wait_set *wait_set;
	atomic_bool signaled; /* fi_cq_signal */
	size_t size;	      /* ring capacity */
	struct gba_cq_entry *ring; /* mask + 1 >= size slots */
	uint64_t mask;		   /* slot of position p: p & mask */
	_Atomic uint64_t head; /* next to read */
	_Atomic uint64_t tail; /* next to write */
	size_t err_size;
	struct gba_cq_err *errs;
	uint64_t err_head, err_tail;
	struct gba_cq_over *over_head; /* full: completions in order */
	struct gba_cq_over **over_tail;
	_Atomic size_t nover;	 /* entries on the overflow list */
	unsigned over_logged;	 /* the overflow was logged */
	uint64_t overflows;	 /* completions lost: full, no memory */
	struct gba_lock ep_lock; /* srcs: held while progressing them */
	UT_array srcs; /* struct gba_progress_src: progressed by reads */
	uint8_t err_data[GBA_MAX_ERR_DATA]; /* readerr's returned copy */
	char errstr[128];		    /* fi_cq_strerror without buffer */
};

/*
 * Write one successful completion.  Formats CONTEXT/MSG/DATA/TAGGED take
 * what they need of the arguments; @src is reported by fi_cq_readfrom.
 * A full CQ keeps the completion in an overflow list (allocated) until
 * reads make room; returns 0, or -FI_ENOMEM if that fails (lost, logged).
 * Check gba_cq_has_space before starting an operation (FI_RM_ENABLED).
 */
int gba_cq_write(struct gba_cq *cq, void *context, uint64_t flags, size_t len,
		 void *buf, uint64_t data, uint64_t tag, fi_addr_t src);
/* Write an error completion (err is a positive FI_E* value). */
int gba_cq_write_error(struct gba_cq *cq, void *context, uint64_t flags,
		       int err, int prov_errno, size_t len, size_t olen);
/*
 * Same with provider error data (reported by fi_cq_readerr's err_data,
 * at most GBA_MAX_ERR_DATA bytes; longer data is refused with
 * -FI_EINVAL).  By convention prov_errno is a positive errno of the core
 * library and err_data, for barrier errors, the 64-bit ERROR_INFO.
 */
int gba_cq_write_error_data(struct gba_cq *cq, void *context, uint64_t flags,
			    int err, int prov_errno, size_t len, size_t olen,
			    const void *err_data, size_t err_data_size);
/* True if @n more completions fit (so an operation can complete). */
bool gba_cq_has_space(struct gba_cq *cq, size_t n);
/*
 * gba_cq_bind_progress - bind progress source @ctx (an endpoint) to @cq:
 * reads and waits of @cq call @progress(@ctx, pending) (see struct
 * gba_progress_src), and @cq cannot close while it is bound.  A context
 * bound for both directions binds twice and is progressed once per
 * read.  Returns 0, -FI_EINVAL (NULL argument), -FI_ENOMEM.
 */
int gba_cq_bind_progress(struct gba_cq *cq, void *ctx,
			 int (*progress)(void *ctx, bool *pending));
/*
 * gba_cq_unbind_progress - undo one gba_cq_bind_progress of @ctx.  It
 * waits for a progress call in another thread to finish: do not call it
 * while holding a lock the progress function takes (ep->lock: endpoint
 * progress runs under the CQ's ep_lock and may take it).  The same holds
 * for counters.
 */
void gba_cq_unbind_progress(struct gba_cq *cq, void *ctx);

/* ---- Counter (gba_cntr.c) ---------------------------------------------- */

struct gba_trigger;

/*
 * What a counter does with the triggered operations queued on it: the
 * trigger module (gba_trigger.c) installs these in cntr->trigger_ops
 * when it first queues one, so the counter calls no trigger function by
 * name.  Called only while ntriggers is not 0.
 */
struct gba_cntr_trigger_ops {
	void (*fire)(struct gba_cntr *cntr);  /* a change: run the due ones */
	void (*drain)(struct gba_cntr *cntr); /* close: discard them all */
};

struct gba_cntr {
	struct fid_cntr cntr_fid;
	struct gba_domain *domain;
	atomic_int ref; /* ep binds, poll sets, deferred work: close busy */
	_Atomic uint64_t value;
	_Atomic uint64_t err;
	struct gba_wait wait;
	struct gba_wait_set *wait_set;
	struct gba_lock lock;	 /* triggers (gba_trigger.c) */
	struct gba_lock ep_lock; /* srcs: held while progressing them */
	/* Triggered operations waiting on this counter, by threshold. */
	TAILQ_HEAD(gba_trigger_list, gba_trigger) triggers;
	atomic_int ntriggers; /* fast check: nothing to fire */
	/*
	 * Set once, under @lock, before ntriggers first rises (whoever reads
	 * ntriggers != 0 sees it); NULL while nothing was ever queued.
	 */
	const struct gba_cntr_trigger_ops *trigger_ops;
	UT_array srcs; /* struct gba_progress_src: progressed by reads, waits */
	uint64_t last_value; /* seen by the last read (trywait) */
	uint64_t last_err;
	/* Seen by the last fi_poll, fi_cntr_set/add (gba_cntr_poll). */
	_Atomic uint64_t poll_value;
	_Atomic uint64_t poll_err;
	/*
	 * On a thread's list of counters whose triggers to run; that thread
	 * alone runs them until it unlists the counter.  fire_again: changed
	 * since the owner last looked.
	 */
	atomic_bool fire_listed;
	atomic_bool fire_again;
	struct gba_cntr *fire_next;
	/*
	 * Named by deferred work (gba_deferred.c): any endpoint of the
	 * domain may change it, so reads and waits progress them all
	 * (domain->progress_all).
	 */
	atomic_bool domain_progress;
};

/* Increment value (or err) by 1, fire due triggers, wake waiters. */
void gba_cntr_inc(struct gba_cntr *cntr);
void gba_cntr_inc_err(struct gba_cntr *cntr);
/* Increment (or @err: the error value) and drop a deferred reference. */
void gba_cntr_inc_release(struct gba_cntr *cntr, bool err);
/*
 * gba_cntr_bind_progress - bind progress source @ctx (an endpoint) to
 * @cntr: reads and waits of @cntr call @progress(@ctx, pending), and
 * @cntr cannot close while it is bound.  An endpoint binding the counter
 * for several events binds once per event and is progressed once per
 * read.  Returns 0, -FI_EINVAL (NULL argument), -FI_ENOMEM.
 */
int gba_cntr_bind_progress(struct gba_cntr *cntr, void *ctx,
			   int (*progress)(void *ctx, bool *pending));
/* gba_cntr_unbind_progress - undo one gba_cntr_bind_progress of @ctx. */
void gba_cntr_unbind_progress(struct gba_cntr *cntr, void *ctx);

/* ---- Memory registration (gba_mr.c) ------------------------------------ */

struct gba_mr {
	struct fid_mr mr_fid; /* mr_fid.key, mr_fid.mem_desc = this */
	struct gba_domain *domain;
	uint64_t key;
	uint64_t access;
	uint64_t offset; /* remote address of byte 0 (offset mode) */
	uint64_t flags;
	size_t len; /* total of iov lengths */
	size_t iov_count;
	struct iovec iov[GBA_MR_IOV_LIMIT];
	/*
	 * fi_mr_bind(3): @cntr counts the remote accesses named by
	 * @cntr_flags (FI_REMOTE_WRITE, FI_REMOTE_READ); the region holds a
	 * reference on it.  A region registered with FI_RMA_EVENT refuses
	 * remote access until fi_mr_enable (@enabled).
	 */
	struct gba_cntr *cntr;
	uint64_t cntr_flags;
	bool enabled;
	UT_hash_handle hh; /* domain->mr_map */
};

/*
 * Validate a remote access of @len bytes at @addr under @key (with the
 * domain's FI_MR_VIRT_ADDR mode, @addr is virtual; otherwise an offset
 * into the region) needing @access (FI_REMOTE_READ / FI_REMOTE_WRITE).
 * On success *@ptr is the local address and *@cntr (if @cntr is not
 * NULL) the counter bound to the region for one of the @access bits, or
 * NULL: the caller increments it once the access is done.  Returns 0,
 * -FI_EKEYREJECTED (unknown key, or an FI_RMA_EVENT region not enabled),
 * -FI_EACCES (access not granted), -FI_EINVAL (range outside the region).
 */
int gba_mr_lookup(struct gba_domain *domain, uint64_t key, uint64_t addr,
		  size_t len, uint64_t access, void **ptr,
		  struct gba_cntr **cntr);

/* ---- Address vector (gba_av.c) ----------------------------------------- */

/* One AV entry; chunks of them never move once allocated. */
struct gba_av_entry {
	struct gba_addr addr;
	fi_addr_t fi_addr;
	bool used;
	UT_hash_handle hh; /* reverse map, first entry per address */
};

#define GBA_AV_CHUNK 256

struct gba_av {
	struct fid_av av_fid;
	struct gba_domain *domain;
	atomic_int ref; /* AV sets, bound endpoints */
	enum fi_av_type type;
	uint64_t flags;		      /* attr flags (FI_EVENT) */
	struct gba_lock lock;	      /* insert/remove/sets */
	struct gba_av_entry **chunks; /* GBA_AV_CHUNK entries each */
	size_t nchunks;		      /* allocated chunk pointers */
	size_t count;		      /* highest index used + 1 */
	size_t size;		      /* entries allocated */
	size_t live;		      /* entries in use */
	size_t free_hint;	      /* FI_AV_MAP: first maybe-free index */
	struct gba_av_entry *rmap;    /* uthash by address */
	struct gba_eq *eq;	      /* FI_EVENT */
	_Atomic uint64_t gen;	      /* bumped by removals (peer caches) */
	/* Named AV (gba_av_shared.c) */
	char *shm_name;		/* "/gba-av-<uid>-<name>", NULL if unnamed */
	struct gba_av_shm *shm; /* the creator's table */
	size_t shm_len;
	/* entries of the table, checked against shm_len once: the table's
	 * own capacity field is writable by other processes */
	uint32_t shm_capacity;
	bool shm_owner;
	size_t shm_seen;     /* FI_READ: table entries imported */
	fi_addr_t *map_addr; /* FI_READ: attr->map_addr */
	/* FI_READ: imports a table entry (gba_av_shared_open's @insert) */
	int (*shm_insert)(struct gba_av *av, size_t index,
			  const struct gba_addr *addr);
};

/*
 * Named AVs (gba_av_shared.c): create the shared table (no FI_READ) or
 * import it (FI_READ, attr->map_addr set).  The import, now and by later
 * gba_av_shared_refresh calls, hands each entry to @insert(@av, index,
 * addr), called with av->lock held, which returns 0, -FI_EALREADY
 * (skipped) or another -FI_E* (the import stops).  Returns 0, -FI_ENOENT
 * (FI_READ of a name nobody created), -FI_EINVAL, -FI_ENOMEM.
 */
int gba_av_shared_open(struct gba_av *av, struct fi_av_attr *attr,
		       int (*insert)(struct gba_av *av, size_t index,
				     const struct gba_addr *addr));
/* Record entry @index (@addr NULL: removed) in the creator's table. */
void gba_av_shared_set(struct gba_av *av, size_t index,
		       const struct gba_addr *addr);
/* Unmap (the creator: remove) the shared table of a named AV. */
void gba_av_shared_close(struct gba_av *av);
/* FI_READ AV: import what the creator added since; true if anything. */
bool gba_av_shared_refresh(struct gba_av *av);

/* Entry @i of @av (which must be below av->size). */
static inline struct gba_av_entry *gba_av_entry(struct gba_av *av, size_t i)
{
	return &av->chunks[i / GBA_AV_CHUNK][i % GBA_AV_CHUNK];
}

/*
 * gba_av_addr - resolve @fi_addr to its address.  Returns NULL for
 * FI_ADDR_NOTAVAIL, unknown or removed entries.  O(1), no lock: entries
 * never move and the application does not remove an address it is still
 * using.  A shared AV opened FI_READ imports the creator's new entries
 * on a miss.
 */
static inline const struct gba_addr *gba_av_addr(struct gba_av *av,
						 fi_addr_t fi_addr)
{
	struct gba_av_entry *e;

	if (!av || fi_addr == FI_ADDR_NOTAVAIL)
		return NULL;
	if (fi_addr >= __atomic_load_n(&av->count, __ATOMIC_ACQUIRE) ||
	    !gba_av_entry(av, fi_addr)->used) {
		/* a shared AV opened FI_READ may have new entries */
		if (!av->shm || av->shm_owner || !gba_av_shared_refresh(av) ||
		    fi_addr >= __atomic_load_n(&av->count, __ATOMIC_ACQUIRE))
			return NULL;
	}
	e = gba_av_entry(av, fi_addr);
	return e->used ? &e->addr : NULL;
}
/* Reverse lookup: fi_addr of @addr or FI_ADDR_NOTAVAIL. */
fi_addr_t gba_av_find(struct gba_av *av, const struct gba_addr *addr);

/* ---- AV set (gba_av_set.c) --------------------------------------------- */

struct gba_av_set {
	struct fid_av_set av_set_fid;
	struct gba_av *av;
	atomic_int ref;	    /* holders (joins): close is -FI_EBUSY */
	fi_addr_t *members; /* in set order, no duplicates */
	size_t count;
	size_t size;
	uint64_t flags;
	LIST_ENTRY(gba_av_set) live;	/* process-wide list (coll_addr) */
};

/*
 * The set behind a coll_addr from fi_av_set_addr, or NULL (also for a
 * value that is no live set: it is looked up, never dereferenced).
 */
struct gba_av_set *gba_av_set_from_addr(fi_addr_t coll_addr);

/* Object constructors (fi_ops_* entry points) */
int gba_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
int gba_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
/* fi_poll_open(3) (fi_ops_domain.poll_open): gba_poll.c. */
int gba_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		  struct fid_poll **pollset);
int gba_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context);
int gba_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);
int gba_av_set_open(struct fid_av *av, struct fi_av_set_attr *attr,
		    struct fid_av_set **av_set, void *context);
int gba_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context);
int gba_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		uint64_t access, uint64_t offset, uint64_t requested_key,
		uint64_t flags, struct fid_mr **mr, void *context);
int gba_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		   uint64_t flags, struct fid_mr **mr);

#endif /* GBA_OBJ_H */
