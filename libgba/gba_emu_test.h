/* GBA core library: test-only hooks (internal).  Placeholder. */
#ifndef GBA_EMU_TEST_H
#define GBA_EMU_TEST_H
#include <gba/gba.h>
#endif
