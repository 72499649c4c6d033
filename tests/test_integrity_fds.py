"""Descriptors and files the tracer takes from a process (docs/RELIABILITY.md,
"Descriptors and files"): each test compares an untraced run with a traced
one, output and the files the program wrote, byte for byte."""
import os
import subprocess

import pytest

from conftest import BUILD, ROOT, prog, untraced

SIMGPU = os.path.join(BUILD, "simgpu")


@pytest.fixture(scope="module", autouse=True)
def built():
    r = subprocess.run(["make", "-s", "-C", ROOT, "BUILD=" + BUILD, prog("integ_closefrom"),
                        "simgpu"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def plain_env():
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("FEEDTRACE_") and k != "LD_PRELOAD"}
    e["LD_LIBRARY_PATH"] = SIMGPU
    return e


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_closefrom_files_and_stacks(traced, tmp_path):
    """closefrom(3), then the program's own files at fds 3 and 4, written
    between GPU waits whose stacks are captured (through a frame with no
    unwind info): files, output and exit status as untraced; libunwind 1.6
    used to read and write one byte of them per new stack page."""
    argv = [prog("integ_closefrom"), "a", "b"]
    u = untraced(argv, env=plain_env(), cwd=str(tmp_path))
    assert u.returncode == 0, u.stderr
    assert u.stdout == "fds 3 4\nread 390 pos 390 fails 0\n"
    ua, ub = read(tmp_path / "a"), read(tmp_path / "b")
    assert ua == ub == b"".join(b"line %d\n" % i for i in range(50))
    t = traced(argv, env={"LD_LIBRARY_PATH": SIMGPU, "FEEDTRACE_STACK_DEPTH": "16"})
    assert t.returncode == 0, t.stderr
    assert t.stdout == u.stdout
    assert t.stderr == u.stderr
    assert read(tmp_path / "a") == ua and read(tmp_path / "b") == ub
    waits = t.trace.calls("cuCtxSynchronize")
    assert len(waits) == 51
    for w in waits:
        # innermost: wait_gpu, then the no-CFI trampoline, where the walk ends
        frames = w["args"]["site"].split("\n")
        assert len(frames) == 2, frames
        assert all(f.startswith("integ_closefrom+0x") for f in frames)
