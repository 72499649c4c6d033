"""A program built with AddressSanitizer (tests/asan/asan_fork.c, compiled
here with -fsanitize=address). Its runtime stops the program when another
library is loaded before it: `feedtrace run` said "the command ran
untraced" (it had not run at all); now it says what happened and the two
ways to run it, and both ways trace it: the runtime first in LD_PRELOAD,
or ASAN_OPTIONS=verify_asan_link_order=0. The program forks at once after
its start: with a sanitizer's runtime in the process, fork waits until
the tracer's thread is quiet (a sanitizer's allocator is not fork-safe: a
lock it held at the fork stayed held in the child, whose leak check at
exit then waited for ever; seen once in a few runs before)."""
import os
import subprocess

import pytest

from conftest import LIB, ROOT, SANITIZER, TOOL, Trace, clean_env

SRC = os.path.join(ROOT, "tests", "asan", "asan_fork.c")
N, READS = 3, 20

pytestmark = pytest.mark.skipif(SANITIZER != "", reason="the tracer itself is sanitized")


@pytest.fixture(scope="module")
def asan_prog(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("asan") / "asan_fork")
    r = subprocess.run(["cc", "-g", "-O2", "-fsanitize=address", "-o", out, SRC],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("no AddressSanitizer here: " + r.stderr.strip()[-200:])
    rt = subprocess.run(["cc", "-print-file-name=libasan.so"], capture_output=True,
                        text=True).stdout.strip()
    return out, rt


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "data.bin"
    p.write_bytes(bytes(range(256)))
    return str(p)


def check_trace(d, data):
    t = Trace.load(d)
    assert len(t.procs) == N + 1
    kids = [p for p in t.procs if p["calls"].get("pread")]
    assert len(kids) == N and all(p["end"] == "exit" and p["status"] == 0 for p in kids)
    assert t.count("pread", path=data) == N * READS
    assert all(p["lost"] == 0 for p in t.procs)


def test_run_says_asan_refused_and_how(asan_prog, data, tmp_path):
    prog, _rt = asan_prog
    d = str(tmp_path / "t")
    e = clean_env("LD_PRELOAD", "ASAN_OPTIONS")
    r = subprocess.run([TOOL, "run", "-o", d, "--", prog, data, str(N), str(READS)], env=e,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == ""
    assert "ran untraced" not in r.stderr
    assert ("feedtrace: no trace was written to %s: %s is built with AddressSanitizer (it "
            "links libasan.so." % (d, prog)) in r.stderr
    assert "LD_PRELOAD=\"$(gcc -print-file-name=libasan.so) %s\"" % LIB in r.stderr
    assert "ASAN_OPTIONS=verify_asan_link_order=0 feedtrace run -- %s ..." % prog in r.stderr


def test_runtime_first(asan_prog, data, tmp_path):
    prog, rt = asan_prog
    d = str(tmp_path / "t")
    e = clean_env("ASAN_OPTIONS")
    e.update(LD_PRELOAD=rt + " " + LIB, FEEDTRACE_OUT=d)
    r = subprocess.run([prog, data, str(N), str(READS)], env=e, capture_output=True,
                       text=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, "done\n"), r.stderr
    check_trace(d, data)


def test_runtime_second_as_advised(asan_prog, data, tmp_path):
    prog, _rt = asan_prog
    d = str(tmp_path / "t")
    e = clean_env("LD_PRELOAD")
    e["ASAN_OPTIONS"] = "verify_asan_link_order=0"
    r = subprocess.run([TOOL, "run", "-q", "-o", d, "--", prog, data, str(N), str(READS)],
                       env=e, capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, "done\n"), r.stderr
    check_trace(d, data)
