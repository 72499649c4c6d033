"""Thread names in the trace: what the kernel has for each thread, read at
its first event and again whenever the program renames it (prctl
PR_SET_NAME, pthread_setname_np on itself or on another thread), never by
the flusher opening /proc (that took the lowest free descriptor beside the
program: a dup2 onto it failed with EBUSY, test_io_dup.py). A fork child
that leaves by _exit writes its thread's name too (the raw exit drain).

Program: tests/progs/thread_names.c; `feedtrace dump --json` gives each
process's thread names (tid -> name)."""
import subprocess

from conftest import PYTHON, TOOL, built_prog, untraced
from test_convert import load


def test_thread_names(traced, tmp_path):
    exe = built_prog("thread_names")
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(100))
    run = traced([exe, str(data)])
    assert run.returncode == 0, run.stderr
    said = [ln.split() for ln in run.stdout.splitlines()]
    names = [n for _, n in said]
    assert names[:3] == ["main-prctl", "named-by-main", "self-named"]
    assert names[3] == "main-prctl"          # ERANGE: kept what it inherited
    assert names[4] == "main-prctl"          # the fork child
    assert len(said) == 5
    t = run.trace
    assert len(t.procs) == 2
    parent = [p for p in t.procs if p["end"] == "exit"][0]
    child = [p for p in t.procs if p["end"] == "_exit"][0]
    assert parent["thread_names"] == {tid: n for tid, n in said[:4]}
    assert child["thread_names"] == {said[4][0]: said[4][1]}
    # every thread made its one read, under its own tid
    reads = t.calls("read", path=str(data))
    assert sorted(str(e["tid"]) for e in reads) == sorted(tid for tid, _ in said)
    u = untraced([exe, str(data)])
    assert u.returncode == 0 and [ln.split()[1] for ln in u.stdout.splitlines()] == names


# Python threads: the name threading gives each Thread, taken when it
# starts (libfeedtrace/callsite.c, from Thread.start's frame, GIL held)
THREADS = r'''
import os, threading, queue
q = queue.Queue()
def producer(n):
    for i in range(n):
        q.put(i)
    q.put(None)
def pump():
    with open(os.devnull) as f:
        f.read()
a = threading.Thread(target=producer, args=(500,))
b = threading.Thread(target=producer, args=(500,), name="loader")
c = threading.Thread(target=pump, name="x" * 60)
d = threading.Thread(target=pump)
d.start(); d.name = "renamed-after-start"; d.join()
for t in (a, b, c):
    t.start()
done = 0
while done < 2:
    done += q.get() is None
for t in (a, b, c):
    t.join()
print(threading.get_native_id())
for t in (a, b, c, d):
    print(t.native_id)
'''


def python_threads(traced, tmp_path, env=None):
    script = tmp_path / "threads.py"
    script.write_text(THREADS)
    run = traced([PYTHON, str(script)], env=env)
    assert run.returncode == 0, run.stderr
    tids = run.stdout.split()
    [p] = run.trace.procs
    return tids, p["thread_names"], run


def test_python_threads_named_as_threading_names_them(traced, tmp_path):
    tids, names, run = python_threads(traced, tmp_path)
    main, a, b, c, d = tids
    # 5 threads, each named as Python knows it; the long one cut to 47
    # bytes; the one renamed after its start keeps the name it started with
    assert names == {main: "python3", a: "Thread-1 (producer)", b: "loader",
                     c: "x" * 47, d: "Thread-2 (pump)"}
    # the timeline: the main thread of a Python process is "MainThread"
    out = str(tmp_path / "t.pftrace")
    r = subprocess.run([TOOL, "convert", "-o", out, run.dir], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = load(out, "select t.tid, t.name from thread t join process p using (upid) "
                     "where p.pid = %s" % main)
    got = {str(x["tid"]): x["name"] for x in rows}
    want = {main: "MainThread", a: "Thread-1 (producer)", b: "loader", c: "x" * 47,
            d: "Thread-2 (pump)"}
    # a thread has a track when it made a traced call (here at least the
    # main thread's waits for the queue and c's read)
    assert main in got and c in got
    assert got == {t: want[t] for t in got}


def test_python_thread_names_redacted(traced, tmp_path):
    """FEEDTRACE_REDACT=1: names from the program's Python are not taken
    (the kernel's name is, as for every program)"""
    tids, names, _ = python_threads(traced, tmp_path, env={"FEEDTRACE_REDACT": "1"})
    assert set(names.values()) == {"python3"}
    assert set(names) <= set(tids)


WRITERS = r'''
import sys, threading
out = sys.argv[1]
lock = threading.Lock()
def writer(k):
    for i in range(200):
        with lock:
            with open(out, "a") as f:
                f.write("%d %d\n" % (k, i))
ts = [threading.Thread(target=writer, args=(k,), name="w%d" % k) for k in range(3)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sorted(t.name for t in ts), threading.current_thread().name)
'''


def test_named_threads_change_nothing_the_program_sees(traced, tmp_path):
    """taking the names (a call into the interpreter from pthread_create)
    leaves the program's output and its file as they are untraced"""
    script = tmp_path / "writers.py"
    script.write_text(WRITERS)
    a, b = tmp_path / "traced.txt", tmp_path / "untraced.txt"
    run = traced([PYTHON, str(script), str(a)])
    u = untraced([PYTHON, str(script), str(b)])
    assert run.returncode == 0 and u.returncode == 0, run.stderr + u.stderr
    assert run.stdout == u.stdout == "['w0', 'w1', 'w2'] MainThread\n"
    # the same lines (their order between threads is the scheduler's)
    assert sorted(a.read_text().splitlines()) == sorted(b.read_text().splitlines())
    assert len(a.read_text().splitlines()) == 600
    names = set(run.trace.procs[0]["thread_names"].values())
    assert {"w0", "w1", "w2"} <= names
