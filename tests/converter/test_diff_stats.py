"""`feedtrace diff` on synthetic runs (tests/ftgen.py) with known per-step
distributions: the 95% interval of the change in the time per step (the
loop's) decides "faster", "slower", "no change" or "no change resolved"
(tests/converter/test_diff_throughput.py: the shapes where it and the median part);
several runs per side; findings matched by identity (a storm in one directory, 5 -> 1);
the --fail-if gate's exit statuses, --json and the JUnit file; report
--fail-if."""
import json
import os
import random
import subprocess
import xml.etree.ElementTree as ET

from conftest import TOOL
import ftgen

MS = 1_000_000


# storms apart by STORM_GAP_MS between groups of steps: a burst ends 35 ms
# after a small read, and a storm is 250 of them within 35 ms
STORM_GAP_MS = 40
STORM_OPTS = ["--storm-window-ms", "35", "--storm-reads", "250"]


def steps_run(d, lengths_ms, pid=300, storms=(), small_lock_ns=0, data="/data/train",
              gap_ms=0):
    """One process, one thread: a "step" range per length, 0.1 ms apart.
    Steps are in groups of 4 with gap_ms more between groups; in the groups listed in
    `storms`, each step first makes 300 small reads (4 KiB, 100 us each)
    of files in `data`, else 1 read of 1 MiB; a small_lock_ns mutex wait
    in the first step when given."""
    os.makedirs(d, exist_ok=True)
    w = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid, ["planted"])
    w.thread(pid, "main", True)
    t = w.start + MS
    for i, ms in enumerate(lengths_ms):
        if i and i % 4 == 0:
            t += gap_ms * MS
        w.event(pid, "RANGE_PUSH", t, 0, name="step", level=0, api=0)
        r = t + 10_000
        if i // 4 in storms:
            for k in range(300):
                w.event(pid, "READ", r, 90_000, fd=3, path="%s/f%d" % (data, k % 7),
                        req=4096, ret=4096)
                r += 100_000
        else:
            w.event(pid, "READ", r, 500_000, fd=3, path="%s/f0" % data, req=1 << 20,
                    ret=1 << 20)
        if i == 0 and small_lock_ns:
            w.event(pid, "MUTEX_LOCK", t + 5_000, small_lock_ns, lock=0x1234, ret=0)
        end = t + int(ms * MS)
        assert end > r, "a step shorter than its reads"
        w.event(pid, "RANGE_POP", end, 0, level=0, api=0)
        t = end + 100_000
    w.close()
    return d


def noisy(seed, n, ms, noise):
    r = random.Random(seed)
    return [ms * (1 + r.uniform(-noise, noise)) for _ in range(n)]


