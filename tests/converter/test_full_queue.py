"""A full queue means the consumer is slow: producers blocked handing a
batch over (Python threads waiting on a full queue.Queue; forked workers
whose pipe writes block) wait for the loop, which is the limit, not the
data. Synthetic runs (tests/ftgen.py), with and without step ranges, and
the starved twin that stays "data delivery"."""
import os

import pytest

from conftest import report_json
import ftgen

US = 1000
MS = 1_000_000
PIPE = 2                       # enum ft_fd_kind (libfeedtrace/format/format.h)
N = 40


def main_loop(w, ranges, take, wait_ns):
    """the Python main thread (pid 500): per batch, take(t) (the batch's
    wait of wait_ns), then 5 ms of compute; a "step" range around both
    when ranges"""
    t = w.start + MS
    for k in range(N):
        if ranges:
            w.event(500, "RANGE_PUSH", t, 0, name="step", level=0, api=0)
        take(t, k)
        if ranges:
            w.event(500, "RANGE_POP", t + wait_ns + 5 * MS, 0, level=0, api=0)
        t += wait_ns + 5 * MS


def forked(d, ranges):
    """2 forked workers each make a batch in 1 ms (a 300 us read, CPU)
    then block 9 ms writing it to the full pipe; the main process finds a
    batch waiting each time (a 2 us read of its length)"""
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "host.500.ft"), 500, ["/usr/bin/python3", "train.py"])
    w.thread(500, "python3", True)

    def take(t, k):
        w.event(500, "PIPE_READ", t, 2 * US, fd=7, kind=PIPE, req=4, ret=4)
        w.event(500, "PIPE_READ", t + 2 * US, 3 * US, fd=7, kind=PIPE, req=4096, ret=4096)
    main_loop(w, ranges, take, 5 * US)
    w.close()
    for i in range(2):
        pid = 501 + i
        ww = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid,
                             ["/usr/bin/python3", "train.py"], ppid=500)
        ww.thread(pid, "python3", True)
        t = ww.start + MS + i * 5 * MS
        for k in range(N // 2):
            ww.event(pid, "READ", t, 300 * US, fd=9, path="/data/b%d" % k, req=1 << 20,
                     ret=1 << 20)
            ww.event(pid, "PIPE_WRITE", t + MS, 9 * MS, fd=8, kind=PIPE, req=4096, ret=4096)
            t += 10 * MS
        ww.close()
    return d


def threads(d, ranges, starved=False):
    """2 loader threads feed the main thread through a queue.Queue. Full:
    each makes an item in 1 ms (a 300 us read, CPU) then waits 9 ms on the
    full queue (a semaphore wait that ends when the loop takes an item);
    the loop finds an item each time (a 2 us wait). Starved: each loader
    takes 20 ms per item, never waits; the loop waits 5 ms for each."""
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "host.500.ft"), 500, ["/usr/bin/python3", "train.py"])
    w.thread(500, "python3", True)
    w.thread(510, "loader0")
    w.thread(511, "loader1")
    wait = 5 * MS if starved else 2 * US
    main_loop(w, ranges, lambda t, k: w.event(500, "SEM_WAIT", t, wait, sem=0x1000 + k, ret=0,
                                              err=0), wait)
    for i in range(2):
        tid = 510 + i
        t = w.start + MS + i * 5 * MS
        for k in range(N // 2):
            w.event(tid, "READ", t, 300 * US, fd=9, path="/data/b%d" % k, req=1 << 20,
                    ret=1 << 20)
            if starved:
                t += 20 * MS
            else:
                w.event(tid, "SEM_WAIT", t + MS, 9 * MS, sem=0x7000 + tid, ret=0, err=0)
                t += 10 * MS
    w.close()
    return d


@pytest.mark.parametrize("ranges", [False, True])
def test_threads_on_a_full_queue_wait_for_the_loop(tmp_path, ranges):
    v = report_json(threads(str(tmp_path / "run"), ranges))["verdict"]
    assert v["limit"] == "none", v["sentence"]
    assert v["feeding_threads"] == [500]
    assert v["sentence"].startswith("No GPU work was recorded and the data feed keeps up: "
                                    "the loop is the limit (the feeding thread spends 0% of")
    assert sorted(p["tid"] for p in v["producers"]) == [510, 511]
    assert v["detail"].startswith("The 2 loader threads wait for the loop 90% of their time: "
                                  "a full queue or pipe, each batch handed over when the loop "
                                  "takes one.")


@pytest.mark.parametrize("ranges", [False, True])
def test_workers_blocked_writing_a_full_pipe_wait_for_the_loop(tmp_path, ranges):
    v = report_json(forked(str(tmp_path / "run"), ranges))["verdict"]
    assert v["limit"] == "none", v["sentence"]
    assert sorted(p["pid"] for p in v["producers"]) == [501, 502]
    # the blocked writes are idle (handing over), not CPU: 9 ms of each 10
    for p in v["producers"]:
        assert p["cpu_ns"] < p["wall_ns"] // 5, p
        assert p["handover_ns"] == p["idle_ns"] >= p["wall_ns"] * 0.85, p
    assert v["detail"].startswith("The 2 workers wait for the loop 90% of their time, 90% "
                                  "blocked handing batches over (pipe writes: the pipe is "
                                  "full)")


def test_starved_loop_is_still_data_delivery(tmp_path):
    v = report_json(threads(str(tmp_path / "run"), False, starved=True))["verdict"]
    assert v["limit"] == "data delivery", v["sentence"]
    assert v["feeding_threads"] == [500]
    assert "waiting for data" in v["sentence"]
