"""A program with one thread of its own stays on glibc's single-threaded
path while traced (shim/solo.c, issue 20): its reads, preads, opens and
closes are the system calls themselves, not glibc's wrappers, which the
tracer's flusher thread would switch to their multi-threaded path
(cancellation turned on and off around each call: +44 to +60 ns a cached
read here). Checked with callgrind's call counts: the wrapper of pread
calls libc's pread exactly as often as the program called it after it made
a thread (or asked glibc for something that makes one), and never before.
Results and errno are the same byte for byte traced and untraced; a
cancellation point still cancels; a library interposed after feedtrace
still gets every call."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, LIB, built_prog, clean_env, make, preload, skip_under

MODES = ["none", "pthread", "thrd", "aio", "gai", "cancel"]
VALGRIND = shutil.which("valgrind")
ANNOTATE = shutil.which("callgrind_annotate")


def run(tmp_path, mode, traced, extra_preload=None, valgrind=False):
    prog = built_prog("solo_prog")
    data = tmp_path / "data"
    data.write_bytes(b"0123456789")
    env = clean_env("LD_PRELOAD")
    libs = ([LIB] if traced else []) + ([extra_preload] if extra_preload else [])
    if libs:
        env["LD_PRELOAD"] = preload(*libs)
    env["FEEDTRACE_OUT"] = str(tmp_path / ("trace-" + mode))
    argv = [prog, mode, str(data)]
    out = None
    if valgrind:
        out = tmp_path / ("cg-%s.out" % mode)
        argv = [VALGRIND, "--tool=callgrind", "--callgrind-out-file=%s" % out] + argv
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    return r, out


@pytest.mark.parametrize("mode", MODES)
def test_same_results_traced(tmp_path, mode):
    u, _ = run(tmp_path, mode, False)
    t, _ = run(tmp_path, mode, True)
    assert u.returncode == 0, u.stderr
    assert (t.returncode, t.stdout) == (u.returncode, u.stdout)
    assert "sum 2000" in t.stdout
    if mode == "cancel":
        assert "cancelled\njoined, cancelled 1" in t.stdout


def libc_preads(cg_out):
    """calls from feedtrace's pread wrapper (or its recording path,
    pread_rec) to libc's pread"""
    text = subprocess.run([ANNOTATE, "--tree=calling", str(cg_out)], capture_output=True,
                          text=True, check=True).stdout
    n = 0
    for block in text.split("\n\n"):
        lines = block.strip().splitlines()
        if not lines or not re.search(r"\*\s+\S*:pread(?:_rec)? \[\S*libfeedtrace\.so\]", lines[0]):
            continue
        for line in lines[1:]:
            m = re.search(r">\s+\S*pread\S* \(([\d,]+)x\) \[\S*libc\.so\.6\]", line)
            if m:
                n += int(m.group(1).replace(",", ""))
    return n


@skip_under(["asan", "ubsan", "tsan"], "callgrind runs the plain build")
@pytest.mark.skipif(not (VALGRIND and ANNOTATE), reason="valgrind not installed")
@pytest.mark.parametrize("mode", MODES)
def test_single_threaded_path(tmp_path, mode):
    r, cg = run(tmp_path, mode, True, valgrind=True)
    assert r.returncode == 0, r.stderr
    # none: 2 001 preads, all as system calls; otherwise the 1 000 made
    # after the program had (or asked for) a second thread go to libc
    assert libc_preads(cg) == (0 if mode == "none" else 1000)


def test_next_interposer_gets_every_call(tmp_path):
    """pread wrapped by a library preloaded after feedtrace: the system
    call never stands in for it."""
    make(os.path.join(BUILD, "tests", "solo_next.so"))
    nxt = os.path.join(BUILD, "tests", "solo_next.so")
    u, _ = run(tmp_path, "none", False, extra_preload=nxt)
    t, _ = run(tmp_path, "none", True, extra_preload=nxt)
    assert "solo_next: 2001 preads passed on" in u.stderr
    assert "solo_next: 2001 preads passed on" in t.stderr, t.stderr
    assert t.stdout == u.stdout