def diff(*args, rc=0):
    r = subprocess.run([TOOL, "diff"] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == rc, r.stdout + r.stderr
    return r


def diff_json(*args, rc=0):
    return json.loads(diff(*(list(args) + ["--json"]), rc=rc).stdout)


def width(d):
    return d["change"]["hi_ns"] - d["change"]["lo_ns"]


def test_ten_percent_low_noise_is_found(tmp_path):
    a = steps_run(str(tmp_path / "a"), noisy(1, 20, 40, 0.02))
    b = steps_run(str(tmp_path / "b"), noisy(2, 20, 44, 0.02))
    d = diff_json(a, b)
    ch = d["change"]
    assert ch["of"] == "step_time" and ch["method"] == "block bootstrap"
    assert ch["verdict"] == "slower" and d["conclusion_on"] == "step_time"
    assert ch["resamples"] == 2000 and ch["confidence"] == 0.95
    assert 0 < ch["lo_ns"] < 4 * MS < ch["hi_ns"] < 8 * MS
    assert d["median_change"]["verdict"] == "slower"
    assert d["conclusion"].startswith("Slower: time per step ")
    assert "over 20 and 20 steps in 1 and 1 run" in d["conclusion"]
    # the other way round: faster, the same interval mirrored
    r = diff_json(b, a)
    assert r["change"]["verdict"] == "faster"
    assert r["conclusion"].startswith("Faster: ")
    # reproducible: the bootstrap's seed is fixed
    assert diff_json(a, b) == d


def test_ten_percent_inside_thirty_percent_noise_is_unresolved(tmp_path):
    a = steps_run(str(tmp_path / "a"), noisy(3, 20, 40, 0.3))
    b = steps_run(str(tmp_path / "b"), noisy(4, 20, 44, 0.3))
    d = diff_json(a, b)
    assert d["change"]["verdict"] == "no change resolved"
    assert d["change"]["lo_ns"] < 0 < d["change"]["hi_ns"]
    assert d["conclusion"].startswith("No change resolved: time per step ")
    # nothing is credited when nothing is resolved
    assert "Mostly" not in d["conclusion"]


def test_identical_runs_are_no_change(tmp_path):
    a = steps_run(str(tmp_path / "a"), noisy(5, 20, 40, 0.02))
    d = diff_json(a, a)
    assert d["change"]["verdict"] == "no change"
    assert d["change"]["before_ns"] == d["change"]["after_ns"]
    assert d["findings"] == [] and d["disappeared"] == [] and d["appeared"] == []
    assert d["conclusion"].startswith("No change: time per step ")


def test_several_runs_per_side_narrow_the_interval(tmp_path):
    a = [steps_run(str(tmp_path / "before" / str(i)), noisy(10 + i, 20, 40, 0.3))
         for i in range(5)]
    b = [steps_run(str(tmp_path / "after" / str(i)), noisy(20 + i, 20, 44, 0.3))
         for i in range(5)]
    one = diff_json(a[1], b[1])              # a pair that alone does not resolve
    many = diff_json(*a, "--", *b)
    assert one["change"]["verdict"] == "no change resolved"
    assert many["before_runs"] == a and many["after_runs"] == b
    assert width(many) < width(one) / 1.5
    assert many["change"]["verdict"] == "slower"
    assert "over 100 and 100 steps in 5 and 5 runs" in many["conclusion"]
    # directories of runs: the same runs, the same result
    dirs = diff_json(tmp_path / "before", tmp_path / "after")
    assert dirs["change"] == many["change"] and dirs["before_runs"] == a
    # figures are means per run
    assert many["metrics"]["steps"]["before"] == 20
    txt = diff(*a, "--", *b).stdout
    assert "5 and 5 runs: figures are means per run" in txt
    assert all(len(l) <= 80 for l in txt.splitlines())


def test_run_to_run_variation_counts(tmp_path):
    """Each run's steps are steady (+-1%) but the runs differ by +-15%: the
    steps alone would resolve a 5% change; the runs do not."""
    shifts = [0.85, 1.15, 1.0]
    a = [steps_run(str(tmp_path / ("a%d" % i)), noisy(30 + i, 20, 40 * s, 0.01))
         for i, s in enumerate(shifts)]
    b = [steps_run(str(tmp_path / ("b%d" % i)), noisy(40 + i, 20, 42 * s, 0.01))
         for i, s in enumerate(reversed(shifts))]
    d = diff_json(*a, "--", *b)
    assert d["change"]["verdict"] == "no change resolved"


def test_without_steps_one_run_per_side_cannot_separate(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d, n in ((a, 10), (b, 5)):
        d.mkdir()
        w = ftgen.TraceFile(str(d / "host.300.ft"), 300, ["x"])
        w.thread(300, "main", True)
        for i in range(n):
            w.event(300, "READ", w.start + i * 10 * MS, MS, fd=3, path="/x", req=1 << 20,
                    ret=1 << 20)
        w.close()
    d = diff_json(a, b)
    assert d["change"] is None and d["unit"] == "run"
    assert d["conclusion"].startswith("Not resolved: one run per side without marked steps "
                                      "cannot separate a change from noise (figures only): "
                                      "wall time 91.0 ms -> 41.0 ms (-55%)")
    assert d["metrics"]["wall_ns"]["before"] == 91 * MS
    assert "Mostly" not in d["conclusion"]


def test_without_steps_several_runs_compare_wall_times(tmp_path):
    def run(d, n, gap_ms):
        os.makedirs(d)
        w = ftgen.TraceFile(os.path.join(d, "host.300.ft"), 300, ["x"])
        w.thread(300, "main", True)
        for i in range(n):
            w.event(300, "READ", w.start + int(i * gap_ms * MS), MS, fd=3, path="/x",
                    req=1 << 20, ret=1 << 20)
        w.close()
        return d
    a = [run(str(tmp_path / ("a%d" % i)), 10, 10 + i * 0.1) for i in range(4)]
    b = [run(str(tmp_path / ("b%d" % i)), 10, 9 + i * 0.1) for i in range(4)]
    d = diff_json(*a, "--", *b)
    ch = d["change"]
    assert ch["of"] == "wall_time" and d["unit"] == "run" and ch["verdict"] == "faster"
    # wall time 9 x gap + 1 ms: 91, 91.9, 92.8, 93.7 ms; 82, ..., 84.7 ms
    assert (ch["before_ns"], ch["after_ns"]) == (92.35 * MS, 83.35 * MS)
    assert d["conclusion"].startswith("Faster: median wall time 92.3 ms -> 83.3 ms (-10%; 95% "
                                      "interval of the change -10.8 ms to -7.2 ms) over 4 "
                                      "and 4 runs.")


def storm_pair(tmp_path, lock_ns=1800):
    # 5 groups of 4 steps; each step 60 ms (+-2%): before, every group reads
    # 1 200 small reads (5 storms); after, only the first does (1 storm)
    # and the others' steps take 35 ms. A 1.8 us lock wait only after.
    a = steps_run(str(tmp_path / "a"), noisy(50, 20, 60, 0.02), storms=range(5),
                  gap_ms=STORM_GAP_MS)
    lb = noisy(51, 20, 60, 0.02)[:4] + noisy(52, 16, 35, 0.02)
    b = steps_run(str(tmp_path / "b"), lb, storms=(0,), small_lock_ns=lock_ns,
                  gap_ms=STORM_GAP_MS)
    return a, b


def test_storm_five_to_one_is_named(tmp_path):
    a, b = storm_pair(tmp_path)
    d = diff_json(a, b, *STORM_OPTS)
    assert d["metrics"]["storms"]["before"] == 5 and d["metrics"]["storms"]["after"] == 1
    assert d["change"]["verdict"] == "faster"
    storm = [f for f in d["findings"] if f["kind"] == "small_read_storm"]
    assert len(storm) == 1
    s = storm[0]
    assert s["what"] == "small-read storm in /data/train"
    assert s["status"] == "shrank"
    assert s["count"] == {"before": 5, "after": 1}
    assert s["reads"] == {"before": 6000, "after": 1200}
    # lost time per step: 6 000 reads x 90 us over 20 steps -> 1 200 reads
    assert s["lost_ns_per_unit"] == {"before": 27 * MS, "after": 5.4 * MS}
    lock = [f for f in d["findings"] if f["kind"] == "lock_contention"]
    assert [(f["status"], f["lost_ns_per_unit"]["after"]) for f in lock] == [("new", 90)]
    c = d["conclusion"]
    assert c.startswith("Faster: time per step ")
    assert ". Mostly small-read storm in /data/train: 5 -> 1 (6,000 -> 1,200 reads); lost " \
           "per step 27.0 ms -> 5.4 ms" in c, c
    # the 1.8 us lock wait is far inside the interval: never credited
    assert "lock" not in c
    txt = diff(a, b, *STORM_OPTS).stdout
    assert "shrank small-read storm in /data/train: 5 -> 1" in txt
    # the new 90 ns lock wait is counted, not listed, in the text
    assert "new lock contention" not in txt
    assert ("(1 more finding changed by less than 1 us per step on both sides: --json "
            "lists them)") in " ".join(txt.split())


def test_storms_in_other_directories_are_not_matched(tmp_path):
    a = steps_run(str(tmp_path / "a"), [60] * 8, storms=(0, 1), gap_ms=STORM_GAP_MS)
    b = steps_run(str(tmp_path / "b"), [60] * 8, storms=(0, 1), data="/data/val",
                  gap_ms=STORM_GAP_MS)
    d = diff_json(a, b, *STORM_OPTS)
    assert sorted((f["what"], f["status"]) for f in d["findings"]) == [
        ("small-read storm in /data/train", "gone"), ("small-read storm in /data/val", "new")]
    assert [x["what"] for x in d["disappeared"]] == ["small-read storm in /data/train"]
    assert [x["what"] for x in d["appeared"]] == ["small-read storm in /data/val"]


def test_fail_if_exit_statuses_and_junit(tmp_path):
    a, b = storm_pair(tmp_path)
    junit = tmp_path / "gate.xml"
    # faster by ~29% (interval -40% to -16%): "step_time < -10%" holds;
    # storms after == 1
    r = diff(a, b, *STORM_OPTS, "--fail-if", "step_time < -10%", "--fail-if", "storms > 0",
             "--fail-if", "step_time > +5%", "--fail-if", "hidden_syncs_per_step > 0",
             "--junit", junit, rc=1)
    lines = r.stdout.splitlines()[-4:]
    assert [l.split(" (")[0] for l in lines] == [
        "FAIL step_time < -10%", "FAIL storms > 0", "ok   step_time > +5%",
        "ok   hidden_syncs_per_step > 0"]
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == (
        "feedtrace.diff", "4", "2")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["step_time < -10%", "storms > 0",
                                              "step_time > +5%", "hidden_syncs_per_step > 0"]
    assert [c.find("failure") is not None for c in cases] == [True, True, False, False]
    assert cases[1].find("failure").get("message") == "1"
    # nothing holds: 0
    d = diff_json(a, b, *STORM_OPTS, "--fail-if", "step_time > +5%", "--fail-if", "storms > 1")
    assert [(g["condition"], g["holds"], g["value"]) for g in d["gate"]] == [
        ("step_time > +5%", False, d["gate"][0]["value"]), ("storms > 1", False, 1)]
    assert d["gate"][0]["interval"][1] < -0.1
    # relative on a count: storms 5 -> 1 is -80%
    d = diff_json(a, b, *STORM_OPTS, "--fail-if", "storms < -50%", rc=1)
    assert d["gate"][0]["value"] == -0.8 and d["gate"][0]["holds"] is True
    # bad input: 2, and no JUnit file written
    os.unlink(junit)
    for bad in (["--fail-if", "no_such_metric > 1"], ["--fail-if", "storms >> 1"],
                ["--fail-if", "storms > x"]):
        r = diff(a, b, *STORM_OPTS, *bad, "--junit", junit, rc=2)
        assert r.stdout == "" and "--fail-if" in r.stderr
        assert not os.path.exists(junit)
    diff(a, tmp_path / "missing", "--fail-if", "storms > 1", rc=2)


def test_fail_if_change_inside_the_interval_does_not_fail(tmp_path):
    a = steps_run(str(tmp_path / "a"), noisy(3, 20, 40, 0.3))
    b = steps_run(str(tmp_path / "b"), noisy(4, 20, 44, 0.3))
    # the step time moved less than its interval: "> +5%" and "< -5%" do
    # not hold, whichever way the point estimate went
    d = diff_json(a, b, "--fail-if", "step_time > +5%", "--fail-if", "step_time < -5%")
    lo, hi = d["gate"][0]["interval"]
    assert lo < -0.05 and hi > 0.05
    assert [g["holds"] for g in d["gate"]] == [False, False]
    # a threshold the whole interval is past: holds
    assert lo > -0.5
    diff(a, b, "--fail-if", "step_time > -50%", rc=1)


def test_report_fail_if(tmp_path):
    a, b = storm_pair(tmp_path)
    r = subprocess.run([TOOL, "report", a, *STORM_OPTS, "--fail-if", "storms > 2", "--fail-if",
                        "reads_per_step >= 300"], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    assert r.stdout.splitlines()[-2:] == ["FAIL storms > 2 (5)", "FAIL reads_per_step >= 300 (300)"]
    junit = tmp_path / "r.xml"
    r = subprocess.run([TOOL, "report", b, *STORM_OPTS, "--json", "--fail-if", "storms > 2", "--junit",
                        junit], capture_output=True, text=True)
    assert r.returncode == 0 and json.loads(r.stdout)["metrics"]["storms"] == 1
    assert r.stderr.splitlines()[-1] == "ok   storms > 2 (1)"
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == (
        "feedtrace.report", "1", "0")
    r = subprocess.run([TOOL, "report", a, "--fail-if", "storms > +5%"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "needs a before" in r.stderr


def test_timeline_step_counters_aligned_on_step_index(tmp_path):
    from test_convert import load
    a = steps_run(str(tmp_path / "a"), [40, 50, 60, 70])
    b = steps_run(str(tmp_path / "b"), [20, 25, 30, 35, 45, 55])
    out = str(tmp_path / "both.pftrace")
    diff(a, b, "-o", out)
    rows = load(out, "select t.name as name, c.ts as ts, cast(c.value as int) as v from counter c "
                     "join process_counter_track t on c.track_id = t.id "
                     "where t.name like '%step time' order by t.name, c.ts")
    got = {}
    for r in rows:
        got.setdefault(r["name"], []).append((r["ts"], r["v"]))
    # step i of both runs at the before run's start + i x its median step (55 ms)
    t0 = ftgen.TraceFile("/dev/null", 1).start
    assert got["before: step time"] == [(t0 + i * 55 * MS, ms * MS)
                                        for i, ms in enumerate([40, 50, 60, 70])]
    assert got["after: step time"] == [(t0 + i * 55 * MS, ms * MS)
                                       for i, ms in enumerate([20, 25, 30, 35, 45, 55])]
    (p,) = load(out, "select name from process where name = 'diff: steps by index'")
    assert p == {"name": "diff: steps by index"}


def four_workers(d, small):
    """A main process (pid 100) and four workers, each reading 1 400
    pieces of 4 KiB of /data/imgs in 2 s (small: 700 a second, under the
    per-process storm threshold, 2 800 together) or 350 files in one read
    of 16 KiB each."""
    os.makedirs(d)
    m = ftgen.TraceFile(os.path.join(d, "host.100.ft"), 100, ["/usr/bin/python3", "train.py"])
    m.thread(100, "main", main=True)
    m.event(100, "READ", m.start, 10_000, fd=3, req=100, ret=100, path="/home/u/cfg.yaml")
    m.close()
    for pid in (101, 102, 103, 104):
        w = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid,
                            ["/usr/bin/python3", "train.py"], ppid=100)
        w.thread(pid, "main", main=True)
        t = w.start + MS + pid * 100_000
        for i in range(1400 if small else 350):
            size = 4096 if small else 16384
            w.event(pid, "READ", t, 20_000, fd=5, req=size, ret=size,
                    path="/data/imgs/%d_%04d.jpg" % (pid, i // 4 if small else i))
            t += 1_428_000 if small else 5_712_000
        w.close()


def test_storm_of_workers_each_under_the_threshold(tmp_path):
    """The report's storm row of four workers, none of which has a storm
    of its own (test_findings.py), is what diff matches: "gone small-read
    storm in /data/imgs" with its 5 600 reads and 4 bursts, though the
    per-process storm count is 0 on both sides."""
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    four_workers(a, True)
    four_workers(b, False)
    d = diff_json(a, b)
    assert (d["metrics"]["storms"]["before"], d["metrics"]["storms"]["after"]) == (0, 0)
    [s] = [f for f in d["findings"] if f["kind"] == "small_read_storm"]
    assert s["what"] == "small-read storm in /data/imgs" and s["status"] == "gone"
    assert s["count"] == {"before": 4, "after": 0}
    assert s["reads"] == {"before": 5600, "after": 0}


def needed_syncs(d, hidden):
    """30 steps of 5.4 ms on the legacy stream (test_verdict_model.py's
    test_hidden_sync_costs_the_idle_after_it): launch, a copy out that
    waits 4 ms for the kernel (hidden: cuMemcpyDtoH; else the same wait as
    a cuStreamSynchronize), then 300 us of CPU before the next launch."""
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "h.100.ft"), 100, ["./syncs"])
    w.thread(100, "main", main=True)
    for i in range(30):
        t = w.start + 10 * MS + i * 5_400_000
        w.event(100, "CU_LAUNCH_KERNEL", t, 10_000, sym="cuLaunchKernel", kernel="k", sync=0,
                stream=0)
        if hidden:
            w.event(100, "CU_MEMCPY_DTOH", t + 1_100_000, 4 * MS, sym="cuMemcpyDtoH_v2", dir=2,
                    sync=2, stream=0)
        else:
            w.event(100, "CU_STREAM_SYNC", t + 1_100_000, 4 * MS, sym="x", sync=1, stream=0)
    w.close()


def test_hidden_sync_lost_is_the_gpu_idle_after_it(tmp_path):
    """diff counts a hidden sync's time lost as the report's row does: the
    GPU idle after the syncs (29 x 300 us) on the GPU model's basis, not
    their wait (30 x 4 ms)."""
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    needed_syncs(a, True)
    needed_syncs(b, False)
    d = diff_json(a, b)
    [s] = [f for f in d["findings"] if f["kind"] == "hidden_sync"]
    assert s["status"] == "gone" and s["count"] == {"before": 30, "after": 0}
    assert s["lost_ns_per_unit"] == {"before": 29 * 300_000, "after": 0}
