#!/bin/sh
# Run the benchmarks and print each figure next to its anchor, measured in
# the same run: barrier latency vs Open MPI 4.1.4 MPI_Barrier (btl
# self,vader) and vs the floor of a shared-memory barrier
# (gba_bench_floor), unpinned and pinned, for 2, 4 and 8 processes; self
# RMA vs memcpy; tagged-message latency and bandwidth of two processes vs
# libfabric's shm provider (with the medium sizes 4, 8 and 16 KiB, either
# side of the inline limit, and again with the payload written before
# every send, as an application's fresh data), an exchange (both
# processes send at once) and a process's exchange with itself vs shm,
# and the same ping-pong with counter completions (fi_cntr_wait, as
# stock fi_rdm_cntr_pingpong) vs shm; an MPI ping-pong, HPCC's ring step and a rank's exchange with
# itself over MTL-OFI + gba vs Open MPI's ob1 + vader; a chained schedule
# (puts, barrier, puts) issued by the host vs as triggered work; and the
# 8-byte ping-pong and exchange layer by layer (a cache line, the fabric
# engine, the provider, MTL-OFI; ob1/vader beside them:
# gba_bench_msg_floor and the runs above), with what MTL-OFI adds per
# exchange.
#
# Usage: bench/run_bench.sh [BENCHDIR]
#   BENCHDIR holds gba_bench_barrier, gba_bench_floor, gba_bench_self_rma,
#   gba_bench_msg, gba_bench_msg_floor, gba_bench_trigger and
#   gba_bench_mpi_pingpong (default:
#   the directory of this script, i.e. an in-tree build).  The provider is
#   found through FI_PROVIDER_PATH as usual (`make bench` sets it to the
#   build tree; after `make install`, point it at $prefix/lib/libfabric).
# Environment: NPS (default "2 4 8"), ITERS (barriers per round),
#   REPS (runs of the message benchmark and of each MPI run, alternating
#   the two sides; the tables show medians; default 5), MSG_LAT_SIZES and
#   MSG_BW_SIZES (gba_bench_msg -S and -B lists), MSG_X_SIZES (its -X and
#   -L lists, default 8), CNTR_LAT_SIZES (the -S
#   list of the counter ping-pong), FRESH_SIZES (the -S and -B lists of
#   the fresh-data run, default 4k,8k,16k), TRIG_REPS (repetitions
#   of each way of gba_bench_trigger, default 50).
# The figures are printed, never checked: a failed or hung run is reported
# (exit status 1 at the end), slow figures are not.
set -e
dir=${1:-$(dirname "$0")}
. "$(dirname "$0")/bench_csv.sh"
nps=${NPS:-"2 4 8"}
iters=${ITERS:-20000}
mpirun=${MPIRUN:-mpirun}
reps=${REPS:-5}
msg_lat=${MSG_LAT_SIZES:-8,64,1k,4032,4k,8k,16k,64k}
msg_bw=${MSG_BW_SIZES:-4k,8k,16k,64k,1m}
cntr_lat=${CNTR_LAT_SIZES:-8,4k,16k}
fresh_sizes=${FRESH_SIZES:-4k,8k,16k}
msg_x=${MSG_X_SIZES:-8}
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tmo=
command -v timeout >/dev/null && tmo="timeout -k 5 120"

# Other work on the machine shows in every figure: say how busy it is.
if [ -r /proc/loadavg ]; then
	echo "machine: $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo ?) CPUs," \
		"load average $(cut -d' ' -f1-3 /proc/loadavg)," \
		"runnable now $(cut -d' ' -f4 /proc/loadavg | cut -d/ -f1)" \
		"(this script included)"
	echo
fi
echo "== self RMA (8-byte), single process"
"$dir/gba_bench_self_rma" -S 8

echo
echo "== barrier: gba fi_barrier + fi_cq_read (emulated device) vs MPI_Barrier" \
	"(--mca btl self,vader) vs the floor"
echo "   the floor: gba_bench_floor, a counter-and-release barrier in plain" \
	"shared memory (the emulated switch's"
echo "   pattern alone), run right after; pinned: rank i on CPU i modulo the" \
	"CPUs, in alternating rounds"
printf "%4s %6s %10s %10s %10s %9s %10s\n" np pinned gba_us mpi_us floor_us \
	mpi/gba gba/floor
