#!/usr/bin/env python3
"""bench_measure.py: the measuring half of `make bench`. scripts/bench.sh
builds the programs, runs this, then scripts/bench_render.py. This file
runs the benchmarks and writes everything docs/BENCHMARKS.md is made of
(each section's figures, the machine, the commands run, the notes and
failures met on the way) to one JSON file, build/bench/results.json; it
writes no Markdown, so the report's wording can change and be rendered
again without measuring again.

Every figure is a difference or ratio against a baseline measured in the
same invocation, the median of the runs (>= 5, see RUNS). Nothing here
passes or fails: goals are shown beside the figures, that is all.

Whole commands' wall times (section 5, and feedtrace's start-up cost per
process in section 7) come from hyperfine (Bench.hyperfine), which runs
each command's runs in a row. Bench.run, this file's own runner, is kept
for what hyperfine cannot do, and there traced and untraced runs
alternate: the in-process interleaved micro-benchmarks (the programs print
their own figures), callgrind instruction counts, max RSS and CPU time
(/usr/bin/time), peak RSS per process role (train.py's DataLoader
workers), and figures read from a run's output (train.py's loop time, the
converter's table).

Sections: 1 micro (tests/bench/micro.c), 1b callgrind instruction counts,
2 peers (strace, ltrace, uftrace, LTTng-UST), 3 trace size, 4 memory, 5 Python
reading small files, 6 CUDA on the simulated driver (tests/bench/cudabench.c,
tests/bench/cudapy.py), 7 examples/train.py end to end, 7b the same
against an empty preloaded library with the page faults held still
(scripts/bench_e2e.py), 8 the converter
(scripts/bench_convert.sh), 8b `feedtrace ranks` merging 1 024 rank summaries. The whole is meant to take < 15 min on a quiet
2-core machine (BUDGET_S): train.py's alternations and the converter's sizes
are cut, and the report says so, when the time would run out.

  bench_measure.py --root . --build build --results build/bench/results.json
  --only micro,cuda,...   runs those sections only and prints their results
                          as JSON instead of writing the file (debugging)
  BENCH_QUICK=1           fewer runs and calls (a smoke test; the report
                          says it was quick)

Standard library only; run with Debian's /usr/bin/python3.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

import bench_e2e
from benchlib import LTTNG_IO_WHY, PY_CUDA, save_results

QUICK = os.environ.get("BENCH_QUICK") == "1"
RUNS = 3 if QUICK else 7          # alternations for feedtrace's own micro figures
PEER_RUNS = 3 if QUICK else 5     # alternations for peers, storms, Python
CG_RUNS = 3                       # callgrind repetitions: instruction counts barely vary
STORM10M_RUNS = 3                 # the 10M-read storm (~30 s a pair): RSS growth and size
BUF_KB = 1024                     # FEEDTRACE_BUF_KB for every traced run: the default
                                  # ring, the size of the floor's (micro.c): a larger one
                                  # puts first touches of fresh pages into the hook's figure
SCALE = 10 if QUICK else 1        # divides the call counts in quick mode

LTTNG_PRELOAD = "liblttng-ust-libc-wrapper.so liblttng-ust-pthread-wrapper.so"

# (test, N, REPS) for feedtrace; N calls per timed block, REPS blocks
MICRO = [
    ("pread1", 100000, 5),
    ("read4k", 100000, 5),
    ("openclose", 20000, 5),
    ("mutex", 2000000, 5),
    ("contended", 200000, 5),
]
# traced calls per loop iteration (for bytes per call of peers)
CALLS_PER_ITER = {"pread1": 1, "read4k": 1, "openclose": 2, "mutex": 2, "contended": 2}
STRACE_SYSCALLS = {"pread1": "pread64", "read4k": "read", "openclose": "openat,close",
                   "mutex": "futex", "contended": "futex"}
LTRACE_FUNCS = {"pread1": "pread", "read4k": "read", "openclose": "open+close",
                "mutex": "pthread_mutex_lock+pthread_mutex_unlock",
                "contended": "pthread_mutex_lock+pthread_mutex_unlock"}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def wall(hf):
    """the median wall time (s) of a Bench.hyperfine result, or None"""
    return hf["median"] if hf else None


def walls(hf):
    """the wall time (s) of every timed run of a Bench.hyperfine result"""
    return hf["times"] if hf else []


def dir_bytes(d):
    total = 0
    for root, _dirs, files in os.walk(d):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def path_bytes(p):
    """bytes of file p, or of the files under directory p; 0 if p is not there"""
    if os.path.isdir(p):
        return dir_bytes(p)
    return os.path.getsize(p) if os.path.exists(p) else 0


def remove(p):
    """removes file or directory p, if it is there"""
    if os.path.isdir(p):
        shutil.rmtree(p, ignore_errors=True)
    elif os.path.exists(p):
        os.unlink(p)


def sh_quote_cmd(env, argv):
    parts = [f"{k}={shlex.quote(v)}" for k, v in env.items()]
    return " ".join(parts + [shlex.quote(a) for a in argv])


class Result:
    def __init__(self, out, err, rc, wall, maxrss_kb, pid=None):
        self.out, self.err, self.rc, self.wall, self.maxrss_kb = out, err, rc, wall, maxrss_kb
        self.pid = pid


class Bench:
    def __init__(self, root, build):
        self.root = os.path.abspath(root)
        self.build = os.path.join(self.root, build)
        self.lib = os.path.join(self.build, "libfeedtrace.so")
        self.ft = os.path.join(self.build, "feedtrace")
        self.micro = os.path.join(self.build, "bench", "micro")
        self.tmp = tempfile.mkdtemp(prefix="ftbench.")
        self.cmds = {}            # label -> example command, in order of first use
        self.notes = []           # honesty lines found while running
        self.failures = []        # (what, why)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("FEEDTRACE_") and k not in ("LD_PRELOAD", "MICRO_IDLE_THREAD")}
        env["LC_ALL"] = "C"
        self.env = env
        self.seq = 0
        self.t_start = time.monotonic()
        self.defaults = config_defaults(self.root)

    # ---- running ----
    def elapsed(self):
        return time.monotonic() - self.t_start

    def run(self, argv, env=None, label=None, timeout=600, cwd=None, watch=None):
        """Runs argv in its own session; watch(sid, stop_event), if given,
        runs in a thread while it does."""
        env = env or {}
        if label and label not in self.cmds:
            self.cmds[label] = self.rel(sh_quote_cmd(env, argv))
        e = dict(self.env)
        e.update(env)
        self.seq += 1
        fo = os.path.join(self.tmp, f"stdout.{self.seq}")
        fe = os.path.join(self.tmp, f"stderr.{self.seq}")
        with open(fo, "w") as o, open(fe, "w") as er:
            t0 = time.monotonic()
            p = subprocess.Popen(argv, env=e, stdout=o, stderr=er, stdin=subprocess.DEVNULL,
                                 cwd=cwd or self.root, start_new_session=True)
            killed = []

            def kill():
                killed.append(1)
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
            timer = threading.Timer(timeout, kill)
            timer.start()
            stop = threading.Event()
            wt = None
            if watch:
                wt = threading.Thread(target=watch, args=(p.pid, stop), daemon=True)
                wt.start()
            _pid, status, ru = os.wait4(p.pid, 0)
            wall = time.monotonic() - t0
            timer.cancel()
            stop.set()
            if wt:
                wt.join()
            p.returncode = os.waitstatus_to_exitcode(status)
        out = open(fo).read()
        err = open(fe).read()
        os.unlink(fo)
        os.unlink(fe)
        rc = p.returncode if not killed else 124
        return Result(out, err, rc, wall, ru.ru_maxrss, p.pid)

    def hyperfine(self, argv, env=None, label=None, runs=PEER_RUNS):
        """The wall time of the whole command argv (env on top of this
        runner's environment) from hyperfine: `runs` runs back to back after
        one warm-up run, no shell in between. Returns hyperfine's result
        for it (in seconds: "median", "min", "max", "times" of every run,
        ...), or None if it failed (then in failures)."""
        jf = os.path.join(self.tmp, "hyperfine.json")
        # every command through env(1), with or without variables: the
        # untraced baselines pay the same exec as the traced runs
        cmd = shlex.join(["env"] + [f"{k}={v}" for k, v in (env or {}).items()] + argv)
        r = self.run(["hyperfine", "-N", "--style", "none", "--warmup", "1", "--runs", str(runs),
                      "--export-json", jf, cmd], label=label)
        if r.rc != 0:
            why = ((r.err or r.out).strip().splitlines() or [f"exit {r.rc}"])[-1]
            self.failures.append((f"`{self.rel(cmd)}`", f"hyperfine: {why}"))
            return None
        with open(jf) as f:
            return json.load(f)["results"][0]

    def rel(self, cmd):
        cmd = re.sub(re.escape(self.tmp) + r"/(\w+)\.\d+\b", r"$TMP/\1", cmd)
        cmd = cmd.replace(self.tmp, "$TMP")
        cmd = cmd.replace("LD_PRELOAD=" + self.root + "/", "LD_PRELOAD=$PWD/")
        return cmd.replace(self.root + "/", "")

    def fresh_dir(self, name):
        self.seq += 1
        d = os.path.join(self.tmp, f"{name}.{self.seq}")
        os.makedirs(d)
        return d

    def ft_env(self, outdir, buf_kb=BUF_KB):
        e = {"LD_PRELOAD": self.lib, "FEEDTRACE_OUT": outdir}
        if buf_kb:
            e["FEEDTRACE_BUF_KB"] = str(buf_kb)
        return e

    def dump_summary(self, d):
        """([process], error) from `feedtrace dump D --summary --json`: one
        dict per process of trace directory d, and the tool's last line
        (a list of one) or None when it succeeded."""
        r = self.run([self.ft, "dump", d, "--summary", "--json"])
        procs = []
        for line in r.out.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    procs.append(json.loads(line)["process"])
                except (ValueError, KeyError):
                    pass
        error = None
        if r.rc != 0:
            error = (r.err or r.out).strip().splitlines()[-1:] or ["rc %d" % r.rc]
        return procs, error

    def summary(self, d):
        """records and lost over every process of trace directory d, and its
        bytes on disk"""
        procs, error = self.dump_summary(d)
        s = {"records": sum(p.get("records", 0) for p in procs),
             "lost": sum(p.get("lost", 0) for p in procs), "bytes": dir_bytes(d)}
        if error:
            s["error"] = error
        return s

    def micro_args(self, test, n, reps, path):
        return [self.micro, test, str(n), path, str(reps)]

    def parse_micro(self, r, what):
        if r.rc != 0:
            raise RuntimeError(f"{what}: exit {r.rc}: {(r.err or r.out).strip()[-300:]}")
        for line in reversed(r.out.strip().splitlines()):
            f = line.split()
            if len(f) >= 2:
                try:
                    name = float(f[1])
                    direct = float(f[2]) if len(f) > 2 and f[2] != "nan" else None
                    return name, direct
                except ValueError:
                    continue
        raise RuntimeError(f"{what}: no figure in output: {r.out[-200:]!r} {r.err[-200:]!r}")

    def progress(self, msg):
        el = time.monotonic() - self.t_start
        print(f"bench [{el:5.0f}s] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- machine
def machine_info():
    info = {}
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        flags = ""
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                flags = line
                break
        info["tsc"] = ", ".join(f for f in ("constant_tsc", "nonstop_tsc", "hypervisor")
                                if f" {f}" in flags)
    except OSError:
        pass
    info["cpu"] = model
    info["cores"] = os.cpu_count()
    info["kernel"] = platform.release()
    try:
        info["glibc"] = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        info["glibc"] = "?"
    try:
        info["clocksource"] = open(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource").read().strip()
    except OSError:
        info["clocksource"] = "?"
    try:
        mem = open("/proc/meminfo").readline().split()[1]
        info["mem"] = f"{int(mem) // 1024} MiB"
    except (OSError, IndexError, ValueError):
        info["mem"] = "?"

    def ver(argv):
        try:
            o = subprocess.run(argv, capture_output=True, text=True, timeout=20)
            t = (o.stdout + o.stderr).strip().splitlines()
            return t[0].strip() if t else "?"
        except (OSError, subprocess.SubprocessError):
            return "not installed"
    info["tools"] = {
        "strace": ver(["strace", "-V"]),
        "ltrace": ver(["ltrace", "-V"]),
        "uftrace": ver(["uftrace", "--version"]),
        "lttng": ver(["lttng", "--version"]),
        "lttng-ust": ver(["dpkg-query", "-W", "-f=${Version}", "liblttng-ust1"]),
        "python3": ver(["/usr/bin/python3", "--version"]),
        "cc": ver(["cc", "--version"]),
        "hyperfine": ver(["hyperfine", "--version"]),
    }
    return info


def git_info(root):
    def g(*a):
        try:
            return subprocess.run(["git", "-C", root] + list(a), capture_output=True,
                                  text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    head = g("rev-parse", "--short", "HEAD")
    dirty = g("status", "--porcelain", "--untracked-files=no", "--", "libfeedtrace", "shim")
    return head + (" (libfeedtrace/ or shim/ modified in the working tree)" if dirty else "")


def loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


CFG_U32 = re.compile(r"\s*CFG_U32\(\s*(\w+)\s*,\s*\w+\s*,\s*(\d+)\s*,")


def config_defaults(root):
    """{NAME: default} of the recorder's numeric settings (FEEDTRACE_NAME),
    from libfeedtrace/config.def"""
    with open(os.path.join(root, "libfeedtrace", "config.def")) as f:
        return {m.group(1): int(m.group(2)) for m in map(CFG_U32.match, f) if m}


# ---------------------------------------------------------------- section 1
def section_micro(b, datafile):
    res = {}
    for test, n, reps in MICRO:
        n = max(1, n // SCALE)
        path = datafile
        cfgs = ["base", "idle", "ft"]
        data = {c: [] for c in cfgs}
        direct = {c: [] for c in cfgs}
        lost = records = tbytes = 0
        errors = []
        b.progress(f"micro {test}: {RUNS} x (untraced, untraced+idle thread, feedtrace), N={n}")
        for i in range(RUNS):
            order = cfgs[i % 3:] + cfgs[:i % 3]
            for c in order:
                args = b.micro_args(test, n, reps, path)
                if c == "base":
                    r = b.run(args, label=f"micro-untraced-{test}")
                elif c == "idle":
                    r = b.run(args, env={"MICRO_IDLE_THREAD": "1"}, label=f"micro-idle-{test}")
                else:
                    d = b.fresh_dir("ft")
                    r = b.run(args, env=b.ft_env(d), label=f"micro-feedtrace-{test}")
                try:
                    x, y = b.parse_micro(r, f"{test}/{c}")
                except RuntimeError as e:
                    errors.append(str(e))
                    continue
                data[c].append(x)
                direct[c].append(y)
                if c == "ft":
                    s = b.summary(d)
                    lost += s["lost"]
                    records += s["records"]
                    tbytes += s["bytes"]
                    if s.get("error"):
                        errors.append(f"dump: {s['error']}")
                    shutil.rmtree(d, ignore_errors=True)
        # feedtrace with its default ring (no FEEDTRACE_BUF_KB): drops?
        d = b.fresh_dir("ftdef")
        r = b.run(b.micro_args(test, n, reps, path), env=b.ft_env(d, buf_kb=None),
                  label=f"micro-feedtrace-defaultbuf-{test}")
        sdef = b.summary(d)
        shutil.rmtree(d, ignore_errors=True)
        inproc = [x - y for x, y in zip(data["ft"], direct["ft"]) if y is not None]
        inproc_base = [x - y for x, y in zip(data["base"], direct["base"]) if y is not None]
        res[test] = {
            "n": n, "reps": reps, "runs": len(data["ft"]),
            "base": med(data["base"]), "idle": med(data["idle"]), "ft": med(data["ft"]),
            "base_all": data["base"], "idle_all": data["idle"], "ft_all": data["ft"],
            "inproc": med(inproc), "inproc_all": inproc, "inproc_base": med(inproc_base),
            "lost": lost, "records": records, "bytes": tbytes,
            "lost_default": sdef["lost"], "records_default": sdef["records"],
            "errors": errors,
        }
        m = res[test]
        if m["ft"] is not None and m["base"] is not None:
            m["added"] = m["ft"] - m["base"]
        else:
            m["added"] = None
        m["added_mt"] = (m["ft"] - m["idle"]) if m["ft"] is not None and m["idle"] is not None else None
        for e in errors:
            b.failures.append((f"micro {test}", e))
    def differences(test, n, what):
        """RUNS runs of micro TEST: each run's figure minus its baseline"""
        b.progress(f"micro {test}: {RUNS} x {what}")
        d = []
        for i in range(RUNS):
            r = b.run(b.micro_args(test, max(1, n // SCALE), 7, datafile), label="micro-" + test)
            try:
                x, y = b.parse_micro(r, test)
                d.append(x - y)
            except RuntimeError as e:
                b.failures.append(("micro " + test, str(e)))
        return d
    # the clock's floor: what two TSC reads (a call's start and end) cost here
    pairs = differences("clock", 1000000, "two TSC reads vs none")
    res["pread1"]["clock_pair"] = med(pairs)
    res["pread1"]["clock_pair_all"] = pairs
    # the floor (issue 20): a minimal recorder around the same call (TSC,
    # the call through libc's own pointer, TSC, one 32-byte store), against
    # the bare call, in interleaved blocks of one process (untraced); the
    # hook's distance from it is its in-process cost minus the floor
    for test, n, _reps in MICRO:
        if test == "contended":
            continue
        floors = differences("floor_" + test, n, f"minimal recorder around {test} vs bare calls")
        m = res[test]
        m["floor"], m["floor_all"] = med(floors), floors
        m["above_floor"] = m["inproc"] - m["floor"] if m["inproc"] is not None and m["floor"] is not None else None
    return res


# ---------------------------------------------------------------- section 1b
# callgrind_annotate --show=CG_EVENTS: a count per event ("N (p%)", "0" or
# "." for none), then file:function [object]
CG_EVENTS = "Ir,D1mr,D1mw,DLmr,DLmw"      # runs with --cache-sim=yes; others: Ir
CG_CELL = r"(?:([\d,]+)(?:\s+\(\s*[\d.]+%\))?|\.)\s+"
CG_LINE = {k: re.compile(r"^\s*" + CG_CELL * k + r"(.*?):([^\s:]+)(?:\s+\[(.*)\])?\s*$")
           for k in (1, 5)}
HOOK_FILES = ("shim/", "cuda_wrappers.c", "recorder.h", "clock.h", "strtab.h", "ia32intrin.h", "x86intrin.h")
HOOK_FUNCS = ("ft_fd_path", "ft_fd_set", "ft_intern", "ft_intern_path", "intern_n", "hash64",
              "arena_add", "ft_ring_full", "ft_busy_slow")
CG_N = (max(10, 1000 // SCALE), max(30, 3000 // SCALE))   # section 1b: calls in the two runs compared


def cg_rows(b, d, cache=True):
    """[(Ir, file, function, object, D1 misses, LL misses)] over all callgrind
    thread files in d (misses from callgrind's cache simulation, for runs
    made with --cache-sim=yes; else 0)."""
    rows = []
    k = 5 if cache else 1
    for f in os.listdir(d):
        r = b.run(["callgrind_annotate", "--threshold=100", "--auto=no",
                   "--show=" + (CG_EVENTS if cache else "Ir"), os.path.join(d, f)])
        for line in r.out.splitlines():
            m = CG_LINE[k].match(line)
            if m and not m.group(k + 1).endswith("PROGRAM TOTALS"):
                n = [int((m.group(i) or "0").replace(",", "")) for i in range(1, k + 1)] + [0] * (5 - k)
                rows.append((n[0], m.group(k + 1), m.group(k + 2), m.group(k + 3) or "",
                             n[1] + n[2], n[3] + n[4]))
    return rows


def is_hook_row(fil, fn):
    return any(h in fil for h in HOOK_FILES) or \
        ("strtab.c" in fil and fn in HOOK_FUNCS) or ("ring.c" in fil and fn in HOOK_FUNCS)


def callgrind_counts(b, d):
    """(total Ir, Ir in hook code, Ir in flusher.c, Ir in libzstd, D1 and LL
    misses in hook code) over all thread files in directory d."""
    total = hook = flusher = zstd = d1 = ll = 0
    for ir, fil, fn, obj, m1, ml in cg_rows(b, d):
        total += ir
        if is_hook_row(fil, fn):
            hook += ir
            d1 += m1
            ll += ml
        elif fil.endswith("flusher.c") or fil.endswith("shuffle.h"):
            flusher += ir
        elif "libzstd" in obj:
            zstd += ir
    return total, hook, flusher, zstd, d1, ll


def section_instr(b, datafile):
    """Instructions per call from valgrind's callgrind: no timing noise at all.
    Each figure is a difference between runs of N1 and N2 calls (start-up and
    exit cancel out) and against a baseline, median of CG_RUNS."""
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        b.notes.append("**Instruction counts not measured**: valgrind is not installed.")
        return None
    n1, n2 = CG_N
    res = {}
    for test in ("pread1", "read4k", "openclose", "mutex"):
        b.progress(f"callgrind {test}: {CG_RUNS} x (untraced, untraced+idle, feedtrace) x N={n1},{n2}")
        per = {"hook": [], "rest": [], "mt": [], "flusher_c": [], "zstd": [], "d1": [], "ll": []}
        for _i in range(CG_RUNS):
            v = {}
            for cfg in ("u", "i", "t"):
                for n in (n1, n2):
                    d = b.fresh_dir("cg")
                    env = {}
                    if cfg == "i":
                        env = {"MICRO_IDLE_THREAD": "1"}
                    elif cfg == "t":
                        od = b.fresh_dir("cgft")
                        env = b.ft_env(od)
                    r = b.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                               "--cache-sim=yes",
                               f"--callgrind-out-file={d}/cg.out"] +
                              b.micro_args(test, n, 1, datafile), env=env,
                              label=f"callgrind-{ {'u': 'untraced', 'i': 'idle', 't': 'feedtrace'}[cfg] }")
                    v[cfg, n] = callgrind_counts(b, d) if r.rc == 0 else None
                    shutil.rmtree(d, ignore_errors=True)
                    if cfg == "t":
                        shutil.rmtree(od, ignore_errors=True)
            if any(x is None for x in v.values()):
                continue
            units = 2 * (n2 - n1)            # by-name calls (per pair for mutex, openclose)
            dT = v["t", n2][0] - v["t", n1][0]
            dTh = v["t", n2][1] - v["t", n1][1]
            dI = v["i", n2][0] - v["i", n1][0]
            dU = v["u", n2][0] - v["u", n1][0]
            per["hook"].append(dTh / units)
            per["rest"].append((dT - dI - dTh) / units)
            # the penalty falls on libc's calls: by name and direct for locks,
            # by name only where direct is the system call itself
            per["mt"].append((dI - dU) / ((2 if test == "mutex" else 1) * units))
            per["d1"].append((v["t", n2][4] - v["t", n1][4]) / units)
            per["ll"].append((v["t", n2][5] - v["t", n1][5]) / units)
            per["flusher_c"].append((v["t", n2][2] - v["t", n1][2]) / units)
            per["zstd"].append((v["t", n2][3] - v["t", n1][3]) / units)
        res[test] = {k: med(x) for k, x in per.items()}
        res[test]["all"] = per
    return res


# ---------------------------------------------------------------- section 2
def peer_plan(test):
    """(peer, N, REPS) for each peer, with fewer calls for the slow ones."""
    io = test in ("pread1", "read4k", "openclose")
    plan = []
    plan.append(("strace", 2000 if io else (200000 if test == "contended" else 2000000), 3))
    plan.append(("strace-seccomp", 2000 if io else (200000 if test == "contended" else 2000000), 3))
    plan.append(("ltrace", 200 if test == "openclose" else 300, 3))
    plan.append(("uftrace", 25000 if io else (100000 if test == "contended" else 200000), 3))
    plan.append(("lttng", None if io else (100000 if test == "contended" else 200000), 3))
    return plan


def run_peer(b, peer, test, n, reps, path):
    """One traced run of test under peer. Returns (ns_name, out_bytes, calls_seen, err)."""
    n = max(1, n // SCALE)
    margs = b.micro_args(test, n, reps, path)
    outp = os.path.join(b.tmp, f"peer.{peer}.out")
    label = f"peer-{peer}-{test}"
    env = {}
    direct_seen = False
    if peer in ("strace", "strace-seccomp"):
        argv = ["strace", "-f", "-qq"] + (["--seccomp-bpf"] if peer == "strace-seccomp" else []) + \
               ["-o", outp, "-e", "trace=" + STRACE_SYSCALLS[test]] + margs
        direct_seen = True      # syscalls made through the libc pointers are traced too
    elif peer == "ltrace":
        argv = ["ltrace", "-f", "-o", outp, "-e", LTRACE_FUNCS[test]] + margs
    elif peer == "uftrace":
        outp = os.path.join(b.tmp, "peer.uftrace.data")
        argv = ["uftrace", "record", "--force", "-d", outp] + margs
    elif peer == "lttng":
        outp = os.path.join(b.tmp, "peer.lttng")
        shutil.rmtree(outp, ignore_errors=True)
        sess = f"ftbench{os.getpid()}"
        for c in (["lttng", "create", sess, f"--output={outp}"],
                  ["lttng", "enable-event", "-u", "-a", "-s", sess],
                  ["lttng", "start", sess]):
            r = b.run(c, label=f"peer-lttng-setup-{c[1]}")
            if r.rc != 0:
                b.run(["lttng", "destroy", sess])
                return None, None, None, f"`{' '.join(c)}` failed: {(r.err or r.out).strip()[-200:]}"
        env = {"LD_PRELOAD": LTTNG_PRELOAD}
        argv = margs
    else:
        raise ValueError(peer)
    if peer != "lttng":             # lttng's session already owns outp
        remove(outp)
    r = b.run(argv, env=env, label=label, timeout=300)
    if peer == "lttng":
        b.run(["lttng", "stop", sess], label="peer-lttng-setup-stop")
        b.run(["lttng", "destroy", sess], label="peer-lttng-setup-destroy")
    try:
        x, _y = b.parse_micro(r, f"{peer}/{test}")
    except RuntimeError as e:
        return None, None, None, str(e)
    size = path_bytes(outp)
    blocks = reps + 1
    calls = n * blocks * CALLS_PER_ITER[test] * (2 if test == "contended" else 1)
    if direct_seen and test != "contended":
        calls *= 2
    if peer == "lttng":
        calls = calls // 2 * 3      # lock_req + lock_acq + unlock events per pair
    remove(outp)
    return x, size, calls, None


def section_peers(b, datafile, micro):
    res = {}
    for test, _n, _reps in MICRO:
        res[test] = {}
        for peer, n, reps in peer_plan(test):
            if n is None:
                res[test][peer] = {"why": LTTNG_IO_WHY}
                continue
            if peer in ("strace", "strace-seccomp", "ltrace", "uftrace") and not shutil.which(peer.split("-")[0]):
                res[test][peer] = {"why": f"{peer.split('-')[0]} is not installed"}
                continue
            if peer == "lttng" and not shutil.which("lttng"):
                res[test][peer] = {"why": "lttng is not installed"}
                continue
            b.progress(f"peer {peer} on {test}: {PEER_RUNS} x (untraced, traced), N={max(1, n // SCALE)}")
            base, traced, sizes, calls, errs = [], [], [], None, []
            for i in range(PEER_RUNS):
                order = (0, 1) if i % 2 == 0 else (1, 0)
                for k in order:
                    if k == 0:
                        r = b.run(b.micro_args(test, max(1, n // SCALE), reps, datafile),
                                  label=f"peer-untraced-{test}-N{n}")
                        try:
                            base.append(b.parse_micro(r, "untraced")[0])
                        except RuntimeError as e:
                            errs.append(str(e))
                    else:
                        x, size, c, err = run_peer(b, peer, test, n, reps, datafile)
                        if err:
                            errs.append(err)
                            continue
                        traced.append(x)
                        sizes.append(size)
                        calls = c
                if not traced and i >= 1:
                    break               # the peer cannot run here: stop trying
            entry = {"n": max(1, n // SCALE), "reps": reps, "base": med(base), "traced": med(traced),
                     "base_all": base, "traced_all": traced, "errors": errs}
            if entry["traced"] is not None and entry["base"] is not None:
                entry["added"] = entry["traced"] - entry["base"]
                ftadd = micro[test].get("added")
                entry["multiple"] = (entry["added"] / ftadd) if ftadd and ftadd > 5 else None
                entry["bytes_per_call"] = (med(sizes) / calls) if calls else None
            else:
                entry["why"] = "could not run: " + ("; ".join(sorted(set(errs)))[:400] or "no output")
            res[test][peer] = entry
    return res


# ---------------------------------------------------------------- sections 3, 4
def timed(b, argv, env, label):
    """Run under /usr/bin/time: (Result, max RSS KiB, user+sys CPU s)."""
    tf = os.path.join(b.tmp, "time.out")
    if os.path.exists("/usr/bin/time"):
        r = b.run(["/usr/bin/time", "-f", "%M %U %S", "-o", tf] + argv, env=env, label=label)
        try:
            f = open(tf).read().split("\n")[-2].split()
            return r, int(f[0]), float(f[1]) + float(f[2])
        except (OSError, IndexError, ValueError):
            return r, None, None
    r = b.run(argv, env=env, label=label)
    b.notes.append("**/usr/bin/time is missing**: max RSS comes from `wait4`, which also counts "
                   "the Python parent's RSS inherited through fork; RSS figures are floors.")
    return r, r.maxrss_kb, None


def section_storm(b, datafile, mixdir):
    res = {}
    for label, mode, n, path in (("storm1M", "storm", 1000000, datafile),
                                 ("storm10M", "storm", 10000000, datafile),
                                 ("mixed", "mixed", 100000, mixdir)):
        n = max(1, n // SCALE)
        nruns = min(PEER_RUNS, STORM10M_RUNS) if label == "storm10M" else PEER_RUNS
        b.progress(f"{label}: {nruns} x (untraced, feedtrace), N={n}")
        v = {k: [] for k in ("base_rss", "ft_rss", "base_t", "ft_t", "base_cpu", "ft_cpu",
                             "bpe", "recs", "lost", "sizes", "base_self", "ft_self", "ft_other")}

        def storm_cpu(r, which):
            if mode != "storm":
                return
            f = r.out.split()
            try:
                v[which + "_self"].append(float(f[3]))
                if which == "ft":
                    v["ft_other"].append(float(f[4]))
            except (IndexError, ValueError):
                pass
        errs = []
        for i in range(nruns):
            for k in ((0, 1) if i % 2 == 0 else (1, 0)):
                argv = [b.micro, mode, str(n), path]
                if k == 0:
                    r, rss, cpu = timed(b, argv, {}, f"{label}-untraced")
                    if r.rc == 0:
                        v["base_rss"].append(rss)
                        v["base_t"].append(r.wall)
                        v["base_cpu"].append(cpu)
                        storm_cpu(r, "base")
                    else:
                        errs.append(f"untraced exit {r.rc}: {r.err.strip()[-200:]}")
                else:
                    d = b.fresh_dir("storm")
                    r, rss, cpu = timed(b, argv, b.ft_env(d), f"{label}-feedtrace")
                    if r.rc != 0:
                        errs.append(f"traced exit {r.rc}: {r.err.strip()[-200:]}")
                        continue
                    s = b.summary(d)
                    v["ft_rss"].append(rss)
                    v["ft_t"].append(r.wall)
                    v["ft_cpu"].append(cpu)
                    storm_cpu(r, "ft")
                    v["recs"].append(s["records"])
                    v["lost"].append(s["lost"])
                    v["sizes"].append(s["bytes"])
                    if s["records"]:
                        v["bpe"].append(s["bytes"] / s["records"])
                    shutil.rmtree(d, ignore_errors=True)
        m = {k: med(x) for k, x in v.items()}
        cpu_per_ev = None
        if m["ft_cpu"] is not None and m["base_cpu"] is not None and m["recs"]:
            cpu_per_ev = (m["ft_cpu"] - m["base_cpu"]) / m["recs"] * 1e9
        res[label] = {
            "n": n, "base_rss": m["base_rss"], "ft_rss": m["ft_rss"],
            "rss_added_kb": (m["ft_rss"] - m["base_rss"]) if m["ft_rss"] is not None and m["base_rss"] is not None else None,
            "base_rss_all": v["base_rss"], "ft_rss_all": v["ft_rss"],
            "base_t": m["base_t"], "ft_t": m["ft_t"], "base_t_all": v["base_t"], "ft_t_all": v["ft_t"],
            "base_cpu": m["base_cpu"], "ft_cpu": m["ft_cpu"], "cpu_ns_per_event": cpu_per_ev,
            "bpe": m["bpe"], "bpe_all": v["bpe"], "records": m["recs"], "lost": sum(v["lost"]),
            "bytes": m["sizes"], "errors": errs,
            "self_added": (m["ft_self"] - m["base_self"]) if m["ft_self"] is not None and m["base_self"] is not None else None,
            "other": m["ft_other"],
        }
        for e_ in errs:
            b.failures.append((label, e_))
    return res


# ---------------------------------------------------------------- section 5
PY_WORKLOAD = r'''
import os, sys
d, passes = sys.argv[1], int(sys.argv[2])
paths = [os.path.join(d, n) for n in sorted(os.listdir(d))]
total = 0
for _ in range(passes):
    for p in paths:
        with open(p, "rb") as f:
            total += len(f.read())
print(total)
'''


def section_python(b):
    """Whole runs of a Python script reading small files, timed by hyperfine:
    untraced, feedtrace, strace, strace --seccomp-bpf."""
    py = "/usr/bin/python3"
    d = os.path.join(b.tmp, "pyfiles")
    os.makedirs(d)
    for i in range(2000):
        with open(os.path.join(d, f"f{i:04d}"), "wb") as f:
            f.write(os.urandom(200 + (i * 37) % 3800))
    script = os.path.join(b.tmp, "pyread.py")
    with open(script, "w") as f:
        f.write(PY_WORKLOAD)
    # calibrate the pass count for ~2.5 s untraced
    r = b.hyperfine([py, script, d, "10"], runs=1)
    r2 = b.hyperfine([py, "-c", "pass"], runs=1)
    passes = 20                     # the least (and what is left if calibrating failed)
    if r and r2:
        per_pass = max(1e-3, (r["median"] - r2["median"]) / 10)
        passes = max(20, int(round(2.5 / per_pass)))
    if QUICK:
        passes = max(5, passes // 10)
    b.progress(f"python: {passes} passes over 2000 files, hyperfine: {PEER_RUNS} runs each "
               "(untraced, feedtrace)")
    res = {"passes": passes, "files": 2000}
    od = b.fresh_dir("py")
    base = b.hyperfine([py, script, d, str(passes)], label="python-untraced")
    ft = b.hyperfine([py, script, d, str(passes)], env=b.ft_env(od), label="python-feedtrace")
    # one trace file per run of the one process (hyperfine's warm-up run's too)
    procs, _error = b.dump_summary(od)
    recs = [p.get("records", 0) for p in procs]
    bpe = [os.path.getsize(p["file"]) / p["records"] for p in procs if p.get("records")]
    shutil.rmtree(od, ignore_errors=True)
    res.update(base=wall(base), ft=wall(ft), base_all=walls(base), ft_all=walls(ft),
               records=med(recs), lost=sum(p.get("lost", 0) for p in procs), bpe=med(bpe))
    # strace stops the process for every traced syscall: a shorter run
    sp = max(2, passes // 20)
    res["strace_passes"] = sp
    b.progress(f"python: {sp} passes, hyperfine: {PEER_RUNS} runs each "
               "(untraced, strace, strace --seccomp-bpf, feedtrace)")
    out = os.path.join(b.tmp, "py.strace")
    sbase = b.hyperfine([py, script, d, str(sp)], label="python-untraced-short")
    st = b.hyperfine(["strace", "-f", "-qq", "-o", out, "-e", "trace=openat,read", py, script, d, str(sp)],
                     label="python-strace")
    stsec = b.hyperfine(["strace", "-f", "-qq", "--seccomp-bpf", "-o", out, "-e", "trace=openat,read",
                         py, script, d, str(sp)], label="python-strace-seccomp")
    # feedtrace on the short run too, so all three ratios share a baseline
    od = b.fresh_dir("pys")
    ftshort = b.hyperfine([py, script, d, str(sp)], env=b.ft_env(od), label="python-feedtrace-short")
    shutil.rmtree(od, ignore_errors=True)
    res.update(sbase=wall(sbase), strace=wall(st), strace_sec=wall(stsec), ftshort=wall(ftshort),
               sbase_all=walls(sbase), strace_all=walls(st), strace_sec_all=walls(stsec),
               ftshort_all=walls(ftshort))
    shutil.rmtree(d, ignore_errors=True)
    return res


# ---------------------------------------------------------------- section 6: CUDA
SIM_ENV = {"SIMGPU_LAUNCH_NS": "0", "SIMGPU_COPY_LATENCY_NS": "0"}
# (mode, N, REPS): N calls per timed block; the ring (FEEDTRACE_BUF_KB) holds
# every record of a run (2 slots per CUDA record), so nothing is dropped
CUDA_PLAN = [("launch", 20000, 9), ("proc", 20000, 9), ("copy", 10000, 9)]


def parse_fig(r, what):
    """'MODE ns direct interposed' -> (ns, direct, interposed)"""
    if r.rc != 0:
        raise RuntimeError(f"{what}: exit {r.rc}: {(r.err or r.out).strip()[-300:]}")
    for line in reversed(r.out.strip().splitlines()):
        f = line.split()
        if len(f) >= 4:
            try:
                return float(f[1]), float(f[2]), int(f[3])
            except ValueError:
                continue
    raise RuntimeError(f"{what}: no figure in output: {r.out[-200:]!r} {r.err[-200:]!r}")


def section_cuda(b):
    drv = os.path.join(b.build, "simgpu", "libcuda.so.1")
    prog = os.path.join(b.build, "bench", "cudabench")
    if not os.path.exists(drv) or not os.path.exists(prog):
        b.failures.append(("CUDA benchmarks", f"{b.rel(drv)} or {b.rel(prog)} missing (scripts/bench.sh builds them)"))
        return None
    depth = b.defaults["STACK_DEPTH"]
    res = {"depth": depth, "rows": {}, "errors": []}
    for mode, n, reps in CUDA_PLAN:
        n = max(100, n // SCALE)
        cfgs = ["base", "idle", "ft0"] + (["ft16"] if mode == "copy" else [])
        data = {c: [] for c in cfgs}
        direct = {c: [] for c in cfgs}
        recs, lost, not_interposed = {}, {}, 0
        b.progress(f"cuda {mode}: {RUNS} x ({', '.join(cfgs)}), N={n}")
        for i in range(RUNS):
            order = cfgs[i % len(cfgs):] + cfgs[:i % len(cfgs)]
            for c in order:
                env = dict(SIM_ENV)
                d = None
                if c == "idle":
                    env["MICRO_IDLE_THREAD"] = "1"
                elif c.startswith("ft"):
                    d = b.fresh_dir("cu")
                    env.update(b.ft_env(d))
                    if c == "ft0":
                        env["FEEDTRACE_STACK_DEPTH"] = "0"
                r = b.run([prog, mode, drv, str(n), str(reps)], env=env, label=f"cuda-{mode}-{c}")
                try:
                    x, y, interp = parse_fig(r, f"cuda {mode}/{c}")
                except RuntimeError as e:
                    res["errors"].append(str(e))
                    continue
                if c.startswith("ft") and not interp:
                    not_interposed += 1
                data[c].append(x)
                direct[c].append(y)
                if d:
                    s = b.summary(d)
                    recs.setdefault(c, []).append(s["records"])
                    lost.setdefault(c, []).append(s["lost"])
                    shutil.rmtree(d, ignore_errors=True)
        if not_interposed:
            res["errors"].append(f"cuda {mode}: {not_interposed} traced runs got the driver's own "
                                 "function, not feedtrace's wrapper")
        for c in cfgs:
            if c in ("base", "idle"):
                continue
            key = mode if mode != "copy" else f"copy{c[2:]}"
            inproc = [x - y for x, y in zip(data[c], direct[c])]
            row = {"n": n, "reps": reps, "runs": len(data[c]),
                   "base": med(data["base"]), "idle": med(data["idle"]), "ft": med(data[c]),
                   "base_all": data["base"], "ft_all": data[c],
                   "inproc": med(inproc), "inproc_all": inproc,
                   "inproc_base": med([x - y for x, y in zip(data["base"], direct["base"])]),
                   "records": sum(recs.get(c, [])), "lost": sum(lost.get(c, []))}
            row["added"] = row["ft"] - row["base"] if row["ft"] is not None and row["base"] is not None else None
            row["added_mt"] = row["ft"] - row["idle"] if row["ft"] is not None and row["idle"] is not None else None
            res["rows"][key] = row
    # the floor (issue 20): a minimal recorder around the driver's own
    # launch function, against the bare call, interleaved in one process
    for mode, n, reps in CUDA_PLAN:
        row = res["rows"].get(mode)
        if mode == "copy" or not row:
            continue
        n = max(100, n // SCALE)
        b.progress(f"cuda floor_{mode}: {RUNS} x minimal recorder around the driver's launch, N={n}")
        floors = []
        for _i in range(RUNS):
            r = b.run([prog, "floor_" + mode, drv, str(n), str(reps)], env=dict(SIM_ENV),
                      label=f"cuda-floor-{mode}")
            try:
                x, y, _interp = parse_fig(r, f"cuda floor_{mode}")
                floors.append(x - y)
            except RuntimeError as e:
                res["errors"].append(str(e))
        row["floor"], row["floor_all"] = med(floors), floors
        row["above_floor"] = (row["inproc"] - row["floor"]
                              if row["inproc"] is not None and row["floor"] is not None else None)
    c0, c16 = res["rows"].get("copy0"), res["rows"].get("copy16")
    if c0 and c16:
        res["stack_proc"] = c16["ft"] - c0["ft"] if c16["ft"] is not None and c0["ft"] is not None else None
        res["stack_inproc"] = c16["inproc"] - c0["inproc"] if c16["inproc"] is not None and c0["inproc"] is not None else None

    # ---- the same sync copy from Python (ctypes.PyDLL holds the GIL)
    script = os.path.join(b.root, "tests", "bench", "cudapy.py")
    n, reps = max(200, 5000 // SCALE), 7
    b.progress(f"cuda from Python: {PEER_RUNS} x ({', '.join(c for c, _ in PY_CUDA)}), N={n}")
    pyd = {c: [] for c, _ in PY_CUDA}
    pydir = {c: [] for c, _ in PY_CUDA}
    pyrec = []
    for i in range(PEER_RUNS):
        order = PY_CUDA[i % 4:] + PY_CUDA[:i % 4]
        for c, _desc in order:
            env = dict(SIM_ENV)
            d = None
            if c != "base":
                d = b.fresh_dir("cupy")
                env.update(b.ft_env(d))
                if c == "ft0":
                    env.update(FEEDTRACE_STACK_DEPTH="0", FEEDTRACE_PYFRAMES="0")
                elif c == "ft16":
                    env["FEEDTRACE_PYFRAMES"] = "0"
            r = b.run(["/usr/bin/python3", script, drv, str(n), str(reps)], env=env, label=f"cuda-python-{c}")
            try:
                x, y, interp = parse_fig(r, f"cuda python/{c}")
            except RuntimeError as e:
                res["errors"].append(str(e))
                continue
            if c != "base" and not interp:
                res["errors"].append(f"cuda python/{c}: ctypes got the driver's own function")
            pyd[c].append(x)
            pydir[c].append(y)
            if d:
                if c == "ft16py" and not pyrec:
                    pyrec.append(python_sites(b, d))
                shutil.rmtree(d, ignore_errors=True)
    res["py"] = {c: {"ft": med(pyd[c]), "direct": med(pydir[c]), "all": pyd[c],
                     "inproc": med([x - y for x, y in zip(pyd[c], pydir[c])])} for c, _ in PY_CUDA}
    res["py_n"], res["py_reps"] = n, reps
    res["py_site"] = next((s for s in pyrec if s), None)
    p = res["py"]
    if p["ft16"]["inproc"] is not None and p["ft0"]["inproc"] is not None:
        res["py_stack"] = p["ft16"]["inproc"] - p["ft0"]["inproc"]
    if p["ft16py"]["inproc"] is not None and p["ft16"]["inproc"] is not None:
        res["py_frames"] = p["ft16py"]["inproc"] - p["ft16"]["inproc"]
    res["instr"] = section_cuda_instr(b, prog, drv)
    for e in res["errors"]:
        b.failures.append(("CUDA benchmarks", e))
    return res


def python_sites(b, d):
    """The Python call site feedtrace recorded for the copies (first one)."""
    r = b.run([b.ft, "dump", d])
    for line in r.out.splitlines():
        if "cuMemcpyDtoH" in line and ' py="' in line:
            return line.split(' py="', 1)[1].split('"', 1)[0]
    return None


CUDA_CG_RUNS = 3


def section_cuda_instr(b, prog, drv):
    """Instructions per call under callgrind: the launch hook, and what a
    stack capture adds at a sync copy (default depth vs 0)."""
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        return None
    out = {}
    plan = [("launch", 1000, 3000, ("u", "t0")), ("proc", 1000, 3000, ("u", "t0")),
            ("copy", 200, 600, ("t0", "t16"))]
    b.progress(f"callgrind cuda: {CUDA_CG_RUNS} x (launch untraced/traced, copy stacks off/on) x 2 sizes")
    for mode, n1, n2, cfgs in plan:
        n1, n2 = max(20, n1 // SCALE), max(60, n2 // SCALE)
        per = {}
        for _i in range(CUDA_CG_RUNS):
            v = {}
            for c in cfgs:
                for n in (n1, n2):
                    d = b.fresh_dir("cgcu")
                    env = dict(SIM_ENV, CUDABENCH_NAME_ONLY="1")
                    od = None
                    if c != "u":
                        od = b.fresh_dir("cgcuft")
                        env.update(b.ft_env(od))
                        if c == "t0":
                            env["FEEDTRACE_STACK_DEPTH"] = "0"
                    r = b.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                               "--cache-sim=yes",
                               f"--callgrind-out-file={d}/cg.out", prog, mode, drv, str(n), "1"],
                              env=env, label=f"callgrind-cuda-{mode}-{c}")
                    if r.rc == 0:
                        rows = cg_rows(b, d)
                        v[c, n] = {"total": sum(x[0] for x in rows),
                                   "hook": sum(x[0] for x in rows if is_hook_row(x[1], x[2])),
                                   "d1": sum(x[4] for x in rows if is_hook_row(x[1], x[2])),
                                   "ll": sum(x[5] for x in rows if is_hook_row(x[1], x[2])),
                                   "unwind": sum(x[0] for x in rows if "libunwind" in x[3]),
                                   "driver": sum(x[0] for x in rows if "libcuda.so" in x[3])}
                    shutil.rmtree(d, ignore_errors=True)
                    if od:
                        shutil.rmtree(od, ignore_errors=True)
            if len(v) != 2 * len(cfgs):
                continue
            units = 2 * (n2 - n1)          # by-name calls: warm-up round + 1 timed block

            def dd(c, k):
                return (v[c, n2][k] - v[c, n1][k]) / units
            if mode in ("launch", "proc"):
                per.setdefault("hook", []).append(dd("t0", "hook"))
                per.setdefault("d1", []).append(dd("t0", "d1"))
                per.setdefault("ll", []).append(dd("t0", "ll"))
                per.setdefault("added", []).append(dd("t0", "total") - dd("u", "total"))
                per.setdefault("untraced", []).append(dd("u", "total"))
                per.setdefault("driver", []).append(dd("u", "driver"))
            else:
                per.setdefault("hook0", []).append(dd("t0", "hook"))
                per.setdefault("stack", []).append(dd("t16", "total") - dd("t0", "total"))
                per.setdefault("stack_unwind", []).append(dd("t16", "unwind") - dd("t0", "unwind"))
                per.setdefault("stack_hook", []).append(dd("t16", "hook") - dd("t0", "hook"))
        out[mode] = {k: med(x) for k, x in per.items()}
        out[mode]["all"] = per
    # Python frames: the same copy from cudapy.py, frames on vs off (one
    # repetition: Python under callgrind is slow, and the counts are stable)
    script = os.path.join(b.root, "tests", "bench", "cudapy.py")
    n1, n2 = max(20, 300 // SCALE), max(60, 900 // SCALE)
    b.progress(f"callgrind cuda from Python: Python frames off/on x N={n1},{n2}")
    v = {}
    for c in ("ft16", "ft16py"):
        for n in (n1, n2):
            d, od = b.fresh_dir("cgpy"), b.fresh_dir("cgpyft")
            env = dict(SIM_ENV)
            env.update(b.ft_env(od))
            if c == "ft16":
                env["FEEDTRACE_PYFRAMES"] = "0"
            r = b.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                       f"--callgrind-out-file={d}/cg.out", "/usr/bin/python3", script, drv, str(n), "1"],
                      env=env, label=f"callgrind-cuda-python-{c}")
            if r.rc == 0:
                rows = cg_rows(b, d, cache=False)
                v[c, n] = {"total": sum(x[0] for x in rows),
                           "addr2line": sum(x[0] for x in rows if x[2] == "PyCode_Addr2Line"),
                           "printf": sum(x[0] for x in rows if "vfprintf" in x[1] or "vfprintf" in x[2]
                                         or "_IO_" in x[2]),
                           "intern": sum(x[0] for x in rows if x[2] in ("ft_intern", "hash64"))}
            shutil.rmtree(d, ignore_errors=True)
            shutil.rmtree(od, ignore_errors=True)
    if len(v) == 4:
        units = 2 * (n2 - n1)              # by-name calls (the direct ones capture nothing)

        def dd(k):
            return ((v["ft16py", n2][k] - v["ft16py", n1][k]) - (v["ft16", n2][k] - v["ft16", n1][k])) / units
        out["pyframes"] = {k: dd(k) for k in ("total", "addr2line", "printf", "intern")}
    return out


# ---------------------------------------------------------------- section 7: train.py
TRAIN_STEPS = 64                  # 64 steps x 32 samples = 2048 files of 12,300 bytes
TRAIN_RUNS = 3 if QUICK else 5
TRAIN_PEER_RUNS = 2 if QUICK else 3
TRAIN_PEER_PLAN = {0: {"strace": TRAIN_PEER_RUNS, "uftrace": TRAIN_PEER_RUNS},
                   2: {"strace": TRAIN_PEER_RUNS, "ltrace": TRAIN_PEER_RUNS, "uftrace": 1}}
BUDGET_S = 14 * 60                # the whole of bench_measure.py on a quiet machine (goal < 15 min)
CONVERT_RESERVE_S = 120           # what the converter section needs on a quiet 2-core machine


def trace_breakdown(d):
    """Bytes of a trace directory by chunk kind (docs/FORMAT.md), per file."""
    names = {1: "events", 2: "strings", 7: "symbols"}
    files = {}
    for f in sorted(os.listdir(d)):
        p = os.path.join(d, f)
        try:
            data = open(p, "rb").read()
        except OSError:
            continue
        acc = {"header": min(256, len(data)), "events": 0, "events_raw": 0, "strings": 0,
               "strings_raw": 0, "symbols": 0, "other": 0}
        off = 256
        while off + 24 <= len(data):
            magic, typ, codec, stored = struct.unpack_from("<IHHI", data, off)
            if magic != 0x4b435446:
                acc["other"] += len(data) - off
                break
            k = names.get(typ, "other")
            acc[k] += 24 + stored
            if codec == 0 and k in ("events", "strings"):
                acc[k + "_raw"] += 24 + stored
            off += 24 + stored
        acc["total"] = len(data)
        files[f] = acc
    return files


def proc_watcher(samples):
    """A watch function for Bench.run: samples VmHWM (peak RSS so far) of
    every process in the run's session every 0.5 s."""
    def watch(sid, stop):
        while True:
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    st = open(f"/proc/{pid}/stat").read()
                    f = st[st.rindex(")") + 2:].split()
                    if int(f[3]) != sid:          # session id
                        continue
                    ppid = int(f[1])
                    hwm = None
                    for line in open(f"/proc/{pid}/status"):
                        if line.startswith("VmHWM:"):
                            hwm = int(line.split()[1])
                            break
                    comm = st[st.index("(") + 1:st.rindex(")")]
                except (OSError, ValueError, IndexError):
                    continue
                if hwm is not None:
                    e = samples.setdefault(int(pid), {"ppid": ppid, "hwm": 0, "comm": comm})
                    e["hwm"] = max(e["hwm"], hwm)
            if stop.wait(0.5):
                return
    return watch


def roles(samples, root_pid):
    """{'main': kb, 'workers': [kb, ...]} from proc_watcher samples: the
    process started (python3), and its children (DataLoader workers)."""
    main = samples.get(root_pid, {}).get("hwm")
    workers = [e["hwm"] for pid, e in sorted(samples.items()) if e["ppid"] == root_pid]
    return {"main": main, "workers": workers}


TRAIN_LOOP = re.compile(r"([\d.]+) s\s*$")


def section_train(b, reserve_s):
    py = "/usr/bin/python3"
    script = os.path.join(b.root, "examples", "train.py")
    chk = b.run([py, "-c", "import torch, numpy; print(torch.__version__)"])
    if chk.rc != 0:
        b.failures.append(("train.py", "python3-torch is not importable: " + (chk.err or chk.out).strip()[-200:]))
        return None
    steps = max(8, TRAIN_STEPS // (4 if QUICK else 1))
    data = os.path.join(b.tmp, "traindata")
    os.makedirs(data)
    res = {"steps": steps, "files": steps * 32, "torch": chk.out.strip(), "w": {}, "notes": []}
    peers_all = [p for p in ("strace", "ltrace", "uftrace") if shutil.which(p)]
    missing = [p for p in ("strace", "ltrace", "uftrace") if not shutil.which(p)]
    for p in missing:
        res["notes"].append(f"{p} is not installed")
    t_sec = time.monotonic()
    for wi, workers in enumerate((0, 2)):
        # runs per peer (time budget): strace, the named peer, with both
        # worker counts; ltrace with 2 workers (the DataLoader case); uftrace
        # with 0 workers, and one attempt with 2
        plan = TRAIN_PEER_PLAN[workers]
        peers = [p for p in peers_all if plan.get(p)]
        failed = set()
        peer_errs = {}
        base_cmd = [py, script, "--cpu", "--steps", str(steps), "--workers", str(workers), "--data", data]
        v = {c: [] for c in ["base", "ft"] + peers}
        loop = {c: [] for c in v}
        rss = {"base": [], "ft": []}
        hw = {"base": [], "ft": []}
        tr = {"records": [], "lost": [], "bytes": [], "procs": [], "break": [], "wall": []}
        peer_out = {p: [] for p in peers}
        errs = []
        runs = TRAIN_RUNS
        i = 0
        while i < runs:
            t_round = time.monotonic()
            cfgs = ["base", "ft"] + [p for p in peers if i < plan[p] and p not in failed]
            order = cfgs[i % len(cfgs):] + cfgs[:i % len(cfgs)]
            b.progress(f"train.py: {workers} workers, round {i + 1}/{runs}: {', '.join(order)}")
            for c in order:
                env, argv, watch, od = {}, list(base_cmd), None, None
                samples = {}
                if c in ("base", "ft"):
                    watch = proc_watcher(samples)
                if c == "ft":
                    od = b.fresh_dir("train")
                    env = {"LD_PRELOAD": b.lib, "FEEDTRACE_OUT": od}   # defaults: what a user runs
                elif c == "strace":
                    out = os.path.join(b.tmp, "train.strace")
                    argv = ["strace", "-f", "-qq", "-o", out, "-e", "trace=openat,read"] + argv
                elif c == "ltrace":
                    out = os.path.join(b.tmp, "train.ltrace")
                    argv = ["ltrace", "-f", "-o", out, "-e", "open64+openat+read"] + argv
                elif c == "uftrace":
                    out = os.path.join(b.tmp, "train.uftrace.data")
                    argv = ["uftrace", "record", "--force", "-d", out] + argv
                r = b.run(argv, env=env, label=f"train-w{workers}-{c}", timeout=300, watch=watch)
                m = TRAIN_LOOP.search(r.out.strip().splitlines()[-1]) if r.out.strip() else None
                if r.rc != 0 or not m:
                    last = ((r.err or r.out).strip().splitlines() or [""])[-1][-300:]
                    if c in peers:
                        failed.add(c)             # it cannot run this: stop trying
                        peer_errs[c] = f"exit {r.rc}" + (" (killed at the time limit)" if r.rc == 124 else "") \
                            + (f": {last}" if last else "")
                    else:
                        errs.append(f"{c}: exit {r.rc}: {last}")
                else:
                    v[c].append(r.wall)
                    loop[c].append(float(m.group(1)))
                if c in ("base", "ft") and r.rc == 0:
                    rs = roles(samples, r.pid)
                    rss[c].append(r.maxrss_kb)
                    hw[c].append(rs)
                if od:
                    procs, _error = b.dump_summary(od)
                    recs = sum(p.get("records", 0) for p in procs)
                    tr["records"].append(recs)
                    tr["lost"].append(sum(p.get("lost", 0) for p in procs))
                    tr["bytes"].append(dir_bytes(od))
                    tr["wall"].append(r.wall)
                    tr["procs"].append(procs)
                    tr["break"].append(trace_breakdown(od))
                    shutil.rmtree(od, ignore_errors=True)
                elif c in peers:
                    if r.rc == 0:
                        size = path_bytes(out)
                        lines = None
                        if c in ("strace", "ltrace") and os.path.exists(out):
                            with open(out, "rb") as f:
                                lines = sum(1 for _ in f)
                        peer_out[c].append((size, lines))
                    remove(out)
            i += 1
            # the time budget: at least 3 rounds; fewer than TRAIN_RUNS if the
            # rest of this section and the converter would not fit
            dt = time.monotonic() - t_round
            left_rounds = (runs - i) + (TRAIN_RUNS if wi == 0 else 0)
            if i >= 3 and i < runs and \
                    b.elapsed() + dt * left_rounds + reserve_s > BUDGET_S:
                res["notes"].append(f"{workers} workers: {i} alternations instead of {runs} "
                                    f"(time budget: {b.elapsed() / 60:.1f} min elapsed, "
                                    f"{dt:.0f} s per round)")
                runs = i
        w = {"runs": runs, "errors": errs}
        for c in v:
            w[c] = med(v[c])
            w[c + "_all"] = v[c]
            w[c + "_loop"] = med(loop[c])
            w[c + "_loop_all"] = loop[c]
        for c in peers:
            w[c + "_bytes"] = med([s for s, _l in peer_out[c]])
            w[c + "_lines"] = med([ln for _s, ln in peer_out[c] if ln is not None])
        w["peers"] = peers
        w["peer_errs"] = peer_errs
        w["records"] = med(tr["records"])
        w["lost"] = sum(tr["lost"])
        w["bytes"] = med(tr["bytes"])
        w["bpe"] = med([x / y for x, y in zip(tr["bytes"], tr["records"]) if y])
        w["eps"] = med([x / y for x, y in zip(tr["records"], tr["wall"]) if y])
        w["maxrss_base"], w["maxrss_ft"] = med(rss["base"]), med(rss["ft"])
        w["main_base"] = med([h["main"] for h in hw["base"]])
        w["main_base_all"] = [h["main"] for h in hw["base"]]
        w["main_ft"] = med([h["main"] for h in hw["ft"]])
        w["worker_base"] = med([statistics.mean(h["workers"]) for h in hw["base"] if h["workers"]])
        w["worker_ft"] = med([statistics.mean(h["workers"]) for h in hw["ft"] if h["workers"]])
        w["nworkers_seen"] = med([len(h["workers"]) for h in hw["ft"]])
        # chunk breakdown (median run by bytes), per process role
        if tr["break"]:
            k = sorted(range(len(tr["bytes"])), key=lambda j: tr["bytes"][j])[len(tr["bytes"]) // 2]
            br, procs = tr["break"][k], tr["procs"][k]
            tot = {}
            for acc in br.values():
                for kk, x in acc.items():
                    tot[kk] = tot.get(kk, 0) + x
            w["break"] = tot
            w["break_records"] = tr["records"][k]
            pr = []
            pids = {p.get("pid") for p in procs}
            for p in procs:
                fn = os.path.basename(p.get("file", ""))
                acc = br.get(fn, {})
                pr.append({"role": "main" if p.get("ppid") not in pids else "worker",
                           "records": p.get("records", 0), "lost": p.get("lost", 0),
                           "end": p.get("end"), "threads": p.get("threads"), **acc})
            w["per_proc"] = pr
        res["w"][workers] = w
        for e in errs:
            b.failures.append((f"train.py, {workers} workers", e))
    # feedtrace's fixed cost per process: start-up, flusher, exit
    b.progress(f"python -c pass: hyperfine: {PEER_RUNS} runs each (untraced, feedtrace)")
    od = b.fresh_dir("start")
    base = b.hyperfine([py, "-c", "pass"], label="python-startup-untraced")
    ft = b.hyperfine([py, "-c", "pass"], env={"LD_PRELOAD": b.lib, "FEEDTRACE_OUT": od},
                     label="python-startup-feedtrace")
    shutil.rmtree(od, ignore_errors=True)
    if base and ft:
        res["startup_ms"] = (wall(ft) - wall(base)) * 1000
        res["startup_base_ms"] = wall(base) * 1000
    res["seconds"] = time.monotonic() - t_sec
    shutil.rmtree(data, ignore_errors=True)
    return res


# ---------------------------------------------------------------- section 7b: end to end, null arm
E2E_ROUNDS = 4 if QUICK else 10


def section_e2e(b):
    """train.py traced against an empty preloaded library, faults held
    still (scripts/bench_e2e.py); prints the machine's clocksource, the
    tracer's clock and the CPU model with the figure"""
    res = bench_e2e.measure(b.build, [b.lib], rounds=E2E_ROUNDS, progress=b.progress, tmp=b.tmp)
    for line in bench_e2e.text(res).splitlines():
        b.progress(line)
    for e in res["errors"]:
        b.failures.append(("end to end (e2e)", e))
    return res


# ---------------------------------------------------------------- section 8: converter
CONVERT_SIZES = (1, 2) if QUICK else (5, 20, 50)
CONV_ROW = re.compile(r"^\|\s*(\d+) M\s*\|")


def section_convert(b):
    script = os.path.join(b.root, "scripts", "bench_convert.sh")
    res = {"rows": [], "header": None, "skipped": [], "notes": []}
    if not os.path.exists(script):
        b.failures.append(("converter", "scripts/bench_convert.sh is missing"))
        return res
    per_m = None
    for m in CONVERT_SIZES:
        if per_m is not None:
            need = per_m * m * 1.15
            if b.elapsed() + need > BUDGET_S:
                res["skipped"].append(m)
                res["notes"].append(
                    f"{m} M events not converted: {b.elapsed() / 60:.1f} min had elapsed and "
                    f"{m} M would take about {need:.0f} s more (at {per_m:.2f} s per M events "
                    f"measured on the smaller size), past the {BUDGET_S // 60} min budget")
                continue
        b.progress(f"converter: {m} M events (scripts/bench_convert.sh {m})")
        t0 = time.monotonic()
        r = b.run(["bash", script, str(m)], env={"BUILD": b.build}, label="convert", timeout=900)
        dt = time.monotonic() - t0
        per_m = dt / m
        if r.rc != 0:
            b.failures.append((f"converter, {m} M events", f"exit {r.rc}: {(r.err or r.out).strip()[-300:]}"))
            continue
        for line in r.out.splitlines():
            if line.startswith("| events"):
                res["header"] = line
            mm = CONV_ROW.match(line)
            if mm:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                res["rows"].append({"m": int(mm.group(1)), "line": line.strip(), "cells": cells,
                                    "seconds": dt})
    return res



# ---------------------------------------------------------------- section 8b: ranks
RANKS_SIZES = (256, 1024)         # rank summaries merged
RANKS_COLLS = 1024                # collectives per summary: as many as a summary keeps


def section_ranks(b):
    """`feedtrace ranks DIR` over synthetic rank summaries (tests/ranksynth.py:
    one communicator, RANKS_COLLS all-reduces each, 8 ranks per host, one
    straggler): wall time (hyperfine) and peak RSS (/usr/bin/time) of the
    merge, for two job sizes, so that memory's growth with ranks shows."""
    res = {"colls": RANKS_COLLS, "rows": []}
    synth = os.path.join(b.root, "tests", "ranksynth.py")
    tool = os.path.join(b.build, "feedtrace")
    for n in RANKS_SIZES:
        d = os.path.join(b.tmp, f"ranks{n}")
        b.progress(f"ranks: {n} synthetic summaries")
        r = b.run([sys.executable, synth, d, str(n), str(RANKS_COLLS), "--straggler",
                   str(n // 2 + 1), "--hosts", str(max(1, n // 8))], label="ranksynth")
        if r.rc != 0:
            b.failures.append((f"ranks, {n} summaries", f"ranksynth: exit {r.rc}: {r.err.strip()[-300:]}"))
            continue
        size = dir_bytes(d)
        argv = [tool, "ranks", "--json", d]
        hf = b.hyperfine(argv, runs=max(3, RUNS // 2), label="ranks")   # output discarded
        rss = []
        for _ in range(3):
            rr, kb, _cpu = timed(b, argv, None, "ranks")
            if rr.rc != 0:
                b.failures.append((f"ranks, {n} summaries", f"exit {rr.rc}: {rr.err.strip()[-300:]}"))
                break
            rss.append(kb)
        out = json.loads(rr.out) if rr.rc == 0 else {}
        st = (out.get("ranks") or {}).get("straggler")
        res["rows"].append({"ranks": n, "bytes": size, "wall": wall(hf),
                            "walls": walls(hf), "rss_kb": med(rss) if rss else None,
                            "straggler": st, "planted": n // 2 + 1})
        remove(d)
    return res


# ---------------------------------------------------------------- main
SECTIONS = ("micro", "instr", "peers", "storm", "python", "cuda", "train", "e2e", "convert", "ranks")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    ap.add_argument("--build", default="build")
    ap.add_argument("--results", default="build/bench/results.json",
                    help="the JSON file written (scripts/bench_render.py reads it)")
    ap.add_argument("--only", default="", help="comma list of sections to run (debugging; "
                    "prints the results as JSON, writes no file): " + ",".join(SECTIONS))
    a = ap.parse_args()
    if not shutil.which("hyperfine"):
        sys.exit("bench_measure: hyperfine is missing (scripts/deps.sh bench installs it)")
    b = Bench(a.root, a.build)
    out = a.results if os.path.isabs(a.results) else os.path.join(b.root, a.results)
    results = {
        "started": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "load0": loadavg(),
        "info": machine_info(),
        "git": git_info(b.root) or "?",
        # what the report says of how it was measured
        "config": {"quick": QUICK, "runs": RUNS, "peer_runs": PEER_RUNS, "cg_runs": CG_RUNS,
                   "cg_n": CG_N, "storm10m_runs": STORM10M_RUNS, "cuda_cg_runs": CUDA_CG_RUNS,
                   "train_peer_runs": TRAIN_PEER_RUNS, "buf_kb": BUF_KB,
                   "ring_default_kb": b.defaults["BUF_KB"]},
    }
    datafile = os.path.join(b.tmp, "data.bin")
    with open(datafile, "wb") as f:
        f.write(os.urandom(256 * 1024))
    mixdir = os.path.join(b.tmp, "mixed")
    os.makedirs(mixdir)
    for i in range(16):
        with open(os.path.join(mixdir, f"f{i:02d}"), "wb") as f:
            f.write(os.urandom(70000 + i * 4096))
    # warm the page cache
    for p in [datafile] + [os.path.join(mixdir, x) for x in os.listdir(mixdir)]:
        with open(p, "rb") as f:
            f.read()
    only = set(filter(None, a.only.split(",")))
    times = {}
    sec = dict.fromkeys(SECTIONS)       # None: not run

    def run(name, fn, *args):
        if not only or name in only:
            t0 = time.monotonic()
            sec[name] = fn(*args)
            times[name] = time.monotonic() - t0
    try:
        run("micro", section_micro, b, datafile)
        run("instr", section_instr, b, datafile)
        if sec["micro"]:                # the peers are compared with section 1
            run("peers", section_peers, b, datafile, sec["micro"])
        run("storm", section_storm, b, datafile, mixdir)
        run("python", section_python, b)
        run("cuda", section_cuda, b)
        run("train", section_train, b, CONVERT_RESERVE_S if not only or "convert" in only else 0)
        run("e2e", section_e2e, b)
        run("convert", section_convert, b)
        run("ranks", section_ranks, b)
    finally:
        shutil.rmtree(b.tmp, ignore_errors=True)
    results.update(load1=loadavg(), elapsed=b.elapsed(), times=times, sections=sec,
                   cmds=b.cmds, notes=b.notes, failures=b.failures)
    if only:
        print("bench: partial run (--only); results not written", file=sys.stderr)
        json.dump(results, sys.stdout, indent=1, ensure_ascii=False)
        print()
        return 0
    save_results(out, results)
    b.progress(f"wrote {os.path.relpath(out, b.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
