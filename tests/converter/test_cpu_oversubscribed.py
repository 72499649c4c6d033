"""The "CPU oversubscribed" finding (converter/analyse/fk_runq.c, docs/ANALYSES.md
"CPU oversubscribed"): two or more busy threads of a process (on a CPU
10% of their sampled time in the window or more) runnable but waiting
for a core (run-queue delay, SCHED samples) 10% of it or more. Synthetic
runs (tests/ftgen.py) with the CPU time and the delays inside the
samples: the shapes where it must fire (threads, a DataLoader worker
process), and shapes where it must not (idle threads, one thread waiting
alone, delays under 10%, threads that barely run, no CPU samples),
through report --json, the text report, the timeline and diff."""
import json
import os
import subprocess

from conftest import report_json, TOOL
from pfslices import slices
import ftgen

MS = 1_000_000
US = 1_000
PIPE = 2                       # enum ft_fd_kind (libfeedtrace/format.h)


def run(d, main_pct, other_pct, busy=30, cpu=True):
    """pid 600: its main thread receives a batch every 10 ms (40 pipe
    reads of 6 ms from 1 ms: its findings' window is its first event's
    start to its last's end, 1 to 397 ms); one more thread per entry of
    other_pct, which makes no traced call (an intra-op pool's). CPU and
    SCHED samples every 200 ms from the start: each thread on a CPU busy%
    of the time (cpu=False: no CPU samples), runnable, waiting for a core,
    its pct of it (2 ms per percent per 200 ms)."""
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "host.600.ft"), 600, ["python", "train.py"])
    w.thread(600, "python", main=True)
    t0 = w.start + MS
    for k in range(40):
        w.event(600, "PIPE_READ", t0 + k * 10 * MS, 6 * MS, fd=7, kind=PIPE, req=4096,
                ret=4096)
    for i in range(len(other_pct)):
        w.thread(610 + i, "pool%d" % i)
    for j in range(4):
        for tid, pct in [(600, main_pct)] + [(610 + i, p) for i, p in enumerate(other_pct)]:
            w.runq(tid, w.start + j * 200 * MS, j * pct * 2 * MS)
            if cpu:
                w.cpu(tid, w.start + j * 200 * MS, j * busy * 2 * MS)
    w.close()
    return d


def oversubscribed(doc):
    return [f for f in doc["findings"] if f["kind"] == "cpu_oversubscribed"]


def test_threads_crowding_the_cores_are_a_finding(tmp_path):
    d = run(str(tmp_path / "run"), 25, [60, 40, 5])
    doc = report_json(d)
    [f] = oversubscribed(doc)
    # the window: 396 ms; the main thread waits 25% of it (99 ms), the
    # pool threads 60% (237.6 ms) and 40% (158.4 ms); the third's 5% is
    # under the threshold: sampled, not counted
    assert (f["pid"], f["end_ns"] - f["start_ns"]) == (600, 396 * MS)
    assert f["threads"] == 3 and f["threads_sampled"] == 4
    assert f["total_ns"] == 99 * MS + 237600 * US + 158400 * US
    assert (f["tid"], f["max_ns"], f["lost_ns"]) == (610, 237600 * US, 237600 * US)
    assert "torch.set_num_threads" in f["suggestion"]
    [row] = [p for p in doc["problems"] if p["kind"] == "CPU oversubscribed"]
    assert row["lost_ns"] == 237600 * US and row["count"] == 1
    assert row["what"] == ("3 of 4 threads busy and runnable, waiting for a core 10% of "
                           "their time or more: 495.0 ms in all; thread 610 237.6 ms "
                           "(60% of the window)")
    txt = subprocess.run([TOOL, "report", d], capture_output=True, text=True).stdout
    assert "CPU oversubscribed" in txt and "thread 610 237.6 ms" in txt


def test_exactly_the_threshold_counts(tmp_path):
    [f] = oversubscribed(report_json(run(str(tmp_path / "run"), 10, [10], busy=10)))
    assert (f["threads"], f["total_ns"]) == (2, 2 * 39600 * US)


def test_threads_that_barely_run_are_no_finding(tmp_path):
    """threads waking from short sleeps wait for a core at each wake on a
    loaded machine: on a CPU 9% of the time, they are not crowding it"""
    assert oversubscribed(report_json(run(str(tmp_path / "run"), 40, [40, 40], busy=9))) == []


