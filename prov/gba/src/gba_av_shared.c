/*
 * libfabric "gba" provider: named address vectors shared between
 * processes (fi_av(3) "name", FI_SHARED_AV).
 *
 * The process that opens a named AV without FI_READ creates a POSIX
 * shared-memory table "/gba-av-<uid>-<name>" (owner-only) holding every
 * entry at its fi_addr; its inserts and removals update the table.  A
 * process that opens the same name with FI_READ maps the table read-only
 * and sees the same addresses at the same fi_addr values: entries the
 * creator adds later are imported when a lookup misses (removals after
 * the import are not seen).  attr->map_addr points to the fi_addr of
 * each table entry (entry i is fi_addr i).  A read-only AV refuses
 * inserts and removals.  The creator removes the name when it closes the
 * AV.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gba_obj.h"

#define GBA_AV_SHM_MAGIC 0x4741424156534852ULL /* "GBAAVSHR" */
#define GBA_AV_SHM_DEF_CAPACITY 1024

struct gba_av_shm_entry {
	struct gba_addr addr;
	uint32_t used;
	uint32_t pad;
};

struct gba_av_shm {
	uint64_t magic;
	uint32_t capacity;
	_Atomic uint32_t count; /* highest fi_addr used + 1 */
	struct gba_av_shm_entry entries[];
};

/* "/gba-av-<uid>-<name>" with the name's slashes replaced. */
static char *gba_av_shm_name(const char *name)
{
	size_t len = strlen(name) + 32, i, start;
	char *s = malloc(len);

	if (!s)
		return NULL;
	start = (size_t)snprintf(s, len, "/gba-av-%u-", (unsigned)getuid());
	snprintf(s + start, len - start, "%s", name);
	for (i = start; s[i]; i++)
		if (s[i] == '/')
			s[i] = '_';
	return s;
}

/* Create (or take over) the table of a named AV.  0 or -FI_E*. */
static int gba_av_shm_create(struct gba_av *av, size_t capacity)
{
	size_t len = sizeof(struct gba_av_shm) +
		     capacity * sizeof(struct gba_av_shm_entry);
	struct gba_av_shm *shm;
	int fd, err;

	fd = shm_open(av->shm_name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0600);
	if (fd < 0)
		return GBA_WARN_RET(FI_LOG_AV, errno == EACCES ? -FI_EACCES
							       : -FI_EINVAL,
				    "fi_av_open: shared AV %s: %s\n",
				    av->shm_name, strerror(errno));
	/* the pages now: a full /dev/shm is an error here, not SIGBUS */
	err = posix_fallocate(fd, 0, (off_t)len);
	if (err) {
		close(fd);
		shm_unlink(av->shm_name);
		return GBA_WARN_RET(FI_LOG_AV, gba_errno_to_fi(-err),
				    "fi_av_open: shared AV /dev/shm%s (%zu "
				    "bytes): posix_fallocate: %s\n",
				    av->shm_name, len, strerror(err));
	}
	shm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (shm == MAP_FAILED)
		return -FI_ENOMEM;
	shm->capacity = (uint32_t)capacity;
	atomic_store(&shm->count, 0);
	shm->magic = GBA_AV_SHM_MAGIC;
	av->shm = shm;
	av->shm_len = len;
	av->shm_capacity = (uint32_t)capacity;
	av->shm_owner = true;
	return 0;
}

/*
 * Import the entries the creator added since the last import (locked).
 * The table is another process's memory: the count is bounded by the
 * capacity checked at import, and an entry that is not a gba address is
 * skipped with a log line.
 */
static int gba_av_shm_sync(struct gba_av *av)
{
	struct gba_av_shm *shm = av->shm;
	uint32_t count = atomic_load(&shm->count), i;
	struct gba_addr addr;
	int ret;

	if (count > av->shm_capacity)
		count = av->shm_capacity;
	for (i = (uint32_t)av->shm_seen; i < count; i++) {
		if (!shm->entries[i].used)
			continue;
		memcpy(&addr, &shm->entries[i].addr, sizeof(addr));
		if (!gba_addr_valid(&addr, sizeof(addr))) {
			FI_WARN(&gba_prov, FI_LOG_AV,
				"shared AV %s: entry %u is not a gba address; "
				"skipped\n",
				av->shm_name, i);
			continue;
		}
		ret = av->shm_insert(av, i, &addr);
		if (ret && ret != -FI_EALREADY)
			return ret;
	}
	av->shm_seen = count;
	return 0;
}

