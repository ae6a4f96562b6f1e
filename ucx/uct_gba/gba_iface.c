/**
 * uct_gba: the "gba" transport's interface (over the GBA fabric engine), its
 * device and the module's registration with the running UCX.
 */

/* clang-format off */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif
/* clang-format on */

#include "gba_ep.h"
#include "gba_iface.h"
#include "gba_version.h"

#include <gba/gba.h>

#include <ucp/api/ucp.h>
#include <uct/api/version.h>
#include <ucs/arch/cpu.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/time/time.h>
#include <ucs/type/class.h>
#include <uct/base/uct_worker.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>


/* Forward declarations */
static uct_iface_ops_t uct_gba_iface_ops;


/* clang-format off */
static ucs_config_field_t uct_gba_iface_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_gba_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"SEG_SIZE", "64k",
     "Largest active message (am_bcopy, am_zcopy) and largest get_bcopy. Active\n"
     "messages above the size of a receive-queue slot go through a chunk of the\n"
     "interface's transmit region (UCX_GBA_TX_CHUNKS chunks of this size).",
     ucs_offsetof(uct_gba_iface_config_t, seg_size), UCS_CONFIG_TYPE_MEMUNITS},

    {"TX_CHUNKS", "64",
     "Chunks of the transmit region, shared memory the sender copies active\n"
     "messages above the size of a receive-queue slot into and the receiver\n"
     "reads them from (one copy on each side, pipelined), at most 64. A handler\n"
     "may keep a chunk as its receive descriptor; receivers keep at most 3/4\n"
     "of a sender's chunks at once. While all are in use, such sends return\n"
     "UCS_ERR_NO_RESOURCE. 0: no region; am_bcopy\n"
     "then goes up to a slot's size and the receiver reads larger am_zcopy\n"
     "messages from the sender's memory in place (one copy, by the receiver).",
     ucs_offsetof(uct_gba_iface_config_t, tx_chunks), UCS_CONFIG_TYPE_UINT},

    {"RX_QUEUE_LEN", "256",
     "Slots of the interface's receive queue (4 KiB each, a power of two,\n"
     "at most 65536): how many messages and remote operations other processes\n"
     "can queue here before their sends return UCS_ERR_NO_RESOURCE.",
     ucs_offsetof(uct_gba_iface_config_t, rx_queue_len), UCS_CONFIG_TYPE_UINT},

    {"MAX_OPS", "1024",
     "Operations of the interface outstanding at once (puts, gets, atomics,\n"
     "large active messages); beyond it, UCS_ERR_NO_RESOURCE.",
     ucs_offsetof(uct_gba_iface_config_t, max_ops), UCS_CONFIG_TYPE_UINT},

    {"LATENCY", "400ns",
     "One-way latency the interface reports to UCP's protocol selection.",
     ucs_offsetof(uct_gba_iface_config_t, latency), UCS_CONFIG_TYPE_TIME},

    {"ASYNC_INTERVAL", "0",
     "Period of an async progress that executes the remote puts, gets and\n"
     "atomics aimed at this interface while the application does not progress\n"
     "the worker (the GBA NIC needs no target CPU; the emulated fabric does).\n"
     "0: none, a target must progress for one-sided operations to complete, and\n"
     "no operation takes a lock. With a period, every operation takes the\n"
     "worker's async context; avoid it with more processes than cores.",
     ucs_offsetof(uct_gba_iface_config_t, async_interval), UCS_CONFIG_TYPE_TIME},

    {"BANDWIDTH", "12000MBs",
     "Bandwidth the interface reports to UCP's protocol selection.",
     ucs_offsetof(uct_gba_iface_config_t, bandwidth), UCS_CONFIG_TYPE_BW},

    {"NET_ADDR", "",
     "Address (numeric or a host name) on which the interface listens for\n"
     "peers on other hosts (the fabric engine's TCP path); \"none\" disables it.\n"
     "Empty: $GBA_NET_ADDR, else the address the host name resolves to.",
     ucs_offsetof(uct_gba_iface_config_t, net_addr), UCS_CONFIG_TYPE_STRING},

    {NULL}
};
/* clang-format on */


ucs_status_t uct_gba_status(int err)
{
    switch (err) {
    case 0:
        return UCS_OK;
    case -EAGAIN:
        return UCS_ERR_NO_RESOURCE;
    case -ENOMEM:
    case -ENOSPC:
        return UCS_ERR_NO_MEMORY;
    case -EMFILE:
    case -ENFILE:
        return UCS_ERR_NO_RESOURCE;
    case -EINVAL:
        return UCS_ERR_INVALID_PARAM;
    case -ENOKEY:
        return UCS_ERR_INVALID_ADDR;
    case -EACCES:
    case -EPERM:
        return UCS_ERR_REJECTED;
    case -ERANGE:
        return UCS_ERR_OUT_OF_RANGE;
    case -EHOSTUNREACH:
        return UCS_ERR_UNREACHABLE;
    case -EPIPE:
    case -ESRCH:
        return UCS_ERR_CONNECTION_RESET;
    case -EMSGSIZE:
        return UCS_ERR_EXCEEDS_LIMIT;
    default:
        return UCS_ERR_IO_ERROR;
    }
}


