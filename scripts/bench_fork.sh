#!/bin/sh
# scripts/bench_fork.sh: fork latency beside a busy writer thread, zstd at
# level 1 and 19 (tests/progs/exit_forkstorm.c). Run by scripts/bench.sh;
# prints one line per run. LIB=path compares another libfeedtrace.so.
set -e
BUILD=${BUILD:-build}
LIB=${LIB:-$BUILD/libfeedtrace.so}
PROG=$BUILD/tests/exit_forkstorm
[ -x "$PROG" ] || make -s "$PROG"
N=${FORKS:-200}
echo "fork latency: $N forks, writer thread busy, FEEDTRACE_FLUSH_MS=10"
printf '  %-10s ' untraced; "$PROG" "$N"
for level in 1 19; do
	out=$(mktemp -d)
	printf '  zstd %-5s ' "$level"
	LD_PRELOAD=$LIB FEEDTRACE_OUT=$out FEEDTRACE_ZSTD_LEVEL=$level FEEDTRACE_FLUSH_MS=10 "$PROG" "$N"
	rm -rf "$out"
done
