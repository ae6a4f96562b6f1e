/*
 * GBA core library: shared-memory regions of the fabric engine
 * (doc/design.md section 4, "single-copy transfers ... or shared mappings").
 *
 * A region is an anonymous memory file (memfd) that its owner maps
 * MAP_SHARED and keeps open: the caller's bytes, then one trailer page
 * holding the region's cookie, a number no other region of the host
 * carries.  A peer process of the same user on the same host maps the same
 * pages through /proc/<owner pid>/fd/<fd> (the access check is the
 * kernel's ptrace read check, the one cross-memory attach already needs)
 * and then reaches the region with plain CPU loads, stores and atomics: no
 * queue, no progress of the target, no system call per access.  This is how
 * UCX's posix transport reaches memory its md allocated, and what the
 * hardware's NIC does for registered memory.
 *
 * The owner seals the file's size (F_SEAL_SHRINK, F_SEAL_GROW) and a peer
 * maps only a sealed file: a region cannot shrink under a peer's
 * mapping, whose loads and stores would then fault (SIGBUS), whatever its
 * owner does.
 *
 * Mappings of peers' regions are cached per process (gba_eng_seg_attach):
 * a region is mapped, and its pages faulted in, once however many times
 * its description arrives; the cookie tells a region from a later one
 * that reuses the file number.  Up to GBA_ENG_SEG_IDLE_MAX mappings no one
 * holds (GBA_ENG_SEG_IDLE_BYTES bytes) stay for the next attach.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <utlist.h>

#include <gba/gba_job.h>

#include "gba_backend.h"
#include "gba_eng_priv.h"

/*
 * Name of a region's memory file: gba-seg-<job> (gba_job_id() in hex), so
 * that a process attaches the regions of its own job only; /proc/PID/fd/FD
 * links show it as "/memfd:<name> (deleted)".
 */
#define GBA_ENG_SEG_NAME_FMT "gba-seg-%016" PRIx64
#define GBA_ENG_SEG_LINK_FMT "/memfd:" GBA_ENG_SEG_NAME_FMT " "
/* Seals of every region's file: its size is fixed */
#define GBA_ENG_SEG_SEALS (F_SEAL_SHRINK | F_SEAL_GROW)
/* Mappings kept while no one holds them: count and bytes */
#define GBA_ENG_SEG_IDLE_MAX 64
#define GBA_ENG_SEG_IDLE_BYTES (1ULL << 30)

/* A peer's region mapped into this process */
struct gba_eng_seg_map {
	uint32_t pid;
	int fd;
	uint64_t cookie;
	void *addr;
	size_t map_len;		/* bytes mapped, trailer included */
	unsigned refs;		/* attaches not detached yet */
	bool current;		/* found by (pid, fd); else only detached */
	struct gba_eng_seg_map *prev, *next; /* most recently used first */
};

static pthread_mutex_t gba_eng_seg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gba_eng_seg_map *gba_eng_seg_maps;
static unsigned gba_eng_seg_idle;
static uint64_t gba_eng_seg_idle_bytes;

