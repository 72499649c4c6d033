#!/bin/bash
# gpu_check.sh: one run on a machine with a real GPU, under 6 minutes, one
# table: the GPU's timing events (shim/gpu_time.c) against kernels of known
# duration (build/gpucheck/gpu_spin: a PTX kernel spinning on %globaltimer),
# graph capture left intact, the examples on the real driver, a PyTorch
# step loop if torch imports, and the added cost per launch with sampling
# off (FEEDTRACE_GPU_MS=0), on (default) and untraced. Uses the prebuilt
# build/ (never rebuilds the library); set LD_LIBRARY_PATH for the
# converter's libraries (.devlibs) before. With OUT set, the table and the
# logs go under $OUT/gpu_check.
#
#   make all examples gpucheck          # here, then carry build/ (and .devlibs/)
#   OUT=/tmp/o LD_LIBRARY_PATH=$PWD/.devlibs scripts/gpu_check.sh
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
FT=$B/feedtrace
LIB=$B/libfeedtrace.so
W=${OUT:+$OUT/gpu_check}
W=${W:-$(mktemp -d /tmp/gpu_check.XXXXXX)}
mkdir -p "$W"
TABLE=$W/table.txt
: > "$TABLE"
# one budget for the whole run (the lead's slot is 6 minutes): each step's
# timeout is cut to what is left of it, and steps past it are skipped
BUDGET=${GPU_CHECK_BUDGET_S:-320}
tmo() { local l=$((BUDGET - SECONDS)); [ "$l" -lt 5 ] && l=5; echo $(( $1 < l ? $1 : l )); }
late() { [ "$SECONDS" -ge "$BUDGET" ]; }
row() { printf '%-26s %-6s %s\n' "$1" "$2" "$3" >> "$TABLE"; printf '%-26s %-6s %s\n' "$1" "$2" "$3"; }
PY=$(command -v python3 || true)

# the real driver first: the examples' RUNPATH names build/simgpu
# (GPU_CHECK_LIBCUDA_DIR: another driver, e.g. build/simgpu for a dry run)
CUDADIR=${GPU_CHECK_LIBCUDA_DIR:-}
[ -n "$CUDADIR" ] || CUDADIR=$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null) | awk '/libcuda\.so\.1 /{print $NF; exit}' | xargs -r dirname)
for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/lib/wsl/lib; do
	[ -z "$CUDADIR" ] && [ -e "$d/libcuda.so.1" ] && CUDADIR=$d
done
if [ -z "$CUDADIR" ]; then
	row "driver" FAIL "no libcuda.so.1 found"
	exit 1
fi
export LD_LIBRARY_PATH="$CUDADIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GPU=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
row "driver" ok "$CUDADIR/libcuda.so.1; ${GPU:-nvidia-smi absent}"
for f in "$FT" "$LIB"; do
	[ -x "$f" ] || [ -e "$f" ] || { row "build" FAIL "$f missing (carry build/)"; exit 1; }
done

SPIN=$B/gpucheck/gpu_spin
if [ ! -x "$SPIN" ] && command -v cc >/dev/null; then
	cc -O2 -g -D_GNU_SOURCE -o "$W/gpu_spin" "$ROOT/tests/gpucheck/gpu_spin.c" -ldl \
		>> "$W/build.log" 2>&1 && SPIN=$W/gpu_spin
fi

