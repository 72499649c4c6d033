"""The layers, checked at link level on the built objects (issues 17, 35):
calls go down only. libfeedtrace/ (the runtime) never references a symbol
defined in shim/ (the wrappers) or the generated CUDA wrappers: the
wrappers hand it what it needs through ft_lifecycle_start (shim/init.c).
converter/ is one directory per layer, CONVERTER_LAYERS lowest first: an
object of a directory references only symbols defined in its own
directory or one below it. Within a layer, no file calls, through any
chain of files, back into itself: the files of each layer form layers of
their own (docs/ARCHITECTURE.md, "Layers"). The same order holds for the
sources' text: a converter file includes only headers of its own directory,
of one below it, or of libfeedtrace/format/ (types a lower layer needs
live in a header of that layer)."""
import collections
import glob
import os
import re
import subprocess

import pytest

from conftest import BUILD, ROOT

OBJ = os.path.join(BUILD, "obj")

# converter/'s directories, lowest first: the one list of their order
# (docs/ARCHITECTURE.md, "Directories" says why this order)
CONVERTER_LAYERS = ["base", "read", "analyse", "model", "out", "cmd"]


_SYMS = {}


def _nm(paths, defined):
    """one nm over many objects: path -> its defined (or undefined) symbols"""
    got = {p: set() for p in paths}
    out = subprocess.run(["nm", "-A", "--defined-only" if defined else "-u"] + list(paths),
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"(.*?\.o):(.*)$", line)    # "path.o:address type name"
        if not m:
            continue
        where, p = m.group(1), m.group(2).split()
        if where not in got:
            continue
        if defined and len(p) == 3 and p[1] in "TDBRVW":
            got[where].add(p[2])
        elif not defined and p:
            got[where].add(p[-1])
    return got


def symbols(path, defined):
    """the symbols object path defines (or references), read once per run"""
    key = (path, defined)
    if key not in _SYMS:
        same_dir = sorted(glob.glob(os.path.join(os.path.dirname(path), "*.o")))
        if path not in same_dir:
            same_dir.append(path)
        for p, syms in _nm(same_dir, defined).items():
            _SYMS[(p, defined)] = syms
    return _SYMS[key]


def objects(layer):
    """name ("shim/io", "converter/out/report") -> its object. converter/'s
    are those of its sources, one directory down: an object a build left
    from a source since moved is not looked at"""
    if layer != "converter":
        files = sorted(glob.glob(os.path.join(OBJ, layer, "*.o")))
    else:
        files = [os.path.join(OBJ, os.path.relpath(s, ROOT)[:-2] + ".o")
                 for s in sorted(glob.glob(os.path.join(ROOT, layer, "*", "*.c")))]
    if not files or not all(os.path.exists(f) for f in files):
        pytest.skip("objects of %s not built under %s" % (layer, OBJ))
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


def references(layer):
    """file -> {file of the same layer it references: the symbols}"""
    objs = objects(layer)
    owner = {}
    for name, f in objs.items():
        for s in symbols(f, True):
            owner[s] = name
    refs = collections.defaultdict(lambda: collections.defaultdict(set))
    for name, f in objs.items():
        for s in symbols(f, False):
            if s in owner and owner[s] != name:
                refs[name][owner[s]].add(s)
    return refs


def calls_within(layer):
    """file -> the files of the same layer whose symbols it references"""
    return {name: set(to) for name, to in references(layer).items()}


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


def directory(name):
    """"converter/out/report" -> "out" """
    return name.split("/")[1]


def upward(refs, order):
    """every reference from a directory to one above it in order, as
    "from -> to (symbols)" lines"""
    rank = {d: i for i, d in enumerate(order)}
    return sorted("%s -> %s (%s)" % (a, b, " ".join(sorted(syms)))
                  for a, to in refs.items() for b, syms in to.items()
                  if rank[directory(b)] > rank[directory(a)])


