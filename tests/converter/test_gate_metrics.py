"""--fail-if reads each metric as `report --json` writes it (docs/ANALYSES.md,
"CI gate"; the decision is converter/model/gate.c): on a synthetic run
(tests/ftgen.py) of 3 steps with 7 launches, 2 hidden syncs and 10 reads
in them, every number of the report's "metrics" (metrics.def's and the
step figures of stepfigs.def) holds at its JSON value with >= and not with
>, the seen value printed as that JSON value; the rates are the
4-decimal figures written (2.3333, not 7/3). Without steps the step
figures are "not evaluated"; steps_from and an unknown name are errors
(exit 2) with their line on stderr."""
import json
import os
import subprocess

import ftgen
from conftest import TOOL

MS = 1_000_000
US = 1_000
T0 = 1_000_000_000_000 + 10 * MS      # ftgen's default start, and 10 ms

LAUNCHES = [3, 2, 2]
HIDDEN = [1, 0, 1]
READS = [4, 3, 3]

NO_METRIC = ("feedtrace: --fail-if '%s': no metric '%s' (the names of `feedtrace report "
             "--json`'s \"metrics\", step_time or step_median)\n")


def run(d, ranges=True):
    """process 100, one thread: 3 steps of 10 ms ("step" ranges unless
    ranges is False), in step i LAUNCHES[i] launches, HIDDEN[i]
    synchronous copies and READS[i] reads of 64 KiB"""
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "host.100.ft"), 100, ["python3", "train.py"])
    w.thread(100, "main", main=True)
    for i in range(3):
        t = T0 + i * 10 * MS
        if ranges:
            w.event(100, "RANGE_PUSH", t, 0, name="step", level=0, api=0)
        u = t + 100 * US
        for k in range(READS[i]):
            w.event(100, "READ", u, 200 * US, fd=3, req=65536, ret=65536,
                    path="/data/x%d.%d" % (i, k))
            u += 300 * US
        for k in range(LAUNCHES[i]):
            w.event(100, "CU_LAUNCH_KERNEL", u, 10 * US, sym="cuLaunchKernel", kernel="k",
                    sync=0, stream=0)
            u += 100 * US
        for k in range(HIDDEN[i]):
            w.event(100, "CU_MEMCPY_DTOH", u, 1 * MS, sym="cuMemcpyDtoH_v2", dir=2, sync=2,
                    stream=0)
            u += 1100 * US
        if ranges:
            w.event(100, "RANGE_POP", t + 9900 * US, 0, level=0, api=0)
    w.close()
    return d


def report(d, *conds, rc):
    """`feedtrace report D --fail-if C...`: its output"""
    args = [TOOL, "report", d, "--quiet"]
    for c in conds:
        args += ["--fail-if", c]
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == rc, r.stdout + r.stderr
    return r


def metrics(d):
    r = subprocess.run([TOOL, "report", d, "--json"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["metrics"]


def test_every_number_as_the_json_writes_it(tmp_path):
    d = run(str(tmp_path / "r"))
    m = metrics(d)
    assert (m["steps"], m["steps_from"]) == (3, "ranges")
    assert (m["launches_per_step"], m["hidden_syncs_per_step"], m["reads_per_step"]) == (
        2.3333, 0.6667, 3.3333)
    assert (m["launches"], m["hidden_syncs"], m["reads"]) == (7, 2, 10)
    numbers = [k for k, v in m.items() if isinstance(v, (int, float))]
    assert [k for k in m if k not in numbers] == ["steps_from"]
    assert len(numbers) == 31
    # step_time and step_median: the mean and the median step
    names = numbers + ["step_time", "step_median"]
    value = dict(m, step_time=m["step_mean_ns"], step_median=m["step_median_ns"])
    for op, rc, word in ((">=", 1, "FAIL"), (">", 0, "ok  ")):
        for part in (names[:16], names[16:]):
            conds = ["%s %s %r" % (k, op, value[k]) for k in part]
            lines = report(d, *conds, rc=rc).stdout.splitlines()[-len(part):]
            assert lines == ["%s %s (%.6g)" % (word, c, value[k]) for c, k in zip(conds, part)]


def test_without_steps_not_evaluated(tmp_path):
    d = run(str(tmp_path / "r"), ranges=False)
    m = metrics(d)
    steps = [k for k, v in m.items() if v is None]
    assert steps == ["steps", "steps_from", "step_ns", "step_mean_ns", "step_median_ns",
                     "launches_per_step", "hidden_syncs_per_step", "reads_per_step"]
    names = steps + ["step_time", "step_median"]
    lines = report(d, *["%s >= 0" % k for k in names], rc=0).stdout.splitlines()[-len(names):]
    assert lines == ["skip %s >= 0 (not evaluated: %s is null (no steps))" % (k, k)
                     for k in names]
    # one number beside them still fails
    assert report(d, "reads_per_step > 0", "launches > 6", rc=1).stdout.splitlines()[-2:] == [
        "skip reads_per_step > 0 (not evaluated: reads_per_step is null (no steps))",
        "FAIL launches > 6 (7)"]


def test_no_such_metric(tmp_path):
    d = run(str(tmp_path / "r"))
    for c, name in (("steps_from > 0", "steps_from"), ("nosuch > 1", "nosuch"),
                    ("launch_gaps_per_step > 1", "launch_gaps_per_step"),
                    ("gaps > 1", "gaps")):          # a field's name, not its key
        r = report(d, "launches > 0", c, rc=2)
        assert (r.stdout, r.stderr) == ("", NO_METRIC % (c, name))
        r = subprocess.run([TOOL, "diff", d, "--", d, "--fail-if", c], capture_output=True,
                           text=True, timeout=300)
        assert (r.returncode, r.stdout, r.stderr) == (2, "", NO_METRIC % (c, name))
