"""File I/O hooks: exact records for each wrapped entry point.

Programs: tests/progs/io_read.c (plain calls) and tests/progs/io_fortify.c
(_FORTIFY_SOURCE=2, -O2: __open_2 and __read_chk). Each traced run's stdout
must be byte-identical to the untraced run's.
"""
import json
import os
import subprocess

from conftest import PYTHON, ROOT, built_prog, untraced

N_FILES, M_READS, K_BYTES = 6, 9, 100


def make_files(d, names, size=16384):
    paths = []
    for i, n in enumerate(names):
        p = os.path.join(str(d), n)
        with open(p, "wb") as f:
            f.write(bytes((i * 7 + j * 13) & 0xFF for j in range(size)))
        paths.append(p)
    return paths


def same_output(traced_run, argv, **kw):
    u = untraced(argv, **kw)
    assert traced_run.returncode == u.returncode == 0, traced_run.stderr
    assert traced_run.stdout == u.stdout
    return u


def test_open_and_read_counts_and_attribution(traced, tmp_path):
    exe = built_prog("io_read")
    files = make_files(tmp_path, ["data%02d.bin" % i for i in range(N_FILES)])
    argv = [exe, "reads", str(M_READS), str(K_BYTES)] + files
    r = traced(argv)
    same_output(r, argv)
    t = r.trace
    opens = t.calls("open")
    assert len(opens) == N_FILES
    assert [e["args"]["path"] for e in opens] == files
    assert all(e["args"]["fd"] >= 0 for e in opens)
    reads = t.calls("read")
    assert len(reads) == N_FILES * M_READS
    assert all(e["args"]["req"] == K_BYTES and e["args"]["ret"] == K_BYTES for e in reads)
    for p in files:
        assert t.count("read", path=p) == M_READS
        assert t.count("close", path=p, ret=0) == 1
    # reads are attributed in program order: file i's reads between its open and close
    order = [(e["call"], e["args"]["path"]) for e in t.events
             if e["call"] in ("open", "read", "close")]
    expect = []
    for p in files:
        expect += [("open", p)] + [("read", p)] * M_READS + [("close", p)]
    assert order == expect
    assert t.procs[0]["lost"] == 0


def test_each_api(traced, tmp_path):
    exe = built_prog("io_read")
    d = str(tmp_path)
    make_files(tmp_path, ["f_open64", "f_openat", "f_pread", "f_readv", "f_fopen", "f_mmap"])
    argv = [exe, "apis", d]
    r = traced(argv)
    os.unlink(os.path.join(d, "f_creat"))
    same_output(r, argv)
    t = r.trace
    P = lambda n: os.path.join(d, n)

    o64 = t.calls("open64")
    assert [e["args"]["path"] for e in o64] == [P("f_open64")]
    assert t.calls("read", path=P("f_open64"))[0]["args"]["req"] == 10

    # openat: the path as passed, with the directory fd it is relative to
    dir_open = t.calls("open", path=d)
    assert len(dir_open) == 1
    oat = t.calls("openat")
    assert len(oat) == 1
    assert oat[0]["args"]["path"] == "f_openat"
    assert oat[0]["args"]["dirfd"] == dir_open[0]["args"]["fd"]
    rd = t.calls("read", path="f_openat")
    assert len(rd) == 1 and rd[0]["args"]["req"] == 20 and rd[0]["args"]["ret"] == 20

    cr = t.calls("creat")
    assert len(cr) == 1 and cr[0]["args"]["path"] == P("f_creat")
    assert cr[0]["args"]["mode"] == "0x180"
    assert cr[0]["args"]["fd"] >= 0

    pr = t.calls("pread")
    assert len(pr) == 1
    assert pr[0]["args"] == {"fd": pr[0]["args"]["fd"], "path": P("f_pread"), "req": 30, "ret": 30}
    pr64 = t.calls("pread64")
    assert len(pr64) == 1
    assert (pr64[0]["args"]["path"], pr64[0]["args"]["req"], pr64[0]["args"]["ret"]) == (P("f_pread"), 40, 40)

    rv = t.calls("readv")
    assert len(rv) == 1
    assert (rv[0]["args"]["path"], rv[0]["args"]["req"], rv[0]["args"]["ret"]) == (P("f_readv"), 600, 600)
    prv = t.calls("preadv")
    assert len(prv) == 1
    assert (prv[0]["args"]["path"], prv[0]["args"]["req"], prv[0]["args"]["ret"]) == (P("f_readv"), 300, 300)

    fo = t.calls("fopen")
    assert len(fo) == 1 and fo[0]["args"]["path"] == P("f_fopen") and fo[0]["args"]["fd"] >= 0
    fr = t.calls("fread")
    assert [(e["args"]["path"], e["args"]["req"], e["args"]["ret"]) for e in fr] == \
        [(P("f_fopen"), 64, 64), (P("f_fopen"), 100, 100)]
    fc = t.calls("fclose")
    assert len(fc) == 1 and fc[0]["args"]["path"] == P("f_fopen") and fc[0]["args"]["ret"] == 0
    # stdio reads inside libc never show up as read() calls
    assert t.count("read", path=P("f_fopen")) == 0

    mm = t.calls("mmap")
    assert len(mm) == 1
    a = mm[0]["args"]
    assert (a["path"], a["len"], a["off"], a["prot"], a["flags"]) == (P("f_mmap"), 8192, 0, "0x1", "0x2")
    assert int(a["addr"], 16) != 0

    cl = t.calls("close", path=P("f_mmap"))
    assert len(cl) == 1 and cl[0]["args"]["ret"] == 0
    # every descriptor opened with an open* call is closed once
    assert t.count("close") == 7
    assert t.count("read") == 2


