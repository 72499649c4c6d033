"""File reads that do not go through read(): the stdio readers (recorded
when they refill their buffer), copies in the kernel (copy_file_range,
sendfile, splice from a file) and POSIX aio reads.

Program: tests/progs/io_paths.c, built -g -O2 (its getline is glibc's
inline __getdelim). Each traced run's stdout must equal the untraced run's.
"""
import os
import subprocess

import pytest

from conftest import Trace, built_prog, clean_env, preload, untraced

LINES = 3000


def make_lines(d):
    """a CSV-like text file: LINES lines of 2 to 56 bytes"""
    p = os.path.join(str(d), "lines.csv")
    with open(p, "w") as f:
        for i in range(LINES):
            f.write("%d,%s\n" % (i, "x" * (i % 50)))
    return p


def stdio_buffer(path):
    """the buffer glibc gives a stream on path: st_blksize below BUFSIZ"""
    b = os.stat(path).st_blksize
    return b if 0 < b < 8192 else 8192


def same_output(run, argv):
    u = untraced(argv)
    assert run.returncode == u.returncode == 0, run.stderr
    assert run.stdout == u.stdout
    return u


# (mode, the kind its refills are recorded as)
READERS = [("fgets", "fgets"), ("getline", "getline"), ("getdelim", "getdelim"),
           ("fgetc", "fgetc"), ("getc", "getc"), ("getc_unlocked", "__uflow"),
           ("fread_unlocked", "fread_unlocked"), ("fscanf", "fscanf"),
           ("gnu_fscanf", "fscanf"), ("fgetwc", "fgetwc"), ("getwc", "fgetwc"),
           ("fgetws", "fgetws")]


@pytest.mark.parametrize("mode,kind", READERS)
def test_stdio_refills(traced, tmp_path, mode, kind):
    """One record per refill of the buffer, none for the calls it serves:
    a 90,390-byte file read by a 4 KiB buffer is 23 reads (22 of 4,096
    bytes, one of the rest) and one that meets the end, however many
    lines or bytes were asked for."""
    exe = built_prog("io_paths")
    path = make_lines(tmp_path)
    size, buf = os.path.getsize(path), stdio_buffer(path)
    argv = [exe, "stdio", mode, path]
    r = traced(argv)
    same_output(r, argv)
    assert r.stdout.startswith("%s bytes %d calls " % (mode, size))
    t = r.trace
    recs = t.calls(kind)
    full, rest = divmod(size, buf)
    assert [e["args"]["ret"] for e in recs] == [buf] * full + [rest, 0]
    assert all(e["args"]["req"] == buf and e["args"]["path"] == path for e in recs)
    fd = t.calls("fopen", path=path)[0]["args"]["fd"]
    assert all(e["args"]["fd"] == fd for e in recs)
    # no other reader's kind, and no read() (glibc's is its own)
    others = {k for _, k in READERS} - {kind}
    assert not [e for e in t.events if e["call"] in others or e["call"] == "read"]
    assert t.procs[0]["lost"] == 0


@pytest.mark.parametrize("mode,kind", [("fgets", "fgets"), ("getc_unlocked", "__uflow")])
def test_stdio_two_threads_two_files(traced, tmp_path, mode, kind):
    """Two threads each reading its own file at once: each file's refills
    on its reader's thread, exact as for one."""
    exe = built_prog("io_paths")
    a = make_lines(tmp_path)
    b = os.path.join(str(tmp_path), "other.csv")
    with open(b, "w") as f:
        f.write("".join("%d\n" % i for i in range(20000)))
    argv = [exe, "threads", mode, a, b]
    r = traced(argv)
    assert r.returncode == 0, r.stderr
    t = r.trace
    for p in (a, b):
        size, buf = os.path.getsize(p), stdio_buffer(p)
        recs = t.calls(kind, path=p)
        full, rest = divmod(size, buf)
        assert [e["args"]["ret"] for e in recs] == [buf] * full + [rest, 0]
        assert len({e["tid"] for e in recs}) == 1
    assert {e["tid"] for e in t.calls(kind, path=a)} != {e["tid"] for e in t.calls(kind, path=b)}
    assert t.count(kind) == sum(len(t.calls(kind, path=p)) for p in (a, b))


