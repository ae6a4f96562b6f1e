#!/bin/sh
# The fabric engine between hosts (doc/design.md section 9): 2 emulated
# hosts (scripts/emu_hosts.sh), each with its own /dev/shm and host id, so
# that their endpoints talk over the engine's TCP path:
#   - fi_gba_xfer with one rank on each host (tagged messages 0 B..1 MiB,
#     unexpected, multi-recv, truncation, RMA with events, atomics: every
#     byte checked), then 4 ranks, 2 per host (shared memory and TCP in one
#     run);
#   - the same with GBA_NET_ADDR=none must fail (the peer unreachable):
#     the first run did go between hosts;
#   - fi_info with another host's node and service (a service address,
#     fi_getinfo; fabtests' "-s HOST SERVER" mode);
#   - fi_gba_barrier, 2 ranks per host: a set on several hosts runs its
#     barrier in software over the engine (a device group reaches one
#     host), every release checked;
#   - a peer on another host killed (SIGKILL) with a read and an atomic
#     outstanding: both complete with errors, a new send fails, no hang
#     (test/hosts/net_dead);
#   - UCX_TLS=gba,self alone: ucx_perftest tag_lat and ucp_put_bw between the
#     hosts (remote keys through the engine, not shared memory);
#   - Open MPI across the hosts with a hostfile (4 hosts x 2 slots):
#     test/hosts/mpi_hosts over MTL-OFI gba and over PML-UCX gba,self.
# The fi_gba_* and UCX parts use gba-h0 and gba-h1 (N), the MPI part all
# HOSTS.
# Skips (77) where namespaces cannot be made (emu_hosts.sh check); the MPI
# and UCX parts are skipped (with a line) when mpirun or ucx_perftest is
# missing.  One run at a time (the lock of test/hosts/emu_hosts.sh).
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/test/hosts/hosts_lib.sh"
top_builddir=${top_builddir:-.}
B=$(cd "$top_builddir" && pwd)
N=2
HOSTS=4
NET=${GBA_HOSTS_NET:-10.77.0}

$emu check || exit 77

