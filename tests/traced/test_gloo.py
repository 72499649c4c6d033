"""gloo collectives are recorded (shim/gloo.c) when the program reaches
libgloo through a library it loaded RTLD_LOCAL, as Python loads torch's
(a stand-in libgloo and process group: tests/gloo/), with the options'
context as the communicator; the real function runs; and the training
thread's condition waits for the collective's worker read as waits for
other ranks in the verdict, in a process that is no launcher's rank (the
first pass is asked for by libgloo being loaded)."""
import os
import re
import subprocess

import pytest

from conftest import BUILD, TOOL, make, report_json

STEPS, DELAY_US = 20, 20000


@pytest.fixture(scope="module")
def gloo_prog():
    prog = os.path.join(BUILD, "tests", "gloo", "gloo_prog")
    make(prog)
    return prog


def test_gloo_collectives_recorded_through_a_local_library(traced, gloo_prog):
    r = traced([gloo_prog, str(STEPS), str(DELAY_US)])
    assert r.returncode == 0, r.stderr
    m = re.match(r"ctx=(0x[0-9a-f]+) calls=(\d+)\n$", r.stdout)
    assert m and int(m.group(2)) == STEPS + 1          # the real functions ran
    ar = r.trace.calls("gloo::allreduce")
    assert len(ar) == STEPS
    assert {e["args"]["comm"] for e in ar} == {m.group(1)}
    # the context's rank and size (its first members in this gloo's layout)
    assert {(e["args"]["rank"], e["args"]["size"]) for e in ar} == {(0, 2)}
    assert all(e["dur_ns"] >= DELAY_US * 1000 for e in ar)
    [b] = r.trace.calls("gloo::barrier")
    assert b["args"]["comm"] == m.group(1)
    # the all-reduces run on the worker thread, the barrier on the main one
    assert {e["tid"] for e in ar} != {b["tid"]} and b["tid"] == b["pid"]


def test_waits_for_the_collective_are_waits_for_other_ranks(traced, gloo_prog):
    r = traced([gloo_prog, str(STEPS), str(DELAY_US)])
    assert r.returncode == 0, r.stderr
    pid = r.trace.calls("gloo::barrier")[0]["pid"]
    rep = report_json(r.dir)
    v = rep["verdict"]
    assert v["limit"] == "other ranks" and v["feeding_threads"] == [pid]
    # the window: from the first batch read off the pipe to the last
    reads = [e for e in r.trace.calls("read") if e["tid"] == pid and e["args"]["ret"] == 4]
    assert len(reads) == STEPS
    w0 = reads[0]["ts_ns"] + reads[0]["dur_ns"]
    w1 = reads[-1]["ts_ns"] + reads[-1]["dur_ns"]
    assert v["window"]["end_ns"] - v["window"]["start_ns"] == w1 - w0
    waits = 0
    for e in r.trace.calls("pthread_cond_wait"):
        if e["tid"] == pid:
            s, t = max(e["ts_ns"], w0), min(e["ts_ns"] + e["dur_ns"], w1)
            waits += max(0, t - s)
    assert waits > (STEPS - 1) * DELAY_US * 1000
    assert v["time_ns"]["other_ranks"] == waits
    assert v["time_ns"]["data_wait"] == sum(e["dur_ns"] for e in reads[1:])
    # the worker's waits for work are not batches: it does not feed
    text = subprocess.run([TOOL, "report", r.dir], capture_output=True, text=True).stdout
    assert "the process waits for other ranks" in " ".join(text.split())
