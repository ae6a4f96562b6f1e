/**
 * uct_gba: the GBA barrier through UCT (uct_gba.h, uct_gba(7) section GBA
 * BARRIER).
 *
 * A group handle is a member of a device group of the core library
 * (gba/gba.h: gba_group_join/arrive/test/wait/ring/diag/leave), on the
 * device of the interface's memory domain; nothing of the protocol is
 * reimplemented here (doc/design.md section 3).  What this file adds is the
 * hardware's presentation of the group in UCT terms:
 *
 *  - the switch endpoint: a uct_ep_t of a small interface object of the
 *    group's own (a uct_base_iface_t with an operations table of its own,
 *    like UCT's stub interface of failed endpoints), whose put_short and
 *    64-bit atomics at the ARRIVAL register of the group window are the
 *    doorbell store (gba_group_ring; the emulated switch's aggregation runs
 *    in the arriving process, as in the core library).  The remote address
 *    space of the switch endpoint is the switch's BAR: the window of group
 *    g is at GBA_GROUP_REG_BASE(g), 8 KiB, under the group's remote key;
 *  - the release flag: the word of the core library's flag memory the
 *    switch stores into (gba_group_flag).
 *
 * A doorbell carrying this member's id and its next sequence number goes
 * through gba_group_arrive, which stores the same value and advances the
 * member's sequence number in the core library, so that the raw store,
 * uct_gba_group_arrive() and uct_gba_group_test() can be mixed.
 */

/* clang-format off */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif
/* clang-format on */

#include "gba_iface.h"
#include "uct_gba.h"

#include <gba/gba.h>
#include <gba/gba_regs.h>
#include <uct/base/uct_iface.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/string.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>


/* The module is built with -fvisibility=hidden: the API of uct_gba.h is
 * exported explicitly */
#define UCT_GBA_API __attribute__((visibility("default")))

/* Bytes of the absent-member list in a failed barrier's log line */
#define UCT_GBA_ABSENT_LOG_LEN 512

/* Key id of a group window's remote key: apart from the memory domain's
 * registrations (counted from 1) */
#define UCT_GBA_WINDOW_KEY_ID(_index) (UCS_BIT(63) | (uint64_t)(_index))


/**
 * A member of a GBA barrier group
 */
/* clang-format off */
typedef struct uct_gba_group {
    /* Data path */
    struct gba_group        *grp;          /* Core library's group handle */
    uint32_t                seq;           /* Last sequence arrived with */
    uint32_t                member_id;
    uint64_t                arrival_addr;  /* Remote address of ARRIVAL */
    uct_gba_rkey_t          window;        /* The window's remote key */
    uct_ep_t                switch_ep;     /* Endpoint to the switch */
    uct_base_iface_t        switch_iface;  /* Its interface */

    /* Control plane */
    struct gba_dev          *dev;          /* Device of the md */
    uint32_t                index;         /* Hardware group */
    uint32_t                member_count;
    uint64_t                switch_addr;   /* GBA_REG_NETWORK_ADDR */
    const volatile uint64_t *flag;         /* This member's release flag */
    uint64_t                flag_iova;     /* RELEASE_ADDR[member_id] */
} uct_gba_group_t;
/* clang-format on */


/* errno of the core library's device and control-plane calls to a UCS
 * status (gba/gba.h) */
static ucs_status_t uct_gba_group_status(int err)
{
    switch (err) {
    case 0:
        return UCS_OK;
    case -EINVAL:
        return UCS_ERR_INVALID_PARAM;
    case -ENOSPC:
        return UCS_ERR_NO_RESOURCE;
    case -EADDRINUSE:
        return UCS_ERR_ALREADY_EXISTS;
    case -ENOMEM:
        return UCS_ERR_NO_MEMORY;
    case -EMFILE:
    case -ENFILE:
        return UCS_ERR_NO_RESOURCE;
    case -ENODEV:
    case -ENOENT:
        return UCS_ERR_NO_DEVICE;
    case -EACCES:
    case -EPERM:
        return UCS_ERR_REJECTED;
    case -EPROTO:
        return UCS_ERR_UNSUPPORTED;
    default:
        return UCS_ERR_IO_ERROR;
    }
}

