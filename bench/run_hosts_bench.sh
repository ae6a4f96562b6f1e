#!/bin/sh
# The fabric engine between hosts against libfabric's tcp provider, same
# run, same link: 2 emulated hosts (scripts/emu_hosts.sh, root), one MPI
# rank on each, bench/gba_bench_mpi_pingpong over MTL-OFI with
# FI_PROVIDER=gba and with FI_PROVIDER="tcp;ofi_rxm" (alternating, REPS
# runs each): the 8-byte tagged ping-pong (half round trip) and the
# bandwidth of 1 MiB messages (window of 16), medians, and the ratios.
# Usage: bench/run_hosts_bench.sh [BUILDDIR]  (default: the current
# directory, a build tree).  The ranks are not bound (--bind-to none):
# each emulated host would bind its rank to the same first core.
# Environment: REPS (default 3), ITERS
# (ping-pong iterations per round, default 5000).  Prints `uptime` first:
# the figures mean little on a loaded machine.
B=$(cd "${1:-.}" && pwd)
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
emu="sh $top_srcdir/scripts/emu_hosts.sh"
reps=${REPS:-3}
iters=${ITERS:-5000}
NET=${GBA_HOSTS_NET:-10.77.0}

$emu check || exit 77
[ -x "$B/bench/gba_bench_mpi_pingpong" ] || {
	echo "no $B/bench/gba_bench_mpi_pingpong (make bench builds it)"
	exit 1
}
# one user of the emulated hosts at a time (the tests' lock)
if command -v flock >/dev/null 2>&1; then
	lockdir=/run/lock
	[ -d $lockdir ] && [ -w $lockdir ] || lockdir=/tmp
	exec 9>$lockdir/gba-emu-hosts.test.lock
	flock -w 300 9 || { echo "the emulated hosts are busy"; exit 1; }
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gba-hosts-bench.XXXXXX") || exit 1
chmod 755 "$tmp"
DIR=$tmp/hosts
trap '$emu down -d "$DIR" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
$emu down >/dev/null 2>&1
$emu up 2 -d "$DIR" >/dev/null || exit 1

echo "# $(uptime)"
echo "# 2 emulated hosts, 1 rank each, MTL-OFI, gba_bench_mpi_pingpong" \
	"-m 8 -f 131072 -I $iters -r 3 -W 16 --bind-to none, $reps runs each"
: >"$tmp/gba"
: >"$tmp/tcp"
r=1
while [ $r -le $reps ]; do
	for p in gba tcp; do
		prov=gba
		[ $p = tcp ] && prov="tcp;ofi_rxm"
		$emu exec -d "$DIR" gba-h0 env \
			FI_PROVIDER_PATH="$B/prov/gba/.libs" \
			LD_LIBRARY_PATH="$B/libgba/.libs" \
			timeout -k 5 300 mpirun --allow-run-as-root \
			--host gba-h0,gba-h1 -np 2 --bind-to none \
			--mca oob_tcp_if_include $NET.0/24 \
			--mca pml cm --mca mtl ofi \
			--mca mtl_ofi_provider_exclude none \
			-x FI_PROVIDER="$prov" -x FI_PROVIDER_PATH \
			-x LD_LIBRARY_PATH -x FI_TCP_IFACE=eth0 \
			"$B/bench/gba_bench_mpi_pingpong" -m 8 -f 131072 -I $iters -r 3 \
			-W 16 >"$tmp/out" 2>&1 ||
			{ echo "FAILED ($prov):"; cat "$tmp/out"; }
		grep -E '^mpi(_bw)? ' "$tmp/out" >>"$tmp/$p"
	done
	r=$((r + 1))
done

# median FILE KIND FIELD: the median of FIELD= on the KIND lines
median() {
	grep "^$2 " "$1" | sed -n "s/.* $3=\([0-9.]*\).*/\1/p" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
gl=$(median "$tmp/gba" mpi us)
tl=$(median "$tmp/tcp" mpi us)
gb=$(median "$tmp/gba" mpi_bw MBps)
tb=$(median "$tmp/tcp" mpi_bw MBps)
echo "# $(uptime)"
printf "%-28s %12s %12s %8s\n" "" gba "tcp;ofi_rxm" ratio
awk -v g="$gl" -v t="$tl" 'BEGIN { printf "%-28s %12s %12s %8s\n",
	"8 B ping-pong, us (half RTT)", g, t,
	(g && t) ? sprintf("%.2f", g / t) : "-" }'
awk -v g="$gb" -v t="$tb" 'BEGIN { printf "%-28s %12s %12s %8s\n",
	"1 MiB bandwidth, MB/s", g, t,
	(g && t) ? sprintf("%.2f", t / g) : "-" }'
echo "# ratio: gba's time over tcp's (latency), tcp's bandwidth over gba's:" \
	"below 1 is gba ahead"
