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
 * The object is named after the job, the endpoint's address
 * (/gba-fab-<uid>-<job>-<pid>-<ep_id>, job = gba_job_id() in hex), so that
 * a process reaches the queues of its own job only, and is created
 * owner-only.  It is made as an unnamed file (O_TMPFILE in /dev/shm),
 * reserved (posix_fallocate: a full /dev/shm is an error here, never a
 * SIGBUS later), mapped and initialised, and only then linked under its
 * name: no process ever finds a queue that cannot receive yet.  Its owner
 * keeps the file open with a shared flock(2) for the endpoint's life,
 * which the kernel drops when the process dies, however it dies.
 *
 * A process that dies leaves its queues behind, so each new endpoint
 * first unlinks the queues of this user's dead processes
 * (gba_eng_ring_reap).  A queue's owner is known by pid and start time
 * (owner_slot): a leftover whose pid now belongs to another process (pids
 * are recycled) or to a zombie is dead too.
 *
 * Services: an endpoint whose number others find without an address
 * (fabtests' node/service mode) claims it with a second name for the same
 * file, /gba-svc-<uid>-<job>-<ep_id>: one endpoint per service, user, job
 * and host, like a bound port (gba_eng_ring_claim_service).  A claim whose
 * file nobody holds any more (its flock gone) is taken over.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gba/gba_job.h>

#include "gba_backend.h"
#include "gba_eng_priv.h"

#define GBA_SHM_DIR "/dev/shm"
#define GBA_ENG_NAME_FMT "/gba-fab-%u-%016" PRIx64 "-%u-%u"
#define GBA_ENG_SVC_FMT "/gba-svc-%u-%016" PRIx64 "-%u"
#define GBA_ENG_CLAIM_TRIES 8

void gba_eng_ring_name(const struct gba_addr *addr, char *buf, size_t len)
{
	snprintf(buf, len, GBA_ENG_NAME_FMT, (unsigned)getuid(), gba_job_id(),
		 (unsigned)addr->pid, (unsigned)addr->ep_id);
}

/* /dev/shm path of service @ep_id of this user and job, into @buf. */
static void svc_path(uint32_t ep_id, char *buf, size_t len)
{
	snprintf(buf, len, GBA_SHM_DIR GBA_ENG_SVC_FMT, (unsigned)getuid(),
		 gba_job_id(), (unsigned)ep_id);
}

static size_t ring_bytes(uint32_t nslots)
{
	return GBA_ENG_RING_HDR + (size_t)nslots * sizeof(struct gba_eng_slot);
}

int gba_eng_ring_create(const struct gba_addr *addr, uint32_t nslots,
			struct gba_eng_ring **ringp, size_t *lenp, int *fdp)
{
	size_t len = ring_bytes(nslots);
	char name[64], path[96], self[64];
	struct gba_eng_ring *ring;
	struct stat st;
	uint32_t i;
	int fd, ret;

	gba_eng_ring_name(addr, name, sizeof(name));
	snprintf(path, sizeof(path), GBA_SHM_DIR "%s", name);
	fd = open(GBA_SHM_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return gba_err_set(-errno, "open %s (O_TMPFILE)", path);
	/* the pages now: a full /dev/shm is -ENOSPC here, not SIGBUS below */
	ret = gba_shm_reserve(fd, len, path);
	if (ret)
		goto err;
	ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		ret = gba_err_set(-errno, "mmap %s", path);
		goto err;
	}
	ring->version = GBA_ENG_RING_VERSION;
	ring->nslots = nslots;
	ring->owner_slot = gba_proc_self_slot();
	ring->owner_va = (uintptr_t)ring;
	for (i = 0; i < nslots; i++)
		atomic_store_explicit(&ring->slots[i].hdr.seq, i,
				      memory_order_relaxed);
	atomic_store_explicit(&ring->tail, 0, memory_order_relaxed);
	atomic_store_explicit(&ring->open, 1, memory_order_relaxed);
	/* the magic last: a mapper seeing it sees an initialised ring */
	atomic_thread_fence(memory_order_release);
	ring->magic = GBA_ENG_RING_MAGIC;
	/* held until the process closes the endpoint or dies */
	if (flock(fd, LOCK_SH | LOCK_NB)) {
		ret = -errno;
		goto err_unmap;
	}
	/* and only now findable, under its name */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW)) {
		ret = -errno;
		if (ret == -EEXIST && !stat(path, &st) &&
		    st.st_uid != getuid())
			/* planted by another user, who alone can remove it */
			ret = gba_err_set(-EACCES,
					  "receive queue %s exists, owned by "
					  "uid %u",
					  path, (unsigned)st.st_uid);
		else
			ret = gba_err_set(ret == -EEXIST ? -EADDRINUSE : ret,
					  "link %s", path);
		goto err_unmap;
	}
	*ringp = ring;
	*lenp = len;
	*fdp = fd;
	return 0;
