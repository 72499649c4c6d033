"""`feedtrace report`, `diff` and `run`: exact findings and verdicts for the
conv_* programs and for synthetic CUDA runs (tests/ftgen.py) in which each
pathology is planted; the diff of each against its fixed twin."""
import json
import os
import subprocess
import sys

from conftest import ROOT, TOOL, prog
from test_convert import MS, load
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


def test_run_prints_the_report(tmp_path):
    out = str(tmp_path / "t")
    r = subprocess.run([TOOL, "run", "-o", out, "--", prog("conv_lock"), "contended", "2"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "contended 2\n"
    # the report's first line names the run in at most 60 columns: the
    # path's tail after "..." when longer (pytest's paths run either way)
    shown = out if len(out) <= 60 else "..." + out[-57:]
    assert "feedtrace report: %s\n" % shown in r.stderr and "lock contention" in r.stderr
