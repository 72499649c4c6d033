"""`feedtrace run` is transparent (issue 16): the child's exit status and
manner of death, the shell's 127 for a command that cannot run, "trace
written" only over a trace, a used run directory refused, --help."""
import os
import signal
import subprocess
import sys

import pytest

from conftest import TOOL


def run(args, **kw):
    return subprocess.run([TOOL, "run"] + args, capture_output=True, text=True, timeout=120,
                          **kw)


def untraced(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("code", [0, 1, 127, 130])
def test_exit_status_is_the_childs(tmp_path, code):
    argv = ["/bin/sh", "-c", "exit %d" % code]
    r = run(["-o", str(tmp_path / "t"), "--"] + argv)
    assert r.returncode == untraced(argv).returncode == code
    assert "feedtrace: trace written to " + str(tmp_path / "t") in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_death_by_signal_is_the_childs(tmp_path, sig):
    """A child killed by a signal: `feedtrace run` prints the report, then
    dies by the same signal (its parent sees -sig, as untraced)."""
    argv = [sys.executable, "-c",
            "import os, signal\nif %d != signal.SIGKILL: signal.signal(%d, signal.SIG_DFL)\n"
            "os.kill(os.getpid(), %d)" % (sig, sig, sig)]
    r = run(["-o", str(tmp_path / "t"), "--"] + argv)
    assert untraced(argv).returncode == -sig
    assert r.returncode == -sig, r.stderr
    assert "feedtrace report: " in r.stderr


def test_command_that_cannot_run(tmp_path):
    """No trace, no "trace written", the shell's status: 127 not found,
    126 found but not executable."""
    d = tmp_path / "t"
    r = run(["-o", str(d), "--", "no-such-command-feedtrace"])
    assert r.returncode == 127
    assert r.stderr == "feedtrace run: no-such-command-feedtrace: command not found\n"
    assert not d.exists()
    plain = tmp_path / "plain.txt"
    plain.write_text("not a program\n")
    r = run(["-o", str(d), "--", str(plain)])
    assert r.returncode == 126 and "Permission denied" in r.stderr
    assert "trace written" not in r.stderr


def test_out_dir_that_cannot_be_made(tmp_path):
    """-o under /proc: the library's one line, the program runs untraced,
    and the last line says no trace was written (never "trace written")."""
    r = run(["-o", "/proc/feedtrace-x", "--", "/bin/sh", "-c", "echo ran"])
    assert r.returncode == 0 and r.stdout == "ran\n"
    lines = r.stderr.splitlines()
    assert "trace written" not in r.stderr
    assert lines[-1] == ("feedtrace: no trace was written to /proc/feedtrace-x (the lines above "
                         "say why); the command ran untraced")


def test_used_run_directory_refused_unless_append(tmp_path):
    d = str(tmp_path / "t")
    assert run(["-q", "-o", d, "--", "/bin/true"]).returncode == 0
    n = len(os.listdir(d))
    r = run(["-o", d, "--", "/bin/true"])
    assert r.returncode == 2 and "already holds a run's trace files" in r.stderr
    assert len(os.listdir(d)) == n
    r = run(["--append", "-q", "-o", d, "--", "/bin/true"])
    assert r.returncode == 0 and len(os.listdir(d)) == n + 1


def test_help_and_bad_options():
    h = run(["--help"])
    assert h.returncode == 0 and h.stdout.startswith("usage: feedtrace run ")
    assert "FEEDTRACE_OUT" in h.stdout and "Example:" in h.stdout
    b = run(["--bogus", "--", "/bin/true"])
    assert b.returncode == 2 and b.stderr.startswith("feedtrace run: unknown option --bogus\n")
    o = run(["-o"])
    assert o.returncode == 2 and o.stderr.startswith("feedtrace run: -o needs a directory\n")


@pytest.mark.parametrize("cmd", ["run", "dump", "convert", "report", "diff", "open"])
def test_every_command_has_help(cmd):
    r = subprocess.run([TOOL, cmd, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("usage: feedtrace %s " % cmd) and "Example: feedtrace %s" % cmd \
        in r.stdout


@pytest.mark.parametrize("cmd", ["dump", "convert", "report", "diff"])
def test_unknown_option_named(tmp_path, cmd):
    dirs = [str(tmp_path)] * (2 if cmd == "diff" else 1)
    r = subprocess.run([TOOL, cmd] + dirs + ["--bogus"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2
    assert r.stderr.startswith("feedtrace %s: unknown option --bogus\n" % cmd), r.stderr
    assert "usage: feedtrace %s" % cmd in r.stderr


@pytest.mark.parametrize("cmd", ["convert", "report"])
def test_reorder_ms_is_checked(tmp_path, cmd):
    r = subprocess.run([TOOL, cmd, str(tmp_path), "--reorder-ms", "abc"], capture_output=True,
                       text=True, timeout=60)
    assert (r.returncode, r.stderr) == (
        2, "feedtrace %s: --reorder-ms needs milliseconds from 0 to 3600000, not 'abc'\n" % cmd)


def test_version():
    r = subprocess.run([TOOL, "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("feedtrace ") and "trace format 1" in r.stdout


# ---- feedtrace open

import socket  # noqa: E402
import urllib.request  # noqa: E402


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def test_open_serves_the_exact_bytes_once(tmp_path):
    """A run directory is converted, served on 127.0.0.1 with the UI's CORS
    header; a preflight and a wrong path do not stop it, the first whole
    GET does: the bytes fetched back are the file's, and it exits 0."""
    d = tmp_path / "run"
    r = run(["-q", "-o", str(d), "--", "/bin/sh", "-c", "cat /etc/hostname > /dev/null"])
    assert r.returncode == 0
    port = free_port()
    p = subprocess.Popen([TOOL, "open", str(d), "--no-browser", "--port", str(port)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = [p.stdout.readline() for _ in range(3)]
    assert lines[0].startswith("On your desktop, first: ssh -L %d:127.0.0.1:%d " % (port, port))
    url = "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/run.pftrace" % port
    assert lines[1] == "Open %s\n" % url
    base = "http://127.0.0.1:%d/" % port
    pre = urllib.request.Request(base + "run.pftrace", method="OPTIONS")
    with urllib.request.urlopen(pre, timeout=30) as resp:
        assert resp.headers["Access-Control-Allow-Origin"] == "https://ui.perfetto.dev"
    try:
        urllib.request.urlopen(base + "other.pftrace", timeout=30)
        assert False, "a wrong path was served"
    except urllib.error.HTTPError as e:
        assert e.code == 404
    with urllib.request.urlopen(base + "run.pftrace", timeout=30) as resp:
        body = resp.read()
        assert resp.headers["Access-Control-Allow-Origin"] == "https://ui.perfetto.dev"
    assert body == (tmp_path / "run.pftrace").read_bytes() and len(body) > 100
    assert p.wait(timeout=30) == 0
    assert p.stdout.read().endswith("Fetched; stopped serving.\n")


def test_open_port_taken(tmp_path):
    f = tmp_path / "x.pftrace"
    f.write_bytes(b"\n\x00")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    r = subprocess.run([TOOL, "open", str(f), "--no-browser", "--port", str(port)],
                       capture_output=True, text=True, timeout=30)
    s.close()
    assert r.returncode == 1
    assert r.stderr.startswith("feedtrace open: cannot listen on 127.0.0.1:%d (Address already "
                               "in use): another program" % port), r.stderr
