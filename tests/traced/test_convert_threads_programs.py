"""`feedtrace convert --threads 1` and `--threads 2` (the pipeline of
converter/out/pipeline.c) write byte-identical files, with the same messages
and exit status, on traces of real programs (tests/progs/conv_*.c); on
synthetic and damaged ones: tests/converter/test_convert_threads.py."""
import os

import pytest

from conftest import prog
from test_convert_threads import convert_both


@pytest.fixture
def files20(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    for i in range(20):
        (d / ("f%03d" % i)).write_bytes(os.urandom(65536))
    return str(d)


def test_real_programs(traced, files20):
    run = traced([prog("conv_storm"), files20, "20", "100", "512"])
    assert run.returncode == 0
    _, err = convert_both(run.dir)
    assert "1 findings" in err
    run = traced([prog("conv_lock"), "contended", "7"])
    assert run.returncode == 0
    convert_both(run.dir)
