"""The timeline as a user opens it (issue 13): processes named by role
and linked to their parent in Perfetto's trace processor (`process.name`,
`process.parent_upid`), on real Debian PyTorch with DataLoader workers
and on a C program whose children are helpers."""
import os
import subprocess

import pytest

from conftest import PYTHON, TOOL
from test_convert import load

LOOP = r'''
import sys, torch
from torch.utils.data import DataLoader, Dataset
class D(Dataset):
    def __len__(self): return 64
    def __getitem__(self, i): return torch.full((4,), float(i))
if __name__ == "__main__":
    print(sum(1 for _ in DataLoader(D(), batch_size=8, num_workers=int(sys.argv[1]))))
'''

QUERY = ("select p.pid, p.name, pp.pid as parent from process p "
         "left join process pp on p.parent_upid = pp.upid where p.pid != 0 order by p.pid")


def convert(d, out):
    r = subprocess.run([TOOL, "convert", "-o", out, d], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr


@pytest.mark.skipif(not os.path.exists("/usr/lib/python3/dist-packages/torch"),
                    reason="Debian python3-torch not installed")
@pytest.mark.parametrize("workers", [2, 3])
def test_dataloader_workers_named_and_linked(traced, tmp_path, workers):
    script = tmp_path / "loop.py"
    script.write_text(LOOP)
    r = traced([PYTHON, str(script), str(workers)])
    assert r.returncode == 0 and r.stdout == "8\n", r.stderr
    procs = sorted(r.trace.procs, key=lambda p: p["pid"])
    [main] = [p for p in procs if p["ppid"] not in [q["pid"] for q in procs]]
    # in the order the main process forked them (its fork records), as
    # PyTorch numbers its workers; not by each child's trace start, which
    # under load a later child may reach first
    forked = [e["args"]["child"] for e in r.trace.calls("fork", pid=main["pid"])]
    kids = [next(p for p in procs if p["pid"] == c) for c in forked]
    assert len(kids) == workers and all(k["ppid"] == main["pid"] for k in kids)
    out = str(tmp_path / "t.pftrace")
    convert(r.dir, out)
    rows = load(out, QUERY)
    got = {x["pid"]: ((x["name"] or "").replace("\xa0", " "), x["parent"]) for x in rows}
    # its parent is not traced: linked to its pid all the same
    assert got[main["pid"]] == ("main: python3 loop.py %d" % workers, main["ppid"])
    for n, k in enumerate(kids):
        assert got[k["pid"]] == ("DataLoader worker %d (pid %d)" % (n, k["pid"]),
                                 main["pid"])
    assert len(got) == workers + 2          # and the untraced parent, unnamed
    assert got[main["ppid"]][0] == ""
    # threads by Python's names: each process's main thread, and the
    # multiprocessing queues' feeder threads (the main process puts indices
    # on one queue per worker, each worker its batches on the result queue)
    rows = load(out, "select p.pid, t.tid, t.name from thread t join process p using (upid) "
                     "where p.pid != 0")
    for p in [main] + kids:
        names = [x["name"] for x in rows if x["pid"] == p["pid"]]
        assert [x["name"] for x in rows if x["tid"] == p["pid"]] == ["MainThread"]
        assert names.count("QueueFeederThread") == (workers if p is main else 1), names


def test_helpers_named_and_linked(traced, tmp_path):
    """A C program that runs `sh -c true` twice: the main process and two
    helpers (exec'd programs are never workers), each linked to the pid
    that started it."""
    r = traced(["/bin/sh", "-c", "/bin/true; /bin/true; echo done"])
    assert r.returncode == 0 and r.stdout == "done\n", r.stderr
    out = str(tmp_path / "t.pftrace")
    convert(r.dir, out)
    rows = load(out, QUERY)
    pids = {p["pid"]: p for p in r.trace.procs}
    named = sorted(((x["name"] or "").replace("\xa0", " "), pids[x["parent"]]["exe"])
                   for x in rows if x["name"] and x["parent"] in pids)
    assert named == [("helper: true", "/usr/bin/dash"), ("helper: true", "/usr/bin/dash")], rows
    [m] = [x for x in rows if x["name"] and x["name"].startswith("main:")]
    assert m["name"].replace("\xa0", " ") == "main: sh -c true; true; echo done"
    assert m["parent"] not in pids


FLOWS = ("select s1.name as a, p1.pid as src, s2.name as b, p2.pid as dst from flow f "
         "join slice s1 on f.slice_out = s1.id join slice s2 on f.slice_in = s2.id "
         "join thread_track tt1 on s1.track_id = tt1.id join thread t1 on tt1.utid = t1.utid "
         "join process p1 on t1.upid = p1.upid "
         "join thread_track tt2 on s2.track_id = tt2.id join thread t2 on tt2.utid = t2.utid "
         "join process p2 on t2.upid = p2.upid")


@pytest.mark.skipif(not os.path.exists("/usr/lib/python3/dist-packages/torch"),
                    reason="Debian python3-torch not installed")
@pytest.mark.parametrize("workers", [2, 3])
def test_each_batch_flows_from_its_worker_to_the_main_process(traced, tmp_path, workers):
    """8 batches: 8 flows, each from a worker's write of the batch message
    into the result queue's pipe to the main process's read of it; the
    workers' index messages (the main process writing) draw none."""
    script = tmp_path / "loop.py"
    script.write_text(LOOP)
    r = traced([PYTHON, str(script), str(workers)])
    assert r.returncode == 0 and r.stdout == "8\n", r.stderr
    procs = r.trace.procs
    [main] = [p for p in procs if p["ppid"] not in [q["pid"] for q in procs]]
    kids = {p["pid"] for p in procs if p["ppid"] == main["pid"]}
    out = str(tmp_path / "t.pftrace")
    convert(r.dir, out)
    rows = load(out, FLOWS)
    assert len(rows) == 8
    assert all((x["a"], x["b"], x["dst"]) == ("write", "read", main["pid"]) for x in rows)
    assert {x["src"] for x in rows} <= kids and len({x["src"] for x in rows}) >= 2
