/*
 * Fuzz harness: the fabric engine's receive path (libgba/gba_eng_ep.c
 * gba_eng_progress, gba_eng_xfer.c gba_eng_execute and gba_eng_resp,
 * gba_eng_rx_copy/hold/done) fed with slots of any contents, published
 * into a real endpoint's receive queue the way a sender does
 * (gba_eng_ring_claim_n, gba_eng_ring_publish).
 *
 * An input is a sequence of steps: publish a slot (its header after the
 * sequence word and its payload, any bytes; a message that claims several
 * slots gets them), publish an answer naming one of the endpoint's live
 * operations, start a real get or atomic at the endpoint itself, or run
 * progress.  The endpoint's registered region is a buffer of this
 * harness.  Senders are this process or a process that cannot exist; a
 * slot that makes the target copy to or from its sender's memory with
 * cross-memory attach (X_LARGE) always names the latter, so that the
 * fuzzer never writes into a real process.  The endpoint is opened anew
 * for every input.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "gba_eng_priv.h"

#define FUZZ_RX_SLOTS 16
#define FUZZ_MAX_OPS 8
#define FUZZ_REGION 65536
#define FUZZ_REGION_KEY 1
#define FUZZ_NO_PID 0x7ffffff0u

static uint8_t region[FUZZ_REGION] __attribute__((aligned(64)));
static uint8_t sink[GBA_ENG_EAGER_MAX + 64];
static uint64_t fetched[8];
static unsigned nrecv;

static void fuzz_recv(void *ctx, struct gba_eng_rx *rx)
{
	struct gba_eng_ep *ep = ctx;
	struct iovec iov = {sink, sizeof(sink)};
	struct gba_eng_rx *held;

	gba_eng_rx_copy(ep, rx, &iov, 1, 0);
	gba_eng_rx_copy(ep, rx, &iov, 1, nrecv++ % 4096);
	if (!(nrecv & 1) && (held = gba_eng_rx_hold(rx))) {
		gba_eng_rx_copy(ep, held, &iov, 1, 0);
		gba_eng_rx_done(ep, held, 0);
		return;
	}
	gba_eng_rx_done(ep, rx, 0);
}

static void fuzz_complete(void *ctx, uint64_t cookie, int status)
{
}

static int fuzz_mr_lookup(void *ctx, uint64_t key, uint64_t addr, size_t len,
			  uint32_t access, void **ptr)
{
	if (key != FUZZ_REGION_KEY)
		return -ENOKEY;
	if (gba_eng_range_check((uintptr_t)region, sizeof(region), addr, len))
		return -ERANGE;
	*ptr = (void *)(uintptr_t)addr;
	return 0;
}

static const struct gba_eng_ops fuzz_ops = {
	.recv = fuzz_recv,
	.complete = fuzz_complete,
	.mr_lookup = fuzz_mr_lookup,
};

/* Publish a slot of any contents; the header says how many it takes. */
static void publish_slot(struct gba_eng_ep *ep, struct fuzz_in *in,
			 uint8_t choice)
{
	struct gba_eng_hdr hdr;
	struct gba_eng_slot *slot;
	uint32_t n = 1, i;
	uint16_t plen;
	uint64_t pos;

	fuzz_take(in, (uint8_t *)&hdr + sizeof(hdr.seq),
		  sizeof(hdr) - sizeof(hdr.seq));
	plen = fuzz_u16(in) % (GBA_ENG_INLINE + 1);
	if ((hdr.xflags & GBA_ENG_X_SLOTS) && hdr.iov_count >= 2 &&
	    hdr.iov_count <= GBA_ENG_MAX_IOV)
		n = hdr.iov_count;
	hdr.src_pid = (choice & 0x10) && !(hdr.xflags & GBA_ENG_X_LARGE)
			      ? (uint32_t)getpid()
			      : FUZZ_NO_PID;
	if (choice & 0x20)
		hdr.src_ep_id = ep->addr.ep_id;
	if (choice & 0x40)
		hdr.tag = FUZZ_REGION_KEY;
	if (choice & 0x80)
		hdr.addr = (uintptr_t)region + hdr.addr % sizeof(region);

	slot = gba_eng_ring_claim_n(ep->rx, FUZZ_RX_SLOTS, n, &pos);
	if (!slot) {
		gba_eng_progress(ep);
		slot = gba_eng_ring_claim_n(ep->rx, FUZZ_RX_SLOTS, n, &pos);
		if (!slot)
			return;
	}
	memcpy((uint8_t *)&slot->hdr + sizeof(hdr.seq),
	       (uint8_t *)&hdr + sizeof(hdr.seq),
	       sizeof(hdr) - sizeof(hdr.seq));
	fuzz_take(in, slot->payload, plen);
	for (i = 1; i < n; i++)
		memset((uint8_t *)&ep->rx->slots[(pos + i) & ep->rx_mask] +
			       GBA_ENG_CONT_OFF,
		       (int)i, GBA_ENG_EAGER_SLOT);
	gba_eng_ring_publish(slot, pos);
}

