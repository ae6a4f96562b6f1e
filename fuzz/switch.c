/*
 * Fuzz harness: the emulated device (libgba/gba_emu.c, gba_emu_switch.c)
 * and the device layer reading its image (gba_group.c, gba_barrier.c).
 *
 * The input is a sequence of operations on one private emulated device:
 * 64- and 32-bit register stores and loads of any value at any offset,
 * doorbells, stores of any value anywhere in the image's flag area,
 * control-plane table and switch state (what another process of the user
 * can write), and a join/arrive/test/diag/leave of a small group.  The
 * image is restored to its power-on state after each input.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "gba_emu.h"

static struct gba_dev *dev;
static uint8_t *pristine;
static char image[64];

static void fuzz_switch_fini(void)
{
	gba_dev_close(dev);
	shm_unlink(image);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char name[80];

	snprintf(image, sizeof(image), "/gba-fuzz-switch-%d", (int)getpid());
	snprintf(name, sizeof(name), "emu:%s", image);
	if (gba_dev_open(name, &dev)) {
		fprintf(stderr, "cannot open the emulated device %s\n", name);
		exit(1);
	}
	pristine = malloc(gba_emu(dev)->size);
	if (!pristine)
		exit(1);
	memcpy(pristine, gba_emu(dev)->base, gba_emu(dev)->size);
	atexit(fuzz_switch_fini);
	return 0;
}

/* A store of @val at @off of the image, outside the BAR: a peer's write. */
static void image_store(uint64_t off, uint64_t val)
{
	struct gba_emu *emu = gba_emu(dev);

	off = GBA_FLAG_OFFSET + off % (emu->size - GBA_FLAG_OFFSET - 7);
	memcpy(emu->base + off, &val, sizeof(val));
}

static void group_round(uint64_t key, uint32_t val)
{
	struct gba_group_attr attr = {
		.key = key ? key : 1,
		.member_count = 1 + (val & 3),
	};
	struct gba_group_diag diag;
	struct gba_group *grp;
	uint32_t seq;

	attr.member_id = (val >> 2) % attr.member_count;
	if (gba_group_join(dev, &attr, &grp))
		return;
	seq = gba_group_arrive(grp);
	gba_group_test(grp, seq);
	gba_group_should_yield(grp, seq);
	gba_group_diag(grp, &diag);
	if (attr.member_count == 1)
		gba_group_wait(grp, seq, 0);
	gba_group_leave(grp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	volatile uint64_t sink = 0;

	while (in.size) {
		uint8_t kind = fuzz_u8(&in);
		uint64_t off = fuzz_u64(&in);
		uint64_t val = fuzz_u64(&in);

		switch (kind % 8) {
		case 0:
			dev->ops->write64(dev, off, val);
			break;
		case 1:
			dev->ops->write32(dev, off, (uint32_t)val);
			break;
		case 2:
			sink += dev->ops->read64(dev, off);
			break;
		case 3:
			sink += dev->ops->read32(dev, off);
			break;
		case 4:
			dev->ops->doorbell(dev, off % GBA_MAX_GROUPS, val);
			break;
		case 5:
			/* registers of a group window, any value */
			dev->ops->write64(
				dev,
				GBA_GROUP_REG_BASE(off % GBA_MAX_GROUPS) +
					(val >> 32) % GBA_GROUP_REG_STRIDE / 8 *
						8,
				fuzz_u64(&in));
			break;
		case 6:
			image_store(off, val);
			break;
		case 7:
			group_round(off, (uint32_t)val);
			break;
		}
	}
	(void)sink;
	memcpy(gba_emu(dev)->base, pristine, gba_emu(dev)->size);
	return 0;
}
