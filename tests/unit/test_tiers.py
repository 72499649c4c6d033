"""The three test tiers (tests/README.md): every test file is in one, and
a unit or converter test cannot start what its tier excludes: a traced
program in either, the feedtrace command or a browser in unit."""
import glob
import os
import re
import subprocess

import pytest

from conftest import LIB, TESTS, TIERS, TOOL, TierViolation, preload, tier_of, tier_refusal


def test_every_test_file_is_in_a_tier():
    found = glob.glob(os.path.join(TESTS, "**", "test_*.py"), recursive=True)
    outside = sorted(os.path.relpath(f, TESTS) for f in found if tier_of(f) is None)
    assert outside == []
    for tier in TIERS:
        assert glob.glob(os.path.join(TESTS, tier, "test_*.py")), tier


# what the guard below catches when it runs, read off the source: the
# `traced` fixture taken by a test or fixture, libfeedtrace preloaded,
# `feedtrace run` (not the word "traced" in a message, nor a test's own
# library preloaded into the command: test_reader_robust's shim)
TRACES = re.compile(r"def \w+\([^)]*\btraced\b|\bpreload\(|LD_PRELOAD[^\n]*\bLIB\b"
                    r"|TOOL,\s*[\"']run[\"']")


def test_every_traced_tier_file_traces_by_its_text():
    """the text check sees what each traced-tier file starts"""
    found = sorted(glob.glob(os.path.join(TESTS, "traced", "test_*.py")))
    assert found and [f for f in found if not TRACES.search(open(f).read())] == []


@pytest.mark.parametrize("tier", ["unit", "converter"])
def test_no_lower_tier_file_traces_by_its_text(tier):
    """no unit or converter file starts what TRACES finds"""
    traces = TRACES
    for f in sorted(glob.glob(os.path.join(TESTS, tier, "test_*.py"))):
        if os.path.basename(f) == "test_tiers.py":
            continue
        hits = [m.group(0) for m in traces.finditer(open(f).read())]
        assert hits == [], os.path.relpath(f, TESTS)


def test_the_guard_refuses_what_each_tier_excludes():
    lib_env = {"LD_PRELOAD": preload(LIB)}
    run = [TOOL, "run", "-o", "/nonexistent", "--", "/bin/true"]
    dump = [TOOL, "dump", "--json", "/nonexistent"]
    for tier in ("unit", "converter"):
        assert tier_refusal(tier, ["/bin/true"], lib_env)
        assert tier_refusal(tier, run, {})
        assert tier_refusal(tier, ["/bin/true"], {}) is None
    assert tier_refusal("unit", dump, {})
    assert tier_refusal("unit", ["/usr/bin/chromium", "--headless"], {})
    assert tier_refusal("converter", dump, {}) is None
    assert tier_refusal("converter", ["/usr/bin/chromium", "--headless"], {}) is None
    assert tier_refusal("traced", run, lib_env) is None


def test_the_guard_is_on_for_this_file():
    """this test is in tests/unit: starting the feedtrace command fails
    before anything runs"""
    with pytest.raises(TierViolation):
        subprocess.run([TOOL, "dump", "--json", "/nonexistent"], capture_output=True)
    with pytest.raises(TierViolation):
        subprocess.run(["/bin/true"], env={"LD_PRELOAD": LIB})
    assert subprocess.run(["/bin/true"]).returncode == 0
