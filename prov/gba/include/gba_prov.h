/*
 * libfabric "gba" provider: declarations every source file of the
 * provider shares (layer 0 below).  Written against the installed public
 * libfabric 1.17 headers only (rdma/fi_*.h, rdma/providers/fi_prov.h,
 * fi_log.h); the GBA core library (gba/gba.h, gba/gba_addr.h,
 * gba/gba_eng.h) does the device and data-path work.
 *
 * The provider is built in layers; a file calls only into its own layer
 * or lower ones, includes only the headers of those layers, and upper
 * layers reach into lower ones, never the reverse (test/prov/
 * prov_layers.sh checks it on every build):
 *
 * 0 provider-wide (this header): parameters (gba_params.c), locks
 *   (gba_lock.c), error codes (gba_errno.c), the not-supported fid ops
 *   (gba_fid.c), wait objects (gba_wait.c), fi_getinfo (gba_info.c).
 * 1 fid classes (gba_obj.h): wait sets (gba_wait_set.c), EQs (gba_eq.c),
 *   CQs (gba_cq.c), counters (gba_cntr.c), poll sets (gba_poll.c),
 *   memory registration (gba_mr.c), AVs (gba_av.c, gba_av_shared.c),
 *   AV sets (gba_av_set.c).
 *   A CQ or counter progresses what is bound to it through the function
 *   of each binding (struct gba_progress_src), a wait set asks its
 *   members through their readiness callbacks, and a counter fires its
 *   triggered operations through the ops the trigger module installs:
 *   none of them knows the endpoint.  A poll set asks its CQs and
 *   counters as their own reads do.
 * 2 operations (gba_ep.h): the deferred work record (gba_work.c),
 *   completion reporting (gba_comp.c: the CQ entry and counter of every
 *   operation), triggered operations (gba_trigger.c), peers and transmit
 *   requests (gba_peer.c), RMA (gba_rma.c), the atomic executor and the
 *   atomic verbs (gba_atomic_exec.c, gba_atomic.c), software and device
 *   collectives (gba_coll_sw.c, gba_coll.c, gba_coll_join.c with
 *   gba_coll.h), messages (gba_msg.c), deferred work (gba_deferred.c).
 *   An operation that progresses its endpoint before -FI_EAGAIN calls
 *   ep->progress.
 * 3 the endpoint (gba_ep.h): the engine endpoint and the engine's
 *   callbacks (gba_eng.c), progress (gba_progress.c), the endpoint
 *   itself (gba_ep.c).
 * 4 containers: the domain (gba_domain.c) and the fabric
 *   (gba_fabric.c), which open the objects above, and the provider's
 *   entry (gba_init.c), which defines gba_prov, the structure every
 *   module logs with.
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

/*
 * The provider's growable arrays are utarrays (uthash).  utarray calls
 * utarray_oom() when realloc fails, exit() by default: here it jumps to
 * the label of gba_utarray_insert, which returns -FI_ENOMEM.  Grow
 * arrays only through gba_utarray_insert (utarray_init, utarray_erase,
 * utarray_done and the accessors never allocate).
 */
#define utarray_oom() goto gba_utarray_nomem
#include <utarray.h>

/*
 * gba_utarray_insert - copy *@elt into @a at index @pos (at most
 * utarray_len(@a): the elements from @pos on move up one).  Returns 0 or
 * -FI_ENOMEM (@a unchanged).
 */
static inline int gba_utarray_insert(UT_array *a, const void *elt, unsigned pos)
{
	unsigned n = a->n;

	utarray_insert(a, elt, pos);
	return 0;
gba_utarray_nomem:
	a->n = n; /* utarray_reserve raised it before realloc failed */
	return -FI_ENOMEM;
}

#include <gba/gba.h>
#include <gba/gba_addr.h>
#include <gba/gba_eng.h>

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
	/* FI_GBA_EAGER_SIZE: largest message copied through the peer's queue */
	size_t eager_size;
	/* FI_GBA_NET_ADDR: TCP address for peers on other hosts; NULL =
	 * the core's default (GBA_NET_ADDR, else the host name's address) */
	char *net_addr;
};
extern struct gba_params gba_params;
/* Define the FI_GBA_* parameters (fi_prov_ini, once). */
void gba_params_define(void);
/* Read the FI_GBA_* parameters into gba_params (fi_prov_ini). */
void gba_params_read(void);
/* fi_provider.cleanup: free what gba_params_read copied. */
void gba_params_free(void);

/*
 * Limits advertised by fi_getinfo (gba_info.c) and enforced by the objects
 * that own them.  Sizes in bytes unless noted.  Object counts are per
 * domain.
 */
#define GBA_MAX_MSG_SIZE ((size_t)1 << 30) /* RMA/atomic length */
#define GBA_INJECT_SIZE GBA_ENG_INLINE	   /* inject payload (4032) */
#define GBA_IOV_LIMIT 8			   /* local iov entries per operation */
#define GBA_RMA_IOV_LIMIT 1 /* remote iov entries per operation */
#define GBA_MR_IOV_LIMIT 16 /* iov entries per registration */
#define GBA_TX_SIZE 1024    /* operations per tx context */
#define GBA_RX_SIZE 1024    /* operations per rx context */
#define GBA_CQ_DATA_SIZE 8  /* bytes of remote CQ data */
#define GBA_MAX_ERR_DATA 64 /* bytes of err_data per error entry */
/*
 * FI_GBA_EAGER_SIZE's default: messages up to 8 KiB are copied through the
 * receiver's queue (in two or three slots), larger ones read by the
 * receiver from the sender's memory (one copy).  Above 8 KiB the two
 * copies cost more than the one when the two processes' caches are apart
 * (16 KiB: 1.6-2.0x libfabric's shm with copies, 0.8-0.9x with one copy),
 * while with a shared cache both are about shm's (design.md section 4).
 */
#define GBA_EAGER_SIZE_DEF 8192
/* how long fi_av_insert asks another host for the endpoint holding a
 * service there (milliseconds; it may not be open yet) */
#define GBA_LOOKUP_MS 5000
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
/*
 * How long a blocking CQ read or counter wait keeps polling (yielding the
 * CPU between passes) while its endpoints have work in flight, before it
 * sleeps in 1 ms steps: 2 ms.
 */
#define GBA_WAIT_POLL_NS 2000000ULL
/* True while a blocking read should poll again (see gba_wait.c). */
bool gba_wait_poll(uint64_t *start_ns);

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

/* Map a negative errno from the core library to a negative FI_E* code. */
int gba_errno_to_fi(int err);
/* Negative FI_E* a transfer completes with for an engine status. */
int gba_xfer_errno_to_fi(int status);

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
