/*
 * GBA core library: the control plane (group join and leave).
 *
 * Not on the hot path.  Every update of the control-plane table (struct
 * gba_book) happens under the device's exclusive lock (ops->lock: a
 * process-local mutex plus an flock that the kernel drops if the holder
 * dies).  Groups are programmed through the backend's register ops, so the
 * same code serves the emulated device and hardware (protocol steps 1
 * and 5 of doc/design.md section 3).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gba/gba_job.h>

#include "gba_backend.h"

/* How long join waits for STATUS.READY after ENABLE|ARM. */
#define GBA_READY_TIMEOUT_MS 1000
/*
 * Longest a waiter of an oversubscribed group keeps its CPU, per member
 * of the group per CPU (the others' turns it may wait for, a few context
 * switches each).
 */
#define GBA_IDLE_NS_PER_MEMBER (25 * 1000ULL)

void gba_book_init(struct gba_book *book, uint64_t image_size)
{
	memset((void *)book, 0, sizeof(*book));
	book->layout = GBA_BOOK_LAYOUT;
	book->image_size = image_size;
	/* the "initialised" marker goes last */
	atomic_store_explicit(&book->magic, GBA_BOOK_MAGIC,
			      memory_order_release);
}

static inline _Atomic uint64_t *flag_ptr(struct gba_dev *dev, unsigned g,
					 unsigned m)
{
	return (_Atomic uint64_t *)(dev->flags + (GBA_FLAG_IOVA(g, m) -
						  GBA_FLAG_OFFSET));
}

/* Limits of this device: the registers, capped at what the ABI allows. */
static unsigned dev_num_groups(struct gba_dev *dev)
{
	uint64_t n = dev->ops->read64(dev, GBA_REG_NUM_GROUPS);

	return n < GBA_MAX_GROUPS ? (unsigned)n : GBA_MAX_GROUPS;
}

static unsigned dev_max_members(struct gba_dev *dev)
{
	uint64_t n = dev->ops->read64(dev, GBA_REG_MAX_MEMBERS);

	return n < GBA_MAX_MEMBERS ? (unsigned)n : GBA_MAX_MEMBERS;
}

/* 1 if a live process is attached to @bg. */
static int book_group_live(const struct gba_book_group *bg)
{
	unsigned m;

	for (m = 0; m < bg->member_count && m < GBA_MAX_MEMBERS; m++) {
		uint64_t slot = atomic_load_explicit(&bg->slot[m],
						     memory_order_relaxed);

		if (slot && gba_proc_slot_alive(slot))
			return 1;
	}
	return 0;
}

/* Protocol step 5: reset the hardware group and free its table entry. */
static void group_free(struct gba_dev *dev, unsigned g)
{
	struct gba_book_group *bg = &dev->book->group[g];
	unsigned m;

	dev->ops->write64(dev, GBA_GROUP_REG_BASE(g) + GBA_CONTROL,
			  GBA_CTRL_RESET);
	for (m = 0; m < GBA_MAX_MEMBERS; m++)
		atomic_store_explicit(&bg->slot[m], 0, memory_order_relaxed);
	bg->attached = 0;
	bg->member_count = 0;
	bg->group_id = 0;
	bg->job = 0;
	bg->key = 0;
	bg->state = GBA_BOOK_FREE;
}

/*
 * Free the groups whose attached processes have all died, except the one
 * booked under @key, the group being joined: its members died after
 * joining it (the key names this collective of these endpoints), and
 * freeing it would forget them, so that its barriers would wait for them
 * as for members still to join, for ever.  The joiner attaches to it
 * instead, and its first barrier finds them dead (-EPIPE).
 */
static void group_reclaim(struct gba_dev *dev, unsigned num_groups,
			  uint64_t key)
{
	unsigned g;

	for (g = 0; g < num_groups; g++) {
		struct gba_book_group *bg = &dev->book->group[g];

		if (bg->state != GBA_BOOK_FREE && bg->key != key &&
		    !book_group_live(bg))
			group_free(dev, g);
	}
}

/*
 * Protocol step 1: program group @g for @n members and wait for READY.
 * The flags are zeroed first: they are host memory the switch will store
 * released sequence numbers into, and the first barrier waits for 1.
 */
