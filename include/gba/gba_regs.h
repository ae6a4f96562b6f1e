/*
 * GBA (Global Barrier Accelerator) hardware register ABI, version 1.
 *
 * Described in doc/design.md section 3 ("The hardware ABI"; installed as
 * $(docdir)/design.md).  All registers are little-endian and naturally
 * aligned; they are accessed with single 64-bit loads/stores, or 32-bit
 * ones where a register is marked (u32).  A device exposes one BAR holding
 * a global block at offset 0 and one 8 KiB window per barrier group.
 *
 * Two placements are deliberate:
 *
 *  1. CONTROL/STATUS live at group offsets 0x1800/0x1808, not 0x1000/0x1008:
 *     the release-address array starts at 0x0080 and holds 708 64-bit
 *     entries, so it ends at 0x0080 + 708 * 8 = 0x16A0, and 0x1000 would
 *     alias RELEASE_ADDR[496] and [497].
 *  2. ARRIVAL, the doorbell every member stores to, is at 0x0070, right
 *     after MEMBER_MASK.
 *
 * ARRIVED_MASK and ERROR_INFO make hung barriers diagnosable.
 *
 * The static assertions at the end of this file prove that the group window
 * has no overlapping registers and fits its 8 KiB stride.
 */
#ifndef GBA_REGS_H
#define GBA_REGS_H

#include <stdint.h>

/* ---- Identification and limits ------------------------------------------ */

#define GBA_ID_MAGIC		0x47424130ULL	/* "GBA0" */
#define GBA_ABI_VERSION		1ULL
#define GBA_MAX_GROUPS		32
#define GBA_MAX_MEMBERS		708
#define GBA_MASK_WORDS		12		/* 768-bit masks, 708 bits used */

/* ---- Global block (offsets from BAR base) --------------------------------- */

#define GBA_REG_ID		0x0000	/* RO: GBA_ID_MAGIC */
#define GBA_REG_VERSION		0x0008	/* RO: GBA_ABI_VERSION */
#define GBA_REG_NUM_GROUPS	0x0010	/* RO: 32 */
#define GBA_REG_MAX_MEMBERS	0x0018	/* RO: 708 */
#define GBA_REG_NETWORK_ADDR	0x0020	/* RO: network address of the switch */
#define GBA_GLOBAL_BLOCK_END	0x0028

/* ---- Group windows ------------------------------------------------------- */

#define GBA_GROUP_REG_OFFSET	0x10000
#define GBA_GROUP_REG_STRIDE	0x2000	/* 8 KiB per group */
#define GBA_GROUP_REG_BASE(g)	(GBA_GROUP_REG_OFFSET + (g) * GBA_GROUP_REG_STRIDE)
#define GBA_BAR_SIZE		GBA_GROUP_REG_BASE(GBA_MAX_GROUPS)	/* 0x50000 */

/* Offsets inside a group window. */
#define GBA_GROUP_ID		0x0000	/* RW (u32): group identifier */
#define GBA_MEMBER_COUNT	0x0004	/* RW (u32): members, 1..708 */
#define GBA_ARRIVAL_COUNT	0x0008	/* RO: arrivals in the current epoch */
#define GBA_MEMBER_MASK(w)	(0x0010 + (w) * 8)	/* RW: w in 0..11 */
#define GBA_ARRIVAL		0x0070	/* WO: doorbell (member_id << 32) | seq */
#define GBA_RELEASE_SEQ		0x0078	/* RO: last released sequence number */
#define GBA_RELEASE_ADDR(m)	(0x0080 + (m) * 8)	/* RW: m in 0..707, IOVA */
#define GBA_CONTROL		0x1800	/* RW: GBA_CTRL_* */
#define GBA_STATUS		0x1808	/* RO: GBA_STATUS_* */
#define GBA_ARRIVED_MASK(w)	(0x1810 + (w) * 8)	/* RO: w in 0..11 */
#define GBA_ERROR_INFO		0x1870	/* RO: GBA_ERROR_INFO_* encoding */
#define GBA_GROUP_WINDOW_END	0x1878

/* CONTROL bits */
#define GBA_CTRL_ENABLE		(1ULL << 0)
#define GBA_CTRL_RESET		(1ULL << 1)
#define GBA_CTRL_ARM		(1ULL << 2)

/* STATUS bits */
#define GBA_STATUS_READY	(1ULL << 0)
#define GBA_STATUS_ACTIVE	(1ULL << 1)
#define GBA_STATUS_COMPLETE	(1ULL << 2)
#define GBA_STATUS_ERROR	(1ULL << 3)

/* ARRIVAL doorbell value */
#define GBA_ARRIVAL_VALUE(member, seq) \
	(((uint64_t)(uint32_t)(member) << 32) | (uint64_t)(uint32_t)(seq))
#define GBA_ARRIVAL_MEMBER(v)	((uint32_t)((uint64_t)(v) >> 32))
#define GBA_ARRIVAL_SEQ(v)	((uint32_t)(v))

/*
 * ERROR_INFO encoding: bits 63..56 cause (GBA_ERR_*), bits 55..32 the
 * member id of the offending doorbell, bits 31..0 its sequence number.
 */
