"""The text report and the HTML page list the same problem rows, chosen
by one rule (ten at most, past the third none under 1% of the first's
cost, none under 0.1% of the window); the rest are counted."""
import html
import os
import re
import subprocess

from conftest import TOOL, report_json
import ftgen

MS = 1_000_000


def locks_run(d, waits_ms):
    """thread 301 of process 300 waits once on each of len(waits_ms)
    mutexes (lock k for waits_ms[k] ms), one after another"""
    os.makedirs(d)
    w = ftgen.TraceFile(os.path.join(d, "host.300.ft"), 300, ["prog"])
    w.thread(300, "main", True)
    w.thread(301, "worker")
    t = w.start + MS
    w.event(300, "READ", t, 1000, fd=3, path="/x", req=1 << 20, ret=1 << 20)
    for k, ms in enumerate(waits_ms):
        w.event(301, "MUTEX_LOCK", t, int(ms * MS), lock=0x1000 + 64 * k, ret=0)
        t += int(ms * MS) + MS
    w.event(300, "READ", t, 1000, fd=3, path="/x", req=1 << 20, ret=1 << 20)
    w.close()
    return d


def rows_of(d, tmp_path):
    txt = subprocess.run([TOOL, "report", d], capture_output=True, text=True).stdout
    text_rows = re.findall(r"^ *\d+ +[\d.]+ [mun]?s +lock contention +(.*)$", txt, re.M)
    page = tmp_path / "r.html"
    subprocess.run([TOOL, "report", d, "--html", str(page)], check=True, capture_output=True)
    h = page.read_text()
    html_rows = re.findall(r'<tr class="problem"><td class="n">[^<]*</td><td><b>[^<]*</b>: '
                           r'([^<]*)', h)
    more = re.findall(r'<tr class="more"><td></td><td>(\d+) smaller', h)
    return txt, text_rows, [html.unescape(x) for x in html_rows], more


def test_html_lists_the_rows_the_text_lists(tmp_path):
    # 12 locks: the text lists 10; the page listed all 12 (9.9 ms among them)
    d = locks_run(str(tmp_path / "run"), [60, 50, 40, 30, 25, 20, 18, 16, 14, 12, 11, 9.9])
    rep = report_json(d)
    assert len([p for p in rep["problems"] if p["kind"] == "lock contention"]) == 12
    txt, text_rows, html_rows, more = rows_of(d, tmp_path)
    assert len(text_rows) == 10 and len(html_rows) == 10, (txt, html_rows)
    assert [r.split(" x1")[0] for r in text_rows] == [r.split(" x1")[0] for r in html_rows]
    assert more == ["2"]
