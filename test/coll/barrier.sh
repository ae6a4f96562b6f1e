#!/bin/sh
# Barriers across 2, 4 and 8 forked processes (8 oversubscribe the two
# cores of a small machine) with random delays: nobody may be released
# before everybody arrived.  Fails on any early release, error or hang.
# Then again with FI_GBA_OFFLOAD=0 (the software barrier).
set -e
. "$(dirname "$0")/coll_env.sh"
run "$ft/fi_gba_barrier" -n 2 -I 5000 -r 20 -T 120
run "$ft/fi_gba_barrier" -n 4 -I 3000 -r 20 -T 120
run "$ft/fi_gba_barrier" -n 8 -I 1000 -r 50 -T 120
# the same with the device disabled: the software barrier over the engine
FI_GBA_OFFLOAD=0 run "$ft/fi_gba_barrier" -n 2 -I 2000 -r 20 -T 120
FI_GBA_OFFLOAD=0 run "$ft/fi_gba_barrier" -n 4 -I 1000 -r 20 -T 120
FI_GBA_OFFLOAD=0 run "$ft/fi_gba_barrier" -n 8 -I 300 -r 50 -T 120
