# Sourced by the tests that run ucx_perftest pairs (test/ucx/ucx_stack.sh,
# test/core/shm_limits.sh): the server on a port nobody holds.
#
# Each script takes ports upwards from a start of its own, below the
# kernel's ephemeral ports (ip_local_port_range starts at 32768), one more
# per pair: ucx_stack.sh 20000 + $$ % 4000, shm_limits.sh 24100 + $$ %
# 4000, test/coll/stock_trigger.sh (fabtests' ports) 28200 + $$ % 4000.
# Two scripts of a parallel make check sharing a range once made a
# client of one reach the other's server (shm_limits.sh's server had
# failed, as it may there).  A port that something else holds makes
# ucx_perftest's server fail at once with "bind() failed: Address already
# in use": perftest_serve then takes the next.

# perftest_serve <out> <command...>: run "<command...> -p <port>" in the
# background, its output in <out>, on the port after $port, and on the
# next one again while it fails with "Address already in use" (at most 20
# ports).  Sets $port and $spid (the server) and returns after giving it
# a second to listen.
perftest_serve() {
	_out=$1
	shift
	_tries=0
	while :; do
		port=$((port + 1))
		"$@" -p "$port" >"$_out" 2>&1 &
		spid=$!
		sleep 1
		if kill -0 "$spid" 2>/dev/null ||
			! grep -q "Address already in use" "$_out" ||
			[ $_tries -ge 20 ]; then
			return 0
		fi
		wait "$spid"
		_tries=$((_tries + 1))
	done
}