# summary of a traced run: samples, losses, measured spans (> 0.2 ms) per
# stream, and the report's verdict with its modelled GPU idle
summary() {
	[ -n "$PY" ] || { echo "no python3: see $1"; return; }
	"$FT" dump --json "$1" > "$1.dump.json" 2>> "$W/convert.log"
	"$FT" report --json "$1" > "$1.report.json" 2>> "$W/convert.log"
	"$PY" - "$1" "${2:-}" <<'EOF'
import json, sys
d, expect = sys.argv[1], sys.argv[2]
procs = [json.loads(l)["process"] for l in open(d + ".dump.json") if '"process"' in l]
out = []
for p in procs:
    g = p.get("gpu", {})
    calls = p.get("calls", {})
    spans = {k: [(b - a) / 1e6 for a, b in v if b - a > 200000] for k, v in g.get("streams", {}).items()}
    spans = {k: v for k, v in spans.items() if v}
    lost = {k: v for k, v in g.get("lost", {}).items() if v}
    s = "pid %d launches %d samples %d lost %s" % (p["pid"], calls.get("cuLaunchKernel", 0),
                                                    g.get("samples", 0), lost or "{}")
    for k, v in spans.items():
        v = sorted(v)
        s += " | stream ..%s: %d spans, median %.3f ms" % (k[-4:], len(v), v[len(v) // 2])
    out.append(s)
try:
    r = json.load(open(d + ".report.json"))
    v = r.get("verdict") or {}
    gpu = v.get("gpu") or {}
    w = v.get("window") or {}
    win = (w.get("end_ns", 0) - w.get("start_ns", 0)) or 1
    s = "verdict: %s; modelled idle %.0f%%" % (
        v.get("limit"), 100.0 * (gpu.get("modelled") or gpu).get("idle_ns", 0) / win)
    m = gpu.get("measured")
    if m:
        s += ("; measured idle %.0f%% over the %.0f%% the samples cover (%.0f%% of it in waits "
              "returning; verdict stands on: %s)") % (
            100.0 * m["idle_ns"] / max(m["covered_ns"], 1), 100.0 * m["covered_ns"] / win,
            100.0 * m.get("drain_wait_ns", 0) / max(m["covered_ns"], 1), gpu.get("idle_basis"))
    else:
        s += "; measured: no samples"
    out.append(s)
except Exception as e:
    out.append("report: %s" % e)
print("; ".join(out))
EOF
}

# 1. kernels of known duration
if [ -x "$SPIN" ]; then
	for s in drain two graph nosync; do
		rm -rf "$W/t_$s"
		late && { row "spin $s" SKIP "out of time"; continue; }
		o=$(timeout "$(tmo 30)" env FEEDTRACE_OUT="$W/t_$s" LD_PRELOAD="$LIB" "$SPIN" $s 2> "$W/t_$s.stderr")
		rc=$?
		echo "$o" > "$W/t_$s.stdout"
		err=$(grep -h '^error' "$W/t_$s.stdout" | head -1)
		row "spin $s" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
			"rc $rc ${err} $(echo "$o" | grep -h '^expect\|^capture' | tr '\n' ' ')"
		row "" "" "$(summary "$W/t_$s")"
	done
	# 2. added cost per launch: untraced, sampling off, on (3 rounds each)
	for round in 1 2 3; do
		for mode in untraced off on; do
			case $mode in
			untraced) env=() ;;
			off) env=(FEEDTRACE_OUT="$W/loop_off_$round" FEEDTRACE_GPU_MS=0 LD_PRELOAD="$LIB") ;;
			on) env=(FEEDTRACE_OUT="$W/loop_on_$round" LD_PRELOAD="$LIB") ;;
			esac
			late || timeout "$(tmo 20)" env "${env[@]}" "$SPIN" loop 100000 \
				>> "$W/loop_$mode.txt" 2>> "$W/loop.stderr"
		done
	done
	for mode in untraced off on; do
		med=$(awk '/^loop/{print $4, $6}' "$W/loop_$mode.txt" 2>/dev/null | sort -n |
			awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}')
		eval "cpu_$mode=\${med%% *}"
		row "launch cost $mode" "" "cpu ns/launch, wall ns/launch (median of 3): ${med:-none}"
	done
	row "launch cost added" "" "$(awk -v u="${cpu_untraced:-0}" -v f="${cpu_off:-0}" -v o="${cpu_on:-0}" 'BEGIN {
		if (u > 0 && f > 0 && o > 0)
			printf "tracer, sampling off: +%.1f ns (%.1f%%); sampling on over off: %+.1f ns (%.2f%% of the launching thread, goal <= 0.3%%)", f - u, 100 * (f - u) / u, o - f, 100 * (o - f) / o
		else print "no figures" }')"
	if [ -d "$W/loop_on_1" ]; then
		smp=$("$FT" dump --json "$W/loop_on_1" 2>/dev/null | grep '"process"' |
			sed -n 's/.*"gpu":{[^}]*"samples":\([0-9]*\).*/\1/p' | sort -n | tail -1)
		row "launch loop samples" "" "${smp:-?} samples in the first sampled loop run (100 000 launches + warm-up)"
	fi
	grep -h '^error' "$W"/loop_*.txt | head -3 | while read -r l; do row "launch loop" FAIL "$l"; done
