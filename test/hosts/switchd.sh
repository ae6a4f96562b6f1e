#!/bin/sh
# The networked emulated switch (gba_switchd, device emu+tcp://HOST:PORT)
# across emulated hosts (scripts/emu_hosts.sh), gba_switchd on the
# machine's side of the bridge:
#   0. the front ends' device variables name it: the provider's barrier
#      (fabtests/fi_gba_barrier, FI_GBA_DEVICE) and the UCX transport's
#      (test/ucx/uct_gba_barrier, UCX_GBA_DEVICE), 4 processes in gba-h0;
#   0b. the provider's barrier across hosts on the switch: fi_gba_barrier,
#      4 ranks, 2 on gba-h0 and 2 on gba-h1, addresses exchanged through a
#      shared file (-R/-S) and the fabric's TCP path, FI_GBA_DEVICE naming
#      the switch: the set's barrier runs on a group of gba_switchd, not
#      in software;
#   0c. unmodified programs' barriers across hosts on the switch: the
#      barrier-offload library (libgba_barrier.so) preloaded into
#      bench/gba_bench_mpi_barrier (MPI_Barrier, MPI over MTL-OFI gba;
#      test/offload/offload_mpi needs one node) and, without
#      sanitizers, test/offload/offload_shmem (OpenSHMEM, SPML-UCX
#      gba,self), 2 hosts x 2 processes by mpirun/oshrun with a hostfile:
#      every barrier on the GBA ("0 not"), OpenSHMEM's also checked;
#   1. barriers across 4 hosts (2 processes x 2 members each), with the
#      early-release check (a counter in a shared /tmp file);
#   2. a host's processes all killed mid-barrier (kill -9 of every process
#      in gba-h3's namespaces but its holder and sshd, the agent too): the
#      others fail with "Broken pipe" (-EPIPE) within BOUND_S seconds;
#   3. the agent of one host killed alone: everyone fails within BOUND_S;
#   4. all 32 groups in use across 8 hosts (each host a member of each),
#      barriers on each, the 33rd join gets -ENOSPC: also shows that the
#      groups of steps 2 and 3 were reclaimed;
#   4b. the provider through the switch (fabtests/fi_gba_group_exhaust,
#      FI_GBA_DEVICE): 32 collectives on 32 groups of gba_switchd, the
#      33rd's barrier in software, a freed group taken again, sets of 708
#      and 709 members;
#   5. one 708-member group over 8 hosts (2 processes x 44-45 members per
#      host), SWITCHD_ITERS barriers (default 300) with the early-release
#      check;
#   6. gba_switchd killed mid-barrier: every member fails within BOUND_S.
# The longer run for the closing note: SWITCHD_ITERS=5000 make check
# TESTS=test/hosts/switchd.sh.  Skips (77) where namespaces cannot be made.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/test/hosts/hosts_lib.sh"
top_builddir=${top_builddir:-$(pwd)}
prog=$top_builddir/test/hosts/net_barrier
switchd=$top_builddir/tools/gba_switchd
NET=${GBA_HOSTS_NET:-10.77.0}
PORT=${SWITCHD_PORT:-7447}
ITERS=${SWITCHD_ITERS:-300}
BOUND_S=${SWITCHD_BOUND_S:-5}
N=8

fail() {
	echo "FAIL: $*"
	[ -n "$tmp" ] && [ -f "$tmp/switchd.log" ] &&
		sed 's/^/  switchd: /' "$tmp/switchd.log" | tail -20
	exit 1
}

$emu check
[ $? = 0 ] || exit 77
[ -x "$prog" ] && [ -x "$switchd" ] || fail "net_barrier/gba_switchd not built"
export GBA_AGENT=${GBA_AGENT:-$top_builddir/tools/gba_agent}
[ -x "$GBA_AGENT" ] || fail "$GBA_AGENT not built"

hosts_lock

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gba-switchd-test.XXXXXX") || exit 99
DIR=$tmp/hosts
sd_pid=
cleanup() {
	[ -n "$sd_pid" ] && kill "$sd_pid" 2>/dev/null
	$emu down -d "$DIR" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

on() {
	$emu exec -d "$DIR" "$@"
}

# on_prov HOST CMD...: CMD in HOST with the build tree's provider, its
# device the switch (FI_GBA_DEVICE: the provider's own variable)
on_prov() {
	h=$1
	shift
	on "$h" env GBA_DEVICE= FI_GBA_DEVICE=$GBA_DEVICE \
		FI_PROVIDER_PATH=${FI_PROVIDER_PATH:-$top_builddir/prov/gba/.libs} \
		"$@"
}

# start_switchd: gba_switchd on the machine's address on the bridge
start_switchd() {
	"$switchd" -l "$NET.254" -p "$PORT" -v --daemon \
		--pidfile "$tmp/switchd.pid" 2>>"$tmp/switchd.log" ||
		fail "gba_switchd did not start"
	sd_pid=$(cat "$tmp/switchd.pid")
}

# pids_in HOST: the processes in HOST's network namespace, but its holder
# and its sshd (processes this test started there)
pids_in() {
	ns=$(readlink /proc/$(cat "$DIR/$1/pid")/ns/net)
	keep=" $(cat "$DIR/$1/pid" "$DIR/$1/sshd.pid" | tr '\n' ' ') "
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$(readlink /proc/$p/ns/net 2>/dev/null)" = "$ns" ] || continue
		case "$keep" in *" $p "*) continue ;; esac
		echo $p
	done
}

