#!/bin/sh
# HPC Challenge (Debian's hpcc, unmodified) over the project's two front
# ends next to Open MPI's own shared memory, in the same run (figures
# printed, never checked):
#   - MTL-OFI:  --mca pml cm --mca mtl ofi -x FI_PROVIDER=gba
#     next to   --mca pml ob1 --mca btl self,vader
#   - PML-UCX:  --mca pml ucx -x UCX_TLS=gba,self (the transport preloaded)
#     next to   --mca pml ucx -x UCX_TLS=posix,self
#     (both with --mca pml_ucx_tls any --mca pml_ucx_devices any: Open MPI
#     4.1's PML-UCX otherwise declines every shared-memory-only transport)
# HPCC's communication figures: ping-pong latency (its largest pair),
# naturally and randomly ordered ring latency (every rank sends 8 bytes
# to its ring neighbours at once) and bandwidth, MPIRandomAccess (every
# rank sends small update messages to random peers) and PTRANS (a matrix
# transpose: every rank exchanges blocks with every other).  Runs
# alternate between the configurations; the tables show the medians of
# REPS runs (default 3) and, per pair, the cost ratio: time over time for
# latencies, rate over rate inverted for rates, so that > 1 means the
# project's side is slower.  HPL, DGEMM, STREAM and FFT run too (HPCC has
# no switch to skip them) on a small problem (N = 1000).
# Usage: bench/run_hpcc_bench.sh   (NP ranks, default 2; MODULE: the UCX
#   transport, default the build tree's ucx/uct_gba/.libs/libuct_gba.so)
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
mod=${MODULE:-$top_builddir/ucx/uct_gba/.libs/libuct_gba.so}
np=${NP:-2}
reps=${REPS:-3}
mpirun=${MPIRUN:-mpirun}
inf=/usr/share/doc/hpcc/examples/_hpccinf.txt
if ! command -v hpcc >/dev/null 2>&1 || [ ! -r "$inf" ] ||
	! command -v "$mpirun" >/dev/null 2>&1; then
	echo "skipped: no hpcc (Debian package hpcc) or no $mpirun"
	exit 0
fi
[ -f "$mod" ] && mod=$(cd "$(dirname "$mod")" && pwd)/$(basename "$mod")
. "$top_srcdir/bench/bench_csv.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
tmo=
command -v timeout >/dev/null && tmo="timeout -k 5 600"

if [ -r /proc/loadavg ]; then
	echo "machine: $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo ?) CPUs," \
		"load average $(cut -d' ' -f1-3 /proc/loadavg)"
fi
# the example input with a 1 x NP process grid
sed -e "s/^2 *Ps/1            Ps/" -e "s/^2 *Qs/$np            Qs/" \
	"$inf" >"$tmp/hpccinf.txt"

xenv=
for v in FI_PROVIDER_PATH LD_LIBRARY_PATH GBA_DEVICE FI_GBA_DEVICE; do
	eval "[ -n \"\${$v+x}\" ]" && xenv="$xenv -x $v"
done
opts="--allow-run-as-root --oversubscribe --bind-to none -np $np $xenv"

# run CONFIG: one hpcc run of CONFIG; appends its summary to $tmp/CONFIG
run() {
	case $1 in
	ofi_gba) mca="--mca pml cm --mca mtl ofi -x FI_PROVIDER=gba" ;;
	vader) mca="--mca pml ob1 --mca btl self,vader" ;;
	ucx_gba)
		[ -f "$mod" ] || return 0
		mca="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
		mca="$mca -x UCX_TLS=gba,self"
		mca="$mca -x LD_PRELOAD=$mod"
		;;
	ucx_posix)
		mca="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
		mca="$mca -x UCX_TLS=posix,self"
		;;
	esac
	rm -rf "$tmp/run"
	mkdir "$tmp/run"
	cp "$tmp/hpccinf.txt" "$tmp/run/"
	if ! (cd "$tmp/run" && $tmo $mpirun $opts $mca hpcc \
		>"$tmp/out" 2>&1) ||
		! grep -q '^Success=1' "$tmp/run/hpccoutf.txt"; then
		echo "FAILED: $mpirun $opts $mca hpcc"
		tail -20 "$tmp/out"
		status=1
		return 0
	fi
	grep -E '^(MaxPingPongLatency_usec|NaturallyOrderedRingLatency_usec|RandomlyOrderedRingLatency_usec|RandomlyOrderedRingBandwidth_GBytes|MPIRandomAccess_GUPs|PTRANS_GBs)=' \
		"$tmp/run/hpccoutf.txt" >>"$tmp/$1"
}

r=1
while [ "$r" -le "$reps" ]; do
	order="ofi_gba vader ucx_gba ucx_posix"
	[ $((r % 2)) = 0 ] && order="ucx_posix ucx_gba vader ofi_gba"
	for c in $order; do
		run $c
	done
	r=$((r + 1))
done

# table A B: the medians of every figure for configurations A and B
table() {
	csv_open "hpcc_$1" "figure,$1,$2"
	printf "%-38s %12s %12s %8s\n" figure "$1" "$2" "cost"
	cat "$tmp/$1" 2>/dev/null | sed 's/^/A /' >"$tmp/ab"
	cat "$tmp/$2" 2>/dev/null | sed 's/^/B /' >>"$tmp/ab"
	awk -v csv="$(csv_file "hpcc_$1")" '
	function med(s, a, k, i, j, t) {
		k = split(s, a)
		for (i = 2; i <= k; i++) {
			t = a[i]
			for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--)
				a[j + 1] = a[j]
			a[j + 1] = t
		}
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	{
		split($2, kv, "=")
		v[$1, kv[1]] = v[$1, kv[1]] " " kv[2]
		if (!(kv[1] in seen)) {
			seen[kv[1]] = 1
			order[++n] = kv[1]
		}
	}
	END {
		for (i = 1; i <= n; i++) {
			f = order[i]
			a = med(v["A", f]); b = med(v["B", f])
			# latencies: a / b; rates: b / a (> 1: A slower)
			if (f ~ /_usec$/)
				c = b > 0 ? a / b : 0
			else
				c = a > 0 ? b / a : 0
			printf "%-38s %12.6g %12.6g %7.2fx\n", f, a, b, c
			if (csv != "")
				printf "%s,%s,%s\n", f, a, b >>csv
		}
	}' "$tmp/ab"
}

echo
echo "== HPCC, $np ranks, MTL-OFI gba vs ob1/vader (median of $reps runs)"
table ofi_gba vader
echo
echo "== HPCC, $np ranks, PML-UCX gba,self vs posix,self (median of $reps runs)"
if [ -f "$mod" ]; then
	table ucx_gba ucx_posix
else
	echo "skipped: no $mod"
fi
exit $status
