/*
 * GBA core library: the fabric engine (the data path).
 *
 * Front-end neutral (no libfabric or UCX types); doc/design.md
 * section 4.  The emulated fabric connects the endpoints of the processes
 * of one host:
 *
 *   - every endpoint owns a receive queue in POSIX shared memory
 *     ("/gba-fab-<uid>-<job>-<pid>-<ep_id>", owner-only), a bounded
 *     multi-producer ring of GBA_ENG_SLOT_SIZE-byte slots; a sender
 *     claims a slot with one compare-and-swap, fills it and publishes it
 *     with a release store; the owner polls its next slot (one load);
 *   - payloads up to GBA_ENG_INLINE bytes travel in the slot; a message
 *     up to the endpoint's eager_max (at most GBA_ENG_EAGER_MAX bytes)
 *     travels in several consecutive slots claimed at once; larger
 *     messages and RMA are single-copy: the target reads or writes the
 *     initiator's memory with process_vm_readv/process_vm_writev
 *     (cross-memory attach) and answers with a response slot;
 *   - RMA and atomics execute at the target, in the target's progress,
 *     against regions the target's front end validates (ops->mr_lookup);
 *   - operations from one endpoint to one peer are executed in issue
 *     order (the ring is FIFO per producer), so every ordering among
 *     messages, RMA and atomics holds; a fence is implicit.
 *
 * Progress is driven by the caller (gba_eng_progress); there is no helper
 * thread.  An engine endpoint is not thread-safe: the front end
 * serialises the calls on one endpoint.  Sending into another endpoint's
 * ring is safe from any number of processes.
 *
 * Error convention: 0 (or a documented non-negative value) or a negative
 * errno.  Completions carry a status that is 0 or a negative errno:
 *   -EHOSTUNREACH  the peer is on another host that cannot be reached
 *                  (no network address, connection refused), or its
 *                  endpoint is gone
 *   -EPIPE         the peer process died with the operation outstanding
 *   -ENOKEY        the target knows no region with that key
 *   -EACCES        the region does not grant the access
 *   -ERANGE        the access leaves the region
 *   -EINVAL        the target refused the operation (bad atomic, ...)
 *   -EPERM/-ESRCH  cross-memory attach refused / process gone
 */
#ifndef GBA_ENG_H
#define GBA_ENG_H

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <gba/gba_addr.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GBA_ENG_SLOT_SIZE 4096	/* bytes per receive-queue slot */
#define GBA_ENG_HDR_SIZE 64	/* header at the start of each slot */
#define GBA_ENG_INLINE (GBA_ENG_SLOT_SIZE - GBA_ENG_HDR_SIZE)
#define GBA_ENG_RX_SLOTS_DEF 256 /* receive-queue depth (power of two) */
#define GBA_ENG_MAX_IOV 8	/* iov entries per operation */
#define GBA_ENG_MAX_OPS_DEF 1024 /* outstanding operations per endpoint */
/*
 * A message in several slots: the first slot carries GBA_ENG_INLINE
 * bytes, each further slot GBA_ENG_SLOT_SIZE - 8 (all but its sequence
 * word); at most GBA_ENG_MAX_IOV slots.
 */
#define GBA_ENG_EAGER_SLOT (GBA_ENG_SLOT_SIZE - 8)
#define GBA_ENG_EAGER_MAX                                                      \
	(GBA_ENG_INLINE + (GBA_ENG_MAX_IOV - 1) * GBA_ENG_EAGER_SLOT)

/* Access rights a target region grants (ops->mr_lookup's @access). */
#define GBA_ENG_ACCESS_READ 1u	/* gets, fetching atomics read it */
#define GBA_ENG_ACCESS_WRITE 2u /* puts, atomics write it */