# agent_of HOST: the pid of HOST's gba_agent
agent_of() {
	for p in $(pids_in "$1"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = gba_agent ] && echo $p
	done
}

# run_group KEY N HOSTS PROCS_PER_HOST ITERS TMO_MS: an N-member group over
# HOSTS hosts, in the background; pids in $pids, output in $tmp/out.*
run_group() {
	key=$1 n=$2 hosts=$3 pph=$4 iters=$5 tmo=$6
	rm -f "$tmp"/out.* "$tmp/counter.$key"
	procs=$((hosts * pph))
	pids=
	i=0 first=0
	while [ $i -lt $procs ]; do
		cnt=$(((n - first) / (procs - i)))
		h=gba-h$((i % hosts))
		on $h "$prog" -n $n -f $first -c $cnt -i $iters -k $key \
			-t $tmo -C "$tmp/counter.$key" >"$tmp/out.$i" 2>&1 &
		pids="$pids $!"
		first=$((first + cnt))
		i=$((i + 1))
	done
}

# expect_ok: every process of run_group exited 0 and printed OK
expect_ok() {
	rc=0
	for p in $pids; do
		wait $p || rc=1
	done
	cat "$tmp"/out.* | sed 's/^/  /' | sort | uniq -c | sort -rn | head -5
	[ $rc = 0 ] || fail "$1: a process failed: $(cat "$tmp"/out.* | grep -v '^OK' | head -3)"
}

