# Sourced by the emulated-hosts tests (test/hosts/*.sh), after they set
# top_srcdir: the emulated hosts' script ($emu), section headers (step),
# the failure exit (fail; a test may define its own after sourcing), and
# the lock that lets one of them at a time use the hosts (hosts_lock).
emu="sh $top_srcdir/scripts/emu_hosts.sh"
start=$(date +%s)

# step TITLE: a section header with the seconds since the start
step() {
	echo "== $* (at $(($(date +%s) - start)) s)"
}

fail() {
	echo "FAIL: $*"
	exit 1
}

# hosts_lock: wait (up to 900 s) until no other emulated-hosts test runs
# (they share the bridge, the host names and the hosts' namespaces); the
# lock is descriptor 9, held until the test exits.  The section times
# then count from here, not from the wait.
hosts_lock() {
	if command -v flock >/dev/null 2>&1; then
		lockdir=/run/lock
		[ -d $lockdir ] && [ -w $lockdir ] || lockdir=/tmp
		exec 9>$lockdir/gba-emu-hosts.test.lock
		flock -w 900 9 ||
			fail "another run of an emulated-hosts test holds the lock"
	fi
	start=$(date +%s)
}
