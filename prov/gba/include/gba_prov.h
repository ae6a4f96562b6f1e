/*
 * libfabric "gba" provider: internal declarations shared by the provider's
 * source files.  Written against the installed public libfabric 1.17
 * headers only (rdma/fi_*.h, rdma/providers/fi_prov.h, fi_log.h); the GBA
 * core library (gba/gba.h, gba/gba_addr.h) does the device work.
 *
 * Object ownership of the source files (one job each):
 *   gba_init.c    fi_prov_ini, provider struct, parameters, cleanup
 *   gba_info.c    fi_getinfo: attributes and hint matching
 *   gba_fabric.c  fabric, wait sets
 *   gba_domain.c  domain, query_atomic, query_collective
 *   gba_eq.c      event queues
 *   gba_cq.c      completion queues
 *   gba_cntr.c    counters
 *   gba_wait.c    wait objects shared by EQ/CQ/counters
 *   gba_mr.c      memory registration and key lookup
 *   gba_av.c      address vectors
 *   gba_av_set.c  AV sets
 *   gba_av_shared.c named AVs shared between processes
 *   gba_ep.c      endpoint, binds, getname, control
 *   gba_rma.c     RMA (self path), immediate and triggered
 *   gba_atomic.c  atomics (self path), immediate and triggered, and
 *                 fi_query_atomic's table
 *   gba_coll.c    join_collective, barrier, barrier2
 *   gba_peer.c    the endpoint's fabric engine: peers, transmit requests,
 *                 the engine's callbacks (completions, remote access)
 *   gba_msg.c     FI_MSG and FI_TAGGED: sends, receives, matching,
 *                 unexpected messages, peek/claim/discard, multi-recv
 *   gba_trigger.c triggered operations (FI_TRIGGER) fired from counters
 *   gba_deferred.c deferred work queue (FI_QUEUE_WORK, FI_CANCEL_WORK,
 *                 FI_FLUSH_WORK on the domain)
 *   gba_progress.c the domain's endpoint list, domain-wide progress and
 *                 the optional progress thread (FI_PROGRESS_AUTO)
 */
#ifndef GBA_PROV_H
#define GBA_PROV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <uthash.h>

#include <gba/gba.h>
#include <gba/gba_addr.h>
#include <gba/gba_fab.h>

#define GBA_PROV_NAME "gba"
#define GBA_PROV_VERSION FI_VERSION(0, 1)
#define GBA_FI_VERSION FI_VERSION(1, 17)
#define GBA_FABRIC_NAME "gba"
#define GBA_DOMAIN_NAME "gba"

struct gba_eq;
struct gba_cq;
struct gba_cntr;
struct gba_ep;
struct gba_av;
struct gba_av_set;
struct gba_domain;
struct gba_mr;

extern struct fi_provider gba_prov;

/* Parameters (FI_GBA_*), read once in fi_prov_ini. */
struct gba_params {
	char *device;	/* FI_GBA_DEVICE: NULL = core default */
	int offload;	/* FI_GBA_OFFLOAD: use the device for barriers */
	size_t cq_size; /* FI_GBA_CQ_SIZE: default CQ depth */
	size_t eq_size; /* FI_GBA_EQ_SIZE: default EQ depth */
	int barrier_timeout_ms; /* FI_GBA_BARRIER_TIMEOUT: -1 = forever */
	/* FI_GBA_PROGRESS: data progress offered by default (MANUAL or AUTO) */
	enum fi_progress progress;
};
extern struct gba_params gba_params;

/*
 * Limits advertised by fi_getinfo (gba_info.c) and enforced by the objects
 * that own them.  Sizes in bytes unless noted.  Object counts are per
 * domain.
 */
