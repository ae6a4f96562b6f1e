/*
 * The fabric engine's receive path against slots another process wrote
 * (gba(7), "untrusted shared memory"): a request or answer whose header
 * does not describe bytes of its slot is dropped with a log line (an
 * awaited answer is -EPROTO), never executed past the slot; an answer
 * from another process than the operation's target is ignored; the
 * hand-back does not take the queue's size from the queue.  Each test
 * publishes slots into a real endpoint's queue as a sender does
 * (gba_eng_ring_claim, gba_eng_ring_publish) and runs gba_eng_progress.
 */
#include <gba/gba_eng.h>

#include "gba_core_util.h"
#include "gba_eng_priv.h"

TestSuite(slots, .timeout = 30);

#define NSLOTS 16
#define KEY 7

static uint8_t region[3 * GBA_ENG_SLOT_SIZE] __attribute__((aligned(64)));
static unsigned nrecv, ncomplete;
static int last_status;

static void t_recv(void *ctx, struct gba_eng_rx *rx)
{
	nrecv++;
	gba_eng_rx_done(ctx, rx, 0);
}

static void t_complete(void *ctx, uint64_t cookie, int status)
{
	ncomplete++;
	last_status = status;
}

static int t_mr_lookup(void *ctx, uint64_t key, uint64_t addr, size_t len,
		       uint32_t access, void **ptr)
{
	if (key != KEY)
		return -ENOKEY;
	if (gba_eng_range_check((uintptr_t)region, sizeof(region), addr, len))
		return -ERANGE;
	*ptr = (void *)(uintptr_t)addr;
	return 0;
}

static const struct gba_eng_ops t_ops = {
	.recv = t_recv,
	.complete = t_complete,
	.mr_lookup = t_mr_lookup,
};

static struct gba_eng_ep *open_ep(void)
{
	struct gba_eng_ep_attr attr = {
		.rx_slots = NSLOTS,
		.ops = &t_ops,
	};
	struct gba_eng_ep *ep;

	cr_assert_eq(gba_eng_ep_open(&attr, &ep), 0);
	ep->ctx = ep;
	return ep;
}

/* Claim the next slot of @ep's queue, from @ep itself, header cleared. */
static struct gba_eng_slot *claim(struct gba_eng_ep *ep, uint8_t type,
				  uint64_t *pos)
{
	struct gba_eng_slot *slot = gba_eng_ring_claim(ep->rx, NSLOTS, pos);

	cr_assert_not_null(slot);
	memset((uint8_t *)&slot->hdr + sizeof(slot->hdr.seq), 0,
	       sizeof(slot->hdr) - sizeof(slot->hdr.seq));
	slot->hdr.type = type;
	slot->hdr.src_pid = ep->addr.pid;
	slot->hdr.src_ep_id = ep->addr.ep_id;
	return slot;
}

/* The slot after @slot in the queue: where reads past @slot land. */
static uint8_t *next_slot(struct gba_eng_ep *ep, uint64_t pos)
{
	return (uint8_t *)&ep->rx->slots[(pos + 1) & (NSLOTS - 1)];
}

static void progress_all(struct gba_eng_ep *ep)
{
	int i;

	for (i = 0; i < 16; i++)
		gba_eng_progress(ep);
}

/* An inline put longer than its slot copies nothing past the slot. */
Test(slots, put_inline_beyond_slot)
{
	struct gba_eng_ep *ep = open_ep();
	struct gba_eng_slot *slot;
	uint64_t pos;

	memset(region, 0, sizeof(region));
	slot = claim(ep, GBA_ENG_T_PUT, &pos);
	slot->hdr.tag = KEY;
	slot->hdr.addr = (uintptr_t)region;
	slot->hdr.len = 2 * GBA_ENG_SLOT_SIZE;
	memset(slot->payload, 0x11, GBA_ENG_INLINE);
	memset(next_slot(ep, pos) + 8, 0xab, GBA_ENG_SLOT_SIZE - 8);
	gba_eng_ring_publish(slot, pos);
	progress_all(ep);
	cr_expect_eq(region[0], 0, "the put was executed");
	cr_expect_eq(region[GBA_ENG_INLINE + 100], 0,
		     "bytes of the next slot were put");
	gba_eng_ep_close(ep);
}

/* An inline get longer than a slot is not answered with it (the answer
 * was copied into the initiator's queue past the slot). */
Test(slots, get_inline_beyond_slot)
{
	struct gba_eng_ep *ep = open_ep();
	struct gba_eng_slot *slot;
	uint64_t pos;

	slot = claim(ep, GBA_ENG_T_GET, &pos);
	slot->hdr.tag = KEY;
	slot->hdr.addr = (uintptr_t)region;
	slot->hdr.len = sizeof(region);
	gba_eng_ring_publish(slot, pos);
	progress_all(ep);
	/* the answer (an error) came back to this queue: the next free
	 * slot is still whole */
	slot = claim(ep, GBA_ENG_T_MSG, &pos);
	gba_eng_ring_publish(slot, pos);
	progress_all(ep);
	cr_expect_eq(nrecv, 1);
	gba_eng_ep_close(ep);
}

