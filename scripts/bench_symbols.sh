#!/usr/bin/env bash
# bench_symbols.sh - what symbolising native call sites costs the
# converter: tests/bench/symstacks (-O2 -g, on the simulated driver) makes
# one hidden sync from each of 10 000 distinct call paths (10 000 distinct
# stacks, 10 000 distinct sites) and READS 1-byte reads, traced; then
# `feedtrace convert DIR -o FILE --quiet` (best of 3: wall, user+system
# CPU) reads it twice: with the program's file there (every stack read
# with libdwfl: functions, lines, inlined frames) and with it gone (frames
# stay module+offset: no DWARF read). Prints a markdown section on stdout
# for docs/BENCHMARKS.md (scripts/bench.sh appends it). The check: the
# report has exactly 10 000 call sites, and the goal is >= 5 M events/s.
#
#   BUILD=dir      where feedtrace is (default build)
#   READS=n        cheap events beside the stacks (default 2000000)
#   BENCH_TMP=dir  scratch space (default $TMPDIR or /tmp): ~300 MB
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TOOL=$BUILD/feedtrace
READS=${READS:-2000000}
[ -x "$TOOL" ] || { echo "bench_symbols: $TOOL missing: run make first" >&2; exit 2; }
${MAKE:-make} --no-print-directory -s -C "$ROOT" BUILD="$BUILD" simgpu
SCRATCH=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/ftsym.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
PROG=$SCRATCH/symstacks
${CC:-cc} -O2 -g -Wall -o "$PROG" "$ROOT/tests/bench/symstacks.c" -L"$BUILD/simgpu" -lcuda \
    -Wl,-rpath,"$BUILD/simgpu"

LD_PRELOAD=$BUILD/libfeedtrace.so FEEDTRACE_OUT=$SCRATCH/t FEEDTRACE_BUF_KB=8192 \
    "$PROG" "$READS" >/dev/null
events=$("$TOOL" dump "$SCRATCH/t" --summary --json 2>/dev/null | sed -n 's/.*"records":\([0-9]*\).*/\1/p')
sites=$("$TOOL" report "$SCRATCH/t" --json | ${PYTHON:-/usr/bin/python3} -c \
    'import json, sys; print(sum(s["kind"] == "hidden_sync" for s in json.load(sys.stdin)["call_sites"]))')
[ "$sites" -eq 10000 ] || { echo "bench_symbols: $sites call sites, not 10000" >&2; exit 1; }

best() {     # best of 3 convert runs: "wall cpu"
    local b=""
    for i in 1 2 3; do
        /usr/bin/time -f "%e %U %S" -o "$SCRATCH/time" "$TOOL" convert "$SCRATCH/t" \
            -o "$SCRATCH/out.pftrace" --quiet 2>/dev/null
        b=$(awk -v b="$b" '{ c = $2 + $3; if (b == "" || $1 < b + 0) print $1, c; else print b }' \
            "$SCRATCH/time")
    done
    echo "$b"
}
row() {
    echo "$2" | awk -v what="$1" -v n="$events" '{
        w = $1 > 0 ? $1 : 0.01; c = $2 > 0 ? $2 : 0.01
        printf "| %s | %d | %.2f s | %.2f M | %.2f s | %.2f M |\n", what, n, w, n / w / 1e6, c, n / c / 1e6 }'
}
with=$(best)
mv "$PROG" "$PROG.gone"
without=$(best)
mv "$PROG.gone" "$PROG"

echo "## 10. Converter: symbolising 10 000 distinct stacks"
echo
echo "\`tests/bench/symstacks\` (-O2 -g) makes one hidden sync from each of 10 000 distinct call paths and $READS 1-byte reads, traced; \`feedtrace convert\` (best of 3) reads the trace with the program's file there (each return address read once with libdwfl: function, file:line, inlined frames; each stack once) and with it gone (module+offset, no DWARF). The report has 10 000 call sites (checked). Goal: >= 5 M events/s (\`scripts/bench_symbols.sh\`)."
echo
echo "| program's file | events | convert wall | events/s (wall) | CPU (user+sys) | events/s (CPU) |"
echo "|---|---:|---:|---:|---:|---:|"
row "there: symbolised" "$with"
row "gone: module+offset" "$without"
echo
echo "Machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
