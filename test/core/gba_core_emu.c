/*
 * The emulated device, single process: image creation and permissions,
 * the switch's rules (non-member, wrong sequence, duplicate, not enabled,
 * read-only registers), wrap at 2^32, a 708-member group, the 32-group
 * limit, timeouts, re-joining, diagnostics, the oversubscribed waiting
 * policy.
 */
#define _GNU_SOURCE	/* sched_getcpu, sched_setaffinity */
#include <sched.h>
#include <sys/file.h>
#include <sys/wait.h>

#include "gba_core_util.h"
#include "gba_emu.h"

static struct gba_dev *dev;

static void setup(void)
{
	int ret = gba_dev_open(gba_t_image("emu"), &dev);

	cr_assert_eq(ret, 0, "gba_dev_open: %d", ret);
}

static void teardown(void)
{
	gba_dev_close(dev);
	dev = NULL;
	gba_t_unlink();
}

TestSuite(emu, .init = setup, .fini = teardown, .timeout = 60);

static uint64_t greg(struct gba_group *grp, uint64_t off)
{
	return gba_test_reg_read(dev, GBA_GROUP_REG_BASE(
					      gba_test_group_index(grp)) +
					      off);
}

static void gwrite(struct gba_group *grp, uint64_t off, uint64_t val)
{
	gba_test_reg_write(dev,
			   GBA_GROUP_REG_BASE(gba_test_group_index(grp)) + off,
			   val);
}

/* ---- device ------------------------------------------------------------- */

Test(emu, query)
{
	struct gba_dev_attr attr;

	cr_assert_eq(gba_dev_query(dev, &attr), 0);
	cr_expect_eq(attr.id, GBA_ID_MAGIC);
	cr_expect_eq(attr.version, 1);
	cr_expect_eq(attr.num_groups, 32);
	cr_expect_eq(attr.max_members, 708);
	cr_expect_eq(attr.network_addr, gba_host_id());
	cr_expect_str_eq(attr.backend, "emu");
	cr_expect_str_eq(attr.path, gba_t_shm);
}

Test(emu, image_owner_only)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/shm%s", gba_t_shm);
	cr_assert_eq(stat(path, &st), 0, "%s", path);
	cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	cr_expect_eq(st.st_uid, geteuid());
	cr_expect_eq((uint64_t)st.st_size, GBA_EMU_IMAGE_SIZE);
}

/* A umask that would strip the owner's write bit does not break creation. */
Test(emu, created_0600_despite_umask)
{
	struct gba_dev *d2;
	char path[128];
	struct stat st;
	mode_t old = umask(0277);

	cr_assert_eq(gba_dev_open(gba_t_image("umask"), &d2), 0);
	umask(old);
	snprintf(path, sizeof(path), "/dev/shm%s", gba_t_shm);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	gba_dev_close(d2);
}

Test(emu, two_opens_share_the_image)
{
	struct gba_group *a, *b;
	struct gba_dev *d2;
	uint32_t s;

	cr_assert_eq(gba_dev_open(gba_t_dev, &d2), 0);
	a = gba_t_join(dev, 99, 2, 0);
	{
		struct gba_group_attr attr = {99, 2, 1};

		cr_assert_eq(gba_group_join(d2, &attr, &b), 0);
	}
	cr_expect_eq(gba_test_group_index(a), gba_test_group_index(b));
	s = gba_group_arrive(a);
	cr_expect_eq(gba_group_test(a, s), 0);
	cr_expect_eq(gba_group_barrier(b), 0);
	cr_expect_eq(gba_group_wait(a, s, 1000), 0);
	gba_dev_close(d2);	/* leaves b */
	gba_group_leave(a);
}

static int make_image(const char *name, mode_t mode, off_t size)
{
	int fd;

	shm_unlink(name);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(fchmod(fd, mode), 0);
	if (size)
		cr_assert_eq(ftruncate(fd, size), 0);
	return fd;
}

Test(emu, eacces_on_0644_image)
{
	struct gba_dev *d2 = (void *)1;
	char name[64], dname[80];
	int fd;

	snprintf(name, sizeof(name), "/gba-t%d-0644", (int)getpid());
	snprintf(dname, sizeof(dname), "emu:%s", name);
	fd = make_image(name, 0644, GBA_EMU_IMAGE_SIZE);
	cr_expect_eq(gba_dev_open(dname, &d2), -EACCES);
	cr_expect_null(d2);
	fchmod(fd, 0640);
	cr_expect_eq(gba_dev_open(dname, &d2), -EACCES);
	fchmod(fd, 0606);
	cr_expect_eq(gba_dev_open(dname, &d2), -EACCES);
	close(fd);
	shm_unlink(name);
}

Test(emu, eacces_on_foreign_owner)
{
	struct gba_dev *d2;
	char name[64], dname[80];
	int fd;

	if (geteuid() != 0)
		cr_skip_test("needs root to give an image away");
	snprintf(name, sizeof(name), "/gba-t%d-owner", (int)getpid());
	snprintf(dname, sizeof(dname), "emu:%s", name);
	fd = make_image(name, 0600, GBA_EMU_IMAGE_SIZE);
	cr_assert_eq(fchown(fd, 65534, 65534), 0);
	cr_expect_eq(gba_dev_open(dname, &d2), -EACCES);
	close(fd);
	shm_unlink(name);
}

