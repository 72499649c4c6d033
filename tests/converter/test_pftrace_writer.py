"""The Perfetto writer layer (converter/out/pftrace.c): its cmocka test writes two
traces; the structure checker and Perfetto's own trace processor read them."""
import os
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

CHECK = os.path.join(ROOT, "tests", "check_pftrace.py")


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("pf")
    a, b = str(d / "test.pftrace"), str(d / "reset.pftrace")
    r = subprocess.run([os.path.join(BUILD, "tests", "test_pftrace"), a, b],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[  PASSED  ] 8 test(s)." in r.stdout + r.stderr
    return a, b


def test_structure(traces):
    a, b = traces
    r = subprocess.run([sys.executable, CHECK, a, "--expect-slices", "13",
                        "--expect-instants", "1", "--expect-counters", "4",
                        "--expect-flows", "1", "--expect-tracks", "9"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([sys.executable, CHECK, b, "--expect-slices", "200",
                        "--min-resets", "2"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_checker_self_test():
    r = subprocess.run([sys.executable, CHECK, "--self-test"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_loads_in_perfetto(traces):
    r = subprocess.run([os.path.join(ROOT, "tests", "perfetto_load.sh"), traces[0],
                        "--expect-slices", "14"], capture_output=True, text=True,
                       timeout=600)
    if r.returncode == 77:
        pytest.skip("Perfetto trace processor not obtainable: " + r.stdout + r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
