/*
 * GBA core library: the fabric engine's TCP frames (doc/design.md
 * section 9, "The fabric engine between hosts").  Private to
 * gba_eng_net.c.
 *
 * A connection carries a byte stream of frames: a 64-byte header, then
 * hdr.len payload bytes.  Fields are in the byte order of the hosts
 * (little-endian on every platform the project builds for: checked at
 * compile time).  The connecting side first sends T_HELLO with its own
 * address and the address it means to reach; the accepting side checks
 * the latter is its endpoint and closes the connection otherwise.
 * Or, on a connection of its own, T_WHOIS: the caller names a service
 * (tag) of its job (data), and the accepting endpoint, if it holds that
 * service for that job, answers T_RESP with its struct gba_addr (status
 * 0), else T_RESP with status -ENOENT; then it closes the connection
 * (gba_eng_service_lookup, fabtests' node/service mode across hosts).
 */
#ifndef GBA_ENG_WIRE_H
#define GBA_ENG_WIRE_H

#include <stdint.h>

#include <gba/gba_addr.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the engine's TCP frames are little-endian"
#endif

#define GBA_NET_MAGIC 0x4e414247u /* "GBAN" */

/* Frame types. */
enum gba_net_type {
	GBA_NET_T_HELLO = 1, /* payload: the sender's, then the target's
				struct gba_addr */
	GBA_NET_T_MSG,	     /* payload: the message */
	GBA_NET_T_PUT,	     /* payload: the bytes to write at addr */
	GBA_NET_T_GET,	     /* no payload: rlen bytes at addr wanted */
	GBA_NET_T_ATOMIC,    /* payload: struct gba_eng_atomic_req +
				operands (+ compare values) */
	GBA_NET_T_RESP,	     /* answer to op: status, payload: the bytes
				read or the old values */
	GBA_NET_T_WHOIS,     /* no payload: tag the service, data the
				caller's job */
};

/* hdr.xflags */
#define GBA_NET_X_FETCH 1u /* atomic: answer with the old values */
#define GBA_NET_X_CMP 2u   /* atomic: compare values follow */

struct gba_net_hdr {
	uint32_t magic; /* GBA_NET_MAGIC */
	uint8_t type;	/* enum gba_net_type */
	uint8_t pad0;
	uint16_t xflags; /* GBA_NET_X_* */
	uint32_t flags;	 /* front end's flags, passed through */
	uint32_t op;	 /* initiator's operation (RMA, atomic, RESP) */
	int32_t status;	 /* T_RESP: 0 or -errno */
	uint32_t pad1;
	uint64_t len;  /* payload bytes after the header */
	uint64_t tag;  /* T_MSG: tag; RMA/atomic: key */
	uint64_t data; /* immediate data */
	uint64_t addr; /* RMA/atomic: remote address */
	uint64_t rlen; /* T_GET: bytes to read; T_ATOMIC: operand bytes */
};

_Static_assert(sizeof(struct gba_net_hdr) == 64, "frame header size");

#endif /* GBA_ENG_WIRE_H */