Test(emu, eproto_on_foreign_image)
{
	struct gba_dev *d2;
	char name[64], dname[80];
	int fd;

	snprintf(name, sizeof(name), "/gba-t%d-size", (int)getpid());
	snprintf(dname, sizeof(dname), "emu:%s", name);
	fd = make_image(name, 0600, 4096);
	cr_expect_eq(gba_dev_open(dname, &d2), -EPROTO);
	close(fd);
	shm_unlink(name);
}

Test(emu, eproto_on_bad_id)
{
	struct gba_dev *d2;
	uint8_t *img = gba_t_map_image();

	*(uint64_t *)(img + GBA_REG_ID) = 0x12345678;
	cr_expect_eq(gba_dev_open(gba_t_dev, &d2), -EPROTO);
	*(uint64_t *)(img + GBA_REG_ID) = GBA_ID_MAGIC;
	*(uint64_t *)(img + GBA_REG_VERSION) = 2;
	cr_expect_eq(gba_dev_open(gba_t_dev, &d2), -EPROTO);
	*(uint64_t *)(img + GBA_REG_VERSION) = 1;
	cr_expect_eq(gba_dev_open(gba_t_dev, &d2), 0);
	gba_dev_close(d2);
	munmap(img, GBA_EMU_IMAGE_SIZE);
}

/* A creator that died after ftruncate, before the "initialised" marker:
 * the next opener initialises the image. */
Test(emu, half_created_image_is_initialised)
{
	struct gba_dev_attr attr;
	struct gba_dev *d2;
	char name[64], dname[80];
	int fd;

	snprintf(name, sizeof(name), "/gba-t%d-half", (int)getpid());
	snprintf(dname, sizeof(dname), "emu:%s", name);
	fd = make_image(name, 0600, GBA_EMU_IMAGE_SIZE);
	cr_assert_eq(gba_dev_open(dname, &d2), 0);
	cr_assert_eq(gba_dev_query(d2, &attr), 0);
	cr_expect_eq(attr.id, GBA_ID_MAGIC);
	cr_expect_eq(attr.max_members, 708);
	gba_dev_close(d2);
	/* and one whose creator died before ftruncate (size 0) */
	close(fd);
	fd = make_image(name, 0600, 0);
	cr_assert_eq(gba_dev_open(dname, &d2), 0);
	gba_dev_close(d2);
	close(fd);
	shm_unlink(name);
}

/* An opener blocks while the creator holds the lock, then proceeds. */
Test(emu, opener_waits_for_initialisation)
{
	struct gba_dev *d2;
	char name[64], dname[80];
	int fd, ret;
	pid_t pid;
	double t0;

	snprintf(name, sizeof(name), "/gba-t%d-wait", (int)getpid());
	snprintf(dname, sizeof(dname), "emu:%s", name);
	fd = make_image(name, 0600, 0);
	cr_assert_eq(flock(fd, LOCK_EX), 0);	/* we are "initialising" */
	t0 = gba_t_now_ms();
	pid = gba_t_fork();
	if (pid == 0) {
		/* shares the locked open file description: unlocks it */
		usleep(100000);
		flock(fd, LOCK_UN);
		_exit(0);
	}
	ret = gba_dev_open(dname, &d2);
	cr_expect_eq(ret, 0);
	cr_expect_geq(gba_t_now_ms() - t0, 50.0, "did not wait");
	waitpid(pid, NULL, 0);
	if (!ret)
		gba_dev_close(d2);
	close(fd);
	shm_unlink(name);
}

Test(emu, default_device_from_environment)
{
	struct gba_dev_attr attr;
	struct gba_dev *d2;

	setenv(GBA_DEVICE_ENV, gba_t_dev, 1);
	cr_assert_eq(gba_dev_open(NULL, &d2), 0);
	gba_dev_query(d2, &attr);
	cr_expect_str_eq(attr.backend, "emu");
	cr_expect_str_eq(attr.path, gba_t_shm);
	gba_dev_close(d2);
	cr_assert_eq(gba_dev_open("", &d2), 0);
	gba_dev_query(d2, &attr);
	cr_expect_str_eq(attr.path, gba_t_shm);
	gba_dev_close(d2);
}

Test(emu, per_user_default_name)
{
	struct gba_dev_attr attr;
	struct gba_dev *d2;
	char name[64];

	snprintf(name, sizeof(name), "/gba-emu-%u", (unsigned)geteuid());
	if (gba_dev_open("emu", &d2) != 0) {
		teardown();	/* a skipped test's .fini does not run */
		cr_skip_test("per-user image unusable (left by someone else, "
			     "or of another layout)");
	}
	gba_dev_query(d2, &attr);
	cr_expect_str_eq(attr.path, name);
	gba_dev_close(d2);
	/* not removed: it is the user's default device, which other
	 * processes may be using */
}