else
	row "spin" SKIP "no build/gpucheck/gpu_spin and no cc (make gpucheck here)"
fi

# 3. the examples on the real driver: it refuses their simulated-driver
# text images, and examples/cudrv.h loads the same kernels as PTX instead
# (each spinning on the GPU's timer for its nanoseconds)
for ex in launch_bound hidden_sync data_starved lock_bound; do
	[ -x "$B/examples/$ex" ] || { row "example $ex" SKIP "not built"; continue; }
	rm -rf "$W/ex_$ex"
	late && { row "example $ex" SKIP "out of time"; continue; }
	timeout "$(tmo 20)" env FEEDTRACE_OUT="$W/ex_$ex" LD_PRELOAD="$LIB" "$B/examples/$ex" \
		> "$W/ex_$ex.stdout" 2> "$W/ex_$ex.stderr"
	rc=$?
	msg=$(grep -hv '^$' "$W/ex_$ex.stdout" "$W/ex_$ex.stderr" | grep -i 'error\|fail' | head -1)
	row "example $ex" "$([ $rc = 0 ] && echo ok || echo FAIL)" "rc $rc $msg"
	row "" "" "$(summary "$W/ex_$ex")"
done

# 4. PyTorch: a step loop, and a CUDA graph capture, under the tracer
if [ -n "$PY" ] && ! late && timeout "$(tmo 60)" "$PY" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	cat > "$W/steps.py" <<'EOF'
import sys, time, torch
dev = "cuda"
m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).to(dev)
opt = torch.optim.SGD(m.parameters(), lr=1e-3)
x = torch.randn(256, 1024, device=dev)
t0 = time.time()
for i in range(200):
    loss = m(x).square().mean()
    opt.zero_grad(); loss.backward(); opt.step()
    if i % 10 == 0:
        loss.item()                          # a hidden sync every 10 steps
        time.sleep(0.005)                    # the host away: the GPU idles
torch.cuda.synchronize()
print("steps 200 %.3f s" % (time.time() - t0))
try:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            m(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = m(x)
    for _ in range(5):
        g.replay()
    torch.cuda.synchronize()
    print("capture ok")
except Exception as e:
    print("capture FAILED: %s" % e)
EOF
	t0=$(date +%s.%N)
	timeout "$(tmo 90)" "$PY" "$W/steps.py" > "$W/torch_untraced.stdout" 2> "$W/torch_untraced.stderr"
	row "torch untraced" "$([ $? = 0 ] && echo ok || echo FAIL)" "$(tr '\n' ' ' < "$W/torch_untraced.stdout")"
	rm -rf "$W/torch"
	timeout "$(tmo 120)" env FEEDTRACE_OUT="$W/torch" LD_PRELOAD="$LIB" "$PY" "$W/steps.py" \
		> "$W/torch.stdout" 2> "$W/torch.stderr"
	rc=$?
	row "torch traced" "$([ $rc = 0 ] && grep -q 'capture ok' "$W/torch.stdout" && echo ok || echo FAIL)" \
		"rc $rc $(tr '\n' ' ' < "$W/torch.stdout") $(grep -h 'Error\|error' "$W/torch.stderr" | head -1)"
	row "" "" "$(summary "$W/torch")"
else
	row "torch" SKIP "python3 -c 'import torch' with CUDA fails here"
fi

# 5. what the tracer said on stderr
n=$(cat "$W"/*.stderr 2>/dev/null | grep -c '^feedtrace' || true)
row "tracer messages" "" "$n line(s) starting 'feedtrace' in the runs' stderr (see $W)"
row "total" "" "${SECONDS} s"
echo
echo "table: $TABLE"
