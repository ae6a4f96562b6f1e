#!/bin/sh
# bench/bench_csv.sh and bench/plot_bench.sh, as `make bench` uses them:
# figures written with csv_open/csv_row (and rows in the shape the bench
# scripts write), then drawn; every image must be a PNG.  Skipped without
# gnuplot.  The figures here are made up: only the plumbing is tested
# (`make bench` measures).
set -u
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "SKIP: no gnuplot"
	exit 77
fi
BENCH_CSV=$(mktemp -d "${TMPDIR:-/tmp}/gba-plot.XXXXXX") || exit 1
trap 'rm -rf "$BENCH_CSV"' EXIT
export BENCH_CSV
. "$top_srcdir/bench/bench_csv.sh"

csv_open barrier "np,pinned,gba_us,mpi_us,floor_us"
for np in 2 4 8; do
	csv_row barrier $np no 0.$np 1.$np 0.2$np
	csv_row barrier $np yes 0.$np 1.$np 0.2$np
done
csv_open offload "stack,np,gba_us,stock_us"
csv_row offload "ompi ob1/vader" 2 0.1 0.2
csv_row offload "ompi ob1/vader" 4 0.3 0.6
csv_open msg_lat "size,gba_us,shm_us"
csv_open mpi_lat "size,gba_us,vader_us"
csv_open msg_bw "size,gba_MBps,shm_MBps"
for s in 8 64 4096 65536; do
	csv_row msg_lat $s 0.3 0.6
	csv_row mpi_lat $s 0.3 0.27
	csv_row msg_bw $s 1000 900
done
csv_open ucx "test,gba,posix"
csv_row ucx "uct am_lat 8 B" 0.2 0.3
csv_row ucx "ucp tag_lat 8 B" 0.26 0.32
csv_row ucx "ucp tag_lat 4 KiB" 1.2 1.4
csv_row ucx "ucp tag_lat 64 KiB heap" 7.5 8.4
csv_row ucx "ucp tag_bw 1 MiB" 10000 9500

fail=0
head -n 2 "$BENCH_CSV/barrier.csv"
if ! head -n 1 "$BENCH_CSV/barrier.csv" | grep -q '^# .*load average'; then
	echo "FAIL: barrier.csv does not say when and under what load"
	fail=1
fi
"$top_srcdir/bench/plot_bench.sh" "$BENCH_CSV" || fail=1
for img in barrier msg_lat msg_bw; do
	if ! head -c 8 "$BENCH_CSV/$img.png" 2>/dev/null | od -An -c |
		grep -q 'P   N   G'; then
		echo "FAIL: $img.png missing or not a PNG"
		fail=1
	fi
done
exit $fail
