"""The block I/O wait of faults on mapped data, from the kernel's delay
accounting (libfeedtrace/faults.c): with /proc/sys/kernel/task_delayacct
at 1, the flusher's samples of each thread carry delayacct_blkio_ticks
(field 42 of /proc/self/task/TID/stat) as blkio_ns, flag 2; at 0, no
sample has flag 2. The sysctl is system-wide: the test sets it only where
it is writable (root), puts the previous value back, and skips otherwise.

Facts, not timings: a thread that took major faults on a file dropped from
the page cache slept in I/O for each (the page's lock waited in
io_schedule), 2,700 times for a loader here; the kernel's figure is in
clock ticks (10 ms), so the test asserts it is above 0 for the loader
threads, not how much.
"""
import glob
import os
import struct
import subprocess

import pytest

from conftest import TOOL, built_prog, preload, clean_env
from test_mapped_programs import drop_cached_file

SYSCTL = "/proc/sys/kernel/task_delayacct"


def fault_samples(out):
    """Every FAULTS sample (chunk 10, docs/FORMAT.md) of the trace's files:
    (pid, tid, flags, majflt, blkio_ns)"""
    got = []
    for path in glob.glob(os.path.join(out, "*.ft")):
        data = open(path, "rb").read()
        pid = struct.unpack_from("<i", data, 16)[0]
        off = struct.unpack_from("<H", data, 10)[0]
        while off + 24 <= len(data):
            magic, ctype, codec, stored = struct.unpack_from("<IHHI", data, off)
            assert magic == 0x4B435446
            if ctype == 10:
                assert codec == 0
                body = data[off + 24:off + 24 + stored]
                for o in range(0, len(body) - 31, 32):
                    tid, flags, _, majflt, blkio = struct.unpack_from("<iIQQQ", body, o)
                    got.append((pid, tid, flags, majflt, blkio))
            off += 24 + stored
    return got


@pytest.fixture
def delayacct():
    """a function setting the sysctl; the previous value back after"""
    try:
        before = open(SYSCTL).read().strip()
        with open(SYSCTL, "w") as f:
            f.write(before)
    except OSError as e:
        pytest.skip("%s not writable here: %s" % (SYSCTL, e))

    def put(v):
        with open(SYSCTL, "w") as f:
            f.write(v)
        assert open(SYSCTL).read().strip() == v
    try:
        yield put
    finally:
        put(before)


def run_loader(tmp_path, name):
    exe = built_prog("mapped_faults")
    path = str(tmp_path / (name + ".bin"))
    drop_cached_file(path, 8000)
    out = str(tmp_path / name)
    env = clean_env()
    # a cycle every 10 ms: the flusher reads each loader thread while it
    # runs, however fast the disk (its last count, as it leaves, has no wait)
    env.update(LD_PRELOAD=preload(), FEEDTRACE_OUT=out, FEEDTRACE_FLUSH_MS="10")
    r = subprocess.run([exe, "threads", "2", path], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [l.split() for l in r.stdout.splitlines()]
    assert lines[-1] == ["sum", "0"]
    counted = {int(a): int(b) for k, a, b in lines[:-1] if k == "thread"}
    assert len(counted) == 2 and all(n >= 8 for n in counted.values()), counted
    return out, counted


def report(out):
    import json
    r = subprocess.run([TOOL, "report", "--json", out], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_blkio_with_delay_accounting(tmp_path, delayacct):
    """On: each loader thread's samples have flag 2, their wait grows to
    above 0 (the faults' I/O), its majflt as counted; the process's (tid 0,
    getrusage) never has the flag; the report gives the run's wait."""
    delayacct("1")
    out, counted = run_loader(tmp_path, "on")
    samples = fault_samples(out)
    assert not [s for s in samples if s[1] == 0 and s[2] & 2]
    for tid, n in counted.items():
        timed = [s for s in samples if s[1] == tid and s[2] & 2]
        assert timed, (tid, samples)
        assert max(s[4] for s in timed) > 0
        assert max(s[3] for s in samples if s[1] == tid) == n
    assert report(out)["mapped_data"]["block_io_wait_ns"] > 0


def test_no_flag_without_delay_accounting(tmp_path, delayacct):
    """Off: counts only, no sample has flag 2, and the report has no wait."""
    delayacct("0")
    out, counted = run_loader(tmp_path, "off")
    samples = fault_samples(out)
    assert [s for s in samples if s[1] in counted]
    assert not [s for s in samples if s[2] & 2]
    assert report(out)["mapped_data"]["block_io_wait_ns"] is None
