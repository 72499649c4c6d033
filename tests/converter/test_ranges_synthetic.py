"""User ranges and the steps made of them, on hand-planted traces
(tests/ftgen.py) with exact times: the timeline closes unclosed ranges,
report gives steps, mean and median step time and per-step counts, diff
the step rows and the conclusion by time per step. Recording them:
tests/traced/test_ranges.py."""
import subprocess

from conftest import TOOL
import ftgen
from test_convert import MS, check_names, convert
from test_ranges import diff_json, report


def test_convert_closes_unclosed_ranges(tmp_path):
    d = tmp_path / "open"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.7.ft"), 7)
    w.thread(7, "main", True)
    t = w.start + MS
    w.event(7, "RANGE_PUSH", t, 0, name="epoch", level=0, api=2)
    w.event(7, "RANGE_PUSH", t + MS, 0, name="step", level=1, api=2)
    w.event(7, "READ", t + 2 * MS, MS, fd=3, path="/x", req=4096, ret=4096)
    w.event(7, "RANGE_POP", t + 4 * MS, 0, level=1, api=2)
    w.event(7, "RANGE_START", t + 5 * MS, 0, id=9, name="never ended", api=0)
    w.event(7, "CLOSE", t + 6 * MS, 1000, fd=3, path="/x", ret=0)
    w.close()
    out, _ = convert(str(d))
    check_names(out, {"epoch": 1, "step": 1, "never ended": 1, "read": 1, "close": 1},
                ["--expect-slices", "5"])


def planted_steps(path, pid=300, lengths_ms=(1, 2, 3, 10), name="step", inner="step inner",
                  async_name="Step async"):
    """One thread: a `name` range per length, each holding 2 launches and a
    nested "step inner" range; one launch and one read outside any step; a
    start/end "Step async" range of 4 ms with one read in it."""
    w = ftgen.TraceFile(path, pid, ["planted"])
    w.thread(pid, "main", True)
    t = w.start + MS
    for i, ms in enumerate(lengths_ms):
        w.event(pid, "RANGE_PUSH", t, 0, name="%s %d" % (name, i), level=0, api=0)
        for k in range(2):
            w.event(pid, "CU_LAUNCH_KERNEL", t + (k + 1) * 10_000, 5_000, sym="cuLaunchKernel",
                    kernel="k", sync=0, stream=0x10, gx=1, gy=1, gz=1, bx=1, by=1, bz=1)
        w.event(pid, "RANGE_PUSH", t + 40_000, 0, name=inner, level=1, api=0)
        w.event(pid, "RANGE_POP", t + 50_000, 0, level=1, api=0)
        w.event(pid, "RANGE_POP", t + ms * MS, 0, level=0, api=0)
        t += ms * MS + MS
    w.event(pid, "CU_LAUNCH_KERNEL", t, 5_000, sym="cuLaunchKernel", kernel="k", sync=0,
            stream=0x10, gx=1, gy=1, gz=1, bx=1, by=1, bz=1)
    w.event(pid, "READ", t + MS, 1000, fd=3, path="/x", req=4096, ret=4096)
    t += 2 * MS
    w.event(pid, "RANGE_START", t, 0, id=77, name=async_name, api=1)
    w.event(pid, "READ", t + MS, 1000, fd=3, path="/x", req=4096, ret=4096)
    w.event(pid, "RANGE_END", t + 4 * MS, 0, id=77, api=1)
    w.close()


