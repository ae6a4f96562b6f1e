/**
 * uct_gba: active messages above the queue's inline size, copied by the
 * sender.
 *
 * am_bcopy packs into a chunk of the interface's transmit region, a
 * shared-memory region of the engine (gba_eng_seg_alloc) cut into
 * UCX_GBA_TX_CHUNKS chunks of UCX_GBA_SEG_SIZE bytes, and sends the peer a
 * small notice naming the chunk.  The receiver maps the sender's region
 * (once per sender), hands the chunk's bytes to the handler and frees the
 * chunk with one store into its header.  The sender and the receiver each
 * copy once, on their own CPUs, like UCX's posix transport: a stream of
 * messages is pipelined across both.
 *
 * The handler may keep the chunk (UCT_CB_PARAM_FLAG_DESC): the chunk's
 * header has room for the receive descriptor (the uct_recv_desc() pointer
 * and the receiver's headroom) before the data, and the chunk stays busy
 * until uct_iface_release_desc().  So UCP keeps an unexpected message, or
 * a stream's data nobody asked for yet, where it arrived, and copies it
 * once, into the user's buffer, as it does with posix's FIFO elements;
 * handed over without the flag it would copy it twice.  The receivers of
 * a sender keep at most 3/4 of its chunks at once (a count in the
 * region's header): the sender always has chunks its receivers free
 * without their application's help, so no send waits for a receive the
 * application has not posted.  (ucx_perftest stream_bw at 1 MiB, where
 * the data mostly arrives before the receive: 16 chunks copied twice
 * gave 0.55-0.7x posix's bandwidth; kept, 64 chunks, 3/4 kept at most,
 * 0.97-1.77x.)
 */

#ifndef UCT_GBA_CHUNK_H_
#define UCT_GBA_CHUNK_H_

#include <gba/gba_eng.h>
#include <ucs/datastruct/khash.h>
#include <ucs/arch/cpu.h>
#include <ucs/time/time.h>
#include <ucs/type/status.h>
#include <uct/api/uct.h>


/* Most chunks in an interface's transmit region (UCX_GBA_TX_CHUNKS) */
#define UCT_GBA_TX_CHUNKS_MAX 64
/* Most chunks of a region of @_count chunks its receivers keep at once */
#define UCT_GBA_CHUNKS_KEPT_MAX(_count) ((_count) - (_count) / 4)

/* Bytes before a chunk's data: its header (one cache line), then room
 * for a receive descriptor while a handler keeps the chunk.  The region's
 * own header (the chunk count, the count of kept chunks) takes as many
 * bytes before chunk 0 */
#define UCT_GBA_CHUNK_HDR 256
/* Bytes of a chunk's header a receive descriptor may take */
#define UCT_GBA_CHUNK_ROOM (UCT_GBA_CHUNK_HDR - UCS_SYS_CACHE_LINE_SIZE)
/* Alignment of a chunk's data */
#define UCT_GBA_CHUNK_ALIGN UCS_SYS_CACHE_LINE_SIZE

/* While every chunk is busy, how often to look for gone receivers */
#define UCT_GBA_CHUNK_CHECK_MS 10

/* Flag in the engine's tag of a notice (the AM id is the low byte) */
#define UCT_GBA_TAG_CHUNK 0x100


/**
 * Notice of a chunk: the inline payload of the message
 */
/* clang-format off */
typedef struct uct_gba_chunk_notice {
    uint64_t cookie;  /* The region's cookie (struct gba_eng_seg) */
    uint64_t seg_len; /* Length of the sender's region */
    uint64_t offset;  /* Offset of the chunk's header in the region */
    uint32_t length;  /* Bytes of the message */
    int32_t  fd;      /* The sender's file of the region */
} uct_gba_chunk_notice_t;
/* clang-format on */


/**
 * A sender's region as mapped by a receiver
 */
/* clang-format off */
typedef struct uct_gba_chunk_map {
    uint8_t  *addr;    /* Attached region (gba_eng_seg_attach) */
    uint64_t cookie;   /* Its cookie */
    uint64_t seg_len;  /* Bytes attached: a notice naming more attaches
                          again, which checks the region holds them */
} uct_gba_chunk_map_t;
/* clang-format on */


