"""Python call sites on every CPython found here (libfeedtrace/pywalk.c):
Debian's 3.11 always, then the newest pyenv install of each of 3.9 to 3.14
(under $PYENV_ROOT, /root/.pyenv by default; a version not installed is
listed as skipped), and a free-threaded build (3.13t and later) where one
is installed.

tests/scripts/py_sites.py, under each: hidden syncs through ctypes.CDLL
(which releases the GIL around the call, as PyTorch does) have the report's
top call site exactly at train_step's line; a small-read storm's opener is
load_sample's open (Python's open() releases the GIL too); six CPU-bound
threads wait for the GIL, and that lock's site is their Python loop, not an
address in libpython; the thread named "cruncher" by threading is named so.
The same hidden syncs under a library whose offset table is wrong by one
field (tests/pyskew/libfeedtrace.so, FT_PYWALK_SKEW) fail the site check;
the build's check of pyframe.h fails against each version's headers when
that version's table is wrong by one field. A stand-in for CPython 3.13
(tests/pyfake/fake_cpython.c) checks the refusals of _Py_DebugOffsets.
"""
import glob
import json
import os
import re
import subprocess

import pytest

from conftest import BUILD, PYTHON, ROOT, TOOL, Trace, clean_env, make, preload

SCRIPT = os.path.join(ROOT, "tests", "scripts", "py_sites.py")
DRIVER = os.path.join(BUILD, "simgpu", "libcuda.so.1")
SKEWED = os.path.join(BUILD, "tests", "pyskew", "libfeedtrace.so")
PYENV = os.environ.get("PYENV_ROOT", "/root/.pyenv")
VERSIONS = ["3.9", "3.10", "3.11", "3.12", "3.13", "3.14"]
N = 6


def newest(paths):
    key = lambda p: [int(x) for x in re.findall(r"\d+", p.split("/versions/")[1].split("/")[0])]
    return sorted(paths, key=key)[-1] if paths else None


def interpreters():
    """pytest params (id, path): Debian's 3.11, each pyenv version."""
    found = [pytest.param(PYTHON, id="debian-3.11")]
    for v in VERSIONS:
        exe = newest([p for p in glob.glob("%s/versions/%s.*/bin/python%s" % (PYENV, v, v))
                      if not re.search(r"/versions/[\d.]+t/", p)])
        found.append(pytest.param(exe, id=v, marks=pytest.mark.skipif(
            exe is None, reason="CPython %s not installed under %s" % (v, PYENV))))
    return found


def line_of(mark):
    hits = [i + 1 for i, l in enumerate(open(SCRIPT)) if "# " + mark in l]
    assert len(hits) == 1, (mark, hits)
    return hits[0]


def at(mark, func):
    return "%s:%d in %s" % (SCRIPT, line_of(mark), func)


