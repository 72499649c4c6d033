#!/usr/bin/env bash
# bench_convert.sh - converter throughput, peak memory and output size on
# large synthetic traces. Prints a markdown table on stdout (progress and
# the generator's lines on stderr), for docs/BENCHMARKS.md.
#
# Usage: scripts/bench_convert.sh [SIZE_M ...]     (default: 5 20 50)
#   BUILD=dir      where build/feedtrace is (default build); the generator
#                  is compiled to $BUILD/bench/gen_events
#   THREADS=n      passed as `--threads n` to the converter (default: not
#                  passed, so the converter's default: 2 threads, 1 on a
#                  single CPU)
#   BENCH_TMP=dir  scratch space (default $TMPDIR or /tmp): about 30 bytes
#                  of trace and 75 of .pftrace per event at the largest size,
#                  each size's files removed before the next
#
# Each size: tests/bench/gen_events writes one process of 4 threads (a GPU
# feeding thread and 3 file loaders; the mix is described in that file)
# directly in the trace format; then `feedtrace convert DIR -o FILE.pftrace
# --quiet` runs under /usr/bin/time -v. events/s (wall) is events over
# elapsed time; events/s (CPU) over user+system time, which is what the
# converter itself costs when the machine is shared. Peak RSS is the
# converter's maximum resident set. The converter runs two threads (reading,
# merging and analyses on one; encoding and writing the Perfetto file on
# the other: converter/out/pipeline.c), so events/s (CPU) counts both.
# 5 M + 20 M + 50 M events take about 2-3 minutes on 2 cores.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TOOL=$BUILD/feedtrace
GEN=$BUILD/bench/gen_events
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(5 20 50)

[ -x "$TOOL" ] || { echo "bench_convert: $TOOL missing: run make first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_convert: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }
mkdir -p "$(dirname "$GEN")"
if [ ! -x "$GEN" ] || [ "$ROOT/tests/bench/gen_events.c" -nt "$GEN" ]; then
    ${CC:-cc} -O2 -g -Wall -Wextra -D_GNU_SOURCE -std=gnu11 -o "$GEN" \
        -I"$ROOT/converter/read" -I"$ROOT/libfeedtrace/format" \
        "$ROOT/tests/bench/gen_events.c" "$ROOT/converter/read/events.c" -lzstd
fi

SCRATCH=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/ftconv.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

echo "| events | trace file | convert wall | events/s (wall) | CPU (user+sys) | events/s (CPU) | peak RSS | .pftrace | bytes/event |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for m in "${SIZES[@]}"; do
    n=$((m * 1000000))
    dir=$SCRATCH/t$m
    out=$SCRATCH/t$m.pftrace
    "$GEN" "$dir" "$n" >&2
    ftbytes=$(stat -c %s "$dir"/*.ft)
    echo "bench_convert: converting $m M events" >&2
    /usr/bin/time -v -o "$SCRATCH/time.txt" "$TOOL" convert "$dir" -o "$out" --quiet \
        ${THREADS:+--threads "$THREADS"} \
        2>"$SCRATCH/err.txt" || { cat "$SCRATCH/err.txt" >&2; exit 1; }
    cat "$SCRATCH/err.txt" >&2
    pfbytes=$(stat -c %s "$out")
    awk -v n="$n" -v m="$m" -v ft="$ftbytes" -v pf="$pfbytes" '
        /Elapsed \(wall clock\)/ {
            k = split($NF, t, ":"); wall = 0
            for (i = 1; i <= k; i++) wall = wall * 60 + t[i]
        }
        /User time \(seconds\)/ { user = $NF }
        /System time \(seconds\)/ { sys = $NF }
        /Maximum resident set size/ { rss = $NF }
        END {
            cpu = user + sys
            if (wall <= 0) wall = 0.01
            if (cpu <= 0) cpu = 0.01
            printf "| %d M | %.1f MB | %.2f s | %.2f M | %.2f s | %.2f M | %.0f MiB | %.0f MB | %.1f |\n",
                m, ft / 1e6, wall, n / wall / 1e6, cpu, n / cpu / 1e6, rss / 1024,
                pf / 1e6, pf / n
        }' "$SCRATCH/time.txt"
    rm -rf "$dir" "$out"
done
echo
echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
