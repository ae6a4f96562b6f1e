/* GBA core library: backend ops table (internal).  Placeholder. */
#ifndef GBA_BACKEND_H
#define GBA_BACKEND_H
#include <gba/gba.h>
#endif
