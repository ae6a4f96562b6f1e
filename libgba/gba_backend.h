/*
 * GBA core library: internal definitions shared by the device layer and
 * the backends.  Not installed.
 *
 * A backend is an ops table (struct gba_ops) filled in by the backend's
 * init function (gba_hw_init, gba_emu_init) when the device is opened, in
 * the manner of the NVSHMEM transports.  The device layer (gba_dev.c,
 * gba_group.c, gba_barrier.c) drives every backend through the same
 * register accesses; only the switch behind the registers differs.
 *
 * Memory layout of a device, as offsets into the device file (hw) or the
 * shared-memory image (emu).  IOVA == offset: the release flag of member m
 * of group g lives at IOVA GBA_FLAG_IOVA(g, m).
 *
 *   0                  BAR: the register map of gba_regs.h (GBA_BAR_SIZE)
 *   GBA_FLAG_OFFSET    release flags, one 64-byte line per (group, member)
 *   GBA_BOOK_OFFSET    control-plane table (struct gba_book): group keys,
 *                      attach state, one (pid, start time) per member
 *   GBA_EMU_SW_OFFSET  emu only: the software switch's private state
 *                      (struct gba_emu_sw per group)
 *
 * hw maps [GBA_FLAG_OFFSET, GBA_BOOK_END) with one mmap of the device at
 * offset GBA_BAR_SIZE (the assumed driver ABI, documented in gba.7).
 */
#ifndef GBA_BACKEND_H
#define GBA_BACKEND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <gba/gba.h>

#define GBA_CACHE_LINE 64

/* ---- Layout ------------------------------------------------------------- */

#define GBA_PAGE_ALIGN(x) (((x) + 4095UL) & ~4095UL)

#define GBA_FLAG_OFFSET ((uint64_t)GBA_BAR_SIZE)
#define GBA_FLAG_STRIDE GBA_CACHE_LINE
#define GBA_FLAG_AREA_SIZE \
	((uint64_t)GBA_MAX_GROUPS * GBA_MAX_MEMBERS * GBA_FLAG_STRIDE)
#define GBA_FLAG_IOVA(g, m)                                           \
	(GBA_FLAG_OFFSET +                                            \
	 ((uint64_t)(g) * GBA_MAX_MEMBERS + (uint64_t)(m)) * GBA_FLAG_STRIDE)

#define GBA_BOOK_OFFSET GBA_PAGE_ALIGN(GBA_FLAG_OFFSET + GBA_FLAG_AREA_SIZE)
#define GBA_BOOK_END GBA_PAGE_ALIGN(GBA_BOOK_OFFSET + sizeof(struct gba_book))
#define GBA_EMU_SW_OFFSET GBA_BOOK_END
#define GBA_EMU_IMAGE_SIZE \
	GBA_PAGE_ALIGN(GBA_EMU_SW_OFFSET + \
		       GBA_MAX_GROUPS * sizeof(struct gba_emu_sw))

/* ---- Control-plane table (shared by all processes using the device) ---- */

#define GBA_BOOK_MAGIC 0x4b4f4f4241424721ULL	/* "!GBABOOK" */
/* 3: the epoch registers derived from the switch's counter line (an image
 * of another layout is refused: its users count arrivals elsewhere) */
#define GBA_BOOK_LAYOUT 3

enum {
	GBA_BOOK_FREE = 0,
	GBA_BOOK_ALLOCATED = 1,
};

/*
 * A member slot identifies the attached process: bits 31..0 its pid, bits
 * 63..32 the low 32 bits of its start time (field 22 of /proc/PID/stat),
 * so that a recycled pid is not mistaken for the member.  0 = detached.
 * Written under the control-plane lock, read lock-free by waiters.
 */
#define GBA_SLOT_PID(s) ((pid_t)(uint32_t)(s))
#define GBA_SLOT_START(s) ((uint32_t)((uint64_t)(s) >> 32))

