/**
 * uct_gba: the "gba" transport's endpoints and their operations.
 *
 * Argument shapes, completion semantics and return codes are those of
 * uct/api/uct.h (UCX 1.13); see also uct_gba(7).
 */

/* clang-format off */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif
/* clang-format on */

#include "gba_ep.h"

#include <gba/gba.h>

#include <uct/base/uct_iov.inl>
#include <ucs/debug/log.h>
#include <ucs/type/class.h>
#include <errno.h>
#include <string.h>


/* Refuse new operations while requests wait in the pending queue, so that
 * they keep their order (uct_ep_pending_add(3)) */
#define UCT_GBA_CHECK_RES(_iface)                                              \
    if (ucs_unlikely(!ucs_queue_is_empty(&(_iface)->pending) &&                \
                     !(_iface)->dispatching)) {                                \
        return UCS_ERR_NO_RESOURCE;                                            \
    }

/* A put or get of no bytes touches no memory and completes at once; its
 * remote key may be UCT_INVALID_RKEY (as UCX's shared-memory transports
 * take it) */
#define UCT_GBA_CHECK_EMPTY(_length, _ret)                                     \
    if (ucs_unlikely((_length) == 0)) {                                        \
        return (_ret);                                                         \
    }


static UCS_F_ALWAYS_INLINE uct_gba_iface_t *uct_gba_ep_iface(uct_gba_ep_t *ep)
{
    return ucs_derived_of(ep->super.super.iface, uct_gba_iface_t);
}

static UCS_F_ALWAYS_INLINE uint64_t uct_gba_rkey_key_id(uct_rkey_t rkey)
{
    return ((const uct_gba_rkey_t *)rkey)->key_id;
}

static UCS_F_ALWAYS_INLINE uct_gba_op_t *uct_gba_op_get(uct_gba_iface_t *iface,
                                                        uct_gba_op_type_t type,
                                                        uct_completion_t *comp)
{
    uct_gba_op_t *op = ucs_mpool_get_inline(&iface->op_mp);

    if (ucs_unlikely(op == NULL)) {
        return NULL;
    }

    op->type = type;
    op->comp = comp;
    return op;
}

/* The engine accepted @op: record it as outstanding on @ep */
static UCS_F_ALWAYS_INLINE void
uct_gba_op_start(uct_gba_iface_t *iface, uct_gba_ep_t *ep, uct_gba_op_t *op)
{
    op->ep = ep;
    ucs_list_add_tail(&ep->ops, &op->list);
    ++iface->outstanding;
}

/* Complete the flush markers no operation precedes any more */
static void uct_gba_ep_flush_markers(uct_gba_ep_t *ep)
{
    uct_gba_op_t *op;

    while (!ucs_list_is_empty(&ep->ops)) {
        op = ucs_list_head(&ep->ops, uct_gba_op_t, list);
        if (op->type != UCT_GBA_OP_FLUSH) {
            return;
        }
        ucs_list_del(&op->list);
        uct_invoke_completion(op->comp, UCS_OK);
        ucs_mpool_put_inline(op);
    }
}

void uct_gba_op_complete(uct_gba_iface_t *iface, uct_gba_op_t *op, int status)
{
    ucs_status_t ucs_status = uct_gba_status(status);
    uct_gba_ep_t *ep        = op->ep;

    ucs_assert(iface->outstanding > 0);
    --iface->outstanding;

    if (op->type == UCT_GBA_OP_GET_BCOPY) {
        if (ucs_status == UCS_OK) {
            op->unpack_cb(op->unpack_arg, op->buf, op->length);
        }
        ucs_mpool_put_inline(op->buf);
    }

    if (op->comp != NULL) {
        uct_invoke_completion(op->comp, ucs_status);
    }

    if (ep != NULL) {
        ucs_list_del(&op->list);
        if (ucs_unlikely(ucs_status != UCS_OK)) {
            ucs_debug("gba: ep %p operation failed: %s", ep,
                      ucs_status_string(ucs_status));
            if (((status == -EPIPE) || (status == -EHOSTUNREACH) ||
                 (status == -ESRCH)) &&
                !ep->failed) {
                ep->failed = 1;
                uct_iface_handle_ep_err(&iface->super.super, &ep->super.super,
                                        ucs_status);
            }
        }
        uct_gba_ep_flush_markers(ep);
    }
    ucs_mpool_put_inline(op);
}

/* Engine return code of an initiating call to a UCS status */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_gba_ep_start_status(int ret)
{
    if (ucs_likely(ret >= 0)) {
        return UCS_OK;
    } else if (ret == -EAGAIN) {
        return UCS_ERR_NO_RESOURCE;
    }
    return uct_gba_status(ret);
}

/* UCS_ERR_INVALID_PARAM, with a message, when @length exceeds @max; the
 * message has the words of UCX's own (UCT_CHECK_LENGTH): "invalid <what>
 * length" */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_gba_check_length(const char *what,
                                                             size_t length,
                                                             size_t max)
{
    if (ucs_likely(length <= max)) {
        return UCS_OK;
    }

    ucs_error("gba: invalid %s length %zu (at most %zu)", what, length, max);
    return UCS_ERR_INVALID_PARAM;
}

/* uct_iov_t[] to struct iovec[] of at most @max entries, checked by the
 * core's gba_eng_iov_len; UCS_ERR_INVALID_PARAM for too many entries,
 * strided ones, or one with a NULL buffer and a length */
