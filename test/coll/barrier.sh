#!/bin/sh
# Barriers across 2, 4 and 8 forked processes (8 oversubscribe the two
# cores of a small machine) with random delays: nobody may be released
# before everybody arrived.  Fails on any early release, error or hang.
set -e
. "$(dirname "$0")/coll_env.sh"
run "$ft/fi_gba_barrier" -n 2 -I 5000 -r 20 -T 120
run "$ft/fi_gba_barrier" -n 4 -I 3000 -r 20 -T 120
run "$ft/fi_gba_barrier" -n 8 -I 1000 -r 50 -T 120