/* Map the table of a named AV (FI_READ) and import it.  0 or -FI_E*. */
static int gba_av_shm_import(struct gba_av *av, struct fi_av_attr *attr)
{
	struct gba_av_shm *shm;
	struct stat st;
	uint32_t i;
	int fd, ret;

	fd = shm_open(av->shm_name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return GBA_WARN_RET(FI_LOG_AV, -FI_ENOENT,
				    "fi_av_open(FI_READ): no shared AV %s\n",
				    av->shm_name);
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(*shm)) {
		close(fd);
		return -FI_EINVAL;
	}
	shm = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (shm == MAP_FAILED)
		return -FI_ENOMEM;
	if (shm->magic != GBA_AV_SHM_MAGIC ||
	    sizeof(*shm) + (size_t)shm->capacity * sizeof(shm->entries[0]) >
		    (size_t)st.st_size) {
		munmap(shm, (size_t)st.st_size);
		return GBA_WARN_RET(FI_LOG_AV, -FI_EINVAL,
				    "fi_av_open: %s is not a gba shared AV\n",
				    av->shm_name);
	}
	av->shm = shm;
	av->shm_len = (size_t)st.st_size;
	av->shm_capacity = shm->capacity;
	/* fi_addr i is entry i: the map is the identity over the table */
	av->map_addr = calloc(av->shm_capacity ? av->shm_capacity : 1,
			      sizeof(fi_addr_t));
	if (!av->map_addr)
		return -FI_ENOMEM;
	for (i = 0; i < av->shm_capacity; i++)
		av->map_addr[i] = i;
	gba_lock_acquire(&av->lock);
	ret = gba_av_shm_sync(av);
	gba_lock_release(&av->lock);
	if (ret)
		return ret;
	attr->map_addr = av->map_addr;
	return 0;
}

/*
 * gba_av_shared_refresh - FI_READ AV: import the entries the creator
 * added since the last import.  Returns true if any was imported.
 */
bool gba_av_shared_refresh(struct gba_av *av)
{
	size_t before;
	bool more;

	if (!av->shm || av->shm_owner)
		return false;
	gba_lock_acquire(&av->lock);
	before = av->live;
	gba_av_shm_sync(av);
	more = av->live != before;
	gba_lock_release(&av->lock);
	return more;
}

/*
 * gba_av_shared_open - create or import the table of a named AV (see
 * gba_prov.h); @insert imports entries into @av.  Returns 0, -FI_ENOENT,
 * -FI_EINVAL, -FI_ENOMEM.
 */
int gba_av_shared_open(struct gba_av *av, struct fi_av_attr *attr,
		       int (*insert)(struct gba_av *av, size_t index,
				     const struct gba_addr *addr))
{
	int ret;

	av->shm_insert = insert;
	av->shm_name = gba_av_shm_name(attr->name);
	if (!av->shm_name)
		return -FI_ENOMEM;
	if (attr->flags & FI_READ)
		ret = gba_av_shm_import(av, attr);
	else
		ret = gba_av_shm_create(av, attr->count ? attr->count
							: GBA_AV_SHM_DEF_CAPACITY);
	if (ret) {
		free(av->shm_name);
		av->shm_name = NULL;
	}
	return ret;
}

/*
 * gba_av_shared_set - the creator records entry @index (@addr NULL:
 * removed) in the table; no-op for other AVs.
 */
void gba_av_shared_set(struct gba_av *av, size_t index,
		       const struct gba_addr *addr)
{
	struct gba_av_shm *shm = av->shm;

	if (!shm || !av->shm_owner)
		return;
	if (index >= av->shm_capacity) {
		FI_WARN(&gba_prov, FI_LOG_AV,
			"shared AV %s holds %u entries: fi_addr %zu is not "
			"shared\n",
			av->shm_name, av->shm_capacity, index);
		return;
	}
	if (addr)
		shm->entries[index].addr = *addr;
	shm->entries[index].used = addr != NULL;
	if (index >= atomic_load(&shm->count))
		atomic_store(&shm->count, (uint32_t)index + 1);
}

/* gba_av_shared_close - unmap the table (the creator removes it). */
void gba_av_shared_close(struct gba_av *av)
{
	if (av->shm) {
		munmap(av->shm, av->shm_len);
		if (av->shm_owner)
			shm_unlink(av->shm_name);
	}
	free(av->shm_name);
	free(av->map_addr);
}
