#!/bin/sh
# Emulated hosts on one machine, for tests that reach hosts by ssh.
#
#   emu_hosts.sh check                 exit 0 if this machine can make them,
#                                      77 (automake SKIP) with a message if not
#   emu_hosts.sh up N [-d DIR]         make hosts gba-h0 .. gba-h(N-1)
#   emu_hosts.sh exec [-d DIR] HOST CMD [ARGS...]
#                                      run CMD inside HOST (its network, UTS
#                                      and mount namespaces, the caller's cwd)
#   emu_hosts.sh env [-d DIR]          print the shell settings that point
#                                      ssh and Open MPI at the hosts
#   emu_hosts.sh down [-d DIR]         tear everything down (idempotent)
#
# DIR (default $GBA_HOSTS_DIR, else /tmp/gba-hosts) holds the run's state:
# keys, configurations, logs, the process ids of the namespace holders.
#
# Each host is a set of namespaces -- network, UTS (its own hostname) and
# mount (a private tmpfs on /dev/shm, its own sysfs, a generated /etc/hosts
# and /etc/ssh/ssh_config bind-mounted over the machine's) -- held by one
# process, `sleep infinity` started under `unshare`.  A holder process was
# chosen over bind-mounted namespace files (unshare --net=FILE ...) because
# it needs no mount in the caller's namespace (nothing is left behind in
# the root mount namespace, and it works the same from a shell that is in a
# private mount namespace itself), and because killing the processes of the
# namespaces is the whole teardown: the kernel then frees the namespaces,
# their mounts and their network devices.  /tmp and the other file
# systems stay shared with the machine, like a cluster's shared home: the
# build tree, DIR and the programs have the same path on every host (Open
# MPI finds its orted and the job's binaries by PATH), and Open MPI names
# its session directories in /tmp after the hostname.  The process ID space
# is shared too (no PID namespace): the hosts are told apart by network,
# hostname and /dev/shm.
#
# The network: a Linux bridge gbabr0 in a namespace of its own (the
# "switch"), one veth pair per host (eth0 inside the host, hK on the bridge)
# with address 10.77.0.(K+1)/24 and no default route, and one veth pair to
# the root namespace (gbah-root, 10.77.0.254/24) so that ssh and mpirun
# work from the machine itself.  The bridge is connected to no real
# interface, and the root namespace only gains the connected route of
# 10.77.0.0/24: all traffic stays between these namespaces.  The bridge
# sits outside the root namespace so that the machine's firewall rules
# (bridge netfilter, a FORWARD policy) never see the hosts' traffic.
#
# Every host runs /usr/sbin/sshd on its address, port 22, with a host key
# and a client key made for the run; DIR/ssh_config maps the names to the
# addresses and trusts exactly those host keys.  From the machine:
#   ssh -F DIR/ssh_config gba-h1 hostname
#   OMPI_MCA_plm_rsh_agent="ssh -F DIR/ssh_config" mpirun --hostfile ...
# Inside a host, plain `ssh gba-h1` works (the generated files are mounted
# over /etc/hosts and /etc/ssh/ssh_config), so stock launchers
# (runfabtests.sh, mpirun) run there unchanged.
#
# Every process this script starts carries GBA_EMU_HOSTS=DIR in its
# environment; `down` finds them by it (also when DIR is lost), kills
# every process in their namespaces and removes DIR.  `up` tears down what
# it made when it fails half-way.  Needs root, unshare, nsenter, ip, sshd,
# ssh and ssh-keygen (Debian: util-linux, iproute2, openssh-server,
# openssh-client).
set -u

NET=${GBA_HOSTS_NET:-10.77.0}	# the hosts' /24
ROOT_IP=$NET.254		# the machine's address on the bridge
ROOT_IF=gbah-root		# the machine's end of its veth pair
BRIDGE=gbabr0
MARK=GBA_EMU_HOSTS		# environment marker of our processes
SSHD=${SSHD:-/usr/sbin/sshd}
# the variables the ssh client sends and the sshds accept
FWD_ENV='FI_* UCX_* GBA_* OMPI_* LD_LIBRARY_PATH'

