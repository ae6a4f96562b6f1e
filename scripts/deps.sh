#!/bin/sh
# Install the Debian 12 packages the project builds, runs and tests with.
set -e
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
PKGS="build-essential autoconf automake libtool pkg-config
      libfabric-dev libfabric-bin uthash-dev libcriterion-dev
      openmpi-bin libopenmpi-dev valgrind"
missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	$SUDO apt-get update
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
fi
