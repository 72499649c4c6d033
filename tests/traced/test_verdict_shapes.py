"""The verdict on programs with a planted limiting feed and their fixed twins
(issue 12's shapes): tests/vshapes/*.c on the simulated GPU, the lock_bound
example, `feedtrace run -- /bin/echo hi`, and a CPU-only Python run whose
workers feed the parent through a multiprocessing Queue.

Each shape's planted feed costs most of its loop by construction (the
programs' header comments give the numbers), so the verdict is not a matter
of thresholds: it must name that feed and the feeding process (its pid, its
role "main"), and the fixed twin must not name it. The programs print the
facts the test needs ("fact main PID", "fact worker PID", "fact loader TID",
...) so nothing is guessed from the trace."""
import collections
import os
import subprocess

import pytest

from conftest import BUILD, PYTHON, ROOT, TOOL, Trace, make, report_json

VSHAPES = os.path.join(BUILD, "vshapes")
EXAMPLES = os.path.join(BUILD, "examples")


@pytest.fixture(scope="module", autouse=True)
def built():
    make("vshapes",
                        os.path.join(BUILD, "examples", "lock_bound"))


class Shape:
    """One traced run: its facts (stdout "fact KEY VALUE" lines) and report."""

    def __init__(self, run, rep):
        self.run = run
        self.rep = rep
        self.v = rep["verdict"]
        self.facts = collections.defaultdict(list)
        for line in run.stdout.splitlines():
            f = line.split()
            if len(f) == 3 and f[0] == "fact":
                self.facts[f[1]].append(int(f[2], 0))

    def fact(self, key):
        vals = self.facts[key]
        assert len(vals) == 1, (key, vals)
        return vals[0]


def shape(traced, argv, env=None):
    run = traced(argv, env=env, load=False, timeout=60)
    if run.returncode == 3 and "no O_DIRECT" in run.stderr:
        pytest.skip(run.stderr.strip())
    assert run.returncode == 0, run.stdout + run.stderr
    return Shape(run, report_json(run.dir))


def vshape(traced, name, *args, env=None):
    return shape(traced, [os.path.join(VSHAPES, name)] + list(args), env=env)


# the data cause of producers that spin on the CPU: never I/O (they read no
# files); which of preprocessing, waiting for a core or unknown depends on
# how busy the machine was (with both cores busy they are runnable, not
# running, or are not seen to produce at all): that choice is judged on
# synthetic traces with the CPU and run-queue time planted
# (tests/converter/test_data_cause.py, test_verdict_model.py)
SPIN = ("preprocessing", "waiting for a core", "unknown")


def check(s, limit, program, workers=(), cause=None, starved=False):
    """The verdict: limit, about the main process `program`, whose children
    `workers` are its workers; data_cause when the limit is data delivery
    (one of SPIN for spinning producers); the GPU's idle time never above
    the window, below its busy time when the GPU is the limit, some when
    the shape `starved` it. How much the GPU idled in a starved loop (by
    construction 70% or more on a quiet machine) is the machine's clock:
    the modelled busy time takes in the feeding thread's wake-up delays,
    which grow with the load; exact idle and busy figures are judged on
    synthetic traces (test_verdict_model.py)."""
    v = s.v
    main = s.fact("main")
    assert v["limit"] == limit, v
    assert v["pid"] == main, v
    assert v["role"] == "main", v
    assert str(main) in v["process"] and program in v["process"], v
    roles = {p["pid"]: p["role"] for p in s.rep["processes"]}
    want = {w: "worker" for w in workers}
    want[main] = "main"
    assert roles == want, roles
    if limit == "data delivery":
        if cause == SPIN:
            assert v["data_cause"] in SPIN, v
        else:
            assert v["data_cause"] == cause, v
    w = v["window"]
    assert 0 < w["start_ns"] < w["end_ns"], v
    if v["gpu"] is not None:
        assert 0 <= v["gpu"]["idle_ns"] <= w["end_ns"] - w["start_ns"], v
        assert 0 < v["gpu"]["busy_ns"], v
        if limit == "GPU-bound":
            assert v["gpu"]["idle_ns"] < v["gpu"]["busy_ns"], v
        if starved:
            assert v["gpu"]["idle_ns"] > 0, v
    return v


