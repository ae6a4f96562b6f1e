#!/bin/sh
# Every collective in software (fi_broadcast, fi_allreduce, fi_reduce,
# fi_reduce_scatter, fi_allgather, fi_alltoall, fi_scatter, fi_gather,
# fi_barrier) across 2, 4 and 8 forked processes (8 oversubscribe the two
# cores of a small machine), on the full set and a strided subset, every
# result checked against values computed locally; queries, argument
# errors, a flood of a root's receive queue, members that disagree and
# -FI_EBUSY.  Then again with FI_GBA_OFFLOAD=0 (barriers in software too,
# sharing the sequence of the other collectives).
set -e
. "$(dirname "$0")/coll_env.sh"
run "$ft/fi_gba_coll" -n 2 -I 16 -T 120
run "$ft/fi_gba_coll" -n 4 -I 8 -r 20 -T 120
run "$ft/fi_gba_coll" -n 8 -I 4 -r 50 -T 120
FI_GBA_OFFLOAD=0 run "$ft/fi_gba_coll" -n 4 -I 8 -T 120