/* A large message with more iov entries than the engine's is dropped
 * (they were copied into the receiver's struct gba_eng_rx on its stack). */
Test(slots, large_message_too_many_iovs)
{
	struct gba_eng_ep *ep = open_ep();
	struct gba_eng_slot *slot;
	uint64_t pos;

	slot = claim(ep, GBA_ENG_T_MSG, &pos);
	slot->hdr.xflags = GBA_ENG_X_LARGE | GBA_ENG_X_NOANS;
	slot->hdr.iov_count = 200;
	slot->hdr.len = 200;
	memset(slot->payload, 0x5a, GBA_ENG_INLINE);
	gba_eng_ring_publish(slot, pos);
	progress_all(ep);
	cr_expect_eq(nrecv, 0, "a message of %u iovs was delivered", 200);
	gba_eng_ep_close(ep);
}

/* An inline message longer than its slot is dropped (the receiver read
 * its payload past the slot). */
Test(slots, inline_message_beyond_slot)
{
	struct gba_eng_ep *ep = open_ep();
	struct gba_eng_slot *slot;
	uint64_t pos;

	slot = claim(ep, GBA_ENG_T_MSG, &pos);
	slot->hdr.xflags = GBA_ENG_X_NOANS;
	slot->hdr.len = 1 << 20;
	gba_eng_ring_publish(slot, pos);
	progress_all(ep);
	cr_expect_eq(nrecv, 0);
	gba_eng_ep_close(ep);
}

/* An atomic whose compare operands lie past the slot is not executed. */
Test(slots, atomic_operands_beyond_slot)
{
	struct gba_eng_ep *ep = open_ep();
	struct gba_eng_atomic_req *req;
	struct gba_eng_slot *slot;
	uint32_t count = (GBA_ENG_INLINE - 16) / 8;
	uint64_t pos, *ops;
	uint32_t i;

	memset(region, 0, sizeof(region));
	slot = claim(ep, GBA_ENG_T_ATOMIC, &pos);
	slot->hdr.xflags = GBA_ENG_X_CMP;
	slot->hdr.tag = KEY;
	slot->hdr.addr = (uintptr_t)region;
	slot->hdr.len = (uint64_t)count * 8;
	req = (void *)slot->payload;
	req->op = GBA_ENG_AOP_CSWAP;
	req->datatype = 8;
	req->elem_size = 8;
	req->count = count;
	ops = (uint64_t *)req->operands;
	for (i = 0; i < count; i++)
		ops[i] = 0x1111111111111111ULL;
	/* the compare values would be the next slot's bytes: zeros, as the
	 * region holds */
	memset(next_slot(ep, pos) + 8, 0, GBA_ENG_SLOT_SIZE - 8);
	gba_eng_ring_publish(slot, pos);
	progress_all(ep);
	/* (element 0's compare value would be the next slot's sequence) */
	cr_expect_eq(((uint64_t *)region)[1], 0, "the atomic was executed");
	gba_eng_ep_close(ep);
}

/* Start a get of 8 bytes at @ep itself: its operation's wire id. */
static uint32_t start_get(struct gba_eng_ep *ep, uint64_t *buf)
{
	struct iovec iov = {buf, 8};
	struct gba_eng_peer *self;

	cr_assert_eq(gba_eng_peer_get(ep, &ep->addr, &self), 0);
	cr_assert_eq(
		gba_eng_get(ep, self, &iov, 1, (uintptr_t)region, KEY, 0, 1),
		0);
	return gba_eng_op_id(ep, &ep->optab[0]);
}

/* Publish an answer to operation @op from @pid (status, length). */
static void answer(struct gba_eng_ep *ep, uint32_t op, uint32_t pid,
		   int32_t status, uint64_t len)
{
	struct gba_eng_slot *slot;
	uint64_t pos;

	slot = claim(ep, GBA_ENG_T_RESP, &pos);
	slot->hdr.src_pid = pid;
	slot->hdr.op = op;
	slot->hdr.status = status;
	slot->hdr.len = len;
	memset(slot->payload, 0x77, 8);
	gba_eng_ring_publish(slot, pos);
}

/* Only the target of an operation finishes it. */
Test(slots, answer_from_another_process)
{
	struct gba_eng_ep *ep = open_ep();
	uint64_t buf = 0;
	uint32_t op;

	*(uint64_t *)region = 0x1234;
	op = start_get(ep, &buf);
	/* a forged answer, published before the request is executed */
	answer(ep, op, ep->addr.pid + 1, -EIO, 0);
	progress_all(ep);
	cr_expect_eq(ncomplete, 1);
	cr_expect_eq(last_status, 0, "finished by another process: %d",
		     last_status);
	cr_expect_eq(buf, 0x1234);
	gba_eng_ep_close(ep);
}

