"""A process in a new time namespace (`unshare -T --monotonic S`) reads a
CLOCK_MONOTONIC offset by S from the host's. The recorder reads the
offset (/proc/self/timens_offsets) and writes its calibration pairs on the
host's clock, so that every process of a run is on one clock. Before, the
process's events lay S seconds from its parent's ("19 events over 103000
s" for a 50 ms run; the exec line read backwards for a negative S).

A parent reads a file, runs `unshare -T --monotonic S io_read ...` and
waits for it, then reads again: the child's reads must lie between the
parent's two, which they did in fact."""
import subprocess

import pytest

from conftest import PYTHON, TOOL, prog

IO_READ = prog("io_read")

PARENT = """
import subprocess, sys
path, cmd = sys.argv[1], sys.argv[2:]
open(path, "rb").read()
subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
open(path, "rb").read()
"""


def timens_works():
    r = subprocess.run(["unshare", "-T", "--monotonic", "1", "true"], capture_output=True,
                       text=True)
    return r.returncode == 0, r.stderr.strip()


def negative_offset():
    """an offset back by half the uptime (at most 1000 s): the namespace's
    clock must stay positive"""
    with open("/proc/uptime") as f:
        up = float(f.read().split()[0])
    return -int(min(up / 2, 1000))


@pytest.mark.parametrize("offset", [100000, "negative"])
def test_child_in_a_time_namespace_is_on_the_host_clock(traced, tmp_path, offset):
    ok, why = timens_works()
    if not ok:
        pytest.skip("unshare -T does not work here: " + why)
    if offset == "negative":
        offset = negative_offset()
        if offset > -2:
            pytest.skip("uptime too short for a negative offset")
    data = tmp_path / "data.bin"
    data.write_bytes(b"x" * 4096)
    r = traced([PYTHON, "-c", PARENT, str(data), "unshare", "-T", "--monotonic",
                str(offset), IO_READ, "reads", "3", "100", str(data)])
    assert r.returncode == 0, r.stderr
    t = r.trace
    py = [p for p in t.procs if p["cmdline"].startswith(PYTHON)]
    child = [p for p in t.procs if p["cmdline"].startswith(IO_READ)]
    assert len(py) == 1 and len(child) == 1
    mine = [e["ts_ns"] for e in t.calls("read", pid=py[0]["pid"], path=str(data))]
    theirs = [e["ts_ns"] for e in t.calls("read", pid=child[0]["pid"], path=str(data))]
    assert len(mine) >= 2 and len(theirs) == 3
    assert mine[0] < min(theirs) <= max(theirs) < mine[-1]
    # and the report's tree says so: io_read exec'd from unshare
    text = subprocess.run([TOOL, "report", r.dir], capture_output=True, text=True,
                          timeout=120).stdout
    assert [ln.split()[2] for ln in text.splitlines() if "(exec'd from" in ln] == ["io_read"]
    assert "(exec'd from unshare -T -" in text


TIMENS_FORK = prog("timens_fork")


@pytest.mark.parametrize("offset", [100000, -50])
def test_fork_child_in_the_namespace_its_parent_made(traced, tmp_path, offset):
    """unshare(CLONE_NEWTIME) then fork: the child is in the new namespace
    from its start (its tracer's fork handler reads the offset again); it
    reads for 300 ms of its own clock, so its trace has several
    calibration pairs, all on the host's clock."""
    data = tmp_path / "data.bin"
    data.write_bytes(b"y" * 64)
    r = traced([TIMENS_FORK, str(data), str(offset)])
    if r.returncode == 77:
        pytest.skip(r.stdout.strip())
    assert (r.returncode, r.stdout) == (0, "ok\n"), r.stderr
    t = r.trace
    [parent] = [p for p in t.procs if p["pid"] == min(q["pid"] for q in t.procs)]
    [child] = [p for p in t.procs if p["ppid"] == parent["pid"]]
    mine = [e["ts_ns"] for e in t.calls("read", pid=parent["pid"], path=str(data))]
    theirs = [e["ts_ns"] for e in t.calls("read", pid=child["pid"], path=str(data))]
    assert len(mine) == 2 and len(theirs) >= 10
    assert mine[0] < min(theirs) <= max(theirs) < mine[1]
