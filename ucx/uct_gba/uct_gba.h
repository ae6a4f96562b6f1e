/**
 * uct_gba.h: the GBA barrier through UCT, for UCT-level users of the "gba"
 * transport (libuct_gba.so).
 *
 * A switch-resident Global Barrier Accelerator completes a barrier with one
 * remote store per member into the switch (the ARRIVAL doorbell of the
 * group's register window) and one remote store from the switch into each
 * member's release flag.  This header exposes both the way the hardware
 * presents them (doc/design.md section 3, "The hardware ABI" and "Protocol"):
 *
 *  - arrival: a 64-bit remote store, or a 64-bit atomic, of the doorbell
 *    value UCT_GBA_ARRIVAL_VALUE(member_id, seq) to the group window's
 *    ARRIVAL register, issued on an endpoint to the switch
 *    (uct_gba_group_attr_t::switch_ep, ::arrival_addr, ::rkey), e.g.
 *        uct_ep_put_short(attr.switch_ep, &doorbell, sizeof(doorbell),
 *                         attr.arrival_addr, attr.rkey);
 *  - release: the switch stores the released sequence number into the
 *    member's flag (uct_gba_group_attr_t::release_flag); a member waiting
 *    for seq is released when uct_gba_seq_reached(*flag, seq).
 *
 * and, for convenience, the protocol's steps as calls:
 * uct_gba_group_arrive() (step 2), uct_gba_group_test() /
 * uct_gba_group_wait() (step 4, with the switch's errors and dead members
 * reported).  See uct_gba(7), section GBA BARRIER.
 *
 * Installed as $prefix/include/gba/uct_gba.h; needs UCX's public headers
 * (libucx-dev) and <gba/gba_regs.h> (installed with it: compile with
 * -I$prefix/include).  A program calls these functions by linking
 * libuct_gba.so ($prefix/lib/ucx, e.g. -L$prefix/lib/ucx -luct_gba
 * -Wl,-rpath,$prefix/lib/ucx), which also registers the transport with the
 * running UCX when it is loaded.
 *
 * Thread safety: a group handle is used by one thread at a time (the
 * interface it was created on may be used by other threads as that
 * interface's worker mode allows).  The data path (arrive, test, the
 * switch endpoint's operations) allocates nothing, takes no lock and makes
 * no system call; uct_gba_group_test() looks for dead members with a few
 * system calls only after milliseconds of waiting.
 */

#ifndef UCT_GBA_H_
#define UCT_GBA_H_

#include <gba/gba_regs.h>
#include <uct/api/uct.h>
#include <stdint.h>

BEGIN_C_DECLS


/*
 * The register ABI's limits and doorbell encoding are those of
 * <gba/gba_regs.h> (installed next to this header); the UCT_GBA_ names are
 * this API's spelling of them.
 */

/** Largest number of members of one group (GBA_REG_MAX_MEMBERS) */
#define UCT_GBA_GROUP_MAX_MEMBERS GBA_MAX_MEMBERS

/** Hardware groups per switch (GBA_REG_NUM_GROUPS) */
#define UCT_GBA_MAX_GROUPS GBA_MAX_GROUPS

/**
 * ARRIVAL doorbell value: member @a _member_id arrives at barrier @a _seq
 * (both 32-bit; stored as one little-endian 64-bit word)
 */
#define UCT_GBA_ARRIVAL_VALUE(_member_id, _seq) \
    GBA_ARRIVAL_VALUE(_member_id, _seq)


/**
 * Handle of this process's membership in a GBA barrier group
 */
typedef struct uct_gba_group *uct_gba_group_h;


/**
 * Fields of uct_gba_group_params_t: all are required
 */
enum uct_gba_group_params_field {
    UCT_GBA_GROUP_PARAM_FIELD_KEY          = UCS_BIT(0), /**< key */
    UCT_GBA_GROUP_PARAM_FIELD_MEMBER_COUNT = UCS_BIT(1), /**< member_count */
    UCT_GBA_GROUP_PARAM_FIELD_MEMBER_ID    = UCS_BIT(2) /**< member_id */
};