static int group_program(struct gba_dev *dev, unsigned g, uint32_t group_id,
			 uint32_t n)
{
	uint64_t base = GBA_GROUP_REG_BASE(g), mask[GBA_MASK_WORDS] = {0};
	const struct gba_ops *ops = dev->ops;
	struct timespec ts = {0, 100000};
	uint64_t deadline;
	unsigned m, w;

	for (m = 0; m < n; m++) {
		atomic_store_explicit(flag_ptr(dev, g, m), 0,
				      memory_order_relaxed);
		atomic_store_explicit(flag_ptr(dev, g, m) + 1, 0,
				      memory_order_relaxed); /* GBA_WHERE */
		mask[m / 64] |= 1ULL << (m % 64);
	}
	atomic_thread_fence(memory_order_release);

	ops->write64(dev, base + GBA_CONTROL, GBA_CTRL_RESET);
	ops->write32(dev, base + GBA_GROUP_ID, group_id);
	ops->write32(dev, base + GBA_MEMBER_COUNT, n);
	for (w = 0; w < GBA_MASK_WORDS; w++)
		ops->write64(dev, base + GBA_MEMBER_MASK(w), mask[w]);
	for (m = 0; m < n; m++)
		ops->write64(dev, base + GBA_RELEASE_ADDR(m),
			     GBA_FLAG_IOVA(g, m));
	ops->write64(dev, base + GBA_CONTROL, GBA_CTRL_ENABLE | GBA_CTRL_ARM);

	deadline = gba_now_ns() + GBA_READY_TIMEOUT_MS * 1000000ULL;
	while (!(ops->read64(dev, base + GBA_STATUS) & GBA_STATUS_READY)) {
		if (gba_now_ns() > deadline) {
			ops->write64(dev, base + GBA_CONTROL, GBA_CTRL_RESET);
			return -EIO;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* GROUP_ID programmed for a key: a 32-bit fold of it, never 0. */
static uint32_t key_group_id(uint64_t key)
{
	uint32_t id = (uint32_t)(key ^ (key >> 32));

	return id ? id : 1;
}

/*
 * Members per online CPU of this host, rounded up, for a group of the
 * emulated device with more members than this host has online CPUs
 * (they cannot all run at once: a spinning member may hold the CPU that
 * a member still to arrive needs, see gba_group_should_yield); 0 for
 * other groups (members of a hardware group live on many hosts).
 */
static uint32_t gba_group_oversubscribed(struct gba_dev *dev,
					 const struct gba_group_attr *attr)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (strcmp(dev->ops->name, "emu") || cpus <= 0 ||
	    attr->member_count <= (uint32_t)cpus)
		return 0;
	return (attr->member_count + (uint32_t)cpus - 1) / (uint32_t)cpus;
}

/* Find the group of @attr->key, or allocate and program one. */
static int group_find_or_alloc(struct gba_dev *dev,
			       const struct gba_group_attr *attr,
			       unsigned *gp)
{
	unsigned g, num_groups = dev_num_groups(dev), free_g = num_groups;
	struct gba_book_group *bg;
	int ret;

	group_reclaim(dev, num_groups, attr->key);
	for (g = 0; g < num_groups; g++) {
		bg = &dev->book->group[g];
		if (bg->state == GBA_BOOK_FREE) {
			if (free_g == num_groups)
				free_g = g;
			continue;
		}
		if (bg->key != attr->key)
			continue;
		if (bg->member_count != attr->member_count)
			return -EINVAL;
		*gp = g;
		return 0;
	}
	if (free_g == num_groups)
		return -ENOSPC;

	g = free_g;
	bg = &dev->book->group[g];
	ret = group_program(dev, g, key_group_id(attr->key),
			    attr->member_count);
	if (ret)
		return ret;
	bg->key = attr->key;
	bg->member_count = attr->member_count;
	bg->group_id = key_group_id(attr->key);
	bg->job = gba_job_id();
	bg->attached = 0;
	bg->state = GBA_BOOK_ALLOCATED;
	*gp = g;
	return 0;
}

/* Find or allocate the group of @attr in the host's table and book
 * @attr->member_id for the process @self there. */
static int group_book(struct gba_dev *dev, const struct gba_group_attr *attr,
		      uint64_t self, unsigned *gp)
{
	struct gba_book_group *bg;
	uint64_t slot;
	int ret;

	ret = group_find_or_alloc(dev, attr, gp);
	if (ret)
		return ret;
	bg = &dev->book->group[*gp];
	slot = atomic_load_explicit(&bg->slot[attr->member_id],
				    memory_order_relaxed);
	if (slot && gba_proc_slot_alive(slot))
		return -EADDRINUSE;
	if (slot)
		bg->attached--;	/* take over from a dead process */
	atomic_store_explicit(&bg->slot[attr->member_id], self,
			      memory_order_release);
	bg->attached++;
	return 0;
}

/*
 * The key a group is booked under: the caller's, scoped to this process's
 * job (<gba/gba_job.h>), so that two jobs using the same rendezvous key
 * get two groups.  Never 0 (a free group's key).
 */
static uint64_t job_scoped_key(uint64_t key)
{
	uint64_t job = gba_job_id(), h;

	h = gba_fnv1a(GBA_FNV64_OFFSET, &job, sizeof(job));
	h = gba_fnv1a(h, &key, sizeof(key));
	return h ? h : 1;
}

int gba_group_join(struct gba_dev *dev, const struct gba_group_attr *in,
		   struct gba_group **grpp)
{
	struct gba_group_attr scoped, *attr = &scoped;
	struct gba_group *grp;
	uint64_t self;
	uint32_t per_cpu;
	unsigned g;
	int ret;

	if (grpp)
		*grpp = NULL;
	if (!dev || !in || !grpp || !in->key || !in->member_count ||
	    in->member_count > dev_max_members(dev) ||
	    in->member_id >= in->member_count)
		return -EINVAL;
	scoped = *in;
	scoped.key = job_scoped_key(in->key);
	if (!dev->book || !dev->flags)
		return -EIO;	/* hw without driver-provided flag memory */

	grp = calloc(1, sizeof(*grp));
	if (!grp)
		return -ENOMEM;
	self = gba_proc_self_slot();

	ret = dev->ops->lock(dev);
	if (ret) {
		free(grp);
		return ret == -ENOMEM ? ret : -EIO;
	}
	if (dev->ops->group_join)	/* the switch allocates (gba_net.c) */
		ret = dev->ops->group_join(dev, attr, self, &g);
	else
		ret = group_book(dev, attr, self, &g);
	if (ret)
		goto out;

	grp->dev = dev;
	grp->index = g;
	grp->member_id = attr->member_id;
	grp->member_count = attr->member_count;
	grp->key = attr->key;
	grp->slot = self;
	grp->doorbell = dev->ops->doorbell;
	grp->regs = gba_group_regs(dev, g);
	grp->flag = flag_ptr(dev, g, attr->member_id);
	/*
	 * The next barrier is RELEASE_SEQ + 1: 1 for a new group, and the
	 * current epoch for a member joining (or re-joining) a running one.
	 */
	grp->seq = (uint32_t)dev->ops->read64(dev, GBA_GROUP_REG_BASE(g) +
						   GBA_RELEASE_SEQ);
	per_cpu = gba_group_oversubscribed(dev, attr);
	grp->spin = per_cpu ? 0 : GBA_SPIN_MAX;
	grp->test_clock_mask = per_cpu ? 3 : 255;
	if (per_cpu) {
		grp->where = flag_ptr(dev, g, attr->member_id) + 1;
		grp->board = (uint8_t *)flag_ptr(dev, g, 0);
		grp->idle_max_ns = per_cpu * GBA_IDLE_NS_PER_MEMBER;
	}
	grp->next = dev->groups;
	dev->groups = grp;
	*grpp = grp;
	grp = NULL;
out:
	dev->ops->unlock(dev);
	free(grp);
	return ret;
}

int gba_group_leave(struct gba_group *grp)
{
	struct gba_dev *dev;
	struct gba_book_group *bg;
	struct gba_group **pp;
	int locked;

	if (!grp || !grp->dev)
		return -EINVAL;
	dev = grp->dev;
	locked = !dev->ops->lock(dev);
	if (locked && dev->ops->group_leave) {
		dev->ops->group_leave(dev, grp->index, grp->member_id,
				      grp->key, grp->slot);
	} else if (locked) {
		bg = &dev->book->group[grp->index];
		/* the table entry may have been reclaimed if this process
		 * was thought dead (e.g. a handle used across fork) */
		if (bg->state != GBA_BOOK_FREE && bg->key == grp->key) {
			uint64_t expect = grp->slot;

			if (atomic_compare_exchange_strong(
				    &bg->slot[grp->member_id], &expect, 0))
				bg->attached--;
			if (!book_group_live(bg))
				group_free(dev, grp->index);
		}
	} else {
		pthread_mutex_lock(&dev->mutex);
	}
	for (pp = &dev->groups; *pp; pp = &(*pp)->next) {
		if (*pp == grp) {
			*pp = grp->next;
			break;
		}
	}
	if (locked)
		dev->ops->unlock(dev);
	else
		pthread_mutex_unlock(&dev->mutex);
	grp->dev = NULL;
	free(grp);
	return 0;
}
