#!/usr/bin/env python3
"""bench_ab.py: issue 20's figures for one or more builds of the library,
measured in one invocation: per hooked call the floor (a minimal recorder
around the same call: micro floor_MODE, cudabench floor_launch/floor_proc,
untraced) and each library's hook alone (by name - direct, in-process,
traced), rounds interleaved (floor, lib 1, lib 2, ... then again), so that
the machine's load drifts over all of them alike. Prints medians over the
rounds with [min-max]. Used for BENCHMARKS.md section 0's before/after.

  bench_ab.py [--rounds R] [--calls pread1,read4k,openclose,mutex,launch,proc]
              [--n N] [--env NAME=VALUE ...] LIB...

--n sets every call's block size; --env adds to the traced runs' settings
(FEEDTRACE_BUF_KB=1024, the default ring, as large as the floor's, and
FEEDTRACE_STACK_DEPTH=0 by default, as `make bench`). On a loaded 2-core
machine the flusher shares the free core with the program and its
draining lands in the traced blocks; FEEDTRACE_FLUSH_MS=60000 keeps it to
the quarter-full wake-ups. A ring larger than the floor's (BUF_KB=65536,
as used until 2026-11-26) is written once over fresh pages: their first
touch (a page fault every 128 records) then adds ~10-20 ns a call that
the floor never pays.

Needs build/bench/micro, build/bench/cudabench (scripts/bench.sh builds
them) and build/simgpu/libcuda.so.1 (make simgpu). Standard library only.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.path.join(ROOT, "build")
# call: (program, mode, N, blocks)
PLAN = {"pread1": ("micro", 200000, 9), "read4k": ("micro", 200000, 9),
        "openclose": ("micro", 20000, 9), "mutex": ("micro", 2000000, 9),
        "launch": ("cudabench", 20000, 9), "proc": ("cudabench", 20000, 9)}
SIM_ENV = {"SIMGPU_LAUNCH_NS": "0", "SIMGPU_COPY_LATENCY_NS": "0"}


def run(prog, mode, n, reps, data, env):
    if prog == "micro":
        argv = [os.path.join(B, "bench", "micro"), mode, str(n), data, str(reps)]
    else:
        argv = [os.path.join(B, "bench", "cudabench"), mode, os.path.join(B, "simgpu", "libcuda.so.1"),
                str(n), str(reps)]
    e = dict(os.environ, **SIM_ENV, **env)
    out = subprocess.run(argv, env=e, capture_output=True, text=True, check=True).stdout.split()
    return float(out[1]) - float(out[2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--calls", default=",".join(PLAN))
    ap.add_argument("--n", type=int, default=0)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("libs", nargs="+")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench_ab.")
    data = os.path.join(tmp, "data.bin")
    with open(data, "wb") as f:
        f.write(os.urandom(256 * 1024))
    res = {}
    for call in a.calls.split(","):
        prog, n, reps = PLAN[call]
        n = a.n or n
        extra = dict(kv.split("=", 1) for kv in a.env)
        cfgs = ["floor"] + a.libs
        got = {c: [] for c in cfgs}
        for i in range(a.rounds):
            for c in cfgs[i % len(cfgs):] + cfgs[:i % len(cfgs)]:
                if c == "floor":
                    got[c].append(run(prog, "floor_" + call, n, reps, data, {}))
                else:
                    d = tempfile.mkdtemp(dir=tmp)
                    got[c].append(run(prog, call, n, reps, data,
                                      {"LD_PRELOAD": os.path.abspath(c), "FEEDTRACE_OUT": d,
                                       "FEEDTRACE_BUF_KB": "1024", "FEEDTRACE_STACK_DEPTH": "0",
                                       **extra}))
                    subprocess.run(["rm", "-rf", d])
        res[call] = got
        line = [f"{call:10s}"]
        for c in cfgs:
            xs = got[c]
            line.append(f"{os.path.basename(c)} {statistics.median(xs):+.1f} [{min(xs):+.1f}..{max(xs):+.1f}]")
        fm = statistics.median(got["floor"])
        line.append("above floor: " + ", ".join(f"{statistics.median(got[c]) - fm:+.1f}" for c in a.libs))
        print("  ".join(line), flush=True)
    subprocess.run(["rm", "-rf", tmp])
    return 0


if __name__ == "__main__":
    sys.exit(main())