/* ---- the switch's rules ------------------------------------------------- */

Test(emu, barrier_basic)
{
	struct gba_group *a = gba_t_join(dev, 5, 2, 0);
	struct gba_group *b = gba_t_join(dev, 5, 2, 1);
	struct gba_group_diag d;
	uint32_t i, sa, sb;

	for (i = 1; i <= 100; i++) {
		sa = gba_group_arrive(a);
		cr_assert_eq(sa, i);
		cr_assert_eq(gba_group_test(a, sa), 0, "released early");
		cr_assert_eq(greg(a, GBA_ARRIVAL_COUNT), 1);
		sb = gba_group_arrive(b);
		cr_assert_eq(sb, i);
		cr_assert_eq(gba_group_test(a, sa), 1);
		cr_assert_eq(gba_group_wait(b, sb, 0), 0);
	}
	cr_assert_eq(gba_group_diag(a, &d), 0);
	cr_expect_eq(d.release_seq, 100);
	cr_expect_eq(d.local_seq, 100);
	cr_expect_eq(d.flag, 100);
	cr_expect_eq(d.member_count, 2);
	cr_expect_eq(d.member_id, 0);
	cr_expect_eq(d.member_mask[0], 3);
	cr_expect_eq(d.arrived_mask[0], 0);
	cr_expect_eq(d.arrival_count, 0);
	cr_expect_eq(d.control, GBA_CTRL_ENABLE | GBA_CTRL_ARM);
	cr_expect_eq(d.status, GBA_STATUS_READY | GBA_STATUS_ACTIVE |
				       GBA_STATUS_COMPLETE);
	cr_expect_eq(d.error_info, 0);
	cr_expect_neq(d.group_id, 0);
	gba_group_leave(a);
	gba_group_leave(b);
}

Test(emu, single_member_group)
{
	struct gba_group *a = gba_t_join(dev, 6, 1, 0);
	int i;

	for (i = 0; i < 10; i++)
		cr_assert_eq(gba_group_barrier(a), 0);
	gba_group_leave(a);
}

/* gba_group_flag: the word the switch stores into, at RELEASE_ADDR[m] */
Test(emu, release_flag_pointer)
{
	struct gba_group *a = gba_t_join(dev, 8, 2, 1);
	struct gba_group *b = gba_t_join(dev, 8, 2, 0);
	const volatile uint64_t *flag;
	uint64_t iova = 0;
	uint8_t *img = gba_t_map_image();

	flag = gba_group_flag(a, &iova);
	cr_assert_not_null(flag);
	cr_expect_eq(iova, GBA_FLAG_IOVA(gba_test_group_index(a), 1));
	cr_expect_eq(iova, greg(a, GBA_RELEASE_ADDR(1)));
	cr_expect_eq(gba_group_flag(a, NULL), flag);
	cr_expect_eq(*flag, 0);
	gba_group_arrive(a);
	cr_expect_eq(*flag, 0, "released early");
	gba_group_arrive(b);
	cr_expect_eq(*flag, 1);
	/* the same word as the image's flag area at that IOVA */
	cr_expect_eq(gba_t_rd64(img, iova), 1);
	munmap(img, GBA_EMU_IMAGE_SIZE);
	gba_group_leave(a);
	gba_group_leave(b);
	cr_expect_null(gba_group_flag(NULL, &iova));
}

Test(emu, non_member_arrival_sets_error)
{
	struct gba_group *a = gba_t_join(dev, 7, 3, 0);
	uint64_t info;

	cr_expect_eq(greg(a, GBA_STATUS) & GBA_STATUS_ERROR, 0);
	gba_group_ring(a, GBA_ARRIVAL_VALUE(5, 1));	/* 5 >= 3 members */
	cr_expect(greg(a, GBA_STATUS) & GBA_STATUS_ERROR);
	info = greg(a, GBA_ERROR_INFO);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(info), GBA_ERR_NOT_MEMBER);
	cr_expect_eq(GBA_ERROR_INFO_MEMBER(info), 5);
	cr_expect_eq(GBA_ERROR_INFO_SEQ(info), 1);
	cr_expect_eq(greg(a, GBA_ARRIVAL_COUNT), 0, "dropped");
	cr_expect_eq(greg(a, GBA_ARRIVED_MASK(0)), 0, "dropped");

	gba_group_ring(a, GBA_ARRIVAL_VALUE(708, 1));
	info = greg(a, GBA_ERROR_INFO);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(info), GBA_ERR_NOT_MEMBER);
	cr_expect_eq(GBA_ERROR_INFO_MEMBER(info), 708);
	gba_group_ring(a, GBA_ARRIVAL_VALUE(0xffffffffu, 1));
	info = greg(a, GBA_ERROR_INFO);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(info), GBA_ERR_NOT_MEMBER);
	cr_expect_eq(GBA_ERROR_INFO_MEMBER(info), 0xffffff);
	cr_expect_eq(greg(a, GBA_ARRIVED_MASK(11)), 0);
	cr_expect_str_eq(gba_strerror_info(info), "arrival from a non-member");
	/* the group still works, and the error is not this member's */
	gba_group_ring(a, GBA_ARRIVAL_VALUE(1, 1));
	gba_group_ring(a, GBA_ARRIVAL_VALUE(2, 1));
	cr_expect_eq(gba_group_barrier(a), 0);
	gba_group_leave(a);
}

