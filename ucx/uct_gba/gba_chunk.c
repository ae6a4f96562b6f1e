/**
 * uct_gba: active messages above the queue's inline size, copied by the
 * sender (see gba_chunk.h).
 */

/* clang-format off */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif
/* clang-format on */

#include "gba_chunk.h"

#include <gba/gba.h>
#include <gba/gba_fault.h>

#include <ucs/debug/log.h>
#include <ucs/arch/cpu.h>
#include <ucs/sys/math.h>
#include <ucs/sys/sys.h>
#include <errno.h>
#include <string.h>


/* Header of the transmit region, before chunk 0 */
typedef struct {
    uint32_t count; /* Chunks of the region, written once by the sender */
    uint32_t kept;  /* Chunks receivers keep (uct_gba_chunk_keep) */
} uct_gba_chunk_region_t;

/* Header of a chunk; the data follows at UCT_GBA_CHUNK_HDR, a kept
 * chunk's receive descriptor ends there */
typedef struct {
    uint32_t               busy;   /* Set by the sender, cleared by the
                                      receiver */
    uint32_t               kept;   /* Set while a receiver keeps it */
    uct_gba_chunk_region_t *region; /* The receiver's mapping of the
                                       region's header */
} uct_gba_chunk_hdr_t;


static UCS_F_ALWAYS_INLINE uct_gba_chunk_hdr_t *
uct_gba_chunk_hdr(uct_gba_chunks_t *chunks, unsigned index)
{
    return UCS_PTR_BYTE_OFFSET(chunks->tx.addr,
                               UCT_GBA_CHUNK_HDR + index * chunks->stride);
}

static UCS_F_ALWAYS_INLINE uct_gba_chunk_hdr_t *uct_gba_chunk_of(void *data)
{
    return UCS_PTR_BYTE_OFFSET(data, -UCT_GBA_CHUNK_HDR);
}

void uct_gba_chunks_init(uct_gba_chunks_t *chunks, size_t size, unsigned count)
{
    UCS_STATIC_ASSERT(sizeof(uct_gba_chunk_region_t) <=
                      UCS_SYS_CACHE_LINE_SIZE);
    UCS_STATIC_ASSERT(sizeof(uct_gba_chunk_hdr_t) <= UCS_SYS_CACHE_LINE_SIZE);
    UCS_STATIC_ASSERT((UCT_GBA_CHUNK_HDR % UCT_GBA_CHUNK_ALIGN) == 0);

    memset(chunks, 0, sizeof(*chunks));
    chunks->tx.fd  = -1;
    chunks->size   = size;
    chunks->count  = count;
    chunks->stride = UCT_GBA_CHUNK_HDR +
                     ucs_align_up_pow2(size, UCT_GBA_CHUNK_HDR);
    kh_init_inplace(uct_gba_chunk_map, &chunks->peers);
}

void uct_gba_chunks_cleanup(uct_gba_chunks_t *chunks)
{
    uct_gba_chunk_map_t map;

    kh_foreach_value(&chunks->peers, map, {
        gba_eng_seg_detach(map.addr);
    })
    kh_destroy_inplace(uct_gba_chunk_map, &chunks->peers);
    gba_eng_seg_free(&chunks->tx);
}

/* The transmit region: chunks->count chunks */
static ucs_status_t uct_gba_chunks_alloc(uct_gba_chunks_t *chunks)
{
    int ret;

    if (chunks->count == 0) {
        return UCS_ERR_NO_MEMORY;
    }

    ret = gba_eng_seg_alloc(UCT_GBA_CHUNK_HDR +
                                    chunks->count * chunks->stride,
                            NULL, &chunks->tx);
    if (ret < 0) {
        ucs_error("gba: cannot allocate the transmit region of %u chunks of "
                  "%zu bytes: %s",
                  chunks->count, chunks->size, gba_last_error(ret));
        return UCS_ERR_NO_MEMORY;
    }
    ((uct_gba_chunk_region_t*)chunks->tx.addr)->count = chunks->count;
    return UCS_OK;
}

/* Take back the chunks of receivers that closed or died: they will never
 * free them */
