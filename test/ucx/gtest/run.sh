#!/bin/sh
# make check-ucx-gtest: UCX's own UCT test suites (test/ucx/gtest/uct_gtest,
# see Makefile.include) for transport gba, then for posix as the reference,
# one run of the binary each, with libuct_gba.so preloaded as users load it
# (uct_gba(7)).  The test cases listed in test/ucx/gtest/excluded are not
# run.  For each transport it prints the passed, skipped and failed tests
# of every suite, each skipped test with UCX's reason (the capability the
# test needs and the transport does not claim) and each failed test's
# output; the whole output is in test/ucx/gtest/uct_gtest-<tl>.log.
# Exits 1 if a test failed or a run did not finish.
#
# Environment: top_builddir, top_srcdir (make sets them);
#   UCT_GTEST_TLS     transports to run (default: "gba posix")
#   UCT_GTEST_FILTER  gtest pattern of the tests within a transport
#                     (default: *; e.g. 'uct_p2p_am_test.*')
#   UCT_GTEST_TIMEOUT seconds a transport's run may take (default: 1800)
#   GBA_SAN_PRELOAD   sanitizer runtimes to preload first (ASan builds)
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
bin=$top_builddir/test/ucx/gtest/uct_gtest
mod=$top_builddir/ucx/uct_gba/.libs/libuct_gba.so
excluded=$top_srcdir/test/ucx/gtest/excluded
tls=${UCT_GTEST_TLS:-gba posix}
filter=${UCT_GTEST_FILTER:-*}
tmo=${UCT_GTEST_TIMEOUT:-1800}

for f in "$bin" "$mod" "$excluded"; do
	if [ ! -f "$f" ]; then
		echo "run.sh: $f not found (make check-ucx-gtest builds the first two)" >&2
		exit 1
	fi
done
pre=$mod
[ -n "$GBA_SAN_PRELOAD" ] && pre="$(echo "$GBA_SAN_PRELOAD" | tr ' ' ':'):$mod"

# The patterns excluded for transport $1, as a negative gtest filter
# (":pattern" each); the list's lines are "<tl>/<pattern> <reason>"
exclusions() {
	sed -n "s|^$1/\([^ 	]*\)[ 	].*|:$1/\1|p" "$excluded" | tr -d '\n'
}

# Per suite: passed, skipped, failed; then the skipped tests with UCX's
# reason and the failed tests with their output.  A test that started and
# has no result (the run crashed or timed out) counts as failed.
summarize() {
	awk -v tl="$1" '
	function suite(t) { sub(/\..*/, "", t); return t }
	function result(r) {
		s = suite(cur)
		if (!(s in seen)) { seen[s] = 1; order[++ns] = s }
		n[s, r]++; total[r]++; cur = ""
	}
	/^\[ RUN      \] / {
		if (cur != "") result("fail")
		cur = $4; skip = ""; out = ""; next
	}
	cur != "" && /^\[     SKIP \] / {
		skip = $0; sub(/^\[     SKIP \] \(/, "", skip); sub(/\)$/, "", skip)
		next
	}
	cur != "" && /^\[       OK \] / {
		if (skip != "") {
			skipped = skipped sprintf("    %s: %s\n", cur, skip)
			result("skip")
		} else {
			result("pass")
		}
		next
	}
	cur != "" && /^\[  FAILED  \] / {
		failed = failed sprintf("    %s\n%s", cur, out); result("fail"); next
	}
	cur != "" { out = out "      | " $0 "\n" }
	END {
		if (cur != "") {
			failed = failed sprintf("    %s (no result: the run stopped)\n%s", cur, out)
			result("fail")
		}
		printf "%s: %d passed, %d skipped, %d failed\n", tl,
		       total["pass"], total["skip"], total["fail"]
		printf "  %-44s %5s %5s %5s\n", "suite", "pass", "skip", "fail"
		for (i = 1; i <= ns; i++)
			printf "  %-44s %5d %5d %5d\n", order[i], n[order[i], "pass"],
			       n[order[i], "skip"], n[order[i], "fail"]
		if (skipped != "") printf "  skipped (UCX'"'"'s reason):\n%s", skipped
		if (failed != "") printf "  FAILED:\n%s", failed
		exit total["fail"] > 0
	}' "$2"
}

fail=0
for tl in $tls; do
	log=$top_builddir/test/ucx/gtest/uct_gtest-$tl.log
	neg=$(exclusions "$tl")
	nexcl=$(grep -c "^$tl/" "$excluded")
	echo "== UCX gtest, transport $tl ($nexcl excluded by test/ucx/gtest/excluded)"
	start=$(date +%s)
	LD_PRELOAD=$pre UCX_HANDLE_ERRORS=bt UCX_LOG_LEVEL=warn \
		timeout -k 10 "$tmo" "$bin" \
		--gtest_filter="$tl/$filter${neg:+-${neg#:}}" >"$log" 2>&1
	rc=$?
	summarize "$tl" "$log" || fail=1
	if [ $rc = 124 ]; then
		echo "  the run timed out after $tmo s"
		fail=1
	elif [ $rc != 0 ]; then
		echo "  the run exited with status $rc"
		fail=1
	fi
	echo "  $(($(date +%s) - start)) s; output in $log"
done
exit $fail
