/*
 * GBA core library: private layout of the fabric engine
 * (include/gba/gba_eng.h).  One job per source file:
 *
 *   gba_eng_ring.c   the shared-memory receive queue: create, map, claim
 *                    and publish slots, poll
 *   gba_eng_ep.c     endpoints, peers, the operation table, progress,
 *                    answers and dead-peer detection
 *   gba_eng_xfer.c   initiating sends, puts, gets and atomics; executing
 *                    them at the target; cross-memory attach copies
 *   gba_eng_atomic.c the built-in 32/64-bit atomic executor
 *   gba_eng_net.c    the TCP path to peers on other hosts (frames:
 *                    gba_eng_wire.h)
 */
#ifndef GBA_ENG_PRIV_H
#define GBA_ENG_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <uthash.h>

#include <gba/gba_eng.h>
#include <gba/gba_fault.h>

#define GBA_ENG_RING_MAGIC 0x474241464142ULL /* "GBAFAB" */
#define GBA_ENG_RING_VERSION 3
#define GBA_ENG_RING_HDR 4096 /* bytes before the first slot */
#define GBA_ENG_RX_SLOTS_MAX 65536
#define GBA_ENG_MAX_OPS_MAX 65536

/* What a slot carries. */
enum gba_eng_type {
	GBA_ENG_T_MSG = 1, /* message; large: payload is the sender's iovs */
	GBA_ENG_T_PUT,	   /* put; large: payload is the initiator's iovs */
	GBA_ENG_T_GET,	   /* get; payload is the initiator's iovs */
	GBA_ENG_T_ATOMIC,  /* atomic; payload struct gba_eng_atomic_req */
	GBA_ENG_T_RESP,	   /* answer to an operation (status, data) */
};

/* hdr.xflags: engine flags */
#define GBA_ENG_X_LARGE 1u  /* payload is an iov array, data stays put */
#define GBA_ENG_X_FETCH 2u  /* atomic: answer with the old values */
#define GBA_ENG_X_CMP 4u    /* atomic: compare operands follow */
#define GBA_ENG_X_NOANS 8u  /* message: no answer wanted (inline) */
#define GBA_ENG_X_SLOTS 16u /* message in iov_count consecutive slots */
#define GBA_ENG_X_HDR 32u   /* message in the header (hdr.small), no answer */
#define GBA_ENG_X_SKIP 64u  /* inline message from payload + GBA_ENG_SKIP */
/*
 * T_GET request: the initiator may copy the tail itself (it can reach
 * the target with cross-memory attach: gba_eng_peer.share); T_RESP: a
 * notice before the answer, the tail's address in the target in
 * hdr.addr (gba_eng_share_head).
 */
#define GBA_ENG_X_SHARE 128u

/*
 * An inline message that does not fit the header starts GBA_ENG_SKIP
 * bytes into the payload, at the slot's third cache line, when it fits
 * there: the second line is the header line's neighbour in the 128-byte
 * pair the CPU's adjacent-line prefetcher fetches together, so while the
 * consumer polls the header it keeps pulling that line away from the
 * producer writing it, and a message there pays for it twice
 * (doc/design.md section 4).
 */
#define GBA_ENG_SKIP 64

/*
 * Payload bytes a message can carry in its slot's header, in the place of
 * the front end's flags, op, len, status and addr (which a message that
 * wants no answer has no use for, or keeps in the header's first word):
 * the consumer then reads one cache line, not two.  32 bytes: an 8-byte
 * tag, 8 bytes of immediate data and a 32-byte payload, the common small
 * MPI message over MTL-OFI, in one line (doc/design.md section 4).
 */
#define GBA_ENG_HDR_INLINE 32
/* Largest front-end flags value a header-only message carries. */
#define GBA_ENG_HDR_FLAGS_MAX 0xffu
/* Where a continuation slot's payload starts (after its sequence word). */
#define GBA_ENG_CONT_OFF (GBA_ENG_SLOT_SIZE - GBA_ENG_EAGER_SLOT)

/*
 * The first GBA_ENG_HDR_SIZE bytes of a slot.  Bytes 0-31 are common to
 * every entry; 32-63 are either the fields of an ordinary entry or, in a
 * header-only message (GBA_ENG_X_HDR), its payload, whose length and
 * flags are then in bytes 5 and 7.
 */
