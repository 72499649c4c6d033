"""`feedtrace diff` compares throughput: the time per step over the loop
(the steps' periods, start to next start: the loop's window over its
steps), with a block-bootstrap interval over consecutive steps; the median
step is a second line. Synthetic runs (tests/ftgen.py) of the shapes a
prefetching loader gives: most steps find a batch waiting (~100 us), one
in a few waits milliseconds for the next."""
import json
import os
import random
import subprocess

from conftest import TOOL
import ftgen

US = 1000
MS = 1_000_000
PIPE = 2                       # enum ft_fd_kind (libfeedtrace/format/format.h)


def diff(*args, rc=0):
    r = subprocess.run([TOOL, "diff"] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == rc, r.stdout + r.stderr
    return r


def diff_json(*args, rc=0):
    return json.loads(diff(*(list(args) + ["--json"]), rc=rc).stdout)


def cycle(seed, n, pattern, noise=0.05):
    """n values (ns) repeating pattern (us), each within +-noise"""
    r = random.Random(seed)
    return [int(pattern[i % len(pattern)] * US * (1 + r.uniform(-noise, noise)))
            for i in range(n)]


def forked_loader(d, compute, waits, workers=2):
    """A Python main process fed by forked DataLoader workers (no step
    ranges: the steps are the batches received). Per batch: a wait for the
    batch's 4-byte length on the result pipe (waits[k], 1 us when a batch
    was waiting), its body, then compute[k] of CPU. Each worker (ppid the
    main) reads one 1 MiB file per batch it makes."""
    os.makedirs(d, exist_ok=True)
    pid = 500
    w = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid,
                        ["/usr/bin/python3", "train.py"])
    w.thread(pid, "python3", True)
    t = w.start + MS
    for k, (c, wt) in enumerate(zip(compute, waits)):
        wt = max(wt, US)
        w.event(pid, "PIPE_READ", t, wt, fd=7, kind=PIPE, req=4, ret=4)
        w.event(pid, "PIPE_READ", t + wt, 2 * US, fd=7, kind=PIPE, req=4096, ret=4096)
        t += wt + 2 * US + c
    w.close()
    n = len(compute)
    for i in range(workers):
        wp = pid + 1 + i
        ww = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % wp), wp,
                             ["/usr/bin/python3", "train.py"], ppid=pid)
        ww.thread(wp, "pt_data_worker", True)
        for k in range(i, n, workers):
            ww.event(wp, "READ", w.start + MS + k * (t - w.start - MS) // n, 300 * US, fd=9,
                     path="/data/b%d" % k, req=1 << 20, ret=1 << 20)
        ww.close()
    return d


def ranged(d, lengths, waits=None):
    """One thread, a "step" range per length (ns), 2 us between steps; a
    step with a wait gets its batch from a pipe (the wait) first."""
    os.makedirs(d, exist_ok=True)
    pid = 300
    w = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid, ["prog"])
    w.thread(pid, "main", True)
    t = w.start + MS
    for k, ln in enumerate(lengths):
        w.event(pid, "RANGE_PUSH", t, 0, name="step", level=0, api=0)
        wt = waits[k] if waits else 0
        if wt:
            w.event(pid, "PIPE_READ", t + US, wt, fd=7, kind=PIPE, req=4, ret=4)
        w.event(pid, "RANGE_POP", t + ln, 0, level=0, api=0)
        t += ln + 2 * US
    w.close()
    return d


def test_cpu_bound_workers_starved_vs_fixed_is_faster(tmp_path):
    """Starved: one batch in four is waited for 2.4 ms; fixed (more
    workers): one in eight, 1.2 ms, and the CPU steps 10% slower (the
    workers take a share of the cores). The median moves up 10%, the time
    per step down by half: the job is faster."""
    n = 200
    a = forked_loader(str(tmp_path / "starved"), cycle(1, n, [150]),
                      [2400 * US if k % 4 == 3 else 0 for k in range(n)])
    b = forked_loader(str(tmp_path / "fixed"), cycle(2, n, [165]),
                      [1200 * US if k % 8 == 7 else 0 for k in range(n)], workers=4)
    d = diff_json(a, b)
    assert d["unit"] == "step" and d["conclusion_on"] == "step_time"
    ch, med = d["change"], d["median_change"]
    assert (ch["of"], ch["statistic"], ch["method"]) == ("step_time", "mean", "block bootstrap")
    assert ch["verdict"] == "faster", d["conclusion"]
    # 199 steps from 200 batches; the means of the periods
    assert d["metrics"]["step_time_ns"]["before"] == ch["before_ns"]
    assert 700 * US < ch["before_ns"] < 780 * US and 300 * US < ch["after_ns"] < 340 * US
    assert ch["hi_ns"] < 0
    assert (med["of"], med["verdict"]) == ("step_median", "slower")
    assert 150 * US < med["after_ns"] - med["before_ns"] + 150 * US < 170 * US
    c = d["conclusion"]
    assert c.startswith("Faster: time per step "), c
    assert "over 199 and 199 steps in 1 and 1 run" in c
    assert ". Median step " in c and "(+9%, slower): the typical step moved, the time per " \
        "step moved the other way; the conclusion stands on the time per step" in c
    txt = diff(a, b).stdout
    rows = {l[:22].strip(): l[22:].split() for l in txt.splitlines() if l[:22].strip()}
    assert rows["time per step"][-1].startswith("-5") and rows["median step"][-1] == "+9%"