def run(python, args, tmp_path, name, lib=None):
    out = str(tmp_path / name)
    env = {k: v for k, v in clean_env().items() if not k.startswith("PYTHON")}
    env.update(LD_PRELOAD=preload(*([lib] if lib else [])), FEEDTRACE_OUT=out)
    p = subprocess.run([python, SCRIPT] + args, env=env, capture_output=True, text=True,
                       timeout=180, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    return p, out


def report(d, *opts):
    r = subprocess.run([TOOL, "report", "--json", *opts, d], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def sync_site_problem(d):
    """None when the report's top call site is the N hidden syncs of
    train_step at its line (its callers below it); else what it is."""
    sites = report(d)["call_sites"]
    want = ";".join([at("SYNC_LINE", "train_step"), at("SYNC_CALLER", "sync"),
                     "%s:%d in <module>" % (SCRIPT, line_of("MAIN_SYNC"))])
    top = sites[0] if sites else {}
    got = (top.get("kind"), top.get("count"), top.get("symbol"), top.get("site"))
    return None if got == ("hidden_sync", N, "cuMemcpyDtoH_v2", want) else got


@pytest.mark.parametrize("python", interpreters())
def test_hidden_sync_site_with_the_gil_released(python, tmp_path):
    p, d = run(python, ["sync", DRIVER, str(N)], tmp_path, "sync")
    assert sync_site_problem(d) is None, sync_site_problem(d)
    assert p.stderr == ""
    text = subprocess.run([TOOL, "report", d], capture_output=True, text=True,
                          timeout=120).stdout
    assert "py_sites.py:%d in train_step (cuMemcpyDtoH_v2" % line_of("SYNC_LINE") in text


@pytest.mark.parametrize("python", interpreters())
def test_storm_opener(python, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    _, d = run(python, ["storm", str(data), "300"], tmp_path, "storm")
    # 300 files read in 4 pieces: a storm at 1 000 reads in 10 s (the
    # machine's speed out of it)
    rep = report(d, "--storm-reads", "1000", "--storm-window-ms", "10000")
    [s] = [p for p in rep["problems"] if p["kind"] == "small-read storm"]
    assert s["what"].startswith("%s: " % data), s["what"]
    [f] = [f for f in rep["findings"] if f["kind"] == "small_read_storm"]
    assert [(t["path"], t["reads"]) for t in f["top_files"]] == \
        [(str(data / ("s%04d.bin" % i)), 4) for i in range(5)]
    assert (s["opener"] or "").split(";")[:2] == [at("OPEN_LINE", "load_sample"),
                                          at("OPEN_CALLER", "storm")]
    assert s["what"].endswith("; opened at " + at("OPEN_LINE", "load_sample"))


@pytest.mark.parametrize("python", interpreters())
def test_gil_wait_site_and_thread_name(python, tmp_path):
    loop = {at("GIL_LOOP", "work"), at("GIL_ADD", "work")}
    # a thread meets the GIL's mutex taken only now and then (in 4 runs
    # of 5 here, with both cores busy): up to 10 runs
    for k in range(10):
        p, d = run(python, ["gil"], tmp_path, "gil%d" % k)
        locks = [f for f in report(d)["findings"] if f["kind"] == "lock_contention"]
        if any(f["site"].split(";")[0] in loop for f in locks):
            break
    gil = [f for f in locks if f["lock_name"] == "Python GIL"]
    assert gil and len(gil) == len(locks), locks
    # a wait in the loop has the loop's line (a new thread's first wait,
    # before it runs any Python, has a native site)
    assert any(f["site"].split(";")[0] in loop for f in gil), [f["site"] for f in gil]
    # threading's name for the first thread, taken at its start
    [proc] = Trace.load(d).procs
    assert proc["thread_names"].get(p.stdout.split()[0]) == "cruncher", proc["thread_names"]


@pytest.mark.parametrize("python", interpreters())
def test_a_wrong_offset_fails_the_site_check(python, tmp_path):
    """The hidden syncs under a library whose code-object first-line
    offset is 4 bytes off (every version's table): the check of
    test_hidden_sync_site_with_the_gil_released fails, on the line."""
    make(SKEWED)
    _, d = run(python, ["sync", DRIVER, str(N)], tmp_path, "skew", lib=SKEWED)
    got = sync_site_problem(d)
    assert got is not None and got[:3] == ("hidden_sync", N, "cuMemcpyDtoH_v2"), got
    assert got[3].split(";")[0].split(" in ")[1] == "train_step"
    assert got[3].split(";")[0] != at("SYNC_LINE", "train_step")


FIRSTLINE = {"3.9": "PY39_CODE_FIRSTLINENO", "3.10": "PY310_CODE_FIRSTLINENO",
             "3.11": "PY311_CODE_FIRSTLINENO", "3.12": "PY312_CODE_FIRSTLINENO",
             "3.13": "PYDBG313_CODE_FIRSTLINENO", "3.14": "PYDBG313_CODE_FIRSTLINENO"}


def header_dirs():
    """pytest params: each CPython's headers (with the internal ones) the
    Makefile checks pyframe.h against."""
    found = []
    for v in VERSIONS:
        dirs = glob.glob("/usr/include/python%s/internal" % v) + \
            glob.glob("%s/versions/%s.*/include/python%s/internal" % (PYENV, v, v))
        found += [pytest.param(v, os.path.dirname(d), id=d.split("/")[-4] if PYENV in d
                               else "debian-" + v) for d in sorted(dirs)]
    return found or [pytest.param(None, None, marks=pytest.mark.skip("no CPython headers"))]


@pytest.mark.parametrize("version,inc", header_dirs())
def test_build_check_refuses_a_wrong_offset(version, inc, tmp_path):
    """pyframe_check.c passes against each version's headers, and fails,
    naming the offset, once that version's code-object first line in
    pyframe.h is 4 bytes off."""
    src = os.path.join(ROOT, "libfeedtrace")
    check = ["cc", "-std=gnu11", "-fsyntax-only", "-I" + inc, str(tmp_path / "pyframe_check.c")]
    text = open(os.path.join(src, "pyframe.h")).read()
    open(tmp_path / "pyframe_check.c", "w").write(open(os.path.join(src, "pyframe_check.c")).read())
    open(tmp_path / "pyframe.h", "w").write(text)
    r = subprocess.run(check, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    name = FIRSTLINE[version]
    [line] = [l for l in text.splitlines() if l.startswith("#define %s " % name)]
    value = int(line.split()[2])
    open(tmp_path / "pyframe.h", "w").write(text.replace(line, line.replace(
        " %d " % value, " %d " % (value + 4), 1)))
    r = subprocess.run(check, capture_output=True, text=True)
    assert r.returncode != 0 and name in r.stderr and "static assertion failed" in r.stderr


FAKE = os.path.join(ROOT, "tests", "pyfake", "fake_cpython.c")


@pytest.mark.parametrize("define,said", [
    (None, None),
    ('-DCOOKIE="xdebugpz"', "no _Py_DebugOffsets in _PyRuntime"),
    ("-DVERSION=0x030e00f0", "_Py_DebugOffsets of version 0x30e00f0"),
    ("-DFREE_THREADED=1", "a free-threaded build (no GIL, another object layout)"),
    ("-DOB_TYPE=24", "_Py_DebugOffsets not as expected"),
])
def test_debug_offsets_refused_with_one_line(define, said, tmp_path):
    """A stand-in for CPython 3.13 (tests/pyfake/fake_cpython.c, exporting
    its symbols as CPython does): with its _Py_DebugOffsets whole, the
    tracer says nothing; with a wrong cookie, another version, a
    free-threaded build's flag or a table that does not hold together, one
    line saying which, and the program runs on."""
    exe = str(tmp_path / "fake")
    r = subprocess.run(["cc", "-O2", "-g", "-Wl,--export-dynamic", "-o", exe, FAKE] +
                       ([define] if define else []), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    env = clean_env()
    env.update(LD_PRELOAD=preload(), FEEDTRACE_OUT=str(tmp_path / "t"))
    p = subprocess.run([exe], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    assert p.stderr == ("feedtrace: CPython 3.13: %s: no Python call sites\n" % said
                        if said else "")


def free_threaded():
    return sorted(glob.glob("%s/versions/3.1[3-9]*t/bin/python3.1[3-9]t" % PYENV))


@pytest.mark.skipif(not free_threaded(), reason="no free-threaded CPython (3.13t) installed")
def test_free_threaded_build_says_why(tmp_path):
    p, d = run(free_threaded()[-1], ["sync", DRIVER, "2"], tmp_path, "ft")
    assert "a free-threaded build" in p.stderr and p.stderr.count("\n") == 1
    assert all(".py:" not in s["site"] for s in report(d)["call_sites"])
