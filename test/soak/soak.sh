#!/bin/sh
# The soak of make soak (gba(7), TESTS; fi_gba_tests(1)): barriers on 8
# processes, then mixed traffic on 4 processes with the progress thread
# (FI_GBA_PROGRESS=auto) and without it (manual), each run sampled by
# soak_sample.sh: RSS, descriptors and /dev/shm entries must stay flat
# after warm-up.  Defaults are the full run; soak_check.sh is the short
# one of make check.
#
#   SOAK_BARRIERS          barriers (default 1000000; 0: by time only)
#   SOAK_BARRIER_SECONDS   bound of the barrier run in s (default 0: none)
#   SOAK_BARRIER_INTERVAL  its sampling interval in s (default 10)
#   SOAK_MINUTES           minutes of mixed traffic per progress mode
#                          (default 30); SOAK_SECONDS overrides it
#   SOAK_INTERVAL          sampling interval of the mixed runs (default 60)
#   SOAK_WARMUP            samples of warm-up; the next is the baseline's
#                          successor (default 2)
set -u
here=$(dirname "$0")
bin=${top_builddir:-.}/test/soak
export FI_PROVIDER=gba
case "${GBA_DEVICE:-}" in
emu:/*) trap 'rm -f "/dev/shm/${GBA_DEVICE#emu:/}"' EXIT ;;
esac
# Under the sanitizers (GBA_SAN_PRELOAD: an ASan or TSan build) RSS is
# the runtime's as much as the program's (ASan's quarantine of freed
# blocks, TSan's shadow and history grow for minutes): only descriptors
# and /dev/shm entries are held flat there.
if [ -n "${GBA_SAN_PRELOAD:-}" ]; then
	export SOAK_RSS_TOL_KB=${SOAK_RSS_TOL_KB:-1048576}
fi
# A job of its own (gba(7), JOBS): its shared-memory files carry the job's
# key, so the sampler counts those only, not the files of other tests
# running beside it (make check -j).
export GBA_JOB="soak-$$-$(date +%s)"
export SOAK_GBA_STAT="${top_builddir:-.}/tools/gba_stat"
barriers=${SOAK_BARRIERS:-1000000}
bsecs=${SOAK_BARRIER_SECONDS:-0}
bint=${SOAK_BARRIER_INTERVAL:-10}
secs=${SOAK_SECONDS:-$((${SOAK_MINUTES:-30} * 60))}
int=${SOAK_INTERVAL:-60}
warm=${SOAK_WARMUP:-2}
# the programs' own bound: the run plus an hour (or 2 s per 1000 barriers)
btime=$((bsecs ? bsecs + 120 : barriers / 500 + 3600))
fail=0

run() {
	echo "+ $*"
	"$@" || fail=1
}
run "$here/soak_sample.sh" -i "$bint" -w "$warm" -- \
	"$bin/soak_barrier" -n 8 -I "$barriers" -D "$bsecs" -r 50 -T "$btime"
for mode in auto manual; do
	FI_GBA_PROGRESS=$mode run "$here/soak_sample.sh" -i "$int" -w "$warm" -- \
		"$bin/soak_mixed" -n 4 -D "$secs" -r 50 -T $((secs + 300))
done
exit $fail
