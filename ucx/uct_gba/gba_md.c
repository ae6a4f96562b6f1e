/**
 * uct_gba: the "gba" component and its memory domain.
 */

/* clang-format off */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif
/* clang-format on */

#include "gba_md.h"

#include <gba/gba.h>
#include <gba/gba_addr.h>

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>
#include <ucs/type/class.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>


/* clang-format off */
/* The memory domains open in this process: what a key naming this process
 * is checked against (uct_gba_rkey_own) */
static UCS_LIST_HEAD(uct_gba_md_list);
static pthread_mutex_t uct_gba_md_list_lock = PTHREAD_MUTEX_INITIALIZER;

static ucs_config_field_t uct_gba_md_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_gba_md_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

    {"DEVICE", "",
     "GBA device of the memory domain: a path such as /dev/gba0 (hardware) or\n"
     "emu[:<name>] (the emulated device). Empty: the GBA_DEVICE environment\n"
     "variable, else /dev/gba0 if it exists, else the emulated device.",
     ucs_offsetof(uct_gba_md_config_t, device), UCS_CONFIG_TYPE_STRING},

    {NULL}
};
/* clang-format on */


static ucs_status_t uct_gba_md_query(uct_md_h tl_md, uct_md_attr_t *md_attr)
{
    /* No UCT_MD_FLAG_RKEY_PTR: uct_rkey_ptr works only for allocated
     * memory, and UCP's rendezvous would fail on registered memory */
    md_attr->cap.flags            = UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY |
                                    UCT_MD_FLAG_ALLOC | UCT_MD_FLAG_FIXED;
    md_attr->cap.reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.alloc_mem_types  = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    md_attr->cap.detect_mem_types = 0;
    md_attr->cap.max_alloc        = ULONG_MAX;
    md_attr->cap.max_reg          = ULONG_MAX;
    md_attr->rkey_packed_size     = sizeof(uct_gba_packed_rkey_t);
    /* A registration is a hash insertion: no pinning, no system call */
    md_attr->reg_cost = ucs_linear_func_make(50e-9, 0);
    memset(&md_attr->local_cpus, 0xff, sizeof(md_attr->local_cpus));
    return UCS_OK;
}

/* Record @memh (address, length, flags and seg set) under a new key id */
static ucs_status_t uct_gba_md_memh_insert(uct_gba_md_t *md,
                                           uct_gba_memh_t *memh)
{
    khiter_t iter;
    int ret;

    ucs_spin_lock(&md->lock);
    memh->key_id = md->next_key_id++;
    iter         = kh_put(uct_gba_memh, &md->memhs, memh->key_id, &ret);
    if (ret == UCS_KH_PUT_FAILED) {
        ucs_spin_unlock(&md->lock);
        return UCS_ERR_NO_MEMORY;
    }
    /* Key ids are never reused: the slot is new */
    ucs_assert(ret != UCS_KH_PUT_KEY_PRESENT);
    kh_value(&md->memhs, iter) = memh;
    ucs_spin_unlock(&md->lock);

    ucs_trace("gba: registered %p..%p key id %" PRIu64 "%s", memh->address,
              UCS_PTR_BYTE_OFFSET(memh->address, memh->length), memh->key_id,
              (memh->seg.addr != NULL) ? " (allocated, shared)" : "");
    return UCS_OK;
}

/* Forget @memh; UCS_ERR_INVALID_PARAM if it is not a registration of @md
 * made by uct_md_mem_reg (@allocated 0) or uct_md_mem_alloc (1) */
static ucs_status_t uct_gba_md_memh_remove(uct_gba_md_t *md,
                                           uct_gba_memh_t *memh, int allocated)
{
    khiter_t iter;

    ucs_spin_lock(&md->lock);
    iter = kh_get(uct_gba_memh, &md->memhs, memh->key_id);
    if ((iter == kh_end(&md->memhs)) || (kh_value(&md->memhs, iter) != memh) ||
        ((memh->seg.addr != NULL) != allocated)) {
        ucs_spin_unlock(&md->lock);
        ucs_error("gba: memh %p is not %s of md %p", memh,
                  allocated ? "an allocation" : "a registration", md);
        return UCS_ERR_INVALID_PARAM;
    }
    kh_del(uct_gba_memh, &md->memhs, iter);
    ucs_spin_unlock(&md->lock);

    ucs_trace("gba: deregistered key id %" PRIu64, memh->key_id);
    return UCS_OK;
}

