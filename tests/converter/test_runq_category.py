"""Runnable is not waiting: a thread's time runnable but waiting for a
core (its run-queue delay, from the SCHED samples) is a category of its
own in the thread time split, beside "other CPU": in the text's evidence,
the JSON's time_ns and share, the HTML page's bar, diff's feeds and the
timeline (a "waiting for a core %" counter per thread)
(docs/ANALYSES.md, "Categories of a thread's time"). Synthetic runs
(tests/ftgen.py): three CPU-bound loader threads and the loop sharing
one core, the delay inside the samples."""
import json
import os
import subprocess

from conftest import report_json, TOOL
import ftgen

MS = 1_000_000
US = 1_000
PIPE = 2                       # enum ft_fd_kind (libfeedtrace/format/format.h)


def loaded(d, samples=True, main_q=50 * MS):
    """pid 500 (a C program): its main thread receives a batch every 10 ms
    (40 pipe reads of 6 ms from 1 ms); three loader threads each read
    100 us per batch and are busy (untraced) the rest. SCHED samples every
    200 ms from the start: the main thread runnable, waiting for a core,
    25% of the time (main_q per 200 ms), each loader thread 60%."""
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "host.500.ft"), 500, ["./loader"])
    w.thread(500, "loader", main=True)
    t0 = w.start + MS
    for k in range(40):
        w.event(500, "PIPE_READ", t0 + k * 10 * MS, 6 * MS, fd=7, kind=PIPE, req=4096,
                ret=4096)
    for i in range(3):
        w.thread(510 + i, "producer%d" % i)
        for k in range(40):
            w.event(510 + i, "READ", t0 + k * 10 * MS + MS, 100 * US, fd=9, req=1 << 20,
                    ret=1 << 20, path="/data/x%d" % k)
    for j in range(4) if samples else ():
        w.runq(500, w.start + j * 200 * MS, j * main_q)
        for i in range(3):
            w.runq(510 + i, w.start + j * 200 * MS, j * 120 * MS)
    w.close()
    return d


def test_waiting_for_a_core_is_a_category(tmp_path):
    d = loaded(str(tmp_path / "run"))
    v = report_json(d)["verdict"]
    # the window: first batch's end (7 ms) to the last's (397 ms), 390 ms;
    # the loop thread waits for data 6 of every 10 ms, for a core 25%
    assert v["wall_ns"] == 390 * MS
    t = v["time_ns"]
    assert t["data_wait"] == 234 * MS
    assert t["runq"] == 97500 * US
    assert t["other_cpu"] == 58500 * US
    assert v["share"]["runq"] == 0.25 and v["runq_ns"] == t["runq"]
    # the loaders: busy 39% of 385.1 ms, waiting for a core 60%
    assert [p["runq_ns"] for p in v["producers"]] == [231060 * US] * 3
    assert [p["cpu_ns"] for p in v["producers"]] == [150140 * US] * 3
    assert "They are also runnable, waiting for a core 60% of their time" in v["detail"]
    assert v["detail"].endswith("The feeding thread is runnable, waiting for a core 25% "
                                "of the time: more busy threads than cores; use fewer "
                                "threads per core (torch.set_num_threads, fewer workers, "
                                "taskset).")
    txt = subprocess.run([TOOL, "report", d], capture_output=True, text=True).stdout
    assert "    locks 0.0%   waiting for data 60.0%   other CPU 15.0%\n" \
           "    waiting for a core 25.0%\n" in txt


def test_without_samples_no_time_waits_for_a_core(tmp_path):
    d = loaded(str(tmp_path / "run"), samples=False)
    v = report_json(d)["verdict"]
    assert v["time_ns"]["runq"] == 0
    assert v["time_ns"]["other_cpu"] == 156 * MS
    txt = subprocess.run([TOOL, "report", d], capture_output=True, text=True).stdout
    assert "other CPU 40.0%" in txt and "waiting for a core" not in txt


def test_a_share_too_small_to_print_is_left_out(tmp_path):
    """40 us per 200 ms waiting for a core (0.02% of the window): in the
    JSON, but the text's one decimal would say 0.0%: left out"""
    d = loaded(str(tmp_path / "run"), main_q=40 * US)
    v = report_json(d)["verdict"]
    assert v["time_ns"]["runq"] == 78 * US
    txt = subprocess.run([TOOL, "report", d], capture_output=True, text=True).stdout
    assert "waiting for a core 0.0%" not in txt
    assert "    locks 0.0%   waiting for data 60.0%   other CPU 40.0%\n" in txt


def test_html_diff_and_timeline_show_it(tmp_path):
    from test_convert import convert, load
    a = loaded(str(tmp_path / "a"))
    b = loaded(str(tmp_path / "b"), samples=False)
    page = tmp_path / "r.html"
    r = subprocess.run([TOOL, "report", a, "--html", str(page)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "waiting for a core" in page.read_text()
    d = json.loads(subprocess.run([TOOL, "diff", "--json", a, "--", b], capture_output=True,
                                  text=True).stdout)
    assert d["feeds"]["runq"]["before"] == 97500 * US and d["feeds"]["runq"]["after"] == 0
    txt = subprocess.run([TOOL, "diff", a, "--", b], capture_output=True, text=True).stdout
    assert [l.split()[:5] for l in txt.splitlines() if l.startswith("waiting for a core")] \
        == [["waiting", "for", "a", "core", "97.5"]]
    out, _ = convert(a)
    rows = load(out, "select t.name as n, c.value as v, thread.tid as tid from counter c "
                "join thread_counter_track t on c.track_id = t.id join thread using(utid) "
                "where t.name = 'waiting for a core %' order by thread.tid, c.ts")
    assert [(r["tid"], r["v"]) for r in rows] == \
        [(500, 25)] * 3 + [(510, 60)] * 3 + [(511, 60)] * 3 + [(512, 60)] * 3
