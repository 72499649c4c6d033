"""The producers' wait in page faults on mapped data, from the kernel's
delay accounting (docs/ANALYSES.md, "Mapped data"), on synthetic traces
shaped as the recorder writes them (libfeedtrace/faults.c): the process's
series (tid 0, getrusage) has counts only; each thread's series, read by
the flusher from /proc/self/task/TID/stat, has its block I/O wait (flag 2)
while delay accounting is on; a thread's own count as it leaves
(getrusage) has none. The numbers are planted: exact figures.
"""
import json
import subprocess

import ftgen
from conftest import TOOL

MS = 1_000_000
START = 1_000_000_000_000
T0 = START + 10 * MS
PY = ["python3", "train.py"]
DATA = "/data/train.arrow"


def report(d, json_out=True):
    r = subprocess.run([TOOL, "report"] + (["--json"] if json_out else []) + [d],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    if not json_out:
        assert all(len(l) <= 80 for l in r.stdout.splitlines()), r.stdout
        return r.stdout
    return json.loads(r.stdout)


def new(d, pid, ppid=1):
    w = ftgen.TraceFile(str(d / ("host.%d.ft" % pid)), pid, PY, ppid=ppid)
    w.thread(pid, "main", main=True)
    return w


def run(tmp_path, acct):
    """Main process 100 maps the data and per 10 ms step waits 8 ms for a
    batch, then launches; worker 101 has two threads that fault (101:
    20,000 faults, 40 ms waited; 103: 10,000, 25 ms, then its count as it
    leaves, without the wait) and CPU samples (10 ms over the loop); worker
    102 one thread (24,000, 30 ms) and no CPU samples (its CPU is its
    untraced time). acct: the threads' samples carry the wait (flag 2)."""
    d = tmp_path / ("acct" if acct else "counts")
    d.mkdir()
    w = new(d, 100)
    w.event(100, "MMAP", START + 1 * MS, 20_000, fd=3, path=DATA, prot=1, flags=1,
            len=1 << 30, off=0, addr=0x7f0000000000)
    w.fault(0, START + 1 * MS, 5_000, base=True)
    w.fault(100, START + 2 * MS, 5_000, base=True)
    w.fault(0, T0 + 100 * MS, 5_000)
    for i in range(10):
        t = T0 + i * 10 * MS
        w.event(100, "POLL", t, 8 * MS, ret=1, nfds=1, timeout=5000, kinds=2, fd0=5, fd1=-1,
                fd2=-1, fd3=-1, fd4=-1, fd5=-1, fd6=-1, fd7=-1)
        w.event(100, "PIPE_READ", t + 8 * MS, 10_000, fd=5, req=1024, ret=1024)
        w.event(100, "CU_LAUNCH_KERNEL", t + 8100_000, 10_000, sym="cuLaunchKernel",
                kernel="k", sync=0, stream=0)
        w.event(100, "CU_STREAM_SYNC", t + 8200_000, 1800_000, sym="x", sync=1, stream=0)
    w.close()
    series = {101: {101: [(0, 0, 0), (50, 10_000, 20), (100, 20_000, 40)],
                    103: [(0, 0, 0), (60, 10_000, 25)]},
              102: {102: [(0, 0, 0), (100, 24_000, 30)]}}
    for pid, threads in series.items():
        x = new(d, pid, ppid=100)
        for k in range(25):
            x.event(pid, "MUTEX_LOCK", T0 + 4 * MS * k, 1 * MS, lock=0x77)
        total = sum(pts[-1][1] for pts in threads.values())
        x.fault(0, T0, 0)
        x.fault(0, T0 + 100 * MS, total)
        for tid, pts in threads.items():
            if tid != pid:
                x.thread(tid, "reader")
            for ms, n, wait in pts:
                x.fault(tid, T0 + ms * MS, n, blkio_ns=wait * MS if acct else 0,
                        delayacct=acct)
        if pid == 101:
            x.fault(103, T0 + 90 * MS, 10_000)     # as it leaves: getrusage, no wait
            x.cpu(101, T0, 0)
            x.cpu(101, T0 + 100 * MS, 10 * MS)
        x.close()
    return str(d)


def producers(rep):
    return {p["pid"]: p for p in rep["verdict"]["producers"]}


def test_worker_fault_wait_is_its_threads(tmp_path):
    """A worker's fault wait is the sum of its threads' (its process's
    series has none): 40 + 25 ms, the leaving thread's last count
    without the wait keeping the 25 ms it had; the run's is 95 ms. Where
    the CPU is inferred from untraced time (worker 102), the wait is taken
    out of it into idle; from CPU samples (worker 101) it stays as
    sampled. The verdict's line says the wait apart from the CPU."""
    d = run(tmp_path, True)
    counts, acct = report(run(tmp_path, False)), report(d)
    c, a = producers(counts), producers(acct)
    assert {p: (q["major_faults"], q["fault_wait_ns"]) for p, q in a.items()} == \
        {101: (30_000, 65 * MS), 102: (24_000, 30 * MS)}
    assert acct["mapped_data"]["block_io_wait_ns"] == 95 * MS
    assert a[101]["cpu_from"] == "samples" and a[102]["cpu_from"] == "untraced time"
    assert (a[101]["cpu_ns"], a[101]["idle_ns"]) == (c[101]["cpu_ns"], c[101]["idle_ns"])
    assert c[102]["cpu_ns"] >= 30 * MS
    assert a[102]["cpu_ns"] == c[102]["cpu_ns"] - 30 * MS
    assert a[102]["idle_ns"] == c[102]["idle_ns"] + 30 * MS
    for q in a.values():
        assert q["io_ns"] + q["cpu_ns"] + q["lock_ns"] + q["idle_ns"] == q["wall_ns"]
    cpu = a[101]["cpu_ns"] + a[102]["cpu_ns"]
    assert acct["verdict"]["data_cause"] == "mapped I/O"
    assert acct["verdict"]["detail"] == (
        "The 2 workers took 54,000 major page faults on mapped data (/data/train.arrow) "
        "and waited 95.0 ms in them for block I/O, besides %.1f ms on the CPU: the data "
        "set is read from disk through memory maps (see Mapped data). The busiest, "
        "worker 102, is on the CPU 40%% of the time." % (cpu / MS))
    assert cpu == 8_890_000 + 36 * MS      # 10 ms sampled over 88.9 of 100 ms; 66 - 30
    out = report(d, json_out=False)
    assert "and waited 95.0 ms in them for block I/O, besides" in " ".join(out.split())
    assert "waiting 95.0 ms for block I/O" in " ".join(
        out.split("Mapped data\n", 1)[1].split("\n\n", 1)[0].split())


def test_counts_only_unchanged(tmp_path):
    """Delay accounting off (no sample has flag 2): counts, no wait, the
    CPU as it was, no word of waiting in the text."""
    d = run(tmp_path, False)
    rep = report(d)
    p = producers(rep)
    assert {k: (q["major_faults"], q["fault_wait_ns"]) for k, q in p.items()} == \
        {101: (30_000, None), 102: (24_000, None)}
    assert rep["mapped_data"]["block_io_wait_ns"] is None
    assert rep["verdict"]["detail"] == (
        "The 2 workers took 54,000 major page faults on mapped data (/data/train.arrow): "
        "the data set is read from disk through memory maps (see Mapped data). The "
        "busiest, worker 102, is on the CPU 74% of the time.")
    assert "wait" not in " ".join(report(d, json_out=False).split("Mapped data\n", 1)[1]
                                  .split("\n\n", 1)[0].split())
