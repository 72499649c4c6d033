#!/usr/bin/env bash
# bench_resync.sh - the reader's resynchronisation over a damaged region:
# one trace (tests/bench/gen_events, 100 000 events) followed by a
# zero-filled tail of 1, 8 and 64 MiB (what a crash or power loss leaves),
# each read by `feedtrace dump DIR --summary` (bash's time: CPU, wall). Prints a
# markdown section on stdout, for docs/BENCHMARKS.md (scripts/bench.sh
# appends it). Linear time shows as a constant time per MiB; each case must
# give exactly one damage line (the check fails the script otherwise).
#
#   BUILD=dir      where feedtrace is (default build)
#   BENCH_TMP=dir  scratch space (default $TMPDIR or /tmp): 64 MiB at most
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TOOL=$BUILD/feedtrace
GEN=$BUILD/bench/gen_events
[ -x "$TOOL" ] || { echo "bench_resync: $TOOL missing: run make first" >&2; exit 2; }
mkdir -p "$(dirname "$GEN")"
if [ ! -x "$GEN" ] || [ "$ROOT/tests/bench/gen_events.c" -nt "$GEN" ]; then
    ${CC:-cc} -O2 -g -Wall -Wextra -D_GNU_SOURCE -std=gnu11 -o "$GEN" \
        -I"$ROOT/converter/read" -I"$ROOT/libfeedtrace/format" \
        "$ROOT/tests/bench/gen_events.c" "$ROOT/converter/read/events.c" -lzstd
fi
SCRATCH=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/ftresync.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

"$GEN" "$SCRATCH/base" 100000 >/dev/null 2>&1
base=$(ls "$SCRATCH"/base/*.ft)
"$TOOL" dump "$SCRATCH/base" --summary >/dev/null 2>"$SCRATCH/err0"
records0=$("$TOOL" dump "$SCRATCH/base" --summary --json 2>/dev/null | sed -n 's/.*"records":\([0-9]*\).*/\1/p')

echo "## 9. Reader: a zero-filled tail"
echo
echo "A trace of $records0 records ($(stat -c %s "$base") bytes, \`tests/bench/gen_events\`) followed by a zero-filled tail, read by \`feedtrace dump DIR --summary\` (best of 3 runs, user+system CPU; per MiB: above the run without a tail). Every case gives exactly one damage line (offset and length of the tail) and reads all $records0 records; the time per MiB of tail stays flat: the resynchronisation is one pass over the damaged bytes (\`scripts/bench_resync.sh\`)."
echo
echo "| tail | damage lines | records read | CPU (user+sys) | CPU per MiB of tail | wall |"
echo "|---:|---:|---:|---:|---:|---:|"
for mb in 0 1 8 64; do
    d=$SCRATCH/t$mb
    mkdir -p "$d"
    cp "$base" "$d/"
    [ "$mb" -gt 0 ] && head -c $((mb << 20)) /dev/zero >> "$d/$(basename "$base")"
    best=""
    for rep in 1 2 3; do
        { TIMEFORMAT="%3U %3S %3R"; time "$TOOL" dump "$d" --summary --json \
            >"$SCRATCH/out" 2>"$SCRATCH/err"; } 2>"$SCRATCH/time"
        read -r u s e < "$SCRATCH/time"
        cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')
        if [ -z "$best" ] || awk -v a="$cpu" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$cpu; wall=$e
        fi
    done
    lines=$(grep -c '^feedtrace: ' "$SCRATCH/err" || true)
    recs=$(sed -n 's/.*"records":\([0-9]*\).*/\1/p' "$SCRATCH/out")
    want=$([ "$mb" -gt 0 ] && echo 1 || echo 0)
    if [ "$lines" != "$want" ] || [ "$recs" != "$records0" ]; then
        echo "bench_resync: ${mb} MiB tail: $lines damage lines, $recs records (want $want, $records0)" >&2
        cat "$SCRATCH/err" | head -5 >&2
        exit 1
    fi
    [ "$mb" -eq 0 ] && cpu0=$best
    per=$([ "$mb" -gt 0 ] && awk -v c="$best" -v z="$cpu0" -v m="$mb" 'BEGIN { printf "%.2f ms", (c - z) * 1000 / m }' || echo "-")
    echo "| ${mb} MiB | $lines | $recs | ${best} s | $per | ${wall} s |"
    rm -rf "$d"
done
echo
echo "Before this reader (commit 2b56339) a zero tail took one scan of the rest of the file per byte and printed a line per byte: 64 KiB 0.6 s, 1 MiB 22 s and a million lines, 8 MiB over 300 s (issue 19)."
