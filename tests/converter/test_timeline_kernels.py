"""The timeline's measured kernels (docs/ANALYSES.md, "Measured GPU
time"): a sample that bounds one submission's work exactly (the first
after the stream was seen idle, or the only submission since the previous
sample) gets a slice named after the kernel (a copy: its call) on the
stream's measured track, from the later of its submission and the
previous sample's completion to its own completion, with a flow from the
launch's slice on the CPU thread. Synthetic traces (tests/ftgen.py), read
back from the .pftrace (tests/pfslices.py) and by Perfetto's trace
processor."""
import json
import os
import subprocess

import pytest

import ftgen
from pfslices import slices
from conftest import TOOL

MS = 1_000_000
US = 1_000
START = 1_000_000_000_000           # ftgen's default start
T0 = START + 10 * MS
S = 0x10


def launch(w, tid, t, kernel, stream=S):
    w.event(tid, "CU_LAUNCH_KERNEL", t, 10 * US, sym="cuLaunchKernel", kernel=kernel, sync=0,
            stream=stream)


def convert(tmp_path, w, d):
    w.close()
    out = str(tmp_path / "t.pftrace")
    r = subprocess.run([TOOL, "convert", str(d), "-o", out], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return slices(out)


FLOWS = ("select s1.name as src, s1.ts as src_ts, s2.name as dst, s2.ts as dst_ts from flow f "
         "join slice s1 on f.slice_out = s1.id join slice s2 on f.slice_in = s2.id "
         "order by s2.ts")


def new(tmp_path):
    d = tmp_path / "k"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["python3", "train.py"])
    w.thread(100, "main", main=True)
    w.thread(101, "worker")
    return d, w


def one_shape(tmp_path):
    """stream 0x10 of thread 100: kA alone on an idle stream (why 1); kB
    the only submission since kA's sample (why 2); kC unsampled, then kD
    sampled: kD's sample bounds two kernels (no slice); kE alone since
    kD's sample; kF queued behind kE, alone since kE's sample, then a
    hidden sync (a DtoH copy) drains it; after a stream sync, an HtoD copy
    on the idle stream (why 1). Thread 101's per-thread default stream:
    kG on it idle (why 1)."""
    d, w = new(tmp_path)
    launch(w, 100, T0, "kA")
    w.gpu(100, S, T0, T0 + 2 * MS, 1, why=1)
    launch(w, 100, T0 + 5 * MS, "kB")
    w.gpu(100, S, T0 + 5 * MS, T0 + 6 * MS, 2)
    launch(w, 100, T0 + 10 * MS, "kC")
    launch(w, 100, T0 + 10 * MS + 100 * US, "kD")
    w.gpu(100, S, T0 + 10 * MS + 100 * US, T0 + 13 * MS, 4)
    launch(w, 100, T0 + 20 * MS, "kE")
    w.gpu(100, S, T0 + 20 * MS, T0 + 24 * MS, 5)
    launch(w, 100, T0 + 21 * MS, "kF")
    w.gpu(100, S, T0 + 21 * MS, T0 + 26 * MS, 6)
    w.event(100, "CU_MEMCPY_DTOH", T0 + 22 * MS, 4100 * US, sym="cuMemcpyDtoH_v2", dir=2,
            sync=2, stream=S, bytes=4096)
    w.event(100, "CU_STREAM_SYNC", T0 + 27 * MS, 10 * US, sym="cuStreamSynchronize", sync=1,
            stream=S)
    w.event(100, "CU_MEMCPY_HTOD_ASYNC", T0 + 30 * MS, 20 * US, sym="cuMemcpyHtoDAsync_v2",
            dir=1, sync=0, stream=S, bytes=1 << 20)
    w.gpu(100, S, T0 + 30 * MS, T0 + 31 * MS, 7, why=1)
    launch(w, 101, T0 + 40 * MS, "kG", stream=2)
    w.gpu(101, 2, T0 + 40 * MS, T0 + 41 * MS, 1, why=1)
    return convert(tmp_path, w, d)


def gpu_slices(sl):
    return {s["name"]: s for s in sl if s["track"].startswith("GPU stream")
            and "(measured)" in s["track"] and not s["name"].startswith("busy")}


