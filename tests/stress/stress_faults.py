"""Longer fault tests (make stress-faults): the same facts as
tests/traced/test_faults.py, at the sizes the issue names and repeated more often.
Not collected by `make test` (the file name does not start with test_);
run with `python3 -m pytest -s tests/stress/stress_faults.py`. Each test
prints one "FIGURES" line: what was tried and what survived
(docs/RELIABILITY.md, "Faults").
"""
import os
import random
import resource
import subprocess
import time

import pytest

from conftest import Trace
from test_faults import (FAULT, FIXED_MARGIN_KB, RING_KB, RING_SLOTS, built, check_kill9,  # noqa: F401
                         check_partial_trace, data, files_of, kill9_round, maxrss, plain,
                         reads, run, summary, tmpfs)


def figures(name, **kw):
    print("\nFIGURES %s: %s" % (name, ", ".join("%s=%s" % kv for kv in kw.items())))


def test_read_storm_10m(tmp_path):
    n = 10000000
    out = str(tmp_path / "trace")
    t0 = time.monotonic()
    u = plain([FAULT, "zero", str(n)], timeout=600)
    t1 = time.monotonic()
    r = run([FAULT, "zero", str(n)], out, {"FEEDTRACE_BUF_KB": str(RING_KB)}, timeout=600)
    t2 = time.monotonic()
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.split()[:2] == u.stdout.split()[:2] == ["zero", "reads=%d" % n]
    (p,) = summary(out)
    rd = p["calls"].get("read", 0)
    assert p["calls"] == {"open": 1, "read": rd} and p["damaged_chunks"] == 0
    assert rd + p["lost"] == n
    grow = maxrss(r.stdout) - maxrss(u.stdout)
    assert grow < RING_KB + FIXED_MARGIN_KB
    figures("read_storm_10m", reads=n, recorded=rd, lost=p["lost"], rss_growth_kb=grow,
            untraced_s="%.2f" % (t1 - t0), traced_s="%.2f" % (t2 - t1))


def test_kill9_200_moments(tmp_path, data):
    rng = random.Random(2024)
    got, early, gaps = 0, 0, []
    for i in range(200):
        res = kill9_round(tmp_path, data, i, rng.uniform(0.0, 0.3))
        if res is None:
            early += 1
            continue
        check_kill9(*res)
        got += 1
        gaps.append(res[0] - res[1])
    gaps.sort()
    figures("kill9", rounds=200, converted=got, before_file=early,
            unrecovered_reads_median=gaps[len(gaps) // 2], unrecovered_reads_max=gaps[-1],
            bound=RING_SLOTS // 3 + 1)


def test_thread_churn_100k(tmp_path, data):
    nt = 100000
    out = str(tmp_path / "trace")
    r = run([FAULT, "churn", data, str(nt), "100"], out, timeout=600)
    assert r.returncode == 0 and r.stderr == ""
    (p,) = summary(out)
    rd = p["calls"].get("read", 0)
    assert rd + p["lost"] + p["threads_untraced"] == nt
    figures("thread_churn", threads=nt, recorded=rd, lost=p["lost"],
            untraced=p["threads_untraced"], maxrss_kb=maxrss(r.stdout))


def test_fork_storm_1000(tmp_path, data):
    n = 1000
    out = str(tmp_path / "trace")
    r = run([FAULT, "forkstorm", data, str(n)], out, timeout=600)
    assert (r.returncode, r.stdout, r.stderr) == (0, "children=%d bad=0\n" % n, "")
    assert len(files_of(out)) == n + 1
    procs = summary(out)
    assert len(procs) == n + 1
    assert all(p["calls"].get("read") == 1 and p["lost"] == 0 for p in procs)
    assert sum(p["end"] == "_exit" for p in procs) == n
    figures("fork_storm", children=n, files=len(files_of(out)), reads=n + 1)


def test_full_disk_sizes(tmpfs, data, tmp_path):
    tried = 0
    for size in ("64k", "128k", "256k", "512k", "1m"):
        fs = tmpfs(size)
        for how in ("reads", "reads_exit"):
            n = 200000
            out = os.path.join(fs, how)
            r = run([FAULT, how, data, str(n), "3"], out, timeout=300)
            assert (r.returncode, r.stdout) == (3, "reads=%d\n" % n), r.stderr
            assert len(r.stderr.splitlines()) == 1, r.stderr
            check_partial_trace(out, 3 * n + (how == "reads_exit"), 3,
                                "exit" if how == "reads" else "_exit")
            subprocess.run(["rm", "-rf", out])
            tried += 1
    figures("full_disk", runs=tried, survived=tried)


def test_file_size_limits(data, tmp_path):
    tried = 0
    for limit in (200, 300, 1000, 4096, 10000, 65536, 300000):
        for how in ("reads", "reads_exit"):
            out = str(tmp_path / ("t%d%s" % (limit, how)))

            def limited():
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

            r = run([FAULT, how, data, "100000", "4"], out, preexec_fn=limited, timeout=300)
            assert (r.returncode, r.stdout) == (4, "reads=100000\n"), (limit, r.returncode)
            assert len(r.stderr.splitlines()) == 1, r.stderr
            if files_of(out):
                check_partial_trace(out, 300000 + (how == "reads_exit"), 4,
                                    "exit" if how == "reads" else "_exit")
            tried += 1
    figures("file_size_limit", runs=tried, survived=tried)


def test_sigalrm_10000_reads(tmp_path):
    n = 10000
    argv = [FAULT, "eintr", str(n)]
    want = "eintr=%d data=%d other=0\n" % (n - n // 4, n // 4)
    u = plain(argv, timeout=300)
    out = str(tmp_path / "trace")
    r = run(argv, out, timeout=300)
    assert u.stdout == r.stdout == want and r.returncode == 0
    t = Trace.load(out)
    assert t.count("read", ret=-4) == n - n // 4 and t.count("read", ret=1) == n // 4
    figures("sigalrm", reads=n, eintr=n - n // 4, same_as_untraced=True)