def producers(v, key):
    """{pid or tid: [producers]} of the verdict's producers."""
    out = collections.defaultdict(list)
    for p in v["producers"]:
        out[p[key]].append(p)
    return out


# ---- 1, 2: forked worker processes feeding the main process through pipes

@pytest.mark.parametrize("wait", ["poll", "read", "select", "epoll", "recv", "psem"])
def test_workers_cpu_starve_main(traced, wait):
    """2 workers spin 16 ms per batch, the main process runs a 1.5 ms kernel
    on each: it waits for data ~80% of its loop, in poll(), read(), select()
    or epoll_wait() on pipes, in recv() on socketpairs, or in sem_wait() on
    a process-shared semaphore of a mailbox in shared memory."""
    s = vshape(traced, "workers", "--wait", wait, "--work", "cpu")
    workers = s.facts["worker"]
    v = check(s, "data delivery", "workers", workers, cause=SPIN, starved=True)
    prod = producers(v, "pid")
    assert set(prod) == set(workers), v["producers"]
    for p in v["producers"]:
        assert p["role"] == "worker", p
        assert p["cpu_ns"] > p["io_ns"] + p["lock_ns"], p


def test_workers_three_cpu_read(traced):
    """The same with 3 workers of 16 ms per batch: still starved (~70%)."""
    s = vshape(traced, "workers", "--wait", "read", "--work", "cpu", "--workers", "3")
    workers = s.facts["worker"]
    assert len(workers) == 3
    v = check(s, "data delivery", "workers", workers, cause=SPIN)
    assert set(producers(v, "pid")) == set(workers)


@pytest.mark.parametrize("wait", ["poll", "read"])
def test_workers_io_starve_main(traced, tmp_path, wait):
    """2 workers read 768 KiB per batch with 192 O_DIRECT reads of 4 KiB:
    the workers are in file I/O most of the time, the main process waits."""
    s = vshape(traced, "workers", "--wait", wait, "--work", "io", "--dir", str(tmp_path))
    workers = s.facts["worker"]
    v = check(s, "data delivery", "workers", workers, cause="I/O", starved=True)
    prod = producers(v, "pid")
    assert set(prod) == set(workers), v["producers"]
    for p in v["producers"]:
        assert p["role"] == "worker", p
        assert p["io_ns"] >= p["wall_ns"] // 2, p
        assert p["io_ns"] > p["cpu_ns"], p


@pytest.mark.parametrize("wait", ["poll", "read"])
def test_workers_fast_twin(traced, wait):
    """Every batch ready before the first launch, 6 ms kernels: the GPU is
    the limit."""
    s = vshape(traced, "workers", "--wait", wait, "--work", "fast")
    check(s, "GPU-bound", "workers", s.facts["worker"])


# ---- 3: loader threads feeding the launching thread through a queue

@pytest.mark.parametrize("queue", ["cond", "sem"])
def test_loader_threads_starve(traced, queue):
    """2 loader threads spin 16 ms per batch into a 2-slot queue guarded by
    condition variables or semaphores; the launching thread waits ~80%."""
    s = vshape(traced, "loaders", "--queue", queue)
    v = check(s, "data delivery", "loaders", cause=SPIN, starved=True)
    loaders = s.facts["loader"]
    assert len(loaders) == 2
    # every producer named is one of the loader threads; which are named
    # depends on their CPU samples in the window, fewer on a busy machine
    # (loader threads named from planted samples: test_verdict_model.py)
    prod = producers(v, "tid")
    assert set(prod) <= set(loaders) and len(v["producers"]) == len(prod), v["producers"]
    for p in v["producers"]:
        assert p["role"] == "loader thread" and p["pid"] == s.fact("main"), p


