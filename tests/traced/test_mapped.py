"""Data read through memory maps (docs/ANALYSES.md, "Mapped data"): the
process's major page faults, sampled at every flush once it mapped a file
(libfeedtrace/faults.c), attributed to the data files the process or its
parent mapped; the finding and the producers' breakdown.

The verdicts are judged on synthetic traces (tests/ftgen.py) with the
numbers planted; the recorder on a real Python loader over a numpy.memmap
file whose pages were dropped from the page cache first, asserting the
counts against the loader's own (getrusage), never times.
"""
import json
import os
import subprocess

import pytest

import ftgen
from conftest import PYTHON, TOOL, preload, clean_env

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


def loader_run(tmp_path, mapped=True, faults=24_000, delayacct=False, data=DATA):
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


def test_fault_time_from_delay_accounting(tmp_path):
    """A trace whose samples carry the kernel's delay accounting (the
    format allows it; this recorder writes counts only): the block I/O
    wait is the faults' time, in the finding and per producer."""
    rep = report(loader_run(tmp_path, delayacct=True))
    m = rep["mapped_data"]
    assert m["block_io_wait_ns"] == 600 * MS
    assert "waiting 600" in m["finding"]
    assert sorted(p["fault_wait_ns"] for p in rep["verdict"]["producers"]) == [300 * MS] * 2


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


LOADER = r'''
import os, random, resource, sys, threading
import numpy as np

path, nworkers, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
before = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
data = np.memmap(path, dtype=np.uint8, mode="r")
pages = len(data) // 4096
order = list(range(pages))
random.Random(7).shuffle(order)

def work(w):
    total = 0
    for i in order[w::nworkers]:
        total += int(data[i * 4096])
    return total

if how == "threads":
    totals = [0] * nworkers
    def run(w):
        totals[w] = work(w)
    ths = [threading.Thread(target=run, args=(w,)) for w in range(nworkers)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    flt = resource.getrusage(resource.RUSAGE_SELF).ru_majflt - before
    print("%d %d %d" % (os.getpid(), sum(totals), flt))
    sys.stdout.flush()
    os._exit(0)
pipes = []
for w in range(nworkers):
    r, wr = os.pipe()
    if os.fork() == 0:
        os.close(r)
        total = work(w)
        flt = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
        os.write(wr, b"%d %d %d\n" % (os.getpid(), total, flt))
        os._exit(0)
    os.close(wr)
    pipes.append(r)
for r in pipes:
    sys.stdout.write(os.read(r, 100).decode())
for _ in pipes:
    os.wait()
'''


@pytest.mark.parametrize("how", ["processes", "threads"])
def test_numpy_memmap_loader(tmp_path, how):
    """Two loaders read a 256 MiB numpy.memmap file, dropped from the page
    cache first, a byte of every page in shuffled order. Forked workers:
    each one's recorded faults are those it counted itself (it inherited
    the map: its counts start at its fork). Threads of the main process:
    its faults from the mapping on are those it counted from just before
    it. The finding names the file and who took them."""
    path = str(tmp_path / "train.bin")
    block = bytes(range(256)) * 4096
    with open(path, "wb") as f:
        for _ in range(256):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    script = tmp_path / "loader.py"
    script.write_text(LOADER)
    out = str(tmp_path / "trace")
    env = clean_env()
    env.update(LD_PRELOAD=preload(), FEEDTRACE_OUT=out)
    r = subprocess.run([PYTHON, str(script), path, "2", how], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    counted = {}
    for line in r.stdout.splitlines():
        pid, total, flt = map(int, line.split())
        assert total == 0          # each page starts with byte 0 (the pattern's)
        counted[pid] = flt
    assert len(counted) == (2 if how == "processes" else 1), counted
    assert sum(counted.values()) >= 8, counted
    print("faults counted by the loaders", counted)
    dump = subprocess.run([TOOL, "dump", "--json", "--summary", out], capture_output=True,
                          text=True, timeout=120)
    assert dump.returncode == 0, dump.stderr
    procs = [json.loads(l)["process"] for l in dump.stdout.splitlines()
             if l.startswith('{"process"')]
    for p in procs:
        if p["pid"] in counted:
            assert p["faults"]["0"]["majflt"] == counted[p["pid"]]
    assert {p["pid"] for p in procs} >= set(counted)
    rep = report(out)
    m = rep["mapped_data"]
    assert m["files"] == [path] and m["major_faults"] == sum(counted.values())
    if how == "processes":
        assert m["workers"] == 2 and m["finding"].startswith("The 2 workers took ")
    else:
        assert m["processes"] == 1 and m["workers"] == 0
        assert m["finding"].startswith("The main process took ")
