#!/usr/bin/env bash
# bench_stdio.sh - the stdio readers' wrappers (shim/io.c): a 1,000,000-
# line text file (47 MB, in the page cache) read whole by
# tests/progs/io_paths with fgetc, getc_unlocked (inline: __uflow),
# fgets, getline, fread_unlocked (100 bytes a call), fscanf (a line a
# call: timed at every call), fgetwc and fgetws, untraced and traced in
# the same invocation (best of 5 runs each, user+system CPU of the
# reading process; the traced run includes the tracer's start and its
# 11,570 refill records). Prints a
# markdown section on stdout, for docs/BENCHMARKS.md (scripts/bench.sh
# appends it).
#
#   BUILD=dir      where libfeedtrace.so and tests/io_paths are (default build)
#   BENCH_TMP=dir  scratch space (default $TMPDIR or /tmp): 50 MB
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LIB=$BUILD/libfeedtrace.so
PROG=$BUILD/tests/io_paths
[ -x "$PROG" ] && [ -f "$LIB" ] || { echo "bench_stdio: $PROG or $LIB missing: run make first" >&2; exit 2; }
SCRATCH=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/ftstdio.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
awk 'BEGIN { for (i = 0; i < 1000000; i++) { printf "%d,", i; for (k = 0; k < i % 80; k++) printf "y"; printf "\n" } }' > "$SCRATCH/lines.csv"
cat "$SCRATCH/lines.csv" > /dev/null

# best user+sys CPU (ms) of 5 runs of "$@"
best() {
    local b=""
    for _ in 1 2 3 4 5; do
        rm -rf "$SCRATCH/trace"
        local t
        t=$( { TIMEFORMAT='%U %S'; time "$@" > /dev/null; } 2>&1 | tail -1)
        t=$(echo "$t" | awk '{ printf "%d", ($1 + $2) * 1000 }')
        if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
    done
    echo "$b"
}

echo "## 11. The stdio readers"
echo
echo "A 1,000,000-line text file ($(stat -c %s "$SCRATCH/lines.csv") bytes, in the page cache) read whole by \`tests/progs/io_paths\` (-O2) with each reader, untraced and traced in the same invocation: best of 5 runs, user+system CPU of the process. A call its buffer serves goes straight to libc after a look at two pointers (fgets and getline also look for the newline in the bytes left; fgetws in the wide buffer); a call that refills is timed and recorded; fscanf is timed at every call, since what it will read is not known before (\`scripts/bench_stdio.sh\`)."
echo
echo "| reader | untraced | traced | traced / untraced |"
echo "|---|---:|---:|---:|"
for m in fgetc getc_unlocked fgets getline fread_unlocked fscanf fgetwc fgetws; do
    u=$(best "$PROG" stdio "$m" "$SCRATCH/lines.csv")
    t=$(best env LD_PRELOAD="$LIB" FEEDTRACE_OUT="$SCRATCH/trace" "$PROG" stdio "$m" "$SCRATCH/lines.csv")
    echo "| $m | $u ms | $t ms | $(awk -v a="$t" -v b="$u" 'BEGIN { printf "%.2f", b ? a / b : 0 }') |"
done