@pytest.mark.parametrize("mode", ["getchar", "getchar_call"])
def test_getchar_refills_of_stdin(tmp_path, mode):
    """getchar reads stdin, here the file opened before the program ran:
    its refills are recorded as getc of fd 0 (a path the tracer never
    saw: none), in the same shape as the other readers'. At -O2 <stdio.h>
    inlines it as getc(stdin); called as a function (by its address, or
    built without optimisation) it is its own wrapper's."""
    exe = built_prog("io_paths")
    path = make_lines(tmp_path)
    size, buf = os.path.getsize(path), stdio_buffer(path)
    out = str(tmp_path / "trace")
    env = clean_env()
    env.update(LD_PRELOAD=preload(), FEEDTRACE_OUT=out)
    with open(path) as f:
        p = subprocess.run([exe, "stdio", mode, path], stdin=f, env=env,
                           capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("%s bytes %d calls " % (mode, size))
    recs = Trace.load(out).calls("getc")
    full, rest = divmod(size, buf)
    assert [e["args"]["ret"] for e in recs] == [buf] * full + [rest, 0]
    assert all(e["args"]["fd"] == 0 and e["args"]["req"] == buf for e in recs)


def test_stdio_long_line_one_record(traced, tmp_path):
    """A line longer than the buffer: one call, several refills, one
    record with all the bytes that came in."""
    exe = built_prog("io_paths")
    path = os.path.join(str(tmp_path), "long.txt")
    open(path, "w").close()
    buf = stdio_buffer(path)
    line = "y" * (3 * buf + 10) + "\n"
    with open(path, "w") as f:
        f.write(line + "end\n")
    argv = [exe, "stdio", "getline", path]
    r = traced(argv)
    same_output(r, argv)
    recs = r.trace.calls("getline")
    # the first call refills 4 times: 3 full buffers and the 15 bytes left
    assert [e["args"]["ret"] for e in recs] == [len(line) + 4, 0]


def test_stdio_pipe_is_a_wait(traced, tmp_path):
    """fgets of stdin from a pipe: its refills are waits for the writer
    (read records of kind pipe), not file I/O."""
    exe = built_prog("io_paths")
    data = "".join("%d\n" % i for i in range(2000))
    argv = [exe, "stdio", "fgets", "/dev/stdin"]
    r = traced(argv, input=data)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("fgets bytes %d " % len(data))
    t = r.trace
    assert t.count("fgets") == 0
    fd = t.calls("fopen", path="/dev/stdin")[0]["args"]["fd"]
    waits = t.calls("read", fd=fd)
    assert waits and all(e["args"]["kind"] == 2 for e in waits)
    assert sum(e["args"]["ret"] for e in waits if e["args"]["ret"] > 0) == len(data)


def test_copies_in_the_kernel(traced, tmp_path):
    """copy_file_range, sendfile and splice from a file: reads of the file,
    with where the bytes went; splice from the pipe into the file is a
    write, not recorded."""
    exe = built_prog("io_paths")
    path = make_lines(tmp_path)
    size, chunk = os.path.getsize(path), 10000
    out = os.path.join(str(tmp_path), "out")
    argv = [exe, "copy", str(chunk), path, out]
    r = traced(argv)
    assert r.returncode == 0 and r.stdout == "copied\n", r.stderr
    t = r.trace
    full, rest = divmod(size, chunk)
    for kind, n in (("copy_file_range", 1), ("sendfile", 2), ("splice", 3)):
        recs = t.calls(kind)
        assert [e["args"]["ret"] for e in recs] == [chunk] * full + [rest, 0], kind
        assert all(e["args"]["req"] == chunk and e["args"]["path"] == path for e in recs)
        with open(path, "rb") as a, open("%s.%d" % (out, n), "rb") as b:
            assert a.read() == b.read()
    for kind, n in (("copy_file_range", 1), ("sendfile", 2)):
        assert {e["args"]["out_path"] for e in t.calls(kind)} == {"%s.%d" % (out, n)}
    pipe_w = t.calls("pipe")[0]["args"]["fd1"]
    assert {e["args"]["out"] for e in t.calls("splice")} == {pipe_w}


def test_posix_aio_reads(traced, tmp_path):
    """aio_read: submissions, aio_suspend: waits, aio_return: the bytes;
    reads listed by lio_listio are seen at their aio_return, its LIO_WAIT
    wait as a wait (the first request's path, how many), LIO_NOWAIT not;
    its version GLIBC_2.4 is the same wrapper, GLIBC_2.2.5 (another
    function in glibc) is glibc's own, unrecorded; the aio_write is not a
    read (its aio_return unrecorded, its wait recorded)."""
    exe = built_prog("io_paths")
    path = make_lines(tmp_path)
    block, n = 4096, 5
    argv = [exe, "aio", str(block), str(n), path]
    r = traced(argv)
    same_output(r, argv)
    assert r.stdout == "aio read %d\n" % ((3 * n + 2) * block)
    t = r.trace
    subs = t.calls("aio_read")
    assert len(subs) == n
    assert all(e["args"]["bytes"] == block and e["args"]["ret"] == 0 and
               e["args"]["path"] == path for e in subs)
    rets = t.calls("aio_return")
    assert len(rets) == 3 * n + 2
    assert all(e["args"]["req"] == block and e["args"]["ret"] == block and
               e["args"]["path"] == path for e in rets)
    waits = t.calls("aio_suspend")
    # the LIO_NOWAIT requests' waits: one each while still in progress
    assert n + 1 <= len(waits) <= 2 * n + 1
    assert {(e["args"]["path"], e["args"]["nent"]) for e in waits[n:-1]} <= {(path, 1)}
    assert [(e["args"]["path"], e["args"]["nent"], e["args"]["ret"])
            for e in waits[:n] + waits[-1:]] == [(path, 1, 0)] * n + [(path + ".w", 1, 0)]
    lio = t.calls("lio_listio")
    assert [(e["args"]["path"], e["args"]["nent"], e["args"]["ret"]) for e in lio] == \
        [(path, n, 0), (path, 1, 0)]
    assert t.count("aio_write") == 0


def test_report_counts_the_new_reads(tmp_path, traced):
    """The report's reads count the refills and copies as reads of their
    file (the converter takes any io record with req and ret as a read)."""
    import json
    import subprocess
    from conftest import TOOL
    exe = built_prog("io_paths")
    path = make_lines(tmp_path)
    r = traced([exe, "stdio", "fgets", path])
    assert r.returncode == 0
    rep = subprocess.run([TOOL, "report", "--json", r.dir], capture_output=True, text=True,
                         timeout=120)
    assert rep.returncode == 0, rep.stderr
    j = json.loads(rep.stdout)
    size, buf = os.path.getsize(path), stdio_buffer(path)
    assert j["metrics"]["reads"] == size // buf + 2
    assert j["metrics"]["read_bytes"] == size


def test_wide_readers_utf8(traced, tmp_path):
    """fgetwc and fgetws of a UTF-8 file in a UTF-8 locale: a refill keeps
    the first bytes of a character cut at the buffer's end, and reads the
    rest of the buffer: the bytes recorded add up to the file's size."""
    exe = built_prog("io_paths")
    path = os.path.join(str(tmp_path), "utf8.txt")
    text = "".join("%d,%s\n" % (i, "\u00e9" * (i % 50)) for i in range(3000))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    size, buf = os.path.getsize(path), stdio_buffer(path)
    for mode, kind in (("fgetwc", "fgetwc"), ("fgetws", "fgetws")):
        argv = [exe, "stdio", mode, path]
        r = traced(argv, env={"LC_ALL": "C.UTF-8"})
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("%s bytes %d calls " % (mode, len(text)))
        rets = [e["args"]["ret"] for e in r.trace.calls(kind, path=path)]
        assert sum(rets) == size and rets[-1] == 0
        assert all(buf - 4 <= n <= buf for n in rets[:-2]), rets


def test_gnu_sort_reads_its_input(traced, tmp_path):
    """GNU sort reads its input by fread_unlocked (gnulib's unlocked-io):
    its refills are in the trace, of the file's path, adding up to its
    size, the last one meeting the end; with a small buffer (-S 64K) the
    same, in many calls. Output as untraced."""
    sort = "/usr/bin/sort"
    if not os.path.exists(sort):
        pytest.skip("no GNU sort")
    path = os.path.join(str(tmp_path), "words.txt")
    with open(path, "w") as f:
        f.write("".join("%08d,%s\n" % ((i * 7919) % 100003, "x" * (i % 40))
                        for i in range(20000)))
    size, buf = os.path.getsize(path), stdio_buffer(path)
    for extra in ([], ["-S", "64K", "--parallel=1", "-T", str(tmp_path)]):
        argv = [sort] + extra + [path]
        r = traced(argv)
        same_output(r, argv)
        recs = r.trace.calls("fread_unlocked", path=path)
        assert recs, r.trace.events
        assert sum(e["args"]["ret"] for e in recs) == size
        assert recs[-1]["args"]["ret"] in (0, size)
        assert all(e["args"]["req"] == buf for e in recs)
        if extra:
            full, rest = divmod(size, buf)
            assert [e["args"]["ret"] for e in recs] == [buf] * full + [rest, 0]


@pytest.mark.parametrize("mode,kind", [("fread_unlocked", "fread_unlocked"),
                                       ("fgetws", "fgetws")])
def test_fortified_stdio_readers(traced, tmp_path, mode, kind):
    """Built with _FORTIFY_SOURCE=2 (tests/progs/stdio_fortify.c), a read
    into a buffer of known size calls __fread_unlocked_chk and
    __fgetws_chk: recorded as their plain forms, the same refills."""
    exe = built_prog("stdio_fortify")
    chk = "__%s_chk" % mode
    nm = subprocess.run(["nm", "-D", exe], capture_output=True, text=True).stdout
    assert chk in nm
    path = make_lines(tmp_path)
    size, buf = os.path.getsize(path), stdio_buffer(path)
    argv = [exe, mode, path, "300"]
    r = traced(argv)
    same_output(r, argv)
    assert r.stdout.startswith("%s bytes %d calls " % (mode, size))
    recs = r.trace.calls(kind)
    full, rest = divmod(size, buf)
    assert [e["args"]["ret"] for e in recs] == [buf] * full + [rest, 0]
    assert all(e["args"]["path"] == path and e["args"]["req"] == buf for e in recs)


def test_fortified_fread(traced, tmp_path):
    """fread into a buffer of known size, built with _FORTIFY_SOURCE=2,
    calls __fread_chk: recorded as fread, every call (as fread is), each
    with the bytes it asked for and got: 300 a call, the rest, then 0."""
    exe = built_prog("stdio_fortify")
    nm = subprocess.run(["nm", "-D", exe], capture_output=True, text=True).stdout
    assert "__fread_chk" in nm
    path = make_lines(tmp_path)
    size = os.path.getsize(path)
    argv = [exe, "fread", path, "300"]
    r = traced(argv)
    same_output(r, argv)
    full, rest = divmod(size, 300)
    calls = full + (2 if rest else 1)
    assert r.stdout == "fread bytes %d calls %d\n" % (size, calls)
    recs = r.trace.calls("fread")
    assert [e["args"]["ret"] for e in recs] == [300] * full + ([rest] if rest else []) + [0]
    assert all(e["args"]["path"] == path and e["args"]["req"] == 300 for e in recs)