def test_without_cpu_samples_no_finding(tmp_path):
    """whether the threads are busy is not known"""
    assert oversubscribed(report_json(run(str(tmp_path / "run"), 40, [40, 40], cpu=False))) == []


def test_idle_threads_are_no_finding(tmp_path):
    """threads that sleep are sampled with no delay at all"""
    doc = report_json(run(str(tmp_path / "run"), 0, [0, 0, 0, 0]))
    assert oversubscribed(doc) == []
    assert doc["verdict"]["time_ns"]["runq"] == 0


def test_one_thread_waiting_alone_is_no_finding(tmp_path):
    """the machine is shared with other work: the verdict says so
    (its runq share), the process has no threads of its own to cut"""
    doc = report_json(run(str(tmp_path / "run"), 50, [0, 0]))
    assert oversubscribed(doc) == []
    assert doc["verdict"]["share"]["runq"] > 0.1
    doc = report_json(run(str(tmp_path / "alone"), 50, []))
    assert oversubscribed(doc) == []


def test_delays_under_the_threshold_are_no_finding(tmp_path):
    assert oversubscribed(report_json(run(str(tmp_path / "run"), 9, [9, 9, 9]))) == []


def test_its_timeline_slice_and_diff(tmp_path):
    before = run(str(tmp_path / "before"), 25, [60, 40])
    after = run(str(tmp_path / "after"), 25, [0, 0])
    out = str(tmp_path / "t.pftrace")
    subprocess.run([TOOL, "convert", before, "-o", out], check=True, capture_output=True)
    [s] = [s for s in slices(out) if s["name"] == "CPU oversubscribed"]
    assert s["track"] == "CPU oversubscribed"
    assert sorted(s["args"]) == ["longest_thread_wait_ns", "suggestion", "threads",
                                 "threads_sampled", "tid", "wait_ns"]
    assert "torch.set_num_threads" in s["args"]["suggestion"]
    r = subprocess.run([TOOL, "diff", before, "--", after, "--json"], capture_output=True,
                       text=True)
    doc = json.loads(r.stdout)
    [gone] = [f for f in doc["disappeared"] if f["kind"] == "cpu_oversubscribed"]
    assert gone["what"] == "CPU oversubscribed (threads waiting for a core)"
    assert gone["count"] == 1


def test_in_a_dataloader_worker_the_advice_is_the_workers(tmp_path):
    """processes, not threads: the main process (one thread) and a
    DataLoader worker whose intra-op pool of three threads waits for
    cores; the worker's finding tells the worker's fix"""
    d = str(tmp_path / "run")
    os.makedirs(d)
    m = ftgen.TraceFile(os.path.join(d, "host.700.ft"), 700, ["/usr/bin/python3", "train.py"])
    m.thread(700, "python", main=True)
    w = ftgen.TraceFile(os.path.join(d, "host.701.ft"), 701, ["/usr/bin/python3", "train.py"],
                        ppid=700)
    w.thread(701, "python", main=True)
    for k in range(40):
        t = m.start + MS + k * 10 * MS
        w.event(701, "READ", t, 2 * MS, fd=5, req=1 << 20, ret=1 << 20, path="/data/%d" % k)
        w.event(701, "PIPE_WRITE", t + 5 * MS, 100 * US, fd=9, kind=PIPE, req=4096, ret=4096)
        m.event(700, "PIPE_READ", t, 6 * MS, fd=7, kind=PIPE, req=4096, ret=4096)
    for i in range(3):
        w.thread(710 + i, "pool%d" % i)
    for j in range(4):
        m.runq(700, m.start + j * 200 * MS, j * 20 * MS)
        m.cpu(700, m.start + j * 200 * MS, j * 100 * MS)
        for i in range(3):
            w.runq(710 + i, m.start + j * 200 * MS, j * 80 * MS)
            w.cpu(710 + i, m.start + j * 200 * MS, j * 60 * MS)
    m.close()
    w.close()
    doc = report_json(d)
    roles = {p["pid"]: p["role"] for p in doc["processes"]}
    assert roles[701] == "worker"
    [f] = oversubscribed(doc)
    assert (f["pid"], f["threads"], f["threads_sampled"]) == (701, 3, 3)
    assert "worker_init_fn" in f["suggestion"] and "OpenCV" in f["suggestion"]