err_unmap:
	munmap(ring, len);
err:
	close(fd);
	return ret;
}

/*
 * Can this process take over the claim @fd (an open service name)?  It
 * can once nobody holds the file (its owner closed or died): then the
 * exclusive lock is taken, and kept until @fd is closed, so that no one
 * else takes it over at the same time.
 */
static bool svc_abandoned(int fd)
{
	return !flock(fd, LOCK_EX | LOCK_NB);
}

/* Does /dev/shm path @path still name the file open as @fd? */
static bool same_file(const char *path, int fd)
{
	struct stat a, b;

	return !stat(path, &a) && !fstat(fd, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int gba_eng_ring_claim_service(int ring_fd, uint32_t ep_id)
{
	char path[96], tmp[128], self[64];
	int tries, fd, ret = -EADDRINUSE;

	svc_path(ep_id, path, sizeof(path));
	snprintf(self, sizeof(self), "/proc/self/fd/%d", ring_fd);
	for (tries = 0; tries < GBA_ENG_CLAIM_TRIES; tries++) {
		if (!linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW))
			return 0;
		if (errno != EEXIST)
			return -errno;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* released meanwhile: again */
			return -errno;
		}
		if (!svc_abandoned(fd)) {
			close(fd);
			return -EADDRINUSE; /* a live endpoint has it */
		}
		/* ours to replace, unless replaced since it was opened */
		ret = -EADDRINUSE;
		if (same_file(path, fd)) {
			snprintf(tmp, sizeof(tmp), "%s.%u", path,
				 (unsigned)getpid());
			unlink(tmp);
			if (linkat(AT_FDCWD, self, AT_FDCWD, tmp,
				   AT_SYMLINK_FOLLOW))
				ret = -errno;
			else if (!rename(tmp, path))
				ret = 0;
			else {
				ret = -errno;
				unlink(tmp);
			}
		}
		close(fd);
		if (!ret || ret != -EADDRINUSE)
			return ret;
	}
	return ret;
}

void gba_eng_ring_release_service(int ring_fd, uint32_t ep_id)
{
	char path[96];

	/* nobody takes it over while this process holds the file */
	svc_path(ep_id, path, sizeof(path));
	if (same_file(path, ring_fd))
		unlink(path);
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
			  const struct gba_addr *addr, int fd)
{
	char name[64];

	atomic_store_explicit(&ring->open, 0, memory_order_release);
	gba_eng_ring_name(addr, name, sizeof(name));
	shm_unlink(name);
	munmap(ring, len);
	close(fd);
}

/*
 * Unlink entry @dname of directory @dir if no live endpoint holds it.  Its
 * owner holds the file with a shared flock(2) until it closes the
 * endpoint or dies (a crash, a zombie: the kernel drops the lock with the
 * process's files), so a file no one holds is a leftover.  The exclusive
 * lock taken to find out is kept while the name is checked to still be
 * that file and unlinked: a service name is only ever replaced by a
 * process holding its file exclusively (gba_eng_ring_claim_service).
 */