#define GBA_MAX_MSG_SIZE ((size_t)1 << 30) /* RMA/atomic length */
#define GBA_INJECT_SIZE GBA_FAB_INLINE	   /* inject payload (4032) */
#define GBA_IOV_LIMIT 8			   /* local iov entries per operation */
#define GBA_RMA_IOV_LIMIT 1 /* remote iov entries per operation */
#define GBA_MR_IOV_LIMIT 16 /* iov entries per registration */
#define GBA_TX_SIZE 1024    /* operations per tx context */
#define GBA_RX_SIZE 1024    /* operations per rx context */
#define GBA_CQ_DATA_SIZE 8  /* bytes of remote CQ data */
#define GBA_MAX_ERR_DATA 64 /* bytes of err_data per error entry */
#define GBA_CQ_CNT 1024	    /* CQs per domain */
#define GBA_CNTR_CNT 1024   /* counters per domain */
#define GBA_EP_CNT 1024	    /* endpoints per domain */
#define GBA_MR_CNT 65536    /* memory regions per domain */
#define GBA_CQ_MAX_SIZE ((size_t)1 << 20) /* entries per CQ */
#define GBA_EQ_MAX_SIZE ((size_t)1 << 20) /* entries per EQ */
#define GBA_CQ_DEF_SIZE 1024		  /* FI_GBA_CQ_SIZE default */
#define GBA_EQ_DEF_SIZE 256		  /* FI_GBA_EQ_SIZE default */
#define GBA_AV_MAX_SIZE ((size_t)1 << 20) /* entries per AV */
#define GBA_EQ_MAX_DATA 1024		  /* fi_eq_write payload */
#define GBA_MR_KEY_SIZE 8		  /* sizeof(uint64_t) keys */

/* Capabilities (see gba_info.c for how hints narrow them). */
#define GBA_TX_CAPS                                                            \
	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SEND | FI_READ |         \
	 FI_WRITE | FI_COLLECTIVE | FI_TRIGGER | FI_FENCE)
#define GBA_RX_CAPS                                                            \
	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV | FI_REMOTE_READ |  \
	 FI_REMOTE_WRITE | FI_COLLECTIVE | FI_DIRECTED_RECV | FI_MULTI_RECV |  \
	 FI_SOURCE | FI_RMA_EVENT)
/*
 * FI_REMOTE_COMM: the fabric reaches endpoints through the GBA NIC; with
 * the emulated fabric only this host's (others: -FI_EHOSTUNREACH).
 * Returned when asked for (Open MPI's MTL-OFI asks).
 */
#define GBA_DOMAIN_CAPS (FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV)
#define GBA_CAPS (GBA_TX_CAPS | GBA_RX_CAPS | GBA_DOMAIN_CAPS)

/*
 * Ordering: self operations complete in issue order, and the engine
 * executes the operations of one endpoint towards one peer in issue
 * order (one FIFO queue), so every pair is ordered.
 */
#define GBA_MSG_ORDER                                                          \
	(FI_ORDER_SAS | FI_ORDER_SAW | FI_ORDER_SAR | FI_ORDER_WAS |           \
	 FI_ORDER_RAS | FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_WAR | FI_ORDER_WAW |           \
	 FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAR |              \
	 FI_ORDER_RMA_WAW | FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW |        \
	 FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW)

/* ---- Locks: real only when the domain's threading model needs them ---- */

/*
 * A test-and-test-and-set spin lock: one atomic exchange to take it and a
 * plain release store to drop it when uncontended (a pthread mutex costs
 * two atomic read-modify-writes).  Critical sections are short and never
 * block; a waiter spins, then yields the CPU (gba_lock_contended), so
 * more threads than cores still progress.
 */
struct gba_lock {
	atomic_int locked;
	bool enabled;
};

int gba_lock_init(struct gba_lock *lock, bool enabled);
void gba_lock_destroy(struct gba_lock *lock);
/* Slow path of gba_lock_acquire: wait until the lock is taken. */
void gba_lock_contended(struct gba_lock *lock);

static inline void gba_lock_acquire(struct gba_lock *lock)
{
	if (lock->enabled &&
	    atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire))
		gba_lock_contended(lock);
}

static inline void gba_lock_release(struct gba_lock *lock)
{
	if (lock->enabled)
		atomic_store_explicit(&lock->locked, 0, memory_order_release);
}

/* ---- Wait objects (gba_wait.c) ---------------------------------------- */

