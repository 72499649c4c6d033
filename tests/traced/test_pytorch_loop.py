"""PyTorch's own loop without code change (issue 30): the Python-side
instrumentation (libfeedtrace/python/sitecustomize.py) records each
DataLoader __next__ and optimizer step; the report's steps are the
optimizer steps of the training phases, its phases the loaders'
iterations, and the verdict of a loop without GPU work the training
steps' time in __next__. Real Debian PyTorch on the CPU, an unmodified
script (tests/scripts/torch_loop.py) that prints its own clock as the
truth. The data is made slow (a CPU-heavy __getitem__, or slow storage:
tests/slowread) so that the wait for data is most of each step, whatever
else runs on the machine."""
import json
import os
import subprocess

import pytest

from conftest import BUILD, LIB, PYTHON, ROOT, TOOL, clean_env, make, preload

pytestmark = pytest.mark.skipif(not os.path.exists("/usr/lib/python3/dist-packages/torch"),
                                reason="Debian python3-torch not installed")

SCRIPT = os.path.join(ROOT, "tests", "scripts", "torch_loop.py")
EPOCHS, BATCHES, VAL = 2, 8, 3
SLOW_US = 6000


@pytest.fixture(scope="module")
def slowread():
    so = os.path.join(BUILD, "tests", "slowread.so")
    make(so)
    return so


def data_dir(tmp_path):
    d = tmp_path / "slowdata"
    d.mkdir()
    for i in range(8):
        (d / ("item%d.bin" % i)).write_bytes(bytes(4096))
    return str(d)


