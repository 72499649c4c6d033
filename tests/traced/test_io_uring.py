"""io_uring: a ring's set-up is recorded and the report says its reads are
not traced (they are submitted and completed in shared memory).

Program: tests/progs/uring_prog.c (a ring made by the raw system call and
mapped by mmap; or liburing's calls, through tests/progs/uring_fake.c, a
stand-in liburing that makes its own system calls as Debian's does).
"""
import json
import os
import subprocess

from conftest import BUILD, TOOL, built_prog, make, untraced

FAKE = os.path.join(BUILD, "tests", "uring_fake.so")


def report(d, *args):
    r = subprocess.run([TOOL, "report"] + list(args) + [d], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_raw_ring_setup_recorded_reads_not(traced, tmp_path):
    """One set-up (found at the ring's first mapping), the ring's mappings
    named; its 5 reads of the file are not recorded, and the report says
    so."""
    exe = built_prog("uring_prog")
    path = str(tmp_path / "data.bin")
    with open(path, "wb") as f:
        f.write(b"x" * 65536)
    argv = [exe, "raw", path, "5"]
    r = traced(argv)
    assert r.returncode == 0, r.stderr
    assert r.stdout == untraced(argv).stdout
    ring = int(r.stdout.split()[1])
    assert r.stdout.split()[3] == "20480"
    t = r.trace
    setups = t.calls("io_uring_setup")
    assert [(e["args"]["api"], e["args"]["fd"], e["args"]["ret"]) for e in setups] == \
        [(3, ring, 0)]
    maps = t.calls("mmap", fd=ring)
    assert maps and all(e["args"]["path"] == "anon_inode:[io_uring]" for e in maps)
    assert t.count("read", path=path) == 0 and t.count("open", path=path) == 1
    j = json.loads(report(r.dir, "--json"))
    assert j["metrics"]["io_uring_rings"] == 1
    text = report(r.dir)
    block = " ".join(text.split("io_uring\n", 1)[1].split("\n\n", 1)[0].split())
    assert block == ("1 io_uring ring set up (process %d): the reads submitted through "
                     "io_uring are not traced: this report's file I/O leaves them out."
                     % t.procs[0]["pid"])


def test_liburing_setup_recorded_once(traced):
    """liburing's io_uring_queue_init (which calls io_uring_queue_init_params
    through its PLT) is one record; its io_uring_setup another, with the
    ring's fd; a liburing making its own mmap system calls is seen only so."""
    exe = built_prog("uring_prog")
    make(FAKE)
    r = traced([exe, "liburing", FAKE])
    assert r.returncode == 0 and r.stdout == "init 0 setup 1\n", r.stderr
    setups = r.trace.calls("io_uring_setup")
    got = [(e["args"]["api"], e["args"]["entries"], e["args"]["ret"], e["args"]["fd"] >= 0)
           for e in setups]
    assert got == [(1, 16, 0, False), (2, 4, 0, True)]
    assert json.loads(report(r.dir, "--json"))["metrics"]["io_uring_rings"] == 2


def test_no_liburing_loaded(traced):
    """A program that finds io_uring_setup by dlsym with no liburing loaded
    gets the tracer's export: it fails with -ENOSYS (liburing's way),
    records nothing and does not crash."""
    exe = built_prog("uring_prog")
    r = traced([exe, "absent"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "found %d\n" % -38
    assert r.trace.count("io_uring_setup") == 0
    assert untraced([exe, "absent"]).stdout == "none 0\n"
