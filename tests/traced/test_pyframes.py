"""Python call sites of hidden syncs (libfeedtrace/callsite.c).

tests/scripts/py_cuda_sync.py makes N synchronous device-to-host copies
into pageable memory (hidden syncs) from three places: through
ctypes.CDLL, which releases the GIL around the call as PyTorch does around
.item(); through ctypes.PyDLL, which keeps it; and through ctypes.CDLL
again from a threading.Thread. Each record must carry the innermost
Python frames, file:line in function, exactly; the report must name them.
"""
import json
import os
import subprocess

from conftest import BUILD, PYTHON, ROOT, TOOL

SCRIPT = os.path.join(ROOT, "tests", "scripts", "py_cuda_sync.py")
DRIVER = os.path.join(BUILD, "simgpu", "libcuda.so.1")
N = 7


def line_of(text):
    """1-based line number of the only line of the script containing text."""
    hits = [i + 1 for i, l in enumerate(open(SCRIPT)) if text in l]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def frames(run):
    copies = run.trace.calls("cuMemcpyDtoH")
    assert all(e["args"]["sync"] == 2 and e["args"]["pinned"] == 0 for e in copies)
    return copies


def test_python_frames_with_and_without_the_gil(traced):
    run = traced([PYTHON, SCRIPT, DRIVER, str(N)])
    assert run.returncode == 0, run.stderr
    copies = frames(run)
    assert len(copies) == 3 * N
    main_tid = run.trace.procs[0]["pid"]
    f = SCRIPT + ":%d in %s"
    released = ";".join([f % (line_of("# LINE_RELEASED"), "loss_item"),
                         f % (line_of("# CALL_MAIN"), "main"),
                         f % (line_of("# CALL_MODULE"), "<module>")])
    held = ";".join([f % (line_of("# LINE_HELD"), "loss_item_gil"),
                     f % (line_of("# CALL_GIL"), "main"),
                     f % (line_of("# CALL_MODULE"), "<module>")])
    worker = f % (line_of("# LINE_RELEASED"), "loss_item") + ";" + \
        f % (line_of("# CALL_WORKER"), "worker") + ";"
    by_site = {}
    for e in copies:
        by_site.setdefault(e["args"]["py"], []).append(e["tid"])
    assert by_site.get(released) == [main_tid] * N, sorted(by_site)
    assert by_site.get(held) == [main_tid] * N, sorted(by_site)
    # the helper thread: its own frames, then threading.py's (version-dependent line)
    w = [s for s in by_site if s.startswith(worker) and "threading.py:" in s]
    assert len(w) == 1 and len(by_site[w[0]]) == N and main_tid not in by_site[w[0]]
    assert len(by_site) == 3
    # the native stack is recorded too
    assert all(e["args"]["site"] for e in copies)


def test_report_names_the_python_line(traced):
    run = traced([PYTHON, SCRIPT, DRIVER, str(N)])
    assert run.returncode == 0, run.stderr
    r = subprocess.run([TOOL, "report", "--json", run.dir], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    sites = json.loads(r.stdout)["call_sites"]
    first = SCRIPT + ":%d in loss_item;" % line_of("# LINE_RELEASED")
    hits = [s for s in sites if s["kind"] == "hidden_sync" and s["site"].startswith(first)]
    assert len(hits) == 2 and all(s["count"] == N and s["symbol"] == "cuMemcpyDtoH_v2"
                                  for s in hits)
    text = subprocess.run([TOOL, "report", run.dir], capture_output=True, text=True,
                          timeout=60).stdout
    assert "py_cuda_sync.py:%d in loss_item (cuMemcpyDtoH_v2" % line_of("# LINE_RELEASED") \
        in text


def test_python_frames_off(traced):
    run = traced([PYTHON, SCRIPT, DRIVER, "2"], env={"FEEDTRACE_PYFRAMES": "0"})
    assert run.returncode == 0, run.stderr
    copies = frames(run)
    assert len(copies) == 6
    assert all("py" not in e["args"] or not e["args"]["py"] for e in copies)
    assert all(e["args"]["site"] for e in copies)
