"""`feedtrace report` on synthetic CUDA runs (tests/ftgen.py) in which each
pathology is planted: exact findings and verdicts; nothing usable. The
conv_* programs and `run`: tests/traced/test_report.py."""
import json
import subprocess

import pytest

from conftest import TOOL
import ftgen
from test_convert import MS, cuda_steps
from test_report import diff, kinds, report, text_report


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


def test_report_nothing_usable(tmp_path):
    r = subprocess.run([TOOL, "report", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1 and "no trace files" in r.stderr
    r = subprocess.run([TOOL, "diff", str(tmp_path), str(tmp_path)], capture_output=True,
                       text=True)
    assert r.returncode == 1
