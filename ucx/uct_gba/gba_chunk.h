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
 */

#ifndef UCT_GBA_CHUNK_H_
#define UCT_GBA_CHUNK_H_

#include <gba/gba_eng.h>
#include <ucs/datastruct/khash.h>
#include <ucs/time/time.h>
#include <ucs/type/status.h>


/* Most chunks in an interface's transmit region (UCX_GBA_TX_CHUNKS) */
#define UCT_GBA_TX_CHUNKS_MAX 64

/* Bytes before a chunk's data (its header, one cache line) */
#define UCT_GBA_CHUNK_HDR 64

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

#endif
