"""The C tests of the analyses (tests/unit/an_*.c, harness tests/unit/an.h):
launch gaps, hidden syncs, small-read storms, lock contention and the
verdict's limit on shapes built as event arrays in memory, with the timing
written into them, through converter/analyse/analysis.h; and the --fail-if
decision (an_gate.c) on metrics set by hand. Each program checks exact
values and exits 1 naming every check that failed; this runs each one."""
import glob
import os
import subprocess

import pytest

from conftest import BUILD, ROOT, make

NAMES = sorted(os.path.basename(p)[:-2]
               for p in glob.glob(os.path.join(ROOT, "tests", "unit", "an_*.c")))


def test_there_are_some():
    assert {"an_gaps", "an_hidden", "an_storm", "an_locks", "an_verdict", "an_gate"} <= set(NAMES)


@pytest.fixture(scope="module")
def built():
    make(*[os.path.join(BUILD, "tests", "unit", n) for n in NAMES])


@pytest.mark.parametrize("name", NAMES)
def test_analysis(built, name):
    r = subprocess.run([os.path.join(BUILD, "tests", "unit", name)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == name + ": ok\n"
