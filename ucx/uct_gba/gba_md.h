/**
 * uct_gba: the "gba" component and its memory domain.
 *
 * The memory domain records registrations of host memory under a key id
 * (unique within the memory domain, never 0); a packed remote key carries
 * the address, the length and the key id of a registration, which is what a
 * target needs to check a remote access (the fabric engine's mr_lookup).
 */

#ifndef UCT_GBA_MD_H_
#define UCT_GBA_MD_H_

#include <uct/base/uct_md.h>
#include <ucs/datastruct/khash.h>
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


/**
 * Registered memory region
 */
/* clang-format off */
typedef struct uct_gba_memh {
    void     *address; /* Start of the region */
    size_t   length;   /* Length of the region */
    uint64_t key_id;   /* Key id, unique within the memory domain */
    unsigned flags;    /* UCT_MD_MEM_ACCESS_* flags of the registration */
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
} uct_gba_md_t;
/* clang-format on */


extern uct_component_t uct_gba_component;


/**
 * Find the registration of @a key_id in @a md that contains
 * [@a address, @a address + @a length), for a remote access.
 *
 * @return UCS_OK and *@a memh_p, UCS_ERR_NO_ELEM for an unknown key id, or
 *         UCS_ERR_OUT_OF_RANGE when the range leaves the region.
 */
ucs_status_t uct_gba_md_memh_find(uct_gba_md_t *md, uint64_t key_id,
                                  uint64_t address, size_t length,
                                  uct_gba_memh_t **memh_p);

#endif
