#!/bin/sh
# gba_stat(1) on a deliberately stuck barrier (emulated device, the
# private image $GBA_DEVICE of make check):
#   1. test/core/gba_stat_stuck barrier: members 0 and 1 of a 3-member
#      group arrive, member 2 never does; an engine endpoint (helper
#      "endpoint") holds one unconsumed message.
#   2. gba_stat (text) shows the group waiting, 2/3 arrived, absent
#      member 2 with its pid; --json (read with jq) the same, its owner
#      job, and the endpoint (alive, 256 slots, 1 pending).
#   3. --watch=0.2 for 3 s draws at least 2 frames (of up to 15: the
#      margin is for a loaded machine) and exits 0 on SIGINT.
#   4. The waiters time out and log "absent: member 2 (pid P2)".
#   5. Member 2 is killed: shown "dead"; the waiters wait again and fail
#      (-EPIPE), which records PEER_LOST in ERROR_INFO: gba_stat decodes
#      it; their log lines name member 2 dead.
#   6. Everyone gone: no group in use, no endpoint; a device that does
#      not exist is exit status 1 with a message.
top_builddir=${top_builddir:-.}
stat=$top_builddir/tools/gba_stat
helper=$top_builddir/test/core/gba_stat_stuck
for c in jq timeout; do
	if ! command -v $c >/dev/null 2>&1; then
		echo "SKIP: $c not found"
		exit 77
	fi