struct gba_book_group {
	uint64_t key;		/* rendezvous key, 0 when free */
	uint32_t state;		/* GBA_BOOK_* */
	uint32_t member_count;
	uint32_t group_id;	/* value programmed into GROUP_ID */
	uint32_t attached;	/* number of non-zero slots */
	/*
	 * gba_job_id() of the process that allocated the group (for
	 * gba_dev_group_info), 0 when unknown.  Was reserved[0], always 0:
	 * no layout change, an image of an older library reads "unknown".
	 */
	uint64_t job;
	uint64_t reserved[4];
	_Atomic uint64_t slot[GBA_MAX_MEMBERS];
} __attribute__((aligned(GBA_CACHE_LINE)));

struct gba_book {
	/*
	 * magic is the "initialised" marker: it is stored last (release)
	 * when the image or device table has been set up.
	 */
	_Atomic uint64_t magic;
	uint32_t layout;
	uint32_t reserved0;
	uint64_t image_size;
	uint64_t reserved[5];
	struct gba_book_group group[GBA_MAX_GROUPS];
} __attribute__((aligned(GBA_CACHE_LINE)));

/* ---- The software switch's private state (emu) -------------------------- */

/*
 * Per-group state of the emulated switch, outside the register map (like
 * the internal state of a real switch).  Configuration registers are
 * latched here when CONTROL.ENABLE is written, so that the arrival path
 * reads one cache line that changes once per barrier (when the epoch
 * advances) instead of register lines that change on every arrival.
 *
 * The epoch registers are not stored on every arrival: they are derived
 * from this state when read (gba_emu.c): ARRIVAL_COUNT is count,
 * RELEASE_SEQ is epoch - 1, ARRIVED_MASK has the bit of every member whose
 * last == epoch.  A barrier thus writes one shared line (the counter
 * line) and the release flags, as the switch's own logic would.
 */
#define GBA_EMU_SW_ENABLE 0x1u	/* latched CONTROL.ENABLE */
#define GBA_EMU_SW_ARM 0x2u	/* latched CONTROL.ARM */

/* A member's private switch state (see gba_emu_sw.member). */
struct gba_emu_member {
	_Atomic uint32_t last;
} __attribute__((aligned(GBA_CACHE_LINE)));

struct gba_emu_sw {
	/* lines 0-1: read by every arrival, written only by CONTROL stores */
	_Atomic uint32_t ctrl;	/* GBA_EMU_SW_* */
	uint32_t member_count;
	uint32_t mask_words;	/* words of member_mask in use */
	uint64_t member_mask[GBA_MASK_WORDS];
	/*
	 * The counter line.  epoch: the sequence number being collected,
	 * written once per barrier by the completer and read by arrivals
	 * only when the arriving member's release flag does not already
	 * prove it (see gba_emu_switch.c).  count: arrivals counted in the
	 * epoch; every counted arrival adds one, the completer (whose add
	 * reached member_count) resets it before advancing the epoch, on
	 * the line its add has just brought into its cache.
	 */
	_Atomic uint32_t epoch __attribute__((aligned(GBA_CACHE_LINE)));
	_Atomic uint32_t count;
	/*
	 * member[m].last: the last sequence number member m was counted
	 * with.  An arrival (m, s) is counted only by the compare-exchange
	 * last: s-1 -> s, so each member is counted at most once per epoch
	 * even when stale or duplicate doorbells race with the epoch
	 * advancing.  One cache line per member: only m's own arrivals
	 * write it, so the exchange hits in the arriving CPU's cache
	 * instead of taking the line from the previous arriver.
	 */
	struct gba_emu_member member[GBA_MAX_MEMBERS];
} __attribute__((aligned(GBA_CACHE_LINE)));

/* ---- Backend ops ---------------------------------------------------------- */

struct gba_dev;

