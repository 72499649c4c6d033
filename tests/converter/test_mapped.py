"""Data read through memory maps (docs/ANALYSES.md, "Mapped data"): the
process's major page faults, sampled at every flush once it mapped a file
(libfeedtrace/faults.c), attributed to the data files the process or its
parent mapped; the finding and the producers' breakdown.

The verdicts are judged here on synthetic traces (tests/ftgen.py) with the
numbers planted; the recorder on a real Python loader over a numpy.memmap
file whose pages were dropped from the page cache first, asserting the
counts against the loader's own (getrusage), never times, in
tests/traced/test_mapped_programs.py.
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


def new(d, pid, ppid=1):
    w = ftgen.TraceFile(str(d / ("host.%d.ft" % pid)), pid, PY, ppid=ppid)
    w.thread(pid, "main", main=True)
    return w


def loader_run(tmp_path, mapped=True, faults=24_000, delayacct=False, data=DATA,
               thread_too=False):
    """Main process 100 maps `data` (if mapped) at start, then per 10 ms
    step waits 8 ms on a pipe for a batch and launches; workers 101, 102
    (forked) make a lock call now and then and each take `faults` major
    page faults in the loop (delay accounting: 300 ms of block I/O wait
    each); the main process took 5 000 before it mapped the file (code
    pages: before its baseline)."""
    d = tmp_path / "mapped"
    d.mkdir()
    w = new(d, 100)
    if mapped:
        w.event(100, "MMAP", START + 1 * MS, 20_000, fd=3, path=data, prot=1, flags=1,
                len=1 << 30, off=0, addr=0x7f0000000000)
    w.fault(0, START + 1 * MS, 5_000, base=True, delayacct=delayacct)
    w.fault(100, START + 2 * MS, 5_000, base=True, delayacct=delayacct)
    w.fault(0, T0 + 100 * MS, 5_000, delayacct=delayacct)
    w.fault(100, T0 + 100 * MS, 5_000, delayacct=delayacct)
    for i in range(10):
        t = T0 + i * 10 * MS
        w.event(100, "POLL", t, 8 * MS, ret=1, nfds=1, timeout=5000, kinds=2, fd0=5, fd1=-1,
                fd2=-1, fd3=-1, fd4=-1, fd5=-1, fd6=-1, fd7=-1)
        w.event(100, "PIPE_READ", t + 8 * MS, 10_000, fd=5, req=1024, ret=1024)
        w.event(100, "CU_LAUNCH_KERNEL", t + 8100_000, 10_000, sym="cuLaunchKernel",
                kernel="k", sync=0, stream=0)
        w.event(100, "CU_STREAM_SYNC", t + 8200_000, 1800_000, sym="x", sync=1, stream=0)
    w.close()
    for pid in (101, 102):
        x = new(d, pid, ppid=100)
        for k in range(25):
            x.event(pid, "MUTEX_LOCK", T0 + 4 * MS * k, 1 * MS, lock=0x77)
        ns = 300 * MS if delayacct else 0
        # the process's count only, as the recorder writes it
        x.fault(0, T0, 0, delayacct=delayacct)
        x.fault(0, T0 + 100 * MS, faults, blkio_ns=ns, delayacct=delayacct)
        if thread_too:          # its main thread's own count: half
            x.fault(pid, T0, 0)
            x.fault(pid, T0 + 100 * MS, faults // 2)
        x.close()
    return str(d)


def test_workers_faulting_on_mapped_data(tmp_path):
    """The workers' 48,000 faults are the finding, naming the file the main
    process mapped (they inherit it); the main process's 5,000 faults
    before its baseline are not counted; the producers' breakdown has
    them apart from CPU, and the data cause is mapped I/O, not
    preprocessing."""
    d = loader_run(tmp_path)
    rep = report(d)
    m = rep["mapped_data"]
    assert m["major_faults"] == 48_000 and m["processes"] == 2 and m["workers"] == 2
    assert m["files"] == [DATA] and m["block_io_wait_ns"] is None
    assert m["finding"].startswith("The 2 workers took 48,000 major page faults on mapped "
                                   "data (/data/train.arrow): the data set is read from disk "
                                   "through memory maps")
    v = rep["verdict"]
    assert v["limit"] == "data delivery" and v["data_cause"] == "mapped I/O"
    assert v["detail"].startswith("The 2 workers took 48,000 major page faults on mapped "
                                  "data (/data/train.arrow)")
    assert sorted((p["pid"], p["major_faults"], p["fault_wait_ns"])
                  for p in v["producers"]) == [(101, 24_000, None), (102, 24_000, None)]
    out = text(d)
    block = out.split("Mapped data\n", 1)[1].split("\n\n", 1)[0]
    assert " ".join(block.split()).startswith(
        "The 2 workers took 48,000 major page faults on mapped data (/data/train.arrow)")
    assert "page cache" in block


def test_workers_counted_as_processes(tmp_path):
    """Workers whose threads have counts of their own (the recorder's
    samples of each thread): a worker producer's faults are still its
    process's, all its threads', and no worker thread is named."""
    rep = report(loader_run(tmp_path, thread_too=True))
    m = rep["mapped_data"]
    assert m["major_faults"] == 48_000 and m["threads"] == [] and m["more_threads"] == 0
    assert m["finding"].startswith("The 2 workers took 48,000 major page faults on mapped "
                                   "data (/data/train.arrow): the data set")
    assert sorted((p["pid"], p["major_faults"]) for p in rep["verdict"]["producers"]) == \
        [(101, 24_000), (102, 24_000)]


def test_fault_time_from_delay_accounting(tmp_path):
    """A trace whose process samples carry the kernel's delay accounting
    (the format allows it; this recorder puts it on threads' samples only,
    tests/converter/test_mapped_wait.py): the block I/O wait is the
    faults' time, in the finding and per producer."""
    rep = report(loader_run(tmp_path, delayacct=True))
    m = rep["mapped_data"]
    assert m["block_io_wait_ns"] == 600 * MS
    assert "waiting 600" in m["finding"]
    assert sorted(p["fault_wait_ns"] for p in rep["verdict"]["producers"]) == [300 * MS] * 2