/*
 * A wait object backing fi_cq_sread, fi_cntr_wait, fi_eq_sread, fi_wait
 * and FI_GETWAIT.  Signalling costs a syscall only while somebody waits
 * (or, for FI_WAIT_FD, once the fd was handed out with FI_GETWAIT).
 *
 *   FI_WAIT_NONE   no blocking; waits poll (spin, then yield)
 *   FI_WAIT_YIELD  same as NONE, but sread/wait are allowed
 *   FI_WAIT_UNSPEC a futex on @seq (no file descriptor)
 *   FI_WAIT_FD     an eventfd, readable while signalled
 *   FI_WAIT_SET    signals go to the wait set's object (@set)
 */
struct gba_wait {
	enum fi_wait_obj type;
	int fd; /* eventfd (FI_WAIT_FD), else -1 */
	atomic_int waiters;
	atomic_uint seq;      /* bumped by every signal */
	atomic_bool exported; /* fd handed out: always signal */
	struct gba_wait *set; /* FI_WAIT_SET: the set's wait object */
};

int gba_wait_init(struct gba_wait *wait, enum fi_wait_obj type);
void gba_wait_fini(struct gba_wait *wait);
void gba_wait_wake(struct gba_wait *wait);

/*
 * gba_wait_signal - wake whoever waits on @wait (and on its wait set).
 * Inline: FI_WAIT_NONE and FI_WAIT_YIELD waiters poll (gba_wait_sleep
 * yields), so signalling them is a no-op.
 */
static inline void gba_wait_signal(struct gba_wait *wait)
{
	if (wait->set ||
	    (wait->type != FI_WAIT_NONE && wait->type != FI_WAIT_YIELD))
		gba_wait_wake(wait);
}
/* Block up to timeout_ms (<0: forever).  0, -FI_EAGAIN on timeout. */
int gba_wait_block(struct gba_wait *wait, int timeout_ms);
/*
 * Lost-wakeup-free waiting: token = gba_wait_enter(); re-check the
 * condition; gba_wait_sleep(token, timeout) (returns 0 when signalled or
 * timed out, no error); gba_wait_leave().  A signal between enter and
 * sleep makes sleep return at once.
 */
unsigned gba_wait_enter(struct gba_wait *wait);
void gba_wait_sleep(struct gba_wait *wait, unsigned token, int timeout_ms);
void gba_wait_leave(struct gba_wait *wait);
/* Consume a pending FI_WAIT_FD signal (fi_trywait). */
void gba_wait_reset(struct gba_wait *wait);
/* Name of a wait object type, for logs. */
const char *gba_wait_obj_str(enum fi_wait_obj type);
/* Milliseconds of a monotonic clock (for timeouts). */
uint64_t gba_now_ms(void);

/* ---- Fabric, domain ---------------------------------------------------- */

struct gba_fabric {
	struct fid_fabric fabric_fid;
	atomic_int ref; /* domains, EQs, wait sets */
};

/* A wait set (fi_wait_open): members signal @wait (gba_fabric.c). */
struct gba_wait_set {
	struct fid_wait wait_fid;
	struct gba_fabric *fabric;
	struct gba_wait wait;
	atomic_int ref;	      /* member CQs, EQs, counters */
	pthread_mutex_t lock; /* member list */
	struct fid **members;
	size_t nmembers;
	size_t msize;
};

/* Resolve attr->wait_set of an EQ/CQ/counter; NULL if not a gba set. */
struct gba_wait_set *gba_wait_set_get(struct fid_wait *wait_set);
int gba_wait_set_add(struct gba_wait_set *set, struct fid *member);
void gba_wait_set_del(struct gba_wait_set *set, struct fid *member);
/*
 * Progress and readiness test of a CQ, EQ, counter or wait set: true if
 * a read would return something.  *@pending (if not NULL) is set when a
 * bound endpoint has work in flight that completes without a signal
 * (GBA release flags are polled), so fi_trywait must fail and waits must
 * poll.
 */
bool gba_fid_ready(struct fid *fid, bool *pending);
bool gba_eq_ready(struct gba_eq *eq);
bool gba_cq_ready(struct gba_cq *cq, bool *pending);
bool gba_cntr_ready(struct gba_cntr *cntr, bool *pending);

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
};

