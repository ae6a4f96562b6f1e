# Sourced by the test/mpi drivers after setting prog=<program name>.
# Skips (77) without mpirun or without the program (configure found no
# MPI); removes the test's private emulated device image
# (GBA_DEVICE=emu:/NAME from TESTS_ENVIRONMENT) when the driver exits.
#
# mpi_run NP [ARGS...] runs $bindir/$prog with NP ranks over
#   --mca pml cm --mca mtl ofi -x FI_PROVIDER=gba (plus $MPI_EXTRA) and
#   fails unless mpirun succeeds and every rank's MTL-OFI reported the
#   provider gba (mtl_base_verbose: "mtl:ofi:provider: gba").
# Environment: MPIRUN (unset: mpirun from PATH; empty: skip),
#   MPI_TIMEOUT (seconds per run, default 120).  A run that times out
#   prints its ranks' stacks (test/hang_dump.sh, 30 s before the kill).
bindir=${top_builddir:-.}/test/mpi
mpirun=${MPIRUN-mpirun}
if [ -z "$mpirun" ] || ! command -v "$mpirun" >/dev/null 2>&1; then
	echo "SKIP: no mpirun (configure found no Open MPI)"
	exit 77
fi
if [ ! -x "$bindir/$prog" ]; then
	echo "SKIP: $bindir/$prog not built (configure found no Open MPI)"
	exit 77
fi
tmp=$(mktemp "${TMPDIR:-/tmp}/gba-mpi.XXXXXX") || exit 99
case "$GBA_DEVICE" in
emu:/*) trap 'rm -f "/dev/shm/${GBA_DEVICE#emu:/}" "$tmp" "$tmp.stacks"' EXIT ;;
*) trap 'rm -f "$tmp" "$tmp.stacks"' EXIT ;;
esac
hang_dump=${top_srcdir:-$(dirname "$0")/../..}/test/hang_dump.sh
# forward the variables that are set (mpirun warns about unset ones)
xenv=
for v in FI_PROVIDER_PATH LD_LIBRARY_PATH GBA_DEVICE FI_GBA_DEVICE \
	FI_LOG_LEVEL; do
	eval "[ -n \"\${$v+x}\" ]" && xenv="$xenv -x $v"
done
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout -k 10 ${MPI_TIMEOUT:-120}"

mpi_run() {
	np=$1
	shift
	set -- $tmo "$mpirun" --allow-run-as-root --oversubscribe \
		--bind-to none -np "$np" --mca pml cm --mca mtl ofi \
		--mca mtl_base_verbose 100 $MPI_EXTRA \
		-x FI_PROVIDER=gba $xenv "$bindir/$prog" "$@"
	echo "+ $*"
	# a hang: the ranks' stacks, taken just before timeout kills them
	watchdog=
	if [ -n "$tmo" ]; then
		(sleep $((${MPI_TIMEOUT:-120} - 30)) &&
			sh "$hang_dump" "$(cd "$bindir" && pwd)/$prog" \
				>"$tmp.stacks" 2>&1) &
		watchdog=$!
	fi
	"$@" >"$tmp" 2>&1
	rc=$?
	if [ -n "$watchdog" ]; then
		kill "$watchdog" 2>/dev/null
		wait "$watchdog" 2>/dev/null
	fi
	# the program's output, without the MCA framework chatter
	grep -v -e '\] mca: *base' -e '\] mca:base:' -e '\] select: ' \
		-e 'mtl:ofi:provider:' "$tmp"
	ngba=$(grep -c 'mtl:ofi:provider: gba *$' "$tmp")
	echo "  (MTL-OFI provider gba in $ngba of $np ranks; exit $rc)"
	if [ "$rc" != 0 ]; then
		echo "FAIL: $prog with $np ranks exited with $rc"
		grep 'mtl:ofi:provider:' "$tmp"
		[ "$rc" = 124 ] && cat "$tmp.stacks" 2>/dev/null
		exit 1
	fi
	if [ "$ngba" != "$np" ]; then
		echo "FAIL: $prog with $np ranks: MTL-OFI did not report provider" \
			"gba in every rank:"
		grep 'mtl:ofi:provider:' "$tmp" || echo "  (no provider line)"
		exit 1
	fi
}
