#!/bin/sh
# bench_loaded_diff.sh: issue 31's before/after pairs on a loaded machine.
# Two prefetching loaders with forked workers (tests/bench/prefetch_loader.py):
# CPU-bound batches with 1 worker vs 3, and small files read in 512-byte
# pieces vs whole. Each side runs ROUNDS times, interleaved, traced, while
# two CPU-bound loops run beside them; prints each run's own clock and
# feedtrace diff's answer, to compare by hand.
#   scripts/bench_loaded_diff.sh [ROUNDS] [OUT]
set -eu
ROUNDS=${1:-3}
OUT=${2:-$(mktemp -d /tmp/ft_loaded.XXXXXX)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FT=$ROOT/build/feedtrace
PROG=$ROOT/tests/bench/prefetch_loader.py
PY=/usr/bin/python3
mkdir -p "$OUT"
timeout 900 sh -c 'while :; do :; done' & S1=$!
timeout 900 sh -c 'while :; do :; done' & S2=$!
trap 'kill $S1 $S2 2>/dev/null || true' EXIT
run() {   # run NAME ARGS...: one traced run, its own clock on stdout
	name=$1; shift
	$FT run -o "$OUT/$name" -- $PY "$PROG" "$@" 2>&1 >/dev/null | grep '^own:' |
		sed "s|^|$name |"
}
for pair in cpu files; do
	b=""; a=""
	for i in $(seq 1 "$ROUNDS"); do
		if [ $pair = cpu ]; then
			run cpu_before_$i cpu --workers 1
			run cpu_after_$i cpu --workers 3
		else
			run files_before_$i files "$OUT/data"
			run files_after_$i files "$OUT/data" --whole
		fi
		b="$b $OUT/${pair}_before_$i"; a="$a $OUT/${pair}_after_$i"
	done
	echo "== $pair: feedtrace diff"
	$FT diff $b -- $a | sed -n '/^time per step  /p;/^median step  /p;/^wall time/p;/^verdict:/,$p'
done
