/*
 * Bad arguments give the documented negative errno and never crash.
 */
#include "gba_core_util.h"

static struct gba_dev *dev;

static void setup(void)
{
	cr_assert_eq(gba_dev_open(gba_t_image("args"), &dev), 0);
}

static void teardown(void)
{
	gba_dev_close(dev);
	gba_t_unlink();
}

TestSuite(args, .init = setup, .fini = teardown, .timeout = 30);

Test(args, dev_open)
{
	struct gba_dev *d = (void *)1;

	cr_expect_eq(gba_dev_open(gba_t_dev, NULL), -EINVAL);
	cr_expect_eq(gba_dev_open("emu:", &d), -EINVAL);
	cr_expect_null(d);
	cr_expect_eq(gba_dev_open("emu:/", &d), -EINVAL);
	cr_expect_eq(gba_dev_open("emu:noslash", &d), -EINVAL);
	cr_expect_eq(gba_dev_open("emu:/a/b", &d), -EINVAL);
	cr_expect_eq(gba_dev_open("hw:", &d), -EINVAL);
	{
		char longname[300];

		memset(longname, 'x', sizeof(longname));
		memcpy(longname, "emu:/", 5);
		longname[sizeof(longname) - 1] = '\0';
		cr_expect_eq(gba_dev_open(longname, &d), -EINVAL);
	}
	cr_expect_eq(gba_dev_open("/nonexistent/gba0", &d), -ENODEV);
	cr_expect_eq(gba_dev_open("hw:/nonexistent/gba0", &d), -ENODEV);
	cr_expect_eq(gba_dev_open("/", &d), -ENODEV);	/* a directory */
	cr_expect_eq(gba_dev_open("/dev/null", &d), -ENODEV);
	gba_dev_close(NULL);
}

Test(args, dev_query)
{
	struct gba_dev_attr attr;

	cr_expect_eq(gba_dev_query(NULL, &attr), -EINVAL);
	cr_expect_eq(gba_dev_query(dev, NULL), -EINVAL);
}

Test(args, group_join)
{
	struct gba_group_attr attr = {.key = 1, .member_count = 2};
	struct gba_group *g = (void *)1;

	cr_expect_eq(gba_group_join(NULL, &attr, &g), -EINVAL);
	cr_expect_null(g);
	cr_expect_eq(gba_group_join(dev, NULL, &g), -EINVAL);
	cr_expect_eq(gba_group_join(dev, &attr, NULL), -EINVAL);
	attr.key = 0;
	cr_expect_eq(gba_group_join(dev, &attr, &g), -EINVAL, "key 0");
	attr.key = 1;
	attr.member_count = 0;
	cr_expect_eq(gba_group_join(dev, &attr, &g), -EINVAL, "0 members");
	attr.member_count = GBA_MAX_MEMBERS + 1;
	cr_expect_eq(gba_group_join(dev, &attr, &g), -EINVAL, "709 members");
	attr.member_count = 0xffffffffu;
	cr_expect_eq(gba_group_join(dev, &attr, &g), -EINVAL);
	attr.member_count = 2;
	attr.member_id = 2;
	cr_expect_eq(gba_group_join(dev, &attr, &g), -EINVAL, "member 2/2");
	attr.member_id = 0xffffffffu;
	cr_expect_eq(gba_group_join(dev, &attr, &g), -EINVAL);
	cr_expect_null(g);
	/* nothing was allocated by the failed joins */
	attr.member_id = 0;
	cr_assert_eq(gba_group_join(dev, &attr, &g), 0);
	cr_expect_eq(gba_group_arrive(g), 1);
	gba_group_leave(g);
}

Test(args, data_plane_null)
{
	struct gba_group_diag d;

	cr_expect_eq(gba_group_leave(NULL), -EINVAL);
	cr_expect_eq(gba_group_arrive(NULL), 0);
	cr_expect_eq(gba_group_test(NULL, 1), -EINVAL);
	cr_expect_eq(gba_group_wait(NULL, 1, 0), -EINVAL);
	cr_expect_eq(gba_group_wait(NULL, 1, -1), -EINVAL);
	cr_expect_eq(gba_group_barrier(NULL), -EINVAL);
	cr_expect_eq(gba_group_diag(NULL, &d), -EINVAL);
	gba_group_ring(NULL, 0);
}

Test(args, diag_null)
{
	struct gba_group *g = gba_t_join(dev, 2, 1, 0);

	cr_expect_eq(gba_group_diag(g, NULL), -EINVAL);
	gba_group_leave(g);
}

Test(args, test_hooks)
{
	cr_expect_eq(gba_emu_test_set_seq(NULL, 1), -EINVAL);
	gba_test_set_local_seq(NULL, 1);
	cr_expect_eq(gba_test_reg_read(NULL, 0), 0);
	cr_expect_eq(gba_test_reg_read(dev, GBA_BAR_SIZE), 0);
	cr_expect_eq(gba_test_reg_read(dev, 4), 0);
	gba_test_reg_write(NULL, 0, 0);
	gba_test_reg_write(dev, GBA_BAR_SIZE, 0);
}
