"""FEEDTRACE_* settings: bad values are refused with one line and the
default kept, hook groups switch exactly what they name, and the output
directory and file are created safely (0700/0600, O_EXCL|O_NOFOLLOW).

Program: tests/progs/cfg_mix.c (5 reads of a file, 2 blocked mutex locks,
exit status chosen by the test).
"""
import glob
import os
import re
import socket
import stat
import struct
import subprocess
import time

import pytest

from conftest import Trace, built_prog, clean_env, preload, untraced

READS, ROUNDS, STATUS = 5, 2, 3


@pytest.fixture
def mix(tmp_path):
    exe = built_prog("cfg_mix")
    data = tmp_path / "input.bin"
    data.write_bytes(bytes(range(256)) * 16)
    argv = [exe, str(data), str(READS), str(ROUNDS), str(STATUS)]
    u = untraced(argv)
    assert u.returncode == STATUS
    return argv, u


def env_with(extra, out=None):
    e = clean_env()
    e["LD_PRELOAD"] = preload()
    if out is not None:
        e["FEEDTRACE_OUT"] = out
    e.update(extra)
    return e


def run(argv, extra, out=None, cwd=None):
    return subprocess.run(argv, env=env_with(extra, out), capture_output=True,
                          text=True, timeout=60, cwd=cwd)


def assert_full_trace(t):
    assert t.count("open") == 1
    assert t.count("read") == READS
    assert t.count("pthread_mutex_lock") == ROUNDS


BAD = [
    ("FEEDTRACE_BUF_KB", "abc"),
    ("FEEDTRACE_BUF_KB", "1"),
    ("FEEDTRACE_HOOKS", "bogus"),
    ("FEEDTRACE_HOOKS", "io,bogus"),
    ("FEEDTRACE_FLUSH_MS", "-5"),
    ("FEEDTRACE_FLUSH_MS", "99999999999999999999"),
    ("FEEDTRACE_MEM_MB", "1x"),
]


@pytest.mark.parametrize("var,val", BAD)
def test_bad_value_one_line_default_kept(mix, tmp_path, var, val):
    argv, u = mix
    out = str(tmp_path / "trace")
    r = run(argv, {var: val}, out)
    assert r.returncode == u.returncode and r.stdout == u.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert var in lines[0]
    assert_full_trace(Trace.load(out))
    # the defaults are what the file header says was used
    (f,) = os.listdir(out)
    with open(os.path.join(out, f), "rb") as fh:
        hdr = fh.read(256)
    hooks, = struct.unpack_from("<I", hdr, 28)
    ring_slots, = struct.unpack_from("<I", hdr, 64)
    assert hooks == 0x0F                      # all groups
    assert ring_slots == 1024 * 1024 // 32    # FEEDTRACE_BUF_KB default 1024


def test_overlong_out_uses_default_dir(mix, tmp_path):
    argv, u = mix
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    r = run(argv, {}, "/tmp/" + "x" * 4000, cwd=str(cwd))
    assert r.returncode == u.returncode and r.stdout == u.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "FEEDTRACE_OUT" in lines[0], r.stderr
    dirs = glob.glob(str(cwd / "feedtrace-*"))
    assert len(dirs) == 1
    assert_full_trace(Trace.load(dirs[0]))


def test_relative_out_in_deep_cwd(mix, tmp_path):
    # a relative FEEDTRACE_OUT under a working directory longer than 255
    # bytes is honoured (it used to fall back to the default silently)
    argv, u = mix
    deep = tmp_path / ("d" * 120) / ("e" * 120) / ("f" * 60)
    deep.mkdir(parents=True)
    r = run(argv, {}, "rel/trace", cwd=str(deep))
    assert r.returncode == u.returncode and r.stdout == u.stdout
    assert r.stderr == ""
    assert_full_trace(Trace.load(str(deep / "rel" / "trace")))
    assert glob.glob(str(deep / "feedtrace-*")) == []


def test_hooks_io_only(mix, tmp_path):
    argv, u = mix
    out = str(tmp_path / "t")
    r = run(argv, {"FEEDTRACE_HOOKS": "io"}, out)
    assert (r.returncode, r.stdout, r.stderr) == (u.returncode, u.stdout, "")
    t = Trace.load(out)
    assert t.count("read") == READS and t.count("open") == 1
    assert [e for e in t.events if e["call"].startswith(("pthread_", "sem_"))] == []


