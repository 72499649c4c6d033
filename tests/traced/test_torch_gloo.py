"""Which rank starves a real PyTorch job (issue 18), on the CPU: two ranks
of examples/train.py train data-parallel (DistributedDataParallel over
torch.distributed's gloo backend, whose collectives shim/gloo.c records),
launched as torchrun launches them (tests/scripts/ranklaunch.py: Debian's
torchrun fails on Python 3.11). Both read their data sets in the broken
mode (4 KiB reads); one rank's data set is on slow storage (a test double,
tests/slowread/slowread.c: 2 ms more per read), so its loader starves it
and the other rank waits for it at every all-reduce.

The report must record every rank's identity and match the ranks' gloo
collectives; the trace must hold the slow rank's reads, each of 4 KiB and
each at least the planted delay long. Whether the slow rank is the
straggler depends on how fast the machine ran the ranks' compute beside
its storage (with both cores busy, or under a sanitizer, the compute can
hide 2 ms reads, and "no straggler" is then right): the straggler, its
own feed and the other rank's wait for other ranks are judged on
synthetic traces with the timing planted (tests/converter/test_gloo_waits.py,
tests/converter/test_ranks_merge.py)."""
import json
import os
import re
import subprocess

import pytest

from conftest import BUILD, LIB, PYTHON, ROOT, TOOL, Trace, clean_env, make, preload, report_json

STEPS = 8
# each read of the slow rank's data set takes 2 ms more (tests/slowread)
SLOW_US = 2000


@pytest.fixture(scope="module")
def slowread():
    so = os.path.join(BUILD, "tests", "slowread.so")
    make(so)
    return so


def job(tmp_path, slowread, slow_rank, per_rank=False):
    """The job run; per_rank: each rank traces into a directory of its own
    (rank-R), as the torchrun recipe does (docs/ANALYSES.md, "Ranks")."""
    out = str(tmp_path / "run")
    env = clean_env("LD_PRELOAD")
    env["FEEDTRACE_OUT"] = out
    env["LD_PRELOAD"] = preload()
    s = str(slow_rank)
    dirs = []
    for r in range(2) if per_rank else []:
        dirs += ["--rank-env", "%d:FEEDTRACE_OUT=%s/rank-%d" % (r, out, r)]
    argv = [PYTHON, os.path.join(ROOT, "tests", "scripts", "ranklaunch.py"), "2"] + dirs + [
            "--rank-env", s + ":LD_PRELOAD=" + preload(LIB, slowread),
            "--rank-env", s + ":SLOWREAD_MATCH=feedtrace-train-",
            "--rank-env", s + ":SLOWREAD_US=%d" % SLOW_US, "--",
            PYTHON, os.path.join(ROOT, "examples", "train.py"), "--cpu", "--steps", str(STEPS),
            "--workers", "1"]
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=240,
                       cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    pids = {int(r): int(pid) for r, pid in re.findall(r"^fact rank (\d) (\d+)$", p.stdout, re.M)}
    assert len(pids) == 2
    for r in range(2):
        assert "train.py: rank %d/2, device cpu, %d steps" % (r, STEPS) in p.stdout
    return out, pids


def data_reads(t, pid):
    """the reads of examples/train.py's data set (a feedtrace-train-*
    directory) by the processes pid started (its DataLoader worker)"""
    kids = {p["pid"] for p in t.procs if p["ppid"] == pid}
    return [e for e in t.calls("read") if e["pid"] in kids and
            "/feedtrace-train-" in (e["args"].get("path") or "")]


def check_slow_storage(out, pids, slow_rank):
    """what each rank's worker did: read its data set in 4 KiB reads, each
    of the slow rank's taking the planted delay or longer"""
    t = Trace.load(out)
    for r, pid in pids.items():
        reads = data_reads(t, pid)
        assert reads and {e["args"]["req"] for e in reads} == {4096}, (r, len(reads))
        if r == slow_rank:
            assert min(e["dur_ns"] for e in reads) >= SLOW_US * 1000


