"""`feedtrace convert`: traces of synthetic CUDA runs (tests/ftgen.py) into
Perfetto; exact slice and finding counts checked with
tests/check_pftrace.py, then loaded in Perfetto's trace processor
(tests/perfetto_load.sh; skipped only when it exits 77). Real programs
(tests/progs/conv_*.c): tests/traced/test_convert_programs.py."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, TOOL
START = 10 ** 12           # ftgen traces start here
import ftgen

CHECK = os.path.join(ROOT, "tests", "check_pftrace.py")
LOAD = os.path.join(ROOT, "tests", "perfetto_load.sh")
MS = 1_000_000


def convert(d, *extra, ok=True):
    out = d.rstrip("/") + ".pftrace"
    r = subprocess.run([TOOL, "convert", d, "-o", out] + list(extra), capture_output=True,
                       text=True, timeout=300)
    if ok:
        assert r.returncode == 0, r.stderr
    return out, r


def check_names(path, expect, extra=()):
    argv = [sys.executable, CHECK, path] + list(extra)
    for name, n in expect.items():
        argv += ["--expect-name", "%s=%d" % (name, n)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def load(path, *queries):
    """Rows of each query (one list per query), or skip without a trace processor."""
    argv = [LOAD, path]
    for q in queries:
        argv += ["--query", q]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if r.returncode == 77:
        pytest.skip("Perfetto trace processor not obtainable: " + r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 import error(s)" in r.stdout, r.stdout
    return [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]


def cuda_steps(path, steps=10, pid=100, hidden=True, read_ms=5):
    """A feeding thread: 5 launches, a DtoH copy (a hidden sync when `hidden`),
    then read_ms of 4 KiB reads, per step."""
    w = ftgen.TraceFile(path, pid, ["train", "--steps", str(steps)])
    w.thread(pid, "main", True)
    t = w.start + MS
    for _ in range(steps):
        for k in range(5):
            w.event(pid, "CU_LAUNCH_KERNEL", t, 10_000, sym="cuLaunchKernel", kernel="k%d" % k,
                    sync=0, stream=0x10, gx=64, gy=1, gz=1, bx=256, by=1, bz=1)
            t += 20_000
        if hidden:
            w.event(pid, "CU_MEMCPY_DTOH", t, 2 * MS, sym="cuMemcpyDtoH_v2", dir=2, sync=2,
                    stream=0x10, bytes=4, pinned=0)
            t += 2 * MS
        else:
            w.event(pid, "CU_MEMCPY_DTOH_ASYNC", t, 5_000, sym="cuMemcpyDtoHAsync_v2", dir=2,
                    sync=0, stream=0x10, bytes=4, pinned=1)
            t += 10_000
        for _ in range(read_ms * 2):
            w.event(pid, "READ", t, 400_000, fd=3, path="/data/x", req=4096, ret=4096)
            t += 500_000
    return w


def test_cuda_gaps_hidden_syncs_flows(tmp_path):
    d = tmp_path / "cuda"
    d.mkdir()
    cuda_steps(str(d / "host.100.ft")).close()
    out, r = convert(str(d))
    assert "10 flows" in r.stderr
    check_names(out, {"cuLaunchKernel": 50, "cuMemcpyDtoH": 20, "launch gap": 9,
                      "hidden sync": 1, "read": 100}, ["--expect-flows", "10"])
    rows = load(out,
                "select t.name as track, count(*) as n from slice s join track t "
                "on s.track_id = t.id where s.name not in ('read', 'cuLaunchKernel') group by 1",
                "select count(*) as flows from flow f join slice a on f.slice_out = a.id "
                "join slice b on f.slice_in = b.id where a.name = 'cuLaunchKernel' "
                "and b.name = 'cuMemcpyDtoH' and a.ts + a.dur <= b.ts",
                "select distinct a.display_value as cause from slice s join args a "
                "using(arg_set_id) where s.name = 'launch gap' and a.key = 'debug.cause'",
                "select distinct a.display_value as sync from slice s join args a "
                "using(arg_set_id) where s.name = 'cuMemcpyDtoH' and a.key = 'debug.sync'",
                "select count(*) as counters from counter_track where name in "
                "('kernel launches per ms', 'bytes read per ms', 'reads per ms', "
                "'outstanding async work')")
    assert {"track": "syncs", "n": 10} in rows
    assert {"track": "launch gaps", "n": 9} in rows
    assert {"track": "hidden syncs", "n": 1} in rows
    assert {"flows": 10} in rows
    assert {"cause": "file I/O"} in rows and len([r for r in rows if "cause" in r]) == 1
    assert {"sync": "hidden sync"} in rows
    assert {"counters": 4} in rows


def test_fixed_cuda_twin_has_no_findings(tmp_path):
    d = tmp_path / "cuda"
    d.mkdir()
    cuda_steps(str(d / "host.100.ft"), hidden=False, read_ms=0).close()
    out, r = convert(str(d))
    check_names(out, {"launch gap": 0, "hidden sync": 0, "cuMemcpyDtoHAsync": 10},
                ["--expect-flows", "0"])


def two_syncing_threads(path, rounds):
    """Threads 7 and 8 of pid 7, each launching then syncing its own stream
    every 10 ms (8 one ms after 7), chunks flushed every 50 ms."""
    w = ftgen.TraceFile(path, 7, ["mt"], flush_ns=50 * MS)
    for tid in (7, 8):
        w.thread(tid, "t%d" % tid)
    for i in range(rounds):
        for tid, s in ((7, 0x100), (8, 0x200)):
            t = w.start + i * 10 * MS + (tid - 7) * MS
            w.event(tid, "CU_LAUNCH_KERNEL", t, 50_000, sym="cuLaunchKernel", kernel="k",
                    sync=0, stream=s)
            w.event(tid, "CU_STREAM_SYNC", t + 100_000, 3 * MS, sym="cuStreamSynchronize",
                    sync=1, stream=s)
    return w


def test_threads_merge_and_sync_lanes(tmp_path):
    """Two threads syncing at overlapping times, chunks flushed every 50 ms: their
    syncs share no lane;
    every slice nests (check_pftrace) and Perfetto imports it cleanly."""
    d = tmp_path / "mt"
    d.mkdir()
    two_syncing_threads(str(d / "host.7.ft"), 20).close()
    out, _ = convert(str(d))
    # each stream idles ~7 ms after each sync: 19 gaps per stream, the
    # identical per-thread gaps are not repeated
    check_names(out, {"cuStreamSynchronize": 80, "cuLaunchKernel": 40, "launch gap": 38})
    rows = load(out, "select t.name as track, count(distinct t.id) as lanes, count(*) as n "
                     "from slice s join track t on s.track_id = t.id where t.name = 'syncs' "
                     "group by 1")
    assert {"track": "syncs", "lanes": 2, "n": 40} in rows


def test_dropped_events_reported(tmp_path):
    d = tmp_path / "lost"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.5.ft"), 5, ["lossy"])
    w.thread(5, "main")
    w.event(5, "READ", w.start + MS, 1000, fd=3, path="/x", req=10, ret=10)
    w.close(lost={5: 1234})
    out, r = convert(str(d))
    assert "dropped 1234 events" in r.stderr


# ---- bad input ----

def good_file(path, pid=9, n=200):
    w = ftgen.TraceFile(path, pid, ["good"], flush_ns=MS)
    w.thread(pid, "main")
    for i in range(n):
        w.event(pid, "READ", w.start + i * 100_000, 1000, fd=3, path="/x", req=10, ret=10)
    return w


def test_truncated_and_corrupted(tmp_path):
    d = tmp_path / "bad"
    d.mkdir()
    w = good_file(str(d / "host.9.ft"))
    chunks = w.chunks()
    ev = [i for i, c in enumerate(chunks) if c[0] == 1]
    assert len(ev) == 20                  # 10 reads per chunk
    w.close(chunks=chunks)
    data = bytearray(open(str(d / "host.9.ft"), "rb").read())
    # corrupt one byte inside the payload of the 3rd events chunk
    off, bad_at = 256, None
    for i, (ctype, payload) in enumerate(chunks):
        if i == ev[2]:
            bad_at = off
            data[off + 24 + 40] ^= 0xFF
        off += 24 + len(payload)
    cut = len(data) - 30                  # and cut the file inside the END chunk
    open(str(d / "host.9.ft"), "wb").write(bytes(data[:cut]))
    out, r = convert(str(d))
    assert "host.9.ft: offset %d:" % bad_at in r.stderr and "checksum" in r.stderr
    assert "host.9.ft: offset" in r.stderr and "cut off" in r.stderr or "ends" in r.stderr
    check_names(out, {"read": 190})


def test_other_version_and_unrelated(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    good_file(str(d / "host.9.ft")).close()
    w = ftgen.TraceFile(str(d / "host.10.ft"), 10, ["v2"], version=2)
    w.close()
    (d / "notes.txt").write_text("hello")
    (d / "junk.ft").write_bytes(os.urandom(4096))
    out, r = convert(str(d))
    assert "host.10.ft: offset 8: format version 2" in r.stderr
    assert "junk.ft: offset 0: not a feedtrace file" in r.stderr
    check_names(out, {"read": 200})


def test_nothing_usable(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    _, r = convert(str(empty), ok=False)
    assert r.returncode == 1 and "no trace files" in r.stderr
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.ft").write_bytes(b"x" * 1000)
    (other / "b.txt").write_text("x")
    _, r = convert(str(other), ok=False)
    assert r.returncode == 1 and "a.ft: offset 0: not a feedtrace file" in r.stderr
    _, r = convert(str(tmp_path / "missing"), ok=False)
    assert r.returncode == 1 and "missing" in r.stderr


def test_finding_slices_span_their_bursts(tmp_path):
    """One lock waited on 3 times at 0 ms, 4 times at 2 s and twice at 5 s
    (200 us each, 1 ms apart within a burst): three "lock contention"
    slices, each exactly from its first wait's start to its last wait's
    end, with its own counts and the lock's totals; not one slice of 5 s."""
    d = tmp_path / "run"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["prog"])
    w.thread(100, "main", main=True)
    w.thread(101, "t2")
    bursts = [(0, 3), (2000, 4), (5000, 2)]
    for at_ms, n in bursts:
        for i in range(n):
            w.event(101, "MUTEX_LOCK", START + (at_ms + i) * 1_000_000, 200_000, slots=1,
                    lock=0x5000, ret=0)
    w.close()
    out = str(tmp_path / "t.pftrace")
    r = subprocess.run([TOOL, "convert", "-o", out, str(d)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = load(out, "select s.ts, s.dur, a.key as k, a.int_value as v from slice s join args a "
                     "using(arg_set_id) where s.name = 'lock contention' and "
                     "a.key in ('debug.waits_here', 'debug.waits') order by s.ts, a.key")
    t0 = min(x["ts"] for x in rows)
    got = sorted({(x["ts"] - t0, x["dur"]) for x in rows})
    assert got == [((at - bursts[0][0]) * 1_000_000, (n - 1) * 1_000_000 + 200_000)
                   for at, n in bursts]
    here = [x["v"] for x in rows if x["k"] == "debug.waits_here"]
    assert here == [3, 4, 2]
    assert {x["v"] for x in rows if x["k"] == "debug.waits"} == {9}


def test_storm_counter_per_data_set(tmp_path):
    """A storm of 2 000 small reads of /data/set/*, 2 every millisecond for
    one second: a counter "small reads/s: /data/set" on its process, 2 000
    in each 100 ms bin of the storm, then 0."""
    d = tmp_path / "run"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["prog"])
    w.thread(100, "main", main=True)
    t0 = START + 100_000_000                # a bin's start (bins from 0 ns)
    for i in range(2000):
        w.event(100, "READ", t0 + i * 500_000, 20_000, fd=3, req=4096, ret=4096,
                path="/data/set/f%03d" % (i // 10))
    w.close()
    out = str(tmp_path / "t.pftrace")
    r = subprocess.run([TOOL, "convert", "-o", out, str(d)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = load(out, "select c.ts, c.value from counter c join counter_track t on c.track_id = "
                     "t.id where t.name = 'small reads/s: /data/set' order by c.ts")
    assert [x["value"] for x in rows] == [2000] * 10 + [0]
    assert [x["ts"] - rows[0]["ts"] for x in rows] == [i * 100_000_000 for i in range(11)]
