"""Findings that name the real problem (issue 13): what is never a storm,
what is. Synthetic traces (tests/ftgen.py) with exact counts; real programs
(the Debian PyTorch import, the launch-bound shapes, the GIL) in
tests/traced/test_findings_programs.py."""
import json
import re
import subprocess

from conftest import TOOL, assert_offline_page, chromium_dom, report_json
import ftgen

MS = 1000000
START = 10 ** 12


def storms(rep):
    return [f for f in rep["findings"] if f["kind"] == "small_read_storm"]


def reads_of(w, paths, per_file, t0, size=4096):
    """per_file reads of size bytes of each path, 50 us apart."""
    t = t0
    for i, p in enumerate(paths):
        for k in range(per_file):
            w.event(100, "READ", t, 20000, fd=3 + i % 100, req=size, ret=size, path=p)
            t += 50000
    return t


def test_imports_and_pseudo_files_are_never_a_storm(tmp_path):
    """3 000 small reads of .py/.pyc/.so/site-packages and /proc files in
    150 ms, then 2 000 small reads of 400 data files: one storm, of the
    data files only; the 3 000 count as module_reads."""
    d = tmp_path / "run"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["/usr/bin/python3", "train.py"])
    w.thread(100, "main", main=True)
    code = (["/usr/lib/python3/dist-packages/torch/nn/m%d.py" % i for i in range(100)] +
            ["/usr/lib/python3.11/__pycache__/x%d.cpython-311.pyc" % i for i in range(100)] +
            ["/opt/venv/lib/python3.12/site-packages/numpy/core/_m%d.so" % i for i in range(50)] +
            ["/home/u/proj/helper%d.py" % i for i in range(40)] +
            ["/proc/self/status", "/sys/fs/cgroup/cpu.max", "/dev/urandom",
             "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/etc/ld.so.cache",
             "/home/u/.local/lib/python3.11/site-packages/a.pth"] +
            ["/home/u/proj/ext%d.cpython-311-x86_64-linux-gnu.so" % i for i in range(4)])
    assert len(code) == 300
    t = reads_of(w, code, 10, START)
    data = ["/data/train/%05d.bin" % i for i in range(400)]
    reads_of(w, data, 5, t + 5000 * MS)
    w.close()
    rep = report_json(str(d))
    m = rep["metrics"]
    assert (m["module_reads"], m["small_reads"], m["storms"]) == (3000, 2000, 1)
    [s] = storms(rep)
    assert s["reads"] == 2000 and s["files"] == 400
    assert all(f["path"].startswith("/data/train/") for f in s["top_files"])


# ---- problems: one row per problem, ranked by cost, each with a suggestion

US = 1000


def problems(rep):
    return rep["problems"]


def gapped_run(d):
    """One process, 47 steps: launch, then the GPU idles 8 ms while the
    feeding thread waits for a batch in poll() (47 separate data-wait
    gaps); in step 10 a 20 us hidden sync (a pageable copy). The 47 gaps
    are one row, first; the hidden sync one row after it."""
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["./loop"])
    w.thread(100, "main", main=True)
    t = START
    for i in range(47):
        w.event(100, "POLL", t, 8 * MS, ret=1, nfds=1, timeout=5000, kinds=2, fd0=5, fd1=-1,
                fd2=-1, fd3=-1, fd4=-1, fd5=-1, fd6=-1, fd7=-1)
        w.event(100, "PIPE_READ", t + 8 * MS, 10 * US, fd=5, req=1024, ret=1024)
        w.event(100, "CU_LAUNCH_KERNEL", t + 8 * MS + 20 * US, 10 * US, sym="cuLaunchKernel",
                kernel="k", sync=0, stream=0)
        if i == 10:
            w.event(100, "CU_MEMCPY_HTOD_ASYNC", t + 8 * MS + 40 * US, 20 * US,
                    sym="cuMemcpyHtoDAsync_v2", dir=1, sync=2, stream=0)
        w.event(100, "CU_STREAM_SYNC", t + 8 * MS + 100 * US, 1900 * US, sym="x", sync=1,
                stream=0)
        t += 10 * MS
    w.close()


def test_dominant_data_wait_ranks_before_a_minor_hidden_sync(tmp_path):
    d = tmp_path / "gaps"
    d.mkdir()
    gapped_run(d)
    rep = report_json(str(d))
    gaps = [f for f in rep["findings"] if f["kind"] == "launch_gap"]
    assert len(gaps) >= 46
    pb = problems(rep)
    assert pb[0]["kind"] == "launch gaps" and pb[0]["count"] == len(
        [g for g in gaps if g["scope"] == "stream" and g["cause"] == "data_wait"])
    assert "waiting for data" in pb[0]["what"]
    hidden = [p for p in pb if p["kind"] == "hidden sync"]
    assert len(hidden) == 1 and pb.index(hidden[0]) > 0
    assert "pin_memory=True" in hidden[0]["suggestion"]
    assert all(p["suggestion"] for p in pb)
    # the text report: one row per problem, not 47
    out = subprocess.run([TOOL, "report", str(d)], capture_output=True, text=True).stdout
    rows = [l for l in out.splitlines() if re.match(r"^ +\d+ +[\d.]+ \S+  launch gaps ", l)]
    assert len(rows) == 1, out


