#!/bin/sh
# make check's runner of a fuzz harness (fuzz/Makefile.include):
#   run.sh MODE ./fuzz/NAME.fuzz
# replays fuzz/corpus/NAME (MODE replay: the harness built with
# fuzz_main.c), or, in a --enable-fuzzing build (MODE libfuzzer), fuzzes
# from that corpus for $GBA_FUZZ_SECONDS seconds (default 4); new inputs go
# to a temporary directory, the committed corpus is only read.  Any crash,
# sanitizer report, leak or timeout fails the test.
set -e
mode=$1
prog=$2
name=$(basename "$prog" .fuzz)
corpus=${top_srcdir:-$(dirname "$0")/..}/fuzz/corpus/$name
[ -d "$corpus" ] || { echo "no corpus $corpus"; exit 1; }

case $mode in
replay)
	exec "$prog" "$corpus"
	;;
libfuzzer)
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	"$prog" -max_total_time="${GBA_FUZZ_SECONDS:-4}" -timeout=10 \
		-rss_limit_mb=2048 -artifact_prefix="$work/" "$work" "$corpus"
	;;
*)
	echo "usage: $0 replay|libfuzzer HARNESS"
	exit 1
	;;
esac