def test_kernel_slices_exact_bounds(tmp_path):
    sl = one_shape(tmp_path)
    k = gpu_slices(sl)
    # kC and kD share kD's sample: no bound for either
    assert sorted(k) == ["cuMemcpyHtoDAsync", "kA", "kB", "kE", "kF", "kG"]
    got = {n: (s["track"], s["ts"] - T0, s["end"] - T0) for n, s in k.items()}
    assert got == {
        "kA": ("GPU stream 0x10 (measured)", 0, 2 * MS),
        "kB": ("GPU stream 0x10 (measured)", 5 * MS, 6 * MS),
        "kE": ("GPU stream 0x10 (measured)", 20 * MS, 24 * MS),
        "kF": ("GPU stream 0x10 (measured)", 24 * MS, 26 * MS),      # behind kE
        "cuMemcpyHtoDAsync": ("GPU stream 0x10 (measured)", 30 * MS, 31 * MS),
        "kG": ("GPU stream: thread 101's default (measured)", 40 * MS, 41 * MS),
    }
    assert k["kF"]["args"]["bound"].startswith("ran within: from the previous sample's")
    assert k["kA"]["args"]["bound"].startswith("ran within: from its submission")
    assert k["kA"]["args"]["call"] == "cuLaunchKernel"
    assert k["cuMemcpyHtoDAsync"]["args"]["call"] == "cuMemcpyHtoDAsync"


def test_flow_from_each_launch_to_its_kernel(tmp_path):
    sl = one_shape(tmp_path)
    k = gpu_slices(sl)
    calls = {s["ts"]: s for s in sl if s["track"] in ("main", "worker")}
    submit = {"kA": T0, "kB": T0 + 5 * MS, "kE": T0 + 20 * MS, "kF": T0 + 21 * MS,
              "cuMemcpyHtoDAsync": T0 + 30 * MS, "kG": T0 + 40 * MS}
    ids = set()
    for name, t in submit.items():
        [f] = k[name]["term"]
        assert f in calls[t]["flows"], (name, calls[t])
        ids.add(f)
    assert len(ids) == len(submit)
    assert calls[T0 + 40 * MS]["track"] == "worker"
    # kF's launch also starts the hidden sync's flow: two flows on it
    [hidden] = [s for s in sl if s["track"] == "syncs" and s["ts"] == T0 + 22 * MS]
    [hf] = hidden["term"]
    assert sorted(calls[T0 + 21 * MS]["flows"]) == sorted([hf, k["kF"]["term"][0]])
    # the unbounded launches start no flow
    assert calls[T0 + 10 * MS]["flows"] == [] and calls[T0 + 10 * MS + 100 * US]["flows"] == []


def test_interval_sample_after_pending_work_draws_no_kernel(tmp_path):
    """Two launches, the second sampled (why 2) with the first unsampled
    and no sample before: the sample bounds both, so no kernel slice and
    no flow; the busy span stays."""
    d, w = new(tmp_path)
    launch(w, 100, T0, "k1")
    launch(w, 100, T0 + 1 * MS, "k2")
    w.gpu(100, S, T0 + 1 * MS, T0 + 5 * MS, 2)
    launch(w, 100, T0 + 10 * MS, "k3")
    launch(w, 100, T0 + 11 * MS, "k4")
    w.gpu(100, S, T0 + 11 * MS, T0 + 15 * MS, 4)
    sl = convert(tmp_path, w, d)
    assert gpu_slices(sl) == {}
    busy = [(s["ts"] - T0, s["end"] - T0) for s in sl if s["name"] == "busy (measured)"]
    assert busy == [(1 * MS, 5 * MS), (11 * MS, 15 * MS)]
    assert all(not s["flows"] and not s["term"] for s in sl)


def test_perfetto_joins_launch_to_kernel(tmp_path):
    """Perfetto's trace processor reads each flow from the launch's slice
    to its kernel's (and the hidden sync's from kF's launch)."""
    one_shape(tmp_path)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run([os.path.join(root, "tests", "perfetto_load.sh"),
                        str(tmp_path / "t.pftrace"), "--query", FLOWS],
                       capture_output=True, text=True, timeout=600)
    if r.returncode == 77:
        pytest.skip("Perfetto trace processor not obtainable: " + r.stdout + r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    got = [(x["src"], x["src_ts"] - T0, x["dst"], x["dst_ts"] - T0) for x in rows]
    assert got == [("cuLaunchKernel", 0, "kA", 0),
                   ("cuLaunchKernel", 5 * MS, "kB", 5 * MS),
                   ("cuLaunchKernel", 20 * MS, "kE", 20 * MS),
                   ("cuLaunchKernel", 21 * MS, "cuMemcpyDtoH", 22 * MS),
                   ("cuLaunchKernel", 21 * MS, "kF", 24 * MS),
                   ("cuMemcpyHtoDAsync", 30 * MS, "cuMemcpyHtoDAsync", 30 * MS),
                   ("cuLaunchKernel", 40 * MS, "kG", 40 * MS)]
