"""Native call sites read offline (converter/read/symbolize.c): programs built as
users build them (-g -O2, no -rdynamic) on the simulated driver, with hidden
syncs planted in a static function, a non-static one, an inlined one and one
in a shared library of their own, and a contended global mutex
(tests/sites/). The report names the function and the exact file:line of
each call, the lines read from the "SITE name" markers of the sources; a
C++ program's names are demangled; a stripped copy shows module+offset
(inside the right function) and one hint; a binary rebuilt after the run is
refused (one line, no wrong names); --symbols finds debug files elsewhere."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, ROOT, TOOL, make

SIMGPU = os.path.join(BUILD, "simgpu")
SRC = os.path.join(ROOT, "tests", "sites")


def line(src, name):
    """the line of the call marked "SITE name" in tests/sites/src"""
    with open(os.path.join(SRC, src)) as f:
        hits = [i for i, text in enumerate(f, 1) if re.search(r"SITE %s\b" % name, text)]
    assert len(hits) == 1, (src, name, hits)
    return "%s:%d" % (src, hits[0])


def cc(args, cwd):
    r = subprocess.run(args, capture_output=True, text=True, cwd=cwd)
    assert r.returncode == 0, r.stderr


def build_prog(d, out="sites_prog", extra=()):
    cc(["cc", "-g", "-O2", "-Wall", *extra, "-o", out, os.path.join(SRC, "sites_prog.c"),
        "-L.", "-lsites", "-L" + SIMGPU, "-lcuda", "-Wl,-rpath," + d + ":" + SIMGPU,
        "-lpthread"], d)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    make("all", "simgpu")
    d = str(tmp_path_factory.mktemp("sites"))
    cc(["cc", "-g", "-O2", "-Wall", "-fPIC", "-shared", "-o", "libsites.so",
        os.path.join(SRC, "sites_lib.c"), "-L" + SIMGPU, "-lcuda"], d)
    build_prog(d)
    cc(["cc", "-g", "-O2", "-Wall", "-o", "sites_dlopen", os.path.join(SRC, "sites_dlopen.c"),
        "-L" + SIMGPU, "-lcuda", "-Wl,-rpath," + SIMGPU, "-ldl"], d)
    cc(["c++", "-g", "-O2", "-Wall", "-o", "sites_cpp", os.path.join(SRC, "sites_cpp.cc"),
        "-L" + SIMGPU, "-lcuda", "-Wl,-rpath," + SIMGPU], d)
    # no -rdynamic: the program's own functions are not in .dynsym (dladdr
    # cannot name them)
    dyn = subprocess.run(["nm", "-D", "--defined-only", os.path.join(d, "sites_prog")],
                         capture_output=True, text=True).stdout
    assert "static_sync" not in dyn and "global_sync" not in dyn
    return d


def run(traced, argv, cwd):
    # no GPU timing events: their poller queries the simulated driver under
    # its one mutex every 10 ms, and under load the program's thread can
    # wait for it (a lock row on g_mu); these tests are about call sites
    r = traced(argv, env={"LD_LIBRARY_PATH": SIMGPU, "FEEDTRACE_GPU_MS": "0"}, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return r


def report(d, *opts):
    r = subprocess.run([TOOL, "report", d, "--json", *opts], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def report_text(d, *opts):
    r = subprocess.run([TOOL, "report", d, *opts], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def sites(rep, kind="hidden_sync"):
    """{headline: (count, full stack)} of the report's call sites"""
    out = {}
    for s in rep["call_sites"]:
        if s["kind"] == kind:
            head, _, stack = s["site"].partition("\n")
            assert head not in out, head
            out[head] = (s["count"], stack.split("\n"))
    return out


def expected_hidden():
    return {
        "static_sync (%s) <- main (%s)" % (line("sites_prog.c", "static_sync"),
                                           line("sites_prog.c", "main_static")): 3,
        "global_sync (%s) <- main (%s)" % (line("sites_prog.c", "global_sync"),
                                           line("sites_prog.c", "main_global")): 4,
        "inlined_sync (%s) <- outer_of_inline (%s)" % (
            line("sites_prog.c", "inlined_sync"), line("sites_prog.c", "outer_of_inline")): 5,
        "lib_static_sync (%s) <- lib_sync (%s)" % (line("sites_lib.c", "lib_static_sync"),
                                                   line("sites_lib.c", "lib_sync")): 6,
    }


