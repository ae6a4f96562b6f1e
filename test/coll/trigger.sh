#!/bin/sh
# Schedules of deferred work and triggered barriers across processes
# (fabtests/fi_gba_trigger): a triggered broadcast down a binomial tree
# and a barrier-pipelined ring exchange, every byte checked, with 4 and 8
# processes under manual progress and with the progress thread
# (FI_GBA_PROGRESS=auto).
set -e
. "$(dirname "$0")/coll_env.sh"
run "$ft/fi_gba_trigger" -n 4 -I 20 -T 120
run "$ft/fi_gba_trigger" -n 8 -I 10 -T 120
run env FI_GBA_PROGRESS=auto "$ft/fi_gba_trigger" -n 4 -I 20 -T 120
run env FI_GBA_PROGRESS=auto "$ft/fi_gba_trigger" -n 8 -I 10 -T 120