def loop(tmp_path, workers, mode, slowread=None, extra=(), env=None):
    """Runs the loop traced; its own numbers, the report's JSON and text."""
    out = str(tmp_path / ("trace-%d-%s" % (workers, mode)))
    e = clean_env("LD_PRELOAD")
    e["FEEDTRACE_OUT"] = out
    e["LD_PRELOAD"] = preload(LIB, slowread) if slowread else preload()
    e["SLOWREAD_MATCH"], e["SLOWREAD_US"] = "slowdata", str(SLOW_US)
    e.update(env or {})
    r = subprocess.run([PYTHON, SCRIPT, str(workers), mode, str(EPOCHS), str(BATCHES),
                        data_dir(tmp_path)] + list(extra), env=e, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    words = r.stdout.split()
    assert words[0] == "steps" and words[2] == "data", r.stdout
    rep = subprocess.run([TOOL, "report", "--json", out], capture_output=True, text=True,
                         timeout=120)
    assert rep.returncode == 0, rep.stderr
    text = subprocess.run([TOOL, "report", out], capture_output=True, text=True,
                          timeout=120).stdout
    return int(words[1]), float(words[3]), json.loads(rep.stdout), text, out


@pytest.mark.parametrize("workers,mode", [(0, "cpu"), (0, "io"), (1, "cpu"), (2, "io"), (4, "cpu")])
def test_loop_steps_phases_and_data_wait(tmp_path, slowread, workers, mode):
    """Steps are exactly the optimizer steps; four phases (train, eval,
    train, eval) with their batches; the verdict is data delivery, its
    share of each step within a few points of the script's own clock; with
    no workers the sentence says the main process loads the data, on the
    CPU or in file I/O, in the dataset's __getitem__."""
    steps, own, rep, text, _ = loop(tmp_path, workers, mode, slowread if mode == "io" else None)
    assert steps == EPOCHS * BATCHES
    m, v = rep["metrics"], rep["verdict"]
    assert (m["steps"], m["steps_from"]) == (steps, "optimizer")
    ph = v["phases"]
    assert [(p["kind"], p["batches"], p["steps"], p["workers"], p["dataset"]) for p in ph["list"]] == \
        [("train", BATCHES, BATCHES, workers, "TrainSet"), ("eval", VAL, 0, workers, "ValSet")] * EPOCHS
    assert [p["loader"] for p in ph["list"]] == [1, 2, 1, 2]
    assert len({p["iterator"] for p in ph["list"]}) == 4
    tr = ph["training"]
    assert (tr["steps"], tr["workers"], tr["getitem"]) == (steps, workers, "TrainSet.__getitem__")
    assert abs(tr["data_wait_share"] - own) < 0.05, (tr, own)
    assert v["limit"] == "data delivery"
    assert "loop waits for data %.0f%% of each step" % (100 * tr["data_wait_share"]) in v["sentence"]
    assert "one per optimizer step of the training phases" in text
    if workers == 0:
        how = "on the CPU" if mode == "cpu" else "in file I/O"
        assert "the main process loads it itself (num_workers=0), mostly %s in " \
               "TrainSet.__getitem__" % how in v["sentence"]
        assert v["data_cause"] == ("preprocessing" if mode == "cpu" else "I/O")
        if mode == "io":    # each item's read is in the __next__ that loaded it
            assert tr["next_io_ns"] >= steps * 4 * SLOW_US * 1000
    else:
        assert "its %d DataLoader worker" % workers in v["sentence"]
    if workers in (1, 2) and mode == "io":  # 4 workers prefetch all 8 batches, then idle
        assert v["data_cause"] == "I/O"
    if workers in (1, 2) and mode == "cpu":
        # a worker on the CPU: preprocessing on a quiet machine; with both
        # cores busy it is runnable, waiting for a core, or not seen
        # producing: that choice is judged on planted CPU and run-queue
        # time (tests/converter/test_data_cause.py); never I/O
        assert v["data_cause"] in ("preprocessing", "waiting for a core", "unknown")


def test_own_step_ranges_win(tmp_path):
    """A script that marks its own "step" ranges keeps them as its steps;
    the phases are still listed."""
    steps, _own, rep, text, _ = loop(tmp_path, 0, "cpu", extra=["ranges"])
    assert (rep["metrics"]["steps"], rep["metrics"]["steps_from"]) == (steps, "ranges")
    assert rep["verdict"]["phases"]["training"]["steps"] == steps
    assert '16 steps ("step" ranges)' in text


def test_off_with_one_variable(tmp_path):
    """FEEDTRACE_PYTORCH=0: no range is recorded, the program's path is its own."""
    steps, _own, rep, _text, out = loop(tmp_path, 0, "cpu", env={"FEEDTRACE_PYTORCH": "0"})
    assert steps == EPOCHS * BATCHES
    assert rep["verdict"]["phases"] is None
    assert rep["metrics"]["steps"] is None
    dump = subprocess.run([TOOL, "dump", out], capture_output=True, text=True, timeout=120).stdout
    assert "feedtrace:" not in dump


# A program that never imports torch: what it can see of its interpreter.
PLAIN = r'''
import os, sys
print(sorted(sys.modules))
print(sys.path)
print(os.environ.get("PYTHONPATH"))
print(sys.modules["sitecustomize"].__file__)
print(sum(i * i for i in range(1000)))
'''


@pytest.mark.parametrize("pythonpath", [None, "", "/nonexistent/x"])
def test_no_torch_nothing_changes(traced, tmp_path, pythonpath):
    """A program that never imports torch prints the same under the tracer:
    the same modules, sys.path, PYTHONPATH (unset, empty or set) and Debian's
    own sitecustomize (chained); nothing of feedtrace recorded."""
    script = tmp_path / "plain.py"
    script.write_text(PLAIN)
    env = {} if pythonpath is None else {"PYTHONPATH": pythonpath}
    base = clean_env("LD_PRELOAD", "PYTHONPATH")
    base.update(env)
    want = subprocess.run([PYTHON, str(script)], env=base, capture_output=True, text=True,
                          timeout=60, cwd=str(tmp_path))
    r = traced([PYTHON, str(script)], env=env)
    assert r.returncode == 0, r.stderr
    assert (r.stdout, r.stderr) == (want.stdout, want.stderr)
    assert want.stdout.splitlines()[3] == "/usr/lib/python3.11/sitecustomize.py"
    assert not r.trace.calls("nvtxRangePush") and not r.trace.calls("nvtxMark")


def test_chains_to_the_users_sitecustomize(traced, tmp_path):
    """The user's own sitecustomize (on PYTHONPATH) still runs, once, and
    the program's children see PYTHONPATH as it was."""
    d = tmp_path / "site"
    d.mkdir()
    (d / "sitecustomize.py").write_text("import builtins\nbuiltins.USER_SITE = 'ran'\n")
    script = tmp_path / "child.py"
    script.write_text("import os, subprocess, sys\nprint(USER_SITE, os.environ['PYTHONPATH'])\n"
                      "print(subprocess.run([sys.executable, '-c', 'import os; "
                      "print(USER_SITE, os.environ[\"PYTHONPATH\"])'], capture_output=True, "
                      "text=True).stdout, end='')\n")
    r = traced([PYTHON, str(script)], env={"PYTHONPATH": str(d)})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "ran %s\nran %s\n" % (d, d)
