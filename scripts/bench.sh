#!/bin/sh
# scripts/bench.sh: feedtrace benchmarks; rewrites docs/BENCHMARKS.md.
# Run by `make bench` after the library and tool are built. Installs the
# peers it compares with and hyperfine (scripts/deps.sh bench), builds the
# benchmark programs from tests/bench/ into build/bench/, then runs
# scripts/bench_measure.py, which measures sections 1 to 8 and writes every
# figure to build/bench/results.json, and scripts/bench_render.py, which
# writes the report from that file; then appends scripts/bench_resync.sh's
# section (the reader's resynchronisation over a 1, 8 and 64 MiB
# zero-filled tail), scripts/bench_symbols.sh's (the converter
# symbolising 10 000 stacks), scripts/bench_stdio.sh's (the stdio
# readers, untraced and traced), scripts/bench_procs.sh's (the commands
# over thousands of processes), scripts/bench_gpu.sh's (the GPU's
# timing events' cost per launch), scripts/bench_capture.sh's (the cost
# per call outside a capture window) and scripts/bench_flight.sh's (the
# flight recorder).
#
#   BENCH_QUICK=1 scripts/bench.sh      fewer runs and calls (a smoke test;
#                                       the report says it was quick)
#   BENCH_OUT=path                      write the report elsewhere
#   BENCH_ONLY=cuda,train,...           run some sections only and print
#                                       their figures as JSON (debugging;
#                                       neither results.json nor the report
#                                       is written)
#
# The results stay in $BUILD/bench/results.json, so that the report can be
# written again without measuring (after a change to its wording):
#   python3 scripts/bench_render.py build/bench/results.json --out docs/BENCHMARKS.md
# writes sections 1 to 8, Honesty and Commands; sections 9 and 10 are not
# in the results (append them with the two scripts above, as below).
set -e
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}

scripts/deps.sh bench

if [ ! -x "$BUILD/libfeedtrace.so" ] || [ ! -x "$BUILD/feedtrace" ]; then
	echo "bench: $BUILD/libfeedtrace.so or $BUILD/feedtrace missing; run make first" >&2
	exit 1
fi

# Only the programs this script runs (gen_events is built by
# scripts/bench_convert.sh, which bench_measure.py calls). -O2, no -pg /
# -finstrument-functions: what a user runs.
mkdir -p "$BUILD/bench"
for prog in micro cudabench; do
	$CC -O2 -g -Wall -Wextra -D_GNU_SOURCE -o "$BUILD/bench/$prog" "tests/bench/$prog.c" -lpthread -ldl
done
# The simulated CUDA driver (a test double, tests/simgpu/) for the CUDA
# figures; `make bench` does not build it by itself.
${MAKE:-make} --no-print-directory -s BUILD="$BUILD" simgpu

# LTTng needs its session daemon; start one if none runs, stop it after.
STARTED_SESSIOND=""
if command -v lttng-sessiond >/dev/null 2>&1; then
	if ! lttng list >/dev/null 2>&1; then
		if lttng-sessiond --daemonize >/dev/null 2>&1; then
			STARTED_SESSIOND=1
			sleep 1
		fi
	fi
fi
stop_sessiond() {
	if [ -n "$STARTED_SESSIOND" ]; then
		pid=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null || true)
		[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	fi
}
trap stop_sessiond EXIT

RESULTS=$BUILD/bench/results.json
"$PYTHON" scripts/bench_measure.py --root "$ROOT" --build "$BUILD" \
	--results "$RESULTS" ${BENCH_ONLY:+--only "$BENCH_ONLY"}
if [ -z "${BENCH_ONLY:-}" ]; then
	"$PYTHON" scripts/bench_render.py "$RESULTS" --out "${BENCH_OUT:-docs/BENCHMARKS.md}"
	# section 9, the reader over a damaged tail (scripts/bench_resync.sh),
	# appended to the report bench_render.py wrote
	{ echo; BUILD="$BUILD" scripts/bench_resync.sh; } >> "${BENCH_OUT:-docs/BENCHMARKS.md}"
	# section 10, the converter symbolising 10 000 distinct stacks
	{ echo; BUILD="$BUILD" scripts/bench_symbols.sh; } >> "${BENCH_OUT:-docs/BENCHMARKS.md}"
	# section 11, the stdio readers' wrappers, untraced and traced
	{ echo; BUILD="$BUILD" scripts/bench_stdio.sh; } >> "${BENCH_OUT:-docs/BENCHMARKS.md}"
	# section 12, the converter's commands over thousands of processes
	{ echo; BUILD="$BUILD" scripts/bench_procs.sh; } >> "${BENCH_OUT:-docs/BENCHMARKS.md}"
	# section 14, what the GPU's timing events add to a launch
	{ echo; BUILD="$BUILD" scripts/bench_gpu.sh; } >> "${BENCH_OUT:-docs/BENCHMARKS.md}"
	# section 16, the cost per call outside a capture window
	{ echo; BUILD="$BUILD" scripts/bench_capture.sh; } >> "${BENCH_OUT:-docs/BENCHMARKS.md}"
	# section 17, the flight recorder's cost and memory
	{ echo; BUILD="$BUILD" scripts/bench_flight.sh; } >> "${BENCH_OUT:-docs/BENCHMARKS.md}"
fi

# fork latency beside compression (printed, not in the report)
[ -n "$BENCH_ONLY" ] || BUILD="$BUILD" scripts/bench_fork.sh
