# Sourced by the bench/run_*.sh scripts: their figures as CSV files, for
# bench/plot_bench.sh and for scripts.  Nothing is written unless
# BENCH_CSV names a directory (`make bench` sets it to bench-results in the
# build tree).  Each file starts with a comment line saying when and under
# what load it was made, then a header line; every row is one figure
# (medians, as the printed tables).

# csv_open NAME HEADER: start $BENCH_CSV/NAME.csv (replaced) with HEADER
csv_open() {
	[ -n "${BENCH_CSV:-}" ] || return 0
	mkdir -p "$BENCH_CSV"
	{
		echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n)," \
			"$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo ?) CPUs," \
			"load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
		echo "$2"
	} >"$BENCH_CSV/$1.csv"
}

# csv_file NAME: the path rows of NAME go to ("" without BENCH_CSV)
csv_file() {
	[ -n "${BENCH_CSV:-}" ] && echo "$BENCH_CSV/$1.csv" || echo ""
}

# csv_row NAME FIELD...: append a row of comma-separated fields
csv_row() {
	[ -n "${BENCH_CSV:-}" ] || return 0
	f=$1
	shift
	(IFS=,; echo "$*") >>"$BENCH_CSV/$f.csv"
}