/*
 * fi_control(3) on a domain: FI_QUEUE_WORK, FI_CANCEL_WORK, FI_FLUSH_WORK
 * (gba_deferred.c).  Returns 0 or -FI_E* (logged).
 */
int gba_domain_control(struct fid *fid, int command, void *arg);

/* Returns the domain's device, opening it on first use; negative -FI_E*. */
int gba_domain_dev(struct gba_domain *domain, struct gba_dev **devp);

/* ---- Event queue (gba_eq.c) -------------------------------------------- */

struct gba_eq_event;

struct gba_eq {
	struct fid_eq eq_fid;
	struct gba_fabric *fabric;
	atomic_int ref; /* domain/AV/endpoint binds */
	uint64_t flags; /* attr flags (FI_WRITE) */
	size_t size;	/* capacity in entries */
	size_t count;	/* queued entries */
	size_t nerr;	/* queued error entries */
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
 * FI_JOIN_COMPLETE).  Returns 0 or -FI_EAGAIN if full.
 */
int gba_eq_write_event(struct gba_eq *eq, uint32_t event, const void *buf,
		       size_t len, uint64_t flags);
/* Queue an error entry.  Returns 0 or -FI_EAGAIN if full. */
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
	atomic_int ref; /* bound endpoints */
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
	struct gba_lock ep_lock; /* eps: held while progressing them */
	struct gba_ep **eps;	 /* progressed by reads */
	size_t neps, eps_size;
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
 * Attach/detach an endpoint whose progress runs from this CQ's reads.
 * Detach waits for a progress call in another thread to finish: do not
 * call it while holding ep->lock (gba_ep_progress runs under the CQ's
 * ep_lock and may take ep->lock).  The same holds for counters.
 */
int gba_cq_add_ep(struct gba_cq *cq, struct gba_ep *ep);
void gba_cq_del_ep(struct gba_cq *cq, struct gba_ep *ep);

/*
 * Extension ops (fi_open_ops(3) on a CQ or EQ fid with these names):
 * inject completions and error entries from outside the provider, for
 * user-level notification and for the provider's unit tests.  Same
 * semantics and returns as gba_cq_write / gba_cq_write_error_data /
 * gba_eq_write_error.
 */
#define GBA_CQ_EXT_OPS_NAME "gba_cq_ext_v1"
#define GBA_EQ_EXT_OPS_NAME "gba_eq_ext_v1"

struct gba_cq_ext_ops {
	size_t size;
	int (*write)(struct fid_cq *cq, void *context, uint64_t flags,
		     size_t len, void *buf, uint64_t data, uint64_t tag,
		     fi_addr_t src);
	int (*write_error)(struct fid_cq *cq, void *context, uint64_t flags,
			   int err, int prov_errno, size_t len, size_t olen,
			   const void *err_data, size_t err_data_size);
	bool (*has_space)(struct fid_cq *cq, size_t n);
};

struct gba_eq_ext_ops {
	size_t size;
	int (*write_error)(struct fid_eq *eq, fid_t fid, void *context,
			   uint64_t data, int err, int prov_errno);
};

/* ---- Counter (gba_cntr.c) ---------------------------------------------- */

struct gba_trigger;

struct gba_cntr {
	struct fid_cntr cntr_fid;
	struct gba_domain *domain;
	atomic_int ref; /* ep binds, deferred work naming it: close busy */
	_Atomic uint64_t value;
	_Atomic uint64_t err;
	struct gba_wait wait;
	struct gba_wait_set *wait_set;
	size_t eps_size;
	struct gba_lock lock;	 /* triggers (gba_trigger.c) */
	struct gba_lock ep_lock; /* eps: held while progressing them */
	/* Triggered operations waiting on this counter, by threshold. */
	TAILQ_HEAD(gba_trigger_list, gba_trigger) triggers;
	atomic_int ntriggers; /* fast check: nothing to fire */
	struct gba_ep **eps;  /* endpoints progressed by waits */
	size_t neps;
	uint64_t last_value; /* seen by the last read (trywait) */
	uint64_t last_err;
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
	 * domain may change it, so reads and waits progress them all.
	 */
	atomic_bool domain_progress;
};

