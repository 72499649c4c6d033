"""The recorder's clock (libfeedtrace/clock.c): the TSC wherever it is
invariant and the kernel has not found it unstable; a TSC that parts from
CLOCK_MONOTONIC during the run is given up for clock_gettime, counted
(`clock_fallbacks`), with every thread's times still rising and both
kinds of reading on one timeline. The parting is planted by
FEEDTRACE_TEST_TICK_DRIFT_PPM: ticks from a test source, two per ns of
MONOTONIC, running that many ppm fast from 300 ms after start-up. The
program names each open by the CLOCK_MONOTONIC it read just before it, so
a record's converted time is checked against the program's own clock."""
import os
import statistics

from conftest import PYTHON, ROOT, report_json

SCRIPT = os.path.join(ROOT, "tests", "scripts", "clock_opens.py")


def expected_kind():
    """1 (TSC) or 2 (CLOCK_MONOTONIC) by the rule clock.c applies, read
    from the kernel's side (its clocksources and the first CPU's flags)."""
    d = "/sys/devices/system/clocksource/clocksource0/"
    cur = open(d + "current_clocksource").read().split()
    avail = open(d + "available_clocksource").read().split()
    flags = []
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].split()
                break
    invariant = ("constant_tsc" in flags and "nonstop_tsc" in flags) or "tsc_reliable" in flags
    if os.uname().machine not in ("x86_64", "i686"):
        return 2
    return 1 if cur == ["tsc"] or ("tsc" in avail and invariant) else 2


def opens(run, pid=None):
    """per thread: [(converted ns since the run's start, program's ns)] in record order"""
    out = {}
    for e in run.trace.events:
        if pid is not None and e["pid"] != pid:
            continue
        p = e["args"].get("path", "")
        if e["call"] not in ("open", "open64", "openat", "openat64"):
            continue
        if not p.startswith("/nonexistent-feedtrace-clock/"):
            continue
        out.setdefault(e["tid"], []).append((e["ts_ns"], int(p.rsplit("-", 1)[1])))
    return out


def misses(points, ref):
    """each record's converted time against the program's, relative to ref's"""
    return [abs((ts - ref[0]) - (t - ref[1])) for ts, t in points]


def check_rising(per_thread):
    for tid, pts in per_thread.items():
        by_time = sorted(pts)
        assert [t for _, t in by_time] == sorted(t for _, t in pts), tid


def test_clock_choice(traced):
    r = traced([PYTHON, SCRIPT, "50"])
    assert r.returncode == 0, r.stderr
    (p,) = r.trace.procs
    assert p["clock_kind"] == expected_kind()
    assert p["clock_fallbacks"] == 0


def test_ticks_that_keep_to_monotonic_are_kept(traced):
    r = traced([PYTHON, SCRIPT, "1500"], env={"FEEDTRACE_TEST_TICK_DRIFT_PPM": "0"})
    assert r.returncode == 0, r.stderr
    (p,) = r.trace.procs
    assert p["clock_kind"] == 1 and p["clock_fallbacks"] == 0
    per = opens(r)
    assert len(per) == 2
    check_rising(per)
    pts = sorted(x for v in per.values() for x in v)
    assert len(pts) > 100
    # one line through the whole run: the first open against the last
    assert statistics.median(misses(pts, pts[-1])) < 1e6


def test_ticks_that_part_fall_back_to_clock_gettime(traced):
    """20 % fast from 300 ms on: found apart within a few flushes, then
    clock_gettime. The opens of the last half second (after the fall-back)
    sit on the program's clock; left on the ticks' single line they would
    be off by 2 % of their distance (about 10 ms)."""
    r = traced([PYTHON, SCRIPT, "2000"], env={"FEEDTRACE_TEST_TICK_DRIFT_PPM": "200000"})
    assert r.returncode == 0, r.stderr
    (p,) = r.trace.procs
    assert p["clock_kind"] == 1
    assert p["clock_fallbacks"] == 1
    per = opens(r)
    assert len(per) == 2
    check_rising(per)
    pts = sorted(x for v in per.values() for x in v)
    last = pts[-1]
    tail = [x for x in pts if x[1] > last[1] - 500000000]
    assert len(tail) > 50
    assert statistics.median(misses(tail, last)) < 1e6
    # the report counts it, once
    assert report_json(r.dir)["losses"]["clock_fallbacks"] == 1


def test_fork_after_the_fall_back_stays_on_the_timeline(traced):
    """A child forked after its parent gave the TSC up inherits the mapped
    clock: its file's ticks are MONOTONIC on the parent's line from its
    first pair (no parting of its own), and its opens sit on the
    program's clock, on the parent's timeline."""
    r = traced([PYTHON, SCRIPT, "1500", "fork"], env={"FEEDTRACE_TEST_TICK_DRIFT_PPM": "200000"})
    assert r.returncode == 0, r.stderr
    parent = [p for p in r.trace.procs if p["ppid"] not in {q["pid"] for q in r.trace.procs}]
    (child,) = [p for p in r.trace.procs if p not in parent]
    assert parent[0]["clock_fallbacks"] == 1 and child["clock_fallbacks"] == 0
    assert child["clock_kind"] == 1
    kid = [x for v in opens(r, child["pid"]).values() for x in v]
    assert len(kid) > 50
    check_rising(opens(r, child["pid"]))
    par = sorted(x for v in opens(r, parent[0]["pid"]).values() for x in v)
    last = par[-1]
    # the child's opens against the parent's last one: one timeline
    assert statistics.median(misses(kid, last)) < 1e6


def test_slow_ticks_fall_back_too(traced):
    r = traced([PYTHON, SCRIPT, "1500"], env={"FEEDTRACE_TEST_TICK_DRIFT_PPM": "-200000"})
    assert r.returncode == 0, r.stderr
    (p,) = r.trace.procs
    assert p["clock_fallbacks"] == 1
    per = opens(r)
    check_rising(per)


def test_bad_drift_value_says_so_and_uses_the_tsc(traced):
    r = traced([PYTHON, SCRIPT, "50"], env={"FEEDTRACE_TEST_TICK_DRIFT_PPM": "fast"})
    assert r.returncode == 0
    assert r.stderr.count("FEEDTRACE_TEST_TICK_DRIFT_PPM") == 1
    (p,) = r.trace.procs
    assert p["clock_kind"] == expected_kind() and p["clock_fallbacks"] == 0
