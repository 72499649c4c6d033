"""The layers, checked at link level on the built objects (issue 17):
calls go down only. libfeedtrace/ (the runtime) never references a symbol
defined in shim/ (the wrappers) or the generated CUDA wrappers: the
wrappers hand it what it needs through ft_lifecycle_start (shim/init.c).
Within a layer, the pairs of files that call each other are the ones
listed here, no more (the list is the debt docs/ARCHITECTURE.md names: a
new pair fails, and a pair that is gone must leave the list)."""
import collections
import glob
import os
import subprocess

import pytest

from conftest import BUILD

OBJ = os.path.join(BUILD, "obj")

# pairs of files of one layer that reference each other today
KNOWN_CYCLES = {
    ("libfeedtrace/flusher", "libfeedtrace/lifecycle"),
    ("libfeedtrace/flusher", "libfeedtrace/output"),
    ("libfeedtrace/flusher", "libfeedtrace/ring"),
    ("libfeedtrace/lifecycle", "libfeedtrace/output"),
    ("libfeedtrace/lifecycle", "libfeedtrace/ring"),
    ("libfeedtrace/strrefs", "libfeedtrace/strtab"),
    ("shim/cuda", "shim/dl"),
    ("converter/gate", "converter/report"),
    ("converter/html", "converter/report"),
    ("converter/problems", "converter/report"),
}


def symbols(path, defined):
    out = subprocess.run(["nm", "--defined-only" if defined else "-u", path],
                         capture_output=True, text=True, check=True).stdout
    got = set()
    for line in out.splitlines():
        p = line.split()
        if defined and len(p) == 3 and p[1] in "TDBRVW":
            got.add(p[2])
        elif not defined and p:
            got.add(p[-1])
    return got


def objects(layer):
    files = sorted(glob.glob(os.path.join(OBJ, layer, "*.o")))
    if not files:
        pytest.skip("no objects under %s (built elsewhere)" % os.path.join(OBJ, layer))
    return {os.path.relpath(f, OBJ)[:-2]: f for f in files}


def test_runtime_never_calls_up_into_the_wrappers():
    lib = objects("libfeedtrace")
    upper = dict(objects("shim"))
    upper.update({k: v for k, v in
                  ((os.path.relpath(f, OBJ)[:-2], f) for f in glob.glob(os.path.join(OBJ, "gen", "*.o")))})
    owner = {s: name for name, f in upper.items() for s in symbols(f, True)}
    up = sorted("%s -> %s (%s)" % (name, owner[s], s)
                for name, f in lib.items() for s in symbols(f, False) if s in owner)
    assert up == []


def test_no_new_cycle_between_files():
    found = set()
    for layer in ("libfeedtrace", "shim", "converter"):
        objs = objects(layer)
        owner = {}
        for name, f in objs.items():
            for s in symbols(f, True):
                owner[s] = name
        calls = collections.defaultdict(set)
        for name, f in objs.items():
            for s in symbols(f, False):
                if s in owner and owner[s] != name:
                    calls[name].add(owner[s])
        found |= {(a, b) for a in list(calls) for b in calls[a] if a < b and a in calls.get(b, ())}
    assert sorted(found - KNOWN_CYCLES) == [], "new cycles"
    assert sorted(KNOWN_CYCLES - found) == [], "gone: take them off the list"
