"""Ranks that meet in gloo collectives (shim/gloo.c): a gloo collective
runs on a worker thread of its process while the training thread waits
for it in a condition variable, so the verdict must tell that wait (for
other ranks) from a wait for data. Synthetic traces (ftgen) of several
shapes, each with exact expected figures; the real PyTorch job is in
test_torch_gloo.py.

Every rank process here has three threads: the training thread (tid =
pid), a gloo worker that runs the collectives and waits for work in a
condition variable between them (pid + 1), and a transport thread that
receives on a TCP socket during each collective (pid + 2). The training
thread receives its batches from a DataLoader pipe (fd 5)."""
import pytest

import ftgen
from conftest import TOOL, report_json

MS = 1_000_000
US = 1_000
PIPE, SOCKET = 2, 3            # enum ft_fd_kind (libfeedtrace/format/format.h)
STEPS = 12


def rank_proc(d, pid, rank, batch_ns, coll_end, world=2, overlap=False, job="j1"):
    """One rank's process: for step k, a batch wait of batch_ns on the
    pipe, 2 ms of CPU, then a condition wait for the collective that ends
    at coll_end(k) (the gloo call on the worker from 20 us after the wait
    began). overlap: the collective is in flight during the batch wait
    instead (an all-reduce started asynchronously), and the training thread
    never waits for it. Returns the trace file's events' facts."""
    w = ftgen.TraceFile(str(d / ("h.%d.ft" % pid)), pid, ["python3", "train.py"], rank=rank,
                        world=world, job=job)
    w.thread(pid, "python3", main=True)
    w.thread(pid + 1, "gloo-worker")
    w.thread(pid + 2, "gloo-loop")
    work_free = w.start
    facts = {"cond": 0, "batch": 0}
    for k in range(STEPS):
        end = coll_end(k)
        if overlap:
            b0 = end - batch_ns - 3 * MS          # inside the collective
            c0, c1 = b0 - 1 * MS, end
        else:
            c0 = end - coll_wait(batch_ns)        # the condition wait begins
            b0 = c0 - 2 * MS - batch_ns
            c1 = end
        w.event(pid, "PIPE_READ", b0, batch_ns, fd=5, kind=PIPE, req=4, ret=4)
        facts["batch"] += batch_ns
        if not overlap:
            w.event(pid, "COND_WAIT", c0, end + 10 * US - c0, cond=0x1000, mutex_low32=0x2000,
                    ret=0)
            facts["cond"] += end + 10 * US - c0
        g0 = c0 + 20 * US
        w.event(pid + 1, "COND_WAIT", work_free, g0 - work_free, cond=0x3000,
                mutex_low32=0x4000, ret=0)
        w.event(pid + 1, "GLOO_ALLREDUCE", g0, c1 - g0, comm=0xc0ffee)
        w.event(pid + 2, "RECV", g0 + 50 * US, c1 - g0 - 100 * US, fd=9, kind=SOCKET, req=4096,
                ret=4096)
        work_free = c1
    w.close()
    return facts


def coll_wait(batch_ns):
    """how long a rank waits in its collective when its batch took
    batch_ns: the slowest rank's batch takes 30 ms"""
    return 30 * MS - batch_ns + 200 * US


def period():
    return 30 * MS + 2 * MS + 200 * US + 1 * MS


def ends(k):
    return 1_000_000_000_000 + 40 * MS + k * period()


def proc(rep, pid):
    return next(p for p in rep["processes"] if p["pid"] == pid)


def test_wait_for_a_gloo_collective_is_a_wait_for_other_ranks(tmp_path):
    """One rank (its batches take 1 ms, it waits 29.2 ms per step in the
    collective): its training thread's condition waits count as waits for
    other ranks, exactly, and the verdict says so; the gloo worker (waiting
    for work) and the transport thread (socket receives) receive no
    batches and do not feed."""
    f = rank_proc(tmp_path, 100, 0, 1 * MS, ends)
    rep = report_json(str(tmp_path))
    v = proc(rep, 100)["verdict"]
    assert v["feeding_threads"] == [100]
    assert v["limit"] == "other ranks"
    # the window is the steps: from the first batch received to the last,
    # so 11 of the 12 condition waits and 11 batch waits lie in it
    t = v["time_ns"]
    assert t["other_ranks"] == f["cond"] * (STEPS - 1) // STEPS
    assert t["data_wait"] == 1 * MS * (STEPS - 1)
    assert "waits for other ranks" in v["sentence"]


def test_pipe_batch_wait_during_a_collective_stays_a_data_wait(tmp_path):
    """An all-reduce in flight while the training thread waits for its next
    batch on the DataLoader's pipe (overlapped communication): that wait is
    for data, not for the other ranks."""
    rank_proc(tmp_path, 100, 0, 20 * MS, ends, overlap=True)
    v = proc(report_json(str(tmp_path)), 100)["verdict"]
    assert v["feeding_threads"] == [100]
    assert v["time_ns"]["other_ranks"] == 0
    assert v["time_ns"]["data_wait"] == 20 * MS * (STEPS - 1)
    assert v["limit"] == "data delivery"


def test_two_ranks_in_gloo_the_late_one_is_named(tmp_path):
    """Two ranks whose collectives end together: rank 1's batches take 30
    ms, rank 0's 1 ms. Rank 1 is the straggler, last at every all-reduce,
    with its own verdict (data delivery); rank 0 waits for it (other
    ranks)."""
    rank_proc(tmp_path, 100, 0, 1 * MS, ends)
    rank_proc(tmp_path, 200, 1, 30 * MS, ends)
    rep = report_json(str(tmp_path))
    rk = rep["ranks"]
    assert rk["straggler"] == 1 and rk["matched"] == STEPS
    per = {x["rank"]: x for x in rk["per_rank"]}
    assert per[1]["last"] == STEPS and per[0]["last"] == 0
    assert per[1]["limit"] == "data delivery"
    assert per[0]["limit"] == "other ranks"
    # arrivals: 20 us after each rank's condition wait began
    assert per[1]["late_median_ns"] - per[0]["late_median_ns"] == 29 * MS
    r = __import__("subprocess").run([TOOL, "report", str(tmp_path)], capture_output=True,
                                     text=True)
    text = " ".join(r.stdout.split())
    assert "rank 1/2 (pid 200) is the straggler" in text
    assert "waits for 1" in text
