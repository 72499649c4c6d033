"""`feedtrace ranks`: the cross-rank report of a job from its ranks'
summaries (issue 18's scale part). Synthetic summaries (tests/ranksynth.py:
exact arrivals, hosts with known clock errors, summaries that keep every
2nd or 4th collective) check the merge's numbers to the nanosecond, and the
errors a user can meet; the merge of a traced job's summaries against one
report of all its files: tests/traced/test_ranks_programs.py."""
import glob
import json
import subprocess

from conftest import TOOL, report_json
import ranksynth


def ranks_cmd(*args):
    return subprocess.run([TOOL, "ranks", *args], capture_output=True, text=True, timeout=300)


def ranks_json(*args):
    r = ranks_cmd("--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def synth(tmp_path, name, *args, **kw):
    d = str(tmp_path / name)
    ranksynth.write(d, *args, **kw)
    return d


def test_synthetic_straggler_on_two_hosts_with_mixed_samples(tmp_path):
    """8 ranks on 2 hosts (the second's monotonic clock 1 s ahead, its wall
    clock 1.918 ms off), 3000 all-reduces, summaries keeping every 1st, 2nd
    or 4th: matched on every 4th, every figure exact"""
    d = synth(tmp_path, "s", 8, 3000, straggler=5, hosts=2, strides={1: 2, 2: 4, 6: 4})
    rk = ranks_json(d)["ranks"]
    assert (rk["ranks"], rk["matched"], rk["sampled_every"]) == (8, 750, 4)
    assert rk["straggler"] == 5
    assert rk["clocks_refined"] is True
    assert [(h["host"], h["ranks"], h["correction_ns"], h["residual_ns"]) for h in rk["hosts"]] \
        == [("node0", 4, 0, 0), ("node1", 4, -ranksynth.wall_err(1), 0)]
    # lateness against the median arrival (ranks 3 and 4: 35 us)
    late = [r * ranksynth.STEP - 35_000 for r in range(8)]
    late[5] += ranksynth.LATE
    assert [x["late_median_ns"] for x in rk["per_rank"]] == late
    assert [x["last"] for x in rk["per_rank"]] == [0] * 5 + [750] + [0] * 2
    a = ranksynth.arrivals(0, 8, 5)
    per = sum(a[5] - x for x in a)
    assert rk["per_rank"][5]["others_waited_ns"] == per * 3000
    assert rk["interval_median_ns"] == ranksynth.INTERVAL
    text = ranks_cmd(d).stdout
    assert "(every 4th of" in text and "~" in text


def test_synthetic_equal_ranks(tmp_path):
    d = synth(tmp_path, "s", 16, 200)
    r = ranks_cmd(d)
    assert r.returncode == 0
    assert "no straggler: the ranks arrive within 70.0 us of each other" in " ".join(r.stdout.split())
    assert "Straggler's verdict" not in r.stdout
    assert ranks_json(d)["straggler_verdict"] is None
    assert "(0 more ranks" not in r.stdout and "(0 more" not in r.stdout
    assert "16 of 16 with collectives" in r.stdout


def test_errors_name_the_file(tmp_path):
    d = synth(tmp_path, "s", 4, 50, straggler=1)
    files = sorted(glob.glob(d + "/*.json"))
    bad = tmp_path / "bad.json"
    text = '{"schema": "feedtrace-report/1", "processes": [ {"pid": 1,, ]}'
    bad.write_text(text)
    r = ranks_cmd(*files, str(bad))
    assert r.returncode == 2
    at = text.index(",,") + 1           # the second comma
    assert r.stderr.startswith("feedtrace ranks: %s: not JSON at offset %d" % (bad, at)), r.stderr
    other = tmp_path / "other.json"
    other.write_text('{"schema": "feedtrace-diff/1"}')
    r = ranks_cmd(str(other))
    assert r.returncode == 2 and "%s: not a feedtrace report" % other in r.stderr
    r = ranks_cmd(str(tmp_path / "missing.json"))
    assert r.returncode == 2 and "missing.json: No such file or directory" in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = ranks_cmd(str(empty))
    assert r.returncode == 2 and "neither summaries (*.json) nor a trace (*.ft)" in r.stderr
    # one rank only: no job of ranks
    r = ranks_cmd(files[0])
    assert r.returncode == 1 and "no job of ranks" in r.stdout


def test_two_jobs_are_not_merged_unless_mixed(tmp_path):
    a = synth(tmp_path, "a", 4, 50, straggler=1)
    b = synth(tmp_path, "b", 4, 50, job="synth-2")
    r = ranks_cmd(a + "/rank-00000.json", a + "/rank-00001.json", b + "/rank-00002.json")
    assert r.returncode == 2
    assert "the summaries are of two jobs" in r.stderr and "'synth-2'" in r.stderr
    r = ranks_cmd("--mixed", a + "/rank-00000.json", a + "/rank-00001.json",
                  b + "/rank-00002.json")
    assert r.returncode == 0, r.stderr
    assert "3 of 4 with collectives" in r.stdout


def test_a_rank_given_twice_is_said(tmp_path):
    d = synth(tmp_path, "s", 4, 50, straggler=3)
    r = ranks_cmd(d, d + "/rank-00003.json")
    assert r.returncode == 0
    assert r.stderr.count("rank 3 is in ") == 1
    assert ranks_json(d, d + "/rank-00003.json")["ranks"]["straggler"] == 3


# ---------------------------------------------------------------- convert --ranks

def write_job(d, jobs=("j1", "j1", "j1")):
    """ranks 0, 1, 2 (jobs[r]) as in the test below; returns (t0, host b's lead)"""
    import ftgen
    d.mkdir()
    real0, t0 = 1_700_000_000_000_000_000, 1_000_000_000_000      # host a's start
    hosts = {"a": (0, 0), "b": (4_000_000_000_000, 3_000_000)}      # mono ahead, wall error
    late = {0: 0, 1: 7_000_000, 2: 20_000}
    files = []
    for rank, host, pid in ((0, "a", 100), (1, "b", 200), (2, "a", 300)):
        ahead, err = hosts[host]
        w = ftgen.TraceFile(str(d / ("%s.%d.ft" % (host, pid))), pid, ["train.py"],
                            start_ns=t0 + ahead, real_ns=real0 + err, host=host, rank=rank,
                            world=3, job=jobs[rank])
        w.thread(pid, "main", main=True)
        for k in range(10):
            arrive = t0 + 1_000_000 + k * 100_000_000 + late[rank]
            leave = t0 + 1_000_000 + k * 100_000_000 + 7_050_000
            w.event(pid, "NCCL_ALL_REDUCE", arrive + ahead, leave - arrive, ret=0,
                    sym="ncclAllReduce", stream=0x10, bytes=4096, comm=0xc0ffee)
        files.append(w)
    ahead = hosts["b"][0]
    wk = ftgen.TraceFile(str(d / "b.201.ft"), 201, ["train.py"], ppid=200, start_ns=t0 + ahead,
                         real_ns=real0 + hosts["b"][1], host="b", rank=1, world=3, job=jobs[1])
    wk.thread(201, "worker", main=True)
    wk.event(201, "READ", t0 + ahead + 2_000_000, 500_000, fd=3, path="/data/x", req=4096,
             ret=4096)
    files.append(wk)
    for w in files:
        w.close()
    return t0, ahead


def test_convert_chosen_ranks_on_one_clock(tmp_path):
    """Three ranks written as the recorder writes them (ftgen): ranks 0 and
    2 on host a, rank 1 on host b, whose monotonic clock is 4000 s ahead
    and whose wall clock is 3 ms off; rank 1 has a DataLoader worker.
    `convert --ranks 1,2` keeps rank 1 (and its worker) and rank 2, on
    host b's clock (rank 1's, the lowest chosen): the all-reduces that
    every rank leaves together end at the same instant, to the ns."""
    from test_convert import load
    d = tmp_path / "job"
    t0, ahead = write_job(d)
    out = str(tmp_path / "chosen.pftrace")
    r = subprocess.run([TOOL, "convert", str(d), "--ranks", "1,2", "-o", out],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert ": 3 processes," in r.stderr
    rows = load(out, "select p.pid as pid, s.ts as ts, s.ts + s.dur as e from slice s "
                     "join thread_track tt on s.track_id = tt.id join thread using(utid) "
                     "join process p using(upid) where s.name = 'ncclAllReduce' order by s.ts",
                "select p.pid as rpid, s.ts as rts from slice s join thread_track tt on "
                "s.track_id = tt.id join thread using(utid) join process p using(upid) "
                "where s.name = 'read'")
    ends = {}
    for x in rows:
        if "pid" in x:
            ends.setdefault(x["pid"], []).append(x["e"])
    assert sorted(ends) == [200, 300]
    assert ends[200] == [t0 + ahead + 1_000_000 + k * 100_000_000 + 7_050_000 for k in range(10)]
    assert ends[300] == ends[200]
    reads = [x for x in rows if "rpid" in x]
    assert reads == [{"rpid": 201, "rts": t0 + ahead + 2_000_000}]
    # a rank not here, a bad list: one line each
    r = subprocess.run([TOOL, "convert", str(d), "--ranks", "5", "-o", out],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "none of them is here (ranks 0 to 2 are)" in r.stderr
    r = subprocess.run([TOOL, "convert", str(d), "--ranks", "1,,2", "-o", out],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "not '1,,2'" in r.stderr


def test_convert_ranks_of_two_jobs_refused(tmp_path):
    d = tmp_path / "job"
    write_job(d, jobs=("j1", "j1", "j2"))
    out = str(tmp_path / "x.pftrace")
    r = subprocess.run([TOOL, "convert", str(d), "--ranks", "1,2", "-o", out],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "are of two jobs" in r.stderr and "'j2'" in r.stderr
    r = subprocess.run([TOOL, "convert", str(d), "--ranks", "0,1", "-o", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([TOOL, "convert", str(d), "--ranks", "1,2", "--mixed", "-o", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_ranks_without_collectives_are_said(tmp_path):
    """Ranks that meet in a collective not recorded (MPI): the report says
    the ranks are not compared, and why their waits may read as waits for
    data."""
    import ftgen
    d = tmp_path / "mpi"
    d.mkdir()
    for rank in range(2):
        pid = 100 + rank
        w = ftgen.TraceFile(str(d / ("h.%d.ft" % pid)), pid, ["train.py"], rank=rank, world=2,
                            job="g")
        w.thread(pid, "main", main=True)
        w.event(pid, "READ", w.start + 1_000_000, 500_000, fd=3, path="/data/x", req=4096,
                ret=4096)
        w.close()
    r = subprocess.run([TOOL, "report", str(d), "--mixed"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "Ranks: 2 of 2 here, and no collective was recorded (NCCL's and libgloo's are" in text
    assert report_json(str(d))["ranks"] is None
    r = ranks_cmd(str(d))
    assert r.returncode == 1 and "no job of ranks" in r.stdout
