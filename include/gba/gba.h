/*
 * GBA core library: the device layer.
 *
 * Front-end neutral (no libfabric or UCX types).  Follows
 * doc/design.md sections 2 (layering) and 3 (register ABI and
 * protocol).  A device is opened through a backend chosen at open time:
 *
 *   hw   a /dev/gbaN character device (or any file holding a register
 *        image) whose BAR is mmap'd; ID and VERSION are checked.
 *   emu  the software GBA: the same register map in a POSIX shared-memory
 *        image, created on first use with owner-only permissions, shared by
 *        every process of the user; the switch's aggregation runs in the
 *        arriving process (no daemon, lock-free arrival path).
 *
 * Error convention: every function returning int returns 0 (or a
 * non-negative value where documented) on success and a negative errno
 * value on failure.  The front ends map these to -FI_E* / UCS_ERR_*.
 *
 * Thread safety: a struct gba_dev may be shared by threads.  A struct
 * gba_group is owned by one member; arrive/test/wait on one group handle
 * must not be called concurrently from several threads.
 */
#ifndef GBA_H
#define GBA_H

#include <stddef.h>
#include <stdint.h>

#include <gba/gba_regs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gba_dev;
struct gba_group;

/* Name of the environment variable naming the default device. */
#define GBA_DEVICE_ENV "GBA_DEVICE"
/* Default hardware device node. */
#define GBA_DEVICE_HW_DEFAULT "/dev/gba0"

/* What gba_dev_query() reports: the global register block plus backend. */
struct gba_dev_attr {
	uint64_t id;		/* GBA_REG_ID */
	uint64_t version;	/* GBA_REG_VERSION */
	uint32_t num_groups;	/* GBA_REG_NUM_GROUPS */
	uint32_t max_members;	/* GBA_REG_MAX_MEMBERS */
	uint64_t network_addr;	/* GBA_REG_NETWORK_ADDR */
	const char *backend;	/* "hw" or "emu" (static string) */
	const char *path;	/* device node or shared-memory image name */
};

/*
 * gba_dev_open - open a GBA device.
 * @name: NULL or "" for the default (environment GBA_DEVICE if set, else
 *        /dev/gba0 if it exists, else the emulated device); "emu" for the
 *        emulated device with the per-user image "/gba-emu-<uid>";
 *        "emu:/NAME" for the emulated device with image /NAME (tests use
 *        private images); "emu+tcp://HOST[:PORT]" for the emulated switch
 *        served by gba_switchd(8) to many hosts; anything else is the path
 *        of a hardware device node or register-image file.
 * @devp: receives the device handle.
 *
 * Returns 0, or -EINVAL (bad name or NULL devp), -ENODEV (no such device),
 * -EPROTO (ID or VERSION register mismatch), -EACCES (image owned by
 * another user or with group/other permissions), -ENOMEM, -ENOSPC (the
 * emulated device's image does not fit in /dev/shm: its pages are
 * reserved at open, never a SIGBUS later), -EMFILE; for emu+tcp also
 * -ECONNREFUSED or another connection error (no switch there),
 * -ETIMEDOUT (the host's agent did not come up).  gba_last_error names
 * the file of a shared-memory or ownership failure, or the switch.
 */
int gba_dev_open(const char *name, struct gba_dev **devp);

/* gba_dev_close - close a device; groups still joined are left first. */
void gba_dev_close(struct gba_dev *dev);

/* gba_dev_query - read the global block.  Returns 0 or -EINVAL. */
int gba_dev_query(const struct gba_dev *dev, struct gba_dev_attr *attr);

/*
 * gba_dev_spans_hosts - 1 if @dev's groups can take members on several
 * hosts: hardware (the switch is between hosts) and the emulated switch
 * of gba_switchd ("emu+tcp://", doc/design.md section 9); 0 for the
 * emulated device of one host ("emu"), whose groups reach the processes
 * that share its /dev/shm; 0 for NULL.
 */
int gba_dev_spans_hosts(const struct gba_dev *dev);

/* Control plane --------------------------------------------------------- */

struct gba_group_attr {
	/*
	 * Rendezvous key: every member of one group passes the same non-zero
	 * key (the front ends hash the member address list and a join
	 * counter).  Members with equal keys attach to the same group.
	 */
	uint64_t key;
	uint32_t member_count;	/* 1..max_members */
	uint32_t member_id;	/* 0..member_count-1, this caller's member */
};

/*
 * gba_group_join - attach this process as member attr->member_id of the
 * group identified by attr->key within this process's job (<gba/gba_job.h>:
 * the same key in another job is another group), allocating and
 * configuring the group
 * (protocol step 1: RESET, GROUP_ID, MEMBER_COUNT, MEMBER_MASK,
 * RELEASE_ADDR[], ENABLE|ARM, wait READY) if no member created it yet.
 * Groups whose attached processes have all died are reclaimed first.
 *
 * Returns 0, or -EINVAL (NULL pointers, key 0, member_count 0 or above
 * max_members, member_id out of range, or a group with that key but a
 * different member_count), -ENOSPC (all hardware groups in use),
 * -EADDRINUSE (that member id is attached by a live process), -EIO;
 * for emu+tcp (the switch allocates, for all hosts) also -EPIPE or
 * -ENOTCONN (the switch or the host's agent is gone).
 */
