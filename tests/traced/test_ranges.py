"""User ranges and marks, and the steps made of them.

Recording: NVTX through its tool-injection interface (tests/progs/nvtx_ranges
with the stand-in NVTX loader examples/nvtx_stub.h, and, when the CUDA
toolkit's nvtx3 headers are installed, the real NVTX v3 loader), and the
exported feedtrace_range_push/_pop and feedtrace_mark from Python (ctypes).
Then the timeline (slices and instants), report (steps, mean and median
step time, per-step counts, on hand-planted traces with exact times) and
diff (step rows, the conclusion by time per step).
"""
import collections
import json
import os
import re
import subprocess

import pytest

from conftest import BUILD, LIB, PYTHON, TOOL, Trace, clean_env, make, prog
from test_convert import check_names, convert, load

NVTX = {"NVTX_INJECTION64_PATH": LIB}
NVTX3 = "/usr/local/cuda/include/nvtx3/nvToolsExt.h"


def ranges(trace, call):
    return [e for e in trace.events if e["call"] == call]


def report(d, *extra):
    r = subprocess.run([TOOL, "report", d, "--json"] + list(extra), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def diff_json(a, b, *extra):
    r = subprocess.run([TOOL, "diff", a, b, "--json"] + list(extra), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# ---------------------------------------------------------------- recording

def test_nvtx_injection_records_every_form(traced):
    run = traced([prog("nvtx_ranges"), "all", "3"], env=NVTX)
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    # what NVTX returned: our levels (0-based depth), -1 for a pop with none open
    assert out[0] == "levels 3 pops 3"
    assert out[1] == "more 0 1 1 0 0 0 -1"
    ids = [int(x) for x in out[2].split()[1:]]
    t = run.trace
    pushes, pops = ranges(t, "nvtxRangePush"), ranges(t, "nvtxRangePop")
    assert collections.Counter((e["args"]["name"], e["args"]["level"], e["args"]["api"])
                               for e in pushes) == {
        ("step", 0, 0): 3, ("forward", 1, 0): 3, ("ex push", 0, 0): 1,
        ("wide push", 1, 0): 1, ("registered", 0, 1): 1}
    assert collections.Counter((e["args"]["level"], e["args"]["api"]) for e in pops) == {
        (1, 0): 4, (0, 0): 4, (0, 1): 1, (-1, 0): 1}
    marks = ranges(t, "nvtxMark")
    assert collections.Counter((e["args"]["name"], e["args"]["api"]) for e in marks) == {
        ("tick", 0): 3, ("wide mark", 0): 1, ("ex mark", 0): 1, ("domain mark", 1): 1}
    starts, ends = ranges(t, "nvtxRangeStart"), ranges(t, "nvtxRangeEnd")
    assert [(e["args"]["id"], e["args"]["name"], e["args"]["api"]) for e in starts] == [
        (ids[0], "async", 0), (ids[1], "domain range", 1)]
    assert sorted((e["args"]["id"], e["args"]["api"]) for e in ends) == [(ids[0], 0), (ids[1], 1)]
    main = starts[0]["tid"]
    # "async" was ended by another thread
    assert [e["tid"] != main for e in ends if e["args"]["id"] == ids[0]] == [True]
    assert all(e["dur_ns"] == 0 for e in pushes + pops + marks + starts + ends)
    assert t.procs[0]["lost"] == 0


def test_without_injection_path_nothing_is_recorded(traced):
    run = traced([prog("nvtx_ranges"), "all", "2"], env={"NVTX_INJECTION64_PATH": ""})
    assert run.returncode == 0, run.stderr
    # the stand-in loader found no tool: NVTX's no-op results
    assert run.stdout.splitlines()[:2] == ["levels -8 pops -8", "more -2 -2 -2 -2 -2 -2 -2"]
    assert [e for e in run.trace.events if e["call"].startswith("nvtx")] == []


def test_disabled_records_nothing_but_nvtx_still_works(traced):
    run = traced([prog("nvtx_ranges"), "steps", "2"], env=dict(NVTX, FEEDTRACE_DISABLE="1"),
                 load=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "levels 2 pops 2"


PY_API = r"""
import ctypes
import sys
N = int(sys.argv[1])
lib = ctypes.CDLL(None)
lib.feedtrace_range_push.argtypes = [ctypes.c_char_p]
lib.feedtrace_mark.argtypes = [ctypes.c_char_p]
for i in range(N):
    lib.feedtrace_range_push(b"step %d" % i)
    lib.feedtrace_range_push(b"load")
    lib.feedtrace_range_pop()
    lib.feedtrace_mark(b"logged")
    lib.feedtrace_range_pop()
lib.feedtrace_range_pop()                # nothing open
lib.feedtrace_range_push(None)           # a range without a name
lib.feedtrace_range_pop()
print("ok")
"""


def test_exported_functions_from_python(traced):
    run = traced([PYTHON, "-c", PY_API, "5"])
    assert run.returncode == 0, run.stderr
    assert run.stdout == "ok\n"
    t = run.trace
    pushes = ranges(t, "nvtxRangePush")
    assert [(e["args"]["name"], e["args"]["level"]) for e in pushes] == [
        x for i in range(5) for x in (("step %d" % i, 0), ("load", 1))] + [("", 0)]
    assert all(e["args"]["api"] == 2 for e in pushes)
    assert [e["args"]["level"] for e in ranges(t, "nvtxRangePop")] == [1, 0] * 5 + [-1, 0]
    assert [e["args"]["name"] for e in ranges(t, "nvtxMark")] == ["logged"] * 5
    rep = report(run.dir)
    assert rep["metrics"]["steps"] == 5


# ---------------------------------------------------------------- timeline

def test_convert_ranges_are_nested_slices_and_marks_instants(traced):
    run = traced([prog("nvtx_ranges"), "all", "3"], env=NVTX)
    out, _ = convert(run.dir)
    check_names(out, {"step": 3, "forward": 3, "tick": 3, "ex push": 1, "wide push": 1,
                      "registered": 1, "async": 1, "domain range": 1, "wide mark": 1,
                      "ex mark": 1, "domain mark": 1, "nvtxRangePush": 0, "nvtxMark": 0})
    rows = load(out, "select s.name as name, s.depth as depth, p.name as parent from slice s "
                     "left join slice p on s.parent_id = p.id "
                     "where s.name in ('step', 'forward', 'wide push', 'tick') order by s.ts")
    got = collections.Counter((r["name"], r["depth"], r["parent"]) for r in rows)
    assert got == {("step", 0, None): 3, ("forward", 1, "step"): 3, ("tick", 1, "step"): 3,
                   ("wide push", 1, "ex push"): 1}


# ---------------------------------------------------------------- steps


def test_report_steps_from_program(traced):
    run = traced([prog("nvtx_ranges"), "steps", "7"], env=NVTX)
    rep = report(run.dir)
    assert rep["metrics"]["steps"] == 7
    assert rep["processes"][0]["metrics"]["steps"] == 7
    assert 0 < rep["metrics"]["step_median_ns"] <= rep["metrics"]["step_ns"]


# ---------------------------------------------------------------- examples

@pytest.fixture(scope="module")
def examples_built():
    make("examples")


def test_example_steps_diff(traced, examples_built):
    """hidden_sync marks each of its 20 steps with NVTX: the diff against
    its fixed twin compares time per step."""
    exe = os.path.join(BUILD, "examples", "hidden_sync")
    env = dict(NVTX, FT_CUDA_PATH="link", LD_LIBRARY_PATH=os.path.join(BUILD, "simgpu"))
    bad = traced([exe], env=env)
    good = traced([exe, "--fixed"], env=env)
    assert bad.returncode == 0 and good.returncode == 0, bad.stderr + good.stderr
    for run in (bad, good):
        assert [e["args"]["name"] for e in ranges(run.trace, "nvtxRangePush")] == ["step"] * 20
        assert len(ranges(run.trace, "nvtxRangePop")) == 20
    assert report(bad.dir)["metrics"]["hidden_syncs_per_step"] == 2.0
    d = diff_json(bad.dir, good.dir)
    assert d["metrics"]["steps"]["before"] == d["metrics"]["steps"]["after"] == 20
    # judged on time per step over the 20 steps of each side: which way,
    # and how many leading steps are warm-up (longer than 3x the median,
    # at most a quarter of them) depend on a shared CPU's timing; the
    # warm-up rule is judged on planted steps (tests/converter/test_verdict_model.py)
    m = re.match(r"(Faster|Slower|No change|No change resolved): time per step .* over "
                 r"(\d+) and (\d+) steps (\(after (\d) and (\d) warm-up steps\) )?in 1 "
                 r"and 1 run", d["conclusion"])
    assert m, d["conclusion"]
    warm = [int(m.group(5) or 0), int(m.group(6) or 0)]
    assert [int(m.group(2)) + warm[0], int(m.group(3)) + warm[1]] == [20, 20], d["conclusion"]
    assert max(warm) <= 5, d["conclusion"]


# ---------------------------------------------------------------- real NVTX

NVTX3_PROG = r"""
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
int main(void)
{
    for (int i = 0; i < 4; i++) {
        nvtxRangePushA("step");
        nvtxMarkA("tick");
        nvtxRangePop();
    }
    nvtxRangeId_t id = nvtxRangeStartA("whole");
    nvtxRangeEnd(id);
    printf("done\n");
    return 0;
}
"""


@pytest.mark.skipif(not os.path.exists(NVTX3), reason="no CUDA toolkit nvtx3 headers")
def test_real_nvtx3_loader(traced, tmp_path):
    src = tmp_path / "nvtx3prog.c"
    src.write_text(NVTX3_PROG)
    exe = str(tmp_path / "nvtx3prog")
    r = subprocess.run(["cc", "-O1", "-I/usr/local/cuda/include", "-o", exe, str(src), "-ldl"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = traced([exe], env=NVTX)
    assert run.returncode == 0 and run.stdout == "done\n", run.stderr
    t = run.trace
    assert [e["args"]["name"] for e in ranges(t, "nvtxRangePush")] == ["step"] * 4
    assert len(ranges(t, "nvtxRangePop")) == 4
    assert [e["args"]["name"] for e in ranges(t, "nvtxMark")] == ["tick"] * 4
    assert [e["args"]["name"] for e in ranges(t, "nvtxRangeStart")] == ["whole"]
    assert report(run.dir)["metrics"]["steps"] == 4


# ---------------------------------------------------------------- feedtrace run

def run_tool(tmp_path, argv, env_extra=None):
    env = clean_env("LD_PRELOAD", "NVTX_INJECTION64_PATH")
    env.update(env_extra or {})
    out = str(tmp_path / "run")
    r = subprocess.run([TOOL, "run", "-o", out, "--"] + argv, capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return r, Trace.load(out)


def test_run_sets_the_injection_path(tmp_path):
    r, t = run_tool(tmp_path, [prog("nvtx_ranges"), "steps", "3"])
    assert r.stdout.startswith("levels 3 pops 3\n")
    assert [e["args"]["name"] for e in ranges(t, "nvtxRangePush")] == ["step", "forward"] * 3
    assert "3 steps" in r.stderr                  # the report feedtrace run prints


def test_run_keeps_a_tool_already_named(tmp_path):
    r, t = run_tool(tmp_path, [prog("nvtx_ranges"), "steps", "3"],
                    {"NVTX_INJECTION64_PATH": str(tmp_path / "other-tool.so")})
    assert r.stdout.startswith("levels -12 pops -12\n")      # that tool did not load
    assert ranges(t, "nvtxRangePush") == []