csv_open barrier "np,pinned,gba_us,mpi_us,floor_us"
# forward the variables that are set (mpirun warns about unset ones)
xenv=
for v in FI_PROVIDER_PATH LD_LIBRARY_PATH GBA_DEVICE FI_GBA_DEVICE; do
	eval "[ -n \"\${$v+x}\" ]" && xenv="$xenv -x $v"
done
for np in $nps; do
	if ! $tmo $mpirun --allow-run-as-root --oversubscribe -np "$np" \
		--mca pml ob1 --mca btl self,vader --bind-to none $xenv \
		"$dir/gba_bench_barrier" -I "$iters" -P >"$tmp/out" \
		2>"$tmp/err" ||
		! $tmo "$dir/gba_bench_floor" -n "$np" -I "$iters" \
		>>"$tmp/out" 2>>"$tmp/err"; then
		echo "FAILED: barrier or floor, $np processes"
		cat "$tmp/out" "$tmp/err"
		status=1
		continue
	fi
	awk -v np="$np" -v csv="$(csv_file barrier)" '
	function val(key, i, kv) {
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == key)
				return kv[2]
		}
		return ""
	}
	$1 == "barrier" { g[0] = val("gba_us"); m[0] = val("mpi_us") }
	$1 == "barrier_pinned" { g[1] = val("gba_us"); m[1] = val("mpi_us") }
	$1 == "floor" { f[val("pin")] = val("floor_us") }
	END {
		for (p = 0; p < 2; p++) {
			pin = p ? "yes" : "no"
			speedup = g[p] > 0 ? m[p] / g[p] : 0
			ratio = f[p] > 0 ? g[p] / f[p] : 0
			printf "%4s %6s %10s %10s %10s %8.2fx %9.2fx\n", np,
				pin, g[p], m[p], f[p], speedup, ratio
			if (csv != "")
				printf "%s,%s,%s,%s,%s\n", np, pin, g[p], m[p],
					f[p] >>csv
		}
	}' "$tmp/out"
done

# table KIND FIELD FILE_A FILE_B NAME_A NAME_B UNIT KEYSIZE [CSV]
# Lines "KIND ... size=S ... FIELD=V" of two files (one line per run and
# size): per size, the median of each file's runs and their ratio A/B;
# then the ratio of each run pair (run i of A, run i of B) at KEYSIZE.
# With CSV, the medians also go to $BENCH_CSV/CSV.csv (size,A,B).
table() {
	csv=
	if [ -n "${9:-}" ]; then
		csv_open "$9" "size,${5}_$7,${6}_$7"
		csv=$(csv_file "$9")
	fi
	awk -v kind="$1" -v field="$2" -v na="$5" -v nb="$6" -v unit="$7" \
		-v key="$8" -v csv="$csv" '
	function med(list, v, n, i, j, t) {
		n = split(list, v)
		for (i = 2; i <= n; i++) {
			t = v[i] + 0
			for (j = i - 1; j >= 1 && v[j] + 0 > t; j--)
				v[j + 1] = v[j]
			v[j + 1] = t
		}
		if (n == 0)
			return ""
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	$1 == kind {
		col = FILENAME == ARGV[1] ? "a" : "b"
		size = val = ""
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "size")
				size = kv[2]
			else if (kv[1] == field)
				val = kv[2]
		}
		if (!(size in seen)) {
			seen[size] = 1
			order[++n] = size
		}
		vals[col, size] = vals[col, size] " " val
	}
	END {
		fmt = unit == "us" ? "%.3f" : unit == "ns" ? "%.1f" : "%.0f"
		printf "%8s %12s %12s %9s\n", "size", na "_" unit, nb "_" unit,
			na "/" nb
		for (k = 1; k <= n; k++) {
			s = order[k]
			a = med(vals["a", s])
			b = med(vals["b", s])
			r = (a != "" && b != "" && b > 0) ? \
				sprintf("%8.2fx", a / b) : "        -"
			printf "%8s %12s %12s %9s\n", s, \
				a == "" ? "-" : sprintf(fmt, a), \
				b == "" ? "-" : sprintf(fmt, b), r
			if (csv != "")
				printf "%s,%s,%s\n", s, a, b >>csv
		}
		na_ = split(vals["a", key], ra)
		nb_ = split(vals["b", key], rb)
		if (na_ > 1 && na_ == nb_) {
			printf "  per run, size %s:", key
			for (i = 1; i <= na_; i++)
				printf " %.2f", ra[i] / rb[i]
			printf "\n"
		}
	}' "$3" "$4"
}