hosts_lock

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gba-net-test.XXXXXX") || exit 99
chmod 755 "$tmp"
DIR=$tmp/hosts
cleanup() {
	$emu down -d "$DIR" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 5"

# on HOST CMD...: run CMD inside HOST with the build tree's libraries
fienv="FI_PROVIDER_PATH=$B/prov/gba/.libs LD_LIBRARY_PATH=$B/libgba/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
on() {
	h=$1
	shift
	$emu exec -d "$DIR" "$h" env $fienv "$@"
}

$emu down >/dev/null 2>&1 # stale hosts of an earlier run
step "up $HOSTS"
$emu up $HOSTS -d "$DIR" >/dev/null || fail "emu_hosts.sh up $HOSTS failed"

# ranks PROG N_RANKS ARGS -- ENV...: fi_gba_PROG, rank r on host r % N,
# with ARGS; 0 if all passed (outputs in $tmp/out.RANK)
ranks() {
	prog=$1
	n=$2
	shift 2
	args=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args="$args $1"
		shift
	done
	[ $# -gt 0 ] && shift
	rm -f "$tmp/ranks.shm"
	r=0
	while [ $r -lt $n ]; do
		(on gba-h$((r % N)) "$@" $tmo 50 "$B/fabtests/fi_gba_$prog" \
			-n $n -R $r -S "$tmp/ranks.shm" -T 40 $args \
			>"$tmp/out.$r" 2>&1
		 echo $? >"$tmp/out.$r.rc") &
		r=$((r + 1))
	done
	wait
	ok=0
	r=0
	while [ $r -lt $n ]; do
		[ "$(cat "$tmp/out.$r.rc")" = 0 ] || ok=1
		r=$((r + 1))
	done
	return $ok
}

step "fi_gba_xfer, rank 0 on gba-h0, rank 1 on gba-h1"
ranks xfer 2 -I 5 || { cat "$tmp"/out.[01]; fail "fi_gba_xfer -n 2 across hosts"; }
grep -h "checks, 0 failed" "$tmp/out.0" | sed 's/^/  /'

step "fi_gba_xfer, 4 ranks, 2 per host"
ranks xfer 4 -I 5 || { cat "$tmp"/out.[0-3]; fail "fi_gba_xfer -n 4 across hosts"; }
grep -h "checks, 0 failed" "$tmp/out.0" | sed 's/^/  /'

step "fi_gba_xfer with GBA_NET_ADDR=none: the peer must be unreachable"
if ranks xfer 2 -I 5 -- GBA_NET_ADDR=none; then
	fail "fi_gba_xfer passed without the TCP path: not between hosts?"
fi
grep -h "No route to host" "$tmp/out.0" "$tmp/out.1" | head -n 1 |
	sed 's/^/  /'

step "fi_gba_barrier, 2 ranks per host (software barrier across hosts)"
ranks barrier 4 -I 100 || { cat "$tmp"/out.[0-3]; fail "fi_gba_barrier across hosts"; }
sed 's/^/  /' "$tmp/out.0"

step "fi_info -p gba -n gba-h0 -P 9228 in gba-h1: a service of another host"
fi_info=${FI_INFO:-fi_info}
if command -v "$fi_info" >/dev/null 2>&1; then
	# stock fi_info loading a sanitized provider: the runtimes first
	san=
	[ -n "$GBA_SAN_PRELOAD" ] &&
		san="LD_PRELOAD=$(echo "$GBA_SAN_PRELOAD" | tr ' ' ':')"
	out=$(on gba-h1 $san $tmo 20 "$fi_info" -p gba -n gba-h0 -P 9228 \
		2>&1) ||
		fail "fi_info with another host's node and service: $out"
	echo "$out" | grep -q "provider: gba" ||
		fail "fi_info listed no gba for gba-h0:9228: $out"
	echo "  $(echo "$out" | grep -c "provider: gba") gba entries"
else
	echo "  no fi_info: skipped"
fi

step "a peer on another host killed with operations outstanding"
mkdir "$tmp/dead" && chmod 777 "$tmp/dead"
on gba-h1 "$B/test/hosts/net_dead" server "$tmp/dead" \
	>"$tmp/dead.server" 2>&1 &
(on gba-h0 $tmo 30 "$B/test/hosts/net_dead" client "$tmp/dead" \
	>"$tmp/dead.client" 2>&1
 echo $? >"$tmp/dead.rc") &
cpid=$!
i=0
until [ -f "$tmp/dead/posted" ] || [ -f "$tmp/dead.rc" ]; do
	[ $i -lt 300 ] || fail "the client did not post its operations"
	sleep 0.1
	i=$((i + 1))
done
spid=$(cat "$tmp/dead/server.pid")
[ -n "$spid" ] || { cat "$tmp"/dead.*; fail "no server process"; }
kill -9 "$spid"
wait $cpid
[ "$(cat "$tmp/dead.rc")" = 0 ] ||
	{ cat "$tmp"/dead.*; fail "net_dead client failed"; }
sed 's/^/  /' "$tmp/dead.client"

pre=$B/ucx/uct_gba/.libs/libuct_gba.so
[ -n "$GBA_SAN_PRELOAD" ] &&
	pre="$(echo "$GBA_SAN_PRELOAD" | tr ' ' ':'):$pre"
ucxenv() {
	echo "LD_PRELOAD=$pre UCX_TLS=gba,self UCX_WARN_UNUSED_ENV_VARS=n"
}

if ! command -v ucx_perftest >/dev/null 2>&1 ||
	[ ! -f "$B/ucx/uct_gba/.libs/libuct_gba.so" ]; then
	step "no ucx_perftest or UCX module: the UCX checks are skipped"
else
	for t in "-t tag_lat -s 8 -n 1000" "-t ucp_put_bw -s 1048576 -n 100"; do
		step "ucx_perftest $t, UCX_TLS=gba,self, gba-h1 -> gba-h0"
		(on gba-h0 $(ucxenv) $tmo 30 ucx_perftest -p 13377 $t \
			>"$tmp/perf.s" 2>&1
		 echo $? >"$tmp/perf.s.rc") &
		sleep 1
		on gba-h1 $(ucxenv) $tmo 30 ucx_perftest -p 13377 gba-h0 $t \
			>"$tmp/perf.c" 2>&1 ||
			{ cat "$tmp"/perf.*; fail "ucx_perftest $t"; }
		wait
		[ "$(cat "$tmp/perf.s.rc")" = 0 ] ||
			{ cat "$tmp"/perf.*; fail "ucx_perftest $t (server)"; }
		grep "^Final" "$tmp/perf.c" | sed 's/^/  /'
	done
fi

mpirun=${MPIRUN-mpirun}
if [ -z "$mpirun" ] || ! command -v "$mpirun" >/dev/null 2>&1 ||
	[ ! -x "$B/test/hosts/mpi_hosts" ]; then
	step "no mpirun or mpi_hosts: the Open MPI checks are skipped"
else
	hf=$tmp/hostfile
	: >"$hf"
	h=0
	while [ $h -lt $HOSTS ]; do
		echo "gba-h$h slots=2" >>"$hf"
		h=$((h + 1))
	done
	np=$((2 * HOSTS))
	ompi="--allow-run-as-root --hostfile $hf -np $np --bind-to none"
	ompi="$ompi --mca oob_tcp_if_include $NET.0/24"
	xenv="-x FI_PROVIDER_PATH -x LD_LIBRARY_PATH"
	for v in ASAN_OPTIONS UBSAN_OPTIONS; do
		eval "[ -n \"\${$v+x}\" ]" && xenv="$xenv -x $v"
	done

	step "mpi_hosts over MTL-OFI, FI_PROVIDER=gba, $HOSTS hosts x 2"
	out=$(on gba-h0 $tmo 120 "$mpirun" $ompi --mca pml cm --mca mtl ofi \
		-x FI_PROVIDER=gba $xenv "$B/test/hosts/mpi_hosts" $HOSTS 2>&1)
	rc=$?
	echo "$out" | sed 's/^/  /'
	[ $rc = 0 ] || fail "mpi_hosts over MTL-OFI gba exited with $rc"
	echo "$out" | grep -q "^mpi_hosts: $np ranks on $HOSTS hosts:" ||
		fail "mpi_hosts over MTL-OFI gba did not report $np ranks"

	if [ -f "$B/ucx/uct_gba/.libs/libuct_gba.so" ]; then
		step "mpi_hosts over PML-UCX, UCX_TLS=gba,self, $HOSTS hosts x 2"
		out=$(on gba-h0 $tmo 120 "$mpirun" $ompi \
			--mca pml ucx --mca pml_ucx_tls any \
			--mca pml_ucx_devices any --mca osc ^ucx,rdma \
			-x UCX_TLS=gba,self -x LD_PRELOAD="$pre" $xenv \
			"$B/test/hosts/mpi_hosts" $HOSTS 2>&1)
		rc=$?
		echo "$out" | sed 's/^/  /'
		[ $rc = 0 ] || fail "mpi_hosts over PML-UCX gba exited with $rc"
		echo "$out" | grep -q "^mpi_hosts: $np ranks on $HOSTS hosts:" ||
			fail "mpi_hosts over PML-UCX gba did not report $np ranks"
	fi
fi

step "down"
$emu down -d "$DIR" >/dev/null || fail "emu_hosts.sh down failed"
echo "PASS"