static size_t gba_eng_seg_page(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

/* A cookie no other region of the host carries: pid, time, a counter */
static uint64_t gba_eng_seg_cookie(void)
{
	static _Atomic uint64_t count;
	struct timespec ts;
	uint64_t c;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	c = ((uint64_t)getpid() << 40) ^ ((uint64_t)ts.tv_sec << 30) ^
	    (uint64_t)ts.tv_nsec ^ (atomic_fetch_add(&count, 1) << 52);
	return c ? c : 1;
}

int gba_eng_seg_alloc(size_t len, void *addr, struct gba_eng_seg *seg)
{
	size_t page = gba_eng_seg_page();
	char name[32], path[40];
	void *map;
	int fd, ret, flags = MAP_SHARED;

	gba_err_clear();
	if (!seg || !len || len > SIZE_MAX / 2 ||
	    ((uintptr_t)addr & (page - 1)))
		return -EINVAL;
	len = (len + page - 1) & ~(page - 1);
	if (addr)
		flags |= MAP_FIXED_NOREPLACE;

	snprintf(name, sizeof(name), GBA_ENG_SEG_NAME_FMT, gba_job_id());
	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return gba_err_set(-errno, "memfd_create %s", name);
	/* the pages now: no memory is -ENOSPC/-ENOMEM here, not SIGBUS */
	snprintf(path, sizeof(path), "memfd:%s", name);
	ret = gba_shm_reserve(fd, len + page, path);
	if (ret)
		goto err;
	/* its size is fixed: a peer's mapping can never fault */
	if (fcntl(fd, F_ADD_SEALS, GBA_ENG_SEG_SEALS | F_SEAL_SEAL)) {
		ret = gba_err_set(-errno, "fcntl F_ADD_SEALS %s", path);
		goto err;
	}
	map = mmap(addr, len + page, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (map == MAP_FAILED) {
		ret = gba_err_set(-errno, "mmap %s (%zu bytes)", path,
				  len + page);
		goto err;
	}
	if (addr && map != addr) {
		/* A kernel older than 4.17 took the flag as a hint */
		munmap(map, len + page);
		ret = -EEXIST;
		goto err;
	}

	seg->addr = map;
	seg->len = len;
	seg->fd = fd;
	seg->pid = (uint32_t)getpid();
	seg->cookie = gba_eng_seg_cookie();
	*(uint64_t *)((char *)map + len) = seg->cookie;
	return 0;
err:
	close(fd);
	return ret;
}

void gba_eng_seg_free(struct gba_eng_seg *seg)
{
	if (!seg || !seg->addr)
		return;
	munmap(seg->addr, seg->len + gba_eng_seg_page());
	close(seg->fd);
	seg->addr = NULL;
	seg->fd = -1;
}

/* Map the region @pid holds as @fd, at least @len bytes plus the trailer,
 * if it is a region and carries @cookie */
static int gba_eng_seg_map_new(uint32_t pid, int fd, size_t len,
			       uint64_t cookie, struct gba_eng_seg_map *m)
{
	size_t page = gba_eng_seg_page();
	char path[64], link[PATH_MAX], want[64];
	struct stat st;
	ssize_t n;
	void *map;
	int mfd, ret;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd);
	/* Only a region's memory file, never another file of the owner's */
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return gba_err_set(-errno, "region %s", path);
	link[n] = '\0';
	/* and of this job's: another job's regions are not there for it */
	snprintf(want, sizeof(want), GBA_ENG_SEG_LINK_FMT, gba_job_id());
	if (strncmp(link, want, strlen(want)))
		return -ENOENT;

	mfd = open(path, O_RDWR | O_CLOEXEC);
	if (mfd < 0)
		return gba_err_set(-errno, "region %s", path);
	if (fstat(mfd, &st)) {
		ret = -errno;
		goto out;
	}
	/* A file whose size can change could fault our accesses */
	ret = fcntl(mfd, F_GET_SEALS);
	if (ret < 0 || (ret & GBA_ENG_SEG_SEALS) != GBA_ENG_SEG_SEALS) {
		ret = -EACCES;
		goto out;
	}
	/* The caller's bytes are what the file holds before the trailer */
	if ((uint64_t)st.st_size < page || (uint64_t)st.st_size - page < len ||
	    st.st_size % page) {
		ret = -ERANGE;
		goto out;
	}
	map = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd,
		   0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	if (*(uint64_t *)((char *)map + st.st_size - page) != cookie) {
		munmap(map, st.st_size);
		ret = -ESTALE;
		goto out;
	}
	m->pid = pid;
	m->fd = fd;
	m->cookie = cookie;
	m->addr = map;
	m->map_len = st.st_size;
	ret = 0;
out:
	close(mfd);
	return ret;
}

/* Unmap the idle mappings of regions replaced by later ones, and the least
 * recently used idle ones beyond the limits; called with the lock held */
static void gba_eng_seg_trim(void)
{
	struct gba_eng_seg_map *m, *tmp;

	for (m = gba_eng_seg_maps ? gba_eng_seg_maps->prev : NULL; m; m = tmp) {
		tmp = m == gba_eng_seg_maps ? NULL : m->prev;
		if (m->refs)
			continue;
		if (m->current && gba_eng_seg_idle <= GBA_ENG_SEG_IDLE_MAX &&
		    gba_eng_seg_idle_bytes <= GBA_ENG_SEG_IDLE_BYTES)
			continue;
		DL_DELETE(gba_eng_seg_maps, m);
		gba_eng_seg_idle--;
		gba_eng_seg_idle_bytes -= m->map_len;
		munmap(m->addr, m->map_len);
		free(m);
	}
}

int gba_eng_seg_attach(uint32_t pid, int fd, size_t len, uint64_t cookie,
		       void **addr)
{
	struct gba_eng_seg_map *m;
	int ret;

	gba_err_clear();
	if (!addr || !len || fd < 0 || !pid)
		return -EINVAL;

	pthread_mutex_lock(&gba_eng_seg_lock);
	DL_FOREACH(gba_eng_seg_maps, m) {
		if (!m->current || m->pid != pid || m->fd != fd)
			continue;
		if (m->cookie == cookie &&
		    m->map_len - gba_eng_seg_page() >= len)
			goto found;
		/* Another region now has that file number */
		m->current = false;
		break;
	}

	m = calloc(1, sizeof(*m));
	if (!m) {
		ret = -ENOMEM;
		goto out;
	}
	ret = gba_eng_seg_map_new(pid, fd, len, cookie, m);
	if (ret) {
		free(m);
		goto out;
	}
	m->current = true;
	DL_PREPEND(gba_eng_seg_maps, m);
	m->refs = 1;
	*addr = m->addr;
	gba_eng_seg_trim();
	goto out;

found:
	if (!m->refs++) {
		gba_eng_seg_idle--;
		gba_eng_seg_idle_bytes -= m->map_len;
	}
	DL_DELETE(gba_eng_seg_maps, m);
	DL_PREPEND(gba_eng_seg_maps, m);
	*addr = m->addr;
	ret = 0;
out:
	pthread_mutex_unlock(&gba_eng_seg_lock);
	return ret;
}

void gba_eng_seg_detach(void *addr)
{
	struct gba_eng_seg_map *m;

	if (!addr)
		return;
	pthread_mutex_lock(&gba_eng_seg_lock);
	DL_FOREACH(gba_eng_seg_maps, m) {
		if (m->addr != addr || !m->refs)
			continue;
		if (!--m->refs) {
			gba_eng_seg_idle++;
			gba_eng_seg_idle_bytes += m->map_len;
			gba_eng_seg_trim();
		}
		break;
	}
	pthread_mutex_unlock(&gba_eng_seg_lock);
}