def test_gloo_job_ranks_and_their_collectives(tmp_path, slowread):
    slow_rank = 1
    out, pids = job(tmp_path, slowread, slow_rank)
    rep = report_json(out)
    procs = {p["pid"]: p for p in rep["processes"]}
    # every rank's processes, its DataLoader worker too, carry its identity
    for r, pid in pids.items():
        assert procs[pid]["rank"]["rank"] == r and procs[pid]["rank"]["world_size"] == 2
        kids = [p for p in rep["processes"] if p["ppid"] == pid]
        assert len(kids) == 1 and kids[0]["rank"]["rank"] == r
    jobs = {procs[pid]["rank"]["job"] for pid in pids.values()}
    assert len(jobs) == 1 and jobs.pop().startswith("ranklaunch-")
    rk = rep["ranks"]
    assert rk is not None and rk["ranks"] == 2 and rk["communicators"] == 1
    # DDP: a broadcast of the parameters, then an all-reduce per step
    assert rk["matched"] >= STEPS + 1
    assert {x["rank"]: x["pid"] for x in rk["per_rank"]} == pids
    check_slow_storage(out, pids, slow_rank)


def test_gloo_ranks_traced_apart_merge_by_summaries(tmp_path, slowread):
    """The same job with rank 0 on slow storage, each rank traced into a
    directory of its own, each reported apart (report --json) and merged
    with `feedtrace ranks`: each report is about its own rank's main
    process, and the merge matches the ranks' collectives."""
    out, pids = job(tmp_path, slowread, 0, per_rank=True)
    sums = []
    for r in range(2):
        d = os.path.join(out, "rank-%d" % r)
        rep = report_json(d)
        assert rep["verdict"]["pid"] == pids[r]
        sums.append(os.path.join(out, "rank-%d.json" % r))
        with open(sums[-1], "w") as f:
            json.dump(rep, f)
        check_slow_storage(d, {r: pids[r]}, 0)
    p = subprocess.run([TOOL, "ranks", "--json"] + sums, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    m = json.loads(p.stdout)
    assert m["ranks"]["ranks"] == 2 and m["ranks"]["matched"] >= STEPS + 1
    assert {x["rank"]: x["pid"] for x in m["ranks"]["per_rank"]} == pids


def test_spawned_ranks_take_their_identity_from_gloo(tmp_path, slowread):
    """torch.multiprocessing.spawn, each rank making its process group
    itself (tests/scripts/spawn_train.py): no environment says which rank a
    process is; the report takes each rank's identity from its gloo
    contexts (rank 1 of 2, launcher "gloo"), its DataLoader worker's from
    its parent, and matches the ranks' collectives; rank 1's worker reads
    from slow storage."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = str(tmp_path / "run")
    env = clean_env("LD_PRELOAD")
    env["FEEDTRACE_OUT"] = out
    env["LD_PRELOAD"] = preload(LIB, slowread)
    argv = [PYTHON, os.path.join(ROOT, "tests", "scripts", "spawn_train.py"), "2", "1",
            str(SLOW_US), str(port), "--", "--cpu", "--steps", str(STEPS), "--workers", "1"]
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=240,
                       cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    pids = {int(r): int(pid) for r, pid in re.findall(r"^fact rank (\d) (\d+)$", p.stdout, re.M)}
    assert len(pids) == 2
    rep = report_json(out)
    procs = {q["pid"]: q for q in rep["processes"]}
    for r, pid in pids.items():
        assert procs[pid]["rank"] == {"rank": r, "local_rank": None, "world_size": 2,
                                      "launcher": "gloo", "job": ""}
        [kid] = [q for q in rep["processes"] if q["ppid"] == pid]
        assert kid["rank"] == procs[pid]["rank"]
    rk = rep["ranks"]
    assert rk["ranks"] == 2 and rk["matched"] >= STEPS + 1
    assert {x["rank"]: x["pid"] for x in rk["per_rank"]} == pids
    check_slow_storage(out, pids, 1)
