#!/bin/sh
# Test job on a new Debian 12 machine: install the packages, build from
# scratch, run `make check` (unit, multi-process, stock-libfabric and Open
# MPI tests) and `make check-ucx-gtest` (UCX's own UCT test suites for the
# gba transport), then `make check` built with ASan+UBSan, then the
# single-process tests under valgrind.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
./scripts/deps.sh
./autogen.sh >/dev/null 2>&1

build() {	# build <dir> <configure args...>
	dir=$1; shift
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$dir" && ../configure --quiet "$@" && make -j"$(nproc)" --quiet)
}

echo "== make check"
build _build
(cd _build && make check -j"$(nproc)") || { cat _build/test-suite.log 2>/dev/null; exit 1; }

echo "== make check-ucx-gtest (UCX's own UCT test suites)"
(cd _build && make check-ucx-gtest -j"$(nproc)")

echo "== make check (ASan+UBSan)"
build _build-san --enable-sanitizers
(cd _build-san && make check -j"$(nproc)") || { cat _build-san/test-suite.log 2>/dev/null; exit 1; }

echo "== make check-valgrind (single-process tests)"
(cd _build && make check-valgrind)
echo "== all tests passed"