def test_an_upward_call_is_found():
    """the check itself: a call down or within a directory passes, one up
    is named with its symbol"""
    refs = {"converter/out/report": {"converter/base/util": {"ft_xmalloc"},
                                     "converter/out/json": {"ft_json_obj"},
                                     "converter/cmd/cli": {"ft_cli_next"}},
            "converter/base/util": {"converter/base/json": {"ft_json_str"}}}
    assert upward(refs, CONVERTER_LAYERS) == [
        "converter/out/report -> converter/cmd/cli (ft_cli_next)"]


def test_converter_directories_are_the_layers():
    """every source of converter/ is in a directory of CONVERTER_LAYERS, and
    each of them holds sources: a new directory takes its place in the
    order here (and in docs/ARCHITECTURE.md) before it builds"""
    conv = os.path.join(ROOT, "converter")
    dirs = sorted(d for d in os.listdir(conv) if os.path.isdir(os.path.join(conv, d)))
    assert dirs == sorted(CONVERTER_LAYERS)
    assert [f for f in os.listdir(conv) if not os.path.isdir(os.path.join(conv, f))] == []
    for d in CONVERTER_LAYERS:
        assert glob.glob(os.path.join(conv, d, "*.c")), d


def test_converter_calls_go_down_the_directories():
    assert upward(references("converter"), CONVERTER_LAYERS) == []


# headers the build generates, by the directory of what they are made from
GENERATED = {"perfetto.pb-c.h": "out"}   # converter/out/perfetto.proto
FORMAT = "format"                         # libfeedtrace/format/: both sides'


def header_dirs():
    """header name -> its converter directory (or FORMAT); a name in two
    places is an error: a file names a header by its name alone"""
    where, twice = dict(GENERATED), []
    places = [(d, os.path.join(ROOT, "converter", d)) for d in CONVERTER_LAYERS]
    places.append((FORMAT, os.path.join(ROOT, "libfeedtrace", "format")))
    for d, path in places:
        for f in sorted(os.listdir(path)):
            if f.endswith((".h", ".def")):
                if f in where:
                    twice.append(f)
                where[f] = d
    assert twice == [], "header names not unique: %s" % twice
    return where


def includes():
    """"converter/out/report_text.c" -> the names it includes with quotes"""
    got = {}
    for d in CONVERTER_LAYERS:
        for src in sorted(glob.glob(os.path.join(ROOT, "converter", d, "*"))):
            if src.endswith((".c", ".h", ".def")):
                text = open(src, encoding="utf-8").read()
                got[os.path.relpath(src, ROOT)] = re.findall(
                    r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', text, re.M)
    return got


def upward_includes(inc, where, order):
    """every include of a header above its file's directory, or of one
    nowhere known, as "file: header (directory)" lines"""
    rank = {d: i for i, d in enumerate(order)}
    bad = []
    for src, names in inc.items():
        d = directory(src)
        for h in names:
            hd = where.get(h)
            if hd == FORMAT:
                continue
            if hd is None or rank[hd] > rank[d]:
                bad.append("%s: %s (%s)" % (src, h, hd or "not found"))
    return sorted(bad)


def test_an_upward_include_is_found():
    """the check itself: an include of its own directory, one below or the
    format passes; one above or of an unknown header is named"""
    where = {"util.h": "base", "report.h": "out", "cli.h": "cmd", "format.h": FORMAT}
    inc = {"converter/out/report_text.c": ["util.h", "report.h", "format.h"],
           "converter/model/problems.c": ["report.h", "util.h"],
           "converter/base/json.c": ["missing.h"]}
    assert upward_includes(inc, where, CONVERTER_LAYERS) == [
        "converter/base/json.c: missing.h (not found)",
        "converter/model/problems.c: report.h (out)"]


def test_converter_includes_go_down_the_directories():
    assert upward_includes(includes(), header_dirs(), CONVERTER_LAYERS) == []
