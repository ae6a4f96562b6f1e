/**
 * uct_gba: the "gba" transport's interface, its device and the module's
 * registration with the running UCX.
 */

/* clang-format off */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif
/* clang-format on */

#include "gba_iface.h"
#include "gba_version.h"

#include <ucp/api/ucp.h>
#include <uct/api/version.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/type/class.h>
#include <stdio.h>


/* Forward declarations */
static uct_iface_ops_t uct_gba_iface_ops;


/* clang-format off */
static ucs_config_field_t uct_gba_iface_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_gba_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {NULL}
};
/* clang-format on */


static ucs_status_t
uct_gba_iface_query(uct_iface_h tl_iface, uct_iface_attr_t *iface_attr)
{
    uct_gba_iface_t *iface = ucs_derived_of(tl_iface, uct_gba_iface_t);

    /* Zeroes the capabilities: no operation and no events until the data
     * path is there.  The connection model is declared (UCP requires one of
     * every transport): endpoints will connect to an interface, but
     * is_reachable() accepts no address yet, so none is created. */
    uct_base_iface_query(&iface->super, iface_attr);

    iface_attr->iface_addr_len  = 0;
    iface_attr->device_addr_len = 0;
    iface_attr->ep_addr_len     = 0;
    iface_attr->max_conn_priv   = 0;
    iface_attr->cap.flags       = UCT_IFACE_FLAG_CONNECT_TO_IFACE;
    iface_attr->cap.event_flags = 0;

    /* Estimates for the emulated fabric engine (shared-memory queues,
     * single-copy transfers); to be replaced by measured values */
    iface_attr->latency             = ucs_linear_func_make(500e-9, 0);
    iface_attr->bandwidth.dedicated = 4096.0 * UCS_MBYTE;
    iface_attr->bandwidth.shared    = 0;
    iface_attr->overhead            = 50e-9;
    iface_attr->priority            = 0;
    return UCS_OK;
}

static int uct_gba_iface_is_reachable(const uct_iface_h tl_iface,
                                      const uct_device_addr_t *dev_addr,
                                      const uct_iface_addr_t *iface_addr)
{
    /* No data path yet: no peer is reachable */
    return 0;
}

/* The data operations that return a length or a pointer, refused */
static ssize_t uct_gba_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                                    void *arg, uint64_t remote_addr,
                                    uct_rkey_t rkey)
{
    return UCS_ERR_UNSUPPORTED;
}

static ssize_t uct_gba_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                                   uct_pack_callback_t pack_cb, void *arg,
                                   unsigned flags)
{
    return UCS_ERR_UNSUPPORTED;
}

static ssize_t uct_gba_ep_tag_eager_bcopy(uct_ep_h tl_ep, uct_tag_t tag,
                                          uint64_t imm,
                                          uct_pack_callback_t pack_cb,
                                          void *arg, unsigned flags)
{
    return UCS_ERR_UNSUPPORTED;
}

static ucs_status_ptr_t
uct_gba_ep_tag_rndv_zcopy(uct_ep_h tl_ep, uct_tag_t tag, const void *header,
                          unsigned header_length, const uct_iov_t *iov,
                          size_t iovcnt, unsigned flags, uct_completion_t *comp)
{
    return UCS_STATUS_PTR(UCS_ERR_UNSUPPORTED);
}

static UCS_CLASS_INIT_FUNC(uct_gba_iface_t, uct_md_h md, uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
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

    UCS_CLASS_CALL_SUPER_INIT(uct_base_iface_t, &uct_gba_iface_ops,
                              &uct_base_iface_internal_ops, md, worker, params,
                              tl_config UCS_STATS_ARG(
                                      (params->field_mask &
                                       UCT_IFACE_PARAM_FIELD_STATS_ROOT) ?
                                              params->stats_root :
                                              NULL)
                                      UCS_STATS_ARG(UCT_GBA_NAME));

    ucs_debug("gba: opened iface %p on md %p", self, md);
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_gba_iface_t)
{
    ucs_debug("gba: closed iface %p", self);
}

UCS_CLASS_DEFINE(uct_gba_iface_t, uct_base_iface_t);

static UCS_CLASS_DEFINE_DELETE_FUNC(uct_gba_iface_t, uct_iface_t);

static UCS_CLASS_DEFINE_NEW_FUNC(uct_gba_iface_t, uct_iface_t, uct_md_h,
                                 uct_worker_h, const uct_iface_params_t *,
                                 const uct_iface_config_t *);