static ucs_status_t uct_gba_mem_reg(uct_md_h tl_md, void *address,
                                    size_t length, unsigned flags,
                                    uct_mem_h *memh_p)
{
    uct_gba_md_t *md = ucs_derived_of(tl_md, uct_gba_md_t);
    uct_gba_memh_t *memh;

    if ((address == NULL) || (length == 0) ||
        ((uintptr_t)address + length < (uintptr_t)address)) {
        uct_md_log_mem_reg_error(flags,
                                 "gba: invalid registration address=%p "
                                 "length=%zu",
                                 address, length);
        return UCS_ERR_INVALID_PARAM;
    }

    memh = ucs_calloc(1, sizeof(*memh), "gba_memh");
    if (memh == NULL) {
        uct_md_log_mem_reg_error(flags, "gba: failed to allocate memh");
        return UCS_ERR_NO_MEMORY;
    }

    memh->address = address;
    memh->length  = length;
    memh->flags   = flags;
    if (uct_gba_md_memh_insert(md, memh) != UCS_OK) {
        ucs_free(memh);
        uct_md_log_mem_reg_error(flags, "gba: failed to record registration");
        return UCS_ERR_NO_MEMORY;
    }

    *memh_p = memh;
    return UCS_OK;
}

static ucs_status_t
uct_gba_mem_dereg(uct_md_h tl_md, const uct_md_mem_dereg_params_t *params)
{
    uct_gba_md_t *md = ucs_derived_of(tl_md, uct_gba_md_t);
    ucs_status_t status;

    UCT_MD_MEM_DEREG_CHECK_PARAMS(params, 0);

    status = uct_gba_md_memh_remove(md, params->memh, 0);
    if (status == UCS_OK) {
        ucs_free(params->memh);
    }
    return status;
}

/*
 * uct_md_mem_alloc: host memory in a shared-memory region of the engine
 * (peers on the host reach it directly), registered with all access.
 * UCT_MD_MEM_FLAG_FIXED places it at exactly *address_p (page aligned,
 * not mapped yet).  Returns UCS_OK, UCS_ERR_UNSUPPORTED (other memory
 * types), UCS_ERR_INVALID_PARAM (length 0, unaligned fixed address),
 * UCS_ERR_NO_MEMORY (the region could not be created or placed).
 */
static ucs_status_t uct_gba_mem_alloc(uct_md_h tl_md, size_t *length_p,
                                      void **address_p,
                                      ucs_memory_type_t mem_type,
                                      unsigned flags, const char *alloc_name,
                                      uct_mem_h *memh_p)
{
    uct_gba_md_t *md = ucs_derived_of(tl_md, uct_gba_md_t);
    void *fixed      = (flags & UCT_MD_MEM_FLAG_FIXED) ? *address_p : NULL;
    uct_gba_memh_t *memh;
    ucs_status_t status;
    int ret;

    if (mem_type != UCS_MEMORY_TYPE_HOST) {
        return UCS_ERR_UNSUPPORTED;
    }
    if ((*length_p == 0) || ((flags & UCT_MD_MEM_FLAG_FIXED) &&
                             ((fixed == NULL) ||
                              ((uintptr_t)fixed % ucs_get_page_size())))) {
        uct_md_log_mem_reg_error(flags,
                                 "gba: invalid allocation of %zu bytes at %p "
                                 "for %s",
                                 *length_p, fixed, alloc_name);
        return UCS_ERR_INVALID_PARAM;
    }

    memh = ucs_calloc(1, sizeof(*memh), "gba_memh");
    if (memh == NULL) {
        uct_md_log_mem_reg_error(flags, "gba: failed to allocate memh");
        return UCS_ERR_NO_MEMORY;
    }

    ret = gba_eng_seg_alloc(*length_p, fixed, &memh->seg);
    if (ret < 0) {
        uct_md_log_mem_reg_error(flags,
                                 "gba: failed to allocate %zu bytes%s for %s: "
                                 "%s",
                                 *length_p, fixed ? " at a fixed address" : "",
                                 alloc_name, gba_last_error(ret));
        status = UCS_ERR_NO_MEMORY;
        goto err_free_memh;
    }

    memh->address = memh->seg.addr;
    memh->length  = memh->seg.len;
    memh->flags   = UCT_GBA_REMOTE_ACCESS;
    status        = uct_gba_md_memh_insert(md, memh);
    if (status != UCS_OK) {
        uct_md_log_mem_reg_error(flags, "gba: failed to record allocation");
        goto err_free_seg;
    }

    ucs_debug("gba: allocated %zu bytes at %p for %s", memh->length,
              memh->address, alloc_name);
    *length_p  = memh->length;
    *address_p = memh->address;
    *memh_p    = memh;
    return UCS_OK;

err_free_seg:
    gba_eng_seg_free(&memh->seg);
err_free_memh:
    ucs_free(memh);
    return status;
}