echo
echo "== chained schedule (16 puts of 1 KiB to the right neighbour, GBA" \
	"barrier, 16 puts): host-issued vs triggered"
echo "   gba_bench_trigger: both ways in the same processes, alternating;" \
	"medians of the slowest process;"
echo "   trig includes queueing the schedule, trig_go starts at its" \
	"fi_cntr_add; ratio > 1: triggered is faster"
printf "%-8s %4s %10s %10s %10s %10s %12s\n" progress np host_us trig_us \
	trig_go_us host/trig host/trig_go
for prog in manual auto; do
	for np in $nps; do
		if ! FI_GBA_PROGRESS=$prog $tmo "$dir/gba_bench_trigger" \
			-n "$np" -I "${TRIG_REPS:-50}" >"$tmp/out" 2>"$tmp/err"; then
			echo "FAILED: FI_GBA_PROGRESS=$prog" \
				"$dir/gba_bench_trigger -n $np"
			cat "$tmp/out" "$tmp/err"
			status=1
			continue
		fi
		sed -n 's/^trigger np=\([0-9]*\).*host_us=\([0-9.]*\) trig_us=\([0-9.]*\) trig_go_us=\([0-9.]*\) host\/trig=\([0-9.]*\) host\/trig_go=\([0-9.]*\)/\1 \2 \3 \4 \5 \6/p' \
			"$tmp/out" | awk -v p="$prog" '{ printf "%-8s %4s %10s %10s %10s %9sx %11sx\n", p, $1, $2, $3, $4, $5, $6 }'
	done
done

# msg_runs FILE KINDS ARGS...: $reps runs of gba_bench_msg -p gba,shm
# (shm,gba every other run) with ARGS; the lines of KINDS (an -E
# alternative: 'lat|bw') into FILE, then FILE.gba and FILE.shm by
# provider.  A failed run is reported (status 1), the others kept.
msg_runs() {
	file=$1 kinds=$2
	shift 2
	: >"$file"
	r=1
	while [ "$r" -le "$reps" ]; do
		provs=gba,shm
		[ $((r % 2)) = 0 ] && provs=shm,gba
		if ! "$dir/gba_bench_msg" -p "$provs" -T 120 "$@" \
			>"$tmp/out" 2>"$tmp/err"; then
			echo "FAILED: $dir/gba_bench_msg -p $provs $*"
			cat "$tmp/out" "$tmp/err"
			status=1
		fi
		grep -E "^($kinds) " "$tmp/out" >>"$file" || true
		r=$((r + 1))
	done
	grep ' prov=gba ' "$file" >"$file.gba" || true
	grep ' prov=shm ' "$file" >"$file.shm" || true
}

echo
echo "== tagged messages, 2 forked processes: gba vs libfabric shm" \
	"(FI_PROVIDER=gba,shm), $reps runs"
echo "   gba_bench_msg -p gba,shm: both providers in the same processes," \
	"alternating rounds; fi_tinject up to"
echo "   inject_size, fi_tsend above; bandwidth: window of 64 fi_tsend;" \
	"exchange: both send at once"
echo "   (fi_trecv, fi_tsend with a completion, as MTL-OFI's MPI_Isend);" \
	"self exchange: one process with itself"
msg_runs "$tmp/msg" 'lat|xlat|slat|bw' -S "$msg_lat" -X "$msg_x" \
	-L "$msg_x" -B "$msg_bw"
echo "latency, half round trip (median of runs; target at 8 B: gba/shm <= 0.70)"
table lat us "$tmp/msg.gba" "$tmp/msg.shm" gba shm us 8 msg_lat
echo "bandwidth (median of runs; target at 1 MiB: gba/shm >= 1.00)"
table bw MBps "$tmp/msg.gba" "$tmp/msg.shm" gba shm MBps 1048576 msg_bw
echo "exchange, both processes at once (median of runs)"
table xlat us "$tmp/msg.gba" "$tmp/msg.shm" gba shm us 8 msg_xlat
echo "self exchange, one process with itself (median of runs)"
table slat us "$tmp/msg.gba" "$tmp/msg.shm" gba shm us 8 msg_slat

echo
echo "== medium messages with fresh data, 2 forked processes: gba vs shm," \
	"$reps runs"
echo "   gba_bench_msg -F -p gba,shm: every payload written right before" \
	"its send (in the timed loop, alike for"
echo "   both), as an application sends data it has just produced; the" \
	"tables above resend an unchanged buffer"
