"""Capture windows (issue 34): FEEDTRACE_CAPTURE=off|steps:A-B[/K]|time:D[+S]
and `feedtrace capture`. A process records only inside its windows: the
window has exactly the steps asked for, descriptors made before it keep
their paths and kinds, a process that never captures writes its header
and END only, and the program's behaviour is the same. On the simulated
driver (examples/hidden_sync: 20 "step" ranges, 3 launches each), a C
loop of step ranges (tests/progs/capture_steps.c), and real PyTorch on the
CPU (tests/scripts/capture_loop.py: DataLoader workers, optimizer steps,
two gloo ranks)."""
import glob
import json
import os
import re
import subprocess
import time

import pytest

from conftest import BUILD, PYTHON, ROOT, TOOL, Trace, clean_env, make, preload, prog

HIDDEN = os.path.join(BUILD, "examples", "hidden_sync")
LOOP = os.path.join(ROOT, "tests", "scripts", "capture_loop.py")
BATCH = 2                       # capture_loop.py's items per batch
torch_only = pytest.mark.skipif(not os.path.exists("/usr/lib/python3/dist-packages/torch"),
                                reason="Debian python3-torch not installed")


def run(argv, out, capture=None, env=None, timeout=120):
    e = clean_env("LD_PRELOAD")
    e["LD_PRELOAD"] = preload()
    e["FEEDTRACE_OUT"] = out
    if capture is not None:
        e["FEEDTRACE_CAPTURE"] = capture
    e.update(env or {})
    p = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return p


