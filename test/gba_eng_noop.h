/*
 * Engine callbacks for programs that only move bytes through the fabric
 * engine and want no front end (tests, benchmarks): a message is dropped
 * as it arrives (the engine hands its slot back), a completion is
 * ignored, and no memory is registered, so every RMA or atomic request
 * that reaches the endpoint is answered -ENOKEY.  The callbacks' shapes
 * and rules are gba/gba_eng.h's (struct gba_eng_ops).
 *
 * Use: struct gba_eng_ep_attr attr = {.ops = &gba_eng_noop_ops};
 * A program that counts arrivals defines its own recv and takes the
 * other two from here.
 */
#ifndef GBA_ENG_NOOP_H
#define GBA_ENG_NOOP_H

#include <errno.h>

#include <gba/gba_eng.h>

static inline void gba_eng_noop_recv(void *ctx, struct gba_eng_rx *rx)
{
	(void)ctx;
	(void)rx;
}

static inline void gba_eng_noop_complete(void *ctx, uint64_t cookie,
					 int status)
{
	(void)ctx;
	(void)cookie;
	(void)status;
}

/* No registered memory: every key is unknown (-ENOKEY). */
static inline int gba_eng_noop_mr_lookup(void *ctx, uint64_t key,
					 uint64_t addr, size_t len,
					 uint32_t access, void **ptr)
{
	(void)ctx;
	(void)key;
	(void)addr;
	(void)len;
	(void)access;
	(void)ptr;
	return -ENOKEY;
}

static const struct gba_eng_ops gba_eng_noop_ops
	__attribute__((unused)) = {
		.recv = gba_eng_noop_recv,
		.complete = gba_eng_noop_complete,
		.mr_lookup = gba_eng_noop_mr_lookup,
};

#endif /* GBA_ENG_NOOP_H */
