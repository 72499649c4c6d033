"""Slots written twice. An exit path (_exit, exec, a fatal signal) that could
not take the flush lock within its timeout drains the rings beside the
flusher, so the same slots of a thread's stream can reach the file twice.
EVENTS prefixes carry the stream id (docs/FORMAT.md); the reader reads each
slot of a stream once and counts the copies it skipped (duplicate_slots)."""
import json
import struct
import subprocess

from conftest import TOOL
from ftgen import TraceFile

TID = 100


def records(n):
    """n one-slot read records, 1 ms apart: ret = its index (0..n-1)."""
    w = TraceFile("/dev/null", pid=TID)
    recs = []
    for i in range(n):
        w.events = []
        w.event(TID, "READ", w.start + (i + 1) * 1_000_000, 500, fd=3, req=64, ret=i)
        recs.append(w.events[0][2])
    return recs


def events_chunk(recs, first, n, stream, tid=TID):
    body = b"".join(recs[first:first + n])
    return (1, struct.pack("<iIQQQ", tid, n, first, 0, stream) + body)


def write(path, events_chunks):
    w = TraceFile(str(path), pid=TID)
    w.thread(TID, "main", main=True)
    w.event(TID, "READ", w.start + 1, 1, fd=0)    # only to make w.chunks() complete
    base = [c for c in w.chunks() if c[0] != 1]   # header chunks, clock, end (no events)
    w.close(chunks=base[:-2] + events_chunks + base[-2:])


def dump(d):
    r = subprocess.run([TOOL, "dump", "--json", str(d)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    objs = [json.loads(l) for l in r.stdout.splitlines()]
    procs = [o["process"] for o in objs if "process" in o]
    evs = [o for o in objs if "process" not in o]
    assert len(procs) == 1
    return procs[0], [e["args"]["ret"] for e in evs if e["call"] == "read"]


def test_overlapping_copies_are_read_once(tmp_path):
    recs = records(10)
    # flusher: [0,4) then [4,7); exit drain beside it: [2,10); a late
    # flusher chunk [4,7) again (after the drain in file order)
    write(tmp_path / "a.ft", [events_chunk(recs, 0, 4, 7), events_chunk(recs, 4, 3, 7),
                              events_chunk(recs, 2, 8, 7), events_chunk(recs, 4, 3, 7)])
    proc, rets = dump(tmp_path)
    assert rets == list(range(10))
    assert proc["records"] == 10 and proc["duplicate_slots"] == 5 + 3
    assert proc["damaged_chunks"] == 0


def test_a_new_stream_of_the_same_tid_is_not_a_copy(tmp_path):
    recs = records(6)
    # a thread exits and a later one gets its tid back: a new ring stream
    # that starts again at slot 0
    write(tmp_path / "a.ft", [events_chunk(recs, 0, 3, 1), events_chunk(recs, 0, 3, 2),
                              events_chunk(recs, 3, 3, 2)])
    proc, rets = dump(tmp_path)
    assert rets == [0, 1, 2, 0, 1, 2, 3, 4, 5]
    assert proc["records"] == 9 and proc["duplicate_slots"] == 0


def test_stream_zero_is_never_deduplicated(tmp_path):
    recs = records(4)
    write(tmp_path / "a.ft", [events_chunk(recs, 0, 4, 0), events_chunk(recs, 0, 4, 0)])
    proc, rets = dump(tmp_path)
    assert rets == [0, 1, 2, 3, 0, 1, 2, 3]
    assert proc["records"] == 8 and proc["duplicate_slots"] == 0