/* Increment value (or err) by 1, fire due triggers, wake waiters. */
void gba_cntr_inc(struct gba_cntr *cntr);
void gba_cntr_inc_err(struct gba_cntr *cntr);
/* Increment (or @err: the error value) and drop a deferred reference. */
void gba_cntr_inc_release(struct gba_cntr *cntr, bool err);
int gba_cntr_add_ep(struct gba_cntr *cntr, struct gba_ep *ep);
void gba_cntr_del_ep(struct gba_cntr *cntr, struct gba_ep *ep);

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
	UT_hash_handle hh; /* domain->mr_map */
};

/*
 * Validate a remote access of @len bytes at @addr under @key (with the
 * domain's FI_MR_VIRT_ADDR mode, @addr is virtual; otherwise an offset
 * into the region) needing @access (FI_REMOTE_READ / FI_REMOTE_WRITE).
 * On success *@ptr is the local address.  Returns 0, -FI_EKEYREJECTED
 * (unknown key), -FI_EACCES (access not granted), -FI_EINVAL (range
 * outside the region).
 */
int gba_mr_lookup(struct gba_domain *domain, uint64_t key, uint64_t addr,
		  size_t len, uint64_t access, void **ptr);

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
	bool shm_owner;
	size_t shm_seen;     /* FI_READ: table entries imported */
	fi_addr_t *map_addr; /* FI_READ: attr->map_addr */
};

/* Insert @addr at index @i (lock held).  0, -FI_EALREADY, -FI_ENOMEM. */
int gba_av_insert_at(struct gba_av *av, size_t i, const struct gba_addr *addr);
/*
 * Named AVs (gba_av_shared.c): create the shared table (no FI_READ) or
 * import it (FI_READ, attr->map_addr set).  0, -FI_ENOENT (FI_READ of a
 * name nobody created), -FI_EINVAL, -FI_ENOMEM.
 */
int gba_av_shared_open(struct gba_av *av, struct fi_av_attr *attr);
/* Record entry @index (@addr NULL: removed) in the creator's table. */
void gba_av_shared_set(struct gba_av *av, size_t index,
		       const struct gba_addr *addr);
void gba_av_shared_close(struct gba_av *av);
/* FI_READ AV: import what the creator added since; true if anything. */
bool gba_av_shared_refresh(struct gba_av *av);

/*
 * Resolve @fi_addr to its address.  Returns NULL for FI_ADDR_NOTAVAIL,
 * unknown or removed entries.  No lock: entries are stable while used.
 */
const struct gba_addr *gba_av_addr(struct gba_av *av, fi_addr_t fi_addr);
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
	struct gba_fab_rx *rx; /* held */
};
TAILQ_HEAD(gba_swc_msg_list, gba_swc_msg);

