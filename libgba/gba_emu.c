/*
 * GBA core library: the emulated device's image and register ops.
 *
 * The image is a POSIX shared-memory object (default "/gba-emu-<uid>")
 * holding the register map of gba_regs.h at offset 0, then the flag area,
 * the control-plane table and the switch's private state (layout in
 * gba_backend.h).  It is created on first use with mode 0600 and
 * initialised under an exclusive flock: concurrent openers block on the
 * flock until the creator has set the "initialised" marker (book->magic);
 * if the creator died half way (the kernel dropped its flock), the next
 * opener finds the marker unset and initialises the image itself.
 * Images not owned by the caller or accessible by group/others are
 * refused with -EACCES.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gba/gba_addr.h>

#include "gba_emu.h"

#define REG(base, off) ((uint64_t *)((uint8_t *)(base) + (off)))

/* ---- Register ops ---------------------------------------------------------- */

/* A load of nothing: outside the BAR or misaligned (all ones, as a PCIe
 * read that no register claims). */
#define EMU_READ_NONE UINT64_MAX

/*
 * A load from the BAR.  The epoch registers of a group window are derived
 * from the switch state (gba_emu_sw_read); everything else is stored in
 * the image.
 */
static uint64_t emu_read64(struct gba_dev *dev, uint64_t off)
{
	uint64_t r = (off - GBA_GROUP_REG_OFFSET) % GBA_GROUP_REG_STRIDE;

	if (off >= GBA_BAR_SIZE || (off & 7))
		return EMU_READ_NONE;
	if (off >= GBA_GROUP_REG_OFFSET && gba_emu_sw_derived(r))
		return gba_emu_sw_read(dev, (off - GBA_GROUP_REG_OFFSET) /
						    GBA_GROUP_REG_STRIDE,
				       r);
	return __atomic_load_n(REG(dev->bar, off), __ATOMIC_ACQUIRE);
}

static uint32_t emu_read32(struct gba_dev *dev, uint64_t off)
{
	uint64_t r = (off - GBA_GROUP_REG_OFFSET) % GBA_GROUP_REG_STRIDE;

	if (off >= GBA_BAR_SIZE || (off & 3))
		return (uint32_t)EMU_READ_NONE;
	if (off >= GBA_GROUP_REG_OFFSET && gba_emu_sw_derived(r & ~7ULL))
		return (uint32_t)(emu_read64(dev, off & ~7ULL) >>
				  (8 * (off & 4)));
	return __atomic_load_n((uint32_t *)(dev->bar + off), __ATOMIC_ACQUIRE);
}

/*
 * Decode a store into the BAR.  Global registers are read-only; in a group
 * window the configuration registers are plain storage, CONTROL and
 * ARRIVAL run the switch, read-only registers ignore stores.
 */
static void emu_write64(struct gba_dev *dev, uint64_t off, uint64_t val)
{
	uint64_t r;
	unsigned g;

	if (off < GBA_GROUP_REG_OFFSET || off >= GBA_BAR_SIZE || (off & 7))
		return;
	g = (off - GBA_GROUP_REG_OFFSET) / GBA_GROUP_REG_STRIDE;
	r = (off - GBA_GROUP_REG_OFFSET) % GBA_GROUP_REG_STRIDE;

	if (r == GBA_ARRIVAL) {
		gba_emu_sw_arrival(dev, g, val);
	} else if (r == GBA_CONTROL) {
		gba_emu_sw_control(dev, g, val);
	} else if (r == GBA_GROUP_ID || /* GROUP_ID and MEMBER_COUNT */
		   (r >= GBA_MEMBER_MASK(0) &&
		    r < GBA_MEMBER_MASK(GBA_MASK_WORDS)) ||
		   (r >= GBA_RELEASE_ADDR(0) &&
		    r < GBA_RELEASE_ADDR(GBA_MAX_MEMBERS))) {
		__atomic_store_n(REG(dev->bar, off), val, __ATOMIC_RELEASE);
	}
	/* else: read-only or reserved, ignored */
}

static void emu_write32(struct gba_dev *dev, uint64_t off, uint32_t val)
{
	uint64_t r;

	if (off < GBA_GROUP_REG_OFFSET || off >= GBA_BAR_SIZE || (off & 3))
		return;
	r = (off - GBA_GROUP_REG_OFFSET) % GBA_GROUP_REG_STRIDE;
	/* only the two u32 registers take 32-bit stores */
	if (r == GBA_GROUP_ID || r == GBA_MEMBER_COUNT)
		__atomic_store_n((uint32_t *)(dev->bar + off), val,
				 __ATOMIC_RELEASE);
}

/* ---- Control-plane lock ------------------------------------------------------ */

static int emu_reopen(struct gba_dev *dev)
{
	int fd = shm_open(dev->path, O_RDWR | O_CLOEXEC, 0);

	return fd < 0 ? -errno : fd;
}

static int emu_lock(struct gba_dev *dev)
{
	return gba_flock(dev, emu_reopen);
}

static void emu_unlock(struct gba_dev *dev)
{
	gba_funlock(dev);
}

static void emu_fini(struct gba_dev *dev)
{
	struct gba_emu *emu = gba_emu(dev);

	if (emu) {
		munmap(emu->base, emu->size);
		free(emu);
	}
	if (dev->lock_fd >= 0 && dev->lock_fd != dev->fd)
		close(dev->lock_fd);
	if (dev->fd >= 0)
		close(dev->fd);
	dev->priv = NULL;
	dev->fd = dev->lock_fd = -1;
}