KHASH_MAP_INIT_INT64(uct_gba_chunk_map, uct_gba_chunk_map_t);


/**
 * Chunks of one interface: its transmit region and the regions of the
 * senders it received from
 */
/* clang-format off */
typedef struct uct_gba_chunks {
    struct gba_eng_seg        tx;      /* Transmit region; tx.addr NULL
                                          until the first large am_bcopy */
    size_t                    stride;  /* Bytes from chunk to chunk */
    size_t                    size;    /* Data bytes of a chunk */
    unsigned                  count;   /* Chunks; 0: no transmit region */
    unsigned                  next;    /* Chunk to look at first */
    unsigned                  cur;     /* Chunk uct_gba_chunk_get gave */
    ucs_time_t                check_time; /* Next look for gone receivers */
    struct gba_eng_peer       *dest[UCT_GBA_TX_CHUNKS_MAX]; /* Receivers */
    khash_t(uct_gba_chunk_map) peers;  /* Attached regions by pid << 32 | fd */
} uct_gba_chunks_t;
/* clang-format on */


/**
 * Set up @a count (at most UCT_GBA_TX_CHUNKS_MAX; 0: none, every
 * uct_gba_chunk_get() fails) chunks for messages of up to @a size bytes;
 * the region is allocated by the first uct_gba_chunk_get()
 */
void uct_gba_chunks_init(uct_gba_chunks_t *chunks, size_t size, unsigned count);

/** Free the transmit region and unmap the senders' regions */
void uct_gba_chunks_cleanup(uct_gba_chunks_t *chunks);

/**
 * A free chunk to pack a message into: its data in *@a data_p.  While
 * every chunk is busy, every UCT_GBA_CHUNK_CHECK_MS the chunks of receivers
 * that closed or died are taken back.
 *
 * @return UCS_OK, UCS_ERR_NO_RESOURCE (every chunk holds a message its
 *         receiver has not finished with yet), UCS_ERR_NO_MEMORY (the first
 *         call could not allocate the region, or there are no chunks).
 */
ucs_status_t uct_gba_chunk_get(uct_gba_chunks_t *chunks, void **data_p);

/**
 * Mark the chunk uct_gba_chunk_get gave busy with @a length bytes for
 * receiver @a dest and fill the @a notice that names it;
 * uct_gba_chunk_unsend() undoes it when the notice could not be sent.
 */
void uct_gba_chunk_send(uct_gba_chunks_t *chunks, struct gba_eng_peer *dest,
                        uint32_t length, uct_gba_chunk_notice_t *notice);
void uct_gba_chunk_unsend(uct_gba_chunks_t *chunks);

/**
 * Receiver: the bytes of the chunk @a notice (from process @a pid) names,
 * in *@a data_p; after the handler, uct_gba_chunk_release() frees the
 * chunk for its sender.
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM (a notice outside the region),
 *         UCS_ERR_IO_ERROR (the region cannot be mapped; or it is closed:
 *         the sender closed its interface before the message was read, and
 *         the message is dropped, logged at the diag level only).
 */
ucs_status_t uct_gba_chunk_recv(uct_gba_chunks_t *chunks, uint32_t pid,
                                const uct_gba_chunk_notice_t *notice,
                                void **data_p);
void uct_gba_chunk_release(void *data);


/**
 * Receiver: offer the handler to keep the chunk of @a data (as given by
 * uct_gba_chunk_recv()) as a receive descriptor: @a headroom bytes before
 * the data, and @a release_desc before them (what uct_recv_desc() reads).
 * At most UCT_GBA_CHUNKS_KEPT_MAX of a sender's chunks are kept at once.
 *
 * @return The descriptor (the start of the headroom): pass the data with
 *         UCT_CB_PARAM_FLAG_DESC; uct_gba_chunk_release() frees the chunk,
 *         once the handler returned, or once it gives the descriptor back
 *         if it kept it.  NULL: the handler cannot keep
 *         it (UCT_GBA_CHUNKS_KEPT_MAX of the sender's chunks are kept,
 *         or @a headroom and the descriptor's pointer do not fit
 *         UCT_GBA_CHUNK_ROOM).
 */
void *uct_gba_chunk_keep(void *data, size_t headroom,
                         uct_recv_desc_t *release_desc);

#endif