struct gba_ops {
	const char *name;	/* "hw", "emu" or "emu+tcp" */
	/* groups take members on several hosts (gba_dev_spans_hosts) */
	bool spans_hosts;
	/* register accesses; @off is the offset from the BAR base */
	uint64_t (*read64)(struct gba_dev *dev, uint64_t off);
	uint32_t (*read32)(struct gba_dev *dev, uint64_t off);
	void (*write64)(struct gba_dev *dev, uint64_t off, uint64_t val);
	void (*write32)(struct gba_dev *dev, uint64_t off, uint32_t val);
	/* store @val to group @g's ARRIVAL register (hot path) */
	void (*doorbell)(struct gba_dev *dev, unsigned g, uint64_t val);
	/*
	 * Host-side report that a member is lost (dead peer): the emulated
	 * switch records it in ERROR_INFO/STATUS.ERROR; hardware has no
	 * host-writable error register, so hw does nothing.
	 */
	void (*report_error)(struct gba_dev *dev, unsigned g, uint64_t info);
	/* control-plane lock (exclusive flock on the device/image) */
	int (*lock)(struct gba_dev *dev);
	void (*unlock)(struct gba_dev *dev);
	/* release everything the init function acquired */
	void (*fini)(struct gba_dev *dev);
	/*
	 * Optional (NULL: the host's control-plane table decides): a switch
	 * elsewhere allocates the group.  group_join finds or allocates the
	 * group of @attr->key (job-scoped), books @attr->member_id for the
	 * process @self (a slot value) and sets up this host's view of it;
	 * returns 0 and the group in *@gp, or -ENOSPC, -EINVAL, -EADDRINUSE,
	 * -EPIPE (switch unreachable).  group_leave undoes it (never fails:
	 * the host's table is cleaned even if the switch is gone).  Both are
	 * called under ops->lock.
	 */
	int (*group_join)(struct gba_dev *dev,
			  const struct gba_group_attr *attr, uint64_t self,
			  unsigned *gp);
	void (*group_leave)(struct gba_dev *dev, unsigned g, uint32_t member,
			    uint64_t key, uint64_t self);
};

struct gba_dev {
	const struct gba_ops *ops;
	char *path;		/* device node or image name */
	volatile uint8_t *bar;	/* GBA_BAR_SIZE bytes of registers */
	/* host address of IOVA GBA_FLAG_OFFSET, or NULL (no flag memory) */
	uint8_t *flags;
	struct gba_book *book;	/* NULL if the device has no table */
	void *priv;		/* backend private */

	int fd;			/* device/image descriptor */
	int lock_fd;		/* descriptor flock'ed (reopened after fork) */
	pid_t lock_pid;		/* process that opened lock_fd */
	pthread_mutex_t mutex;	/* serialises threads of this process */
	struct gba_group *groups;	/* joined groups (for close) */
};

/* Waiting (gba_barrier.c): spin budget bounds, in polls. */
#define GBA_SPIN_MAX 4096
#define GBA_SPIN_MIN 64

/*
 * Word 1 of a release flag's line, in a group that oversubscribes the
 * emulated device's host: where its member last arrived, (cpu << 32) |
 * seq, stored by the member (gba_group_arrive) and read by the waiters
 * deciding whether to give their CPU away (gba_group_should_yield).
 * Host-side bookkeeping: the switch stores word 0, the flag, only.
 */
#define GBA_WHERE(cpu, seq) \
	(((uint64_t)(uint32_t)(cpu) << 32) | (uint64_t)(uint32_t)(seq))
#define GBA_WHERE_CPU(w) ((uint32_t)((uint64_t)(w) >> 32))
#define GBA_WHERE_SEQ(w) ((uint32_t)(w))

struct gba_group {
	/* hot: data plane */
	uint32_t seq;		/* last sequence this member arrived with */
	uint32_t member_id;
	unsigned index;		/* hardware group */
	uint32_t spin;		/* adaptive spin budget of gba_group_wait */
	void (*doorbell)(struct gba_dev *dev, unsigned g, uint64_t val);
	struct gba_dev *dev;
	_Atomic uint64_t *flag;	/* this member's release flag */
	volatile uint64_t *regs;	/* group register window */

	/*
	 * Oversubscribed waiting (gba_group_should_yield): where points to
	 * word 1 of our flag line, NULL when the group's members can all
	 * run at once; board to member 0's flag line.  A waiter keeps its
	 * CPU from idle_ns (0: not spinning) for at most idle_max_ns.
	 */
	_Atomic uint64_t *where;
	uint8_t *board;
	uint64_t idle_ns;
	uint64_t idle_max_ns;
	uint32_t idle_seq;
	uint32_t idle_polls;

