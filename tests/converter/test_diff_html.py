"""diff --html (issue 16): one self-contained page with both runs side by
side (each side's verdict and feeding threads' time), the diff's
conclusion, and the step times of both on one chart; rendered by headless
Chromium, nothing fetched from anywhere."""
import json
import subprocess

from conftest import TOOL, assert_offline_page, chromium_dom
import ftgen

MS = 1000000
US = 1000
START = 10 ** 12


def write_run(d, steps, copy_ms):
    """steps steps: wait for data (poll), a launch, a synchronous copy of
    copy_ms (a hidden sync)."""
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["./train"], run_id=0x42 + steps)
    w.thread(100, "main", main=True)
    t = START
    for i in range(steps):
        w.event(100, "RANGE_PUSH", t, 0, name="step", level=0, api=2)
        w.event(100, "POLL", t, 2 * MS, ret=1, nfds=1, timeout=5000, kinds=2, fd0=5, fd1=-1,
                fd2=-1, fd3=-1, fd4=-1, fd5=-1, fd6=-1, fd7=-1)
        w.event(100, "PIPE_READ", t + 2 * MS, 10 * US, fd=5, req=1024, ret=1024)
        w.event(100, "CU_LAUNCH_KERNEL", t + 2100 * US, 10 * US, sym="cuLaunchKernel",
                kernel="k", sync=0, stream=0)
        w.event(100, "CU_MEMCPY_DTOH", t + 2200 * US, copy_ms * MS + (i % 3) * 100 * US,
                sym="cuMemcpyDtoH_v2", dir=2, sync=2, stream=0)
        t += 2200 * US + copy_ms * MS + (i % 3) * 100 * US
        w.event(100, "RANGE_POP", t, 0, level=0, api=2)
    w.close()


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(
        '"', "&quot;")


def test_diff_html_in_headless_chromium(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    write_run(before, 12, 6)
    write_run(after, 10, 1)
    page = tmp_path / "d.html"
    r = subprocess.run([TOOL, "diff", str(before), str(after), "--html", str(page)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    j = json.loads(subprocess.run([TOOL, "diff", str(before), str(after), "--json"],
                                  capture_output=True, text=True, timeout=120).stdout)
    assert j["change"]["verdict"] == "faster"
    html = page.read_text()
    assert_offline_page(html)
    assert esc(j["conclusion"]) in html
    reps = [json.loads(subprocess.run([TOOL, "report", str(x), "--json"], capture_output=True,
                                      text=True, timeout=120).stdout) for x in (before, after)]
    out = chromium_dom(page, tmp_path)
    conclusion = out.split('id="conclusion"')[1].split("</div>")[0]
    assert esc(j["conclusion"]) in conclusion
    for side, rep, steps in (("before", reps[0], 12), ("after", reps[1], 10)):
        block = out.split('id="side-%s"' % side)[1]
        verdict = block.split('id="verdict-%s"' % side)[1].split("</div>")[0]
        assert esc(rep["verdict"]["sentence"]) in verdict
        assert esc(rep["verdict"]["process"]) in verdict
        bar = block.split('<svg id="feed-%s"' % side)[1].split("</svg>")[0]
        assert "<rect" in bar
        assert out.count('<circle class="%s"' % side) == steps == rep["metrics"]["steps"]
        assert out.count('<polyline class="%s-line"' % side) == 1
    assert out.index('id="side-before"') < out.index('id="side-after"') < out.index(
        '<svg id="steps"')


def test_diff_html_without_steps_has_no_chart(tmp_path):
    """Runs without steps: both verdicts and the conclusion, no chart."""
    for name in ("a", "b"):
        d = tmp_path / name
        d.mkdir()
        w = ftgen.TraceFile(str(d / "host.100.ft"), 100, ["./prog"])
        w.thread(100, "main", main=True)
        w.event(100, "READ", START, 10 * US, fd=3, req=10, ret=10, path="/etc/x")
        w.close()
    page = tmp_path / "d.html"
    r = subprocess.run([TOOL, "diff", str(tmp_path / "a"), str(tmp_path / "b"), "--html",
                        str(page)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    html = page.read_text()
    assert 'id="verdict-before"' in html and 'id="verdict-after"' in html
    assert 'id="conclusion"' in html and "Not resolved" in html
    assert '<svg id="steps"' not in html
