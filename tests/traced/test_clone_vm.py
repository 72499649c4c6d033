"""A child made by glibc's clone(CLONE_VM) with its own stack runs on its
parent's memory and its parent thread's TLS (tests/progs/clone_vm.c).

Before, the child attached a ring under its own tid into the parent's
thread state; the flusher's liveness check (tgkill on the parent's thread
group) found no such tid and freed the slot while the parent still wrote
it: the trace held the child's reads under a made-up tid and none of the
parent's, with lost 0. Now the parent's every call is recorded, the
child's are counted in clone_vm_untraced, and nothing else is lost.
"""
import os
import subprocess

import pytest

from conftest import TOOL, Trace, built_prog, clean_env, preload, skip_under

CLONE = built_prog("clone_vm")

# TSan intercepts clone and gives the child a runtime state of its own
NOT_TSAN = skip_under(["tsan"], "the runtime intercepts clone")


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "data.bin"
    p.write_bytes(bytes(range(256)) * 16)
    return str(p)


def start(argv, outdir):
    e = clean_env()
    e["LD_PRELOAD"] = preload()
    e["FEEDTRACE_OUT"] = outdir
    return subprocess.Popen(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def check_process(t, p, data, parent_reads, child_reads, raw=False):
    pid = p["pid"]
    reads = t.calls("pread", pid=pid)
    assert len(reads) == parent_reads
    assert {e["tid"] for e in reads} == {pid}
    assert {e["args"].get("path", "") for e in reads} == {"" if raw else data}
    assert {e["args"]["ret"] for e in reads} == {16}
    assert p["lost"] == 0 and p["handler_lost"] == 0 and p["threads_untraced"] == 0
    assert p["clone_vm_untraced"] == child_reads
    assert p["end"] == "exit" and p["status"] == 0


@NOT_TSAN
@pytest.mark.parametrize("mode", ["vfork", "novfork", "cleartid"])
@pytest.mark.parametrize("during", [0, 500])
@pytest.mark.parametrize("raw", [False, True], ids=["opened", "child_first"])
def test_parent_keeps_every_record(tmp_path, data, mode, during, raw):
    """child_first: the child's reads are the first traced calls (the file
    opened by the system call), so the thread has no ring when it clones."""
    outdir = str(tmp_path / "trace")
    p = start([CLONE, mode, data, "3", str(during), "1000"] + (["raw"] if raw else []),
              outdir)
    out, err = p.communicate(timeout=120)
    assert (p.returncode, out) == (0, "ok\n"), err
    t = Trace.load(outdir)
    [proc] = t.procs
    check_process(t, proc, data, during + 1000, 3, raw)
    assert proc["calls"] == dict({"pread": during + 1000}, **({} if raw else {"open": 1}))


@NOT_TSAN
def test_two_processes_at_once(tmp_path, data):
    """Two such programs side by side, each child reading while its parent
    reads: every parent's call is in its own file, no loss counted."""
    outdir = str(tmp_path / "trace")
    argv = [CLONE, "novfork", data, "2000", "2000", "1000"]
    ps = [start(argv, outdir) for _ in range(2)]
    for p in ps:
        out, err = p.communicate(timeout=120)
        assert (p.returncode, out) == (0, "ok\n"), err
    t = Trace.load(outdir)
    assert sorted(p["pid"] for p in t.procs) == sorted(p.pid for p in ps)
    for proc in t.procs:
        check_process(t, proc, data, 3000, 2000)


@NOT_TSAN
def test_report_says_what_was_not_recorded(tmp_path, data):
    outdir = str(tmp_path / "trace")
    p = start([CLONE, "vfork", data, "3", "0", "10"], outdir)
    assert p.communicate(timeout=120)[0] == "ok\n"
    r = subprocess.run([TOOL, "report", outdir], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [ln.strip() for ln in r.stdout.splitlines() if ln.strip().startswith("LOST")]
    assert lines == ["LOST 3 calls by clone(CLONE_VM) children on their parent's memory "
                     "not recorded: counted only (posix_spawn, vfork and fork children "
                     "are traced)"]