static void reap_entry(DIR *dir, const char *dname)
{
	char path[300];
	int fd;

	fd = openat(dirfd(dir), dname, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	snprintf(path, sizeof(path), GBA_SHM_DIR "/%s", dname);
	if (!flock(fd, LOCK_EX | LOCK_NB) && same_file(path, fd))
		unlink(path);
	close(fd);
}

void gba_eng_ring_reap(void)
{
	char fab[32], svc[32];
	size_t nfab, nsvc;
	struct dirent *de;
	DIR *dir;

	/* every job's, and the leftovers of earlier versions */
	nfab = (size_t)snprintf(fab, sizeof(fab), "gba-fab-%u-",
				(unsigned)getuid());
	nsvc = (size_t)snprintf(svc, sizeof(svc), "gba-svc-%u-",
				(unsigned)getuid());
	dir = opendir(GBA_SHM_DIR);
	if (!dir)
		return;
	while ((de = readdir(dir)))
		if (!strncmp(de->d_name, fab, nfab) ||
		    !strncmp(de->d_name, svc, nsvc))
			reap_entry(dir, de->d_name);
	closedir(dir);
}

int gba_eng_ep_find(uint32_t ep_id, struct gba_addr *addr)
{
	struct gba_eng_ring hdr;
	char path[96];
	ssize_t n;
	int fd;

	if (!addr)
		return -EINVAL;
	svc_path(ep_id, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	n = pread(fd, &hdr, offsetof(struct gba_eng_ring, open), 0);
	/* a claim its endpoint no longer holds is a leftover */
	if (!flock(fd, LOCK_EX | LOCK_NB) ||
	    n != (ssize_t)offsetof(struct gba_eng_ring, open) ||
	    hdr.magic != GBA_ENG_RING_MAGIC ||
	    hdr.version != GBA_ENG_RING_VERSION) {
		close(fd);
		return -ENOENT;
	}
	close(fd);
	memset(addr, 0, sizeof(*addr));
	addr->magic = GBA_ADDR_MAGIC;
	addr->version = GBA_ADDR_VERSION;
	addr->pid = (uint32_t)GBA_SLOT_PID(hdr.owner_slot);
	addr->ep_id = ep_id;
	addr->host_id = gba_host_id();
	return 0;
}

/* The slots a dead claimer's entry @hdr took (its header's own word). */
static uint32_t dead_claim_span(const struct gba_eng_ep *ep,
				const struct gba_eng_hdr *hdr)
{
	uint32_t n = hdr->iov_count;

	if ((hdr->xflags & GBA_ENG_X_SLOTS) && n >= 2 &&
	    n <= GBA_ENG_MAX_IOV && n <= (ep->rx_mask + 1) / 2)
		return n;
	return 1;
}

void gba_eng_ring_skip_dead(struct gba_eng_ep *ep)
{
	struct gba_eng_ring *rx = ep->rx;
	struct gba_eng_slot *slot;
	uint32_t pid, span, i;

	while (atomic_load_explicit(&rx->tail, memory_order_relaxed) !=
	       ep->head) {
		slot = &rx->slots[ep->head & ep->rx_mask];
		/* published (progress takes it), or not claimed */
		if (!gba_eng_slot_at(slot, ep->head))
			return;
		pid = __atomic_load_n(&slot->hdr.src_pid, __ATOMIC_RELAXED);
		if (!pid || gba_proc_slot_alive((uint32_t)pid))
			return;
		span = dead_claim_span(ep, &slot->hdr);
		if (ep->nskipped++ < GBA_ENG_BAD_LOG_MAX)
			fprintf(stderr,
				"libgba: process %u died holding %u slot(s) "
				"of receive queue /dev/shm/gba-fab-%u-*-%u-%u "
				"(position %" PRIu64 "): skipped\n",
				(unsigned)pid, (unsigned)span,
				(unsigned)getuid(), (unsigned)ep->addr.pid,
				(unsigned)ep->addr.ep_id, ep->head);
		for (i = span; i-- > 0;)
			gba_eng_ring_hand_back(
				&rx->slots[(ep->head + i) & ep->rx_mask],
				ep->head + i + ep->rx_mask + 1);
		__atomic_store_n(&ep->head, ep->head + span, __ATOMIC_RELAXED);
	}
}