struct gba_ep {
	struct fid_ep ep_fid;
	struct gba_domain *domain;
	atomic_int ref;
	uint64_t caps;
	uint64_t tx_op_flags; /* fi_info tx_attr->op_flags, FI_SETOPSFLAG */
	uint64_t rx_op_flags;
	struct gba_addr addr;
	bool enabled;
	struct gba_av *av;
	struct gba_eq *eq;
	struct gba_cq *tx_cq;
	struct gba_cq *rx_cq;
	bool tx_selective; /* FI_SELECTIVE_COMPLETION on tx bind */
	bool rx_selective;
	struct gba_cntr *cntrs[GBA_CNTR_MAX];
	struct gba_lock lock;	  /* collective state, trigger list */
	TAILQ_HEAD(, gba_mc) mcs; /* joined collectives */
	TAILQ_HEAD(gba_ep_trigger_list, gba_trigger)
	triggers;	    /* queued FI_TRIGGER ops */
	atomic_int pending; /* barriers in flight: progress needed */
	struct gba_join_count *join_counts; /* uthash: joins per member list */
	LIST_ENTRY(gba_ep) registry;	    /* process-wide list (gba_ep.c) */
	/* Data path to peers (gba_peer.c, gba_msg.c), under @lock. */
	struct gba_fab_ep *fab;		      /* the engine endpoint */
	struct gba_tx_req *tx_reqs, *tx_free; /* outstanding transmits */
	struct gba_rx_entry *rx_entries, *rx_free; /* posted receives */
	TAILQ_HEAD(gba_rx_list, gba_rx_entry) posted[2]; /* [tagged] */
	TAILQ_HEAD(gba_unexp_list, gba_unexp) unexp[2];	 /* [tagged] */
	size_t min_multi_recv;				 /* FI_OPT_MIN_MULTI_RECV */
	fi_addr_t peer_cache_dest; /* last destination resolved */
	struct gba_fab_peer *peer_cache;
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
	return ep->fab ||
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

/*
 * The gba endpoint behind @ep_fid (an endpoint or an alias of one), or
 * NULL (logged) if it is not one.
 */
struct gba_ep *gba_ep_of(struct fid_ep *ep_fid);
/* Default transmit (@tx) or receive op flags of @ep_fid (alias or ep). */
uint64_t gba_ep_op_flags(struct fid_ep *ep_fid, bool tx);
/* Default op flags the non-msg verbs honour. */
#define GBA_EP_TX_OPFLAGS (FI_COMPLETION | FI_TRIGGER)

/* ---- Data path to peers (gba_peer.c) ----------------------------------- */

/* Front-end flags carried by the engine (struct gba_fab_rx.flags). */
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
int gba_peer_open(struct gba_ep *ep);
void gba_peer_close(struct gba_ep *ep);
/*
 * The engine peer of @dest.  ep->lock held.  Returns 0, -FI_EINVAL (not
 * in the AV), -FI_EHOSTUNREACH (another host, endpoint closed),
 * -FI_ENOMEM.  Logged.
 */
int gba_peer_get(struct gba_ep *ep, fi_addr_t dest,
		 struct gba_fab_peer **peer);
/* gba_peer_get without the lock held: 0 if @dest is reachable now. */
int gba_peer_check(struct gba_ep *ep, fi_addr_t dest);
/* fi_addr of message source @src in @ep's AV (FI_ADDR_NOTAVAIL). */
fi_addr_t gba_peer_src(struct gba_ep *ep, const struct gba_addr *src);
/* Take / return a transmit request (ep->lock held); NULL if none left. */
struct gba_tx_req *gba_tx_req_get(struct gba_ep *ep);
void gba_tx_req_put(struct gba_ep *ep, struct gba_tx_req *req);
/* Positive FI_E* for an engine status (negative errno). */
int gba_fab_err(int status);
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
/* Allocate the posted-receive pool (gba_peer_open).  0 or -FI_ENOMEM. */
int gba_msg_init(struct gba_ep *ep);
/* The engine's recv callback: match @rx or keep it as unexpected. */
void gba_msg_arrived(struct gba_ep *ep, struct gba_fab_rx *rx);
/* fi_cancel of a posted receive: 0 (FI_ECANCELED entry) or -FI_ENOENT. */
ssize_t gba_msg_cancel(struct gba_ep *ep, void *context);
/*
 * Drop posted receives and unexpected messages (an unexpected large
 * message's sender completes with an error), free the pool.
 */
void gba_msg_fini(struct gba_ep *ep);

/* ---- Collectives (gba_coll.c) ------------------------------------------ */

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
void gba_swc_arrived(struct gba_ep *ep, struct gba_fab_rx *rx);
/* A large send of a collective completed (ep lock held). */
void gba_swc_send_done(struct gba_ep *ep, struct gba_swc_op *op, int status);
/* Retry blocked sends, finish operations (ep lock held). */
void gba_swc_progress(struct gba_ep *ep);
/* Free messages kept for collectives never joined (endpoint close). */
void gba_swc_fini(struct gba_ep *ep);
/* Bytes of an element of @dt (0: not supported). */
size_t gba_atomic_dt_size(enum fi_datatype dt);

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
		    struct gba_ep **peer, void **ptr);
/* Provider-specific op flag (FI_PROV_SPECIFIC bits): no CQ entry (inject). */
#define GBA_FLAG_NO_CQ (1ULL << 60)

