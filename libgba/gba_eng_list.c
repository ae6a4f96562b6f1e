/*
 * GBA core library: listing the fabric engine's endpoints of this user
 * (gba_eng_ep_list in gba_eng.h), for gba_stat(1).
 *
 * The receive queues are the files /dev/shm/gba-fab-<uid>-<job>-<pid>-
 * <ep_id> (gba_eng_ring.c).  Each is read, never written: its header
 * (magic, version, slot count) and each slot's sequence word.  The queue
 * is a Vyukov ring: slot i's sequence is i (mod nslots) while free, i + 1
 * once a producer published an entry into it, i + nslots once the owner
 * consumed it; so published, unconsumed entries are the slots whose
 * sequence is i + 1 modulo nslots.  A message in several slots publishes
 * its first only and counts once.  The file is untrusted (every process
 * of the user can write it): sizes are checked before mapping.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gba_backend.h"
#include "gba_eng_priv.h"

#define GBA_LIST_DIR "/dev/shm"

/* Slot count and pending entries of the queue open as @fd. */
static void list_ring(int fd, struct gba_eng_ep_info *info)
{
	struct gba_eng_ring hdr;
	const struct gba_eng_ring *ring;
	uint32_t i, n, mask;
	struct stat st;
	size_t len;

	if (fstat(fd, &st) || st.st_uid != getuid() ||
	    (size_t)st.st_size < GBA_ENG_RING_HDR ||
	    pread(fd, &hdr, offsetof(struct gba_eng_ring, tail), 0) !=
		    (ssize_t)offsetof(struct gba_eng_ring, tail))
		return;
	n = hdr.nslots;
	if (hdr.magic != GBA_ENG_RING_MAGIC ||
	    hdr.version != GBA_ENG_RING_VERSION || !n ||
	    n > GBA_ENG_RX_SLOTS_MAX || (n & (n - 1)))
		return;
	len = GBA_ENG_RING_HDR + (size_t)n * sizeof(struct gba_eng_slot);
	if ((size_t)st.st_size != len)
		return;
	ring = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED)
		return;
	info->valid = 1;
	info->slots = n;
	mask = n - 1;
	for (i = 0; n > 1 && i <= mask; i++) {
		uint32_t seq = atomic_load_explicit(
			(_Atomic uint32_t *)&ring->slots[i].hdr.seq,
			memory_order_relaxed);

		if (((seq - i) & mask) == 1)
			info->pending++;
	}
	munmap((void *)ring, len);
}

/* Fill @info for directory entry @dname; 0 if it is not a queue of ours. */
static int list_entry(DIR *dir, const char *dname, unsigned uid,
		      struct gba_eng_ep_info *info)
{
	unsigned u, pid, ep;
	uint64_t job;
	int fd, end = 0;

	if (sscanf(dname, "gba-fab-%u-%16" SCNx64 "-%u-%u%n", &u, &job, &pid,
		   &ep, &end) != 4 ||
	    dname[end] || u != uid || strlen(dname) >= sizeof(info->name))
		return 0;
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", dname);
	info->job = job;
	info->pid = pid;
	info->ep_id = ep;
	fd = openat(dirfd(dir), dname,
		    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0; /* unlinked meanwhile */
	/* the owner's shared lock refuses ours; a leftover's takes it */
	info->alive = flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK;
	list_ring(fd, info);
	close(fd);
	return 1;
}

int gba_eng_ep_list(int (*cb)(const struct gba_eng_ep_info *info, void *arg),
		    void *arg)
{
	struct gba_eng_ep_info info;
	unsigned uid = (unsigned)getuid();
	struct dirent *de;
	DIR *dir;
	int ret = 0;

	if (!cb)
		return -EINVAL;
	dir = opendir(GBA_LIST_DIR);
	if (!dir)
		return -errno;
	while (!ret && (de = readdir(dir)))
		if (list_entry(dir, de->d_name, uid, &info))
			ret = cb(&info, arg);
	closedir(dir);
	return ret;
}