/* Result of gba_group_test/gba_group_wait to a UCS status */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_gba_group_poll_status(int ret)
{
    if (ucs_likely(ret > 0)) {
        return UCS_OK;
    } else if (ucs_likely(ret == 0)) {
        return UCS_INPROGRESS;
    }

    switch (ret) {
    case -EPROTO:
        return UCS_ERR_IO_ERROR;
    case -EPIPE:
        return UCS_ERR_CONNECTION_RESET;
    case -ETIMEDOUT:
        return UCS_ERR_TIMED_OUT;
    case -EINVAL:
        return UCS_ERR_INVALID_PARAM;
    default:
        return UCS_ERR_IO_ERROR;
    }
}

/* Is @iface an interface of the gba transport?  Its operations table says
 * so without assuming anything of its layout */
static int uct_gba_iface_is_gba(uct_iface_h iface)
{
    return iface->ops.iface_progress == uct_gba_iface_progress;
}


/* The switch endpoint */

static UCS_F_ALWAYS_INLINE uct_gba_group_t *
uct_gba_switch_ep_group(uct_ep_h tl_ep)
{
    return ucs_container_of(tl_ep, uct_gba_group_t, switch_ep);
}

/* Why an access of @length bytes at @remote_addr under @rkey is not the
 * doorbell store */
static UCS_F_NOINLINE ucs_status_t uct_gba_switch_access_error(
        uct_gba_group_t *group, const char *what, uint64_t remote_addr,
        size_t length, uct_rkey_t rkey)
{
    const uct_gba_rkey_t *window = &group->window;

    if (rkey != (uintptr_t)window) {
        ucs_diag("gba: switch ep of group %u: %s with a remote key that is "
                 "not the group window's",
                 group->index, what);
        return UCS_ERR_INVALID_PARAM;
    }

    if (gba_eng_range_check(window->address, window->length, remote_addr,
                            length)) {
        ucs_diag("gba: switch ep of group %u: %s of %zu bytes at 0x%" PRIx64
                 " leaves the window 0x%" PRIx64 "..0x%" PRIx64,
                 group->index, what, length, remote_addr, window->address,
                 window->address + window->length);
        return UCS_ERR_OUT_OF_RANGE;
    }

    if (remote_addr != group->arrival_addr) {
        ucs_diag("gba: switch ep of group %u: %s at window offset 0x%" PRIx64
                 " (only ARRIVAL, 0x%x, takes a member's store)",
                 group->index, what, remote_addr - window->address,
                 GBA_ARRIVAL);
        return UCS_ERR_INVALID_ADDR;
    }

    ucs_diag("gba: switch ep of group %u: %s of %zu bytes to ARRIVAL (a "
             "doorbell is one 64-bit store)",
             group->index, what, length);
    return UCS_ERR_INVALID_PARAM;
}

static UCS_F_ALWAYS_INLINE ucs_status_t
uct_gba_switch_check(uct_gba_group_t *group, const char *what,
                     uint64_t remote_addr, size_t length, uct_rkey_t rkey)
{
    if (ucs_likely((rkey == (uintptr_t)&group->window) &&
                   (remote_addr == group->arrival_addr) &&
                   (length == sizeof(uint64_t)))) {
        return UCS_OK;
    }

    return uct_gba_switch_access_error(group, what, remote_addr, length, rkey);
}

/* Store @doorbell to ARRIVAL (protocol step 2).  Our own next arrival goes
 * through gba_group_arrive, which stores the same value and advances the
 * member's sequence number; any other value is stored as given. */
static UCS_F_ALWAYS_INLINE void
uct_gba_switch_ring(uct_gba_group_t *group, uint64_t doorbell)
{
    if (ucs_likely(doorbell ==
                   UCT_GBA_ARRIVAL_VALUE(group->member_id, group->seq + 1))) {
        group->seq = gba_group_arrive(group->grp);
    } else {
        gba_group_ring(group->grp, doorbell);
    }
}

