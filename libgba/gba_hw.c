/* gba_hw.c: placeholder */
#include "config.h"
#include "gba_backend.h"
