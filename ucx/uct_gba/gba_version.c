/**
 * uct_gba: the check that the running UCX is the version the module was
 * built against.  Free of UCX headers so that the unit test links it alone.
 */

#include "gba_version.h"

#include <stdio.h>


int uct_gba_version_check(const unsigned built[3], const unsigned running[3],
                          char *msg, size_t max)
{
    if ((built[0] == running[0]) && (built[1] == running[1]) &&
        (built[2] == running[2])) {
        return 1;
    }

    if ((msg != NULL) && (max > 0)) {
        snprintf(msg, max,
                 "uct_gba: libuct_gba.so was built for UCX %u.%u.%u but the "
                 "running UCX is %u.%u.%u; the gba transport is not "
                 "registered (rebuild libuct_gba.so against the installed "
                 "UCX)",
                 built[0], built[1], built[2], running[0], running[1],
                 running[2]);
    }
    return 0;
}
