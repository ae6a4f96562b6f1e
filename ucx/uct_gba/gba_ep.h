/**
 * uct_gba: the "gba" transport's endpoints and their operations.
 *
 * An endpoint is a peer handle of its interface's engine endpoint.  Puts,
 * gets and atomics whose remote key gives direct access (memory the md
 * allocated in a peer on this host, or any registration of this process;
 * see gba_md.h) are CPU stores, loads and atomics, complete on return.
 * Every other operation goes through the engine (gba/gba_eng.h), which
 * executes the operations of one endpoint at the target in issue order.
 * A fence makes direct accesses wait until the queued operations issued
 * before it completed.  Operations that complete later than the call are
 * recorded in the endpoint's list of outstanding operations, in issue
 * order; a flush with a completion is a marker in that list, completed
 * when every operation before it has completed.
 */

#ifndef UCT_GBA_EP_H_
#define UCT_GBA_EP_H_

#include "gba_iface.h"


/* Largest am_zcopy header (it is copied into the operation descriptor) */
#define UCT_GBA_AM_MAX_HDR 128


/**
 * GBA endpoint
 */
/* clang-format off */
typedef struct uct_gba_ep {
    uct_base_ep_t       super;
    struct gba_eng_peer *peer;    /* Engine peer handle */
    ucs_list_link_t     ops;      /* Outstanding operations, issue order */
    int                 failed;   /* The peer failed; reported once */
    int                 fenced;   /* A fence waits for queued operations */
    int                 remote;   /* The peer is on another host (TCP): no
                                     transmit chunks, no direct access */
} uct_gba_ep_t;
/* clang-format on */


/**
 * Kinds of outstanding operation
 */
typedef enum {
    UCT_GBA_OP_PLAIN, /* Put, get_zcopy, atomic, large AM */
    UCT_GBA_OP_GET_BCOPY, /* Get into op->buf, then unpack */
    UCT_GBA_OP_FLUSH /* Flush marker */
} uct_gba_op_type_t;


/**
 * Outstanding operation descriptor (the engine's cookie)
 */
/* clang-format off */
typedef struct uct_gba_op {
    ucs_list_link_t       list;       /* In ep->ops */
    uct_gba_ep_t          *ep;        /* NULL once the ep is destroyed */
    uct_completion_t      *comp;      /* User completion, or NULL */
    uct_gba_op_type_t     type;
    uct_unpack_callback_t unpack_cb;  /* get_bcopy */
    void                  *unpack_arg;
    size_t                length;
    void                  *buf;       /* get_bcopy bounce buffer */
    ucs_queue_elem_t      deferred;   /* In iface->deferred_ops */
    int                   status;     /* Deferred completion's status */
    uint8_t               hdr[UCT_GBA_AM_MAX_HDR]; /* am_zcopy header */
} uct_gba_op_t;
/* clang-format on */


/**
 * Pending request private data (in uct_pending_req_t::priv)
 */
typedef struct {
    uct_pending_req_priv_queue_t super;
    uct_gba_ep_t *ep;
} uct_gba_pending_priv_t;


UCS_CLASS_DECLARE_NEW_FUNC(uct_gba_ep_t, uct_ep_t, const uct_ep_params_t *);
UCS_CLASS_DECLARE_DELETE_FUNC(uct_gba_ep_t, uct_ep_t);


/**
 * An operation the engine reported complete (@a status 0 or a negative
 * errno): unpack, complete the user's completion, fire flush markers.
 */
void uct_gba_op_complete(uct_gba_iface_t *iface, uct_gba_op_t *op, int status);


/* uct_iface_ops_t entries, with the argument shapes and return codes of
 * uct/api/uct.h; errors of the engine map through uct_gba_status() */
ucs_status_t uct_gba_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                 const void *payload, unsigned length);
ucs_status_t uct_gba_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                     const uct_iov_t *iov, size_t iovcnt);
ssize_t uct_gba_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                            uct_pack_callback_t pack_cb, void *arg,
                            unsigned flags);
ucs_status_t uct_gba_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                                 unsigned header_length, const uct_iov_t *iov,
                                 size_t iovcnt, unsigned flags,
                                 uct_completion_t *comp);
ucs_status_t uct_gba_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                  unsigned length, uint64_t remote_addr,
                                  uct_rkey_t rkey);
ssize_t uct_gba_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                             void *arg, uint64_t remote_addr, uct_rkey_t rkey);
ucs_status_t uct_gba_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_gba_ep_get_bcopy(uct_ep_h tl_ep,
                                  uct_unpack_callback_t unpack_cb, void *arg,
                                  size_t length, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_gba_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_gba_ep_atomic32_post(uct_ep_h tl_ep, unsigned opcode,
                                      uint32_t value, uint64_t remote_addr,
                                      uct_rkey_t rkey);
ucs_status_t uct_gba_ep_atomic64_post(uct_ep_h tl_ep, unsigned opcode,
                                      uint64_t value, uint64_t remote_addr,
                                      uct_rkey_t rkey);
ucs_status_t uct_gba_ep_atomic32_fetch(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                       uint32_t value, uint32_t *result,
                                       uint64_t remote_addr, uct_rkey_t rkey,
                                       uct_completion_t *comp);
ucs_status_t uct_gba_ep_atomic64_fetch(uct_ep_h tl_ep, uct_atomic_op_t opcode,
                                       uint64_t value, uint64_t *result,
                                       uint64_t remote_addr, uct_rkey_t rkey,
                                       uct_completion_t *comp);
ucs_status_t uct_gba_ep_atomic_cswap32(uct_ep_h tl_ep, uint32_t compare,
                                       uint32_t swap, uint64_t remote_addr,
                                       uct_rkey_t rkey, uint32_t *result,
                                       uct_completion_t *comp);
ucs_status_t uct_gba_ep_atomic_cswap64(uct_ep_h tl_ep, uint64_t compare,
                                       uint64_t swap, uint64_t remote_addr,
                                       uct_rkey_t rkey, uint64_t *result,
                                       uct_completion_t *comp);
ucs_status_t
uct_gba_ep_flush(uct_ep_h tl_ep, unsigned flags, uct_completion_t *comp);
ucs_status_t uct_gba_ep_fence(uct_ep_h tl_ep, unsigned flags);
ucs_status_t
uct_gba_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req, unsigned flags);
void uct_gba_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                              void *arg);

#endif
