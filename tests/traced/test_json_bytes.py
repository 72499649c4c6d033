"""Names that are not UTF-8, or hold a newline: the JSON of `dump --json`
and `report --json` stays valid UTF-8 (a byte outside valid UTF-8 is
written as \\udcXX, Python's surrogateescape: os.fsencode() gives the
bytes back), and the text report's lines stay one line each. Before, the
JSON carried the raw bytes (not UTF-8: a strict reader refused it) and
the report's first line broke at the directory name's newline."""
import json
import os
import subprocess

from conftest import PYTHON, TOOL, clean_env, preload

NAME = b"f\xff\xfe\xc3\xa9\xed\xa0\x80\n\xf0\x9f\x98\x80.bin"   # bad, bad, e-acute, surrogate, newline, emoji


def test_paths_and_directory_not_utf8(tmp_path):
    base = os.fsencode(str(tmp_path))
    data_dir = base + b"/d\xff"
    os.mkdir(data_dir)
    path = data_dir + b"/" + NAME
    with open(path, "wb") as f:
        f.write(b"abc")
    out = base + b"/run\nx\xff"
    env = {os.fsencode(k): os.fsencode(v) for k, v in clean_env().items()}
    env[b"LD_PRELOAD"] = os.fsencode(preload())
    env[b"FEEDTRACE_OUT"] = out
    code = "import sys, os; open(os.fsencode(sys.argv[1]), 'rb').read()"
    r = subprocess.run([os.fsencode(PYTHON), b"-c", code.encode(), path], env=env,
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr

    d = subprocess.run([os.fsencode(TOOL), b"dump", b"--json", out], capture_output=True,
                       timeout=120)
    assert d.returncode == 0, d.stderr
    lines = [json.loads(x.decode("utf-8")) for x in d.stdout.splitlines()]   # strict
    reads = [e for e in lines if e.get("call") == "read" and
             os.fsencode(e["args"]["path"]) == path]
    assert len(reads) >= 1 and reads[0]["args"]["ret"] == 3
    [proc] = [x["process"] for x in lines if "process" in x]
    assert os.fsencode(proc["file"]).startswith(out + b"/")

    j = subprocess.run([os.fsencode(TOOL), b"report", b"--json", out], capture_output=True,
                       timeout=120)
    assert j.returncode == 0, j.stderr
    rep = json.loads(j.stdout.decode("utf-8"))
    assert os.fsencode(rep["dir"]) == out

    t = subprocess.run([os.fsencode(TOOL), b"report", out], capture_output=True, timeout=120)
    assert t.returncode == 0, t.stderr
    first, second = t.stdout.split(b"\n")[:2]
    assert first.startswith(b"feedtrace report: ") and first.endswith(b"/run?x\xff")
    assert second.startswith(b"  1 process, ")
