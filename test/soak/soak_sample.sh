#!/bin/sh
# Run a soak program (soak_barrier, soak_mixed) and sample its member
# processes (the program's children) every -i seconds once they all run
# (the program creates SOAK_READY_FILE): RSS (VmRSS of
# /proc/<pid>/status), open descriptors (/proc/<pid>/fd) and the entries
# of /dev/shm (those of the soak's job when SOAK_GBA_STAT, gba_stat, names
# its key: other programs may run beside it).  Sample -w is the baseline taken after warm-up; every later
# sample must stay within RSS + max(SOAK_RSS_TOL_KB (default 2048),
# 5 %), descriptors + 0 and /dev/shm entries + 0 of it.  Fails as well
# when the program fails or no sample follows the baseline (too short to
# judge).  Samples go to -l (default: stdout), a summary to stdout.
#
# usage: soak_sample.sh [-i s] [-w samples] [-l log] -- program args...
set -u
interval=60
warmup=2
log=
usage() {
	echo "usage: $0 [-i seconds] [-w warm-up samples] [-l log] -- cmd..." >&2
	exit 2
}
while getopts i:w:l: c; do
	case $c in
	i) interval=$OPTARG ;;
	w) warmup=$OPTARG ;;
	l) log=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] && [ "$warmup" -ge 1 ] && [ "$interval" -ge 1 ] || usage
tol=${SOAK_RSS_TOL_KB:-2048}

# the program creates it once all its members run (soak_run.h)
SOAK_READY_FILE=$(mktemp -u "${TMPDIR:-/tmp}/soak-ready.XXXXXX")
export SOAK_READY_FILE
"$@" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$SOAK_READY_FILE"' EXIT INT TERM
start=$(date +%s)
n=0
fail=0
after=0
members=

# value of variable "$1_$2" (per member pid)
get() { eval "echo \${$1_$2:-}"; }

while :; do
	t=0
	while [ $t -lt "$interval" ] && kill -0 $pid 2>/dev/null; do
		sleep 1
		t=$((t + 1))
	done
	kill -0 $pid 2>/dev/null || break
	# samples count from the program's start, not its processes' setup
	[ -e "$SOAK_READY_FILE" ] || continue
	n=$((n + 1))
	now=$(($(date +%s) - start))
	# the job's own entries when gba_stat names its key (the job's
	# queues and services carry it), else every entry
	if [ -z "${jobkey:-}" ] && [ -x "${SOAK_GBA_STAT:-}" ]; then
		jobkey=$("$SOAK_GBA_STAT" --groups 2>/dev/null |
			sed -n 's/^this job: \([0-9a-f]*\).*/\1/p')
		[ -n "$jobkey" ] && echo "soak_sample: counting /dev/shm entries of job $jobkey"
	fi
	if [ -n "${jobkey:-}" ]; then
		shm=$(ls -A /dev/shm | grep -c -- "$jobkey")
	else
		shm=$(ls -A /dev/shm | wc -l)
	fi
	[ $n -eq "$warmup" ] && base_shm=$shm
	rsss=
	fdss=
	for p in $(cat /proc/$pid/task/$pid/children 2>/dev/null); do
		# a member that is exiting has no figures worth keeping
		st=$(awk '/^State:/ { print $2 }' /proc/$p/status 2>/dev/null)
		rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$p/status 2>/dev/null)
		[ "$st" != Z ] && [ -n "$rss" ] || continue
		fds=$(ls /proc/$p/fd 2>/dev/null | wc -l)
		rsss="$rsss $rss"
		fdss="$fdss $fds"
		eval "last_rss_$p=$rss last_fds_$p=$fds"
		if [ $n -eq "$warmup" ]; then
			eval "base_rss_$p=$rss base_fds_$p=$fds"
			members="$members $p"
			continue
		fi
		brss=$(get base_rss "$p")
		[ $n -gt "$warmup" ] && [ -n "$brss" ] || continue
		after=$n
		lim=$((brss + tol))
		[ $((brss + brss / 20)) -gt $lim ] && lim=$((brss + brss / 20))
		if [ "$rss" -gt $lim ]; then
			echo "FAIL: sample $n: pid $p RSS $rss kB > $lim kB (baseline $brss kB)"
			fail=1
		fi
		if [ "$fds" -gt "$(get base_fds "$p")" ]; then
			echo "FAIL: sample $n: pid $p $fds descriptors (baseline $(get base_fds "$p"))"
			fail=1
		fi
	done
	line="sample $n t=${now}s shm=$shm rss_kb=${rsss# } fds=${fdss# }"
	# stdout itself, not /dev/stdout reopened (its own offset in a file)
	if [ -n "$log" ]; then echo "$line" >>"$log"; else echo "$line"; fi
	if [ $n -gt "$warmup" ] && [ "$shm" -gt "${base_shm:-$shm}" ]; then
		echo "FAIL: sample $n: $shm /dev/shm entries (baseline $base_shm)"
		fail=1
	fi
done
wait $pid
rc=$?
rm -f "$SOAK_READY_FILE"
trap - EXIT INT TERM
for p in $members; do
	echo "soak_sample: pid $p: rss_kb $(get base_rss "$p") -> $(get last_rss "$p"), fds $(get base_fds "$p") -> $(get last_fds "$p")"
done
echo "soak_sample: $n samples every ${interval}s, baseline sample $warmup, /dev/shm entries ${base_shm:-?} -> ${shm:-?}, program exit $rc"
if [ $rc != 0 ]; then
	echo "FAIL: $1 exited with $rc"
	fail=1
fi
if [ "$after" -le "$warmup" ]; then
	echo "FAIL: no sample after the baseline (run too short for -i $interval -w $warmup)"
	fail=1
fi
exit $fail
