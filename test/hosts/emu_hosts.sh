#!/bin/sh
# Emulated hosts (scripts/emu_hosts.sh): brings up 3 hosts and checks
#   - each has its own hostname, and the machine's is unchanged;
#   - each has its own /dev/shm: a file made in one is seen neither in the
#     others nor in the caller's;
#   - no host has a default route (traffic stays on the bridge);
#   - they reach each other by ssh by name, from the machine and from
#     inside each host (plain `ssh`, the generated config mounted there);
#   - Open MPI's launcher, from the machine with a hostfile of 3 hosts x 2
#     slots, runs `hostname` twice on each host;
#   - an MPI program (test/hosts/mpi_hosts) launched by a plain mpirun
#     inside gba-h0 runs 6 ranks on the 3 hosts over TCP (pml ob1, btl
#     tcp on the bridge): placement, a 1 MiB ring, an allreduce;
# then tears down and checks that nothing is left: no processes of the
# hosts (holders, sshds, sessions), none in their namespaces, no veth to
# the machine, no route, no state directory, /etc/hosts untouched.
# Skips (77) where namespaces cannot be made (not root, no unshare, ip or
# sshd: emu_hosts.sh check).  Any emulated hosts left by an earlier run
# are torn down first; two runs of this test wait for each other.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/test/hosts/hosts_lib.sh"
bindir=${top_builddir:-.}/test/hosts
N=3
NET=${GBA_HOSTS_NET:-10.77.0}

$emu check
rc=$?
[ $rc = 0 ] || exit 77

# one run at a time on the machine (the host names and addresses are fixed)
hosts_lock

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gba-hosts-test.XXXXXX") || exit 99
DIR=$tmp/hosts
cleanup() {
	$emu down -d "$DIR" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# on HOST CMD...: run CMD inside HOST
on() {
	$emu exec -d "$DIR" "$@"
}

step "stale state of earlier runs"
$emu down || fail "down (stale state) failed"
etc_hosts=$(cksum </etc/hosts)
my_host=$(hostname)

step "up $N"
$emu up $N -d "$DIR" || fail "emu_hosts.sh up $N failed"

step "hostnames"
k=0
while [ $k -lt $N ]; do
	h=$(on gba-h$k hostname) || fail "exec in gba-h$k failed"
	[ "$h" = gba-h$k ] || fail "gba-h$k has hostname '$h'"
	k=$((k + 1))
done
[ "$(hostname)" = "$my_host" ] || fail "the machine's hostname changed"
echo "  gba-h0 .. gba-h$((N - 1)), machine still $my_host"

step "private /dev/shm"
f=gba-hosts-test-$$
on gba-h0 sh -c "echo h0 >/dev/shm/$f" || fail "cannot write gba-h0's /dev/shm"
[ "$(on gba-h0 cat /dev/shm/$f)" = h0 ] || fail "gba-h0 does not see its file"
k=1
while [ $k -lt $N ]; do
	on gba-h$k test ! -e /dev/shm/$f || fail "gba-h$k sees gba-h0's /dev/shm"
	k=$((k + 1))
done
[ ! -e /dev/shm/$f ] || fail "the machine sees gba-h0's /dev/shm"
echo "  a file in gba-h0's /dev/shm is seen neither in the others nor here"

step "no way out"
k=0
while [ $k -lt $N ]; do
	r=$(on gba-h$k ip -4 route) || fail "ip route in gba-h$k"
	case "$r" in
	*default*) fail "gba-h$k has a default route: $r" ;;
	esac
	k=$((k + 1))
done
echo "  no default route in any host"

step "ssh by name"
k=0
while [ $k -lt $N ]; do
	h=$(ssh -F "$DIR/ssh_config" gba-h$k hostname) ||
		fail "ssh gba-h$k from the machine failed"
	[ "$h" = gba-h$k ] || fail "ssh gba-h$k ran on '$h'"
	j=$(((k + 1) % N))
	h=$(on gba-h$k ssh gba-h$j hostname) ||
		fail "ssh gba-h$j from inside gba-h$k failed"
	[ "$h" = gba-h$j ] || fail "ssh gba-h$j from gba-h$k ran on '$h'"
	k=$((k + 1))
done
echo "  from the machine to each host, and from each host to the next"

# Open MPI
mpirun=${MPIRUN-mpirun}
if [ -z "$mpirun" ] || ! command -v "$mpirun" >/dev/null 2>&1; then
	step "no mpirun: the Open MPI checks are skipped"
