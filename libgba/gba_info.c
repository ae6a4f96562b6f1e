/*
 * GBA core library: read-only inspection of a device's groups
 * (gba_dev_group_info, gba_group_info_absent, gba_group_absent), for
 * gba_stat(1) and the log lines of barriers that fail or time out.
 *
 * Nothing here stores to the device or takes the control-plane lock: the
 * registers are read through the backend's ops (the emulated device
 * derives its epoch registers from the switch state), the table with
 * plain loads.  The data path is untouched.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gba_backend.h"

/* Groups of this device: NUM_GROUPS, capped at what the ABI allows. */
static unsigned info_num_groups(struct gba_dev *dev)
{
	uint64_t n = dev->ops->read64(dev, GBA_REG_NUM_GROUPS);

	return n < GBA_MAX_GROUPS ? (unsigned)n : GBA_MAX_GROUPS;
}

/* Bytes kept for the end of a cut absent list, ", ... (708 absent)". */
#define GBA_INFO_TAIL 24

static int info_bit(const uint64_t *mask, unsigned m)
{
	return (mask[m / 64] >> (m % 64)) & 1;
}

/* The table's view of group @g (the image is untrusted: counts capped). */
static void info_book(struct gba_dev *dev, unsigned g,
		      struct gba_group_info *info)
{
	const struct gba_book_group *bg = &dev->book->group[g];
	unsigned m, n = info->member_count;

	info->table = 1;
	info->in_use = bg->state != GBA_BOOK_FREE;
	if (!info->in_use)
		return;
	info->key = bg->key;
	info->job = bg->job;
	info->attached = bg->attached;
	for (m = 0; m < n; m++) {
		uint64_t slot = atomic_load_explicit(&bg->slot[m],
						     memory_order_acquire);

		info->member[m].pid = slot ? GBA_SLOT_PID(slot) : 0;
		info->member[m].alive = slot && gba_proc_slot_alive(slot);
	}
}

int gba_dev_group_info(struct gba_dev *dev, unsigned index,
		       struct gba_group_info *info)
{
	const struct gba_ops *ops;
	uint64_t base;
	unsigned m, w, n;

	if (!dev || !info || index >= info_num_groups(dev))
		return -EINVAL;
	ops = dev->ops;
	base = GBA_GROUP_REG_BASE(index);
	memset(info, 0, sizeof(*info));
	info->index = index;
	info->group_id = ops->read32(dev, base + GBA_GROUP_ID);
	info->member_count = ops->read32(dev, base + GBA_MEMBER_COUNT);
	info->arrival_count = ops->read64(dev, base + GBA_ARRIVAL_COUNT);
	info->release_seq = ops->read64(dev, base + GBA_RELEASE_SEQ);
	info->control = ops->read64(dev, base + GBA_CONTROL);
	info->status = ops->read64(dev, base + GBA_STATUS);
	info->error_info = ops->read64(dev, base + GBA_ERROR_INFO);
	for (w = 0; w < GBA_MASK_WORDS; w++) {
		info->member_mask[w] =
			ops->read64(dev, base + GBA_MEMBER_MASK(w));
		info->arrived_mask[w] =
			ops->read64(dev, base + GBA_ARRIVED_MASK(w));
	}
	if (info->member_count > GBA_MAX_MEMBERS)
		info->member_count = GBA_MAX_MEMBERS;
	n = info->member_count;
	if (dev->book)
		info_book(dev, index, info);
	else
		info->in_use = !!(info->control & GBA_CTRL_ENABLE);
	for (m = 0; m < n; m++)
		info->member[m].arrived = info_bit(info->arrived_mask, m);
	if (info->arrival_count && info->arrival_count < n)
		for (m = 0; m < n; m++)
			if (info_bit(info->member_mask, m) &&
			    !info->member[m].arrived)
				info->absent++;
	return 0;
}

int gba_group_info_absent(const struct gba_group_info *info, char *buf,
			  size_t len)
{
	size_t off = 0;
	unsigned m, n;
	char one[64];
	int k;

	if (!info || !buf || !len)
		return -EINVAL;
	snprintf(buf, len, "none");
	if (!info->absent)
		return 0;
	n = info->member_count < GBA_MAX_MEMBERS ? info->member_count
						 : GBA_MAX_MEMBERS;
	buf[0] = '\0';
	for (m = 0; m < n; m++) {
		const struct gba_member_info *mi = &info->member[m];

		if (!info_bit(info->member_mask, m) || mi->arrived)
			continue;
		if (!info->table)
			k = snprintf(one, sizeof(one), "%smember %u",
				     off ? ", " : "", m);
		else if (!mi->pid)
			k = snprintf(one, sizeof(one),
				     "%smember %u (not attached)",
				     off ? ", " : "", m);
		else
			k = snprintf(one, sizeof(one), "%smember %u (pid %d%s)",
				     off ? ", " : "", m, (int)mi->pid,
				     mi->alive ? "" : ", dead");
		/* room for this one and a closing ", ... (N absent)" */
		if (off + (size_t)k + GBA_INFO_TAIL > len) {
			snprintf(buf + off, len - off, "%s... (%u absent)",
				 off ? ", " : "", info->absent);
			break;
		}
		memcpy(buf + off, one, (size_t)k + 1);
		off += (size_t)k;
	}
	return (int)info->absent;
}

int gba_group_absent(const struct gba_group *grp, char *buf, size_t len)
{
	struct gba_group_info *info;
	int ret;

	if (!grp || !grp->dev || !buf || !len)
		return -EINVAL;
	info = malloc(sizeof(*info));
	if (!info)
		return -ENOMEM;
	ret = gba_dev_group_info(grp->dev, grp->index, info);
	if (!ret)
		ret = gba_group_info_absent(info, buf, len);
	free(info);
	return ret;
}
