# Sourced by the test/coll drivers: locate the conformance programs of the
# build tree and remove the test's private emulated device image
# (GBA_DEVICE=emu:/NAME from TESTS_ENVIRONMENT) when the driver exits.
ft=${top_builddir:-.}/fabtests
case "$GBA_DEVICE" in
emu:/*) trap 'rm -f "/dev/shm/${GBA_DEVICE#emu:/}"' EXIT ;;
esac
# Run one program, echo its command line first.
run() {
	echo "+ $*"
	"$@"
}