prog=$(basename "$0")

die() {
	echo "$prog: $*" >&2
	exit 1
}

note() {
	echo "$prog: $*"
}

# ---------------------------------------------------------------- check

# check_env: prints why emulated hosts cannot be made here and returns 1,
# or returns 0.
check_env() {
	if [ "$(id -u)" != 0 ]; then
		echo "needs root (network and mount namespaces, veth, bridge)"
		return 1
	fi
	for t in unshare nsenter ip ssh ssh-keygen setsid; do
		command -v "$t" >/dev/null 2>&1 ||
			{ echo "no $t (scripts/deps.sh installs it)"; return 1; }
	done
	[ -x "$SSHD" ] ||
		{ echo "no $SSHD (Debian package openssh-server)"; return 1; }
	# everything `up` does, once, in a throw-away namespace set
	if ! out=$(unshare --net --uts --mount --propagation private sh -c '
		hostname gba-check &&
		mount -t tmpfs gba-check /dev/shm &&
		{ umount -l /sys 2>/dev/null || true; } &&
		mount -t sysfs gba-check /sys &&
		ip link add gbachk0 type veth peer name gbachk1 &&
		ip link add gbachkbr type bridge &&
		ip link set gbachk0 master gbachkbr' 2>&1); then
		echo "namespaces, veth or bridge not allowed here: $out"
		return 1
	fi
	return 0
}

cmd_check() {
	if why=$(check_env); then
		echo "$prog: emulated hosts can be made here"
		exit 0
	fi
	echo "$prog: SKIP: $why"
	exit 77
}

# ---------------------------------------------------------------- state

# pid_of NAME: the holder of NAME's namespaces (NAME: gba-hK or switch),
# or nothing if it is not running.
pid_of() {
	p=$(cat "$DIR/$1/pid" 2>/dev/null) || return 1
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null && echo "$p"
}

host_ip() {	# host_ip K
	echo "$NET.$(($1 + 1))"
}

# our_pids: the processes that carry the marker (holders, sshds), any run.
our_pids() {
	grep -lsz "^$MARK=" /proc/[0-9]*/environ 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' | grep -vx "$$"
}

# our_dirs: the state directories named by the marked processes.
our_dirs() {
	for p in $(our_pids); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
			sed -n "s/^$MARK=//p"
	done | sort -u
}

# ns_members INODES...: every process in one of the given namespaces
# (net, mnt or uts inode numbers).
ns_members() {
	pat=$(echo "$@" | tr ' ' '|')
	[ -n "$pat" ] || return 0
	ls -l /proc/[0-9]*/ns/net /proc/[0-9]*/ns/mnt /proc/[0-9]*/ns/uts \
		2>/dev/null | awk -v pat="^($pat)\$" '{
			n = split($NF, a, /[][]/)
			if (a[2] ~ pat) {
				split($(NF - 2), b, "/")
				print b[3]
			}
		}' | sort -u | grep -vx "$$"
}

# ns_inodes PIDS...: the net, mnt and uts namespace inodes of the processes
# that are neither the caller's nor init's (a safety net: only the hosts'
# and the switch's own namespaces may be emptied).
ns_inodes() {
	mine=" $(ns_ino $$ net) $(ns_ino $$ mnt) $(ns_ino $$ uts)"
	mine="$mine $(ns_ino 1 net) $(ns_ino 1 mnt) $(ns_ino 1 uts) "
	for p in "$@"; do
		for t in net mnt uts; do
			i=$(ns_ino "$p" "$t") || continue
			case "$mine" in *" $i "*) ;; *) echo "$i" ;; esac
		done
	done | sort -u
}

