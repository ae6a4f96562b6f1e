#!/bin/sh
# The stock fabtests (libfabric v1.17.0's, not part of this tree) across
# emulated hosts (scripts/emu_hosts.sh), FI_PROVIDER_PATH naming the
# build tree's provider:
#   - the stock driver inside gba-h0, server gba-h0 and client gba-h1:
#       runfabtests.sh -v -t quick -p $FABTESTS_BIN \
#           -f fabtests/test_configs/gba/gba.exclude gba gba-h0 gba-h1
#     (unit tests on gba-h0, every client-server test between the hosts
#     over the engine's TCP path); the project's exclude file is given
#     with -f (the v1.17.0 driver looks for test_configs/<prov>/ only
#     relative to the directory it runs in), the environment through
#     ssh (below: not with the driver's -E); any "Fail" or an
#     unexcluded "Notrun" fails the test;
#   - the driver's multinode set (v1.17.0: fi_multinode -C msg,
#     fi_multinode -C rma, fi_multinode_coll, each with -n N -p PROV
#     -s SERVER) over 4 hosts, one process on each: every process runs
#     the same command, -s gba-h0; the one on gba-h0 binds the
#     out-of-band socket and is rank 0, the others connect to it.
# FABTESTS_BIN names the bin directory of the stock fabtests (as for
# test/coll/stock_trigger.sh); skipped (77) when it is not set or has no
# runfabtests.sh, or where namespaces cannot be made (emu_hosts.sh
# check).  One run at a time (the lock of test/hosts/emu_hosts.sh).
#
# The run is in a PID namespace of its own (unshare --pid --mount-proc,
# the hosts made inside it): the hosts share the machine's process ID
# space, and the stock driver's cleanup kills every process whose name
# starts with fi_ on the server and client host ("ps -eo comm,pid | grep
# '^fi_' ... kill -9", after each run and after a timed-out test), which
# would reach the conformance programs of tests running beside this one.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/test/hosts/hosts_lib.sh"
top_builddir=${top_builddir:-.}
B=$(cd "$top_builddir" && pwd)
N=4
excl=$top_srcdir/fabtests/test_configs/gba/gba.exclude

# failed WHAT: a part failed; the others still run, the test fails at
# the end
bad=
failed() {
	echo "FAILED: $*"
	bad="${bad:+$bad; }$*"
}

if [ -z "$GBA_STOCK_FT_INNER" ]; then
	bin=${FABTESTS_BIN:-}
	if [ -z "$bin" ] || [ ! -f "$bin/runfabtests.sh" ]; then
		echo "SKIP: stock fabtests not found (set FABTESTS_BIN to the" \
			"bin directory of libfabric v1.17.0's fabtests)"
		exit 77
	fi
	$emu check || exit 77
	for p in fi_multinode fi_multinode_coll; do
		[ -x "$bin/$p" ] || fail "no $p in $bin"
	done
	[ -f "$excl" ] || fail "no $excl"
	command -v bash >/dev/null 2>&1 || fail "no bash (runfabtests.sh)"

	hosts_lock
	$emu down >/dev/null 2>&1 # stale hosts of an earlier run
	# the rest in a PID namespace (above); the lock (fd 9) goes along
	unshare --pid --fork --mount-proc true 2>/dev/null ||
		fail "unshare --pid --fork --mount-proc failed"
	GBA_STOCK_FT_INNER=1
	FABTESTS_BIN=$(cd "$bin" && pwd)
	top_builddir=$B
	export GBA_STOCK_FT_INNER FABTESTS_BIN top_srcdir top_builddir
	exec unshare --pid --fork --kill-child=TERM --mount-proc sh "$0" "$@"
fi