int gba_group_join(struct gba_dev *dev, const struct gba_group_attr *attr,
		   struct gba_group **grpp);

/*
 * gba_group_leave - detach; the last attached member resets the group
 * (protocol step 5) and frees it.  Returns 0 or -EINVAL.
 */
int gba_group_leave(struct gba_group *grp);

/* Data plane (hot path: no allocation, no lock, no syscall) ------------- */

/*
 * gba_group_arrive - protocol step 2: advance this member's 32-bit
 * sequence (the first barrier is 1; it wraps from 2^32-1 to 0) and ring
 * the ARRIVAL doorbell.  Returns the sequence number to wait for.
 */
uint32_t gba_group_arrive(struct gba_group *grp);

/*
 * gba_group_test - protocol step 4, one poll: 1 if the barrier with
 * sequence @seq is released, 0 if not yet, or a negative error: -EPROTO
 * (the switch flagged an error on this member's arrival; see
 * gba_group_diag), -EPIPE (a member that has not arrived died).
 * Dead-peer detection costs a syscall and runs only every few
 * milliseconds of waiting.
 */
int gba_group_test(struct gba_group *grp, uint32_t seq);

/*
 * gba_group_wait - wait for release of @seq: spin, then yield, then sleep,
 * so that more processes than cores progress (in a group of the emulated
 * device with more members than the host has online CPUs, yield at once).
 * @timeout_ms < 0 waits forever.  Returns 0, -ETIMEDOUT, -EPROTO or
 * -EPIPE as gba_group_test.
 */
int gba_group_wait(struct gba_group *grp, uint32_t seq, int timeout_ms);

/*
 * gba_group_should_yield - the waiting policy of gba_group_wait, for
 * callers that poll gba_group_test themselves: after an unreleased poll
 * of barrier @seq, 1 if the caller should give its CPU away
 * (sched_yield) before polling again, 0 if it should keep polling.  It is
 * 0 only in a group of the emulated device with more members than the
 * host has online CPUs, when every member that has not arrived at @seq
 * last arrived on another CPU (this one's members have all arrived: a
 * yield would only cost a context switch, and the spinning member sees
 * the release at once); such a decision holds for at most 25 us per
 * member per CPU, then it is 1 once and decided again.  No syscall.
 */
int gba_group_should_yield(struct gba_group *grp, uint32_t seq);

/* gba_group_barrier - arrive then wait forever.  Returns as gba_group_wait. */
int gba_group_barrier(struct gba_group *grp);

/*
 * gba_group_ring - store a raw 64-bit value into the group's ARRIVAL
 * doorbell, exactly as a (possibly misbehaving) member would.  For
 * diagnostics and conformance tests of the switch's rules.
 */
void gba_group_ring(struct gba_group *grp, uint64_t doorbell);

/*
 * gba_group_flag - this member's release flag, the 64-bit word the switch
 * stores released sequence numbers into (protocol step 3), for callers
 * that poll it themselves (compare with gba_seq_reached(), then a read
 * barrier; gba_group_test does the same plus error and dead-peer checks).
 * @iova: if not NULL, receives RELEASE_ADDR[member_id] as programmed in
 *        the group window (the flag's IOVA).
 * Emu: the flag lives in the device image's flag area; hw: in the
 * driver's DMA-mapped flag memory.  One cache line per member.  Valid
 * until gba_group_leave.  Returns NULL (and leaves *@iova alone) for a
 * NULL or left handle.
 */
const volatile uint64_t *gba_group_flag(const struct gba_group *grp,
					uint64_t *iova);

/* Diagnostics ----------------------------------------------------------- */

struct gba_group_diag {
	uint32_t index;		/* hardware group 0..num_groups-1 */
	uint32_t group_id;	/* GROUP_ID */
	uint32_t member_count;	/* MEMBER_COUNT */
	uint32_t member_id;	/* this handle's member */
	uint64_t arrival_count;	/* ARRIVAL_COUNT */
	uint64_t release_seq;	/* RELEASE_SEQ */
	uint64_t control;	/* CONTROL */
	uint64_t status;	/* STATUS */
	uint64_t error_info;	/* ERROR_INFO */
	uint32_t local_seq;	/* last sequence this member arrived with */
	uint32_t flag;		/* this member's release flag */
	uint64_t member_mask[GBA_MASK_WORDS];
	uint64_t arrived_mask[GBA_MASK_WORDS];
};

/* gba_group_diag - snapshot of the group's registers.  0 or -EINVAL. */
int gba_group_diag(const struct gba_group *grp, struct gba_group_diag *diag);

