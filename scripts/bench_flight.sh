#!/usr/bin/env bash
# bench_flight.sh - the flight recorder (FEEDTRACE_FLIGHT, libfeedtrace/
# flight.c): tests/progs/flight_loop runs 300 steps of 2,000 preads each
# (600,000 records), traced to the file, traced with FEEDTRACE_FLIGHT=60s
# (nothing written) and with FEEDTRACE_FLIGHT=256KiB, in the same
# invocation: best of 5 runs of each, user+system CPU of the process (its
# flusher included), its peak RSS, and the bytes in the trace file. Then
# the idle cost of a flusher cycle: one step that sleeps 5 s with
# FEEDTRACE_FLUSH_MS=10 (about 500 cycles), with and without the flight
# recorder. Prints a markdown section on stdout, for docs/BENCHMARKS.md.
#
#   BUILD=dir      where libfeedtrace.so and tests/flight_loop are (default build)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LIB=$BUILD/libfeedtrace.so
PROG=$BUILD/tests/flight_loop
[ -x "$PROG" ] && [ -f "$LIB" ] || { echo "bench_flight: $PROG or $LIB missing: run make first" >&2; exit 2; }
SCRATCH=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/ftflight.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
head -c 4096 /dev/zero > "$SCRATCH/data"

# "cpu_ms rss_kib bytes": the best CPU of 5 runs, with that run's peak RSS
# and trace bytes; $1.. the environment's extra settings, then -- and argv
best() {
    local b="" line=""
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    for _ in 1 2 3 4 5; do
        rm -rf "$SCRATCH/trace"
        local o
        o=$(env LD_PRELOAD="$LIB" FEEDTRACE_OUT="$SCRATCH/trace" "${envs[@]}" \
            /usr/bin/time -f '%U %S %M' "$@" 2>&1 >/dev/null | tail -1)
        local t rss bytes
        t=$(echo "$o" | awk '{ printf "%d", ($1 + $2) * 1000 }')
        rss=$(echo "$o" | awk '{ print $3 }')
        bytes=$(cat "$SCRATCH"/trace/*.ft | wc -c)
        if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; line="$t $rss $bytes"; fi
    done
    echo "$line"
}

BUSY=("$PROG" "$SCRATCH/data" 300 2000 0 exit)
IDLE=("$PROG" "$SCRATCH/data" 1 0 5000 exit)
echo "## 17. Recorder: the flight recorder's cost and memory"
echo
echo "\`tests/progs/flight_loop\` (-O2): 300 steps of 2,000 preads (600,000 records), traced to the file, with \`FEEDTRACE_FLIGHT=60s\` (everything kept, nothing written) and \`=256KiB\` (the last 256 KiB kept): best of 5 runs each in the same invocation, user+system CPU of the process (the flusher included), its peak RSS, the trace file's bytes (\`scripts/bench_flight.sh\`)."
echo
echo "| arm | CPU | peak RSS | file |"
echo "|---|---:|---:|---:|"
read -r c0 r0 f0 <<< "$(best FEEDTRACE_X=0 -- "${BUSY[@]}")"
read -r c1 r1 f1 <<< "$(best FEEDTRACE_FLIGHT=60s -- "${BUSY[@]}")"
read -r c2 r2 f2 <<< "$(best FEEDTRACE_FLIGHT=256KiB -- "${BUSY[@]}")"
echo "| to the file | $c0 ms | $r0 KiB | $f0 B |"
echo "| FLIGHT=60s | $c1 ms | $r1 KiB (+$((r1 - r0))) | $f1 B |"
echo "| FLIGHT=256KiB | $c2 ms | $r2 KiB (+$((r2 - r0))) | $f2 B |"
echo
read -r i0 _ _ <<< "$(best FEEDTRACE_FLUSH_MS=10 -- "${IDLE[@]}")"
read -r i1 _ _ <<< "$(best FEEDTRACE_FLUSH_MS=10 FEEDTRACE_FLIGHT=60s FEEDTRACE_FLIGHT_HANG_S=60 -- "${IDLE[@]}")"
echo "Idle, one step sleeping 5 s with \`FEEDTRACE_FLUSH_MS=10\` (about 500 flusher cycles): $i0 ms of CPU without the flight recorder, $i1 ms with it and a hang time (a \`newfstatat\` of the request file per cycle); the CPU time's resolution is 10 ms, 20 us a cycle here: a difference within it says the cycle's cost is below it."
