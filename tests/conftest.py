"""Shared helpers for feedtrace's integration tests.

Each test runs a real program (a C program from tests/progs, or python3)
with libfeedtrace.so preloaded into a fresh trace directory, reads the trace
back with `feedtrace dump --json`, and asserts exact facts about it.
"""
import json
import os
import shutil
import re
import resource
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("FT_BUILD", os.path.join(ROOT, "build"))
LIB = os.path.join(BUILD, "libfeedtrace.so")
TOOL = os.path.join(BUILD, "feedtrace")
PROGS = os.path.join(BUILD, "tests")
PYTHON = "/usr/bin/python3"   # Debian's: the one that has torch and numpy
# Sanitizer runs (scripts/sanitize.sh): FT_SANITIZER names the sanitizer
# (asan, ubsan, tsan, asan-ubsan); FT_PRELOAD_PREFIX is its runtime, which
# must be preloaded before a sanitized libfeedtrace.so in a program that
# is not sanitized itself (python3). Every test sets LD_PRELOAD through
# preload(), so the runtime also comes first for the sanitized test
# programs: with TSan, a library ahead of the runtime has its wrappers
# called by the runtime's own initialisation (docs/RELIABILITY.md).
SANITIZER = os.environ.get("FT_SANITIZER", "")
PRELOAD_PREFIX = os.environ.get("FT_PRELOAD_PREFIX", "")


def preload(*libs):
    """An LD_PRELOAD value: the sanitizer runtime (if any), then libs."""
    return " ".join([PRELOAD_PREFIX] + list(libs or [LIB])).strip()


def skip_under(sanitizers, reason):
    """Marks a test that cannot work under the given sanitizers."""
    return pytest.mark.skipif(any(s in SANITIZER.split("-") for s in sanitizers),
                              reason="under %s: %s" % (SANITIZER, reason))


def prog(name):
    return os.path.join(PROGS, name)


def make(*targets, timeout=300):
    """Builds targets with the tree's Makefile into BUILD. `make test` has
    built every test program before pytest starts; a test file run on its
    own builds what it needs through here."""
    r = subprocess.run(["make", "-s", "-C", ROOT, "BUILD=" + BUILD, *targets],
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr


def report_json(d, timeout=300):
    """`feedtrace report --json D`, parsed (it must succeed)"""
    r = subprocess.run([TOOL, "report", "--json", d], capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def built_prog(name):
    """tests/progs/NAME.c built: its path"""
    make(prog(name))
    return prog(name)


def clean_env(*drop):
    """The environment without FEEDTRACE_* (a test's own settings only)
    and without the other names given ("LD_PRELOAD")."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("FEEDTRACE_") and k not in drop}


class Trace:
    """A trace directory read back through `feedtrace dump --json`."""

    def __init__(self, outdir, dump_stderr=""):
        self.dir = outdir
        self.events = []
        self.procs = []
        self.dump_stderr = dump_stderr

    @classmethod
    def load(cls, outdir, check=True):
        r = subprocess.run([TOOL, "dump", "--json", outdir], capture_output=True,
                           text=True, timeout=120)
        if check:
            assert r.returncode == 0, r.stderr
        t = cls(outdir, r.stderr)
        for line in r.stdout.splitlines():
            obj = json.loads(line)
            if "process" in obj:
                t.procs.append(obj["process"])
            else:
                t.events.append(obj)
        return t

    def calls(self, name=None, pid=None, path=None, **args):
        out = []
        for e in self.events:
            if name is not None and e["call"] != name:
                continue
            if pid is not None and e["pid"] != pid:
                continue
            if path is not None and e["args"].get("path") != path:
                continue
            if any(e["args"].get(k) != v for k, v in args.items()):
                continue
            out.append(e)
        return out

    def count(self, name=None, **kw):
        return len(self.calls(name, **kw))

    def proc(self, pid):
        for p in self.procs:
            if p["pid"] == pid:
                return p
        raise KeyError(pid)


class Run:
    def __init__(self, proc, trace, outdir):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.trace = trace
        self.dir = outdir


@pytest.fixture
def traced(tmp_path):
    """traced(argv, env=None, ...) -> Run: argv under the tracer, trace loaded."""
    counter = [0]

    def run(argv, env=None, timeout=120, input=None, load=True, cwd=None, preexec_fn=None):
        counter[0] += 1
        outdir = str(tmp_path / ("trace%d" % counter[0]))
        e = clean_env()
        e["LD_PRELOAD"] = preload()
        e["FEEDTRACE_OUT"] = outdir
        if env:
            e.update(env)
        p = subprocess.run(argv, env=e, capture_output=True, text=True,
                           timeout=timeout, input=input, cwd=cwd or str(tmp_path),
                           preexec_fn=preexec_fn)
        trace = Trace.load(outdir) if load else None
        return Run(p, trace, outdir)

    return run


def nofile(soft, hard):
    """A preexec_fn: the child starts with RLIMIT_NOFILE (soft, hard)."""
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def untraced(argv, timeout=120, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


# ---- self-contained HTML pages (report --html, diff --html) ----

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def assert_offline_page(html):
    """The page fetches nothing: no script, stylesheet or image, no URL but
    the SVG namespace."""
    assert "<script" not in html and "<link" not in html and "<img" not in html
    assert set(re.findall(r"https?://[^\"' <]+", html)) == {"http://www.w3.org/2000/svg"}


def chromium_dom(page, tmp_path):
    """The page as headless Chromium built it (its DOM), after a screenshot
    it must be able to write too; skips without a usable Chromium."""
    if not CHROMIUM:
        pytest.skip("no chromium (scripts/deps.sh installs Debian's)")
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--user-data-dir=" + str(tmp_path / "profile")]
    dom = subprocess.run(args + ["--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120)
    if dom.returncode != 0 or "<body" not in dom.stdout:
        pytest.skip("chromium cannot start here: " + dom.stderr[-300:])
    png = tmp_path / (page.stem + ".png")
    subprocess.run(args + ["--screenshot=" + str(png), "--window-size=1000,1400",
                           page.as_uri()], capture_output=True, timeout=120)
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return dom.stdout


# ---- unit and integration tests ----
# A test file that runs a program under the tracer anywhere (the `traced`
# fixture, LD_PRELOAD set by the test itself, `feedtrace run`) holds
# integration tests; the other files are unit tests: the documents, the
# layers, the Perfetto writer, the converter on synthetic traces alone.
# `make test-unit` runs those (seconds, nothing traced); `make test` runs
# everything.
def pytest_configure(config):
    config.addinivalue_line("markers", "integration: runs a program under the tracer")


def _traces_programs(module):
    src = getattr(module, "__file__", None)
    if not src:
        return False
    text = open(src).read()
    return "preload(" in text or "LD_PRELOAD" in text or '"run"' in text


def pytest_collection_modifyitems(config, items):
    seen = {}
    for item in items:
        mod = item.module
        if mod not in seen:
            seen[mod] = _traces_programs(mod)
        if seen[mod] or "traced" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)
