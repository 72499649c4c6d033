"""fds made by dup, dup2, dup3 and fcntl(F_DUPFD / F_DUPFD_CLOEXEC) carry the
path of the fd they copy: reads through them are attributed to the file.

Programs: tests/progs/io_dup.c (each way of copying an fd, failing dups,
a dup2 over another open file) and python3's os.dup / os.dup2 (which call
fcntl64(F_DUPFD_CLOEXEC), dup2 and dup3). A dup records nothing itself;
results and errno are the real functions' (traced output is byte-identical
to untraced). A program that takes over every descriptor number
(tests/progs/io_fdsteal.c) neither loses the trace nor gets trace bytes in
its own file.
"""
import os

import pytest

from conftest import PYTHON, built_prog, untraced

K = 100


def make_file(d, name, size=16384):
    p = os.path.join(str(d), name)
    with open(p, "wb") as f:
        f.write(bytes((j * 13) & 0xFF for j in range(size)))
    return p


def test_reads_through_dups_are_attributed(traced, tmp_path):
    exe = built_prog("io_dup")
    a = make_file(tmp_path, "a.bin")
    b = make_file(tmp_path, "b.bin")
    argv = [exe, a, b, str(K)]
    r = traced(argv)
    u = untraced(argv)
    assert r.returncode == u.returncode == 0, r.stderr
    assert r.stdout == u.stdout
    assert r.stdout.splitlines() == [
        "dup2 100 dup3 101 F_DUPFD>=200 1 F_DUPFD_CLOEXEC>=300 1",
        "cloexec dup3 1 F_DUPFD 0 F_DUPFD_CLOEXEC 1",
        "dup(-1) = -1 errno 9",
        "dup2(-1, 102) = -1 errno 9",
        "dup3(a, a, 0) = -1 errno 22",
        "fcntl(-1, F_DUPFD, 0) = -1 errno 9",
        "read(closed copy) = -1 errno 9",
        "bytes %d" % (18 * K),
    ]
    t = r.trace
    # 5 copies x 3 reads, 2 through the dup2 over b.bin's fd, 1 through a's own
    assert t.count("read", path=a) == 18
    assert t.count("read", path=a, req=K, ret=K) == 18
    assert t.count("read", path=b) == 0
    fds = {e["args"]["fd"] for e in t.calls("read", path=a)}
    assert {100, 101} <= fds
    assert any(200 <= fd < 300 for fd in fds) and any(fd >= 300 for fd in fds)
    # the read on the closed copy: no path, EBADF
    [bad] = t.calls("read", ret=-9)
    assert (bad["args"]["fd"], bad["args"]["path"]) == (100, "")
    assert t.count("read") == 19
    # each copy's close, the close of b's fd (a.bin by then) and a's own carry a.bin
    assert t.count("close", path=a, ret=0) == 7
    assert t.count("close", path=b) == 0
    assert [e["args"]["path"] for e in t.calls("open")] == [a, b]
    # dups record nothing themselves
    assert {e["call"] for e in t.events} <= {"open", "read", "close"}


PY_DUP = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
d = os.dup(fd)                                  # fcntl64(F_DUPFD_CLOEXEC)
n = sum(len(os.read(d, 100)) for _ in range(4))
os.close(d)
os.dup2(fd, 60)                                 # dup2
n += sum(len(os.read(60, 100)) for _ in range(3))
os.close(60)
os.dup2(fd, 61, inheritable=False)              # dup3(O_CLOEXEC)
n += sum(len(os.read(61, 100)) for _ in range(2))
os.close(61)
os.close(fd)
print(n)
"""


def test_python_os_dup(traced, tmp_path):
    a = make_file(tmp_path, "py.bin")
    argv = [PYTHON, "-c", PY_DUP, a]
    r = traced(argv)
    u = untraced(argv)
    assert r.returncode == u.returncode == 0, r.stderr
    assert r.stdout == u.stdout == "900\n"
    t = r.trace
    assert [e["args"]["path"] for e in t.calls("open64") if e["args"]["path"] == a] == [a]
    assert t.count("read", path=a) == 9
    assert t.count("read", path=a, req=100, ret=100) == 9
    assert sorted(e["args"]["fd"] for e in t.calls("read", path=a))[-5:] == [60] * 3 + [61] * 2
    assert t.count("close", path=a, ret=0) == 4


@pytest.mark.parametrize("how", ["closefrom", "close_range", "close_all"])
def test_program_takes_every_descriptor(traced, tmp_path, how):
    """A program that closes every descriptor from 3 (closefrom, close_range,
    a close loop) and then dup2s/dup3s its own file onto each number up to
    999 (the trace file sits at 700 or above): the trace file keeps its
    place or moves, never a byte of trace goes into the program's file, and
    every read is in the trace. Before, dup2 onto the trace file's number
    sent the rest of the trace into the program's file (3-9 KB of it here)
    and the trace ended without records."""
    exe = built_prog("io_fdsteal")
    data = make_file(tmp_path, "data.bin", 100)
    victim = str(tmp_path / "victim.txt")
    n = 50
    r = traced([exe, how, data, victim, str(n)])
    assert (r.returncode, r.stdout, r.stderr) == (0, "reads=%d\n" % (2 * n), "")
    with open(victim, "rb") as f:
        assert f.read() == b"hello\nhello\n"
    t = r.trace
    assert t.count("read", path=data, req=100, ret=100) == 2 * n
    assert t.count("open", path=data) == 2 * n
    [p] = t.procs
    assert (p["end"], p["status"], p["lost"], p["damaged_chunks"]) == ("exit", 0, 0, 0)