/* An answer naming a live operation (the fuzzer cannot guess its id). */
static void publish_answer(struct gba_eng_ep *ep, struct fuzz_in *in,
			   uint8_t choice)
{
	struct gba_eng_op *op = &ep->optab[choice % FUZZ_MAX_OPS];
	struct gba_eng_slot *slot;
	uint64_t pos;

	slot = gba_eng_ring_claim(ep->rx, FUZZ_RX_SLOTS, &pos);
	if (!slot)
		return;
	memset((uint8_t *)&slot->hdr + sizeof(slot->hdr.seq), 0,
	       sizeof(slot->hdr) - sizeof(slot->hdr.seq));
	slot->hdr.type = GBA_ENG_T_RESP;
	slot->hdr.src_pid = (choice & 0x10) ? (uint32_t)getpid() : FUZZ_NO_PID;
	slot->hdr.src_ep_id = ep->addr.ep_id;
	slot->hdr.op = gba_eng_op_id(ep, op);
	slot->hdr.status = (int32_t)fuzz_u32(in);
	slot->hdr.len = fuzz_u64(in);
	if (choice & 0x20)
		slot->hdr.len %= GBA_ENG_INLINE + 1;
	fuzz_take(in, slot->payload, fuzz_u16(in) % (GBA_ENG_INLINE + 1));
	gba_eng_ring_publish(slot, pos);
}

/* A real get or atomic of this endpoint at itself. */
static void start_op(struct gba_eng_ep *ep, struct fuzz_in *in, uint8_t choice)
{
	struct gba_eng_peer *self;
	uint64_t addr = (uintptr_t)region + fuzz_u16(in) % 4096 * 8;
	uint64_t operand[2] = {fuzz_u64(in), fuzz_u64(in)};
	struct iovec iov = {sink, 1 + fuzz_u16(in) % GBA_ENG_INLINE};

	if (gba_eng_peer_get(ep, &ep->addr, &self))
		return;
	if (choice & 0x10)
		gba_eng_get(ep, self, &iov, 1, addr, FUZZ_REGION_KEY, 0, 0);
	else
		gba_eng_atomic(ep, self, GBA_ENG_AOP_CSWAP, 8, 8, 1, operand,
			       operand + 1, fetched, addr, FUZZ_REGION_KEY, 0,
			       0, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gba_eng_ep_attr attr = {
		.rx_slots = FUZZ_RX_SLOTS,
		.max_ops = FUZZ_MAX_OPS,
		.eager_max = GBA_ENG_EAGER_MAX,
		.ops = &fuzz_ops,
	};
	struct fuzz_in in = {data, size};
	struct gba_eng_ep *ep;
	uint8_t choice;
	int i;

	if (gba_eng_ep_open(&attr, &ep)) {
		fprintf(stderr, "gba_eng_ep_open failed\n");
		abort();
	}
	ep->ctx = ep; /* the endpoint is the callbacks' context */
	while (in.size) {
		choice = fuzz_u8(&in);
		switch (choice & 3) {
		case 0:
			publish_slot(ep, &in, choice);
			break;
		case 1:
			publish_answer(ep, &in, choice);
			break;
		case 2:
			start_op(ep, &in, choice);
			break;
		case 3:
			gba_eng_progress(ep);
			break;
		}
	}
	for (i = 0; i < 64 && gba_eng_progress(ep); i++)
		;
	gba_eng_ep_close(ep);
	return 0;
}