/* Atomic operations the built-in executor knows (32/64-bit integers). */
enum gba_eng_atomic_op {
	GBA_ENG_AOP_ADD,
	GBA_ENG_AOP_AND,
	GBA_ENG_AOP_OR,
	GBA_ENG_AOP_XOR,
	GBA_ENG_AOP_SWAP,
	GBA_ENG_AOP_CSWAP,
};

struct gba_eng_ep;
struct gba_eng_peer;

/*
 * A message as delivered to the front end's recv callback.  Valid during
 * the callback only, unless gba_eng_rx_hold() made a copy.  Every
 * delivered message must eventually be finished with gba_eng_rx_done()
 * (it answers a large message's sender, whose send completes then).
 */
struct gba_eng_rx {
	struct gba_addr src;	/* sending endpoint */
	uint64_t len;		/* payload bytes */
	uint64_t tag;		/* sender's tag (front end's meaning) */
	uint64_t data;		/* sender's immediate data */
	uint32_t flags;		/* sender's front-end flags (opaque) */
	/*
	 * The payload in one piece (in the slot), or NULL: a large message
	 * (in the sender's memory) or one in several slots; read those with
	 * gba_eng_rx_copy.
	 */
	const void *payload;
	/* engine private */
	uint32_t src_op;	/* sender's operation, for the answer */
	uint16_t iov_count;	/* large: sender's iovs */
	uint8_t held;		/* a gba_eng_rx_hold() copy */
	uint8_t local;		/* iov: this endpoint's queue (several slots) */
	struct iovec iov[GBA_ENG_MAX_IOV];
};

/*
 * Remote access events for the front end (remote CQ data, remote
 * counters): one per executed put/get/atomic, after it took effect.
 */
enum gba_eng_event {
	GBA_ENG_EV_PUT,
	GBA_ENG_EV_GET,
	GBA_ENG_EV_ATOMIC,
};

struct gba_eng_ops {
	/* A message arrived (see struct gba_eng_rx). */
	void (*recv)(void *ctx, struct gba_eng_rx *rx);
	/*
	 * An operation this endpoint started completed: @cookie as given to
	 * the initiating call, @status 0 or a negative errno (see the
	 * header comment).  Sends that gba_eng_send completed at once
	 * (returned 1) are not reported.
	 */
	void (*complete)(void *ctx, uint64_t cookie, int status);
	/*
	 * Target side: validate @len bytes at remote address @addr under
	 * @key for @access (GBA_ENG_ACCESS_*); set *@ptr to the local
	 * address.  Returns 0, -ENOKEY, -EACCES or -ERANGE (the checks of
	 * gba_eng_region_check, gba_eng_access_check, gba_eng_range_check).
	 */
	int (*mr_lookup)(void *ctx, uint64_t key, uint64_t addr, size_t len,
			 uint32_t access, void **ptr);
	/*
	 * Target side: execute @count elements of atomic @op on @datatype
	 * (both front-end codes, passed through from gba_eng_atomic) at
	 * @dst with @operand and @compare, the old values into @result (may
	 * be NULL).  Returns 0 or -EINVAL.  NULL: the built-in executor,
	 * where @op is an enum gba_eng_atomic_op and @datatype the element
	 * size in bytes (4 or 8).
	 */
	int (*atomic)(void *ctx, uint32_t op, uint32_t datatype, void *dst,
		      const void *operand, const void *compare, void *result,
		      size_t count);
	/*
	 * Target side, optional: a put/get/atomic from @src took effect
	 * (@len bytes; @flags and @data as the initiator passed them).
	 */
	void (*remote_event)(void *ctx, enum gba_eng_event event,
			     const struct gba_addr *src, uint32_t flags,
			     uint64_t data, size_t len);
};

/* Checks shared by the front ends ---------------------------------------- */

/*
 * What the front ends check the same way, once: the target's check of a
 * remote access against a registration (ops->mr_lookup) and the shape of
 * an I/O vector.  Inline: they run once or more per operation.  The
 * results are the engine's negative errnos; each front end maps them to
 * its own codes.
 */