/**
 * Parameters of uct_gba_group_create()
 */
typedef struct uct_gba_group_params {
    /**
     * Mask of valid fields in this structure, using the bits of
     * @ref uct_gba_group_params_field.  Fields not specified by this mask
     * are ignored; all three are required.
     */
    uint64_t field_mask;

    /**
     * Rendezvous key: every member of one group passes the same non-zero
     * key, chosen by the application (e.g. a hash of the member list and a
     * creation counter); members with equal keys join the same group.
     */
    uint64_t key;

    /** Number of members, 1..UCT_GBA_GROUP_MAX_MEMBERS */
    uint32_t member_count;

    /** This process's member, 0..member_count-1 */
    uint32_t member_id;
} uct_gba_group_params_t;


/**
 * Fields of uct_gba_group_attr_t, requested in its field_mask
 */
/* clang-format off */
enum uct_gba_group_attr_field {
    UCT_GBA_GROUP_ATTR_FIELD_INDEX        = UCS_BIT(0), /**< index */
    UCT_GBA_GROUP_ATTR_FIELD_MEMBER_ID    = UCS_BIT(1), /**< member_id */
    UCT_GBA_GROUP_ATTR_FIELD_MEMBER_COUNT = UCS_BIT(2), /**< member_count */
    UCT_GBA_GROUP_ATTR_FIELD_SEQ          = UCS_BIT(3), /**< seq */
    /** switch_ep, window_addr, window_length, arrival_addr, rkey,
     *  switch_addr */
    UCT_GBA_GROUP_ATTR_FIELD_SWITCH       = UCS_BIT(4),
    /** release_flag, release_flag_iova */
    UCT_GBA_GROUP_ATTR_FIELD_RELEASE_FLAG = UCS_BIT(5),
    /** release_seq, status, error_info (register snapshot) */
    UCT_GBA_GROUP_ATTR_FIELD_REGS         = UCS_BIT(6)
};
/* clang-format on */


/**
 * What uct_gba_group_query() reports
 */
/* clang-format off */
typedef struct uct_gba_group_attr {
    /**
     * Mask of the fields to fill, using the bits of
     * @ref uct_gba_group_attr_field; others are left alone.
     */
    uint64_t                field_mask;

    uint32_t                index;        /**< Hardware group, 0..31 */
    uint32_t                member_id;    /**< This member */
    uint32_t                member_count; /**< Members of the group */

    /**
     * Last sequence number this member arrived with (0 before its first
     * arrival; a member joining a running group starts at its last
     * released barrier).  The next arrival is seq + 1 (modulo 2^32).
     */
    uint32_t                seq;

    /**
     * Endpoint to the switch, owned by the group (do not destroy it;
     * uct_ep_destroy() on it does nothing).  It executes, at once and
     * without progress:
     *  - uct_ep_put_short() of 8 bytes at arrival_addr: the doorbell store;
     *  - uct_ep_atomic64_post() ADD, OR or XOR and uct_ep_atomic64_fetch()
     *    ADD, OR, XOR or SWAP at arrival_addr: ARRIVAL is a write-only
     *    register that reads as 0, so each stores its operand, the fetched
     *    value is 0 and the call returns UCS_OK (@a comp is not used);
     *  - uct_ep_atomic_cswap64() at arrival_addr: stores @a swap when
     *    @a compare is 0, nothing otherwise; *result = 0, UCS_OK;
     *  - uct_ep_flush(), uct_ep_fence(): UCS_OK (nothing is outstanding).
     * Errors: an rkey other than this group's @ref rkey is
     * UCS_ERR_INVALID_PARAM; an access that leaves the window
     * UCS_ERR_OUT_OF_RANGE; any other register of the window (read-only or
     * control-plane registers) UCS_ERR_INVALID_ADDR; a doorbell store of
     * another size than 8 bytes UCS_ERR_INVALID_PARAM; other operations
     * (AND, 32-bit atomics, gets, bcopy/zcopy, AM) UCS_ERR_UNSUPPORTED.
     * The doorbell value is stored as given, as the hardware would: a
     * wrong member id or sequence number is the switch's error, reported
     * by uct_gba_group_test().
     */
    uct_ep_h                switch_ep;
    uint64_t                window_addr;   /**< Remote address of the
                                                group's register window in
                                                the switch (its BAR offset) */
    size_t                  window_length; /**< 8 KiB */
    uint64_t                arrival_addr;  /**< window_addr + 0x70: the
                                                ARRIVAL doorbell */
    uct_rkey_t              rkey;          /**< Remote key of the window,
                                                valid until destroy */
    uint64_t                switch_addr;   /**< Network address of the
                                                switch (GBA_REG_NETWORK_ADDR) */

    /**
     * This member's release flag: the switch stores the released sequence
     * number (zero-extended) into it.  On hardware it is DMA-mapped host
     * memory the device writes (registered for the switch at setup:
     * RELEASE_ADDR[member_id] = release_flag_iova); on the emulated device
     * it is a word of the device image's flag area.  One cache line per
     * member.  Read it with an acquire load and compare with
     * uct_gba_seq_reached(); valid until uct_gba_group_destroy().
     */
    const volatile uint64_t *release_flag;
    uint64_t                release_flag_iova; /**< RELEASE_ADDR[member_id] */

    uint64_t                release_seq; /**< RELEASE_SEQ register */
    uint64_t                status;      /**< STATUS register: bit 0 READY,
                                              1 ACTIVE, 2 COMPLETE, 3 ERROR */
    uint64_t                error_info;  /**< ERROR_INFO register: bits
                                              63..56 cause, 55..32 member,
                                              31..0 sequence (gba(7)) */
} uct_gba_group_attr_t;
/* clang-format on */


