"""The simulated driver's own model tests (tests/simgpu/test_simgpu.c, cmocka)."""
import os
import subprocess

from conftest import BUILD, ROOT


def test_simgpu_model():
    exe = os.path.join(BUILD, "tests", "test_simgpu")
    tsv = os.path.join(ROOT, "tests", "data", "cudart13-getprocaddress.tsv")
    r = subprocess.run([exe, tsv], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[  PASSED  ] 10 test(s)." in r.stdout + r.stderr
