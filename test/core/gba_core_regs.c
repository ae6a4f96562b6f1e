/*
 * Register map conformance: every offset of doc/design.md section 3, the
 * encodings of gba_regs.h, and the emulated device's image really placing
 * each register (and the release flags) at those offsets.
 */
#include "gba_core_util.h"

Test(regs, global_block)
{
	cr_expect_eq(GBA_REG_ID, 0x0000);
	cr_expect_eq(GBA_REG_VERSION, 0x0008);
	cr_expect_eq(GBA_REG_NUM_GROUPS, 0x0010);
	cr_expect_eq(GBA_REG_MAX_MEMBERS, 0x0018);
	cr_expect_eq(GBA_REG_NETWORK_ADDR, 0x0020);
	cr_expect_eq(GBA_ID_MAGIC, 0x47424130ULL);
	cr_expect_eq(GBA_ABI_VERSION, 1);
	cr_expect_eq(GBA_MAX_GROUPS, 32);
	cr_expect_eq(GBA_MAX_MEMBERS, 708);
	cr_expect_eq(GBA_MASK_WORDS, 12);
	/* "GBA0" */
	cr_expect_eq((GBA_ID_MAGIC >> 24) & 0xff, 'G');
	cr_expect_eq(GBA_ID_MAGIC & 0xff, '0');
}

Test(regs, group_windows)
{
	cr_expect_eq(GBA_GROUP_REG_BASE(0), 0x10000);
	cr_expect_eq(GBA_GROUP_REG_BASE(1), 0x12000);
	cr_expect_eq(GBA_GROUP_REG_BASE(31), 0x10000 + 31 * 0x2000);
	cr_expect_eq(GBA_GROUP_REG_STRIDE, 0x2000);
	cr_expect_eq(GBA_BAR_SIZE, 0x50000);
}

Test(regs, group_registers)
{
	unsigned w, m;

	cr_expect_eq(GBA_GROUP_ID, 0x0000);
	cr_expect_eq(GBA_MEMBER_COUNT, 0x0004);
	cr_expect_eq(GBA_ARRIVAL_COUNT, 0x0008);
	for (w = 0; w < 12; w++) {
		cr_expect_eq(GBA_MEMBER_MASK(w), 0x0010 + 8 * w);
		cr_expect_eq(GBA_ARRIVED_MASK(w), 0x1810 + 8 * w);
	}
	cr_expect_eq(GBA_MEMBER_MASK(11) + 8, 0x0070); /* 0x0010-0x006F */
	cr_expect_eq(GBA_ARRIVAL, 0x0070);
	cr_expect_eq(GBA_RELEASE_SEQ, 0x0078);
	for (m = 0; m < 708; m++)
		cr_expect_eq(GBA_RELEASE_ADDR(m), 0x0080 + 8 * m);
	cr_expect_eq(GBA_RELEASE_ADDR(707) + 8, 0x16A0); /* 0x0080-0x169F */
	cr_expect_eq(GBA_CONTROL, 0x1800);
	cr_expect_eq(GBA_STATUS, 0x1808);
	cr_expect_eq(GBA_ARRIVED_MASK(11) + 8, 0x1870); /* 0x1810-0x186F */
	cr_expect_eq(GBA_ERROR_INFO, 0x1870);
	cr_expect_leq(GBA_GROUP_WINDOW_END, GBA_GROUP_REG_STRIDE);
}