/* An answer's status is 0 or a negative errno, its length inside its
 * slot: otherwise the operation fails with -EPROTO. */
Test(slots, answer_status_not_errno)
{
	struct gba_eng_ep *ep = open_ep();
	uint64_t buf = 0;
	uint32_t op;

	op = start_get(ep, &buf);
	answer(ep, op, ep->addr.pid, 5, 8);
	progress_all(ep);
	cr_expect_eq(ncomplete, 1);
	cr_expect_eq(last_status, -EPROTO, "status %d", last_status);
	gba_eng_ep_close(ep);
}

/* The consumer hands slots back with its own queue size, not the one in
 * the queue's header (which senders could rewrite). */
Test(slots, hand_back_ignores_header_size)
{
	struct gba_eng_ep *ep = open_ep();
	struct gba_eng_slot *slot;
	uint64_t pos;

	ep->rx->nslots = 1u << 20;
	slot = claim(ep, GBA_ENG_T_MSG, &pos);
	slot->hdr.xflags = GBA_ENG_X_NOANS;
	gba_eng_ring_publish(slot, pos);
	progress_all(ep);
	cr_expect_eq(atomic_load(&slot->hdr.seq), pos + NSLOTS);
	ep->rx->nslots = NSLOTS;
	gba_eng_ep_close(ep);
}

/* A sender claims slots with the queue size it checked when it mapped the
 * queue, not the one in the queue's header, which the receiver (or any
 * process of the user) can rewrite: a full queue is -EAGAIN, never a
 * claim past the mapping. */
Test(slots, sender_ignores_header_size)
{
	struct gba_eng_ep *a = open_ep(), *b = open_ep();
	struct gba_eng_peer *to_b;
	char byte = 1;
	struct iovec iov = {&byte, 1};
	int i, ret = 0;

	cr_assert_eq(gba_eng_peer_get(a, &b->addr, &to_b), 0);
	b->rx->nslots = 1u << 20;
	for (i = 0; i <= NSLOTS; i++) {
		ret = gba_eng_send(a, to_b, &iov, 1, 0, 0, 0, 0);
		if (ret < 0)
			break;
	}
	cr_expect_eq(i, NSLOTS, "%d messages into a queue of %d", i, NSLOTS);
	cr_expect_eq(ret, -EAGAIN);
	b->rx->nslots = NSLOTS;
	gba_eng_ep_close(a);
	gba_eng_ep_close(b);
}

/* A sequence word ahead of the tail (which no producer writes) makes the
 * queue full for a sender, instead of a claim retried forever. */
Test(slots, sender_sequence_ahead_of_tail)
{
	struct gba_eng_ep *a = open_ep(), *b = open_ep();
	struct gba_eng_peer *to_b;
	char byte = 1;
	struct iovec iov = {&byte, 1};

	cr_assert_eq(gba_eng_peer_get(a, &b->addr, &to_b), 0);
	atomic_store(&b->rx->slots[0].hdr.seq, 1000);
	cr_expect_eq(gba_eng_send(a, to_b, &iov, 1, 0, 0, 0, 0), -EAGAIN);
	atomic_store(&b->rx->slots[0].hdr.seq, 0);
	cr_expect_eq(gba_eng_send(a, to_b, &iov, 1, 0, 0, 0, 0), 1);
	gba_eng_ep_close(a);
	gba_eng_ep_close(b);
}

/* The slots' 32-bit sequence words wrap with the queue's 64-bit positions:
 * a queue whose positions cross 2^32 keeps taking and delivering. */
Test(slots, sequence_wraps_at_2_32)
{
	struct gba_eng_ep *a = open_ep(), *b = open_ep();
	struct gba_eng_peer *to_b;
	uint64_t start = (1ull << 32) - 5, p;
	char byte = 1;
	struct iovec iov = {&byte, 1};
	int i;

	for (p = start; p < start + NSLOTS; p++)
		atomic_store(&b->rx->slots[p & (NSLOTS - 1)].hdr.seq,
			     (uint32_t)p);
	atomic_store(&b->rx->tail, start);
	b->head = start;
	cr_assert_eq(gba_eng_peer_get(a, &b->addr, &to_b), 0);
	nrecv = 0;
	for (i = 0; i < 3 * NSLOTS; i++) {
		cr_assert_eq(gba_eng_send(a, to_b, &iov, 1, 0, 0, 0, 0), 1,
			     "message %d", i);
		progress_all(b);
	}
	cr_expect_eq(nrecv, 3 * NSLOTS);
	cr_expect_eq(b->head, start + 3 * NSLOTS);
	gba_eng_ep_close(a);
	gba_eng_ep_close(b);
}
