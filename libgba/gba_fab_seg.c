/*
 * GBA core library: shared-memory regions of the fabric engine
 * (DESIGN.md section 4, "single-copy transfers ... or shared mappings").
 *
 * A region is an anonymous memory file (memfd) that its owner maps
 * MAP_SHARED and keeps open.  A peer process of the same user on the same
 * host maps the same pages through /proc/<owner pid>/fd/<fd> (the access
 * check is the kernel's ptrace read check, the one cross-memory attach
 * already needs) and then reaches the region with plain CPU loads, stores
 * and atomics: no queue, no progress of the target, no system call per
 * access.  This is how UCX's posix transport reaches memory its md
 * allocated, and what the hardware's NIC does for registered memory.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gba_fab_priv.h"

/* Name of every region's memory file, as /proc/PID/fd/FD links show it */
#define GBA_FAB_SEG_NAME "gba-seg"
#define GBA_FAB_SEG_LINK "/memfd:" GBA_FAB_SEG_NAME " "

static size_t gba_fab_seg_page(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

int gba_fab_seg_alloc(size_t len, void *addr, struct gba_fab_seg *seg)
{
	size_t page = gba_fab_seg_page();
	void *map;
	int fd, ret, flags = MAP_SHARED;

	if (!seg || !len || len > SIZE_MAX - page ||
	    ((uintptr_t)addr & (page - 1)))
		return -EINVAL;
	len = (len + page - 1) & ~(page - 1);
	if (addr)
		flags |= MAP_FIXED_NOREPLACE;

	fd = memfd_create(GBA_FAB_SEG_NAME, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len)) {
		ret = -errno;
		goto err;
	}
	map = mmap(addr, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto err;
	}
	if (addr && map != addr) {
		/* A kernel older than 4.17 took the flag as a hint */
		munmap(map, len);
		ret = -EEXIST;
		goto err;
	}

	seg->addr = map;
	seg->len = len;
	seg->fd = fd;
	seg->pid = (uint32_t)getpid();
	return 0;
err:
	close(fd);
	return ret;
}

void gba_fab_seg_free(struct gba_fab_seg *seg)
{
	if (!seg || !seg->addr)
		return;
	munmap(seg->addr, seg->len);
	close(seg->fd);
	seg->addr = NULL;
	seg->fd = -1;
}

int gba_fab_seg_map(uint32_t pid, int fd, size_t len, void **addr)
{
	char path[64], link[PATH_MAX];
	struct stat st;
	ssize_t n;
	void *map;
	int mfd, ret;

	if (!addr || !len || fd < 0 || !pid || pid == (uint32_t)getpid())
		return -EINVAL;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd);
	/* Only a region's memory file, never another file of the owner's */
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	if (strncmp(link, GBA_FAB_SEG_LINK, strlen(GBA_FAB_SEG_LINK)))
		return -ENOENT;

	mfd = open(path, O_RDWR | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	if (fstat(mfd, &st)) {
		ret = -errno;
		goto out;
	}
	if ((uint64_t)st.st_size < len) {
		ret = -ERANGE;
		goto out;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	*addr = map;
	ret = 0;
out:
	close(mfd);
	return ret;
}

void gba_fab_seg_unmap(void *addr, size_t len)
{
	if (addr)
		munmap(addr, len);
}
