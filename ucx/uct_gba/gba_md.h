/**
 * uct_gba: the "gba" component and its memory domain.
 *
 * The memory domain records registrations of host memory under a key id
 * (unique within the memory domain, never 0); a packed remote key carries
 * the address, the length and the key id of a registration, which is what a
 * target needs to check a remote access (the fabric engine's mr_lookup).
 *
 * Memory the memory domain allocates (uct_md_mem_alloc) is a shared-memory
 * region of the fabric engine (gba_eng_seg_alloc): its remote key also
 * names the region, and a peer on the same host that unpacks it maps the
 * region and reaches it directly, with CPU stores, loads and atomics, like
 * UCX's posix transport.  A remote key unpacked in the process that packed
 * it reaches any registration directly (the self path).  Other remote
 * accesses go through the target's queue.
 */

#ifndef UCT_GBA_MD_H_
#define UCT_GBA_MD_H_

#include <gba/gba_eng.h>
#include <uct/base/uct_md.h>
#include <ucs/datastruct/khash.h>
#include <ucs/datastruct/list.h>
#include <ucs/type/spinlock.h>


#define UCT_GBA_NAME "gba"


/**
 * GBA memory domain configuration (UCX_GBA_* parameters)
 */
/* clang-format off */
typedef struct uct_gba_md_config {
    uct_md_config_t super;
    char            *device; /* GBA device: "" = GBA_DEVICE or the default */
} uct_gba_md_config_t;
/* clang-format on */


/* Remote access flags of a registration; none given means all */
#define UCT_GBA_REMOTE_ACCESS                                                  \
    (UCT_MD_MEM_ACCESS_REMOTE_PUT | UCT_MD_MEM_ACCESS_REMOTE_GET |             \
     UCT_MD_MEM_ACCESS_REMOTE_ATOMIC)


/**
 * Registered memory region
 */
/* clang-format off */
typedef struct uct_gba_memh {
    void               *address; /* Start of the region */
    size_t             length;   /* Length of the region */
    uint64_t           key_id;   /* Key id, unique within the memory domain */
    unsigned           flags;    /* UCT_MD_MEM_ACCESS_* flags */
    struct gba_eng_seg seg;      /* Allocated memory; seg.addr NULL if not */
} uct_gba_memh_t;
/* clang-format on */


/**
 * Packed remote key, as mkey_pack writes it and rkey_unpack reads it
 * (little-endian on every supported host)
 */
/* clang-format off */
typedef struct uct_gba_packed_rkey {
    uint64_t address; /* Start of the region */
    uint64_t length;  /* Length of the region */
    uint64_t key_id;  /* Key id of the registration at the target */
    uint64_t host_id; /* Host of the owner (gba_host_id) */
    uint64_t seg_cookie; /* The owner's shared-memory region: cookie, */
    int32_t  seg_fd;  /* and file, or -1 */
    uint32_t pid;     /* Owner process */
    uint32_t direct;  /* Peers may reach it directly (all access granted) */
} UCS_S_PACKED uct_gba_packed_rkey_t;
/* clang-format on */


/**
 * Unpacked remote key; a uct_rkey_t is a pointer to it
 */
/* clang-format off */
typedef struct uct_gba_rkey {
    uint64_t address; /* Start of the remote region */
    uint64_t length;  /* Length of the remote region */
    uint64_t key_id;  /* Key id of the registration at the target */
    uint8_t  *local;  /* The region's start in this process (direct access),
                         or NULL: accesses go through the target's queue */
    void     *map;    /* Attached region to detach at release, or NULL */
} uct_gba_rkey_t;
/* clang-format on */


KHASH_MAP_INIT_INT64(uct_gba_memh, uct_gba_memh_t *);


/**
 * GBA memory domain
 */
/* clang-format off */
typedef struct uct_gba_md {
    uct_md_t              super;
    char                  *device;     /* UCX_GBA_DEVICE */
    ucs_spinlock_t        lock;        /* Protects the fields below */
    uint64_t              next_key_id; /* Key id of the next registration */
    khash_t(uct_gba_memh) memhs;       /* Registrations by key id */
    ucs_list_link_t       list;        /* In the process's open mds */
} uct_gba_md_t;
/* clang-format on */


extern uct_component_t uct_gba_component;


/**
 * Check a remote access of @a length bytes at @a address needing @a access
 * (GBA_ENG_ACCESS_* bits) against the registration of @a key_id in @a md,
 * with the core's gba_eng_region_check: the registration must grant every
 * bit of @a access (puts write, gets read, atomics both; one made without
 * UCT_MD_MEM_ACCESS_REMOTE_* flags grants all) and contain the range.
 *
 * @return 0 and *@a memh_p, or the fabric engine's mr_lookup errors:
 *         -ENOKEY for an unknown key id, -EACCES when the access is not
 *         granted, -ERANGE when the range leaves the region.
 */
int uct_gba_md_memh_check(uct_gba_md_t *md, uint64_t key_id, uint64_t address,
                          size_t length, uint32_t access,
                          uct_gba_memh_t **memh_p);

#endif