/**
 * Wrap-safe release test (doc/design.md section 3, protocol step 4): non-zero
 * when a release flag reading @a flag releases barrier @a seq, i.e.
 * (int32_t)(flag - seq) >= 0.  Valid while the member is less than 2^31
 * barriers behind, which a member cannot be (it takes part in each).
 */
static UCS_F_ALWAYS_INLINE int uct_gba_seq_reached(uint64_t flag, uint32_t seq)
{
    return gba_seq_reached((uint32_t)flag, seq);
}


/**
 * Join a GBA barrier group as one of its members (doc/design.md section 3,
 * protocol step 1).  The first member to join allocates a free hardware
 * group and programs it (RESET, GROUP_ID, MEMBER_COUNT, MEMBER_MASK, every
 * member's RELEASE_ADDR, ENABLE|ARM, wait for READY); the others attach to
 * it.  Groups whose processes have all died are reclaimed first.  The
 * device is the one of the interface's memory domain (UCX_GBA_DEVICE, else
 * GBA_DEVICE, else /dev/gba0 if present, else the emulated device).
 *
 * @param [in]  iface    An interface of the "gba" transport; it must stay
 *                       open while the group exists (the switch endpoint
 *                       belongs to it).
 * @param [in]  params   Key, member count and member id (all required).
 * @param [out] group_p  The new group handle.
 *
 * @return UCS_OK;
 *         UCS_ERR_INVALID_PARAM: NULL argument, an interface of another
 *         transport, a missing field, key 0, member_count 0 or above 708,
 *         member_id >= member_count, or a group of that key with another
 *         member_count (with a log line);
 *         UCS_ERR_NO_RESOURCE: all 32 hardware groups are in use (the
 *         caller falls back to a software barrier);
 *         UCS_ERR_ALREADY_EXISTS: that member id is attached by a live
 *         process;
 *         UCS_ERR_NO_DEVICE, UCS_ERR_REJECTED (device image of another
 *         user, or with group/other permissions), UCS_ERR_UNSUPPORTED
 *         (device ID/VERSION mismatch): the device cannot be opened;
 *         UCS_ERR_NO_MEMORY; UCS_ERR_IO_ERROR (the group did not become
 *         READY, or a device without release-flag memory).
 */
