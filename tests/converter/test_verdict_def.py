"""converter/analyse/verdict.def is the one list of the verdict's reported fields:
the report's JSON verdict objects, what `feedtrace ranks` reads back and
diff's verdict rows are made from it, in its order. Checked on the
outputs themselves (synthetic traces, tests/ftgen.py; synthetic rank
summaries, tests/ranksynth.py), so a field written by hand beside the list,
or a row the list has and an output lacks, fails here."""
import json
import os
import re
import subprocess

import ftgen
import ranksynth
from conftest import TOOL, report_json

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
MS = 1_000_000


def rows():
    """verdict.def's rows as dicts of its columns, in order"""
    text = open(os.path.join(ROOT, "converter", "analyse", "verdict.def")).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for m in re.finditer(r"^VERDICT\(", text, re.M):
        i, depth, args, cur = m.end(), 1, [], ""
        while depth:
            c = text[i]
            i += 1
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if not depth:
                    break
            if c == "," and depth == 1:
                args.append(cur.strip())
                cur = ""
            else:
                cur += c
        args.append(cur.strip())
        assert len(args) == 9, args
        name, scope, typ, key, expr, ranks, diff, dkey, label = args
        out.append(dict(name=name, scope=scope, type=typ, key=json.loads(key), ranks=ranks,
                        diff=diff, dkey=None if dkey == "NULL" else json.loads(dkey)))
    return out


def trace(d, wait):
    """one process, 5 steps of 10 ms: a poll on a pipe of `wait`, a launch,
    a sync to the step's end"""
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "host.100.ft"), 100, ["python3", "train.py"])
    w.thread(100, "main", main=True)
    t = w.start + 10 * MS
    for i in range(5):
        w.event(100, "RANGE_PUSH", t, 0, name="step", level=0, api=0)
        w.event(100, "POLL", t, wait, ret=1, nfds=1, timeout=5000, kinds=2, fd0=5, fd1=-1,
                fd2=-1, fd3=-1, fd4=-1, fd5=-1, fd6=-1, fd7=-1)
        w.event(100, "CU_LAUNCH_KERNEL", t + wait + 100_000, 10_000, sym="cuLaunchKernel",
                kernel="k", sync=0, stream=0)
        w.event(100, "CU_STREAM_SYNC", t + wait + 200_000, 10 * MS - wait - 400_000, sym="x",
                sync=1, stream=0)
        w.event(100, "RANGE_POP", t + 10 * MS - 100_000, 0, level=0, api=0)
        t += 10 * MS
    w.close()
    return d


def test_rows_are_well_formed():
    r = rows()
    assert len({x["key"] for x in r}) == len(r) == len({x["name"] for x in r})
    for x in r:
        assert x["scope"] in ("P", "R") and x["ranks"] in ("0", "1")
        assert x["type"] in ("INT", "U64", "BOOL", "STR", "CATS", "OPT_NS", "OBJ")
        assert x["ranks"] == "0" or x["type"] == "STR", x
        assert x["diff"] in ("NONE", "STATE", "NS")
        assert (x["diff"] == "NONE") == (x["dkey"] is None), x


def test_report_verdicts_are_the_list(tmp_path):
    """the run's verdict: every row in order; a process's own: the P rows"""
    rep = report_json(trace(str(tmp_path / "t"), 6 * MS))
    assert list(rep["verdict"]) == [x["key"] for x in rows()]
    for p in rep["processes"]:
        assert list(p["verdict"]) == [x["key"] for x in rows() if x["scope"] == "P"]


def test_ranks_reads_back_the_ranks_rows(tmp_path):
    """`feedtrace ranks --json`: the straggler's verdict is rank, pid, file,
    then the rows ranks reads back, with the summary's values"""
    d = str(tmp_path / "sums")
    ranksynth.write(d, 4, 20, straggler=2)
    r = subprocess.run([TOOL, "ranks", "--json", d], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    sv = json.loads(r.stdout)["straggler_verdict"]
    keys = [x["key"] for x in rows() if x["ranks"] == "1"]
    assert list(sv) == ["rank", "pid", "file"] + keys
    s = ranksynth.summary(2, 4, 20, straggler=2)
    for x in rows():
        if x["ranks"] == "1":
            src = s["processes"][0]["verdict"] if x["scope"] == "P" else s["verdict"]
            assert sv[x["key"]] == src[x["key"]], x["key"]


def test_diff_rows_are_the_list(tmp_path):
    """diff --json: the rows with a diff way, in order, after gpu_idle"""
    a = trace(str(tmp_path / "a"), 6 * MS)
    b = trace(str(tmp_path / "b"), 2 * MS)
    r = subprocess.run([TOOL, "diff", a, "--", b, "--json"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    keys = list(j)
    shown = [x for x in rows() if x["diff"] != "NONE"]
    at = keys.index("gpu_idle") + 1
    assert keys[at:at + len(shown)] == [x["dkey"] for x in shown]
    assert keys[at + len(shown)] == "gate"
    reps = [report_json(a)["verdict"], report_json(b)["verdict"]]
    for x in shown:
        assert j[x["dkey"]] == {"before": reps[0][x["key"]], "after": reps[1][x["key"]]}
