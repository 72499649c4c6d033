"""Thousands of processes (tests/bench/gen_procs.py): a shell loop of 1,000
short commands (each a `sh -c` image that exec'd into `cat`: 2,001 images)
and a Python program with 2,000 workers. Every command reads them and says
the right thing. The text report was cubic in the number of processes (the
exec successor looked up over every process, for every process, at every
position of the tree: 10 s for the shell loop, 175 s for 5,000 commands);
its time is measured by `make bench` (scripts/bench_procs.sh), not here."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, TOOL, report_json

sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
import gen_procs  # noqa: E402

N_LOOP, N_WORKERS = 1000, 2000


def tool(*args):
    r = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("loop") / "trace")
    gen_procs.gen(d, N_LOOP)
    return d


@pytest.fixture(scope="module")
def workers(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("workers") / "trace")
    gen_procs.gen(d, N_WORKERS, workers=True)
    return d


def test_shell_loop_tree(loop):
    out = tool("report", loop)
    assert "  %d processes, %d threads, 3,001 events" % (2 * N_LOOP + 1, 2 * N_LOOP + 1) in out
    tree = out[out.index("  processes:\n"):].split("\n\n")[0].splitlines()[1:]
    assert tree[0] == "    1000 main   bash loop.sh"
    rows = [re.fullmatch(r"      (\d+) helper cat (\d+)\.txt \(exec'd from sh -c cat .*\)", ln)
            for ln in tree[1:]]
    assert all(rows) and len(rows) == N_LOOP
    assert [(int(m[1]), int(m[2])) for m in rows] == \
        [(gen_procs.child_pid(i), i) for i in range(N_LOOP)]


def test_shell_loop_json_and_dump(loop):
    rep = report_json(loop)
    procs = rep["processes"]
    assert len(procs) == 2 * N_LOOP + 1
    assert sorted((p["pid"], p["role"], p["cmdline"].split()[0]) for p in procs) == sorted(
        [(1000, "main", "bash")] +
        [(gen_procs.child_pid(i), "helper", c) for i in range(N_LOOP) for c in ("sh", "cat")])
    assert {p["ppid"] for p in procs if p["pid"] != 1000} == {1000}
    lines = [json.loads(x) for x in tool("dump", "--json", loop).splitlines()]
    reads = [e for e in lines if e.get("call") == "read"]
    assert len(reads) == N_LOOP + 1
    assert len([x for x in lines if "process" in x]) == 2 * N_LOOP + 1


def test_workers_numbered_in_fork_order(workers):
    rep = report_json(workers)
    procs = rep["processes"]
    assert len(procs) == N_WORKERS + 1
    assert sorted(p["role"] for p in procs) == ["main"] + ["worker"] * N_WORKERS
    out = tool("report", workers)
    assert "main process 1000 (python3 train.py), %d DataLoader workers" % N_WORKERS in \
        " ".join(out.split())
    tree = out[out.index("  processes:\n"):].split("\n\n")[0].splitlines()[1:]
    assert tree == ["    1000 main   python3 train.py"] + \
        ["      %d worker python3 train.py" % gen_procs.child_pid(i) for i in range(N_WORKERS)]


def test_diff_reads_them(loop, workers):
    d = json.loads(tool("diff", "--json", loop, workers))
    m = d["metrics"]
    assert (m["events"]["before"], m["events"]["after"]) == (2 * N_LOOP + 1 + N_LOOP,
                                                              2 * N_WORKERS + 1)
    assert (m["reads"]["before"], m["reads"]["after"]) == (N_LOOP + 1, N_WORKERS + 1)