Test(emu, duplicate_arrival_ignored)
{
	struct gba_group *a = gba_t_join(dev, 8, 3, 0);
	uint32_t s = gba_group_arrive(a);

	gba_group_ring(a, GBA_ARRIVAL_VALUE(0, s));	/* duplicate */
	gba_group_ring(a, GBA_ARRIVAL_VALUE(0, s));
	cr_expect_eq(greg(a, GBA_ARRIVAL_COUNT), 1);
	cr_expect_eq(greg(a, GBA_STATUS) & GBA_STATUS_ERROR, 0, "no error");
	gba_group_ring(a, GBA_ARRIVAL_VALUE(1, s));
	gba_group_ring(a, GBA_ARRIVAL_VALUE(1, s));	/* duplicate */
	cr_expect_eq(greg(a, GBA_ARRIVAL_COUNT), 2);
	cr_expect_eq(greg(a, GBA_ARRIVED_MASK(0)), 3);
	cr_expect_eq(gba_group_test(a, s), 0, "duplicates were counted");
	gba_group_ring(a, GBA_ARRIVAL_VALUE(2, s));
	cr_expect_eq(gba_group_test(a, s), 1);
	gba_group_leave(a);
}

Test(emu, wrong_sequence_rejected)
{
	struct gba_group *a = gba_t_join(dev, 9, 2, 0);
	struct gba_group *b = gba_t_join(dev, 9, 2, 1);
	uint64_t info;
	uint32_t s;

	gba_group_ring(a, GBA_ARRIVAL_VALUE(1, 2));	/* epoch is 1 */
	info = greg(a, GBA_ERROR_INFO);
	cr_expect(greg(a, GBA_STATUS) & GBA_STATUS_ERROR);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(info), GBA_ERR_BAD_SEQ);
	cr_expect_eq(GBA_ERROR_INFO_MEMBER(info), 1);
	cr_expect_eq(GBA_ERROR_INFO_SEQ(info), 2);
	gba_group_ring(a, GBA_ARRIVAL_VALUE(1, 0));	/* behind */
	cr_expect_eq(GBA_ERROR_INFO_SEQ(greg(a, GBA_ERROR_INFO)), 0);
	cr_expect_eq(greg(a, GBA_ARRIVAL_COUNT), 0);
	cr_expect_eq(greg(a, GBA_ARRIVED_MASK(0)), 0);

	/* a member whose sequence is off sees -EPROTO */
	gba_test_set_local_seq(b, 10);
	s = gba_group_arrive(b);
	cr_expect_eq(s, 11);
	cr_expect_eq(gba_group_test(b, s), -EPROTO);
	cr_expect_eq(gba_group_wait(b, s, 1000), -EPROTO);
	/* ... the other member is not concerned and times out */
	s = gba_group_arrive(a);
	cr_expect_eq(gba_group_wait(a, s, 20), -ETIMEDOUT);
	/* a stale arrival after release is also rejected, not counted */
	gba_test_set_local_seq(b, 0);
	cr_expect_eq(gba_group_barrier(b), 0);
	cr_expect_eq(gba_group_test(a, s), 1);
	gba_group_ring(a, GBA_ARRIVAL_VALUE(0, 1));
	info = greg(a, GBA_ERROR_INFO);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(info), GBA_ERR_BAD_SEQ);
	cr_expect_eq(GBA_ERROR_INFO_SEQ(info), 1);
	cr_expect_eq(greg(a, GBA_ARRIVAL_COUNT), 0);
	gba_group_leave(a);
	gba_group_leave(b);
}

Test(emu, not_enabled)
{
	struct gba_group *a = gba_t_join(dev, 10, 1, 0);
	uint64_t info;
	uint32_t s;

	gwrite(a, GBA_CONTROL, 0);
	cr_expect_eq(greg(a, GBA_CONTROL), 0);
	cr_expect_eq(greg(a, GBA_STATUS) & GBA_STATUS_READY, 0);
	s = gba_group_arrive(a);
	info = greg(a, GBA_ERROR_INFO);
	cr_expect_eq(GBA_ERROR_INFO_CAUSE(info), GBA_ERR_NOT_ENABLED);
	cr_expect_eq(GBA_ERROR_INFO_MEMBER(info), 0);
	cr_expect_eq(GBA_ERROR_INFO_SEQ(info), s);
	cr_expect_eq(gba_group_test(a, s), -EPROTO);
	/* enable again: the configuration is latched, READY comes back */
	gwrite(a, GBA_CONTROL, GBA_CTRL_ENABLE | GBA_CTRL_ARM);
	cr_expect(greg(a, GBA_STATUS) & GBA_STATUS_READY);
	gba_test_set_local_seq(a, 0);
	cr_expect_eq(gba_group_barrier(a), 0);
	gba_group_leave(a);
}

