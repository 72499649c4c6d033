"""Thread names in the trace: what the kernel has for each thread, read at
its first event and again whenever the program renames it (prctl
PR_SET_NAME, pthread_setname_np on itself or on another thread), never by
the flusher opening /proc (that took the lowest free descriptor beside the
program: a dup2 onto it failed with EBUSY, test_io_dup.py). A fork child
that leaves by _exit writes its thread's name too (the raw exit drain).

Program: tests/progs/thread_names.c; `feedtrace dump --json` gives each
process's thread names (tid -> name)."""
import subprocess

from conftest import BUILD, ROOT, prog, untraced


def test_thread_names(traced, tmp_path):
    exe = prog("thread_names")
    r = subprocess.run(["make", "-s", "BUILD=" + BUILD, exe], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr
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
