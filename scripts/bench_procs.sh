#!/usr/bin/env bash
# bench_procs.sh - the converter's commands over many processes: a shell
# loop of N short commands (each a `sh -c` image that exec'd into `cat`:
# 2N+1 images; tests/bench/gen_procs.py) at N = 1,000 and 5,000, and a
# Python program with 5,000 workers. Each command's wall and user+system
# time (best of 3), and the ratio 5,000 / 1,000: near-linear reads about 5
# (the text report was cubic: 175 s at 5,000). Prints a markdown section
# on stdout for docs/BENCHMARKS.md (scripts/bench.sh appends it).
#
#   BUILD=dir      where feedtrace is (default build)
#   BENCH_TMP=dir  scratch space (default $TMPDIR or /tmp): ~100 MB
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TOOL=$BUILD/feedtrace
PY=${PYTHON:-/usr/bin/python3}
[ -x "$TOOL" ] || { echo "bench_procs: $TOOL missing: run make first" >&2; exit 2; }
SCRATCH=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/ftprocs.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
"$PY" "$ROOT/tests/bench/gen_procs.py" "$SCRATCH/l1000" 1000
"$PY" "$ROOT/tests/bench/gen_procs.py" "$SCRATCH/l5000" 5000
"$PY" "$ROOT/tests/bench/gen_procs.py" "$SCRATCH/w5000" 5000 workers

best() {     # best of 3: "wall cpu" of the command given
    local b=""
    for i in 1 2 3; do
        /usr/bin/time -f "%e %U %S" -o "$SCRATCH/time" "$@" >/dev/null 2>&1 ||
            { echo "bench_procs: $* failed" >&2; exit 1; }
        b=$(awk -v b="$b" '{ c = $2 + $3; if (b == "" || c < b + 0) print c, $1; else print b }' \
            "$SCRATCH/time")
    done
    echo "$b" | awk '{ print $2, $1 }'
}
row() {      # what, then the command's arguments with DIR for the directory
    local what=$1; shift
    local a b c
    a=$(best "$TOOL" "${@//DIR/$SCRATCH/l1000}")
    b=$(best "$TOOL" "${@//DIR/$SCRATCH/l5000}")
    c=$(best "$TOOL" "${@//DIR/$SCRATCH/w5000}")
    echo "$a $b $c" | awk -v what="$what" '{
        r = $2 > 0.005 ? $4 / $2 : 0
        printf "| `%s` | %.2f s (%.2f s) | %.2f s (%.2f s) | %.1f | %.2f s (%.2f s) |\n",
               what, $2, $1, $4, $3, r, $6, $5 }'
}

echo "## 12. Converter: thousands of processes"
echo
echo "A shell loop of 1,000 and of 5,000 short commands (each a \`sh -c\` image that exec'd into \`cat\`, which reads once: 2,001 and 10,001 images, one file each) and a Python program with 5,000 workers (5,001 files), written by \`tests/bench/gen_procs.py\`. Each command's user+system CPU time, best of 3 (wall in parentheses: the files' reading shows there), and the ratio of the 5,000-command loop to the 1,000 one on CPU: near-linear reads about 5 (the text report was cubic in the number of processes: 175 s at 5,000 before; \`scripts/bench_procs.sh\`)."
echo
echo "| command | loop of 1,000 CPU (wall) | loop of 5,000 CPU (wall) | 5,000 / 1,000 | 5,000 workers CPU (wall) |"
echo "|---|---:|---:|---:|---:|"
row "report" report DIR
row "report --json" report --json DIR
row "dump" dump DIR
row "convert" convert DIR -o "$SCRATCH/out.pftrace" --quiet
row "diff DIR DIR" diff DIR DIR
