/*
 * Helpers shared by the core (libgba) tests.
 *
 * Every test uses a private emulated-device image: "/gba-t<pid>-<tag>"
 * (Criterion runs each test in its own process, so the pid makes it
 * unique) and unlinks it in its fini.  GBA_DEVICE, set by the test
 * environment, is only used by the test of the default device name.
 */
#ifndef GBA_CORE_UTIL_H
#define GBA_CORE_UTIL_H

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gba/gba.h>
#include <gba/gba_addr.h>

#include "gba_backend.h"
#include "gba_emu_test.h"

static char gba_t_shm[64];	/* "/gba-t<pid>-<tag>" */
static char gba_t_dev[80];	/* "emu:/gba-t<pid>-<tag>" */
static char gba_t_made[8][64];	/* every image named, for gba_t_unlink */

/* Name a private image for this test process and make sure it is new. */
static inline const char *gba_t_image(const char *tag)
{
	unsigned i;

	snprintf(gba_t_shm, sizeof(gba_t_shm), "/gba-t%d-%s", (int)getpid(),
		 tag);
	snprintf(gba_t_dev, sizeof(gba_t_dev), "emu:%s", gba_t_shm);
	shm_unlink(gba_t_shm);
	for (i = 0; i < 8; i++) {
		if (!gba_t_made[i][0] || !strcmp(gba_t_made[i], gba_t_shm)) {
			strcpy(gba_t_made[i], gba_t_shm);
			break;
		}
	}
	return gba_t_dev;
}

/* Remove every image this test process named. */
static inline void gba_t_unlink(void)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		if (gba_t_made[i][0])
			shm_unlink(gba_t_made[i]);
}

/* Map the raw image of the current private device (to check the layout
 * from outside the library, as another agent would see it). */
static inline uint8_t *gba_t_map_image(void)
{
	int fd = shm_open(gba_t_shm, O_RDWR, 0);
	void *p;

	cr_assert_geq(fd, 0, "shm_open %s: %s", gba_t_shm, strerror(errno));
	p = mmap(NULL, GBA_EMU_IMAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	close(fd);
	cr_assert_neq(p, MAP_FAILED);
	return p;
}

static inline uint64_t gba_t_rd64(const uint8_t *img, uint64_t off)
{
	return __atomic_load_n((const uint64_t *)(img + off), __ATOMIC_ACQUIRE);
}

static inline uint32_t gba_t_rd32(const uint8_t *img, uint64_t off)
{
	return __atomic_load_n((const uint32_t *)(img + off), __ATOMIC_ACQUIRE);
}

/* fork() whose child is killed if the test process goes away (Criterion
 * kills a test on timeout; its children must not linger). */
static inline pid_t gba_t_fork(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(99);
	}
	return pid;
}

static inline double gba_t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline struct gba_group *gba_t_join(struct gba_dev *dev, uint64_t key,
					   uint32_t count, uint32_t id)
{
	struct gba_group_attr attr = {
		.key = key, .member_count = count, .member_id = id};
	struct gba_group *grp = NULL;
	int ret = gba_group_join(dev, &attr, &grp);

	cr_assert_eq(ret, 0, "join key %llu member %u/%u: %d (%s)",
		     (unsigned long long)key, id, count, ret, strerror(-ret));
	cr_assert_not_null(grp);
	return grp;
}

#endif /* GBA_CORE_UTIL_H */
