/*
 * GBA core library: the emulated device (internal).
 *
 * gba_emu.c manages the shared-memory image and provides the register
 * ops; gba_emu_switch.c is the software switch behind the registers.
 */
#ifndef GBA_EMU_H
#define GBA_EMU_H

#include "gba_backend.h"

struct gba_emu {
	uint8_t *base;		/* the whole image, IOVA == offset */
	size_t size;
	struct gba_emu_sw *sw;	/* GBA_MAX_GROUPS entries */
};

static inline struct gba_emu *gba_emu(struct gba_dev *dev)
{
	return dev->priv;
}

/* Reset group @g's registers and switch state (CONTROL.RESET). */
void gba_emu_sw_reset(struct gba_emu *emu, volatile uint64_t *regs,
		      struct gba_emu_sw *sw);
/* A store of @val to group @g's CONTROL register. */
void gba_emu_sw_control(struct gba_dev *dev, unsigned g, uint64_t val);
/* A store of @val to group @g's ARRIVAL register: the switch logic. */
void gba_emu_sw_arrival(struct gba_dev *dev, unsigned g, uint64_t val);
/*
 * Value of the epoch register at offset @r of group @g's window:
 * ARRIVAL_COUNT, RELEASE_SEQ or ARRIVED_MASK(w), derived from the switch
 * state (they are not stored in the image).
 */
uint64_t gba_emu_sw_read(struct gba_dev *dev, unsigned g, uint64_t r);
/* True if offset @r of a group window is one gba_emu_sw_read derives. */
static inline int gba_emu_sw_derived(uint64_t r)
{
	return r == GBA_ARRIVAL_COUNT || r == GBA_RELEASE_SEQ ||
	       (r >= GBA_ARRIVED_MASK(0) &&
		r < GBA_ARRIVED_MASK(GBA_MASK_WORDS));
}
/* Record an error detected by a host (dead peer) in ERROR_INFO. */
void gba_emu_sw_report_error(struct gba_dev *dev, unsigned g, uint64_t info);

#endif /* GBA_EMU_H */