/* gba_strerror_info - text for an ERROR_INFO cause (GBA_ERR_*). */
const char *gba_strerror_info(uint64_t error_info);

/* Inspection (read-only: gba_stat(1)) ------------------------------------ */

/* A member of a group as the control-plane table records it. */
struct gba_member_info {
	int32_t pid;		/* attached process, 0 = not attached */
	uint8_t alive;		/* 1: that process lives (same start time) */
	uint8_t arrived;	/* 1: its ARRIVED_MASK bit is set */
	uint8_t reserved[2];
};

/*
 * What gba_dev_group_info() reports of hardware group @index: its
 * registers, read through the backend (hw and emu alike), and its entry
 * of the control-plane table.  A snapshot read without the control-plane
 * lock: a join or leave running at the same time may show half done.
 */
struct gba_group_info {
	uint32_t index;		/* hardware group 0..num_groups-1 */
	uint32_t in_use;	/* 1: allocated in the table (0: free);
				   without a table: CONTROL.ENABLE */
	/* registers */
	uint32_t group_id;	/* GROUP_ID */
	uint32_t member_count;	/* MEMBER_COUNT */
	uint64_t arrival_count;	/* ARRIVAL_COUNT: arrived in the epoch */
	uint64_t release_seq;	/* RELEASE_SEQ: last released sequence */
	uint64_t control;	/* CONTROL (GBA_CTRL_*) */
	uint64_t status;	/* STATUS (GBA_STATUS_*) */
	uint64_t error_info;	/* ERROR_INFO (GBA_ERROR_INFO_*) */
	uint64_t member_mask[GBA_MASK_WORDS];
	uint64_t arrived_mask[GBA_MASK_WORDS];
	/*
	 * control-plane table: table is 1 when the device has one (emu, hw
	 * with the driver's table); 0: the fields below are all 0 and the
	 * members' processes unknown (in_use then says CONTROL.ENABLE)
	 */
	uint32_t table;
	uint32_t reserved;
	uint64_t key;		/* rendezvous key, scoped to the job */
	uint64_t job;		/* gba_job_id() of the job that allocated
				   it; 0: unknown (allocated by an older
				   library) */
	uint32_t attached;	/* members attached */
	uint32_t absent;	/* members in MEMBER_MASK not arrived, while
				   a barrier is in progress (0 < ARRIVAL_COUNT
				   < MEMBER_COUNT); else 0 */
	/* member[m] for m < member_count (at most GBA_MAX_MEMBERS) */
	struct gba_member_info member[GBA_MAX_MEMBERS];
};

/*
 * gba_dev_group_info - inspect hardware group @index of @dev (any group,
 * not only this process's: a status tool's view).  @info (about 8 KiB)
 * is filled for a free group too (in_use 0, its registers as they are).
 * Reads registers and the table only: no lock, no store, the data path of
 * the group's members is not disturbed; liveness of each attached pid
 * costs one read of /proc/PID/stat.
 * Returns 0, or -EINVAL (NULL @dev or @info, @index not below the
 * device's NUM_GROUPS).
 */
int gba_dev_group_info(struct gba_dev *dev, unsigned index,
		       struct gba_group_info *info);

/*
 * gba_group_info_absent - format the members of @info that a barrier in
 * progress waits for (info->absent of them) for a log line, as
 * "member 2 (pid 4243), member 3 (pid 4244, dead), member 5 (not
 * attached)" ("member 2" alone on a device without a control-plane
 * table), into @buf (@len bytes, NUL-terminated; when too short, cut
 * after a member with ", ... (N absent)", N the count of all; 64 bytes
 * or more hold at least one member); "none" when no barrier is in
 * progress or nobody is absent.
 * Returns the number of absent members, or -EINVAL (NULL @info or @buf,
 * @len 0).
 */
int gba_group_info_absent(const struct gba_group_info *info, char *buf,
			  size_t len);

/*
 * gba_group_absent - the same for this process's group @grp (reads
 * gba_dev_group_info of its hardware group: slow path, for the log line
 * of a barrier that failed or timed out).  Returns as
 * gba_group_info_absent, or -ENOMEM.
 */
int gba_group_absent(const struct gba_group *grp, char *buf, size_t len);

/*
 * gba_last_error - text for @err (a negative errno) returned by this
 * thread's last call to gba_dev_open, gba_eng_ep_open, gba_eng_peer_get,
 * gba_eng_seg_alloc or gba_eng_seg_attach: when that call failed on a
 * system call on a shared-memory object or on an ownership check, the
 * call, the object's name and the error, e.g. "posix_fallocate
 * /dev/shm/gba-fab-1000-<job>-4242-0 (1052672 bytes): No space left on
 * device";
 * otherwise (nothing recorded: bad arguments, no memory, success)
 * strerror(-@err).  The text stays valid until this thread's next call of
 * one of those functions.  Front ends put it in their log lines.
 */
const char *gba_last_error(int err);

#ifdef __cplusplus
}
#endif

#endif /* GBA_H */
