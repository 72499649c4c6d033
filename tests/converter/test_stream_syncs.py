"""A stream that idles behind a sync is lost time, whatever another stream
does (docs/ANALYSES.md, "The verdict"): two feeding threads, each on its
own per-thread default stream, each syncing every step (a 4-byte
device-to-host copy right after its kernel). The device's union of busy
streams is 100% of the loop; each thread's stream idles a third of its
time behind its syncs, which kernels of different streams overlapping on a real
GPU would not hide. Synthetic (tests/ftgen.py)."""
import json
import subprocess

import ftgen
from conftest import TOOL

MS = 1_000_000
US = 1_000
STEPS = 20


def two_streams(d, busy_us=6500, offset_us=4000, hidden=True):
    """threads 100 and 101 of process 100 (python3 train.py): per 10 ms
    step, a launch on stream 2 (the thread's own), then a copy of 4 bytes
    to the host that waits for the kernel until busy_us; the rest of the
    step on the CPU. Thread 101 runs offset_us later."""
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["python3", "train.py"])
    w.thread(100, "main", main=True)
    w.thread(101, "feeder2")
    t0 = w.start + 10 * MS
    for tid, off in ((100, 0), (101, offset_us * US)):
        for i in range(STEPS):
            t = t0 + off + i * 10 * MS
            w.event(tid, "CU_LAUNCH_KERNEL", t, 10 * US, sym="cuLaunchKernel", kernel="k",
                    sync=0, stream=2)
            w.event(tid, "CU_MEMCPY", t + 20 * US, busy_us * US - 20 * US,
                    sym="cuMemcpyDtoH_v2", dir=2, sync=2 if hidden else 1, stream=2, bytes=4)
    w.close()
    return str(d)


def report(d):
    r = subprocess.run([TOOL, "report", "--json", d], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_each_stream_idle_behind_its_syncs_is_not_gpu_bound(tmp_path):
    v = report(two_streams(tmp_path))["verdict"]
    assert sorted(v["feeding_threads"]) == [100, 101]
    assert v["basis"] == "gpu_idle"
    g = v["gpu"]
    # the device: busy from the first launch to the last drain, no idle
    assert (g["busy_ns"], g["idle_ns"]) == (200500 * US, 0)
    # the streams: 200.5 + 196.5 ms, each idle 3.5 ms after each of its
    # 19 syncs followed by a launch, charged to the hidden syncs
    assert g["streams_ns"] == 397 * MS
    assert g["streams_idle_by_feed"]["hidden_sync"] == 2 * 19 * 3500 * US
    assert v["limit"] == "synchronization", v["sentence"]
    assert v["sentence"] == (
        "The GPU feed is limited by synchronization: each feeding thread's stream idles 34% "
        "of its time behind its syncs, though the device, all streams together, is busy "
        "100% of the loop (kernels of different streams overlap when they fit).")


def test_streams_busy_but_for_short_syncs_stay_gpu_bound(tmp_path):
    """the same with each stream idle 0.5 ms a step (5%): the GPU is the limit"""
    v = report(two_streams(tmp_path, busy_us=9500))["verdict"]
    assert v["gpu"]["streams_idle_by_feed"]["hidden_sync"] == 2 * 19 * 500 * US
    assert v["limit"] == "GPU-bound", v["sentence"]
