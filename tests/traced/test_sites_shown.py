"""What a call site shows: never feedtrace's own frames (the hook that
recorded the call, the thread start it wraps), in no view; and frames of
an interpreter without a symbol table (Debian's python3.11) come with the
note that says why they read as module+offset."""
import os
import re
import subprocess

import pytest

from conftest import BUILD, PYTHON, TOOL, report_json

OURS = re.compile(r"callsite\.c|ft_callsite|waiter_site|wait_pthread|start_tracked|"
                  r"libfeedtrace|\(lock\.c:|\(thread\.c:")


def test_no_view_shows_the_tracers_frames(traced, tmp_path):
    """conv_lock: 3 blocked pthread_mutex_lock calls, each recorded with
    its native stack from inside feedtrace's hook, on a thread started
    through feedtrace's wrapper"""
    r = traced([os.path.join(BUILD, "tests", "conv_lock"), "contended", "3"], load=False)
    assert r.returncode == 0, r.stderr
    rep = report_json(r.dir)
    sites = [f["site"] for f in rep["findings"] + rep["call_sites"] if f.get("site")]
    assert sites and all(s.startswith("waiter (conv_lock.c:") for s in sites), sites
    for s in sites:
        assert not OURS.search(s), s
        assert "\nstart_thread (" in s          # the rest of the stack stays
    page = tmp_path / "r.html"
    subprocess.run([TOOL, "report", r.dir, "--html", str(page)], check=True,
                   capture_output=True)
    html = page.read_text()
    assert "conv_lock.c:" in html and not OURS.search(html)
    txt = subprocess.run([TOOL, "report", r.dir], capture_output=True, text=True).stdout
    assert "conv_lock.c:" in txt and not OURS.search(txt)


GIL_PROG = r'''
import threading
def work():
    s = 0
    for i in range(3_000_000):
        s += i
ts = [threading.Thread(target=work) for _ in range(3)]
[t.start() for t in ts]; [t.join() for t in ts]
'''


def test_interpreter_without_symbols_has_its_note(traced, tmp_path):
    """A GIL wait met as a thread starts is recorded with a native stack of
    the interpreter; Debian's python3.11 has no .symtab, so some of its
    frames read python3.11+0x...: the note names it, once."""
    script = tmp_path / "gil.py"
    script.write_text(GIL_PROG)
    for _ in range(12):              # the GIL's mutex is met taken now and then
        r = traced([PYTHON, str(script)], load=False)
        assert r.returncode == 0, r.stderr
        rep = report_json(r.dir)
        native = [f["site"] for f in rep["findings"] if "\n" in (f.get("site") or "")]
        bare = {m.group(1) for s in native
                for m in re.finditer(r"^(python3\.\d+)\+0x", s, re.M)}
        if bare:
            break
    if not bare:
        pytest.skip("no interpreter frame without a name in 12 runs (an interpreter "
                    "with its symbol table, or no GIL wait met)")
    for s in native:
        assert not OURS.search(s), s
    for b in bare:
        assert [n for n in rep["symbol_notes"] if n.startswith(b + " ")] == [
            b + " (the Python interpreter) has no symbol table: frames there are shown as "
            "module+offset; install the interpreter's debug symbols (its -dbgsym or -dbg "
            "package) or pass --symbols DIR"], rep["symbol_notes"]
