"""Phases and optimizer steps from the Python-side instrumentation's
ranges (converter/analyse/phases.c; docs/ANALYSES.md, "Phases"), on synthetic
traces with the timing planted: what the verdict says of a loop that
loads its own data, of one whose workers keep up, which steps count, and
what diff compares."""
import json
import subprocess

from conftest import TOOL
import ftgen

MS = 1000000
START = 10 ** 12
GETITEM = "DatasetFolder.__getitem__"


def nxt(loader, it, workers, dataset):
    return "feedtrace:next loader=%d it=%d workers=%d dataset=%s getitem=%s" % (
        loader, it, workers, dataset, GETITEM if dataset == "ImageFolder" else dataset + ".__getitem__")


class Loop:
    """One process's loop on thread 100: phases of batches, each batch a
    __next__ range (with a file read inside it), then compute, then (in
    training) an optimizer step."""

    def __init__(self, path, step_ranges=False):
        self.w = ftgen.TraceFile(path, 100, ["python3", "train.py"])
        self.w.thread(100, "main", main=True)
        self.t = START
        self.it = 0
        self.step_ranges = step_ranges

    def phase(self, loader, workers, dataset, batches, next_ms, io_ms, compute_ms, train,
              stop=True):
        self.it += 1
        name = nxt(loader, self.it, workers, dataset)
        w = self.w
        for _ in range(batches):
            if train and self.step_ranges:
                w.event(100, "RANGE_PUSH", self.t, 0, name="step", level=0, api=2)
            lvl = 1 if train and self.step_ranges else 0
            w.event(100, "RANGE_PUSH", self.t, 0, name=name, level=lvl, api=2)
            if io_ms:
                w.event(100, "READ", self.t + MS, io_ms * MS, fd=7, path="/data/img.jpg",
                        req=65536, ret=65536)
            self.t += next_ms * MS
            w.event(100, "RANGE_POP", self.t, 0, level=lvl, api=2)
            self.t += compute_ms * MS
            if train:
                w.event(100, "MARK", self.t, 0, name="feedtrace:optimizer.step SGD", api=2)
                if self.step_ranges:
                    w.event(100, "RANGE_POP", self.t, 0, level=0, api=2)
        if stop:
            w.event(100, "RANGE_PUSH", self.t, 0, name=name, level=0, api=2)
            w.event(100, "MARK", self.t + MS, 0, name="feedtrace:stop", api=2)
            self.t += 30 * MS
            w.event(100, "RANGE_POP", self.t, 0, level=0, api=2)
        self.t += 500 * MS                    # between phases: iter(), logging

    def close(self):
        self.w.close()


