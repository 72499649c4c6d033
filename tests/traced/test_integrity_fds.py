"""Descriptors and files the tracer takes from a process (docs/RELIABILITY.md,
"Descriptors and files"): each test compares an untraced run with a traced
one, output and the files the program wrote, byte for byte."""
import json
import os
import subprocess

import pytest

from conftest import BUILD, ROOT, TOOL, Trace, clean_env, make, nofile, prog, untraced

SIMGPU = os.path.join(BUILD, "simgpu")


@pytest.fixture(scope="module", autouse=True)
def built():
    make(prog("integ_closefrom"),
                        "simgpu")


def plain_env():
    e = clean_env("LD_PRELOAD")
    e["LD_LIBRARY_PATH"] = SIMGPU
    return e


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_closefrom_files_and_stacks(traced, tmp_path):
    """closefrom(3), then the program's own files at fds 3 and 4, written
    between GPU waits whose stacks are captured (through a frame with no
    unwind info): files, output and exit status as untraced; libunwind 1.6
    used to read and write one byte of them per new stack page."""
    argv = [prog("integ_closefrom"), "a", "b"]
    u = untraced(argv, env=plain_env(), cwd=str(tmp_path))
    assert u.returncode == 0, u.stderr
    assert u.stdout == "fds 3 4\nread 390 pos 390 fails 0\n"
    ua, ub = read(tmp_path / "a"), read(tmp_path / "b")
    assert ua == ub == b"".join(b"line %d\n" % i for i in range(50))
    t = traced(argv, env={"LD_LIBRARY_PATH": SIMGPU, "FEEDTRACE_STACK_DEPTH": "16"})
    assert t.returncode == 0, t.stderr
    assert t.stdout == u.stdout
    assert t.stderr == u.stderr
    assert read(tmp_path / "a") == ua and read(tmp_path / "b") == ub
    waits = t.trace.calls("cuCtxSynchronize")
    assert len(waits) == 51
    src = open(os.path.join(ROOT, "tests", "progs", "integ_closefrom.c")).read().split("\n")
    call = "wait_gpu (integ_closefrom.c:%d)" % (src.index("\tfails += sync_ctx() != 0;") + 1)
    for w in waits:
        # the program's frames, innermost first: wait_gpu, then the no-CFI
        # trampoline (no line: assembler), where the walk ends
        head, *frames = w["args"]["site"].split("\n")
        assert head == call + " <- nocfi_call+0x6 (integ_closefrom)"
        assert frames[-2:] == [call, "nocfi_call+0x6 (integ_closefrom)"], frames


def run_closed_stderr(argv, env, cwd):
    """argv with stderr a pipe whose read end is closed: writing to it fails
    with EPIPE and raises SIGPIPE unless the writer blocks it."""
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=w, cwd=cwd,
                           timeout=60)
    finally:
        os.close(w)
    return p


def test_warning_to_dead_stderr_raises_no_sigpipe(tmp_path):
    """A bad configuration value makes the tracer warn on stderr; with stderr
    a pipe nobody reads, the program's exit status and output are as
    untraced (it used to die of SIGPIPE in the constructor)."""
    argv = ["/bin/echo", "hello"]
    u = run_closed_stderr(argv, plain_env(), str(tmp_path))
    assert u.returncode == 0 and u.stdout == b"hello\n"
    e = plain_env()
    e.update(LD_PRELOAD=os.path.join(BUILD, "libfeedtrace.so"),
             FEEDTRACE_OUT=str(tmp_path / "trace"), FEEDTRACE_STACK_DEPTH="lots")
    t = run_closed_stderr(argv, e, str(tmp_path))
    assert t.returncode == u.returncode
    assert t.stdout == u.stdout
    # the same run with a readable stderr shows the warning was written
    r = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=60,
                       cwd=str(tmp_path))
    assert r.returncode == 0
    assert "FEEDTRACE_STACK_DEPTH=\"lots\"" in r.stderr