bin=$FABTESTS_BIN
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gba-stockft-test.XXXXXX") || exit 99
chmod 755 "$tmp"
DIR=$tmp/hosts
cleanup() {
	$emu down -d "$DIR" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

tmo="timeout -k 5"

# on HOST CMD...: run CMD inside HOST with the build tree's libraries
fienv="FI_PROVIDER_PATH=$B/prov/gba/.libs LD_LIBRARY_PATH=$B/libgba/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
on() {
	h=$1
	shift
	$emu exec -d "$DIR" "$h" env $fienv "$@"
}
# the stock binaries are not instrumented: under the sanitizers, their
# runtimes are preloaded for the provider's sake (env argument of on)
pre=
[ -n "$GBA_SAN_PRELOAD" ] &&
	pre="LD_PRELOAD=$(echo "$GBA_SAN_PRELOAD" | tr ' ' ':')"

step "up $N"
$emu up $N -d "$DIR" >/dev/null || fail "emu_hosts.sh up $N failed"

# ---------------------------------------------------------------- quick
# The environment reaches the driver's remote commands through ssh: the
# hosts' ssh_config sends, and their sshds accept, FI_* and
# LD_LIBRARY_PATH (emu_hosts.sh).  The driver's own -E VAR=value is not
# usable with a server and client host in v1.17.0: it runs
# ${SERVER_CMD} "export VAR=\"value\" ; cmd" where SERVER_CMD is
# "eval timeout T ssh ... HOST", so the eval ends the ssh command at the
# ";" and runs the test itself where the driver runs, without VAR.
step "ssh from gba-h0 to gba-h1 carries FI_PROVIDER_PATH"
v=$(on gba-h0 $tmo 30 ssh -n gba-h1 'echo $(hostname) $FI_PROVIDER_PATH')
[ "$v" = "gba-h1 $B/prov/gba/.libs" ] ||
	fail "ssh gba-h1 from gba-h0 printed '$v'"
# Under the sanitizers, neither LD_PRELOAD nor the *SAN_OPTIONS go
# through ssh: the driver then runs one-line wrappers (in $tmp, shared
# by the hosts) that set them and exec the stock binary.
pbin=$bin
if [ -n "$pre" ]; then
	pbin=$tmp/bin
	mkdir "$pbin" || exit 99
	for f in "$bin"/fi_* "$bin"/sighandler_test; do
		[ -x "$f" ] || continue
		{
			echo '#!/bin/sh'
			for v in ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS; do
				eval "val=\${$v-}"
				[ -n "$val" ] && echo "export $v='$val'"
			done
			echo "export $pre"
			echo "exec $f \"\$@\""
		} >"$pbin/${f##*/}"
		chmod 755 "$pbin/${f##*/}"
	done
fi

step "runfabtests.sh -v -t quick gba gba-h0 gba-h1 (inside gba-h0)"
# the driver makes its temporary files in the directory it runs in
mkdir "$tmp/rft" && cd "$tmp/rft" || exit 99
on gba-h0 $tmo 900 bash "$bin/runfabtests.sh" -v -t quick -T 60 \
	-p "$pbin" -f "$excl" gba gba-h0 gba-h1 >"$tmp/rft.out" 2>&1
rc=$?
cd "$tmp" || exit 99
# -v: one YAML record per test ("- name: ...", "  result: ..."), the
# output of failed ones, then "# Total Pass", "# Total Notrun/Excluded",
# "# Total Fail"; the exit status is the number of failures
awk '/^- name: /{sub(/^- name: +/, ""); n=$0}
	/^  result: /{print $2 "\t" n}' "$tmp/rft.out" >"$tmp/rft.res"
for r in Pass Excluded Notrun Fail; do
	echo "  $r: $(grep -c "^$r" "$tmp/rft.res")"
done
grep '^# Total\|^# Percentage' "$tmp/rft.out" | sed 's/^/  /'
grep -v "^Pass\|^Excluded" "$tmp/rft.res" | sed 's/^/  /'
total=$(sed -n 's/^# Total Pass *//p' "$tmp/rft.out")
nfail=$(sed -n 's/^# Total Fail *//p' "$tmp/rft.out")
if [ $rc != 0 ] || [ -z "$total" ] || [ "$nfail" != 0 ] ||
	grep -q "^Fail\|^Notrun" "$tmp/rft.res"; then
	sed 's/^/  | /' "$tmp/rft.out"
	[ $rc = 124 ] && rc="124, timed out"
	failed "runfabtests.sh -t quick across gba-h0 and gba-h1" \
		"(exit status $rc: failed or not run, above)"
elif [ "$total" -le 0 ]; then
	failed "runfabtests.sh ran nothing"
fi

# ---------------------------------------------------------------- multinode
# mnode PROG ARGS...: PROG -n N -p gba -s gba-h0 ARGS, one process on
# each host, the one on gba-h0 first (it must listen before the others
# connect; outputs in $tmp/mn.K)
mnode() {
	prog=$1
	shift
	rm -f "$tmp"/mn.*
	(on gba-h0 $pre $tmo 60 "$bin/$prog" -n $N -p gba -s gba-h0 "$@" \
		>"$tmp/mn.0" 2>&1
	 echo $? >"$tmp/mn.0.rc") &
	i=0
	until on gba-h0 ss -Hltnp 2>/dev/null | grep -q '"fi_multinode'; do
		[ -f "$tmp/mn.0.rc" ] && break
		[ $i -lt 100 ] || { echo "  $prog on gba-h0 did not listen"; break; }
		sleep 0.1
		i=$((i + 1))
	done
	k=1
	while [ $k -lt $N ]; do
		(on gba-h$k $pre $tmo 60 "$bin/$prog" -n $N -p gba -s gba-h0 "$@" \
			>"$tmp/mn.$k" 2>&1
		 echo $? >"$tmp/mn.$k.rc") &
		k=$((k + 1))
	done
	wait
	ok=0
	k=0
	while [ $k -lt $N ]; do
		r=$(cat "$tmp/mn.$k.rc")
		[ "$r" = 0 ] || { ok=1; echo "  gba-h$k: exit status $r"; }
		k=$((k + 1))
	done
	return $ok
}

for t in "fi_multinode -C msg" "fi_multinode -C rma" "fi_multinode_coll"; do
	step "$t -n $N -p gba -s gba-h0, one process on each of $N hosts"
	if ! mnode $t; then
		k=0
		while [ $k -lt $N ]; do
			echo "  -- gba-h$k:"
			sed 's/^/  | /' "$tmp/mn.$k"
			k=$((k + 1))
		done
		failed "$t across $N hosts"
	else
		sed 's/^/  /' "$tmp/mn.0"
	fi
done

step "down"
$emu down -d "$DIR" >/dev/null || fail "emu_hosts.sh down failed"
[ -z "$bad" ] || fail "$bad"
echo "PASS"
