/**
 * uct_gba: the check that the running UCX is the version the module was
 * built against.
 */

#ifndef UCT_GBA_VERSION_H_
#define UCT_GBA_VERSION_H_

#include <stddef.h>


/**
 * Compare the UCX version the module was built against with the one running.
 *
 * The module is built against UCX's internal headers (structures such as
 * uct_base_iface_t, uct_component_t), which change between releases, so only
 * the exact version it was built for is accepted (major, minor and release).
 *
 * @param [in]  built    Version the module was built against: major, minor,
 *                       release.
 * @param [in]  running  Version of the UCX libraries in the process.
 * @param [out] msg      Filled with the refusal message when the versions
 *                       differ (may be NULL).
 * @param [in]  max      Size of @a msg.
 *
 * @return 1 if the module may register, 0 if it must refuse.
 */
int uct_gba_version_check(const unsigned built[3], const unsigned running[3],
                          char *msg, size_t max);

#endif