Test(regs, bits_and_encodings)
{
	uint64_t v;

	cr_expect_eq(GBA_CTRL_ENABLE, 1);
	cr_expect_eq(GBA_CTRL_RESET, 2);
	cr_expect_eq(GBA_CTRL_ARM, 4);
	cr_expect_eq(GBA_STATUS_READY, 1);
	cr_expect_eq(GBA_STATUS_ACTIVE, 2);
	cr_expect_eq(GBA_STATUS_COMPLETE, 4);
	cr_expect_eq(GBA_STATUS_ERROR, 8);

	v = GBA_ARRIVAL_VALUE(707, 0xfffffffeu);
	cr_expect_eq(v, (707ULL << 32) | 0xfffffffeULL);
	cr_expect_eq(GBA_ARRIVAL_MEMBER(v), 707);
	cr_expect_eq(GBA_ARRIVAL_SEQ(v), 0xfffffffeu);

	v = GBA_ERROR_INFO_VALUE(GBA_ERR_BAD_SEQ, 0x123456, 0xdeadbeef);
	cr_expect_eq(v >> 56, GBA_ERR_BAD_SEQ);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(v), GBA_ERR_BAD_SEQ);
	cr_expect_eq(GBA_ERROR_INFO_MEMBER(v), 0x123456);
	cr_expect_eq(GBA_ERROR_INFO_SEQ(v), 0xdeadbeef);
	/* the member field is 24 bits wide */
	v = GBA_ERROR_INFO_VALUE(GBA_ERR_NOT_MEMBER, 0xffffffffu, 1);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(v), GBA_ERR_NOT_MEMBER);
	cr_expect_eq(GBA_ERROR_INFO_MEMBER(v), 0xffffff);
}

Test(regs, seq_reached_is_wrap_safe)
{
	cr_expect(gba_seq_reached(1, 1));
	cr_expect(gba_seq_reached(2, 1));
	cr_expect_not(gba_seq_reached(0, 1));
	cr_expect_not(gba_seq_reached(0xffffffffu, 0));
	cr_expect(gba_seq_reached(0, 0xffffffffu));	/* a plain >= fails */
	cr_expect(gba_seq_reached(5, 0xfffffff0u));
	cr_expect_not(gba_seq_reached(0xfffffff0u, 5));
	cr_expect(gba_seq_reached(0x80000000u, 1));
}

Test(regs, layout_constants)
{
	/* release flags: one cache line per (group, member), IOVA = offset */
	cr_expect_eq(GBA_FLAG_OFFSET, GBA_BAR_SIZE);
	cr_expect_eq(GBA_FLAG_IOVA(0, 0), GBA_BAR_SIZE);
	cr_expect_eq(GBA_FLAG_IOVA(0, 1) - GBA_FLAG_IOVA(0, 0), 64);
	cr_expect_eq(GBA_FLAG_IOVA(1, 0), GBA_BAR_SIZE + 708 * 64);
	cr_expect_leq(GBA_FLAG_IOVA(31, 707) + 64, GBA_BOOK_OFFSET);
	cr_expect_leq(GBA_BOOK_OFFSET + sizeof(struct gba_book), GBA_BOOK_END);
	cr_expect_leq(GBA_EMU_SW_OFFSET + 32 * sizeof(struct gba_emu_sw),
		      GBA_EMU_IMAGE_SIZE);
}

static void fini(void)
{
	gba_t_unlink();
}