static ucs_status_t uct_gba_iov_convert(const uct_iov_t *iov, size_t iovcnt,
                                        struct iovec *vec, size_t max,
                                        size_t *total_p)
{
    size_t i, bad = 0;
    ssize_t total;

    /* Too many entries: none is converted, gba_eng_iov_len says so */
    for (i = 0; (iovcnt <= max) && (i < iovcnt); ++i) {
        if (ucs_unlikely((iov[i].count > 1) &&
                         (iov[i].stride != iov[i].length))) {
            ucs_error("gba: strided iov entries are not supported");
            return UCS_ERR_INVALID_PARAM;
        }
        vec[i].iov_base = iov[i].buffer;
        vec[i].iov_len  = uct_iov_get_length(&iov[i]);
    }

    total = gba_eng_iov_len(vec, iovcnt, max, SSIZE_MAX, &bad);
    if (ucs_unlikely(total < 0)) {
        if ((total == -E2BIG) || (total == -EINVAL)) {
            ucs_error("gba: %zu iov entries (at most %zu)", iovcnt, max);
        } else {
            ucs_error("gba: iov entry %zu: %s (%zu bytes)", bad,
                      (total == -EFAULT) ? "no buffer" : "too long",
                      vec[bad].iov_len);
        }
        return UCS_ERR_INVALID_PARAM;
    }

    *total_p = total;
    return UCS_OK;
}


/* Direct access (see gba_md.h) */

/* Whether a fence on @ep or its interface still waits for operations that
 * went through the queue; clears the fence once they completed */
static int uct_gba_ep_fence_pending(uct_gba_ep_t *ep, uct_gba_iface_t *iface)
{
    if (iface->fenced && (iface->outstanding == 0)) {
        iface->fenced = 0;
    }
    if (ep->fenced && ucs_list_is_empty(&ep->ops)) {
        ep->fenced = 0;
    }
    return ep->fenced || iface->fenced;
}

/*
 * The local address of [@remote_addr, @remote_addr + @length) under
 * @tl_rkey for a direct access with CPU loads, stores and atomics, or NULL
 * when the access goes through the target's queue: the key has no direct
 * access, the range leaves the region (the target reports the error), or a
 * fence waits for queued operations.
 */
static UCS_F_ALWAYS_INLINE void *
uct_gba_ep_direct(uct_gba_ep_t *ep, uct_rkey_t tl_rkey, uint64_t remote_addr,
                  size_t length)
{
    const uct_gba_rkey_t *rkey = (const uct_gba_rkey_t*)tl_rkey;
    uct_gba_iface_t *iface     = uct_gba_ep_iface(ep);

    if ((rkey->local == NULL) ||
        gba_eng_range_check(rkey->address, rkey->length, remote_addr,
                            length)) {
        return NULL;
    }
    if (ucs_unlikely(ep->fenced || iface->fenced) &&
        uct_gba_ep_fence_pending(ep, iface)) {
        return NULL;
    }
    return rkey->local + (remote_addr - rkey->address);
}

/* Copy between @iov and the directly reached @ptr (@put: to @ptr) */
static void uct_gba_ep_direct_copy(int put, const struct iovec *vec,
                                   size_t count, uint8_t *ptr)
{
    size_t i;

    for (i = 0; i < count; ++i) {
        if (put) {
            memcpy(ptr, vec[i].iov_base, vec[i].iov_len);
        } else {
            memcpy(vec[i].iov_base, ptr, vec[i].iov_len);
        }
        ptr += vec[i].iov_len;
    }
}


/* Active messages: the engine's tag carries the AM id */

static UCS_F_ALWAYS_INLINE ucs_status_t uct_gba_ep_am_send_inline(
        uct_gba_ep_t *ep, uint8_t id, const struct iovec *vec, size_t count)
{
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);

    return uct_gba_ep_start_status(
            gba_eng_send(iface->eng_ep, ep->peer, vec, count, id, 0, 0, 0));
}

static ucs_status_t
uct_gba_ep_am_short_nolock(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                           const void *payload, unsigned length)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    struct iovec vec[2];
    ucs_status_t status;

    UCT_CHECK_AM_ID(id);
    status = uct_gba_check_length("am_short", length + sizeof(header),
                                  UCT_GBA_MAX_INLINE);
    if (status != UCS_OK) {
        return status;
    }
    UCT_GBA_CHECK_RES(iface);

    vec[0].iov_base = &header;
    vec[0].iov_len  = sizeof(header);
    vec[1].iov_base = (void *)payload;
    vec[1].iov_len  = length;
    status          = uct_gba_ep_am_send_inline(ep, id, vec, 2);
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_OP(&ep->super, AM, SHORT, sizeof(header) + length);
    }
    return status;
}

static ucs_status_t uct_gba_ep_am_short_iov_nolock(uct_ep_h tl_ep, uint8_t id,
                                                   const uct_iov_t *iov,
                                                   size_t iovcnt)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    struct iovec vec[GBA_ENG_MAX_IOV];
    ucs_status_t status;
    size_t total;

    UCT_CHECK_AM_ID(id);
    status = uct_gba_iov_convert(iov, iovcnt, vec, GBA_ENG_MAX_IOV, &total);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_gba_check_length("am_short_iov", total, UCT_GBA_MAX_INLINE);
    if (status != UCS_OK) {
        return status;
    }
    UCT_GBA_CHECK_RES(iface);

    status = uct_gba_ep_am_send_inline(ep, id, vec, iovcnt);
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_OP(&ep->super, AM, SHORT, total);
    }
    return status;
}

