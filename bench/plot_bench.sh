#!/bin/sh
# Draw the figures of a `make bench` run (the CSV files of
# bench/bench_csv.sh in DIR) as PNG images with gnuplot, into DIR:
#   barrier.png   barrier latency against process count: gba fi_barrier
#                 (emulated device), Open MPI's MPI_Barrier (ob1/vader),
#                 MPI_Barrier with the barrier-offload library (GBA), and
#                 the floor of a shared-memory barrier
#   msg_lat.png   message latency against size, half round trip: the
#                 provider (gba) and libfabric's shm, MPI over MTL-OFI gba
#                 and over ob1/vader, UCP tag_lat over gba,self and
#                 posix,self
#   msg_bw.png    bandwidth against size: gba and shm; UCP tag_bw
# Each image's title says when and under what load its figures were made
# (the first line of the CSV files).
#
# Usage: bench/plot_bench.sh DIR.  Needs gnuplot (Debian: gnuplot-nox);
# without it, says so and exits 0 (the CSV files stay).
set -e
dir=${1:?usage: plot_bench.sh DIR}
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "plot_bench.sh: no gnuplot: figures left as CSV in $dir"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# made CSV: the "when and load" comment of CSV (empty if missing)
made() {
	[ -f "$1" ] && sed -n '1s/^# //p' "$1" | cut -d, -f1,4 || true
}

# cols CSV AWK_FILTER X_COL Y_COL > data: two columns, header and
# comment skipped, rows the filter keeps, non-numeric values dropped
cols() {
	[ -f "$1" ] || return 0
	awk -F, -v x="$3" -v y="$4" "NR > 2 && ($2) && \$x + 0 > 0 && \$y + 0 > 0 { print \$x, \$y }" "$1"
}

# ucx_rows TEST COL: UCP rows of TEST ("ucp tag_lat 4 KiB ...") as size
# in bytes and the value of column COL (2: gba, 3: posix)
ucx_rows() {
	[ -f "$dir/ucx.csv" ] || return 0
	awk -F, -v t="$1" -v c="$2" 'NR > 2 {
		n = split($1, w, " ")
		if (w[1] " " w[2] != "ucp " t || $c + 0 <= 0)
			next
		m = w[4] == "KiB" ? 1024 : w[4] == "MiB" ? 1048576 : 1
		print w[3] * m, $c
	}' "$dir/ucx.csv" | sort -n
}

# series FILE TITLE [STYLE]: a plot clause for FILE, or nothing when it has
# no data (a benchmark skipped or failed); clauses joined by ", "
series() {
	[ -s "$1" ] || return 0
	printf '%s"%s" using 1:2 with linespoints lw 2 %s title "%s"' \
		"${plot:+, }" "$1" "${3:-}" "$2"
}

style='set terminal pngcairo size 900,600 font "DejaVu Sans,11"
set termoption noenhanced
set grid
set key top left
set datafile missing "-"'

# ---- barrier against process count
cols "$dir/barrier.csv" '$2 == "no"' 1 3 >"$tmp/gba"
cols "$dir/barrier.csv" '$2 == "no"' 1 4 >"$tmp/mpi"
cols "$dir/barrier.csv" '$2 == "no"' 1 5 >"$tmp/floor"
cols "$dir/offload.csv" '$1 == "ompi ob1/vader"' 2 3 >"$tmp/offload"
if [ -s "$tmp/gba" ]; then
	gnuplot <<EOF
$style
set output "$dir/barrier.png"
set title "Barrier latency (make bench, $(made "$dir/barrier.csv"))"
set xlabel "processes"
set ylabel "microseconds per barrier"
set logscale x 2
set logscale y
set xtics (2, 4, 8, 16, 32)
set xrange [1.6:11]
$(plot=; plot=$(series "$tmp/gba" 'gba fi_barrier (emulated GBA)')
plot=$plot$(series "$tmp/offload" 'MPI_Barrier, barrier-offload library (GBA)')
plot=$plot$(series "$tmp/mpi" 'MPI_Barrier, Open MPI ob1/vader')
plot=$plot$(series "$tmp/floor" 'shared-memory barrier floor' 'dt 2')
echo "plot $plot")
EOF
	echo "plot_bench.sh: $dir/barrier.png"
fi

# ---- message latency against size
cols "$dir/msg_lat.csv" 1 1 2 >"$tmp/lat_gba"
cols "$dir/msg_lat.csv" 1 1 3 >"$tmp/lat_shm"
cols "$dir/mpi_lat.csv" 1 1 2 >"$tmp/mpi_gba"
cols "$dir/mpi_lat.csv" 1 1 3 >"$tmp/mpi_vader"
ucx_rows tag_lat 2 >"$tmp/ucp_gba"
ucx_rows tag_lat 3 >"$tmp/ucp_posix"
if [ -s "$tmp/lat_gba" ]; then
	gnuplot <<EOF
$style
set output "$dir/msg_lat.png"
set title "Message latency, 2 processes (make bench, $(made "$dir/msg_lat.csv"))"
set xlabel "message size, bytes"
set ylabel "microseconds, half round trip"
set logscale xy
$(plot=; plot=$(series "$tmp/lat_gba" 'libfabric gba')
plot=$plot$(series "$tmp/lat_shm" 'libfabric shm')
plot=$plot$(series "$tmp/mpi_gba" 'MPI, MTL-OFI gba')
plot=$plot$(series "$tmp/mpi_vader" 'MPI, ob1/vader')
plot=$plot$(series "$tmp/ucp_gba" 'UCP tag_lat gba,self (64 KiB up: heap)')
plot=$plot$(series "$tmp/ucp_posix" 'UCP tag_lat posix,self (64 KiB up: heap)')
echo "plot $plot")
EOF
	echo "plot_bench.sh: $dir/msg_lat.png"
fi

# ---- bandwidth against size
cols "$dir/msg_bw.csv" 1 1 2 >"$tmp/bw_gba"
cols "$dir/msg_bw.csv" 1 1 3 >"$tmp/bw_shm"
ucx_rows tag_bw 2 >"$tmp/ucpbw_gba"
ucx_rows tag_bw 3 >"$tmp/ucpbw_posix"
if [ -s "$tmp/bw_gba" ]; then
	gnuplot <<EOF
$style
set output "$dir/msg_bw.png"
set title "Bandwidth, 2 processes (make bench, $(made "$dir/msg_bw.csv"))"
set xlabel "message size, bytes"
set ylabel "MB/s (10^6 bytes)"
set logscale x
$(plot=; plot=$(series "$tmp/bw_gba" 'libfabric gba')
plot=$plot$(series "$tmp/bw_shm" 'libfabric shm')
plot=$plot$(series "$tmp/ucpbw_gba" 'UCP tag_bw gba,self')
plot=$plot$(series "$tmp/ucpbw_posix" 'UCP tag_bw posix,self')
echo "plot $plot")
EOF
	echo "plot_bench.sh: $dir/msg_bw.png"
fi
