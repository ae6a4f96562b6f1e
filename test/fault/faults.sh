#!/bin/sh
# A randomized series of fault-injection trials (test/fault/fault_trial):
# FAULT_TRIALS trials (default 12) of 3 to 6 members, the victim killed
# or stopped after 0 to 200 ms; every trial must end with every survivor
# reporting the fault, no hang, no lost or corrupt message and no
# leftover file.  FAULT_SEED fixes the first seed (default: the time).
set -u
bin=${top_builddir:-.}/test/fault/fault_trial
export FI_PROVIDER=gba
trials=${FAULT_TRIALS:-12}
seed=${FAULT_SEED:-$(date +%s)}
case "${GBA_DEVICE:-}" in
emu:/*) trap 'rm -f "/dev/shm/${GBA_DEVICE#emu:/}"' EXIT ;;
esac
fail=0
t=0
while [ $t -lt "$trials" ]; do
	s=$((seed + t))
	n=$((3 + s % 4))
	out=$(timeout -k 5 60 "$bin" -n $n -s $s -w 1000 -W 8000 2>&1)
	rc=$?
	echo "$out" | grep '^fault ' || echo "trial seed=$s: no result (exit $rc)"
	if [ $rc != 0 ]; then
		echo "FAIL: trial seed=$s (exit $rc):"
		echo "$out" | tail -n 20
		fail=1
	fi
	t=$((t + 1))
done
exit $fail
