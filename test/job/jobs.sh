#!/bin/sh
# Jobs (gba(7), JOBS): two client/server pairs on the same service at
# once, in two jobs (GBA_JOB), each client reaching its own job's server;
# in one job, a second server on a held service failing at once
# (-FI_EADDRINUSE) while the first pair runs; two mpirun jobs over the
# provider at once (each its own PMIx namespace), both passing.
set -u
bindir=${top_builddir:-.}/test/job
mpibin=${top_builddir:-.}/test/mpi
export FI_PROVIDER=gba
uid=$(id -u)
svc=$((30000 + $$ % 20000))
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gba-jobs.XXXXXX") || exit 99
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
	case "${GBA_DEVICE:-}" in
	emu:/*) rm -f "/dev/shm/${GBA_DEVICE#emu:/}" ;;
	esac
}
trap cleanup EXIT
fail=0
tmo="timeout -k 5 60"

# held: true while some job's live endpoint holds service $svc (its name
# exists and the file is locked: a leftover name nobody holds is not held)
held() {
	[ "$(nheld)" -gt 0 ]
}
nheld() { # how many live endpoints (of any job) hold $svc
	n=0
	for f in /dev/shm/gba-svc-$uid-*-$svc; do
		[ -e "$f" ] && ! flock -n -x "$f" true && n=$((n + 1))
	done
	echo $n
}
wait_held() { # wait_held <count>: that many holders of $svc
	i=0
	while [ "$(nheld)" -lt "$1" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || return 1
		sleep 0.05
	done
}
# server <job> <token>: in the background, output in $tmp/s.<token>
server() {
	GBA_JOB=$1 FI_LOG_LEVEL=warn $tmo "$bindir/job_pair" server $svc "$2" \
		>"$tmp/s.$2" 2>&1 &
	pids="$pids $!"
	last=$!
}
# client <job> <token> <expected server token>
client() {
	out=$(GBA_JOB=$1 $tmo "$bindir/job_pair" client $svc "$2" 2>&1)
	if [ "$out" = "reached $3" ]; then
		echo "ok: client in job $1 reached $3"
	else
		echo "FAIL: client in job $1: '$out', expected 'reached $3'"
		fail=1
	fi
}
expect_exit() { # expect_exit <pid> <status> <what>
	wait "$1"
	st=$?
	if [ "$st" = "$2" ]; then
		echo "ok: $3 (exit $st)"
	else
		echo "FAIL: $3: exit $st, expected $2"
		fail=1
	fi
}

echo "== two jobs, one service ($svc)"
server ja A; sa=$last
server jb B; sb=$last
wait_held 2 || { echo "FAIL: both servers should hold $svc"; cat "$tmp"/s.*; exit 1; }
client jb b B
client ja a A
expect_exit "$sa" 0 "server of job ja"
expect_exit "$sb" 0 "server of job jb"

echo "== one job, one service: the second server fails at once"
server jc C; sc=$last
wait_held 1 || { echo "FAIL: server C does not hold $svc"; cat "$tmp/s.C"; exit 1; }
start=$(date +%s)
server jc D; sd=$last
expect_exit "$sd" 3 "second server of job jc: service held"
[ $(($(date +%s) - start)) -le 5 ] || { echo "FAIL: it took more than 5 s"; fail=1; }
grep -q 'held by another endpoint' "$tmp/s.D" || { echo "FAIL: no clear error:"; cat "$tmp/s.D"; fail=1; }
client jc c C
expect_exit "$sc" 0 "server of job jc"
held && { echo "FAIL: service $svc still held after the servers exited"; fail=1; }

echo "== two mpirun jobs at once"
mpirun=${MPIRUN-mpirun}
if [ -n "$mpirun" ] && command -v "$mpirun" >/dev/null 2>&1 &&
	[ -x "$mpibin/mpi_p2p" ]; then
	for j in 1 2; do
		timeout -k 10 180 "$mpirun" --allow-run-as-root --oversubscribe \
			--bind-to none -np 2 --mca pml cm --mca mtl ofi \
			-x FI_PROVIDER=gba -x FI_PROVIDER_PATH -x LD_LIBRARY_PATH \
			-x GBA_DEVICE "$mpibin/mpi_p2p" >"$tmp/mpi.$j" 2>&1 &
		eval mpi$j=$!
		pids="$pids $!"
	done
	expect_exit "$mpi1" 0 "mpirun job 1" || true
	expect_exit "$mpi2" 0 "mpirun job 2" || true
	[ $fail = 0 ] || tail -n 20 "$tmp/mpi.1" "$tmp/mpi.2"
else
	echo "skipped: no mpirun or no $mpibin/mpi_p2p"
fi
[ $fail = 0 ] && echo "PASS" || echo "FAIL"
exit $fail