struct gba_eng_hdr {
	/*
	 * Ring protocol (gba_eng_ring.c): the low 32 bits of the position
	 * the slot is free for or published at, compared wrap-safely.
	 */
	_Atomic uint32_t seq;
	uint8_t type; /* enum gba_eng_type */
	union {
		uint8_t iov_count; /* large: iov entries in the payload;
				      X_SLOTS: slots the message takes */
		uint8_t small_len; /* X_HDR: payload bytes in small */
	};
	uint8_t xflags;	     /* GBA_ENG_X_* */
	uint8_t small_flags; /* X_HDR: the front end's flags */
	uint32_t src_pid;
	uint32_t src_ep_id;
	uint64_t tag;  /* T_MSG: tag; RMA/atomic: key */
	uint64_t data; /* immediate data */
	union {
		struct {
			uint32_t flags; /* front end's flags, passed through */
			uint32_t op;	/* initiator's operation
					   (index | gen << 16) */
			uint64_t len;	/* payload / transfer bytes */
			int32_t status; /* T_RESP: 0 or -errno */
			uint32_t reserved;
			uint64_t addr; /* RMA/atomic: remote address;
					  T_RESP: inline len */
		};
		uint8_t small[GBA_ENG_HDR_INLINE]; /* GBA_ENG_X_HDR */
	};
};

_Static_assert(sizeof(struct gba_eng_hdr) == GBA_ENG_HDR_SIZE,
	       "slot header is one cache line");

struct gba_eng_slot {
	struct gba_eng_hdr hdr;
	uint8_t payload[GBA_ENG_INLINE];
};

/* Operands of an atomic request (the payload of a T_ATOMIC slot). */
struct gba_eng_atomic_req {
	uint32_t op;
	uint32_t datatype;
	uint32_t elem_size;
	uint32_t count;
	uint8_t operands[]; /* count elements, then count compare values */
};

/* The shared receive queue: a header page, then the slots. */
struct gba_eng_ring {
	uint64_t magic;
	uint32_t version;
	uint32_t nslots;
	uint64_t owner_slot;  /* gba_proc_self_slot() of the owner */
	_Atomic uint32_t open; /* 0 once the owner closed the endpoint */
	uint32_t pad_open;
	uint64_t owner_va; /* the ring's address in its owner (0: unknown, an
			      older build): a mapper's cross-memory attach
			      probe (gba_eng_peer.share) */
	uint8_t pad0[64 - 40];
	_Atomic uint64_t tail; /* next position to claim (producers) */
	uint8_t pad1[GBA_ENG_RING_HDR - 72];
	struct gba_eng_slot slots[];
};

/* ---- gba_eng_ring.c ---------------------------------------------------- */

/* Shared-memory object name of an endpoint's queue, into @buf. */
void gba_eng_ring_name(const struct gba_addr *addr, char *buf, size_t len);
/*
 * Create and map the queue of local endpoint @addr, named once it is
 * ready; *@fdp is its file, held (shared flock) until
 * gba_eng_ring_destroy.  -EADDRINUSE if the name exists, -ENOSPC (a full
 * /dev/shm), or another negative errno.
 */
int gba_eng_ring_create(const struct gba_addr *addr, uint32_t nslots,
			struct gba_eng_ring **ringp, size_t *lenp, int *fdp);
/*
 * Claim service @ep_id of this user and job for the queue open as
 * @ring_fd (a second name for it), taking over a claim no live endpoint
 * holds.  0, -EADDRINUSE (a live endpoint has it) or another errno.
 */
int gba_eng_ring_claim_service(int ring_fd, uint32_t ep_id);
/* Drop the claim of service @ep_id if it is @ring_fd's. */
void gba_eng_ring_release_service(int ring_fd, uint32_t ep_id);
/* Map the queue of @addr (another endpoint).  -EHOSTUNREACH if none. */
int gba_eng_ring_map(const struct gba_addr *addr, struct gba_eng_ring **ringp,
		     size_t *lenp);
/* Mark closed, unmap, unlink and close (the owner's @fd). */
void gba_eng_ring_destroy(struct gba_eng_ring *ring, size_t len,
			  const struct gba_addr *addr, int fd);
void gba_eng_ring_unmap(struct gba_eng_ring *ring, size_t len);
/*
 * Unlink the queues and service names of this user's dead processes
 * (crash leftovers), of every job.
 */
void gba_eng_ring_reap(void);