def test_hooks_lock_only(mix, tmp_path):
    argv, u = mix
    out = str(tmp_path / "t")
    r = run(argv, {"FEEDTRACE_HOOKS": "lock"}, out)
    assert (r.returncode, r.stdout, r.stderr) == (u.returncode, u.stdout, "")
    t = Trace.load(out)
    assert t.count("pthread_mutex_lock") == ROUNDS
    io = {"open", "read", "close", "open64", "openat", "pread", "fopen", "fread", "mmap"}
    assert [e for e in t.events if e["call"] in io] == []


def test_disable_writes_nothing(mix, tmp_path):
    argv, u = mix
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = str(tmp_path / "t")
    r = run(argv, {"FEEDTRACE_DISABLE": "1"}, out, cwd=str(cwd))
    assert (r.returncode, r.stdout, r.stderr) == (u.returncode, u.stdout, "")
    assert not os.path.exists(out)
    # nor a default directory when FEEDTRACE_OUT is unset
    r = run(argv, {"FEEDTRACE_DISABLE": "1"}, None, cwd=str(cwd))
    assert (r.returncode, r.stdout, r.stderr) == (u.returncode, u.stdout, "")
    assert os.listdir(str(cwd)) == []


@pytest.mark.parametrize("where", ["/etc/passwd/x", "/etc/passwd/x/y/z", "/etc/passwd", "/proc/self/nope"])
def test_unusable_out_dir(mix, where):
    argv, u = mix
    r = run(argv, {}, where)
    assert r.returncode == u.returncode and r.stdout == u.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert where in lines[0] and "not tracing" in lines[0]


def test_default_dir_name_and_modes(mix, tmp_path):
    argv, u = mix
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    before = time.time()
    r = run(argv, {}, None, cwd=str(cwd))
    after = time.time()
    assert (r.returncode, r.stdout, r.stderr) == (u.returncode, u.stdout, "")
    names = os.listdir(str(cwd))
    assert len(names) == 1
    m = re.fullmatch(r"feedtrace-(\d{8}-\d{6})-(\d+)", names[0])
    assert m, names
    stamp = time.mktime(time.strptime(m.group(1), "%Y%m%d-%H%M%S"))
    assert int(before) - 1 <= stamp <= after + 1
    d = str(cwd / names[0])
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    files = os.listdir(d)
    assert len(files) == 1 and files[0].endswith(".ft")
    assert stat.S_IMODE(os.stat(os.path.join(d, files[0])).st_mode) == 0o600
    assert_full_trace(Trace.load(d))


def test_created_parents_are_private(mix, tmp_path):
    argv, u = mix
    out = tmp_path / "a" / "b" / "c"
    r = run(argv, {}, str(out))
    assert r.returncode == u.returncode and r.stderr == ""
    for p in (tmp_path / "a", tmp_path / "a" / "b", out):
        assert stat.S_IMODE(os.stat(str(p)).st_mode) == 0o700, p
    (f,) = os.listdir(str(out))
    assert stat.S_IMODE(os.stat(str(out / f)).st_mode) == 0o600


def test_planted_symlink_not_followed(mix, tmp_path):
    """Symlinks named like the trace file (host.PID.ft and host.PID.1.ft) are
    planted before the traced image starts (same pid through exec): the
    tracer must not write through them."""
    argv, u = mix
    out = tmp_path / "t"
    out.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    dangling = tmp_path / "never-created"
    host = socket.gethostname().replace("/", "_").replace(".", "_")
    script = (
        'ln -s "$1" "$3/%s.$$.ft" && ln -s "$2" "$3/%s.$$.1.ft" && '
        'echo $$ >&2 && shift 3 && exec env LD_PRELOAD="$FT_LIB" "$@"' % (host, host))
    e = env_with({}, str(out))
    del e["LD_PRELOAD"]
    e["FT_LIB"] = preload()
    r = subprocess.run(["sh", "-c", script, "sh", str(victim), str(dangling), str(out)] + argv,
                       env=e, capture_output=True, text=True, timeout=60)
    assert r.returncode == u.returncode and r.stdout == u.stdout
    pid = int(r.stderr.splitlines()[0])
    assert r.stderr.splitlines()[1:] == []
    assert victim.read_text() == "precious\n"
    assert not dangling.exists()
    assert os.path.islink(str(out / ("%s.%d.ft" % (host, pid))))
    assert os.path.islink(str(out / ("%s.%d.1.ft" % (host, pid))))
    real = out / ("%s.%d.2.ft" % (host, pid))
    assert real.is_file() and not real.is_symlink()
    assert stat.S_IMODE(os.stat(str(real)).st_mode) == 0o600
    t = Trace.load(str(real))
    assert_full_trace(t)
