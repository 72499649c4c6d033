"""The reader and the commands never hang, crash or lie (issue 19, items 9-12,
15 and the loss lines of item 3).

Traces are written by tests/ftgen.py, so every count is known exactly: a
FIFO named *.ft is refused without blocking, a zero-filled region gives one
message (offset and length) whatever its size, a file that shrinks between
open and read is damage (never SIGBUS), every command fails when its output
cannot be written, `convert` never follows a link at its target and leaves
no partial file, and the losses END counts are printed where users look.
"""
import json
import os
import re
import resource
import signal
import struct
import subprocess

import pytest

import ftgen
from conftest import TOOL, skip_under

START = 1_000_000_000_000
HDR = 24                      # struct ft_chunk_header


def make_trace(d, n=3000, name="a.1.ft", end=None, lost=None, edit=None):
    """One process (pid 100), n reads 1 ms apart: EVENTS chunks of 200
    records (ftgen flushes every 200 ms). end: a replacement END payload;
    edit: a function of the (type, payload) list returning the one written."""
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name)
    w = ftgen.TraceFile(path, pid=100, cmdline=["prog"])
    w.thread(100, "main")
    for i in range(n):
        w.event(100, "READ", START + i * 1_000_000, 1000, fd=3, path="/data/f", req=4096, ret=4096)
    chunks = w.chunks(lost)
    if end is not None:
        chunks = [c for c in chunks if c[0] != 6] + [(6, end)]
    if edit:
        chunks = edit(chunks)
    w.close(chunks=chunks)
    return path


def chunk_table(data):
    """[(offset, type, stored_size, records)] of the file's chunks."""
    out, off = [], 256
    while off + HDR <= len(data):
        magic, ctype, _codec, stored = struct.unpack_from("<IHHI", data, off)
        assert magic == 0x4B435446
        nrec = struct.unpack_from("<I", data, off + HDR + 4)[0] if ctype == 1 else 0
        out.append((off, ctype, stored, nrec))
        off += HDR + stored
    return out


def dump(d, *args, timeout=60):
    r = subprocess.run([TOOL, "dump", "--json", d] + list(args), capture_output=True,
                       text=True, timeout=timeout)
    procs = [json.loads(l)["process"] for l in r.stdout.splitlines() if '"process"' in l[:12]]
    events = [l for l in r.stdout.splitlines() if not l.startswith('{"process"')]
    return r, procs, events


def damage_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("feedtrace: ")]


# ---- item 9: a FIFO (or any non-regular file) named *.ft ----

@pytest.mark.parametrize("cmd", [["dump"], ["dump", "--json"], ["report"], ["report", "--json"],
                                 ["convert", "-o", "/dev/null", "--quiet"]])
