/* gba_group.c: placeholder */
#include "config.h"
#include "gba_backend.h"