else
	tmo=
	command -v timeout >/dev/null 2>&1 && tmo="timeout -k 5 30"
	hf=$tmp/hostfile
	k=0
	while [ $k -lt $N ]; do
		echo "gba-h$k slots=2"
		k=$((k + 1))
	done >"$hf"
	ompi="--allow-run-as-root --hostfile $hf -np $((2 * N))"
	ompi="$ompi --mca oob_tcp_if_include $NET.0/24"

	step "mpirun --hostfile (3 hosts x 2 slots) hostname, from the machine"
	# stdout only: the launcher's warnings go to stderr (shown on failure)
	out=$($tmo "$mpirun" $ompi --mca plm_rsh_agent "ssh -F $DIR/ssh_config" \
		hostname 2>"$tmp/err") ||
		fail "mpirun hostname failed: $out $(cat "$tmp/err")"
	echo "$out" | sed 's/^/  /'
	sed 's/^/  (stderr) /' "$tmp/err"
	[ "$(echo "$out" | wc -l)" = $((2 * N)) ] ||
		fail "mpirun hostname printed $(echo "$out" | wc -l) lines"
	k=0
	while [ $k -lt $N ]; do
		[ "$(echo "$out" | grep -cx gba-h$k)" = 2 ] ||
			fail "gba-h$k is not twice in the output"
		k=$((k + 1))
	done

	step "mpi_hosts over TCP, plain mpirun inside gba-h0"
	if [ ! -x "$bindir/mpi_hosts" ]; then
		fail "$bindir/mpi_hosts not built (make check builds it)"
	fi
	prog=$(cd "$bindir" && pwd)/mpi_hosts
	xenv=
	for v in LD_LIBRARY_PATH ASAN_OPTIONS UBSAN_OPTIONS; do
		eval "[ -n \"\${$v+x}\" ]" && xenv="$xenv -x $v"
	done
	out=$(on gba-h0 $tmo "$mpirun" $ompi --mca pml ob1 \
		--mca btl self,tcp --mca btl_tcp_if_include "$NET.0/24" \
		$xenv "$prog" $N 2>&1)
	rc=$?
	echo "$out" | sed 's/^/  /'
	[ $rc = 0 ] || fail "mpi_hosts exited with $rc"
	echo "$out" | grep -q "^mpi_hosts: $((2 * N)) ranks on $N hosts:" ||
		fail "mpi_hosts did not report $((2 * N)) ranks on $N hosts"
fi

step "down"
# a stray process in a host, as a crashed test would leave: down kills it
$emu exec -d "$DIR" gba-h1 sleep 300 </dev/null >/dev/null 2>&1 &
stray=$!
i=0
until [ "$(readlink /proc/$stray/ns/uts)" = "$(readlink /proc/$(cat "$DIR/gba-h1/pid")/ns/uts)" ]; do
	[ $i -lt 50 ] || fail "the stray process did not enter gba-h1"
	sleep 0.1
	i=$((i + 1))
done
# what must be gone afterwards: the holders, the sshds, their namespaces
pids=
inos=
k=0
while [ $k -lt $N ]; do
	for p in $(cat "$DIR/gba-h$k/pid" "$DIR/gba-h$k/sshd.pid"); do
		pids="$pids $p"
		for t in net mnt uts; do
			l=$(readlink /proc/$p/ns/$t) && inos="$inos $l"
		done
	done
	k=$((k + 1))
done
pids="$pids $(cat "$DIR/switch/pid") $stray"
inos="$inos $(readlink /proc/$(cat "$DIR/switch/pid")/ns/net)"
[ "$(echo $pids | wc -w)" = $((2 * N + 2)) ] && [ -n "$inos" ] ||
	fail "the processes of the hosts not found (pids:$pids)"
$emu down -d "$DIR" || fail "emu_hosts.sh down failed"
wait $stray 2>/dev/null
$emu down -d "$DIR" || fail "a second emu_hosts.sh down failed"
for p in $pids; do
	if [ -d /proc/$p ] && ! grep -qs '^State:.*Z' /proc/$p/status; then
		fail "process $p ($(cat /proc/$p/comm)) is still alive"
	fi
done
sleep 0.2	# the kernel frees the namespaces' devices asynchronously
left=$(ls -l /proc/[0-9]*/ns/ 2>/dev/null | awk '{ print $NF }' |
	grep -Fx -f /dev/fd/3 3<<EOF
$(echo $inos | tr ' ' '\n' | sort -u)
EOF
)
[ -z "$left" ] || fail "processes still in the hosts' namespaces: $left"
! ip link show gbah-root >/dev/null 2>&1 || fail "gbah-root is still there"
[ -z "$(ip -4 route show "$NET.0/24")" ] || fail "a route to $NET.0/24 is left"
! ip -4 addr show | grep -q "inet $NET\." || fail "an address in $NET.0/24 is left"
[ ! -e "$DIR" ] || fail "$DIR is still there"
! grep -q 'gba-shm\|gba-sys' /proc/self/mountinfo || fail "a host's mount is left here"
[ "$(cksum </etc/hosts)" = "$etc_hosts" ] || fail "/etc/hosts changed"
echo "  no process, namespace, link, route, mount or state directory left"
echo "PASS: $N emulated hosts in $(($(date +%s) - start)) s"