ns_ino() {	# ns_ino PID TYPE
	l=$(readlink "/proc/$1/ns/$2" 2>/dev/null) || return 1
	l=${l#*[}
	echo "${l%]}"
}

# ---------------------------------------------------------------- down

cmd_down() {
	dirs=$(our_dirs)
	pids=$(our_pids)
	inos=$(ns_inodes $pids)
	# everything in the namespaces: holders, sshds, sessions, programs
	victims=$(echo $pids $(ns_members $inos) | tr ' ' '\n' | sort -u)
	if [ -n "$victims" ]; then
		kill -TERM $victims 2>/dev/null
		i=0
		while [ $i -lt 40 ] && live=$(alive $victims); do
			sleep 0.05
			i=$((i + 1))
		done
		live=$(alive $victims) && kill -KILL $live 2>/dev/null
		i=0
		while [ $i -lt 40 ] && alive $victims >/dev/null; do
			sleep 0.05
			i=$((i + 1))
		done
		live=$(alive $victims) &&
			echo "$prog: warning: processes still alive: $live" >&2
	fi
	# the namespaces are freed with their last process; the root veth
	# goes with the switch namespace, deleting it here does not wait
	ip link del "$ROOT_IF" 2>/dev/null
	for d in $dirs "$DIR"; do
		# only directories that this script made
		[ -f "$d/.gba-emu-hosts" ] && rm -rf "$d"
	done
	return 0
}

# alive PIDS...: prints the ones still running; false if none is.
alive() {
	l=
	for p in "$@"; do
		[ -d "/proc/$p" ] && ! grep -qs '^State:.*Z' "/proc/$p/status" &&
			l="$l $p"
	done
	[ -n "$l" ] && echo $l
}

# ---------------------------------------------------------------- up

# The script a holder runs inside its new namespaces: set them up, write
# its pid (the sign that the setup is complete), then hold them.
# $1 = name, $2 = DIR, $3 = host (1) or switch (0).
HOLDER='
set -e
name=$1 dir=$2 host=$3
ip link set lo up
# no IPv6 chatter (router solicitations, DAD) on the emulated links
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6 2>/dev/null || true
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6 2>/dev/null || true
if [ "$host" = 1 ]; then
	hostname "$name"
	mount -t tmpfs -o mode=1777,nosuid,nodev gba-shm /dev/shm
	# sysfs of this network namespace (/sys/class/net: lo and eth0)
	umount -l /sys 2>/dev/null || true
	mount -t sysfs -o nosuid,nodev,noexec gba-sys /sys
	mount --bind "$dir/hosts" /etc/hosts
	if [ -e /etc/ssh/ssh_config ]; then
		mount --bind "$dir/ssh_config" /etc/ssh/ssh_config
	fi
else
	hostname gba-switch
	ip link add gbabr0 type bridge
	ip link set gbabr0 up
fi
echo $$ >"$dir/$name/pid.tmp"
mv "$dir/$name/pid.tmp" "$dir/$name/pid"
exec sleep infinity
'

# spawn NAME HOST(0|1): start the holder of NAME's namespaces and wait
# until it has set them up; prints its pid.
spawn() {
	mkdir -p "$DIR/$1"
	env "$MARK=$DIR" setsid unshare --net --uts --mount \
		--propagation private sh -c "$HOLDER" holder "$1" "$DIR" "$2" \
		</dev/null >"$DIR/$1/holder.log" 2>&1 &
	sp=$!
	i=0
	while [ ! -f "$DIR/$1/pid" ]; do
		if ! kill -0 $sp 2>/dev/null || [ $i -ge 200 ]; then
			echo "$prog: could not set up the namespaces of $1:" >&2
			cat "$DIR/$1/holder.log" >&2
			return 1
		fi
		sleep 0.05
		i=$((i + 1))
	done
	cat "$DIR/$1/pid"
}

# in PID CMD...: run CMD in the network namespace of PID
in_net() {
	p=$1
	shift
	nsenter -t "$p" -n -- "$@"
}

# keys and configuration files for N hosts
make_files() {
	n=$1
	touch "$DIR/.gba-emu-hosts"
	ssh-keygen -q -t ed25519 -N '' -C gba-emu-hosts-client \
		-f "$DIR/id_ed25519" || return 1
	cp "$DIR/id_ed25519.pub" "$DIR/authorized_keys"
	{
		echo "127.0.0.1	localhost"
		echo "$ROOT_IP	gba-root"
	} >"$DIR/hosts"
	: >"$DIR/known_hosts"
	: >"$DIR/hostfile"
	: >"$DIR/ssh_config"
	k=0
	while [ $k -lt "$n" ]; do
		h=gba-h$k
		ip=$(host_ip $k)
		mkdir -p "$DIR/$h"
		ssh-keygen -q -t ed25519 -N '' -C "$h" \
			-f "$DIR/$h/ssh_host_ed25519_key" || return 1
		echo "$h,$ip $(cut -d' ' -f1,2 \
			"$DIR/$h/ssh_host_ed25519_key.pub")" >>"$DIR/known_hosts"
		echo "$ip	$h" >>"$DIR/hosts"
		echo "$h" >>"$DIR/hostfile"
		printf 'Host %s\n\tHostName %s\n' "$h" "$ip" >>"$DIR/ssh_config"
		sshd_config $k >"$DIR/$h/sshd_config"
		k=$((k + 1))
	done
	cat >>"$DIR/ssh_config" <<EOF
Host gba-h* $NET.*
	User root
	IdentityFile $DIR/id_ed25519
	IdentitiesOnly yes
	UserKnownHostsFile $DIR/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	CheckHostIP no
	BatchMode yes
	ConnectTimeout 10
	ServerAliveInterval 15
	LogLevel ERROR
	SendEnv $FWD_ENV
EOF
}

sshd_config() {	# sshd_config K
	h=gba-h$1
	cat <<EOF
# sshd of emulated host $h (scripts/emu_hosts.sh)
ListenAddress $(host_ip "$1"):22
HostKey $DIR/$h/ssh_host_ed25519_key
PidFile $DIR/$h/sshd.pid
AuthorizedKeysFile $DIR/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
X11Forwarding no
PrintMotd no
PrintLastLog no
UseDNS no
AcceptEnv $FWD_ENV
# launchers open many sessions at once
MaxStartups 200
MaxSessions 200
Subsystem sftp internal-sftp
EOF
}

# up_host K SWITCH_PID: namespaces, link and sshd of host K
up_host() {
	h=gba-h$1
	pid=$(spawn "$h" 1) || return 1
	# the veth pair is made in the switch: no device ever appears in
	# the root namespace
	in_net "$2" ip link add "h$1" type veth peer name eth0 netns "$pid" &&
		in_net "$2" ip link set "h$1" master "$BRIDGE" up &&
		in_net "$pid" ip addr add "$(host_ip "$1")/24" dev eth0 &&
		in_net "$pid" ip link set eth0 up ||
		{ echo "$prog: could not connect $h to the bridge" >&2; return 1; }
	# sshd in all of the host's namespaces; its own session
	env "$MARK=$DIR" setsid nsenter -t "$pid" -n -u -m -- \
		"$SSHD" -D -f "$DIR/$h/sshd_config" -E "$DIR/$h/sshd.log" \
		</dev/null >"$DIR/$h/sshd.out" 2>&1 &
	echo $! >"$DIR/$h/sshd.started"
}

# wait_sshd K: wait until host K's sshd takes logins, up to 10 s
wait_sshd() {
	h=gba-h$1
	sp=$(cat "$DIR/$h/sshd.started")
	i=0
	until ssh -F "$DIR/ssh_config" -o ConnectTimeout=2 "$h" true \
		2>"$DIR/$h/ssh_wait.err"; do
		if [ $i -ge 100 ] || ! kill -0 "$sp" 2>/dev/null; then
			echo "$prog: no ssh login into $h:" >&2
			kill -0 "$sp" 2>/dev/null || echo "$SSHD exited" >&2
			cat "$DIR/$h/ssh_wait.err" "$DIR/$h/sshd.out" \
				"$DIR/$h/sshd.log" 2>/dev/null >&2
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
}

cmd_up() {
	n=$1
	case "$n" in
	'' | *[!0-9]*) die "up: N must be a number of hosts" ;;
	esac
	[ "$n" -ge 1 ] && [ "$n" -le 250 ] || die "up: N must be 1 .. 250"
	why=$(check_env) || die "cannot make emulated hosts: $why"
	[ -z "$(our_pids)" ] ||
		die "emulated hosts are up already ($(our_dirs)); run: $prog down"
	if ip link show "$ROOT_IF" >/dev/null 2>&1; then
		die "$ROOT_IF exists already; run: $prog down"
	fi
	if [ -n "$(ip -4 route show to match "$NET.1" | grep -v '^default')" ] ||
		ip -4 addr show | grep -q "inet $NET\."; then
		die "$NET.0/24 is in use on this machine (set GBA_HOSTS_NET)"
	fi
	# DIR: new, empty, or left by an earlier run of this script
	if [ -f "$DIR/.gba-emu-hosts" ]; then
		rm -rf "$DIR"
	elif [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ]; then
		die "$DIR exists, is not empty and was not made by $prog"
	fi
	mkdir -m 0700 -p "$DIR" || die "cannot make $DIR"
	# from here on, a failure tears down what was made
	trap 'echo "$prog: up failed, tearing down" >&2; cmd_down' EXIT
	trap 'exit 1' INT TERM HUP
	make_files "$n" || exit 1
	mkdir -p -m 0755 /run/sshd	# sshd's privilege separation dir
	sw=$(spawn switch 0) || exit 1
	ip link add "$ROOT_IF" type veth peer name root netns "$sw" &&
		in_net "$sw" ip link set root master "$BRIDGE" up &&
		ip addr add "$ROOT_IP/24" dev "$ROOT_IF" &&
		ip link set "$ROOT_IF" up || die "cannot connect the machine"
	echo 1 >"/proc/sys/net/ipv6/conf/$ROOT_IF/disable_ipv6" 2>/dev/null
	k=0
	while [ $k -lt "$n" ]; do
		up_host $k "$sw" || exit 1
		k=$((k + 1))
	done
	k=0
	while [ $k -lt "$n" ]; do
		wait_sshd $k || exit 1
		k=$((k + 1))
	done
	trap - EXIT INT TERM HUP
	note "$n hosts up: gba-h0 .. gba-h$((n - 1)) ($NET.1 .. $(host_ip $((n - 1))))"
	note "state in $DIR; try: ssh -F $DIR/ssh_config gba-h0 hostname"
}

