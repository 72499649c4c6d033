"""Paths at scale: the string table holds millions of distinct paths, and
when it must drop one it keeps the path's directory ("DIR/*") and counts
the loss (END strings_lost). tests/progs/exit_paths.c opens N distinct
paths that do not exist (each open is still recorded with its path),
spread over D directories, in order: path i is DIR/d(i % D)/NAME(i).
"""
import re
import subprocess

from conftest import TOOL, prog

PATHS = prog("exit_paths")
ENV = {"FEEDTRACE_BUF_KB": "65536", "FEEDTRACE_FLUSH_MS": "10"}
LINE = re.compile(r" open +fd=(-?\d+) path=(\S+) ")


def open_paths(outdir):
    """The path of every open record, in the thread's order (text dump:
    2 M JSON events would take minutes to parse)."""
    out = subprocess.run([TOOL, "dump", outdir], capture_output=True, text=True,
                         timeout=600, check=True).stdout
    return [m.group(2) for m in LINE.finditer(out)]


def summary(outdir):
    import json
    r = subprocess.run([TOOL, "dump", "--json", "--summary", outdir], capture_output=True,
                       text=True, timeout=600, check=True)
    procs = [json.loads(l)["process"] for l in r.stdout.splitlines()]
    assert len(procs) == 1
    return procs[0]


def test_two_million_distinct_paths(traced, tmp_path):
    n, d = 2000000, 100
    base = str(tmp_path / "nope")
    r = traced([PATHS, base, str(n), str(d), "0"], env=ENV, load=False, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "%d %d\n" % (n, n)
    p = summary(r.dir)
    assert p["records"] == n and p["lost"] == 0 and p["damaged_chunks"] == 0
    assert p["strings_lost"] == 0
    assert p["calls"] == {"open": n}
    assert p["strings"] == n + 1            # the paths and the exe
    paths = open_paths(r.dir)
    assert len(paths) == n
    bad = [i for i, s in enumerate(paths) if s != "%s/d%d/%d" % (base, i % d, i)]
    assert bad == []


def test_full_table_keeps_the_directory(traced, tmp_path):
    # 100 000 paths of about 3 KB (300 MB of text) pass the 248 MB for
    # whole strings: the rest are recorded as their directory
    n, d, pad = 100000, 10, 3000
    base = str(tmp_path / "nope")
    r = traced([PATHS, base, str(n), str(d), str(pad)], env=ENV, load=False, timeout=600)
    assert r.returncode == 0, r.stderr
    p = summary(r.dir)
    assert p["records"] == n and p["lost"] == 0 and p["damaged_chunks"] == 0
    paths = open_paths(r.dir)
    assert len(paths) == n
    whole = dirs = 0
    for i, s in enumerate(paths):
        directory = "%s/d%d/" % (base, i % d)
        if s == directory + "x" * pad + str(i):
            whole += 1
        else:
            assert s == directory + "*", (i, s[:80])
            dirs += 1
    # the first paths are whole, the loss is counted exactly
    assert 0 < dirs < n and whole == p["strings"] - 1 - d
    assert p["strings_lost"] == dirs
    first_dir = next(i for i, s in enumerate(paths) if s.endswith("/*"))
    assert all(s.endswith("/*") for s in paths[first_dir:])
