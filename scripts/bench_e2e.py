#!/usr/bin/env python3
"""bench_e2e.py: `make bench`'s end-to-end figure: examples/train.py (the
PyTorch training loop) traced against a null arm, an empty library
preloaded (tests/bench/empty.c), so that what any preloaded library moves
is in the reference. The loop's time on a VM follows its page faults
(~19 us of CPU each), and their count follows where things land in
memory, so both arms run with what holds the faults still:

  - glibc malloc tunables that stop the allocator returning memory
    (GLIBC_TUNABLES: trim_threshold 16 GiB, mmap_threshold 32 MiB),
  - address randomisation off (setarch -R),
  - a fixed hash seed (PYTHONHASHSEED=0);

arms alternate (the order turns each round), minor and major faults and
CPU time (user + system, the process and the children it waited for)
are recorded per run beside wall and loop time, and each figure is the
median over the rounds of traced minus null (paired within a round), as
a percent of the null arm's median, with a 95 % bootstrap interval of
that median. Then one more run of each traced arm under `perf record -e
page-faults` counts the tracer's own page faults (on the program's
threads, on its flusher), which the run's total does not show: that
total moves by thousands with the address space's layout.

  bench_e2e.py [--rounds R] [--steps S] [--workers W] [--thread-arm] [--json FILE] [LIB ...]

LIB: libraries to trace with (default build/libfeedtrace.so; several: one
arm each, e.g. a build before a change and after). scripts/bench_measure.py
runs measure() as its section "e2e". Standard library only; run with
Debian's /usr/bin/python3.
"""
import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
TUNABLES = "glibc.malloc.trim_threshold=17179869184:glibc.malloc.mmap_threshold=33554432"
HOLD = {"GLIBC_TUNABLES": TUNABLES, "PYTHONHASHSEED": "0"}
LOOP = re.compile(r"([\d.]+) s\s*$")
CLOCKS = {1: "TSC", 2: "CLOCK_MONOTONIC"}


def build_lib(build, name):
    """tests/bench/NAME.c as build/bench/libNAME.so"""
    out = os.path.join(build, "bench", f"lib{name}.so")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", out,
                    os.path.join(ROOT, "tests", "bench", f"{name}.c"), "-lpthread"], check=True)
    return out


def tracer_clock(tool, d):
    """the clock the tracer used (the main process's file) and fall-backs"""
    r = subprocess.run([tool, "dump", "--summary", "--json", d], capture_output=True, text=True)
    kinds, falls = set(), 0
    for line in r.stdout.splitlines():
        try:
            p = json.loads(line)["process"]
        except (ValueError, KeyError):
            continue
        kinds.add(CLOCKS.get(p.get("clock_kind"), "?"))
        falls += p.get("clock_fallbacks", 0)
    return ", ".join(sorted(kinds)) or "?", falls


def interval(xs, iters=2000):
    """95 % bootstrap interval of the median of xs (seeded: the same data
    give the same interval)"""
    rnd = random.Random(1)
    meds = sorted(statistics.median(rnd.choices(xs, k=len(xs))) for _ in range(iters))
    return meds[int(0.025 * iters)], meds[int(0.975 * iters) - 1]


FLUSHER = "feedtrace-flush"          # the flusher thread's name (flusher.c)
MEMFN = re.compile(r"\b__mem(move|cpy|set)")


