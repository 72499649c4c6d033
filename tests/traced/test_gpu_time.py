"""The GPU's own time from timing events of ours (shim/gpu_time.c), on the
simulated driver: kernels of known durations in the shapes the design
names; each stream's measured busy spans must match the kernels to within
the sampling interval (1 ms, the default), never a capture broken or an
event of a destroyed context touched (the simulated driver aborts)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT, TOOL, prog

MS = 1000000
SIM = {"LD_LIBRARY_PATH": os.path.join(BUILD, "simgpu")}


def gpu_of(run):
    r = subprocess.run([TOOL, "dump", "--json", run.dir], capture_output=True, text=True,
                       check=True)
    [p] = [json.loads(l)["process"] for l in r.stdout.splitlines() if '"process"' in l]
    return p["gpu"]


def spans(g, run):
    """stream -> [(start, end)] of the program's spans: not the warm-up's
    (those that start at one of its four tiny launches, whatever their
    length: a loaded host stretches a span from its launch call's start),
    nor a span of under 0.5 ms (a tiny kernel of the loop's own)"""
    tiny = [e["ts_ns"] for e in run.trace.calls("cuLaunchKernel")
            if e["args"]["kernel"] == "tiny"][:4]
    out = {}
    for k, v in g["streams"].items():
        long_ = [(a, b) for a, b in v
                 if b - a > MS // 2 and not any(abs(a - w) <= 1000 for w in tiny)]
        if long_:
            out[k] = long_
    return out


def near(ns, want_ms, tol_ms=1.0):
    """a span of a kernel of want_ms: it starts at its launch call's start
    and ends with the kernel, which the simulated driver queued during the
    call; the reference event's error (its record call's spread) either way"""
    return abs(ns - want_ms * MS) <= tol_ms * MS


def test_drain_then_host(traced):
    r = traced([prog("gpu_time_prog"), "drain"], env=SIM)
    assert r.returncode == 0, r.stderr
    g = gpu_of(r)
    # each launch 10 ms or more apart is sampled; the warm-up's first
    # launches may find the context's pool still being made (pending)
    assert g["samples"] - (4 - g["lost"]["pending"]) == 5
    # each 2 ms kernel's span starts at its launch (the sampled call's
    # start, the same clock): the stream idled from a kernel's end to the
    # next launch. The warm-up's spans are told apart by their launches,
    # not by their length, which a loaded host stretches.
    starts = [e["ts_ns"] for e in r.trace.calls("cuLaunchKernel") if e["args"]["kernel"] == "k2"]
    assert len(starts) == 5
    [v] = g["streams"].values()
    s = [(a, b) for a, b in v if any(abs(a - w) <= 1000 for w in starts)]
    assert len(s) == 5
    assert all(near(b - a, 2) for a, b in s)


def test_two_streams(traced):
    r = traced([prog("gpu_time_prog"), "two"], env=SIM)
    assert r.returncode == 0, r.stderr
    by_len = sorted(spans(gpu_of(r), r).values(), key=lambda v: -(v[0][1] - v[0][0]))
    assert [len(v) for v in by_len] == [3, 3]
    assert all(near(b - a, 3) for a, b in by_len[0])
    assert all(near(b - a, 1) for a, b in by_len[1])


def test_graph_capture_untouched(traced):
    r = traced([prog("gpu_time_prog"), "graph"], env=SIM)
    assert r.returncode == 0, r.stderr
    # the capture ended well (a query of ours during it, of B's pending
    # sample, would have invalidated it: 901) and holds the program's
    # three kernels, no event of ours
    assert r.stdout.split() == ["0", "0", "3"]
    g = gpu_of(r)
    assert g["lost"]["capture"] >= 1
    # each graph launch one unit (3 x 1 ms) on A; B's 5 ms kernel, its
    # sample pending during the capture and polled only after it
    got = sorted(spans(g, r).values(), key=len)
    assert [len(v) for v in got] == [1, 3]
    assert near(got[0][0][1] - got[0][0][0], 5)
    assert all(near(b - a, 3) for a, b in got[1])


def test_never_syncs(traced):
    r = traced([prog("gpu_time_prog"), "nosync"], env=SIM)
    assert r.returncode == 0, r.stderr
    [s] = spans(gpu_of(r), r).values()
    assert len(s) == 20
    assert all(near(b - a, 2) for a, b in s)


def test_context_destroyed_with_events_pending(traced):
    r = traced([prog("gpu_time_prog"), "ctxgone"], env=SIM)
    assert r.returncode == 0, r.stderr      # the simulated driver aborts on a dead event
    g = gpu_of(r)
    # the 5 ms kernel's sample was pending at cuCtxDestroy: dropped, never
    # queried; each sample taken was either written or dropped so
    assert g["lost"]["ctx_gone"] >= 1
    assert g["samples"] + g["lost"]["ctx_gone"] == 5 - g["lost"]["pending"]


@pytest.mark.parametrize("ms", ["0"])
def test_off(traced, ms):
    r = traced([prog("gpu_time_prog"), "drain"], env=dict(SIM, FEEDTRACE_GPU_MS=ms))
    assert r.returncode == 0, r.stderr
    g = gpu_of(r)
    assert g["samples"] == 0 and g["streams"] == {}
    assert r.trace.count("cuLaunchKernel") == 9


def report(run, *args):
    r = subprocess.run([TOOL, "report", *args, run.dir], capture_output=True, text=True,
                       check=True)
    return r.stdout


def test_report_says_measured_or_modelled(traced):
    r = traced([prog("gpu_time_prog"), "drain"], env=SIM)
    assert r.returncode == 0, r.stderr
    gpu = json.loads(report(r, "--json"))["verdict"]["gpu"]
    m = gpu["measured"]
    assert m["busy_ns"] + m["idle_ns"] == m["covered_ns"]
    # five 2 ms kernels, and the warm-up's tiny ones sampled
    assert abs(m["busy_ns"] - 10 * MS) <= MS
    w = json.loads(report(r, "--json"))["verdict"]["window"]
    basis = "measured" if 2 * m["covered_ns"] >= w["end_ns"] - w["start_ns"] else "modelled"
    assert gpu["idle_basis"] == basis
    assert ("(measured; samples cover" if basis == "measured"
            else "(modelled: samples cover only") in report(r)
    off = traced([prog("gpu_time_prog"), "drain"], env=dict(SIM, FEEDTRACE_GPU_MS="0"))
    assert json.loads(report(off, "--json"))["verdict"]["gpu"]["measured"] is None
    assert "GPU idle" in report(off) and "(modelled: no samples)" in report(off)


def test_diff_compares_measured_idle(traced):
    """Both sides sampled (their samples covering half the loop or more):
    diff compares the measured idle shares; one side without samples: the
    models'."""
    a = traced([prog("gpu_time_prog"), "drain"], env=SIM)
    b = traced([prog("gpu_time_prog"), "nosync"], env=SIM)
    c = traced([prog("gpu_time_prog"), "nosync"], env=dict(SIM, FEEDTRACE_GPU_MS="0"))
    va, vb = (json.loads(report(x, "--json"))["verdict"] for x in (a, b))

    def share(v):
        m, w = v["gpu"]["measured"], v["window"]["end_ns"] - v["window"]["start_ns"]
        if v["gpu"]["idle_basis"] == "measured":     # less the waits' return latency
            return (m["idle_ns"] - m["drain_wait_ns"]) / m["covered_ns"]
        return v["gpu"]["idle_ns"] / w

    r = subprocess.run([TOOL, "diff", "--json", a.dir, b.dir], capture_output=True, text=True,
                       check=True)
    g = json.loads(r.stdout)["gpu_idle"]
    # measured when both reports stand on their samples (they cover half
    # of the loop or more), else both models
    both = va["gpu"]["idle_basis"] == vb["gpu"]["idle_basis"] == "measured"
    assert g["basis"] == ("measured" if both else "modelled")
    if both:
        assert abs(g["before"] - share(va)) <= 1e-4
        assert abs(g["after"] - share(vb)) <= 1e-4
    r = subprocess.run([TOOL, "diff", "--json", a.dir, c.dir], capture_output=True, text=True,
                       check=True)
    assert json.loads(r.stdout)["gpu_idle"]["basis"] == "modelled"
    out = subprocess.run([TOOL, "diff", a.dir, b.dir], capture_output=True, text=True,
                         check=True).stdout
    assert ("GPU idle (measured): " if both else "GPU idle (modelled): ") in out


def test_timeline_track_per_stream(traced):
    """convert draws each stream's measured spans on a track of its own,
    one "busy (measured)" slice a span, every slice closed."""
    r = traced([prog("gpu_time_prog"), "two"], env=SIM)
    assert r.returncode == 0, r.stderr
    g = gpu_of(r)
    want = sum(len(v) for v in g["streams"].values())
    out = r.dir.rstrip("/") + ".pftrace"
    subprocess.run([TOOL, "convert", r.dir, "-o", out], check=True, capture_output=True)
    root = ROOT
    c = subprocess.run([sys.executable, os.path.join(root, "tests", "check_pftrace.py"), out,
                        "--expect-name", "busy (measured)=%d" % want],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stdout + c.stderr
    assert len(g["streams"]) == 2 and want >= 6


def test_unsampled_work_claims_no_idle(traced):
    """Launches every ~50 us, 1 us each: between two samples (1 ms) lie
    unsampled launches, so the gaps are unknown, not idle: the samples
    claim no idle there (only the warm-up's gaps, known idle)."""
    r = traced([prog("gpu_time_prog"), "dense"], env=SIM)
    assert r.returncode == 0, r.stderr
    v = json.loads(report(r, "--json"))["verdict"]
    m, w = v["gpu"]["measured"], v["window"]["end_ns"] - v["window"]["start_ns"]
    assert m["busy_ns"] + m["idle_ns"] == m["covered_ns"]
    # the warm-up (known idle between its samples) is covered; of the dense
    # launches' time, only the spans and the gaps no launch fell in: under
    # half of it (every gap between two samples holds unsampled launches,
    # except where the flusher saw the stream drained)
    first, last = {}, {}
    for e in r.trace.calls("cuLaunchKernel"):
        first.setdefault(e["args"]["kernel"], e["ts_ns"])
        last[e["args"]["kernel"]] = e["ts_ns"]
    dense = last["u1"] - first["u1"]
    assert dense > 10 * MS
    assert m["covered_ns"] <= first["u1"] - first["tiny"] + 2 * MS + dense // 2
    g = gpu_of(r)
    assert g["samples"] >= 20               # the dense phase was sampled all the same
    basis = "measured" if 2 * m["covered_ns"] >= w else "modelled"
    assert v["gpu"]["idle_basis"] == basis


def test_wait_takes_a_sample(traced):
    """A loop that never syncs and waits for its batches: each 2 ms kernel
    follows a sampled launch within the interval, so only the sample taken
    as the thread blocks in its semaphore wait says when it ended; with it,
    every kernel's span is measured and the stream's idle while the thread
    waits is known (covered), not unknown."""
    r = traced([prog("gpu_time_prog"), "starved"], env=SIM)
    assert r.returncode == 0, r.stderr
    g = gpu_of(r)
    main = r.trace.procs[0]["pid"]
    blocked = [e for e in r.trace.calls("sem_wait", pid=main) if e["tid"] == main]
    # a wait whose first try found the batch ready did not block (no record,
    # no sample); a k2 launched past the interval (the thread descheduled
    # between its two launches) is sampled itself and leaves the wait none
    assert 1 <= g["before_wait"] <= len(blocked)
    long_ = spans(g, r)["0"]
    assert len(long_) >= len(blocked)
    assert all(near(b - a, 2) for a, b in long_)


def test_timeline_measured_kernels(traced):
    """The drain shape's five 2 ms k2 kernels, each launched 10 ms after
    the last with every launch sampled: each sample bounds its kernel
    alone, so convert draws a "k2" slice on the stream's measured track
    per launch, inside a busy span, the flow from that launch's slice on
    the main thread ending there (which kernels the warm-up's samples
    bound depends on when the pool was made: not asserted)."""
    from pfslices import slices
    r = traced([prog("gpu_time_prog"), "drain"], env=SIM)
    assert r.returncode == 0, r.stderr
    out = r.dir.rstrip("/") + ".pftrace"
    subprocess.run([TOOL, "convert", r.dir, "-o", out], check=True, capture_output=True)
    sl = slices(out)
    k2 = [s for s in sl if s["name"] == "k2"]
    assert len(k2) == 5
    assert all(s["track"].startswith("GPU stream 0x") and s["track"].endswith("(measured)")
               for s in k2)
    busy = [s for s in sl if s["name"] == "busy (measured)" and s["track"] == k2[0]["track"]]
    assert all(any(b["ts"] <= s["ts"] and s["end"] <= b["end"] for b in busy) for s in k2)
    launches = [e["ts_ns"] for e in r.trace.calls("cuLaunchKernel") if e["args"]["kernel"] == "k2"]
    by_flow = {f: s for s in sl if s["name"] == "cuLaunchKernel" for f in s["flows"]}
    src = sorted(by_flow[s["term"][0]]["ts"] for s in k2)
    assert len(launches) == 5 and len(src) == 5
    assert all(not s["track"].startswith("GPU") for s in map(lambda s: by_flow[s["term"][0]], k2))
    # the flows start at the five k2 launches (the dump's times are from
    # the process's start, the timeline's absolute: compare the spacing)
    launches.sort()
    assert [t - src[0] for t in src] == [t - launches[0] for t in launches]
