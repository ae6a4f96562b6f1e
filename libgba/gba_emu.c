/* gba_emu.c: placeholder */
#include "config.h"
#include "gba_backend.h"
