/**
 * uct_gba: the "gba" transport's interface.
 *
 * An interface owns one endpoint of the GBA fabric engine (gba/gba_eng.h):
 * its address is the interface address, its receive queue brings active
 * messages and the remote puts, gets and atomics other processes execute
 * here, and iface_progress drives it.  UCT endpoints are peer handles of
 * that engine endpoint (connect-to-iface).
 */

#ifndef UCT_GBA_IFACE_H_
#define UCT_GBA_IFACE_H_

#include "gba_chunk.h"
#include "gba_md.h"

#include <gba/gba_addr.h>
#include <gba/gba_eng.h>
#include <uct/base/uct_iface.h>
#include <ucs/async/async.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/datastruct/queue.h>


/* Largest active message or bcopy put that travels inside the peer's
 * receive queue; UCT's am_short header is part of it */
#define UCT_GBA_MAX_INLINE GBA_ENG_INLINE


/**
 * GBA interface configuration (UCX_GBA_* parameters)
 */
/* clang-format off */
typedef struct uct_gba_iface_config {
    uct_iface_config_t super;
    size_t             seg_size;   /* Largest am_zcopy / get_bcopy */
    unsigned           rx_queue_len; /* Receive queue slots */
    unsigned           max_ops;    /* Outstanding operations */
    unsigned           tx_chunks;  /* Chunks of the transmit region */
    double             latency;    /* Reported latency, seconds */
    double             bandwidth;  /* Reported bandwidth, bytes/second */
    double             async_interval; /* Async progress period; 0: none */
    char               *net_addr;  /* TCP address for other hosts; "" default */
} uct_gba_iface_config_t;
/* clang-format on */


/**
 * Interface address: the engine endpoint's address (struct gba_addr)
 */
typedef struct gba_addr uct_gba_iface_addr_t;


/**
 * Device address: the host the interface is on (gba_host_id()); an
 * interface on another host is reachable when both interface addresses
 * carry a network address (the engine's TCP path)
 */
typedef uint64_t uct_gba_device_addr_t;


/**
 * GBA interface
 */
/* clang-format off */
typedef struct uct_gba_iface {
    uct_base_iface_t  super;
    uct_gba_md_t      *md;          /* Memory domain, for remote accesses */
    struct gba_eng_ep *eng_ep;      /* Engine endpoint */
    size_t            seg_size;     /* UCX_GBA_SEG_SIZE */
    double            latency;      /* UCX_GBA_LATENCY */
    double            bandwidth;    /* UCX_GBA_BANDWIDTH */
    ucs_mpool_t       op_mp;        /* Operation descriptors */
    ucs_mpool_t       buf_mp;       /* get_bcopy buffers, seg_size bytes */
    ucs_queue_head_t  pending;      /* Pending requests of all endpoints */
    void              *tx_buf;      /* Bounce buffer of put_bcopy, and of
                                       am_bcopy without chunks */
    uct_gba_chunks_t  chunks;       /* Large am_bcopy messages */
    ucs_mpool_t       rx_mp;        /* Receive descriptors of large AMs */
    size_t            rx_headroom;  /* User headroom in a descriptor */
    size_t            rx_pad;       /* Bytes before the descriptor's
                                       pointer, so that the data is
                                       aligned as asked */
    uct_recv_desc_t   release_desc; /* Gives a kept descriptor back */
    uct_recv_desc_t   chunk_release_desc; /* Frees a kept chunk */
    int               chunk_keep;   /* Handlers may keep chunks (the
                                       AM alignment asked fits them) */
    unsigned          outstanding;  /* Operations not completed yet */
    ucs_async_context_t *async;     /* Worker's async context, or NULL */
    int               timer_id;     /* Async progress timer */
    unsigned          progress_gen; /* Calls of uct_gba_iface_progress */
    unsigned          async_gen;    /* progress_gen at the last timer tick */
    int               in_async;     /* Inside the timer's progress */
    int               fenced;       /* An iface fence waits for queued ops */
    int               dispatching;  /* Dispatching pending requests */
    ucs_queue_head_t  deferred_rx;  /* Messages the timer's progress took */
    ucs_queue_head_t  deferred_ops; /* Completions it took */
} uct_gba_iface_t;
/* clang-format on */


/**
 * Enter/leave the interface: with async progress, the worker's async
 * context (a recursive lock) excludes the timer's progress.
 */
static UCS_F_ALWAYS_INLINE void uct_gba_iface_enter(uct_gba_iface_t *iface)
{
    if (iface->async != NULL) {
        UCS_ASYNC_BLOCK(iface->async);
    }
}

static UCS_F_ALWAYS_INLINE void uct_gba_iface_leave(uct_gba_iface_t *iface)
{
    if (iface->async != NULL) {
        UCS_ASYNC_UNBLOCK(iface->async);
    }
}


/**
 * Progress the interface: the engine's queue, then pending requests.
 *
 * @return the number of events handled.
 */
unsigned uct_gba_iface_progress(uct_iface_h tl_iface);


/**
 * Map a negative errno of the engine (gba/gba_eng.h) to a UCS status.
 */
ucs_status_t uct_gba_status(int err);


extern uct_tl_t uct_gba_tl;

#endif