/* Engine callbacks (struct gba_eng_ops), called from uct_gba_iface_progress */

/* A message or completion the timer's progress took, kept for the thread
 * that progresses the worker (UCP's callbacks run there only) */
typedef struct {
    ucs_queue_elem_t queue;
    struct gba_eng_rx *rx; /* gba_eng_rx_hold() copy */
} uct_gba_deferred_rx_t;

static void
uct_gba_iface_am_deliver(uct_gba_iface_t *iface, struct gba_eng_rx *rx);

static void uct_gba_iface_fab_recv(void *ctx, struct gba_eng_rx *rx)
{
    uct_gba_iface_t *iface = ctx;
    uct_gba_deferred_rx_t *deferred;

    if (ucs_likely(!iface->in_async)) {
        uct_gba_iface_am_deliver(iface, rx);
        return;
    }

    deferred = ucs_malloc(sizeof(*deferred), "gba_deferred_rx");
    if (deferred != NULL) {
        deferred->rx = gba_eng_rx_hold(rx);
    }
    if ((deferred == NULL) || (deferred->rx == NULL)) {
        ucs_error("gba: out of memory keeping a message from %u/%u",
                  rx->src.pid, rx->src.ep_id);
        ucs_free(deferred);
        gba_eng_rx_done(iface->eng_ep, rx, -ENOMEM);
        return;
    }
    /* The original is finished by the copy's gba_eng_rx_done */
    ucs_queue_push(&iface->deferred_rx, &deferred->queue);
}

/* Deliver active message @rx to its handler, then finish it */
static void
uct_gba_iface_am_deliver(uct_gba_iface_t *iface, struct gba_eng_rx *rx)
{
    uint64_t id = rx->tag & ~(uint64_t)UCT_GBA_TAG_CHUNK;
    uct_gba_chunk_notice_t notice;
    ucs_status_t status;
    struct iovec vec;
    uct_recv_desc_t *release_desc = &iface->release_desc;
    void *elem, *desc, *data;
    ssize_t copied;

    if (ucs_unlikely((id >= UCT_AM_ID_MAX) ||
                     ((rx->tag & UCT_GBA_TAG_CHUNK) &&
                      ((rx->payload == NULL) ||
                       (rx->len != sizeof(notice)))))) {
        ucs_error("gba: dropped a message with active message id %" PRIu64
                  " (tag 0x%" PRIx64 ", %" PRIu64 " bytes) from %u/%u",
                  id, rx->tag, rx->len, rx->src.pid, rx->src.ep_id);
        gba_eng_rx_done(iface->eng_ep, rx, -EINVAL);
        return;
    }

    if (rx->tag & UCT_GBA_TAG_CHUNK) {
        /* A notice: the message is in a chunk of the sender's region,
         * which the handler may keep as its descriptor (see gba_chunk.h) */
        memcpy(&notice, rx->payload, sizeof(notice));
        gba_eng_rx_done(iface->eng_ep, rx, 0);
        if (uct_gba_chunk_recv(&iface->chunks, rx->src.pid, &notice, &data) !=
            UCS_OK) {
            return; /* logged; the sender's chunk stays busy */
        }
        desc = iface->chunk_keep ?
                       uct_gba_chunk_keep(data, iface->rx_headroom,
                                          &iface->chunk_release_desc) :
                       NULL;
        uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV, (uint8_t)id,
                           data, notice.length, "RX: AM");
        status = uct_iface_invoke_am(&iface->super, id, data, notice.length,
                                     (desc != NULL) ? UCT_CB_PARAM_FLAG_DESC :
                                                      0);
        if ((desc == NULL) || (status != UCS_INPROGRESS)) {
            uct_gba_chunk_release(data);
        } /* else kept: uct_gba_iface_chunk_release_desc frees it */
        return;
    }

    if (rx->payload != NULL) {
        /* In the queue's slot, valid during the callback only */
        uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV, (uint8_t)id,
                           rx->payload, rx->len, "RX: AM");
        uct_iface_invoke_am(&iface->super, id, (void *)rx->payload, rx->len,
                            0);
        gba_eng_rx_done(iface->eng_ep, rx, 0);
        return;
    }

    /* A large active message: single copy from the sender's memory into a
     * receive descriptor the handler may keep (UCT_CB_PARAM_FLAG_DESC) */
    if (ucs_unlikely(rx->len > iface->seg_size)) {
        ucs_error("gba: dropped an active message of %" PRIu64
                  " bytes from %u/%u (UCX_GBA_SEG_SIZE is %zu)",
                  rx->len, rx->src.pid, rx->src.ep_id, iface->seg_size);
        gba_eng_rx_done(iface->eng_ep, rx, -EMSGSIZE);
        return;
    }

    elem = ucs_mpool_get_inline(&iface->rx_mp);
    if (ucs_unlikely(elem == NULL)) {
        ucs_error("gba: out of receive descriptors for a message from %u/%u",
                  rx->src.pid, rx->src.ep_id);
        gba_eng_rx_done(iface->eng_ep, rx, -ENOMEM);
        return;
    }

    desc         = UCS_PTR_BYTE_OFFSET(elem, iface->rx_pad + sizeof(void*));
    data         = UCS_PTR_BYTE_OFFSET(desc, iface->rx_headroom);
    vec.iov_base = data;
    vec.iov_len  = rx->len;
    copied       = gba_eng_rx_copy(iface->eng_ep, rx, &vec, 1, 0);
    if (ucs_unlikely(copied != (ssize_t)rx->len)) {
        ucs_error("gba: cannot read an active message from %u/%u: %s",
                  rx->src.pid, rx->src.ep_id,
                  (copied < 0) ? strerror(-copied) : "short copy");
        gba_eng_rx_done(iface->eng_ep, rx, (copied < 0) ? copied : -EIO);
        ucs_mpool_put_inline(elem);
        return;
    }
    /* The sender's buffer is free: answer before the handler runs */
    gba_eng_rx_done(iface->eng_ep, rx, 0);

    /* uct_recv_desc(desc), which an odd headroom or alignment offset may
     * leave unaligned */
    memcpy(UCS_PTR_BYTE_OFFSET(desc, -sizeof(void*)), &release_desc,
           sizeof(release_desc));
    uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV, (uint8_t)id, data,
                       vec.iov_len, "RX: AM");
    status = uct_iface_invoke_am(&iface->super, id, data, vec.iov_len,
                                 UCT_CB_PARAM_FLAG_DESC);
    if (status == UCS_OK) {
        ucs_mpool_put_inline(elem);
    }
}