/*
 * gba_eng_range_check - whether the @len bytes at @addr lie inside the
 * @size bytes at @base (bytes; addresses in the region's own space:
 * virtual addresses, or offsets with @base 0).  Overflow-safe: @addr +
 * @len is never computed, so an access that wraps around the end of the
 * address space is never inside, and a region whose @base + @size wraps
 * contains nothing.  A zero-length access is inside when @addr lies in
 * [@base, @base + @size] (the end included).  Returns 0 or -ERANGE.
 */
static inline int gba_eng_range_check(uint64_t base, uint64_t size,
				      uint64_t addr, uint64_t len)
{
	if (addr < base || len > size || addr - base > size - len ||
	    base + size < base)
		return -ERANGE;
	return 0;
}

/*
 * gba_eng_access_check - whether a region granting the access bits
 * @granted allows an access needing the bits @need: every bit of @need
 * must be granted (both in one encoding: GBA_ENG_ACCESS_*, or a front
 * end's own flags).  @need 0 is always allowed.  Returns 0 or -EACCES.
 */
static inline int gba_eng_access_check(uint64_t granted, uint64_t need)
{
	return (granted & need) == need ? 0 : -EACCES;
}

/*
 * A registered region as the target checks it: one contiguous range of
 * remote addresses and the access it grants.
 */
struct gba_eng_region {
	uint64_t base;		/* remote address of its first byte */
	uint64_t size;		/* bytes */
	uint64_t access;	/* granted access bits (any one encoding) */
};

/*
 * gba_eng_region_check - the target's check of a remote access, in the
 * order ops->mr_lookup reports it: @region is the registration the key
 * names (NULL: no registration has that key), @addr and @len the access
 * (bytes, in the region's address space), @need the access bits it needs
 * (the encoding of region->access).  Returns 0, -ENOKEY (@region NULL),
 * -EACCES (gba_eng_access_check), -ERANGE (gba_eng_range_check).
 */
static inline int gba_eng_region_check(const struct gba_eng_region *region,
				       uint64_t addr, uint64_t len,
				       uint64_t need)
{
	if (!region)
		return -ENOKEY;
	if (gba_eng_access_check(region->access, need))
		return -EACCES;
	return gba_eng_range_check(region->base, region->size, addr, len);
}

/*
 * gba_eng_iov_len - check an I/O vector and total its length: @count
 * entries of @iov (NULL allowed when @count is 0), at most @max_count; no
 * entry with a NULL iov_base and a non-zero iov_len (entries of length 0
 * are fine, NULL or not); a total of at most @max_len bytes (@max_len at
 * most SSIZE_MAX), checked before each addition so that the sum never
 * wraps.  The count is checked before any entry is read.  When an entry
 * is at fault and @bad is not NULL, its index is stored in *@bad.
 * Returns the total in bytes (>= 0), -E2BIG (@count above @max_count),
 * -EINVAL (@iov NULL with @count > 0), -EFAULT (an entry with a NULL base
 * and a length), -EMSGSIZE (the total would exceed @max_len).
 */
static inline ssize_t gba_eng_iov_len(const struct iovec *iov, size_t count,
				      size_t max_count, size_t max_len,
				      size_t *bad)
{
	size_t i, len = 0;

	if (count > max_count)
		return -E2BIG;
	if (count && !iov)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		if (!iov[i].iov_base && iov[i].iov_len) {
			if (bad)
				*bad = i;
			return -EFAULT;
		}
		if (iov[i].iov_len > max_len - len) {
			if (bad)
				*bad = i;
			return -EMSGSIZE;
		}
		len += iov[i].iov_len;
	}
	return (ssize_t)len;
}

