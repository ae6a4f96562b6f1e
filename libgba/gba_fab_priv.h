/*
 * GBA core library: private layout of the fabric engine
 * (include/gba/gba_fab.h).  One job per source file:
 *
 *   gba_fab_ring.c   the shared-memory receive queue: create, map, claim
 *                    and publish slots, poll
 *   gba_fab_ep.c     endpoints, peers, the operation table, progress,
 *                    answers and dead-peer detection
 *   gba_fab_xfer.c   initiating sends, puts, gets and atomics; executing
 *                    them at the target; cross-memory attach copies
 *   gba_fab_atomic.c the built-in 32/64-bit atomic executor
 */
#ifndef GBA_FAB_PRIV_H
#define GBA_FAB_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <uthash.h>

#include <gba/gba_fab.h>

#define GBA_FAB_RING_MAGIC 0x474241464142ULL /* "GBAFAB" */
#define GBA_FAB_RING_VERSION 1
#define GBA_FAB_RING_HDR 4096 /* bytes before the first slot */
#define GBA_FAB_RX_SLOTS_MAX 65536
#define GBA_FAB_MAX_OPS_MAX 65536

/* What a slot carries. */
enum gba_fab_type {
	GBA_FAB_T_MSG = 1, /* message; large: payload is the sender's iovs */
	GBA_FAB_T_PUT,	   /* put; large: payload is the initiator's iovs */
	GBA_FAB_T_GET,	   /* get; payload is the initiator's iovs */
	GBA_FAB_T_ATOMIC,  /* atomic; payload struct gba_fab_atomic_req */
	GBA_FAB_T_RESP,	   /* answer to an operation (status, data) */
};

/* hdr.xflags: engine flags */
#define GBA_FAB_X_LARGE 1u  /* payload is an iov array, data stays put */
#define GBA_FAB_X_FETCH 2u  /* atomic: answer with the old values */
#define GBA_FAB_X_CMP 4u    /* atomic: compare operands follow */
#define GBA_FAB_X_NOANS 8u  /* message: no answer wanted (inline) */

/* The first GBA_FAB_HDR_SIZE bytes of a slot. */
struct gba_fab_hdr {
	_Atomic uint64_t seq; /* ring protocol (gba_fab_ring.c) */
	uint8_t type;	      /* enum gba_fab_type */
	uint8_t iov_count;    /* large: iov entries in the payload */
	uint16_t xflags;      /* GBA_FAB_X_* */
	uint32_t flags;	      /* front end's flags, passed through */
	uint32_t src_pid;
	uint32_t src_ep_id;
	uint32_t op;	/* initiator's operation (index | gen << 16) */
	int32_t status; /* T_RESP: 0 or -errno */
	uint64_t len;	/* payload / transfer bytes */
	uint64_t tag;	/* T_MSG: tag; RMA/atomic: key */
	uint64_t data;	/* immediate data */
	uint64_t addr;	/* RMA/atomic: remote address; T_RESP: inline len */
};

_Static_assert(sizeof(struct gba_fab_hdr) == GBA_FAB_HDR_SIZE,
	       "slot header is one cache line");

struct gba_fab_slot {
	struct gba_fab_hdr hdr;
	uint8_t payload[GBA_FAB_INLINE];
};

/* Operands of an atomic request (the payload of a T_ATOMIC slot). */
struct gba_fab_atomic_req {
	uint32_t op;
	uint32_t datatype;
	uint32_t elem_size;
	uint32_t count;
	uint8_t operands[]; /* count elements, then count compare values */
};

/* The shared receive queue: a header page, then the slots. */
struct gba_fab_ring {
	uint64_t magic;
	uint32_t version;
	uint32_t nslots;
	uint64_t owner_slot;  /* gba_proc_self_slot() of the owner */
	_Atomic uint32_t open; /* 0 once the owner closed the endpoint */
	uint8_t pad0[64 - 28];
	_Atomic uint64_t tail; /* next position to claim (producers) */
	uint8_t pad1[GBA_FAB_RING_HDR - 72];
	struct gba_fab_slot slots[];
};

/* ---- gba_fab_ring.c ---------------------------------------------------- */

/* Shared-memory object name of an endpoint's queue, into @buf. */
void gba_fab_ring_name(const struct gba_addr *addr, char *buf, size_t len);
/* Create (O_EXCL) and map the queue of local endpoint @addr. */
int gba_fab_ring_create(const struct gba_addr *addr, uint32_t nslots,
			struct gba_fab_ring **ringp, size_t *lenp);
/* Map the queue of @addr (another endpoint).  -EHOSTUNREACH if none. */
int gba_fab_ring_map(const struct gba_addr *addr, struct gba_fab_ring **ringp,
		     size_t *lenp);
/* Mark closed, unmap, and (owner) unlink. */
void gba_fab_ring_destroy(struct gba_fab_ring *ring, size_t len,
			  const struct gba_addr *addr);
void gba_fab_ring_unmap(struct gba_fab_ring *ring, size_t len);
/* Unlink the queues of this user's dead processes (crash leftovers). */
void gba_fab_ring_reap(void);

/*
 * Claim the next slot of @ring: returns it, or NULL when the queue is
 * full.  The caller fills it and calls gba_fab_ring_publish.
 */