	/* error and dead-peer detection state (slow path) */
	uint32_t poll_seq;	/* seq the counters below belong to */
	uint32_t polls;
	/*
	 * gba_group_test reads the clock on polls with none of these bits
	 * set: every 256th, every 4th in an oversubscribed group (whose
	 * members yield while they wait, and whose front ends may test
	 * every 16th poll only: 256 polls could take seconds).
	 */
	uint32_t test_clock_mask;
	uint64_t check_ns;	/* time of the last liveness check */
	uint32_t peer_cursor;	/* next member to check */
	uint32_t lost_seq;	/* -EPIPE was returned for this seq */
	int lost;
	int stuck;		/* all arrived, no release, at last check */

	/* control plane */
	uint32_t member_count;
	uint64_t key;
	uint64_t slot;		/* our slot value in the table */
	struct gba_group *next;	/* in dev->groups */
};

/* Register window of group @g. */
static inline volatile uint64_t *gba_group_regs(struct gba_dev *dev,
						unsigned g)
{
	return (volatile uint64_t *)(dev->bar + GBA_GROUP_REG_BASE(g));
}

/* Lock-free register loads (the register map lives in ordinary shared
 * memory for emu and in MMIO for hw; a plain aligned load serves both). */
static inline uint64_t gba_reg_load(volatile uint64_t *regs, uint64_t off)
{
	return __atomic_load_n((uint64_t *)((uint8_t *)regs + off),
			       __ATOMIC_ACQUIRE);
}

static inline uint32_t gba_reg_load32(volatile uint64_t *regs, uint64_t off)
{
	return __atomic_load_n((uint32_t *)((uint8_t *)regs + off),
			       __ATOMIC_ACQUIRE);
}

/* ---- Backends -------------------------------------------------------------- */

int gba_hw_init(struct gba_dev *dev, const char *path);
int gba_emu_init(struct gba_dev *dev, const char *name);
/* "emu+tcp://HOST:PORT": the emulated switch served by gba_switchd
 * (gba_net.c). */
int gba_net_init(struct gba_dev *dev, const char *name);


/* ---- Helpers (gba_proc.c, gba_group.c) ---------------------------------- */

/* Slot value identifying the calling process (pid + start time). */
uint64_t gba_proc_self_slot(void);
/* Slot value identifying process @pid, 0 if there is none. */
uint64_t gba_proc_slot(pid_t pid);
/* 1 if the process recorded in @slot is alive (not dead, not a zombie,
 * not a recycled pid); 0 if not. */
int gba_proc_slot_alive(uint64_t slot);
/* FNV-1a over @len bytes of @buf, from @h (GBA_FNV64_OFFSET to start). */
#define GBA_FNV64_OFFSET 0xcbf29ce484222325ULL
uint64_t gba_fnv1a(uint64_t h, const void *buf, size_t len);
/* Monotonic time in nanoseconds (vDSO, no syscall). */
uint64_t gba_now_ns(void);

/* Initialise an all-zero control-plane table. */
void gba_book_init(struct gba_book *book, uint64_t image_size);

/* Control-plane lock helpers common to both backends (flock on lock_fd,
 * reopened through @reopen after fork so parent and child exclude each
 * other). */
/*
 * gba_shm_reserve - allocate the pages of the first @len bytes of
 * shared-memory file @fd (named @name in messages; the size grows to @len
 * if shorter) with posix_fallocate, so that stores to a mapping of them
 * cannot fault with SIGBUS.  Returns 0, or -ENOSPC (file system full),
 * -ENOMEM, -EFBIG, another negative errno; on error the text of
 * gba_last_error names @name and the error.
 */
int gba_shm_reserve(int fd, size_t len, const char *name);
/* Forget this thread's last error text (at the entry of an API call). */
void gba_err_clear(void);
/*
 * Record "<fmt ...>: <strerror(@err)>" as this thread's last error text
 * (gba_last_error); @err is an errno, either sign.  Returns @err.
 */
int gba_err_set(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int gba_flock(struct gba_dev *dev, int (*reopen)(struct gba_dev *dev));
void gba_funlock(struct gba_dev *dev);

#endif /* GBA_BACKEND_H */
