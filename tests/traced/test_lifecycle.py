"""Process lifecycle under the tracer: "nothing lost".

Every test runs a real program with libfeedtrace.so preloaded, reads the
trace back with `feedtrace dump --json` and checks EXACT counts, and that the
program behaves exactly as without the tracer (exit status, stdout, signals).

C programs: tests/progs/life_prog.c (one program, many modes) and
tests/progs/life_early_lib.c (a preloaded library with a constructor);
Python programs: tests/scripts/life_*.py, run with Debian's /usr/bin/python3.
Every data read is open()+read(fd, buf, 100)+close() of a 100-byte file, so
"read of PATH with ret=100" counts exactly the reads the program made.
"""
import glob
import os
import resource
import signal
import subprocess
import threading
import time

import pytest

from conftest import (BUILD, LIB, PYTHON, ROOT, TOOL, Trace, clean_env, make, preload as preload_value,
                      prog, skip_under)

SCRIPTS = os.path.join(ROOT, "tests", "scripts")
LIFE = prog("life_prog")


def script(name):
    return os.path.join(SCRIPTS, name)


@pytest.fixture(scope="module", autouse=True)
def built():
    """The C programs this file needs (the Makefile builds tests/progs/*.c)."""
    make(LIFE)
    assert os.path.exists(LIB) and os.path.exists(TOOL), "run `make all` first"


@pytest.fixture
def data(tmp_path):
    """A 100-byte data file; its path is what the tests count reads of."""
    p = tmp_path / "data100.bin"
    p.write_bytes(bytes(range(100)))
    return str(p)


def traced_env(outdir, env=None, preload=()):
    e = clean_env()
    e["LD_PRELOAD"] = preload_value(*preload)   # the sanitizer runtime first, if any
    e["FEEDTRACE_OUT"] = outdir
    if env:
        e.update(env)
    return e


@pytest.fixture
def start(tmp_path):
    """start(argv, env=None) -> (Popen, trace dir): argv under the tracer,
    running; whatever is still running at teardown is killed."""
    running = []

    def run(argv, env=None, name="trace"):
        outdir = str(tmp_path / name)
        p = subprocess.Popen(argv, env=traced_env(outdir, env), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=str(tmp_path))
        running.append(p)
        return p, outdir

    yield run
    for p in running:
        if p.poll() is None:
            p.kill()
            p.wait()


def wait_ready(p, timeout=30):
    """Reads the program's stdout up to its "ready" line (kills it after
    timeout seconds without one)."""
    timer = threading.Timer(timeout, p.kill)
    timer.start()
    lines = []
    try:
        for line in iter(p.stdout.readline, ""):
            lines.append(line)
            if line == "ready\n":
                return lines
    finally:
        timer.cancel()
    p.kill()
    raise AssertionError("no 'ready' from %r: %r" % (p.args, lines))


def reads(trace, path, pid=None):
    """The `read` records of path that returned the full 100 bytes."""
    return trace.calls("read", pid=pid, path=path, ret=100)


def files_of(outdir):
    return sorted(glob.glob(os.path.join(outdir, "*.ft")))


def load_file(path):
    """One trace file on its own (exec leaves two files with the same pid)."""
    return Trace.load(path)


# ---------------------------------------------------------------- 1. ending

@pytest.mark.parametrize("how", ["ret", "exit"])
def test_return_and_exit(traced, data, how):
    r = traced([LIFE, how, data, "7", "5"])
    assert r.returncode == 5, r.stderr
    t = r.trace
    assert len(t.procs) == 1
    p = t.procs[0]
    assert len(reads(t, data)) == 7
    assert t.count("open", path=data) == 7
    assert t.count("close", path=data) == 7
    assert p["end"] == "exit"
    assert p["lost"] == 0 and p["damaged_chunks"] == 0
    # exit(n) is seen by the exit wrapper; a return from main by the wrapper
    # feedtrace puts around main (__libc_start_main)
    assert p["status"] == 5


