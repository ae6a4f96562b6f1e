/*
 * GBA core library: the fabric engine's receive queue (gba_eng_priv.h).
 *
 * A bounded multi-producer, single-consumer ring in POSIX shared memory
 * (Vyukov's bounded queue): slot i holds a sequence number; a producer
 * at position pos owns the slot when its sequence equals pos, claims it
 * by advancing the shared tail with a compare-and-swap, fills it and
 * stores pos + 1; the consumer at head reads the slot once its sequence
 * is head + 1 and hands it back with head + nslots.  Producers from
 * several processes never wait on each other beyond the tail's
 * compare-and-swap; a full ring is reported, not waited on.
 *
 * The object is named after the endpoint's address and created with
 * owner-only permissions; a process that dies leaves its queues behind,
 * so each new endpoint first unlinks the queues of this user's dead
 * processes (gba_eng_ring_reap).  A queue's owner is known by pid and
 * start time (owner_slot): a leftover whose pid now belongs to another
 * process (pids are recycled) or to a zombie is dead too, so that it is
 * neither found by service (gba_eng_ep_find) nor kept.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gba_backend.h"
#include "gba_eng_priv.h"

#define GBA_ENG_NAME_FMT "/gba-fab-%u-%u-%u"

void gba_eng_ring_name(const struct gba_addr *addr, char *buf, size_t len)
{
	snprintf(buf, len, GBA_ENG_NAME_FMT, (unsigned)getuid(),
		 (unsigned)addr->pid, (unsigned)addr->ep_id);
}

static size_t ring_bytes(uint32_t nslots)
{
	return GBA_ENG_RING_HDR + (size_t)nslots * sizeof(struct gba_eng_slot);
}

int gba_eng_ring_create(const struct gba_addr *addr, uint32_t nslots,
			struct gba_eng_ring **ringp, size_t *lenp)
{
	size_t len = ring_bytes(nslots);
	struct gba_eng_ring *ring;
	char name[64], path[80];
	struct stat st;
	uint32_t i;
	int fd, ret;

	gba_eng_ring_name(addr, name, sizeof(name));
	snprintf(path, sizeof(path), "/dev/shm%s", name);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && !stat(path, &st) &&
	    st.st_uid != getuid())
		/* planted by another user, who alone can remove it */
		return gba_err_set(-EACCES,
				   "receive queue %s exists, owned by uid %u",
				   path, (unsigned)st.st_uid);
	if (fd < 0)
		return gba_err_set(errno == EEXIST ? -EADDRINUSE : -errno,
				   "shm_open %s", path);
	/* the pages now: a full /dev/shm is -ENOSPC here, not SIGBUS below */
	ret = gba_shm_reserve(fd, len, path);
	if (ret)
		goto err;
	ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		ret = gba_err_set(-errno, "mmap %s", path);
		goto err;
	}
	close(fd);
	ring->version = GBA_ENG_RING_VERSION;
	ring->nslots = nslots;
	ring->owner_slot = gba_proc_self_slot();
	for (i = 0; i < nslots; i++)
		atomic_store_explicit(&ring->slots[i].hdr.seq, i,
				      memory_order_relaxed);
	atomic_store_explicit(&ring->tail, 0, memory_order_relaxed);
	atomic_store_explicit(&ring->open, 1, memory_order_relaxed);
	/* the magic last: a mapper seeing it sees an initialised ring */
	atomic_thread_fence(memory_order_release);
	ring->magic = GBA_ENG_RING_MAGIC;
	*ringp = ring;
	*lenp = len;
	return 0;
err:
	close(fd);
	shm_unlink(name);
	return ret;
}