struct gba_eng_ep_attr {
	/*
	 * The endpoint's address: NULL for a new one (gba_addr_init_local),
	 * or an address of this process (its ep_id chosen by the caller).
	 */
	const struct gba_addr *addr;
	uint32_t rx_slots;	/* receive-queue depth; 0: default */
	uint32_t max_ops;	/* outstanding operations; 0: default */
	/*
	 * Largest message gba_eng_send copies into the peer's queue, in
	 * several slots above GBA_ENG_INLINE bytes (at most
	 * GBA_ENG_EAGER_MAX; 0 or up to GBA_ENG_INLINE: one slot only).
	 */
	uint32_t eager_max;
	uint32_t flags;		/* GBA_ENG_EP_* */
	const struct gba_eng_ops *ops;
	void *ctx;		/* first argument of every callback */
	/*
	 * The network address peers on other hosts reach the endpoint at
	 * (its TCP listener; doc/design.md section 9): a numeric address
	 * or host name, "none" for no TCP path, NULL for GBA_NET_ADDR or
	 * its default, the address the host name resolves to (gba_net_local).
	 * The front ends pass FI_GBA_NET_ADDR / UCX_GBA_NET_ADDR here.
	 */
	const char *net_addr;
};

/*
 * gba_eng_ep_attr.flags: @addr's ep_id is a service other processes of
 * this user and job find by number (gba_eng_ep_find), held by one
 * endpoint at a time like a bound port.
 */
#define GBA_ENG_EP_SERVICE 1u
/*
 * gba_eng_ep_attr.flags: a get of at least GBA_ENG_SHARE_MIN bytes from
 * this endpoint's memory may be copied half by this endpoint's progress,
 * half by the initiator itself at the same time (doc/design.md section
 * 4).  The endpoint then answers (and reports GBA_ENG_EV_GET) once its
 * own half is copied, perhaps before the initiator's: a front end whose
 * remote-read events must mean "all read" (libfabric's FI_RMA_EVENT)
 * leaves it unset.
 */
#define GBA_ENG_EP_SHARED_GET 2u
/* Smallest get a GBA_ENG_EP_SHARED_GET endpoint shares, in bytes. */
#define GBA_ENG_SHARE_MIN (64u * 1024)

/*
 * gba_eng_ep_open - create an endpoint and its receive queue, in this
 * process's job (<gba/gba_job.h>): only endpoints of the same job reach
 * it.  Returns 0, -EINVAL (NULL pointers, ops without recv/complete/
 * mr_lookup, an address of another process, rx_slots not a power of two
 * or above 65536, eager_max above GBA_ENG_EAGER_MAX, unknown flags,
 * GBA_ENG_EP_SERVICE without an address), -EADDRNOTAVAIL or another
 * socket errno (@net_addr or GBA_NET_ADDR names an address the TCP
 * listener cannot bind), -EADDRINUSE (that address, or
 * with GBA_ENG_EP_SERVICE that service, is in use), -EACCES (a file of
 * another user has the queue's name), -ENOSPC (/dev/shm cannot hold the
 * queue: its pages are reserved before use, so a full /dev/shm is this
 * error, never SIGBUS later), -ENOMEM, -EMFILE/-ENFILE (no file
 * descriptor), or another errno of open/posix_fallocate/mmap/linkat;
 * gba_last_error names the file.
 */
int gba_eng_ep_open(const struct gba_eng_ep_attr *attr,
		    struct gba_eng_ep **epp);

/*
 * gba_eng_ep_close - remove the receive queue (senders get
 * -EHOSTUNREACH), fail nothing silently: outstanding operations are
 * dropped without callbacks, held messages must have been finished.
 */
void gba_eng_ep_close(struct gba_eng_ep *ep);

/*
 * gba_eng_ep_find - the address of the live endpoint that holds service
 * @ep_id (opened with GBA_ENG_EP_SERVICE) for this user and job on this
 * host: how a service number names a peer when no address was exchanged.
 * Returns 0, -ENOENT (none), -EINVAL, or the errno of open.
 */
int gba_eng_ep_find(uint32_t ep_id, struct gba_addr *addr);

