"""The stat family (shim/io.c): each entry point's lookups recorded, one
record per call, with the path, the directory descriptor, the flags and
the result, on the thread or process that made it.

Programs: tests/progs/stat_calls.c (built -g -O2: every entry point, a
thread, a forked child) and a Python dataset scan (os.stat, os.lstat,
os.path.exists, os.scandir's DirEntry.stat, dir_fd) in each CPython
test_pyversions finds. Each traced run's
stdout must equal the untraced run's.
"""
import glob
import os

import pytest

from conftest import built_prog, report_json, untraced
from test_pyversions import interpreters

N = 7
AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH = "0x100", "0x1000"
ENOENT, EFAULT = -2, -14
FAMILY = ("stat", "lstat", "fstatat", "statx")


def make_dir(tmp_path, name="data"):
    """DIR with f0..f(N-1) (100 * (i + 1) bytes) and link -> f0"""
    d = tmp_path / name
    d.mkdir()
    for i in range(N):
        (d / ("f%d" % i)).write_bytes(b"x" * (100 * (i + 1)))
    os.symlink("f0", str(d / "link"))
    return str(d)


def same_output(run, argv):
    u = untraced(argv)
    assert run.returncode == u.returncode == 0, run.stderr
    assert run.stdout == u.stdout
    return u


def rows(events):
    return [(e["call"], e["args"]["dirfd"], e["args"]["path"], e["args"]["flags"],
             e["args"]["ret"]) for e in events]


