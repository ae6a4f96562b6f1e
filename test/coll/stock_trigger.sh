#!/bin/sh
# The stock fabtests of triggered operations and deferred work queues
# (libfabric v1.17.0's fabtests, not part of this tree) against -p gba,
# server and client processes over the emulated fabric:
#   fi_rdm_rma_trigger -s 127.0.0.1     triggered RMA (alias endpoint)
#   fi_rdm_deferred_wq [-a] [-T msg|tagged|rma|atomic|f_atomic]
#                                       FI_QUEUE_WORK of every op type
#   fi_rdm_deferred_wq -T c_atomic      see below
# FABTESTS_BIN names the directory of the fabtests binaries; else they
# are looked up on PATH.  Skipped (77) when they are not found.
#
# -T c_atomic: the test queues FI_CSWAP_LE with compare 0xff and a target
# of ASCII text and expects the swap to happen, i.e. target <= compare;
# fi_atomic(3) defines FI_CSWAP_LE as "if (compare[i] <= addr[i]) swap".
# The provider follows the man page, so the run must end with the test's
# own report that the target was not swapped, after its check that the
# deferred compare-atomic fetched the old values (a run where the work
# never fires times out instead).
. "$(dirname "$0")/coll_env.sh"
bin=${FABTESTS_BIN:-}
if [ -z "$bin" ] && command -v fi_rdm_deferred_wq >/dev/null 2>&1; then
	bin=$(dirname "$(command -v fi_rdm_deferred_wq)")
fi
if [ -z "$bin" ] || [ ! -x "$bin/fi_rdm_deferred_wq" ] ||
	[ ! -x "$bin/fi_rdm_rma_trigger" ]; then
	echo "SKIP: stock fabtests not found (set FABTESTS_BIN to the bin" \
		"directory of libfabric v1.17.0's fabtests)"
	exit 77
fi
# the stock binaries are not instrumented: under the sanitizers, their
# runtimes are preloaded for the provider's sake
[ -n "$GBA_SAN_PRELOAD" ] && export LD_PRELOAD="$GBA_SAN_PRELOAD"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gba-stock.XXXXXX") || exit 99
case "$GBA_DEVICE" in
emu:/*) trap 'rm -rf "$tmp" "/dev/shm/${GBA_DEVICE#emu:/}"' EXIT ;;
*) trap 'rm -rf "$tmp"' EXIT ;;
esac
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 5 30"
fail=0

# Ports of this run: the server's endpoint id (-B/-P: the provider maps
# a service to the endpoint of that id in another process; fabtests'
# default, 9228, may be in use by another run on this host) and the
# out-of-band port of fi_rdm_rma_trigger.
port=$((28200 + $$ % 4000)) # test/ucx/perftest_lib.sh

# True once the engine endpoint of id $port exists (any process).
server_ep_exists() {
	for f in /dev/shm/gba-fab-$uid-*-$port; do
		[ -e "$f" ] && return 0
	done
	return 1
}
uid=$(id -u)

# pair <expect> <program> <args>: a server, then a client naming
# 127.0.0.1 once the server is ready: its engine endpoint exists
# (/dev/shm/gba-fab-<uid>-<job>-<pid>-<port>) and had time to open (a client
# whose first send finds the endpoint not yet open reports
# EHOSTUNREACH and hangs, a fabtests weakness); the client is retried
# while fi_getinfo finds no endpoint of that id or the out-of-band
# connection is refused.  <expect> "pass": both exit 0; otherwise both
# must print <expect> and exit 1.
pair() {
	expect=$1
	shift
	prog=$bin/$1
	shift
	port=$((port + 1))
	if [ "$(basename "$prog")" = fi_rdm_rma_trigger ]; then
		sopt="-b=$port"
		copt="-b=$port"
	else
		sopt="-B $port"
		copt="-P $port"
	fi
	$tmo "$prog" -p gba $sopt "$@" >"$tmp/s" 2>&1 &
	spid=$!
	tries=0
	while [ $tries -lt 100 ] && [ "$sopt" != "-b=$port" ] &&
		! server_ep_exists; do
		tries=$((tries + 1))
		sleep 0.1
	done
	sleep 0.5
	tries=0
	while :; do
		$tmo "$prog" -p gba $copt "$@" 127.0.0.1 >"$tmp/c" 2>&1
		crc=$?
		grep -q "fi_getinfo.*ret=-61\|Connection refused" "$tmp/c" ||
			break
		tries=$((tries + 1))
		[ $tries -lt 40 ] || break
		sleep 0.25
	done
	wait $spid
	src=$?
	if [ "$expect" = pass ]; then
		[ $src = 0 ] && [ $crc = 0 ] && ok=1 || ok=0
	else
		ok=0
		[ $src = 1 ] && [ $crc = 1 ] && grep -q "$expect" "$tmp/s" &&
			grep -q "$expect" "$tmp/c" && ok=1
	fi
	if [ $ok = 1 ]; then
		echo "ok: $(basename "$prog") $*: $(tail -n 1 "$tmp/c")"
	else
		echo "FAIL: $(basename "$prog") $* (server $src, client $crc," \
			"expected $expect)"
		tail -n 5 "$tmp/s" "$tmp/c" | sed 's/^/  | /'
		fail=1
	fi
}

pair pass fi_rdm_rma_trigger -s 127.0.0.1
pair pass fi_rdm_deferred_wq
pair pass fi_rdm_deferred_wq -a
for t in msg tagged rma atomic f_atomic; do
	pair pass fi_rdm_deferred_wq -T $t
done
pair pass fi_rdm_deferred_wq -a -T rma
pair "Data mismatch found at byte 0" fi_rdm_deferred_wq -T c_atomic
exit $fail
