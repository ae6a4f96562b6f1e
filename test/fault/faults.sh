#!/bin/sh
# A randomized series of fault-injection trials (test/fault/fault_trial,
# test/fault/ucx_fault_trial): FAULT_TRIALS trials (default 12) of 3 to 6
# members, cycling through the stacks and fault points of FAULT_PLAN
# (default: libfabric at a random time and at each fault point of
# include/gba/gba_fault.h, UCX at a random time, holding a slot and
# holding a chunk),
# the victim killed or stopped at random; every trial must end with
# every survivor reporting the fault, no hang, no lost or corrupt
# message, no leftover file of the trial's job, and a new job running
# after it.
# FAULT_SEED fixes the first seed (default: the time).
set -u
dir=${top_builddir:-.}/test/fault
export FI_PROVIDER=gba
trials=${FAULT_TRIALS:-12}
seed=${FAULT_SEED:-$(date +%s)}
plan=${FAULT_PLAN:-"fi:time fi:slot fi:chunk fi:rma fi:barrier fi:trigger ucx:time ucx:slot ucx:chunk"}
case "${GBA_DEVICE:-}" in
emu:/*) trap 'rm -f "/dev/shm/${GBA_DEVICE#emu:/}"' EXIT ;;
esac
set -- $plan
nplan=$#
fail=0
t=0
while [ $t -lt "$trials" ]; do
	s=$((seed + t))
	n=$((3 + s % 4))
	eval step=\${$((t % nplan + 1))}
	case $step in
	fi:*) bin=$dir/fault_trial ;;
	ucx:*) bin=$dir/ucx_fault_trial ;;
	esac
	if [ ! -x "$bin" ]; then
		echo "trial $step seed=$s: skipped ($bin not built)"
		t=$((t + 1))
		continue
	fi
	out=$(timeout -k 5 60 "$bin" -n $n -s $s -P "${step#*:}" -w 3000 \
		-W 10000 2>&1)
	rc=$?
	echo "$out" | grep '^fault ' ||
		echo "trial $step seed=$s: no result (exit $rc)"
	if [ $rc != 0 ]; then
		echo "FAIL: trial $step seed=$s (exit $rc):"
		echo "$out" | tail -n 20
		fail=1
	fi
	t=$((t + 1))
done
exit $fail
