/*
 * GBA core library: test-only hooks.  NOT part of the public API and not
 * installed.  Defined in test/core/gba_core_hooks.c and built only into
 * the core test programs (test/core), which link libgba's sources
 * statically; libgba.so does not have them.
 *
 * Starting a group near 2^32 (wrap tests):
 *
 *	gba_group_join(dev, &attr, &grp);       first member
 *	gba_emu_test_set_seq(grp, 0xfffffff0);  next barrier is 0xfffffff1
 *	... members joining afterwards start at RELEASE_SEQ (0xfffffff0);
 *	... members already joined: gba_test_set_local_seq(their_grp, ...).
 */
#ifndef GBA_EMU_TEST_H
#define GBA_EMU_TEST_H

#include <stdint.h>

#include <gba/gba.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Emulated device only: make @seq the last released sequence number of
 * @grp's group, as if barrier @seq had just completed: the switch's epoch
 * becomes seq + 1, RELEASE_SEQ and every member's release flag become
 * @seq, and this handle's local sequence becomes @seq.  Call while no
 * member is waiting.  Returns 0, -EINVAL, or -ENOTSUP (not emu).
 */
int gba_emu_test_set_seq(struct gba_group *grp, uint32_t seq);

/* Set the handle's local sequence number (the last one it arrived with). */
void gba_test_set_local_seq(struct gba_group *grp, uint32_t seq);

/* Hardware group index of @grp (GBA_GROUP_REG_BASE(index) is its window). */
unsigned gba_test_group_index(const struct gba_group *grp);

/*
 * Raw register access through the backend's ops at BAR offset @off: for
 * emu a store runs the emulated switch (CONTROL, ARRIVAL) exactly like a
 * store from a member would; stores to read-only registers are ignored.
 */
uint64_t gba_test_reg_read(struct gba_dev *dev, uint64_t off);
void gba_test_reg_write(struct gba_dev *dev, uint64_t off, uint64_t val);

#ifdef __cplusplus
}
#endif

#endif /* GBA_EMU_TEST_H */