/* uct_iface_release_desc of a descriptor a handler kept: @desc is the
 * start of its headroom, the pointer to the iface's release_desc is
 * before it */
static void uct_gba_iface_release_desc(uct_recv_desc_t *self, void *desc)
{
    uct_gba_iface_t *iface = ucs_container_of(self, uct_gba_iface_t,
                                              release_desc);

    ucs_mpool_put_inline(
            UCS_PTR_BYTE_OFFSET(desc, -(sizeof(void*) + iface->rx_pad)));
}

/* uct_iface_release_desc of a chunk a handler kept */
static void uct_gba_iface_chunk_release_desc(uct_recv_desc_t *self, void *desc)
{
    uct_gba_iface_t *iface = ucs_container_of(self, uct_gba_iface_t,
                                              chunk_release_desc);

    uct_gba_chunk_release(UCS_PTR_BYTE_OFFSET(desc, iface->rx_headroom));
}

static void uct_gba_iface_fab_complete(void *ctx, uint64_t cookie, int status)
{
    uct_gba_iface_t *iface = ctx;
    uct_gba_op_t *op       = (uct_gba_op_t *)(uintptr_t)cookie;

    if (ucs_likely(!iface->in_async)) {
        uct_gba_op_complete(iface, op, status);
        return;
    }

    op->status = status;
    ucs_queue_push(&iface->deferred_ops, &op->deferred);
}


/* Target side of a put, get or atomic: the registration of @key must
 * contain the range and grant the access (uct_gba_md_memh_check) */
static int uct_gba_iface_fab_mr_lookup(void *ctx, uint64_t key, uint64_t addr,
                                       size_t len, uint32_t access, void **ptr)
{
    uct_gba_iface_t *iface = ctx;
    uct_gba_memh_t *memh;
    int ret;

    ret = uct_gba_md_memh_check(iface->md, key, addr, len, access, &memh);
    if (ret == 0) {
        *ptr = (void*)(uintptr_t)addr;
    }
    return ret;
}

static const struct gba_eng_ops uct_gba_iface_fab_ops = {
        .recv      = uct_gba_iface_fab_recv,
        .complete  = uct_gba_iface_fab_complete,
        .mr_lookup = uct_gba_iface_fab_mr_lookup,
        .atomic    = NULL /* the engine's: 32/64-bit integers, CPU atomics */
};


/* What the timer's progress took, in arrival order */
static unsigned uct_gba_iface_drain_deferred(uct_gba_iface_t *iface)
{
    uct_gba_deferred_rx_t *deferred;
    unsigned count = 0;
    uct_gba_op_t *op;

    while (!ucs_queue_is_empty(&iface->deferred_ops)) {
        op = ucs_queue_pull_elem_non_empty(&iface->deferred_ops, uct_gba_op_t,
                                           deferred);
        uct_gba_op_complete(iface, op, op->status);
        ++count;
    }

    while (!ucs_queue_is_empty(&iface->deferred_rx)) {
        deferred = ucs_queue_pull_elem_non_empty(&iface->deferred_rx,
                                                 uct_gba_deferred_rx_t, queue);
        uct_gba_iface_am_deliver(iface, deferred->rx);
        ucs_free(deferred);
        ++count;
    }
    return count;
}