/*
 * Report a direct operation: @err 0 is a success (gba_ep_tx_complete: a
 * CQ entry per selective completion, none with GBA_FLAG_NO_CQ; the
 * counter of @slot), a positive FI_E* an error completion
 * (gba_ep_tx_error).  On success with FI_REMOTE_CQ_DATA in @flags, @data
 * is delivered to @peer's rx CQ (FI_RMA | FI_REMOTE_WRITE |
 * FI_REMOTE_CQ_DATA, @len).
 */
void gba_rma_report(struct gba_ep *ep, struct gba_ep *peer, int err,
		    enum gba_cntr_slot slot, uint64_t flags, void *context,
		    size_t len, uint64_t data);

extern struct fi_ops_rma gba_ep_rma_ops;
extern struct fi_ops_atomic gba_ep_atomic_ops;
int gba_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr,
		     uint64_t flags);
int gba_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			 struct fi_collective_attr *attr, uint64_t flags);

/*
 * Execute @count elements of atomic @op on @dt at @dst (the target side
 * of a peer's atomic, struct gba_fab_ops.atomic).  Returns 0 or -EINVAL
 * (unsupported pair, misaligned target).
 */
int gba_atomic_exec(void *ctx, uint32_t op, uint32_t dt, void *dst,
		    const void *operand, const void *compare, void *result,
		    size_t count);

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
 * Run every trigger on @cntr whose threshold is reached.  Reentrant: a
 * trigger whose completion bumps another counter queues that counter's
 * due triggers on the same thread's work list instead of recursing.
 */
void gba_trigger_fire(struct gba_cntr *cntr);
/*
 * Defer the firing of triggers made due on this thread until the
 * matching gba_trigger_defer_end (returns the token it needs).
 */
bool gba_trigger_defer_begin(void);
void gba_trigger_defer_end(bool token);
/* Discard every trigger queued on @cntr (counter close). */
void gba_trigger_drain(struct gba_cntr *cntr);
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

struct gba_work;

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

/* ---- fi_getinfo (gba_info.c) ------------------------------------------- */

int gba_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
/*
 * Check @info (as passed to fi_domain/fi_endpoint) against what the
 * provider supports; 0 or -FI_ENODATA (logged).
 */
int gba_info_check(uint32_t version, const struct fi_info *info);
/*
 * Resolve a node/service pair to an address: node "gba://<host>/<pid>/<ep>"
 * (service must be NULL), or node NULL, "localhost" or this host's name
 * with service NULL, "<ep>" or "<pid>/<ep>" (pid defaults to the caller's,
 * ep to 0 = "any").  Returns 0 or -FI_EINVAL.
 */
int gba_resolve(const char *node, const char *service, struct gba_addr *addr);
/*
 * Same for a destination: a service "<ep>" without a process names the
 * one endpoint <ep> of another live process of this host.  0 or
 * -FI_EINVAL (logged).
 */
int gba_resolve_dest(const char *node, const char *service,
		     struct gba_addr *addr);
/* Threading models that need internal locks. */
bool gba_threading_locks(enum fi_threading threading);

/* Object constructors (fi_ops_* entry points) */
int gba_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
int gba_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
int gba_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
int gba_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int gba_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context);
int gba_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);
int gba_av_set_open(struct fid_av *av, struct fi_av_set_attr *attr,
		    struct fid_av_set **av_set, void *context);
int gba_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);
int gba_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context);
int gba_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		uint64_t access, uint64_t offset, uint64_t requested_key,
		uint64_t flags, struct fid_mr **mr, void *context);
int gba_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		   uint64_t flags, struct fid_mr **mr);

/* Map a negative errno from the core library to a negative FI_E* code. */
int gba_errno_to_fi(int err);

/* Common "not supported" stubs for optional ops. */
int gba_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int gba_no_control(struct fid *fid, int command, void *arg);
int gba_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context);
int gba_no_close(struct fid *fid);

/* Logging helper: warn and return @err (negative). */
#define GBA_WARN_RET(subsys, err, ...)                                         \
	({                                                                     \
		FI_WARN(&gba_prov, subsys, __VA_ARGS__);                       \
		(err);                                                         \
	})

#endif /* GBA_PROV_H */
