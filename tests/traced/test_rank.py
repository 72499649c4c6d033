"""Rank identity (issue 18, its first part): each process records which
rank of a distributed job it is, from its launcher's environment (torchrun,
Open MPI, MPICH/PMI, Slurm), in its file header; children (DataLoader
workers, exec'd helpers) inherit it. dump, report (text and JSON) and the
timeline's process names show it."""
import json
import subprocess

import pytest

from conftest import PYTHON, TOOL
from test_convert import load

TORCH = {"RANK": "2", "LOCAL_RANK": "0", "WORLD_SIZE": "4", "TORCHELASTIC_RUN_ID": "job7"}
SLURM = {"SLURM_PROCID": "5", "SLURM_LOCALID": "1", "SLURM_NTASKS": "8", "SLURM_JOB_ID": "1234"}


def run_sh(traced, env):
    # the shell and two exec'd children: three processes, one environment
    r = traced(["/bin/sh", "-c", "/bin/true; /bin/true; echo done"], env=env)
    assert r.returncode == 0 and r.stdout == "done\n", r.stderr
    assert len(r.trace.procs) == 3
    return r


def report_json(d):
    r = subprocess.run([TOOL, "report", "--json", d], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_torchrun_rank_in_every_process(traced, tmp_path):
    r = run_sh(traced, TORCH)
    want = {"rank": 2, "local_rank": 0, "world_size": 4, "launcher": "torchrun", "job": "job7"}
    assert [p["rank"] for p in r.trace.procs] == [want] * 3
    rep = report_json(r.dir)
    assert [p["rank"] for p in rep["processes"]] == [want] * 3
    text = subprocess.run([TOOL, "report", r.dir], capture_output=True, text=True).stdout
    assert text.count(" rank 2/4 ") == 3, text
    out = str(tmp_path / "t.pftrace")
    c = subprocess.run([TOOL, "convert", "-o", out, r.dir], capture_output=True, text=True)
    assert c.returncode == 0, c.stderr
    names = [x["name"].replace("\xa0", " ") for x in
             load(out, "select name from process where name is not null")]
    assert len(names) == 3 and all(n.startswith("rank 2/4 ") for n in names), names


@pytest.mark.parametrize("env,want", [
    (SLURM, {"rank": 5, "local_rank": 1, "world_size": 8, "launcher": "slurm", "job": "1234"}),
    # torchrun under srun: the framework's rank first
    ({**SLURM, **TORCH}, {"rank": 2, "local_rank": 0, "world_size": 4,
                          "launcher": "torchrun", "job": "job7"}),
    ({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "16"},
     {"rank": 3, "local_rank": None, "world_size": 16, "launcher": "mpi", "job": ""}),
    ({"PMI_RANK": "0", "PMI_SIZE": "2", "MPI_LOCALRANKID": "0"},
     {"rank": 0, "local_rank": 0, "world_size": 2, "launcher": "pmi", "job": ""}),
])
def test_launchers(traced, env, want):
    r = run_sh(traced, env)
    assert [p["rank"] for p in r.trace.procs] == [want] * 3


def test_no_launcher_no_rank(traced):
    r = run_sh(traced, {})
    assert [p["rank"] for p in r.trace.procs] == [None] * 3
    assert [p["rank"] for p in report_json(r.dir)["processes"]] == [None] * 3


@pytest.mark.parametrize("env,line", [
    ({"RANK": "x", "WORLD_SIZE": "4"}, 'feedtrace: RANK="x" is not a rank number; no rank recorded'),
    ({"RANK": "4", "WORLD_SIZE": "4"},
     "feedtrace: RANK and WORLD_SIZE do not make a rank of a world (4 of 4); no rank recorded"),
])
def test_bad_rank_one_line_then_none(traced, env, line):
    r = traced(["/bin/true"], env=env)
    assert r.returncode == 0
    assert r.stderr.splitlines() == [line]
    assert [p["rank"] for p in r.trace.procs] == [None]


def test_forked_python_worker_inherits(traced):
    """a fork child (as a DataLoader worker is) carries its rank's identity"""
    r = traced([PYTHON, "-c", "import os\npid = os.fork()\nif pid == 0: os._exit(0)\n"
                "os.waitpid(pid, 0)"], env=TORCH)
    assert r.returncode == 0, r.stderr
    assert len(r.trace.procs) == 2
    assert {p["rank"]["rank"] for p in r.trace.procs} == {2}