static unsigned uct_gba_iface_progress_nolock(uct_gba_iface_t *iface)
{
    uct_gba_pending_priv_t *priv;
    unsigned count = 0;
    int ret;

    ++iface->progress_gen;
    if (ucs_unlikely(!ucs_queue_is_empty(&iface->deferred_ops) ||
                     !ucs_queue_is_empty(&iface->deferred_rx))) {
        count += uct_gba_iface_drain_deferred(iface);
    }

    ret = gba_eng_progress(iface->eng_ep);
    if (ret > 0) {
        count += ret;
    }

    if (ucs_unlikely(!ucs_queue_is_empty(&iface->pending))) {
        /* The requests' operations may start although others still wait */
        iface->dispatching = 1;
        uct_pending_queue_dispatch(priv, &iface->pending, 1);
        iface->dispatching = 0;
    }
    return count;
}

unsigned uct_gba_iface_progress(uct_iface_h tl_iface)
{
    uct_gba_iface_t *iface = ucs_derived_of(tl_iface, uct_gba_iface_t);
    unsigned count;

    uct_gba_iface_enter(iface);
    count = uct_gba_iface_progress_nolock(iface);
    uct_gba_iface_leave(iface);
    return count;
}

/*
 * Async progress: the GBA NIC executes remote puts, gets and atomics without
 * the target's CPU.  The emulated fabric executes them in the target's
 * progress, so a timer progresses the interface while the thread that owns
 * the worker does not (computing, or blocked outside UCX).  It runs with the
 * async context held, so it only empties the queue once and returns: the
 * worker's thread must not wait for it.  The messages and completions it
 * takes are left for that thread's next progress, as are pending requests.
 */
static void
uct_gba_iface_async_progress(int id, ucs_event_set_types_t events, void *arg)
{
    uct_gba_iface_t *iface = arg;

    if (iface->progress_gen != iface->async_gen) {
        /* The worker is being progressed */
        iface->async_gen = iface->progress_gen;
        return;
    }

    iface->in_async = 1;
    while (gba_eng_progress(iface->eng_ep) > 0) {
    }
    iface->in_async = 0;
}

static ucs_status_t uct_gba_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                        uct_completion_t *comp)
{
    uct_gba_iface_t *iface = ucs_derived_of(tl_iface, uct_gba_iface_t);
    int busy;

    if (comp != NULL) {
        return UCS_ERR_UNSUPPORTED;
    }

    /* Pending requests are operations not started yet: not flushed */
    uct_gba_iface_enter(iface);
    busy = (iface->outstanding > 0) || !ucs_queue_is_empty(&iface->pending);
    uct_gba_iface_leave(iface);
    if (busy) {
        UCT_TL_IFACE_STAT_FLUSH_WAIT(&iface->super);
        return UCS_INPROGRESS;
    }
    UCT_TL_IFACE_STAT_FLUSH(&iface->super);
    return UCS_OK;
}

/* uct_iface_fence: direct accesses wait until the operations that went
 * through the queue before the fence completed (see uct_gba_ep_direct) */
static ucs_status_t uct_gba_iface_fence(uct_iface_h tl_iface, unsigned flags)
{
    uct_gba_iface_t *iface = ucs_derived_of(tl_iface, uct_gba_iface_t);

    uct_gba_iface_enter(iface);
    iface->fenced = (iface->outstanding > 0);
    uct_gba_iface_leave(iface);
    ucs_memory_cpu_fence();
    UCT_TL_IFACE_STAT_FENCE(&iface->super);
    return UCS_OK;
}