def test_fortified_entry_points(traced, tmp_path):
    # built here with -O2 whatever OPT the Makefile was given: fortification
    # needs an optimising build
    exe = str(tmp_path / "io_fortify")
    cc = subprocess.run(["cc", "-O2", "-g", "-Wall", "-D_GNU_SOURCE", "-o", exe,
                         os.path.join(ROOT, "tests", "progs", "io_fortify.c")],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    syms = subprocess.run(["nm", "-u", exe], capture_output=True, text=True).stdout
    assert "__open_2" in syms and "__read_chk" in syms, syms
    assert " read@" not in syms and " open@" not in syms
    (path,) = make_files(tmp_path, ["fort.bin"])
    argv = [exe, path, "5", "123"]
    r = traced(argv)
    same_output(r, argv)
    t = r.trace
    o2 = t.calls("__open_2")
    assert len(o2) == 1 and o2[0]["args"]["path"] == path and o2[0]["args"]["fd"] >= 0
    rc = t.calls("__read_chk")
    assert len(rc) == 5
    assert all((e["args"]["path"], e["args"]["req"], e["args"]["ret"]) == (path, 123, 123) for e in rc)
    assert t.count("read") == 0 and t.count("open") == 0


def test_failed_read_keeps_errno(traced, tmp_path):
    exe = built_prog("io_read")
    (path,) = make_files(tmp_path, ["closed.bin"])
    argv = [exe, "ebadf", path]
    r = traced(argv)
    same_output(r, argv)
    assert r.stdout.count("errno 9 ") == 2
    reads = r.trace.calls("read")
    assert len(reads) == 2
    assert [e["args"]["ret"] for e in reads] == [-9, -9]
    assert [e["args"]["req"] for e in reads] == [16, 5]
    assert reads[1]["args"]["fd"] == -1
    # the closed descriptor no longer carries the file's path
    assert reads[0]["args"]["path"] == ""


PY_READER = r"""
import sys
total = 0
for p in sys.argv[1:]:
    f = open(p, "rb")
    total += len(f.read())
    f.close()
print(len(sys.argv) - 1, total)
"""


def test_python_open64(traced, tmp_path):
    files = make_files(tmp_path, ["py%02d.dat" % i for i in range(50)], size=3000)
    argv = [PYTHON, "-c", PY_READER] + files
    r = traced(argv)
    same_output(r, argv)
    assert r.stdout == "50 150000\n"
    t = r.trace
    mine = [e for e in t.calls("open64") if e["args"]["path"] in files]
    assert len(mine) == 50
    assert sorted(e["args"]["path"] for e in mine) == sorted(files)
    assert all(e["args"]["fd"] >= 0 for e in mine)
    for p in files:
        # the other open entry points see none of them
        for other in ("open", "openat", "openat64", "__open_2", "__open64_2"):
            assert t.count(other, path=p) == 0
        got = sum(e["args"]["ret"] for e in t.calls("read", path=p))
        assert got == 3000
        assert t.count("close", path=p) == 1


def test_paths_hashed_wherever_they_lie(traced, tmp_path):
    """The string table hashes a path 8 bytes at a time, its last 1-7
    bytes in one load (libfeedtrace/strtab.c, hash64): a path that ends
    just before an unmapped page is read to its end and no further, and the
    same text from 8 addresses (every alignment) is one string. Paths longer than
    4 095 bytes are kept as their first 4 095 (4 095, 4 096 and 5 000 are
    then one string)."""
    lens = [20, 21, 27, 28, 29, 35, 36, 100, 4094, 4095, 4096, 5000]
    argv = [built_prog("intern_align")] + [str(n) for n in lens]
    r = traced(argv)
    same_output(r, argv)
    assert r.stdout == "%d failed\n" % (8 * len(lens))
    want = ["/nonexistent-intern/" + "a" * (min(n, 4095) - 20) for n in lens for _ in range(8)]
    assert [e["args"]["path"] for e in r.trace.calls("open")] == want
    p = r.trace.procs[0]
    assert p["strings"] == len(set(want)) + 1      # and the program's own path
    assert p["strings_lost"] == 0


PIPE_AND_FILE = """
import json
import os
r, w = os.pipe()
os.write(w, b"abc")
for _ in range(3):
    os.read(r, 1)
fd = os.open(os.environ["FT_FILE"], os.O_RDONLY)
for _ in range(5):
    os.read(fd, 1)
"""


def test_summary_names_pipe_reads_apart(traced, tmp_path):
    """dump --summary tallies the reads of a pipe (waits) as "read (pipe)",
    apart from the file reads' "read", in the text and as JSON keys (two
    "read" keys before: a user took the pipe's count for every read)."""
    from conftest import TOOL
    f = tmp_path / "data"
    f.write_bytes(b"x" * 16)
    r = traced([PYTHON, "-S", "-c", PIPE_AND_FILE], env={"FT_FILE": str(f)})
    assert r.returncode == 0, r.stderr
    files = r.trace.count("read", path=str(f))
    pipes = len([e for e in r.trace.calls("read") if "kind" in e["args"]])
    assert (files, pipes) == (5, 3)
    text = subprocess.run([TOOL, "dump", "--summary", r.dir], capture_output=True,
                          text=True, check=True).stdout
    assert "read (pipe) 3" in text
    js = subprocess.run([TOOL, "dump", "--summary", "--json", r.dir], capture_output=True,
                        text=True, check=True).stdout
    calls = json.loads(js)["process"]["calls"]
    assert calls["read (pipe)"] == 3 and calls["read"] >= 5
    assert js.count('"read"') == 1