Test(emu, enable_with_bad_configuration_not_ready)
{
	struct gba_group *a = gba_t_join(dev, 11, 2, 0);

	gwrite(a, GBA_CONTROL, GBA_CTRL_RESET);
	gba_test_reg_write(dev,
			   GBA_GROUP_REG_BASE(gba_test_group_index(a)) +
				   GBA_GROUP_ID,
			   (3ULL << 32) | 1);	/* GROUP_ID 1, COUNT 3 */
	gwrite(a, GBA_MEMBER_MASK(0), 3);	/* only 2 bits */
	gwrite(a, GBA_CONTROL, GBA_CTRL_ENABLE | GBA_CTRL_ARM);
	cr_expect_eq(greg(a, GBA_STATUS) & GBA_STATUS_READY, 0);
	gwrite(a, GBA_MEMBER_MASK(0), 7);
	gwrite(a, GBA_CONTROL, GBA_CTRL_ENABLE | GBA_CTRL_ARM);
	cr_expect(greg(a, GBA_STATUS) & GBA_STATUS_READY);
	gba_group_leave(a);
}

Test(emu, read_only_registers_ignore_stores)
{
	struct gba_group *a = gba_t_join(dev, 12, 2, 0);
	uint64_t off;

	gba_test_reg_write(dev, GBA_REG_ID, 0);
	gba_test_reg_write(dev, GBA_REG_MAX_MEMBERS, 1);
	cr_expect_eq(gba_test_reg_read(dev, GBA_REG_ID), GBA_ID_MAGIC);
	cr_expect_eq(gba_test_reg_read(dev, GBA_REG_MAX_MEMBERS), 708);
	gwrite(a, GBA_ARRIVAL_COUNT, 5);
	gwrite(a, GBA_RELEASE_SEQ, 5);
	gwrite(a, GBA_STATUS, GBA_STATUS_ERROR);
	gwrite(a, GBA_ARRIVED_MASK(0), 3);
	gwrite(a, GBA_ERROR_INFO, 1);
	cr_expect_eq(greg(a, GBA_ARRIVAL_COUNT), 0);
	cr_expect_eq(greg(a, GBA_RELEASE_SEQ), 0);
	cr_expect_eq(greg(a, GBA_STATUS), GBA_STATUS_READY | GBA_STATUS_ACTIVE);
	cr_expect_eq(greg(a, GBA_ARRIVED_MASK(0)), 0);
	cr_expect_eq(greg(a, GBA_ERROR_INFO), 0);
	/* ARRIVAL is write-only: reads 0 */
	gba_group_ring(a, GBA_ARRIVAL_VALUE(0, 1));
	cr_expect_eq(greg(a, GBA_ARRIVAL), 0);
	for (off = GBA_GROUP_WINDOW_END; off < GBA_GROUP_REG_STRIDE; off += 8)
		gwrite(a, off, ~0ULL);	/* reserved */
	gba_group_leave(a);
}

/* ---- oversubscribed waiting --------------------------------------------- */

/* Store member @m's where word (word 1 of its flag line) in the image. */
static void where_set(uint8_t *img, struct gba_group *grp, uint32_t m,
		      uint32_t cpu, uint32_t seq)
{
	uint64_t iova = GBA_FLAG_IOVA(gba_test_group_index(grp), m);

	__atomic_store_n((uint64_t *)(img + iova + 8), GBA_WHERE(cpu, seq),
			 __ATOMIC_RELAXED);
}

/*
 * gba_group_should_yield: always 1 in a group whose members can all run
 * at once; in a group with more members than online CPUs, 0 (keep the
 * CPU) while every member still to arrive last arrived on another CPU,
 * for a bounded time, and 1 when one may be waiting for this CPU.
 */
Test(emu, should_yield_oversubscribed)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = (uint32_t)cpus + 1, m, s, here, other;
	struct gba_group *g[GBA_MAX_MEMBERS], *a, *b;
	cpu_set_t set, all;
	uint8_t *img;
	double t0;

	cr_assert_gt(cpus, 0);
	cr_assert_leq(n, GBA_MAX_MEMBERS);
	a = gba_t_join(dev, 0x51, 2, 0);
	b = gba_t_join(dev, 0x51, 2, 1);
	cr_expect_eq(gba_group_should_yield(a, gba_group_arrive(a)), 1);
	cr_expect_eq(gba_group_barrier(b), 0);

	/* on one CPU, so that sched_getcpu is known */
	cr_assert_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	here = (uint32_t)sched_getcpu();
	other = here + 1;	/* any other value will do */
	CPU_ZERO(&set);
	CPU_SET(here, &set);
	cr_assert_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	for (m = 0; m < n; m++)
		g[m] = gba_t_join(dev, 0x52, n, m);
	img = gba_t_map_image();
	for (m = 1; m < n; m++)
		where_set(img, g[m], m, other, 0);
	s = gba_group_arrive(g[0]);	/* notes here */
	cr_expect_eq(gba_group_should_yield(g[0], s), 0, "all elsewhere");
	cr_expect_eq(gba_group_should_yield(g[0], s), 0, "the decision holds");
	/* a member still to arrive moves here: seen when the keep ends */
	where_set(img, g[0], 1, here, s - 1);
	t0 = gba_t_now_ms();
	while (!gba_group_should_yield(g[0], s))
		cr_assert_lt(gba_t_now_ms() - t0, 1000.0, "keeps forever");
	cr_expect_eq(gba_group_should_yield(g[0], s), 1, "member 1 is here");
	/* once it arrived (here), the rest are elsewhere again */
	cr_expect_eq(gba_group_arrive(g[1]), s);
	cr_expect_eq(gba_group_should_yield(g[0], s), 0);
	for (m = 2; m < n; m++)
		gba_group_arrive(g[m]);
	cr_expect_eq(gba_group_test(g[0], s), 1);
	sched_setaffinity(0, sizeof(all), &all);
	for (m = 0; m < n; m++)
		gba_group_leave(g[m]);
	gba_group_leave(a);
	gba_group_leave(b);
	munmap(img, GBA_EMU_IMAGE_SIZE);
}