static ucs_status_t
uct_gba_iface_query(uct_iface_h tl_iface, uct_iface_attr_t *iface_attr)
{
    uct_gba_iface_t *iface = ucs_derived_of(tl_iface, uct_gba_iface_t);
    const uint64_t amo     = UCS_BIT(UCT_ATOMIC_OP_ADD) |
                         UCS_BIT(UCT_ATOMIC_OP_AND) |
                         UCS_BIT(UCT_ATOMIC_OP_OR) | UCS_BIT(UCT_ATOMIC_OP_XOR);

    uct_base_iface_query(&iface->super, iface_attr);

    iface_attr->iface_addr_len  = sizeof(uct_gba_iface_addr_t);
    iface_attr->device_addr_len = sizeof(uct_gba_device_addr_t);
    iface_attr->ep_addr_len     = 0;
    iface_attr->max_conn_priv   = 0;
    /* Atomics run on the target's CPU, with the CPU's atomic instructions:
     * consistent with the target's own CPU atomics (UCT_IFACE_FLAG_ATOMIC_CPU,
     * as the shared-memory transports) */
    iface_attr->cap.flags = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                            UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                            UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PUT_SHORT |
                            UCT_IFACE_FLAG_PUT_BCOPY |
                            UCT_IFACE_FLAG_PUT_ZCOPY |
                            UCT_IFACE_FLAG_GET_BCOPY |
                            UCT_IFACE_FLAG_GET_ZCOPY |
                            UCT_IFACE_FLAG_ATOMIC_CPU | UCT_IFACE_FLAG_PENDING |
                            UCT_IFACE_FLAG_CB_SYNC;
    iface_attr->cap.event_flags = 0;

    iface_attr->cap.atomic32.op_flags  = amo;
    iface_attr->cap.atomic64.op_flags  = amo;
    iface_attr->cap.atomic32.fop_flags = amo | UCS_BIT(UCT_ATOMIC_OP_SWAP) |
                                         UCS_BIT(UCT_ATOMIC_OP_CSWAP);
    iface_attr->cap.atomic64.fop_flags = iface_attr->cap.atomic32.fop_flags;

    iface_attr->cap.put.max_short       = UCT_GBA_MAX_INLINE;
    iface_attr->cap.put.max_bcopy       = UCT_GBA_MAX_INLINE;
    iface_attr->cap.put.min_zcopy       = 0;
    iface_attr->cap.put.max_zcopy       = SIZE_MAX;
    iface_attr->cap.put.opt_zcopy_align = 1;
    iface_attr->cap.put.align_mtu       = 1;
    iface_attr->cap.put.max_iov         = GBA_ENG_MAX_IOV;

    iface_attr->cap.get.max_short       = 0;
    iface_attr->cap.get.max_bcopy       = iface->seg_size;
    iface_attr->cap.get.min_zcopy       = 0;
    iface_attr->cap.get.max_zcopy       = SIZE_MAX;
    iface_attr->cap.get.opt_zcopy_align = 1;
    iface_attr->cap.get.align_mtu       = 1;
    iface_attr->cap.get.max_iov         = GBA_ENG_MAX_IOV;

    iface_attr->cap.am.max_short       = UCT_GBA_MAX_INLINE;
    iface_attr->cap.am.max_bcopy       = iface->chunks.count ?
                                         iface->seg_size :
                                         UCT_GBA_MAX_INLINE;
    iface_attr->cap.am.min_zcopy       = 0;
    iface_attr->cap.am.max_zcopy       = iface->seg_size;
    iface_attr->cap.am.opt_zcopy_align = 1;
    iface_attr->cap.am.align_mtu       = 1;
    iface_attr->cap.am.max_hdr         = UCT_GBA_AM_MAX_HDR;
    iface_attr->cap.am.max_iov         = GBA_ENG_MAX_IOV - 1;

    iface_attr->latency             = ucs_linear_func_make(iface->latency, 0);
    iface_attr->bandwidth.dedicated = 0;
    iface_attr->bandwidth.shared    = iface->bandwidth;
    iface_attr->overhead            = 50e-9;
    iface_attr->priority            = 0;
    return UCS_OK;
}

static ucs_status_t
uct_gba_iface_get_address(uct_iface_h tl_iface, uct_iface_addr_t *addr)
{
    uct_gba_iface_t *iface = ucs_derived_of(tl_iface, uct_gba_iface_t);

    /* UCP packs addresses at any alignment */
    memcpy(addr, gba_eng_ep_addr(iface->eng_ep), sizeof(uct_gba_iface_addr_t));
    return UCS_OK;
}

static ucs_status_t
uct_gba_iface_get_device_address(uct_iface_h tl_iface, uct_device_addr_t *addr)
{
    uct_gba_device_addr_t host_id = gba_host_id();

    memcpy(addr, &host_id, sizeof(host_id));
    return UCS_OK;
}

/* Reachable: an interface of the GBA fabric of this host (shared memory),
 * or of another host when both have a network address (TCP; gba_addr_reach) */
static int uct_gba_iface_is_reachable(const uct_iface_h tl_iface,
                                      const uct_device_addr_t *dev_addr,
                                      const uct_iface_addr_t *iface_addr)
{
    uct_gba_iface_t *iface = ucs_derived_of(tl_iface, uct_gba_iface_t);
    uct_gba_device_addr_t host_id;
    uct_gba_iface_addr_t addr;

    if ((dev_addr == NULL) || (iface_addr == NULL)) {
        return 0;
    }

    /* Copies: UCP packs addresses at any alignment */
    memcpy(&host_id, dev_addr, sizeof(host_id));
    memcpy(&addr, iface_addr, sizeof(addr));
    if (!gba_addr_valid(&addr, sizeof(addr)) || (addr.host_id != host_id)) {
        return 0;
    }
    return gba_addr_reach(gba_eng_ep_addr(iface->eng_ep), &addr) !=
           GBA_REACH_NONE;
}

static ucs_mpool_ops_t uct_gba_iface_mpool_ops = {
        .chunk_alloc   = ucs_mpool_chunk_malloc,
        .chunk_release = ucs_mpool_chunk_free,
        .obj_init      = NULL,
        .obj_cleanup   = NULL,
        .obj_str       = NULL};

