"""`feedtrace report`, `diff` and `run`: exact findings and verdicts for the
conv_* programs and for synthetic CUDA runs (tests/ftgen.py) in which each
pathology is planted; the diff of each against its fixed twin."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, TOOL, prog
import ftgen
from test_convert import MS, cuda_steps, load
from test_convert_programs import files50  # noqa: F401 (fixture)

CHECK = os.path.join(ROOT, "tests", "check_pftrace.py")


def report(d, *extra):
    r = subprocess.run([TOOL, "report", d, "--json"] + list(extra), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def text_report(d):
    r = subprocess.run([TOOL, "report", d], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert all(len(l) <= 80 for l in r.stdout.splitlines()), r.stdout
    return r.stdout


def diff(a, b, *extra):
    r = subprocess.run([TOOL, "diff", a, b] + list(extra), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def kinds(rep, kind):
    return [f for f in rep["findings"] if f["kind"] == kind]


def test_storm_report_and_diff(traced, files50, tmp_path):
    bad = traced([prog("conv_storm"), files50, "50", "100", "512"])
    good = traced([prog("conv_storm"), files50, "50", "1", "262144"])
    rep = report(bad.dir)
    assert rep["schema"] == "feedtrace-report/1"
    (storm,) = rep["findings"]
    assert storm["kind"] == "small_read_storm"
    assert storm["reads"] == 5000 and storm["files"] == 50 and storm["bytes"] == 5000 * 512
    assert storm["read_sizes"]["<1K"] == 5000 and storm["reads_needed_1MiB"] == 50
    assert len(storm["top_files"]) == 5 and all(f["reads"] == 100 for f in storm["top_files"])
    assert storm["top_files"][0]["path"].startswith(files50 + "/f0")
    assert rep["metrics"]["small_reads"] == 5000 and rep["metrics"]["storms"] == 1
    # no GPU work and no batch received: no feed to limit (issue 12)
    assert rep["verdict"]["limit"] == "none"
    assert rep["verdict"]["feeders_launch_kernels"] is False
    fixed = report(good.dir)
    assert fixed["findings"] == [] and fixed["metrics"]["small_reads"] == 0
    assert fixed["metrics"]["read_bytes"] == rep["metrics"]["read_bytes"] == 2560000
    txt = text_report(bad.dir)
    assert "small-read storm" in txt and "Verdict" in txt

    d = json.loads(diff(bad.dir, good.dir, "--json"))
    assert d["metrics"]["small_reads"] == {"before": 5000, "after": 0, "change": -5000,
                                           "relative": -1.0}
    assert d["metrics"]["reads"]["after"] == 50
    # a storm is matched by the directory of its files (issue 15)
    assert [x["what"] for x in d["disappeared"]] == ["small-read storm in " + files50]
    assert d["appeared"] == []
    assert [(f["what"], f["status"]) for f in d["findings"]] == [
        ("small-read storm in " + files50, "gone")]
    # one run per side, no steps: figures only, nothing credited (issue 15)
    assert d["change"] is None
    assert d["conclusion"].startswith("Not resolved: one run per side without marked steps")
    out = str(tmp_path / "both.pftrace")
    txt = diff(bad.dir, good.dir, "-o", out)
    assert "gone small-read storm in" in txt
    assert all(len(l) <= 80 for l in txt.splitlines())
    r = subprocess.run([sys.executable, CHECK, out, "--expect-name", "read=5050",
                        "--expect-name", "small-read storm=1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = load(out, "select name from process where pid != 0 and name is not null order by name")
    # the role names' words are joined by no-break spaces (convert.c)
    names = [r["name"].replace("\xa0", " ") for r in rows]
    assert names == ["after: main: conv_storm data 50 1 262144",
                     "before: main: conv_storm data 50 100 512"]


def test_lock_report(traced):
    run = traced([prog("conv_lock"), "contended", "7"])
    rep = report(run.dir)
    (lock,) = rep["findings"]
    assert lock["kind"] == "lock_contention" and lock["count"] == 7
    assert lock["call"] == "pthread_mutex_lock" and lock["threads"] == 1
    assert lock["total_ns"] >= 7 * 4 * MS
    assert rep["call_sites"][0]["count"] == 7
    # no GPU work and no batch received: the finding, but no feed (issue 12)
    assert rep["verdict"]["limit"] == "none"
    free = traced([prog("conv_lock"), "free", "1000"])
    assert report(free.dir)["findings"] == []


def write(tmp_path, name, w_fn):
    d = tmp_path / name
    d.mkdir()
    w_fn(str(d / "host.100.ft")).close()
    return str(d)


def test_cuda_hidden_syncs_and_gaps(tmp_path):
    d = write(tmp_path, "bad", cuda_steps)
    rep = report(d)
    gaps = kinds(rep, "launch_gap")
    assert len(gaps) == 9
    for g in gaps:
        assert g["scope"] == "stream" and g["after_sync"] is True and g["cause"] == "io"
        assert g["lost_ns"] == 5 * MS and g["attribution_ns"]["io"] == 4 * MS
        assert g["attribution_ns"]["other_cpu"] == 1 * MS and g["next_call"] == "cuLaunchKernel"
    (h,) = kinds(rep, "hidden_sync")
    assert h["symbol"] == "cuMemcpyDtoH_v2" and h["count"] == 10 and h["site"] == ""
    assert h["total_ns"] == 20 * MS and h["max_ns"] == 2 * MS and h["tid"] == 100
    assert rep["findings"][0] is not None and rep["findings"][0]["kind"] == "hidden_sync"
    m = rep["metrics"]
    assert (m["launches"], m["launch_gaps"], m["launch_gap_ns"]) == (50, 9, 45 * MS)
    assert (m["hidden_syncs"], m["hidden_sync_ns"]) == (10, 20 * MS)
    v = rep["verdict"]
    assert v["feeding_threads"] == [100] and v["feeders_launch_kernels"] is True
    assert v["limit"] == "data delivery" and "data delivery" in v["sentence"]
    # the gap threshold is an option
    assert len(kinds(report(d, "--gap-ms", "6"), "launch_gap")) == 0

    fixed = write(tmp_path, "fixed", lambda p: cuda_steps(p, hidden=False, read_ms=0))
    assert report(fixed)["findings"] == []
    dj = json.loads(diff(d, fixed, "--json"))
    assert dj["metrics"]["hidden_syncs"]["before"] == 10 and dj["metrics"]["hidden_syncs"]["after"] == 0
    assert dj["metrics"]["launch_gaps"]["after"] == 0
    gone = sorted(x["what"] for x in dj["disappeared"])
    assert gone == ["hidden syncs in cuMemcpyDtoH_v2", "launch gaps (file I/O)"]
    assert dj["conclusion"].startswith("Not resolved: one run per side without marked steps "
                                       "cannot separate a change from noise")


def pattern(path, gap_call=None, gap_ns=0, sync_ns=0, sync_kind="CU_STREAM_SYNC", steps=20):
    """Per step: 3 launches; then `gap_call` (a kind) for gap_ns, then a sync."""
    w = ftgen.TraceFile(path, 100, ["pattern"])
    w.thread(100, "main")
    t = w.start + MS
    for _ in range(steps):
        for _ in range(3):
            w.event(100, "CU_LAUNCH_KERNEL", t, 5_000, sym="cuLaunchKernel", kernel="k",
                    sync=0, stream=0x10)
            t += 10_000
        if gap_call:
            fields = {"lock": 0x1234} if "MUTEX" in gap_call else {"sem": 0x99}
            w.event(100, gap_call, t, gap_ns, **fields)
            t += gap_ns
        elif gap_ns:
            t += gap_ns                        # untraced CPU work
        if sync_ns:
            sync = 2 if sync_kind.startswith("CU_MEMCPY") else 1
            w.event(100, sync_kind, t, sync_ns, sym="x", sync=sync, stream=0x10)
            t += sync_ns
    return w


@pytest.mark.parametrize("name,kw,limit,cause", [
    ("launch-bound", dict(gap_ns=3 * MS), "work submission", "other_cpu"),
    ("gpu-bound", dict(sync_ns=10 * MS), "GPU-bound", None),
    # the hidden sync waits while the GPU is busy and nothing follows it
    # before the next launch: it costs no GPU time (issue 12, item 5)
    ("hidden", dict(sync_ns=10 * MS, sync_kind="CU_MEMCPY_DTOH"), "GPU-bound", None),
    ("lock-bound", dict(gap_call="MUTEX_LOCK", gap_ns=8 * MS), "locks", "locks"),
    ("data-starved", dict(gap_call="SEM_WAIT", gap_ns=8 * MS), "data delivery", "data_wait"),
])
def test_verdicts(tmp_path, name, kw, limit, cause):
    d = write(tmp_path, name, lambda p: pattern(p, **kw))
    rep = report(d)
    assert rep["verdict"]["limit"] == limit, rep["verdict"]
    gaps = kinds(rep, "launch_gap")
    if cause:
        assert len(gaps) == 19 and {g["cause"] for g in gaps} == {cause}
    else:
        assert gaps == []
    assert "Verdict" in text_report(d)


def test_run_prints_the_report(tmp_path):
    out = str(tmp_path / "t")
    r = subprocess.run([TOOL, "run", "-o", out, "--", prog("conv_lock"), "contended", "2"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "contended 2\n"
    assert "feedtrace report: " + out in r.stderr and "lock contention" in r.stderr


def test_report_nothing_usable(tmp_path):
    r = subprocess.run([TOOL, "report", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1 and "no trace files" in r.stderr
    r = subprocess.run([TOOL, "diff", str(tmp_path), str(tmp_path)], capture_output=True,
                       text=True)
    assert r.returncode == 1
