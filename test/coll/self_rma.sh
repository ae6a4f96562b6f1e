#!/bin/sh
# Loopback RMA and atomics, 1 B .. 1 MiB, every byte checked.
set -e
. "$(dirname "$0")/coll_env.sh"
run "$ft/fi_gba_self_rma" -I 2 -T 60
