/*
 * The hardware backend against regular files holding a register image:
 * ID/VERSION checks, mapping, query, and - with a file long enough to hold
 * the assumed driver's flag memory and a "switch" thread standing in for
 * the hardware - group programming (protocol step 1), arrival doorbells
 * and release through the flag at RELEASE_ADDR.
 */
#include <pthread.h>
#include <stdlib.h>

#include "gba_core_util.h"

static char path[64];

static void teardown(void)
{
	if (path[0])
		unlink(path);
}

TestSuite(hw, .fini = teardown, .timeout = 30);

/* Create a register image of @size bytes with the given ID and VERSION. */
static void make_file(size_t size, uint64_t id, uint64_t version)
{
	uint64_t global[5] = {id, version, GBA_MAX_GROUPS, GBA_MAX_MEMBERS,
			      0xabcdef};
	int fd;

	snprintf(path, sizeof(path), "/tmp/gba-hw-%d-XXXXXX", (int)getpid());
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, size), 0);
	cr_assert_eq(pwrite(fd, global, sizeof(global), 0), sizeof(global));
	close(fd);
}

Test(hw, good_image)
{
	struct gba_dev_attr attr;
	struct gba_dev *dev;

	make_file(GBA_BAR_SIZE, GBA_ID_MAGIC, 1);
	cr_assert_eq(gba_dev_open(path, &dev), 0);
	cr_assert_eq(gba_dev_query(dev, &attr), 0);
	cr_expect_str_eq(attr.backend, "hw");
	cr_expect_str_eq(attr.path, path);
	cr_expect_eq(attr.id, GBA_ID_MAGIC);
	cr_expect_eq(attr.version, 1);
	cr_expect_eq(attr.num_groups, 32);
	cr_expect_eq(attr.max_members, 708);
	cr_expect_eq(attr.network_addr, 0xabcdef);
	gba_dev_close(dev);

	/* "hw:PATH" and GBA_DEVICE name the same backend */
	{
		char name[80];

		snprintf(name, sizeof(name), "hw:%s", path);
		cr_assert_eq(gba_dev_open(name, &dev), 0);
		gba_dev_close(dev);
		setenv(GBA_DEVICE_ENV, path, 1);
		cr_assert_eq(gba_dev_open(NULL, &dev), 0);
		gba_dev_query(dev, &attr);
		cr_expect_str_eq(attr.backend, "hw");
		gba_dev_close(dev);
	}
}

Test(hw, bad_id)
{
	struct gba_dev *dev = (void *)1;

	make_file(GBA_BAR_SIZE, 0x47424131, 1);
	cr_expect_eq(gba_dev_open(path, &dev), -EPROTO);
	cr_expect_null(dev);
}

Test(hw, bad_version)
{
	struct gba_dev *dev;

	make_file(GBA_BAR_SIZE, GBA_ID_MAGIC, 2);
	cr_expect_eq(gba_dev_open(path, &dev), -EPROTO);
	unlink(path);
	make_file(GBA_BAR_SIZE, GBA_ID_MAGIC, 0);
	cr_expect_eq(gba_dev_open(path, &dev), -EPROTO);
}

Test(hw, short_file)
{
	struct gba_dev *dev;

	make_file(4096, GBA_ID_MAGIC, 1);
	cr_expect_eq(gba_dev_open(path, &dev), -ENODEV);
}

Test(hw, read_only_file)
{
	struct gba_dev *dev;

	if (geteuid() == 0)
		cr_skip_test("root ignores file permissions");
	make_file(GBA_BAR_SIZE, GBA_ID_MAGIC, 1);
	chmod(path, 0400);
	cr_expect_eq(gba_dev_open(path, &dev), -EACCES);
}

/* A BAR-only image has no flag memory: the device cannot host groups. */
Test(hw, no_flag_memory_join_eio)
{
	struct gba_group_attr attr = {.key = 1, .member_count = 1};
	struct gba_group *grp;
	struct gba_dev *dev;

	make_file(GBA_BAR_SIZE, GBA_ID_MAGIC, 1);
	cr_assert_eq(gba_dev_open(path, &dev), 0);
	cr_expect_eq(gba_group_join(dev, &attr, &grp), -EIO);
	gba_dev_close(dev);
}