static const struct gba_ops gba_emu_ops = {
	.name = "emu",
	.read64 = emu_read64,
	.read32 = emu_read32,
	.write64 = emu_write64,
	.write32 = emu_write32,
	.doorbell = gba_emu_sw_arrival,	/* the switch, called directly */
	.report_error = gba_emu_sw_report_error,
	.lock = emu_lock,
	.unlock = emu_unlock,
	.fini = emu_fini,
};

/* ---- Image creation ----------------------------------------------------------- */

/* Write the power-on state of the device into a (zero-filled) image. */
static void emu_image_init(struct gba_emu *emu, volatile uint8_t *bar)
{
	struct gba_book *book = (void *)(emu->base + GBA_BOOK_OFFSET);
	unsigned g;

	/* a creator may have died half way: start from all zeros */
	memset(emu->base, 0, emu->size);
	*REG(bar, GBA_REG_ID) = GBA_ID_MAGIC;
	*REG(bar, GBA_REG_VERSION) = GBA_ABI_VERSION;
	*REG(bar, GBA_REG_NUM_GROUPS) = GBA_MAX_GROUPS;
	*REG(bar, GBA_REG_MAX_MEMBERS) = GBA_MAX_MEMBERS;
	/* the "switch" of the emulated fabric is this host */
	*REG(bar, GBA_REG_NETWORK_ADDR) = gba_host_id();
	for (g = 0; g < GBA_MAX_GROUPS; g++)
		gba_emu_sw_reset(emu,
				 (volatile uint64_t *)(bar +
						       GBA_GROUP_REG_BASE(g)),
				 &emu->sw[g]);
	gba_book_init(book, emu->size);	/* sets the marker last */
}

/* Open or create the image; returns the descriptor or a negative errno. */
static int emu_image_open(const char *name)
{
	struct stat st;
	int fd, tries;

	for (tries = 0; tries < 100; tries++) {
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			      0600);
		if (fd >= 0) {
			/* the umask must not take away our own access */
			if (fchmod(fd, 0600)) {
				close(fd);
				return -errno;
			}
			return fd;
		}
		if (errno != EEXIST)
			return errno == ENAMETOOLONG
				       ? -EINVAL
				       : gba_err_set(-errno,
						     "shm_open /dev/shm%s",
						     name);
		fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
		if (fd >= 0)
			break;
		if (errno != ENOENT)	/* unlinked in between: retry */
			return gba_err_set(-errno,
					   "device image /dev/shm%s (another "
					   "user's?)",
					   name);
	}
	if (fd < 0)
		return -EAGAIN;
	if (fstat(fd, &st)) {
		close(fd);
		return -errno;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return gba_err_set(-EACCES,
				   "device image /dev/shm%s: owner uid %u, "
				   "mode %03o (need uid %u, mode 0600)",
				   name, (unsigned)st.st_uid,
				   (unsigned)(st.st_mode & 0777),
				   (unsigned)geteuid());
	}
	return fd;
}

int gba_emu_init(struct gba_dev *dev, const char *name)
{
	struct gba_emu *emu;
	struct gba_book *book;
	char path[PATH_MAX];
	struct stat st;
	void *base;
	int ret;

	dev->path = strdup(name);
	emu = calloc(1, sizeof(*emu));
	if (!dev->path || !emu) {
		free(emu);
		return -ENOMEM;
	}
	dev->priv = emu;
	dev->ops = &gba_emu_ops;

	ret = emu_image_open(name);
	if (ret < 0)
		goto err;
	dev->fd = dev->lock_fd = ret;
	dev->lock_pid = getpid();

	/* initialisation is serialised by the flock (see the top comment) */
	while (flock(dev->fd, LOCK_EX)) {
		if (errno != EINTR) {
			ret = -errno;
			goto err;
		}
	}
	if (fstat(dev->fd, &st)) {
		ret = -errno;
		goto err_unlock;
	}
	if (st.st_size != 0 && st.st_size != GBA_EMU_IMAGE_SIZE) {
		ret = -EPROTO;	/* not an image of this layout */
		goto err_unlock;
	}
	/*
	 * Give a new image its pages, and an existing one those it may lack
	 * (made by a version that only set its size): a full /dev/shm is
	 * -ENOSPC here, never SIGBUS at the first store.
	 */
	snprintf(path, sizeof(path), "/dev/shm%s", name);
	ret = gba_shm_reserve(dev->fd, GBA_EMU_IMAGE_SIZE, path);
	if (ret)
		goto err_unlock;
	base = mmap(NULL, GBA_EMU_IMAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_SHARED, dev->fd, 0);
	if (base == MAP_FAILED) {
		ret = gba_err_set(-errno, "mmap %s", path);
		goto err_unlock;
	}
	emu->base = base;
	emu->size = GBA_EMU_IMAGE_SIZE;
	emu->sw = (void *)(emu->base + GBA_EMU_SW_OFFSET);
	dev->bar = emu->base;
	dev->flags = emu->base + GBA_FLAG_OFFSET;
	dev->book = book = (void *)(emu->base + GBA_BOOK_OFFSET);

	if (atomic_load_explicit(&book->magic, memory_order_acquire) !=
	    GBA_BOOK_MAGIC)
		emu_image_init(emu, dev->bar);
	else if (book->layout != GBA_BOOK_LAYOUT ||
		 book->image_size != GBA_EMU_IMAGE_SIZE)
		ret = -EPROTO;
	flock(dev->fd, LOCK_UN);
	if (ret < 0)
		goto err;

	if (emu_read64(dev, GBA_REG_ID) != GBA_ID_MAGIC ||
	    emu_read64(dev, GBA_REG_VERSION) != GBA_ABI_VERSION) {
		ret = -EPROTO;
		goto err;
	}
	return 0;

err_unlock:
	flock(dev->fd, LOCK_UN);
err:
	emu_fini(dev);
	return ret;
}
