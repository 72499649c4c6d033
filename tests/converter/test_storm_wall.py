"""A figure never exceeds the time it is part of: a small-read storm whose
reads overlap across processes or threads costs the wall time they
covered, with their summed time beside it (docs/ANALYSES.md, "Problems").
Synthetic runs (tests/ftgen.py)."""
import os
import subprocess

from conftest import report_json, TOOL
import ftgen

US = 1000
MS = 1_000_000


def concurrent_readers(d, procs, threads=1, reads=2000):
    """A Python main process (pid 100) that runs 250 ms; `procs` readers,
    each a worker process (procs > 0) or, with procs == 0, `threads`
    threads of the main process: each makes `reads` reads of 4 KiB of
    /data/imgs back to back, 100 us each, all from 1 ms (+10 us per
    reader): 200 ms of reads each, at once."""
    os.makedirs(d)
    m = ftgen.TraceFile(os.path.join(d, "host.100.ft"), 100, ["/usr/bin/python3", "train.py"])
    m.thread(100, "main", main=True)
    m.event(100, "READ", m.start, 10 * US, fd=3, req=100, ret=100, path="/home/u/cfg.yaml")
    m.event(100, "READ", m.start + 250 * MS, 10 * US, fd=3, req=100, ret=100,
            path="/home/u/cfg.yaml")

    def read_all(w, tid, k):
        t = w.start + MS + k * 10 * US
        for i in range(reads):
            w.event(tid, "READ", t, 100 * US, fd=5, req=4096, ret=4096,
                    path="/data/imgs/%d_%04d.jpg" % (k, i))
            t += 100 * US
    if procs:
        m.close()
        for k in range(procs):
            pid = 101 + k
            w = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid,
                                ["/usr/bin/python3", "train.py"], ppid=100)
            w.thread(pid, "main", main=True)
            read_all(w, pid, k)
            w.close()
    else:
        for k in range(threads):
            m.thread(200 + k, "loader%d" % k)
            read_all(m, 200 + k, k)
        m.close()
    return d


def storm_rows(d):
    return [p for p in report_json(d)["problems"] if p["kind"] == "small-read storm"]


def test_four_workers_reading_at_once_cost_the_wall_time(tmp_path):
    d = concurrent_readers(str(tmp_path / "run"), procs=4)
    (row,) = storm_rows(d)
    # 4 x 2000 reads of 100 us: 800 ms summed; together they covered
    # 1 ms + 30 us .. 201 ms + 30 us: 200.03 ms
    assert row["processes"] == 4
    assert row["summed_ns"] == 800 * MS
    assert row["lost_ns"] == 200 * MS + 30 * US
    assert row["what"].endswith("; 800.0 ms of reads in 4 processes, over 200.0 ms of the run")
    txt = subprocess.run([TOOL, "report", d], capture_output=True, text=True).stdout
    assert " 200.0 ms  small-read storm" in txt


def test_four_threads_reading_at_once_cost_the_wall_time(tmp_path):
    d = concurrent_readers(str(tmp_path / "run"), procs=0, threads=4)
    (row,) = storm_rows(d)
    # the main thread's two 10 us reads of its config are in the burst too
    assert row["processes"] == 1
    assert row["summed_ns"] == 800 * MS + 20 * US
    assert row["lost_ns"] == 200 * MS + 30 * US + 20 * US
    assert "; 800.0 ms of reads in its threads, over 200.1 ms of the run" in row["what"]


def test_reads_one_after_another_keep_their_sum(tmp_path):
    """one reader: nothing overlaps, the cost is the reads' time"""
    d = concurrent_readers(str(tmp_path / "run"), procs=1)
    (row,) = storm_rows(d)
    assert row["lost_ns"] == row["summed_ns"] == 200 * MS
    assert "of the run" not in row["what"]


def test_four_threads_waiting_on_one_lock_at_once(tmp_path):
    """threads 301..304 of process 300 each wait 30 ms on one mutex, from
    the same instant: the row costs 30 ms, its 120 ms of waits beside"""
    d = str(tmp_path / "run")
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "host.300.ft"), 300, ["prog"])
    w.thread(300, "main", True)
    w.event(300, "READ", w.start, 1000, fd=3, path="/x", req=1 << 20, ret=1 << 20)
    for k in range(4):
        w.thread(301 + k, "w%d" % k)
        w.event(301 + k, "MUTEX_LOCK", w.start + MS, 30 * MS, lock=0x1234, ret=0)
    w.event(300, "READ", w.start + 40 * MS, 1000, fd=3, path="/x", req=1 << 20, ret=1 << 20)
    w.close()
    (row,) = [p for p in report_json(d)["problems"] if p["kind"] == "lock contention"]
    assert (row["lost_ns"], row["summed_ns"]) == (30 * MS, 120 * MS)
    assert row["what"].endswith("; 120.0 ms of waits in 4 threads, over 30.0 ms of the run")
