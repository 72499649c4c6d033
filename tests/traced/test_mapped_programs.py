"""Data read through memory maps (docs/ANALYSES.md, "Mapped data"), the
recorder's side: a real Python loader over a numpy.memmap file, and C
loaders, whose pages were dropped from the page cache first; the counts
asserted against the loader's own (getrusage), never times. The verdicts
on synthetic traces: tests/converter/test_mapped.py.
"""
import json
import os
import subprocess

import pytest

from conftest import PYTHON, TOOL, built_prog, preload, clean_env
from test_mapped import report

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


def drop_cached_file(path, pages):
    """a file of zero bytes, written to disk and dropped from the page cache"""
    with open(path, "wb") as f:
        f.write(bytes(4096 * pages))
        f.flush()
        os.fsync(f.fileno())
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


@pytest.mark.parametrize("how", ["threads", "quiet", "procs"])
def test_c_loader_faults_per_thread(tmp_path, how):
    """A C loader (tests/progs/mapped_faults.c) maps a 2,000-page file not in
    the page cache and reads a byte of each page (MADV_RANDOM), shared by
    two loaders and its main thread. Each thread's recorded faults equal
    its own count: the loader threads' from their start (the flusher reads
    each thread's stat; a thread's last count is its own as it leaves),
    the main thread's from its mapping (the mmap's baseline, the exit
    drain's own count last). Quiet loader threads, which make no traced
    call (no ring: sampled as the CPU sampler's threads are), the same.
    Forked loaders: each process's and its thread's equal the child's own
    count; no threads are named then."""
    exe = built_prog("mapped_faults")
    path = str(tmp_path / "zeros.bin")
    drop_cached_file(path, 2000)
    out = str(tmp_path / "trace")
    env = clean_env()
    env.update(LD_PRELOAD=preload(), FEEDTRACE_OUT=out)
    r = subprocess.run([exe, how, "2", path], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [l.split() for l in r.stdout.splitlines()]
    assert lines[-1] == ["sum", "0"]
    counted = {(k, int(a)): int(b) for k, a, b in lines[:-1]}
    assert len(counted) == 3 and sum(counted.values()) >= 8, counted
    print("faults counted by the loaders", counted)
    dump = subprocess.run([TOOL, "dump", "--json", "--summary", out], capture_output=True,
                          text=True, timeout=120)
    assert dump.returncode == 0, dump.stderr
    procs = {p["pid"]: p for p in (json.loads(l)["process"] for l in dump.stdout.splitlines()
                                   if l.startswith('{"process"'))}
    main_tid = [tid for (k, tid) in counted if k == "main"][0]
    faults = procs[main_tid]["faults"]
    assert faults[str(main_tid)]["majflt"] == counted[("main", main_tid)]
    rep = report(out)
    m = rep["mapped_data"]
    assert m["files"] == [path] and m["major_faults"] == sum(counted.values())
    if how in ("threads", "quiet"):
        for (k, tid), n in counted.items():
            assert faults[str(tid)]["majflt"] == n, (k, tid)
        assert set(faults) == {"0"} | {str(tid) for _, tid in counted}
        assert m["processes"] == 1
        names = {tid: ("mapped_faults" if k == "main" else None) for k, tid in counted}
        got = {t["tid"]: t for t in m["threads"]}
        assert set(got) == set(names)
        for tid, t in got.items():
            assert t["major_faults"] == counted[("main" if names[tid] else "thread", tid)]
            assert t["name"] == names[tid] or t["name"].startswith(
                "loader-" if how == "threads" else "thread ")
        assert m["finding"].startswith("The main process took %s major page faults"
                                       % format(m["major_faults"], ","))
        assert ", in threads " in m["finding"]
    else:
        for (k, pid), n in counted.items():
            if k == "proc":
                assert procs[pid]["faults"]["0"]["majflt"] == n
                assert procs[pid]["faults"][str(pid)]["majflt"] == n
        assert m["processes"] == 3 and m["threads"] == []
        assert m["finding"].startswith("3 processes took ")


def test_thread_fault_reads_take_no_program_descriptor(tmp_path):
    """The flusher reads each thread's /proc/self/task/TID/stat once a file
    is mapped (here every 10 ms, three threads), in its own table of
    descriptors: the program, opening and closing /dev/null 200,000 times
    by raw system calls meanwhile, always gets the same lowest free
    number, as untraced."""
    exe = built_prog("mapped_faults")
    path = str(tmp_path / "zeros.bin")
    drop_cached_file(path, 256)
    argv = [exe, "fds", "2", path]
    u = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert (u.returncode, u.stdout) == (0, "fds LOW\n")
    out = str(tmp_path / "trace")
    env = clean_env()
    env.update(LD_PRELOAD=preload(), FEEDTRACE_OUT=out, FEEDTRACE_FLUSH_MS="10")
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, "fds LOW\n"), r.stderr
    dump = subprocess.run([TOOL, "dump", "--json", "--summary", out], capture_output=True,
                          text=True, timeout=120)
    [p] = [json.loads(l)["process"] for l in dump.stdout.splitlines()
           if l.startswith('{"process"')]
    # the threads were sampled: a series for each (the main one and two)
    assert len([k for k in p["faults"] if k != "0"]) == 3, p["faults"]