def test_finding_names_the_faulting_threads(tmp_path):
    """A main process whose threads took the faults (the recorder's samples
    of each thread): the finding names the threads with the most, and how
    many more; the workers' threads are not named (workers are named as
    processes); a process where one thread took them all is not split."""
    d = tmp_path / "threads"
    d.mkdir()
    w = new(d, 100)
    w.event(100, "MMAP", START + 1 * MS, 20_000, fd=3, path=DATA, prot=1, flags=1,
            len=1 << 30, off=0, addr=0x7f0000000000)
    w.fault(0, START + 1 * MS, 10, base=True)
    w.fault(100, START + 1 * MS, 10, base=True)
    counts = {101: 9_000, 102: 7_000, 103: 5_000, 104: 3_000, 105: 2_000, 106: 1_000}
    for tid in counts:
        w.thread(tid, "loader-%d" % (tid - 100))
        w.fault(tid, START + 2 * MS, 0)
    w.fault(100, T0 + 200 * MS, 10 + 500)
    for tid, n in counts.items():
        w.fault(tid, T0 + 200 * MS, n)
    w.fault(0, T0 + 200 * MS, 10 + 500 + sum(counts.values()))
    w.close()
    x = new(d, 200, ppid=100)
    x.thread(201, "helper")
    x.fault(0, T0, 0)
    x.fault(200, T0, 0)
    x.fault(0, T0 + 100 * MS, 4_000)
    x.fault(200, T0 + 100 * MS, 4_000)
    x.close()
    m = report(str(d))["mapped_data"]
    assert m["major_faults"] == 27_500 + 4_000 and m["processes"] == 2
    assert [(t["pid"], t["tid"], t["name"], t["major_faults"]) for t in m["threads"]] == [
        (100, 101, "loader-1", 9_000), (100, 102, "loader-2", 7_000),
        (100, 103, "loader-3", 5_000), (100, 104, "loader-4", 3_000)]
    assert m["more_threads"] == 3
    assert m["finding"].startswith(
        "2 processes took 31,500 major page faults on mapped data (/data/train.arrow), in "
        "threads loader-1 (9,000), loader-2 (7,000), loader-3 (5,000), loader-4 (3,000) "
        "and 3 more: the data set is read")


def test_no_data_file_mapped_no_finding(tmp_path):
    """Faults in processes that mapped no data file (none, or only code)
    are not on mapped data: no finding, the cause stays preprocessing."""
    for mapped, data in ((False, DATA), (True, "/usr/lib/python3/dist-packages/x.so")):
        sub = tmp_path / ("m%d" % len(data))
        sub.mkdir()
        rep = report(loader_run(sub, mapped=mapped, data=data))
        assert rep["mapped_data"] is None
        assert rep["verdict"]["data_cause"] == "preprocessing"
        assert "Mapped data" not in text(str(sub / "mapped"))


def test_few_faults_no_finding(tmp_path):
    """Under 8 faults in all: counted, no finding, no change of cause."""
    rep = report(loader_run(tmp_path, faults=3))
    assert rep["mapped_data"]["major_faults"] == 6 and rep["mapped_data"]["finding"] is None
    assert rep["verdict"]["data_cause"] == "preprocessing"