/* The emulated device places every register where the map says. */
Test(regs, emu_image_matches_map, .fini = fini)
{
	struct gba_group *a, *b;
	struct gba_dev *dev;
	uint8_t *img;
	uint64_t base;
	unsigned g, m;

	cr_assert_eq(gba_dev_open(gba_t_image("regs"), &dev), 0);
	img = gba_t_map_image();
	cr_expect_eq(gba_t_rd64(img, GBA_REG_ID), GBA_ID_MAGIC);
	cr_expect_eq(gba_t_rd64(img, GBA_REG_VERSION), 1);
	cr_expect_eq(gba_t_rd64(img, GBA_REG_NUM_GROUPS), 32);
	cr_expect_eq(gba_t_rd64(img, GBA_REG_MAX_MEMBERS), 708);
	cr_expect_neq(gba_t_rd64(img, GBA_REG_NETWORK_ADDR), 0);

	/* 66 members: the mask spans two words */
	a = gba_t_join(dev, 0x1234567890ULL, 66, 0);
	b = gba_t_join(dev, 0x1234567890ULL, 66, 65);
	g = gba_test_group_index(a);
	cr_assert_lt(g, 32);
	base = GBA_GROUP_REG_BASE(g);

	/* protocol step 1 as seen in the registers */
	cr_expect_neq(gba_t_rd32(img, base + 0x0000), 0);	/* GROUP_ID */
	cr_expect_eq(gba_t_rd32(img, base + 0x0004), 66);	/* MEMBER_COUNT */
	cr_expect_eq(gba_t_rd64(img, base + 0x0010), ~0ULL);	/* MASK[0] */
	cr_expect_eq(gba_t_rd64(img, base + 0x0018), 3);	/* MASK[1] */
	cr_expect_eq(gba_t_rd64(img, base + 0x0020), 0);	/* MASK[2] */
	for (m = 0; m < 66; m++)
		cr_expect_eq(gba_t_rd64(img, base + 0x0080 + 8 * m),
			     GBA_BAR_SIZE + ((uint64_t)g * 708 + m) * 64,
			     "RELEASE_ADDR[%u]", m);
	cr_expect_eq(gba_t_rd64(img, base + 0x0080 + 8 * 66), 0);
	cr_expect_eq(gba_t_rd64(img, base + 0x1800),
		     GBA_CTRL_ENABLE | GBA_CTRL_ARM);		/* CONTROL */
	cr_expect_eq(gba_t_rd64(img, base + 0x1808),
		     GBA_STATUS_READY | GBA_STATUS_ACTIVE);	/* STATUS */
	cr_expect_eq(gba_t_rd64(img, base + 0x1870), 0);	/* ERROR_INFO */

	/*
	 * arrivals of members 0 and 65 (via handles), then 1..64 raw; the
	 * epoch registers are derived by the backend's register loads
	 */
	cr_expect_eq(gba_group_arrive(a), 1);
	cr_expect_eq(gba_group_arrive(b), 1);
	cr_expect_eq(gba_test_reg_read(dev, base + 0x0008), 2); /* COUNT */
	cr_expect_eq(gba_test_reg_read(dev, base + 0x1810), 1); /* ARRIVED[0] */
	cr_expect_eq(gba_test_reg_read(dev, base + 0x1818), 2); /* ARRIVED[1] */
	cr_expect_eq(gba_test_reg_read(dev, base + 0x0078), 0); /* RELEASE */
	for (m = 1; m < 65; m++)
		gba_group_ring(a, GBA_ARRIVAL_VALUE(m, 1));
	/* release: RELEASE_SEQ, flags at IOVA, masks cleared, COMPLETE */
	cr_expect_eq(gba_test_reg_read(dev, base + 0x0078), 1);
	cr_expect_eq(gba_test_reg_read(dev, base + 0x0008), 0);
	cr_expect_eq(gba_test_reg_read(dev, base + 0x1810), 0);
	cr_expect_eq(gba_test_reg_read(dev, base + 0x1818), 0);
	cr_expect(gba_t_rd64(img, base + 0x1808) & GBA_STATUS_COMPLETE);
	cr_expect_not(gba_t_rd64(img, base + 0x1808) & GBA_STATUS_ERROR);
	for (m = 0; m < 66; m++)
		cr_expect_eq(gba_t_rd64(img, GBA_BAR_SIZE +
						     ((uint64_t)g * 708 + m) *
							     64),
			     1, "flag of member %u", m);
	cr_expect_eq(gba_group_test(a, 1), 1);
	cr_expect_eq(gba_group_test(b, 1), 1);

	/* teardown (protocol step 5): the window reads 0 after RESET */
	gba_group_leave(a);
	cr_expect_eq(gba_t_rd32(img, base + 0x0004), 66);	/* b attached */
	gba_group_leave(b);
	for (m = 0; m < GBA_GROUP_WINDOW_END; m += 8)
		cr_expect_eq(gba_t_rd64(img, base + m), 0, "offset %#x", m);
	munmap(img, GBA_EMU_IMAGE_SIZE);
	gba_dev_close(dev);
}
