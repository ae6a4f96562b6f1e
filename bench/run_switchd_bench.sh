#!/bin/sh
# Barrier latency across 2, 4 and 8 emulated hosts (scripts/emu_hosts.sh),
# one process per host: the GBA through gba_switchd (device
# emu+tcp://10.77.0.254:PORT, test/hosts/net_barrier) next to Open MPI's
# MPI_Barrier over the same namespaces (--mca pml ob1 --mca btl tcp,self,
# bench/gba_bench_mpi_barrier started by a plain mpirun inside gba-h0), in
# the same run, printed as the ratio MPI_Barrier / GBA.
#
#   bench/run_switchd_bench.sh [BUILDDIR]     (root; from the source tree)
#
# Environment: BENCH_ITERS (GBA barriers per run, default 5000),
# BENCH_MPI_ITERS (MPI barriers per round, 3 rounds, default 2000),
# SWITCHD_PORT (default 7447).  Prints one line per host count and the
# machine's load (uptime) before and after; exits 77 if emulated hosts
# cannot be made here.
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
b=$(cd "${1:-$top_srcdir/_build}" && pwd) || exit 2
emu="sh $top_srcdir/scripts/emu_hosts.sh"
NET=${GBA_HOSTS_NET:-10.77.0}
PORT=${SWITCHD_PORT:-7447}
ITERS=${BENCH_ITERS:-5000}
MPI_ITERS=${BENCH_MPI_ITERS:-2000}
mpirun=${MPIRUN:-mpirun}

$emu check || exit 77
for f in "$b/test/hosts/net_barrier" "$b/tools/gba_switchd" \
	"$b/tools/gba_agent" "$b/bench/gba_bench_mpi_barrier"; do
	[ -x "$f" ] || { echo "$f not built (make; make check)"; exit 2; }
done
if command -v flock >/dev/null 2>&1; then
	lockdir=/run/lock
	[ -d $lockdir ] && [ -w $lockdir ] || lockdir=/tmp
	exec 9>$lockdir/gba-emu-hosts.test.lock
	flock -w 300 9 || { echo "emulated hosts busy"; exit 1; }
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gba-switchd-bench.XXXXXX") || exit 2
DIR=$tmp/hosts
sd_pid=
cleanup() {
	[ -n "$sd_pid" ] && kill "$sd_pid" 2>/dev/null
	$emu down -d "$DIR" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

$emu down >/dev/null 2>&1
$emu up 8 -d "$DIR" >/dev/null || exit 1
"$b/tools/gba_switchd" -l "$NET.254" -p "$PORT" --daemon \
	--pidfile "$tmp/sd.pid" 2>"$tmp/sd.log" || exit 1
sd_pid=$(cat "$tmp/sd.pid")
export GBA_DEVICE=emu+tcp://$NET.254:$PORT GBA_AGENT=$b/tools/gba_agent
export LD_LIBRARY_PATH=$b/libgba/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

echo "load before: $(uptime)"
echo "hosts  gba_switchd_us  mpi_barrier_tcp_us  mpi/gba"
for H in 2 4 8; do
	# the GBA: one process per host, the slowest one's mean
	export GBA_JOB=bench-$H
	pids=
	k=0
	while [ $k -lt $H ]; do
		$emu exec -d "$DIR" gba-h$k "$b/test/hosts/net_barrier" -n $H \
			-f $k -c 1 -i $ITERS -k 7 -t 60000 \
			-C "$tmp/counter.$H" >"$tmp/gba.$H.$k" 2>&1 &
		pids="$pids $!"
		k=$((k + 1))
	done
	for p in $pids; do
		wait $p || { cat "$tmp"/gba.$H.*; exit 1; }
	done
	gba=$(cat "$tmp"/gba.$H.* | sed -n 's/.* \([0-9.]*\) us each/\1/p' |
		sort -n | tail -1)
	# Open MPI over TCP on the same hosts
	k=0
	while [ $k -lt $H ]; do
		echo "gba-h$k slots=1"
		k=$((k + 1))
	done >"$tmp/hostfile.$H"
	mpi=$($emu exec -d "$DIR" gba-h0 "$mpirun" --allow-run-as-root \
		--hostfile "$tmp/hostfile.$H" -np $H \
		--mca oob_tcp_if_include "$NET.0/24" --mca pml ob1 \
		--mca btl tcp,self --mca btl_tcp_if_include "$NET.0/24" \
		"$b/bench/gba_bench_mpi_barrier" -I $MPI_ITERS -r 3 2>"$tmp/mpi.err" |
		sed -n 's/.* mpi_us=\([0-9.]*\) .*/\1/p')
	[ -n "$mpi" ] || { echo "MPI run failed:"; cat "$tmp/mpi.err"; exit 1; }
	awk -v h=$H -v g="$gba" -v m="$mpi" \
		'BEGIN { printf "%5d  %14.1f  %18.1f  %7.2f\n", h, g, m, m / g }'
done
echo "load after: $(uptime)"