static ucs_status_t
uct_gba_switch_ep_put_short(uct_ep_h tl_ep, const void *buffer, unsigned length,
                            uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_gba_group_t *group = uct_gba_switch_ep_group(tl_ep);
    ucs_status_t status;
    uint64_t doorbell;

    status = uct_gba_switch_check(group, "put_short", remote_addr, length,
                                  rkey);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    /* The buffer may be unaligned */
    memcpy(&doorbell, buffer, sizeof(doorbell));
    uct_gba_switch_ring(group, doorbell);
    return UCS_OK;
}

/* ARRIVAL reads as 0: the operations that store their operand into a zero
 * word */
static UCS_F_ALWAYS_INLINE int
uct_gba_switch_atomic_stores(unsigned opcode, int fetch)
{
    return (opcode == UCT_ATOMIC_OP_ADD) || (opcode == UCT_ATOMIC_OP_OR) ||
           (opcode == UCT_ATOMIC_OP_XOR) ||
           (fetch && (opcode == UCT_ATOMIC_OP_SWAP));
}

/* A 64-bit atomic @opcode of @value at @remote_addr: the doorbell store when
 * the operation stores its operand into ARRIVAL */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_gba_switch_atomic(
        uct_gba_group_t *group, const char *what, unsigned opcode, int fetch,
        uint64_t value, uint64_t remote_addr, uct_rkey_t rkey)
{
    ucs_status_t status;

    if (ucs_unlikely(!uct_gba_switch_atomic_stores(opcode, fetch))) {
        ucs_diag("gba: switch ep of group %u: %s opcode %u is not supported "
                 "(add, or, xor%s)",
                 group->index, what, opcode, fetch ? ", swap" : "");
        return UCS_ERR_UNSUPPORTED;
    }

    status = uct_gba_switch_check(group, what, remote_addr, sizeof(value),
                                  rkey);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_gba_switch_ring(group, value);
    return UCS_OK;
}

static ucs_status_t
uct_gba_switch_ep_atomic64_post(uct_ep_h tl_ep, unsigned opcode, uint64_t value,
                                uint64_t remote_addr, uct_rkey_t rkey)
{
    return uct_gba_switch_atomic(uct_gba_switch_ep_group(tl_ep),
                                 "atomic64_post", opcode, 0, value, remote_addr,
                                 rkey);
}

static ucs_status_t
uct_gba_switch_ep_atomic64_fetch(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                 uint64_t value, uint64_t *result,
                                 uint64_t remote_addr, uct_rkey_t rkey,
                                 uct_completion_t *comp)
{
    ucs_status_t status;

    status = uct_gba_switch_atomic(uct_gba_switch_ep_group(tl_ep),
                                   "atomic64_fetch", opcode, 1, value,
                                   remote_addr, rkey);
    if (status == UCS_OK) {
        *result = 0; /* ARRIVAL reads as 0 */
    }
    return status;
}

static ucs_status_t
uct_gba_switch_ep_atomic_cswap64(uct_ep_h tl_ep, uint64_t compare,
                                 uint64_t swap, uint64_t remote_addr,
                                 uct_rkey_t rkey, uint64_t *result,
                                 uct_completion_t *comp)
{
    uct_gba_group_t *group = uct_gba_switch_ep_group(tl_ep);
    ucs_status_t status;

    status = uct_gba_switch_check(group, "atomic_cswap64", remote_addr,
                                  sizeof(swap), rkey);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    if (compare == 0) {
        uct_gba_switch_ring(group, swap);
    }
    *result = 0;
    return UCS_OK;
}

static ucs_status_t uct_gba_switch_ep_pending_add(uct_ep_h tl_ep,
                                                  uct_pending_req_t *req,
                                                  unsigned flags)
{
    /* Never out of resources */
    return UCS_ERR_BUSY;
}

static void uct_gba_switch_ep_pending_purge(uct_ep_h tl_ep,
                                            uct_pending_purge_callback_t cb,
                                            void *arg)
{
}