def test_hidden_sync_sites_name_function_and_line(traced, built):
    r = run(traced, [os.path.join(built, "sites_prog")], built)
    assert r.stdout == "calls 15\n"
    rep = report(r.dir)
    got = sites(rep)
    assert {h: c for h, (c, _) in got.items()} == expected_hidden()
    # the full stack keeps every frame, innermost first, but feedtrace's
    # own: the program's (the inlined call its own line), main, libc's
    # start-up
    inl = got["inlined_sync (%s) <- outer_of_inline (%s)" % (
        line("sites_prog.c", "inlined_sync"), line("sites_prog.c", "outer_of_inline"))][1]
    mine = [f for f in inl if "sites_prog.c" in f]
    assert mine == ["inlined_sync (%s)" % line("sites_prog.c", "inlined_sync"),
                    "outer_of_inline (%s)" % line("sites_prog.c", "outer_of_inline"),
                    "main (%s)" % line("sites_prog.c", "main_inline")]
    # feedtrace's wrapper is left out (the call is named beside the site)
    assert not any(f.startswith("cuMemcpyDtoH_v2 (") for f in inl)
    lib = got["lib_static_sync (%s) <- lib_sync (%s)" % (
        line("sites_lib.c", "lib_static_sync"), line("sites_lib.c", "lib_sync"))][1]
    assert "main (%s)" % line("sites_prog.c", "main_lib") in lib
    assert rep["symbol_notes"] == []
    # the text report says the same, in full
    text = report_text(r.dir)
    for head in expected_hidden():
        assert head + " (cuMemcpyDtoH_v2)" in text


def test_main_frame_line(traced, built):
    """main's frame (an outer frame: looked up at its return address - 1)"""
    r = run(traced, [os.path.join(built, "sites_prog")], built)
    got = sites(report(r.dir))
    stack = got["global_sync (%s) <- main (%s)" % (line("sites_prog.c", "global_sync"),
                                                  line("sites_prog.c", "main_global"))][1]
    assert stack[stack.index("global_sync (%s)" % line("sites_prog.c", "global_sync")) + 1] \
        == "main (%s)" % line("sites_prog.c", "main_global")


def test_lock_contention_site_and_name(traced, built):
    r = run(traced, [os.path.join(built, "sites_prog")], built)
    rep = report(r.dir)
    rows = [f for f in rep["findings"] if f["kind"] == "lock_contention"]
    # the program's lock, once; under load the simulated driver's own
    # mutex (its worker thread against the program's) can be contended too
    locks = [f for f in rows if f["lock_name"] == "launch_lock"]
    assert len(locks) == 1
    assert [f for f in rows if f not in locks and "sites_prog.c" in (f["site"] or "")] == []
    f = locks[0]
    assert f["lock_name"] == "launch_lock" and f["count"] == 3 and f["call"] == "pthread_mutex_lock"
    assert f["site"].split("\n")[0] == "wait_for_lock (%s) <- main (%s)" % (
        line("sites_prog.c", "wait_for_lock"), line("sites_prog.c", "main_lock"))
    # each wait recorded its site
    waits = r.trace.calls("pthread_mutex_lock", lock=f["lock"])
    assert len(waits) == 3
    assert all(w["args"]["site"] == f["site"] for w in waits)
    text = report_text(r.dir)
    assert "wait_for_lock (%s) <- main (%s) (pthread_mutex_lock on launch_lock)" % (
        line("sites_prog.c", "wait_for_lock"), line("sites_prog.c", "main_lock")) in text


def test_cpp_names_demangled(traced, built):
    r = run(traced, [os.path.join(built, "sites_cpp")], built)
    got = sites(report(r.dir))
    assert {h: c for h, (c, _) in got.items()} == {
        "feed::Loader::fetch(int) (%s) <- main (%s)" % (line("sites_cpp.cc", "fetch"),
                                                        line("sites_cpp.cc", "main_fetch")): 2,
        "double feed::pull<double>(double) (%s) <- main (%s)" % (
            line("sites_cpp.cc", "pull"), line("sites_cpp.cc", "main_pull")): 1,
    }