/* ---- sequence numbers wrap at 2^32 -------------------------------------- */

Test(emu, wrap_at_2_32)
{
	struct gba_group *a = gba_t_join(dev, 13, 2, 0);
	struct gba_group *b;
	uint32_t expect = 0xfffffffcu, sa, sb;
	int i;

	cr_assert_eq(gba_emu_test_set_seq(a, 0xfffffffbu), 0);
	/* a member joining now starts at RELEASE_SEQ */
	b = gba_t_join(dev, 13, 2, 1);
	for (i = 0; i < 10; i++, expect++) {
		sa = gba_group_arrive(a);
		cr_assert_eq(sa, expect);
		cr_assert_eq(gba_group_test(a, sa), 0,
			     "released early at %#x", sa);
		sb = gba_group_arrive(b);
		cr_assert_eq(sb, expect);
		cr_assert_eq(gba_group_test(a, sa), 1, "not released %#x", sa);
		cr_assert_eq(gba_group_test(b, sb), 1);
		cr_assert_eq(greg(a, GBA_RELEASE_SEQ), sa);
		cr_assert_eq(greg(a, GBA_STATUS) & GBA_STATUS_ERROR, 0);
	}
	cr_expect_eq(expect, 6);	/* crossed 0xffffffff -> 0 */
	gba_group_leave(a);
	gba_group_leave(b);
}

/* ---- limits ------------------------------------------------------------------ */

Test(emu, max_members_708_joins)
{
	static struct gba_group *g[GBA_MAX_MEMBERS];
	unsigned m;
	int round;

	for (m = 0; m < GBA_MAX_MEMBERS; m++)
		g[m] = gba_t_join(dev, 0x708, GBA_MAX_MEMBERS, m);
	for (round = 1; round <= 3; round++) {
		for (m = 0; m < GBA_MAX_MEMBERS - 1; m++)
			cr_assert_eq(gba_group_arrive(g[m]), (uint32_t)round);
		for (m = 0; m < GBA_MAX_MEMBERS - 1; m += 101)
			cr_assert_eq(gba_group_test(g[m], round), 0);
		cr_assert_eq(greg(g[0], GBA_ARRIVAL_COUNT),
			     GBA_MAX_MEMBERS - 1);
		cr_assert_eq(greg(g[0], GBA_ARRIVED_MASK(11)),
			     (1ULL << (GBA_MAX_MEMBERS - 1 - 704)) - 1);
		gba_group_arrive(g[GBA_MAX_MEMBERS - 1]);
		for (m = 0; m < GBA_MAX_MEMBERS; m++)
			cr_assert_eq(gba_group_test(g[m], round), 1,
				     "member %u round %d", m, round);
		cr_assert_eq(greg(g[0], GBA_ARRIVAL_COUNT), 0);
	}
	cr_expect_eq(greg(g[0], GBA_STATUS) & GBA_STATUS_ERROR, 0);
	for (m = 0; m < GBA_MAX_MEMBERS; m++)
		gba_group_leave(g[m]);
}

Test(emu, max_members_708_rung)
{
	struct gba_group *a = gba_t_join(dev, 0x709, GBA_MAX_MEMBERS, 0);
	unsigned m;
	uint32_t s;

	s = gba_group_arrive(a);
	for (m = GBA_MAX_MEMBERS - 1; m > 1; m--)
		gba_group_ring(a, GBA_ARRIVAL_VALUE(m, s));
	cr_expect_eq(gba_group_test(a, s), 0);
	gba_group_ring(a, GBA_ARRIVAL_VALUE(1, s));
	cr_expect_eq(gba_group_test(a, s), 1);
	cr_expect_eq(greg(a, GBA_RELEASE_SEQ), s);
	cr_expect_eq(greg(a, GBA_STATUS) & GBA_STATUS_ERROR, 0);
	gba_group_leave(a);
}

