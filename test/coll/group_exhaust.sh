#!/bin/sh
# The device's limits: 32 groups, the 33rd refused, 708 members.
set -e
. "$(dirname "$0")/coll_env.sh"
run "$ft/fi_gba_group_exhaust" -T 60