# ---------------------------------------------------------------- exec, env

cmd_exec() {
	[ $# -ge 2 ] || die "usage: $prog exec [-d DIR] HOST CMD [ARGS...]"
	h=$1
	shift
	pid=$(pid_of "$h") || die "no emulated host $h (state in $DIR)"
	exec nsenter -t "$pid" -n -u -m --wd="$PWD" -- "$@"
}

cmd_env() {
	[ -f "$DIR/ssh_config" ] || die "no emulated hosts in $DIR"
	echo "GBA_HOSTS_DIR='$DIR'; export GBA_HOSTS_DIR"
	echo "OMPI_MCA_plm_rsh_agent='ssh -F $DIR/ssh_config'; export OMPI_MCA_plm_rsh_agent"
	echo "OMPI_MCA_oob_tcp_if_include='$NET.0/24'; export OMPI_MCA_oob_tcp_if_include"
	echo "OMPI_MCA_btl_tcp_if_include='$NET.0/24'; export OMPI_MCA_btl_tcp_if_include"
}

usage() {
	sed -n '2,13s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

# ---------------------------------------------------------------- main

[ $# -ge 1 ] || usage
cmd=$1
shift
DIR=${GBA_HOSTS_DIR:-/tmp/gba-hosts}
# options, then the command's arguments (up accepts -d after N too)
args=
while [ $# -gt 0 ]; do
	case "$1" in
	-d)
		[ $# -ge 2 ] || usage
		DIR=$2
		shift 2
		;;
	-h | --help) usage ;;
	*)
		[ "$cmd" = up ] && [ -z "$args" ] || break
		args=$1
		shift
		;;
	esac
done
case "$DIR" in
/*) ;;
*) DIR=$PWD/$DIR ;;
esac

case "$cmd" in
check) cmd_check ;;
up) cmd_up "$args" ;;
down) cmd_down ;;
exec) cmd_exec "$@" ;;
env) cmd_env ;;
*) usage ;;
esac