/*
 * gba_eng_service_lookup - the address of the endpoint that holds the
 * service @svc names (a service address of another host, made by
 * gba_addr_service from a host and service number): how a host and
 * service name a peer there when no address was exchanged (fabtests'
 * "-s HOST SERVER" across hosts).  Such an endpoint listens on TCP port
 * <service> of its network address (doc/design.md section 9); the lookup
 * connects to it, asks (T_WHOIS with this process's job key) and reads
 * the answer, which that endpoint's progress gives.  A refused
 * connection is tried again every 100 ms until @timeout_ms (milliseconds,
 * >= 0) has passed: the peer may not have opened its endpoint yet.
 * Blocking; not for a hot path.  Returns 0, -EINVAL (@svc is not a
 * service address), -EHOSTUNREACH (nothing listens there in time),
 * -ENOENT (the port's endpoint does not hold that service for this job),
 * -ETIMEDOUT (no answer in time), -EPROTO (not a gba endpoint).
 */
int gba_eng_service_lookup(const struct gba_addr *svc, int timeout_ms,
			   struct gba_addr *addr);

/* An endpoint's receive queue as gba_eng_ep_list() finds it. */
struct gba_eng_ep_info {
	char name[64];		/* its /dev/shm file, "gba-fab-<uid>-<job>-
				   <pid>-<ep_id>" */
	uint64_t job;		/* gba_job_id() of the owner's job */
	uint32_t pid;		/* owner process */
	uint32_t ep_id;		/* endpoint number in that process */
	int alive;		/* 1: the owner holds the queue (its
				   endpoint is open); 0: a dead process's
				   leftover, unlinked by the next endpoint
				   opened */
	int valid;		/* 1: a well-formed queue (slots, pending
				   read); 0: unreadable or being created */
	uint32_t slots;		/* queue depth in slots */
	uint32_t pending;	/* entries published, not yet consumed */
};

/*
 * gba_eng_ep_list - call @cb(@info, @arg) for every receive queue of this
 * user's endpoints on this host, of every job, in no particular order (a
 * status tool's view: gba_stat(1)).  @info is valid during the call.
 * Liveness is the test the reaper uses: the owner holds a shared flock
 * on the file for its endpoint's life, so an exclusive one is refused;
 * for a dead owner's file the exclusive lock is held for an instant.
 * Reads only the queue's header and each slot's sequence word (no store,
 * owner-only files of this user only).  A non-zero return of @cb stops
 * the walk.  Returns 0, @cb's non-zero return, -EINVAL (NULL @cb), or
 * the errno of opendir(/dev/shm).
 */
int gba_eng_ep_list(int (*cb)(const struct gba_eng_ep_info *info, void *arg),
		    void *arg);

/* gba_eng_ep_addr - the endpoint's address. */
const struct gba_addr *gba_eng_ep_addr(const struct gba_eng_ep *ep);

/*
 * gba_eng_peer_get - the peer handle for @addr, connecting on first use
 * (maps the peer's receive queue; a peer on another host: a TCP
 * connection, made at once, bounded to 5 s).  Handles live until the
 * endpoint closes.  Returns 0, -EINVAL (malformed address), -EHOSTUNREACH
 * (another host without a TCP path, connection refused or timed out, or
 * no such endpoint: the receive queues of another user's processes are
 * not found), -EPIPE (the peer died), -ENOMEM,
 * -EACCES (a queue of this name not owned by the caller, or open to
 * group/others), -EMFILE.
 */
int gba_eng_peer_get(struct gba_eng_ep *ep, const struct gba_addr *addr,
		     struct gba_eng_peer **peerp);

/* gba_eng_peer_addr - the address a peer handle stands for. */
const struct gba_addr *gba_eng_peer_addr(const struct gba_eng_peer *peer);

/*
 * gba_eng_peer_gone - 1 if @peer's endpoint closed or its process died
 * (it will never read its queue again), else 0.  Costs a system call: for
 * slow paths (a resource a peer holds is overdue).
 */
