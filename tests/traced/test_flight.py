"""The flight recorder (issue 34): FEEDTRACE_FLIGHT=Ns or =NMiB keeps the
last N seconds or MiB of each process's chunks in memory and writes them on
a fatal signal, on a hang (no step for FEEDTRACE_FLIGHT_HANG_S), on
`feedtrace flight PID|DIR`, and at exit with FEEDTRACE_FLIGHT_EXIT=1;
nothing else. The programs number their steps (tests/progs/flight_loop.c:
user ranges "step I"; tests/scripts/flight_torch.py: a file DIR/stepI
created each step), and the tests assert which steps the window holds:
the last ones, not the first, never by how long anything took. The data
file of flight_loop is opened before any step: its reads in the window
keep its path although its open was left out."""
import collections
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import BUILD, LIB, PYTHON, ROOT, TOOL, Trace, built_prog, clean_env, make, preload

TORCH = os.path.exists("/usr/lib/python3/dist-packages/torch")
TORCH_SCRIPT = os.path.join(ROOT, "tests", "scripts", "flight_torch.py")


def env_for(out, **kw):
    e = clean_env("LD_PRELOAD")
    e["LD_PRELOAD"] = preload()
    e["FEEDTRACE_OUT"] = out
    e.update({"FEEDTRACE_" + k: str(v) for k, v in kw.items()})
    return e


def data_file(tmp_path):
    p = tmp_path / "data.bin"
    p.write_bytes(bytes(range(256)) * 16)
    return str(p)


def pushed_steps(t, pid):
    """the step numbers of the "step I" ranges pid pushed in its window"""
    return sorted(int(e["args"]["name"].split()[1]) for e in t.calls(pid=pid)
                  if e["call"].startswith("nvtxRangePush") and
                  e["args"].get("name", "").startswith("step "))


def opened_steps(t, pid, d):
    """flight_torch.py's steps in pid's window: the DIR/stepI files it created"""
    out = []
    for e in t.calls(pid=pid):
        p = e["args"].get("path") or ""
        if e["call"].startswith("open") and p.startswith(d + "/step"):
            out.append(int(p[len(d) + 5:]))
    return sorted(out)


def assert_last_steps(steps, last):
    """a window of steps: the last ones, in a row, not the first"""
    assert steps, "no step in the window"
    assert steps[-1] == last and steps[0] > 1, steps
    assert steps == list(range(steps[0], last + 1)), steps


def flight_of(t, pid):
    return t.proc(pid).get("flight")


def wait_flight(out, pids, timeout=120):
    """the trace once every pid's file holds a window"""
    deadline = time.time() + timeout
    while True:
        t = Trace.load(out, check=False)
        have = {p["pid"] for p in t.procs if p.get("flight")}
        if set(pids) <= have:
            return t
        assert time.time() < deadline, "no window from %s (have %s)" % (pids, have)
        time.sleep(0.3)


def read_until(proc, word, timeout=120):
    """reads proc's stdout lines until one starts with word; returns it"""
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = proc.stdout.readline()
        assert line, "the program ended before %r" % word
        if line.startswith(word):
            return line
    raise AssertionError("no %r" % word)


@pytest.fixture(scope="module")
def loop():
    make(os.path.join(BUILD, "feedtrace"), LIB)
    return built_prog("flight_loop")


