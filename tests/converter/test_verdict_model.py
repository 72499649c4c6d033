"""The verdict's model (docs/ANALYSES.md, "The verdict") on synthetic traces
(tests/ftgen.py) with exact, hand-planted numbers: which process it is
about and every process's role, waits for data whatever the mechanism, the
producers and what they did, per-thread default streams, the GPU busy model
(from a submission to the wait that drained it), idle time charged to what
the feeding threads did, the window and the start-up."""
import json
import subprocess

import ftgen
from conftest import TOOL

MS = 1_000_000
US = 1_000
START = 1_000_000_000_000           # ftgen's default start
T0 = START + 10 * MS                 # the loop starts here
PY = ["python3", "/srv/jobs/experiment-2024/train.py", "--epochs", "3"]


def report(d):
    r = subprocess.run([TOOL, "report", "--json", d], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def text(d):
    r = subprocess.run([TOOL, "report", d], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert all(len(l) <= 80 for l in r.stdout.splitlines()), r.stdout
    return r.stdout


def new(d, pid, cmd=PY, ppid=1):
    w = ftgen.TraceFile(str(d / ("host.%d.ft" % pid)), pid, cmd, ppid=ppid)
    w.thread(pid, "main", main=True)
    return w


def launch(w, tid, t, stream=0, dur=10 * US):
    w.event(tid, "CU_LAUNCH_KERNEL", t, dur, sym="cuLaunchKernel", kernel="k", sync=0,
            stream=stream)


def sync(w, tid, t, dur, stream=0, kind="CU_STREAM_SYNC", hidden=False):
    if kind.startswith("CU_MEMCPY"):
        w.event(tid, kind, t, dur, sym="cuMemcpyDtoH_v2", dir=2, sync=2 if hidden else 1,
                stream=stream)
    else:
        w.event(tid, kind, t, dur, sym="x", sync=2 if hidden else 1, stream=stream)


def poll(w, tid, t, dur, ret=1):
    w.event(tid, "POLL", t, dur, ret=ret, nfds=1, timeout=5000, kinds=2, fd0=5, fd1=-1,
            fd2=-1, fd3=-1, fd4=-1, fd5=-1, fd6=-1, fd7=-1)


def fed_by_poll(tmp_path, steps=10, worker_io=True, cpu_samples=False):
    """Main process 100: start-up (a 4 ms file read), then per 10 ms step:
    poll() on a pipe 8 ms, read it 10 us, launch at +8.1 ms, sync until
    +10 ms. Workers 101, 102 (forked: same command line) read files 3 ms
    of every 4; 103 is `sh` (a helper)."""
    d = tmp_path / "poll"
    d.mkdir()
    w = new(d, 100)
    w.event(100, "READ", START + 1 * MS, 4 * MS, fd=3, req=65536, ret=65536, path="/data/x")
    for i in range(steps):
        t = T0 + i * 10 * MS
        poll(w, 100, t, 8 * MS)
        w.event(100, "PIPE_READ", t + 8 * MS, 10 * US, fd=5, req=1024, ret=1024)
        launch(w, 100, t + 8100 * US)
        sync(w, 100, t + 8200 * US, 1800 * US)
    w.close()
    for pid in (101, 102):
        x = new(d, pid, ppid=100)
        for k in range(25):
            if worker_io:
                x.event(pid, "READ", T0 + 4 * MS * k, 3 * MS, fd=7, req=4096, ret=4096,
                        path="/data/%d" % k)
            else:
                x.event(pid, "MUTEX_LOCK", T0 + 4 * MS * k, 1 * MS, lock=0x77)
        if cpu_samples and pid == 102:
            x.cpu(pid, T0, 0)
            x.cpu(pid, T0 + 200 * MS, 40 * MS)
        x.close()
    h = new(d, 103, ["/bin/sh", "-c", "true"], ppid=100)
    h.event(103, "READ", START + 2 * MS, 1 * MS, fd=3, req=100, ret=100, path="/etc/x")
    h.close()
    return str(d)


def test_producer_reads_by_time_not_by_count(tmp_path):
    """A third worker reads 20 x 4 KiB of /a/ (0.1 ms each) and 2 x 1 MiB
    of /b/ (5 ms each) in the window: the size and the directory that took
    most time are 1 MiB and /b/, though 4 KiB reads are ten times as many."""
    d = fed_by_poll(tmp_path, worker_io=False)
    x = new(tmp_path / "poll", 104, ppid=100)
    for k in range(20):
        x.event(104, "READ", T0 + 10 * MS + k * 200 * US, 100 * US, fd=7, req=4096, ret=4096,
                path="/a/%d" % k)
    for k in range(2):
        x.event(104, "READ", T0 + 30 * MS + k * 10 * MS, 5 * MS, fd=8, req=1 << 20,
                ret=1 << 20, path="/b/big%d" % k)
    x.close()
    v = report(d)["verdict"]
    assert v["producer_reads"] == {"calls": 22, "io_ns": 12 * MS, "req_bytes": 1 << 20,
                                   "req_calls": 2, "req_ns": 10 * MS, "dir": "/b/",
                                   "dir_ns": 10 * MS}
    # the producers are mostly on the CPU (the lock-only workers' untraced
    # time): the sentence is about preprocessing, not about these reads
    assert v["data_cause"] == "preprocessing" and "mostly in" not in v["detail"]


def test_main_process_roles_and_names(tmp_path):
    rep = report(fed_by_poll(tmp_path))
    v = rep["verdict"]
    assert v["pid"] == 100 and v["role"] == "main"
    assert v["process"] == ("main process 100 (python3 train.py --epochs 3), "
                            "2 DataLoader workers (101, 102)")
    assert {p["pid"]: p["role"] for p in rep["processes"]} == {
        100: "main", 101: "worker", 102: "worker", 103: "helper"}
    out = text(fed_by_poll_dir(tmp_path))
    first = out.split("Verdict: ", 1)[1].splitlines()
    assert first[:2] == ["main process 100 (python3 train.py --epochs 3), 2 DataLoader",
                         "         workers (101, 102)"]     # wrapped under the process
    assert "      101 worker python3 train.py --epochs 3" in out
    assert "      103 helper sh -c true" in out


def fed_by_poll_dir(tmp_path):
    return str(tmp_path / "poll")


def test_poll_on_a_pipe_is_waiting_for_data(tmp_path):
    """The GPU idles 8.1 ms after each of 9 syncs; the main thread polled
    8 ms and read the pipe 10 us of each: data delivery, by GPU idle time."""
    v = report(fed_by_poll(tmp_path))["verdict"]
    assert v["limit"] == "data delivery" and v["basis"] == "gpu_idle"
    w = v["window"]
    assert w == {"start_ns": T0 + 8100 * US, "end_ns": T0 + 100 * MS, "from": "first launch",
                 "warmup_steps": 0, "warmup_ns": 0,
                 "worker_file_reads": 0, "launches_before": 0}
    assert v["gpu"]["busy_ns"] == 10 * 1900 * US
    assert v["gpu"]["idle_ns"] == 91900 * US - 19 * MS == 72900 * US
    feed = v["gpu"]["idle_by_feed"]
    assert feed["data_wait"] == 9 * 8010 * US and feed["other_cpu"] == 9 * 90 * US
    assert sum(feed.values()) == v["gpu"]["idle_ns"]
    assert v["startup_ns"] == T0 + 8100 * US - START
    assert v["startup_time_ns"]["io"] == 4 * MS


def test_workers_in_file_io(tmp_path):
    """Each worker's thread, within the window (from +8.1 ms to its last
    read's end at +99 ms): 68.9 ms of reads, 22 ms untraced (CPU, no
    samples); worker 102 with CPU samples of 20%: 18.18 ms of CPU."""
    v = report(fed_by_poll(tmp_path, cpu_samples=True))["verdict"]
    assert v["data_cause"] == "I/O"
    assert "2 workers spend 76% of their time in file I/O" in v["detail"]
    # their reads in the window: 23 of 4 KiB in /data/ (the first one cut
    # by the window's start: 2.9 ms, then 22 of 3 ms), the first worker's
    assert v["producer_reads"] == {"calls": 23, "io_ns": 68900 * US, "req_bytes": 4096,
                                   "req_calls": 23, "req_ns": 68900 * US, "dir": "/data/",
                                   "dir_ns": 68900 * US}
    assert "mostly in 23 reads of 4,096 bytes in /data/:" in " ".join(v["detail"].split())
    prod = {p["pid"]: p for p in v["producers"]}
    assert set(prod) == {101, 102}
    for p in prod.values():
        assert (p["tid"], p["role"], p["wall_ns"], p["io_ns"], p["lock_ns"]) == (
            p["pid"], "worker", 90900 * US, 68900 * US, 0)
    assert prod[101]["cpu_ns"] == 22 * MS and prod[101]["idle_ns"] == 0
    assert prod[101]["cpu_from"] == "untraced time"
    assert prod[102]["cpu_from"] == "samples"
    assert abs(prod[102]["cpu_ns"] - 18180 * US) <= 1
    assert prod[102]["cpu_ns"] + prod[102]["idle_ns"] == 22 * MS


def test_workers_preprocessing(tmp_path):
    """Workers that wait on a lock 1 ms of every 4 and are otherwise
    untraced: on the CPU, so preprocessing."""
    v = report(fed_by_poll(tmp_path, worker_io=False))["verdict"]
    assert v["limit"] == "data delivery" and v["data_cause"] == "preprocessing"
    for p in v["producers"]:
        assert p["io_ns"] == 0 and p["lock_ns"] > 0 and p["cpu_ns"] > 2 * p["lock_ns"]
    assert "are on the CPU" in v["detail"] and "preprocessing" in v["detail"]


def test_cpu_only_run_fed_by_workers(tmp_path):
    """No GPU: the main process receives batches by poll (8 ms of every
    10); the window runs from the first batch received to the last."""
    d = tmp_path / "cpu"
    d.mkdir()
    w = new(d, 100)
    for i in range(10):
        poll(w, 100, T0 + i * 10 * MS, 8 * MS)
    poll(w, 100, T0 + 100 * MS, 1 * MS, ret=0)          # a timeout: no batch
    w.close()
    x = new(d, 101, ppid=100)
    x.event(101, "MUTEX_LOCK", T0, 1 * MS, lock=0x77)
    x.event(101, "MUTEX_LOCK", T0 + 100 * MS, 1 * MS, lock=0x77)
    x.close()
    rep = report(str(d))
    v = rep["verdict"]
    assert v["pid"] == 100 and v["gpu"] is None and v["limit"] == "data delivery"
    assert v["window"] == {"start_ns": T0 + 8 * MS, "end_ns": T0 + 98 * MS,
                           "from": "first batch", "warmup_steps": 0, "warmup_ns": 0,
                           "worker_file_reads": 0, "launches_before": 0}
    assert v["feeding_threads"] == [100]
    # in the window: the 9 waits after the first one
    assert v["time_ns"]["data_wait"] == 9 * 8 * MS
    assert v["wall_ns"] == 90 * MS
    assert [p["pid"] for p in v["producers"]] == [101] and v["data_cause"] == "preprocessing"


def test_nothing_to_feed(tmp_path):
    """File I/O and CPU, no GPU, no batches: no feed is invented."""
    d = tmp_path / "none"
    d.mkdir()
    w = new(d, 100, ["/bin/cat", "/data/big"])
    for i in range(100):
        w.event(100, "READ", T0 + i * MS, 800 * US, fd=3, req=4096, ret=4096, path="/data/big")
    w.close()
    v = report(str(d))["verdict"]
    assert v["limit"] == "none" and v["gpu"] is None and v["producers"] == []
    assert v["data_cause"] is None and v["window"]["from"] == "whole run"
    assert v["sentence"].startswith("No GPU work and no data feed was recorded")
    assert "Verdict: main process 100 (cat big)\n" in text(str(d))


def cond_feed(tmp_path, kind):
    """A launching thread 200 takes batches from a loader thread 201 (which
    has CPU samples: 90% busy); it waits 8 ms of every 10 in `kind`."""
    d = tmp_path / kind
    d.mkdir()
    w = new(d, 100, ["./loaders"])
    w.thread(200, "launcher")
    w.thread(201, "loader")
    for i in range(10):
        t = T0 + i * 10 * MS
        if kind == "COND_WAIT":
            w.event(200, kind, t, 8 * MS, cond=0x500, mutex_low32=0x600, ret=0)
        else:
            w.event(200, kind, t, 8 * MS, sem=0x500, ret=0, err=0)
        launch(w, 200, t + 8100 * US)
        sync(w, 200, t + 8200 * US, 1800 * US)
    w.cpu(201, START, 0)
    w.cpu(201, T0 + 200 * MS, (T0 + 200 * MS - START) * 9 // 10)
    w.close()
    return str(d)


def test_condition_and_semaphore_waits_are_data_waits(tmp_path):
    for kind in ("COND_WAIT", "SEM_WAIT"):
        v = report(cond_feed(tmp_path, kind))["verdict"]
        assert v["limit"] == "data delivery" and v["feeding_threads"] == [200], v
        assert v["gpu"]["idle_by_feed"]["data_wait"] == 9 * 8 * MS
        assert v["data_cause"] == "preprocessing"
        (p,) = v["producers"]
        assert (p["pid"], p["tid"], p["role"], p["cpu_from"]) == (100, 201, "loader thread",
                                                                   "samples")
        assert p["wall_ns"] == 91900 * US and abs(p["cpu_ns"] - 82710 * US) <= 1
        assert "1 loader thread" in v["process"]


def test_per_thread_default_streams(tmp_path):
    """Two threads on stream 2 (their per-thread default streams): thread
    300 launches at +0 and syncs at +50 ms; thread 301 launches and syncs
    every 10 ms with 5 ms of idle after each. A sync of 301 does not drain
    300's stream: the device is busy the whole 50 ms."""
    d = tmp_path / "ptds"
    d.mkdir()
    w = new(d, 100, ["./ptds"])
    launch(w, 300, T0, stream=2)
    sync(w, 300, T0 + 1 * MS, 49 * MS, stream=2)
    for i in range(5):
        t = T0 + i * 10 * MS
        launch(w, 301, t, stream=2)
        sync(w, 301, t + 1 * MS, 4 * MS, stream=2)
        w.event(301, "MUTEX_LOCK", t + 5 * MS, 5 * MS, lock=0x99)
    w.close()
    v = report(str(d))["verdict"]
    assert v["window"]["start_ns"] == T0 and v["window"]["end_ns"] == T0 + 50 * MS
    assert v["gpu"]["busy_ns"] == 50 * MS and v["gpu"]["idle_ns"] == 0
    # 301's stream idles 5 ms four times (in locks): 20 ms of its 50
    assert v["gpu"]["idle_by_feed"] == {k: 0 for k in v["gpu"]["idle_by_feed"]}


def test_three_streams_idle_never_above_the_window(tmp_path):
    """Three streams, each busy 2 ms of every 10 (staggered by 3 ms): the
    device is busy 6 ms of every 10; its idle is the rest, not 3 x 8 ms."""
    d = tmp_path / "s3"
    d.mkdir()
    w = new(d, 100, ["./streams3"])
    for s in range(3):
        tid = 400 + s
        for i in range(10):
            t = T0 + i * 10 * MS + s * 3 * MS
            launch(w, tid, t, stream=0x1000 + s)
            sync(w, tid, t + 10 * US, 1990 * US, stream=0x1000 + s)
            poll(w, tid, t + 2 * MS, 7 * MS)
    w.close()
    v = report(str(d))["verdict"]
    win = v["window"]["end_ns"] - v["window"]["start_ns"]
    assert win == 9 * 10 * MS + 6 * MS + 2 * MS
    assert v["gpu"]["busy_ns"] == 30 * 2 * MS
    assert v["gpu"]["idle_ns"] == win - 60 * MS
    assert v["limit"] == "data delivery"


def test_hidden_sync_costs_the_idle_after_it(tmp_path):
    """Per 4 ms step: launch, a hidden sync (pageable copy) 1.5 ms, then
    2.4 ms of untraced CPU with nothing queued: the GPU idles 2.4 ms after
    each hidden sync: synchronization. Its twin waits in a needed sync of
    3.8 ms and relaunches within 0.1 ms: GPU-bound."""
    for name, (wait, cpu), limit in (("hidden", (1500, 2400), "synchronization"),
                                     ("needed", (3800, 100), "GPU-bound")):
        d = tmp_path / name
        d.mkdir()
        w = new(d, 100, ["./syncs"])
        for i in range(20):
            t = T0 + i * 4 * MS
            launch(w, 100, t, dur=100 * US)
            sync(w, 100, t + 100 * US, wait * US, kind="CU_MEMCPY_DTOH",
                 hidden=name == "hidden")
        w.close()
        v = report(str(d))["verdict"]
        assert v["limit"] == limit, v
        idle = 19 * cpu * US
        assert v["gpu"]["idle_ns"] == idle
        key = "hidden_sync" if name == "hidden" else "other_cpu"
        assert v["gpu"]["idle_by_feed"][key] == idle


def test_query_that_said_done_ends_busy_time(tmp_path):
    """cuStreamQuery returning 0 (done) drains the stream like a sync; one
    returning 600 (not ready) does not."""
    d = tmp_path / "q"
    d.mkdir()
    w = new(d, 100, ["./q"])
    for i in range(10):
        t = T0 + i * 10 * MS
        launch(w, 100, t, stream=0x10)
        w.event(100, "CU_STREAM_QUERY", t + 1 * MS, 10 * US, ret=600, sym="cuStreamQuery",
                sync=3, stream=0x10)
        w.event(100, "CU_STREAM_QUERY", t + 2 * MS, 10 * US, ret=0, sym="cuStreamQuery",
                sync=3, stream=0x10)
        sync(w, 100, t + 9 * MS, 1 * MS, stream=0x10)  # a sync of an empty stream
    w.close()
    v = report(str(d))["verdict"]
    assert v["gpu"]["busy_ns"] == 10 * 2010 * US


def test_steps_make_the_window_and_startup(tmp_path):
    """Launches during a 100 ms start-up (warm-up) and 20 steps of a 5 ms
    sync each after: the window is the steps, the start-up is its own."""
    d = tmp_path / "steps"
    d.mkdir()
    w = new(d, 100, ["./startup"])
    w.event(100, "READ", START + 1 * MS, 30 * MS, fd=3, req=1 << 20, ret=1 << 20, path="/m")
    launch(w, 100, START + 40 * MS)
    sync(w, 100, START + 41 * MS, 1 * MS)
    s0 = START + 100 * MS
    for i in range(20):
        t = s0 + i * 6 * MS
        w.event(100, "RANGE_PUSH", t, 0, name="step", level=0, api=2)
        launch(w, 100, t + 10 * US, dur=90 * US)
        sync(w, 100, t + 100 * US, 5900 * US)
        w.event(100, "RANGE_POP", t + 6 * MS, 0, level=0, api=2)
    w.close()
    v = report(str(d))["verdict"]
    assert v["window"] == {"start_ns": s0, "end_ns": s0 + 120 * MS, "from": "steps",
                           "warmup_steps": 0, "warmup_ns": 0,
                           "worker_file_reads": 0, "launches_before": 0}
    assert v["startup_ns"] == 100 * MS and v["startup_time_ns"]["io"] == 30 * MS
    assert v["limit"] == "GPU-bound" and v["gpu"]["idle_ns"] == 20 * 10 * US
    out = text(str(d))
    assert "start-up 100.0 ms before the first step: file I/O 30.0 ms" in out


def test_warmup_step_is_left_out_of_the_window(tmp_path):
    """Step 0 spends 40 ms on the CPU before its sync (module loads and
    autotuning, as on a real H100 PyTorch run: 443 ms then 13 ms steps);
    steps 1-19 are GPU-bound (a 5.9 ms sync each). Step 0 is over 3x the
    median: warm-up, left out, so the loop's verdict is GPU-bound; with it
    in, 40 ms of the GPU's idle time would be "other CPU"."""
    d = tmp_path / "warm"
    d.mkdir()
    w = new(d, 100, ["./warm"])
    s0 = START + 10 * MS
    t = s0
    for i in range(20):
        cpu = 40 * MS if i == 0 else 0
        w.event(100, "RANGE_PUSH", t, 0, name="step", level=0, api=2)
        launch(w, 100, t + cpu + 10 * US, dur=90 * US)
        sync(w, 100, t + cpu + 100 * US, 5900 * US)
        t += cpu + 6 * MS
        w.event(100, "RANGE_POP", t, 0, level=0, api=2)
    w.close()
    v = report(str(d))["verdict"]
    s1 = s0 + 46 * MS
    assert v["window"] == {"start_ns": s1, "end_ns": s1 + 19 * 6 * MS, "from": "steps",
                           "warmup_steps": 1, "warmup_ns": 46 * MS,
                           "worker_file_reads": 0, "launches_before": 0}
    assert v["limit"] == "GPU-bound" and v["gpu"]["idle_ns"] == 19 * 10 * US
    assert v["startup_ns"] == 56 * MS
    out = text(str(d))
    assert "start-up 56.0 ms before the window, with 1 warm-up step (46.0 ms, each over 3x " \
           "the median step)" in " ".join(out.split())


def test_feeders_taking_turns_on_a_lock(tmp_path):
    """Four launching threads on their own default streams wait for one
    lock in turn; the holder launches and syncs 1 ms (the GPU looks busy
    all along): the lock is the limit, not the GPU."""
    d = tmp_path / "lk"
    d.mkdir()
    w = new(d, 100, ["./lock_bound"])
    for i in range(40):
        tid = 500 + i % 4
        t = T0 + i * MS
        if i >= 4:
            w.event(tid, "MUTEX_LOCK", t - 3 * MS, 3 * MS, lock=0xabc)
        launch(w, tid, t, stream=2)
        sync(w, tid, t + 10 * US, 990 * US, stream=2)
    w.close()
    v = report(str(d))["verdict"]
    assert v["limit"] == "locks" and v["lock_wait_union_ns"] == 38 * MS


def test_idle_pool_threads_are_not_the_feed(tmp_path):
    """CPU-only, Python-like: the main thread receives 20 batches by poll
    (8 ms of every 10); two pool threads wait in pthread_cond_timedwait the
    whole time and are woken 3 times each. The feeding thread is the main
    thread alone, and the pool's waits are not summed."""
    d = tmp_path / "pool"
    d.mkdir()
    w = new(d, 100)
    for i in range(20):
        poll(w, 100, T0 + i * 10 * MS, 8 * MS)
    for tid in (110, 111):
        w.thread(tid, "pool")
        for k in range(3):
            w.event(tid, "COND_TIMEDWAIT", T0 + k * 70 * MS, 70 * MS, cond=0x900,
                    mutex_low32=0x901, ret=0)
    w.close()
    v = report(str(d))["verdict"]
    assert v["feeding_threads"] == [100] and v["limit"] == "data delivery"
    assert v["window"]["start_ns"] == T0 + 8 * MS and v["window"]["end_ns"] == T0 + 198 * MS
    assert v["time_ns"]["data_wait"] == 19 * 8 * MS and v["wall_ns"] == 190 * MS


def test_many_drains_exact_busy_time(tmp_path):
    """1500 steps of 1 ms busy (launch to sync end) and 1 ms idle: the busy
    intervals are merged and dropped as the trace goes (bounded memory) and
    still sum exactly; with a second stream busy from the first step to the
    end, the device is busy the whole window."""
    for name, long_stream in (("one", False), ("two", True)):
        d = tmp_path / name
        d.mkdir()
        w = new(d, 100, ["./many"])
        for i in range(1500):
            t = T0 + i * 2 * MS
            launch(w, 100, t, stream=0x10)
            sync(w, 100, t + 10 * US, 990 * US, stream=0x10)
        if long_stream:
            w.thread(101, "long")
            launch(w, 101, T0, stream=0x20)
            sync(w, 101, T0 + 10 * US, 2998 * MS - 10 * US, stream=0x20)
        w.close()
        v = report(str(d))["verdict"]
        win = v["window"]["end_ns"] - v["window"]["start_ns"]
        assert win == 2999 * MS
        if long_stream:
            assert v["gpu"]["busy_ns"] == win and v["gpu"]["idle_ns"] == 0
        else:
            assert v["gpu"]["busy_ns"] == 1500 * MS and v["gpu"]["idle_ns"] == 1499 * MS


def test_timeline_cpu_counter_per_thread(tmp_path):
    """CPU samples become a "CPU %" counter on the thread's track: 25% then
    100% (capped: a sample can read a little over its interval)."""
    from test_convert import convert, load
    d = tmp_path / "cpu"
    d.mkdir()
    w = new(d, 100, ["./cpu"])
    w.event(100, "READ", T0, 1 * MS, fd=3, req=10, ret=10, path="/x")
    w.cpu(100, T0, 0)
    w.cpu(100, T0 + 40 * MS, 10 * MS)
    w.cpu(100, T0 + 50 * MS, 20 * MS + 1000)
    w.close()
    out, _ = convert(str(d))
    rows = load(out, "select c.ts as ts, c.value as v from counter c join counter_track t "
                "on c.track_id = t.id where t.name = 'CPU %' order by c.ts")
    assert [r["v"] for r in rows] == [25, 100]
    assert rows[1]["ts"] - rows[0]["ts"] == 40 * MS


def test_spawned_workers_and_resource_tracker(tmp_path):
    """multiprocessing's spawn start: workers run `spawn_main`, the resource
    tracker is a helper; a worker's own child (sh) is a helper too."""
    d = tmp_path / "spawn"
    d.mkdir()
    w = new(d, 100, ["/usr/bin/python3", "train.py"])
    for i in range(5):
        poll(w, 100, T0 + i * 10 * MS, 8 * MS)
    w.close()
    spawn = ["/usr/bin/python3", "-c", "from multiprocessing.spawn import spawn_main; "
             "spawn_main(tracker_fd=5, pipe_handle=7)", "--multiprocessing-fork"]
    for pid, cmd, ppid in ((101, spawn, 100), (102, spawn, 100),
                           (103, ["/usr/bin/python3", "-c", "from multiprocessing."
                                  "resource_tracker import main;main(4)"], 100),
                           (104, ["/bin/sh", "-c", "true"], 101)):
        x = new(d, pid, cmd, ppid=ppid)
        x.event(pid, "READ", T0 + MS, 1 * MS, fd=3, req=10, ret=10, path="/x")
        x.close()
    rep = report(str(d))
    assert {p["pid"]: p["role"] for p in rep["processes"]} == {
        100: "main", 101: "worker", 102: "worker", 103: "helper", 104: "helper"}
    assert rep["verdict"]["process"] == ("main process 100 (python3 train.py), "
                                         "2 DataLoader workers (101, 102)")


def test_legacy_stream_sync_drains_every_stream(tmp_path):
    """Thread 600 launches on stream 0x10 at +0 and never syncs it; thread
    601 syncs the legacy default stream (0) from +1 ms to +3 ms: 0x10's work
    is complete by then, so the device is busy 3 ms, then idle until 600's
    next launch at +10 ms (the GPU's work then ends with that launch)."""
    d = tmp_path / "legacy"
    d.mkdir()
    w = new(d, 100, ["./legacy"])
    launch(w, 600, T0, stream=0x10)
    launch(w, 601, T0 + 500 * US, stream=0)
    sync(w, 601, T0 + 1 * MS, 2 * MS, stream=0)
    launch(w, 600, T0 + 10 * MS, stream=0x10)
    w.close()
    v = report(str(d))["verdict"]
    assert v["window"]["start_ns"] == T0 and v["window"]["end_ns"] == T0 + 10 * MS + 10 * US
    assert v["gpu"]["busy_ns"] == 3 * MS + 10 * US and v["gpu"]["idle_ns"] == 7 * MS


def test_busiest_producer_named_beside_idle_workers(tmp_path):
    """The main thread waits for batches (poll) 80% of each 10 ms step; its
    workers 101 and 102 are on the CPU 10% of the time (samples) and
    otherwise idle; a loader thread 104 of the main process (a pin-memory
    thread, as on a real H100 run) is on the CPU 60%. The producers are
    named by kind, and the loader thread, far busier than the set, by tid
    with what it does."""
    d = tmp_path / "pin"
    d.mkdir()
    w = new(d, 100)
    for i in range(10):
        t = T0 + i * 10 * MS
        poll(w, 100, t, 8 * MS)
        w.event(100, "PIPE_READ", t + 8 * MS, 10 * US, fd=5, req=1024, ret=1024)
        launch(w, 100, t + 8100 * US)
        sync(w, 100, t + 8200 * US, 1800 * US)
    w.thread(104, "pt_pin_memory")
    w.cpu(104, T0, 0)
    w.cpu(104, T0 + 100 * MS, 60 * MS)
    w.close()
    for pid in (101, 102):
        x = new(d, pid, ppid=100)
        for k in range(20):
            x.event(pid, "PIPE_READ", T0 + 5 * MS * k, 4 * MS, fd=6, req=8, ret=8)
        x.cpu(pid, T0, 0)
        x.cpu(pid, T0 + 100 * MS, 10 * MS)
        x.close()
    v = report(str(d))["verdict"]
    assert v["limit"] == "data delivery"
    assert {(p["pid"], p["tid"], p["role"]) for p in v["producers"]} == {
        (101, 101, "worker"), (102, 102, "worker"), (100, 104, "loader thread")}
    assert "The 2 workers and 1 loader thread " in v["detail"]
    assert v["detail"].endswith(" The busiest, loader thread 104 of the main process, is on "
                                "the CPU 60% of the time; more workers do not speed it up."), \
        v["detail"]


def test_workers_of_an_execd_main_process(tmp_path):
    """`timeout 300 python3 train.py`: pid 101 is first `timeout` (exec'd
    from its fork of 100), then python3, whose DataLoader workers 102 and
    103 have ppid 101. They are the python3 image's workers, not the
    replaced image's helpers; the tree names the image it replaced."""
    d = tmp_path / "exec"
    d.mkdir()
    wr = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["timeout", "300", "python3", "train.py"],
                         start_ns=START)
    wr.thread(100, "timeout", main=True)
    wr.event(100, "READ", START + 100 * US, 10 * US, fd=3, req=100, ret=100, path="/etc/x")
    wr.close()
    pre = ftgen.TraceFile(str(d / "host.101.ft"), 101, ["timeout", "300", "python3", "train.py"],
                          start_ns=START + 1 * MS, ppid=100)
    pre.thread(101, "timeout", main=True)
    pre.event(101, "READ", START + 1100 * US, 10 * US, fd=3, req=100, ret=100, path="/etc/y")
    pre.close()
    w = ftgen.TraceFile(str(d / "host.101.1.ft"), 101, PY, start_ns=START + 2 * MS, ppid=100)
    w.thread(101, "main", main=True)
    for i in range(10):
        t = T0 + i * 10 * MS
        poll(w, 101, t, 8 * MS)
        w.event(101, "PIPE_READ", t + 8 * MS, 10 * US, fd=5, req=1024, ret=1024)
        launch(w, 101, t + 8100 * US)
        sync(w, 101, t + 8200 * US, 1800 * US)
    w.close()
    for pid in (102, 103):
        x = ftgen.TraceFile(str(d / ("host.%d.ft" % pid)), pid, PY, start_ns=START + 5 * MS,
                            ppid=101)
        x.thread(pid, "main", main=True)
        for k in range(25):
            x.event(pid, "READ", T0 + 4 * MS * k, 3 * MS, fd=7, req=4096, ret=4096,
                    path="/data/%d" % k)
        x.close()
    rep = report(str(d))
    v = rep["verdict"]
    assert v["pid"] == 101 and v["limit"] == "data delivery"
    assert v["process"] == ("main process 101 (python3 train.py --epochs 3), "
                            "2 DataLoader workers (102, 103)")
    roles = sorted((p["pid"], p["role"], p["cmdline"].split()[0]) for p in rep["processes"])
    assert roles == [(100, "helper", "timeout"), (101, "helper", "timeout"),
                     (101, "main", "python3"), (102, "worker", "python3"),
                     (103, "worker", "python3")]
    out = text(str(d))
    assert "      101 main   python3 train.py --epochs 3 (exec'd from timeout 300 )" in out
    assert "        102 worker python3 train.py --epochs 3" in out


def ring_fed(tmp_path, stale):
    """data_starved --fixed's shape: main thread 100 on its per-thread
    default stream; per batch i (every 2 ms from T0): copy, cuEventRecord
    of slot i % 3's event, launch, then sem_wait for the next batch until
    +2 ms. Loader thread 101 syncs on an event at +1.0 ms of each batch
    (ending +1.3 ms): stale, the one of batch i (recorded before that
    batch's launch: work stays queued after it), or, as the control, a
    fresh event it records itself after the launch (nothing queued
    after). The run ends with a 6 ms stream sync (the queue drains)."""
    d = tmp_path / ("stale" if stale else "fresh")
    d.mkdir()
    w = new(d, 100, ["./data_starved", "--fixed"])
    w.thread(101, "loader")
    n = 12
    for i in range(n):
        t = T0 + i * 2 * MS
        w.event(100, "CU_MEMCPY_HTOD_ASYNC", t, 20 * US, sym="cuMemcpyHtoDAsync_v2_ptsz",
                dir=1, sync=0, stream=2, bytes=1 << 19, pinned=1)
        w.event(100, "CU_EVENT_RECORD", t + 30 * US, 1 * US, sym="cuEventRecord_ptsz", sync=4,
                stream=2, handle=0xE0 + i % 3)
        launch(w, 100, t + 40 * US, stream=2, dur=3 * US)
        if not stale:
            w.event(100, "CU_EVENT_RECORD", t + 50 * US, 1 * US, sym="cuEventRecord_ptsz",
                    sync=4, stream=2, handle=0xF0 + i % 3)
        if i < n - 1:
            w.event(100, "SEM_WAIT", t + 60 * US, 1940 * US, sem=0x50, ret=0, err=0)
        w.event(101, "CU_EVENT_SYNC", t + 1 * MS, 300 * US, sym="cuEventSynchronize",
                sync=1, stream=0, handle=(0xE0 if stale else 0xF0) + i % 3)
    sync(w, 100, T0 + (n - 1) * 2 * MS + 60 * US, 6 * MS, stream=2)
    w.close()
    return str(d)


def test_stale_event_sync_is_no_drain(tmp_path):
    """A sync on an event recorded before later work on its stream leaves
    that work queued: the gaps after it are not "after a sync" (the GPU is
    not known idle), the GPU model keeps the stream busy, and with the
    verdict GPU-bound (the final sync waits 6 ms) the pauses in submitting
    are no finding (docs/ANALYSES.md). The control, a sync on the latest
    event each time, drains: the gaps after it are known idle time, and
    the verdict says so."""
    r = report(ring_fed(tmp_path, stale=True))
    gaps = [f for f in r["findings"] if f["kind"] == "launch_gap" and f["scope"] == "stream"]
    assert len(gaps) == 11 and not any(f["after_sync"] for f in gaps)
    # from each batch's launch's end to the next copy: 2 ms - 43 us
    assert {f["lost_ns"] for f in gaps} == {2 * MS - 43 * US}
    v = r["verdict"]
    assert v["limit"] == "GPU-bound" and v["gpu"]["idle_ns"] == 0
    assert not any(p["kind"] == "launch gaps" for p in r["problems"])
    out = text(str(tmp_path / "stale"))
    assert "Findings, by time the feed lost (0)\n  none\n" in out
    assert ("launch gaps in all: 11 on streams, 21.5 ms; those with work still queued on\n"
            "  the GPU are no finding, the GPU being the limit\n") in out

    r = report(ring_fed(tmp_path, stale=False))
    gaps = [f for f in r["findings"] if f["kind"] == "launch_gap" and f["scope"] == "stream"]
    # drained at +1.3 ms each time: 700 us to the next copy, under the
    # 1 ms gap threshold, so no gap; the GPU idles 11 x 700 us
    assert gaps == []
    v = r["verdict"]
    assert v["gpu"]["idle_ns"] == 11 * 700 * US
    assert v["limit"] == "data delivery"


def test_worker_reads_per_step(tmp_path):
    """10 steps ("step i" ranges, 10 ms each) of a main process fed by
    poll(); worker 101 makes 3 file reads in each step, 2 before the
    first step (prefetch: outside the window) and 1 module read in the
    window (an import: not a file read of the data); worker 102 makes 2
    file reads in each step. The main process reads only its pipe (a
    wait for data, not a read: 0.0 reads per step); the line adds
    (30 + 20) / 10 = 5.0 file reads in the workers, and the JSON the 50."""
    d = tmp_path / "steps"
    d.mkdir()
    w = new(d, 100)
    for i in range(10):
        t = T0 + i * 10 * MS
        w.event(100, "RANGE_PUSH", t, 0, name="step %d" % i, level=0, api=0)
        poll(w, 100, t + 10 * US, 8 * MS)
        w.event(100, "PIPE_READ", t + 8 * MS + 20 * US, 10 * US, fd=5, req=4, ret=4)
        w.event(100, "RANGE_POP", t + 10 * MS - 10 * US, 0, level=0, api=0)
    w.close()
    for pid, per in ((101, 3), (102, 2)):
        x = new(d, pid, ppid=100)
        if pid == 101:
            for k in range(2):
                x.event(pid, "READ", START + 2 * MS + k * MS, 100 * US, fd=7, req=4096,
                        ret=4096, path="/data/pre%d" % k)
            x.event(pid, "READ", T0 + 5 * MS, 100 * US, fd=8, req=4096, ret=4096,
                    path="/usr/lib/python3/dist-packages/torch/__init__.py")
        for i in range(10):
            for k in range(per):
                x.event(pid, "READ", T0 + i * 10 * MS + (k + 1) * 2 * MS, 300 * US, fd=7,
                        req=4096, ret=4096, path="/data/%d_%d_%d" % (pid, i, k))
        x.close()
    r = report(str(d))
    assert r["verdict"]["window"]["from"] == "steps"
    assert r["verdict"]["window"]["worker_file_reads"] == 50
    out = text(str(d))
    assert "  per step: 0.0 launches, 0.0 hidden syncs, 0.0 reads; 5.0 file reads in the\n" \
        "  loader workers\n" in out, out


def test_hidden_sync_costs_the_idle_after_it(tmp_path):
    """30 steps of 5.4 ms on the legacy stream: launch A; a pageable
    cuMemcpyHtoDAsync (hidden) that waits for A until +1 ms, then launch B
    2 us later; a cuMemcpyDtoH (hidden) that waits for B from +1.1 ms to
    +5.1 ms, then 300 us of CPU before the next step. The GPU idles only
    after the syncs: 2 us a step after the copy in, 300 us after the copy
    out (29 times: the last has no next submission), so the verdict is
    GPU-bound (5% idle) and each sync's cost is the idle after it, not its
    wait (ANALYSES.md "Hidden syncs", "Problems")."""
    d = tmp_path / "needed"
    d.mkdir()
    w = new(d, 100, ["./syncs", "--mode", "needed"])
    for i in range(30):
        t = T0 + i * 5400 * US
        launch(w, 100, t)
        w.event(100, "CU_MEMCPY_HTOD_ASYNC", t + 20 * US, 980 * US, sym="cuMemcpyHtoDAsync_v2",
                dir=1, sync=2, stream=0, bytes=4096, pinned=0)
        launch(w, 100, t + 1002 * US)
        sync(w, 100, t + 1100 * US, 4 * MS, kind="CU_MEMCPY_DTOH", hidden=True)
    w.close()
    r = report(str(d))
    v = r["verdict"]
    assert v["basis"] == "gpu_idle" and v["limit"] == "GPU-bound"
    hid = {f["symbol"]: f for f in r["findings"] if f["kind"] == "hidden_sync"}
    assert hid["cuMemcpyDtoH_v2"]["lost_ns"] == 30 * 4 * MS
    assert hid["cuMemcpyDtoH_v2"]["gpu_idle_ns"] == 29 * 300 * US
    assert hid["cuMemcpyHtoDAsync_v2"]["lost_ns"] == 30 * 980 * US
    assert hid["cuMemcpyHtoDAsync_v2"]["gpu_idle_ns"] == 30 * 2 * US
    rows = [p for p in r["problems"] if p["kind"] == "hidden sync"]
    assert [p["lost_ns"] for p in rows] == [29 * 300 * US, 30 * 2 * US]
    assert rows[0]["what"].endswith("; waited 120.0 ms in all, the GPU idle 8.7 ms after them")
    out = text(str(d))
    assert ("  1    8.7 ms  hidden sync       cuMemcpyDtoH_v2 x30 (max 4.0 ms), tid 100;\n"
            "                               waited 120.0 ms in all, the GPU idle 8.7 ms\n"
            "                               after them\n") in out, out
    # the copy in cost 60 us of a 161.7 ms loop: under the report's 0.1 %
    assert "  ... 1 smaller, each under 0.1% of the loop" in out


def test_another_ranks_workers_are_workers(tmp_path):
    """Two ranks (world 2) forked by a launcher (50), each with a DataLoader
    worker of its own (same command line, its rank's identity): rank 0's
    main (100) launches more kernels and is the run's main; rank 1's (200)
    has the role rank. Each one's child is a worker, numbered among its
    parent's; the verdict's workers are the main process's only."""
    d = tmp_path / "ranks"
    d.mkdir()
    ftgen.TraceFile(str(d / "h.50.ft"), 50, ["python3", "launch.py"]).close()
    for pid, rank, n in ((100, 0, 20), (200, 1, 10)):
        w = ftgen.TraceFile(str(d / ("h.%d.ft" % pid)), pid, PY, ppid=50, rank=rank, world=2)
        w.thread(pid, "main", main=True)
        for i in range(n):
            launch(w, pid, T0 + i * MS)
        sync(w, pid, T0 + n * MS, 1 * MS)
        w.close()
        x = ftgen.TraceFile(str(d / ("h.%d.ft" % (pid + 1))), pid + 1, PY, ppid=pid,
                            rank=rank, world=2)
        x.thread(pid + 1, "main", main=True)
        x.event(pid + 1, "READ", T0, 100 * US, fd=7, req=4096, ret=4096, path="/data/%d" % pid)
        x.close()
    rep = report(str(d))
    assert {p["pid"]: p["role"] for p in rep["processes"]} == {
        50: "helper", 100: "main", 101: "worker", 200: "rank", 201: "worker"}
    assert rep["verdict"]["process"] == ("rank 0/2, main process 100 (python3 train.py "
                                         "--epochs 3), 1 DataLoader worker (101)")
    out = text(str(d))
    assert "      200 rank   rank 1/2 python3 train.py --epochs 3\n" \
        "        201 worker rank 1/2 python3 train.py --epochs 3\n" in out, out


def test_loop_that_reads_its_own_data(tmp_path):
    """A CPU loop with no workers (DataLoader(num_workers=0)): 10 steps of
    10 ms, each 6 ms of file reads then 4 ms of compute, after 50 ms of
    start-up. No thread receives batches, so the step ranges' thread is
    the feeding thread: data delivery (60% in file I/O) over the steps
    window, not "nothing to limit"; and it is no loader thread of its own.
    The same loop without step ranges has no window to judge: none."""
    for steps in (True, False):
        d = tmp_path / ("steps%d" % steps)
        d.mkdir()
        w = new(d, 100)
        w.event(100, "READ", START + 1 * MS, 2 * MS, fd=3, req=65536, ret=65536,
                path="/usr/lib/python3/dist-packages/torch/__init__.py")
        t0 = START + 50 * MS
        for i in range(10):
            t = t0 + i * 10 * MS
            if steps:
                w.event(100, "RANGE_PUSH", t, 0, name="step %d" % i, level=0, api=0)
            for k in range(6):
                w.event(100, "READ", t + k * MS, 1 * MS, fd=7, req=4096, ret=4096,
                        path="/data/%d_%d" % (i, k))
            if steps:
                w.event(100, "RANGE_POP", t + 10 * MS, 0, level=0, api=0)
        w.close()
        v = report(str(d))["verdict"]
        if steps:
            assert v["limit"] == "data delivery" and v["feeding_threads"] == [100]
            assert v["window"]["from"] == "steps" and v["window"]["start_ns"] == t0
            assert v["share"]["io"] == 0.6 and v["producers"] == []
            assert v["process"] == "main process 100 (python3 train.py --epochs 3)"
            # no producers: nothing of theirs waited for a core
            assert v["data_cause"] == "I/O"
            assert v["detail"] == "The feeding threads read the files themselves."
        else:
            assert v["limit"] == "none" and v["feeding_threads"] == []


def init_then_loop(d, init_launches, loop_steps=100):
    """One thread: init_launches launches (model set-up on the GPU) and a
    sync, then a 2 s data set preload (2 000 reads of 1 MiB, 0.9 ms each),
    then a GPU-bound loop: per 10 ms, a launch and a 9.9 ms sync."""
    d.mkdir()
    w = new(d, 100)
    t = T0
    for i in range(init_launches):
        launch(w, 100, t)
        t += 100 * US
    sync(w, 100, t, 200 * US)
    t += 1 * MS
    for i in range(2000):
        w.event(100, "READ", t, 900 * US, fd=5, req=1 << 20, ret=1 << 20, path="/data/big.bin")
        t += 1 * MS
    loop0 = t
    for i in range(loop_steps):
        launch(w, 100, t)
        sync(w, 100, t + 50 * US, 9900 * US)
        t += 10 * MS
    w.close()
    return loop0


def test_setup_launches_before_a_preload_are_start_up(tmp_path):
    """5 launches of model set-up, a 2 s preload, a 1 s GPU-bound loop of
    100 launches: the window starts at the loop's first launch (the set-up
    launches and the preload are start-up), the verdict is GPU-bound and
    the 2 s gap after the set-up is no finding. With 20 launches before
    the pause (a sixth of them, more than a twentieth) the pause is part
    of the loop, and so is the file I/O that made it."""
    loop0 = init_then_loop(tmp_path / "setup", 5)
    r = report(str(tmp_path / "setup"))
    v = r["verdict"]
    assert v["window"]["start_ns"] == loop0 and v["window"]["launches_before"] == 5
    assert v["limit"] == "GPU-bound"
    assert v["startup_time_ns"]["io"] == 2000 * 900 * US
    assert not any(p["kind"] == "launch gaps" for p in r["problems"])
    out = text(str(tmp_path / "setup"))
    assert "  start-up 2.01 s before the loop's first launch, with 5 launches before a\n" \
        "  pause (set-up): file I/O 1.80 s" in out, out
    assert "1 before the loop (start-up) is no\n  finding" in out, out

    init_then_loop(tmp_path / "mid", 20, loop_steps=100)
    v = report(str(tmp_path / "mid"))["verdict"]
    assert v["window"]["start_ns"] == T0 and v["window"]["launches_before"] == 0
    assert v["limit"] == "data delivery"
