/*
 * Built by test/install/installed.sh with `pkg-config --cflags --libs
 * gba` against the installed <gba/gba.h> and libgba.so: a group of one
 * member on the device GBA_DEVICE names, three barriers.
 * Prints "gba_pc: ok <backend> <groups>x<members>" and exits 0, or an
 * error and exits 1.
 */
#include <stdio.h>
#include <string.h>

#include <gba/gba.h>

int main(void)
{
	struct gba_group_attr attr = {.key = 0x70c, .member_count = 1};
	struct gba_dev_attr dattr;
	struct gba_group *grp;
	struct gba_dev *dev;
	int ret, i;

	ret = gba_dev_open(NULL, &dev);
	if (ret) {
		fprintf(stderr, "gba_dev_open: %s\n", strerror(-ret));
		return 1;
	}
	ret = gba_dev_query(dev, &dattr);
	if (!ret)
		ret = gba_group_join(dev, &attr, &grp);
	for (i = 0; !ret && i < 3; i++)
		ret = gba_group_barrier(grp);
	if (ret) {
		fprintf(stderr, "gba: %s\n", strerror(-ret));
		gba_dev_close(dev);
		return 1;
	}
	gba_group_leave(grp);
	printf("gba_pc: ok %s %ux%u\n", dattr.backend, dattr.num_groups,
	       dattr.max_members);
	gba_dev_close(dev);
	return 0;
}