def hidden(tmp_path, capture, name="t"):
    make(HIDDEN)
    out = str(tmp_path / name)
    e = clean_env("LD_PRELOAD")
    if capture is not None:
        e["FEEDTRACE_CAPTURE"] = capture
    p = subprocess.run([TOOL, "run", "-o", out, "--", HIDDEN], env=e, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return Trace.load(out), p


def steps_prog(tmp_path, capture, n=6):
    make(prog("capture_steps"))
    f = tmp_path / "data.bin"
    f.write_bytes(b"abcdefgh")
    out = str(tmp_path / ("s-%s" % (capture or "on").replace(":", "_").replace("/", "_")))
    p = run([prog("capture_steps"), str(f), str(n)], out, capture)
    return Trace.load(out), p, str(f)


def windows(t):
    return [p["windows"] for p in t.procs]


def chunk_types(path):
    """the chunk types of one .ft file, in order (format.h framing)"""
    data = open(path, "rb").read()
    hs = int.from_bytes(data[10:12], "little")
    o, types = hs, []
    while o + 24 <= len(data):
        types.append(int.from_bytes(data[o + 4:o + 6], "little"))
        o += 24 + int.from_bytes(data[o + 8:o + 12], "little")
    return types


# ---- the setting, on the simulated driver ----

def test_steps_window_has_exactly_its_steps(tmp_path):
    """steps:5-7 of 20 "step" ranges: three ranges, their nine launches,
    and one window that says steps 5 to 7"""
    t, _ = hidden(tmp_path, "steps:5-7")
    assert t.count("nvtxRangePush") == 3 and t.count("nvtxRangePop") == 3
    assert t.count("cuLaunchKernel") == 9
    (w,), = windows(t)
    assert (w["reason"], w["unit"], w["first_step"], w["last_step"]) == ("steps", "step ranges", 5, 7)
    assert all(w["start_ns"] <= e["ts_ns"] <= w["end_ns"] for e in t.events)


def test_run_capture_option(tmp_path):
    """feedtrace run --capture steps:5-7 is FEEDTRACE_CAPTURE=steps:5-7"""
    make(HIDDEN)
    out = str(tmp_path / "t")
    p = subprocess.run([TOOL, "run", "-q", "--capture", "steps:5-7", "-o", out, "--", HIDDEN],
                       env=clean_env("LD_PRELOAD"), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    t = Trace.load(out)
    assert t.count("nvtxRangePush") == 3
    assert [(w["first_step"], w["last_step"]) for w in windows(t)[0]] == [(5, 7)]


def test_steps_window_repeats(tmp_path):
    """steps:2-3/10 of 20: steps 2-3 and 12-13, two windows"""
    t, _ = hidden(tmp_path, "steps:2-3/10")
    assert t.count("nvtxRangePush") == 4 and t.count("cuLaunchKernel") == 12
    assert [(w["first_step"], w["last_step"]) for w in windows(t)[0]] == [(2, 3), (12, 13)]


def test_time_window_holds_every_record(tmp_path):
    """time:0+S: one window, from the start; every record inside it"""
    t, _ = hidden(tmp_path, "time:0+30")
    (w,), = windows(t)
    assert w["reason"] == "time" and t.count("cuLaunchKernel") == 60
    assert all(w["start_ns"] <= e["ts_ns"] for e in t.events)


def test_never_captured_writes_header_and_end_only(tmp_path):
    """off, a time window after the end, steps past the last: no records,
    no strings, no thread, no sample; the file holds its start (CLOCK,
    PROCESS) and END;
    the program prints what it prints untraced"""
    make(prog("capture_steps"))
    f = tmp_path / "data.bin"
    f.write_bytes(b"abcdefgh")
    plain = subprocess.run([prog("capture_steps"), str(f), "6"], capture_output=True,
                           text=True, timeout=60)
    for i, c in enumerate(["off", "time:3600", "steps:7-9"]):
        out = str(tmp_path / ("n%d" % i))
        p = run([prog("capture_steps"), str(f), "6"], out, c)
        assert p.stdout == plain.stdout
        t = Trace.load(out)
        (proc,) = t.procs
        assert (proc["records"], proc["strings"], proc["windows"], proc["end"]) == \
            (0, 0, [], "exit"), proc
        (ft,) = glob.glob(out + "/*.ft")
        assert chunk_types(ft) == [4, 5, 6]       # CLOCK, PROCESS, END (format.h)


def test_bad_setting_one_line_then_all(tmp_path):
    t, p, _ = steps_prog(tmp_path, "steps:5-2")
    assert p.stderr.count("FEEDTRACE_CAPTURE") == 1
    assert t.count("nvtxRangePush") == 6 and windows(t) == [[]]


def test_descriptors_made_before_the_window_keep_paths_and_kinds(tmp_path):
    """the file and the pipe are made while idle; inside steps 2-4 the
    reads name the file and the pipe reads are pipe reads"""
    t, p, path = steps_prog(tmp_path, "steps:2-4")
    assert p.stdout == "sum 4824 steps 6\n"
    assert t.count("open") == 0 and t.count("pipe") == 0
    preads = t.calls("pread")
    assert len(preads) == 3 and {e["args"]["path"] for e in preads} == {path}
    assert t.count("read") == 3 and all(e["args"]["kind"] == 2 for e in t.calls("read"))
    assert t.count("nvtxRangePush") == 3


def test_report_says_which_window(tmp_path):
    t, _ = hidden(tmp_path, "steps:5-7")
    rep = subprocess.run([TOOL, "report", t.dir], capture_output=True, text=True, timeout=120)
    assert rep.returncode == 0, rep.stderr
    assert "capture window: steps 5-7" in rep.stdout, rep.stdout
    assert "start-up" not in rep.stdout
    js = json.loads(subprocess.run([TOOL, "report", "--json", t.dir], capture_output=True,
                                   text=True, timeout=120).stdout)
    assert js["metrics"]["steps"] == 3
    c = js["capture"]
    assert (c["reason"], c["unit"], c["first_step"], c["last_step"], c["windows"]) == \
        ("steps", "step ranges", 5, 7, 1)


# ---- feedtrace capture ----

def test_capture_command_refuses_what_it_cannot_do(tmp_path):
    for argv in (["capture"], ["capture", str(tmp_path / "none")],
                 ["capture", str(tmp_path), "--steps", "0"],
                 ["capture", str(tmp_path), "--steps", "2", "--seconds", "1"],
                 ["capture", "999999999"]):
        p = subprocess.run([TOOL] + argv, capture_output=True, text=True, timeout=30)
        assert p.returncode == 2 and p.stderr, argv
    assert not os.path.exists(str(tmp_path / "capture.req"))
    p = subprocess.run([TOOL, "capture", str(tmp_path), "--seconds", "2"], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0
    assert re.fullmatch(r"feedtrace-capture id=\d+ steps=0 ms=2000\n",
                        open(str(tmp_path / "capture.req")).read())


def test_on_demand_seconds_by_pid(tmp_path):
    """a Python loop started with FEEDTRACE_CAPTURE=off, its file opened
    while idle; `feedtrace capture PID --seconds 0.3`: one window on
    demand, without steps, every record inside it, its reads naming the
    file opened before it"""
    out, f = str(tmp_path / "t"), tmp_path / "data.bin"
    f.write_bytes(b"abcdefgh")
    ready, stop = str(tmp_path / "ready"), str(tmp_path / "stop")
    e = clean_env("LD_PRELOAD")
    e.update(LD_PRELOAD=preload(), FEEDTRACE_OUT=out, FEEDTRACE_CAPTURE="off")
    proc = subprocess.Popen([PYTHON, os.path.join(ROOT, "tests", "scripts", "capture_idle.py"),
                             str(f), ready, stop], env=e, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(ready, proc)
        c = subprocess.run([TOOL, "capture", str(proc.pid), "--seconds", "0.3"],
                           capture_output=True, text=True, timeout=30)
        assert c.returncode == 0, c.stderr
        assert c.stdout.startswith("feedtrace: capture ") and out in c.stdout
        end = time.monotonic() + 120     # until the window's first records are written
        while not Trace.load(out).events:
            assert time.monotonic() < end and proc.poll() is None
            time.sleep(0.1)
    finally:
        open(stop, "w").close()
    so, se = proc.communicate(timeout=60)
    assert proc.returncode == 0 and so == "reads 1\n", se
    t = Trace.load(out)
    (w,) = t.proc(proc.pid)["windows"]
    assert (w["reason"], w["unit"], w["first_step"]) == ("on demand", "", 0)
    assert all(w["start_ns"] <= e["ts_ns"] and (w["end_ns"] is None or e["ts_ns"] <= w["end_ns"])
               for e in t.events)
    preads = t.calls("pread64") + t.calls("pread")
    assert preads and {e["args"]["path"] for e in preads} == {str(f)}


def items_opened(t, pid):
    return {int(m.group(1)) for e in t.calls("open64", pid=pid)
            for m in [re.search(r"item(\d+)\.bin$", e["args"]["path"])] if m}


def batch_items(first, last):
    return {i for b in range(first, last + 1) for i in range((b - 1) * BATCH, b * BATCH)}


def loop_items(tmp_path, n):
    d = tmp_path / "items"
    d.mkdir()
    for i in range(n * BATCH):
        (d / ("item%d.bin" % i)).write_bytes(b"x")
    return str(d)


def wait_for(path, proc, limit=120):
    end = time.monotonic() + limit
    while not os.path.exists(path):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end
        time.sleep(0.05)


def main_and_workers(t):
    (main,) = [p for p in t.procs if any(w["unit"] == "optimizer steps" for w in p["windows"])]
    workers = [p for p in t.procs if p["ppid"] == main["pid"] and p["records"]]
    return main, workers


@torch_only
def test_torch_steps_window_main_and_workers(tmp_path):
    """steps:9-11 of 16 with 2 workers: the main process has exactly the
    optimizer steps 9..11 and their three __next__; the workers' windows
    hold the loads of every item of batches 9..11"""
    out = str(tmp_path / "t")
    p = run([PYTHON, LOOP, "2", "16", loop_items(tmp_path, 16), "20"], out, "steps:9-11",
            timeout=300)
    assert p.stdout == "steps 16\n"
    t = Trace.load(out)
    main, workers = main_and_workers(t)
    (w,) = main["windows"]
    assert (w["reason"], w["first_step"], w["last_step"]) == ("steps", 9, 11)
    assert t.count("nvtxMark", pid=main["pid"]) == 3
    assert t.count("nvtxRangePush", pid=main["pid"]) == 3
    assert len(workers) == 2 and all(p["windows"][0]["reason"] == "follows its parent"
                                     for p in workers)
    got = set().union(*(items_opened(t, p["pid"]) for p in workers))
    assert batch_items(9, 11) <= got


@torch_only
def test_torch_on_demand_covers_main_and_every_worker(tmp_path):
    """FEEDTRACE_CAPTURE=off, then `feedtrace capture DIR --steps 4` while
    the loop runs: 4 optimizer steps from the step written in
    capture.ID.at, and the workers loaded every item of those batches
    inside their windows"""
    out = str(tmp_path / "t")
    ready = str(tmp_path / "ready")
    e = clean_env("LD_PRELOAD")
    e.update(LD_PRELOAD=preload(), FEEDTRACE_OUT=out, FEEDTRACE_CAPTURE="off")
    proc = subprocess.Popen([PYTHON, LOOP, "2", "60", loop_items(tmp_path, 60), "40", ready, "3"],
                            env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(ready, proc)
    c = subprocess.run([TOOL, "capture", out, "--steps", "4"], capture_output=True, text=True,
                       timeout=30)
    assert c.returncode == 0, c.stderr
    so, se = proc.communicate(timeout=300)
    assert proc.returncode == 0, se
    assert so == "steps 60\n"
    (at,) = glob.glob(out + "/capture.*.at")
    first = int(open(at).read())
    t = Trace.load(out)
    main, workers = main_and_workers(t)
    (w,) = main["windows"]
    assert (w["reason"], w["first_step"], w["last_step"]) == ("on demand", first, first + 3)
    assert t.count("nvtxMark", pid=main["pid"]) == 4
    assert len(workers) == 2
    got = set().union(*(items_opened(t, p["pid"]) for p in workers))
    assert batch_items(first, first + 3) <= got


@torch_only
def test_two_gloo_ranks_triggered_together_cover_the_same_collectives(tmp_path):
    """two ranks (gloo, no workers) in one run directory, FEEDTRACE_CAPTURE
    =off; one request: both windows are the same 5 steps, each with 5
    all-reduces"""
    out = str(tmp_path / "t")
    ready = str(tmp_path / "ready")
    e = clean_env("LD_PRELOAD")
    e.update(LD_PRELOAD=preload(), FEEDTRACE_OUT=out, FEEDTRACE_CAPTURE="off")
    proc = subprocess.Popen([PYTHON, os.path.join(ROOT, "tests", "scripts", "ranklaunch.py"), "2",
                             "--", PYTHON, LOOP, "0", "60", loop_items(tmp_path, 60), "40", ready,
                             "3", "gloo"], env=e, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=str(tmp_path))
    wait_for(ready + ".0", proc)
    wait_for(ready + ".1", proc)
    c = subprocess.run([TOOL, "capture", out, "--steps", "5"], capture_output=True, text=True,
                       timeout=30)
    assert c.returncode == 0, c.stderr
    so, se = proc.communicate(timeout=300)
    assert proc.returncode == 0, so + se
    t = Trace.load(out)
    ranks = [p for p in t.procs if any(w["unit"] == "optimizer steps" for w in p["windows"])]
    assert len(ranks) == 2
    spans = {(p["windows"][0]["first_step"], p["windows"][0]["last_step"]) for p in ranks}
    assert len(spans) == 1
    first, last = spans.pop()
    assert last == first + 4
    for p in ranks:
        assert t.count("gloo::allreduce", pid=p["pid"]) == 5, \
            {e["call"] for e in t.events if e["pid"] == p["pid"]}
