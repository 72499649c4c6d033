#!/usr/bin/env bash
# bench_capture.sh - what the library costs outside a capture window
# (FEEDTRACE_CAPTURE=off: loaded, keeping its tables, recording nothing;
# libfeedtrace/capture.c). tests/bench/micro's pread1, read4k and mutex
# (a lock pair) and tests/bench/cudabench's launch (cuLaunchKernel of a
# 0 ns kernel on the simulated driver) each print, in one process, the
# calls made by name (the tracer's wrapper when preloaded) and the same
# calls made directly (never interposed); their difference is the wrapper
# alone. Untraced, idle (off) and recording (on), interleaved, ROUNDS
# rounds; the median of each. The idle cost is idle - untraced. Memory:
# the largest RSS of `micro pread1` untraced, idle and on, and the bytes
# an idle process wrote. Prints a markdown section on stdout, for
# docs/BENCHMARKS.md (scripts/bench.sh appends it). Goal: within 5 ns of
# an untraced call for reads and lock pairs, 10 ns for a launch.
#
#   BUILD=dir           where libfeedtrace.so and feedtrace are (default build)
#   BENCH_CAPTURE_N=n   calls per block (default 200000); ROUNDS=n (default 5)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LIB=$BUILD/libfeedtrace.so
DRV=$BUILD/simgpu/libcuda.so.1
[ -e "$LIB" ] && [ -e "$DRV" ] || { echo "bench_capture: $LIB or $DRV missing: make all simgpu" >&2; exit 2; }
for prog in micro cudabench; do
	if [ ! -x "$BUILD/bench/$prog" ] || [ "$ROOT/tests/bench/$prog.c" -nt "$BUILD/bench/$prog" ]; then
		mkdir -p "$BUILD/bench"
		${CC:-cc} -O2 -g -Wall -Wextra -D_GNU_SOURCE -o "$BUILD/bench/$prog" \
			"$ROOT/tests/bench/$prog.c" -lpthread -ldl
	fi
done
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/ftcap.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
N=${BENCH_CAPTURE_N:-200000}
ROUNDS=${ROUNDS:-5}
FILE=$SCRATCH/data
head -c 262144 /dev/zero > "$FILE"
export SIMGPU_LAUNCH_NS=0 SIMGPU_COPY_LATENCY_NS=0

# one run: prints "by_name direct"
one() {
	local what=$1 mode=$2 out=$SCRATCH/t.$RANDOM
	local cmd
	if [ "$what" = launch ]; then
		cmd=("$BUILD/bench/cudabench" launch "$DRV" "$N" 5)
	else
		cmd=("$BUILD/bench/micro" "$what" "$N" "$FILE" 5)
	fi
	case $mode in
	untraced) "${cmd[@]}" ;;
	disabled) FEEDTRACE_DISABLE=1 LD_PRELOAD=$LIB "${cmd[@]}" ;;
	idle) FEEDTRACE_OUT=$out FEEDTRACE_CAPTURE=off LD_PRELOAD=$LIB "${cmd[@]}" ;;
	on) FEEDTRACE_OUT=$out LD_PRELOAD=$LIB "${cmd[@]}" ;;
	esac | awk -v w="$what" '$1 == w { print $2, $3 }'
	rm -rf "$out"
}

for round in $(seq "$ROUNDS"); do
	for what in pread1 read4k mutex launch; do
		for mode in untraced disabled idle on; do
			read -r byname direct < <(one "$what" "$mode")
			echo "$what $mode $byname $direct" >> "$SCRATCH/ns"
		done
	done
done

# the largest RSS (KiB) of one run, and the bytes its trace took
rss() {
	local mode=$1 out=$SCRATCH/m.$1
	local env=()
	case $mode in
	idle) env=(FEEDTRACE_OUT=$out FEEDTRACE_CAPTURE=off LD_PRELOAD=$LIB) ;;
	on) env=(FEEDTRACE_OUT=$out LD_PRELOAD=$LIB) ;;
	esac
	/usr/bin/python3 - "$BUILD/bench/micro" "$N" "$FILE" "${env[@]}" <<'EOF'
