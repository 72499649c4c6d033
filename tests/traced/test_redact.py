"""FEEDTRACE_REDACT=1: no path or argument reaches the trace in clear; the
same path hashes the same way in every process of the run."""
import glob
import os

from conftest import PYTHON


SCRIPT = """
import os, sys
for i in range(3):
    with open(sys.argv[1], 'rb') as f:
        f.read()
pid = os.fork()
if pid == 0:
    with open(sys.argv[1], 'rb') as f:
        f.read()
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_redacted_paths_and_arguments(traced, tmp_path):
    secret = tmp_path / "very-secret-dataset.bin"
    secret.write_bytes(b"x" * 100)
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    r = traced([PYTHON, str(script), str(secret)], env={"FEEDTRACE_REDACT": "1"})
    assert r.returncode == 0, r.stderr
    for f in glob.glob(os.path.join(r.dir, "*.ft")):
        blob = open(f, "rb").read()
        assert b"very-secret" not in blob and b"job.py" not in blob
    t = r.trace
    opens = [e for e in t.calls("open64") if e["args"]["path"].startswith("redacted:")]
    hashes = {e["args"]["path"] for e in t.events
              if e["call"] == "read" and e["args"]["path"].startswith("redacted:")}
    by_pid = {}
    for e in t.events:
        if e["call"] == "read" and e["args"]["path"] in hashes and e["args"]["ret"] == 100:
            by_pid.setdefault(e["pid"], set()).add(e["args"]["path"])
    assert len(by_pid) == 2                       # parent and forked child
    assert len(set.union(*by_pid.values())) == 1   # one path, one hash, both processes
    assert len(opens) >= 4
    for p in t.procs:
        assert "very-secret" not in p["cmdline"] and "redacted:" in p["cmdline"]


def test_not_redacted_by_default(traced, tmp_path):
    f = tmp_path / "plain.bin"
    f.write_bytes(b"y" * 10)
    r = traced([PYTHON, "-c", "open(%r,'rb').read()" % str(f)])
    assert r.trace.count("open64", path=str(f)) == 1