/* uct_md_mem_free: release memory uct_gba_mem_alloc returned */
static ucs_status_t uct_gba_mem_free(uct_md_h tl_md, uct_mem_h tl_memh)
{
    uct_gba_md_t *md     = ucs_derived_of(tl_md, uct_gba_md_t);
    uct_gba_memh_t *memh = tl_memh;
    ucs_status_t status;

    status = uct_gba_md_memh_remove(md, memh, 1);
    if (status != UCS_OK) {
        return status;
    }

    gba_eng_seg_free(&memh->seg);
    ucs_free(memh);
    return UCS_OK;
}

static ucs_status_t uct_gba_mkey_pack(uct_md_h tl_md, uct_mem_h tl_memh,
                                      const uct_md_mkey_pack_params_t *params,
                                      void *rkey_buffer)
{
    uct_gba_memh_t *memh          = tl_memh;
    uct_gba_packed_rkey_t *packed = rkey_buffer;

    packed->address = (uintptr_t)memh->address;
    packed->length  = memh->length;
    packed->key_id  = memh->key_id;
    packed->host_id = gba_host_id();
    packed->pid     = getpid();
    packed->seg_fd     = (memh->seg.addr != NULL) ? memh->seg.fd : -1;
    packed->seg_cookie = memh->seg.cookie;
    /* Direct accesses skip the target's access check: only for
     * registrations that grant every access */
    packed->direct  = !(memh->flags & UCT_GBA_REMOTE_ACCESS) ||
                     ((memh->flags & UCT_GBA_REMOTE_ACCESS) ==
                      UCT_GBA_REMOTE_ACCESS);
    return UCS_OK;
}

/* The access bits (GBA_ENG_ACCESS_*) a registration with the
 * UCT_MD_MEM_ACCESS_* @flags grants: puts write, gets read, atomics do both;
 * none of the remote flags means all */
static uint64_t uct_gba_md_memh_access(unsigned flags)
{
    uint64_t access = 0;

    if (!(flags & UCT_GBA_REMOTE_ACCESS) ||
        (flags & UCT_MD_MEM_ACCESS_REMOTE_ATOMIC)) {
        return GBA_ENG_ACCESS_READ | GBA_ENG_ACCESS_WRITE;
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_PUT) {
        access |= GBA_ENG_ACCESS_WRITE;
    }
    if (flags & UCT_MD_MEM_ACCESS_REMOTE_GET) {
        access |= GBA_ENG_ACCESS_READ;
    }
    return access;
}

int uct_gba_md_memh_check(uct_gba_md_t *md, uint64_t key_id, uint64_t address,
                          size_t length, uint32_t access,
                          uct_gba_memh_t **memh_p)
{
    struct gba_eng_region region;
    uct_gba_memh_t *memh;
    khiter_t iter;
    int ret;

    ucs_spin_lock(&md->lock);
    iter = kh_get(uct_gba_memh, &md->memhs, key_id);
    if (iter == kh_end(&md->memhs)) {
        ret = gba_eng_region_check(NULL, address, length, access);
        goto out;
    }

    memh          = kh_value(&md->memhs, iter);
    region.base   = (uintptr_t)memh->address;
    region.size   = memh->length;
    region.access = uct_gba_md_memh_access(memh->flags);
    ret           = gba_eng_region_check(&region, address, length, access);
    if (ret == 0) {
        *memh_p = memh;
    }
out:
    ucs_spin_unlock(&md->lock);
    return ret;
}

static void uct_gba_md_close(uct_md_h tl_md)
{
    uct_gba_md_t *md = ucs_derived_of(tl_md, uct_gba_md_t);
    khiter_t iter;

    if (kh_size(&md->memhs) != 0) {
        ucs_warn("gba: md %p closed with %u registrations left", md,
                 kh_size(&md->memhs));
    }
    for (iter = kh_begin(&md->memhs); iter != kh_end(&md->memhs); ++iter) {
        if (kh_exist(&md->memhs, iter)) {
            gba_eng_seg_free(&kh_value(&md->memhs, iter)->seg);
            ucs_free(kh_value(&md->memhs, iter));
        }
    }
    kh_destroy_inplace(uct_gba_memh, &md->memhs);
    pthread_mutex_lock(&uct_gba_md_list_lock);
    ucs_list_del(&md->list);
    pthread_mutex_unlock(&uct_gba_md_list_lock);
    ucs_spinlock_destroy(&md->lock);
    ucs_free(md->device);
    ucs_free(md);
}