static void uct_gba_switch_ep_destroy(uct_ep_h tl_ep)
{
    ucs_debug("gba: switch ep %p is owned by its group: not destroyed", tl_ep);
}

static ssize_t uct_gba_switch_ep_bcopy_unsupported(void)
{
    return UCS_ERR_UNSUPPORTED;
}

static void uct_gba_switch_iface_close(uct_iface_h tl_iface)
{
    ucs_debug("gba: the switch interface %p is owned by its group", tl_iface);
}

/* clang-format off */
static uct_iface_ops_t uct_gba_switch_iface_ops = {
    .ep_put_short             = uct_gba_switch_ep_put_short,
    .ep_put_bcopy             = (uct_ep_put_bcopy_func_t)
            uct_gba_switch_ep_bcopy_unsupported,
    .ep_put_zcopy             = (uct_ep_put_zcopy_func_t)
            ucs_empty_function_return_unsupported,
    .ep_get_short             = (uct_ep_get_short_func_t)
            ucs_empty_function_return_unsupported,
    .ep_get_bcopy             = (uct_ep_get_bcopy_func_t)
            ucs_empty_function_return_unsupported,
    .ep_get_zcopy             = (uct_ep_get_zcopy_func_t)
            ucs_empty_function_return_unsupported,
    .ep_am_short              = (uct_ep_am_short_func_t)
            ucs_empty_function_return_unsupported,
    .ep_am_short_iov          = (uct_ep_am_short_iov_func_t)
            ucs_empty_function_return_unsupported,
    .ep_am_bcopy              = (uct_ep_am_bcopy_func_t)
            uct_gba_switch_ep_bcopy_unsupported,
    .ep_am_zcopy              = (uct_ep_am_zcopy_func_t)
            ucs_empty_function_return_unsupported,
    .ep_atomic_cswap64        = uct_gba_switch_ep_atomic_cswap64,
    .ep_atomic_cswap32        = (uct_ep_atomic_cswap32_func_t)
            ucs_empty_function_return_unsupported,
    .ep_atomic32_post         = (uct_ep_atomic32_post_func_t)
            ucs_empty_function_return_unsupported,
    .ep_atomic64_post         = uct_gba_switch_ep_atomic64_post,
    .ep_atomic32_fetch        = (uct_ep_atomic32_fetch_func_t)
            ucs_empty_function_return_unsupported,
    .ep_atomic64_fetch        = uct_gba_switch_ep_atomic64_fetch,
    .ep_tag_eager_short       = (uct_ep_tag_eager_short_func_t)
            ucs_empty_function_return_unsupported,
    .ep_tag_eager_bcopy       = (uct_ep_tag_eager_bcopy_func_t)
            uct_gba_switch_ep_bcopy_unsupported,
    .ep_tag_eager_zcopy       = (uct_ep_tag_eager_zcopy_func_t)
            ucs_empty_function_return_unsupported,
    .ep_tag_rndv_zcopy        = (uct_ep_tag_rndv_zcopy_func_t)
            ucs_empty_function_return_ptr_no_resource,
    .ep_tag_rndv_cancel       = (uct_ep_tag_rndv_cancel_func_t)
            ucs_empty_function_return_unsupported,
    .ep_tag_rndv_request      = (uct_ep_tag_rndv_request_func_t)
            ucs_empty_function_return_unsupported,
    .iface_tag_recv_zcopy     = (uct_iface_tag_recv_zcopy_func_t)
            ucs_empty_function_return_unsupported,
    .iface_tag_recv_cancel    = (uct_iface_tag_recv_cancel_func_t)
            ucs_empty_function_return_unsupported,
    .ep_pending_add           = uct_gba_switch_ep_pending_add,
    .ep_pending_purge         = uct_gba_switch_ep_pending_purge,
    .ep_flush                 = (uct_ep_flush_func_t)
            ucs_empty_function_return_success,
    .ep_fence                 = (uct_ep_fence_func_t)
            ucs_empty_function_return_success,
    .ep_check                 = (uct_ep_check_func_t)
            ucs_empty_function_return_success,
    .ep_create                = (uct_ep_create_func_t)
            ucs_empty_function_return_unsupported,
    .ep_connect               = (uct_ep_connect_func_t)
            ucs_empty_function_return_unsupported,
    .ep_disconnect            = (uct_ep_disconnect_func_t)
            ucs_empty_function_return_unsupported,
    .cm_ep_conn_notify        = (uct_cm_ep_conn_notify_func_t)
            ucs_empty_function_return_unsupported,
    .ep_destroy               = uct_gba_switch_ep_destroy,
    .ep_get_address           = (uct_ep_get_address_func_t)
            ucs_empty_function_return_unsupported,
    .ep_connect_to_ep         = (uct_ep_connect_to_ep_func_t)
            ucs_empty_function_return_unsupported,
    .iface_accept             = (uct_iface_accept_func_t)
            ucs_empty_function_return_unsupported,
    .iface_reject             = (uct_iface_reject_func_t)
            ucs_empty_function_return_unsupported,
    .iface_flush              = (uct_iface_flush_func_t)
            ucs_empty_function_return_success,
    .iface_fence              = (uct_iface_fence_func_t)
            ucs_empty_function_return_success,
    .iface_progress_enable    = (uct_iface_progress_enable_func_t)
            ucs_empty_function,
    .iface_progress_disable   = (uct_iface_progress_disable_func_t)
            ucs_empty_function,
    .iface_progress           = (uct_iface_progress_func_t)
            ucs_empty_function_return_zero,
    .iface_event_fd_get       = (uct_iface_event_fd_get_func_t)
            ucs_empty_function_return_unsupported,
    .iface_event_arm          = (uct_iface_event_arm_func_t)
            ucs_empty_function_return_unsupported,
    .iface_close              = uct_gba_switch_iface_close,
    .iface_query              = (uct_iface_query_func_t)
            ucs_empty_function_return_unsupported,
    .iface_get_device_address = (uct_iface_get_device_address_func_t)
            ucs_empty_function_return_unsupported,
    .iface_get_address        = (uct_iface_get_address_func_t)
            ucs_empty_function_return_unsupported,
    .iface_is_reachable       = (uct_iface_is_reachable_func_t)
            ucs_empty_function_return_zero_int
};
/* clang-format on */


