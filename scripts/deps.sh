#!/bin/sh
# scripts/deps.sh [bench]: installs the Debian packages feedtrace needs that
# are missing (build and tests; with "bench" also the peers it is compared
# with). Does nothing when everything is there.
set -e
pkgs="gcc make libc6-dev libzstd-dev libunwind-dev libprotobuf-c-dev protobuf-c-compiler libjson-c-dev
      protobuf-compiler libcmocka-dev libdw-dev libiberty-dev python3 python3-dev python3-pytest python3-numpy python3-torch
      clang libclang-rt-14-dev
      libjemalloc2 faketime libfaketime valgrind
      chromium"
if [ "$1" = bench ]; then
	pkgs="$pkgs strace ltrace uftrace hyperfine lttng-tools liblttng-ust-dev"
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "feedtrace: installing Debian packages:$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq $missing >/dev/null