/* clang-format off */
static uct_md_ops_t uct_gba_md_ops = {
    .close                  = uct_gba_md_close,
    .query                  = uct_gba_md_query,
    .mem_alloc              = uct_gba_mem_alloc,
    .mem_free               = uct_gba_mem_free,
    .mem_advise             = (uct_md_mem_advise_func_t)
            ucs_empty_function_return_unsupported,
    .mem_reg                = uct_gba_mem_reg,
    .mem_dereg              = uct_gba_mem_dereg,
    .mem_query              = (uct_md_mem_query_func_t)
            ucs_empty_function_return_unsupported,
    .mkey_pack              = uct_gba_mkey_pack,
    .is_sockaddr_accessible = (uct_md_is_sockaddr_accessible_func_t)
            ucs_empty_function_return_zero_int,
    .detect_memory_type     = (uct_md_detect_memory_type_func_t)
            ucs_empty_function_return_unsupported
};
/* clang-format on */

static ucs_status_t
uct_gba_md_open(uct_component_t *component, const char *md_name,
                const uct_md_config_t *uct_md_config, uct_md_h *md_p)
{
    const uct_gba_md_config_t *md_config = ucs_derived_of(uct_md_config,
                                                          uct_gba_md_config_t);
    ucs_status_t status;
    uct_gba_md_t *md;

    md = ucs_calloc(1, sizeof(*md), "uct_gba_md");
    if (md == NULL) {
        ucs_error("gba: failed to allocate the memory domain");
        return UCS_ERR_NO_MEMORY;
    }

    md->device = ucs_strdup(md_config->device, "gba_md_device");
    if (md->device == NULL) {
        ucs_error("gba: failed to allocate the device name");
        status = UCS_ERR_NO_MEMORY;
        goto err_free_md;
    }

    status = ucs_spinlock_init(&md->lock, 0);
    if (status != UCS_OK) {
        goto err_free_device;
    }

    md->super.ops       = &uct_gba_md_ops;
    md->super.component = &uct_gba_component;
    md->next_key_id     = 1;
    kh_init_inplace(uct_gba_memh, &md->memhs);
    pthread_mutex_lock(&uct_gba_md_list_lock);
    ucs_list_add_tail(&uct_gba_md_list, &md->list);
    pthread_mutex_unlock(&uct_gba_md_list_lock);

    ucs_debug("gba: opened md %p device '%s'", md, md->device);
    *md_p = &md->super;
    return UCS_OK;

err_free_device:
    ucs_free(md->device);
err_free_md:
    ucs_free(md);
    return status;
}

/*
 * Is @packed, a key naming this process, one of its own: a registration
 * of an open md of this process, with that key id, containing the key's
 * range and granting every access?  A key comes from another process,
 * which could name this one to have it load and store anywhere in its
 * own memory.
 */
static int uct_gba_rkey_own(const uct_gba_packed_rkey_t *packed)
{
    uct_gba_memh_t *memh;
    uct_gba_md_t *md;
    int own = 0;

    pthread_mutex_lock(&uct_gba_md_list_lock);
    ucs_list_for_each(md, &uct_gba_md_list, list) {
        if (uct_gba_md_memh_check(md, packed->key_id, packed->address,
                                  packed->length,
                                  GBA_ENG_ACCESS_READ | GBA_ENG_ACCESS_WRITE,
                                  &memh) == 0) {
            own = 1;
            break;
        }
    }
    pthread_mutex_unlock(&uct_gba_md_list_lock);
    return own;
}

/*
 * Where this process reaches the region of @packed directly: its own
 * memory (the self path, for its own registrations only), a peer's
 * shared-memory region mapped now, or NULL (through the target's queue,
 * which checks the key).  *@map_p receives a mapping to undo.
 */
