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


def test_union_across_processes_is_exact(tmp_path):
    """4 workers each read 100 us every 200 us, in step (+10 us each): each
    covers 100 ms, their spans ~200 ms, together only 130 us of every 200:
    130 ms, not the bound min(400 ms summed, 199.93 ms of spans)"""
    d = str(tmp_path / "run")
    os.makedirs(d)
    m = ftgen.TraceFile(os.path.join(d, "host.100.ft"), 100, ["/usr/bin/python3", "train.py"])
    m.thread(100, "main", main=True)
    m.event(100, "READ", m.start, 10 * US, fd=3, req=100, ret=100, path="/home/u/cfg.yaml")
    m.event(100, "READ", m.start + 250 * MS, 10 * US, fd=3, req=100, ret=100,
            path="/home/u/cfg.yaml")
    m.close()
    for k in range(4):
        pid = 101 + k
        w = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid,
                            ["/usr/bin/python3", "train.py"], ppid=100)
        w.thread(pid, "main", main=True)
        t = w.start + 5 * MS + k * 10 * US
        for i in range(1000):
            w.event(pid, "READ", t, 100 * US, fd=5, req=4096, ret=4096,
                    path="/data/imgs/%d_%04d.jpg" % (k, i))
            t += 200 * US
        w.close()
    (row,) = storm_rows(d)
    assert row["processes"] == 4
    assert row["summed_ns"] == 400 * MS
    assert row["lost_ns"] == 130 * MS
    assert row["feed_lost_ns"] is None          # no feeding thread in this run
    assert row["what"].endswith("; 400.0 ms of reads in 4 processes, over 130.0 ms of the run")


PIPE = 2                       # enum ft_fd_kind (libfeedtrace/format/format.h)


def fed_run(d):
    """A Python main process (pid 500) receives a batch every 10 ms
    (k = 0..39, at 1 ms + 10 ms k: a pipe read, 2 us; 5 ms at k = 5, 10;
    8 ms at k = 21, 24, 27). Worker 501 reads /data/a: 1500 reads of
    100 us back to back from 5 ms (150 ms of the run, while the loop
    waits 2 x 5 ms + 13 x 2 us); worker 502 /data/b: 1200 from 200 ms
    (120 ms, while the loop waits 3 x 8 ms + 9 x 2 us)."""
    os.makedirs(d)
    m = ftgen.TraceFile(os.path.join(d, "host.500.ft"), 500, ["/usr/bin/python3", "train.py"])
    m.thread(500, "python3", main=True)
    for k in range(40):
        dur = 5 * MS if k in (5, 10) else 8 * MS if k in (21, 24, 27) else 2 * US
        m.event(500, "PIPE_READ", m.start + MS + k * 10 * MS, dur, fd=7, kind=PIPE,
                req=4096, ret=4096)
    m.close()
    for pid, ds, t0, n in ((501, "a", 5 * MS, 1500), (502, "b", 200 * MS, 1200)):
        w = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid,
                            ["/usr/bin/python3", "train.py"], ppid=500)
        w.thread(pid, "python3", main=True)
        t = w.start + t0
        for i in range(n):
            w.event(pid, "READ", t, 100 * US, fd=5, req=4096, ret=4096,
                    path="/data/%s/%04d.jpg" % (ds, i))
            t += 100 * US
        w.close()
    return d


def test_rows_ranked_by_what_the_feeding_thread_lost(tmp_path):
    d = fed_run(str(tmp_path / "run"))
    rows = storm_rows(d)
    # /data/b covers less of the run but the loop waited through more of it
    assert [r["what"].split(":")[0] for r in rows] == ["/data/b", "/data/a"]
    b, a = rows
    assert (a["lost_ns"], b["lost_ns"]) == (150 * MS, 120 * MS)
    assert a["feed_lost_ns"] == 2 * 5 * MS + 13 * 2 * US
    assert b["feed_lost_ns"] == 3 * 8 * MS + 9 * 2 * US
    assert b["what"].endswith("; the feeding thread waited 24.0 ms of it")
    txt = subprocess.run([TOOL, "report", d], capture_output=True, text=True).stdout
    assert txt.index("/data/b") < txt.index("/data/a")


def test_lock_rows_ranked_by_what_the_feeding_thread_lost(tmp_path):
    """pid 500 (a C program): its main thread receives a batch every 10 ms
    (k = 0..39 at 1 ms + 10 ms k: a 4 ms pipe read). Loader 510 waits on
    lock 0x1000 for 3 ms inside each of the first 20 of those waits (at
    1.5 ms + 10 ms k): 60 ms, while the loop waits. Loaders 511 and
    512 wait on lock 0x2000 together, 5 ms each at 5 ms + 10 ms k (k =
    0..39): 200 ms of the run, while the loop computes."""
    d = str(tmp_path / "run")
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "host.500.ft"), 500, ["./loader"])
    w.thread(500, "loader", main=True)
    t0 = w.start + MS
    for k in range(40):
        w.event(500, "PIPE_READ", t0 + k * 10 * MS, 4 * MS, fd=7, kind=PIPE, req=4096,
                ret=4096)
        if k < 20:
            w.event(510, "MUTEX_LOCK", t0 + k * 10 * MS + 500 * US, 3 * MS, lock=0x1000, ret=0)
        for tid in (511, 512):
            w.event(tid, "MUTEX_LOCK", t0 + k * 10 * MS + 4 * MS, 5 * MS, lock=0x2000, ret=0)
    for tid in (510, 511, 512):
        w.thread(tid, "producer%d" % tid)
    w.close()
    rows = [p for p in report_json(d)["problems"] if p["kind"] == "lock contention"]
    assert [r["what"].split()[1] for r in rows] == ["0x1000", "0x2000"]
    a, b = rows
    # the loop's window starts at its first batch's end (5 ms): the first
    # wait is before it
    assert (a["lost_ns"], a["feed_lost_ns"]) == (60 * MS, 19 * 3 * MS)
    # 0x2000 ends each 4 ms pipe read's next 5 ms: the loop waits in none of it
    assert (b["lost_ns"], b["summed_ns"], b["feed_lost_ns"]) == (200 * MS, 400 * MS, 0)
    assert b["what"].endswith("; 400.0 ms of waits in 2 threads, over 200.0 ms of the run; "
                              "the feeding thread waited 0 ns of it")