/* clang-format off */
static uct_iface_ops_t uct_gba_iface_ops = {
    .ep_put_short             = (uct_ep_put_short_func_t)
            ucs_empty_function_return_unsupported,
    .ep_put_bcopy             = uct_gba_ep_put_bcopy,
    .ep_put_zcopy             = (uct_ep_put_zcopy_func_t)
            ucs_empty_function_return_unsupported,
    .ep_get_short             = (uct_ep_get_short_func_t)
            ucs_empty_function_return_unsupported,
    .ep_get_bcopy             = (uct_ep_get_bcopy_func_t)
            ucs_empty_function_return_unsupported,
    .ep_get_zcopy             = (uct_ep_get_zcopy_func_t)
            ucs_empty_function_return_unsupported,
    .ep_am_short              = (uct_ep_am_short_func_t)
            ucs_empty_function_return_unsupported,
    .ep_am_short_iov          = (uct_ep_am_short_iov_func_t)
            ucs_empty_function_return_unsupported,
    .ep_am_bcopy              = uct_gba_ep_am_bcopy,
    .ep_am_zcopy              = (uct_ep_am_zcopy_func_t)
            ucs_empty_function_return_unsupported,
    .ep_atomic_cswap64        = (uct_ep_atomic_cswap64_func_t)
            ucs_empty_function_return_unsupported,
    .ep_atomic_cswap32        = (uct_ep_atomic_cswap32_func_t)
            ucs_empty_function_return_unsupported,
    .ep_atomic32_post         = (uct_ep_atomic32_post_func_t)
            ucs_empty_function_return_unsupported,
    .ep_atomic64_post         = (uct_ep_atomic64_post_func_t)
            ucs_empty_function_return_unsupported,
    .ep_atomic32_fetch        = (uct_ep_atomic32_fetch_func_t)
            ucs_empty_function_return_unsupported,
    .ep_atomic64_fetch        = (uct_ep_atomic64_fetch_func_t)
            ucs_empty_function_return_unsupported,
    .ep_tag_eager_short       = (uct_ep_tag_eager_short_func_t)
            ucs_empty_function_return_unsupported,
    .ep_tag_eager_bcopy       = uct_gba_ep_tag_eager_bcopy,
    .ep_tag_eager_zcopy       = (uct_ep_tag_eager_zcopy_func_t)
            ucs_empty_function_return_unsupported,
    .ep_tag_rndv_zcopy        = uct_gba_ep_tag_rndv_zcopy,
    .ep_tag_rndv_cancel       = (uct_ep_tag_rndv_cancel_func_t)
            ucs_empty_function_return_unsupported,
    .ep_tag_rndv_request      = (uct_ep_tag_rndv_request_func_t)
            ucs_empty_function_return_unsupported,
    .iface_tag_recv_zcopy     = (uct_iface_tag_recv_zcopy_func_t)
            ucs_empty_function_return_unsupported,
    .iface_tag_recv_cancel    = (uct_iface_tag_recv_cancel_func_t)
            ucs_empty_function_return_unsupported,
    .ep_pending_add           = (uct_ep_pending_add_func_t)
            ucs_empty_function_return_unsupported,
    .ep_pending_purge         = (uct_ep_pending_purge_func_t)
            ucs_empty_function,
    .ep_flush                 = uct_base_ep_flush,
    .ep_fence                 = uct_base_ep_fence,
    .ep_check                 = (uct_ep_check_func_t)
            ucs_empty_function_return_unsupported,
    .ep_create                = (uct_ep_create_func_t)
            ucs_empty_function_return_unsupported,
    .ep_connect               = (uct_ep_connect_func_t)
            ucs_empty_function_return_unsupported,
    .ep_disconnect            = (uct_ep_disconnect_func_t)
            ucs_empty_function_return_unsupported,
    .cm_ep_conn_notify        = (uct_cm_ep_conn_notify_func_t)
            ucs_empty_function_return_unsupported,
    .ep_destroy               = (uct_ep_destroy_func_t)ucs_empty_function,
    .ep_get_address           = (uct_ep_get_address_func_t)
            ucs_empty_function_return_unsupported,
    .ep_connect_to_ep         = (uct_ep_connect_to_ep_func_t)
            ucs_empty_function_return_unsupported,
    .iface_accept             = (uct_iface_accept_func_t)
            ucs_empty_function_return_unsupported,
    .iface_reject             = (uct_iface_reject_func_t)
            ucs_empty_function_return_unsupported,
    .iface_flush              = uct_base_iface_flush,
    .iface_fence              = uct_base_iface_fence,
    .iface_progress_enable    = (uct_iface_progress_enable_func_t)
            ucs_empty_function,
    .iface_progress_disable   = (uct_iface_progress_disable_func_t)
            ucs_empty_function,
    .iface_progress           = (uct_iface_progress_func_t)
            ucs_empty_function_return_zero,
    .iface_event_fd_get       = (uct_iface_event_fd_get_func_t)
            ucs_empty_function_return_unsupported,
    .iface_event_arm          = (uct_iface_event_arm_func_t)
            ucs_empty_function_return_unsupported,
    .iface_close              = UCS_CLASS_DELETE_FUNC_NAME(uct_gba_iface_t),
    .iface_query              = uct_gba_iface_query,
    .iface_get_device_address = (uct_iface_get_device_address_func_t)
            ucs_empty_function_return_success,
    .iface_get_address        = (uct_iface_get_address_func_t)
            ucs_empty_function_return_success,
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