# expect_errors T0 HOW: the processes still running fail (exit 3, Broken
# pipe) within BOUND_S seconds of T0 (CLOCK_REALTIME)
expect_errors() {
	t0=$1
	for p in $pids; do
		wait $p
	done
	nerr=$(cat "$tmp"/out.* | grep -c "^ERROR.*Broken pipe at")
	nok=$(cat "$tmp"/out.* | grep -c "^OK")
	[ "$nok" = 0 ] || fail "$2: $nok processes finished their barriers"
	[ "$nerr" -ge "$3" ] ||
		fail "$2: $nerr processes saw the error, want $3: $(cat "$tmp"/out.* | head -5)"
	worst=$(cat "$tmp"/out.* | sed -n 's/^ERROR.* at //p' |
		awk -v t0="$t0" 'BEGIN { m = 0 } { d = $1 - t0; if (d > m) m = d }
			END { printf "%.3f", m }')
	echo "  $nerr processes failed with Broken pipe, the last $worst s after it"
	awk -v w="$worst" -v b="$BOUND_S" 'BEGIN { exit !(w < b) }' ||
		fail "$2: an error came $worst s after it (bound $BOUND_S s)"
}

# wait_started KEY N: the group's barriers are running (counter past 2 N)
wait_started() {
	i=0
	while :; do
		c=$(od -An -t u8 -N 8 "$tmp/counter.$1" 2>/dev/null | tr -d ' ')
		[ -n "$c" ] && [ "$c" -gt $((4 * $2)) ] && return 0
		[ $i -lt 300 ] || fail "the barriers of key $1 did not start"
		sleep 0.1
		i=$((i + 1))
	done
}

now() {
	date +%s.%N
}

export GBA_DEVICE=emu+tcp://$NET.254:$PORT

step "stale state of earlier runs"
$emu down || fail "down (stale state) failed"
step "up $N"
$emu up $N -d "$DIR" >/dev/null || fail "emu_hosts.sh up $N failed"
start_switchd

step "0. the front ends name it: FI_GBA_DEVICE, UCX_GBA_DEVICE (in gba-h0)"
export GBA_JOB=switchd-0
ft=$top_builddir/fabtests/fi_gba_barrier
if [ -x "$ft" ]; then
	out=$(on_prov gba-h0 "$ft" -n 4 -I 300 -r 5 -T 60 2>&1) ||
		fail "fi_gba_barrier with FI_GBA_DEVICE=$GBA_DEVICE: $out"
	echo "  $out"
else
	echo "  fi_gba_barrier not built: skipped"
fi
uct=$top_builddir/test/ucx/uct_gba_barrier
if [ -x "$uct" ] && [ -f "$top_builddir/ucx/uct_gba/.libs/libuct_gba.so" ]; then
	# -D: UCX_GBA_DEVICE=that device (it makes a private image otherwise)
	out=$(on gba-h0 env GBA_DEVICE= "$uct" -n 4 -i 300 -D "$GBA_DEVICE" \
		2>&1) ||
		fail "uct_gba_barrier with UCX_GBA_DEVICE=$GBA_DEVICE: $out"
	echo "$out" | tail -1 | sed 's/^/  /'
else
	echo "  uct_gba_barrier not built: skipped"
fi
[ "$(grep -c "group [0-9]* allocated: 4 members" "$tmp/switchd.log")" -ge 2 ] ||
	fail "the front ends' groups of 4 were not allocated by gba_switchd"

step "0b. fi_gba_barrier, 4 ranks on 2 hosts, on the switch"
export GBA_JOB=switchd-0b
if [ -x "$ft" ]; then
	before=$(grep -c "group [0-9]* allocated: 4 members" "$tmp/switchd.log")
	rm -f "$tmp/ranks.shm"
	r=0
	while [ $r -lt 4 ]; do
		(on_prov gba-h$((r % 2)) env FI_LOG_LEVEL=info \
			timeout 60 "$ft" -n 4 -R $r -S "$tmp/ranks.shm" -I 300 \
			-T 40 >"$tmp/ft.$r" 2>&1
		 echo $? >"$tmp/ft.$r.rc") &
		r=$((r + 1))
	done
	wait
	for r in 0 1 2 3; do
		[ "$(cat "$tmp/ft.$r.rc")" = 0 ] || {
			tail -5 "$tmp/ft.$r"
			fail "fi_gba_barrier rank $r across 2 hosts"
		}
		! grep -q "barrier in software" "$tmp/ft.$r" ||
			fail "rank $r ran its barrier in software: $(grep -m1 "barrier in software" "$tmp/ft.$r")"
	done
	after=$(grep -c "group [0-9]* allocated: 4 members" "$tmp/switchd.log")
	[ "$after" -gt "$before" ] ||
		fail "no group of 4 allocated by gba_switchd for fi_gba_barrier"
	grep -h "^fi_gba_barrier:" "$tmp/ft.0" | sed 's/^/  /'
else
	echo "  fi_gba_barrier not built: skipped"
fi

step "0c. the barrier-offload library across 2 hosts x 2, on the switch"
unset GBA_JOB
lib=$top_builddir/barrier_offload/.libs/libgba_barrier.so
uctmod=$top_builddir/ucx/uct_gba/.libs/libuct_gba.so
san=
[ -n "$GBA_SAN_PRELOAD" ] && san="$(echo "$GBA_SAN_PRELOAD" | tr ' ' ':'):"
mpirun=${MPIRUN-mpirun}
if [ -z "$mpirun" ] || ! command -v "$mpirun" >/dev/null 2>&1 ||
	[ ! -f "$lib" ] || [ ! -x "$top_builddir/bench/gba_bench_mpi_barrier" ]; then
	echo "  no mpirun, offload library or gba_bench_mpi_barrier: skipped"
else
	printf "gba-h0 slots=2\ngba-h1 slots=2\n" >"$tmp/hostfile"
	ompi="--allow-run-as-root --hostfile $tmp/hostfile -np 4 --bind-to none"
	ompi="$ompi --mca oob_tcp_if_include $NET.0/24"
	ompi="$ompi -x FI_PROVIDER_PATH=${FI_PROVIDER_PATH:-$top_builddir/prov/gba/.libs}"
	ompi="$ompi -x LD_LIBRARY_PATH -x GBA_DEVICE -x GBA_AGENT"
	ompi="$ompi -x GBA_BARRIER_VERBOSE=1"
	for v in ASAN_OPTIONS UBSAN_OPTIONS; do
		eval "[ -n \"\${$v+x}\" ]" && ompi="$ompi -x $v"
	done
	out=$(on gba-h0 timeout 90 "$mpirun" $ompi --mca pml cm --mca mtl ofi \
		-x FI_PROVIDER=gba -x LD_PRELOAD="$san$lib" \
		"$top_builddir/bench/gba_bench_mpi_barrier" -I 300 -r 1 2>&1)
	rc=$?
	[ $rc = 0 ] || { echo "$out" | tail -20; fail "gba_bench_mpi_barrier across hosts: exit $rc"; }
	[ "$(echo "$out" | grep -c "barriers on the GBA.*, 0 not")" = 4 ] ||
		{ echo "$out" | grep "libgba_barrier" | head; fail "MPI: barriers not all on the GBA"; }
	echo "$out" | grep -m1 "barriers on the GBA" | sed 's/^/  mpi: /'
	if [ -n "$GBA_SAN_PRELOAD" ] || ! command -v oshrun >/dev/null 2>&1 ||
		[ ! -x "$top_builddir/test/offload/offload_shmem" ] ||
		[ ! -f "$uctmod" ]; then
		echo "  OpenSHMEM skipped (sanitizers, no oshrun or no program)"
	else
		out=$(on gba-h0 timeout 90 oshrun $ompi --mca osc ^rdma \
			--mca spml ucx --mca pml ucx --mca pml_ucx_tls any \
			--mca pml_ucx_devices any -x UCX_TLS=gba,self \
			-x UCX_WARN_UNUSED_ENV_VARS=n -x LD_PRELOAD="$uctmod:$lib" \
			"$top_builddir/test/offload/offload_shmem" -I 10 -D 100 2>&1)
		rc=$?
		[ $rc = 0 ] || { echo "$out" | tail -20; fail "offload_shmem across hosts: exit $rc"; }
		[ "$(echo "$out" | grep -c "^offload_shmem .*failures=0")" = 4 ] ||
			{ echo "$out" | tail -20; fail "offload_shmem: not 4 PEs without failures"; }
		[ "$(echo "$out" | grep -c "barriers on the GBA.*, 0 not")" = 4 ] ||
			{ echo "$out" | grep "libgba_barrier" | head; fail "offload_shmem: barriers not all on the GBA"; }
		echo "$out" | grep -m1 "barriers on the GBA" | sed 's/^/  shmem: /'
	fi
fi

step "1. 16 members on 4 hosts, 1000 barriers"
export GBA_JOB=switchd-1
run_group 11 16 4 2 1000 20000
expect_ok "barriers on 4 hosts"

step "2. gba-h3's processes all killed mid-barrier"
export GBA_JOB=switchd-2
run_group 12 8 4 1 100000000 30000
wait_started 12 8
victims=$(pids_in gba-h3)
[ -n "$victims" ] || fail "no process found in gba-h3"
t0=$(now)
kill -9 $victims
echo "  killed in gba-h3:$(for p in $victims; do printf ' %s' $p; done)"
expect_errors "$t0" "host killed" 3

step "3. gba-h2's agent killed alone"
export GBA_JOB=switchd-3
run_group 13 8 4 1 100000000 30000
wait_started 13 8
a=$(agent_of gba-h2)
[ -n "$a" ] || fail "no gba_agent in gba-h2"
t0=$(now)
kill -9 $a
expect_errors "$t0" "agent killed" 4

step "4. 32 groups over $N hosts, the 33rd join"
export GBA_JOB=switchd-4
pids=
rm -f "$tmp"/out.*
k=0
while [ $k -lt $N ]; do
	x=
	[ $k = 0 ] && x=-X
	on gba-h$k "$prog" -n $N -f $k -G 32 -k 400 -i 20 -t 20000 $x \
		>"$tmp/out.$k" 2>&1 &
	pids="$pids $!"
	k=$((k + 1))
done
expect_ok "32 groups"
grep -q "^extra join: -28 " "$tmp/out.0" ||
	fail "the 33rd join did not get -ENOSPC: $(cat "$tmp/out.0")"
echo "  $(grep '^extra join' "$tmp/out.0")"

step "4b. the provider through the switch: 32 groups, the 33rd in software"
export GBA_JOB=switchd-4b
ex=$top_builddir/fabtests/fi_gba_group_exhaust
if [ -x "$ex" ]; then
	out=$(on_prov gba-h1 timeout 120 "$ex" 2>&1) ||
		fail "fi_gba_group_exhaust through gba_switchd: $out"
	echo "$out" | tail -2 | sed 's/^/  /'
	n32=$(grep -c "group [0-9]* allocated: 1 members" "$tmp/switchd.log")
	[ "$n32" -ge 32 ] ||
		fail "fi_gba_group_exhaust: $n32 one-member groups of gba_switchd, want 32"
else
	echo "  fi_gba_group_exhaust not built: skipped"
fi

step "5. 708 members over $N hosts, $ITERS barriers"
export GBA_JOB=switchd-5
run_group 15 708 $N 2 $ITERS 60000
expect_ok "708 members"

step "6. gba_switchd killed mid-barrier"
export GBA_JOB=switchd-6
run_group 16 8 4 1 100000000 30000
wait_started 16 8
t0=$(now)
kill -9 "$sd_pid"
sd_pid=
expect_errors "$t0" "switchd killed" 4

step "down"
$emu down -d "$DIR" >/dev/null || fail "emu_hosts.sh down failed"
echo "PASS: gba_switchd across emulated hosts in $(($(date +%s) - start)) s"