static void uct_gba_chunks_reclaim(uct_gba_chunks_t *chunks)
{
    uct_gba_chunk_hdr_t *hdr;
    unsigned i;

    for (i = 0; i < chunks->count; ++i) {
        hdr = uct_gba_chunk_hdr(chunks, i);
        if (__atomic_load_n(&hdr->busy, __ATOMIC_ACQUIRE) &&
            gba_eng_peer_gone(chunks->dest[i])) {
            ucs_debug("gba: chunk %u taken back from a receiver that is gone",
                      i);
            if (hdr->kept) {
                hdr->kept = 0;
                __atomic_fetch_sub(&((uct_gba_chunk_region_t*)
                                             chunks->tx.addr)->kept,
                                   1, __ATOMIC_RELAXED);
            }
            __atomic_store_n(&hdr->busy, 0, __ATOMIC_RELEASE);
        }
    }
}

ucs_status_t uct_gba_chunk_get(uct_gba_chunks_t *chunks, void **data_p)
{
    uct_gba_chunk_hdr_t *hdr;
    ucs_status_t status;
    ucs_time_t now;
    unsigned i, index;

    if (ucs_unlikely(chunks->tx.addr == NULL)) {
        status = uct_gba_chunks_alloc(chunks);
        if (status != UCS_OK) {
            return status;
        }
    }

    for (i = 0; i < chunks->count; ++i) {
        index = (chunks->next + i) % chunks->count;
        hdr   = uct_gba_chunk_hdr(chunks, index);
        if (!__atomic_load_n(&hdr->busy, __ATOMIC_ACQUIRE)) {
            chunks->cur = index;
            *data_p     = UCS_PTR_BYTE_OFFSET(hdr, UCT_GBA_CHUNK_HDR);
            return UCS_OK;
        }
    }

    now = ucs_get_time();
    if ((int64_t)(now - chunks->check_time) >= 0) {
        chunks->check_time = now +
                             ucs_time_from_msec(UCT_GBA_CHUNK_CHECK_MS);
        uct_gba_chunks_reclaim(chunks);
    }
    return UCS_ERR_NO_RESOURCE;
}

void uct_gba_chunk_send(uct_gba_chunks_t *chunks, struct gba_eng_peer *dest,
                        uint32_t length, uct_gba_chunk_notice_t *notice)
{
    uct_gba_chunk_hdr_t *hdr = uct_gba_chunk_hdr(chunks, chunks->cur);

    hdr->busy                 = 1;
    chunks->dest[chunks->cur] = dest;
    notice->cookie            = chunks->tx.cookie;
    notice->seg_len           = chunks->tx.len;
    notice->offset            = UCS_PTR_BYTE_DIFF(chunks->tx.addr, hdr);
    notice->length            = length;
    notice->fd                = chunks->tx.fd;
    chunks->next              = (chunks->cur + 1) % chunks->count;
}

void uct_gba_chunk_unsend(uct_gba_chunks_t *chunks)
{
    chunks->next = chunks->cur;
    uct_gba_chunk_hdr(chunks, chunks->cur)->busy = 0;
}

/* The region @notice names, attached on first use and again when a later
 * region reused the file number or the notice names more of it than was
 * attached (the notice is the sender's word only) */