int gba_eng_ring_map(const struct gba_addr *addr, struct gba_eng_ring **ringp,
		     size_t *lenp)
{
	struct gba_eng_ring *ring;
	struct stat st;
	char name[64];
	int fd, ret;

	gba_eng_ring_name(addr, name, sizeof(name));
	fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return errno == ENOENT ? -EHOSTUNREACH
				       : gba_err_set(-errno,
						     "shm_open /dev/shm%s",
						     name);
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	if (st.st_uid != getuid() || (st.st_mode & 077)) {
		ret = gba_err_set(-EACCES,
				  "receive queue /dev/shm%s: owner uid %u, mode "
				  "%03o (need uid %u, mode 0600)",
				  name, (unsigned)st.st_uid,
				  (unsigned)(st.st_mode & 0777),
				  (unsigned)getuid());
		goto out;
	}
	if ((size_t)st.st_size < GBA_ENG_RING_HDR) {
		ret = -EHOSTUNREACH; /* still being created, or broken */
		goto out;
	}
	ring = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	if (ring->magic != GBA_ENG_RING_MAGIC ||
	    ring->version != GBA_ENG_RING_VERSION ||
	    !ring->nslots || (ring->nslots & (ring->nslots - 1)) ||
	    ring_bytes(ring->nslots) != (size_t)st.st_size ||
	    !atomic_load_explicit(&ring->open, memory_order_acquire)) {
		munmap(ring, (size_t)st.st_size);
		ret = -EHOSTUNREACH;
		goto out;
	}
	*ringp = ring;
	*lenp = (size_t)st.st_size;
	ret = 0;
out:
	close(fd);
	return ret;
}

void gba_eng_ring_unmap(struct gba_eng_ring *ring, size_t len)
{
	munmap(ring, len);
}

void gba_eng_ring_destroy(struct gba_eng_ring *ring, size_t len,
			  const struct gba_addr *addr)
{
	char name[64];

	atomic_store_explicit(&ring->open, 0, memory_order_release);
	gba_eng_ring_name(addr, name, sizeof(name));
	shm_unlink(name);
	munmap(ring, len);
}

/*
 * Is queue @dname of directory @dir (a /dev/shm entry named after process
 * @pid) owned by a live process?  Once initialised, the queue names its
 * owner by pid and start time (gba_proc_slot_alive: recycled pids and
 * zombies are dead); a queue still being created is judged by its pid.
 */
static bool ring_owner_alive(DIR *dir, const char *dname, unsigned pid)
{
	struct gba_eng_ring hdr;
	ssize_t n;
	int fd;

	if (kill((pid_t)pid, 0) && errno == ESRCH)
		return false;
	fd = openat(dirfd(dir), dname, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno != ENOENT;
	n = pread(fd, &hdr, offsetof(struct gba_eng_ring, open), 0);
	close(fd);
	if (n != (ssize_t)offsetof(struct gba_eng_ring, open) ||
	    hdr.magic != GBA_ENG_RING_MAGIC)
		return gba_proc_slot_alive(pid); /* being created */
	/* a queue naming another owner than its name is nobody's */
	return GBA_SLOT_PID(hdr.owner_slot) == (pid_t)pid &&
	       gba_proc_slot_alive(hdr.owner_slot);
}

void gba_eng_ring_reap(void)
{
	char prefix[32], name[300];
	unsigned uid, pid, ep_id;
	struct dirent *de;
	DIR *dir;
	int n;

	n = snprintf(prefix, sizeof(prefix), "gba-fab-%u-", (unsigned)getuid());
	dir = opendir("/dev/shm");
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, prefix, (size_t)n))
			continue;
		if (sscanf(de->d_name, "gba-fab-%u-%u-%u", &uid, &pid,
			   &ep_id) != 3)
			continue;
		if (ring_owner_alive(dir, de->d_name, pid))
			continue;
		snprintf(name, sizeof(name), "/%s", de->d_name);
		shm_unlink(name);
	}
	closedir(dir);
}

int gba_eng_ep_find(uint32_t ep_id, struct gba_addr *addr)
{
	char prefix[32];
	unsigned uid, pid, id, found = 0, found_pid = 0;
	struct dirent *de;
	DIR *dir;
	int n;

	if (!addr)
		return -EINVAL;
	n = snprintf(prefix, sizeof(prefix), "gba-fab-%u-", (unsigned)getuid());
	dir = opendir("/dev/shm");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, prefix, (size_t)n) ||
		    sscanf(de->d_name, "gba-fab-%u-%u-%u", &uid, &pid, &id) != 3 ||
		    id != ep_id || pid == (unsigned)getpid())
			continue;
		if (!ring_owner_alive(dir, de->d_name, pid))
			continue; /* a crash leftover */
		found++;
		found_pid = pid;
	}
	closedir(dir);
	if (found != 1)
		return found ? -EADDRNOTAVAIL : -ENOENT;
	memset(addr, 0, sizeof(*addr));
	addr->magic = GBA_ADDR_MAGIC;
	addr->version = GBA_ADDR_VERSION;
	addr->pid = found_pid;
	addr->ep_id = ep_id;
	addr->host_id = gba_host_id();
	return 0;
}