def test_fifo_named_ft_is_refused_not_waited_on(tmp_path, cmd):
    d = str(tmp_path / "run")
    make_trace(d, n=400)
    fifo = os.path.join(d, "b.2.ft")
    os.mkfifo(fifo)                       # nobody ever writes it
    os.mkdir(os.path.join(d, "c.3.ft"))   # nor a directory
    r = subprocess.run([TOOL, cmd[0], d] + cmd[1:], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    lines = damage_lines(r.stderr)
    assert lines.count("feedtrace: %s: not a regular file; not read" % fifo) == 1, r.stderr
    assert lines.count("feedtrace: %s/c.3.ft: not a regular file; not read" % d) == 1, r.stderr
    if cmd == ["dump", "--json"]:
        procs = [json.loads(l)["process"] for l in r.stdout.splitlines() if '"process"' in l]
        assert [p["records"] for p in procs] == [400]


def test_fifo_alone_is_refused(tmp_path):
    fifo = str(tmp_path / "x.ft")
    os.mkfifo(fifo)
    r = subprocess.run([TOOL, "dump", fifo], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert "x.ft" in r.stderr and r.stdout == ""


# ---- item 10: resynchronisation is linear, one message per damaged region ----

@pytest.mark.parametrize("tail", [64 << 10, 1 << 20, 8 << 20])
def test_zero_tail_one_message(tmp_path, tail):
    d = str(tmp_path / "run")
    path = make_trace(d, n=3000)
    size = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(b"\0" * tail)
    r, procs, events = dump(d)
    assert r.returncode == 0, r.stderr[-2000:]
    assert damage_lines(r.stderr) == [
        "feedtrace: %s: offset %d: no valid chunk header; skipped %d bytes" % (path, size, tail)]
    assert procs[0]["records"] == 3000 and len(events) == 3000
    assert procs[0]["damaged_chunks"] == 1 and procs[0]["end"] == "exit"


def test_zero_region_mid_file_one_message_rest_read(tmp_path):
    """1 MiB of zeros between two chunks (a hole a crash left): one line, and
    every chunk on both sides read."""
    d = str(tmp_path / "run")
    path = make_trace(d, n=3000)
    data = open(path, "rb").read()
    tab = chunk_table(data)
    ev = [c for c in tab if c[1] == 1]
    cut = ev[5][0]                          # before the 6th EVENTS chunk
    hole = 1 << 20
    open(path, "wb").write(data[:cut] + b"\0" * hole + data[cut:])
    r, procs, events = dump(d)
    assert r.returncode == 0
    assert damage_lines(r.stderr) == [
        "feedtrace: %s: offset %d: no valid chunk header; skipped %d bytes" % (path, cut, hole)]
    assert procs[0]["records"] == 3000 and procs[0]["end"] == "exit"


def test_garbage_with_false_magics_one_message(tmp_path):
    """A region full of chunk magics whose headers do not check out (a
    repeated pattern): still one message for the region."""
    d = str(tmp_path / "run")
    path = make_trace(d, n=1000)
    size = os.path.getsize(path)
    junk = (b"FTCK" + b"\x01" * 20) * 40000 + b"FTC"     # ends inside a magic
    with open(path, "ab") as f:
        f.write(junk)
    r, procs, _ = dump(d)
    assert damage_lines(r.stderr) == [
        "feedtrace: %s: offset %d: no valid chunk header; skipped %d bytes" % (path, size, len(junk))]
    assert procs[0]["records"] == 1000


def test_repeated_chunk_read_once(tmp_path):
    """An EVENTS chunk written twice (a drain beside the flusher, same
    stream): its slots are skipped the second time, no damage reported."""
    def twice(chunks):
        out, nev = [], 0
        for t, p in chunks:
            if t == 1:
                p = p[:24] + struct.pack("<Q", 77) + p[32:]      # stream id
                nev += 1
            out.append((t, p))
            if t == 1 and nev == 3:
                out.append((t, p))
        return out
    d = str(tmp_path / "run")
    make_trace(d, n=1000, edit=twice)
    r, procs, events = dump(d)
    assert damage_lines(r.stderr) == []
    assert procs[0]["records"] == 1000 and procs[0]["duplicate_slots"] == 200
    assert len(events) == 1000


# ---- item 11: a file that shrinks while it is read ----

SHRINK_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* cuts the file named by SHRINK_PATH to SHRINK_TO bytes right after the
 * reader's fstat of it: the reader saw the old size, the bytes are gone */
static void shrink(int fd)
{
	static int done;
	const char *path = getenv("SHRINK_PATH");
	char self[64], buf[PATH_MAX];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(self, buf, sizeof buf - 1);
	if (done || !path || n <= 0)
		return;
	buf[n] = 0;
	if (strcmp(buf, path) == 0 && truncate(path, atoll(getenv("SHRINK_TO"))) == 0)
		done = 1;
}
int fstat(int fd, struct stat *st)
{
	int (*real)(int, struct stat *) = (int (*)(int, struct stat *))dlsym(RTLD_NEXT, "fstat");
	int r = real(fd, st);
	if (r == 0 && S_ISREG(st->st_mode))
		shrink(fd);
	return r;
}
int fstat64(int fd, struct stat64 *st)
{
	int (*real)(int, struct stat64 *) = (int (*)(int, struct stat64 *))dlsym(RTLD_NEXT, "fstat64");
	int r = real(fd, st);
	if (r == 0 && S_ISREG(st->st_mode))
		shrink(fd);
	return r;
}
"""


@pytest.fixture(scope="module")
def shrink_shim(tmp_path_factory):
    d = tmp_path_factory.mktemp("shim")
    src, so = d / "shrink.c", d / "shrink.so"
    src.write_text(SHRINK_SHIM)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(so), str(src), "-ldl"], check=True)
    return str(so)


@skip_under(["asan", "tsan"], "the shim must be first in LD_PRELOAD")
@pytest.mark.parametrize("cmd", [["dump", "--json"], ["report"], ["convert", "-o", "/dev/null", "--quiet"]])
def test_file_shrunk_after_open(tmp_path, shrink_shim, cmd):
    d = str(tmp_path / "run")
    path = make_trace(d, n=3000)
    tab = chunk_table(open(path, "rb").read())
    cut = 40000                                # mid-file, pages past it are gone
    inside = sum(c[3] for c in tab if c[1] == 1 and c[0] + HDR + c[2] <= cut)
    broken = [c for c in tab if c[0] < cut < c[0] + HDR + c[2]]
    assert len(broken) == 1 and 0 < inside < 3000
    env = dict(os.environ, LD_PRELOAD=shrink_shim, SHRINK_PATH=os.path.realpath(path),
               SHRINK_TO=str(cut))
    r = subprocess.run([TOOL, cmd[0], d] + cmd[1:], capture_output=True, text=True,
                       timeout=60, env=env)
    assert os.path.getsize(path) == cut       # the shim did cut it
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    lines = damage_lines(r.stderr)
    assert lines[:2] == [
        "feedtrace: %s: offset %d: the file shrank while being read; the rest is gone" % (path, cut),
        "feedtrace: %s: offset %d: chunk runs past the end of the file (cut off); skipped %d bytes"
        % (path, broken[0][0], cut - broken[0][0])], r.stderr
    if cmd[0] == "dump":
        procs = [json.loads(l)["process"] for l in r.stdout.splitlines() if '"process"' in l]
        assert procs[0]["records"] == inside
        assert procs[0]["end"].startswith("no end record")


# ---- item 12: output errors ----

FULL_CMDS = [["dump", "D"], ["dump", "D", "--json"], ["dump", "D", "--summary"], ["report", "D"],
             ["report", "D", "--json"], ["diff", "D", "D"], ["diff", "D", "D", "--json"]]


@pytest.mark.parametrize("cmd", FULL_CMDS, ids=lambda c: "-".join(c))
def test_stdout_full_fails(tmp_path, cmd):
    d = str(tmp_path / "run")
    make_trace(d, n=3000)
    argv = [TOOL] + [d if a == "D" else a for a in cmd]
    with open("/dev/full", "w") as full:
        r = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert "feedtrace: cannot write the output: No space left on device" in r.stderr.splitlines()
    # the same command with a working output succeeds
    ok = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and ok.stdout


def test_convert_to_full_device_fails(tmp_path):
    d = str(tmp_path / "run")
    make_trace(d, n=3000)
    r = subprocess.run([TOOL, "convert", d, "-o", "/dev/full", "--quiet"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr.splitlines() == ["feedtrace convert: /dev/full: write failed; no file written"]


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # write() then fails with EFBIG


@pytest.mark.parametrize("existing", [False, True])
def test_convert_failure_leaves_no_partial_file(tmp_path, existing):
    d = str(tmp_path / "run")
    make_trace(d, n=3000)
    target = str(tmp_path / "out.pftrace")
    if existing:
        open(target, "wb").write(b"previous")
    r = subprocess.run([TOOL, "convert", d, "-o", target, "--quiet"], capture_output=True,
                       text=True, timeout=60, preexec_fn=_limit_file_size)
    assert r.returncode == 1, r.stderr
    assert "feedtrace convert: %s: write failed; no file written" % target in r.stderr
    if existing:
        assert open(target, "rb").read() == b"previous"
    else:
        assert not os.path.exists(target)
    assert sorted(os.listdir(tmp_path)) == (["out.pftrace", "run"] if existing else ["run"])
    # without the limit the file is written whole, in place of the old one
    ok = subprocess.run([TOOL, "convert", d, "-o", target, "--quiet"], capture_output=True,
                        text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert os.path.getsize(target) > 4096
    assert sorted(os.listdir(tmp_path)) == ["out.pftrace", "run"]
    um = os.umask(0)
    os.umask(um)
    assert os.stat(target).st_mode & 0o777 == 0o666 & ~um


# ---- item 15: a symlink planted at the convert target ----

@pytest.mark.parametrize("explicit", [False, True])
def test_convert_refuses_symlink_target(tmp_path, explicit):
    d = str(tmp_path / "run")
    make_trace(d, n=300)
    victim = tmp_path / "victim"
    victim.write_bytes(b"root's file")
    os.chmod(victim, 0o600)
    link = str(tmp_path / "run.pftrace")         # what `convert run` writes
    os.symlink(str(victim), link)
    argv = [TOOL, "convert", d + "/", "--quiet"] + (["-o", link] if explicit else [])
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "feedtrace convert: %s is a symbolic link: not following it "
        "(remove it, or name another output with -o)" % link]
    assert victim.read_bytes() == b"root's file"
    assert os.readlink(link) == str(victim)
    assert sorted(os.listdir(tmp_path)) == ["run", "run.pftrace", "victim"]


def test_convert_dangling_symlink_target_not_created(tmp_path):
    d = str(tmp_path / "run")
    make_trace(d, n=300)
    os.symlink(str(tmp_path / "elsewhere"), str(tmp_path / "run.pftrace"))
    r = subprocess.run([TOOL, "convert", d, "--quiet"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert not os.path.exists(tmp_path / "elsewhere")


def test_diff_output_refuses_symlink_and_leaves_no_partial_file(tmp_path):
    d = str(tmp_path / "run")
    make_trace(d, n=3000)
    victim = tmp_path / "victim"
    victim.write_bytes(b"root's file")
    link = str(tmp_path / "both.pftrace")
    os.symlink(str(victim), link)
    r = subprocess.run([TOOL, "diff", d, d, "-o", link], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1
    assert ("feedtrace diff: %s is a symbolic link: not following it "
            "(remove it, or name another output with -o)" % link) in r.stderr.splitlines()
    assert victim.read_bytes() == b"root's file"
    target = str(tmp_path / "out.pftrace")
    r = subprocess.run([TOOL, "diff", d, d, "-o", target], capture_output=True, text=True,
                       timeout=60, preexec_fn=_limit_file_size)
    assert r.returncode == 1
    assert sorted(os.listdir(tmp_path)) == ["both.pftrace", "run", "victim"]
    ok = subprocess.run([TOOL, "diff", d, d, "-o", target], capture_output=True, text=True,
                        timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert os.path.getsize(target) > 4096


# ---- item 3: every counted loss shown where users look ----

LOSS_KEYS = ["lost", "threads_untraced", "strings_lost", "handler_lost", "unended",
             "clone_vm_untraced", "children_untraced",
             "clock_fallbacks"]


def end_payload(records, lost, threads, untraced, strings_lost, handler_lost=None,
                shared_lost=0):
    b = struct.pack("<IiQQQQQ", 1, 0, records, lost, threads, untraced, strings_lost)
    if handler_lost is not None:       # the 80-byte END; a 48-byte one has none
        b += struct.pack("<QQQQ", handler_lost, shared_lost, 0, 0)
    return b


def test_losses_in_dump_and_report(tmp_path):
    d = str(tmp_path / "run")
    make_trace(d, n=500, end=end_payload(500, 7, 1, 1488, 1237858, 42, 5), lost={100: 7})
    make_trace(d, n=200, name="b.2.ft", end=end_payload(200, 0, 1, 12, 0, 0))
    r, procs, _ = dump(d)
    assert r.returncode == 0
    assert [{k: p[k] for k in LOSS_KEYS} for p in procs] == [
        {"lost": 7, "threads_untraced": 1488, "strings_lost": 1237858, "handler_lost": 42,
         "unended": 0, "clone_vm_untraced": 5, "children_untraced": 0, "clock_fallbacks": 0},
        {"lost": 0, "threads_untraced": 12, "strings_lost": 0, "handler_lost": 0, "unended": 0,
         "clone_vm_untraced": 0, "children_untraced": 0, "clock_fallbacks": 0}]
    t = subprocess.run([TOOL, "dump", d, "--summary"], capture_output=True, text=True, timeout=60)
    lost = [l for l in t.stdout.splitlines() if l.startswith("   LOST ")]
    assert lost == [
        "   LOST 7 records lost (full rings, failed writes): raise FEEDTRACE_BUF_KB",
        "   LOST 1488 threads untraced: raise FEEDTRACE_MEM_MB or lower FEEDTRACE_BUF_KB",
        "   LOST 1237858 paths recorded empty (string table full): fewer distinct files",
        "   LOST 42 calls in signal handlers not recorded: counted only",
        "   LOST 5 calls by clone(CLONE_VM) children on their parent's memory not recorded: "
        "counted only (posix_spawn, vfork and fork children are traced)",
        "   LOST 12 threads untraced: raise FEEDTRACE_MEM_MB or lower FEEDTRACE_BUF_KB"]
    rep = subprocess.run([TOOL, "report", d], capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0
    assert [l for l in rep.stdout.splitlines() if l.startswith("  LOST ")] == [
        "  LOST 7 records lost (full rings, failed writes) (1 of 2 processes): raise FEEDTRACE_BUF_KB",
        "  LOST 1500 threads untraced (2 of 2 processes): raise FEEDTRACE_MEM_MB or lower FEEDTRACE_BUF_KB",
        "  LOST 1237858 paths recorded empty (string table full) (1 of 2 processes): fewer distinct files",
        "  LOST 42 calls in signal handlers not recorded (1 of 2 processes): counted only",
        "  LOST 5 calls by clone(CLONE_VM) children on their parent's memory not recorded "
        "(1 of 2 processes): counted only (posix_spawn, vfork and fork children are traced)"]
    js = subprocess.run([TOOL, "report", d, "--json"], capture_output=True, text=True, timeout=60)
    assert json.loads(js.stdout)["losses"] == {
        "lost": 7, "threads_untraced": 1500, "strings_lost": 1237858, "handler_lost": 42,
        "unended": 0, "clone_vm_untraced": 5, "children_untraced": 0, "clock_fallbacks": 0}


def test_process_without_end_is_counted(tmp_path):
    """A file cut before its END record (the process was killed, or the
    tracer could not write its end): the report says so, in the LOST lines
    and the JSON, instead of reading as a whole run."""
    d = str(tmp_path / "run")
    make_trace(d, n=300, edit=lambda chunks: [c for c in chunks if c[0] != 6])
    make_trace(d, n=100, name="b.2.ft")
    _r, procs, _ = dump(d)
    assert [(p["unended"], p["end"]) for p in procs] == [
        (1, "no end record (killed, or still running)"), (0, "exit")]
    rep = subprocess.run([TOOL, "report", d], capture_output=True, text=True, timeout=60)
    assert [l for l in rep.stdout.splitlines() if l.startswith("  LOST ")] == [
        "  LOST 1 processes without an end record (killed, still running, or output failed)"
        " (1 of 2 processes): their last records (up to FEEDTRACE_FLUSH_MS) are missing"]
    js = subprocess.run([TOOL, "report", d, "--json"], capture_output=True, text=True, timeout=60)
    assert json.loads(js.stdout)["losses"]["unended"] == 1


def test_no_loss_no_lines_and_old_end(tmp_path):
    """Nothing lost: no LOST line, every count 0; a 48-byte END (an older
    writer) reads handler_lost 0."""
    d = str(tmp_path / "run")
    make_trace(d, n=100, end=end_payload(100, 0, 1, 0, 0))
    t = subprocess.run([TOOL, "dump", d], capture_output=True, text=True, timeout=60)
    assert "LOST" not in t.stdout
    rep = subprocess.run([TOOL, "report", d], capture_output=True, text=True, timeout=60)
    assert "LOST" not in rep.stdout
    js = subprocess.run([TOOL, "report", d, "--json"], capture_output=True, text=True, timeout=60)
    assert json.loads(js.stdout)["losses"] == {k: 0 for k in LOSS_KEYS}
    _r, procs, _ = dump(d)
    assert {k: procs[0][k] for k in LOSS_KEYS} == {k: 0 for k in LOSS_KEYS}


# ---- many files, few descriptors ----

def test_more_files_than_descriptors(tmp_path):
    """300 processes read with a limit of 64 open files: each file is open
    only while it is read."""
    d = str(tmp_path / "run")
    for i in range(300):
        make_trace(d, n=3, name="h.%d.ft" % (1000 + i))
    def few_fds():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    for cmd in (["dump", d, "--json"], ["report", d, "--json"], ["convert", d, "-o", "/dev/null", "--quiet"]):
        r = subprocess.run([TOOL] + cmd, capture_output=True, text=True, timeout=120,
                           preexec_fn=few_fds)
        assert r.returncode == 0, r.stderr[-1000:]
        assert damage_lines(r.stderr) == [], r.stderr[-1000:]
        if cmd[0] == "dump":
            procs = [json.loads(l)["process"] for l in r.stdout.splitlines() if '"process"' in l]
            assert len(procs) == 300 and all(p["records"] == 3 for p in procs)
        if cmd[0] == "report":
            assert len(json.loads(r.stdout)["processes"]) == 300
