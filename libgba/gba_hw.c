/*
 * GBA core library: the hardware backend.
 *
 * Opens a /dev/gbaN character device (or any file holding a register
 * image), maps its BAR (GBA_BAR_SIZE bytes at offset 0) and checks the ID
 * and VERSION registers.  Registers are accessed with single, naturally
 * aligned 64-bit (or 32-bit) loads and stores; the switch behind them is
 * the hardware, so no register has a software side effect here.
 *
 * Group allocation and flag memory need a kernel driver, which does not
 * exist yet.  The assumed driver ABI (gba.7, NOTES):
 *   - mmap of the device at offset GBA_BAR_SIZE, length
 *     GBA_BOOK_END - GBA_BAR_SIZE, gives host memory shared by every opener
 *     of the device: the release-flag area (DMA-mapped so that the IOVA of
 *     each byte equals its offset in the device file) followed by the
 *     control-plane table (struct gba_book), zero-filled when the driver
 *     loads;
 *   - an exclusive flock on the device descriptor serialises control-plane
 *     updates (group allocation, attach, detach) between processes.
 * The group programming itself (protocol step 1) is the same register
 * sequence as for the emulated device (gba_group.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gba_backend.h"

struct gba_hw {
	void *ext;		/* flags + control-plane table, or NULL */
	size_t ext_len;
};

#define GBA_HW_EXT_LEN ((size_t)(GBA_BOOK_END - GBA_BAR_SIZE))

/* Write barrier after a doorbell store (protocol step 2). */
static inline void gba_wmb(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_sfence();
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static uint64_t hw_read64(struct gba_dev *dev, uint64_t off)
{
	return *(volatile uint64_t *)(dev->bar + off);
}

static uint32_t hw_read32(struct gba_dev *dev, uint64_t off)
{
	return *(volatile uint32_t *)(dev->bar + off);
}

static void hw_write64(struct gba_dev *dev, uint64_t off, uint64_t val)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*(volatile uint64_t *)(dev->bar + off) = val;
	gba_wmb();
}

static void hw_write32(struct gba_dev *dev, uint64_t off, uint32_t val)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*(volatile uint32_t *)(dev->bar + off) = val;
	gba_wmb();
}

static void hw_doorbell(struct gba_dev *dev, unsigned g, uint64_t val)
{
	/* prior stores (the caller's data) before the doorbell */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*(volatile uint64_t *)(dev->bar + GBA_GROUP_REG_BASE(g) +
			       GBA_ARRIVAL) = val;
	gba_wmb();
}

static void hw_report_error(struct gba_dev *dev, unsigned g, uint64_t info)
{
	/* ERROR_INFO is read-only for the host on real hardware */
}

static int hw_reopen(struct gba_dev *dev)
{
	int fd = open(dev->path, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int hw_lock(struct gba_dev *dev)
{
	return gba_flock(dev, hw_reopen);
}

static void hw_unlock(struct gba_dev *dev)
{
	gba_funlock(dev);
}

static void hw_fini(struct gba_dev *dev)
{
	struct gba_hw *hw = dev->priv;

	if (hw) {
		if (hw->ext)
			munmap(hw->ext, hw->ext_len);
		free(hw);
	}
	if (dev->bar)
		munmap((void *)dev->bar, GBA_BAR_SIZE);
	if (dev->lock_fd >= 0 && dev->lock_fd != dev->fd)
		close(dev->lock_fd);
	if (dev->fd >= 0)
		close(dev->fd);
	dev->bar = NULL;
	dev->priv = NULL;
	dev->fd = dev->lock_fd = -1;
}

static const struct gba_ops gba_hw_ops = {
	.name = "hw",
	.spans_hosts = true,
	.read64 = hw_read64,
	.read32 = hw_read32,
	.write64 = hw_write64,
	.write32 = hw_write32,
	.doorbell = hw_doorbell,
	.report_error = hw_report_error,
	.lock = hw_lock,
	.unlock = hw_unlock,
	.fini = hw_fini,
};

/*
 * Map the driver's host-memory region (flags + control-plane table).  A
 * regular file (register image) has it only if it is long enough; without
 * it the device can be queried but groups cannot be joined (-EIO).
 */
static int hw_map_ext(struct gba_dev *dev, const struct stat *st)
{
	struct gba_hw *hw = dev->priv;
	struct gba_book *book;
	void *ext;

	if (S_ISREG(st->st_mode) && (uint64_t)st->st_size < GBA_BOOK_END)
		return 0;
	ext = mmap(NULL, GBA_HW_EXT_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		   dev->fd, GBA_BAR_SIZE);
	if (ext == MAP_FAILED)
		return 0;
	hw->ext = ext;
	hw->ext_len = GBA_HW_EXT_LEN;
	dev->flags = ext;	/* IOVA GBA_FLAG_OFFSET == offset GBA_BAR_SIZE */
	book = (void *)((uint8_t *)ext + (GBA_BOOK_OFFSET - GBA_FLAG_OFFSET));

	if (atomic_load_explicit(&book->magic, memory_order_acquire) !=
	    GBA_BOOK_MAGIC) {
		while (flock(dev->fd, LOCK_EX) && errno == EINTR)
			;
		if (atomic_load_explicit(&book->magic,
					 memory_order_acquire) != GBA_BOOK_MAGIC)
			gba_book_init(book, GBA_BOOK_END);
		flock(dev->fd, LOCK_UN);
	}
	if (book->layout != GBA_BOOK_LAYOUT)
		return -EPROTO;
	dev->book = book;
	return 0;
}

int gba_hw_init(struct gba_dev *dev, const char *path)
{
	struct gba_hw *hw;
	struct stat st;
	void *bar;
	int ret;

	dev->path = strdup(path);
	hw = calloc(1, sizeof(*hw));
	if (!dev->path || !hw) {
		free(hw);
		return -ENOMEM;
	}
	dev->priv = hw;
	dev->ops = &gba_hw_ops;

	dev->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		ret = -errno;
		if (ret == -ENOENT || ret == -ENXIO || ret == -ENOTDIR ||
		    ret == -EISDIR)
			ret = -ENODEV;
		else if (ret == -EPERM)
			ret = -EACCES;
		goto err;
	}
	dev->lock_fd = dev->fd;
	dev->lock_pid = getpid();
	if (fstat(dev->fd, &st)) {
		ret = -errno;
		goto err;
	}
	if (S_ISREG(st.st_mode) && st.st_size < GBA_BAR_SIZE) {
		ret = -ENODEV;	/* too short to hold a register map */
		goto err;
	}
	bar = mmap(NULL, GBA_BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   dev->fd, 0);
	if (bar == MAP_FAILED) {
		ret = -ENODEV;
		goto err;
	}
	dev->bar = bar;
	if (hw_read64(dev, GBA_REG_ID) != GBA_ID_MAGIC ||
	    hw_read64(dev, GBA_REG_VERSION) != GBA_ABI_VERSION) {
		ret = -EPROTO;
		goto err;
	}
	ret = hw_map_ext(dev, &st);
	if (ret)
		goto err;
	return 0;
err:
	hw_fini(dev);
	return ret;
}