def symbols(path):
    """{name: (address, size)} of an ELF file's functions (.symtab)"""
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for l in out.splitlines():
        parts = l.split()
        if len(parts) == 4 and parts[2] in "tT":
            syms[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return syms


def test_stripped_offsets_and_hint(traced, built, tmp_path):
    d = str(tmp_path)
    shutil.copy(os.path.join(built, "sites_prog"), os.path.join(d, "sites_stripped"))
    subprocess.run(["strip", os.path.join(d, "sites_stripped")], check=True)
    r = run(traced, [os.path.join(d, "sites_stripped")], built)
    rep = report(r.dir)
    fn = symbols(os.path.join(built, "sites_prog"))
    got = {}
    for head, (count, _) in sites(rep).items():
        if head.startswith("lib_static_sync"):       # the library is not stripped
            assert count == 6
            continue
        m = re.fullmatch(r"sites_stripped\+0x([0-9a-f]+) <- sites_stripped\+0x([0-9a-f]+)", head)
        assert m, head
        # the offset is the return address in the file: inside the function
        off = int(m.group(1), 16)
        [name] = [n for n, (a, s) in fn.items() if a < off <= a + s]
        got[name] = got.get(name, 0) + count
    assert got == {"static_sync": 3, "global_sync": 4, "outer_of_inline": 5}
    hint = ("sites_stripped has no symbols: frames there are shown as module+offset; "
            "build with -g (and do not strip), install the debug package, or pass --symbols DIR")
    assert rep["symbol_notes"] == [hint]
    text = report_text(r.dir)
    assert text.count("has no symbols") == 1 and "  note: " + hint + "\n" in text
    # --symbols DIR holding the unstripped file (same build-id): names again
    keep = tmp_path / "keep"
    keep.mkdir()
    shutil.copy(os.path.join(built, "sites_prog"), str(keep / "sites_stripped"))
    rep = report(r.dir, "--symbols", str(keep))
    assert {h: c for h, (c, _) in sites(rep).items()} == expected_hidden()
    assert rep["symbol_notes"] == []


def test_debuglink_in_symbols_dir(traced, built, tmp_path):
    """a separate debug file found by .gnu_debuglink in a --symbols directory"""
    d = str(tmp_path)
    dbg = tmp_path / "dbg"
    dbg.mkdir()
    exe = os.path.join(d, "sites_prog")
    shutil.copy(os.path.join(built, "sites_prog"), exe)
    subprocess.run(["objcopy", "--only-keep-debug", exe, str(dbg / "sites_prog.debug")],
                   check=True)
    subprocess.run(["strip", exe], check=True)
    subprocess.run(["objcopy", "--add-gnu-debuglink=" + str(dbg / "sites_prog.debug"), exe],
                   check=True)
    r = run(traced, [exe], built)
    assert len(report(r.dir)["symbol_notes"]) == 1
    rep = report(r.dir, "--symbols", str(dbg))
    assert {h: c for h, (c, _) in sites(rep).items()} == expected_hidden()
    assert rep["symbol_notes"] == []


def test_each_bare_module_noted_once(traced, built, tmp_path):
    """The program and its library both stripped: the library's stacks have
    frames of both, the program's of the program only, and the stacks are
    read one at a time; each module is named in one "no symbols" note
    only, whichever stacks came first (a real PyTorch run of two ranks
    said "libtorch_cpu.so.1.13, libgloo.so.0 have no symbols" and then
    "libgloo.so.0 has no symbols")."""
    d = str(tmp_path)
    for f in ("sites_prog", "libsites.so"):
        shutil.copy(os.path.join(built, f), os.path.join(d, f))
        subprocess.run(["strip", os.path.join(d, f)], check=True)
    r = traced([os.path.join(d, "sites_prog")], env={"LD_LIBRARY_PATH": d + ":" + SIMGPU},
               cwd=d)
    assert r.returncode == 0, r.stderr
    rep = report(r.dir)
    heads = sites(rep)
    assert any(h.startswith("libsites.so+0x") for h in heads), heads
    notes = rep["symbol_notes"]
    named = [m for n in notes for m in n.split(" ha")[0].split(", ")]
    assert sorted(named) == ["libsites.so", "sites_prog"], notes
    text = report_text(r.dir)
    assert text.count("no symbols") == len(notes)


def test_rebuilt_binary_refused(traced, built, tmp_path):
    d = str(tmp_path)
    for f in ("sites_prog", "libsites.so"):
        shutil.copy(os.path.join(built, f), os.path.join(d, f))
    r = run(traced, [os.path.join(d, "sites_prog")], d)
    build_prog(d, extra=["-O1"])                     # rebuilt after the run
    rep = report(r.dir)
    exe = os.path.join(d, "sites_prog")
    assert rep["symbol_notes"] == [
        "%s was rebuilt after the run (its build-id differs): its frames are shown as "
        "module+offset" % exe]
    heads = sites(rep)
    # no name from the new file: the program's frames are module+offset;
    # the library, unchanged, is still read
    assert sum(c for h, (c, _) in heads.items() if h.startswith("sites_prog+0x")) == 3 + 4 + 5
    for h, (c, stack) in heads.items():
        if h.startswith("lib_static_sync"):
            assert c == 6
            assert any(re.fullmatch(r"sites_prog\+0x[0-9a-f]+", f) for f in stack)
        else:
            assert re.fullmatch(r"sites_prog\+0x[0-9a-f]+ <- sites_prog\+0x[0-9a-f]+", h), h
            assert not any("sites_prog.c" in f for f in stack)
    text = report_text(r.dir)
    assert text.count("was rebuilt after the run") == 1


def test_perfetto_and_diff_show_the_headline(traced, built, tmp_path):
    before = run(traced, [os.path.join(built, "sites_prog")], built)
    after = run(traced, [os.path.join(built, "sites_cpp")], built)
    out = str(tmp_path / "b.pftrace")
    r = subprocess.run([TOOL, "convert", before.dir, "-o", out, "--quiet"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = open(out, "rb").read()
    # the findings' args: each site headline first, the lock's name
    for head in expected_hidden():
        assert (head + "\n").encode() in data, head
    assert b"launch_lock" in data
    r = subprocess.run([TOOL, "diff", before.dir, after.dir, "--json"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    gone = sorted(x["what"] for x in d["disappeared"] if x["kind"] != "launch_gap")
    lock = "lock contention in pthread_mutex_lock on launch_lock at wait_for_lock (%s) <- main (%s)" \
        % (line("sites_prog.c", "wait_for_lock"), line("sites_prog.c", "main_lock"))
    assert gone == sorted(["hidden syncs in cuMemcpyDtoH_v2 at " + h for h in expected_hidden()]
                          + [lock])
    new = sorted(x["what"] for x in d["appeared"] if x["kind"] != "launch_gap")
    assert new == sorted([
        "hidden syncs in cuMemcpyDtoH_v2 at feed::Loader::fetch(int) (%s) <- main (%s)"
        % (line("sites_cpp.cc", "fetch"), line("sites_cpp.cc", "main_fetch")),
        "hidden syncs in cuMemcpyDtoH_v2 at double feed::pull<double>(double) (%s) <- main (%s)"
        % (line("sites_cpp.cc", "pull"), line("sites_cpp.cc", "main_pull"))])


def test_dlopened_library_and_fork_child(traced, built):
    """a library dlopen'd after start-up, and a fork child's own file"""
    r = run(traced, [os.path.join(built, "sites_dlopen"), os.path.join(built, "libsites.so")],
            built)
    assert r.stdout == "child 0\n"
    rep = report(r.dir)
    head = "lib_static_sync (%s) <- lib_sync (%s)" % (line("sites_lib.c", "lib_static_sync"),
                                                     line("sites_lib.c", "lib_sync"))
    got = sorted((s["count"], s["site"].split("\n")[0],
                  [f for f in s["site"].split("\n")[1:] if f.startswith("main (")])
                 for s in rep["call_sites"] if s["kind"] == "hidden_sync")
    assert got == [(2, head, ["main (%s)" % line("sites_dlopen.c", "dl_call")]),
                   (3, head, ["main (%s)" % line("sites_dlopen.c", "child_call")])]
    pids = {s["pid"] for s in rep["call_sites"]}
    assert len(pids) == 2 and rep["symbol_notes"] == []


def test_module_now_a_fifo_is_not_waited_on(traced, built, tmp_path):
    """the program's path names a FIFO when the trace is read: refused at
    once (never opened for a blocking read), one note, frames as offsets"""
    d = str(tmp_path)
    exe = os.path.join(d, "sites_prog")
    shutil.copy(os.path.join(built, "sites_prog"), exe)
    r = run(traced, [exe], built)
    os.unlink(exe)
    os.mkfifo(exe)
    rep = report(r.dir)          # (a blocked open would hit report's timeout)
    assert rep["symbol_notes"] == [
        "%s is gone (or no ELF file): its frames are shown as module+offset "
        "(--symbols DIR finds a copy)" % exe]
    heads = sites(rep)
    assert sum(c for h, (c, _) in heads.items() if h.startswith("sites_prog+0x")) == 12


def test_build_id_path_in_symbols_dir(traced, built, tmp_path):
    """a debug file found by build-id (DIR/.build-id/xx/rest.debug, the
    layout of /usr/lib/debug) for a program stripped without a debuglink"""
    d = str(tmp_path)
    exe = os.path.join(d, "sites_prog")
    shutil.copy(os.path.join(built, "sites_prog"), exe)
    out = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True,
                         check=True).stdout
    bid = out.split("Build ID:")[1].split()[0]
    where = tmp_path / "dbg" / ".build-id" / bid[:2]
    where.mkdir(parents=True)
    subprocess.run(["objcopy", "--only-keep-debug", exe, str(where / (bid[2:] + ".debug"))],
                   check=True)
    subprocess.run(["strip", exe], check=True)
    r = run(traced, [exe], built)
    assert len(report(r.dir)["symbol_notes"]) == 1
    rep = report(r.dir, "--symbols", str(tmp_path / "dbg"))
    assert {h: c for h, (c, _) in sites(rep).items()} == expected_hidden()
    assert rep["symbol_notes"] == []
