"""The layers, checked at link level on the built objects (issue 17):
calls go down only. libfeedtrace/ (the runtime) never references a symbol
defined in shim/ (the wrappers) or the generated CUDA wrappers: the
wrappers hand it what it needs through ft_lifecycle_start (shim/init.c).
Within a layer, no file calls, through any chain of files, back into
itself: the files of each layer form layers of their own
(docs/ARCHITECTURE.md, "Layers")."""
import collections
import glob
import os
import subprocess

import pytest

from conftest import BUILD

OBJ = os.path.join(BUILD, "obj")

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


def calls_within(layer):
    """file -> the files of the same layer whose symbols it references"""
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
    return calls


def a_cycle(calls):
    """one cycle of the graph as a list of files, or None"""
    state, path = {}, []

    def visit(n):
        state[n] = 1
        path.append(n)
        for m in sorted(calls.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        state[n] = 2
        path.pop()
        return None

    for n in sorted(calls):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_a_cycle_is_found():
    """the check itself, on graphs whose answer is known"""
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b", "c"}, "b": {"c"}}) is None


@pytest.mark.parametrize("layer", ["libfeedtrace", "shim", "converter"])
def test_no_cycle_between_files(layer):
    cycle = a_cycle(calls_within(layer))
    assert cycle is None, " -> ".join(cycle)