/* Send the notice of the chunk uct_gba_chunk_get gave, now holding
 * @length bytes of a message (see gba_chunk.h) */
static ucs_status_t
uct_gba_ep_am_chunk_send(uct_gba_ep_t *ep, uint8_t id, size_t length)
{
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    uct_gba_chunk_notice_t notice;
    ucs_status_t status;
    struct iovec vec;

    uct_gba_chunk_send(&iface->chunks, ep->peer, length, &notice);
    vec.iov_base = &notice;
    vec.iov_len  = sizeof(notice);
    status       = uct_gba_ep_start_status(
            gba_eng_send(iface->eng_ep, ep->peer, &vec, 1,
                         id | UCT_GBA_TAG_CHUNK, 0, 0, 0));
    if (status != UCS_OK) {
        uct_gba_chunk_unsend(&iface->chunks);
    }
    return status;
}

static ssize_t uct_gba_ep_am_bcopy_nolock(uct_ep_h tl_ep, uint8_t id,
                                          uct_pack_callback_t pack_cb,
                                          void *arg, unsigned flags)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    ucs_status_t status;
    struct iovec vec;

    UCT_CHECK_AM_ID(id);
    UCT_GBA_CHECK_RES(iface);

    if (ucs_unlikely(iface->chunks.count == 0)) {
        /* No transmit region (UCX_GBA_TX_CHUNKS=0): max_bcopy is a slot's
         * size, packed into the bounce buffer the engine copies from */
        vec.iov_base = iface->tx_buf;
        vec.iov_len  = pack_cb(vec.iov_base, arg);
        ucs_assertv(vec.iov_len <= UCT_GBA_MAX_INLINE, "packed %zu bytes",
                    vec.iov_len);
        status = uct_gba_ep_am_send_inline(ep, id, &vec, 1);
        goto out;
    }

    /* Packed into the next chunk of the transmit region; up to the
     * queue's inline size the engine copies it into the peer's queue and
     * the chunk stays free, above that the peer reads it from the chunk */
    status = uct_gba_chunk_get(&iface->chunks, &vec.iov_base);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    vec.iov_len = pack_cb(vec.iov_base, arg);
    ucs_assertv(vec.iov_len <= iface->seg_size, "packed %zu bytes",
                vec.iov_len);

    /* A peer on another host cannot map the chunk: the engine streams
     * it (copied or written out at once, so the chunk stays free) */
    if ((vec.iov_len <= UCT_GBA_MAX_INLINE) || ep->remote) {
        status = uct_gba_ep_am_send_inline(ep, id, &vec, 1);
    } else {
        status = uct_gba_ep_am_chunk_send(ep, id, vec.iov_len);
    }
out:
    if (status != UCS_OK) {
        return status;
    }

    UCT_TL_EP_STAT_OP(&ep->super, AM, BCOPY, vec.iov_len);
    return vec.iov_len;
}

static ucs_status_t
uct_gba_ep_am_zcopy_nolock(uct_ep_h tl_ep, uint8_t id, const void *header,
                           unsigned header_length, const uct_iov_t *iov,
                           size_t iovcnt, unsigned flags,
                           uct_completion_t *comp)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    struct iovec vec[GBA_ENG_MAX_IOV];
    ucs_status_t status;
    uct_gba_op_t *op;
    size_t total;
    void *chunk;
    int ret;

    UCT_CHECK_AM_ID(id);
    status = uct_gba_check_length("am_zcopy header", header_length,
                                  UCT_GBA_AM_MAX_HDR);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_gba_iov_convert(iov, iovcnt, vec + 1, GBA_ENG_MAX_IOV - 1,
                                 &total);
    if (status != UCS_OK) {
        return status;
    }
    total += header_length;
    status = uct_gba_check_length("am_zcopy", total, iface->seg_size);
    if (status != UCS_OK) {
        return status;
    }
    UCT_GBA_CHECK_RES(iface);

    vec[0].iov_base = (void *)header;
    vec[0].iov_len  = header_length;

    /* Above the queue's inline size, into a free chunk of the transmit
     * region: the sender's one copy, complete at return; the receiver
     * copies on its own CPU (see gba_chunk.h) */
    if ((total > UCT_GBA_MAX_INLINE) && iface->chunks.count && !ep->remote) {
        status = uct_gba_chunk_get(&iface->chunks, &chunk);
        if (status == UCS_OK) {
            uct_gba_ep_direct_copy(1, vec, iovcnt + 1, chunk);
            status = uct_gba_ep_am_chunk_send(ep, id, total);
            goto out;
        } else if (status == UCS_ERR_NO_RESOURCE) {
            /* Wait for the receivers: reading in place instead would
             * leave all the copying to them (measured: stream_bw at
             * 1 MiB falls to a third) */
            return status;
        }
    }

    /* A message that fits the queue's slot (copied there at once), or no
     * transmit region (UCX_GBA_TX_CHUNKS=0, or it could not be allocated:
     * the receiver reads the message in place later, with one
     * cross-memory-attach copy; the header lives in the descriptor until
     * then) */
    op = uct_gba_op_get(iface, UCT_GBA_OP_PLAIN, comp);
    if (ucs_unlikely(op == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }

    memcpy(op->hdr, header, header_length);
    vec[0].iov_base = op->hdr;
    vec[0].iov_len  = header_length;
    ret = gba_eng_send(iface->eng_ep, ep->peer, vec, iovcnt + 1, id, 0, 0,
                       (uintptr_t)op);
    if (ret != 0) {
        ucs_mpool_put_inline(op);
        status = uct_gba_ep_start_status(ret); /* 1: copied, complete */
        if (status == UCS_OK) {
            UCT_TL_EP_STAT_OP(&ep->super, AM, ZCOPY, total);
        }
        return status;
    }

    uct_gba_op_start(iface, ep, op);
    UCT_TL_EP_STAT_OP(&ep->super, AM, ZCOPY, total);
    return UCS_INPROGRESS;

out:
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_OP(&ep->super, AM, ZCOPY, total);
    }
    return status;
}