done
case "$GBA_DEVICE" in
emu:/*) ;;
*) echo "SKIP: needs GBA_DEVICE=emu:/NAME (make check sets it)"; exit 77 ;;
esac
tmp=$(mktemp -d)
bpid= epid= p2=
cleanup() {
	touch "$tmp/again" "$tmp/exit"
	[ -n "$p2" ] && kill -9 "$p2" 2>/dev/null
	[ -n "$bpid" ] && kill "$bpid" 2>/dev/null
	[ -n "$epid" ] && kill "$epid" 2>/dev/null
	wait
	rm -rf "$tmp" "/dev/shm/${GBA_DEVICE#emu:/}"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.out "$tmp"/log "$tmp"/err; do
		[ -f "$f" ] && { echo "--- $f"; cat "$f"; }
	done
	exit 1
}
# wait_for FILE...: up to 10 s for each
wait_for() {
	for f in "$@"; do
		i=0
		while [ ! -e "$tmp/$f" ]; do
			i=$((i + 1))
			[ $i -le 200 ] || fail "$f did not appear"
			sleep 0.05
		done
	done
}
TIMEOUT_MS=1000

"$helper" barrier "$tmp" $TIMEOUT_MS > "$tmp/log" 2> "$tmp/err" &
bpid=$!
"$helper" endpoint "$tmp" 2>> "$tmp/err" &
epid=$!
wait_for pids arrived.0 arrived.1 ep
read p0 p1 p2 < "$tmp/pids"
read ep_pid ep_id < "$tmp/ep"

# 2. text and JSON while the barrier is stuck
"$stat" > "$tmp/text.out" 2>&1 || fail "gba_stat exit status $?"
grep -q "^device emu /${GBA_DEVICE#emu:/}: ID 0x47424130 VERSION 1, 32 groups, 708 members max" "$tmp/text.out" ||
	fail "no device line"
grep -Eq '^ +[0-9]+ 0x[0-9a-f]{8} [0-9a-f]{16} +3 +3 +1 +2/3 waiting +none$' "$tmp/text.out" ||
	fail "no row: group of 3 members, 3 attached, sequence 1, 2/3 arrived, waiting, no error"
grep -q "^ *absent: member 2 (pid $p2)\$" "$tmp/text.out" || fail "absent member 2 (pid $p2) not shown"
grep -Eq "^gba-fab-[0-9]+-[0-9a-f]{16}-$ep_pid-$ep_id +[0-9a-f]{16} +$ep_pid +$ep_id yes +256 +1\$" "$tmp/text.out" ||
	fail "endpoint $ep_pid/$ep_id not listed alive with 256 slots, 1 pending"

"$stat" --json > "$tmp/json.out" 2>&1 || fail "gba_stat --json exit status $?"
jq -e --argjson p0 "$p0" --argjson p1 "$p1" --argjson p2 "$p2" '
	.device.backend == "emu" and .device.id == "0x47424130" and
	(.groups | length) == 1 and
	(.groups[0] | .member_count == 3 and .attached == 3 and
	 .arrived == 2 and .seq == 1 and .release_seq == 0 and
	 .state == "waiting" and .error.cause == "none" and
	 .job != null and
	 ([.members[].pid] == [$p0, $p1, $p2]) and
	 ([.members[].arrived] == [true, true, false]) and
	 .absent == [{"member": 2, "pid": $p2, "alive": true,
		      "arrived": false}])' "$tmp/json.out" >/dev/null ||
	fail "--json: group, members or absent list wrong"
jq -e '.groups[0].job == .self_job' "$tmp/json.out" >/dev/null ||
	fail "--json: the group's job is not this job (same environment)"
jq -e --argjson pid "$ep_pid" --argjson ep "$ep_id" '
	[.endpoints[] | select(.pid == $pid and .ep == $ep and .alive and
			       .slots == 256 and .pending == 1)] | length == 1' \
	"$tmp/json.out" >/dev/null || fail "--json: endpoint not listed"
"$stat" --groups --json | jq -e 'has("endpoints") | not' >/dev/null ||
	fail "--groups still lists endpoints"
"$stat" --endpoints | grep -q "^ *GROUP " && fail "--endpoints still lists groups"

# 3. --watch: frames until interrupted, exit status 0
timeout -s INT --preserve-status 3 "$stat" --watch=0.2 --groups > "$tmp/watch.out" 2>&1 ||
	fail "gba_stat --watch exit status $?"
frames=$(grep -c '^device ' "$tmp/watch.out")
[ "$frames" -ge 2 ] || fail "--watch drew $frames frames in 3 s"

# 4. the waiters time out and log the absent member
wait_for timedout.0 timedout.1
for m in 0 1; do
	grep -q "^member $m: barrier 1 timed out after $TIMEOUT_MS ms; absent: member 2 (pid $p2)\$" "$tmp/log" ||
		fail "member $m's timeout line does not name member 2 (pid $p2)"
done

# 5. member 2 dies: shown dead; the next wait fails and ERROR_INFO says why
kill -9 "$p2"
i=0
# a zombie (its parent, the helper, reaps members 0 and 1 only) is dead
while [ -e "/proc/$p2" ] && [ "$(cut -d' ' -f3 "/proc/$p2/stat" 2>/dev/null)" != Z ]; do
	i=$((i + 1)); [ $i -le 200 ] || fail "member 2 did not die"; sleep 0.05
done
"$stat" > "$tmp/dead.out" 2>&1 || fail "gba_stat exit status $?"
grep -q "^ *absent: member 2 (pid $p2, dead)\$" "$tmp/dead.out" || fail "member 2 not shown dead"
touch "$tmp/again"
wait_for failed.0 failed.1
for m in 0 1; do
	grep -q "^member $m: barrier 1 failed: Broken pipe; absent: member 2 (pid $p2, dead)\$" "$tmp/log" ||
		fail "member $m's failure line does not name member 2 dead"
done
"$stat" > "$tmp/error.out" 2>&1 || fail "gba_stat exit status $?"
grep -Eq ' +3 +3 +1 +2/3 error +peer-lost$' "$tmp/error.out" || fail "no error state"
grep -q "error: ERROR_INFO 0x0400000200000001: a member of the group went away (member 2, sequence 1)" "$tmp/error.out" ||
	fail "ERROR_INFO not decoded"
"$stat" --json | jq -e '.groups[0].error | .cause == "peer-lost" and
	.member == 2 and .seq == 1 and .error_info == "0x0400000200000001"' >/dev/null ||
	fail "--json: ERROR_INFO not decoded"

# 6. everyone gone
touch "$tmp/exit"
wait "$bpid" || fail "stuck barrier helper exit status $?"
wait "$epid" || fail "endpoint helper exit status $?"
bpid= epid= dead_p2=$p2 p2=
"$stat" > "$tmp/gone.out" 2>&1 || fail "gba_stat exit status $?"
grep -q "^no group in use\$" "$tmp/gone.out" || fail "a group is still in use"
grep -q "gba-fab-[0-9]*-[0-9a-f]*-$ep_pid-" "$tmp/gone.out" && fail "closed endpoint still listed"
"$stat" -d "emu:/gba-stat-none-$$" > "$tmp/bad.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "no such device" "$tmp/bad.out" || fail "missing emulated device: exit status $rc"
"$stat" -d /nonexistent/gba9 > "$tmp/bad.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "cannot open device /nonexistent/gba9" "$tmp/bad.out" || fail "bad device: exit status $rc"
"$stat" --watch=0 > "$tmp/bad.out" 2>&1 && fail "--watch=0 accepted"
[ -e "/dev/shm/gba-stat-none-$$" ] && fail "gba_stat created an image"
echo "PASS: gba_stat showed the stuck barrier (absent member 2, pid $dead_p2), its death and ERROR_INFO, the endpoint, --watch frames"
exit 0