static UCS_CLASS_INIT_FUNC(uct_gba_iface_t, uct_md_h md, uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
    uct_gba_iface_config_t *config = ucs_derived_of(tl_config,
                                                    uct_gba_iface_config_t);
    size_t payload_offset, align, align_offset, am_align, am_offset;
    struct gba_eng_ep_attr attr;
    ucs_status_t status;
    int ret;

    UCT_CHECK_PARAM(params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE,
                    "UCT_IFACE_PARAM_FIELD_OPEN_MODE is not defined");
    if (!(params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE)) {
        ucs_error("gba: only UCT_IFACE_OPEN_MODE_DEVICE is supported");
        return UCS_ERR_UNSUPPORTED;
    }

    if ((params->field_mask & UCT_IFACE_PARAM_FIELD_DEVICE) &&
        strcmp(params->mode.device.dev_name, UCT_GBA_NAME)) {
        ucs_error("gba: no device '%s' (the device is '" UCT_GBA_NAME "')",
                  params->mode.device.dev_name);
        return UCS_ERR_NO_DEVICE;
    }

    if (ucs_derived_of(worker, uct_priv_worker_t)->thread_mode ==
        UCS_THREAD_MODE_MULTI) {
        ucs_error("gba: a multi-threaded worker is not supported");
        return UCS_ERR_INVALID_PARAM;
    }

    if ((config->seg_size < UCT_GBA_MAX_INLINE) ||
        (config->seg_size > UCS_GBYTE)) {
        ucs_error("gba: UCX_GBA_SEG_SIZE=%zu out of range [%d, 1g]",
                  config->seg_size, UCT_GBA_MAX_INLINE);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!ucs_is_pow2(config->rx_queue_len) || (config->rx_queue_len > 65536)) {
        ucs_error("gba: UCX_GBA_RX_QUEUE_LEN=%u is not a power of two up to "
                  "65536",
                  config->rx_queue_len);
        return UCS_ERR_INVALID_PARAM;
    }
    if (config->max_ops == 0) {
        ucs_error("gba: UCX_GBA_MAX_OPS must be positive");
        return UCS_ERR_INVALID_PARAM;
    }
    if (config->tx_chunks > UCT_GBA_TX_CHUNKS_MAX) {
        ucs_error("gba: UCX_GBA_TX_CHUNKS=%u is more than %d",
                  config->tx_chunks, UCT_GBA_TX_CHUNKS_MAX);
        return UCS_ERR_INVALID_PARAM;
    }

    UCS_CLASS_CALL_SUPER_INIT(uct_base_iface_t, &uct_gba_iface_ops,
                              &uct_base_iface_internal_ops, md, worker, params,
                              tl_config UCS_STATS_ARG(
                                      (params->field_mask &
                                       UCT_IFACE_PARAM_FIELD_STATS_ROOT) ?
                                              params->stats_root :
                                              NULL)
                                      UCS_STATS_ARG(UCT_GBA_NAME));

    self->md           = ucs_derived_of(md, uct_gba_md_t);
    self->seg_size     = config->seg_size;
    self->latency      = config->latency;
    self->bandwidth    = config->bandwidth;
    self->outstanding  = 0;
    self->async        = NULL;
    self->timer_id     = -1;
    self->progress_gen = 0;
    self->async_gen    = 0;
    self->in_async     = 0;
    self->fenced       = 0;
    self->dispatching  = 0;
    ucs_queue_head_init(&self->pending);
    ucs_queue_head_init(&self->deferred_rx);
    ucs_queue_head_init(&self->deferred_ops);

    status = ucs_mpool_init(&self->op_mp, 0, sizeof(uct_gba_op_t), 0,
                            UCS_SYS_CACHE_LINE_SIZE, 128, UINT_MAX,
                            &uct_gba_iface_mpool_ops, "gba_op");
    if (status != UCS_OK) {
        return status;
    }

    status = ucs_mpool_init(&self->buf_mp, 0, self->seg_size, 0,
                            UCS_SYS_CACHE_LINE_SIZE, 4, UINT_MAX,
                            &uct_gba_iface_mpool_ops, "gba_get_buf");
    if (status != UCS_OK) {
        goto err_op_mp;
    }

    /* Receive descriptor: the pointer uct_recv_desc() reads, the user's
     * headroom, the message; the handler's data is aligned to a cache line,
     * or as UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT and _AM_ALIGN_OFFSET ask */
    self->rx_headroom     = (params->field_mask &
                             UCT_IFACE_PARAM_FIELD_RX_HEADROOM) ?
                                    params->rx_headroom :
                                    0;
    self->release_desc.cb = uct_gba_iface_release_desc;
    payload_offset        = sizeof(void *) + self->rx_headroom;
    if ((params->field_mask & UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT) &&
        !ucs_is_pow2(params->am_alignment)) {
        ucs_error("gba: AM alignment %zu is not a power of two",
                  params->am_alignment);
        status = UCS_ERR_INVALID_PARAM;
        goto err_buf_mp;
    }
    status = uct_iface_param_am_alignment(params, self->seg_size,
                                          payload_offset, payload_offset,
                                          &align, &align_offset);
    if (status != UCS_OK) {
        goto err_buf_mp;
    }
    /* The element itself stays pointer-aligned (the pool's header before
     * it, the receive path's loads); a pad in front of the descriptor's
     * pointer puts the data where the alignment asks */
    self->rx_pad = (align - (align_offset % align)) % align;
    /* A chunk kept as a descriptor: its data is where the sender put it,
     * UCT_GBA_CHUNK_ALIGN-aligned (uct_gba_chunk_keep checks that the
     * headroom fits the chunk's header) */
    am_align  = (params->field_mask & UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT) ?
                        params->am_alignment :
                        1;
    am_offset = (params->field_mask & UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET) ?
                        params->am_align_offset :
                        0;
    self->chunk_keep = (am_align <= UCT_GBA_CHUNK_ALIGN) &&
                       ((am_offset % am_align) == 0);
    self->chunk_release_desc.cb = uct_gba_iface_chunk_release_desc;
    status = ucs_mpool_init(&self->rx_mp, 0,
                            self->rx_pad + payload_offset + self->seg_size, 0,
                            ucs_max(align, sizeof(void*)), 4, UINT_MAX,
                            &uct_gba_iface_mpool_ops, "gba_rx_desc");
    if (status != UCS_OK) {
        goto err_buf_mp;
    }

    uct_gba_chunks_init(&self->chunks, self->seg_size, config->tx_chunks);
    self->tx_buf = ucs_malloc(UCT_GBA_MAX_INLINE, "gba_tx_buf");
    if (self->tx_buf == NULL) {
        ucs_error("gba: failed to allocate the bounce buffer");
        status = UCS_ERR_NO_MEMORY;
        goto err_bufs;
    }

    memset(&attr, 0, sizeof(attr));
    attr.rx_slots = config->rx_queue_len;
    attr.max_ops  = config->max_ops;
    attr.ops      = &uct_gba_iface_fab_ops;
    attr.ctx      = self;
    attr.net_addr = (config->net_addr[0] != '\0') ? config->net_addr : NULL;
    /* UCT reports no remote-read event: large gets are copied by both */
    attr.flags    = GBA_ENG_EP_SHARED_GET;
    ret           = gba_eng_ep_open(&attr, &self->eng_ep);
    if (ret < 0) {
        ucs_error("gba: cannot open the fabric endpoint: %s",
                  gba_last_error(ret));
        status = uct_gba_status(ret);
        goto err_bufs;
    }

    if (config->async_interval > 0) {
        self->async = ucs_derived_of(worker, uct_priv_worker_t)->async;
        status      = ucs_async_add_timer(self->async->mode,
                                          ucs_time_from_sec(config->async_interval),
                                          uct_gba_iface_async_progress, self,
                                          self->async, &self->timer_id);
        if (status != UCS_OK) {
            ucs_error("gba: cannot start the async progress: %s",
                      ucs_status_string(status));
            gba_eng_ep_close(self->eng_ep);
            goto err_bufs;
        }
    }

    ucs_debug("gba: opened iface %p on md %p, address %u/%u", self, md,
              gba_eng_ep_addr(self->eng_ep)->pid,
              gba_eng_ep_addr(self->eng_ep)->ep_id);
    return UCS_OK;

err_bufs:
    uct_gba_chunks_cleanup(&self->chunks);
    ucs_free(self->tx_buf);
    ucs_mpool_cleanup(&self->rx_mp, 0);
err_buf_mp:
    ucs_mpool_cleanup(&self->buf_mp, 0);
err_op_mp:
    ucs_mpool_cleanup(&self->op_mp, 0);
    return status;
}