def report(d):
    r = subprocess.run([TOOL, "report", "--json", str(d)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    t = subprocess.run([TOOL, "report", str(d)], capture_output=True, text=True, timeout=60)
    return json.loads(r.stdout), " ".join(t.stdout.split())     # lines unwrapped


def self_loading(d, step_ranges=False, epochs=2):
    """Training (10 batches of 61 ms in __next__, 20 ms of it a file read,
    then 39 ms of compute and the optimizer step) and evaluation (4 slow
    batches) each epoch, num_workers=0."""
    d.mkdir()
    lp = Loop(str(d / "host.100.ft"), step_ranges)
    for _ in range(epochs):
        lp.phase(1, 0, "ImageFolder", 10, 61, 20, 39, True)
        lp.phase(2, 0, "ValSet", 4, 200, 0, 5, False)
    lp.close()


def test_self_loading_loop(tmp_path):
    """Steps are the 20 optimizer steps of the two training phases, each
    exactly 100 ms (evaluation and the time between phases in none); the
    verdict names the main process's own loading, on the CPU, in the
    dataset's __getitem__, and how many workers to use."""
    self_loading(tmp_path / "run")
    rep, text = report(tmp_path / "run")
    m, v = rep["metrics"], rep["verdict"]
    assert (m["steps"], m["steps_from"], m["step_ns"], m["step_median_ns"]) == \
        (20, "optimizer", 20 * 100 * MS, 100 * MS)
    assert v["limit"] == "data delivery"
    assert v["sentence"] == (
        "No GPU work was recorded; the loop waits for data 61% of each step: the main process "
        "loads it itself (num_workers=0), mostly on the CPU in DatasetFolder.__getitem__ (file "
        "I/O 20%, CPU 41% of each step): use DataLoader workers (num_workers=2 or more).")
    assert v["data_cause"] == "preprocessing"
    ph = v["phases"]
    assert (ph["tid"], ph["count"], ph["train"]) == (100, 4, 2)
    assert [(p["kind"], p["loader"], p["iterator"], p["batches"], p["steps"], p["next_ns"],
             p["next_io_ns"], p["end_ns"] - p["start_ns"]) for p in ph["list"]] == [
        ("train", 1, 1, 10, 10, 610 * MS, 200 * MS, 1000 * MS),
        ("eval", 2, 2, 4, 0, 800 * MS, 0, 4 * 205 * MS - 5 * MS),
        ("train", 1, 3, 10, 10, 610 * MS, 200 * MS, 1000 * MS),
        ("eval", 2, 4, 4, 0, 800 * MS, 0, 4 * 205 * MS - 5 * MS)]
    assert ph["training"] == {"steps": 20, "step_ns": 2000 * MS, "next_ns": 1220 * MS,
                              "next_io_ns": 400 * MS, "data_wait_share": 0.61, "workers": 0,
                              "dataset": "ImageFolder", "getitem": GETITEM}
    # the window: the first training phase (the evaluation pass after it out)
    assert (v["window"]["start_ns"], v["window"]["end_ns"], v["window"]["from"]) == \
        (START, START + 1000 * MS, "steps")
    assert "20 steps (no \"step\" ranges: one per optimizer step of the training phases, " \
           "thread 100 of the main process)" in text
    assert "train loader 1 ImageFolder, 0 workers: 10 steps, 10 batches, 1.00 s, data wait " \
           "61%" in text


def test_file_io_in_getitem(tmp_path):
    """Most of __next__ in file reads: the sentence says file I/O, the
    cause is I/O."""
    d = tmp_path / "run"
    d.mkdir()
    lp = Loop(str(d / "host.100.ft"))
    lp.phase(1, 0, "Shards", 12, 50, 40, 50, True)
    lp.close()
    v = report(d)[0]["verdict"]
    assert v["sentence"] == (
        "No GPU work was recorded; the loop waits for data 50% of each step: the main process "
        "loads it itself (num_workers=0), mostly in file I/O in Shards.__getitem__ (file I/O "
        "40%, CPU 10% of each step): use DataLoader workers (num_workers=1 or more).")
    assert v["data_cause"] == "I/O"


def test_workers_keep_up(tmp_path):
    """With 4 workers the loop waits 10% of each step: the feed keeps up,
    whatever the evaluation passes waited."""
    d = tmp_path / "run"
    d.mkdir()
    lp = Loop(str(d / "host.100.ft"))
    for _ in range(3):
        lp.phase(1, 4, "ImageFolder", 8, 10, 0, 90, True)
        lp.phase(2, 4, "ValSet", 3, 900, 0, 10, False)
    lp.close()
    rep = report(d)[0]
    v = rep["verdict"]
    assert (rep["metrics"]["steps"], v["limit"]) == (24, "none")
    assert v["sentence"] == ("No GPU work was recorded and the data feed keeps up: the loop "
                             "waits for data 10% of each step (time in the DataLoader's "
                             "__next__).")
    assert [p["kind"] for p in v["phases"]["list"]] == ["train", "eval"] * 3
    # the training phase with most steps: its loader's workers and window
    assert (v["phases"]["training"]["workers"], v["phases"]["training"]["dataset"]) == \
        (4, "ImageFolder")


def test_no_stop_mark_and_mid_epoch_validation(tmp_path):
    """A training iterator left before its end (no StopIteration) and a
    validation pass in the middle of an epoch: the training phase resumes
    as a phase of its own; steps count only training batches."""
    d = tmp_path / "run"
    d.mkdir()
    lp = Loop(str(d / "host.100.ft"))
    lp.it = 0
    name = nxt(1, 1, 2, "ImageFolder")
    w = lp.w
    t = START
    for k in range(10):
        if k == 5:                          # validation with another loader, mid-epoch
            for _ in range(3):
                w.event(100, "RANGE_PUSH", t, 0, name=nxt(2, 2, 2, "ValSet"), level=0, api=2)
                t += 100 * MS
                w.event(100, "RANGE_POP", t, 0, level=0, api=2)
            t += 50 * MS
        w.event(100, "RANGE_PUSH", t, 0, name=name, level=0, api=2)
        t += 30 * MS
        w.event(100, "RANGE_POP", t, 0, level=0, api=2)
        t += 70 * MS
        w.event(100, "MARK", t, 0, name="feedtrace:optimizer.step Adam", api=2)
    lp.close()
    rep = report(d)[0]
    ph = rep["verdict"]["phases"]
    assert [(p["kind"], p["iterator"], p["batches"], p["steps"]) for p in ph["list"]] == \
        [("train", 1, 5, 5), ("eval", 2, 3, 0), ("train", 1, 5, 5)]
    assert (rep["metrics"]["steps"], rep["metrics"]["step_ns"]) == (10, 1000 * MS)
    assert ph["training"]["data_wait_share"] == 0.3


def test_step_ranges_win(tmp_path):
    """A program's own "step" ranges stay its steps; the phases are listed."""
    self_loading(tmp_path / "run", step_ranges=True)
    rep, text = report(tmp_path / "run")
    assert (rep["metrics"]["steps"], rep["metrics"]["steps_from"]) == (20, "ranges")
    assert rep["verdict"]["phases"]["count"] == 4
    assert '20 steps ("step" ranges)' in text


def test_diff_compares_training_steps(tmp_path):
    """diff's values are the training steps only, and its conclusion says so."""
    for name, next_ms in (("before", 61), ("after", 11)):
        d = tmp_path / name
        d.mkdir()
        lp = Loop(str(d / "host.100.ft"))
        for _ in range(2):
            lp.phase(1, 0, "ImageFolder", 10, next_ms, 0, 39, True)
            lp.phase(2, 0, "ValSet", 4, 2000, 0, 5, False)
        lp.close()
    r = subprocess.run([TOOL, "diff", str(tmp_path / "before"), str(tmp_path / "after"),
                        "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["change"]["verdict"] == "faster"
    assert "over 20 and 20 steps in 1 and 1 run (training steps only: one per optimizer " \
           "step, evaluation passes left out)" in j["conclusion"]


def test_many_epochs(tmp_path):
    """Ten epochs: the first 16 phases listed, the other 4 counted by kind;
    the steps are all 100 training steps; the window is the first epoch's."""
    d = tmp_path / "run"
    d.mkdir()
    lp = Loop(str(d / "host.100.ft"))
    for _ in range(10):
        lp.phase(1, 0, "ImageFolder", 10, 61, 20, 39, True)
        lp.phase(2, 0, "ValSet", 1, 200, 0, 5, False)
    lp.close()
    rep, text = report(d)
    ph = rep["verdict"]["phases"]
    assert (ph["count"], ph["train"], len(ph["list"])) == (20, 10, 16)
    assert rep["metrics"]["steps"] == 100
    assert ph["training"]["data_wait_share"] == 0.61
    assert rep["verdict"]["window"]["end_ns"] - rep["verdict"]["window"]["start_ns"] == 1000 * MS
    assert "and 4 more (2 train, 2 eval)" in text


def gpu_self_loading(d, steps=20):
    """A GPU loop with num_workers=0: each step's __next__ loads the batch on
    the CPU for 30 ms (no traced call inside), then 3 launches and the loss
    read (an explicit 5 ms copy back), then the optimizer step."""
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["python3", "train.py"])
    w.thread(100, "main", main=True)
    t = START
    name = nxt(1, 1, 0, "ImageFolder")
    for _ in range(steps):
        w.event(100, "RANGE_PUSH", t, 0, name=name, level=0, api=2)
        t += 30 * MS
        w.event(100, "RANGE_POP", t, 0, level=0, api=2)
        for k in range(3):
            w.event(100, "CU_LAUNCH_KERNEL", t + k * 20000, 10000, sym="cuLaunchKernel",
                    kernel="k", sync=0, stream=0)
        t += 100000
        w.event(100, "CU_MEMCPY_DTOH", t, 5 * MS, sym="cuMemcpyDtoH_v2", dir=2, sync=1,
                stream=0)
        t += 5 * MS
        w.event(100, "MARK", t, 0, name="feedtrace:optimizer.step SGD", api=2)
    w.close()


def test_gpu_loop_loading_its_own_data(tmp_path):
    """The GPU's idle time inside __next__ is the loop loading its data, not
    CPU between launches: the verdict is data delivery (issue 30, seen on
    an H200 with num_workers=0: 'work submission', 'launch-bound')."""
    gpu_self_loading(tmp_path / "run")
    rep, text = report(tmp_path / "run")
    v = rep["verdict"]
    assert v["limit"] == "data delivery", text
    idle = v["gpu"]["idle_by_feed"]
    assert idle["data_wait"] > 0.9 * v["gpu"]["idle_ns"], idle
    assert idle["other_cpu"] < 0.05 * v["gpu"]["idle_ns"], idle
    assert not [f for f in rep["findings"] if f["kind"] == "launch_bound"], rep["findings"]
    assert ("The loop waits for data 85% of each step: the main process loads it itself "
            "(num_workers=0), mostly on the CPU in DatasetFolder.__getitem__ (file I/O 0%, "
            "CPU 85% of each step): use DataLoader workers (num_workers=6 or more).") in text