def test_storm_over_two_workers_is_one_problem(tmp_path):
    """Two worker processes each make 1 500 small reads of files under
    /data/set in 300 ms: one storm row for the data set, over 2 processes,
    with every read counted."""
    d = tmp_path / "workers"
    d.mkdir()
    m = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["/usr/bin/python3", "train.py"])
    m.thread(100, "main", main=True)
    m.event(100, "READ", START, 10 * US, fd=3, req=100, ret=100, path="/home/u/cfg.yaml")
    m.close()
    for pid in (101, 102):
        w = ftgen.TraceFile(str(d / ("host.%d.ft" % pid)), pid,
                            ["/usr/bin/python3", "train.py"], ppid=100)
        w.thread(pid, "main", main=True)
        files = ["/data/set/part%d/%05d.jpg" % (pid % 2, i) for i in range(500)]
        reads_of(w, files, 3, START + 1 * MS)
        w.close()
    rep = report_json(str(d))
    [s] = [p for p in problems(rep) if p["kind"] == "small-read storm"]
    assert s["processes"] == 2 and s["count"] == 2
    assert s["what"].startswith("/data/set: 3,000 reads of 4096 bytes on average in 1,000 files")
    assert "read each file whole" in s["suggestion"]


def test_storm_spread_over_four_workers_under_the_threshold(tmp_path):
    """Four workers each read 1 400 small pieces in 2 s (700 a second:
    under the per-process threshold of 1 000 in one second, so no process
    has a storm of its own); together 2 800 a second on one data set: one
    storm row over 4 processes. The metrics count no per-process storm."""
    d = tmp_path / "four"
    d.mkdir()
    m = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["/usr/bin/python3", "train.py"])
    m.thread(100, "main", main=True)
    m.event(100, "READ", START, 10 * US, fd=3, req=100, ret=100, path="/home/u/cfg.yaml")
    m.close()
    for pid in (101, 102, 103, 104):
        w = ftgen.TraceFile(str(d / ("host.%d.ft" % pid)), pid,
                            ["/usr/bin/python3", "train.py"], ppid=100)
        w.thread(pid, "main", main=True)
        t = START + 1 * MS + pid * 100 * US
        for i in range(1400):
            w.event(pid, "READ", t, 20 * US, fd=5, req=4096, ret=4096,
                    path="/data/imgs/%d_%04d.jpg" % (pid, i // 4))
            t += 1428 * US
        w.close()
    rep = report_json(str(d))
    assert rep["metrics"]["storms"] == 0 and storms(rep) == []
    [s] = [p for p in problems(rep) if p["kind"] == "small-read storm"]
    assert s["processes"] == 4 and s["count"] == 4
    assert s["what"].startswith("/data/imgs: 5,600 reads of 4096 bytes on average in 1,400 "
                                "files, over 4 processes, each under the per-process threshold")


def test_slow_reads_over_four_workers_are_no_storm(tmp_path):
    """The same four workers at 200 reads a second each (800 together,
    under 1 000 a second): no storm row."""
    d = tmp_path / "slow"
    d.mkdir()
    for pid in (101, 102, 103, 104):
        w = ftgen.TraceFile(str(d / ("host.%d.ft" % pid)), pid,
                            ["/usr/bin/python3", "train.py"], ppid=100)
        w.thread(pid, "main", main=True)
        t = START + pid * 100 * US
        for i in range(400):
            w.event(pid, "READ", t, 20 * US, fd=5, req=4096, ret=4096,
                    path="/data/imgs/%d_%04d.jpg" % (pid, i // 4))
            t += 5 * MS
        w.close()
    rep = report_json(str(d))
    assert [p for p in problems(rep) if p["kind"] == "small-read storm"] == []
    assert rep["metrics"]["small_reads"] == 1600


def test_lock_records_of_an_older_recorder_still_read(tmp_path):
    """Lock waits were one slot before they carried a call site (two now):
    a trace with one-slot lock records reads without a damage message, its
    waits are a lock finding without a site."""
    d = tmp_path / "old"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["./old"])
    w.thread(100, "main", main=True)
    w.thread(101, "worker")
    for i in range(6):
        w.event(100 + i % 2, "MUTEX_LOCK", START + i * MS, 200 * US, slots=1, lock=0x5000, ret=0)
    w.event(100, "READ", START + 10 * MS, 10 * US, fd=3, req=100, ret=100, path="/etc/x")
    w.close()
    r = subprocess.run([TOOL, "report", str(d), "--json"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    [lock] = [f for f in json.loads(r.stdout)["findings"] if f["kind"] == "lock_contention"]
    assert (lock["count"], lock["total_ns"], lock["lock"], lock["site"]) == (
        6, 1200 * US, "0x5000", "")


# ---- report --html, in a real browser


def test_html_report_in_headless_chromium(tmp_path):
    """report --html: one page with the verdict, the feeding threads' bar,
    the step chart (one point per step), the problems with suggestions;
    nothing fetched from anywhere (no script, no stylesheet or image link,
    no URL but the SVG namespace). Rendered by headless Chromium: the DOM
    it built holds them, and the screenshot is written."""
    d = tmp_path / "run"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["./train", "--steps", "10"])
    w.thread(100, "main", main=True)
    t = START
    for i in range(10):
        w.event(100, "RANGE_PUSH", t, 0, name="step", level=0, api=2)
        w.event(100, "POLL", t, 6 * MS, ret=1, nfds=1, timeout=5000, kinds=2, fd0=5, fd1=-1,
                fd2=-1, fd3=-1, fd4=-1, fd5=-1, fd6=-1, fd7=-1)
        w.event(100, "PIPE_READ", t + 6 * MS, 10 * US, fd=5, req=1024, ret=1024)
        w.event(100, "CU_LAUNCH_KERNEL", t + 6100 * US, 10 * US, sym="cuLaunchKernel",
                kernel="k", sync=0, stream=0)
        w.event(100, "CU_MEMCPY_DTOH", t + 6200 * US, (1 + i % 3) * MS, sym="cuMemcpyDtoH_v2",
                dir=2, sync=2, stream=0)
        t += 6300 * US + (1 + i % 3) * MS
        w.event(100, "RANGE_POP", t, 0, level=0, api=2)
    w.close()
    page = tmp_path / "r.html"
    r = subprocess.run([TOOL, "report", str(d), "--html", str(page)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert_offline_page(page.read_text())
    rep = report_json(str(d))
    out = chromium_dom(page, tmp_path)
    assert rep["verdict"]["sentence"].replace("&", "&amp;") in out
    assert out.count('class="step"') == rep["metrics"]["steps"] == 10
    assert '<svg id="feed"' in out and "<rect" in out.split('<svg id="feed"')[1].split("</svg>")[0]
    assert out.count('class="problem"') == len(rep["problems"]) >= 1
    assert out.count('class="sugg"') == sum(1 for p in rep["problems"] if p["suggestion"])


def test_worker_under_the_threshold_joins_the_storm_row(tmp_path):
    """Two workers each make a storm (1 500 reads in 300 ms) and a third
    reads 400 pieces of the same data set slowly (under the threshold):
    one row, over 3 processes, every read counted; no second row."""
    d = tmp_path / "three"
    d.mkdir()
    for pid, n, step in ((101, 1500, 200 * US), (102, 1500, 200 * US), (103, 400, 5 * MS)):
        w = ftgen.TraceFile(str(d / ("host.%d.ft" % pid)), pid,
                            ["/usr/bin/python3", "train.py"], ppid=100)
        w.thread(pid, "main", main=True)
        t = START + pid * 10 * US
        for i in range(n):
            w.event(pid, "READ", t, 20 * US, fd=5, req=4096, ret=4096,
                    path="/data/set/%d/%05d.bin" % (pid, i // 3))
            t += step
        w.close()
    rep = report_json(str(d))
    rows = [p for p in problems(rep) if p["kind"] == "small-read storm"]
    assert len(rows) == 1, rows
    assert rows[0]["processes"] == 3 and rows[0]["count"] == 3
    assert rows[0]["what"].startswith("/data/set: 3,400 reads of 4096 bytes on average in ")
    assert "over 3 processes (some under the per-process threshold)" in rows[0]["what"]
    assert rep["metrics"]["storms"] == 2


def test_would_do_counts_every_epoch(tmp_path):
    """500 files of 16 KiB, each opened and read in four 4 KiB pieces, in
    two epochs within one burst (4 000 small reads): one pass over a file
    needs one read of 1 MiB, so 1 000 would do, not 500. The same reads
    with no second open (one pass of 32 KiB per file): 500."""
    for epochs_open, need in ((True, "1,000"), (False, "500")):
        d = tmp_path / ("run%d" % epochs_open)
        d.mkdir()
        w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["/usr/bin/python3", "train.py"])
        w.thread(100, "main", main=True)
        t = START
        files = ["/data/set/f%03d.bin" % i for i in range(500)]
        for epoch in range(2):
            for i, p in enumerate(files):
                if epoch == 0 or epochs_open:
                    w.event(100, "OPEN64", t, 5000, fd=3, path=p, flags=0)
                    t += 10000
                for k in range(4):
                    w.event(100, "READ", t, 20000, fd=3, req=4096, ret=4096, path=p)
                    t += 50000
        w.close()
        rep = report_json(str(d))
        [s] = [p for p in problems(rep) if p["kind"] == "small-read storm"]
        assert s["what"].startswith("/data/set: 4,000 reads of 4096 bytes on average in 500 "
                                    "files (%s reads of up to 1 MiB each would do)" % need), s["what"]