int gba_eng_peer_gone(const struct gba_eng_peer *peer);

/*
 * gba_eng_send - send a message of the bytes of @iov (@count entries,
 * at most GBA_ENG_MAX_IOV) with @tag, @data and front-end @flags.
 * Up to GBA_ENG_INLINE bytes, and up to the endpoint's eager_max when
 * the consecutive slots it needs are free (at most half the peer's
 * queue), are copied into the peer's queue: returns 1, the send is
 * complete and is not reported.  Larger messages (and those that found
 * too few free slots) stay in place until the receiver has copied them:
 * returns 0, and ops->complete(@cookie) reports the end.  To a peer on
 * another host every message is written to its TCP connection or copied
 * into the connection's send queue: 1, whatever its size.  Returns
 * -EAGAIN (peer's queue or this endpoint's operation table full: retry
 * after progress), -EPIPE/-EHOSTUNREACH (peer gone), -EINVAL (bad iov).
 */
int gba_eng_send(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		 const struct iovec *iov, size_t count, uint64_t tag,
		 uint64_t data, uint32_t flags, uint64_t cookie);

/*
 * gba_eng_put / gba_eng_get - write the bytes of @iov to, or read them
 * from, @len bytes at remote address @addr under @key of @peer (@len is
 * the total of @iov).  @flags and @data reach the target's
 * remote_event.  Always completed by ops->complete(@cookie) once the
 * target executed it (delivery complete).  Returns 0, -EAGAIN, -EPIPE,
 * -EHOSTUNREACH, -EINVAL.
 */
int gba_eng_put(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		const struct iovec *iov, size_t count, uint64_t addr,
		uint64_t key, uint32_t flags, uint64_t data, uint64_t cookie);
int gba_eng_get(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		const struct iovec *iov, size_t count, uint64_t addr,
		uint64_t key, uint32_t flags, uint64_t cookie);

/*
 * gba_eng_atomic - @count elements of @elem_size bytes of atomic @op on
 * @datatype (front-end codes, see ops->atomic) at @addr under @key of
 * @peer.  @operand and @compare (NULL if unused) hold @count elements;
 * the old values are written to @result (NULL: not fetched) when the
 * operation completes (ops->complete(@cookie)).  The operands travel
 * inline: count * elem_size * (compare ? 2 : 1) must not exceed
 * GBA_ENG_INLINE - 16.  Returns 0, -EAGAIN, -EPIPE, -EHOSTUNREACH,
 * -EINVAL (too large, zero count or size).
 */
int gba_eng_atomic(struct gba_eng_ep *ep, struct gba_eng_peer *peer,
		   uint32_t op, uint32_t datatype, size_t elem_size,
		   size_t count, const void *operand, const void *compare,
		   void *result, uint64_t addr, uint64_t key, uint32_t flags,
		   uint64_t data, uint64_t cookie);

/* Largest @count gba_eng_atomic takes for @elem_size (and @compare). */
size_t gba_eng_atomic_max_count(size_t elem_size, int compare);

/*
 * gba_eng_progress - execute the messages and requests that arrived,
 * deliver completions, retry answers waiting for room in a peer's
 * queue, and (every few milliseconds while operations or answers are
 * outstanding) fail the operations of peers that died and drop the
 * answers waiting for their queues.  Returns the number of
 * queue entries handled (0: nothing arrived).  Hot path: when idle, one
 * load of the next slot; once the endpoint's peers live in more other
 * processes than there are online CPUs, one sched_yield every 16 idle
 * calls in a row, so that the peers it waits for get the CPU.
 */
int gba_eng_progress(struct gba_eng_ep *ep);