ucs_status_t uct_gba_group_create(uct_iface_h iface,
                                  const uct_gba_group_params_t *params,
                                  uct_gba_group_h *group_p);


/**
 * Leave the group (doc/design.md section 3, protocol step 5 when the last
 * member leaves: RESET and free) and release the handle, its switch
 * endpoint and its remote key.  Leave between barriers: the others cannot
 * complete a barrier this member has not arrived at, and a member that
 * left is not a dead member (only a process that dies while attached is
 * reported, as UCS_ERR_CONNECTION_RESET).  NULL is ignored.
 *
 * @param [in] group  The group, or NULL.
 */
void uct_gba_group_destroy(uct_gba_group_h group);


/**
 * Report attributes of @a group: the fields selected by
 * @a attr->field_mask (see @ref uct_gba_group_attr_field).  Addresses,
 * offsets and register meanings are those of the register map of doc/design.md
 * section 3 ("The hardware ABI"); lengths are in bytes.
 *
 * @param [in]    group  The group.
 * @param [inout] attr   field_mask in, the selected fields out.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM for NULL arguments.
 */
ucs_status_t
uct_gba_group_query(uct_gba_group_h group, uct_gba_group_attr_t *attr);


/**
 * Arrive at the next barrier (doc/design.md section 3, protocol step 2):
 * advance this member's 32-bit sequence number (the first barrier is 1; it
 * wraps from 2^32-1 to 0) and ring the ARRIVAL doorbell with
 * UCT_GBA_ARRIVAL_VALUE(member_id, seq), followed by a write barrier.  The
 * same as the doorbell store on the switch endpoint with that value.
 *
 * @param [in]  group  The group.
 * @param [out] seq_p  The barrier's sequence number, to pass to
 *                     uct_gba_group_test()/uct_gba_group_wait(); may be
 *                     NULL.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM for a NULL group.
 */
ucs_status_t uct_gba_group_arrive(uct_gba_group_h group, uint32_t *seq_p);


/**
 * Poll once for the release of barrier @a seq (doc/design.md section 3,
 * protocol step 4): one acquire load of the release flag and a wrap-safe
 * compare; the switch's STATUS.ERROR is looked at on the first poll of a
 * barrier and every 16th after, dead members after a few milliseconds of
 * polling (5 ms; a few system calls).  Needs no uct_worker_progress().
 *
 * @param [in] group  The group.
 * @param [in] seq    Sequence number from uct_gba_group_arrive() (or of a
 *                    doorbell the caller rang on the switch endpoint).
 *
 * @return UCS_OK: released;
 *         UCS_INPROGRESS: not yet;
 *         UCS_ERR_IO_ERROR: the switch dropped this member's arrival for
 *         @a seq (a wrong sequence number, a non-member id or a disabled
 *         group; attr.error_info tells which);
 *         UCS_ERR_CONNECTION_RESET: a member that had not arrived died
 *         (every waiter of that barrier gets it; the group cannot complete
 *         another barrier, destroy it);
 *         UCS_ERR_INVALID_PARAM: NULL group.
 */
ucs_status_t uct_gba_group_test(uct_gba_group_h group, uint32_t seq);


/**
 * Wait for the release of barrier @a seq (doc/design.md section 3, protocol
 * step 4, and the emulated device's "Waiting" rule): spin, then yield the
 * CPU, then sleep between polls (50 us), so that more processes than
 * cores make progress.  Progresses no UCT worker.
 *
 * @param [in] group       The group.
 * @param [in] seq         As for uct_gba_group_test().
 * @param [in] timeout_ms  Milliseconds; negative: no timeout.
 *
 * @return as uct_gba_group_test() (never UCS_INPROGRESS), or
 *         UCS_ERR_TIMED_OUT.
 */
ucs_status_t
uct_gba_group_wait(uct_gba_group_h group, uint32_t seq, int timeout_ms);

END_C_DECLS

#endif
