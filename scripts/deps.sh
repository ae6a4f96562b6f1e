#!/bin/sh
# Install the Debian 12 packages the project builds, runs and tests with.
#
# The UCX transport (ucx/uct_gba) is built against the internal headers of
# the installed UCX, which only its source package has: a deb-src entry is
# added (mirroring the deb entries) so that the build can run
# `apt-get source ucx=<installed version>` (ucx/uct_gba/fetch-ucx-src.sh).
# libnuma-dev and libibverbs-dev are among the build dependencies of Debian's
# UCX and shape its config.h the same way here.  gdb prints the stacks of a
# test's processes when it times out (test/hang_dump.sh).  MPICH (mpich,
# libmpich-dev) is installed beside Open MPI for the barrier-offload
# library's MPICH build and tests; Open MPI stays the default mpirun/mpicc
# (Debian's alternatives rank it first; checked below).  clang with
# libFuzzer (libclang-rt-14-dev) builds the fuzz harnesses
# (configure --enable-fuzzing, fuzz/).  environment-modules loads the
# installed modulefile in test/install/installed.sh (Lmod, which Debian
# offers instead of it, reads the same file).  gnuplot-nox draws the
# figures of `make bench` (bench/plot_bench.sh).  libjson-c-dev builds
# gba_stat's --json output; jq reads it in test/core/gba_stat.sh.
# openssh-server, openssh-client, iproute2 and util-linux (unshare,
# nsenter, setsid, flock) make the emulated hosts of scripts/emu_hosts.sh
# (test/hosts); the system sshd the package may start listens in the root
# network namespace and does not meet the hosts' own sshds, each in its
# host's namespace.  hpcc (HPC Challenge, unmodified) runs in `make
# bench-hpcc` (bench/run_hpcc_bench.sh).
set -e
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
PKGS="build-essential autoconf automake libtool pkg-config
      libfabric-dev libfabric-bin uthash-dev libcriterion-dev
      openmpi-bin libopenmpi-dev mpich libmpich-dev gfortran valgrind gdb
      libucx-dev ucx-utils dpkg-dev xz-utils libnuma-dev libibverbs-dev
      clang libclang-rt-14-dev environment-modules gnuplot-nox libjson-c-dev jq
      openssh-server openssh-client iproute2 util-linux hpcc"

update=
# deb-src entries: keep any the machine has; otherwise mirror the deb ones.
if ! grep -qs '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list \
	/etc/apt/sources.list.d/*.list &&
   ! grep -qsi '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources; then
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		sed 's/^\(Types:[[:space:]]*\)deb[[:space:]]*$/\1deb-src/' \
			/etc/apt/sources.list.d/debian.sources |
			$SUDO tee /etc/apt/sources.list.d/gba-deb-src.sources >/dev/null
	else
		grep -hs '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list \
			/etc/apt/sources.list.d/*.list |
			sed 's/^\([[:space:]]*\)deb\([[:space:]]\)/\1deb-src\2/' |
			$SUDO tee /etc/apt/sources.list.d/gba-deb-src.list >/dev/null
	fi
	update=yes
fi
# The source index must be there too (the entry may predate the last update).
apt-cache showsrc ucx 2>/dev/null | grep -q '^Package: ucx' || update=yes

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] || update=yes
if [ -n "$update" ]; then
	$SUDO apt-get update -qq
fi
if [ -n "$missing" ]; then
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

# Open MPI stays the default MPI (mpirun, mpicc) with MPICH beside it.
for alt in mpirun:mpirun.openmpi mpi:mpicc.openmpi; do
	name=${alt%%:*}
	want=/usr/bin/${alt#*:}
	if [ -x "$want" ] && [ "$(readlink "/etc/alternatives/$name")" != "$want" ]; then
		$SUDO update-alternatives --set "$name" "$want"
	fi
done
