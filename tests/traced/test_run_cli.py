"""`feedtrace run` is transparent (issue 16): the child's exit status and
manner of death, the shell's 127 for a command that cannot run, "trace
written" only over a trace, a used run directory refused, --help."""
import os
import signal
import subprocess
import sys

import pytest

from conftest import TOOL, clean_env


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


# ---- run ids: the report never mixes runs silently (issue 16)

def preload_env(out):
    e = clean_env()
    e.update(LD_PRELOAD=os.path.join(os.path.dirname(TOOL), "libfeedtrace.so"),
             FEEDTRACE_OUT=out)
    return e


def dump_procs(d):
    r = subprocess.run([TOOL, "dump", "--json", "--summary", d], capture_output=True, text=True,
                       timeout=60)
    import json
    return [json.loads(l)["process"] for l in r.stdout.splitlines() if '"process"' in l]


def test_one_run_one_id_across_fork_and_exec(tmp_path):
    """A shell that forks and execs: every file of the run carries one
    non-zero run id."""
    d = str(tmp_path / "t")
    r = subprocess.run(["/bin/sh", "-c", "/bin/true; /bin/echo x | /bin/cat"],
                       env=preload_env(d), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "x\n"
    ids = {p["run_id"] for p in dump_procs(d)}
    assert len(dump_procs(d)) >= 4 and len(ids) == 1 and ids != {"0" * 16}


@pytest.mark.parametrize("cmd", ["report", "convert", "diff"])
def test_two_runs_in_one_directory_refused(tmp_path, cmd):
    """Two programs started apart into one FEEDTRACE_OUT (plain LD_PRELOAD):
    two run ids; report, convert and diff refuse with one line naming two
    files of the two runs, exit 2; --mixed reads them together."""
    d = str(tmp_path / "t")
    for _ in range(2):
        assert subprocess.run(["/bin/true"], env=preload_env(d), timeout=60).returncode == 0
    procs = dump_procs(d)
    assert len({p["run_id"] for p in procs}) == 2
    argv = [TOOL, cmd] + ([d, d] if cmd == "diff" else [d])
    if cmd == "convert":
        argv += ["-o", str(tmp_path / "x.pftrace")]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    [line] = r.stderr.splitlines()
    assert line.startswith("feedtrace %s: the directory holds files of two runs (" % cmd)
    assert all(p["file"] in line for p in procs) and line.endswith("--mixed to read them together")
    m = subprocess.run(argv + ["--mixed"], capture_output=True, text=True, timeout=60)
    assert m.returncode == 0, m.stderr


def test_append_keeps_the_run_id(tmp_path):
    """`run --append` into a run's directory: the new files carry that run's
    id, and the report reads the directory as one run."""
    d = str(tmp_path / "t")
    assert run(["-q", "-o", d, "--", "/bin/true"]).returncode == 0
    assert run(["--append", "-q", "-o", d, "--", "/bin/true"]).returncode == 0
    procs = dump_procs(d)
    assert len(procs) == 2 and len({p["run_id"] for p in procs}) == 1
    assert subprocess.run([TOOL, "report", d], capture_output=True, timeout=60).returncode == 0


@pytest.mark.parametrize("cmd,opt", [("report", "--gap-ms"), ("convert", "-o"),
                                     ("diff", "--fail-if"), ("report", "--storm-reads")])
def test_missing_value_named(tmp_path, cmd, opt):
    dirs = [str(tmp_path)] * (2 if cmd == "diff" else 1)
    r = subprocess.run([TOOL, cmd] + dirs + [opt], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.startswith("feedtrace %s: %s needs a value\n" % (cmd, opt)), r.stderr


def test_numbers_checked(tmp_path):
    r = subprocess.run([TOOL, "report", str(tmp_path), "--storm-reads", "1.5"],
                       capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (
        2, "feedtrace report: --storm-reads needs a positive whole number, not '1.5'\n")
    r = subprocess.run([TOOL, "convert", str(tmp_path), "--threads", "3"],
                       capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (2, "feedtrace convert: --threads: 1 or 2, not '3'\n")


def test_options_anywhere_and_after_the_separator(tmp_path):
    """getopt_long: options before or after the directories; diff's
    BEFORE... -- AFTER... still takes options after the after side."""
    d = str(tmp_path / "t")
    assert run(["-q", "-o", d, "--", "/bin/true"]).returncode == 0
    a = subprocess.run([TOOL, "report", "--json", d], capture_output=True, text=True, timeout=60)
    b = subprocess.run([TOOL, "report", d, "--json"], capture_output=True, text=True, timeout=60)
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout
    r = subprocess.run([TOOL, "diff", d, d, "--", d, d, "--json"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("{"), r.stderr


def with_pty_stderr(args):
    """The tool with stderr on a pseudo-terminal: (rc, stdout, what the
    terminal got)."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([TOOL] + [str(a) for a in args], stdout=subprocess.PIPE,
                         stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:                 # EIO: the other side is closed
            break
        if not chunk:
            break
        got += chunk
    out = p.stdout.read()
    rc = p.wait(timeout=120)
    os.close(master)
    return rc, out.decode(), got.decode()


def test_progress_line_on_a_terminal_only(tmp_path):
    """report on a terminal: "\\r", the line of the process being read
    ("process 1/1 (pid P): 1 events" at its first event), then cleared
    before the report; through a pipe, or with --quiet: nothing."""
    d = str(tmp_path / "t")
    assert run(["-q", "-o", d, "--", "/bin/cat", "/etc/hostname"]).returncode == 0
    [p] = dump_procs(d)
    rc, out, tty = with_pty_stderr(["report", d])
    assert rc == 0 and out.startswith("feedtrace report: ")
    assert "\rfeedtrace report: process 1/1 (pid %d): 1 events\x1b[K" % p["pid"] in tty
    assert tty.endswith("\r\x1b[K")
    r = subprocess.run([TOOL, "report", d], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr, r.stdout) == (0, "", out)
    rc, out2, tty = with_pty_stderr(["report", d, "--quiet"])
    assert (rc, tty, out2) == (0, "", out)
    # convert: the same helper, one line kept per process
    rc, _o, tty = with_pty_stderr(["convert", d, "-o", tmp_path / "a.pftrace"])
    assert rc == 0
    assert tty.startswith("\rfeedtrace convert: process 1/1 (pid %d): 1 events\x1b[K" % p["pid"])
    assert "\x1b[K\r\n" in tty
    rc, _o, tty = with_pty_stderr(["convert", d, "--quiet", "-o", tmp_path / "b.pftrace"])
    assert rc == 0 and "process 1/1" not in tty
