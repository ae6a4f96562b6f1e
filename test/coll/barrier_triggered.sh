#!/bin/sh
# A chain of triggered barriers (fi_barrier2 + FI_TRIGGER) across 4 and 8
# processes: each arrives only when its counter reaches the threshold.
set -e
. "$(dirname "$0")/coll_env.sh"
run "$ft/fi_gba_barrier" -n 4 -I 1000 -t -T 120
run "$ft/fi_gba_barrier" -n 8 -I 300 -t -r 20 -T 120
