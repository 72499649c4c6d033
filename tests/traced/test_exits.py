"""Ending a process every way libc offers, and execs that fail.

tests/progs/exit_prog.c reads a file N times, then ends by quick_exit, err,
errx, verr, verrx, error or error_at_line (all of which end inside libc,
past the exit wrapper), or tries an exec that fails and goes on. Each run
is compared byte for byte with the untraced run; the trace must keep every
record, an END with the real status, and say a failed exec was not the end.
"""
import errno
import os

import pytest

from conftest import SANITIZER, prog, skip_under, untraced

EXIT = prog("exit_prog")
N = 7
STATUS = 9


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "data.txt"
    p.write_bytes(b"0123456789" * 10)
    return str(p)


def reads(t, path):
    return [e for e in t.calls("read") if e["args"].get("path") == path]


def same_as_untraced(traced, argv, tmp_path):
    plain = untraced(argv, cwd=str(tmp_path))
    r = traced(argv)
    assert (r.returncode, r.stdout, r.stderr) == \
        (plain.returncode, plain.stdout, plain.stderr)
    return r


def test_quick_exit_commits_after_its_handlers(traced, data, tmp_path):
    r = same_as_untraced(traced, [EXIT, "quick", data, str(N), str(STATUS)], tmp_path)
    assert r.returncode == STATUS
    # handlers run in reverse order of registration; stdio is not flushed
    assert r.stdout == "quick handler b\nquick handler a\n"
    t = r.trace
    p = t.procs[0]
    assert p["end"] == "_exit" and p["status"] == STATUS
    assert p["lost"] == 0 and p["damaged_chunks"] == 0
    assert t.count("open", path=data) == N and t.count("close", path=data) == N
    assert len(reads(t, data)) == N
    assert [e["args"]["status"] for e in t.calls("_exit")] == [STATUS]


@pytest.mark.parametrize("how", ["err", "errx", "verr", "verrx", "error", "error_at_line"])
def test_libc_exit_functions_keep_the_status(traced, data, tmp_path, how):
    r = same_as_untraced(traced, [EXIT, how, data, str(N), str(STATUS)], tmp_path)
    assert r.returncode == STATUS
    assert ("%s %d" % (how, N)) in r.stderr
    t = r.trace
    p = t.procs[0]
    assert p["end"] == "exit" and p["status"] == STATUS
    assert p["lost"] == 0
    assert len(reads(t, data)) == N


@pytest.mark.parametrize("how", ["main_leaves", pytest.param("main_cancelled", marks=skip_under(
    ["asan"], "ASan's runtime itself faults (stack-buffer-overflow in its sigaltstack "
    "interceptor) when the main thread is cancelled, untraced too"))])
def test_main_thread_ends_first(traced, data, tmp_path, how):
    """The main thread leaves (pthread_exit) or is cancelled; the process
    ends, as untraced, when its last thread returns: glibc calls exit(0)
    there (its stdio flushed), not kept alive by the flusher thread."""
    r = same_as_untraced(traced, [EXIT, how, data, str(N), str(STATUS)], tmp_path)
    assert r.returncode == 0
    assert r.stdout == "main leaves\nlast thread done\n"
    t = r.trace
    p = t.procs[0]
    assert p["end"] == "exit" and p["status"] == 0
    assert p["lost"] == 0
    assert len(reads(t, data)) == 2 * N      # the main thread's, then the last one's


def test_failed_exec_then_exit(traced, data, tmp_path):
    r = same_as_untraced(traced, [EXIT, "execfail_exit", data, str(N), str(STATUS)],
                         tmp_path)
    assert r.stdout == "execv=-1 errno=%d\n" % errno.ENOENT
    t = r.trace
    assert len(t.procs) == 1
    p = t.procs[0]
    assert p["end"] == "exit" and p["status"] == STATUS
    ex = t.calls("execve")
    # the attempt (written before the END(exec)) and its failure
    assert [(e["args"]["path"], e["args"]["errno"]) for e in ex] == \
        [("/nonexistent/feedtrace-exec", 0), ("/nonexistent/feedtrace-exec", errno.ENOENT)]
    assert len(reads(t, data)) == 2 * N


def test_failed_exec_then_killed_is_not_read_as_an_exec(traced, data):
    r = traced([EXIT, "execfail_kill", data, str(N), str(STATUS)])
    assert r.returncode == -9
    t = r.trace
    assert len(t.procs) == 1
    p = t.procs[0]
    assert p["end"] == "exec failed, continued; no end record after (killed, or still running)"
    assert [e["args"]["errno"] for e in t.calls("execve")] == [0, errno.ENOENT]
    assert len(reads(t, data)) >= N   # the reads before the exec were drained with it


def test_exec_record_carries_the_path(traced, data):
    r = traced([EXIT, "exec", data, str(N), str(STATUS)])
    assert r.returncode == STATUS
    files = sorted(os.listdir(r.dir))
    assert len(files) == 2, files
    t = r.trace
    ex = t.calls("execve")
    assert [(e["args"]["path"], e["args"]["errno"]) for e in ex] == [(EXIT, 0)]
    ends = sorted((p["exec_seq"], p["end"], p["status"]) for p in t.procs)
    assert ends == [(0, "exec", 0), (1, "exit", STATUS)]


def test_fork_does_not_wait_for_compression(traced):
    # zstd at its slowest level with a busy writer: the flusher spends most
    # of its time compressing, with the flush lock let go; a fork that
    # finds it so says flusher_busy=1 in its FORK record
    n = 60
    r = traced([prog("exit_forkstorm"), str(n)],
               env={"FEEDTRACE_ZSTD_LEVEL": "19", "FEEDTRACE_FLUSH_MS": "10"})
    assert r.returncode == 0, r.stderr
    t = r.trace
    forks = t.calls("fork")
    assert len(forks) == n
    if SANITIZER not in ("asan", "asan-ubsan", "tsan"):
        # a sanitizer build's fork waits for the flusher to be quiet
        # (lifecycle.c, fork_prepare): there no fork finds it compressing
        assert any(f["args"]["flusher_busy"] == 1 for f in forks)
    children = {f["args"]["child"] for f in forks}
    ends = {p["pid"]: (p["end"], p["status"]) for p in t.procs}
    assert all(ends[c] == ("_exit", 0) for c in children)
    assert len(t.procs) == n + 1
    assert all(p["damaged_chunks"] == 0 for p in t.procs)
    main = [p for p in t.procs if p["pid"] not in children]
    assert len(main) == 1 and main[0]["end"] == "exit"
    calls = int(r.stdout.split()[3])
    # every writer call is an open and a close: recorded or counted lost
    assert t.count("open", pid=main[0]["pid"]) + t.count("close", pid=main[0]["pid"]) \
        + main[0]["lost"] == 2 * calls