static UCS_CLASS_CLEANUP_FUNC(uct_gba_iface_t)
{
    uct_gba_deferred_rx_t *deferred;

    if (self->timer_id >= 0) {
        ucs_async_remove_handler(self->timer_id, 1);
    }
    uct_base_iface_progress_disable(&self->super.super,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    while (!ucs_queue_is_empty(&self->deferred_rx)) {
        deferred = ucs_queue_pull_elem_non_empty(&self->deferred_rx,
                                                 uct_gba_deferred_rx_t, queue);
        gba_eng_rx_done(self->eng_ep, deferred->rx, -ECANCELED);
        ucs_free(deferred);
    }
    /* Outstanding operations are dropped by the engine, without callbacks */
    gba_eng_ep_close(self->eng_ep);
    uct_gba_chunks_cleanup(&self->chunks);
    ucs_free(self->tx_buf);
    /* Descriptors a handler kept are the user's to release (no check) */
    ucs_mpool_cleanup(&self->rx_mp, 0);
    ucs_mpool_cleanup(&self->buf_mp, 0);
    ucs_mpool_cleanup(&self->op_mp, 0);
    ucs_debug("gba: closed iface %p", self);
}

UCS_CLASS_DEFINE(uct_gba_iface_t, uct_base_iface_t);

static UCS_CLASS_DEFINE_DELETE_FUNC(uct_gba_iface_t, uct_iface_t);

static UCS_CLASS_DEFINE_NEW_FUNC(uct_gba_iface_t, uct_iface_t, uct_md_h,
                                 uct_worker_h, const uct_iface_params_t *,
                                 const uct_iface_config_t *);

/* clang-format off */
static uct_iface_ops_t uct_gba_iface_ops = {
    .ep_put_short             = uct_gba_ep_put_short,
    .ep_put_bcopy             = uct_gba_ep_put_bcopy,
    .ep_put_zcopy             = uct_gba_ep_put_zcopy,
    .ep_get_short             = (uct_ep_get_short_func_t)
            ucs_empty_function_return_unsupported,
    .ep_get_bcopy             = uct_gba_ep_get_bcopy,
    .ep_get_zcopy             = uct_gba_ep_get_zcopy,
    .ep_am_short              = uct_gba_ep_am_short,
    .ep_am_short_iov          = uct_gba_ep_am_short_iov,
    .ep_am_bcopy              = uct_gba_ep_am_bcopy,
    .ep_am_zcopy              = uct_gba_ep_am_zcopy,
    .ep_atomic_cswap64        = uct_gba_ep_atomic_cswap64,
    .ep_atomic_cswap32        = uct_gba_ep_atomic_cswap32,
    .ep_atomic32_post         = uct_gba_ep_atomic32_post,
    .ep_atomic64_post         = uct_gba_ep_atomic64_post,
    .ep_atomic32_fetch        = uct_gba_ep_atomic32_fetch,
    .ep_atomic64_fetch        = uct_gba_ep_atomic64_fetch,
    .ep_pending_add           = uct_gba_ep_pending_add,
    .ep_pending_purge         = uct_gba_ep_pending_purge,
    .ep_flush                 = uct_gba_ep_flush,
    .ep_fence                 = uct_gba_ep_fence,
    .ep_check                 = (uct_ep_check_func_t)
            ucs_empty_function_return_unsupported,
    .ep_create                = UCS_CLASS_NEW_FUNC_NAME(uct_gba_ep_t),
    .ep_destroy               = UCS_CLASS_DELETE_FUNC_NAME(uct_gba_ep_t),
    .iface_flush              = uct_gba_iface_flush,
    .iface_fence              = uct_gba_iface_fence,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_gba_iface_progress,
    .iface_event_fd_get       = (uct_iface_event_fd_get_func_t)
            ucs_empty_function_return_unsupported,
    .iface_event_arm          = (uct_iface_event_arm_func_t)
            ucs_empty_function_return_unsupported,
    .iface_close              = UCS_CLASS_DELETE_FUNC_NAME(uct_gba_iface_t),
    .iface_query              = uct_gba_iface_query,
    .iface_get_device_address = uct_gba_iface_get_device_address,
    .iface_get_address        = uct_gba_iface_get_address,
    .iface_is_reachable       = uct_gba_iface_is_reachable
};
/* clang-format on */

static ucs_status_t
uct_gba_query_tl_devices(uct_md_h md, uct_tl_device_resource_t **tl_devices_p,
                         unsigned *num_tl_devices_p)
{
    uct_tl_device_resource_t *device;

    device = ucs_calloc(1, sizeof(*device), "gba device resource");
    if (device == NULL) {
        ucs_error("gba: failed to allocate the device resource");
        return UCS_ERR_NO_MEMORY;
    }

    /* The GBA is a network device (the switch and the NIC side of its
     * fabric); the emulated device has no PCI location */
    ucs_snprintf_zero(device->name, sizeof(device->name), "%s", UCT_GBA_NAME);
    device->type       = UCT_DEVICE_TYPE_NET;
    device->sys_device = UCS_SYS_DEVICE_ID_UNKNOWN;

    *tl_devices_p     = device;
    *num_tl_devices_p = 1;
    return UCS_OK;
}

UCT_TL_DEFINE_ENTRY(&uct_gba_component, gba, uct_gba_query_tl_devices,
                    uct_gba_iface_t, "GBA_", uct_gba_iface_config_table,
                    uct_gba_iface_config_t);


/*
 * Registration.  UCX 1.13 loads only the modules of its built-in list, so
 * libuct_gba.so is preloaded and registers the component and the transport
 * from its constructor (what UCT_SINGLE_TL_INIT(..., ctor, ...) does), after
 * checking that the running UCX is the version whose internal headers it was
 * built with.  It writes to stderr, not through ucs_log: the log machinery
 * of another UCX version is not to be trusted.
 */
static int uct_gba_registered = 0;

static UCS_F_CTOR void uct_gba_init(void)
{
    static const unsigned built[3] = {UCT_VERNO_MAJOR, UCT_VERNO_MINOR,
                                      UCT_VERNO_PATCH};
    unsigned running[3];
    char msg[256];

    ucp_get_version(&running[0], &running[1], &running[2]);
    if (!uct_gba_version_check(built, running, msg, sizeof(msg))) {
        fprintf(stderr, "%s\n", msg);
        return;
    }

    uct_component_register(&uct_gba_component);
    uct_tl_register(&uct_gba_component, &UCT_TL_NAME(gba));
    uct_gba_registered = 1;
}

static UCS_F_DTOR void uct_gba_cleanup(void)
{
    if (!uct_gba_registered) {
        return;
    }

    /* As UCT_SINGLE_TL_INIT's destructor: libuct keeps the component in its
     * list, only the configuration entries are removed */
    uct_tl_unregister(&UCT_TL_NAME(gba));
    uct_component_unregister(&uct_gba_component);
    uct_gba_registered = 0;
}
