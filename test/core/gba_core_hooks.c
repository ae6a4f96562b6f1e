/*
 * Test-only hooks into the GBA core library (libgba/gba_emu_test.h).
 * Built only into the core test programs, which link the library's
 * sources statically (libgba/libgba_core.la); libgba.so has none of them.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "gba_emu.h"
#include "gba_emu_test.h"

int gba_emu_test_set_seq(struct gba_group *grp, uint32_t seq)
{
	struct gba_dev *dev;
	struct gba_emu_sw *sw;
	unsigned m;
	int ret;

	if (!grp || !grp->dev)
		return -EINVAL;
	dev = grp->dev;
	if (strcmp(dev->ops->name, "emu"))
		return -ENOTSUP;
	sw = &gba_emu(dev)->sw[grp->index];

	ret = dev->ops->lock(dev);
	if (ret)
		return ret;
	for (m = 0; m < GBA_MAX_MEMBERS; m++)
		atomic_store_explicit(&sw->member[m].last, seq, memory_order_relaxed);
	for (m = 0; m < grp->member_count; m++) {
		uint64_t iova = dev->ops->read64(
			dev, GBA_GROUP_REG_BASE(grp->index) +
				     GBA_RELEASE_ADDR(m));

		if (iova >= GBA_FLAG_OFFSET &&
		    iova < GBA_FLAG_OFFSET + GBA_FLAG_AREA_SIZE)
			__atomic_store_n((uint64_t *)(gba_emu(dev)->base +
						      iova),
					 (uint64_t)seq, __ATOMIC_RELAXED);
	}
	/* RELEASE_SEQ reads seq */
	atomic_store_explicit(&sw->epoch, seq + 1, memory_order_release);
	grp->seq = seq;
	dev->ops->unlock(dev);
	return 0;
}

void gba_test_set_local_seq(struct gba_group *grp, uint32_t seq)
{
	if (grp)
		grp->seq = seq;
}

unsigned gba_test_group_index(const struct gba_group *grp)
{
	return grp ? grp->index : 0;
}

uint64_t gba_test_reg_read(struct gba_dev *dev, uint64_t off)
{
	if (!dev || off >= GBA_BAR_SIZE || (off & 7))
		return 0;
	return dev->ops->read64(dev, off);
}

void gba_test_reg_write(struct gba_dev *dev, uint64_t off, uint64_t val)
{
	if (dev && off < GBA_BAR_SIZE && !(off & 7))
		dev->ops->write64(dev, off, val);
}