def own_faults(argv, env, lib, tmp):
    """The tracer's own page faults in one run under `perf record -e
    page-faults -c 1 -g`: those whose innermost frame (past libc's mem*
    functions) is in lib, on the program's threads, and all those of its
    flusher thread; a fault taken in the kernel (a system call writing the
    program's buffer) is the program's. None without a working perf."""
    perf = shutil.which("perf")
    if not perf:
        return None
    data = os.path.join(tmp, "pf.data")
    r = subprocess.run([perf, "record", "-q", "-e", "page-faults", "-c", "1", "-g", "-o", data,
                        "--"] + argv, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    r = subprocess.run([perf, "script", "-i", data, "-F", "comm,ip,sym,dso"],
                       capture_output=True, text=True)
    os.unlink(data)
    if r.returncode != 0:
        return None
    name = os.path.basename(lib)
    got = {"program": 0, "flusher": 0, "all": 0}

    def sample(head, frames):
        if head is None:
            return
        got["all"] += 1
        if head.split()[0] == FLUSHER:
            got["flusher"] += 1
            return
        while frames and MEMFN.search(frames[0]):
            frames = frames[1:]
        if frames and name in frames[0] and "kernel" not in frames[0]:
            got["program"] += 1

    head, frames = None, []
    for line in r.stdout.splitlines():
        if not line.strip():
            sample(head, frames)
            head, frames = None, []
        elif line[0] in " \t":
            frames.append(line)
        else:
            sample(head, frames)
            head, frames = line, []
    sample(head, frames)
    return got


def machine():
    info = {"cpu": "?", "clocksource": "?", "kernel": platform.release()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        info["clocksource"] = open(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource").read().strip()
    except OSError:
        pass
    return info


def measure(build, libs, rounds=10, steps=64, workers=0, progress=print, tmp=None,
            thread_arm=False):
    """The figure's results (a dict; bench_render.py's report_e2e shows it).
    thread_arm: one more arm, a library that only starts an idle thread
    (tests/bench/idle_thread.c), measured against the null arm too."""
    own_tmp = tmp is None
    tmp = tmp or tempfile.mkdtemp(prefix="ftbench_e2e.")
    data = os.path.join(tmp, "traindata")
    os.makedirs(data, exist_ok=True)
    tool = os.path.join(build, "feedtrace")
    arms = {"null": build_lib(build, "empty")}
    if thread_arm:
        arms["thread"] = build_lib(build, "idle_thread")
    for i, lib in enumerate(libs):
        arms["ft" if i == 0 else f"ft{i + 1}"] = os.path.abspath(lib)
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith("FEEDTRACE_") and k not in ("LD_PRELOAD", "GLIBC_TUNABLES",
                                                                 "PYTHONHASHSEED")}
    base_env.update(HOLD, LC_ALL="C")
    setarch = shutil.which("setarch")
    argv = [setarch, platform.machine(), "-R", PY, os.path.join(ROOT, "examples", "train.py"),
            "--cpu", "--steps", str(steps), "--workers", str(workers), "--data", data]
    runs = {a: [] for a in arms}
    clock, falls, errors = "?", 0, []
    names = list(arms)
    t0 = time.monotonic()
    for i in range(rounds):
        order = names[i % len(names):] + names[:i % len(names)]
        progress(f"e2e: round {i + 1}/{rounds}: {', '.join(order)}")
        for a in order:
            env = dict(base_env, LD_PRELOAD=arms[a])
            od = None
            if a.startswith("ft"):
                od = tempfile.mkdtemp(dir=tmp)
                env["FEEDTRACE_OUT"] = od
            outf = os.path.join(tmp, "out.txt")
            with open(outf, "w") as o:
                t1 = time.monotonic()
                p = subprocess.Popen(argv, env=env, stdout=o, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
                _pid, status, ru = os.wait4(p.pid, 0)
                wall = time.monotonic() - t1
                p.returncode = os.waitstatus_to_exitcode(status)
            out = open(outf).read().strip()
            m = LOOP.search(out.splitlines()[-1]) if out else None
            if p.returncode != 0 or not m:
                errors.append(f"{a}: exit {p.returncode}: {out[-200:]}")
            else:
                runs[a].append({"wall": wall, "loop": float(m.group(1)),
                                "cpu": ru.ru_utime + ru.ru_stime,
                                "minflt": ru.ru_minflt, "majflt": ru.ru_majflt, "round": i})
            if od:
                if a.startswith("ft") and clock == "?":
                    clock, falls = tracer_clock(tool, od)
                shutil.rmtree(od, ignore_errors=True)
    own = {}
    for a in names:
        if a.startswith("ft"):
            progress(f"e2e: {a}: the tracer's own page faults (perf)")
            od = tempfile.mkdtemp(dir=tmp)
            own[a] = own_faults(argv, dict(base_env, LD_PRELOAD=arms[a], FEEDTRACE_OUT=od),
                                arms[a], tmp)
            shutil.rmtree(od, ignore_errors=True)
    res = {"rounds": rounds, "steps": steps, "own_faults": own, "workers": workers, "tunables": TUNABLES,
           "hold": "GLIBC_TUNABLES, setarch -R, PYTHONHASHSEED=0", "arms": list(arms),
           "libs": {a: os.path.relpath(p, ROOT) if p.startswith(ROOT) else p for a, p in arms.items()},
           "runs": runs, "tracer_clock": clock, "clock_fallbacks": falls, "errors": errors,
           "machine": machine(), "seconds": time.monotonic() - t0, "figures": {}}
    null = {r["round"]: r for r in runs["null"]}
    for a in names[1:]:
        fig = {}
        for k in ("loop", "wall", "cpu", "minflt", "majflt"):
            pairs = [(r[k], null[r["round"]][k]) for r in runs[a] if r["round"] in null]
            if not pairs:
                continue
            ref = statistics.median(n for _x, n in pairs)
            if k in ("minflt", "majflt"):
                d = [x - n for x, n in pairs]
                lo, hi = interval(d)
                fig[k] = {"null": ref, "arm": statistics.median(x for x, _n in pairs),
                          "diff": statistics.median(d), "lo": lo, "hi": hi, "n": len(d)}
            else:
                d = [100.0 * (x - n) / ref for x, n in pairs]
                lo, hi = interval(d)
                fig[k] = {"null": ref, "arm": statistics.median(x for x, _n in pairs),
                          "pct": statistics.median(d), "lo": lo, "hi": hi, "n": len(d)}
        res["figures"][a] = fig
    if own_tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return res


def text(res):
    L = [f"e2e: examples/train.py --cpu --steps {res['steps']} --workers {res['workers']}, "
         f"{res['rounds']} alternating rounds ({res['hold']}); CPU {res['machine']['cpu']}, "
         f"clocksource {res['machine']['clocksource']}, tracer clock {res['tracer_clock']}"
         f" ({res['clock_fallbacks']} fall-backs)"]
    for a, fig in res["figures"].items():
        L.append(f"  {a} ({res['libs'][a]}) minus null ({res['libs']['null']}):")
        for k, f in fig.items():
            if "pct" in f:
                L.append(f"    {k:6s} null {f['null']:.2f} s, traced {f['arm']:.2f} s: "
                         f"{f['pct']:+.1f} % [{f['lo']:+.1f} .. {f['hi']:+.1f}] (n={f['n']})")
            else:
                L.append(f"    {k:6s} null {f['null']:.0f}, traced {f['arm']:.0f}: "
                         f"{f['diff']:+.0f} [{f['lo']:+.0f} .. {f['hi']:+.0f}] (n={f['n']})")
    for a, f in res.get("own_faults", {}).items():
        if f:
            L.append(f"  {a}: the tracer's own page faults in one run (perf): "
                     f"{f['program']} on the program's threads, {f['flusher']} on its flusher "
                     f"(of {f['all']})")
    L.extend("  error: " + e for e in res["errors"])
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--thread-arm", action="store_true",
                    help="one more reference: a library that only starts an idle thread")
    ap.add_argument("libs", nargs="*")
    a = ap.parse_args()
    libs = a.libs or [os.path.join(a.build, "libfeedtrace.so")]
    res = measure(a.build, libs, a.rounds, a.steps, a.workers,
                  progress=lambda m: print(m, file=sys.stderr, flush=True), thread_arm=a.thread_arm)
    print(text(res))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