#define GBA_ERR_NONE		0	/* no error since RESET */
#define GBA_ERR_NOT_MEMBER	1	/* member id not in MEMBER_MASK */
#define GBA_ERR_BAD_SEQ		2	/* seq is not the current epoch */
#define GBA_ERR_NOT_ENABLED	3	/* doorbell while CONTROL.ENABLE clear */
#define GBA_ERR_PEER_LOST	4	/* a member's endpoint went away */

#define GBA_ERROR_INFO_VALUE(cause, member, seq)                     \
	(((uint64_t)(cause) << 56) |                                  \
	 (((uint64_t)(member) & 0xffffffULL) << 32) | (uint32_t)(seq))
#define GBA_ERROR_INFO_CAUSE(v)	((unsigned)((uint64_t)(v) >> 56))
#define GBA_ERROR_INFO_MEMBER(v) ((uint32_t)(((uint64_t)(v) >> 32) & 0xffffff))
#define GBA_ERROR_INFO_SEQ(v)	((uint32_t)(v))

/*
 * Release flag: the switch stores the released sequence number (zero
 * extended) into each member's flag.  A member waiting for seq is released
 * when (int32_t)(flag - seq) >= 0; this comparison is wrap-safe at 2^32,
 * unlike a plain flag >= seq.
 */
static inline int gba_seq_reached(uint32_t flag, uint32_t seq)
{
	return (int32_t)(flag - seq) >= 0;
}

/* ---- Compile-time checks: the map has no overlaps ------------------------- */

/* C11 _Static_assert; C++11 static_assert (uct_gba.h includes this file) */
#ifdef __cplusplus
#define GBA_REG_STATIC_ASSERT static_assert
#else
#define GBA_REG_STATIC_ASSERT _Static_assert
#endif

#define GBA_REG_END_BEFORE(a_off, a_len, b_off)                          \
	GBA_REG_STATIC_ASSERT((a_off) + (a_len) <= (b_off),               \
			      #a_off " overlaps " #b_off)

GBA_REG_END_BEFORE(GBA_REG_ID, 8, GBA_REG_VERSION);
GBA_REG_END_BEFORE(GBA_REG_VERSION, 8, GBA_REG_NUM_GROUPS);
GBA_REG_END_BEFORE(GBA_REG_NUM_GROUPS, 8, GBA_REG_MAX_MEMBERS);
GBA_REG_END_BEFORE(GBA_REG_MAX_MEMBERS, 8, GBA_REG_NETWORK_ADDR);
GBA_REG_END_BEFORE(GBA_REG_NETWORK_ADDR, 8, GBA_GLOBAL_BLOCK_END);
GBA_REG_END_BEFORE(GBA_GLOBAL_BLOCK_END, 0, GBA_GROUP_REG_OFFSET);

GBA_REG_END_BEFORE(GBA_GROUP_ID, 4, GBA_MEMBER_COUNT);
GBA_REG_END_BEFORE(GBA_MEMBER_COUNT, 4, GBA_ARRIVAL_COUNT);
GBA_REG_END_BEFORE(GBA_ARRIVAL_COUNT, 8, GBA_MEMBER_MASK(0));
GBA_REG_END_BEFORE(GBA_MEMBER_MASK(0), GBA_MASK_WORDS * 8, GBA_ARRIVAL);
GBA_REG_END_BEFORE(GBA_ARRIVAL, 8, GBA_RELEASE_SEQ);
GBA_REG_END_BEFORE(GBA_RELEASE_SEQ, 8, GBA_RELEASE_ADDR(0));
GBA_REG_END_BEFORE(GBA_RELEASE_ADDR(0), GBA_MAX_MEMBERS * 8, GBA_CONTROL);
GBA_REG_END_BEFORE(GBA_CONTROL, 8, GBA_STATUS);
GBA_REG_END_BEFORE(GBA_STATUS, 8, GBA_ARRIVED_MASK(0));
GBA_REG_END_BEFORE(GBA_ARRIVED_MASK(0), GBA_MASK_WORDS * 8, GBA_ERROR_INFO);
GBA_REG_END_BEFORE(GBA_ERROR_INFO, 8, GBA_GROUP_WINDOW_END);
GBA_REG_END_BEFORE(GBA_GROUP_WINDOW_END, 0, GBA_GROUP_REG_STRIDE);

GBA_REG_STATIC_ASSERT(GBA_MASK_WORDS * 64 >= GBA_MAX_MEMBERS,
		      "mask too small");
GBA_REG_STATIC_ASSERT(GBA_RELEASE_ADDR(GBA_MAX_MEMBERS) == 0x16A0,
		      "RELEASE_ADDR must end at 0x16A0");
GBA_REG_STATIC_ASSERT(GBA_BAR_SIZE == 0x50000, "BAR size");
GBA_REG_STATIC_ASSERT((GBA_ARRIVAL % 8) == 0 && (GBA_CONTROL % 8) == 0 &&
			      (GBA_ERROR_INFO % 8) == 0,
		      "64-bit registers are aligned");

#undef GBA_REG_END_BEFORE
#undef GBA_REG_STATIC_ASSERT

#endif /* GBA_REGS_H */