/* RMA: the target executes it; the engine reports every put and get */

static UCS_F_ALWAYS_INLINE ucs_status_t uct_gba_ep_rma(
        uct_gba_ep_t *ep, int put, uct_gba_op_t *op, const struct iovec *vec,
        size_t count, uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    int ret;

    if (put) {
        ret = gba_eng_put(iface->eng_ep, ep->peer, vec, count, remote_addr,
                          uct_gba_rkey_key_id(rkey), 0, 0, (uintptr_t)op);
    } else {
        ret = gba_eng_get(iface->eng_ep, ep->peer, vec, count, remote_addr,
                          uct_gba_rkey_key_id(rkey), 0, (uintptr_t)op);
    }

    if (ucs_unlikely(ret < 0)) {
        return uct_gba_ep_start_status(ret);
    }

    uct_gba_op_start(iface, ep, op);
    return UCS_OK;
}

/* A put of at most UCT_GBA_MAX_INLINE bytes: the engine copies @vec */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_gba_ep_put_inline(uct_gba_ep_t *ep, const struct iovec *vec,
                      uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    ucs_status_t status;
    uct_gba_op_t *op;

    op = uct_gba_op_get(iface, UCT_GBA_OP_PLAIN, NULL);
    if (ucs_unlikely(op == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_gba_ep_rma(ep, 1, op, vec, 1, remote_addr, rkey);
    if (ucs_unlikely(status != UCS_OK)) {
        ucs_mpool_put_inline(op);
    }
    return status;
}

static ucs_status_t
uct_gba_ep_put_short_nolock(uct_ep_h tl_ep, const void *buffer, unsigned length,
                            uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    struct iovec vec;
    ucs_status_t status;

    uint8_t *ptr;

    status = uct_gba_check_length("put_short", length, UCT_GBA_MAX_INLINE);
    if (status != UCS_OK) {
        return status;
    }
    UCT_GBA_CHECK_RES(iface);
    UCT_GBA_CHECK_EMPTY(length, UCS_OK);

    ptr = uct_gba_ep_direct(ep, rkey, remote_addr, length);
    if (ucs_likely(ptr != NULL)) {
        memcpy(ptr, buffer, length);
        ucs_memory_cpu_store_fence();
        UCT_TL_EP_STAT_OP(&ep->super, PUT, SHORT, length);
        return UCS_OK;
    }

    vec.iov_base = (void *)buffer;
    vec.iov_len  = length;
    status       = uct_gba_ep_put_inline(ep, &vec, remote_addr, rkey);
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_OP(&ep->super, PUT, SHORT, length);
    }
    return status;
}

static ssize_t
uct_gba_ep_put_bcopy_nolock(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                            void *arg, uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    struct iovec vec;
    ucs_status_t status;
    uint8_t *ptr;

    UCT_GBA_CHECK_RES(iface);

    vec.iov_base = iface->tx_buf;
    vec.iov_len  = pack_cb(iface->tx_buf, arg);
    ucs_assertv(vec.iov_len <= UCT_GBA_MAX_INLINE, "packed %zu bytes",
                vec.iov_len);
    UCT_GBA_CHECK_EMPTY(vec.iov_len, 0);

    ptr = uct_gba_ep_direct(ep, rkey, remote_addr, vec.iov_len);
    if (ptr != NULL) {
        memcpy(ptr, vec.iov_base, vec.iov_len);
        ucs_memory_cpu_store_fence();
    } else {
        status = uct_gba_ep_put_inline(ep, &vec, remote_addr, rkey);
        if (status != UCS_OK) {
            return status;
        }
    }

    UCT_TL_EP_STAT_OP(&ep->super, PUT, BCOPY, vec.iov_len);
    return vec.iov_len;
}

static UCS_F_ALWAYS_INLINE ucs_status_t uct_gba_ep_rma_zcopy(
        uct_ep_h tl_ep, int put, const uct_iov_t *iov, size_t iovcnt,
        uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    struct iovec vec[GBA_ENG_MAX_IOV];
    ucs_status_t status;
    uct_gba_op_t *op;
    size_t total;

    uint8_t *ptr;

    status = uct_gba_iov_convert(iov, iovcnt, vec, GBA_ENG_MAX_IOV, &total);
    if (status != UCS_OK) {
        return status;
    }
    UCT_GBA_CHECK_RES(iface);
    UCT_GBA_CHECK_EMPTY(total, UCS_OK);

    ptr = uct_gba_ep_direct(ep, rkey, remote_addr, total);
    if (ptr != NULL) {
        uct_gba_ep_direct_copy(put, vec, iovcnt, ptr);
        if (put) {
            ucs_memory_cpu_store_fence();
            UCT_TL_EP_STAT_OP(&ep->super, PUT, ZCOPY, total);
        } else {
            UCT_TL_EP_STAT_OP(&ep->super, GET, ZCOPY, total);
        }
        return UCS_OK;
    }

    op = uct_gba_op_get(iface, UCT_GBA_OP_PLAIN, comp);
    if (ucs_unlikely(op == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_gba_ep_rma(ep, put, op, vec, iovcnt, remote_addr, rkey);
    if (ucs_unlikely(status != UCS_OK)) {
        ucs_mpool_put_inline(op);
        return status;
    }

    if (put) {
        UCT_TL_EP_STAT_OP(&ep->super, PUT, ZCOPY, total);
    } else {
        UCT_TL_EP_STAT_OP(&ep->super, GET, ZCOPY, total);
    }
    return UCS_INPROGRESS;
}

static ucs_status_t
uct_gba_ep_put_zcopy_nolock(uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                            uint64_t remote_addr, uct_rkey_t rkey,
                            uct_completion_t *comp)
{
    return uct_gba_ep_rma_zcopy(tl_ep, 1, iov, iovcnt, remote_addr, rkey, comp);
}

static ucs_status_t
uct_gba_ep_get_zcopy_nolock(uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                            uint64_t remote_addr, uct_rkey_t rkey,
                            uct_completion_t *comp)
{
    return uct_gba_ep_rma_zcopy(tl_ep, 0, iov, iovcnt, remote_addr, rkey, comp);
}

static ucs_status_t
uct_gba_ep_get_bcopy_nolock(uct_ep_h tl_ep, uct_unpack_callback_t unpack_cb,
                            void *arg, size_t length, uint64_t remote_addr,
                            uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    ucs_status_t status;
    struct iovec vec;
    uct_gba_op_t *op;

    uint8_t *ptr;

    status = uct_gba_check_length("get_bcopy", length, iface->seg_size);
    if (status != UCS_OK) {
        return status;
    }
    UCT_GBA_CHECK_RES(iface);
    UCT_GBA_CHECK_EMPTY(length, UCS_OK);

    ptr = uct_gba_ep_direct(ep, rkey, remote_addr, length);
    if (ptr != NULL) {
        ucs_memory_cpu_load_fence();
        unpack_cb(arg, ptr, length);
        UCT_TL_EP_STAT_OP(&ep->super, GET, BCOPY, length);
        return UCS_OK;
    }

    op = uct_gba_op_get(iface, UCT_GBA_OP_GET_BCOPY, comp);
    if (ucs_unlikely(op == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    op->buf = ucs_mpool_get_inline(&iface->buf_mp);
    if (ucs_unlikely(op->buf == NULL)) {
        ucs_mpool_put_inline(op);
        return UCS_ERR_NO_MEMORY;
    }
    op->unpack_cb  = unpack_cb;
    op->unpack_arg = arg;
    op->length     = length;

    vec.iov_base = op->buf;
    vec.iov_len  = length;
    status       = uct_gba_ep_rma(ep, 0, op, &vec, 1, remote_addr, rkey);
    if (ucs_unlikely(status != UCS_OK)) {
        ucs_mpool_put_inline(op->buf);
        ucs_mpool_put_inline(op);
        return status;
    }

    UCT_TL_EP_STAT_OP(&ep->super, GET, BCOPY, length);
    return UCS_INPROGRESS;
}


/* Atomics: executed by the target's CPU (the engine's built-in executor:
 * the operation is an enum gba_eng_atomic_op, the datatype the size) */

static UCS_F_ALWAYS_INLINE int uct_gba_atomic_op(unsigned opcode)
{
    switch (opcode) {
    case UCT_ATOMIC_OP_ADD:
        return GBA_ENG_AOP_ADD;
    case UCT_ATOMIC_OP_AND:
        return GBA_ENG_AOP_AND;
    case UCT_ATOMIC_OP_OR:
        return GBA_ENG_AOP_OR;
    case UCT_ATOMIC_OP_XOR:
        return GBA_ENG_AOP_XOR;
    case UCT_ATOMIC_OP_SWAP:
        return GBA_ENG_AOP_SWAP;
    case UCT_ATOMIC_OP_CSWAP:
        return GBA_ENG_AOP_CSWAP;
    default:
        return -1;
    }
}

static UCS_F_ALWAYS_INLINE ucs_status_t
uct_gba_ep_atomic(uct_ep_h tl_ep, unsigned opcode, size_t size,
                  const void *operand, const void *compare, void *result,
                  uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    int op_code            = uct_gba_atomic_op(opcode);
    uct_gba_op_t *op;
    uint8_t *ptr;
    int ret;

    if (ucs_unlikely((op_code < 0) ||
                     ((result == NULL) && (op_code == GBA_ENG_AOP_SWAP)))) {
        ucs_error("gba: unsupported atomic%zu operation %u%s", size * 8, opcode,
                  (result == NULL) ? " (post)" : "");
        return UCS_ERR_UNSUPPORTED;
    }
    if (ucs_unlikely(remote_addr % size)) {
        ucs_error("gba: atomic%zu at unaligned address 0x%" PRIx64, size * 8,
                  remote_addr);
        return UCS_ERR_INVALID_PARAM;
    }
    UCT_GBA_CHECK_RES(iface);

    ptr = uct_gba_ep_direct(ep, rkey, remote_addr, size);
    if (ucs_likely(ptr != NULL)) {
        gba_eng_atomic_one(op_code, size, ptr, operand, compare, result);
        return UCS_OK;
    }

    op = uct_gba_op_get(iface, UCT_GBA_OP_PLAIN, comp);
    if (ucs_unlikely(op == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }

    ret = gba_eng_atomic(iface->eng_ep, ep->peer, op_code, size, size, 1,
                         operand, compare, result, remote_addr,
                         uct_gba_rkey_key_id(rkey), 0, 0, (uintptr_t)op);
    if (ucs_unlikely(ret < 0)) {
        ucs_mpool_put_inline(op);
        return uct_gba_ep_start_status(ret);
    }

    uct_gba_op_start(iface, ep, op);
    /* A posted atomic's operand is copied: complete for the caller */
    return (result == NULL) ? UCS_OK : UCS_INPROGRESS;
}

static ucs_status_t
uct_gba_ep_atomic32_post_nolock(uct_ep_h tl_ep, unsigned opcode, uint32_t value,
                                uint64_t remote_addr, uct_rkey_t rkey)
{
    return uct_gba_ep_atomic(tl_ep, opcode, sizeof(value), &value, NULL, NULL,
                             remote_addr, rkey, NULL);
}

static ucs_status_t
uct_gba_ep_atomic64_post_nolock(uct_ep_h tl_ep, unsigned opcode, uint64_t value,
                                uint64_t remote_addr, uct_rkey_t rkey)
{
    return uct_gba_ep_atomic(tl_ep, opcode, sizeof(value), &value, NULL, NULL,
                             remote_addr, rkey, NULL);
}

static ucs_status_t
uct_gba_ep_atomic32_fetch_nolock(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                 uint32_t value, uint32_t *result,
                                 uint64_t remote_addr, uct_rkey_t rkey,
                                 uct_completion_t *comp)
{
    return uct_gba_ep_atomic(tl_ep, opcode, sizeof(value), &value, NULL, result,
                             remote_addr, rkey, comp);
}

static ucs_status_t
uct_gba_ep_atomic64_fetch_nolock(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                 uint64_t value, uint64_t *result,
                                 uint64_t remote_addr, uct_rkey_t rkey,
                                 uct_completion_t *comp)
{
    return uct_gba_ep_atomic(tl_ep, opcode, sizeof(value), &value, NULL, result,
                             remote_addr, rkey, comp);
}

static ucs_status_t
uct_gba_ep_atomic_cswap32_nolock(uct_ep_h tl_ep, uint32_t compare,
                                 uint32_t swap, uint64_t remote_addr,
                                 uct_rkey_t rkey, uint32_t *result,
                                 uct_completion_t *comp)
{
    return uct_gba_ep_atomic(tl_ep, UCT_ATOMIC_OP_CSWAP, sizeof(swap), &swap,
                             &compare, result, remote_addr, rkey, comp);
}

static ucs_status_t
uct_gba_ep_atomic_cswap64_nolock(uct_ep_h tl_ep, uint64_t compare,
                                 uint64_t swap, uint64_t remote_addr,
                                 uct_rkey_t rkey, uint64_t *result,
                                 uct_completion_t *comp)
{
    return uct_gba_ep_atomic(tl_ep, UCT_ATOMIC_OP_CSWAP, sizeof(swap), &swap,
                             &compare, result, remote_addr, rkey, comp);
}


/* Flush and pending requests */

static ucs_status_t
uct_gba_ep_flush_nolock(uct_ep_h tl_ep, unsigned flags, uct_completion_t *comp)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    uct_gba_op_t *op;

    UCT_GBA_CHECK_RES(iface);

    if (ucs_list_is_empty(&ep->ops)) {
        UCT_TL_EP_STAT_FLUSH(&ep->super);
        return UCS_OK;
    }

    /* UCT_FLUSH_FLAG_CANCEL: operations the target executes cannot be
     * recalled; they are waited for like a local flush */
    if (comp != NULL) {
        op = uct_gba_op_get(iface, UCT_GBA_OP_FLUSH, comp);
        if (ucs_unlikely(op == NULL)) {
            return UCS_ERR_NO_MEMORY;
        }
        op->ep = ep;
        ucs_list_add_tail(&ep->ops, &op->list);
    }

    UCT_TL_EP_STAT_FLUSH_WAIT(&ep->super);
    return UCS_INPROGRESS;
}

static ucs_status_t uct_gba_ep_fence_nolock(uct_ep_h tl_ep, unsigned flags)
{
    uct_gba_ep_t *ep = ucs_derived_of(tl_ep, uct_gba_ep_t);

    /* Operations through the queue execute in issue order; direct
     * accesses wait for the queued operations issued before the fence */
    ep->fenced = !ucs_list_is_empty(&ep->ops);
    ucs_memory_cpu_fence();
    UCT_TL_EP_STAT_FENCE(&ep->super);
    return UCS_OK;
}

static ucs_status_t uct_gba_ep_pending_add_nolock(uct_ep_h tl_ep,
                                                  uct_pending_req_t *req,
                                                  unsigned flags)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    uct_gba_pending_priv_t *priv;

    UCS_STATIC_ASSERT(sizeof(*priv) <= UCT_PENDING_REQ_PRIV_LEN);
    priv     = (uct_gba_pending_priv_t *)&req->priv;
    priv->ep = ep;
    uct_pending_req_queue_push(&iface->pending, req);
    UCT_TL_EP_STAT_PEND(&ep->super);
    return UCS_OK;
}

static void uct_gba_ep_pending_purge_nolock(uct_ep_h tl_ep,
                                            uct_pending_purge_callback_t cb,
                                            void *arg)
{
    uct_gba_ep_t *ep       = ucs_derived_of(tl_ep, uct_gba_ep_t);
    uct_gba_iface_t *iface = uct_gba_ep_iface(ep);
    uct_gba_pending_priv_t *priv;

    uct_pending_queue_purge(priv, &iface->pending, priv->ep == ep, cb, arg);
}


/* The public entry points: the interface's async context excludes its
 * async progress (uct_gba_iface_async_progress) while they run */

#define UCT_GBA_EP_ENTRY(_type, _name, _params, _args)                         \
    _type uct_gba_ep_##_name _params                                           \
    {                                                                          \
        uct_gba_iface_t *_iface = ucs_derived_of(tl_ep->iface,                 \
                                                 uct_gba_iface_t);             \
        _type _ret;                                                            \
                                                                               \
        uct_gba_iface_enter(_iface);                                           \
        _ret = uct_gba_ep_##_name##_nolock _args;                              \
        uct_gba_iface_leave(_iface);                                           \
        return _ret;                                                           \
    }

UCT_GBA_EP_ENTRY(ucs_status_t, am_short,
                 (uct_ep_h tl_ep, uint8_t id, uint64_t header,
                  const void *payload, unsigned length),
                 (tl_ep, id, header, payload, length))
UCT_GBA_EP_ENTRY(ucs_status_t, am_short_iov,
                 (uct_ep_h tl_ep, uint8_t id, const uct_iov_t *iov,
                  size_t iovcnt),
                 (tl_ep, id, iov, iovcnt))
UCT_GBA_EP_ENTRY(ssize_t, am_bcopy,
                 (uct_ep_h tl_ep, uint8_t id, uct_pack_callback_t pack_cb,
                  void *arg, unsigned flags),
                 (tl_ep, id, pack_cb, arg, flags))
UCT_GBA_EP_ENTRY(ucs_status_t, am_zcopy,
                 (uct_ep_h tl_ep, uint8_t id, const void *header,
                  unsigned header_length, const uct_iov_t *iov, size_t iovcnt,
                  unsigned flags, uct_completion_t *comp),
                 (tl_ep, id, header, header_length, iov, iovcnt, flags, comp))
UCT_GBA_EP_ENTRY(ucs_status_t, put_short,
                 (uct_ep_h tl_ep, const void *buffer, unsigned length,
                  uint64_t remote_addr, uct_rkey_t rkey),
                 (tl_ep, buffer, length, remote_addr, rkey))
UCT_GBA_EP_ENTRY(ssize_t, put_bcopy,
                 (uct_ep_h tl_ep, uct_pack_callback_t pack_cb, void *arg,
                  uint64_t remote_addr, uct_rkey_t rkey),
                 (tl_ep, pack_cb, arg, remote_addr, rkey))
UCT_GBA_EP_ENTRY(ucs_status_t, put_zcopy,
                 (uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                  uint64_t remote_addr, uct_rkey_t rkey,
                  uct_completion_t *comp),
                 (tl_ep, iov, iovcnt, remote_addr, rkey, comp))
UCT_GBA_EP_ENTRY(ucs_status_t, get_zcopy,
                 (uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                  uint64_t remote_addr, uct_rkey_t rkey,
                  uct_completion_t *comp),
                 (tl_ep, iov, iovcnt, remote_addr, rkey, comp))
UCT_GBA_EP_ENTRY(ucs_status_t, get_bcopy,
                 (uct_ep_h tl_ep, uct_unpack_callback_t unpack_cb, void *arg,
                  size_t length, uint64_t remote_addr, uct_rkey_t rkey,
                  uct_completion_t *comp),
                 (tl_ep, unpack_cb, arg, length, remote_addr, rkey, comp))
UCT_GBA_EP_ENTRY(ucs_status_t, atomic32_post,
                 (uct_ep_h tl_ep, unsigned opcode, uint32_t value,
                  uint64_t remote_addr, uct_rkey_t rkey),
                 (tl_ep, opcode, value, remote_addr, rkey))
UCT_GBA_EP_ENTRY(ucs_status_t, atomic64_post,
                 (uct_ep_h tl_ep, unsigned opcode, uint64_t value,
                  uint64_t remote_addr, uct_rkey_t rkey),
                 (tl_ep, opcode, value, remote_addr, rkey))
UCT_GBA_EP_ENTRY(ucs_status_t, atomic32_fetch,
                 (uct_ep_h tl_ep, uct_atomic_op_t opcode, uint32_t value,
                  uint32_t *result, uint64_t remote_addr, uct_rkey_t rkey,
                  uct_completion_t *comp),
                 (tl_ep, opcode, value, result, remote_addr, rkey, comp))
UCT_GBA_EP_ENTRY(ucs_status_t, atomic64_fetch,
                 (uct_ep_h tl_ep, uct_atomic_op_t opcode, uint64_t value,
                  uint64_t *result, uint64_t remote_addr, uct_rkey_t rkey,
                  uct_completion_t *comp),
                 (tl_ep, opcode, value, result, remote_addr, rkey, comp))
UCT_GBA_EP_ENTRY(ucs_status_t, atomic_cswap32,
                 (uct_ep_h tl_ep, uint32_t compare, uint32_t swap,
                  uint64_t remote_addr, uct_rkey_t rkey, uint32_t *result,
                  uct_completion_t *comp),
                 (tl_ep, compare, swap, remote_addr, rkey, result, comp))
UCT_GBA_EP_ENTRY(ucs_status_t, atomic_cswap64,
                 (uct_ep_h tl_ep, uint64_t compare, uint64_t swap,
                  uint64_t remote_addr, uct_rkey_t rkey, uint64_t *result,
                  uct_completion_t *comp),
                 (tl_ep, compare, swap, remote_addr, rkey, result, comp))
UCT_GBA_EP_ENTRY(ucs_status_t, flush,
                 (uct_ep_h tl_ep, unsigned flags, uct_completion_t *comp),
                 (tl_ep, flags, comp))
UCT_GBA_EP_ENTRY(ucs_status_t, fence, (uct_ep_h tl_ep, unsigned flags),
                 (tl_ep, flags))
UCT_GBA_EP_ENTRY(ucs_status_t, pending_add,
                 (uct_ep_h tl_ep, uct_pending_req_t *req, unsigned flags),
                 (tl_ep, req, flags))

void uct_gba_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                              void *arg)
{
    uct_gba_iface_t *iface = ucs_derived_of(tl_ep->iface, uct_gba_iface_t);

    uct_gba_iface_enter(iface);
    uct_gba_ep_pending_purge_nolock(tl_ep, cb, arg);
    uct_gba_iface_leave(iface);
}

/* Endpoint lifecycle */

static UCS_CLASS_INIT_FUNC(uct_gba_ep_t, const uct_ep_params_t *params)
{
    uct_gba_iface_t *iface = ucs_derived_of(params->iface, uct_gba_iface_t);
    uct_gba_iface_addr_t iface_addr_buf;
    const uct_gba_iface_addr_t *iface_addr = &iface_addr_buf;
    const char *why;
    int ret;

    UCT_EP_PARAMS_CHECK_DEV_IFACE_ADDRS(params);
    UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super);

    /* A copy: UCP packs addresses at any alignment */
    memcpy(&iface_addr_buf, params->iface_addr, sizeof(iface_addr_buf));
    if (gba_addr_check(iface_addr, sizeof(*iface_addr), &why) != 0) {
        ucs_error("gba: malformed interface address: %s", why);
        return UCS_ERR_INVALID_ADDR;
    }

    uct_gba_iface_enter(iface);
    ret = gba_eng_peer_get(iface->eng_ep, iface_addr, &self->peer);
    uct_gba_iface_leave(iface);
    switch (ret) {
    case 0:
        break;
    case -EMFILE:
    case -ENFILE:
    case -ENOMEM:
    case -EACCES:
    case -EPERM:
        /* a local limit or a refusal, not the peer's absence */
        ucs_error("gba: cannot connect to interface %u/%u: %s",
                  iface_addr->pid, iface_addr->ep_id, gba_last_error(ret));
        return uct_gba_status(ret);
    default:
        ucs_diag("gba: cannot reach interface %u/%u: %s", iface_addr->pid,
                 iface_addr->ep_id, strerror(-ret));
        return UCS_ERR_UNREACHABLE;
    }

    ucs_list_head_init(&self->ops);
    self->failed = 0;
    self->fenced = 0;
    self->remote = (iface_addr->host_id != gba_host_id());
    ucs_debug("gba: ep %p to %u/%u", self, iface_addr->pid, iface_addr->ep_id);
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_gba_ep_t)
{
    uct_gba_iface_t *iface = ucs_derived_of(self->super.super.iface,
                                            uct_gba_iface_t);
    uct_gba_op_t *op, *tmp;

    uct_gba_iface_enter(iface);
    /* Operations still at the target complete without the ep; flush
     * markers have nothing left to wait for */
    ucs_list_for_each_safe(op, tmp, &self->ops, list) {
        ucs_list_del(&op->list);
        if (op->type == UCT_GBA_OP_FLUSH) {
            uct_invoke_completion(op->comp, UCS_ERR_CANCELED);
            ucs_mpool_put_inline(op);
        } else {
            op->ep = NULL;
        }
    }
    uct_gba_iface_leave(iface);
    ucs_debug("gba: destroyed ep %p", self);
}

UCS_CLASS_DEFINE(uct_gba_ep_t, uct_base_ep_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_gba_ep_t, uct_ep_t, const uct_ep_params_t *);
UCS_CLASS_DEFINE_DELETE_FUNC(uct_gba_ep_t, uct_ep_t);