/* No switch behind the registers: READY never comes, join fails. */
Test(hw, no_ready_join_eio)
{
	struct gba_group_attr attr = {.key = 1, .member_count = 1};
	struct gba_group *grp;
	struct gba_dev *dev;
	double t0;

	make_file(GBA_BOOK_END, GBA_ID_MAGIC, 1);
	cr_assert_eq(gba_dev_open(path, &dev), 0);
	t0 = gba_t_now_ms();
	cr_expect_eq(gba_group_join(dev, &attr, &grp), -EIO);
	cr_expect_lt(gba_t_now_ms() - t0, 5000.0);
	gba_dev_close(dev);
}

/*
 * A minimal "switch" for one group of one member, working on its own
 * mapping of the file: sets READY when CONTROL gets ENABLE, and releases
 * each arrival by storing its seq at RELEASE_ADDR[0] (IOVA = file offset).
 * Its fields are shared with the test's thread through atomics: the
 * registers it writes reach the library through another mapping of the
 * file, which orders nothing for ThreadSanitizer.
 */
struct fake_switch {
	uint8_t *img;
	int stop;
	int arrivals;
	uint64_t control_seen;
};

static void *fake_switch_run(void *arg)
{
	struct fake_switch *fs = arg;
	uint64_t base, last = 0, ctrl, arr, iova;
	unsigned g;

	while (!__atomic_load_n(&fs->stop, __ATOMIC_ACQUIRE)) {
		for (g = 0; g < GBA_MAX_GROUPS; g++) {
			base = GBA_GROUP_REG_BASE(g);
			ctrl = gba_t_rd64(fs->img, base + GBA_CONTROL);
			if ((ctrl & GBA_CTRL_ENABLE) &&
			    !(gba_t_rd64(fs->img, base + GBA_STATUS) &
			      GBA_STATUS_READY)) {
				__atomic_store_n(&fs->control_seen, ctrl,
						 __ATOMIC_RELEASE);
				__atomic_store_n((uint64_t *)(fs->img + base +
							      GBA_STATUS),
						 GBA_STATUS_READY |
							 GBA_STATUS_ACTIVE,
						 __ATOMIC_RELEASE);
			}
			arr = gba_t_rd64(fs->img, base + GBA_ARRIVAL);
			if (arr != last && arr) {
				last = arr;
				__atomic_fetch_add(&fs->arrivals, 1,
						   __ATOMIC_RELEASE);
				iova = gba_t_rd64(fs->img,
						  base + GBA_RELEASE_ADDR(
								 GBA_ARRIVAL_MEMBER(
									 arr)));
				__atomic_store_n(
					(uint64_t *)(fs->img + base +
						     GBA_RELEASE_SEQ),
					GBA_ARRIVAL_SEQ(arr), __ATOMIC_RELAXED);
				__atomic_store_n((uint64_t *)(fs->img + iova),
						 GBA_ARRIVAL_SEQ(arr),
						 __ATOMIC_RELEASE);
			}
		}
		usleep(100);
	}
	return NULL;
}

Test(hw, join_programs_registers_and_barrier_completes)
{
	struct gba_group_attr attr = {.key = 0x77, .member_count = 3,
				      .member_id = 0};
	struct fake_switch fs = {0};
	struct gba_group *grp;
	struct gba_dev *dev;
	pthread_t thr;
	uint64_t base;
	unsigned g, m;
	int fd, i;

	make_file(GBA_BOOK_END, GBA_ID_MAGIC, 1);
	fd = open(path, O_RDWR);
	fs.img = mmap(NULL, GBA_BOOK_END, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fd, 0);
	close(fd);
	cr_assert_neq(fs.img, MAP_FAILED);
	pthread_create(&thr, NULL, fake_switch_run, &fs);

	cr_assert_eq(gba_dev_open(path, &dev), 0);
	cr_assert_eq(gba_group_join(dev, &attr, &grp), 0);
	g = gba_test_group_index(grp);
	base = GBA_GROUP_REG_BASE(g);
	cr_expect_eq(__atomic_load_n(&fs.control_seen, __ATOMIC_ACQUIRE),
		     GBA_CTRL_ENABLE | GBA_CTRL_ARM);
	cr_expect_eq(gba_t_rd32(fs.img, base + GBA_MEMBER_COUNT), 3);
	cr_expect_neq(gba_t_rd32(fs.img, base + GBA_GROUP_ID), 0);
	cr_expect_eq(gba_t_rd64(fs.img, base + GBA_MEMBER_MASK(0)), 7);
	for (m = 0; m < 3; m++)
		cr_expect_eq(gba_t_rd64(fs.img, base + GBA_RELEASE_ADDR(m)),
			     GBA_FLAG_IOVA(g, m));
	/* the flag area was zeroed by join */
	cr_expect_eq(gba_t_rd64(fs.img, GBA_FLAG_IOVA(g, 0)), 0);

	/* our fake switch releases each arrival at once */
	for (i = 1; i <= 20; i++) {
		uint32_t s = gba_group_arrive(grp);

		cr_assert_eq(s, (uint32_t)i);
		cr_assert_eq(gba_group_wait(grp, s, 5000), 0);
		cr_assert_eq(gba_t_rd64(fs.img, GBA_FLAG_IOVA(g, 0)), s);
	}
	cr_expect_eq(__atomic_load_n(&fs.arrivals, __ATOMIC_ACQUIRE), 20);

	/* other members attach to the same hardware group */
	{
		struct gba_group *g2;

		attr.member_id = 2;
		cr_assert_eq(gba_group_join(dev, &attr, &g2), 0);
		cr_expect_eq(gba_test_group_index(g2), g);
		cr_expect_eq(gba_group_arrive(g2), 21);	/* RELEASE_SEQ+1 */
		gba_group_leave(g2);
	}
	/* leaving resets the group (CONTROL=RESET store reached the BAR) */
	gba_group_leave(grp);
	cr_expect_eq(gba_t_rd64(fs.img, base + GBA_CONTROL), GBA_CTRL_RESET);
	__atomic_store_n(&fs.stop, 1, __ATOMIC_RELEASE);
	pthread_join(thr, NULL);
	gba_dev_close(dev);
	munmap(fs.img, GBA_BOOK_END);
}