static inline struct gba_fab_slot *gba_fab_ring_claim(struct gba_fab_ring *ring,
						      uint64_t *posp)
{
	uint64_t mask = ring->nslots - 1;
	uint64_t pos = atomic_load_explicit(&ring->tail, memory_order_relaxed);
	struct gba_fab_slot *slot;
	int64_t dif;

	for (;;) {
		slot = &ring->slots[pos & mask];
		dif = (int64_t)(atomic_load_explicit(&slot->hdr.seq,
						     memory_order_acquire) -
				pos);
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(
				    &ring->tail, &pos, pos + 1,
				    memory_order_relaxed, memory_order_relaxed))
				break;
		} else if (dif < 0) {
			return NULL;
		} else {
			pos = atomic_load_explicit(&ring->tail,
						   memory_order_relaxed);
		}
	}
	*posp = pos;
	return slot;
}

static inline void gba_fab_ring_publish(struct gba_fab_slot *slot, uint64_t pos)
{
	atomic_store_explicit(&slot->hdr.seq, pos + 1, memory_order_release);
}

/* ---- Endpoint state (gba_fab_ep.c) -------------------------------------- */

struct gba_fab_peer {
	struct gba_addr addr;
	struct gba_fab_ring *ring; /* its receive queue (ours for self) */
	size_t map_len;		   /* 0: not our mapping (self) */
	uint32_t nops;		   /* our operations outstanding there */
	bool dead;
	UT_hash_handle hh; /* ep->peers, keyed by (pid, ep_id) */
	uint64_t key;
};

/* An outstanding operation of the initiator. */
struct gba_fab_op {
	uint64_t cookie;
	struct gba_fab_peer *peer;
	uint16_t gen;
	uint8_t type;
	uint8_t iov_count; /* T_GET: where the data goes */
	uint32_t next_free;
	struct iovec iov[GBA_FAB_MAX_IOV];
	void *result; /* T_ATOMIC fetch: old values */
	size_t result_len;
};

/* An answer that found the initiator's queue full. */
struct gba_fab_backlog {
	struct gba_fab_backlog *next;
	struct gba_fab_peer *peer;
	struct gba_fab_hdr hdr;
	size_t len;
	uint8_t payload[];
};

struct gba_fab_ep {
	struct gba_addr addr;
	struct gba_fab_ops ops;
	void *ctx;
	struct gba_fab_ring *rx;
	size_t rx_len;
	uint64_t head; /* next slot to poll */
	uint32_t rx_mask;
	struct gba_fab_peer *peers; /* uthash */
	struct gba_fab_op *optab;
	uint32_t max_ops;
	uint32_t free_op; /* head of the free list; max_ops: none */
	size_t nops;
	struct gba_fab_backlog *backlog, **backlog_tail;
	size_t nbacklog;
	uint32_t idle_polls;  /* progress calls since something arrived */
	bool oversubscribed;  /* more processes than CPUs: yield when idle */
	uint32_t ncpus;	      /* online CPUs */
	uint32_t nprocs;      /* other processes among the peers */
	uint64_t last_check_ns;
};

#define GBA_FAB_OP_NONE 0xffffffffu

/* Take an operation record (NULL if the table is full). */
struct gba_fab_op *gba_fab_op_alloc(struct gba_fab_ep *ep,
				    struct gba_fab_peer *peer, uint8_t type,
				    uint64_t cookie);
/* Wire id of @op (index | gen << 16). */
uint32_t gba_fab_op_id(const struct gba_fab_ep *ep, const struct gba_fab_op *op);
/* Release @op and report @status to the front end. */
void gba_fab_op_finish(struct gba_fab_ep *ep, struct gba_fab_op *op,
		       int status);
/* Release @op without a report (the initiating call failed). */
void gba_fab_op_free(struct gba_fab_ep *ep, struct gba_fab_op *op);
/* The record behind a wire id, or NULL if stale. */
struct gba_fab_op *gba_fab_op_find(struct gba_fab_ep *ep, uint32_t id);

/*
 * Send an answer to operation @op of @peer: @status and @len bytes of
 * @payload.  Never fails: a full queue defers it to the backlog.
 */
void gba_fab_answer(struct gba_fab_ep *ep, struct gba_fab_peer *peer,
		    uint32_t op, int status, const void *payload, size_t len);

/* Fill a slot header's common fields for a message from @ep. */
void gba_fab_hdr_init(struct gba_fab_ep *ep, struct gba_fab_hdr *hdr,
		      uint8_t type);

/* The peer behind a slot's source, connecting if needed (NULL: gone). */
struct gba_fab_peer *gba_fab_src_peer(struct gba_fab_ep *ep,
				      const struct gba_fab_hdr *hdr);

/* ---- gba_fab_xfer.c ---------------------------------------------------- */

/* Execute an arrived slot (any type but T_RESP, handled by the ep). */
void gba_fab_execute(struct gba_fab_ep *ep, struct gba_fab_slot *slot);
/* Finish an operation from its answer. */
void gba_fab_resp(struct gba_fab_ep *ep, const struct gba_fab_slot *slot);

/*
 * Copy @len bytes between local @liov and the remote @riov of process
 * @pid, starting @roff bytes into the remote side (@write: local to
 * remote).  Returns 0 or a negative errno.
 */
int gba_fab_cma(pid_t pid, bool write, const struct iovec *liov,
		size_t lcount, const struct iovec *riov, size_t rcount,
		size_t roff, size_t len);

#endif /* GBA_FAB_PRIV_H */