static uint8_t *uct_gba_rkey_local(const uct_gba_packed_rkey_t *packed,
                                   void **map_p)
{
    void *map;
    int ret;

    *map_p = NULL;
    if (!packed->direct || (packed->host_id != gba_host_id())) {
        return NULL;
    }
    if (packed->pid == (uint32_t)getpid()) {
        if (!uct_gba_rkey_own(packed)) {
            ucs_diag("gba: a key names this process but none of its "
                     "registrations (key id %" PRIu64 ", %" PRIu64
                     " bytes at 0x%" PRIx64 "): accesses go through the "
                     "queue",
                     packed->key_id, packed->length, packed->address);
            return NULL;
        }
        return (uint8_t*)(uintptr_t)packed->address;
    }
    if (packed->seg_fd < 0) {
        return NULL;
    }

    ret = gba_eng_seg_attach(packed->pid, packed->seg_fd, packed->length,
                             packed->seg_cookie, &map);
    if (ret < 0) {
        /* Still reachable, through the queue */
        ucs_debug("gba: cannot map region fd %d of pid %u (%s): remote "
                  "accesses go through its queue",
                  packed->seg_fd, packed->pid, strerror(-ret));
        return NULL;
    }

    *map_p = map;
    return map;
}

/* uct_rkey_unpack: copies the packed key and, where possible, maps the
 * region for direct access (see uct_gba_rkey_local).  UCS_OK or
 * UCS_ERR_NO_MEMORY. */
static ucs_status_t uct_gba_rkey_unpack(uct_component_t *component,
                                        const void *rkey_buffer,
                                        uct_rkey_t *rkey_p, void **handle_p)
{
    uct_gba_packed_rkey_t packed;
    uct_gba_rkey_t *rkey;

    /* The buffer may be unaligned (UCP packs keys back to back) */
    memcpy(&packed, rkey_buffer, sizeof(packed));

    rkey = ucs_malloc(sizeof(*rkey), "gba_rkey");
    if (rkey == NULL) {
        ucs_error("gba: failed to allocate a remote key");
        return UCS_ERR_NO_MEMORY;
    }

    rkey->address = packed.address;
    rkey->length  = packed.length;
    rkey->key_id  = packed.key_id;
    rkey->local   = uct_gba_rkey_local(&packed, &rkey->map);

    *rkey_p   = (uintptr_t)rkey;
    *handle_p = NULL;
    return UCS_OK;
}

/* uct_rkey_ptr: the local address of @remote_addr for a key with direct
 * access; UCS_ERR_INVALID_ADDR outside the region, UCS_ERR_UNSUPPORTED for
 * a key reached through the target's queue */
static ucs_status_t uct_gba_rkey_ptr(uct_component_t *component,
                                     uct_rkey_t tl_rkey, void *handle,
                                     uint64_t remote_addr, void **local_addr_p)
{
    const uct_gba_rkey_t *rkey = (const uct_gba_rkey_t*)tl_rkey;

    if (rkey->local == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    if (gba_eng_range_check(rkey->address, rkey->length, remote_addr, 1)) {
        return UCS_ERR_INVALID_ADDR;
    }

    *local_addr_p = rkey->local + (remote_addr - rkey->address);
    return UCS_OK;
}

/* uct_rkey_release; a key never unpacked (0, as ucx_perftest releases the
 * keys of peers it failed to connect to) or UCT_INVALID_RKEY is nothing */
static ucs_status_t
uct_gba_rkey_release(uct_component_t *component, uct_rkey_t tl_rkey,
                     void *handle)
{
    uct_gba_rkey_t *rkey = (uct_gba_rkey_t*)tl_rkey;

    if ((tl_rkey == 0) || (tl_rkey == UCT_INVALID_RKEY)) {
        return UCS_OK;
    }
    gba_eng_seg_detach(rkey->map);
    ucs_free(rkey);
    return UCS_OK;
}

/* clang-format off */
uct_component_t uct_gba_component = {
    .query_md_resources = uct_md_query_single_md_resource,
    .md_open            = uct_gba_md_open,
    .cm_open            = (uct_component_cm_open_func_t)
            ucs_empty_function_return_unsupported,
    .rkey_unpack        = uct_gba_rkey_unpack,
    .rkey_ptr           = uct_gba_rkey_ptr,
    .rkey_release       = uct_gba_rkey_release,
    .name               = UCT_GBA_NAME,
    .md_config          = {
        .name           = "GBA memory domain",
        .prefix         = "GBA_",
        .table          = uct_gba_md_config_table,
        .size           = sizeof(uct_gba_md_config_t),
    },
    .cm_config          = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
    .tl_list            = UCT_COMPONENT_TL_LIST_INITIALIZER(&uct_gba_component),
    .flags              = 0,
    .md_vfs_init        = (uct_component_md_vfs_init_func_t)ucs_empty_function
};
/* clang-format on */