/*
 * gba_eng_poll - whether gba_eng_progress has work, looked at without the
 * caller's serialisation of @ep (loads only): 1 if something arrived or
 * operations or answers are outstanding (then call gba_eng_progress), 0
 * if not, after counting the call as an idle progress call (the same
 * yield as gba_eng_progress).  A hint: work that arrives concurrently is
 * seen by the next call.  Lets a front end poll an idle endpoint without
 * taking its lock.
 */
int gba_eng_poll(struct gba_eng_ep *ep);

/* gba_eng_busy - outstanding operations (sends, RMA, atomics, answers). */
size_t gba_eng_busy(const struct gba_eng_ep *ep);

/*
 * gba_eng_shared_gets - gets of @ep whose target shared the copy
 * (GBA_ENG_EP_SHARED_GET): @ep copied their tails itself.  A count
 * since gba_eng_ep_open, for statistics and tests.
 */
uint64_t gba_eng_shared_gets(const struct gba_eng_ep *ep);

/*
 * gba_eng_rx_copy - copy bytes [@offset, @offset + len of @iov) of
 * message @rx into @iov (@count entries), stopping at the end of the
 * message.  A large message is read from the sender's memory with
 * cross-memory attach, or with a plain copy when the sender is an
 * endpoint of this process.  Returns the number of bytes copied or a
 * negative errno (-EPIPE/-ESRCH sender gone, -EFAULT, -EPERM
 * cross-memory attach refused).
 */
ssize_t gba_eng_rx_copy(struct gba_eng_ep *ep, const struct gba_eng_rx *rx,
			const struct iovec *iov, size_t count, size_t offset);

/*
 * gba_eng_rx_hold - keep @rx beyond the recv callback (an unexpected
 * message): returns a heap copy (a payload in the queue included, in
 * one piece: the copy's payload is not NULL then) or NULL
 * (-ENOMEM).  The copy is finished with gba_eng_rx_done like the
 * original.
 */
struct gba_eng_rx *gba_eng_rx_hold(const struct gba_eng_rx *rx);

/*
 * gba_eng_rx_done - the front end is done with @rx: a large message's
 * sender is answered (its send completes with @status: 0, or a negative
 * errno to report to it), a held copy is freed.
 */
void gba_eng_rx_done(struct gba_eng_ep *ep, struct gba_eng_rx *rx,
		     int status);


/* Shared-memory regions ------------------------------------------------- */

/*
 * A region of memory its owner allocated so that peers of the same user on
 * the same host can map it and reach it with CPU loads, stores and atomics
 * (no queue, no target progress): an anonymous memory file kept open by
 * the owner, which peers map through /proc/<pid>/fd/<fd>.  A page after the
 * caller's bytes holds the region's cookie.  What a peer needs to attach
 * is (pid, fd, len, cookie).
 */
struct gba_eng_seg {
	void *addr;	/* start of the owner's mapping (page aligned) */
	size_t len;	/* the caller's bytes, a multiple of the page size */
	int fd;		/* the memory file, open while the region lives */
	uint32_t pid;	/* the owner */
	uint64_t cookie; /* no other region of the host carries it */
};

/*
 * gba_eng_seg_alloc - allocate a region of at least @len bytes (rounded up
 * to pages, zero-filled), at exactly @addr when it is not NULL (page
 * aligned; @len plus one page there must be free: a mapping in the way is
 * refused, never replaced).  Returns 0, or -EINVAL (NULL @seg, @len 0 or
 * too large, unaligned @addr), -EEXIST (@addr in use), or the errno of
 * memfd_create/posix_fallocate/mmap (-ENOMEM, -ENOSPC, -EMFILE, ...: the
 * pages are reserved before use, never a SIGBUS later); gba_last_error
 * says which.
 */
int gba_eng_seg_alloc(size_t len, void *addr, struct gba_eng_seg *seg);

/* gba_eng_seg_free - unmap and close a region; peers' mappings stay valid
 * until they detach (and their idle cache lets it go). */
void gba_eng_seg_free(struct gba_eng_seg *seg);