/*
 * Claim the @n (>= 1) consecutive slots from the next position of @ring,
 * a queue of @nslots slots (as its mapping was checked: its header's
 * count is the owner's to write) at once: returns the first, or NULL when
 * fewer than @n are free.  Slot
 * pos + i is free for this lap when its sequence is pos + i; no other
 * producer can take it while the tail is pos, which the compare-and-swap
 * checks.  The caller fills them and publishes the first only (the
 * consumer skips the others, and its acquire of the first sees them).
 */
static inline struct gba_eng_slot *
gba_eng_ring_claim_n(struct gba_eng_ring *ring, uint32_t nslots, uint32_t n,
		     uint64_t *posp)
{
	uint64_t mask = nslots - 1;
	uint64_t pos = atomic_load_explicit(&ring->tail, memory_order_relaxed);
	int32_t dif = 0;
	uint32_t i;

	for (;;) {
		for (i = 0; i < n; i++) {
			dif = (int32_t)(atomic_load_explicit(
						&ring->slots[(pos + i) & mask]
							 .hdr.seq,
						memory_order_acquire) -
					(uint32_t)(pos + i));
			if (dif)
				break;
		}
		if (i == n) {
			if (atomic_compare_exchange_weak_explicit(
				    &ring->tail, &pos, pos + n,
				    memory_order_relaxed, memory_order_relaxed))
				break;
		} else if (dif < 0) {
			return NULL;
		} else {
			/*
			 * Another producer took the slot, so the tail moved
			 * past it (its compare-and-swap precedes the store
			 * the acquire load above saw).  A tail that did not
			 * move means a sequence word no producer wrote: the
			 * queue is corrupt, taken as full.
			 */
			uint64_t was = pos;

			pos = atomic_load_explicit(&ring->tail,
						   memory_order_relaxed);
			if (pos == was)
				return NULL;
		}
	}
	*posp = pos;
	return &ring->slots[pos & mask];
}

/*
 * Claim the next slot of @ring (@nslots slots): returns it, or NULL when
 * the queue is full.  The caller fills it and calls gba_eng_ring_publish.
 */
static inline struct gba_eng_slot *
gba_eng_ring_claim(struct gba_eng_ring *ring, uint32_t nslots, uint64_t *posp)
{
	return gba_eng_ring_claim_n(ring, nslots, 1, posp);
}

static inline void gba_eng_ring_publish(struct gba_eng_slot *slot, uint64_t pos)
{
	gba_fault(GBA_FAULT_SLOT);
	atomic_store_explicit(&slot->hdr.seq, (uint32_t)(pos + 1),
			      memory_order_release);
}

/*
 * The consumer hands @slot back for position @seq (its next lap), with
 * the header words a producer writes first cleared: type, iov_count,
 * xflags and flags, then src_pid and src_ep_id.  So a slot claimed but
 * never published names its claimer (src_pid) only once this lap's
 * claimer wrote it, after the slot count of a message in several slots
 * (gba_eng_ring_skip_dead).
 */
static inline void gba_eng_ring_hand_back(struct gba_eng_slot *slot,
					  uint64_t seq)
{
	memset((char *)&slot->hdr + offsetof(struct gba_eng_hdr, type), 0,
	       offsetof(struct gba_eng_hdr, tag) -
		       offsetof(struct gba_eng_hdr, type));
	atomic_store_explicit(&slot->hdr.seq, (uint32_t)seq,
			      memory_order_release);
}

/* 1 if @slot's sequence word says position @pos (its low 32 bits). */
static inline bool gba_eng_slot_at(struct gba_eng_slot *slot, uint64_t pos)
{
	return atomic_load_explicit(&slot->hdr.seq, memory_order_acquire) ==
	       (uint32_t)pos;
}

/* ---- Endpoint state (gba_eng_ep.c) -------------------------------------- */

/* What ep->peers is keyed by: the peer's host and (pid, ep_id). */
struct gba_eng_peer_key {
	uint64_t host_id;
	uint64_t id; /* pid << 32 | ep_id */
};

struct gba_eng_conn;

