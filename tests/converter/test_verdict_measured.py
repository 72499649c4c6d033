"""The verdict on the measured GPU time (docs/ANALYSES.md, "Measured GPU
time" and "The verdict"): synthetic traces (tests/ftgen.py) with the
tracer's timing samples inside, one per launch unless a test says
otherwise, for each shape of verdict. Where the samples cover half of the
window or more, the device's idle, its split over causes and the hidden
syncs' GPU cost stand on them, and the report says "(measured"; else on
the model, and it says "(modelled"."""
import json
import subprocess

import ftgen
from conftest import TOOL

MS = 1_000_000
US = 1_000
START = 1_000_000_000_000           # ftgen's default start
T0 = START + 10 * MS


def run(d, args=()):
    r = subprocess.run([TOOL, "report", *args, str(d)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def verdict(d):
    return json.loads(run(d, ["--json"]))["verdict"]


def words(d):
    return " ".join(run(d).split())


def new(tmp_path, name, pid=100, cmd=("python3", "train.py")):
    d = tmp_path / name
    d.mkdir()
    w = ftgen.TraceFile(str(d / ("host.%d.ft" % pid)), pid, list(cmd))
    w.thread(pid, "main", main=True)
    return d, w


def launch(w, tid, t, stream, dur=10 * US):
    w.event(tid, "CU_LAUNCH_KERNEL", t, dur, sym="cuLaunchKernel", kernel="k", sync=0,
            stream=stream)


def poll(w, tid, t, dur):
    """a blocked wait on a pipe that returned data: waiting for data"""
    w.event(tid, "POLL", t, dur, ret=1, nfds=1, timeout=5000, kinds=2, fd0=5, fd1=-1,
            fd2=-1, fd3=-1, fd4=-1, fd5=-1, fd6=-1, fd7=-1)


def starved(tmp_path, name="starved", sampled=lambda i: True, steps=10, stream=0x10):
    """per 10 ms step: 8 ms in poll() for a batch, then a launch whose 2 ms
    kernel starts at once; the stream is never synced (the model keeps it
    busy from the first launch on); a last poll ends the run after the
    last kernel. sampled(i): step i's launch took a timing sample."""
    d, w = new(tmp_path, name)
    n = 0
    for i in range(steps):
        t = T0 + i * 10 * MS
        poll(w, 100, t, 8 * MS)
        launch(w, 100, t + 8 * MS, stream)
        n += 1
        if sampled(i):
            w.gpu(100, stream, t + 8 * MS, t + 10 * MS, n)
    poll(w, 100, T0 + steps * 10 * MS, 1 * MS)
    w.close()
    return d


def test_data_starved_never_synced(tmp_path):
    """The model says the never-synced stream is busy all along (idle 0%);
    the samples cover the loop and say it idles 8 ms of every 10: data
    delivery, on the measured GPU idle, split to the wait for data."""
    d = starved(tmp_path)
    v = verdict(d)
    g = v["gpu"]
    # window: the first launch to the GPU's last known work, the last
    # kernel's end (the model knew it only to the last launch's end, and
    # keeps the stream busy to there: idle only after it)
    w = v["window"]
    assert (w["start_ns"], w["end_ns"]) == (T0 + 8 * MS, T0 + 100 * MS)
    assert g["idle_basis"] == "measured" and g["modelled"]["idle_ns"] == 2 * MS - 10 * US
    # covered: the first sample's submission to the last completion
    assert g["measured"] == {"covered_ns": 92 * MS, "busy_ns": 20 * MS, "idle_ns": 72 * MS,
                             "drain_wait_ns": 0}
    assert g["idle_ns"] == 72 * MS
    assert v["limit"] == "data delivery" and v["basis"] == "gpu_idle"
    # each known idle gap (a kernel's end to the next launch) is the poll
    assert g["streams_idle_by_feed"]["data_wait"] == 9 * 8 * MS
    assert sum(g["streams_idle_by_feed"].values()) == 9 * 8 * MS
    assert g["idle_by_feed"]["data_wait"] == g["idle_ns"]
    s = words(d)
    assert "the GPU idles 78% of the loop (measured)" in s
    assert "GPU idle 78% of the loop (measured; samples cover 100% of it; the model said 2%)" in s


def test_low_coverage_falls_back_to_the_model(tmp_path):
    """The same loop with only its first two launches sampled: the samples
    cover 12 of its 90 ms (the first launch to the last launch's end),
    under half: the model stands (the stream busy, no idle), the verdict
    comes from the feeding thread's time, and the report says how little
    the samples cover."""
    d = starved(tmp_path, sampled=lambda i: i < 2)
    v = verdict(d)
    g = v["gpu"]
    assert g["idle_basis"] == "modelled"
    assert g["measured"]["covered_ns"] == 12 * MS
    assert g["idle_ns"] == g["modelled"]["idle_ns"] == 0
    assert v["limit"] == "data delivery" and v["basis"] == "thread_time"
    # what the two samples saw (2 ms busy, 8 ms idle, 2 ms busy) said beside
    assert "GPU idle 0% of the loop (modelled: samples cover only 13% of it, idle 67% " \
        "there)" in words(d)


def test_gpu_bound_never_synced(tmp_path):
    """A loop that never syncs and whose launches block (the driver's queue
    full): each 5 ms kernel starts as the one before ends. The model keeps
    the stream busy but is no evidence (nobody waits for the GPU), and the
    thread's time reads 'work submission'; the samples show the GPU busy
    all along: GPU-bound."""
    d, w = new(tmp_path, "gpubound")
    for i in range(20):
        t = T0 + i * 5 * MS
        launch(w, 100, t, 0x10, dur=4500 * US)     # blocked in the launch 4.5 ms
        w.gpu(100, 0x10, t, T0 + (i + 1) * 5 * MS + 5 * MS, i + 1)
    w.event(100, "CU_STREAM_SYNC", T0 + 100 * MS, 5 * MS, sym="cuStreamSynchronize", sync=1,
            stream=0x10)
    w.close()
    v = verdict(d)
    assert v["gpu"]["idle_basis"] == "measured"
    assert v["gpu"]["measured"]["idle_ns"] == 0
    assert v["limit"] == "GPU-bound" and v["basis"] == "gpu_idle"
    assert "The GPU is the limit: it is busy 100% of the loop (measured)" in words(d)
    # without the samples, the same trace: the model's answer
    d2, w2 = new(tmp_path, "gpubound-nosamples")
    for i in range(20):
        launch(w2, 100, T0 + i * 5 * MS, 0x10, dur=4500 * US)
    w2.event(100, "CU_STREAM_SYNC", T0 + 100 * MS, 5 * MS, sym="cuStreamSynchronize", sync=1,
             stream=0x10)
    w2.close()
    v2 = verdict(d2)
    assert v2["gpu"]["idle_basis"] == "modelled" and v2["limit"] == "work submission"


def test_launch_bound(tmp_path):
    """2,000 launches of 2 us kernels, 5 us each, with 20 us of CPU between
    them; every launch sampled: the GPU idles 23 us of each 25: work
    submission, measured."""
    d, w = new(tmp_path, "launch")
    for i in range(2000):
        t = T0 + i * 25 * US
        launch(w, 100, t, 0, dur=5 * US)
        w.gpu(100, 0, t, t + 2 * US, i + 1)
    w.event(100, "CU_STREAM_SYNC", T0 + 50 * MS, 10 * US, sym="cuStreamSynchronize", sync=1,
            stream=0)
    w.close()
    v = verdict(d)
    assert v["gpu"]["idle_basis"] == "measured"
    assert v["gpu"]["measured"]["busy_ns"] == 2000 * 2 * US
    assert v["limit"] == "work submission" and v["basis"] == "gpu_idle"
    feed = v["gpu"]["streams_idle_by_feed"]
    # the idle gaps: 3 us in the launch call, then 20 us of CPU, each time
    assert feed["submit"] == 1999 * 3 * US and feed["other_cpu"] == 1999 * 20 * US
    assert "the GPU idles 92% of the loop (measured)" in words(d)


def test_hidden_sync_cost_measured(tmp_path):
    """Per 3 ms step: a 1 ms kernel, a copy to the host that waits for it
    (a hidden sync) and returns 50 us after it ends, then 1.95 ms of CPU
    with nothing queued. The idle from the kernel's end to the copy's
    return is the wait's return (counted busy, as in the model); the rest,
    to the next launch, is the hidden sync's cost."""
    d, w = new(tmp_path, "hidden")
    for i in range(20):
        t = T0 + i * 3 * MS
        launch(w, 100, t, 0)
        w.gpu(100, 0, t, t + 1 * MS, i + 1)
        w.event(100, "CU_MEMCPY", t + 20 * US, 1030 * US, sym="cuMemcpyDtoH_v2", dir=2,
                sync=2, stream=0, bytes=4)
    w.close()
    v = verdict(d)
    g = v["gpu"]
    assert g["idle_basis"] == "measured"
    assert g["measured"]["drain_wait_ns"] == 19 * 50 * US
    assert g["streams_idle_by_feed"]["hidden_sync"] == 19 * 1950 * US
    assert v["limit"] == "synchronization" and v["basis"] == "gpu_idle"
    [f] = [f for f in json.loads(run(d, ["--json"]))["findings"] if f["kind"] == "hidden_sync"]
    # the device's measured idle charged to the one site: all of it, never
    # above its stream's idle after it
    assert f["gpu_idle_ns"] == 19 * 1950 * US
    assert "(measured)" in words(d)


def test_locks_first_whatever_the_gpu(tmp_path):
    """Four threads on their own default streams take turns on a lock (3
    ms waits), each launching a 1 ms kernel and syncing on it: the locks
    rule comes first; the GPU line is measured."""
    d, w = new(tmp_path, "locks", cmd=("./lock_bound",))
    n = {}
    for i in range(40):
        tid = 500 + i % 4
        t = T0 + i * MS
        if i >= 4:
            w.event(tid, "MUTEX_LOCK", t - 3 * MS, 3 * MS, lock=0xabc)
        launch(w, tid, t, 2)
        n[tid] = n.get(tid, 0) + 1
        w.gpu(tid, 2, t, t + 900 * US, n[tid])
        w.event(tid, "CU_STREAM_SYNC", t + 10 * US, 990 * US, sym="cuStreamSynchronize",
                sync=1, stream=2)
    w.close()
    v = verdict(d)
    assert v["limit"] == "locks" and v["gpu"]["idle_basis"] == "measured"
    assert "(measured; samples cover" in words(d)


def test_three_streams_starved(tmp_path):
    """Three threads, each with its own stream, each reading its batch from
    a pipe 8 ms of every 10, then a 2 ms kernel, never synced: staggered
    by 2 ms, so the device (any stream busy) idles 4 ms of every 10 while
    each stream idles 8; data delivery, measured."""
    d, w = new(tmp_path, "three")
    for k, tid in enumerate((100, 101, 102)):
        if tid != 100:
            w.thread(tid, "feeder%d" % k)
        for i in range(10):
            t = T0 + k * 2 * MS + i * 10 * MS
            poll(w, tid, t, 8 * MS)
            launch(w, tid, t + 8 * MS, 0x10 + k)
            w.gpu(tid, 0x10 + k, t + 8 * MS, t + 10 * MS, i + 1)
    poll(w, 100, T0 + 110 * MS, 1 * MS)
    w.close()
    v = verdict(d)
    g = v["gpu"]
    assert g["idle_basis"] == "measured"
    assert g["streams_idle_by_feed"]["data_wait"] == 3 * 9 * 8 * MS
    assert v["limit"] == "data delivery"
    # the device: busy 6 of each 10 ms from the first kernel to the last
    # one's end (T0 + 8 ms to T0 + 114 ms), idle in the last 4 of each
    assert g["measured"]["busy_ns"] == 10 * 6 * MS
    assert "(measured)" in words(d)


def test_per_thread_default_streams(tmp_path):
    """Two threads, each on its own per-thread default stream (stream 2,
    keyed by the thread), each starved for data as above, 5 ms apart: each
    thread's samples make its own stream's spans."""
    d, w = new(tmp_path, "ptds")
    w.thread(101, "feeder2")
    for tid, off in ((100, 0), (101, 5 * MS)):
        for i in range(10):
            t = T0 + off + i * 10 * MS
            poll(w, tid, t, 8 * MS)
            launch(w, tid, t + 8 * MS, 2)
            w.gpu(tid, 2, t + 8 * MS, t + 10 * MS, i + 1)
    poll(w, 100, T0 + 110 * MS, 1 * MS)
    w.close()
    v = verdict(d)
    g = v["gpu"]
    assert g["idle_basis"] == "measured"
    # two streams of 10 x 2 ms each, never overlapping: 40 ms busy
    assert g["measured"]["busy_ns"] == 40 * MS
    assert g["streams_idle_by_feed"]["data_wait"] == 2 * 9 * 8 * MS
    assert v["limit"] == "data delivery"


def test_sync_after_the_stream_finished_is_no_latency(tmp_path):
    """Per 10 ms step: a pipe read for the batch (8 ms), then a sync on the
    previous kernel (long finished: it returns at once), then the launch
    of a 2 ms kernel. Only a wait that began before the stream finished
    makes the idle up to its return its latency: here none does, and the
    stream idles 8 ms of every 10, waiting for data."""
    d, w = new(tmp_path, "latesync")
    for i in range(10):
        t = T0 + i * 10 * MS
        w.event(100, "PIPE_READ", t, 8 * MS, fd=5, req=1024, ret=1024)
        w.event(100, "CU_STREAM_SYNC", t + 8 * MS, 10 * US, sym="cuStreamSynchronize", sync=1,
                stream=0x10)
        launch(w, 100, t + 8020 * US, 0x10)
        w.gpu(100, 0x10, t + 8020 * US, t + 10020 * US, i + 1)
    w.event(100, "CU_STREAM_SYNC", T0 + 100 * MS, 30 * US, sym="cuStreamSynchronize", sync=1,
            stream=0x10)
    w.close()
    v = verdict(d)
    g = v["gpu"]
    assert g["idle_basis"] == "measured" and g["measured"]["drain_wait_ns"] == 0
    assert g["measured"]["busy_ns"] == 20 * MS
    assert g["streams_idle_by_feed"]["data_wait"] == 9 * 7980 * US
    assert v["limit"] == "data delivery"


def test_timeline_modelled_beside_measured(tmp_path):
    """convert draws each stream's modelled busy time on a track of its own
    beside the measured one: the data-starved loop synced after steps 4
    and 9 is busy in the model from a launch to the sync (two slices),
    while its samples show ten 2 ms kernels (nine of them bounded exactly:
    drawn as kernels on the measured track, docs/ANALYSES.md)."""
    import os
    import sys
    d, w = new(tmp_path, "timeline")
    for i in range(10):
        t = T0 + i * 10 * MS
        poll(w, 100, t, 8 * MS)
        launch(w, 100, t + 8 * MS, 0x10)
        w.gpu(100, 0x10, t + 8 * MS, t + 10 * MS, i + 1)
        if i in (4, 9):
            w.event(100, "CU_STREAM_SYNC", t + 8020 * US, 1990 * US, sym="cuStreamSynchronize",
                    sync=1, stream=0x10)
    w.close()
    out = str(tmp_path / "t.pftrace")
    subprocess.run([TOOL, "convert", str(d), "-o", out], check=True, capture_output=True)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    c = subprocess.run([sys.executable, os.path.join(root, "tests", "check_pftrace.py"), out,
                        "--json", "--count-name", "busy (modelled)",
                        "--count-name", "busy (measured)"], capture_output=True, text=True)
    assert c.returncode == 0, c.stdout + c.stderr
    j = json.loads(c.stdout)
    assert j["names"] == {"busy (modelled)": 2, "busy (measured)": 10}
    tracks = {t["name"]: t["slices"] for t in j["per_track"]}
    assert tracks["GPU stream 0x10 (modelled)"] == 2
    # the ten busy spans, and a kernel of its own for each sample after
    # the first (one submission since the sample before: an exact bound)
    assert tracks["GPU stream 0x10 (measured)"] == 10 + 9


def test_wait_on_earlier_work_returning_late_is_no_idle(tmp_path):
    """A loop two steps ahead of the GPU: per 2 ms step, a 2 ms kernel
    queued behind the last, then an event sync on the step two back (an
    event the model does not know: it drains nothing) that returns 300 us
    after the GPU ran dry, then the next launch. The GPU idles only while
    the thread is still inside that wait (the driver waking it): its
    return's latency, counted busy: GPU-bound, not 'work submission'."""
    d, w = new(tmp_path, "ahead")
    done = T0
    for i in range(20):
        t = T0 + i * 2300 * US
        launch(w, 100, t, 0x10)
        start = max(t, done)
        done = start + 2 * MS
        w.gpu(100, 0x10, t, done, i + 1)
        w.event(100, "CU_EVENT_SYNC", t + 20 * US, done + 300 * US - t - 20 * US,
                sym="cuEventSynchronize", sync=1, stream=0, handle=0x99)
    w.close()
    v = verdict(d)
    g = v["gpu"]
    assert g["idle_basis"] == "measured"
    assert g["measured"]["idle_ns"] == g["measured"]["drain_wait_ns"] == 19 * 300 * US
    assert g["idle_ns"] == 0
    assert v["limit"] == "GPU-bound"
