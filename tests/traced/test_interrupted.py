"""A run cut short by a signal is said to be so on the report's first
line: the verdict that follows judges only what it did before."""
import subprocess

from conftest import PYTHON, TOOL


def test_sigint_says_interrupted_on_the_first_line(tmp_path):
    d = str(tmp_path / "run")
    r = subprocess.run([TOOL, "run", "-o", d, "--", "/bin/sh", "-c",
                        "cat /etc/hostname >/dev/null; kill -INT $$; echo not reached"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == -2 and "not reached" not in r.stdout
    rep = subprocess.run([TOOL, "report", d], capture_output=True, text=True, timeout=120)
    assert rep.returncode == 0, rep.stderr
    first = rep.stdout.splitlines()[0]
    assert first.startswith("feedtrace report: ") and \
        first.endswith(" INTERRUPTED (killed by SIGINT)") and len(first) <= 80
    # a run that ended by itself says nothing of the kind
    d2 = str(tmp_path / "ok")
    subprocess.run([TOOL, "run", "-o", d2, "--", "/bin/sh", "-c", "cat /etc/hostname"],
                   capture_output=True, text=True, timeout=120, check=True)
    rep = subprocess.run([TOOL, "report", d2], capture_output=True, text=True, timeout=120)
    assert "INTERRUPTED" not in rep.stdout


def test_python_keyboard_interrupt_says_interrupted(tmp_path):
    """CPython turns SIGINT into KeyboardInterrupt and, uncaught, ends by
    the signal again (its default action): interrupted as well."""
    d = str(tmp_path / "run")
    r = subprocess.run([TOOL, "run", "-o", d, "--", PYTHON, "-c",
                        "import os, signal\nopen('/etc/hostname').read()\n"
                        "os.kill(os.getpid(), signal.SIGINT)\nprint('not reached')"],
                       capture_output=True, text=True, timeout=120)
    assert "KeyboardInterrupt" in r.stderr and "not reached" not in r.stdout
    rep = subprocess.run([TOOL, "report", d], capture_output=True, text=True, timeout=120)
    assert rep.stdout.splitlines()[0].endswith(" INTERRUPTED (killed by SIGINT)")