/* The API of uct_gba.h */

UCT_GBA_API ucs_status_t
uct_gba_group_create(uct_iface_h iface, const uct_gba_group_params_t *params,
                     uct_gba_group_h *group_p)
{
    const uint64_t required = UCT_GBA_GROUP_PARAM_FIELD_KEY |
                              UCT_GBA_GROUP_PARAM_FIELD_MEMBER_COUNT |
                              UCT_GBA_GROUP_PARAM_FIELD_MEMBER_ID;
    struct gba_group_attr join_attr;
    struct gba_group_diag diag;
    struct gba_dev_attr dev_attr;
    uct_gba_iface_t *gba_iface;
    uct_gba_group_t *group;
    ucs_status_t status;
    int ret;

    if ((iface == NULL) || (params == NULL) || (group_p == NULL)) {
        ucs_error("gba: uct_gba_group_create(iface=%p, params=%p, "
                  "group_p=%p): NULL argument",
                  iface, params, group_p);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!uct_gba_iface_is_gba(iface)) {
        ucs_error("gba: iface %p is not an interface of the " UCT_GBA_NAME
                  " transport",
                  iface);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((params->field_mask & required) != required) {
        ucs_error("gba: group parameters need key, member_count and "
                  "member_id (field_mask 0x%" PRIx64 ")",
                  params->field_mask);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((params->key == 0) || (params->member_count == 0) ||
        (params->member_count > UCT_GBA_GROUP_MAX_MEMBERS) ||
        (params->member_id >= params->member_count)) {
        ucs_error("gba: invalid group parameters: key 0x%" PRIx64
                  " (non-zero), member_count %u (1..%u), member_id %u "
                  "(below member_count)",
                  params->key, params->member_count, UCT_GBA_GROUP_MAX_MEMBERS,
                  params->member_id);
        return UCS_ERR_INVALID_PARAM;
    }

    gba_iface = ucs_derived_of(iface, uct_gba_iface_t);
    group     = ucs_calloc(1, sizeof(*group), "uct_gba_group");
    if (group == NULL) {
        ucs_error("gba: failed to allocate a group");
        return UCS_ERR_NO_MEMORY;
    }

    ret = gba_dev_open(gba_iface->md->device, &group->dev);
    if (ret == 0) {
        ret = gba_dev_query(group->dev, &dev_attr);
    }
    if (ret < 0) {
        ucs_error("gba: cannot open the GBA device '%s': %s",
                  gba_iface->md->device, gba_last_error(ret));
        status = uct_gba_group_status(ret);
        goto err_free;
    }

    join_attr.key          = params->key;
    join_attr.member_count = params->member_count;
    join_attr.member_id    = params->member_id;
    ret = gba_group_join(group->dev, &join_attr, &group->grp);
    if (ret == -ENOSPC) {
        /* The caller's cue to fall back to a software barrier */
        ucs_diag("gba: all %u hardware groups of %s are in use",
                 dev_attr.num_groups, dev_attr.path);
        status = UCS_ERR_NO_RESOURCE;
        goto err_close;
    } else if (ret < 0) {
        ucs_error("gba: cannot join group key 0x%" PRIx64 " as member %u of "
                  "%u: %s",
                  params->key, params->member_id, params->member_count,
                  (ret == -EADDRINUSE) ? "member id attached by a live "
                                         "process" :
                  (ret == -EINVAL)     ? "the group has another member "
                                         "count, or the device fewer members" :
                                         strerror(-ret));
        status = uct_gba_group_status(ret);
        goto err_close;
    }

    ret = gba_group_diag(group->grp, &diag);
    ucs_assert_always(ret == 0);
    group->flag = gba_group_flag(group->grp, &group->flag_iova);
    ucs_assert_always(group->flag != NULL);

    group->seq            = diag.local_seq;
    group->member_id      = params->member_id;
    group->member_count   = params->member_count;
    group->index          = diag.index;
    group->switch_addr    = dev_attr.network_addr;
    group->window.address = GBA_GROUP_REG_BASE(diag.index);
    group->window.length  = GBA_GROUP_REG_STRIDE;
    group->window.key_id  = UCT_GBA_WINDOW_KEY_ID(diag.index);
    group->arrival_addr   = group->window.address + GBA_ARRIVAL;

    /* The switch endpoint's interface: a base interface on the same md and
     * worker, with the switch's operations */
    group->switch_iface.super.ops                = uct_gba_switch_iface_ops;
    group->switch_iface.internal_ops             = &uct_base_iface_internal_ops;
    group->switch_iface.md                       = gba_iface->super.md;
    group->switch_iface.worker                   = gba_iface->super.worker;
    group->switch_iface.config.failure_level     = UCS_LOG_LEVEL_ERROR;
    group->switch_iface.config.num_alloc_methods = 0;
    group->switch_ep.iface                       = &group->switch_iface.super;

    ucs_debug("gba: group key 0x%" PRIx64 " member %u/%u: hardware group %u "
              "on %s, seq %u, flag iova 0x%" PRIx64,
              params->key, group->member_id, group->member_count, group->index,
              dev_attr.path, group->seq, group->flag_iova);
    *group_p = group;
    return UCS_OK;

err_close:
    gba_dev_close(group->dev);
err_free:
    ucs_free(group);
    return status;
}

UCT_GBA_API void uct_gba_group_destroy(uct_gba_group_h group)
{
    if (group == NULL) {
        return;
    }

    ucs_debug("gba: leaving hardware group %u as member %u", group->index,
              group->member_id);
    gba_group_leave(group->grp);
    gba_dev_close(group->dev);
    ucs_free(group);
}

UCT_GBA_API ucs_status_t uct_gba_group_query(uct_gba_group_h group,
                                             uct_gba_group_attr_t *attr)
{
    struct gba_group_diag diag;

    if ((group == NULL) || (attr == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (attr->field_mask & UCT_GBA_GROUP_ATTR_FIELD_INDEX) {
        attr->index = group->index;
    }
    if (attr->field_mask & UCT_GBA_GROUP_ATTR_FIELD_MEMBER_ID) {
        attr->member_id = group->member_id;
    }
    if (attr->field_mask & UCT_GBA_GROUP_ATTR_FIELD_MEMBER_COUNT) {
        attr->member_count = group->member_count;
    }
    if (attr->field_mask & UCT_GBA_GROUP_ATTR_FIELD_SEQ) {
        attr->seq = group->seq;
    }
    if (attr->field_mask & UCT_GBA_GROUP_ATTR_FIELD_SWITCH) {
        attr->switch_ep     = &group->switch_ep;
        attr->window_addr   = group->window.address;
        attr->window_length = group->window.length;
        attr->arrival_addr  = group->arrival_addr;
        attr->rkey          = (uintptr_t)&group->window;
        attr->switch_addr   = group->switch_addr;
    }
    if (attr->field_mask & UCT_GBA_GROUP_ATTR_FIELD_RELEASE_FLAG) {
        attr->release_flag      = group->flag;
        attr->release_flag_iova = group->flag_iova;
    }
    if (attr->field_mask & UCT_GBA_GROUP_ATTR_FIELD_REGS) {
        gba_group_diag(group->grp, &diag);
        attr->release_seq = diag.release_seq;
        attr->status      = diag.status;
        attr->error_info  = diag.error_info;
    }
    return UCS_OK;
}

UCT_GBA_API ucs_status_t uct_gba_group_arrive(uct_gba_group_h group,
                                              uint32_t *seq_p)
{
    if (ucs_unlikely(group == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }

    group->seq = gba_group_arrive(group->grp);
    if (seq_p != NULL) {
        *seq_p = group->seq;
    }
    return UCS_OK;
}

UCT_GBA_API ucs_status_t uct_gba_group_test(uct_gba_group_h group, uint32_t seq)
{
    if (ucs_unlikely(group == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }

    return uct_gba_group_poll_status(gba_group_test(group->grp, seq));
}

/* Log a barrier that failed or timed out, with the members it waits for
 * (member ids and pids, as gba_stat(1) shows them).  A timeout is a
 * warning (shown at UCX's default log level; the caller may wait again),
 * a failure an error. */
static UCS_F_NOINLINE void uct_gba_group_wait_failed(uct_gba_group_t *group,
                                                     uint32_t seq,
                                                     int timeout_ms, int err)
{
    char absent[UCT_GBA_ABSENT_LOG_LEN];

    if (gba_group_absent(group->grp, absent, sizeof(absent)) < 0) {
        ucs_strncpy_zero(absent, "unknown", sizeof(absent));
    }

    if (err == -ETIMEDOUT) {
        ucs_warn("gba: barrier %u on group %u (member %u of %u) timed out "
                 "after %d ms; absent: %s",
                 seq, group->index, group->member_id, group->member_count,
                 timeout_ms, absent);
    } else {
        ucs_error("gba: barrier %u on group %u (member %u of %u) failed: "
                  "%s; absent: %s",
                  seq, group->index, group->member_id, group->member_count,
                  strerror(-err), absent);
    }
}

UCT_GBA_API ucs_status_t uct_gba_group_wait(uct_gba_group_h group, uint32_t seq,
                                            int timeout_ms)
{
    int ret;

    if (ucs_unlikely(group == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }

    ret = gba_group_wait(group->grp, seq, timeout_ms);
    if (ucs_unlikely(ret < 0)) {
        uct_gba_group_wait_failed(group, seq, timeout_ms, ret);
    }
    /* 0: released (gba_group_test's 1) */
    return uct_gba_group_poll_status((ret == 0) ? 1 : ret);
}