@pytest.mark.parametrize("queue", ["cond", "sem"])
def test_loader_threads_fixed_twin(traced, queue):
    """Loaders of 0.1 ms per batch keep the queue full, 6 ms kernels: the GPU
    is the limit (the loaders' waits for a free slot are not a feed)."""
    s = vshape(traced, "loaders", "--queue", queue, "--fixed")
    check(s, "GPU-bound", "loaders")


# ---- 4: threads launching under one contended lock

@pytest.mark.parametrize("streams", ["ptds", "explicit"])
def test_lock_bound_threads(traced, streams):
    """5 threads prepare (1 ms) and launch (0.3 ms kernels) under one mutex:
    each waits for the lock ~4 ms of every 5 and the GPU idles ~70% (the
    previous kernel is long done when a thread syncs for it)."""
    s = vshape(traced, "locks", "--streams", streams)
    check(s, "locks", "locks")


@pytest.mark.parametrize("streams", ["ptds", "explicit"])
def test_lock_free_twin(traced, streams):
    """No lock, 10 ms kernels: each thread prepares the next request while its
    stream runs the previous one, then waits ~9 ms for it."""
    s = vshape(traced, "locks", "--streams", streams, "--fixed")
    check(s, "GPU-bound", "locks")


@pytest.mark.parametrize("fixed", [False, True], ids=["broken", "fixed"])
def test_lock_bound_example(traced, fixed):
    """The project's own demo (issue 12, item 3): 4 workers on per-thread
    default streams hold one lock across launch and sync; its fix has no
    lock and a stream per worker."""
    argv = [os.path.join(EXAMPLES, "lock_bound")] + (["--fixed"] if fixed else [])
    run = traced(argv, env={"FT_CUDA_PATH": "proc-ptds"}, load=False, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    rep = report_json(run.dir)
    v = rep["verdict"]
    assert v["limit"] == ("GPU-bound" if fixed else "locks"), v
    assert [p.get("role") for p in rep["processes"]] == ["main"]
    assert v["pid"] == rep["processes"][0]["pid"] and v.get("role") == "main", v


# ---- 5: a sync the program needs vs a hidden sync that starves the GPU

def test_needed_sync_is_gpu_bound(traced):
    """5 ms kernels and the result read back with cuMemcpyDtoH each step:
    the CPU waits in the copy but the GPU is busy ~96% of the loop."""
    s = vshape(traced, "syncs", "--mode", "needed")
    check(s, "GPU-bound", "syncs")


def test_hidden_sync_starves(traced):
    """A pageable copy between two 0.8 ms kernels, then 0.8 ms of CPU with
    nothing queued: the GPU idles after each hidden sync (a third of the
    loop on a quiet machine), the thread waits in them two thirds. What the
    program did: its 40 copies are hidden syncs at its one call site, and
    the report's hidden-sync row names them. Whether they make the loop
    synchronization-bound is the machine's clock (with both cores busy the
    verdict was GPU-bound once in three runs): that is judged on synthetic
    traces (test_verdict_model.py, "hidden" costs the idle after it)."""
    s = vshape(traced, "syncs", "--mode", "hidden")
    v = s.v
    assert v["pid"] == s.fact("main") and v["role"] == "main", v
    assert v["limit"] in ("synchronization", "GPU-bound"), v
    src = open(os.path.join(ROOT, "tests", "vshapes", "syncs.c")).read().splitlines()
    line = [i + 1 for i, l in enumerate(src) if "cu.MemcpyHtoDAsync(" in l]
    assert len(line) == 1
    rows = [p for p in s.rep["problems"] if p["kind"] == "hidden sync"]
    assert len(rows) == 1 and rows[0]["count"] == 1, rows
    assert " at main (syncs.c:%d) x40 " % line[0] in rows[0]["what"], rows


def test_hidden_sync_fixed_twin(traced):
    """The same copy from page-locked memory: the CPU runs up to 2 steps
    ahead (0.8 ms of CPU per 1.6 ms of kernels; an event sync on the step 2
    back) and the GPU never waits."""
    s = vshape(traced, "syncs", "--mode", "fixed")
    check(s, "GPU-bound", "syncs")


# ---- 6: a long start-up before a GPU-bound loop

@pytest.mark.parametrize("steps", [False, True], ids=["launches", "steps"])
def test_startup_before_gpu_bound_loop(traced, tmp_path, steps):
    """File I/O and 0.6 s of CPU before 40 steps of 4 ms kernels: the
    start-up is reported on its own, the loop is GPU-bound."""
    s = vshape(traced, "startup", "--dir", str(tmp_path), *(["--steps"] if steps else []))
    v = check(s, "GPU-bound", "startup")
    assert v["startup_ns"] >= s.fact("startup_ns") >= 600000000, v
    assert v["window"]["from"] == ("steps" if steps else "first launch"), v


# ---- 7: launch-bound tiny kernels

@pytest.mark.parametrize("threads", [1, 2])
def test_tiny_kernels_launch_bound(traced, threads):
    """10000 kernels of 1 us per thread, each launch call 2 us of CPU."""
    s = vshape(traced, "tiny", "--threads", str(threads))
    assert len(s.facts["launcher"]) == threads
    check(s, "work submission", "tiny")


def test_fused_kernels_twin(traced):
    s = vshape(traced, "tiny", "--fused")
    check(s, "GPU-bound", "tiny")


# ---- 8: three explicit streams, each fed by its own thread

def test_three_streams_starved(traced):
    """Each stream's thread reads its batches from a loader thread's pipe;
    the loaders spend 8 ms per 2 ms kernel."""
    s = vshape(traced, "streams3")
    v = check(s, "data delivery", "streams3", cause=SPIN)
    prod = producers(v, "tid")        # named as in test_loader_threads_starve
    assert set(prod) <= set(s.facts["loader"]) and len(v["producers"]) == len(prod), \
        v["producers"]
    for p in v["producers"]:
        assert p["role"] == "loader thread", p


def test_three_streams_fed(traced):
    """Every batch ready at once, 6 ms kernels: the GPU is the limit."""
    s = vshape(traced, "streams3", "--fed")
    check(s, "GPU-bound", "streams3")


# ---- 9: no GPU and no batches: no feed is invented

def test_echo_has_no_feed(tmp_path):
    d = str(tmp_path / "echo")
    r = subprocess.run([TOOL, "run", "-o", d, "--", "/bin/echo", "hi"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "hi", r.stdout
    rep = report_json(d)
    v = rep["verdict"]
    assert v["limit"] == "none" and v["gpu"] is None and v["producers"] == [], v
    assert [p["role"] for p in rep["processes"]] == ["main"]
    assert v["pid"] == rep["processes"][0]["pid"] and v["role"] == "main", v


def test_file_io_only_has_no_feed(traced, tmp_path):
    """Writes 1 MiB in 4 KiB writes, reads it back 8 times in 4 KiB reads."""
    s = vshape(traced, "fileonly", "--dir", str(tmp_path))
    v = s.v
    assert v["limit"] == "none" and v["gpu"] is None and v["producers"] == [], v
    assert v["pid"] == s.fact("main") and v["role"] == "main", v


# ---- 10: CPU-only Python, multiprocessing workers feeding the parent

MPQ = r'''
import multiprocessing as mp, os, time

def spin(s):                             # s of CPU time, as tests/vshapes/vshape.h's vs_cpu:
    t = time.thread_time()               # under load a wall-clock spin that yields got
    while time.thread_time() - t < s:    # too little CPU to read as preprocessing
        pass

def worker(q, n):
    # one write(2): with PYTHONUNBUFFERED print's pieces go out one by one,
    # and two workers' lines interleaved ("fact workerfact worker 18248")
    os.write(1, b"fact worker %d\n" % os.getpid())
    for i in range(n):
        spin(0.03)                      # preprocessing a batch: 30 ms
        q.put((i, bytes(1024)))

if __name__ == "__main__":
    mp.set_start_method("fork")
    os.write(1, b"fact main %d\n" % os.getpid())
    q = mp.Queue(maxsize=4)
    ws = [mp.Process(target=worker, args=(q, 10)) for _ in range(2)]
    for w in ws:
        w.start()
    for _ in range(20):
        q.get(timeout=60)               # waits in poll(), as the DataLoader does
        spin(0.001)                     # the step: 1 ms of CPU
    for w in ws:
        w.join()
    print("mpq: 20 batches")
'''


def test_python_queue_workers_feed_parent(traced, tmp_path):
    """The parent waits ~90% of its loop for batches in poll(): a CPU-only
    run is still limited by data delivery, about the parent."""
    script = tmp_path / "mpq.py"
    script.write_text(MPQ)
    s = shape(traced, [PYTHON, str(script)])
    assert "mpq: 20 batches" in s.run.stdout
    workers = s.facts["worker"]
    v = check(s, "data delivery", "mpq.py", workers, cause=SPIN)
    assert v["gpu"] is None, v
    prod = producers(v, "pid")
    assert set(prod) == set(workers), v["producers"]
    assert all(p["role"] == "worker" for p in v["producers"]), v["producers"]


# ---- the real Debian PyTorch run (CPU): DataLoader with 2 worker processes

SPAWN = r'''
import runpy, sys
import torch.multiprocessing as mp
mp.set_start_method("spawn")
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_train_py_verdict_is_about_main(traced, tmp_path, start):
    """examples/train.py, 4 steps, 2 DataLoader workers, started by fork
    (the default) or spawn (through a wrapper that sets the start method):
    the verdict is about the training process, the workers are workers and
    spawn's resource tracker is a helper."""
    data = tmp_path / "data"
    data.mkdir()
    argv = [os.path.join(ROOT, "examples", "train.py"), "--steps", "4", "--workers", "2",
            "--cpu", "--data", str(data)]
    if start == "spawn":
        wrapper = tmp_path / "spawn_train.py"
        wrapper.write_text(SPAWN)
        argv = [str(wrapper)] + argv
    run = traced([PYTHON] + argv, load=False, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 steps of 32" in run.stdout
    rep = report_json(run.dir)
    v = rep["verdict"]
    procs = {p["pid"]: p for p in rep["processes"]}
    main = [pid for pid, p in procs.items() if p["ppid"] not in procs]
    assert len(main) == 1, procs
    main = main[0]
    assert v["pid"] == main and v["role"] == "main", v
    assert "train.py" in v["process"] and str(main) in v["process"], v
    workers = {pid for pid, p in procs.items() if pid != main and
               (start == "fork" or "spawn_main" in p["cmdline"])}
    assert len(workers) == 2, procs
    roles = {pid: p["role"] for pid, p in procs.items()}
    want = {pid: "main" if pid == main else "worker" if pid in workers else "helper"
            for pid in procs}
    assert roles == want, (roles, {pid: p["cmdline"] for pid, p in procs.items()})
    if start == "spawn":
        assert any("resource_tracker" in p["cmdline"] for p in procs.values()), procs
    # the main thread's waits for batches: poll() on the result queue's pipe
    # (multiprocessing.connection.wait), recorded as blocked waits on a pipe
    t = Trace.load(run.dir)
    polls = [e for e in t.calls("poll", pid=main) if e["tid"] == main]
    # (a wait that a worker's SIGCHLD interrupted returns EINTR: -4; one
    # that saw no batch in DataLoader's 5 s status-check interval, on a
    # busy machine, returns 0 after its whole timeout)
    assert polls and all(e["args"]["kinds"] == "0x2" and e["args"]["nfds"] == 1 and
                         (e["args"]["ret"] in (1, -4) or
                          e["args"]["ret"] == 0 and e["args"]["timeout"] == 5000 and
                          e["dur_ns"] >= 5000 * 1000000) for e in polls), polls
    # (not every run has one that returned 1: the first blocked wait can be
    # the one a SIGCHLD interrupts, and its retry then finds the batch ready,
    # unrecorded; seen once in a CI run)