msg_runs "$tmp/fresh" 'flat|fbw' -F -S "$fresh_sizes" -B "$fresh_sizes"
echo "latency, half round trip (median of runs)"
table flat us "$tmp/fresh.gba" "$tmp/fresh.shm" gba shm us 8192 fresh_lat
echo "bandwidth (median of runs)"
table fbw MBps "$tmp/fresh.gba" "$tmp/fresh.shm" gba shm MBps 8192 fresh_bw

echo
echo "== counter ping-pong, 2 forked processes: gba vs shm, $reps runs"
echo "   gba_bench_msg -c -p gba,shm: completions counted (a counter bound" \
	"FI_SEND, one FI_RECV, CQ bound"
echo "   FI_SELECTIVE_COMPLETION), every wait a fi_cntr_wait: the objects" \
	"and waits of stock fi_rdm_cntr_pingpong"
msg_runs "$tmp/cntr" clat -c -S "$cntr_lat" -B none
echo "latency, half round trip (median of runs)"
table clat us "$tmp/cntr.gba" "$tmp/cntr.shm" gba shm us 8 cntr_lat

echo
echo "== MPI ping-pong, 2 ranks: --mca pml cm --mca mtl ofi" \
	"-x FI_PROVIDER=gba vs --mca pml ob1 --mca btl self,vader, $reps runs each"
if [ -x "$dir/gba_bench_mpi_pingpong" ]; then
	mpi_opts="--allow-run-as-root --oversubscribe --bind-to none -np 2 $xenv"
	: >"$tmp/mpi.gba"
	: >"$tmp/mpi.vader"
	: >"$tmp/mpi.slat"
	r=1
	while [ "$r" -le "$reps" ]; do
		order="gba vader"
		[ $((r % 2)) = 0 ] && order="vader gba"
		for p in $order; do
			if [ "$p" = gba ]; then
				mca="--mca pml cm --mca mtl ofi -x FI_PROVIDER=gba"
				# the provider's self exchange just before,
				# for what MTL-OFI adds (the VM's speed
				# drifts between sections)
				"$dir/gba_bench_msg" -p gba -S none -B none \
					-L 8 -r 5 >"$tmp/out" 2>&1 || true
				sed -n 's/^slat prov=gba size=8 .* us=//p' \
					"$tmp/out" >>"$tmp/mpi.slat"
			else
				mca="--mca pml ob1 --mca btl self,vader"
			fi
			if ! $tmo $mpirun $mpi_opts $mca \
				"$dir/gba_bench_mpi_pingpong" >"$tmp/out" \
				2>"$tmp/err"; then
				echo "FAILED: $mpirun $mpi_opts $mca" \
					"$dir/gba_bench_mpi_pingpong"
				cat "$tmp/out" "$tmp/err"
				status=1
			fi
			grep -E '^mpi(_bw|_ring|_self|_test)? ' "$tmp/out" \
				>>"$tmp/mpi.$p" || true
		done
		r=$((r + 1))
	done
	echo "latency, half round trip (median of runs)"
	table mpi us "$tmp/mpi.gba" "$tmp/mpi.vader" gba vader us 8 mpi_lat
	echo "ring step (HPCC's ring latency test with 2 ranks: two" \
		"MPI_Irecv, two MPI_Isend, MPI_Waitall)"
	table mpi_ring us "$tmp/mpi.gba" "$tmp/mpi.vader" gba vader us 8 \
		mpi_ring
	echo "self exchange (rank 0 with itself: MPI_Irecv, MPI_Isend," \
		"MPI_Waitall; over btl self for ob1)"
	table mpi_self us "$tmp/mpi.gba" "$tmp/mpi.vader" gba vader us 8 \
		mpi_self
	echo "an MPI_Test that finds nothing, both ranks at once (what" \
		"every poll of a program costs)"
	table mpi_test ns "$tmp/mpi.gba" "$tmp/mpi.vader" gba vader ns 0 \
		mpi_test
	echo "bandwidth, window of 64 MPI_Isend (median of runs)"
	table mpi_bw MBps "$tmp/mpi.gba" "$tmp/mpi.vader" gba vader MBps \
		1048576
else
	echo "skipped: no $dir/gba_bench_mpi_pingpong (built with Open MPI)"
fi

echo
echo "== 8-byte ping-pong, layer by layer (half round trip, medians of" \
	"the runs above; floor: $reps runs of"
echo "   gba_bench_msg_floor): what each layer adds per message, and how" \
	"far ob1/vader's whole stack is"