struct gba_eng_peer {
	struct gba_addr addr;
	struct gba_eng_ring *ring; /* its receive queue (ours for self);
				      NULL for a peer on another host */
	struct gba_eng_conn *conn; /* another host: the TCP connection our
				      operations to it take (gba_eng_net.c) */
	size_t map_len;		   /* 0: not our mapping (self) */
	uint32_t nslots;	   /* its slots, from the checked mapping */
	uint32_t nops;		   /* our operations outstanding there */
	bool dead;
	bool share;		   /* we can read its memory ourselves
				      (cross-memory attach, probed on its
				      ring): our large gets there are
				      shared (GBA_ENG_X_SHARE) */
	uint32_t share_wait;	   /* shared gets there whose notice or
				      answer has not come: our other
				      operations there wait (-EAGAIN) */
	uint64_t full_check_ns;	   /* gba_eng_peer_full's last look */
	UT_hash_handle hh; /* ep->peers, keyed by key */
	struct gba_eng_peer_key key;
};

/* An outstanding operation of the initiator. */
struct gba_eng_op {
	uint64_t cookie;
	struct gba_eng_peer *peer;
	uint16_t gen;
	uint8_t type;
	uint8_t iov_count; /* T_GET: where the data goes */
	uint32_t next_free;
	struct iovec iov[GBA_ENG_MAX_IOV];
	void *result; /* T_ATOMIC fetch: old values */
	size_t result_len;
	int share_status; /* shared T_GET: our half's 0 or -errno */
	bool share_wait;  /* shared T_GET asked for, no notice yet: counted
			     in peer->share_wait */
};

/*
 * A shared get of @len bytes (GBA_ENG_X_SHARE): the target copies the
 * head, [0, gba_eng_share_head(len)), the initiator the rest.  Both
 * sides compute it; page-aligned so that each copies whole pages.
 */
static inline uint64_t gba_eng_share_head(uint64_t len)
{
	return (len / 2) & ~(uint64_t)4095;
}

/* An answer that found the initiator's queue full. */
struct gba_eng_backlog {
	struct gba_eng_backlog *next;
	struct gba_eng_peer *peer;
	struct gba_eng_hdr hdr;
	size_t len;
	uint8_t payload[];
};

struct gba_eng_ep {
	struct gba_addr addr;
	struct gba_eng_ops ops;
	void *ctx;
	struct gba_eng_ring *rx;
	size_t rx_len;
	int rx_fd;	/* rx's file, held while open (gba_eng_ring_create) */
	bool service;	/* addr.ep_id claimed as a service */
	uint64_t head; /* next slot to poll */
	uint32_t rx_mask;
	uint32_t eager_max;	    /* gba_eng_ep_attr.eager_max */
	bool shared_get;	    /* GBA_ENG_EP_SHARED_GET */
	struct gba_eng_peer *peers; /* uthash */
	struct gba_eng_op *optab;
	uint32_t max_ops;
	uint32_t free_op; /* head of the free list; max_ops: none */
	size_t nops;
	struct gba_eng_backlog *backlog, **backlog_tail;
	size_t nbacklog;
	uint32_t idle_polls;  /* progress calls since something arrived */
	bool oversubscribed;  /* more processes than CPUs: yield when idle */
	uint32_t ncpus;	      /* online CPUs */
	uint32_t nprocs;      /* other processes among the peers */
	uint64_t last_check_ns;
	uint64_t nbad; /* slots dropped as corrupt */
	uint64_t nskipped; /* slots of dead claimers skipped */
	uint64_t nshared;  /* gets whose tail we copied (gba_eng_shared_gets) */
	struct gba_eng_net *net; /* TCP path (NULL: none; gba_eng_net.c) */
	uint32_t net_conns;	 /* its connections (read without the lock) */
};

#define GBA_ENG_OP_NONE 0xffffffffu
/* Dropped slots an endpoint logs (gba_eng_bad_slot) */
#define GBA_ENG_BAD_LOG_MAX 10
/* Largest errno an answer's status may carry (negated) */
#define GBA_ENG_ERRNO_MAX 4095

/*
 * @peer's queue had no free slot for an operation of @ep (none of whose
 * records is taken for it): -EAGAIN, or -EPIPE once @peer turns out to
 * be gone (closed, or its process dead: it will never make room), when
 * its outstanding operations fail too.  Looks at most every
 * GBA_ENG_CHECK_NS per peer.
 */
int gba_eng_peer_full(struct gba_eng_ep *ep, struct gba_eng_peer *peer);

/* Mark @peer dead and fail every operation outstanding there (-EPIPE). */
void gba_eng_dead_peer(struct gba_eng_ep *ep, struct gba_eng_peer *peer);

