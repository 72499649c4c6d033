"""Findings that name the real problem (issue 13): what is never a storm,
what is. Synthetic traces (tests/ftgen.py) with exact counts, and the real
Debian PyTorch import."""
import json
import os
import subprocess

import pytest

from conftest import PYTHON, TOOL, preload
import ftgen

MS = 1000000
START = 10 ** 12


def report(d):
    r = subprocess.run([TOOL, "report", d, "--json"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def storms(rep):
    return [f for f in rep["findings"] if f["kind"] == "small_read_storm"]


def reads_of(w, paths, per_file, t0, size=4096):
    """per_file reads of size bytes of each path, 50 us apart."""
    t = t0
    for i, p in enumerate(paths):
        for k in range(per_file):
            w.event(100, "READ", t, 20000, fd=3 + i % 100, req=size, ret=size, path=p)
            t += 50000
    return t


def test_imports_and_pseudo_files_are_never_a_storm(tmp_path):
    """3 000 small reads of .py/.pyc/.so/site-packages and /proc files in
    150 ms, then 2 000 small reads of 400 data files: one storm, of the
    data files only; the 3 000 count as module_reads."""
    d = tmp_path / "run"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["/usr/bin/python3", "train.py"])
    w.thread(100, "main", main=True)
    code = (["/usr/lib/python3/dist-packages/torch/nn/m%d.py" % i for i in range(100)] +
            ["/usr/lib/python3.11/__pycache__/x%d.cpython-311.pyc" % i for i in range(100)] +
            ["/opt/venv/lib/python3.12/site-packages/numpy/core/_m%d.so" % i for i in range(50)] +
            ["/home/u/proj/helper%d.py" % i for i in range(40)] +
            ["/proc/self/status", "/sys/fs/cgroup/cpu.max", "/dev/urandom",
             "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/etc/ld.so.cache",
             "/home/u/.local/lib/python3.11/site-packages/a.pth"] +
            ["/home/u/proj/ext%d.cpython-311-x86_64-linux-gnu.so" % i for i in range(4)])
    assert len(code) == 300
    t = reads_of(w, code, 10, START)
    data = ["/data/train/%05d.bin" % i for i in range(400)]
    reads_of(w, data, 5, t + 5000 * MS)
    w.close()
    rep = report(str(d))
    m = rep["metrics"]
    assert (m["module_reads"], m["small_reads"], m["storms"]) == (3000, 2000, 1)
    [s] = storms(rep)
    assert s["reads"] == 2000 and s["files"] == 400
    assert all(f["path"].startswith("/data/train/") for f in s["top_files"])


@pytest.mark.skipif(not os.path.exists("/usr/lib/python3/dist-packages/torch"),
                    reason="Debian python3-torch not installed")
def test_import_torch_has_no_storm(traced):
    """`python3 -c "import torch"` (Debian's PyTorch): over a thousand small
    reads of modules, no storm, no finding."""
    r = traced([PYTHON, "-c", "import torch"], load=False)
    assert r.returncode == 0, r.stderr
    rep = report(r.dir)
    m = rep["metrics"]
    assert m["module_reads"] > 1000 and m["storms"] == 0, m
    assert storms(rep) == []