def test_sigterm_writes_the_last_steps(loop, tmp_path):
    """40 steps of 100 ms, then SIGTERM: the window (2 s) holds the last
    steps in a row, ending at the 40th, not the first; the reads of the
    file opened before the window keep its path; the report says which
    window it is and counts neither the time before it nor what was left
    out as lost."""
    out, data = str(tmp_path / "t"), data_file(tmp_path)
    r = subprocess.run([loop, data, "40", "20", "100", "term"], env=env_for(out, FLIGHT="2s"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == -signal.SIGTERM, r.stderr
    assert r.stdout.split("\n")[-2] == "step 40"
    t = Trace.load(out)
    (p,) = t.procs
    assert p["end"] == "signal" and p["status"] == signal.SIGTERM
    f = p["flight"]
    assert f["why"] == "signal" and f["detail"] == signal.SIGTERM and f["windows"] == 1
    assert f["dropped_slots"] > 0 and f["window_ns"] < f["run_ns"]
    steps = pushed_steps(t, p["pid"])
    assert_last_steps(steps, 40)
    reads = t.calls("pread", pid=p["pid"])
    assert len(reads) >= 20 * (len(steps) - 1)
    assert {e["args"]["path"] for e in reads} == {data}
    assert t.calls("open", pid=p["pid"], path=data) == []      # before the window
    assert p["lost"] == 0 and p["unended"] == 0
    rep = subprocess.run([TOOL, "report", "--json", out], capture_output=True, text=True,
                         timeout=120)
    assert rep.returncode == 0, rep.stderr
    j = json.loads(rep.stdout)
    assert j["flight"]["why"] == "signal" and j["flight"]["run_ns"] == f["run_ns"]
    assert j["losses"]["lost"] == 0 and j["losses"]["unended"] == 0
    assert j["metrics"]["wall_ns"] < f["run_ns"]      # the run before it is not in it
    text = subprocess.run([TOOL, "report", out], capture_output=True, text=True,
                          timeout=120).stdout
    assert "flight recorder: the last" in text and "before SIGTERM (keeps 2 s)" in text
    assert "start-up" not in text
    summ = subprocess.run([TOOL, "dump", "--summary", out], capture_output=True, text=True,
                          timeout=120).stdout
    assert "   flight recorder: the last" in summ and "before SIGTERM" in summ
    conv = subprocess.run([TOOL, "convert", out, "-o", str(tmp_path / "t.pftrace")],
                          capture_output=True, text=True, timeout=120)
    assert conv.returncode == 0 and "flight recorder: the last" in conv.stderr, conv.stderr


def test_fork_child_window_keeps_the_inherited_path(loop, tmp_path):
    """a fork child (the file opened by its parent before the fork) ended by
    SIGTERM: its window has its last steps, its reads name the inherited
    descriptor's path; the parent, which asked for nothing, wrote none"""
    out, data = str(tmp_path / "t"), data_file(tmp_path)
    r = subprocess.run([loop, data, "40", "20", "100", "fork"], env=env_for(out, FLIGHT="2s"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    child = int(r.stdout.split("\n")[-2].split()[1])
    assert r.stdout.split("\n")[-2] == "child %d signal %d" % (child, signal.SIGTERM)
    t = Trace.load(out)
    parent = [p for p in t.procs if p["pid"] != child][0]
    c = t.proc(child)
    assert c["ppid"] == parent["pid"] and c["flight"]["why"] == "signal"
    assert_last_steps(pushed_steps(t, child), 40)
    reads = t.calls("pread", pid=child)
    assert reads and {e["args"]["path"] for e in reads} == {data}
    assert "flight" not in parent and t.calls(pid=parent["pid"]) == []
    assert parent["end"] == "exit" and c["end"] == "signal"


def test_hang_writes_once_then_a_request_appends(loop, tmp_path):
    """60 steps, then a read that never returns: no step for 1 s writes the
    window once (the last steps, up to the 60th), however long the hang
    lasts; `feedtrace flight PID` then adds a second window, and the file
    holds the time since the first."""
    out, data = str(tmp_path / "t"), data_file(tmp_path)
    proc = subprocess.Popen([loop, data, "60", "20", "100", "hang"],
                            env=env_for(out, FLIGHT="5s", FLIGHT_HANG_S=1),
                            stdout=subprocess.PIPE, text=True)
    try:
        read_until(proc, "hung")
        t = wait_flight(out, [proc.pid])
        f = flight_of(t, proc.pid)
        assert f["why"] == "hang" and f["detail"] == proc.pid and f["windows"] == 1
        assert_last_steps(pushed_steps(t, proc.pid), 60)
        with open(os.path.join(out, "flight.request")) as req:
            assert req.read() == "hang %d\n" % proc.pid     # the run's others: theirs too
        time.sleep(3)                                     # thrice the hang: no second window
        t = Trace.load(out, check=False)
        assert flight_of(t, proc.pid)["windows"] == 1
        r = subprocess.run([TOOL, "flight", str(proc.pid)], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0 and out in r.stdout, r.stderr
        t = wait_flight(out, [proc.pid])
        while flight_of(t, proc.pid)["windows"] < 2:
            time.sleep(0.3)
            t = Trace.load(out, check=False)
        f = flight_of(t, proc.pid)
        assert f["why"] == "request" and f["detail"] == 0
        assert_last_steps(pushed_steps(t, proc.pid), 60)    # no step came, none twice
    finally:
        proc.kill()
        proc.wait()


def test_nothing_written_until_asked(loop, tmp_path):
    """Without a trigger the file holds what says the process ran (header,
    command line, END) and no record; FEEDTRACE_FLIGHT_EXIT=1 writes the
    window at exit: the whole run, when it fits."""
    data = data_file(tmp_path)
    out = str(tmp_path / "idle")
    r = subprocess.run([loop, data, "30", "20", "10", "exit"], env=env_for(out, FLIGHT="60s"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == ""
    t = Trace.load(out)
    (p,) = t.procs
    assert p["end"] == "exit" and "flight" not in p
    assert p["records"] == 0 and t.events == []
    assert p["cmdline"].endswith("flight_loop %s 30 20 10 exit" % data)
    assert os.listdir(out) == [os.path.basename(p["file"])]       # no request file either
    out = str(tmp_path / "atexit")
    r = subprocess.run([loop, data, "30", "20", "10", "exit"],
                       env=env_for(out, FLIGHT="60s", FLIGHT_EXIT=1),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    t = Trace.load(out)
    (p,) = t.procs
    assert p["flight"]["why"] == "exit" and p["flight"]["dropped_slots"] == 0
    assert pushed_steps(t, p["pid"]) == list(range(1, 31))
    assert len(t.calls("pread", pid=p["pid"], path=data)) == 30 * 20
    assert len(t.calls("open", pid=p["pid"], path=data)) == 1


def test_window_in_bytes(loop, tmp_path):
    """FEEDTRACE_FLIGHT=64KiB: the window is the last 64 KiB of chunks, the
    last steps (the run's 600,000 reads take 250 KiB to 1 MiB compressed),
    then the last drain of the signal's exit path, whole. Each step sleeps
    5 ms and a ring holds 64 steps: the flusher, woken at a quarter ring,
    drains it on a loaded machine too (a ring never drained would come
    whole in the last drain, its first steps with it)"""
    out, data = str(tmp_path / "t"), data_file(tmp_path)
    r = subprocess.run([loop, data, "300", "2000", "5", "term"],
                       env=env_for(out, FLIGHT="64KiB", BUF_KB=4096),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == -signal.SIGTERM, r.stderr
    t = Trace.load(out)
    (p,) = t.procs
    assert p["flight"]["why"] == "signal" and p["flight"]["dropped_slots"] > 0
    steps = pushed_steps(t, p["pid"])
    assert_last_steps(steps, 300)
    # every read of the window's steps but the first one's (cut by the window)
    reads = t.calls("pread", pid=p["pid"], path=data)
    assert len(reads) >= 2000 * (len(steps) - 1) and p["lost"] == 0


def test_bad_setting_records_as_usual(loop, tmp_path):
    out, data = str(tmp_path / "t"), data_file(tmp_path)
    r = subprocess.run([loop, data, "3", "2", "0", "exit"], env=env_for(out, FLIGHT="60"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    assert r.stderr.count("FEEDTRACE_FLIGHT=\"60\" is not") == 1, r.stderr
    t = Trace.load(out)
    assert pushed_steps(t, t.procs[0]["pid"]) == [1, 2, 3]
    assert "flight" not in t.procs[0]


def test_flight_command_needs_a_run(tmp_path):
    make(os.path.join(BUILD, "feedtrace"))
    r = subprocess.run([TOOL, "flight", str(os.getpid())], capture_output=True, text=True)
    assert r.returncode == 1 and "holds no trace file open" in r.stderr
    r = subprocess.run([TOOL, "flight", "nonsense"], capture_output=True, text=True)
    assert r.returncode == 1 and "neither a directory nor a pid" in r.stderr
    d = tmp_path / "run"
    d.mkdir()
    r = subprocess.run([TOOL, "flight", str(d)], capture_output=True, text=True)
    assert r.returncode == 0
    assert (d / "flight.request").read_text() == "request 0\n"
    assert os.listdir(d) == ["flight.request"]


# ---- the simulated GPU ----

def cuda_calls(t):
    return collections.Counter((e["call"], e["args"].get("sym")) for e in t.events
                               if e["call"].startswith("cu"))


@pytest.fixture(scope="module")
def example():
    make("examples", LIB, os.path.join(BUILD, "feedtrace"))
    return os.path.join(BUILD, "examples", "data_starved")


def test_simgpu_window_is_the_run_when_it_fits(example, tmp_path):
    """data_starved on the simulated driver: its window written at exit
    holds exactly the CUDA calls of the same run traced to the file, and
    its 4 KiB reads with their paths; without FLIGHT_EXIT, no record"""
    def run(name, **kw):
        out = str(tmp_path / name)
        r = subprocess.run([example, "--dir", str(tmp_path)], env=env_for(out, **kw),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return Trace.load(out)
    whole = run("whole")
    win = run("window", FLIGHT="60s", FLIGHT_EXIT=1)
    idle = run("idle", FLIGHT="60s")
    assert cuda_calls(win) == cuda_calls(whole)
    assert sum(n for (c, _), n in cuda_calls(whole).items() if c == "cuLaunchKernel") == 12
    reads = [e for e in win.calls("read") if e["args"].get("req") == 4096]
    assert len(reads) == 12 * 16 * 9          # 8 of 4 KiB and the one at the end, per file
    assert len(reads) == len([e for e in whole.calls("read") if e["args"].get("req") == 4096])
    assert all(e["args"]["path"].startswith(str(tmp_path)) for e in reads)
    assert win.procs[0]["flight"]["why"] == "exit"
    assert idle.events == [] and "flight" not in idle.procs[0]


# ---- real PyTorch on the CPU ----

torch_only = pytest.mark.skipif(not TORCH, reason="Debian python3-torch not installed")


def torch_run(tmp_path, mode, workers, steps, **kw):
    d = tmp_path / "steps"
    d.mkdir()
    out = str(tmp_path / "t")
    proc = subprocess.Popen([PYTHON, TORCH_SCRIPT, mode, str(workers), str(steps), str(d)],
                            env=env_for(out, **kw), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    return proc, out, str(d)


def workers_of(t, pid):
    return [p["pid"] for p in t.procs if p["ppid"] == pid]


@torch_only
def test_torch_request_main_and_workers(loop, tmp_path):
    """`feedtrace flight PID` of a running DataLoader job (2 workers): the
    main process and both workers write their windows; the main one's
    holds its latest steps (DIR/stepI created, DataLoader __next__ ranges,
    optimizer steps), not its first"""
    proc, out, d = torch_run(tmp_path, "request", 2, 0, FLIGHT="2s")
    try:
        read_until(proc, "step 150", timeout=300)
        r = subprocess.run([TOOL, "flight", str(proc.pid)], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        t = Trace.load(out, check=False)
        workers = workers_of(t, proc.pid)
        assert len(workers) == 2
        t = wait_flight(out, [proc.pid] + workers)
        open(os.path.join(d, "stop"), "w").close()
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
    t = Trace.load(out)
    steps = opened_steps(t, proc.pid, d)
    assert steps and steps[0] > 1 and steps == list(range(steps[0], steps[-1] + 1))
    assert steps[-1] >= 150
    nexts = [e for e in t.calls(pid=proc.pid) if e["call"].startswith("nvtxRangePush") and
             e["args"]["name"].startswith("feedtrace:next ")]
    marks = [e for e in t.calls(pid=proc.pid) if e["call"].startswith("nvtxMark") and
             e["args"]["name"] == "feedtrace:optimizer.step SGD"]
    # each step's batch came before its file: the window's first may lack it
    assert len(nexts) >= len(steps) - 1 and len(marks) >= len(steps) - 1
    for pid in [proc.pid] + workers:
        f = flight_of(t, pid)
        assert f["why"] == "request" and f["windows"] == 1
        assert t.calls(pid=pid), pid                      # the worker's calls too
    assert flight_of(t, proc.pid)["dropped_slots"] > 0


@torch_only
def test_torch_sigterm(loop, tmp_path):
    proc, out, d = torch_run(tmp_path, "term", 0, 120, FLIGHT="1s")
    assert proc.wait(timeout=300) == -signal.SIGTERM, proc.stderr.read()
    t = Trace.load(out)
    (p,) = t.procs
    assert p["flight"]["why"] == "signal" and p["end"] == "signal"
    assert_last_steps(opened_steps(t, p["pid"], d), 120)


@torch_only
def test_torch_hang_writes_the_workers_too(loop, tmp_path):
    """the main process stops stepping (2 DataLoader workers alive): its
    hang writes its window, and its request the workers' (why: the hang of
    the main process's pid)"""
    proc, out, d = torch_run(tmp_path, "hang", 2, 100, FLIGHT="3s", FLIGHT_HANG_S=2)
    try:
        read_until(proc, "hung", timeout=300)
        t = Trace.load(out, check=False)
        workers = workers_of(t, proc.pid)
        assert len(workers) == 2
        t = wait_flight(out, [proc.pid] + workers)
    finally:
        proc.kill()
        proc.wait()
    f = flight_of(t, proc.pid)
    assert f["why"] == "hang" and f["detail"] == proc.pid
    assert_last_steps(opened_steps(t, proc.pid, d), 100)
    for w in workers:
        assert flight_of(t, w)["why"] == "hang" and flight_of(t, w)["detail"] == proc.pid