Test(emu, group_33_refused_with_enospc)
{
	struct gba_group *g[GBA_MAX_GROUPS], *extra = (void *)1;
	struct gba_group_attr attr = {.key = 1000, .member_count = 1};
	unsigned i, seen = 0;

	for (i = 0; i < GBA_MAX_GROUPS; i++) {
		g[i] = gba_t_join(dev, 100 + i, 1, 0);
		seen |= 1u << gba_test_group_index(g[i]);
	}
	cr_expect_eq(seen, 0xffffffffu, "all 32 hardware groups used");
	cr_expect_eq(gba_group_join(dev, &attr, &extra), -ENOSPC);
	cr_expect_null(extra);
	/* an existing key is still found when all groups are in use */
	attr.key = 100;
	attr.member_count = 1;
	cr_expect_eq(gba_group_join(dev, &attr, &extra), -EADDRINUSE);
	gba_group_leave(g[5]);
	attr.key = 1000;
	cr_expect_eq(gba_group_join(dev, &attr, &extra), 0);
	cr_expect_eq(gba_group_barrier(extra), 0);
	gba_group_leave(extra);
	for (i = 0; i < GBA_MAX_GROUPS; i++)
		if (i != 5)
			gba_group_leave(g[i]);
}

Test(emu, key_with_other_member_count_einval)
{
	struct gba_group *a = gba_t_join(dev, 14, 4, 0), *b = (void *)1;
	struct gba_group_attr attr = {.key = 14, .member_count = 3,
				      .member_id = 1};

	cr_expect_eq(gba_group_join(dev, &attr, &b), -EINVAL);
	cr_expect_null(b);
	gba_group_leave(a);
}

Test(emu, member_slot_in_use)
{
	struct gba_group *a = gba_t_join(dev, 15, 4, 2), *b;
	struct gba_group_attr attr = {.key = 15, .member_count = 4,
				      .member_id = 2};

	cr_expect_eq(gba_group_join(dev, &attr, &b), -EADDRINUSE);
	gba_group_leave(a);
	/* freed by the leave: joinable again */
	cr_expect_eq(gba_group_join(dev, &attr, &b), 0);
	gba_group_leave(b);
}

Test(emu, last_leave_frees_and_resets)
{
	struct gba_group *a = gba_t_join(dev, 16, 2, 0);
	struct gba_group *b = gba_t_join(dev, 16, 2, 1);
	unsigned g = gba_test_group_index(a);
	struct gba_group_diag d;

	cr_expect_eq(gba_group_arrive(a), 1);
	cr_expect_eq(gba_group_barrier(b), 0);
	gba_group_leave(a);
	/* still allocated: b is attached */
	cr_expect_eq(gba_test_reg_read(dev, GBA_GROUP_REG_BASE(g) +
						    GBA_GROUP_ID) >> 32,
		     2);	/* MEMBER_COUNT */
	gba_group_leave(b);
	cr_expect_eq(gba_test_reg_read(dev, GBA_GROUP_REG_BASE(g) +
						    GBA_CONTROL),
		     0);
	/* a new group with the same key starts from 1 again */
	a = gba_t_join(dev, 16, 2, 0);
	cr_assert_eq(gba_group_diag(a, &d), 0);
	cr_expect_eq(d.release_seq, 0);
	cr_expect_eq(gba_group_arrive(a), 1);
	gba_group_leave(a);
}

Test(emu, rejoin_running_group_continues_sequence)
{
	struct gba_group *a = gba_t_join(dev, 17, 2, 0);
	struct gba_group *b = gba_t_join(dev, 17, 2, 1);
	int i;

	for (i = 0; i < 5; i++) {
		gba_group_arrive(a);
		cr_assert_eq(gba_group_barrier(b), 0);
	}
	gba_group_leave(b);
	b = gba_t_join(dev, 17, 2, 1);
	cr_expect_eq(gba_group_arrive(b), 6);
	cr_expect_eq(gba_group_arrive(a), 6);
	cr_expect_eq(gba_group_wait(b, 6, 0), 0);
	gba_group_leave(a);
	gba_group_leave(b);
}

Test(emu, timeout)
{
	struct gba_group *a = gba_t_join(dev, 18, 2, 0);
	struct gba_group *b = gba_t_join(dev, 18, 2, 1);
	uint32_t s = gba_group_arrive(a);
	double t0 = gba_t_now_ms(), dt;

	cr_expect_eq(gba_group_wait(a, s, 50), -ETIMEDOUT);
	dt = gba_t_now_ms() - t0;
	cr_expect_geq(dt, 45.0, "%.1f ms", dt);
	cr_expect_lt(dt, 1000.0, "%.1f ms", dt);
	cr_expect_eq(gba_group_wait(a, s, 0), -ETIMEDOUT);
	cr_expect_eq(gba_group_test(a, s), 0);
	gba_group_arrive(b);
	cr_expect_eq(gba_group_wait(a, s, 0), 0);
	gba_group_leave(a);
	gba_group_leave(b);
}

