"""The verdict's `data_wait_per_step_ns` (docs/REPORT-SCHEMA.md, RUN): the
feeding threads' time waiting for data or in their own file I/O, per step
of a window of steps, on synthetic traces (tests/ftgen.py) with the times
planted: the value to the nanosecond, warm-up steps out of both sides of
the division, null without steps, and diff's row of it."""
import json
import os
import subprocess

import ftgen
from conftest import TOOL, report_json

MS = 1_000_000
US = 1_000
START = 1_000_000_000_000           # ftgen's default start
T0 = START + 10 * MS


def loop(d, wait, io, steps=10, ranges=True, first_wait=None):
    """Main process 100, one thread: per 10 ms step (a "step" range), a
    poll on a pipe of `wait`, a 10 us read of it, a file read of `io` (or
    of io[i] in step i),
    a launch and a sync to the step's end. first_wait: the first step
    waits that long instead and lasts 10 ms more than it (a warm-up step)"""
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "host.100.ft"), 100, ["python3", "train.py"])
    w.thread(100, "main", main=True)
    t = T0
    for i in range(steps):
        wt = first_wait if first_wait and i == 0 else wait
        length = wt + 10 * MS if first_wait and i == 0 else 10 * MS
        if ranges:
            w.event(100, "RANGE_PUSH", t, 0, name="step", level=0, api=0)
        w.event(100, "POLL", t, wt, ret=1, nfds=1, timeout=5000, kinds=2, fd0=5, fd1=-1,
                fd2=-1, fd3=-1, fd4=-1, fd5=-1, fd6=-1, fd7=-1)
        w.event(100, "PIPE_READ", t + wt, 10 * US, fd=5, req=1024, ret=1024)
        rd = io[i] if isinstance(io, list) else io
        w.event(100, "READ", t + wt + 10 * US, rd, fd=3, req=65536, ret=65536,
                path="/data/x%d" % i)
        u = t + wt + 10 * US + rd
        w.event(100, "CU_LAUNCH_KERNEL", u + 100 * US, 10 * US, sym="cuLaunchKernel",
                kernel="k", sync=0, stream=0)
        w.event(100, "CU_STREAM_SYNC", u + 200 * US, t + length - 300 * US - u, sym="x",
                sync=1, stream=0)
        if ranges:
            w.event(100, "RANGE_POP", t + length - 100 * US, 0, level=0, api=0)
        t += length
    w.close()
    return d


def test_per_step_to_the_nanosecond(tmp_path):
    """each step: 3 ms poll + 10 us pipe read (data_wait), 1 ms file read
    (io): 4.01 ms per step over the 10 steps"""
    v = report_json(loop(str(tmp_path / "a"), 3 * MS, 1 * MS))["verdict"]
    assert v["window"]["from"] == "steps" and v["window"]["warmup_steps"] == 0
    assert v["time_ns"]["data_wait"] == 10 * 3010 * US and v["time_ns"]["io"] == 10 * MS
    assert v["data_wait_per_step_ns"] == 4010 * US


def test_warmup_steps_left_out(tmp_path):
    """a first step of 33 ms poll (43 ms long, over 3x the median) is a
    warm-up step: out of the window, so out of the wait and the count"""
    v = report_json(loop(str(tmp_path / "w"), 3 * MS, 1 * MS, first_wait=33 * MS))["verdict"]
    assert v["window"]["warmup_steps"] == 1
    assert v["time_ns"]["data_wait"] == 9 * 3010 * US and v["time_ns"]["io"] == 9 * MS
    assert v["data_wait_per_step_ns"] == 4010 * US