/*
 * gba_dev_group_info through the hw backend, on a register image without
 * the control-plane table: the registers as the file holds them (a group
 * of 4 with member 1 arrived and a BAD_SEQ error), no processes.
 */
Test(hw, group_info_registers_only)
{
	uint64_t base = GBA_GROUP_REG_BASE(3), v;
	struct gba_group_info *info = malloc(sizeof(*info));
	struct gba_dev *dev;
	uint32_t v32;
	char buf[128];
	int fd;

	cr_assert_not_null(info);
	make_file(GBA_BAR_SIZE, GBA_ID_MAGIC, 1);
	fd = open(path, O_RDWR);
	cr_assert_geq(fd, 0);
#define PUT64(off, val)                                              \
	do {                                                         \
		v = (val);                                           \
		cr_assert_eq(pwrite(fd, &v, 8, (off)), 8);           \
	} while (0)
	v32 = 0xabc;
	cr_assert_eq(pwrite(fd, &v32, 4, base + GBA_GROUP_ID), 4);
	v32 = 4;
	cr_assert_eq(pwrite(fd, &v32, 4, base + GBA_MEMBER_COUNT), 4);
	PUT64(base + GBA_ARRIVAL_COUNT, 1);
	PUT64(base + GBA_MEMBER_MASK(0), 0xf);
	PUT64(base + GBA_CONTROL, GBA_CTRL_ENABLE | GBA_CTRL_ARM);
	PUT64(base + GBA_STATUS, GBA_STATUS_READY | GBA_STATUS_ERROR);
	PUT64(base + GBA_ARRIVED_MASK(0), 0x2);
	PUT64(base + GBA_ERROR_INFO,
	      GBA_ERROR_INFO_VALUE(GBA_ERR_BAD_SEQ, 1, 7));
#undef PUT64
	close(fd);

	cr_assert_eq(gba_dev_open(path, &dev), 0);
	cr_assert_eq(gba_dev_group_info(dev, 3, info), 0);
	cr_expect_eq(info->table, 0);
	cr_expect_eq(info->in_use, 1, "CONTROL.ENABLE");
	cr_expect_eq(info->group_id, 0xabc);
	cr_expect_eq(info->member_count, 4);
	cr_expect_eq(info->arrival_count, 1);
	cr_expect_eq(info->absent, 3);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(info->error_info), GBA_ERR_BAD_SEQ);
	cr_expect_eq(gba_group_info_absent(info, buf, sizeof(buf)), 3);
	cr_expect_str_eq(buf, "member 0, member 2, member 3");
	cr_assert_eq(gba_dev_group_info(dev, 2, info), 0);
	cr_expect_eq(info->in_use, 0);
	cr_expect_eq(gba_dev_group_info(dev, GBA_MAX_GROUPS, info), -EINVAL);
	gba_dev_close(dev);
	free(info);
}
