"""`feedtrace ranks` of a traced job (tests/vshapes/ranks.c): each rank
traces into a directory of its own (--out-per-rank, as a Slurm or torchrun
recipe does); `feedtrace report --json` of each is its summary; merging the
summaries must give exactly what one report of all the ranks' files
copied together gives, the straggler named with its own verdict. The
merge's numbers on synthetic summaries: tests/converter/test_ranks_merge.py."""
import glob
import json
import os
import shutil
import subprocess

import pytest

from conftest import BUILD, TOOL, make, report_json
from test_ranks_merge import ranks_cmd, ranks_json

RANKS = os.path.join(BUILD, "vshapes", "ranks")
NCCL = os.path.join(BUILD, "tests", "nccl")


@pytest.fixture(scope="module", autouse=True)
def built():
    make(RANKS, os.path.join(NCCL, "nccl_prog"))


def job_per_rank(traced, tmp_path, *args):
    """the job with one trace directory per rank; its summaries written"""
    run = traced([RANKS, "--out-per-rank"] + list(args),
                 env={"LD_LIBRARY_PATH": NCCL, "FT_CUDA_PATH": "proc-ptds"}, load=False,
                 timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    pids = {}
    for line in run.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[:2] == ["fact", "rank"]:
            pids[int(f[2])] = int(f[3])
    dirs = sorted(glob.glob(os.path.join(run.dir, "rank-*")))
    assert len(dirs) == len(pids)
    sums = tmp_path / "summaries"
    sums.mkdir()
    for d in dirs:
        r = subprocess.run([TOOL, "report", "--json", d], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        (sums / (os.path.basename(d) + ".json")).write_text(r.stdout)
    return pids, dirs, str(sums)


def test_summaries_merge_as_the_ranks_files_together(traced, tmp_path):
    pids, dirs, sums = job_per_rank(traced, tmp_path, "--slow", "2")
    # every rank's files copied into one directory: the report of them all
    together = tmp_path / "together"
    together.mkdir()
    for d in dirs:
        for f in glob.glob(os.path.join(d, "*.ft")):
            shutil.copy(f, together)
    whole = report_json(str(together))["ranks"]
    merged = ranks_json(sums)
    assert merged["ranks"] == whole
    # trace directories given directly are reported here: the same
    assert ranks_json(*dirs)["ranks"] == whole
    rk = merged["ranks"]
    assert (rk["world"], rk["ranks"], rk["matched"], rk["sampled_every"]) == (4, 4, 30, 1)
    assert rk["straggler"] == 2
    assert {x["rank"]: x["pid"] for x in rk["per_rank"]} == pids
    v = merged["straggler_verdict"]
    assert (v["rank"], v["pid"], v["limit"]) == (2, pids[2], "data delivery")
    assert v["file"] == os.path.join(sums, "rank-2.json")
    assert [x["limit"] for x in rk["per_rank"]][2] == "data delivery"
    # a summary is small: tens of KB
    assert all(os.path.getsize(f) < 64 * 1024 for f in glob.glob(sums + "/*.json"))
    text = " ".join(ranks_cmd(sums).stdout.split())
    assert "rank 2/4 (pid %d) is the straggler" % pids[2] in text
    assert "Straggler's verdict: rank 2/4, main process %d" % pids[2] in text
    assert "its findings: feedtrace report %s" % dirs[2] in text


def test_a_long_job_is_sampled(traced, tmp_path):
    """1100 all-reduces: each summary keeps every 2nd (550, under 1024)"""
    pids, dirs, sums = job_per_rank(traced, tmp_path, "--ranks", "2", "--steps", "1100")
    for f in sorted(glob.glob(sums + "/*.json")):
        procs = [p for p in json.load(open(f))["processes"] if p["collectives"]]
        assert len(procs) == 1
        c = procs[0]["collectives"]
        assert (c["count"], c["sampled_every"]) == (1100, 2)
        assert [(x["comm"], x["count"], len(x["start_delta_ns"]), len(x["dur_ns"]))
                for x in c["comms"]] == [(0, 1100, 550, 550)]
        assert os.path.getsize(f) < 64 * 1024
    rk = ranks_json(sums)["ranks"]
    assert (rk["ranks"], rk["matched"], rk["sampled_every"]) == (2, 550, 2)
    assert [x["collectives"] for x in rk["per_rank"]] == [1100, 1100]
    assert rk["straggler"] is None