def test_empty_hooks_value_prints_one_line(traced):
    """FEEDTRACE_HOOKS= (set, empty) is a mistake: one line, then all hooks
    (it used to trace process events only, silently); output as untraced."""
    argv = ["/bin/echo", "hello"]
    u = untraced(argv, env=plain_env())
    t = traced(argv, env={"FEEDTRACE_HOOKS": ""})
    assert t.returncode == u.returncode == 0
    assert t.stdout == u.stdout == "hello\n"
    assert t.stderr == ('feedtrace: FEEDTRACE_HOOKS="" is not a comma list of '
                        'io,lock,cuda,proc,all,none; using all\n')
    # the same hooks as with FEEDTRACE_HOOKS unset
    d = traced(argv)
    assert d.stderr == ""
    assert sorted(e["call"] for e in t.trace.events) == sorted(e["call"] for e in d.trace.events)
    assert any(e["call"] == "fclose" for e in t.trace.events)  # an io hook


# ---- issue 11 item 2: a raw dup2 over the trace descriptor ----

RAWDUP = prog("integ_rawdup")


@pytest.mark.parametrize("again", [False, True])
@pytest.mark.parametrize("first,hard", [(650, 1024), (3, 1024), (3, 4096)])
def test_raw_dup2_over_every_descriptor(traced, tmp_path, first, hard, again):
    """The program puts its file at every descriptor from FIRST to its soft
    limit, 1024, by the raw system call (libc's dup2 hook never sees it),
    once or (AGAIN) anew every round while the flusher writes every 10 ms.
    Its file holds exactly its own bytes, as untraced. The flusher writes
    from a table of descriptors of its own, out of the program's reach:
    what it writes is whole (the open and every pread of the rounds). With a
    hard limit above the soft one (the usual case) the program's own trace
    descriptor sits at 1024, where the program cannot reach, and the end
    is written too. With both at 1024 it sits at 700: from 650 (the issue's
    probe) the exit path opens the file again at a free number and the end
    is written; from 3 no number is left at exit: one line, no end record,
    and the report counts the process as unended."""
    rounds = 60
    lim = nofile(1024, hard)
    plain_file, traced_file = tmp_path / "plain.txt", tmp_path / "traced.txt"
    tail = ["again"] if again else []
    u = untraced([RAWDUP, str(plain_file), str(first), str(rounds)] + tail, preexec_fn=lim)
    assert (u.returncode, u.stdout) == (0, "rounds %d\n" % rounds)
    r = traced([RAWDUP, str(traced_file), str(first), str(rounds)] + tail,
               env={"FEEDTRACE_FLUSH_MS": "10"}, load=False, preexec_fn=lim)
    assert (r.returncode, r.stdout) == (0, u.stdout), r.stderr
    assert traced_file.read_bytes() == plain_file.read_bytes()
    t = Trace.load(r.dir)
    [p] = t.procs
    stuck = (first, hard) == (3, 1024)
    if stuck:
        assert r.stderr.count("\n") == 1 and "cannot be opened again" in r.stderr, r.stderr
        assert (p["end"], p["unended"]) == ("no end record (killed, or still running)", 1)
        assert t.count("open") == 1 and 0 < t.count("pread", fd=3) <= rounds
        rep = subprocess.run([TOOL, "report", "--json", r.dir],
                             capture_output=True, text=True, timeout=60)
        assert json.loads(rep.stdout)["losses"]["unended"] == 1
    else:
        assert r.stderr == ""
        assert (p["end"], p["unended"]) == ("exit", 0)
        assert t.count("open") == 1 and t.count("pread", fd=3) == rounds
    t = Trace.load(r.dir, check=False)
    if first == 650 or hard > 1024:
        assert r.stderr == ""
        [p] = t.procs
        assert (p["end"], p["lost"]) == ("exit", 0)
        assert len(t.calls("pread64", path=str(traced_file)) +
                   t.calls("pread", path=str(traced_file))) == rounds
    else:
        assert r.stderr.count("\n") == 1 and "cannot be opened again" in r.stderr, r.stderr
