#!/usr/bin/env bash
# bench_gpu.sh - what the GPU's timing events (shim/gpu_time.c) add to a
# launch, on the simulated driver: tests/bench/cudabench's launch loop
# (cuLaunchKernel of a 0 ns kernel, SIMGPU_LAUNCH_NS=0: the driver's own
# cost is its mutex and queue, ~100 ns) untraced, traced with sampling off
# (FEEDTRACE_GPU_MS=0) and on (the default, 1 ms), interleaved, 5 rounds
# each; the median of each. Prints a markdown section on stdout, for
# docs/BENCHMARKS.md (scripts/bench.sh appends it). Goal: sampling adds at
# most 0.3% of the launching thread's time at the default interval.
#
#   BUILD=dir      where libfeedtrace.so and feedtrace are (default build)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LIB=$BUILD/libfeedtrace.so
DRV=$BUILD/simgpu/libcuda.so.1
PROG=$BUILD/bench/cudabench
[ -e "$LIB" ] && [ -e "$DRV" ] || { echo "bench_gpu: $LIB or $DRV missing: make all simgpu" >&2; exit 2; }
if [ ! -x "$PROG" ] || [ "$ROOT/tests/bench/cudabench.c" -nt "$PROG" ]; then
	mkdir -p "$(dirname "$PROG")"
	${CC:-cc} -O2 -g -Wall -Wextra -D_GNU_SOURCE -o "$PROG" "$ROOT/tests/bench/cudabench.c" -lpthread -ldl
fi
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/ftgpu.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
N=${BENCH_GPU_N:-200000}
REPS=5
export SIMGPU_LAUNCH_NS=0 SIMGPU_COPY_LATENCY_NS=0

for round in 1 2 3 4 5; do
	for mode in untraced off on; do
		case $mode in
		untraced) "$PROG" launch "$DRV" "$N" "$REPS" ;;
		off) FEEDTRACE_OUT="$SCRATCH/off$round" FEEDTRACE_GPU_MS=0 LD_PRELOAD="$LIB" \
			"$PROG" launch "$DRV" "$N" "$REPS" ;;
		on) FEEDTRACE_OUT="$SCRATCH/on$round" LD_PRELOAD="$LIB" "$PROG" launch "$DRV" "$N" "$REPS" ;;
		esac | awk -v m=$mode '$1 == "launch" { print m, $2 }' >> "$SCRATCH/ns"
	done
	# samples taken in the "on" run, and its launches (all blocks, warm-up too)
	"$BUILD/feedtrace" dump --json "$SCRATCH/on$round" 2>/dev/null | grep '"process"' |
		sed -n 's/.*"gpu":{[^}]*"samples":\([0-9]*\).*"cuLaunchKernel":\([0-9]*\).*/\1 \2/p' >> "$SCRATCH/samples"
	rm -rf "$SCRATCH/off$round" "$SCRATCH/on$round"
done
# instructions per launch inside the wrapper (callgrind, load-independent):
# off, on with a 60 s interval (the inline check alone), on at 1 ms
ir() {
	rm -rf "$SCRATCH/cg"
	FEEDTRACE_OUT="$SCRATCH/cg" FEEDTRACE_GPU_MS=$1 CUDABENCH_NAME_ONLY=1 LD_PRELOAD="$LIB" \
		valgrind --tool=callgrind --toggle-collect=cuLaunchKernel \
		--callgrind-out-file="$SCRATCH/cg.out" "$PROG" launch "$DRV" 20000 3 >/dev/null 2>&1
	tot=$(awk '/^totals:/ { print $2 }' "$SCRATCH/cg.out")
	n=$("$BUILD/feedtrace" dump --json "$SCRATCH/cg" 2>/dev/null | grep '"process"' |
		sed -n 's/.*"gpu":{[^}]*"samples":\([0-9]*\).*/\1/p' | sort -n | tail -1)
	echo "$tot ${n:-0} 80000"       # 4 blocks (the warm-up one too) of 20 000
}
CG=""
if command -v valgrind >/dev/null; then
	read -r ir_off _ l_off < <(ir 0)
	read -r ir_chk s_chk l_chk < <(ir 60000)
	read -r ir_on s_on l_on < <(ir 1)
	CG=1
fi
med() { awk -v m="$1" '$1 == m { print $2 }' "$SCRATCH/ns" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
u=$(med untraced); off=$(med off); on=$(med on)
read -r smp launches < <(sort -n "$SCRATCH/samples" | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }')

echo "## 14. GPU timing events: a launch's added cost"
echo
echo "\`tests/bench/cudabench launch\` on the simulated driver ($N launches of a 0 ns kernel per block, $REPS blocks, median block; \`SIMGPU_LAUNCH_NS=0\`), untraced, traced with the GPU's timing events off (\`FEEDTRACE_GPU_MS=0\`) and on (default 1 ms), interleaved, median of 5 runs each (\`scripts/bench_gpu.sh\`). A launch that takes no sample pays the inline check, sampling on or off (the thread's last stream and its place, thread-local: three loads, two compares, a store; off, that place is never due); one sample in about $((launches / (smp > 0 ? smp : 1))) launches pays \`cuCtxGetCurrent\` and \`cuEventRecord\` of the driver."
echo
echo "| run | ns per launch | samples / launches (median run) |"
echo "|---|---:|---:|"
echo "| untraced | $u | - |"
echo "| traced, sampling off | $off | 0 |"
echo "| traced, sampling on (1 ms) | $on | $smp / $launches |"
echo
awk -v on="$on" -v off="$off" -v s="$smp" -v l="$launches" 'BEGIN {
	d = on - off
	printf "Sampling on adds %.1f ns per launch on average here, %.2f%% of the launching thread'"'"'s time per launch (goal: at most 0.3%%; on a loaded machine these times are noise, the instruction counts below are not)", d, 100 * d / on
	if (s > 0) printf "; per sample taken, %.0f ns", d * l / s
	print "."
}'
if [ -n "$CG" ]; then
	echo
	echo 'Instructions per launch inside the wrapper, the driver included (callgrind, `--toggle-collect=cuLaunchKernel`, 20 000 launches x 4 blocks; valgrind slows the clock about 50-fold, so 1 ms comes round every few hundred launches): load-independent, unlike the times above.'
	echo
	echo "| run | instructions per launch | samples / launches |"
	echo "|---|---:|---:|"
	awk -v a="$ir_off" -v l="$l_off" 'BEGIN { printf "| sampling off (the check, never due) | %.1f | 0 / %d |\n", a / l, l }'
	awk -v a="$ir_chk" -v s="$s_chk" -v l="$l_chk" 'BEGIN { printf "| on, 60 s interval (the check alone) | %.1f | %d / %d |\n", a / l, s, l }'
	awk -v a="$ir_on" -v s="$s_on" -v l="$l_on" 'BEGIN { printf "| on, 1 ms | %.1f | %d / %d |\n", a / l, s, l }'
	echo
	awk -v c="$ir_chk" -v o="$ir_on" -v s="$s_on" -v s0="$s_chk" -v l="$l_on" 'BEGIN {
		if (s > s0) printf "A sample costs about %.0f instructions of the launching thread (cuCtxGetCurrent, the pool, cuEventRecord); a launch that takes none, the check.\n", (o - c) / (s - s0) }'
fi
echo
echo "Machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
