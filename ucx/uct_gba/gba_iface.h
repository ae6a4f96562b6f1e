/**
 * uct_gba: the "gba" transport's interface.
 *
 * This release has the interface without a data path: it opens, reports
 * what it does (no capability flags, no reachable peers) and closes; every
 * data operation returns UCS_ERR_UNSUPPORTED.
 */

#ifndef UCT_GBA_IFACE_H_
#define UCT_GBA_IFACE_H_

#include "gba_md.h"

#include <uct/base/uct_iface.h>


/**
 * GBA interface configuration (UCX_GBA_* parameters)
 */
/* clang-format off */
typedef struct uct_gba_iface_config {
    uct_iface_config_t super;
} uct_gba_iface_config_t;
/* clang-format on */


/**
 * GBA interface
 */
/* clang-format off */
typedef struct uct_gba_iface {
    uct_base_iface_t super;
} uct_gba_iface_t;
/* clang-format on */


extern uct_tl_t uct_gba_tl;

#endif