def test_every_entry_point_thread_and_child(traced, tmp_path):
    exe = built_prog("stat_calls")
    d = make_dir(tmp_path)
    argv = [exe, d, str(N)]
    r = traced(argv)
    u = same_output(r, argv)
    assert "stat sum %d\nstat64 0 ok 100\n" % (100 * N * (N + 1) // 2) in u.stdout
    assert "stat-efault -1 Bad address -1\n" in u.stdout
    assert u.stdout.endswith("thread sum %d\nchild 0\n" % (100 * N * (N + 1) // 2))
    t = r.trace
    f = lambda n: os.path.join(d, n)
    main_pid = min(p["pid"] for p in t.procs)
    child_pid = max(p["pid"] for p in t.procs)
    assert len(t.procs) == 2 and main_pid != child_pid
    opens = t.calls("open", pid=main_pid)
    dfd = [e["args"]["fd"] for e in opens if e["args"]["path"] == d]
    f2 = [e["args"]["fd"] for e in opens if e["args"]["path"] == f("f2")]
    assert len(dfd) == 1 and len(f2) == 1
    dfd, f2 = dfd[0], f2[0]
    mine = [e for e in t.events if e["call"] in FAMILY and e["pid"] == main_pid]
    tids = sorted({e["tid"] for e in mine})
    assert len(tids) == 2 and tids[0] == main_pid
    # the main thread, in the program's order: __xstat* are stat,
    # __lxstat* lstat, __fxstatat* fstatat; an empty path with
    # AT_EMPTY_PATH names the descriptor's file; EFAULT's path unread
    expected = [("stat", AT_FDCWD, f("f%d" % i), "0x0", 0) for i in range(N)] + [
        ("stat", AT_FDCWD, f("f0"), "0x0", 0),
        ("stat", AT_FDCWD, f("missing"), "0x0", ENOENT),
        ("stat", AT_FDCWD, "", "0x0", EFAULT),
        ("lstat", AT_FDCWD, f("link"), "0x0", 0),
        ("lstat", AT_FDCWD, f("link"), "0x0", 0),
        ("fstatat", dfd, "f1", "0x0", 0),
        ("fstatat", dfd, "link", AT_SYMLINK_NOFOLLOW, 0),
        ("fstatat", f2, f("f2"), AT_EMPTY_PATH, 0),
        ("statx", AT_FDCWD, f("f0"), "0x0", 0),
        ("statx", f2, f("f2"), AT_EMPTY_PATH, 0),
        ("stat", AT_FDCWD, f("f0"), "0x0", 0),
        ("stat", AT_FDCWD, f("f0"), "0x0", 0),
        ("lstat", AT_FDCWD, f("link"), "0x0", 0),
        ("lstat", AT_FDCWD, f("link"), "0x0", 0),
        ("fstatat", dfd, "f1", "0x0", 0),
        ("fstatat", dfd, "link", AT_SYMLINK_NOFOLLOW, 0),
    ]
    assert rows(e for e in mine if e["tid"] == main_pid) == expected
    # the second thread's scan, on its own thread
    assert rows(e for e in mine if e["tid"] == tids[1]) == \
        [("stat", AT_FDCWD, f("f%d" % i), "0x0", 0) for i in range(N)]
    # the forked child's lstats, in the child
    child = [e for e in t.events if e["pid"] == child_pid and e["call"] in FAMILY]
    assert rows(child) == [("lstat", AT_FDCWD, f("link"), "0x0", 0)] * N
    # the dump's tally and the report's event counts agree
    assert t.proc(main_pid)["calls"] == {"open": 2, "fork": 1, "stat": 2 * N + 5,
                                         "lstat": 4, "fstatat": 5, "statx": 2}
    assert t.proc(child_pid)["calls"] == {"lstat": N, "_exit": 1}
    assert all(p["lost"] == 0 and p["strings_lost"] == 0 for p in t.procs)
    rep = report_json(r.dir)
    events = {p["pid"]: p["metrics"]["events"] for p in rep["processes"]}
    assert events == {main_pid: 3 + 2 * N + 5 + 4 + 5 + 2, child_pid: N + 1}


SCAN = r"""
import os, sys
d = sys.argv[1]
names = sorted(os.listdir(d))
size = sum(os.stat(os.path.join(d, n)).st_size for n in names if n.startswith("f"))
gone = os.path.exists(os.path.join(d, "missing"))
link = os.lstat(os.path.join(d, "link")).st_size
fd = os.open(d, os.O_RDONLY)
f1 = os.stat("f1", dir_fd=fd).st_size
entries = sorted((e.name, e.stat().st_size) for e in os.scandir(fd))
os.close(fd)
print(size, gone, link, f1, entries)
"""


@pytest.mark.parametrize("python", interpreters())
def test_python_dataset_scan(traced, tmp_path, python):
    """A dataset scan as Python makes it: every lookup of the data
    directory's files recorded, none more (Python's own start-up lookups
    are of other paths); the same calls from Debian's 3.11 and each
    CPython 3.9 to 3.14 that pyenv has."""
    d = make_dir(tmp_path)
    argv = [python, "-c", SCAN, d]
    r = traced(argv)
    same_output(r, argv)
    assert r.stdout.startswith("%d False 2 200 " % (100 * N * (N + 1) // 2))
    t = r.trace
    fd = [e["args"]["fd"] for e in t.calls("open64", path=d)]
    assert len(fd) == 1
    ours = [e for e in t.events if e["call"] in FAMILY and
            (e["args"]["path"].startswith(d + "/") or e["args"]["dirfd"] == fd[0])]
    f = lambda n: os.path.join(d, n)
    # os.stat per file; exists: a stat that failed; lstat; stat with
    # dir_fd: fstatat; then each DirEntry of scandir(fd), in the
    # directory's order: fstatat, a file's not following links (the same
    # answer: CPython's choice where d_type says it is no link)
    assert len(ours) == N + 3 + N + 1
    assert rows(ours[:N + 3]) == (
        [("stat", AT_FDCWD, f("f%d" % i), "0x0", 0) for i in range(N)] +
        [("stat", AT_FDCWD, f("missing"), "0x0", ENOENT),
         ("lstat", AT_FDCWD, f("link"), "0x0", 0),
         ("fstatat", fd[0], "f1", "0x0", 0)])
    assert sorted(rows(ours[N + 3:])) == sorted(
        [("fstatat", fd[0], "f%d" % i, AT_SYMLINK_NOFOLLOW, 0) for i in range(N)] +
        [("fstatat", fd[0], "link", "0x0", 0)])
    assert {e["tid"] for e in ours} == {e["pid"] for e in ours}
    assert t.procs[0]["lost"] == 0


def test_idle_outside_a_capture_window_and_redacted(traced, tmp_path):
    """FEEDTRACE_CAPTURE=off: the lookups pass through, nothing recorded;
    FEEDTRACE_REDACT=1: no looked-up path reaches the trace in clear, and
    one path hashes the same in stat, statx and __xstat."""
    exe = built_prog("stat_calls")
    d = make_dir(tmp_path, "very-secret-scan")
    argv = [exe, d, str(N)]
    r = traced(argv, env={"FEEDTRACE_CAPTURE": "off"})
    same_output(r, argv)
    assert [e for e in r.trace.events if e["call"] in FAMILY] == []
    r = traced(argv, env={"FEEDTRACE_REDACT": "1"})
    same_output(r, argv)
    for f in glob.glob(os.path.join(r.dir, "*.ft")):
        assert b"very-secret" not in open(f, "rb").read()
    t = r.trace
    main_pid = min(p["pid"] for p in t.procs)
    mine = [e for e in t.events if e["call"] in FAMILY and e["tid"] == main_pid]
    assert len(mine) == N + 5 + 4 + 5 + 2
    paths = [e["args"]["path"] for e in mine]
    efault = N + 2
    assert paths[efault] == ""
    assert all(p.startswith("redacted:") for i, p in enumerate(paths) if i != efault)
    # f0: stat, stat64, statx, __xstat, __xstat64 (their places in the program)
    f0 = {paths[i] for i in (0, N, N + 8, N + 10, N + 11)}
    assert len(f0) == 1 and len(set(paths[:N])) == N
