"""Shared helpers for feedtrace's tests, and the tiers' rule (below).

A traced test runs a real program (a C program from tests/progs, or python3)
with libfeedtrace.so preloaded into a fresh trace directory, reads the trace
back with `feedtrace dump --json`, and asserts exact facts about it.
"""
import inspect
import json
import os
import shutil
import re
import resource
import subprocess
import sys

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


# ---- the three tiers (tests/README.md) ----
# A test's directory is its tier:
#   tests/unit       nothing traced, no feedtrace command, no browser: the
#                    documents, the layers, the library's symbols, C unit tests
#   tests/converter  synthetic traces (tests/ftgen.py) through the feedtrace
#                    command, the Perfetto and HTML outputs; nothing traced
#   tests/traced     real programs under the tracer
# `make test-unit` runs tests/unit; `make test` runs every tier. The rule
# is enforced where programs start: a unit or converter test that starts a
# program its tier may not start fails (TierViolation), whatever its text.
TIERS = ("unit", "converter", "traced")
TESTS = os.path.dirname(os.path.abspath(__file__))
# helpers one test file imports from another (test_convert's load, ...)
# are found whichever tiers a run collects
for _tier in TIERS:
    if os.path.join(TESTS, _tier) not in sys.path:
        sys.path.insert(1, os.path.join(TESTS, _tier))


class TierViolation(AssertionError):
    pass


def tier_of(path):
    """"unit", "converter" or "traced": the tier a test file at path is in
    (None outside them)."""
    rel = os.path.relpath(os.path.abspath(str(path)), TESTS).split(os.sep)
    return rel[0] if len(rel) > 1 and rel[0] in TIERS else None


def tier_refusal(tier, argv, env):
    """Why a test of tier may not start argv with env (None: it may)."""
    if tier not in ("unit", "converter"):
        return None
    if isinstance(argv, (str, bytes)):
        argv = [argv]
    argv = [os.fsdecode(a) for a in argv]
    exe = os.path.basename(argv[0]) if argv else ""
    if "libfeedtrace" in (env if env is not None else os.environ).get("LD_PRELOAD", ""):
        return "a program with libfeedtrace preloaded"
    if exe == "feedtrace" and "run" in argv[1:2]:
        return "`feedtrace run`"
    if tier == "unit":
        if exe == "feedtrace":
            return "the feedtrace command (converter tier)"
        if exe.startswith("chromium") or exe == "perfetto_load.sh":
            return "a browser or Perfetto's trace processor (converter tier)"
    return None


_POPEN_INIT = subprocess.Popen.__init__
_POPEN_SIG = inspect.signature(_POPEN_INIT)
_current_tier = [None]


def _tier_checked_init(self, *a, **kw):
    bound = _POPEN_SIG.bind(self, *a, **kw)
    why = tier_refusal(_current_tier[0], bound.arguments["args"], bound.arguments.get("env"))
    if why:
        raise TierViolation("a %s-tier test started %s: it belongs in a higher tier "
                            "(tests/README.md)" % (_current_tier[0], why))
    _POPEN_INIT(self, *a, **kw)


subprocess.Popen.__init__ = _tier_checked_init


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """the test's tier holds through its fixtures' set-up and tear-down too"""
    _current_tier[0] = tier_of(item.fspath)
    yield
    _current_tier[0] = None


def pytest_configure(config):
    for tier in TIERS:
        config.addinivalue_line("markers", tier + ": a test in tests/" + tier)


def pytest_collection_modifyitems(config, items):
    for item in items:
        tier = tier_of(item.fspath)
        if tier:
            item.add_marker(getattr(pytest.mark, tier))