/* The key of @addr in ep->peers. */
static inline struct gba_eng_peer_key gba_eng_peer_key(const struct gba_addr *addr)
{
	struct gba_eng_peer_key k = {
		addr->host_id, ((uint64_t)addr->pid << 32) | addr->ep_id};

	return k;
}

/* Take an operation record (NULL if the table is full). */
struct gba_eng_op *gba_eng_op_alloc(struct gba_eng_ep *ep,
				    struct gba_eng_peer *peer, uint8_t type,
				    uint64_t cookie);
/* Wire id of @op (index | gen << 16). */
uint32_t gba_eng_op_id(const struct gba_eng_ep *ep, const struct gba_eng_op *op);
/* Release @op and report @status to the front end. */
void gba_eng_op_finish(struct gba_eng_ep *ep, struct gba_eng_op *op,
		       int status);
/*
 * @op's shared get no longer holds back the peer's other operations
 * (its notice came, or it ends).
 */
static inline void gba_eng_op_share_done(struct gba_eng_op *op)
{
	if (op->share_wait) {
		op->share_wait = false;
		op->peer->share_wait--;
	}
}

/* Release @op without a report (the initiating call failed). */
void gba_eng_op_free(struct gba_eng_ep *ep, struct gba_eng_op *op);
/* The record behind a wire id, or NULL if stale. */
struct gba_eng_op *gba_eng_op_find(struct gba_eng_ep *ep, uint32_t id);

/*
 * Send an answer to operation @op of @peer: @status and @len bytes of
 * @payload.  Never fails: a full queue defers it to the backlog.
 */
void gba_eng_answer(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		    uint32_t op, int status, const void *payload, size_t len);
/*
 * Send @peer the notice of its shared get @op (GBA_ENG_X_SHARE): the
 * tail is at @tail_va here.  Queued like an answer, so it arrives first.
 */
void gba_eng_notice(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		    uint32_t op, uint64_t tail_va);

/* Fill a slot header's common fields for a message from @ep. */
void gba_eng_hdr_init(struct gba_eng_ep *ep, struct gba_eng_hdr *hdr,
		      uint8_t type);

/* The peer behind a slot's source, connecting if needed (NULL: gone). */
struct gba_eng_peer *gba_eng_src_peer(struct gba_eng_ep *ep,
				      const struct gba_eng_hdr *hdr);

/*
 * The slots the entry at @hdr takes in @ep's queue: 1, or for a message
 * in several slots (GBA_ENG_X_SLOTS) their count, 2..GBA_ENG_MAX_IOV, at
 * most half the queue, as many as its length needs.  0: a corrupt entry
 * that claims several slots, or a message in the header that is not one
 * (taken as one, not executed).
 */
static inline uint32_t gba_eng_slot_span(const struct gba_eng_ep *ep,
					 const struct gba_eng_hdr *hdr)
{
	uint32_t n = hdr->iov_count;

	if (hdr->xflags & GBA_ENG_X_HDR)
		return hdr->type == GBA_ENG_T_MSG &&
		       !(hdr->xflags & (GBA_ENG_X_SLOTS | GBA_ENG_X_LARGE)) &&
		       hdr->small_len <= GBA_ENG_HDR_INLINE;
	if (!(hdr->xflags & GBA_ENG_X_SLOTS))
		return 1;
	if (hdr->type != GBA_ENG_T_MSG || n < 2 || n > GBA_ENG_MAX_IOV ||
	    n > (ep->rx_mask + 1) / 2 ||
	    hdr->len >
		    GBA_ENG_INLINE + (uint64_t)(n - 1) * GBA_ENG_EAGER_SLOT ||
	    hdr->len <= GBA_ENG_INLINE + (uint64_t)(n - 2) * GBA_ENG_EAGER_SLOT)
		return 0;
	return n;
}

/*
 * Skip the entries at the head of @ep's queue whose producer claimed
 * them and died before publishing them (they would stop the queue for
 * good): hand their slots back, and log it.  An entry whose claimer is
 * not known yet (it died between its claim and its first store) is
 * waited for like a live one.  Called by progress's periodic check.
 */
void gba_eng_ring_skip_dead(struct gba_eng_ep *ep);

/* ---- gba_eng_xfer.c ---------------------------------------------------- */

/*
 * Execute an arrived slot (any type but T_RESP, handled by the ep).  A
 * request whose header does not describe bytes of its slot is dropped
 * with gba_eng_bad_slot and answered -EPROTO when an answer is awaited.
 */