def test_python_uncaught_exception(traced, data):
    r = traced([PYTHON, script("life_pyexc.py"), data, "9"])
    assert r.returncode == 1
    assert r.stdout == "read 9\n"
    assert "Traceback (most recent call last)" in r.stderr
    assert "RuntimeError: life_pyexc: deliberate failure after 9 reads" in r.stderr
    t = r.trace
    assert len(t.procs) == 1
    assert len(reads(t, data)) == 9
    assert t.procs[0]["end"] == "exit"
    assert t.procs[0]["status"] == 1            # what Python's main returned
    assert t.procs[0]["lost"] == 0


# ------------------------------------------------------------------ 2. fork

def check_fork(r, data, np_, nc, code):
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and lines[1] == "atexit", r.stdout   # parent's atexit only
    line = lines[0]
    assert line.startswith("child=") and line.endswith(" status=%d" % code), r.stdout
    child = int(line.split()[0].split("=")[1])
    t = r.trace
    pids = {p["pid"] for p in t.procs}
    assert len(t.procs) == 2 and child in pids
    parent = (pids - {child}).pop()
    assert len(files_of(r.dir)) == 2
    # the parent's reads before the fork: once, in the parent's file only
    assert len(reads(t, data, pid=parent)) == np_
    # the child: exactly its own reads, in its own file
    assert len(reads(t, data, pid=child)) == nc
    assert len(reads(t, data)) == np_ + nc
    cp, pp = t.proc(child), t.proc(parent)
    assert os.path.basename(cp["file"]).endswith(".%d.ft" % child)
    assert cp["ppid"] == parent
    assert cp["end"] == "_exit" and cp["status"] == code
    assert pp["end"] == "exit"
    assert t.count("fork", pid=parent) == 1 and t.count("fork", pid=child) == 0
    assert t.count("_exit", pid=child) == 1
    assert cp["lost"] == 0 and pp["lost"] == 0


def test_fork_child_exits_with__exit(traced, data):
    r = traced([LIFE, "fork", data, "5", "3", "6"])
    check_fork(r, data, 5, 3, 6)


def test_python_fork_os_exit(traced, data):
    r = traced([PYTHON, script("life_pyfork.py"), data, "6", "4", "3"])
    check_fork(r, data, 6, 4, 3)


def test_fork_child_file_has_the_inherited_strings_it_names(traced, data, tmp_path):
    """A fork child's file has, of the strings it inherited (here the
    parent's 300 paths), only those its records name, written by its
    flusher (compressed) before the records, and by the exit drain (raw):
    the parent's data file, read before and after a flush, and the exe."""
    code = ("import os, sys, time\n"
            "for i in range(300):\n"
            "    try: open('%s/nothing-%%d' %% i)\n"
            "    except OSError: pass\n"
            "f = open(sys.argv[1], 'rb', buffering=0)\n"
            "if os.fork() == 0:\n"
            "    f.read(10)\n"
            "    time.sleep(0.6)\n"          # the child's flusher drains: 200 ms
            "    open(sys.argv[1], 'rb').read()\n"
            "    os._exit(0)\n"
            "os.wait()\n") % tmp_path
    r = traced([PYTHON, "-c", code, data])
    assert r.returncode == 0, r.stderr
    t = r.trace
    [child] = [p for p in t.procs if p["end"] == "_exit"]
    [parent] = [p for p in t.procs if p["end"] == "exit"]
    assert parent["strings"] > 300
    # the exe, the data file, and the Python site of the child's open of it
    assert child["strings"] == 3
    assert child["exe"] == parent["exe"]
    [op] = t.calls("open64", pid=child["pid"], path=data)
    assert op["args"]["py"] == "<string>:9 in <module>"
    reads = t.calls("read", pid=child["pid"], path=data)
    assert [(e["args"]["req"], e["args"]["ret"]) for e in reads][:2] == [(10, 10), (101, 100)]
    assert t.count("open64", pid=child["pid"], path=data) == 1


