#!/bin/sh
# The data path between processes: tagged ping-pong 0 B..1 MiB with iovs,
# unexpected and directed receives, peek/claim/discard, multi-recv,
# truncation, cancel, RMA with remote CQ data and FI_RMA_EVENT counters,
# RMA errors, atomics from every rank onto rank 0.  Every byte is checked.
# 2, 4 and 8 processes (8 oversubscribe the two cores of a small machine).
set -e
. "$(dirname "$0")/coll_env.sh"
run "$ft/fi_gba_xfer" -n 2 -I 30 -T 60
run "$ft/fi_gba_xfer" -n 4 -I 20 -T 90
run "$ft/fi_gba_xfer" -n 8 -I 10 -T 120
