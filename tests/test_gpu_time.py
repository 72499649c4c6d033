"""The GPU's own time from timing events of ours (shim/gpu_time.c), on the
simulated driver: kernels of known durations in the shapes the design
names; each stream's measured busy spans must match the kernels to within
the sampling interval (1 ms, the default), never a capture broken or an
event of a destroyed context touched (the simulated driver aborts)."""
import json
import os
import subprocess

import pytest

from conftest import BUILD, TOOL, prog

MS = 1000000
SIM = {"LD_LIBRARY_PATH": os.path.join(BUILD, "simgpu")}


def gpu_of(run):
    r = subprocess.run([TOOL, "dump", "--json", run.dir], capture_output=True, text=True,
                       check=True)
    [p] = [json.loads(l)["process"] for l in r.stdout.splitlines() if '"process"' in l]
    return p["gpu"]


def spans(g):
    """stream -> [(start, end)] of the spans longer than the warm-up's"""
    out = {}
    for k, v in g["streams"].items():
        long_ = [(a, b) for a, b in v if b - a > MS // 2]
        if long_:
            out[k] = long_
    return out


def near(ns, want_ms, tol_ms=1.0):
    return abs(ns - want_ms * MS) <= tol_ms * MS


def test_drain_then_host(traced):
    r = traced([prog("gpu_time_prog"), "drain"], env=SIM)
    assert r.returncode == 0, r.stderr
    g = gpu_of(r)
    assert g["samples"] == 5                # each 2 ms kernel, 10 ms apart
    assert g["lost"]["pending"] == 2        # the warm-up: the pool made meanwhile
    [s] = spans(g).values()
    assert len(s) == 5
    assert all(near(b - a, 2) for a, b in s)
    # the stream idled while the host was away: 10 ms between submissions
    assert all(near(s[i + 1][0] - s[i][1], 8, 1.5) for i in range(4))


def test_two_streams(traced):
    r = traced([prog("gpu_time_prog"), "two"], env=SIM)
    assert r.returncode == 0, r.stderr
    by_len = sorted(spans(gpu_of(r)).values(), key=lambda v: -(v[0][1] - v[0][0]))
    assert [len(v) for v in by_len] == [3, 3]
    assert all(near(b - a, 3) for a, b in by_len[0])
    assert all(near(b - a, 1) for a, b in by_len[1])


def test_graph_capture_untouched(traced):
    r = traced([prog("gpu_time_prog"), "graph"], env=SIM)
    assert r.returncode == 0, r.stderr
    # the capture ended well (a query of ours would have invalidated it,
    # 901) and holds the program's three kernels, no event of ours
    assert r.stdout.split() == ["0", "0", "3"]
    g = gpu_of(r)
    assert g["lost"]["capture"] >= 1
    [s] = spans(g).values()
    assert len(s) == 3                      # each graph launch one unit: 3 x 1 ms
    assert all(near(b - a, 3) for a, b in s)


def test_never_syncs(traced):
    r = traced([prog("gpu_time_prog"), "nosync"], env=SIM)
    assert r.returncode == 0, r.stderr
    [s] = spans(gpu_of(r)).values()
    assert len(s) == 20
    assert all(near(b - a, 2) for a, b in s)


def test_context_destroyed_with_events_pending(traced):
    r = traced([prog("gpu_time_prog"), "ctxgone"], env=SIM)
    assert r.returncode == 0, r.stderr      # the simulated driver aborts on a dead event
    g = gpu_of(r)
    assert g["lost"]["ctx_gone"] == 1
    assert g["samples"] == 0


@pytest.mark.parametrize("ms", ["0"])
def test_off(traced, ms):
    r = traced([prog("gpu_time_prog"), "drain"], env=dict(SIM, FEEDTRACE_GPU_MS=ms))
    assert r.returncode == 0, r.stderr
    g = gpu_of(r)
    assert g["samples"] == 0 and g["streams"] == {}
    assert r.trace.count("cuLaunchKernel") == 7