def test_torch_dataloader_workers(traced, tmp_path):
    chk = subprocess.run([PYTHON, "-c", "import importlib.util, sys; "
                          "sys.exit(importlib.util.find_spec('torch') is None)"],
                         capture_output=True)
    if chk.returncode != 0:
        pytest.skip("torch is not importable by " + PYTHON)
    n = 40
    ddir = tmp_path / "samples"
    ddir.mkdir()
    paths = set()
    total = 0
    for i in range(n):
        raw = bytes((i + j) % 256 for j in range(256))
        (ddir / ("sample_%03d.bin" % i)).write_bytes(raw)
        paths.add(str(ddir / ("sample_%03d.bin" % i)))
        total += sum(raw[:16])
    r = traced([PYTHON, script("life_dataloader.py"), str(ddir), str(n)], timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "samples=%d sum=%d" % (n, total)
    t = r.trace
    assert len(files_of(r.dir)) >= 3
    main = [p for p in t.procs if "life_dataloader.py" in p["cmdline"]]
    assert len(main) >= 3                  # the main process and 2 fork workers
    opens = [e for e in t.events
             if e["call"].startswith("open") and e["args"].get("path") in paths]
    assert len(opens) == n                 # every sample opened exactly once
    assert {e["args"]["path"] for e in opens} == paths
    assert all(e["args"]["fd"] >= 0 for e in opens)
    worker_pids = {e["pid"] for e in opens}
    assert len(worker_pids) == 2           # opened in the 2 workers only
    main_pids = {p["pid"] for p in main}
    roots = [p for p in main if p["ppid"] not in main_pids]
    assert len(roots) == 1
    root = roots[0]
    assert root["pid"] not in worker_pids
    for pid in worker_pids:
        w = t.proc(pid)
        assert w["ppid"] == root["pid"]
        assert w["end"] == "_exit" and w["status"] == 0
        assert w["lost"] == 0 and w["damaged_chunks"] == 0
    assert root["end"] == "exit" and root["damaged_chunks"] == 0


# ------------------------------------------------------------------ 3. exec

@pytest.mark.parametrize("how", ["execv", "execl"])
def test_exec_self(traced, data, how):
    r = traced([LIFE, how, data, "4", "6"])
    assert r.returncode == 0, r.stderr
    out = r.stdout.split()
    assert out[0].startswith("pid=") and out[-1] == out[0]   # same pid after exec
    pid = int(out[0][4:])
    files = files_of(r.dir)
    names = sorted(os.path.basename(f) for f in files)
    assert len(files) == 2, names
    first = [f for f in files if f.endswith(".%d.ft" % pid)]
    second = [f for f in files if f.endswith(".%d.1.ft" % pid)]
    assert len(first) == 1 and len(second) == 1, names
    a, b = load_file(first[0]), load_file(second[0])
    assert [p["pid"] for p in a.procs] == [pid]
    assert [p["pid"] for p in b.procs] == [pid]
    assert a.procs[0]["exec_seq"] == 0 and b.procs[0]["exec_seq"] == 1
    assert len(reads(a, data)) == 4
    assert a.procs[0]["end"] == "exec"
    assert a.count("execve") == 1
    assert len(reads(b, data)) == 6
    assert b.procs[0]["end"] == "exit"
    assert " again " in b.procs[0]["cmdline"]
    assert a.procs[0]["lost"] == 0 and b.procs[0]["lost"] == 0
    assert len(reads(r.trace, data)) == 10


# ---------------------------------------------------- 4. vfork/posix_spawn

# TSan's runtime runs vfork as fork: subprocess.run's child is then a traced
# fork child with a file of its own (which close_fds closes), not the
# vfork child that passes straight through
VFORK_IS_FORK = skip_under(["tsan"], "the runtime turns vfork into fork")


@pytest.mark.parametrize("how", [pytest.param("run", marks=VFORK_IS_FORK), "run_noclose",
                                 "posix_spawn",
                                 pytest.param("run_failed_exec", marks=VFORK_IS_FORK)])
def test_python_subprocess(traced, data, how):
    r = traced([PYTHON, script("life_subproc.py"), how, LIFE, data, "5"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "child rc=0\n"
    t = r.trace
    assert len(t.procs) == 2
    py = [p for p in t.procs if "life_subproc.py" in p["cmdline"]]
    child = [p for p in t.procs if p["exe"] == LIFE]
    assert len(py) == 1 and len(child) == 1
    assert child[0]["ppid"] == py[0]["pid"]
    assert len(reads(t, data, pid=child[0]["pid"])) == 5
    assert len(reads(t, data)) == 5
    assert child[0]["end"] == "exit" and py[0]["end"] == "exit"
    # a vfork child whose exec failed leaves by _exit on the parent's
    # memory: that must not read as the parent's own _exit
    assert t.count("_exit", pid=py[0]["pid"]) == 0


@skip_under(["tsan"], "the runtime turns vfork into fork")
def test_vfork_child_leaves_no_trace_in_the_parent(traced, data):
    """A vfork child runs on its parent's memory until it execs or leaves:
    its calls (a dup2, a close, a pread) must not appear as the parent's,
    nor change the parent's fd -> path table. Before, the child's close
    and pread were recorded in the parent's ring under the parent's tid,
    and the parent's own pread and close of that fd then had no path."""
    r = traced([LIFE, "vfork", data])
    assert (r.returncode, r.stdout) == (0, "vfork status=0\n"), r.stderr
    t = r.trace
    [p] = t.procs
    assert p["calls"] == {"open": 1, "read": 1, "pread": 1, "close": 1}
    [pr] = t.calls("pread")
    assert (pr["args"]["fd"], pr["args"]["path"], pr["args"]["ret"]) == (
        t.calls("open")[0]["args"]["fd"], data, 100)
    assert t.calls("close")[0]["args"]["path"] == data


# ---------------------------------------------------------------- 5. signals

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_killed_by_signal(start, data, sig):
    p, outdir = start([LIFE, "pause", data, "8"])
    wait_ready(p)
    p.send_signal(sig)
    out, err = p.communicate(timeout=30)
    assert p.returncode == -sig, err
    t = Trace.load(outdir)
    assert len(t.procs) == 1
    pr = t.procs[0]
    assert len(reads(t, data)) == 8
    assert pr["end"] == "signal" and pr["status"] == sig
    assert t.count("signal", signo=int(sig)) == 1
    assert pr["lost"] == 0


FAULTS = {"segv": signal.SIGSEGV, "bus": signal.SIGBUS, "fpe": signal.SIGFPE,
          "ill": signal.SIGILL, "abort": signal.SIGABRT}


@skip_under(["asan", "tsan", "ubsan"], "the sanitizer reports the crash itself (ASan and "
            "TSan handle the fault signals; UBSan stops at the null store first)")
@pytest.mark.parametrize("how", sorted(FAULTS))
def test_crash_keeps_the_trace(tmp_path, data, how):
    """A program that crashes (a fault, or abort) keeps the records of its
    last flush interval (well under 200 ms old here), and still dies by the
    same signal."""
    outdir = str(tmp_path / "trace")
    no_core = lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    p = subprocess.run([LIFE, "crash", data, "7", how], env=traced_env(outdir),
                       capture_output=True, text=True, timeout=60, preexec_fn=no_core)
    sig = FAULTS[how]
    assert p.returncode == -sig, p.stderr
    t = Trace.load(outdir)
    [pr] = t.procs
    assert len(reads(t, data)) == 7
    assert (pr["end"], pr["status"], pr["lost"], pr["damaged_chunks"]) == ("signal", int(sig), 0, 0)
    assert t.count("signal", signo=int(sig)) == 1


@skip_under(["asan", "tsan", "ubsan"], "the sanitizer reports the crash itself (ASan and "
            "TSan handle the fault signals; UBSan stops at the null store first)")
def test_python_segfault_keeps_the_trace(tmp_path, data):
    """A C extension's segfault in python3 (no faulthandler: CPython's
    default): the file reads before it are in the trace."""
    outdir = str(tmp_path / "trace")
    code = ("import ctypes, sys\n"
            "for _ in range(5):\n"
            "    open(sys.argv[1], 'rb').read()\n"
            "ctypes.string_at(0)\n")
    no_core = lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    p = subprocess.run([PYTHON, "-c", code, data], env=traced_env(outdir),
                       capture_output=True, text=True, timeout=60, preexec_fn=no_core)
    assert p.returncode == -signal.SIGSEGV, p.stderr
    t = Trace.load(outdir)
    [pr] = t.procs
    assert len(t.calls("read", path=data, ret=100)) == 5
    assert (pr["end"], pr["status"], pr["lost"]) == ("signal", int(signal.SIGSEGV), 0)


def test_sigterm_during_the_exit_commit(traced, data):
    """A SIGTERM that arrives while a child's _exit commits its trace (what
    a multiprocessing Pool's terminate() does to a worker already leaving):
    before, our handler found the commit under way and re-raised at once,
    killing the child half way through its last drain (about half of its
    20 000 reads and its END lost, every run). Now every signal is blocked
    while a commit runs: the child leaves by its _exit, as it asked first."""
    n = 20000
    r = traced([LIFE, "exitsig", data, str(n)],
               env={"FEEDTRACE_BUF_KB": "16384", "FEEDTRACE_FLUSH_MS": "60000"})
    # The parent's kill races the child's last steps: it almost always lands
    # during the commit (the child then leaves by its _exit), but on a loaded
    # machine the child can be preempted between its write and its _exit, and
    # the SIGTERM then comes first: the child dies by it, its trace committed
    # by the signal path. Either way every read and the END are kept.
    assert r.returncode == 0, r.stderr
    assert r.stdout in ("child exit=0 signal=0\n", "child exit=-1 signal=15\n"), r.stdout
    t = r.trace
    [child] = [p for p in t.procs if p["end"] != "exit"]     # the parent returns from main
    if r.stdout.endswith("signal=0\n"):
        assert (child["end"], child["status"], child["lost"]) == ("_exit", 0, 0)
    else:
        assert (child["end"], child["status"], child["lost"]) == ("signal", 15, 0)
    assert len(reads(t, data, pid=child["pid"])) == n


def test_own_sigterm_handler_kept(start, data, monkeypatch):
    # the program's handler calls exit() on purpose, so destructors (ours:
    # the last compressed flush, malloc and free in zstd) run inside a
    # signal handler: TSan's report of that is the program's doing
    # (docs/RELIABILITY.md, open problems)
    monkeypatch.setenv("TSAN_OPTIONS", os.environ.get("TSAN_OPTIONS", "") + ":report_signal_unsafe=0")
    p, outdir = start([LIFE, "handler", data, "4"])
    wait_ready(p)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 7, err
    assert out == "handler\n"
    t = Trace.load(outdir)
    assert len(reads(t, data)) == 4
    assert t.procs[0]["end"] == "exit" and t.procs[0]["status"] == 7
    assert t.count("signal") == 0           # the program's handler, not ours


def test_python_keyboardinterrupt_kept(start, data):
    p, outdir = start([PYTHON, script("life_pysigint.py"), data, "5"])
    wait_ready(p)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert out == "caught\n"
    t = Trace.load(outdir)
    assert len(reads(t, data)) == 5
    assert t.procs[0]["end"] == "exit"
    assert t.count("signal") == 0


def test_python_uncaught_keyboardinterrupt(start, data):
    # Python prints the traceback, puts SIGINT back to SIG_DFL and kills
    # itself with it: the stand-in handler is back and commits the trace
    p, outdir = start([PYTHON, script("life_pysigint.py"), data, "5", "uncaught"])
    wait_ready(p)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == -signal.SIGINT, err
    assert out == ""
    assert err.rstrip().endswith("KeyboardInterrupt")
    t = Trace.load(outdir)
    assert len(reads(t, data)) == 5
    assert t.procs[0]["end"] == "signal" and t.procs[0]["status"] == signal.SIGINT


def test_sigaction_query_shows_sig_dfl(traced):
    plain = subprocess.run([LIFE, "sigquery"], capture_output=True, text=True, timeout=30)
    assert plain.stdout == "SIGTERM=SIG_DFL SIGINT=SIG_DFL\n"
    r = traced([LIFE, "sigquery"])
    assert r.returncode == 0
    assert r.stdout == plain.stdout


# ---------------------------------------------------------------- 6. threads

def test_threads_exit_before_process(traced, data):
    r = traced([LIFE, "threads", data, "8", "100"])
    assert r.returncode == 0 and r.stdout == "threads done\n", r.stderr
    t = r.trace
    rd = reads(t, data)
    assert len(rd) == 800
    tids = {}
    for e in rd:
        tids[e["tid"]] = tids.get(e["tid"], 0) + 1
    assert len(tids) == 8 and set(tids.values()) == {100}
    p = t.procs[0]
    assert p["threads"] >= 8
    assert p["lost"] == 0 and p["threads_untraced"] == 0


def test_many_short_lived_threads(traced, data):
    # Exactly 3000 reads recorded and nothing dropped or untraced (the
    # stronger of the two outcomes the issue allows: records+lost==3000
    # would also hold, with lost == 0).
    r = traced([LIFE, "shortthreads", data, "3000"])
    assert r.returncode == 0 and r.stdout == "threads done\n", r.stderr
    t = r.trace
    p = t.procs[0]
    rd = reads(t, data)
    # the counts in the message: a short count seen once under extreme load
    # (2 014 of 3 000, lost 0) could not be told apart from untraced threads
    facts = (len(rd), p["lost"], p["threads_untraced"], p.get("damaged_chunks"))
    assert len(rd) + p["lost"] == 3000, facts
    assert p["lost"] == 0, facts
    assert p["threads_untraced"] == 0, facts
    assert len(rd) == 3000
    assert len({e["tid"] for e in rd}) > 1


# ---------------------------------------------------------------- 7. kill -9

def test_sigkill_keeps_flushed_records(start, data):
    p, outdir = start([LIFE, "sleep", data, "25"], env={"FEEDTRACE_FLUSH_MS": "50"})
    wait_ready(p)
    time.sleep(0.5)
    p.kill()
    p.communicate(timeout=30)
    assert p.returncode == -signal.SIGKILL
    r = subprocess.run([TOOL, "dump", "--json", outdir], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    t = Trace.load(outdir)
    assert len(t.procs) == 1
    assert len(reads(t, data)) == 25
    assert t.procs[0]["end"].startswith("no end record")
    assert t.procs[0]["damaged_chunks"] == 0


# ---------------------------------------- 8. hooks before our constructor

@pytest.fixture(scope="module")
def early_lib():
    lib = os.path.join(BUILD, "tests", "life_early_lib.so")
    make(lib)
    return lib


# Preloaded libraries without dependencies between them are initialised in
# reverse LD_PRELOAD order: "early:feedtrace" runs our constructor first (the
# early read is recorded), "feedtrace:early" runs the other library's first
# (its hooked open/read come before our constructor and pass straight through).
@pytest.mark.parametrize("order,early_recorded", [("early_first", 1), ("feedtrace_first", 0)])
def test_hooks_from_other_constructor(tmp_path, data, early_lib, order, early_recorded):
    early_file = str(tmp_path / "early100.bin")
    with open(early_file, "wb") as f:
        f.write(bytes(100))
    libs = [early_lib, LIB] if order == "early_first" else [LIB, early_lib]
    outdir = str(tmp_path / "trace")
    env = traced_env(outdir, {"LIFE_EARLY_FILE": early_file}, preload=libs)
    r = subprocess.run([LIFE, "exit", data, "3", "0"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "early ctor read 100" in r.stderr
    t = Trace.load(outdir)
    assert len(t.procs) == 1
    assert len(reads(t, data)) == 3
    assert len(reads(t, early_file)) == early_recorded
    assert t.count("open", path=early_file) == early_recorded
    assert t.procs[0]["end"] == "exit" and t.procs[0]["status"] == 0


# ------------------------------------------------- 9. full rings, reentrancy

def test_tiny_ring_counts_every_read(traced):
    n = 200000
    r = traced([LIFE, "zero", str(n)], env={"FEEDTRACE_BUF_KB": "16"})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "zero reads=%d\n" % n
    t = r.trace
    p = t.procs[0]
    assert p["end"] == "exit"
    # the program makes exactly one open and n reads, nothing else hooked
    assert t.count("open", path="/dev/zero") == 1
    rd = t.count("read", path="/dev/zero", ret=1)
    assert rd == t.count("read")
    assert p["records"] == rd + 1
    assert rd + p["lost"] == n