def test_rounded_to_the_nanosecond(tmp_path):
    """3 steps of 1 ms + 10 us waiting for data and file reads of 1 ms,
    1 ms, 1 ms + 2 ns: 6,030,002 ns over 3 steps is 2,010,000.67 ns, said
    as 2,010,001 (rounded, not cut)"""
    v = report_json(loop(str(tmp_path / "r"), 1 * MS, [MS, MS, MS + 2], steps=3))["verdict"]
    assert v["time_ns"]["data_wait"] + v["time_ns"]["io"] == 6_030_002
    assert v["data_wait_per_step_ns"] == 2_010_001


def test_null_without_steps(tmp_path):
    """no step ranges: the window is from the first launch, no steps"""
    d = loop(str(tmp_path / "n"), 3 * MS, 1 * MS, ranges=False)
    rep = report_json(d)
    assert rep["verdict"]["window"]["from"] == "first launch"
    assert rep["verdict"]["data_wait_per_step_ns"] is None
    # a process's own verdict in "processes" does not carry the run's fields
    assert "data_wait_per_step_ns" not in rep["processes"][0]["verdict"]


def diff(*args):
    r = subprocess.run([TOOL, "diff", *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_diff_row(tmp_path):
    """before 3 ms + 10 us + 1 ms a step, after 1 ms + 10 us + 0.5 ms"""
    a = loop(str(tmp_path / "a"), 3 * MS, 1 * MS)
    b = loop(str(tmp_path / "b"), 1 * MS, 500 * US)
    n = loop(str(tmp_path / "n"), 3 * MS, 1 * MS, ranges=False)
    assert "\ndata wait per step: 4.0 ms -> 1.5 ms\n" in diff(a, "--", b)
    j = json.loads(diff(a, "--", b, "--json"))
    assert j["data_wait_per_step_ns"] == {"before": 4010 * US, "after": 1510 * US}
    # neither side with steps: null in JSON, no text row
    assert "data wait per step" not in diff(n, "--", n)
    j = json.loads(diff(n, "--", n, "--json"))
    assert j["data_wait_per_step_ns"] == {"before": None, "after": None}


def report_text(d):
    r = subprocess.run([TOOL, "report", d], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def report_html(d, out):
    r = subprocess.run([TOOL, "report", d, "--html", out], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    with open(out) as f:
        return f.read()


WORDS = ("data wait per step: %s (the feeding thread waiting for data or in file I/O, "
         "over %d step%s of the window)")


def test_text_and_html_say_it(tmp_path):
    """the text report's verdict and the HTML page say the same figure as
    the JSON, 4.01 ms as 4.0 ms, over the window's 10 steps"""
    d = loop(str(tmp_path / "a"), 3 * MS, 1 * MS)
    text = report_text(d)
    verdict = text[text.index("\nVerdict:"):]
    assert ("\n  data wait per step: 4.0 ms (the feeding thread waiting for data or in file\n"
            "  I/O, over 10 steps of the window)\n") in verdict
    html = report_html(d, str(tmp_path / "a.html"))
    assert '<p id="data-wait-step">' + WORDS % ("4.0 ms", 10, "s") + "</p>" in html


def test_text_counts_the_window_steps(tmp_path):
    """a warm-up step out of the window: 9 steps; 3 steps of 1 ms + 10 us
    waiting and 1 ms reads: 2.0 ms"""
    w = report_text(loop(str(tmp_path / "w"), 3 * MS, 1 * MS, first_wait=33 * MS))
    assert " ".join(w.split()).count(" " + WORDS % ("4.0 ms", 9, "s") + " ") == 1
    r = report_text(loop(str(tmp_path / "r"), 1 * MS, [MS, MS, MS + 2], steps=3))
    assert " " + WORDS % ("2.0 ms", 3, "s") + " " in " ".join(r.split())


def test_text_and_html_silent_without_steps(tmp_path):
    """no window of steps (JSON null): no line, no paragraph"""
    d = loop(str(tmp_path / "n"), 3 * MS, 1 * MS, ranges=False)
    assert "data wait per step" not in report_text(d)
    assert "data-wait-step" not in report_html(d, str(tmp_path / "n.html"))