static uint8_t *uct_gba_chunk_map(uct_gba_chunks_t *chunks, uint32_t pid,
                                  const uct_gba_chunk_notice_t *notice)
{
    uint64_t key = ((uint64_t)pid << 32) | (uint32_t)notice->fd;
    uct_gba_chunk_map_t *map;
    void *addr;
    khiter_t iter;
    int ret;

    iter = kh_put(uct_gba_chunk_map, &chunks->peers, key, &ret);
    if (ret == UCS_KH_PUT_FAILED) {
        return NULL;
    }

    map = &kh_value(&chunks->peers, iter);
    if (ret == UCS_KH_PUT_KEY_PRESENT) {
        if ((map->cookie == notice->cookie) &&
            (notice->seg_len <= map->seg_len)) {
            return map->addr;
        }
        /* A chunk of the old mapping a handler still keeps is released
         * through it later: such a mapping stays */
        if (__atomic_load_n(&((uct_gba_chunk_region_t*)map->addr)->kept,
                            __ATOMIC_RELAXED) == 0) {
            gba_eng_seg_detach(map->addr);
        } else {
            ucs_debug("gba: region (fd %d) of process %u remapped while "
                      "chunks of it are kept: the old mapping stays",
                      notice->fd, pid);
        }
    }

    ret = gba_eng_seg_attach(pid, notice->fd, notice->seg_len, notice->cookie,
                             &addr);
    if ((ret == -ENOENT) || (ret == -ESTALE)) {
        /* The sender closed its interface (or exited) before this message
         * was read: it is dropped, as a closed endpoint's messages are */
        ucs_diag("gba: dropped a message of process %u: its transmit region "
                 "(fd %d) is closed",
                 pid, notice->fd);
        kh_del(uct_gba_chunk_map, &chunks->peers, iter);
        return NULL;
    } else if (ret < 0) {
        ucs_error("gba: cannot map the transmit region of process %u (fd %d): "
                  "%s",
                  pid, notice->fd, strerror(-ret));
        kh_del(uct_gba_chunk_map, &chunks->peers, iter);
        return NULL;
    }

    map->addr    = addr;
    map->cookie  = notice->cookie;
    map->seg_len = notice->seg_len;
    return addr;
}

ucs_status_t uct_gba_chunk_recv(uct_gba_chunks_t *chunks, uint32_t pid,
                                const uct_gba_chunk_notice_t *notice,
                                void **data_p)
{
    uct_gba_chunk_hdr_t *hdr;
    uint8_t *base;

    if ((notice->seg_len < UCT_GBA_CHUNK_HDR) ||
        (notice->offset < UCT_GBA_CHUNK_HDR) ||
        (notice->offset % UCT_GBA_CHUNK_HDR) ||
        (notice->offset > notice->seg_len - UCT_GBA_CHUNK_HDR) ||
        (notice->length >
         notice->seg_len - UCT_GBA_CHUNK_HDR - notice->offset)) {
        ucs_error("gba: process %u sent a notice outside its region "
                  "(offset %" PRIu64 ", %u bytes, region %" PRIu64 ")",
                  pid, notice->offset, notice->length, notice->seg_len);
        return UCS_ERR_INVALID_PARAM;
    }

    base = uct_gba_chunk_map(chunks, pid, notice);
    if (base == NULL) {
        return UCS_ERR_IO_ERROR;
    }

    ucs_memory_cpu_load_fence();
    gba_fault(GBA_FAULT_CHUNK);
    hdr         = (uct_gba_chunk_hdr_t*)(base + notice->offset);
    hdr->region = (uct_gba_chunk_region_t*)base;
    *data_p     = base + notice->offset + UCT_GBA_CHUNK_HDR;
    return UCS_OK;
}

void uct_gba_chunk_release(void *data)
{
    uct_gba_chunk_hdr_t *hdr = uct_gba_chunk_of(data);

    if (hdr->kept) {
        hdr->kept = 0;
        __atomic_fetch_sub(&hdr->region->kept, 1, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&hdr->busy, 0, __ATOMIC_RELEASE);
}

void *uct_gba_chunk_keep(void *data, size_t headroom,
                         uct_recv_desc_t *release_desc)
{
    uct_gba_chunk_hdr_t *hdr       = uct_gba_chunk_of(data);
    uct_gba_chunk_region_t *region = hdr->region;
    uint32_t count, kept;
    void *desc;

    if (headroom + sizeof(release_desc) > UCT_GBA_CHUNK_ROOM) {
        return NULL;
    }

    /* The sender's word: a count beyond the largest keeps none */
    count = __atomic_load_n(&region->count, __ATOMIC_RELAXED);
    kept  = __atomic_load_n(&region->kept, __ATOMIC_RELAXED);
    do {
        if ((count > UCT_GBA_TX_CHUNKS_MAX) ||
            (kept >= UCT_GBA_CHUNKS_KEPT_MAX(count))) {
            return NULL;
        }
    } while (!__atomic_compare_exchange_n(&region->kept, &kept, kept + 1, 0,
                                          __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));

    hdr->kept = 1;
    desc      = UCS_PTR_BYTE_OFFSET(data, -headroom);
    memcpy(UCS_PTR_BYTE_OFFSET(desc, -sizeof(release_desc)), &release_desc,
           sizeof(release_desc));
    return desc;
}
