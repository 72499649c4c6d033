"""Steps without code change (issue 13): with no step ranges, the batches
a Python main process receives from its DataLoader workers (one
multiprocessing message each on the result queue's pipe) mark its steps
(converter/analyse/steps.c). Real Debian PyTorch (CPU), unmodified scripts."""
import json
import os
import subprocess

import pytest

from conftest import PYTHON, ROOT, TOOL

pytestmark = pytest.mark.skipif(not os.path.exists("/usr/lib/python3/dist-packages/torch"),
                                reason="Debian python3-torch not installed")

# An unmodified training loop: a DataLoader with workers, a little compute
# per batch; nothing of feedtrace in it. SLOW makes the workers the
# bottleneck (the main process waits in poll() for each batch).
LOOP = r'''
import sys, time, torch
from torch.utils.data import DataLoader, Dataset
class D(Dataset):
    def __len__(self): return int(sys.argv[1]) * 8
    def __getitem__(self, i):
        if sys.argv[3] == "slow":
            time.sleep(0.004)
        return torch.full((16,), float(i))
if __name__ == "__main__":
    dl = DataLoader(D(), batch_size=8, num_workers=int(sys.argv[2]))
    w = torch.randn(16, 16)
    n = 0
    for x in dl:
        for _ in range(20):
            x = x @ w
        n += 1
    print("batches", n)
'''

# Python threads passing items through queue.Queue: no pipe, no batches
# received from another process: no steps.
THREADS = r'''
import queue, threading
q = queue.Queue(4)
def produce():
    for i in range(200):
        q.put(i)
    q.put(None)
threading.Thread(target=produce).start()
while q.get() is not None:
    pass
print("done")
'''


def run(traced, tmp_path, src, args):
    script = tmp_path / "loop.py"
    script.write_text(src)
    r = traced([PYTHON, str(script)] + args, load=False)
    assert r.returncode == 0, r.stderr
    rep = subprocess.run([TOOL, "report", "--json", r.dir], capture_output=True, text=True,
                         timeout=120)
    assert rep.returncode == 0, rep.stderr
    text = subprocess.run([TOOL, "report", r.dir], capture_output=True, text=True,
                          timeout=120).stdout
    return r, json.loads(rep.stdout), text


@pytest.mark.parametrize("workers,mode", [(2, "fast"), (2, "slow"), (4, "slow")])
def test_batches_are_steps(traced, tmp_path, workers, mode):
    """40 batches received: 39 steps, one from each batch's receipt to the
    next, on the main process only (the workers' index messages are not
    steps); the verdict's window is the steps; the text says where the
    steps came from."""
    batches = 40
    r, rep, text = run(traced, tmp_path, LOOP, [str(batches), str(workers), mode])
    assert r.stdout == "batches %d\n" % batches
    m = rep["metrics"]
    assert (m["steps"], m["steps_from"]) == (batches - 1, "batches")
    assert rep["verdict"]["window"]["from"] == "steps"
    main = [p for p in rep["processes"] if p["role"] == "main"]
    workers_ = [p for p in rep["processes"] if p["role"] == "worker"]
    assert len(main) == 1 and len(workers_) == workers
    assert main[0]["metrics"]["steps"] == batches - 1
    assert all(p["metrics"]["steps"] is None for p in workers_)
    # the thread by Python's name for it
    assert ("%d steps (no \"step\" ranges: one per batch received by MainThread (tid %d) of "
            "the main process)" % (batches - 1, main[0]["pid"])) in " ".join(text.split())


def test_threads_and_a_queue_have_no_steps(traced, tmp_path):
    """Items passed between Python threads (queue.Queue: condition
    variables, no pipe): no batches received from another process, no
    steps."""
    r, rep, _t = run(traced, tmp_path, THREADS, [])
    assert r.stdout == "done\n"
    assert (rep["metrics"]["steps"], rep["metrics"]["steps_from"]) == (None, None)
    assert rep["verdict"]["window"]["from"] != "steps"


TRAIN = os.path.realpath(os.path.join(ROOT, "examples", "train.py"))


def opening_line():
    """The line of examples/train.py where the broken dataset opens a file."""
    src = open(TRAIN).read().splitlines()
    at = [i for i, l in enumerate(src) if "def __getitem__" in l][0]
    return at + 1 + [i for i, l in enumerate(src[at:]) if "open(" in l][0]


# a storm window longer than any run: a storm is then a count of small reads
# (what the program did), not a rate (how fast the machine ran it: loaded,
# the workers' reads can fall under 1 000 a second); the rate's rule is
# judged on synthetic traces (tests/converter/test_storm_wall.py, ...)
WHOLE_RUN = ["--storm-window-ms", "3600000"]


@pytest.mark.parametrize("workers", [2, 4])
def test_broken_train_has_one_storm_with_its_opener(traced, tmp_path, workers):
    """examples/train.py (broken: one small file per sample, read in small
    pieces) with 2 and 4 DataLoader workers: exactly one storm, on the data
    set's directory, summed over the workers, naming the Python line that
    opened the files (captured at open); the fixed mode has none."""
    data = tmp_path / "data"
    data.mkdir()
    r = traced([PYTHON, TRAIN, "--cpu", "--steps", "20", "--workers", str(workers),
                "--data", str(data)], load=False)
    assert r.returncode == 0, r.stderr
    rep = json.loads(subprocess.run([TOOL, "report", "--json", r.dir] + WHOLE_RUN,
                                    capture_output=True, text=True, timeout=120).stdout)
    storms = [p for p in rep["problems"] if p["kind"] == "small-read storm"]
    assert len(storms) == 1, storms
    [s] = storms
    assert s["what"].startswith("%s: " % data), s["what"]
    assert s["processes"] == workers
    where = "%s:%d in __getitem__" % (TRAIN, opening_line())
    assert s["opener"].split(";")[0] == where
    # the opener ends the evidence; the wall time and the feed's wait follow it
    assert ("; opened at " + where + ";") in s["what"] + ";"
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    f = traced([PYTHON, TRAIN, "--cpu", "--fixed", "--steps", "20", "--workers", str(workers),
                "--data", str(fixed)], load=False)
    assert f.returncode == 0, f.stderr
    frep = json.loads(subprocess.run([TOOL, "report", "--json", f.dir] + WHOLE_RUN,
                                     capture_output=True, text=True, timeout=120).stdout)
    assert [p for p in frep["problems"] if p["kind"] == "small-read storm"] == []
