#!/bin/sh
# Another Unix user can use none of this user's GBA objects (gba(7),
# SECURITY).  The test creates a second user (useradd -M, a unique name,
# removed at exit whatever happens) and, with runuser, has it:
#   1. run test/core/gba_users probe against the objects of
#      test/core/gba_users serve (run by this user): the device image
#      cannot be opened (so no join or arrival in its groups), neither it
#      nor a receive queue can be opened with shm_open, the endpoint
#      cannot be reached, the region cannot be attached, the process's
#      memory cannot be read by cross-memory attach; then it plants an
#      image and receive queues under names this user's processes use
#      (a peer's queue, the queue of serve's next endpoint), which serve
#      must refuse (-EACCES);
#   2. run gba_demo (libfabric) with GBA_DEVICE naming this user's image:
#      fi_join_collective fails with -FI_EACCES (Permission denied);
#   3. run uct_gba_barrier -D with this user's image (UCX): the group
#      cannot be created (UCS_ERR_REJECTED, "Permission denied").
# Every refusal must be an error with a message, never a success or a
# signal.  Needs root (useradd, runuser): skipped (77) otherwise.  In a
# private mount namespace with its own /dev/shm when unshare permits.
top_builddir=${top_builddir:-.}
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (creates a second user)"
	exit 77
fi
for c in useradd userdel runuser; do
	if ! command -v $c >/dev/null 2>&1; then
		echo "SKIP: $c not found"
		exit 77
	fi
done
if [ -z "$GBA_USERS_NS" ] && unshare -m true 2>/dev/null; then
	GBA_USERS_NS=1 exec unshare -m sh "$0" "$@"
fi
if [ -n "$GBA_USERS_NS" ]; then
	mount -t tmpfs -o size=256m tmpfs /dev/shm || exit 99
fi

prog=$top_builddir/test/core/.libs/gba_users
[ -x "$prog" ] || prog=$top_builddir/test/core/gba_users
demo=$top_builddir/tools/gba_demo
ucxbar=$top_builddir/test/ucx/.libs/uct_gba_barrier
[ -x "$ucxbar" ] || ucxbar=$top_builddir/test/ucx/uct_gba_barrier
[ -f "$top_builddir/ucx/uct_gba/.libs/libuct_gba.so" ] &&
	export LD_LIBRARY_PATH="$top_builddir/ucx/uct_gba/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 5 90"

user=gbat$$
dir=$(mktemp -d "${TMPDIR:-/tmp}/gba-users.XXXXXX") || exit 99
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	userdel "$user" >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 99' INT TERM HUP
useradd -M -N -s /bin/sh "$user" || {
	echo "SKIP: useradd $user failed"
	exit 77
}
chmod 0777 "$dir"
# the build tree must be readable by the new user
if ! runuser -u "$user" -- test -x "$prog"; then
	echo "SKIP: $user cannot run $prog (build tree not readable)"
	exit 77
fi
echo "second user: $user (uid $(id -u "$user"))"
fail=0

# judge <what> <exit status> <pattern>: a failure (non-zero, no signal,
# no timeout) whose output ($dir/out) matches <pattern>
judge() {
	what=$1 rc=$2 pat=$3
	if [ "$rc" = 0 ]; then
		why="it succeeded"
	elif [ "$rc" -ge 124 ] && [ "$rc" -lt 160 ]; then
		why="exit status $rc (timeout or signal)"
	elif grep -qiE 'signal|sanitizer|runtime error' "$dir/out"; then
		why="a signal or a sanitizer report"
	elif ! grep -qiE "$pat" "$dir/out"; then
		why="no message matching \"$pat\""
	else
		echo "ok: $what: $(grep -m1 -iE "$pat" "$dir/out" | cut -c1-200)"
		return
	fi
	echo "FAIL: $what: $why"
	sed 's/^/  | /' "$dir/out" | tail -n 12
	fail=1
}

# the first user's objects
$tmo "$prog" serve "$dir" >"$dir/serve.out" 2>&1 &
spid=$!
i=0
while [ ! -f "$dir/addr" ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ ! -f "$dir/addr" ]; then
	echo "FAIL: gba_users serve did not start"
	cat "$dir/serve.out"
	exit 1
fi
image=$(cut -d' ' -f1 "$dir/addr")
echo "first user's image: /dev/shm$image ($(stat -c '%U %a' /dev/shm$image))"

# 2. libfabric: gba_demo with the first user's image
runuser -u "$user" -- env GBA_DEVICE="emu:$image" FI_LOG_LEVEL=warn \
	$tmo "$demo" -n 2 -I 5 >"$dir/out" 2>&1
judge "gba_demo with the other user's image" $? \
	'Permission denied.*another user|fi_join_collective.*Permission denied'

# 3. UCX: uct_gba_barrier with the first user's image
if [ -x "$ucxbar" ]; then
	runuser -u "$user" -- $tmo "$ucxbar" -n 2 -i 5 -D "emu:$image" \
		>"$dir/out" 2>&1
	judge "uct_gba_barrier with the other user's image" $? \
		'cannot open the GBA device.*Permission denied'
else
	echo "note: uct_gba_barrier not built (no UCX): its run skipped"
fi

# 1. the core library, both ways
runuser -u "$user" -- $tmo "$prog" probe "$dir" >"$dir/probe.out" 2>&1
prc=$?
wait $spid
src=$?
spid=
sed 's/^/probe (second user): /' "$dir/probe.out"
sed 's/^/serve (first user): /' "$dir/serve.out"
if [ $prc != 0 ] || [ $src != 0 ]; then
	echo "FAIL: gba_users: probe exit status $prc, serve $src"
	fail=1
fi
exit $fail