: >"$tmp/floor"
r=1
while [ "$r" -le "$reps" ]; do
	if ! $tmo "$dir/gba_bench_msg_floor" >"$tmp/out" 2>"$tmp/err"; then
		echo "FAILED: $dir/gba_bench_msg_floor"
		cat "$tmp/out" "$tmp/err"
		status=1
	fi
	cat "$tmp/out" >>"$tmp/floor"
	r=$((r + 1))
done
# med <file> <line prefix regexp> <field=>: the median of field's values
med() {
	grep -E "$2" "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$3=//p" |
		sort -n | awk '{ a[++n] = $1 }
		END { if (n) print n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }'
}
line_us=$(med "$tmp/floor" '^floor line ' us)
eng_us=$(med "$tmp/floor" '^floor eng ' us)
prov_us=$(med "$tmp/msg.gba" '^lat prov=gba size=8 ' us)
ofi_us=$(med "$tmp/mpi.gba" '^mpi size=8 ' us)
vader_us=$(med "$tmp/mpi.vader" '^mpi size=8 ' us)
printf '%-44s %9s %9s\n' layer us "+us"
prev=
for row in "a cache line between 2 processes:$line_us" \
	"fabric engine (gba_eng_send/progress):$eng_us" \
	"provider (fi_tinject, fi_trecv, fi_cq_read):$prov_us" \
	"Open MPI, pml cm + mtl ofi over gba:$ofi_us"; do
	v=${row##*:}
	[ -n "$v" ] || continue
	printf '%-44s %9s %9s\n' "${row%:*}" "$v" \
		"$(awk -v a="$v" -v b="$prev" 'BEGIN { if (b != "") printf "%.3f", a - b; else print "-" }')"
	prev=$v
done
[ -z "$vader_us" ] || printf '%-44s %9s   (%s of the cache line)\n' \
	"Open MPI, pml ob1 + btl vader:" "$vader_us" \
	"$(awk -v a="$vader_us" -v b="$line_us" 'BEGIN { if (b > 0) printf "%.2fx", a / b }')"

echo
echo "== 8-byte exchange (a receive and a send with a completion, each" \
	"side), layer by layer: medians of the runs above"
# the provider's self exchange measured right before each MPI run
sx_us=$(sort -n "$tmp/mpi.slat" 2>/dev/null | awk '{ a[++n] = $1 }
	END { if (n) print n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }')
x_us=$(med "$tmp/msg.gba" '^xlat prov=gba size=8 ' us)
msx_us=$(med "$tmp/mpi.gba" '^mpi_self size=8 ' us)
ring_us=$(med "$tmp/mpi.gba" '^mpi_ring size=8 ' us)
vsx_us=$(med "$tmp/mpi.vader" '^mpi_self size=8 ' us)
vring_us=$(med "$tmp/mpi.vader" '^mpi_ring size=8 ' us)
printf '%-58s %9s\n' layer us
for row in "provider, one process with itself (slat, before MPI's):$sx_us" \
	"Open MPI over MTL-OFI gba, rank 0 with itself:$msx_us" \
	"Open MPI ob1 + btl self, rank 0 with itself:$vsx_us" \
	"provider, 2 processes (xlat):$x_us" \
	"Open MPI over MTL-OFI gba, ring step (2 exchanges):$ring_us" \
	"Open MPI ob1 + btl vader, ring step (2 exchanges):$vring_us"; do
	[ -n "${row##*:}" ] && printf '%-58s %9s\n' "${row%:*}" "${row##*:}"
done
# What MTL-OFI and pml cm add per exchange (both loopbacks run in one
# process, no cache line crossing CPUs), and what that leaves the
# provider for a ring step within 1.1x of ob1/vader's.
if [ -n "$sx_us" ] && [ -n "$msx_us" ] && [ -n "$vring_us" ]; then
	awk -v sx="$sx_us" -v msx="$msx_us" -v vr="$vring_us" -v x="$x_us" '
	BEGIN {
		mtl = msx - sx
		printf "MTL-OFI + pml cm add %.3f us per exchange (%.0f%% of" \
			" ob1/vader'"'"'s whole exchange, %.3f us)\n", mtl,
			100 * mtl / (vr / 2), vr / 2
		left = 1.1 * vr / 2 - mtl
		printf "left to the provider per exchange at 1.1x ob1/vader:" \
			" %.3f us; its exchange now: %s us\n", left, x
	}'
fi
exit $status