def test_report_steps_exact(tmp_path):
    d = tmp_path / "planted"
    d.mkdir()
    planted_steps(str(d / "host.300.ft"))
    m = report(str(d))["metrics"]
    # 4 pushed steps (1, 2, 3, 10 ms) and the start/end one (4 ms); the
    # nested "step inner" ranges are inside a step: not steps themselves
    assert m["steps"] == 5
    assert m["step_ns"] == 20 * MS
    assert m["step_mean_ns"] == 4 * MS and m["step_median_ns"] == 3 * MS
    assert m["launches_per_step"] == 8 / 5 and m["reads_per_step"] == 1 / 5
    assert m["hidden_syncs_per_step"] == 0
    r = subprocess.run([TOOL, "report", str(d)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert '5 steps ("step" ranges), mean 4.0 ms, median 3.0 ms' in r.stdout
    assert "  per step: 1.6 launches, 0.0 hidden syncs, 0.2 reads\n" in r.stdout
    # --step-range: another name makes other ranges the steps
    m = report(str(d), "--step-range", "STEP INNER")["metrics"]
    assert m["steps"] == 4 and m["step_ns"] == 4 * 10_000
    m = report(str(d), "--step-range", "batch")["metrics"]
    assert m["steps"] is None and m["step_mean_ns"] is None


def test_diff_step_rows_and_conclusion(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    planted_steps(str(a / "host.300.ft"), lengths_ms=(10, 10, 10, 10))
    planted_steps(str(b / "host.300.ft"), lengths_ms=(1, 1, 1))
    d = diff_json(str(a), str(b))
    m = d["metrics"]
    assert m["steps"] == {"before": 5, "after": 4, "change": -1, "relative": -0.2}
    assert m["step_mean_ns"]["before"] == 44 * MS // 5
    assert m["step_mean_ns"]["after"] == 7 * MS // 4
    # the time per step over the loop (the steps' periods, start to next
    # start: 11, 11, 11, 13 (to the async step), 4 ms; 2, 2, 4, 4 ms) and
    # its 95% interval: 10 ms -> 3 ms; the median step beside it
    assert d["change"]["before_ns"] == 10 * MS and d["change"]["after_ns"] == 3 * MS
    assert d["change"]["verdict"] == "faster"
    assert d["median_change"]["before_ns"] == 10 * MS
    assert d["median_change"]["after_ns"] == 1 * MS
    assert d["conclusion"].startswith("Faster: time per step 10.0 ms -> 3.0 ms (-70%; 95% "
                                      "interval of the change ")
    assert "over 5 and 4 steps in 1 and 1 run" in d["conclusion"]
    assert d["conclusion"].endswith(". Median step 10.0 ms -> 1.0 ms (-90%, faster).")
    r = subprocess.run([TOOL, "diff", str(a), str(b)], capture_output=True, text=True)
    rows = {l[:22].strip(): l[22:].split() for l in r.stdout.splitlines() if l[:1].isalpha()}
    assert rows["steps"] == ["5", "4", "-1", "-20%"]
    assert rows["time per step"][:4] == ["10.0", "ms", "3.0", "ms"]
    assert rows["time per step"][-1] == "-70%"
    assert rows["median step"][:4] == ["10.0", "ms", "1.0", "ms"]
    # a run without steps: "-", and the conclusion stays on wall time
    c = tmp_path / "c"
    c.mkdir()
    planted_steps(str(c / "host.300.ft"), name="batch", inner="load", async_name="epoch")
    d = diff_json(str(a), str(c))
    assert d["metrics"]["steps"] == {"before": 5, "after": None, "change": None,
                                     "relative": None}
    assert d["change"] is None and d["unit"] == "run"
    assert " wall time " in d["conclusion"] and "per step" not in d["conclusion"]


def test_report_steps_of_two_processes(tmp_path):
    """Two processes with steps (two ranks' main processes): the run's
    steps add up, and the line says over how many processes; when their
    counts differ it says only that."""
    for second, words in ((None, "10 steps (\"step\" ranges, 5 in each of 2 processes)"),
                          ((1, 2, 3), "8 steps (\"step\" ranges of 2 processes)")):
        d = tmp_path / ("two%d" % (second is None))
        d.mkdir()
        planted_steps(str(d / "host.300.ft"))
        if second is None:
            planted_steps(str(d / "host.301.ft"), pid=301)
        else:
            planted_steps(str(d / "host.301.ft"), pid=301, lengths_ms=second,
                          async_name="no step")
        assert report(str(d))["metrics"]["steps"] == int(words.split()[0])
        r = subprocess.run([TOOL, "report", str(d)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert words in " ".join(r.stdout.split()), r.stdout