import os, resource, subprocess, sys
prog, n, f = sys.argv[1:4]
env = dict(os.environ)
env.update(kv.split("=", 1) for kv in sys.argv[4:])
subprocess.run([prog, "pread1", n, f, "3"], env=env, stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
EOF
	local bytes=0
	[ -d "$out" ] && bytes=$(cat "$out"/*.ft | wc -c)
	echo "$bytes"
	rm -rf "$out"
}
mapfile -t R_UN < <(rss untraced)
mapfile -t R_IDLE < <(rss idle)
mapfile -t R_ON < <(rss on)

# instructions per call the wrapper adds (callgrind, load-independent):
# the whole run's instructions at 2N and at N calls a block, the
# difference per extra call, minus the same untraced
ir_total() {   # what mode n
	local what=$1 mode=$2 n=$3 out=$SCRATCH/cg.$RANDOM
	local cmd env=()
	if [ "$what" = launch ]; then
		cmd=("$BUILD/bench/cudabench" launch "$DRV" "$n" 1)
	else
		cmd=("$BUILD/bench/micro" "$what" "$n" "$FILE" 1)
	fi
	case $mode in
	disabled) env=(FEEDTRACE_DISABLE=1 LD_PRELOAD=$LIB) ;;
	idle) env=(FEEDTRACE_OUT=$out FEEDTRACE_CAPTURE=off LD_PRELOAD=$LIB) ;;
	on) env=(FEEDTRACE_OUT=$out LD_PRELOAD=$LIB) ;;
	esac
	# the program's thread only (the flusher's cycles depend on time)
	env "${env[@]}" valgrind --tool=callgrind --separate-threads=yes \
		--callgrind-out-file="$SCRATCH/cg.out" "${cmd[@]}" >/dev/null 2>&1
	awk '/^totals:/ { print $2 }' "$SCRATCH/cg.out-01"
	rm -rf "$out" "$SCRATCH"/cg.out*
}
declare -A IR
if command -v valgrind >/dev/null; then
	IRN=${BENCH_CAPTURE_IR_N:-20000}
	for what in pread1 mutex launch; do
		for mode in untraced disabled idle on; do
			a=$(ir_total "$what" "$mode" "$IRN"); b=$(ir_total "$what" "$mode" $((2 * IRN)))
			IR[$what.$mode]=$(awk -v a="$a" -v b="$b" -v n="$IRN" 'BEGIN { printf "%.1f", (b - a) / n }')
		done
	done
fi

med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
wrap() {  # median wrapper cost (by_name - direct) of what under mode
	awk -v w="$1" -v m="$2" '$1 == w && $2 == m { print $3 - $4 }' "$SCRATCH/ns" | med
}

cat <<EOF
## 16. Outside a capture window: the idle cost per call

\`scripts/bench_capture.sh\`: a process started with \`FEEDTRACE_CAPTURE=off\`
(the library loaded, keeping its descriptor table, thread names and step
count, recording nothing: docs/ARCHITECTURE.md, "Capture windows") against
the same program untraced, with the library loaded but disabled
(\`FEEDTRACE_DISABLE=1\`: every wrapper passes straight through, no
flusher thread) and recording, interleaved, $ROUNDS rounds of
5 blocks of $N calls; each figure is the median over rounds of the
wrapper's cost in its process (the calls by name minus the same calls made
directly, tests/bench/micro.c and cudabench.c), so the machine's load
cancels within a run. The launch is on the simulated driver (0 ns kernel).
Goal: idle within 5 ns of untraced for reads and lock pairs, 10 ns for a
launch.

| call | untraced (ns) | loaded, disabled (ns) | idle (ns) | idle - untraced | recording (ns) |
|---|---|---|---|---|---|
EOF
for what in pread1 read4k mutex launch; do
	u=$(wrap "$what" untraced); d=$(wrap "$what" disabled); i=$(wrap "$what" idle); o=$(wrap "$what" on)
	awk -v w="$what" -v u="$u" -v d="$d" -v i="$i" -v o="$o" 'BEGIN {
		name = w == "pread1" ? "pread, 1 byte" : w == "read4k" ? "read, 4 KiB" : w == "mutex" ? "mutex lock + unlock" : "cuLaunchKernel"
		printf "| %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n", name, u, d, i, i - u, o }'
done
cat <<EOF

A negative figure, or one that differs from the next table's, is the
machine's load (other processes on its cores), larger than the effect
measured: the instruction counts below are the figures to read.
EOF
if [ -n "${IR[pread1.idle]:-}" ]; then
	cat <<EOF

Instructions per call on the program's thread (callgrind; the run at
$IRN and at $((2 * IRN)) calls a block, the difference per call: the call
by name and the same call direct; the machine's load does not enter):

| call | untraced | loaded, disabled | idle | idle - disabled | idle - untraced | recording |
|---|---|---|---|---|---|---|
EOF
	for what in pread1 mutex launch; do
		awk -v w="$what" -v u="${IR[$what.untraced]}" -v d="${IR[$what.disabled]}" -v i="${IR[$what.idle]}" -v o="${IR[$what.on]}" 'BEGIN {
			name = w == "pread1" ? "pread, 1 byte" : w == "mutex" ? "mutex lock + unlock" : "cuLaunchKernel"
			printf "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", name, u, d, i, i - d, i - u, o }'
	done
fi
cat <<EOF

Memory (\`micro pread1\`, largest RSS): untraced ${R_UN[0]} KiB, idle
${R_IDLE[0]} KiB, recording ${R_ON[0]} KiB; the idle process wrote
${R_IDLE[1]} bytes (its CLOCK, PROCESS and END chunks), the recording one
${R_ON[1]}. An idle thread that opens a file holds its ring's address
space (FEEDTRACE_BUF_KB, untouched pages: not resident); the flusher
thread and its buffers are there as when recording.

What the gate adds is "idle - disabled": ft_enter's load and branch
(the lock pair's two wrappers, the launch's one, test the groups against
the bits that stay set outside a window). The rest of "idle - untraced"
is the wrapper being there at all, as with the library disabled: a
read's wrapper saves a register and makes the system call itself while
the program has one thread of its own; the simulated driver makes an fcntl and a mutex pair of
its own at every launch (callgrind: most of the launch's 268), which pass
through the library's wrappers (fcntl's is always on: it keeps the dups'
paths).
EOF