void gba_eng_execute(struct gba_eng_ep *ep, struct gba_eng_slot *slot);
/*
 * Finish an operation from its answer.  An answer from another process
 * than the operation's target is dropped; one whose length leaves the
 * slot or whose status is not 0 or a negative errno finishes the
 * operation with -EPROTO (both with gba_eng_bad_slot).
 */
void gba_eng_resp(struct gba_eng_ep *ep, const struct gba_eng_slot *slot);
/*
 * Log that a slot with header @hdr was dropped because of @why (on
 * stderr; the first GBA_ENG_BAD_LOG_MAX of an endpoint).
 */
void gba_eng_bad_slot(struct gba_eng_ep *ep, const struct gba_eng_hdr *hdr,
		      const char *why);

/*
 * Copy @len bytes between local @liov and the remote @riov of process
 * @pid, starting @roff bytes into the remote side (@write: local to
 * remote).  Returns 0 or a negative errno.
 */
int gba_eng_cma(pid_t pid, bool write, const struct iovec *liov,
		size_t lcount, const struct iovec *riov, size_t rcount,
		size_t roff, size_t len);

/* ---- gba_eng_net.c ------------------------------------------------------ */

/*
 * The TCP path to peers on other hosts (doc/design.md section 9): a
 * listening socket per endpoint, bound to gba_net_local()'s address, one
 * connection per pair of endpoints that talk (or two, when both connect
 * at once), frames of gba_eng_wire.h, a send queue per connection flushed
 * by progress.
 */
struct gba_eng_net;

/*
 * Open @ep's listener and put its address into ep->addr (net, port):
 * @spec as gba_net_local takes it.  @service (or 0): the endpoint holds
 * that service, and listens on that TCP port when it is one (1..65535)
 * and free (so that other hosts find it by host and service,
 * gba_eng_service_lookup), else on any port.  0 (also when the TCP path
 * is disabled or this host has no address: ep->net stays NULL and peers
 * on other hosts are unreachable), or a negative errno (GBA_NET_ADDR
 * given but unusable: -EINVAL, -EADDRNOTAVAIL; socket errors).
 */
int gba_eng_net_open(struct gba_eng_ep *ep, const char *spec,
		     uint32_t service);
/* Close @ep's connections (flushing their send queues for a bounded time). */
void gba_eng_net_close(struct gba_eng_ep *ep);
/*
 * The peer on another host at @addr, connecting on first use: 0,
 * -EHOSTUNREACH (no TCP path here or there, connection refused or timed
 * out), -EPIPE (its connection died), -ENOMEM.
 */
int gba_eng_net_peer_get(struct gba_eng_ep *ep, const struct gba_addr *addr,
			 struct gba_eng_peer **peerp);
/* The initiator's operations on a peer with a connection. */
int gba_eng_net_send(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		     const struct iovec *iov, size_t count, uint64_t tag,
		     uint64_t data, uint32_t flags);
int gba_eng_net_rma(struct gba_eng_ep *ep, struct gba_eng_peer *peer, bool put,
		    const struct iovec *iov, size_t count, uint64_t addr,
		    uint64_t key, uint32_t flags, uint64_t data,
		    uint64_t cookie);
int gba_eng_net_atomic(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		       uint32_t aop, uint32_t datatype, size_t elem_size,
		       size_t count, const void *operand, const void *compare,
		       void *result, uint64_t addr, uint64_t key,
		       uint32_t flags, uint64_t data, uint64_t cookie);
/*
 * Accept, read and execute what arrived on @ep's sockets and flush the
 * send queues.  Returns the frames handled.  Costs a poll() call.
 */
int gba_eng_net_progress(struct gba_eng_ep *ep);
/*
 * Without connections, progress looks at the listener (one accept4) every
 * GBA_NET_IDLE_POLLS-th idle call, when gba_eng_net_due says
 * GBA_NET_IDLE_NS passed since the last look.
 */
#define GBA_NET_IDLE_POLLS 256
bool gba_eng_net_due(struct gba_eng_ep *ep);

/* Whether @ep has TCP connections (one load: gba_eng_poll's hint). */
static inline int gba_eng_net_busy(const struct gba_eng_ep *ep)
{
	return __atomic_load_n(&ep->net_conns, __ATOMIC_RELAXED) != 0;
}

#endif /* GBA_ENG_PRIV_H */