/*
 * gba_eng_seg_attach - the address in this process of the region process
 * @pid holds as @fd with @cookie (at least @len bytes), mapping it on first
 * use; later attaches of the same region reuse the mapping (a per-process
 * cache, thread-safe).  Every successful attach is paired with a
 * gba_eng_seg_detach.  @pid may be this process (a second mapping of its
 * own region).  Returns 0, or -EINVAL (bad arguments), -ENOENT (@fd is
 * not a region of @pid, or @pid is gone), -ESTALE (another region now has
 * that file number), -ERANGE (the region is shorter than @len), -EACCES/-EPERM
 * (another user; ptrace restrictions; a file whose size is not sealed, so
 * that it could shrink under the mapping), -ENOMEM, or the errno of
 * open/mmap.
 */
int gba_eng_seg_attach(uint32_t pid, int fd, size_t len, uint64_t cookie,
		       void **addr);

/* gba_eng_seg_detach - release an attach (@addr as it returned). */
void gba_eng_seg_detach(void *addr);

#define GBA_ENG_ATOMIC_ONE(type)                                               \
	do {                                                                   \
		type *d = dst, o = *(const type *)operand, old;                \
		switch (op) {                                                  \
		case GBA_ENG_AOP_ADD:                                          \
			old = __atomic_fetch_add(d, o, __ATOMIC_SEQ_CST);      \
			break;                                                 \
		case GBA_ENG_AOP_AND:                                          \
			old = __atomic_fetch_and(d, o, __ATOMIC_SEQ_CST);      \
			break;                                                 \
		case GBA_ENG_AOP_OR:                                           \
			old = __atomic_fetch_or(d, o, __ATOMIC_SEQ_CST);       \
			break;                                                 \
		case GBA_ENG_AOP_XOR:                                          \
			old = __atomic_fetch_xor(d, o, __ATOMIC_SEQ_CST);      \
			break;                                                 \
		case GBA_ENG_AOP_SWAP:                                         \
			old = __atomic_exchange_n(d, o, __ATOMIC_SEQ_CST);     \
			break;                                                 \
		default: /* GBA_ENG_AOP_CSWAP */                               \
			old = *(const type *)compare;                          \
			__atomic_compare_exchange_n(d, &old, o, 0,             \
						    __ATOMIC_SEQ_CST,          \
						    __ATOMIC_SEQ_CST);         \
			break;                                                 \
		}                                                              \
		if (result)                                                    \
			*(type *)result = old;                                 \
	} while (0)

/*
 * gba_eng_atomic_one - one element of the built-in executor (below), inline
 * for the hot path of direct atomics: @op (enum gba_eng_atomic_op) on the
 * @size-byte (4 or 8) integer at @dst, naturally aligned, with @operand
 * and @compare (CSWAP only, not NULL then), the old value into @result
 * (NULL: not fetched).  The caller has checked the arguments.
 */
static inline void gba_eng_atomic_one(uint32_t op, uint32_t size, void *dst,
				      const void *operand, const void *compare,
				      void *result)
{
	if (size == 4)
		GBA_ENG_ATOMIC_ONE(uint32_t);
	else
		GBA_ENG_ATOMIC_ONE(uint64_t);
}

/*
 * gba_eng_atomic_builtin - the engine's built-in executor, for memory this
 * process reaches directly (its own, or a mapped region): @count elements
 * of @size (4 or 8) bytes of @op (enum gba_eng_atomic_op) at @dst with
 * @operand and @compare (CSWAP only), the old values into @result (NULL:
 * not fetched), each element with one CPU atomic (sequentially
 * consistent).  Returns 0, or -EINVAL (unknown @op or @size, CSWAP without
 * @compare, misaligned @dst).
 */
int gba_eng_atomic_builtin(uint32_t op, uint32_t size, void *dst,
			   const void *operand, const void *compare,
			   void *result, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* GBA_ENG_H */