def test_small_files_starved_vs_fixed_is_faster(tmp_path):
    """Steps as ranges that include the batch's fetch. Starved: 9 steps
    in 10 find their batch (75 us), the tenth waits 40 ms; fixed: every
    step waits a little (615 us). The median goes up 8x, the time per step
    down 6x."""
    n = 300
    a = ranged(str(tmp_path / "a"), [ln + (40 * MS if k % 10 == 9 else 0)
                                     for k, ln in enumerate(cycle(3, n, [75]))],
               [40 * MS if k % 10 == 9 else 0 for k in range(n)])
    b = ranged(str(tmp_path / "b"), cycle(4, n, [615], 0.1), [540 * US] * n)
    d = diff_json(a, b)
    assert d["change"]["verdict"] == "faster" and d["median_change"]["verdict"] == "slower"
    assert d["conclusion"].startswith("Faster: time per step ")
    # the gate stands on the same figure; step_median on the other
    r = diff_json(a, b, "--fail-if", "step_time > +5%", "--fail-if", "step_time < -50%",
                  "--fail-if", "step_median > +5%", rc=1)
    assert [(g["condition"], g["holds"]) for g in r["gate"]] == [
        ("step_time > +5%", False), ("step_time < -50%", True), ("step_median > +5%", True)]
    assert r["gate"][1]["interval"][1] < -0.5 and r["gate"][2]["interval"][0] > 5
    diff(a, b, "--fail-if", "step_time > +5%")


def test_one_slow_step_in_ten_removed(tmp_path):
    """The median does not move (9 steps in 10 are the same), the time per
    step drops 45%: faster, and the median line says no change."""
    n = 200
    a = ranged(str(tmp_path / "a"), cycle(5, n, [100] * 9 + [1000], 0.02))
    b = ranged(str(tmp_path / "b"), cycle(6, n, [100], 0.02))
    d = diff_json(a, b)
    assert d["change"]["verdict"] == "faster"
    assert d["median_change"]["verdict"] in ("no change", "no change resolved")
    assert d["conclusion"].startswith("Faster: time per step ")
    assert "the typical step moved" not in d["conclusion"]


def test_median_moves_mean_does_not(tmp_path):
    """The typical step 100 -> 60 us, but one in ten 100 -> 460 us: the
    same time per step. The median says faster; the conclusion does not,
    and says which figure it stands on."""
    n = 1000
    a = ranged(str(tmp_path / "a"), cycle(7, n, [100], 0.01))
    b = ranged(str(tmp_path / "b"), cycle(8, n, [60] * 9 + [460], 0.01))
    d = diff_json(a, b)
    assert d["median_change"]["verdict"] == "faster"
    assert d["change"]["verdict"] in ("no change", "no change resolved")
    assert abs(d["change"]["after_ns"] - d["change"]["before_ns"]) < 2 * US
    c = d["conclusion"]
    assert c.startswith("No change"), c
    assert "(-40%, faster): the typical step moved, the time per step did not; the " \
        "conclusion stands on the time per step (the loop's throughput)" in c
    # a gate on the median fails, one on the time per step does not
    r = diff_json(a, b, "--fail-if", "step_time < -10%", "--fail-if", "step_median < -10%",
                  rc=1)
    assert [g["holds"] for g in r["gate"]] == [False, True]


def locks_run(d, waits):
    """One process: thread k waits waits[k] ns on one mutex, all from the
    same instant, then a 1 MiB read at 40 ms"""
    os.makedirs(d, exist_ok=True)
    pid = 300
    w = ftgen.TraceFile(os.path.join(d, "host.%d.ft" % pid), pid, ["prog"])
    for k in range(len(waits)):
        w.thread(pid + k, "main" if k == 0 else "w%d" % k, k == 0)
    for k, ns in enumerate(waits):
        w.event(pid + k, "MUTEX_LOCK", w.start + MS, ns, lock=0x1234, ret=0)
    w.event(pid, "READ", w.start + 40 * MS, 100 * US, fd=3, path="/x", req=1 << 20,
            ret=1 << 20)
    w.close()
    return d


def test_summed_times_say_so_and_no_relative_change_from_a_tiny_base(tmp_path):
    """666 ns of lock waits before, 4 threads x 30 ms after in a 41 ms run:
    the text prints no '+5879046%' (">100x") and says the times are summed
    over threads (120 ms of waits in a 41 ms run)."""
    a = locks_run(str(tmp_path / "a"), [666])
    b = locks_run(str(tmp_path / "b"), [30 * MS] * 4)
    txt = diff(a, b).stdout
    rows = {l[:22].strip(): l[22:].split() for l in txt.splitlines() if l[:1].isalpha()}
    assert rows["lock wait time"] == ["666", "ns", "120.0", "ms", "+120.0", "ms", ">100x"]
    assert rows["lock waits"][-1] == "+300%"
    assert "(times other than the wall time are summed over all threads and processes:\n" \
        " they can exceed it)" in txt
    # the JSON keeps the number
    d = diff_json(a, b)
    assert d["metrics"]["lock_wait_ns"]["relative"] == round((120 * MS - 666) / 666, 4)
