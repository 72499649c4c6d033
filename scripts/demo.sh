#!/bin/sh
# demo.sh: what `make demo` runs. Each C example of examples/ and its fixed
# twin run under `feedtrace run` on the simulated GPU (build/simgpu, a test
# double of libcuda.so.1); per run it prints the report (`feedtrace report`,
# when the tool has it) or else the trace summary (`feedtrace dump --summary`).
# Traces are kept in $BUILD/demo/NAME and $BUILD/demo/NAME-fixed.
#
# Environment: BUILD (default build), FT_CUDA_PATH (how the examples reach
# the driver: link, dlsym, proc, proc-ptds; default proc-ptds, as PyTorch).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TOOL=$BUILD/feedtrace
FT_CUDA_PATH=${FT_CUDA_PATH:-proc-ptds}
export FT_CUDA_PATH

make -s --no-print-directory -C "$ROOT" BUILD="$BUILD" all simgpu examples

if "$TOOL" report --help >/dev/null 2>&1 || "$TOOL" --help 2>&1 | grep -q '^ *report'; then
	SHOW=report
else
	SHOW=summary
fi

OUT=$BUILD/demo
rm -rf "$OUT"
mkdir -p "$OUT"

show() {
	if [ "$SHOW" = report ]; then
		"$TOOL" report "$1" || "$TOOL" dump --summary "$1"
	else
		"$TOOL" dump --summary "$1"
	fi
}

run_one() {   # run_one NAME TRACE_DIR [ARGS...]
	name=$1 dir=$2
	shift 2
	echo
	echo "---- $name $* (FT_CUDA_PATH=$FT_CUDA_PATH)"
	LD_LIBRARY_PATH=$BUILD/simgpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		"$TOOL" run -o "$dir" -- "$BUILD/examples/$name" "$@" >"$dir.out" 2>&1 || {
		cat "$dir.out"
		echo "demo: $name $* failed" >&2
		exit 1
	}
	# the program's own lines (feedtrace run's summary follows them)
	grep "^$name\|^launch lock" "$dir.out" || true
	show "$dir"
}

echo "feedtrace demo: four pathologies and their fixes, on the simulated GPU"
echo "(build/simgpu/libcuda.so.1, a test double of the CUDA driver; times are simulated GPU time)"
for name in launch_bound hidden_sync data_starved lock_bound; do
	echo
	echo "======== $name"
	run_one "$name" "$OUT/$name"
	run_one "$name" "$OUT/$name-fixed" --fixed
done
echo
echo "traces: $OUT/<example>[-fixed]  (convert: $TOOL convert DIR -o FILE.pftrace)"