Test(emu, close_leaves_groups)
{
	struct gba_dev *d2;
	struct gba_group_attr attr = {.key = 19, .member_count = 2};
	struct gba_group *a;

	cr_assert_eq(gba_dev_open(gba_t_dev, &d2), 0);
	cr_assert_eq(gba_group_join(d2, &attr, &a), 0);
	gba_dev_close(d2);
	/* the slot is free again */
	a = gba_t_join(dev, 19, 2, 0);
	gba_group_leave(a);
}

Test(emu, strerror_info)
{
	cr_expect_str_eq(gba_strerror_info(0), "no error");
	cr_expect_str_eq(
		gba_strerror_info(GBA_ERROR_INFO_VALUE(GBA_ERR_PEER_LOST, 1, 1)),
		"a member of the group went away");
	cr_expect_str_eq(gba_strerror_info(GBA_ERROR_INFO_VALUE(99, 0, 0)),
			 "unknown error cause");
	cr_expect_not_null(gba_strerror_info(
		GBA_ERROR_INFO_VALUE(GBA_ERR_BAD_SEQ, 0, 0)));
	cr_expect_not_null(gba_strerror_info(
		GBA_ERROR_INFO_VALUE(GBA_ERR_NOT_ENABLED, 0, 0)));
}

/* ---- an image another process wrote (untrusted shared memory) ----------- */

/* Loads outside the BAR or misaligned read all ones, never the memory
 * around it (fuzz/switch.c found a load of any offset crashing). */
Test(emu, read_outside_bar_all_ones)
{
	cr_expect_eq(dev->ops->read64(dev, GBA_BAR_SIZE), UINT64_MAX);
	cr_expect_eq(dev->ops->read64(dev, UINT64_MAX - 7), UINT64_MAX);
	cr_expect_eq(dev->ops->read64(dev, GBA_REG_ID + 4), UINT64_MAX);
	cr_expect_eq(dev->ops->read32(dev, 0x3ff8f452ULL << 32), UINT32_MAX);
	cr_expect_eq(dev->ops->read32(dev, GBA_BAR_SIZE), UINT32_MAX);
	cr_expect_eq(dev->ops->read32(dev, GBA_REG_ID + 2), UINT32_MAX);
	cr_expect_eq(dev->ops->read64(dev, GBA_REG_ID), GBA_ID_MAGIC);
	cr_expect_eq(dev->ops->read32(dev, GBA_REG_ID), GBA_ID_MAGIC);
}

static struct gba_emu_sw *one_member_group(struct gba_group **grpp)
{
	struct gba_group_attr attr = {.key = 77, .member_count = 1};

	cr_assert_eq(gba_group_join(dev, &attr, grpp), 0);
	return &gba_emu(dev)->sw[gba_test_group_index(*grpp)];
}

/* A MEMBER_MASK bit past member 707 in the switch state: ARRIVED_MASK
 * does not read the state of a member that does not exist (past the
 * group's member array: the next group's switch state). */
Test(emu, corrupt_mask_bit_past_last_member)
{
	struct gba_group *grp;
	struct gba_emu_sw *sw = one_member_group(&grp);
	_Atomic uint32_t *past;

	cr_assert_lt(gba_test_group_index(grp), GBA_MAX_GROUPS - 1);
	sw->member_mask[GBA_MASK_WORDS - 1] |= 1ULL << 63;
	past = (_Atomic uint32_t *)((uint8_t *)sw->member +
				    (GBA_MASK_WORDS * 64 - 1) *
					    sizeof(sw->member[0]));
	atomic_store(past, atomic_load(&sw->epoch));
	cr_expect_eq(greg(grp, GBA_ARRIVED_MASK(GBA_MASK_WORDS - 1)), 0);
	cr_expect_eq(gba_group_barrier(grp), 0);
	gba_group_leave(grp);
}

/* mask_words past the mask in the switch state: the release does not
 * take the bytes after the mask for members and store their flags. */
Test(emu, corrupt_mask_words)
{
	struct gba_group *grp;
	struct gba_emu_sw *sw = one_member_group(&grp);
	uint64_t victim = GBA_FLAG_IOVA(GBA_MAX_GROUPS - 1, 3);
	uint64_t *past =
		(uint64_t *)((uint8_t *)sw->member_mask + GBA_MASK_WORDS * 8);
	uint64_t *addr =
		(uint64_t *)(gba_emu(dev)->base +
			     GBA_GROUP_REG_BASE(gba_test_group_index(grp)) +
			     GBA_RELEASE_ADDR(GBA_MASK_WORDS * 64));

	cr_assert_leq(offsetof(struct gba_emu_sw, member_mask) +
			      (GBA_MASK_WORDS + 1) * 8,
		      offsetof(struct gba_emu_sw, epoch));
	*past = 1; /* "member" 768 */
	*addr = victim;
	sw->mask_words = GBA_MASK_WORDS + 1;
	cr_expect_eq(gba_group_barrier(grp), 0);
	cr_expect_eq(*(uint64_t *)(dev->flags + victim - GBA_FLAG_OFFSET), 0);
	gba_group_leave(grp);
}
